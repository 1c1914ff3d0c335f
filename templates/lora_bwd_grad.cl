/* lora_bwd_grad.cl - partial sums of dA = X^T*G and dB^T = dY^T*(SCALE*T)
 * over slices of GRAD_ROWS rows, after lora_bwd_tg (see
 * lora_bwd_common.cl). Reads X and dY once each.
 *
 * Plan: GRAD_THREADS work-items per work-group (1-D), GRAD_VEC (1, 2 or
 * 4, divides K and N) adjacent columns per work-item.
 *
 * Work-group (c, s) takes rows s * GRAD_ROWS .. + GRAD_ROWS and column
 * block c: of X for c < GRAD_BLOCKS_K (dA), else of dY (dB). Its
 * work-items own GRAD_VEC adjacent columns each and keep their
 * GRAD_VEC x RANK sums in registers while they stream the slice's rows,
 * GRAD_BATCH rows at a time (the loads of the next batch in flight while
 * one computes); one row's columns of a work-group are contiguous, so the
 * loads are coalesced. The slice's rows of G (or SCALE*T) are the same for
 * every work-item: they go through local memory GRAD_CHUNK rows at a time
 * and are read as broadcasts.
 *
 * Local memory, in floats (the plan computes the same GRAD_LOCAL):
 *   GRAD_CHUNK = min(CEIL_DIV(GRAD_ROWS, 4) * 4,
 *                    max(4, 1024 / RANK / 4 * 4))
 *   GRAD_LOCAL = GRAD_CHUNK * RANK */
#include "lora_bwd_common.cl"

#if !defined(GRAD_THREADS) || !defined(GRAD_VEC)
#error "lora_bwd_grad.cl: the plan must define GRAD_THREADS, GRAD_VEC"
#endif

/* ---- Derived sizes ---- */

#define GRAD_COLS (GRAD_THREADS * GRAD_VEC) /* columns per work-group */
#define GRAD_BLOCKS_K CEIL_DIV(IN_FEATURES, GRAD_THREADS * GRAD_VEC)
#define GRAD_BLOCKS_N CEIL_DIV(OUT_FEATURES, GRAD_THREADS * GRAD_VEC)
#define GRAD_BATCH 4 /* rows whose loads are issued together */
/* Rows of G (SCALE*T) in local memory at once: a whole number of
 * batches, about 1024 floats, no more than a slice. */
#define GRAD_CHUNK_FIT                                                   \
    (1024 / RANK / GRAD_BATCH > 1 ? 1024 / RANK / GRAD_BATCH * GRAD_BATCH \
                                  : GRAD_BATCH)
#define GRAD_SLICE_CEIL (CEIL_DIV(GRAD_ROWS, GRAD_BATCH) * GRAD_BATCH)
#define GRAD_CHUNK                                                       \
    (GRAD_SLICE_CEIL < GRAD_CHUNK_FIT ? GRAD_SLICE_CEIL : GRAD_CHUNK_FIT)
#define GRAD_LOCAL (GRAD_CHUNK * RANK)
#if !defined(GRAD_LOCAL_BYTES) || GRAD_LOCAL * 4 != GRAD_LOCAL_BYTES
#error "lora_bwd_grad.cl: local memory differs from the plan's count"
#endif
/* The columns of the last block reach past K or N: guards. */
#define GRAD_EDGE                                                        \
    (IN_FEATURES % GRAD_COLS != 0 || OUT_FEATURES % GRAD_COLS != 0)

/* ---- Vectors of GRAD_VEC elements ---- */

#if GRAD_VEC == 4
typedef float4 grad_vec_t;
#define GRAD_VEC_AT(v, c)                                                \
    ((c) == 0 ? (v).s0 : (c) == 1 ? (v).s1 : (c) == 2 ? (v).s2 : (v).s3)
#define grad_loadv load4v
#elif GRAD_VEC == 2
typedef float2 grad_vec_t;
#define GRAD_VEC_AT(v, c) ((c) == 0 ? (v).s0 : (v).s1)
#define grad_loadv load2
#elif GRAD_VEC == 1
typedef float grad_vec_t;
#define GRAD_VEC_AT(v, c) (v)
#define grad_loadv load1
#else
#error "lora_bwd_grad.cl: GRAD_VEC must be 1, 2 or 4"
#endif

/* Global -> registers: SRC[m + b][col ..] for the GRAD_BATCH rows
 * m + b < END (the others are left as they are); rows are STRIDE
 * elements long. */
inline void grad_fetch(grad_vec_t xv[GRAD_BATCH],
                       const __global storage_t *src, const int stride,
                       const int col, const int m, const int end)
{
#pragma unroll
    for (int b = 0; b < GRAD_BATCH; b++) {
        if (m + b < end) {
            xv[b] = grad_loadv(src, (size_t)(m + b) * stride + col);
        }
    }
}

/* Global -> local: rows M0 .. M0 + N of the rows x RANK matrix FROM
 * (G or SCALE*T), contiguous. */
