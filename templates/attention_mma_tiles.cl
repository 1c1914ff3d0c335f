/* attention_mma_tiles.cl - the tensor-core pieces the attention kernels
 * share (forward: attention_mma_common.cl; backward: attention_backward_
 * mma_common.cl): rows of a head copied into local memory, a warp's A
 * fragments of 16 of them, and the two products of a tile on m16n8k16:
 * scores S = A B^T (B's rows the tile's columns) and O += P V (P from the
 * registers the scores were left in).
 *
 * A head's row lies in local memory as MMA_LD elements: padded to whole
 * k16 steps, then 16 bytes more, so that the 8 rows an ldmatrix phase
 * reads fall in 8 distinct bank groups.
 *
 * Needs the #defines HEADS, KV_HEADS, HEAD_DIM, GROUP (query heads per kv
 * head) and MMA_NT (n8 tiles of a score tile: its columns / 8, even). */
#include "mma_ptx.cl"

#if !defined(MMA_NT) || MMA_NT % 2 != 0 || HEAD_DIM % 8 != 0
#error "attention_mma_tiles.cl: MMA_NT even, HEAD_DIM a multiple of 8"
#endif

#define MMA_DP ((HEAD_DIM + 15) / 16 * 16)     /* head padded to k16 steps */
#define MMA_LD (MMA_DP + 8)                    /* elements a row, local */
#define MMA_CHUNKS (HEAD_DIM / 8)              /* 16-byte chunks a row */
#define MMA_KT (MMA_DP / 16)                   /* k16 steps over the head */
#define MMA_DT (MMA_DP / 8)                    /* n8 tiles of the head */

#ifdef DTYPE_F16
#define MMA_CVT2 "cvt.rn.f16x2.f32 %0, %1, %2;"
#else
#define MMA_CVT2 "cvt.rn.bf16x2.f32 %0, %1, %2;"
#endif

/* The block of BQ rows (of the GROUP * seq_q rows of a (batch, kv head))
 * this work-group takes: in launch order the blocks last row first,
 * across every (batch, kv head), so that under a causal mask the blocks
 * that see the most keys start first and the short ones fill the tail.
 * Its batch B, kv head HK and first row R0; 0 for a group past the
 * blocks. */
inline int am_block_at(int seq_q, uint bq, long *b, int *hk, long *r0)
{
    const long blocks = ((long)GROUP * seq_q + bq - 1) / bq;
    const long heads = get_num_groups(1);
    const long order = get_group_id(1) * get_num_groups(0) + get_group_id(0);
    if (order >= blocks * heads) {
        return 0;
    }
    *b = (order % heads) / KV_HEADS;
    *hk = (int)(order % KV_HEADS);
    *r0 = (blocks - 1 - order / heads) * bq;
    return 1;
}

/* 2^Y by one ex2 of the special-function unit, a result under 2^-126
 * flushed to 0 (a probability that small adds nothing). */
inline float am_exp2(float y)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
    return r;
}

