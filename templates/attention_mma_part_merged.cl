/* attention_mma_part_merged.cl - the split path in one launch on tensor
 * cores: each work-group stores its records as attention_mma_part does,
 * and the last of a block's SPLIT merges the block's rows into o and lse
 * (attention_merge.cl).
 *
 * Launch: attention_mma_part's. */
#include "attention_mma_part.cl"
#include "attention_merge.cl"

/* Merges in the tiles' room, which holds SPLIT_Q * (2 * SPLIT + 1) floats
 * (the plan takes this kernel only then). */
__kernel __attribute__((reqd_work_group_size(2 * SPLIT_Q, 1, 1)))
void attention_mma_part_merged(const int seq_q, const int seq_kv,
                               const __global storage_t *q,
                               const __global storage_t *k,
                               const __global storage_t *v,
                               __global storage_t *o, __global float *lse,
                               __global float *scratch, __global uint *sync)
{
    AMP_LOCAL;
    __local uint last;
    const long rows = (long)GROUP * seq_q, r0 = block * SPLIT_Q;
    const long blocks = (rows + SPLIT_Q - 1) / SPLIT_Q;
    if (r0 >= rows) {
        return;
    }
    const long b = get_group_id(1) / KV_HEADS;
    const int hk = (int)(get_group_id(1) % KV_HEADS);
    amp_records(seq_q, seq_kv, q, k, v, scratch, block, split, b, hk, room);
    if (grid_last(attn_block_word(sync, blocks, block), SPLIT,
                  get_local_id(0), &last)) {
        attn_merge(o, lse, scratch, seq_q, b, hk, r0,
                   (int)min((long)SPLIT_Q, rows - r0), (__local float *)room,
                   get_local_id(0), 2 * SPLIT_Q);
    }
}