inline void grad_stage(__local float *gl, const __global float *from,
                       const int m0, const int n, const int lid)
{
    from += (size_t)m0 * RANK;
#if RANK % 4 == 0
    for (int v = lid; v < n * (RANK / 4); v += GRAD_THREADS) {
        vstore4(vload4(v, from), v, gl);
    }
#else
    for (int v = lid; v < n * RANK; v += GRAD_THREADS) {
        gl[v] = from[v];
    }
#endif
}

/* acc[c][j] += XV[b][c] * GL[MM + b][j] for the rows MM + b < N. */
inline void grad_batch(float acc[GRAD_VEC][RANK], const __local float *gl,
                       const grad_vec_t xv[GRAD_BATCH], const int mm,
                       const int n)
{
#pragma unroll
    for (int b = 0; b < GRAD_BATCH; b++) {
        if (mm + b < n) {
            const __local float *gr = gl + (mm + b) * RANK;
#if RANK % 4 == 0
#pragma unroll
            for (int j = 0; j < RANK; j += 4) {
                const float4 gv = vload4(0, gr + j);
#pragma unroll
                for (int c = 0; c < GRAD_VEC; c++) {
                    const float xc = GRAD_VEC_AT(xv[b], c);
                    acc[c][j] = fma(xc, gv.s0, acc[c][j]);
                    acc[c][j + 1] = fma(xc, gv.s1, acc[c][j + 1]);
                    acc[c][j + 2] = fma(xc, gv.s2, acc[c][j + 2]);
                    acc[c][j + 3] = fma(xc, gv.s3, acc[c][j + 3]);
                }
            }
#else
#pragma unroll
            for (int j = 0; j < RANK; j++) {
                const float gv = gr[j];
#pragma unroll
                for (int c = 0; c < GRAD_VEC; c++) {
                    acc[c][j] = fma(GRAD_VEC_AT(xv[b], c), gv, acc[c][j]);
                }
            }
#endif
        }
    }
}

/* Slice s = get_group_id(1) of the partial sums: for column block
 * c = get_group_id(0) < GRAD_BLOCKS_K, dA[k][j] over the slice's rows of
 * X and G; past them, dB^T[n][j] over its rows of dY and SCALE*T. */
__kernel __attribute__((reqd_work_group_size(GRAD_THREADS, 1, 1)))
void lora_bwd_grad(const int rows, const __global storage_t *restrict x,
                   const __global storage_t *restrict dy,
                   __global float *restrict scratch)
{
    __local float gl[GRAD_LOCAL] __attribute__((aligned(16)));
    const int lid = get_local_id(0);
    const int block = get_group_id(0);
    const int slice = get_group_id(1);
    const int mbeg = slice * GRAD_ROWS;
    const int mend = min(rows, mbeg + GRAD_ROWS);

    /* dA: X's columns against G; dB: dY's against SCALE*T. */
    const int for_da = block < GRAD_BLOCKS_K;
    const __global storage_t *src = for_da ? x : dy;
    const int width = for_da ? IN_FEATURES : OUT_FEATURES;
    const __global float *factor =
        for_da ? SCRATCH_G(scratch, rows) : SCRATCH_T(scratch, rows);
    /* this work-item's first column, and where its sums go */
    int col =
        (for_da ? block : block - GRAD_BLOCKS_K) * GRAD_COLS + lid * GRAD_VEC;
    __global float *out = SCRATCH_PARTIALS(scratch, rows) +
                          (size_t)slice * SLICE_FLOATS +
                          (size_t)(for_da ? 0 : IN_FEATURES) * RANK;
#if GRAD_EDGE
    /* past the end: read the last columns, store nothing */
    const int live = col < width;
    col = min(col, width - GRAD_VEC);
#endif

    float acc[GRAD_VEC][RANK];
#pragma unroll
    for (int c = 0; c < GRAD_VEC; c++) {
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            acc[c][j] = 0.0f;
        }
    }
    /* Chunks are whole batches, so the next batch always starts
     * GRAD_BATCH rows on, in this chunk or the next. */
    grad_vec_t xn[GRAD_BATCH];
    grad_fetch(xn, src, width, col, mbeg, mend);
    for (int m0 = mbeg; m0 < mend; m0 += GRAD_CHUNK) {
        const int n = min(GRAD_CHUNK, mend - m0);
        barrier(CLK_LOCAL_MEM_FENCE); /* the last chunk is read */
        grad_stage(gl, factor, m0, n, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int mm = 0; mm < n; mm += GRAD_BATCH) {
            grad_vec_t xv[GRAD_BATCH];
#pragma unroll
            for (int b = 0; b < GRAD_BATCH; b++) {
                xv[b] = xn[b];
            }
            grad_fetch(xn, src, width, col, m0 + mm + GRAD_BATCH, mend);
            grad_batch(acc, gl, xv, mm, n);
        }
    }

#if GRAD_EDGE
    if (!live) {
        return;
    }
#endif
    out += (size_t)col * RANK;
#pragma unroll
    for (int c = 0; c < GRAD_VEC; c++) {
#if RANK % 4 == 0
#pragma unroll
        for (int j = 0; j < RANK; j += 4) {
            vstore4((float4)(acc[c][j], acc[c][j + 1], acc[c][j + 2],
                             acc[c][j + 3]),
                    0, out + c * RANK + j);
        }
#else
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            out[c * RANK + j] = acc[c][j];
        }
#endif
    }
}
