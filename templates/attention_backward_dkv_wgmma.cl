/* attention_backward_dkv_wgmma.cl - dk and dv on the warpgroup tensor
 * cores of compute capability 9.0 (wgmma; f16, bf16; head dims 64, 80,
 * 96, 128 and 256): a work-group, one warpgroup (two at 256), per 64
 * keys of one (batch, kv head), over the query rows of every head of the
 * group that see some key of the block, 64 rows a step, as
 * attention_backward_dkv_mma.cl does it on m16n8k16 products:
 * S^T = K q^T, dP^T = V dO^T, dS^T = P^T (dP^T - D), dv += P^T dO,
 * dk += scale dS^T q.
 *
 * S^T and dP^T are m64n64k16 products with the block's keys and values
 * and the step's q and dO rows all read by wgmma from local memory
 * (K-major: the head the reduction); dv and dk are m64n(HEAD_DIM)k16
 * products with P and dS rounded to the storage type in registers
 * (wgmma's A operand) and the step's dO and q rows read N-major from the
 * same tiles. A work-group waits for its products each step; two fit a
 * compute unit (96 KiB of local memory at a head of 128), so that one's
 * products can run beside the other's exponentials. Past a head of 128
 * (WG_HALVES 2) a warpgroup's registers do not hold dk's and dv's
 * outputs: two warpgroups share the keys, each computing S^T and dP^T
 * whole and AW_O_COLS, half, of dk's and dv's columns; the first copies
 * the tiles for both. Each key's sums run over the rows in order: the
 * same bits run to run.
 *
 * Local memory: the block's keys and values, then two steps of q and dO
 * rows (the next step's copied while this one's products run), laid out
 * as attention_wgmma_tiles.cl lays them out; lse and D of two steps.
 * With DKV_TMA (a head a kv head, so that a step's rows are 64
 * consecutive rows of one head) the first work-item loads each step's
 * rows by the tensor memory accelerator, counted on an mbarrier a
 * buffer, where otherwise every work-item copies 16 bytes at a time.
 *
 * Launch: local (WG_HALVES * 128, 1); groups: dimension 0
 * ceil(seq_kv / 64), dimension 1 batch * KV_HEADS. */
#include "attention_backward_wgmma_common.cl"
#if DKV_TMA
#include "attention_tma_tiles.cl"

/* This work-item's slot of maps: past D's batch * seq_q * HEADS floats,
 * rounded up to 128 bytes. */
inline __global ulong *adk_maps(__global float *scratch, int seq_q)
{
    const long batch = get_num_groups(1) / KV_HEADS;
    return atm_slot(scratch + (batch * seq_q * HEADS + 31) / 32 * 32);
}
#endif

#if MMA_BK != 64 || MMA_Q != 64 || WG_KEYS != 64
#error "attention_backward_dkv_wgmma.cl: 64 keys a work-group, 64 rows a step"
#endif

#define ADK_ROOM (6 * AW_KV_ROOM) /* K, V, then q, dO of two steps */

/* Starts the copies of rows [R0, R0 + 64) of q and dO into QS and DOS
 * (with DKV_TMA: by the maps MAPS, counted on BAR, one head a kv head);
 * leaves their lse (base 2) and D in *L and *D for work-item TID < 64. */
inline void adk_load_rows(__local ushort *qs, __local ushort *dos,
                          const __global storage_t *q,
                          const __global storage_t *do_,
                          const __global float *lse,
                          const __global float *scratch,
                          const __global ulong *maps, __local ulong *bar,
                          int seq_q, long b, int hk, long r0, long rhi,
                          uint tid, float *l, float *d)
{
#if DKV_TMA
    if (tid == 0) {
        tma_bar_expect(bar, 2 * AW_KV_ROOM * 2);
        atm_load(qs, maps, (uint)hk, (uint)r0, (uint)b, bar);
        atm_load(dos, maps + 16, (uint)hk, (uint)r0, (uint)b, bar);
    }
#else
    (void)maps;
    (void)bar;
    if (awb_copies(tid)) {
        aw_load_q(qs, q, seq_q, b, hk, r0, tid);
        aw_load_q(dos, do_, seq_q, b, hk, r0, tid);
    }
#endif
    if (tid < WG_KEYS) {
        long r = r0 + tid;
        *l = abm_lse2(lse, b, hk, r, rhi, seq_q);
        *d = r < rhi ? abw_d(scratch, b, hk, r, seq_q) : 0.0f;
    }
}

