/* attention_rows.cl - the prefill path on CPUs: a work-item per ROWS_Q
 * query positions of one query head, over every key they see, read
 * straight from k and v; writes o and lse. No local memory and no
 * barriers (on a CPU a work-group's items run one after the other
 * between barriers); the rows' scores of each key tile come from one
 * load of each key and their outputs from one load of each value, so a
 * tile's loads serve ROWS_Q x BLOCK_K multiply-adds of 8 lanes.
 *
 * Launch: local (1, 1); groups: dimension 0 at least ceil(seq_q /
 * ROWS_Q) (the rest return), dimension 1 batch * HEADS. */
#include "attention_common.cl"

#if !defined(ROWS_Q) || ROWS_Q < 1
#error "attention_rows.cl: ROWS_Q, the query positions of a work-item"
#endif

/* Whether a row's dimensions go 8 at a time (load8: element indices
 * multiples of 8). */
#define AR_V8 (HEAD_DIM % 8 == 0)

/* A tile of 8 keys at head dims a multiple of 8 gives a row's scores
 * as one vector: each key's dot product summed 8 lanes at a time, the 8
 * keys' lanes folded into one vector in three rounds, its exponentials
 * taken 8 at a time (PoCL runs exp2 lane by lane; exp2_poly.cl's
 * arithmetic vectorizes). */
#if BLOCK_K == 8 && AR_V8
#define AR_LANES 1

inline float8 lanes_pairs(float8 a, float8 b)
{
    return (float8)(a.even, b.even) + (float8)(a.odd, b.odd);
}

/* The sums of the lanes of X[0..7], in that order. */
inline float8 lanes_sums(const float8 x[8])
{
    const float8 w0 =
        lanes_pairs(lanes_pairs(x[0], x[1]), lanes_pairs(x[2], x[3]));
    const float8 w1 =
        lanes_pairs(lanes_pairs(x[4], x[5]), lanes_pairs(x[6], x[7]));
    return lanes_pairs(w0, w1);
}

inline float lanes_max(float8 x)
{
    const float4 m = fmax(x.lo, x.hi);
    return fmax(fmax(m.x, m.y), fmax(m.z, m.w));
}

inline float lanes_total(float8 x)
{
    const float4 t = x.lo + x.hi;
    return (t.x + t.y) + (t.z + t.w);
}

/* 2^Y lane by lane, as attn_exp2. */
#if EXP_POLY
EXP2_POLY(float8, as_float8, as_int8)
#define lanes_exp2(y) exp2_poly(y)
#else
#define lanes_exp2(y) exp2(y)
#endif
#else
#define AR_LANES 0
#endif

/* S[r][jj] = row r of Q . key jj of the tile at element AT of K (keys
 * STEP elements apart), for keys jj < NK (the rest repeat the last):
 * ROWS_Q x BLOCK_K sums side by side, each key's 8 lanes loaded once
 * for every row. */
