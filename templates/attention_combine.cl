/* attention_combine.cl - the split path's last launch: a work-group per
 * query row and head merges the partial softmaxes attention_part
 * left in scratch (attention_merge.cl) into o and lse, where the first
 * launch does not (CPUs; counters past the sync buffer's room).
 *
 * Launch: local (COMBINE_ITEMS, 1); groups: 1 by batch * seq_q * HEADS
 * (row (b * seq_q + i) * HEADS + h in dimension 1). */
#include "attention_common.cl"
#include "attention_merge.cl"

__kernel __attribute__((reqd_work_group_size(COMBINE_ITEMS, 1, 1)))
void attention_combine(const int slices, const int seq_q,
                       __global storage_t *o, __global float *lse,
                       const __global float *scratch)
{
    __local float w[2 * SPLIT_MOST + 1];
    const size_t row = get_group_id(1), h = row % HEADS;
    const size_t bi = row / HEADS; /* b * seq_q + i */
    /* as a (batch, kv head)'s rows order it: i * GROUP + h % GROUP */
    const long r = (long)(bi % seq_q) * GROUP + (long)(h % GROUP);
    attn_merge(o, lse, scratch, seq_q, (long)(bi / seq_q), (int)(h / GROUP),
               r, 1, slices, w, get_local_id(0), COMBINE_ITEMS);
}
