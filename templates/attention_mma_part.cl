/* attention_mma_part.cl - the split path's first launch on tensor cores
 * (f16, bf16): `slices` work-groups (as attention_part.cl's) per block
 * of SPLIT_Q query rows of one (batch, kv head), a warp per 16 of them,
 * each over its chunk of the keys (a multiple of MMA_K;
 * attention_mma_common.cl), write each row's
 * partial max (base 2), sum and unnormalised outputs to scratch as
 * attention_part does, for attention_combine; attention_mma_part_merged.cl
 * merges them in the last work-group of each block.
 *
 * Launch: local (2 * SPLIT_Q, 1); groups: dimension 0 slices times at
 * least the blocks, dimension 1 batch * KV_HEADS, a group's split, block,
 * batch and kv head as attn_split_group orders them. */
#include "attention_mma_common.cl"

#if !defined(SPLIT_Q) || SPLIT_Q % 16 != 0
#error "attention_mma_part.cl: SPLIT_Q a multiple of 16"
#endif

/* This work-group's records, of block BLOCK of batch B's kv head HK. */
void amp_records(int seq_q, int seq_kv, const __global storage_t *q,
                 const __global storage_t *k, const __global storage_t *v,
                 __global float *scratch, long block, int split,
                 int splits, long b, int hk, __local ushort *room)
{
    const long rows = (long)GROUP * seq_q;
    const uint t = get_local_id(0) % 4;
    const long chunk = (((long)seq_kv + splits - 1) / splits + MMA_K - 1) /
                       MMA_K * MMA_K;
    const long from = split * chunk;
    float m[2], l[2], acc[MMA_DT][4];
    long ra;
    am_block(q, k, v, seq_q, seq_kv, b, hk, block * SPLIT_Q, from,
             min(from + chunk, (long)seq_kv), room, SPLIT_Q, 1, m, l, acc,
             &ra);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const long r = ra + 8 * h;
        if (r >= rows) {
            continue;
        }
        __global float *rec =
            scratch +
            (attn_row(seq_q, b, hk, r) * splits + split) * ATTN_REC;
#pragma unroll
        for (int d = 0; d < MMA_DT; d++) {
            const int col = 8 * d + 2 * t;
            if (col < HEAD_DIM) {
                rec[col] = acc[d][2 * h];
                rec[col + 1] = acc[d][2 * h + 1];
            }
        }
        if (t == 0) {
            rec[HEAD_DIM] = m[h];
            rec[HEAD_DIM + 1] = l[h];
        }
    }
}

/* Local memory, ushorts: the tiles and Q's rows (MMA_ROOM_APART), or,
 * if more, the merge's SPLIT_Q * (2 * SPLIT_MOST + 1) floats. */
#define AMP_MERGE_ROOM (2 * SPLIT_Q * (2 * SPLIT_MOST + 1))
#define AMP_ROOM                                                         \
    (MMA_ROOM_APART(SPLIT_Q) > AMP_MERGE_ROOM ? MMA_ROOM_APART(SPLIT_Q)  \
                                              : AMP_MERGE_ROOM)

/* What both kernels of the split path declare first. */
#define AMP_LOCAL                                                        \
    __local ushort room[AMP_ROOM] __attribute__((aligned(16)));          \
    const struct attn_split_at at = attn_split_group(slices)

__kernel __attribute__((reqd_work_group_size(2 * SPLIT_Q, 1, 1)))
void attention_mma_part(const int slices, const int seq_q, const int seq_kv,
                        const __global storage_t *q,
                        const __global storage_t *k,
                        const __global storage_t *v, __global float *scratch)
{
    AMP_LOCAL;
    if (at.block * SPLIT_Q >= (long)GROUP * seq_q) {
        return;
    }
    amp_records(seq_q, seq_kv, q, k, v, scratch, at.block, at.split, slices,
                at.b, at.hk, room);
}
