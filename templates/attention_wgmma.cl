/* attention_wgmma.cl - the prefill path on the warpgroup tensor cores of
 * compute capability 9.0 (wgmma; f16, bf16; head dims 64 and 128): a
 * work-group per block of MMA_Q query rows of one (batch, kv head), a
 * warpgroup per 64 of them, over every key tile its rows see.
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
#include "wgmma_ptx.cl"

#if !defined(WG_KEYS) || MMA_Q % 64 != 0 ||                               \
    (WG_KEYS != 64 && WG_KEYS != 128) || (HEAD_DIM != 64 && HEAD_DIM != 128)
#error "attention_wgmma.cl: MMA_Q a multiple of 64; WG_KEYS, HEAD_DIM 64 or 128"
#endif

#define AW_NT (WG_KEYS / 8)              /* n8 tiles of a key tile */

#define AW_ITEMS (2 * MMA_Q)            /* a warpgroup per 64 rows */
#define AW_CHUNKS (HEAD_DIM / 8)        /* 16-byte chunks a row */
#define AW_Q_ROOM (MMA_Q * HEAD_DIM)    /* halves */
#define AW_KV_ROOM (WG_KEYS * HEAD_DIM)
#define AW_ROOM (AW_Q_ROOM + 4 * AW_KV_ROOM) /* Q, K, K, V, V */
#define AW_CEIL(a, b) (((a) + (b) - 1) / (b))

/* The scores' accumulators (S: WG_KEYS columns) and the outputs' (O:
 * HEAD_DIM), as operands of the instructions that read or write them. */
#if WG_KEYS == 64
#define AW_S_D WG_D32
#define AW_S_R WG_R32
#define AW_S_SHAPE "m64n64k16"
#define AW_S_IN "%32, %33, p, 1, 1, 0, 0"
#define AW_S_FLAG "%34"
#else
#define AW_S_D WG_D64
#define AW_S_R WG_R64
#define AW_S_SHAPE "m64n128k16"
#define AW_S_IN "%64, %65, p, 1, 1, 0, 0"
#define AW_S_FLAG "%66"
#endif
#if HEAD_DIM == 64
#define AW_O_D WG_D32
#define AW_O_R WG_R32
#define AW_O_SHAPE "m64n64k16"
#define AW_O_IN "{%32, %33, %34, %35}, %36, p, 1, 1, 1"
#else
#define AW_O_D WG_D64
#define AW_O_R WG_R64
#define AW_O_SHAPE "m64n128k16"
#define AW_O_IN "{%64, %65, %66, %67}, %68, p, 1, 1, 1"
#endif

/* P's registers (WG_KEYS / 16 A fragments of 4), as operands of the wait
 * for the products that read them: wgmma reads them after it issues. */
#define AW_P16 "+r"(p[0][0]), "+r"(p[0][1]), "+r"(p[0][2]), "+r"(p[0][3]), \
    "+r"(p[1][0]), "+r"(p[1][1]), "+r"(p[1][2]), "+r"(p[1][3]), \
    "+r"(p[2][0]), "+r"(p[2][1]), "+r"(p[2][2]), "+r"(p[2][3]), \
    "+r"(p[3][0]), "+r"(p[3][1]), "+r"(p[3][2]), "+r"(p[3][3])
#if WG_KEYS == 64
#define AW_P AW_P16
#else
#define AW_P AW_P16, \
    "+r"(p[4][0]), "+r"(p[4][1]), "+r"(p[4][2]), "+r"(p[4][3]), \
    "+r"(p[5][0]), "+r"(p[5][1]), "+r"(p[5][2]), "+r"(p[5][3]), \
    "+r"(p[6][0]), "+r"(p[6][1]), "+r"(p[6][2]), "+r"(p[6][3]), \
    "+r"(p[7][0]), "+r"(p[7][1]), "+r"(p[7][2]), "+r"(p[7][3])
#endif

/* S (+)= A B^T over 16 of the head: A 64 query rows, B WG_KEYS keys, both
 * K-major in local memory (descriptors DA, DB); FIRST: S = the product. */
