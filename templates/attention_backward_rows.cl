/* attention_backward_rows.cl - what CPUs' backward kernels share
 * (attention_backward_dq_rows.cl, attention_backward_dkv_rows.cl): a
 * work-item holds ABR_N vectors of HEAD_DIM (its query rows, or its
 * keys) and meets the others (keys, or query rows) ABR_T at a time,
 * read straight from global memory: each of their 8-lane stretches is
 * loaded once for all ABR_N of its own. No local memory and no barriers
 * (on a CPU a work-group's items run one after the other between
 * barriers). Include after attention_backward_common.cl. */
#if !defined(ABR_N) || ABR_N < 1
#error "attention_backward_rows.cl: ABR_N, the rows or keys of a work-item"
#endif

/* Others a tile. */
#define ABR_T 8
/* Whether a vector goes 8 lanes at a time (load8: element indices
 * multiples of 8). */
#define ABR_V8 (HEAD_DIM % 8 == 0)

#if ABR_V8
inline float8 abr_pairs(float8 a, float8 b)
{
    return (float8)(a.even, b.even) + (float8)(a.odd, b.odd);
}

/* The sums of the lanes of X[0..7], in that order: three rounds of
 * adding neighbours. */
inline float8 abr_lane_sums(const float8 x[8])
{
    const float8 w0 =
        abr_pairs(abr_pairs(x[0], x[1]), abr_pairs(x[2], x[3]));
    const float8 w1 =
        abr_pairs(abr_pairs(x[4], x[5]), abr_pairs(x[6], x[7]));
    return abr_pairs(w0, w1);
}
#endif

/* OUT[n][t] = A[n] . G[t] (HEAD_DIM elements each) for every n and t. */
inline void abr_dots(const float a[ABR_N][HEAD_DIM],
                     const __global storage_t *const g[ABR_T],
                     float out[ABR_N][ABR_T])
{
#if ABR_V8
    float8 sum[ABR_N][ABR_T];
#pragma unroll
    for (int n = 0; n < ABR_N; n++) {
#pragma unroll
        for (int t = 0; t < ABR_T; t++) {
            sum[n][t] = 0.0f;
        }
    }
    for (int d = 0; d < HEAD_DIM; d += 8) {
        float8 g8[ABR_T];
#pragma unroll
        for (int t = 0; t < ABR_T; t++) {
            g8[t] = load8(g[t], d);
        }
#pragma unroll
        for (int n = 0; n < ABR_N; n++) {
            const float8 a8 = vload8(0, a[n] + d);
#pragma unroll
            for (int t = 0; t < ABR_T; t++) {
                sum[n][t] = fma(a8, g8[t], sum[n][t]);
            }
        }
    }
#pragma unroll
    for (int n = 0; n < ABR_N; n++) {
        vstore8(abr_lane_sums(sum[n]), 0, out[n]);
    }
#else
    for (int n = 0; n < ABR_N; n++) {
        for (int t = 0; t < ABR_T; t++) {
            out[n][t] = 0.0f;
        }
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        float gd[ABR_T];
        for (int t = 0; t < ABR_T; t++) {
            gd[t] = load1(g[t], d);
        }
        for (int n = 0; n < ABR_N; n++) {
            for (int t = 0; t < ABR_T; t++) {
                out[n][t] = fma(a[n][d], gd[t], out[n][t]);
            }
        }
    }
#endif
}

/* ACC[n] += the first NT of G, weighted by W[n], in their order. */
inline void abr_accumulate(float acc[ABR_N][HEAD_DIM],
                           const float w[ABR_N][ABR_T],
                           const __global storage_t *const g[ABR_T], int nt)
{
#if ABR_V8
    for (int d = 0; d < HEAD_DIM; d += 8) {
        float8 a[ABR_N];
#pragma unroll
        for (int n = 0; n < ABR_N; n++) {
            a[n] = vload8(0, acc[n] + d);
        }
        for (int t = 0; t < nt; t++) {
            const float8 g8 = load8(g[t], d);
#pragma unroll
            for (int n = 0; n < ABR_N; n++) {
                a[n] = fma(w[n][t], g8, a[n]);
            }
        }
#pragma unroll
        for (int n = 0; n < ABR_N; n++) {
            vstore8(a[n], 0, acc[n] + d);
        }
    }
#else
    for (int d = 0; d < HEAD_DIM; d++) {
        float a[ABR_N];
        for (int n = 0; n < ABR_N; n++) {
            a[n] = acc[n][d];
        }
        for (int t = 0; t < nt; t++) {
            const float gd = load1(g[t], d);
            for (int n = 0; n < ABR_N; n++) {
                a[n] = fma(w[n][t], gd, a[n]);
            }
        }
        for (int n = 0; n < ABR_N; n++) {
            acc[n][d] = a[n];
        }
    }
#endif
}
