/* softmax_part.cl - the split path's first launch: each work-group takes
 * one chunk of one row (softmax_common.cl) and writes the chunk's pair,
 * its largest h and the sum of exponentials relative to it, to scratch
 * as floats (m, s) at pair row * SPLIT_GROUPS + chunk. softmax_combine
 * then merges a row's pairs and writes the outputs.
 *
 * Buffers: x (rows x FEATURES); scratch (rows x SPLIT_GROUPS x 2
 * floats).
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "softmax_common.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void softmax_part(const __global storage_t *x, __global float *scratch)
{
    __local float pm[SPLIT_WG];
    __local float ps[SPLIT_WG];
    const uint lid = get_local_id(0);
    const uint chunk = get_group_id(0);
    const size_t pair = get_group_id(1) * SPLIT_GROUPS + chunk;
    const size_t base = get_group_id(1) * FEATURES;

    float m = NO_MAX;
    float s = stream_sum(x, base, chunk * SPLIT_VECS + lid, chunk_end(chunk),
                         SPLIT_WG, &m, 0);
    merge_pairs(pm, ps, lid, SPLIT_WG, &m, &s);
    if (lid == 0) {
        scratch[2 * pair] = m;
        scratch[2 * pair + 1] = s;
    }
}
