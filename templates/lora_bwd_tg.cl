/* lora_bwd_tg.cl - G = SCALE*dY*B^T and SCALE*T = SCALE*X*A into the
 * float scratch, the first kernel of lora_backward (see
 * lora_bwd_common.cl). Reads X and dY once each.
 *
 * Plan: TG_ROWS rows per work-group, TG_THREADS work-items (1-D), VEC
 * (1, 2 or 4, divides K and N) the width of the loads of X and dY.
 *
 * Work-item tk + tm * TG_TK owns rows row0 + i * TG_TM + tm (i < TG_W)
 * of the work-group's TG_ROWS and steps along K (then N) VEC-wide at
 * k = (step * TG_TK + tk) * VEC, so a warp reads whole row segments.
 * TG_W is the most rows (4, 2 or 1, dividing TG_ROWS) that keep
 * TG_W * RANK <= 64 accumulators; each A value a work-item reads from
 * local memory serves its TG_W rows. A (then B^T) goes through local
 * memory a chunk of TG_CHUNK rows at a time; the TG_TK partial sums of
 * each output meet in local memory at the end, one round per i.
 *
 * Local memory, in floats (the plan computes the same TG_LOCAL):
 *   TG_W      = TG_ROWS % 4 == 0 && RANK <= 16 ? 4
 *             : TG_ROWS % 2 == 0 && RANK <= 32 ? 2 : 1
 *   TG_TM     = TG_ROWS / TG_W          (must divide TG_THREADS)
 *   TG_TK     = TG_THREADS / TG_TM
 *   TG_SPAN   = TG_TK * VEC
 *   TG_AV     = RANK % 4 == 0 ? 4 : 1
 *   TG_AGROUP = VEC * RANK + (VEC * RANK / TG_AV % 2 == 0 ? TG_AV : 0)
 *   TG_CSTEPS = min(CEIL_DIV(max(K, N), TG_SPAN),
 *                   max(1, 8192 / (TG_TK * TG_AGROUP)))
 *   TG_CHUNK  = TG_CSTEPS * TG_SPAN
 *   TG_LOCAL  = max(min(TG_CHUNK, max(K, N)) / VEC * TG_AGROUP,
 *                   TG_TM * RANK * (TG_TK + 1)) */
#include "lora_bwd_common.cl"

#if !defined(TG_ROWS) || !defined(TG_THREADS) || !defined(VEC)
#error "lora_bwd_tg.cl: the plan must define TG_ROWS, TG_THREADS, VEC"
#endif

/* ---- Derived sizes ---- */

#if TG_ROWS % 4 == 0 && RANK <= 16
#define TG_W 4
#elif TG_ROWS % 2 == 0 && RANK <= 32
#define TG_W 2
#else
#define TG_W 1
#endif
#define TG_TM (TG_ROWS / TG_W) /* work-items along rows */
#if TG_THREADS % TG_TM != 0
#error "lora_bwd_tg.cl: TG_ROWS / TG_W must divide TG_THREADS"
#endif
#define TG_TK (TG_THREADS / TG_TM) /* work-items along K (N) */
#define TG_SPAN (TG_TK * VEC)      /* columns one step covers */
#define TG_KN_MAX (IN_FEATURES > OUT_FEATURES ? IN_FEATURES : OUT_FEATURES)

/* Staged A and B^T are read as float4 along the rank where it divides
 * by 4. Each VEC rows of them take TG_AGROUP floats, an odd number of
 * TG_AV-float units, so that the work-items of a warp, TG_AGROUP apart,
 * read distinct banks. */
#if RANK % 4 == 0
#define TG_AV 4
#else
#define TG_AV 1
#endif
#if VEC * RANK / TG_AV % 2 == 0
#define TG_AGROUP (VEC * RANK + TG_AV)
#else
#define TG_AGROUP (VEC * RANK)
#endif
/* A chunk is the most whole steps whose staged rows of A take at most
 * 8192 floats, padding included (one step at least), and no more than
 * the longest product. */
