/* lora_xa.cl - T = SCALE * X*A into the float scratch, before lora_main
 * or lora_expand (see lora_common.cl). */
#include "lora_common.cl"

#if !defined(XA_M) || !defined(XA_K) || !defined(XA_W) || !defined(XA_CHUNK)
#error "lora_xa.cl: the plan must define XA_M, XA_K, XA_W, XA_CHUNK"
#endif

/* lora_xa runs before lora_main or lora_expand. */
/* Work-item (tk, tm) of a (XA_K, XA_T) work-group owns rows
 * row0 + i * XA_T + tm (i < XA_W) of an XA_M-row block; the XA_K partial
 * sums of each (row, j) meet in local memory at the end, one round per i. */
#define XA_T (XA_M / XA_W)
#define XA_THREADS (XA_K * XA_T)
#if RANK % 4 == 0
#define AV 4 /* A read from local memory as float4, T summed in float4 */
typedef float4 accv_t;
#define ACC_AT(v, c)                                                     \
    ((c) == 0 ? (v).s0 : (c) == 1 ? (v).s1 : (c) == 2 ? (v).s2 : (v).s3)
#else
#define AV 1
typedef float accv_t;
#define ACC_AT(v, c) (v)
#endif

/* Round I of the reduction: parks acc[i] in RED; after it, output
 * o < XA_T * RANK (row row0 + I * XA_T + o / RANK, column o % RANK) is
 * xa_sum(red, o). The caller adds a barrier before the next round. */
inline void xa_park(__local float *red, const accv_t acc[XA_W][RANK / AV],
                    const int i, const int tm, const int tk)
{
#pragma unroll
    for (int w = 0; w < XA_W; w++) {
        if (w == i) {
#pragma unroll
            for (int j = 0; j < RANK; j++) {
                red[(tm * RANK + j) * (XA_K + 1) + tk] =
                    ACC_AT(acc[w][j / AV], j % AV);
            }
        }
    }
}

inline float xa_sum(const __local float *red, const int o)
{
    float sum = 0.0f;
#pragma unroll
    for (int p = 0; p < XA_K; p++) {
        sum += red[o * (XA_K + 1) + p];
    }
    return sum;
}

/* T = SCALE * X*A into the float scratch. Work-group (s, b) takes rows
 * b * XA_M .. + XA_M and stretch s of S = get_num_groups(0) equal
 * stretches of K, and writes its partial sum of T: T[m][s][j] at
 * t[(m * S + s) * RANK + j]. A stretch is at most XA_CHUNK long (the
 * host launches S = XA_SPLIT = CEIL_DIV(K, XA_CHUNK) work-groups along K;
 * one stretch per work-group keeps its registers few). Its rows of A are
 * staged in local memory once, so the loop
 * over K that follows has no barrier: work-item (tk, tm)
 * loads X VEC-wide at k = (step * XA_K + tk) * VEC, coalesced along K,
 * and each A value it reads serves XA_W rows. Each VEC rows of A in
 * local memory are followed by XA_APAD floats, so that the XA_K
 * work-items of a warp read distinct banks. */
#if AV == 4
#define XA_APAD 4
#else
#define XA_APAD 1
#endif
#define XA_AGROUP (VEC * RANK + XA_APAD)
#define XA_AT(kk, j) ((kk) / VEC * XA_AGROUP + (kk) % VEC * RANK + (j))
#define XA_STEPS CEIL_DIV(XA_CHUNK, XA_K * VEC)
#define XA_ASIZE (CEIL_DIV(XA_CHUNK, VEC) * XA_AGROUP)
#define XA_RSIZE (XA_T * RANK * (XA_K + 1))
#define XA_LOCAL (XA_ASIZE > XA_RSIZE ? XA_ASIZE : XA_RSIZE)
#if !defined(XA_LOCAL_BYTES) || XA_LOCAL * 4 != XA_LOCAL_BYTES
#error "lora_xa.cl: local memory differs from the plan's count"
#endif

/* Global -> local: rows K0 .. K0 + N of A, N a multiple of VEC. */
inline void xa_stage(__local float *as, const __global storage_t *a,
                     const int k0, const int n, const int lid)
{
#if WEIGHT_OUT_IN
    /* A is r x K: consecutive work-items along K */
    for (int v = lid; v < n * RANK; v += XA_THREADS) {
        as[XA_AT(v % n, v / n)] = load1(a, A_AT(k0 + v % n, v / n));
    }
#elif AV == 4
    for (int v = lid; v < n * (RANK / 4); v += XA_THREADS) {
        const int kk = v / (RANK / 4);
        vstore4(load4(a, (size_t)k0 * RANK + (size_t)v * 4), 0,
                as + XA_AT(kk, v % (RANK / 4) * 4));
    }
#else
    for (int v = lid; v < n * RANK; v += XA_THREADS) {
        as[XA_AT(v / RANK, v % RANK)] = load1(a, (size_t)k0 * RANK + v);
    }
#endif
}

