/* softmax_coop_long.cl - the one-launch split path at its most rows
 * (up to COOP_LONG_ROWS): each row in coop_groups() chunks, a work-group
 * of COOP_LONG_WG items each (more than softmax_coop.cl's: a chunk here
 * is too long for registers and is read twice, so its loads want every
 * item a compute unit holds), that wait for one another's (max, sum)
 * pairs within the launch, merged in a fixed order (the same bits in
 * every work-group of a row).
 *
 * Buffers: x, y (rows x FEATURES); sync (row_coop.cl, as softmax_coop's:
 * COOP_ROWS covers these rows too).
 * Launch: local (COOP_LONG_WG, 1), groups (COOP_LONG_GROUPS, rows). */
#include "softmax_coop_common.cl"

#if !defined(COOP_LONG_WG) || !defined(COOP_LONG_ROWS)
#error "softmax_coop_long.cl: the plan must define COOP_LONG_WG and _ROWS"
#endif
#if COOP_LONG_ROWS > COOP_ROWS
#error "softmax_coop_long.cl: COOP_ROWS must cover COOP_LONG_ROWS"
#endif

__kernel __attribute__((reqd_work_group_size(COOP_LONG_WG, 1, 1)))
void softmax_coop_long(const __global storage_t *x, __global storage_t *y,
                       volatile __global uint *sync)
{
    __local float pm[COOP_LONG_WG];
    __local float ps[COOP_LONG_WG];
    const uint lid = get_local_id(0);
    const uint chunk = get_group_id(0);
    const uint row = get_group_id(1);
    const uint generation = coop_generation(sync, row, lid);
    chunk_streamed(x, y, sync, (size_t)row * FEATURES, row, chunk,
                   chunk * coop_vecs() + lid, coop_end(chunk), generation,
                   pm, ps, lid, COOP_LONG_WG);
}
