/* attention_merge_last.cl - the split path in one launch: each
 * work-group of a block, its records stored, counts itself done on the
 * block's word of the sync buffer, and the last of the block's splits
 * merges the block's rows (attention_merge.cl). */
#include "attention_merge.cl"
#include "grid_fence.cl"

/* After this work-group's records of block BLOCK of BLOCKS (BQ rows
 * each) of batch B's kv head HK: the block's rows merged when it is the
 * last of the SPLITS to count itself (its word, one per block of the
 * launch, set back to 0 then). W as attn_merge takes it, LAST a word of
 * local memory; every work-item of the group calls it (barriers). */
void attn_merge_last(__global storage_t *o, __global float *lse,
                     const __global float *scratch, __global uint *sync,
                     int seq_q, long b, int hk, long blocks, long block,
                     int splits, uint bq, __local float *w,
                     __local uint *last, uint items)
{
    const uint lid = get_local_id(0);
    const long r0 = block * bq;
    if (grid_last(sync + (b * KV_HEADS + hk) * blocks + block, splits, lid,
                  last)) {
        attn_merge(o, lse, scratch, seq_q, b, hk, r0,
                   (int)min((long)bq, (long)GROUP * seq_q - r0), splits, w,
                   lid, items);
    }
}
