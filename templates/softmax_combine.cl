/* softmax_combine.cl - the split path's second launch: each work-group
 * merges the SPLIT_GROUPS pairs that softmax_part left for its row into
 * the row's (max, sum), and writes the outputs of its chunk, reading the
 * chunk again (recently read: from the cache on GPUs).
 *
 * Every work-group of a row merges the same pairs in the same order (item
 * i folds pairs i, i + SPLIT_WG, ... in turn, then merge_pairs' tree), so
 * all of them hold the same bits, whatever the timing. The work-groups
 * take the chunks backwards, the last row's last chunk first: those are
 * the ones softmax_part read last, the likeliest still in the cache when
 * the rows pass its size.
 *
 * Buffers: x, y (rows x FEATURES); scratch (rows x SPLIT_GROUPS x 2
 * floats, softmax_part's).
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "softmax_common.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void softmax_combine(const int rows, const __global storage_t *x,
                     __global storage_t *y, const __global float *scratch)
{
    __local float pm[SPLIT_WG];
    __local float ps[SPLIT_WG];
    const uint lid = get_local_id(0);
    const uint chunk = SPLIT_GROUPS - 1 - get_group_id(0);
    const size_t row = (size_t)rows - 1 - get_group_id(1);
    const __global float *pairs = scratch + 2 * row * SPLIT_GROUPS;
    const size_t base = row * FEATURES;

    float m = NO_MAX;
    float s = 0.0f;
    for (uint c = lid; c < SPLIT_GROUPS; c += SPLIT_WG) {
        merge_pair(&m, &s, pairs[2 * c], pairs[2 * c + 1]);
    }
    merge_pairs(pm, ps, lid, SPLIT_WG, &m, &s);
    stream_out(x, y, base, chunk * SPLIT_VECS + lid, chunk_end(chunk),
               SPLIT_WG, m, 1.0f / s, 0);
}