#define TG_STEP_FLOATS (TG_TK * TG_AGROUP) /* one step's rows, staged */
#define TG_FIT (TG_STEP_FLOATS >= 8192 ? 1 : 8192 / TG_STEP_FLOATS)
#define TG_CSTEPS                                                        \
    (CEIL_DIV(TG_KN_MAX, TG_SPAN) < TG_FIT ? CEIL_DIV(TG_KN_MAX, TG_SPAN) \
                                           : TG_FIT)
#define TG_CHUNK (TG_CSTEPS * TG_SPAN)
/* Row KK (< TG_CHUNK), column J of the staged chunk. */
#define TG_AT(kk, j) ((kk) / VEC * TG_AGROUP + (kk) % VEC * RANK + (j))
#define TG_ROWS_STAGED (TG_CHUNK < TG_KN_MAX ? TG_CHUNK : TG_KN_MAX)
#define TG_ASIZE (TG_ROWS_STAGED / VEC * TG_AGROUP)
#define TG_RSIZE (TG_TM * RANK * (TG_TK + 1))
#define TG_LOCAL (TG_ASIZE > TG_RSIZE ? TG_ASIZE : TG_RSIZE)
#if !defined(TG_LOCAL_BYTES) || TG_LOCAL * 4 != TG_LOCAL_BYTES
#error "lora_bwd_tg.cl: local memory differs from the plan's count"
#endif

/* ---- Vectors of VEC elements ---- */

#if VEC == 4
typedef float4 tg_vec_t;
#define TG_VEC_AT(v, c)                                                  \
    ((c) == 0 ? (v).s0 : (c) == 1 ? (v).s1 : (c) == 2 ? (v).s2 : (v).s3)
#define tg_loadv load4v /* fewer registers than load4 (storage_f32.cl) */
#elif VEC == 2
typedef float2 tg_vec_t;
#define TG_VEC_AT(v, c) ((c) == 0 ? (v).s0 : (v).s1)
#define tg_loadv load2
#elif VEC == 1
typedef float tg_vec_t;
#define TG_VEC_AT(v, c) (v)
#define tg_loadv load1
#else
#error "lora_bwd_tg.cl: VEC must be 1, 2 or 4"
#endif

/* ---- Staging ---- */

/* Global -> local: rows K0 .. K0 + N of A (K x RANK), N <= TG_CHUNK a
 * multiple of VEC. The rows are contiguous in A: plain coalesced
 * loads. */
inline void tg_stage_a(__local float *ms, const __global storage_t *a,
                       const int k0, const int n, const int lid)
{
    const __global storage_t *from = a + (size_t)k0 * RANK;
#if TG_AV == 4
    for (int v = lid; v < n * (RANK / 4); v += TG_THREADS) {
        vstore4(load4(from, (size_t)v * 4), 0,
                ms + TG_AT(v / (RANK / 4), v % (RANK / 4) * 4));
    }
#else
    for (int v = lid; v < n * RANK; v += TG_THREADS) {
        ms[TG_AT(v / RANK, v % RANK)] = load1(from, v);
    }
#endif
}

/* Global -> local: rows N0 .. N0 + N of B^T, that is columns of B
 * (RANK x OUT_FEATURES), transposed on the way. Work-items take VEC
 * adjacent columns of one row of B (coalesced along the row); with
 * TG_AV 4 they take four rows of B at once and store float4 along the
 * rank (TG_AGROUP apart: no bank conflicts). */
