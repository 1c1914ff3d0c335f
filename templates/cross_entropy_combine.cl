/* cross_entropy_combine.cl - the split path's second launch: each
 * work-group merges the statistics cross_entropy_part left for its row,
 * in the same order in every work-group of the row (softmax_combine.cl
 * says why that gives them the same bits); the first chunk's writes the
 * row's loss, and with GRAD each writes the gradient of its chunk,
 * reading the chunk again (recently read: from the cache on GPUs), the
 * last row's last chunk first.
 *
 * Buffers: logits (rows x FEATURES), labels (rows, int32); loss (rows,
 * float32) with REDUCE_NONE; dlogits with GRAD; scratch.
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "cross_entropy_common.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void cross_entropy_combine(const int rows, const __global storage_t *logits,
                           const __global int *labels
#if REDUCE_NONE
                           , __global float *loss
#endif
#if GRAD
                           , __global storage_t *dlogits
#endif
                           , __global float *scratch)
{
    __local float pm[SPLIT_WG];
    __local float ps[SPLIT_WG];
    __local float pt[SPLIT_WG];
    const uint lid = get_local_id(0);
    const uint chunk = SPLIT_GROUPS - 1 - get_group_id(0);
    const size_t row = (size_t)rows - 1 - get_group_id(1);
    const size_t base = row * FEATURES;
    const int label = labels[row];
    const __global float *block = scratch + split_at(rows, row);
    const float xy = label_valid(label) ? block[3 * SPLIT_GROUPS] : 0.0f;

    float m = NO_MAX, s = 0.0f, t = 0.0f;
    for (uint c = lid; c < SPLIT_GROUPS; c += SPLIT_WG) {
        merge_pair(&m, &s, block[3 * c], block[3 * c + 1]);
        t += block[3 * c + 2];
    }
    merge_pairs(pm, ps, lid, SPLIT_WG, &m, &s);
#if SMOOTH
    t = sum_items(pt, lid, SPLIT_WG, t);
#else
    (void)pt;
#endif
    if (chunk == 0 && lid == 0) {
#if REDUCE_NONE
        loss[row] = row_loss(label, m, s, t, xy);
#else
        scratch[LOSSES_AT + row] = row_loss(label, m, s, t, xy);
#endif
    }
#if GRAD
    stream_grad(logits, dlogits, base, chunk * SPLIT_VECS + lid,
                chunk_end(chunk), SPLIT_WG, label, m, s, xy,
                grad_scale(label, scratch), false);
#else
    (void)logits;
#endif
}
