/* lora_decode.cl - few rows: W streamed once, T = SCALE*X*A alongside,
 * in one launch (see lora_common.cl). */
#include "lora_common.cl"

#if !defined(DECODE_ROWS) || !defined(DECODE_N) || !defined(DECODE_K) ||   \
    !defined(DECODE_VEC)
#error "lora_decode.cl: the plan must define DECODE_ROWS, _N, _K and _VEC"
#endif

/* ---- DECODE_VEC columns (and rows of W) per work-item ----
 * VEC is what the rows' alignment allows in one load; DECODE_VEC is the
 * work-item's width, 4 wherever N allows it: at VEC 1 or 2 its loads
 * gather DECODE_VEC elements in VEC-wide pieces, so that each X load still
 * serves DECODE_VEC columns of W and each work-group still covers 128
 * bytes of an f32 row (8 columns a work-group would make every
 * work-group along N recompute T from all of X and A). */
#if DECODE_VEC == VEC
typedef vecf_t dvec_t;
#define DVEC_AT VEC_AT
#define DSTASH STASH_V
#elif DECODE_VEC == 4
typedef float4 dvec_t;
#define DVEC_AT(v, c)                                                    \
    ((c) == 0 ? (v).s0 : (c) == 1 ? (v).s1 : (c) == 2 ? (v).s2 : (v).s3)
#define DSTASH(v, p) vstore4((v), 0, (p))
#else
#error "lora_decode.cl: DECODE_VEC must be VEC or 4"
#endif

#define DEC_COLS (DECODE_N * DECODE_VEC) /* columns of Y per work-group */
#define DEC_THREADS (DECODE_N * DECODE_K)
/* Rows of PER_ROW partial sums that fit 4096 floats; 1..DECODE_ROWS. */
#define DEC_FIT(per_row)                                                 \
    (4096 / (per_row) < 1 ? 1                                            \
     : 4096 / (per_row) > DECODE_ROWS ? DECODE_ROWS : 4096 / (per_row))
#define DEC_RED_ROWS DEC_FIT(DECODE_K * DEC_COLS)
#define DEC_RED_Y (DEC_RED_ROWS * DECODE_K * DEC_COLS)
#define DEC_W_STEPS CEIL_DIV(IN_FEATURES, DECODE_K * DECODE_VEC)
#define DEC_B_STEPS CEIL_DIV(RANK, DECODE_K)
/* Row K of W, A and X is live: only tested where steps may pass K (a
 * ragged last stretch, or the second of two steps past the last). */
#if IN_FEATURES % (DECODE_K * DECODE_VEC) != 0 || DEC_W_STEPS % 2 != 0
#define DEC_LIVE(k) ((k) < IN_FEATURES)
#else
#define DEC_LIVE(k) 1
#endif
/* Work-item (tn, tk) accumulates T for columns tn, tn + DECODE_N, ... of
 * every row over its k; the DECODE_K partial sums then meet in local
 * memory, DEC_T_ROWS rows at a time, laid out [row][tk][column]. */
#define DEC_TQ CEIL_DIV(RANK, DECODE_N)
#define DEC_TCOLS (DEC_TQ * DECODE_N)
#define DEC_T_ROWS DEC_FIT(DECODE_K * DEC_TCOLS)
#define DEC_RED_T (DEC_T_ROWS * DECODE_K * DEC_TCOLS)
#define DEC_RED_SIZE (DEC_RED_Y > DEC_RED_T ? DEC_RED_Y : DEC_RED_T)
#if !defined(DECODE_LOCAL_BYTES) ||                                       \
    (DEC_RED_SIZE + DECODE_ROWS * RANK) * 4 != DECODE_LOCAL_BYTES
#error "lora_decode.cl: local memory differs from the plan's count"
#endif

/* DECODE_VEC columns of P's row at element OFF: this work-item's columns
 * COLC (clamped to N, so that a work-item past N repeats the last
 * columns; never stored), one load from COLC[0] where VEC allows. */