inline void tg_stage_bt(__local float *ms, const __global storage_t *b,
                        const int n0, const int n, const int lid)
{
    const int groups = TG_ROWS_STAGED / VEC; /* a constant divisor */
#if TG_AV == 4
    for (int v = lid; v < groups * (RANK / 4); v += TG_THREADS) {
        const int nn = v % groups * VEC;
        const int j = v / groups * 4;
        if (nn >= n) {
            continue;
        }
        const size_t at = (size_t)j * OUT_FEATURES + n0 + nn;
        const tg_vec_t b0 = tg_loadv(b, at);
        const tg_vec_t b1 = tg_loadv(b, at + OUT_FEATURES);
        const tg_vec_t b2 = tg_loadv(b, at + 2 * OUT_FEATURES);
        const tg_vec_t b3 = tg_loadv(b, at + 3 * OUT_FEATURES);
#pragma unroll
        for (int c = 0; c < VEC; c++) {
            const float4 col = (float4)(TG_VEC_AT(b0, c), TG_VEC_AT(b1, c),
                                        TG_VEC_AT(b2, c), TG_VEC_AT(b3, c));
            vstore4(col, 0, ms + TG_AT(nn + c, j));
        }
    }
#else
    for (int v = lid; v < groups * RANK; v += TG_THREADS) {
        const int nn = v % groups * VEC;
        const int j = v / groups;
        if (nn >= n) {
            continue;
        }
        const tg_vec_t bv = tg_loadv(b, (size_t)j * OUT_FEATURES + n0 + nn);
#pragma unroll
        for (int c = 0; c < VEC; c++) {
            ms[TG_AT(nn + c, j)] = TG_VEC_AT(bv, c);
        }
    }
#endif
}

/* ---- Streaming ---- */

/* Global -> registers: ROW[i][K .. K + VEC) for each of the TG_W rows,
 * if K < LEN (else XV is left as it is). */
inline void tg_fetch(tg_vec_t xv[TG_W], const __global storage_t *row[TG_W],
                     const int k, const int len)
{
    if (k < len) {
#pragma unroll
        for (int i = 0; i < TG_W; i++) {
            xv[i] = tg_loadv(row[i], k);
        }
    }
}

/* acc[i][j] = sum over k < LEN of ROW[i][k] * M[k][j], this work-item's
 * share, where M is A (TRANSPOSED 0, LEN = K) or B^T (TRANSPOSED 1,
 * LEN = N). TG_CHUNK is a whole number of steps, so the next step's
 * columns are always TG_SPAN further on, in this chunk or the next: each
 * step loads them before it computes, and a load is always in flight,
 * across the barriers of staging too. */
inline void tg_product(float acc[TG_W][RANK], __local float *ms,
                       const __global storage_t *m, const int transposed,
                       const __global storage_t *row[TG_W], const int len,
                       const int tk, const int lid)
{
#pragma unroll
    for (int i = 0; i < TG_W; i++) {
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            acc[i][j] = 0.0f;
        }
    }
    tg_vec_t xn[TG_W];
    tg_fetch(xn, row, tk * VEC, len);
    for (int k0 = 0; k0 < len; k0 += TG_CHUNK) {
        const int n = min(TG_CHUNK, len - k0);
        barrier(CLK_LOCAL_MEM_FENCE); /* the last chunk or round is read */
        if (transposed) {
            tg_stage_bt(ms, m, k0, n, lid);
        } else {
            tg_stage_a(ms, m, k0, n, lid);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int step = 0; step < TG_CSTEPS; step++) {
            const int kk = (step * TG_TK + tk) * VEC;
            tg_vec_t xv[TG_W];
#pragma unroll
            for (int i = 0; i < TG_W; i++) {
                xv[i] = xn[i];
            }
            tg_fetch(xn, row, k0 + kk + TG_SPAN, len);
            if (kk < n) {
#pragma unroll
                for (int c = 0; c < VEC; c++) {
#if TG_AV == 4
#pragma unroll
                    for (int j = 0; j < RANK; j += 4) {
                        const float4 mv = vload4(0, ms + TG_AT(kk + c, j));
#pragma unroll
                        for (int i = 0; i < TG_W; i++) {
                            const float xc = TG_VEC_AT(xv[i], c);
                            acc[i][j] = fma(xc, mv.s0, acc[i][j]);
                            acc[i][j + 1] = fma(xc, mv.s1, acc[i][j + 1]);
                            acc[i][j + 2] = fma(xc, mv.s2, acc[i][j + 2]);
                            acc[i][j + 3] = fma(xc, mv.s3, acc[i][j + 3]);
                        }
                    }
#else
#pragma unroll
                    for (int j = 0; j < RANK; j++) {
                        const float mv = ms[TG_AT(kk + c, j)];
#pragma unroll
                        for (int i = 0; i < TG_W; i++) {
                            acc[i][j] =
                                fma(TG_VEC_AT(xv[i], c), mv, acc[i][j]);
                        }
                    }
#endif
                }
            }
        }
    }
}

