/* attention_mma.cl - the prefill path on tensor cores (f16, bf16): a
 * work-group per block of MMA_Q query rows of one (batch, kv head), a warp
 * per 16 of them, over every key tile its rows see
 * (attention_mma_common.cl); writes o and lse.
 *
 * Launch: local (2 * MMA_Q, 1); groups: dimension 0 at least the blocks
 * of GROUP * seq_q rows, dimension 1 batch * KV_HEADS (groups past
 * blocks * batch * KV_HEADS in launch order return). */
#include "attention_mma_common.cl"

#if !defined(MMA_Q) || MMA_Q % 16 != 0
#error "attention_mma.cl: MMA_Q a multiple of 16"
#endif

__kernel __attribute__((reqd_work_group_size(2 * MMA_Q, 1, 1)))
void attention_mma(const int seq_q, const int seq_kv,
                   const __global storage_t *q, const __global storage_t *k,
                   const __global storage_t *v, __global storage_t *o,
                   __global float *lse)
{
    __local ushort room[MMA_ROOM(MMA_Q)] __attribute__((aligned(16)));
    long b, r0;
    int hk;
    if (!am_block_at(seq_q, MMA_Q, &b, &hk, &r0)) {
        return;
    }
    float m[2], l[2], acc[MMA_DT][4];
    long ra;
    am_block(q, k, v, seq_q, seq_kv, b, hk, r0, 0, seq_kv, room, MMA_Q, 0, m,
             l, acc, &ra);
    am_store(o, lse, seq_q, b, hk, ra, m, l, acc);
}