#if DECODE_VEC == VEC
inline dvec_t load_cols(const __global storage_t *p, const size_t off,
                        const size_t step, const int colc[DECODE_VEC])
{
    return loadv_step(p, off + (size_t)colc[0] * step, step);
}
#else
inline dvec_t load_cols(const __global storage_t *p, const size_t off,
                        const size_t step, const int colc[DECODE_VEC])
{
    return (dvec_t)(load1(p, off + colc[0] * step),
                    load1(p, off + colc[1] * step),
                    load1(p, off + colc[2] * step),
                    load1(p, off + colc[3] * step));
}
#endif

/* Elements K..K+DECODE_VEC-1 of row P of X, zero past its end. */
inline dvec_t load_k(const __global storage_t *p, const int k)
{
#if DECODE_VEC == VEC
    return DEC_LIVE(k) ? loadv(p, k) : (dvec_t)0.0f;
#else
    float e[DECODE_VEC];
#pragma unroll
    for (int c = 0; c < DECODE_VEC; c++) {
        e[c] = 0.0f;
#if IN_FEATURES % DECODE_VEC != 0
        if (DEC_LIVE(k + c))
#else
        if (DEC_LIVE(k))
#endif
        {
            e[c] = load1(p, k + c);
        }
    }
    return (dvec_t)(e[0], e[1], e[2], e[3]);
#endif
}

/* One step of the stream: work-item tk takes DECODE_VEC consecutive rows
 * of W (and of A), k = (s * DECODE_K + tk) * DECODE_VEC + c. The W rows
 * are read once, coalesced along N, and one load of each X row serves
 * DECODE_VEC rows of W and of A (the X loads are shared by the DECODE_N
 * work-items of one tk, from cache; A, 64 bytes a row at rank 16, comes
 * from cache too). decode_load: the step's W and A into registers, zero
 * past K. */
inline void decode_load(const int k, dvec_t wv[DECODE_VEC],
                        float av[DECODE_VEC][DEC_TQ],
                        const int colc[DECODE_VEC], const int tn,
                        const __global storage_t *restrict w,
                        const __global storage_t *restrict a)
{
#pragma unroll
    for (int c = 0; c < DECODE_VEC; c++) {
        wv[c] = (dvec_t)0.0f;
#pragma unroll
        for (int q = 0; q < DEC_TQ; q++) {
            av[c][q] = 0.0f;
        }
        if (DEC_LIVE(k + c)) {
#if HAS_BASE
            wv[c] = load_cols(w, W_AT(k + c, 0), W_NSTEP, colc);
#endif
#pragma unroll
            for (int q = 0; q < DEC_TQ; q++) {
                const int j = tn + q * DECODE_N;
#if RANK % DECODE_N != 0
                if (j < RANK)
#endif
                {
                    av[c][q] = load1(a, A_AT(k + c, j));
                }
            }
        }
    }
}

/* decode_mac: acc[m] += the step's share of row m of X*W at columns COLC
 * (with HAS_BASE), tacc[m][q] += its share of row m of X*A at column
 * tn + q * DECODE_N, both from the same X loads, for m < NR. */
inline void decode_mac(const int nr, const int k, dvec_t acc[DECODE_ROWS],
                       float tacc[DECODE_ROWS][DEC_TQ],
                       const dvec_t wv[DECODE_VEC],
                       const float av[DECODE_VEC][DEC_TQ],
                       const int rowc[DECODE_ROWS],
                       const __global storage_t *restrict x)
{
#pragma unroll
    for (int m = 0; m < DECODE_ROWS; m++) {
        if (m < nr) {
            const dvec_t xv = load_k(x + (size_t)rowc[m] * IN_FEATURES, k);
#pragma unroll
            for (int c = 0; c < DECODE_VEC; c++) {
#if HAS_BASE
                acc[m] = fma((dvec_t)DVEC_AT(xv, c), wv[c], acc[m]);
#endif
#pragma unroll
                for (int q = 0; q < DEC_TQ; q++) {
                    tacc[m][q] = fma(DVEC_AT(xv, c), av[c][q], tacc[m][q]);
                }
            }
        }
    }
}

/* The whole stream over K for NR rows. NR is a constant at each call, so
 * the accumulators stay in registers and no work goes to rows that cannot
 * exist; the loops run to DECODE_ROWS and test NR so that they unroll
 * before inlining. Rows past `rows` repeat the last row (never stored).
 * Up to DEC_AHEAD_ROWS rows, two steps' loads are issued before their
 * products, for more bytes of W in flight; at more rows the registers
 * that takes slow the blocks down, so there one step's loads go at a
 * time. */
