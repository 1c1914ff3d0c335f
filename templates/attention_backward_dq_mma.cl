/* attention_backward_dq_mma.cl - dq on tensor cores (f16, bf16): a
 * work-group per MMA_BQ query rows of one (batch, kv head), a warp per
 * 16 of them holding their q and dO fragments, over the key tiles its
 * rows see (MMA_T keys and values a tile, copied a tile ahead into the
 * other of two buffers): S = q K^T, dP = dO V^T, dS = P (dP - D),
 * dq += scale dS K. A row's sums run over the keys in order: the same
 * bits run to run; a row that sees no key gets 0.
 *
 * Launch: local (2 * MMA_BQ, 1); groups: dimension 0 at least the blocks
 * of GROUP * seq_q rows, dimension 1 batch * KV_HEADS (groups past
 * blocks * batch * KV_HEADS in launch order return). */
#include "attention_backward_mma_common.cl"

#define ABM_TILE (MMA_T * MMA_LD)
#define ABM_DQ_ROOM (2 * MMA_BQ > 4 * MMA_T ? 2 * MMA_BQ * MMA_LD : 4 * ABM_TILE)

__kernel __attribute__((reqd_work_group_size(2 * MMA_BQ, 1, 1)))
void attention_backward_dq_mma(const int seq_q, const int seq_kv,
                               const __global storage_t *q,
                               const __global storage_t *k,
                               const __global storage_t *v,
                               const __global storage_t *do_,
                               const __global float *lse,
                               const __global float *scratch,
                               __global storage_t *dq)
{
    __local ushort room[ABM_DQ_ROOM] __attribute__((aligned(16)));
    const long rows = (long)GROUP * seq_q;
    /* Blocks last row first across every (batch, kv head): under a
     * causal mask the blocks that see the most keys start first. */
    const long blocks = (rows + MMA_BQ - 1) / MMA_BQ;
    const long heads = get_num_groups(1);
    const long order = get_group_id(1) * get_num_groups(0) + get_group_id(0);
    if (order >= blocks * heads) {
        return;
    }
    const long r0 = (blocks - 1 - order / heads) * MMA_BQ;
    const long b = (order % heads) / KV_HEADS;
    const int hk = (int)(order % KV_HEADS);
    const uint items = 2 * MMA_BQ;
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const uint g = lane / 4, t = lane % 4;
    const long off = (long)seq_kv - seq_q;

    uint qa[MMA_KT][4], da[MMA_KT][4];
    am_load_q(room, q, seq_q, b, hk, r0, tid, items, MMA_BQ);
    am_load_q(room + MMA_BQ * MMA_LD, do_, seq_q, b, hk, r0, tid, items,
              MMA_BQ);
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    barrier(CLK_LOCAL_MEM_FENCE);
    am_afrags(room, lane, warp, qa);
    am_afrags(room + MMA_BQ * MMA_LD, lane, warp, da);
    barrier(CLK_LOCAL_MEM_FENCE);

    const long ra = r0 + warp * 16 + g, rb = ra + 8;
    const float l0 = abm_lse2(lse, b, hk, ra, rows, seq_q);
    const float l1 = abm_lse2(lse, b, hk, rb, rows, seq_q);
    const float d0 = ra < rows ? abw_d(scratch, b, hk, ra, seq_q) : 0.0f;
    const float d1 = rb < rows ? abw_d(scratch, b, hk, rb, seq_q) : 0.0f;
    const long pos0 = ra / GROUP + off, pos1 = rb / GROUP + off;

    /* The keys some row of the block sees: [lo, hi). */
    const long r_end = min(r0 + (long)MMA_BQ, rows);
    const long pos_lo = r0 / GROUP + off, pos_hi = (r_end - 1) / GROUP + off;
    long lo = 0, hi = seq_kv;
    (void)pos_lo;
#if ATTN_CAUSAL
    hi = min(hi, pos_hi + 1);
#endif
#if ATTN_WINDOW > 0
    lo = max(lo, pos_lo - ATTN_WINDOW + 1);
#endif

    float acc[MMA_DT][4];
#pragma unroll
    for (int d = 0; d < MMA_DT; d++) {
        acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
    }
    if (lo < hi) {
        int nk = (int)min((long)MMA_T, hi - lo);
        am_load_kv(room, k, b, hk, lo, nk, seq_kv, tid, items, MMA_T);
        am_load_kv(room + ABM_TILE, v, b, hk, lo, nk, seq_kv, tid, items,
                   MMA_T);
    }
    int buf = 0;
    for (long j0 = lo; j0 < hi; j0 += MMA_T, buf ^= 1) {
        const long j1 = j0 + MMA_T;
        __local ushort *ks = room + 2 * buf * ABM_TILE, *vs = ks + ABM_TILE;
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        /* This tile's copies seen; every warp done with the other
         * buffer's tile. */
        barrier(CLK_LOCAL_MEM_FENCE);
        if (j1 < hi) {
            __local ushort *kn = room + 2 * (buf ^ 1) * ABM_TILE;
            int nk = (int)min((long)MMA_T, hi - j1);
            am_load_kv(kn, k, b, hk, j1, nk, seq_kv, tid, items, MMA_T);
            am_load_kv(kn + ABM_TILE, v, b, hk, j1, nk, seq_kv, tid, items,
                       MMA_T);
        }
        /* Whether some key of the tile is hidden from some row. */
        int mask = j1 > hi;
#if ATTN_CAUSAL
        mask |= j1 - 1 > pos_lo;
#endif
#if ATTN_WINDOW > 0
        mask |= pos_hi - j0 >= ATTN_WINDOW;
#endif
        float s[MMA_NT][4], dp[MMA_NT][4];
        am_scores(ks, qa, lane, s);
        am_scores(vs, da, lane, dp);
#pragma unroll
        for (int n = 0; n < MMA_NT; n++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                long j = j0 + 8 * n + 2 * t + (e & 1);
                int see = !mask || (j < hi && abw_sees(e < 2 ? pos0 : pos1, j));
                abm_grad(&s[n][e], &dp[n][e], e < 2 ? l0 : l1,
                         e < 2 ? d0 : d1, see);
            }
        }
        am_accumulate(ks, dp, lane, acc);
    }
    abm_store_dq(dq, acc, b, hk, ra, rows, seq_q, t);
}