__kernel __attribute__((reqd_work_group_size(AWB_ITEMS, 1, 1)))
void attention_backward_dkv_wgmma(const int seq_q, const int seq_kv,
                                  const __global storage_t *q,
                                  const __global storage_t *k,
                                  const __global storage_t *v,
                                  const __global storage_t *do_,
                                  const __global float *lse,
                                  __global float *scratch,
                                  __global storage_t *dk,
                                  __global storage_t *dv)
{
    /* wgmma's swizzle follows address bits: tiles on 1024-byte lines */
    __local ushort room[ADK_ROOM] __attribute__((aligned(1024)));
    __local float stats[2][2][WG_KEYS];
    __local ulong full[2]; /* a step's rows landed (DKV_TMA) */
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
    __local ushort *ks = room, *vs = room + AW_KV_ROOM;
    __local ushort *rows_at = room + 2 * AW_KV_ROOM;
    const uint tid = get_local_id(0), lane = tid % 32, warp = awb_warp(tid);
    const uint g = lane / 4, t = lane % 4;
    /* this warpgroup's part of the head: its first column, and where it
     * starts in the tiles */
    const uint col0 = awb_col0(tid), blk0 = awb_tile_part(tid);
    const long off = (long)seq_kv - seq_q;
    const int nk = (int)min((long)MMA_BK, seq_kv - j0);
    if (awb_copies(tid)) {
        aw_load_kv(ks, k, b, hk, j0, nk, seq_kv, tid);
        aw_load_kv(vs, v, b, hk, j0, nk, seq_kv, tid);
    }

    /* The rows that see some key of the block: [rlo, rhi); this
     * thread's keys. */
    long rlo, rhi;
    abw_rows_seeing(j0, nk, seq_q, seq_kv, &rlo, &rhi);
    __global ulong *maps = NULL;
#if DKV_TMA
    maps = adk_maps(scratch, seq_q);
    if (tid == 0) {
        wg_bar_init(full, 1);
        wg_bar_init(full + 1, 1);
        if (rlo < rhi) {
            atm_map(maps, q, seq_q, HEADS);
            atm_map(maps + 16, do_, seq_q, HEADS);
        }
    }
    wg_fence_proxy(); /* the mbarriers' init */
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    const long ja = j0 + warp * 16 + g, jb = ja + 8;

    float dka[AWB_OT][4], dva[AWB_OT][4];
#pragma unroll
    for (int d = 0; d < AWB_OT; d++) {
        dka[d][0] = dka[d][1] = dka[d][2] = dka[d][3] = 0.0f;
        dva[d][0] = dva[d][1] = dva[d][2] = dva[d][3] = 0.0f;
    }
    if (rlo < rhi) {
        float l = 0.0f, d = 0.0f;
        adk_load_rows(rows_at, rows_at + AW_KV_ROOM, q, do_, lse, scratch,
                      maps, full, seq_q, b, hk, rlo, rhi, tid, &l, &d);
        if (tid < WG_KEYS) {
            stats[0][0][tid] = l;
            stats[0][1][tid] = d;
        }
    }
    int buf = 0, step = 0;
    for (long r0 = rlo; r0 < rhi; r0 += WG_KEYS, buf ^= 1, step++) {
        const long r1 = r0 + WG_KEYS;
        __local ushort *qs = rows_at + 2 * buf * AW_KV_ROOM;
        __local ushort *dos = qs + AW_KV_ROOM;
        __local const float *ls = stats[buf][0], *ds = stats[buf][1];
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        wg_fence_proxy();
        /* This step's copies seen; every product of the last step, which
         * read the other buffer's rows, done. */
        barrier(CLK_LOCAL_MEM_FENCE);
        float nl = 0.0f, nd = 0.0f;
        if (r1 < rhi) {
            __local ushort *qn = rows_at + 2 * (buf ^ 1) * AW_KV_ROOM;
            adk_load_rows(qn, qn + AW_KV_ROOM, q, do_, lse, scratch, maps,
                          full + (buf ^ 1), seq_q, b, hk, r1, rhi, tid, &nl,
                          &nd);
        }
#if DKV_TMA
        wg_bar_wait(full + buf, (step / 2) & 1);
#endif
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
        float s[AW_NT][4], dp[AW_NT][4];
        aw_scores(ks, qs, 0, (float *)s);
        aw_scores(vs, dos, 0, (float *)dp);
        aw_wait_all_s((float *)s);
        aw_wait_all_s((float *)dp);
#pragma unroll
        for (int n = 0; n < AW_NT; n++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int c = 8 * n + 2 * (int)t + (e & 1);
                long pos = (r0 + c) / GROUP + off;
                int see = !mask || abw_sees(pos, e < 2 ? ja : jb);
                abm_grad(&s[n][e], &dp[n][e], ls[c], ds[c], see);
            }
        }
        uint p[AW_NT / 2][4], dsp[AW_NT / 2][4];
        aw_pack(s, p);
        aw_pack(dp, dsp);
        aw_accumulate(dos + blk0, p, (float *)dva);
        aw_accumulate(qs + blk0, dsp, (float *)dka);
        aw_wait_o((float *)dva, p);
        aw_wait_o((float *)dka, dsp);
        if (r1 < rhi && tid < WG_KEYS) {
            stats[buf ^ 1][0][tid] = nl;
            stats[buf ^ 1][1][tid] = nd;
        }
    }
    /* K's and V's copies when no row sees the block */
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const long j = ja + 8 * h;
        if (j < seq_kv) {
            const size_t at =
                ((size_t)(b * seq_kv + j) * KV_HEADS + hk) * HEAD_DIM + col0;
            awb_store_half(dk, at, dka, h, t, ATTN_SCALE);
            awb_store_half(dv, at, dva, h, t, 1.0f);
        }
    }
}