inline void ar_scores(const float q[ROWS_Q][HEAD_DIM],
                      const __global storage_t *k, size_t at, size_t step,
                      int nk, float s[ROWS_Q][BLOCK_K])
{
    const __global storage_t *key[BLOCK_K];
#pragma unroll
    for (int jj = 0; jj < BLOCK_K; jj++) {
        key[jj] = k + at + min(jj, nk - 1) * step;
    }
#if AR_V8
    float8 sum[ROWS_Q][BLOCK_K];
#pragma unroll
    for (int r = 0; r < ROWS_Q; r++) {
#pragma unroll
        for (int jj = 0; jj < BLOCK_K; jj++) {
            sum[r][jj] = 0.0f;
        }
    }
    for (int d = 0; d < HEAD_DIM; d += 8) {
        float8 k8[BLOCK_K];
#pragma unroll
        for (int jj = 0; jj < BLOCK_K; jj++) {
            k8[jj] = load8(key[jj], d);
        }
#pragma unroll
        for (int r = 0; r < ROWS_Q; r++) {
            const float8 q8 = vload8(0, q[r] + d);
#pragma unroll
            for (int jj = 0; jj < BLOCK_K; jj++) {
                sum[r][jj] = fma(q8, k8[jj], sum[r][jj]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS_Q; r++) {
#if AR_LANES
        vstore8(lanes_sums(sum[r]), 0, s[r]);
#else
#pragma unroll
        for (int jj = 0; jj < BLOCK_K; jj++) {
            const float4 s4 = sum[r][jj].lo + sum[r][jj].hi;
            s[r][jj] = (s4.x + s4.y) + (s4.z + s4.w);
        }
#endif
    }
#else
    for (int r = 0; r < ROWS_Q; r++) {
        for (int jj = 0; jj < BLOCK_K; jj++) {
            s[r][jj] = 0.0f;
        }
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        float kd[BLOCK_K];
        for (int jj = 0; jj < BLOCK_K; jj++) {
            kd[jj] = load1(key[jj], d);
        }
        for (int r = 0; r < ROWS_Q; r++) {
            for (int jj = 0; jj < BLOCK_K; jj++) {
                s[r][jj] = fma(q[r][d], kd[jj], s[r][jj]);
            }
        }
    }
#endif
}

/* ACC[r] = ALPHA[r] ACC[r] + the NK values of the tile at element AT of
 * V (STEP elements apart) weighted by P[r]: each value's 8 lanes loaded
 * once for every row. */
inline void ar_accumulate(float acc[ROWS_Q][HEAD_DIM],
                          const float alpha[ROWS_Q],
                          const float p[ROWS_Q][BLOCK_K],
                          const __global storage_t *v, size_t at,
                          size_t step, int nk)
{
#if AR_V8
    for (int d = 0; d < HEAD_DIM; d += 8) {
        float8 a[ROWS_Q];
#pragma unroll
        for (int r = 0; r < ROWS_Q; r++) {
            a[r] = vload8(0, acc[r] + d) * alpha[r];
        }
        for (int jj = 0; jj < nk; jj++) {
            const float8 v8 = load8(v + at + jj * step, d);
#pragma unroll
            for (int r = 0; r < ROWS_Q; r++) {
                a[r] = fma(p[r][jj], v8, a[r]);
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS_Q; r++) {
            vstore8(a[r], 0, acc[r] + d);
        }
    }
#else
    for (int d = 0; d < HEAD_DIM; d++) {
        float a[ROWS_Q];
        for (int r = 0; r < ROWS_Q; r++) {
            a[r] = acc[r][d] * alpha[r];
        }
        for (int jj = 0; jj < nk; jj++) {
            const float vd = load1(v, at + jj * step + d);
            for (int r = 0; r < ROWS_Q; r++) {
                a[r] = fma(p[r][jj], vd, a[r]);
            }
        }
        for (int r = 0; r < ROWS_Q; r++) {
            acc[r][d] = a[r];
        }
    }
#endif
}

/* Whether position POS sees key J. */
inline bool ar_sees(long pos, long j)
{
    bool see = true;
    (void)pos;
    (void)j;
#if CAUSAL
    see = see && j <= pos;
#endif
#if WINDOW > 0
    see = see && pos - j < WINDOW;
#endif
    return see;
}

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void attention_rows(const int seq_q, const int seq_kv,
                    const __global storage_t *q, const __global storage_t *k,
                    const __global storage_t *v, __global storage_t *o,
                    __global float *lse)
{
    const long i0 = (long)get_group_id(0) * ROWS_Q;
    if (i0 >= seq_q) {
        return;
    }
    const long b = get_group_id(1) / HEADS;
    const int h = (int)(get_group_id(1) % HEADS);
    const int hk = h / GROUP;
    const int nr = (int)min((long)ROWS_Q, (long)seq_q - i0);
    /* Position of row r: i0 + r + off; rows past nr see nothing. */
    const long off = (long)seq_kv - seq_q;
    float qr[ROWS_Q][HEAD_DIM], acc[ROWS_Q][HEAD_DIM];
    float m[ROWS_Q], l[ROWS_Q];
    for (int r = 0; r < ROWS_Q; r++) {
        const size_t row = ((size_t)(b * seq_q + i0 + min(r, nr - 1)) *
                                HEADS + h) * HEAD_DIM;
        for (int d = 0; d < HEAD_DIM; d++) {
            qr[r][d] = load1(q, row + d) * Q_MUL;
            acc[r][d] = 0.0f;
        }
        m[r] = -INFINITY;
        l[r] = 0.0f;
    }
    /* The keys some row sees, and those every row sees (no mask). */
    long lo, hi;
    attn_key_range(seq_q, seq_kv, i0 * GROUP, (long)nr * GROUP, 0, seq_kv,
                   &lo, &hi);
    const long all_lo = WINDOW > 0 ? i0 + nr - 1 + off - WINDOW + 1 : lo;
    const long all_hi = CAUSAL ? i0 + off + 1 : hi;
    const size_t step = (size_t)KV_HEADS * HEAD_DIM;
    for (long j0 = lo; j0 < hi; j0 += BLOCK_K) {
        const int nk = (int)min((long)BLOCK_K, hi - j0);
        const size_t at = ((size_t)(b * seq_kv + j0) * KV_HEADS + hk) *
                          HEAD_DIM;
        float s[ROWS_Q][BLOCK_K], p[ROWS_Q][BLOCK_K], alpha[ROWS_Q];
        ar_scores(qr, k, at, step, nk, s);
        const bool whole = nk == BLOCK_K && nr == ROWS_Q && j0 >= all_lo &&
                           j0 + BLOCK_K <= all_hi;
        for (int r = 0; r < ROWS_Q; r++) {
            for (int jj = 0; jj < BLOCK_K; jj++) {
#if CAPPED
                float slope;
                s[r][jj] = SOFTCAP * attn_tanh(s[r][jj] * INV_SOFTCAP,
                                               &slope) * ATTN_LOG2E;
#endif
                if (!whole && (jj >= nk || r >= nr ||
                               !ar_sees(i0 + r + off, j0 + jj))) {
                    s[r][jj] = -INFINITY;
                }
            }
#if AR_LANES
            const float8 s8 = vload8(0, s[r]);
            const float mt = fmax(m[r], lanes_max(s8));
#else
            float mt = m[r];
            for (int jj = 0; jj < BLOCK_K; jj++) {
                mt = fmax(mt, s[r][jj]);
            }
#endif
            /* No key seen yet: exponentials against 0 (all of them 0). */
            const float base = mt == -INFINITY ? 0.0f : mt;
#if AR_LANES
            const float8 p8 = lanes_exp2(s8 - base);
            vstore8(p8, 0, p[r]);
            const float sum = lanes_total(p8);
#else
            float sum = 0.0f;
            for (int jj = 0; jj < BLOCK_K; jj++) {
                p[r][jj] = attn_exp2(s[r][jj] - base);
                sum += p[r][jj];
            }
#endif
            alpha[r] = attn_exp2(m[r] - base);
            l[r] = l[r] * alpha[r] + sum;
            m[r] = mt;
        }
        ar_accumulate(acc, alpha, p, v, at, step, nk);
    }
    for (int r = 0; r < nr; r++) {
        const long i = i0 + r;
        const size_t row = ((size_t)(b * seq_q + i) * HEADS + h) * HEAD_DIM;
        const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
        for (int d = 0; d < HEAD_DIM; d++) {
            store1(o, row + d, acc[r][d] * inv);
        }
        if (lse != 0) {
            lse[((size_t)b * HEADS + h) * seq_q + i] = attn_lse(m[r], l[r]);
        }
    }
}