#define DEC_AHEAD_ROWS 8
inline void decode_stream(const int nr, dvec_t acc[DECODE_ROWS],
                          float tacc[DECODE_ROWS][DEC_TQ], const int rows,
                          const int colc[DECODE_VEC], const int tn,
                          const int tk,
                          const __global storage_t *restrict x,
                          const __global storage_t *restrict w,
                          const __global storage_t *restrict a)
{
    int rowc[DECODE_ROWS];
#pragma unroll
    for (int m = 0; m < DECODE_ROWS; m++) {
        rowc[m] = min(m, rows - 1);
    }
    dvec_t wv[DECODE_VEC], wv2[DECODE_VEC];
    float av[DECODE_VEC][DEC_TQ], av2[DECODE_VEC][DEC_TQ];
    if (nr <= DEC_AHEAD_ROWS) {
        for (int s = 0; s < DEC_W_STEPS; s += 2) {
            const int k = (s * DECODE_K + tk) * DECODE_VEC;
            const int k2 = k + DECODE_K * DECODE_VEC;
            decode_load(k, wv, av, colc, tn, w, a);
            decode_load(k2, wv2, av2, colc, tn, w, a);
            decode_mac(nr, k, acc, tacc, wv, av, rowc, x);
            decode_mac(nr, k2, acc, tacc, wv2, av2, rowc, x);
        }
    } else {
#pragma unroll 2
        for (int s = 0; s < DEC_W_STEPS; s++) {
            const int k = (s * DECODE_K + tk) * DECODE_VEC;
            decode_load(k, wv, av, colc, tn, w, a);
            decode_mac(nr, k, acc, tacc, wv, av, rowc, x);
        }
    }
}

/* Few rows: Y (+)= X*W + T*B with W streamed once. The streaming is
 * instantiated for 1, 2, 4, ... rows up to DECODE_ROWS and picked at run
 * time (uniformly, so no divergence); the reductions that follow are
 * shared. Without HAS_BASE, W aliases B (never read through). */
