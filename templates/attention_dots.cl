/* attention_dots.cl - the arithmetic of the CPU attention kernels
 * (attention_rows.cl, attention_part_rows.cl,
 * attention_backward_dq_rows.cl, attention_backward_dkv_rows.cl): a
 * work-item's N vectors of HEAD_DIM floats (its query rows, or its keys;
 * N at most the plan's DOTS_N) against a tile of DOTS_T others read
 * straight from global memory, each 8-lane stretch of theirs loaded once
 * for all N of its own. With 8 a tile and head dims a multiple of 8
 * (DOTS_LANES), a vector's 8 dot products come out folded into one
 * vector: three rounds of adding neighbours instead of a reduction each.
 * And the forward kernels' online softmax step of a row over a tile
 * (dots_online_row). Include after attention_common.cl or
 * attention_backward_common.cl. */
#if !defined(DOTS_N) || !defined(DOTS_T) || !defined(HEAD_DIM)
#error "attention_dots.cl: the plan's DOTS_N and DOTS_T, and HEAD_DIM"
#endif

/* Whether a vector goes 8 lanes at a time (load8: element indices
 * multiples of 8). */
#define DOTS_V8 (HEAD_DIM % 8 == 0)
#define DOTS_LANES (DOTS_T == 8 && DOTS_V8)

#if DOTS_LANES
inline float8 dots_pairs(float8 a, float8 b)
{
    return (float8)(a.even, b.even) + (float8)(a.odd, b.odd);
}

/* The sums of the lanes of X[0..7], in that order. */
inline float8 dots_lane_sums(const float8 x[8])
{
    const float8 w0 =
        dots_pairs(dots_pairs(x[0], x[1]), dots_pairs(x[2], x[3]));
    const float8 w1 =
        dots_pairs(dots_pairs(x[4], x[5]), dots_pairs(x[6], x[7]));
    return dots_pairs(w0, w1);
}
#endif

/* OUT[n][t] = A[n] . G[t] (HEAD_DIM elements each) for n < N and every
 * t. */
inline void dots_of(const int count, const float (*a)[HEAD_DIM],
                    const __global storage_t *const g[DOTS_T],
                    float (*out)[DOTS_T])
{
#if DOTS_V8
    float8 sum[DOTS_N][DOTS_T];
#pragma unroll
    for (int n = 0; n < count; n++) {
#pragma unroll
        for (int t = 0; t < DOTS_T; t++) {
            sum[n][t] = 0.0f;
        }
    }
    for (int d = 0; d < HEAD_DIM; d += 8) {
        float8 g8[DOTS_T];
#pragma unroll
        for (int t = 0; t < DOTS_T; t++) {
            g8[t] = load8(g[t], d);
        }
#pragma unroll
        for (int n = 0; n < count; n++) {
            const float8 a8 = vload8(0, a[n] + d);
#pragma unroll
            for (int t = 0; t < DOTS_T; t++) {
                sum[n][t] = fma(a8, g8[t], sum[n][t]);
            }
        }
    }
#pragma unroll
    for (int n = 0; n < count; n++) {
#if DOTS_LANES
        vstore8(dots_lane_sums(sum[n]), 0, out[n]);
#else
#pragma unroll
        for (int t = 0; t < DOTS_T; t++) {
            const float4 s4 = sum[n][t].lo + sum[n][t].hi;
            out[n][t] = (s4.x + s4.y) + (s4.z + s4.w);
        }
#endif
    }
#else
    for (int n = 0; n < count; n++) {
        for (int t = 0; t < DOTS_T; t++) {
            out[n][t] = 0.0f;
        }
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        float gd[DOTS_T];
        for (int t = 0; t < DOTS_T; t++) {
            gd[t] = load1(g[t], d);
        }
        for (int n = 0; n < count; n++) {
            for (int t = 0; t < DOTS_T; t++) {
                out[n][t] = fma(a[n][d], gd[t], out[n][t]);
            }
        }
    }
#endif
}

/* ACC[n] = KEEP[n] ACC[n] + the first NT of G weighted by W[n], in
 * their order, for n < N. */
inline void dots_accumulate(const int count, float (*acc)[HEAD_DIM],
                            const float *keep, const float (*w)[DOTS_T],
                            const __global storage_t *const g[DOTS_T],
                            int nt)
{
#if DOTS_V8
    for (int d = 0; d < HEAD_DIM; d += 8) {
        float8 a[DOTS_N];
#pragma unroll
        for (int n = 0; n < count; n++) {
            a[n] = vload8(0, acc[n] + d) * keep[n];
        }
        for (int t = 0; t < nt; t++) {
            const float8 g8 = load8(g[t], d);
#pragma unroll
            for (int n = 0; n < count; n++) {
                a[n] = fma(w[n][t], g8, a[n]);
            }
        }
#pragma unroll
        for (int n = 0; n < count; n++) {
            vstore8(a[n], 0, acc[n] + d);
        }
    }
#else
    for (int d = 0; d < HEAD_DIM; d++) {
        float a[DOTS_N];
        for (int n = 0; n < count; n++) {
            a[n] = acc[n][d] * keep[n];
        }
        for (int t = 0; t < nt; t++) {
            const float gd = load1(g[t], d);
            for (int n = 0; n < count; n++) {
                a[n] = fma(w[n][t], gd, a[n]);
            }
        }
        for (int n = 0; n < count; n++) {
            acc[n][d] = a[n];
        }
    }
#endif
}

#if DOTS_LANES
inline float dots_lanes_max(float8 x)
{
    const float4 m = fmax(x.lo, x.hi);
    return fmax(fmax(m.x, m.y), fmax(m.z, m.w));
}

inline float dots_lanes_total(float8 x)
{
    const float4 t = x.lo + x.hi;
    return (t.x + t.y) + (t.z + t.w);
}

/* 2^Y lane by lane, as attn_exp2 (PoCL runs exp2 lane by lane;
 * exp2_poly.cl's arithmetic vectorizes). */
#if EXP_POLY
EXP2_POLY(float8, as_float8, as_int8)
#define dots_exp2(y) exp2_poly(y)
#else
#define dots_exp2(y) exp2(y)
#endif
#endif

/* One row's step of the online softmax (base 2) over a tile: its scores
 * S (-INFINITY where hidden) to probabilities P against the row's new
 * running max *M, its sum *L updated; returns the factor its earlier
 * outputs take. A row that has seen no key keeps *M = -INFINITY and
 * *L = 0 (its exponentials against 0, all of them 0). */
inline float dots_online_row(const float s[DOTS_T], float p[DOTS_T],
                             float *m, float *l)
{
#if DOTS_LANES
    const float8 s8 = vload8(0, s);
    const float mt = fmax(*m, dots_lanes_max(s8));
    const float base = mt == -INFINITY ? 0.0f : mt;
    const float8 p8 = dots_exp2(s8 - base);
    vstore8(p8, 0, p);
    const float sum = dots_lanes_total(p8);
#else
    float mt = *m;
    for (int t = 0; t < DOTS_T; t++) {
        mt = fmax(mt, s[t]);
    }
    const float base = mt == -INFINITY ? 0.0f : mt;
    float sum = 0.0f;
    for (int t = 0; t < DOTS_T; t++) {
        p[t] = attn_exp2(s[t] - base);
        sum += p[t];
    }
#endif
    const float alpha = attn_exp2(*m - base);
    *l = *l * alpha + sum;
    *m = mt;
    return alpha;
}
