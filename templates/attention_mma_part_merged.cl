/* attention_mma_part_merged.cl - the split path in one launch on tensor
 * cores: each work-group stores its records as attention_mma_part does,
 * and the last of a block's splits merges the block's rows into o and lse
 * (attention_merge_last.cl).
 *
 * Launch: attention_mma_part's. */
#include "attention_mma_part.cl"
#include "attention_merge_last.cl"

/* Merges in the tiles' room (AMP_ROOM). */
__kernel __attribute__((reqd_work_group_size(2 * SPLIT_Q, 1, 1)))
void attention_mma_part_merged(const int slices, const int seq_q,
                               const int seq_kv,
                               const __global storage_t *q,
                               const __global storage_t *k,
                               const __global storage_t *v,
                               __global storage_t *o, __global float *lse,
                               __global float *scratch, __global uint *sync)
{
    AMP_LOCAL;
    __local uint last;
    const long rows = (long)GROUP * seq_q;
    if (at.block * SPLIT_Q >= rows) {
        return;
    }
    amp_records(seq_q, seq_kv, q, k, v, scratch, at.block, at.split, slices,
                at.b, at.hk, room);
    attn_merge_last(o, lse, scratch, sync, seq_q, at.b, at.hk,
                    (rows + SPLIT_Q - 1) / SPLIT_Q, at.block, slices, SPLIT_Q,
                    (__local float *)room, &last, 2 * SPLIT_Q);
}
