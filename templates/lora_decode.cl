/* lora_decode.cl - few rows: W streamed once, T = SCALE*X*A alongside,
 * in one launch (see lora_common.cl). */
#include "lora_common.cl"

#if !defined(DECODE_ROWS) || !defined(DECODE_N) || !defined(DECODE_K)
#error "lora_decode.cl: the plan must define DECODE_ROWS, DECODE_N, DECODE_K"
#endif

#define DEC_COLS (DECODE_N * VEC) /* columns of Y per work-group */
#define DEC_THREADS (DECODE_N * DECODE_K)
/* Rows of PER_ROW partial sums that fit 4096 floats; 1..DECODE_ROWS. */
#define DEC_FIT(per_row)                                                 \
    (4096 / (per_row) < 1 ? 1                                            \
     : 4096 / (per_row) > DECODE_ROWS ? DECODE_ROWS : 4096 / (per_row))
#define DEC_RED_ROWS DEC_FIT(DECODE_K * DEC_COLS)
#define DEC_RED_Y (DEC_RED_ROWS * DECODE_K * DEC_COLS)
#define DEC_W_STEPS CEIL_DIV(IN_FEATURES, DECODE_K * VEC)
#define DEC_B_STEPS CEIL_DIV(RANK, DECODE_K)
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

/* acc[m] += this work-item's share of row m of X*W at columns
 * COL..COL+VEC-1 (with HAS_BASE) and tacc[m][q] += its share of
 * row m of X*A at column tn + q * DECODE_N, both from the same X loads,
 * for m < NR. NR is a constant at each call, so the accumulators stay in
 * registers and no work goes to rows that cannot exist; the loops run to
 * DECODE_ROWS and test NR so that they unroll before inlining. Rows past
 * `rows` repeat the last row (never stored). */
inline void decode_stream(const int nr, vecf_t acc[DECODE_ROWS],
                          float tacc[DECODE_ROWS][DEC_TQ], const int rows,
                          const int col, const int tn, const int tk,
                          const __global storage_t *restrict x,
                          const __global storage_t *restrict w,
                          const __global storage_t *restrict a)
{
    int rowc[DECODE_ROWS];
#pragma unroll
    for (int m = 0; m < DECODE_ROWS; m++) {
        rowc[m] = min(m, rows - 1);
    }
    /* Work-item tk takes VEC consecutive rows of W (and of A) per step,
     * k = (s * DECODE_K + tk) * VEC + c: the W rows are read once,
     * coalesced along N, and one VEC-wide load of each X row serves VEC
     * rows of W and of A (the X loads are shared by the DECODE_N
     * work-items of one tk, from cache; A, 64 bytes a row at rank 16,
     * comes from cache too). Unrolled so that several W loads are in
     * flight per work-item. */
#pragma unroll 2
    for (int s = 0; s < DEC_W_STEPS; s++) {
        const int k = (s * DECODE_K + tk) * VEC;
#if IN_FEATURES % (DECODE_K * VEC) != 0
        if (k < IN_FEATURES)
#endif
        {
#if HAS_BASE
            vecf_t wv[VEC];
#pragma unroll
            for (int c = 0; c < VEC; c++) {
                wv[c] = loadv(w + col, (size_t)(k + c) * OUT_FEATURES);
            }
#endif
            float av[VEC][DEC_TQ];
#pragma unroll
            for (int c = 0; c < VEC; c++) {
#pragma unroll
                for (int q = 0; q < DEC_TQ; q++) {
                    const int j = tn + q * DECODE_N;
                    av[c][q] = 0.0f;
#if RANK % DECODE_N != 0
                    if (j < RANK)
#endif
                    {
                        av[c][q] = load1(a, (size_t)(k + c) * RANK + j);
                    }
                }
            }
#pragma unroll
            for (int m = 0; m < DECODE_ROWS; m++) {
                if (m < nr) {
                    const vecf_t xv =
                        loadv(x + (size_t)rowc[m] * IN_FEATURES, k);
#pragma unroll
                    for (int c = 0; c < VEC; c++) {
#if HAS_BASE
                        acc[m] = fma((vecf_t)VEC_AT(xv, c), wv[c], acc[m]);
#endif
#pragma unroll
                        for (int q = 0; q < DEC_TQ; q++) {
                            tacc[m][q] =
                                fma(VEC_AT(xv, c), av[c][q], tacc[m][q]);
                        }
                    }
                }
            }
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
    int col = cb + tn * VEC;
#if OUT_FEATURES % DEC_COLS != 0
    col = min(col, OUT_FEATURES - VEC);
#endif

    vecf_t acc[DECODE_ROWS];
    float tacc[DECODE_ROWS][DEC_TQ];
#pragma unroll
    for (int m = 0; m < DECODE_ROWS; m++) {
        acc[m] = (vecf_t)0.0f;
#pragma unroll
        for (int q = 0; q < DEC_TQ; q++) {
            tacc[m][q] = 0.0f;
        }
    }
#define DECODE_ARGS acc, tacc, nr, col, tn, tk, x, w, a
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
            const vecf_t bv = loadv(b + col, (size_t)j * OUT_FEATURES);
#pragma unroll
            for (int m = 0; m < DECODE_ROWS; m++) {
                const int row = min(m, nr - 1);
                acc[m] = fma((vecf_t)tl[row * RANK + j], bv, acc[m]);
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
                STASH_V(acc[m], red + ((m - m0) * DECODE_K + tk) * DEC_COLS +
                                    tn * VEC);
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
