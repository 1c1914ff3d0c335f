/* softmax_coop.cl - the one-launch split path: each work-group takes one
 * chunk of one row (row_coop.cl), forms the chunk's pair (its largest h
 * and the sum of exponentials relative to it, softmax_common.cl),
 * publishes it, waits until every chunk of its row has (coop_wait),
 * merges the row's pairs (softmax_coop_common.cl) and writes the chunk's
 * outputs. With COOP_IN_REGISTERS a chunk of at most COOP_VECS vectors
 * stays in registers from its load to its store (x read once); a longer
 * one (the COOP_GROUPS_LEAST chunks of many rows) is read again after
 * the barrier, as is every chunk without it.
 *
 * Every work-group of a row merges the same pairs in the same order (item
 * i folds pairs i, i + COOP_WG, ... in turn, then merge_pairs' tree), so
 * all of them hold the same bits, whatever the timing.
 *
 * Buffers: x, y (rows x FEATURES); sync (row_coop.cl; a row's words: its
 * chunks' pairs, COOP_ROW_WORDS = 2 * COOP_GROUPS_MOST).
 * Launch: local (COOP_WG, 1), groups (chunks, rows): chunks from
 * COOP_GROUPS_LEAST (or COOP_GROUPS) to COOP_GROUPS_MOST, rows at most
 * COOP_ROWS. */
#include "softmax_coop_common.cl"

#if COOP_IN_REGISTERS
/* As softmax.cl's row in registers, over the chunk [FIRST, END) in steps
 * of COOP_WG (at most COOP_SLOTS of them): x read once. */
inline void chunk_held(const __global storage_t *x, __global storage_t *y,
                       volatile __global uint *sync, size_t base, uint row,
                       uint chunk, uint first, uint end, uint generation,
                       __local float *pm, __local float *ps, uint lid)
{
    float m = NO_MAX;
    floatv v[COOP_SLOTS];
    floatv sv = 0.0f;
#pragma unroll
    for (uint k = 0; k < COOP_SLOTS; k++) {
        const uint j = first + k * COOP_WG;
        if (j < end) {
            v[k] = H_SIGN * loadv(x, base + j * VEC);
        }
    }
#pragma unroll
    for (uint k = 0; k < COOP_SLOTS; k++) {
        const uint j = first + k * COOP_WG;
        if (j < end) {
            const float mk = hmax(v[k]);
            if (EXP_SCALE * (mk - m) > RESCALE_ABOVE) {
                const float rescale = EXPS(m - mk);
                sv *= rescale;
#pragma unroll
                for (uint i = 0; i < k; i++) {
                    v[i] *= rescale;
                }
                m = mk;
            }
            v[k] = EXPS(v[k] - m);
            sv += v[k];
        }
    }
    float s = hsum(sv);
    const float mine = m;
    merge_pairs(pm, ps, lid, COOP_WG, &m, &s);
    coop_row_pair(sync, row, chunk, generation, pm, ps, lid, COOP_WG, &m,
                  &s);
    /* v holds exponentials relative to this item's reference. */
    const float f = EXPS(mine - m) / s;
#pragma unroll
    for (uint k = 0; k < COOP_SLOTS; k++) {
        const uint j = first + k * COOP_WG;
        if (j < end) {
            storev(y, base + j * VEC, v[k] * f);
        }
    }
}
#endif

__kernel __attribute__((reqd_work_group_size(COOP_WG, 1, 1)))
void softmax_coop(const __global storage_t *x, __global storage_t *y,
                  volatile __global uint *sync)
{
    __local float pm[COOP_WG];
    __local float ps[COOP_WG];
    const uint lid = get_local_id(0);
    const uint chunk = get_group_id(0);
    const uint row = get_group_id(1);
    const size_t base = (size_t)row * FEATURES;
    const uint first = chunk * coop_vecs() + lid;
    const uint end = coop_end(chunk);
    const uint generation = coop_generation(sync, row, lid);
#if COOP_IN_REGISTERS && defined(COOP_GROUPS_LEAST)
    /* Fewer chunks than COOP_GROUPS (many rows) outgrow the registers. */
    if (coop_vecs() <= COOP_VECS) {
        chunk_held(x, y, sync, base, row, chunk, first, end, generation, pm,
                   ps, lid);
    } else {
        chunk_streamed(x, y, sync, base, row, chunk, first, end, generation,
                       pm, ps, lid, COOP_WG);
    }
#elif COOP_IN_REGISTERS
    chunk_held(x, y, sync, base, row, chunk, first, end, generation, pm, ps,
               lid);
#else
    chunk_streamed(x, y, sync, base, row, chunk, first, end, generation, pm,
                   ps, lid, COOP_WG);
#endif
}
