/* attention_combine.cl - the split path's last launch: a work-group per
 * query row and head merges the SPLIT partial softmaxes attention_part
 * left in scratch (each rescaled by exp2(m_s - max)) into o and lse; the
 * arithmetic of attention_merge.cl, which does it in the first launch
 * where the sync buffer holds the blocks' counters.
 *
 * Launch: local (COMBINE_ITEMS, 1); groups: 1 by batch * seq_q * HEADS
 * (row (b * seq_q + i) * HEADS + h in dimension 1). */
#include "attention_common.cl"

__kernel __attribute__((reqd_work_group_size(COMBINE_ITEMS, 1, 1)))
void attention_combine(const int seq_q, __global storage_t *o,
                       __global float *lse, const __global float *scratch)
{
    const size_t row = get_group_id(1);
    const int lid = get_local_id(0);
    const __global float *rec = scratch + row * SPLIT * ATTN_REC;
    float mx = -INFINITY;
    for (int s = 0; s < SPLIT; s++) {
        mx = fmax(mx, rec[s * ATTN_REC + HEAD_DIM]);
    }
    const float base = mx == -INFINITY ? 0.0f : mx;
    float l = 0.0f;
    for (int s = 0; s < SPLIT; s++) {
        l += rec[s * ATTN_REC + HEAD_DIM + 1] *
             exp2(rec[s * ATTN_REC + HEAD_DIM] - base);
    }
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    for (int d = lid; d < HEAD_DIM; d += COMBINE_ITEMS) {
        float a = 0.0f;
        for (int s = 0; s < SPLIT; s++) {
            a += rec[s * ATTN_REC + d] *
                 exp2(rec[s * ATTN_REC + HEAD_DIM] - base);
        }
        store1(o, row * HEAD_DIM + d, a * inv);
    }
    if (lid == 0 && lse != 0) {
        const size_t h = row % HEADS, bi = row / HEADS;
        lse[(bi / seq_q * HEADS + h) * seq_q + bi % seq_q] = attn_lse(mx, l);
    }
}