inline void aw_mma_s(float d[4 * AW_NT], ulong da, ulong db, uint first)
{
    asm volatile(WG_MARK "{ .reg .pred p; setp.eq.u32 p, " AW_S_FLAG ", 0; "
                 "wgmma.mma_async.sync.aligned." AW_S_SHAPE "." WG_TYPES " "
                 "{" AW_S_R "}, " AW_S_IN "; }"
                 : AW_S_D
                 : "l"(da), "l"(db), "r"(first)
                 : "memory");
}

/* O += P V over 16 keys: P's A fragment A0..A3 in registers, V N-major
 * in local memory (descriptor DB). */
inline void aw_mma_o(float d[4 * MMA_DT], uint a0, uint a1, uint a2, uint a3,
                     ulong db)
{
    asm volatile(WG_MARK "{ .reg .pred p; setp.ne.b32 p, 1, 0; "
                 "wgmma.mma_async.sync.aligned." AW_O_SHAPE "." WG_TYPES " "
                 "{" AW_O_R "}, " AW_O_IN "; }"
                 : AW_O_D
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db)
                 : "memory");
}

/* Before products: the accumulators' (and P's) last writes in place. */
inline void aw_fence_s(float d[4 * AW_NT])
{
    asm volatile(WG_MARK "wgmma.fence.sync.aligned;" : AW_S_D : : "memory");
}
inline void aw_fence_o(float d[4 * MMA_DT])
{
    asm volatile(WG_MARK "wgmma.fence.sync.aligned;" : AW_O_D : : "memory");
}

/* Waits for the scores' products, the older of two groups in flight. */
inline void aw_wait_s(float d[4 * AW_NT])
{
    asm volatile(WG_MARK "wgmma.wait_group.sync.aligned 1;" : AW_S_D : :
                 "memory");
}
/* Waits for every product in flight; with those of O += P V, P's
 * registers free again. */
inline void aw_wait_all_s(float d[4 * AW_NT])
{
    asm volatile(WG_MARK "wgmma.wait_group.sync.aligned 0;" : AW_S_D : :
                 "memory");
}
inline void aw_wait_o(float d[4 * MMA_DT], uint p[AW_NT / 2][4])
{
    asm volatile(WG_MARK "wgmma.wait_group.sync.aligned 0;" : AW_O_D, AW_P
                 : : "memory");
}

/* Where chunk C of row R of a tile of ROWS rows goes. */
inline __local ushort *aw_at(__local ushort *tile, uint rows, uint r, uint c)
{
    return tile + (c / 8) * rows * 64 + r * 64 + ((c % 8) ^ (r % 8)) * 8;
}

/* 16 bytes from SRC to DST past L1, the first SRC_BYTES of them read (16
 * or 0), the rest zero: K and V tiles are read once per work-group. */
inline void aw_copy16(__local ushort *dst, const __global storage_t *src,
                      uint src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"l"(dst),
                 "l"(src), "r"(src_bytes)
                 : "memory");
}

/* Starts the copies of the WG_KEYS keys (or values) from J0 of batch B's kv
 * head HK into DST, zeros past NK of them: one commit group. */
inline void aw_load_kv(__local ushort *dst, const __global storage_t *src,
                       long b, int hk, long j0, int nk, int seq_kv, uint tid)
{
    const __global storage_t *at =
        src + ((size_t)(b * seq_kv + j0) * KV_HEADS + hk) * HEAD_DIM;
#pragma unroll
    for (uint n = 0; n < AW_CEIL(WG_KEYS * AW_CHUNKS, AW_ITEMS); n++) {
        uint i = tid + n * AW_ITEMS, jj = i / AW_CHUNKS, c = i % AW_CHUNKS;
        if (WG_KEYS * AW_CHUNKS % AW_ITEMS != 0 && jj >= WG_KEYS) {
            break;
        }
        uint ok = jj < (uint)nk;
        aw_copy16(aw_at(dst, WG_KEYS, jj, c),
                  ok ? at + (size_t)jj * KV_HEADS * HEAD_DIM + c * 8 : src,
                  ok ? 16 : 0);
    }
    mma_commit();
}