/* ---- Reduction over the TG_TK work-items of a row ---- */

/* Round I: parks acc[i] in RED (the select on a constant keeps acc in
 * registers); after it, output o < TG_TM * RANK (row
 * row0 + I * TG_TM + o / RANK, column o % RANK) is tg_sum(red, o).
 * Rows TG_TK + 1 apart: the parking work-items of a warp write
 * consecutive banks, and the summing ones read TG_TK + 1 apart. */
inline void tg_park(__local float *red, const float acc[TG_W][RANK],
                    const int i, const int tm, const int tk)
{
#pragma unroll
    for (int w = 0; w < TG_W; w++) {
        if (w == i) {
#pragma unroll
            for (int j = 0; j < RANK; j++) {
                red[(tm * RANK + j) * (TG_TK + 1) + tk] = acc[w][j];
            }
        }
    }
}

inline float tg_sum(const __local float *red, const int o)
{
    float sum = 0.0f;
    for (int p = 0; p < TG_TK; p++) {
        sum += red[o * (TG_TK + 1) + p];
    }
    return sum;
}

/* OUT[row][j] = SCALE * the work-group's sums for its rows, row < ROWS.
 * The caller's next barrier guards RED. */
inline void tg_store(__global float *out, __local float *red,
                     const float acc[TG_W][RANK], const int rows,
                     const int row0, const int tm, const int tk, const int lid)
{
#pragma unroll
    for (int i = 0; i < TG_W; i++) {
        barrier(CLK_LOCAL_MEM_FENCE); /* the chunk or last round is read */
        tg_park(red, acc, i, tm, tk);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int o = lid; o < TG_TM * RANK; o += TG_THREADS) {
            const int row = row0 + i * TG_TM + o / RANK;
            if (row < rows) {
                out[(size_t)row * RANK + o % RANK] = SCALE * tg_sum(red, o);
            }
        }
    }
}

/* G = SCALE * dY*B^T and SCALE * T = SCALE * X*A for rows
 * group * TG_ROWS .. + TG_ROWS: first T from X and A, then G from dY and
 * B, through the same accumulators and local memory. */
__kernel __attribute__((reqd_work_group_size(TG_THREADS, 1, 1)))
void lora_bwd_tg(const int rows, const __global storage_t *restrict x,
                 const __global storage_t *restrict a,
                 const __global storage_t *restrict b,
                 const __global storage_t *restrict dy,
                 __global float *restrict scratch)
{
    __local float ms[TG_LOCAL] __attribute__((aligned(16)));
    const int lid = get_local_id(0);
    const int tk = lid % TG_TK;
    const int tm = lid / TG_TK;
    const int row0 = get_group_id(0) * TG_ROWS;

    float acc[TG_W][RANK];
    const __global storage_t *row[TG_W];
    /* rows past the end repeat the last row (never stored) */
#pragma unroll
    for (int i = 0; i < TG_W; i++) {
        row[i] =
            x + (size_t)min(row0 + i * TG_TM + tm, rows - 1) * IN_FEATURES;
    }
    tg_product(acc, ms, a, 0, row, IN_FEATURES, tk, lid);
    tg_store(SCRATCH_T(scratch, rows), ms, acc, rows, row0, tm, tk, lid);

#pragma unroll
    for (int i = 0; i < TG_W; i++) {
        row[i] =
            dy + (size_t)min(row0 + i * TG_TM + tm, rows - 1) * OUT_FEATURES;
    }
    tg_product(acc, ms, b, 1, row, OUT_FEATURES, tk, lid);
    tg_store(SCRATCH_G(scratch, rows), ms, acc, rows, row0, tm, tk, lid);
}
