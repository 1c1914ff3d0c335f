/* attention_backward_dkv_mma.cl - dk and dv on tensor cores (f16, bf16):
 * a work-group per MMA_BK keys of one (batch, kv head), a warp per 16 of
 * them, over the query rows of every head of the group that see some key
 * of the block, MMA_T rows a step (q, dO, lse and D copied a step ahead
 * into the other of two buffers): S^T = K q^T, dP^T = V dO^T,
 * dS^T = P^T (dP^T - D), dv += P^T dO, dk += scale dS^T q. Each key's
 * sums run over the rows in order: the same bits run to run.
 *
 * Launch: local (2 * MMA_BK, 1); groups: dimension 0 ceil(seq_kv /
 * MMA_BK), dimension 1 batch * KV_HEADS. */
#include "attention_backward_mma_common.cl"

#define ABM_KV (MMA_BK * MMA_LD)
#define ABM_ROWS (MMA_T * MMA_LD)

/* Starts the copies of rows [R0, R0 + MMA_T) of q and dO into QS and
 * DOS; leaves their lse (base 2) and D in *L and *D for work-item TID
 * < MMA_T. */
inline void abm_load_rows(__local ushort *qs, __local ushort *dos,
                          const __global storage_t *q,
                          const __global storage_t *do_,
                          const __global float *lse,
                          const __global float *scratch, int seq_q, long b,
                          int hk, long r0, long rhi, uint tid, float *l,
                          float *d)
{
    am_load_q(qs, q, seq_q, b, hk, r0, tid, 2 * MMA_BK, MMA_T);
    am_load_q(dos, do_, seq_q, b, hk, r0, tid, 2 * MMA_BK, MMA_T);
    if (tid < MMA_T) {
        long r = r0 + tid;
        *l = abm_lse2(lse, b, hk, r, rhi, seq_q);
        *d = r < rhi ? abw_d(scratch, b, hk, r, seq_q) : 0.0f;
    }
}

__kernel __attribute__((reqd_work_group_size(2 * MMA_BK, 1, 1)))
void attention_backward_dkv_mma(const int seq_q, const int seq_kv,
                                const __global storage_t *q,
                                const __global storage_t *k,
                                const __global storage_t *v,
                                const __global storage_t *do_,
                                const __global float *lse,
                                const __global float *scratch,
                                __global storage_t *dk,
                                __global storage_t *dv)
{
    __local ushort room[2 * ABM_KV + 4 * ABM_ROWS]
        __attribute__((aligned(16)));
    __local float stats[2][2][MMA_T];
    /* Blocks first key first across every (batch, kv head): under a
     * causal mask the blocks that see the most rows start first. */
    const long heads = get_num_groups(1);
    const long order = get_group_id(1) * get_num_groups(0) + get_group_id(0);
    const long j0 = order / heads * MMA_BK;
    const long b = (order % heads) / KV_HEADS;
    const int hk = (int)(order % KV_HEADS);
    if (j0 >= seq_kv) {
        return;
    }
    __local ushort *ks = room, *vs = room + ABM_KV;
    const uint items = 2 * MMA_BK;
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const uint g = lane / 4, t = lane % 4;
    const long off = (long)seq_kv - seq_q;
    const int nk = (int)min((long)MMA_BK, seq_kv - j0);
    am_load_kv(ks, k, b, hk, j0, nk, seq_kv, tid, items, MMA_BK);
    am_load_kv(vs, v, b, hk, j0, nk, seq_kv, tid, items, MMA_BK);

    /* The rows that see some key of the block: [rlo, rhi); this
     * thread's keys. */
    long rlo, rhi;
    abw_rows_seeing(j0, nk, seq_q, seq_kv, &rlo, &rhi);
    const long ja = j0 + warp * 16 + g, jb = ja + 8;

    float dka[MMA_DT][4], dva[MMA_DT][4];
#pragma unroll
    for (int d = 0; d < MMA_DT; d++) {
        dka[d][0] = dka[d][1] = dka[d][2] = dka[d][3] = 0.0f;
        dva[d][0] = dva[d][1] = dva[d][2] = dva[d][3] = 0.0f;
    }
    if (rlo < rhi) {
        float l = 0.0f, d = 0.0f;
        abm_load_rows(room + 2 * ABM_KV, room + 2 * ABM_KV + ABM_ROWS, q,
                      do_, lse, scratch, seq_q, b, hk, rlo, rhi, tid, &l, &d);
        if (tid < MMA_T) {
            stats[0][0][tid] = l;
            stats[0][1][tid] = d;
        }
    }
    int buf = 0;
    for (long r0 = rlo; r0 < rhi; r0 += MMA_T, buf ^= 1) {
        const long r1 = r0 + MMA_T;
        __local ushort *qs = room + 2 * ABM_KV + 2 * buf * ABM_ROWS;
        __local ushort *dos = qs + ABM_ROWS;
        __local const float *ls = stats[buf][0], *ds = stats[buf][1];
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        /* This step's copies seen; every warp done with the other
         * buffer's rows. */
        barrier(CLK_LOCAL_MEM_FENCE);
        float nl = 0.0f, nd = 0.0f;
        if (r1 < rhi) {
            __local ushort *qn = room + 2 * ABM_KV + 2 * (buf ^ 1) * ABM_ROWS;
            abm_load_rows(qn, qn + ABM_ROWS, q, do_, lse, scratch, seq_q, b,
                          hk, r1, rhi, tid, &nl, &nd);
        }
        /* Whether some row of the step is hidden from some key. */
        const long pos_lo = r0 / GROUP + off;
        const long pos_hi = (min(r1, rhi) - 1) / GROUP + off;
        int mask = 0;
        (void)pos_lo;
        (void)pos_hi;
#if ATTN_CAUSAL
        mask |= j0 + MMA_BK - 1 > pos_lo;
#endif
#if ATTN_WINDOW > 0
        mask |= pos_hi - j0 >= ATTN_WINDOW;
#endif
        float s[MMA_NT][4], dp[MMA_NT][4];
        abm_scores_local(ks, warp, qs, lane, s);
        abm_scores_local(vs, warp, dos, lane, dp);
#pragma unroll
        for (int n = 0; n < MMA_NT; n++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int c = 8 * n + 2 * (int)t + (e & 1);
                long pos = (r0 + c) / GROUP + off;
                int see = !mask || abw_sees(pos, e < 2 ? ja : jb);
                abm_grad(&s[n][e], &dp[n][e], ls[c], ds[c], see);
            }
        }
        am_accumulate(dos, s, lane, dva);
        am_accumulate(qs, dp, lane, dka);
        if (r1 < rhi && tid < MMA_T) {
            stats[buf ^ 1][0][tid] = nl;
            stats[buf ^ 1][1][tid] = nd;
        }
    }
    abm_store_dkv(dk, dv, dka, dva, b, hk, ja, seq_kv, t);
}
