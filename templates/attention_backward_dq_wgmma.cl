/* attention_backward_dq_wgmma.cl - dq on the warpgroup tensor cores of
 * compute capability 9.0 (wgmma; f16, bf16; head dims 64, 80, 96, 128
 * and 256): a work-group, one warpgroup (two at 256), per MMA_Q (64)
 * query rows of one (batch, kv head), over the key tiles of WG_KEYS
 * keys its rows see, as attention_backward_dq_mma.cl does it on m16n8k16
 * products:
 * S = q K^T, dP = dO V^T, dS = P (dP - D), dq += scale dS K.
 *
 * Per tile, S and dP are m64n(WG_KEYS)k16 products of q and dO with K
 * and V read by wgmma from local memory (K-major: the head the
 * reduction); with DQ_ROWS_HELD q and dO are held in registers as
 * wgmma's A fragments for every tile, so that local memory serves each
 * product its B operand alone, else wgmma reads them from local memory
 * too. dq += dS K is an m64n(HEAD_DIM)k16 product with dS rounded to the
 * storage type in registers (wgmma's A operand) and K read N-major from
 * the same tile. The scores of one tile and dq's product of the tile
 * before are in flight together. A row's sums run over the keys in
 * order: the same bits run to run; a row that sees no key gets 0. Past a
 * head of 128 (WG_HALVES 2) two warpgroups share the rows, each
 * computing S and dP whole and AW_O_COLS, half, of dq's columns; the
 * first copies the tiles for both.
 *
 * Local memory: three K tiles (a tile serves S at its step and dq's
 * product at the next) and two V tiles, then (without DQ_ROWS_HELD) the
 * block's q and dO rows, laid out as attention_wgmma_tiles.cl lays them
 * out. The copies of the next K and V tiles run behind the products; one
 * work-group barrier a tile.
 *
 * Launch: local (WG_HALVES * 2 * MMA_BQ, 1); groups as
 * attention_backward_dq_mma's. */
#include "attention_backward_wgmma_common.cl"

#if MMA_BQ != MMA_Q
#error "attention_backward_dq_wgmma.cl: MMA_BQ must be MMA_Q (a warpgroup)"
#endif
#ifndef DQ_ROWS_HELD
#error "attention_backward_dq_wgmma.cl: DQ_ROWS_HELD is missing"
#endif

/* 3 K tiles, 2 V tiles (, q, dO) */
#define ADW_ROOM (5 * AW_KV_ROOM + (DQ_ROWS_HELD ? 0 : 2 * AW_Q_ROOM))

/* Rows RA and RA + 8 of X (q or dO; rows as attention_common.cl orders
 * them, zeros from ROWS on) as this work-item's wgmma A fragments over
 * the head. */
inline void adw_rows_held(uint f[HEAD_DIM / 16][4],
                          const __global storage_t *x, long b, int hk,
                          long ra, long rows, int seq_q, uint t)
{
    const long rb = ra + 8;
    const __global storage_t *xa =
        x + abw_row_at(b, hk, ra < rows ? ra : 0, seq_q) + 2 * t;
    const __global storage_t *xb =
        x + abw_row_at(b, hk, rb < rows ? rb : 0, seq_q) + 2 * t;
#pragma unroll
    for (int kk = 0; kk < HEAD_DIM / 16; kk++) {
        const __global uint *pa = (const __global uint *)(xa + 16 * kk);
        const __global uint *pb = (const __global uint *)(xb + 16 * kk);
        f[kk][0] = ra < rows ? pa[0] : 0;
        f[kk][1] = rb < rows ? pb[0] : 0;
        f[kk][2] = ra < rows ? pa[4] : 0;
        f[kk][3] = rb < rows ? pb[4] : 0;
    }
}

/* Starts S = q K^T and dP = dO V^T over the tiles KT and VT: q and dO
 * from QF and DOF (DQ_ROWS_HELD) or from QS and DOS. */
inline void adw_scores(uint qf[HEAD_DIM / 16][4],
                       uint dof[HEAD_DIM / 16][4], __local ushort *qs,
                       __local ushort *dos, __local ushort *kt,
                       __local ushort *vt, float s[4 * AW_NT],
                       float dp[4 * AW_NT])
{
#if DQ_ROWS_HELD
    (void)qs;
    (void)dos;
    aw_scores_held(qf, kt, s);
    aw_scores_held(dof, vt, dp);
#else
    (void)qf;
    (void)dof;
    aw_scores(qs, kt, 0, s);
    aw_scores(dos, vt, 0, dp);
#endif
}

