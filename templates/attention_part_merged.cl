/* attention_part_merged.cl - the split path in one launch (SIMT): each
 * work-group stores its records as attention_part does, and the last of
 * a block's splits merges the block's rows into o and lse
 * (attention_merge_last.cl).
 *
 * Launch: attention_part's. */
#include "attention_part.cl"
#include "attention_merge_last.cl"

/* Merges in q's rows' room, which holds BLOCK_Q * (2 * SPLIT_MOST + 1)
 * floats (the plan takes this kernel only then). */
__kernel __attribute__((reqd_work_group_size(ITEMS, 1, 1)))
void attention_part_merged(const int slices, const int seq_q,
                           const int seq_kv,
                           const __global storage_t *q,
                           const __global storage_t *k,
                           const __global storage_t *v, __global storage_t *o,
                           __global float *lse, __global float *scratch,
                           __global uint *sync)
{
    AP_LOCAL;
    __local uint last;
    if (at.block >= attn_blocks(seq_q)) {
        return;
    }
    ap_records(seq_q, seq_kv, q, k, v, scratch, at.block, at.split, slices,
               at.b, at.hk, room);
    attn_merge_last(o, lse, scratch, sync, seq_q, at.b, at.hk,
                    attn_blocks(seq_q), at.block, slices, BLOCK_Q, qs, &last,
                    ITEMS);
}
