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
    const long rows = (long)GROUP * seq_q;
    /* Groups in launch order take the blocks last row first, across every
     * (batch, kv head): under a causal mask the blocks that see the most
     * keys start first, and the short ones fill the tail. */
    const long blocks = (rows + MMA_Q - 1) / MMA_Q;
    const long heads = get_num_groups(1);
    const long order = get_group_id(1) * get_num_groups(0) + get_group_id(0);
    if (order >= blocks * heads) {
        return;
    }
    const long block = blocks - 1 - order / heads;
    const long b = (order % heads) / KV_HEADS;
    const int hk = (int)(order % KV_HEADS);
    float m[2], l[2], acc[MMA_DT][4];
    long ra;
    am_block(q, k, v, seq_q, seq_kv, b, hk, block * MMA_Q, 0, seq_kv, room,
             MMA_Q, m, l, acc, &ra);
    am_store(o, lse, seq_q, b, hk, ra, m, l, acc);
}
