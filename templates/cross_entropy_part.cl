/* cross_entropy_part.cl - the split path's first launch: each work-group
 * takes one chunk of one row (softmax_common.cl's chunks) and writes its
 * statistics (m, s, t) to the row's block of scratch (SPLIT_AT); the
 * work-group whose chunk holds the label writes its logit there too, so that
 * cross_entropy_combine need not read it again from logits, which it may
 * be overwriting (dlogits may be logits). An ignored row reads nothing.
 *
 * Buffers: logits (rows x FEATURES), labels (rows, int32); scratch.
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "cross_entropy_common.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void cross_entropy_part(const int rows, const __global storage_t *logits,
                        const __global int *labels, __global float *scratch)
{
    __local float pm[SPLIT_WG];
    __local float ps[SPLIT_WG];
    __local float pt[SPLIT_WG];
    const uint lid = get_local_id(0);
    const uint chunk = get_group_id(0);
    const size_t row = get_group_id(1);
    const size_t base = row * FEATURES;
    const int label = labels[row];
    __global float *block = scratch + split_at(rows, row);

    float m = NO_MAX, s = 0.0f, t = 0.0f;
    if (!label_ignored(label)) {
        stream_stats(logits, base, chunk * SPLIT_VECS + lid, chunk_end(chunk),
                     SPLIT_WG, &m, &s, &t, false);
    }
    merge_pairs(pm, ps, lid, SPLIT_WG, &m, &s);
#if SMOOTH
    t = sum_items(pt, lid, SPLIT_WG, t);
#else
    (void)pt;
#endif
    if (lid == 0) {
        block[3 * chunk] = m;
        block[3 * chunk + 1] = s;
        block[3 * chunk + 2] = t;
        if (label_valid(label) && (uint)label / VEC / SPLIT_VECS == chunk) {
            block[3 * SPLIT_GROUPS] = label_x(logits, base, label);
        }
    }
}
