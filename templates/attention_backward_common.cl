/* attention_backward_common.cl - what the attention_backward kernels
 * share: the mask, a score and its probability from lse.
 *
 * Row r of a (batch, kv head) is query r / GROUP of query head
 * kv_head * GROUP + r % GROUP, as attention's forward orders them. A
 * score s = ATTN_SCALE q.k (then ATTN_SOFTCAP tanh(s / ATTN_SOFTCAP)),
 * its probability exp2((s - lse) log2(e)), and dS = P (dP - D) times the
 * softcap's derivative 1 - tanh^2.
 *
 * Needs the #defines HEADS, KV_HEADS, HEAD_DIM, ATTN_CAUSAL, ATTN_WINDOW,
 * ATTN_SCALE, ATTN_SOFTCAP, ATTN_CAPPED, BLOCK_Q, BLOCK_K, TILE_Q, TILE_K,
 * DOT_ITEMS and EXP_POLY (attention_exp2.cl); buffers q and do_
 * [batch][seq_q][HEADS][HEAD_DIM], k and v [batch][seq_kv][KV_HEADS]
 * [HEAD_DIM], lse [batch][HEADS][seq_q] (float), scratch D
 * [batch][seq_q][HEADS] (float). */
#include "storage_@dtype@.cl"
#include "attention_exp2.cl"

#if !defined(HEADS) || !defined(KV_HEADS) || !defined(HEAD_DIM) ||         \
    !defined(ATTN_CAUSAL) || !defined(ATTN_WINDOW) ||                      \
    !defined(ATTN_SCALE) || !defined(ATTN_SOFTCAP) || !defined(ATTN_CAPPED) || !defined(BLOCK_Q) || \
    !defined(BLOCK_K) || !defined(TILE_Q) || !defined(TILE_K) ||           \
    !defined(DOT_ITEMS)
#error "attention_backward_common.cl: the plan's #defines are missing"
#endif

#define GROUP (HEADS / KV_HEADS)
#if GROUP * KV_HEADS != HEADS
#error "attention_backward_common.cl: HEADS must be a multiple of KV_HEADS"
#endif
/* Floats from one staged row to the next: odd, apart in banks. */
#define ABW_STRIDE (HEAD_DIM | 1)
#define ABW_LOG2E 1.44269504088896341f

/* Whether the query at position POS sees key J. */
inline int abw_sees(long pos, long j)
{
    int see = 1;
    (void)pos;
    (void)j;
#if ATTN_CAUSAL
    see = see && j <= pos;
#endif
#if ATTN_WINDOW > 0
    see = see && pos - j < ATTN_WINDOW;
#endif
    return see;
}

/* The keys some row of the NR rows from R0 (rows as attention_common.cl
 * orders them) sees: [*LO, *HI). */
inline void abw_keys_seen(long r0, long nr, int seq_q, int seq_kv, long *lo,
                          long *hi)
{
    const long off = (long)seq_kv - seq_q;
    const long pos_lo = r0 / GROUP + off, pos_hi = (r0 + nr - 1) / GROUP + off;
    (void)pos_lo;
    (void)pos_hi;
    *lo = 0;
    *hi = seq_kv;
#if ATTN_CAUSAL
    *hi = min(*hi, pos_hi + 1);
#endif
#if ATTN_WINDOW > 0
    *lo = max(*lo, pos_lo - ATTN_WINDOW + 1);
#endif
}

/* The query rows that see some key of the block of NK keys from J0
 * (rows as attention_common.cl orders them): [*RLO, *RHI). */
inline void abw_rows_seeing(long j0, int nk, int seq_q, int seq_kv,
                            long *rlo, long *rhi)
{
    const long off = (long)seq_kv - seq_q, jlast = j0 + nk - 1;
    long ilo = 0, ihi = seq_q;
    (void)off;
    (void)jlast;
#if ATTN_CAUSAL
    ilo = max(0L, j0 - off);
#endif
#if ATTN_WINDOW > 0
    ihi = min(ihi, jlast + ATTN_WINDOW - off);
#endif
    *rlo = ilo * GROUP;
    *rhi = ihi * GROUP;
}

/* The dot product of N floats of A and B, four chains apart. */
inline float abw_dot(const float *a, __local const float *b)
{
    float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
    int d = 0;
    for (; d + 4 <= HEAD_DIM; d += 4) {
        d0 += a[d] * b[d];
        d1 += a[d + 1] * b[d + 1];
        d2 += a[d + 2] * b[d + 2];
        d3 += a[d + 3] * b[d + 3];
    }
    for (; d < HEAD_DIM; d++) {
        d0 += a[d] * b[d];
    }
    return (d0 + d1) + (d2 + d3);
}

/* P of a raw dot product DOT (q.k) at LSE, and in *DER the derivative of
 * the score by the scaled dot product (1 - tanh^2 when capped, else 1). */
inline float abw_prob(float dot, float lse, float *der)
{
    float s = ATTN_SCALE * dot;
    *der = 1.0f;
#if ATTN_CAPPED
    s = ATTN_SOFTCAP * attn_tanh(s * (1.0f / ATTN_SOFTCAP), der);
#endif
    return attn_exp2(s * ABW_LOG2E - lse * ABW_LOG2E);
}

/* Row R of batch B's kv head HK: its offset in q (and do_, dq). */
inline size_t abw_row_at(long b, int hk, long r, int seq_q)
{
    int h = hk * GROUP + (int)(r % GROUP);
    return ((size_t)(b * seq_q + r / GROUP) * HEADS + h) * HEAD_DIM;
}

/* Row R's lse and D (lse and scratch). */
inline float abw_lse(const __global float *lse, long b, int hk, long r,
                     int seq_q)
{
    int h = hk * GROUP + (int)(r % GROUP);
    return lse[((size_t)b * HEADS + h) * seq_q + r / GROUP];
}

inline float abw_d(const __global float *scratch, long b, int hk, long r,
                   int seq_q)
{
    int h = hk * GROUP + (int)(r % GROUP);
    return scratch[(size_t)(b * seq_q + r / GROUP) * HEADS + h];
}
