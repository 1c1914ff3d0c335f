/* attention_wgmma_tiles.cl - the warpgroup tensor-core pieces the
 * attention kernels on wgmma share (attention_wgmma.cl's prefill, the
 * backward's attention_backward_dq_wgmma.cl): the tiles' copies into
 * local memory, rows of HEAD_DIM elements cut into blocks of 64 (128
 * bytes a row; a head of 80 or 96 leaves the second block's rows part
 * empty), whose 16-byte chunks are XOR-swizzled by the row as wgmma's
 * 128-byte swizzle reads them; scores S = A B^T with A and B both
 * K-major in local memory; and O += P V with P's A fragments in
 * registers and V N-major in local memory.
 *
 * Needs attention_mma_tiles.cl's definitions, and the #defines MMA_Q
 * (rows a work-group, a warpgroup per 64) and WG_KEYS (keys a tile). */
#include "wgmma_ptx.cl"
#if !defined(WG_KEYS) || MMA_Q % 64 != 0 ||                               \
    (WG_KEYS != 64 && WG_KEYS != 128) ||                                  \
    (HEAD_DIM != 64 && HEAD_DIM != 80 && HEAD_DIM != 96 &&                \
     HEAD_DIM != 128 && HEAD_DIM != 256)
#error "attention_wgmma_tiles.cl: MMA_Q, WG_KEYS or HEAD_DIM out of range"
#endif

#define AW_NT (WG_KEYS / 8)              /* n8 tiles of a key tile */

#define AW_ITEMS (2 * MMA_Q)            /* a warpgroup per 64 rows */
#define AW_CHUNKS (HEAD_DIM / 8)        /* 16-byte chunks a row */
#define AW_LINE ((HEAD_DIM + 63) / 64 * 64) /* a row's room: whole blocks */
#define AW_Q_ROOM (MMA_Q * AW_LINE)     /* halves */
#define AW_KV_ROOM (WG_KEYS * AW_LINE)
#define AW_CEIL(a, b) (((a) + (b) - 1) / (b))

/* The scores' accumulators (S: WG_KEYS columns) and the outputs' (O:
 * HEAD_DIM), as operands of the instructions that read or write them. */
#if WG_KEYS == 64
#define AW_S_D WG_D32
#define AW_S_R WG_R32
#define AW_S_SHAPE "m64n64k16"
#define AW_S_IN "%32, %33, p, 1, 1, 0, 0"
#define AW_S_FLAG "%34"
#define AW_S_RS_IN "{%32, %33, %34, %35}, %36, p, 1, 1, 0"
#define AW_S_RS_FLAG "%37"
#else
#define AW_S_D WG_D64
#define AW_S_R WG_R64
#define AW_S_SHAPE "m64n128k16"
#define AW_S_IN "%64, %65, p, 1, 1, 0, 0"
#define AW_S_FLAG "%66"
#define AW_S_RS_IN "{%64, %65, %66, %67}, %68, p, 1, 1, 0"
#define AW_S_RS_FLAG "%69"
#endif
/* The columns of a warpgroup's O += P V product: the head's, or where
 * warpgroups share a head's outputs (the plan's AW_O_COLS) a part. */
#ifndef AW_O_COLS
#define AW_O_COLS HEAD_DIM
#endif
#if AW_O_COLS == 64
#define AW_O_D WG_D32
#define AW_O_R WG_R32
#define AW_O_SHAPE "m64n64k16"
#define AW_O_IN "{%32, %33, %34, %35}, %36, p, 1, 1, 1"
#elif AW_O_COLS == 80
#define AW_O_D WG_D40
#define AW_O_R WG_R40
#define AW_O_SHAPE "m64n80k16"
#define AW_O_IN "{%40, %41, %42, %43}, %44, p, 1, 1, 1"
#elif AW_O_COLS == 96
#define AW_O_D WG_D48
#define AW_O_R WG_R48
#define AW_O_SHAPE "m64n96k16"
#define AW_O_IN "{%48, %49, %50, %51}, %52, p, 1, 1, 1"
#elif AW_O_COLS == 128
#define AW_O_D WG_D64
#define AW_O_R WG_R64
#define AW_O_SHAPE "m64n128k16"
#define AW_O_IN "{%64, %65, %66, %67}, %68, p, 1, 1, 1"
#elif AW_O_COLS == 256
#define AW_O_D WG_D128
#define AW_O_R WG_R128
#define AW_O_SHAPE "m64n256k16"
#define AW_O_IN "{%128, %129, %130, %131}, %132, p, 1, 1, 1"
#else
#error "attention_wgmma_tiles.cl: AW_O_COLS not a product's width"
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

/* S (+)= A B^T over 16 of the head: A's fragment A0..A3 in registers,
 * B K-major in local memory (descriptor DB); FIRST: S = the product. */
inline void aw_mma_s_rs(float d[4 * AW_NT], uint a0, uint a1, uint a2,
                        uint a3, ulong db, uint first)
{
    asm volatile(WG_MARK "{ .reg .pred p; setp.eq.u32 p, " AW_S_RS_FLAG
                 ", 0; wgmma.mma_async.sync.aligned." AW_S_SHAPE "."
                 WG_TYPES " {" AW_S_R "}, " AW_S_RS_IN "; }"
                 : AW_S_D
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(first)
                 : "memory");
}

/* O += P V over 16 keys: P's A fragment A0..A3 in registers, V N-major
 * in local memory (descriptor DB). */
inline void aw_mma_o(float d[AW_O_COLS / 2], uint a0, uint a1, uint a2,
                     uint a3, ulong db)
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
inline void aw_fence_o(float d[AW_O_COLS / 2])
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
inline void aw_wait_o(float d[AW_O_COLS / 2], uint p[AW_NT / 2][4])
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

/* Starts S = A K^T for the tile KS, with A (64 rows of the head) held as
 * wgmma A fragments: one group of products. */
inline void aw_scores_held(uint a[HEAD_DIM / 16][4],
                           __local ushort *ks, float s[4 * AW_NT])
{
    aw_fence_s(s);
#pragma unroll
    for (uint kk = 0; kk < HEAD_DIM / 16; kk++) {
        uint blk = kk / 4, in = (kk % 4) * 16;
        ulong db = wg_desc(ks + blk * WG_KEYS * 64 + in, 16, 1024, 1);
        aw_mma_s_rs(s, a[kk][0], a[kk][1], a[kk][2], a[kk][3], db, kk == 0);
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

/* Starts O += P V for the tile VS (from its column block at VS): one
 * group of products. */
inline void aw_accumulate(__local ushort *vs, uint p[AW_NT / 2][4],
                          float o[AW_O_COLS / 2])
{
    aw_fence_o(o);
#pragma unroll
    for (int kk = 0; kk < AW_NT / 2; kk++) {
        ulong db = wg_desc(vs + kk * 16 * 64, WG_KEYS * 64 * 2, 1024, 1);
        aw_mma_o(o, p[kk][0], p[kk][1], p[kk][2], p[kk][3], db);
    }
    wg_commit();
}