/* Waits for the products of dP, the older of two groups in flight (S's
 * are older still). */
inline void adw_wait_dp(float d[4 * AW_NT])
{
    asm volatile(WG_MARK "wgmma.wait_group.sync.aligned 1;" : AW_S_D : :
                 "memory");
}

/* P and dS of a tile's scores S and DP at the keys from J0 (masked where
 * MASK: some key of the tile hidden from some row of the block; keys
 * from HI on never seen): S left holding P, DP dS. */
inline void adw_grad(float s[AW_NT][4], float dp[AW_NT][4], long j0, long hi,
                     int mask, long pos0, long pos1, uint t, float l0,
                     float l1, float d0, float d1)
{
#pragma unroll
    for (int n = 0; n < AW_NT; n++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            long j = j0 + 8 * n + 2 * t + (e & 1);
            int see = !mask || (j < hi && abw_sees(e < 2 ? pos0 : pos1, j));
            abm_grad(&s[n][e], &dp[n][e], e < 2 ? l0 : l1, e < 2 ? d0 : d1,
                     see);
        }
    }
}

/* Whether some key of the tile at J0 is hidden from some row of the
 * block (rows at positions POS_LO to POS_HI; keys to HI). */
inline int adw_masked(long j0, long hi, long pos_lo, long pos_hi)
{
    const long j1 = j0 + WG_KEYS;
    int mask = j1 > hi;
    (void)pos_lo;
    (void)pos_hi;
#if ATTN_CAUSAL
    mask |= j1 - 1 > pos_lo;
#endif
#if ATTN_WINDOW > 0
    mask |= pos_hi - j0 >= ATTN_WINDOW;
#endif
    return mask;
}

/* The start of step I of TILES (the key tiles from LO to HI): K and V of
 * tile I landed and fenced for wgmma in every work-item, and so the
 * buffers of K I - 2 and V I - 1 free, this step starts the copies of K
 * and V I + 1 into them. */
inline void adw_step_start(const __global storage_t *k,
                           const __global storage_t *v, long b, int hk,
                           long lo, long hi, int seq_kv, int i, int tiles,
                           __local ushort *kbuf, __local ushort *vbuf,
                           uint tid)
{
    const long j1 = lo + (long)(i + 1) * WG_KEYS;
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    wg_fence_proxy();
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i + 1 < tiles && awb_copies(tid)) {
        const int nk = (int)min((long)WG_KEYS, hi - j1);
        aw_load_kv(kbuf + ((i + 1) % 3) * AW_KV_ROOM, k, b, hk, j1, nk,
                   seq_kv, tid);
        aw_load_kv(vbuf + ((i + 1) % 2) * AW_KV_ROOM, v, b, hk, j1, nk,
                   seq_kv, tid);
    }
}

