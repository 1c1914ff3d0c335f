/* attention_wgmma.cl - the prefill path on the warpgroup tensor cores of
 * compute capability 9.0 (wgmma; f16, bf16; head dims 64, 80, 96, 128
 * and 256): a work-group per block of MMA_Q query rows of one (batch, kv
 * head), a warpgroup per 64 of them, over every key tile its rows see.
 *
 * Per tile of WG_KEYS keys, as attention_mma_common.cl does it on
 * m16n8k16 products: S = Q K^T as m64n(WG_KEYS)k16 products with Q and K
 * both read by wgmma from local memory, the online softmax on S where
 * the products leave it (the accumulators of a warp lie as mma.sync's do, so that
 * am_scale_mask and am_probabilities serve both), then O += P V as
 * m64n(HEAD_DIM)k16 products with P rounded to the storage type in
 * registers (wgmma's A operand) and V read from local memory. The
 * products of a tile's scores and of the tile before's O += P V are in
 * flight together, so that the softmax of one runs beside the other.
 *
 * Local memory: the block's Q rows, then two K tiles and two V tiles.
 * Each is rows of HEAD_DIM elements cut into blocks of 64 (128 bytes a
 * row), whose 16-byte chunks are XOR-swizzled by the row as wgmma's
 * 128-byte swizzle reads them: Q and K as K-major operands (the head the
 * reduction), V as an N-major one (the head the product's columns). The
 * copies (cp.async, every work-item) of the next K tile and of this
 * tile's V run behind the products; one work-group barrier a tile.
 *
 * Its wgmma instructions reach the device through the stub's sm_90a
 * rebuild (wgmma_ptx.cl); the plan gives this kernel only to the variant
 * for compute capability 9.0.
 *
 * Launch: local (2 * MMA_Q, 1); groups as attention_mma.cl's. */
#include "attention_mma_common.cl"
#include "attention_wgmma_tiles.cl"

#define AW_ROOM (AW_Q_ROOM + 4 * AW_KV_ROOM) /* Q, K, K, V, V */

/* The start of step I of TILES (attention's key tiles from LO): K of
 * tile I and V of tile I - 1 landed and fenced for wgmma in every
 * work-item, and so the buffers of K I - 1 and V I - 2 free, this step
 * starts the copies of K I + 1 and V I into them. */
inline void aw_step_start(const __global storage_t *k,
                          const __global storage_t *v, long b, int hk,
                          long lo, long hi, int seq_kv, int i, int tiles,
                          __local ushort *kbuf, __local ushort *vbuf, uint tid)
{
    const long j0 = lo + (long)i * WG_KEYS, j1 = j0 + WG_KEYS;
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    wg_fence_proxy();
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i + 1 < tiles) {
        aw_load_kv(kbuf + ((i + 1) % 2) * AW_KV_ROOM, k, b, hk, j1,
                   (int)min((long)WG_KEYS, hi - j1), seq_kv, tid);
    }
    if (i < tiles) {
        aw_load_kv(vbuf + (i % 2) * AW_KV_ROOM, v, b, hk, j0,
                   (int)min((long)WG_KEYS, hi - j0), seq_kv, tid);
    }
}

/* Attends the block of MMA_Q rows at row R0 of batch B's kv head HK over
 * every key its rows see; leaves what am_block leaves (M, L, ACC, RA). */
inline void aw_block(const __global storage_t *q,
                     const __global storage_t *k,
                     const __global storage_t *v, int seq_q, int seq_kv,
                     long b, int hk, long r0, __local ushort *room,
                     float m[2], float l[2], float acc[MMA_DT][4],
                     long *ra_out)
{
    __local ushort *qs = room;
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const uint g = lane / 4, t = lane % 4;

    aw_load_q(qs, q, seq_q, b, hk, r0, tid);
    const long ra = r0 + warp * 16 + g;
    const struct am_walk w = am_walk_start(seq_q, seq_kv, r0, MMA_Q, 0,
                                           seq_kv, ra, m, l, acc);
    const long lo = w.lo, hi = w.hi;
    *ra_out = ra;

    /* Step i: S of tile i beside O += P V of tile i - 1, the first and
     * the last step apart (ptxas keeps products in flight across
     * straight-line code only). K's tiles alternate between two buffers,
     * V's too, V loaded a step after K. */
    __local ushort *kbuf = room + AW_Q_ROOM, *vbuf = kbuf + 2 * AW_KV_ROOM;
    const int tiles = lo < hi ? (int)((hi - lo + WG_KEYS - 1) / WG_KEYS) : 0;
    if (tiles > 0) {
        aw_load_kv(kbuf, k, b, hk, lo, (int)min((long)WG_KEYS, hi - lo),
                   seq_kv, tid);
        uint p[AW_NT / 2][4];
        float s[AW_NT][4], alpha[2];
        aw_step_start(k, v, b, hk, lo, hi, seq_kv, 0, tiles, kbuf, vbuf, tid);
        aw_scores(qs, kbuf, warp / 4, (float *)s);
        aw_wait_all_s((float *)s);
        am_tile_probabilities(s, AW_NT, &w, lo, t, m, l, alpha);
        aw_pack(s, p);
        for (int i = 1; i < tiles; i++) {
            const long j0 = lo + (long)i * WG_KEYS;
            aw_step_start(k, v, b, hk, lo, hi, seq_kv, i, tiles, kbuf, vbuf,
                          tid);
            aw_scores(qs, kbuf + (i % 2) * AW_KV_ROOM, warp / 4, (float *)s);
            aw_accumulate(vbuf + ((i - 1) % 2) * AW_KV_ROOM, p, (float *)acc);
            aw_wait_s((float *)s);
            am_tile_probabilities(s, AW_NT, &w, j0, t, m, l, alpha);
            aw_wait_o((float *)acc, p);
            am_rescale(acc, alpha);
            aw_pack(s, p);
        }
        aw_step_start(k, v, b, hk, lo, hi, seq_kv, tiles, tiles, kbuf, vbuf,
                      tid);
        aw_accumulate(vbuf + ((tiles - 1) % 2) * AW_KV_ROOM, p, (float *)acc);
        aw_wait_o((float *)acc, p);
    }
    /* Q's copies when no key is seen */
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#pragma unroll
    for (int h = 0; h < 2; h++) {
        l[h] = am_quad_sum(l[h]);
    }
}

__kernel __attribute__((reqd_work_group_size(AW_ITEMS, 1, 1)))
void attention_wgmma(const int seq_q, const int seq_kv,
                     const __global storage_t *q, const __global storage_t *k,
                     const __global storage_t *v, __global storage_t *o,
                     __global float *lse)
{
    /* wgmma's swizzle follows address bits: tiles on 1024-byte lines */
    __local ushort room[AW_ROOM] __attribute__((aligned(1024)));
    long b, r0;
    int hk;
    if (!am_block_at(seq_q, MMA_Q, &b, &hk, &r0)) {
        return;
    }
    float m[2], l[2], acc[MMA_DT][4];
    long ra;
    aw_block(q, k, v, seq_q, seq_kv, b, hk, r0, room, m, l, acc, &ra);
    am_store(o, lse, seq_q, b, hk, ra, m, l, acc);
}