/* LO and HI rounded to the storage type, LO in the low half. */
inline uint am_pack(float lo, float hi)
{
    uint r;
    asm("" MMA_CVT2 : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

/* Starts the copies of the ROWS rows of keys (or values) from J0 of batch
 * B's kv head HK into DST; zeros past NK rows and past the head. ITEMS
 * work-items copy, of which this is TID. */
inline void am_load_kv(__local ushort *dst, const __global storage_t *src,
                       long b, int hk, long j0, int nk, int seq_kv,
                       uint tid, const uint items, const uint rows)
{
    const __global storage_t *at =
        src + ((size_t)(b * seq_kv + j0) * KV_HEADS + hk) * HEAD_DIM;
    for (uint i = tid; i < rows * (MMA_DP / 8); i += items) {
        uint jj = i / (MMA_DP / 8), c = i % (MMA_DP / 8);
        uint ok = jj < (uint)nk && c < MMA_CHUNKS;
        mma_copy16(dst + jj * MMA_LD + c * 8,
                   ok ? at + (size_t)jj * KV_HEADS * HEAD_DIM + c * 8 : src,
                   ok ? 16 : 0);
    }
    mma_commit();
}

/* Starts the copies of ROWS query rows from R0 of batch B's kv head HK
 * (rows ordered as attention_common.cl orders them) of SRC (q, or a
 * buffer laid out as q) into DST; zeros past the rows and the head. */
inline void am_load_q(__local ushort *dst, const __global storage_t *src,
                      int seq_q, long b, int hk, long r0, uint tid,
                      const uint items, const uint rows)
{
    const long all = (long)GROUP * seq_q;
    for (uint i = tid; i < rows * (MMA_DP / 8); i += items) {
        uint rr = i / (MMA_DP / 8), c = i % (MMA_DP / 8);
        long r = r0 + rr;
        uint ok = r < all && c < MMA_CHUNKS;
        size_t at = ((size_t)(b * seq_q + r / GROUP) * HEADS + hk * GROUP +
                     (int)(r % GROUP)) * HEAD_DIM + c * 8;
        mma_copy16(dst + rr * MMA_LD + c * 8, ok ? src + at : src,
                   ok ? 16 : 0);
    }
    mma_commit();
}

/* The A fragments of rows [16 W, 16 W + 16) of TILE (row-major): lane l
 * gives row (l % 8) + ((l / 8) % 2) * 8, chunk l / 16 of each k16 step. */
inline void am_afrags(__local ushort *tile, uint lane, uint w,
                      uint a[MMA_KT][4])
{
    uint row = w * 16 + (lane % 8) + ((lane >> 3) & 1) * 8;
    __local ushort *p = tile + row * MMA_LD + (lane >> 4) * 8;
#pragma unroll
    for (int kk = 0; kk < MMA_KT; kk++) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                     "{%0,%1,%2,%3}, [%4];"
                     : "=r"(a[kk][0]), "=r"(a[kk][1]), "=r"(a[kk][2]),
                       "=r"(a[kk][3])
                     : "l"(p + kk * 16));
    }
}

/* S = A B^T for a warp's 16 rows (A's fragments) and the MMA_NT * 8 rows
 * of the tile BS, which are the product's columns. */
inline void am_scores(__local ushort *bs, const uint a[MMA_KT][4],
                      uint lane, float s[MMA_NT][4])
{
    /* B n-major (mma_x4): lane l gives row (l % 8) + (l / 16) * 8 of a
     * pair of n8 tiles, chunk (l / 8) % 2 of the 16-deep step. */
    const uint bn = (lane % 8) + (lane >> 4) * 8, bc = (lane >> 3) & 1;
#pragma unroll
    for (int n = 0; n < MMA_NT; n++) {
        s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
    }
#pragma unroll
    for (int kk = 0; kk < MMA_KT; kk++) {
#pragma unroll
        for (int j = 0; j < MMA_NT / 2; j++) {
            uint b0, b1, b2, b3;
            mma_x4(bs + (j * 16 + bn) * MMA_LD + kk * 16 + bc * 8, &b0, &b1,
                   &b2, &b3);
            mma_product(s[2 * j], a[kk], b0, b1);
            mma_product(s[2 * j + 1], a[kk], b2, b3);
        }
    }
}

/* O += P V: P the C fragments of a score tile (its MMA_NT * 8 columns the
 * reduction), rounded to the storage type, the fragments of two n8 tiles
 * the A fragment of their k16 step; V the tile VS, a row per column of P
 * (k-major). */
inline void am_accumulate(__local ushort *vs, const float p[MMA_NT][4],
                          uint lane, float o[MMA_DT][4])
{
    /* ldmatrix .trans: lane l gives row (l % 8) + ((l / 8) % 2) * 8 of
     * the step, chunk l / 16 of a pair of n8 tiles of the head. */
    const uint row = (lane % 8) + ((lane >> 3) & 1) * 8, chunk = lane >> 4;
#pragma unroll
    for (int kk = 0; kk < MMA_NT / 2; kk++) {
        uint a[4];
        a[0] = am_pack(p[2 * kk][0], p[2 * kk][1]);
        a[1] = am_pack(p[2 * kk][2], p[2 * kk][3]);
        a[2] = am_pack(p[2 * kk + 1][0], p[2 * kk + 1][1]);
        a[3] = am_pack(p[2 * kk + 1][2], p[2 * kk + 1][3]);
#pragma unroll
        for (int j = 0; j < MMA_DT / 2; j++) {
            uint b0, b1, b2, b3;
            mma_trans_x4(vs + (kk * 16 + row) * MMA_LD + j * 16 + chunk * 8,
                         &b0, &b1, &b2, &b3);
            mma_product(o[2 * j], a, b0, b1);
            mma_product(o[2 * j + 1], a, b2, b3);
        }
    }
}