__kernel __attribute__((reqd_work_group_size(AWB_ITEMS, 1, 1)))
void attention_backward_dq_wgmma(const int seq_q, const int seq_kv,
                                 const __global storage_t *q,
                                 const __global storage_t *k,
                                 const __global storage_t *v,
                                 const __global storage_t *do_,
                                 const __global float *lse,
                                 const __global float *scratch,
                                 __global storage_t *dq)
{
    /* wgmma's swizzle follows address bits: tiles on 1024-byte lines */
    __local ushort room[ADW_ROOM] __attribute__((aligned(1024)));
    long b, r0;
    int hk;
    if (!am_block_at(seq_q, MMA_BQ, &b, &hk, &r0)) {
        return;
    }
    const long rows = (long)GROUP * seq_q;
    const uint tid = get_local_id(0), lane = tid % 32, warp = awb_warp(tid);
    const uint g = lane / 4, t = lane % 4;
    /* this warpgroup's part of the head: its first column, and where it
     * starts in the tiles */
    const uint col0 = awb_col0(tid), blk0 = awb_tile_part(tid);
    const long off = (long)seq_kv - seq_q;
    __local ushort *kbuf = room, *vbuf = kbuf + 3 * AW_KV_ROOM;
    __local ushort *qs = vbuf + 2 * AW_KV_ROOM, *dos = qs + AW_Q_ROOM;
    const long ra = r0 + warp * 16 + g, rb = ra + 8;
    uint qf[HEAD_DIM / 16][4], dof[HEAD_DIM / 16][4];
#if DQ_ROWS_HELD
    adw_rows_held(qf, q, b, hk, ra, rows, seq_q, t);
    adw_rows_held(dof, do_, b, hk, ra, rows, seq_q, t);
#else
    if (awb_copies(tid)) {
        aw_load_q(qs, q, seq_q, b, hk, r0, tid);
        aw_load_q(dos, do_, seq_q, b, hk, r0, tid);
    }
#endif
    const float l0 = abm_lse2(lse, b, hk, ra, rows, seq_q);
    const float l1 = abm_lse2(lse, b, hk, rb, rows, seq_q);
    const float d0 = ra < rows ? abw_d(scratch, b, hk, ra, seq_q) : 0.0f;
    const float d1 = rb < rows ? abw_d(scratch, b, hk, rb, seq_q) : 0.0f;
    const long pos0 = ra / GROUP + off, pos1 = rb / GROUP + off;

    /* The keys some row of the block sees: [lo, hi). */
    const long r_end = min(r0 + (long)MMA_BQ, rows);
    const long pos_lo = r0 / GROUP + off, pos_hi = (r_end - 1) / GROUP + off;
    long lo = 0, hi = seq_kv;
#if ATTN_CAUSAL
    hi = min(hi, pos_hi + 1);
#endif
#if ATTN_WINDOW > 0
    lo = max(lo, pos_lo - ATTN_WINDOW + 1);
#endif

    float acc[AWB_OT][4];
#pragma unroll
    for (int d = 0; d < AWB_OT; d++) {
        acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
    }
    /* Step i: S and dP of tile i beside dq += dS K of tile i - 1, the
     * first and the last step apart (ptxas keeps products in flight
     * across straight-line code only). */
    const int tiles = lo < hi ? (int)((hi - lo + WG_KEYS - 1) / WG_KEYS) : 0;
    if (tiles > 0) {
        const int nk = (int)min((long)WG_KEYS, hi - lo);
        if (awb_copies(tid)) {
            aw_load_kv(kbuf, k, b, hk, lo, nk, seq_kv, tid);
            aw_load_kv(vbuf, v, b, hk, lo, nk, seq_kv, tid);
        }
        uint p[AW_NT / 2][4];
        float s[AW_NT][4], dp[AW_NT][4];
        adw_step_start(k, v, b, hk, lo, hi, seq_kv, 0, tiles, kbuf, vbuf,
                       tid);
        adw_scores(qf, dof, qs, dos, kbuf, vbuf, (float *)s, (float *)dp);
        aw_wait_all_s((float *)s);
        aw_wait_all_s((float *)dp);
        adw_grad(s, dp, lo, hi, adw_masked(lo, hi, pos_lo, pos_hi), pos0,
                 pos1, t, l0, l1, d0, d1);
        aw_pack(dp, p);
        for (int i = 1; i < tiles; i++) {
            const long j0 = lo + (long)i * WG_KEYS;
            adw_step_start(k, v, b, hk, lo, hi, seq_kv, i, tiles, kbuf, vbuf,
                           tid);
            adw_scores(qf, dof, qs, dos, kbuf + (i % 3) * AW_KV_ROOM,
                       vbuf + (i % 2) * AW_KV_ROOM, (float *)s, (float *)dp);
            aw_accumulate(kbuf + ((i - 1) % 3) * AW_KV_ROOM + blk0, p,
                          (float *)acc);
            aw_wait_s((float *)s);
            adw_wait_dp((float *)dp);
            adw_grad(s, dp, j0, hi, adw_masked(j0, hi, pos_lo, pos_hi),
                     pos0, pos1, t, l0, l1, d0, d1);
            aw_wait_o((float *)acc, p);
            aw_pack(dp, p);
        }
        aw_accumulate(kbuf + ((tiles - 1) % 3) * AW_KV_ROOM + blk0, p,
                      (float *)acc);
        aw_wait_o((float *)acc, p);
    }
    /* q's and dO's copies when no key is seen */
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const long r = ra + 8 * h;
        if (r < rows) {
            awb_store_half(dq, abw_row_at(b, hk, r, seq_q) + col0, acc, h,
                           t, ATTN_SCALE);
        }
    }
}
