/* attention_backward_mma_common.cl - what the attention_backward kernels
 * on tensor cores (f16, bf16) share: the tiles of attention_mma_tiles.cl
 * over score tiles of MMA_T columns (keys in dq's, query rows in dk's
 * and dv's), and a score turned into its probability and its dS.
 *
 * Each warp's products leave a thread two rows of a score tile (rows g
 * and g + 8 of the warp's 16, g = lane / 4) at columns 8n + 2t, + 1 of
 * each n8 tile n (t = lane % 4). P and dS are rounded to the storage
 * type on their way into the next products, as FlashAttention-2 does.
 *
 * Needs, past attention_backward_common.cl's, the #defines MMA_BQ (dq's
 * query rows a work-group), MMA_BK (dk's and dv's keys a work-group) and
 * MMA_T (the score tile's columns), multiples of 16. */
#include "attention_backward_common.cl"

#if !defined(MMA_BQ) || !defined(MMA_BK) || !defined(MMA_T) ||            \
    MMA_BQ % 16 != 0 || MMA_BK % 16 != 0 || MMA_T % 16 != 0
#error "attention_backward_mma_common.cl: MMA_BQ, MMA_BK, MMA_T multiples of 16"
#endif

#define MMA_NT (MMA_T / 8)                     /* n8 tiles of a score tile */
#include "attention_mma_tiles.cl"

/* S = A B^T as am_scores (attention_mma_tiles.cl), A's fragments read
 * from rows [16 W, 16 W + 16) of the tile AS a k16 step at a time: four
 * registers, not the whole head's (dk's and dv's accumulators hold
 * the rest). */
inline void abm_scores_local(__local ushort *as, uint w, __local ushort *bs,
                             uint lane, float s[MMA_NT][4])
{
    const uint bn = (lane % 8) + (lane >> 4) * 8, bc = (lane >> 3) & 1;
    __local ushort *ap = as + (w * 16 + (lane % 8) + ((lane >> 3) & 1) * 8) *
                                  MMA_LD + (lane >> 4) * 8;
#pragma unroll
    for (int n = 0; n < MMA_NT; n++) {
        s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
    }
#pragma unroll
    for (int kk = 0; kk < MMA_KT; kk++) {
        uint a[4];
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                     "{%0,%1,%2,%3}, [%4];"
                     : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                     : "l"(ap + kk * 16));
#pragma unroll
        for (int j = 0; j < MMA_NT / 2; j++) {
            uint b0, b1, b2, b3;
            mma_x4(bs + (j * 16 + bn) * MMA_LD + kk * 16 + bc * 8, &b0, &b1,
                   &b2, &b3);
            mma_product(s[2 * j], a, b0, b1);
            mma_product(s[2 * j + 1], a, b2, b3);
        }
    }
}

/* lse in base 2, +INFINITY for a query that sees no key (lse -inf) or a
 * row past the rows: its probabilities exp2(s - lse) are all 0. */
inline float abm_lse2(const __global float *lse, long b, int hk, long r,
                      long rows, int seq_q)
{
    float l = r < rows ? abw_lse(lse, b, hk, r, seq_q) : -INFINITY;
    return isinf(l) ? INFINITY : l * ABW_LOG2E;
}

/* Stores SCALE times this work-item's half H (row g or g + 8 of its
 * warp's 16) of the accumulators ACC, columns 8 d + 2 t and the next,
 * into the row of OUT at AT. */
inline void abm_store_half(__global storage_t *out, size_t at,
                           float acc[MMA_DT][4], int h, uint t, float scale)
{
#pragma unroll
    for (int d = 0; d < MMA_DT; d++) {
        const int col = 8 * d + 2 * (int)t;
        if (col < HEAD_DIM) {
            store1(out, at + col, scale * acc[d][2 * h]);
            store1(out, at + col + 1, scale * acc[d][2 * h + 1]);
        }
    }
}

/* dk (times ATTN_SCALE) and dv of keys JA and JA + 8 of batch B's kv
 * head HK from this work-item's accumulators. */
inline void abm_store_dkv(__global storage_t *dk, __global storage_t *dv,
                          float dka[MMA_DT][4], float dva[MMA_DT][4],
                          long b, int hk, long ja, int seq_kv, uint t)
{
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const long j = ja + 8 * h;
        if (j < seq_kv) {
            const size_t at =
                ((size_t)(b * seq_kv + j) * KV_HEADS + hk) * HEAD_DIM;
            abm_store_half(dk, at, dka, h, t, ATTN_SCALE);
            abm_store_half(dv, at, dva, h, t, 1.0f);
        }
    }
}

/* dq (times ATTN_SCALE) of rows RA and RA + 8 of batch B's kv head HK
 * (up to ROWS) from this work-item's accumulators. */
inline void abm_store_dq(__global storage_t *dq, float acc[MMA_DT][4],
                         long b, int hk, long ra, long rows, int seq_q,
                         uint t)
{
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const long r = ra + 8 * h;
        if (r < rows) {
            abm_store_half(dq, abw_row_at(b, hk, r, seq_q), acc, h, t,
                           ATTN_SCALE);
        }
    }
}

/* A raw score S (q.k) at LSE2 (base 2) into its probability P, and
 * DP (dO.v) into dS = P (dP - D), times the softcap's derivative where
 * capped; SEE 0 where the mask hides the pair (P = dS = 0). */
inline void abm_grad(float *s, float *dp, float lse2, float d, int see)
{
#if ATTN_CAPPED
    float der;
    const float th = attn_tanh(ATTN_SCALE * *s * (1.0f / ATTN_SOFTCAP), &der);
    const float y = ATTN_SOFTCAP * ABW_LOG2E * th;
#else
    /* the scale and log2(e) in one factor: one multiply-add to the
     * exponent */
    const float y = *s * (ATTN_SCALE * ABW_LOG2E), der = 1.0f;
#endif
    float p = see ? am_exp2(y - lse2) : 0.0f;
    *s = p;
    *dp = p * (*dp - d) * der;
}
