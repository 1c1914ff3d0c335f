/* softmax_coop_common.cl - what the one-launch split path's kernels
 * share (softmax_coop.cl, softmax_coop_long.cl): a row's pair across its
 * chunks' work-groups (row_coop.cl) and a chunk read twice. */
#include "softmax_common.cl"
#include "row_coop.cl"

/* Publishes (M, S) as chunk CHUNK's pair of ROW, waits for the row's
 * other chunks (GENERATION: coop_generation) and returns the row's pair,
 * merged in a fixed order by the group's ITEMS items. */
inline void coop_row_pair(volatile __global uint *sync, uint row, uint chunk,
                          uint generation, __local float *pm,
                          __local float *ps, uint lid, const uint items,
                          float *m, float *s)
{
    volatile __global uint *pairs = coop_words(sync, row);
    if (lid == 0) {
        coop_put(pairs, 2 * chunk, *m);
        coop_put(pairs, 2 * chunk + 1, *s);
    }
    coop_wait(sync, row, lid, generation);
    float mr = NO_MAX;
    float sr = 0.0f;
    for (uint c = lid; c < coop_groups(); c += items) {
        merge_pair(&mr, &sr, coop_get(pairs, 2 * c),
                   coop_get(pairs, 2 * c + 1));
    }
    merge_pairs(pm, ps, lid, items, &mr, &sr);
    *m = mr;
    *s = sr;
}

/* The chunk [FIRST, END) streamed by the group's ITEMS items, this one
 * LID, in steps of ITEMS: its pair, then its outputs, x read again after
 * the barrier (recently: from the cache). */
inline void chunk_streamed(const __global storage_t *x,
                           __global storage_t *y,
                           volatile __global uint *sync, size_t base,
                           uint row, uint chunk, uint first, uint end,
                           uint generation, __local float *pm,
                           __local float *ps, uint lid, const uint items)
{
    float m = NO_MAX;
    float s = stream_sum(x, base, first, end, items, &m, 1);
    merge_pairs(pm, ps, lid, items, &m, &s);
    coop_row_pair(sync, row, chunk, generation, pm, ps, lid, items, &m, &s);
    stream_out(x, y, base, first, end, items, m, 1.0f / s, 1);
}