/* Starts the copies of the block's MMA_Q query rows from R0 (rows as
 * attention_common.cl orders them) into DST, zeros past the rows: one
 * commit group. */
inline void aw_load_q(__local ushort *dst, const __global storage_t *q,
                      int seq_q, long b, int hk, long r0, uint tid)
{
    const long all = (long)GROUP * seq_q;
#pragma unroll
    for (uint n = 0; n < AW_CHUNKS / 2; n++) {
        uint i = tid + n * AW_ITEMS, rr = i / AW_CHUNKS, c = i % AW_CHUNKS;
        long r = r0 + rr;
        uint ok = r < all;
        size_t at = ((size_t)(b * seq_q + r / GROUP) * HEADS + hk * GROUP +
                     (int)(r % GROUP)) * HEAD_DIM + c * 8;
        aw_copy16(aw_at(dst, MMA_Q, rr, c), ok ? q + at : q, ok ? 16 : 0);
    }
    mma_commit();
}

/* Starts S = Q K^T for warpgroup G's 64 rows of QS and the tile KS: one
 * group of products. */
inline void aw_scores(__local ushort *qs, __local ushort *ks, uint g,
                      float s[4 * AW_NT])
{
    aw_fence_s(s);
#pragma unroll
    for (uint kk = 0; kk < HEAD_DIM / 16; kk++) {
        uint blk = kk / 4, in = (kk % 4) * 16;
        ulong da = wg_desc(qs + blk * MMA_Q * 64 + g * 64 * 64 + in, 16,
                           1024, 1);
        ulong db = wg_desc(ks + blk * WG_KEYS * 64 + in, 16, 1024, 1);
        aw_mma_s(s, da, db, kk == 0);
    }
    wg_commit();
}

/* P: the probabilities am_probabilities left in S, rounded to the
 * storage type, the fragments of two n8 tiles of keys the A fragment of
 * their k16 step. */
inline void aw_pack(float s[AW_NT][4], uint p[AW_NT / 2][4])
{
#pragma unroll
    for (int kk = 0; kk < AW_NT / 2; kk++) {
        p[kk][0] = am_pack(s[2 * kk][0], s[2 * kk][1]);
        p[kk][1] = am_pack(s[2 * kk][2], s[2 * kk][3]);
        p[kk][2] = am_pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        p[kk][3] = am_pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
}

/* Starts O += P V for the tile VS: one group of products. */
inline void aw_accumulate(__local ushort *vs, uint p[AW_NT / 2][4],
                          float o[4 * MMA_DT])
{
    aw_fence_o(o);
#pragma unroll
    for (int kk = 0; kk < AW_NT / 2; kk++) {
        ulong db = wg_desc(vs + kk * 16 * 64, WG_KEYS * 64 * 2, 1024, 1);
        aw_mma_o(o, p[kk][0], p[kk][1], p[kk][2], p[kk][3], db);
    }
    wg_commit();
}

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

/* The scores S of the tile at key J0 masked and scaled (am_scale_mask)
 * and turned into probabilities (am_probabilities). */
inline void aw_tile_probabilities(float s[AW_NT][4], const struct am_walk *w,
                                  long j0, uint t, float m[2], float l[2],
                                  float alpha[2])
{
    am_scale_mask(s, AW_NT, w, j0, t);
    am_probabilities(s, AW_NT, m, l, alpha);
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
        aw_tile_probabilities(s, &w, lo, t, m, l, alpha);
        aw_pack(s, p);
        for (int i = 1; i < tiles; i++) {
            const long j0 = lo + (long)i * WG_KEYS;
            aw_step_start(k, v, b, hk, lo, hi, seq_kv, i, tiles, kbuf, vbuf,
                          tid);
            aw_scores(qs, kbuf + (i % 2) * AW_KV_ROOM, warp / 4, (float *)s);
            aw_accumulate(vbuf + ((i - 1) % 2) * AW_KV_ROOM, p, (float *)acc);
            aw_wait_s((float *)s);
            aw_tile_probabilities(s, &w, j0, t, m, l, alpha);
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