__kernel __attribute__((reqd_work_group_size(DECODE_N, DECODE_K, 1)))
void lora_decode(const int rows,
                 const __global storage_t *restrict x,
#if HAS_BASE
                 const __global storage_t *restrict w,
#endif
                 const __global storage_t *restrict a,
                 const __global storage_t *restrict b,
                 __global storage_t *restrict y)
{
    /* Partial sums of T (DEC_T_ROWS rows), then of Y (DEC_RED_ROWS
     * rows), [row][tk][column]. */
    __local float red[DEC_RED_SIZE];
    __local float tl[DECODE_ROWS * RANK]; /* T of every row */
    const int tn = get_local_id(0);
    const int tk = get_local_id(1);
    const int lid = tk * DECODE_N + tn;
    /* Work-groups along dimension 1 take DECODE_ROWS rows each: NR. */
    const int row0 = get_group_id(1) * DECODE_ROWS;
    const int nr = min(rows - row0, DECODE_ROWS);
    x += (size_t)row0 * IN_FEATURES;
    y += (size_t)row0 * OUT_FEATURES;
#if !HAS_BASE
    const __global storage_t *w = b;
#endif
    const int cb = get_group_id(0) * DEC_COLS;
    int colc[DECODE_VEC];
#if DECODE_VEC == VEC
    /* VEC divides N: a vector starts past N or ends at or before it. */
    colc[0] = cb + tn * VEC;
#if OUT_FEATURES % DEC_COLS != 0
    colc[0] = min(colc[0], OUT_FEATURES - VEC);
#endif
#else
#pragma unroll
    for (int c = 0; c < DECODE_VEC; c++) {
        colc[c] = min(cb + tn * DECODE_VEC + c, OUT_FEATURES - 1);
    }
#endif

    dvec_t acc[DECODE_ROWS];
    float tacc[DECODE_ROWS][DEC_TQ];
#pragma unroll
    for (int m = 0; m < DECODE_ROWS; m++) {
        acc[m] = (dvec_t)0.0f;
#pragma unroll
        for (int q = 0; q < DEC_TQ; q++) {
            tacc[m][q] = 0.0f;
        }
    }
#define DECODE_ARGS acc, tacc, nr, colc, tn, tk, x, w, a
    if (nr <= 1) {
        decode_stream(1, DECODE_ARGS);
#if DECODE_ROWS > 2
    } else if (nr <= 2) {
        decode_stream(2, DECODE_ARGS);
#endif
#if DECODE_ROWS > 4
    } else if (nr <= 4) {
        decode_stream(4, DECODE_ARGS);
#endif
#if DECODE_ROWS > 8
    } else if (nr <= 8) {
        decode_stream(8, DECODE_ARGS);
#endif
#if DECODE_ROWS > 16
    } else if (nr <= 16) {
        decode_stream(16, DECODE_ARGS);
#endif
#if DECODE_ROWS > 32
    } else if (nr <= 32) {
        decode_stream(32, DECODE_ARGS);
#endif
    } else {
        decode_stream(DECODE_ROWS, DECODE_ARGS);
    }
#undef DECODE_ARGS

    /* T = SCALE * the sum of the DECODE_K partials of each (row, column),
     * DEC_T_ROWS rows at a time; uniform pass count, constant indices. */
    for (int m0 = 0; m0 < nr; m0 += DEC_T_ROWS) {
#pragma unroll
        for (int m = 0; m < DECODE_ROWS; m++) {
            if (m >= m0 && m < m0 + DEC_T_ROWS) {
#pragma unroll
                for (int q = 0; q < DEC_TQ; q++) {
                    red[((m - m0) * DECODE_K + tk) * DEC_TCOLS + tn +
                        q * DECODE_N] = tacc[m][q];
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int o = lid; o < DEC_T_ROWS * RANK; o += DEC_THREADS) {
            const int row = m0 + o / RANK;
            float sum = 0.0f;
#pragma unroll
            for (int p = 0; p < DECODE_K; p++) {
                sum += red[(o / RANK * DECODE_K + p) * DEC_TCOLS + o % RANK];
            }
            if (row < nr && row < DECODE_ROWS) {
                tl[row * RANK + o % RANK] = SCALE * sum;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* acc += T*B: work-item tk takes rows j = tk, tk + DECODE_K, ... of B;
     * rows past `nr` repeat the last row (never stored). */
#pragma unroll
    for (int s = 0; s < DEC_B_STEPS; s++) {
        const int j = s * DECODE_K + tk;
#if RANK % DECODE_K != 0
        if (j < RANK)
#endif
        {
            const dvec_t bv = load_cols(b, B_AT(j, 0), B_NSTEP, colc);
#pragma unroll
            for (int m = 0; m < DECODE_ROWS; m++) {
                const int row = min(m, nr - 1);
                acc[m] = fma((dvec_t)tl[row * RANK + j], bv, acc[m]);
            }
        }
    }

    /* Sum the DECODE_K partials of each (row, column), DEC_RED_ROWS rows
     * at a time. The pass count depends on nr only (uniform); acc is
     * indexed by constants so that it stays in registers. */
    for (int m0 = 0; m0 < nr; m0 += DEC_RED_ROWS) {
#pragma unroll
        for (int m = 0; m < DECODE_ROWS; m++) {
            if (m >= m0 && m < m0 + DEC_RED_ROWS) {
                DSTASH(acc[m], red + ((m - m0) * DECODE_K + tk) * DEC_COLS +
                                   tn * DECODE_VEC);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int o = tk * DECODE_N + tn; o < DEC_RED_ROWS * DEC_COLS;
             o += DEC_THREADS) {
            const int row = m0 + o / DEC_COLS;
            const int c = cb + o % DEC_COLS;
            float sum = 0.0f;
#pragma unroll
            for (int p = 0; p < DECODE_K; p++) {
                sum += red[(o / DEC_COLS * DECODE_K + p) * DEC_COLS +
                           o % DEC_COLS];
            }
#if OUT_FEATURES % DEC_COLS != 0
            if (c < OUT_FEATURES)
#endif
            if (row < nr) {
                const size_t at = (size_t)row * OUT_FEATURES + c;
#if ACCUMULATE
                sum += load1(y, at);
#endif
                store1(y, at, sum);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