/* X through load4v where VEC is 4 (see storage_f32.cl: registers). */
#if VEC == 4
#define XA_LOADV(p, i) load4v((p), (i))
#else
#define XA_LOADV(p, i) loadv((p), (i))
#endif

/* Global -> registers: XR[i][K0 + KK ..] for each of the XA_W rows, if
 * KK < N (else XV is left as it is). */
inline void xa_fetch(vecf_t xv[XA_W], const __global storage_t *xr[XA_W],
                     const int k0, const int kk, const int n)
{
    if (kk < n) {
#pragma unroll
        for (int i = 0; i < XA_W; i++) {
            xv[i] = XA_LOADV(xr[i], k0 + kk);
        }
    }
}

/* acc[i][j] += this work-item's share of XR[i][K0 .. K0 + N) * A, from
 * the N rows of A staged at AS. XN holds the first step's X on entry;
 * each step loads the next step's X before it computes, so that a load
 * is always in flight. */
inline void xa_stream(accv_t acc[XA_W][RANK / AV], const __local float *as,
                      const __global storage_t *xr[XA_W], vecf_t xn[XA_W],
                      const int k0, const int n, const int tk)
{
    for (int step = 0; step < XA_STEPS; step++) {
        const int kk = (step * XA_K + tk) * VEC;
        vecf_t xv[XA_W];
#pragma unroll
        for (int i = 0; i < XA_W; i++) {
            xv[i] = xn[i];
        }
        xa_fetch(xn, xr, k0, kk + XA_K * VEC, n);
        if (kk < n) {
#pragma unroll
            for (int c = 0; c < VEC; c++) {
#if AV == 4
#pragma unroll
                for (int j = 0; j < RANK; j += 4) {
                    const float4 av = vload4(0, as + XA_AT(kk + c, j));
#pragma unroll
                    for (int i = 0; i < XA_W; i++) {
                        const float xc = VEC_AT(xv[i], c);
                        acc[i][j / 4] = fma((float4)xc, av, acc[i][j / 4]);
                    }
                }
#else
#pragma unroll
                for (int j = 0; j < RANK; j++) {
                    const float av = as[XA_AT(kk + c, j)];
#pragma unroll
                    for (int i = 0; i < XA_W; i++) {
                        acc[i][j] = fma(VEC_AT(xv[i], c), av, acc[i][j]);
                    }
                }
#endif
            }
        }
    }
}

__kernel __attribute__((reqd_work_group_size(XA_K, XA_T, 1)))
void lora_xa(const int rows, const __global storage_t *restrict x,
             const __global storage_t *restrict a,
             __global float *restrict scratch)
{
    __global float *restrict t = scratch; /* partial sums of T */
    __local float as[XA_LOCAL] __attribute__((aligned(16)));
    const int tk = get_local_id(0);
    const int tm = get_local_id(1);
    const int lid = tm * XA_K + tk;
    const int nsplit = get_num_groups(0);
    const int split = get_group_id(0);
    const int row0 = get_group_id(1) * XA_M;
    /* This work-group's stretch of K, in whole vectors. */
    const int per = CEIL_DIV(IN_FEATURES / VEC, nsplit) * VEC;
    const int kbeg = min(split * per, IN_FEATURES);
    const int kend = min(kbeg + per, IN_FEATURES);

    const int n = kend - kbeg; /* <= XA_CHUNK */

    accv_t acc[XA_W][RANK / AV];
    const __global storage_t *xr[XA_W];
#pragma unroll
    for (int i = 0; i < XA_W; i++) {
        /* rows past the end repeat the last row (never stored) */
        xr[i] = x + (size_t)min(row0 + i * XA_T + tm, rows - 1) * IN_FEATURES;
#pragma unroll
        for (int j = 0; j < RANK / AV; j++) {
            acc[i][j] = (accv_t)0.0f;
        }
    }
    /* the first X loads travel while A is staged */
    vecf_t xn[XA_W];
    xa_fetch(xn, xr, kbeg, tk * VEC, n);
    xa_stage(as, a, kbeg, n, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    xa_stream(acc, as, xr, xn, kbeg, n, tk);
#pragma unroll
    for (int i = 0; i < XA_W; i++) {
        barrier(CLK_LOCAL_MEM_FENCE); /* A (or the last round) is done */
        xa_park(as, acc, i, tm, tk);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int o = lid; o < XA_T * RANK; o += XA_THREADS) {
            const int row = row0 + i * XA_T + o / RANK;
            const float sum = xa_sum(as, o);
            if (row < rows) {
                t[((size_t)row * nsplit + split) * RANK + o % RANK] =
                    SCALE * sum;
            }
        }
    }
}
