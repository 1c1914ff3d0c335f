/* lora_bwd_grad.cl - dA = X^T*G and dB^T = dY^T*(SCALE*T), or their
 * partial sums over slices of GRAD_ROWS rows, after lora_bwd_tg (see
 * lora_bwd_common.cl). Reads X and dY once each.
 *
 * Plan: GRAD_THREADS work-items per work-group (1-D), GRAD_VEC (1, 2 or
 * 4, divides K and N) columns per work-item, one load of X (dY) a row.
 *
 * Work-group (c, s) takes a strip of GRAD_STRIP (32) columns, strip c of
 * X for c < GRAD_STRIPS_K (dA), else of dY (dB), and the rows of slice
 * s: s * GRAD_ROWS .. + GRAD_ROWS. Work-item lid is
 *   cl = lid % GRAD_CL: its GRAD_VEC columns (a warp reads whole 32-column
 *        pieces of its rows),
 *   rw = lid / GRAD_CL: its rows, rw + u * GRAD_RW of each step of
 *        GRAD_STEP rows (u < GRAD_U); past GRAD_RW: stages only.
 * Each keeps its GRAD_VEC x RANK sums in registers. The steps run from
 * the slice's last rows down to its first, the reverse of lora_bwd_tg's
 * order, so the first rows read may still be in the last-level cache. A
 * step's rows of G (or SCALE*T), the same for every work-item, go through
 * local memory, double-buffered (one barrier a step); each row of X (dY)
 * a work-item uses is replaced in its registers at once by the load of
 * the same row of the next step, so GRAD_U rows of loads are in flight
 * while a step computes. At the end the GRAD_RW sums of each output meet
 * in local memory, added in a fixed order, GRAD_RQ columns of the rank a
 * round.
 *
 * Where the rows make one slice (rows <= GRAD_ROWS) the sums go to dA
 * and dB (lora_bwd_reduce then has nothing to do); else to the slice's
 * partials.
 *
 * Local memory, in floats (the plan computes the same GRAD_LOCAL):
 *   GRAD_CL    = 32 / GRAD_VEC,  GRAD_RW = max(1, GRAD_THREADS / GRAD_CL)
 *   GRAD_LD    = RANK % 4 == 0: the least >= RANK with GRAD_LD % 8 == 4;
 *                else RANK
 *   GRAD_U     = the most of 8, 4, 2, 1 with 2 * GRAD_RW * GRAD_U * GRAD_LD
 *                <= 6144 (else 1)
 *   GRAD_STEP  = GRAD_RW * GRAD_U
 *   GRAD_RQ    = RANK % 4 == 0 && GRAD_RW * 32 * 4 <= 6144 ? 4 : 1
 *   GRAD_LOCAL = max(2 * GRAD_STEP * GRAD_LD, GRAD_RW * 32 * GRAD_RQ) */
#include "lora_bwd_common.cl"

#if TG_PARTS != 1
#error "lora_bwd_grad.cl: G and T whole (TG_PARTS 1)"
#endif

#if !defined(GRAD_THREADS) || !defined(GRAD_VEC) || !defined(X_ONCE)
#error "lora_bwd_grad.cl: the plan must define GRAD_THREADS, GRAD_VEC, X_ONCE"
#endif

/* ---- Derived sizes ---- */

#define GRAD_STRIP 32                   /* columns per work-group */
#define GRAD_CL (GRAD_STRIP / GRAD_VEC) /* work-items along the strip */
#if GRAD_THREADS >= GRAD_CL
#define GRAD_RW (GRAD_THREADS / GRAD_CL) /* work-items along the rows */
#else
#define GRAD_RW 1
#endif
#define GRAD_STRIPS_K CEIL_DIV(IN_FEATURES, GRAD_STRIP)
#define GRAD_STRIPS_N CEIL_DIV(OUT_FEATURES, GRAD_STRIP)
/* Rows of G in local memory, GRAD_LD floats apart: the rows a warp reads
 * at once (GRAD_LD / 4 odd) start in different banks. */
#if RANK % 4 == 0
#define GRAD_LD (RANK + (RANK % 8 <= 4 ? 4 - RANK % 8 : 12 - RANK % 8))
#else
#define GRAD_LD RANK
#endif
/* Rows per work-item per step: 8, 4, 2 or 1, the most whose two steps of G
 * take at most 6144 floats. */
#if 2 * GRAD_RW * 8 * GRAD_LD <= 6144
#define GRAD_U 8
#elif 2 * GRAD_RW * 4 * GRAD_LD <= 6144
#define GRAD_U 4
#elif 2 * GRAD_RW * 2 * GRAD_LD <= 6144
#define GRAD_U 2
#else
#define GRAD_U 1
#endif
#define GRAD_STEP (GRAD_RW * GRAD_U)
/* Rank columns per round of the final sums. */
#if RANK % 4 == 0 && GRAD_RW * GRAD_STRIP * 4 <= 6144
#define GRAD_RQ 4
#else
#define GRAD_RQ 1
#endif
#define GRAD_BUF (GRAD_STEP * GRAD_LD)
#define GRAD_RED (GRAD_RW * GRAD_STRIP * GRAD_RQ)
#define GRAD_LOCAL (2 * GRAD_BUF > GRAD_RED ? 2 * GRAD_BUF : GRAD_RED)
#if !defined(GRAD_LOCAL_BYTES) || GRAD_LOCAL * 4 != GRAD_LOCAL_BYTES
#error "lora_bwd_grad.cl: local memory differs from the plan's count"
#endif

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

/* A step's rows of G (SCALE*T) in flight: float4 units (RANK % 4 == 0)
 * or floats, GRAD_PF per work-item. */
#if RANK % 4 == 0
#define GRAD_UNITS (GRAD_STEP * RANK / 4)
typedef float4 grad_unit_t;
#else
#define GRAD_UNITS (GRAD_STEP * RANK)
typedef float grad_unit_t;
#endif
#define GRAD_PF CEIL_DIV(GRAD_UNITS, GRAD_THREADS)

/* Global -> registers: rows M .. M + GRAD_STEP of the rows x RANK matrix
 * FROM, zero past END. */
inline void grad_fetch_factor(grad_unit_t gn[GRAD_PF],
                              const __global float *from, const int m,
                              const int end, const int lid)
{
#pragma unroll
    for (int p = 0; p < GRAD_PF; p++) {
        const int u = lid + p * GRAD_THREADS;
#if RANK % 4 == 0
        const int row = m + u / (RANK / 4);
        gn[p] = (float4)(0.0f);
        if (u < GRAD_UNITS && row < end) {
            gn[p] = vload4(0, from + (size_t)row * RANK + u % (RANK / 4) * 4);
        }
#else
        const int row = m + u / RANK;
        gn[p] = 0.0f;
        if (u < GRAD_UNITS && row < end) {
            gn[p] = from[(size_t)row * RANK + u % RANK];
        }
#endif
    }
}

/* Registers -> local: what grad_fetch_factor loaded, rows GRAD_LD
 * apart. */
inline void grad_store_factor(__local float *gl,
                              const grad_unit_t gn[GRAD_PF], const int lid)
{
#pragma unroll
    for (int p = 0; p < GRAD_PF; p++) {
        const int u = lid + p * GRAD_THREADS;
        if (u < GRAD_UNITS) {
#if RANK % 4 == 0
            vstore4(gn[p], 0,
                    gl + u / (RANK / 4) * GRAD_LD + u % (RANK / 4) * 4);
#else
            gl[u / RANK * GRAD_LD + u % RANK] = gn[p];
#endif
        }
    }
}

/* acc[c][j] += XV[c] * GR[j]: one row. */
inline void grad_row(float acc[GRAD_VEC][RANK], const __local float *gr,
                     const grad_vec_t xv)
{
#if RANK % 4 == 0
#pragma unroll
    for (int j = 0; j < RANK; j += 4) {
        const float4 gv = vload4(0, gr + j);
#pragma unroll
        for (int c = 0; c < GRAD_VEC; c++) {
            const float xc = GRAD_VEC_AT(xv, c);
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
            acc[c][j] = fma(GRAD_VEC_AT(xv, c), gv, acc[c][j]);
        }
    }
#endif
}

/* Strip c = get_group_id(0) < GRAD_STRIPS_K: dA[k][j] over slice
 * s = get_group_id(1)'s rows of X and G; past them, dB^T[n][j] over its
 * rows of dY and SCALE*T. */
__kernel __attribute__((reqd_work_group_size(GRAD_THREADS, 1, 1)))
void lora_bwd_grad(const int rows, const __global storage_t *restrict x,
                   const __global storage_t *restrict dy,
                   __global storage_t *restrict da,
                   __global storage_t *restrict db,
                   __global float *restrict scratch)
{
    __local float gl[GRAD_LOCAL] __attribute__((aligned(16)));
    const int lid = get_local_id(0);
    const int cl = lid % GRAD_CL;
    const int rw = lid / GRAD_CL;
    const int live = rw < GRAD_RW;
    /* with X_ONCE, dY's strips alone: lora_bwd_xpass computes dA */
    const int strip = get_group_id(0) + (X_ONCE ? GRAD_STRIPS_K : 0);
    const int slice = get_group_id(1);
    const int mbeg = slice * GRAD_ROWS;
    const int mend = min(rows, mbeg + GRAD_ROWS);

    /* dA: X's columns against G; dB: dY's against SCALE*T. */
    const int for_da = strip < GRAD_STRIPS_K;
    const __global storage_t *src = for_da ? x : dy;
    const int width = for_da ? IN_FEATURES : OUT_FEATURES;
    const __global float *factor =
        for_da ? SCRATCH_G(scratch, rows) : SCRATCH_T(scratch, rows);
    const int col0 = (for_da ? strip : strip - GRAD_STRIPS_K) * GRAD_STRIP;
    /* past the end of the row: read its last columns, store nothing */
    const int col = min(col0 + cl * GRAD_VEC, width - GRAD_VEC);

    float acc[GRAD_VEC][RANK];
#pragma unroll
    for (int c = 0; c < GRAD_VEC; c++) {
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            acc[c][j] = 0.0f;
        }
    }

    /* Steps from the top: only the first may be partial. */
    const int steps = CEIL_DIV(mend - mbeg, GRAD_STEP);
    int m = mbeg + (steps - 1) * GRAD_STEP;
    grad_vec_t xn[GRAD_U];
#pragma unroll
    for (int u = 0; u < GRAD_U; u++) {
        const int row = m + rw + u * GRAD_RW;
        xn[u] = (grad_vec_t)(0.0f);
        if (live && row < mend) {
            xn[u] = grad_loadv(src, (size_t)row * width + col);
        }
    }
    grad_unit_t gn[GRAD_PF];
    grad_fetch_factor(gn, factor, m, mend, lid);
    int buf = 0;
    for (; m >= mbeg; m -= GRAD_STEP) {
        __local float *g = gl + buf * GRAD_BUF;
        /* The buffer was last read two steps ago: a barrier since. */
        grad_store_factor(g, gn, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the next step's rows (the last step loads its own again) */
        const int next = m > mbeg ? m - GRAD_STEP : m;
        grad_fetch_factor(gn, factor, next, mend, lid);
        if (live) {
#pragma unroll
            for (int u = 0; u < GRAD_U; u++) {
                const grad_vec_t xv = xn[u];
                if (next < m) { /* a whole step: every row exists */
                    xn[u] = grad_loadv(
                        src, (size_t)(next + rw + u * GRAD_RW) * width + col);
                }
                grad_row(acc, g + (rw + u * GRAD_RW) * GRAD_LD, xv);
            }
        }
        buf ^= 1;
    }

    /* The GRAD_RW sums of each output, in order, GRAD_RQ rank columns a
     * round: output o < GRAD_STRIP * GRAD_RQ is column o / GRAD_RQ of the
     * strip, rank column j0 + o % GRAD_RQ (to dB: column o % GRAD_STRIP,
     * rank column j0 + o / GRAD_STRIP, so that consecutive work-items
     * store consecutive columns). */
    const int one = GRAD_SLICES(rows) == 1;
    __global float *part = SCRATCH_PARTIALS(scratch, rows) +
                           (size_t)slice * SLICE_FLOATS +
                           (size_t)(for_da ? 0 : IN_FEATURES) * RANK;
#pragma unroll
    for (int j0 = 0; j0 < RANK; j0 += GRAD_RQ) {
        barrier(CLK_LOCAL_MEM_FENCE); /* the last step or round is read */
        if (live) {
#pragma unroll
            for (int c = 0; c < GRAD_VEC; c++) {
                __local float *to =
                    gl + (rw * GRAD_STRIP + cl * GRAD_VEC + c) * GRAD_RQ;
#if GRAD_RQ == 4
                vstore4((float4)(acc[c][j0], acc[c][j0 + 1], acc[c][j0 + 2],
                                 acc[c][j0 + 3]),
                        0, to);
#else
                to[0] = acc[c][j0];
#endif
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int o = lid; o < GRAD_STRIP * GRAD_RQ; o += GRAD_THREADS) {
            const int oc = for_da || !one ? o / GRAD_RQ : o % GRAD_STRIP;
            const int oj = for_da || !one ? o % GRAD_RQ : o / GRAD_STRIP;
            const int n = col0 + oc;
            const int j = j0 + oj;
            if (n >= width) {
                continue;
            }
            float sum = 0.0f;
            for (int p = 0; p < GRAD_RW; p++) {
                sum += gl[(p * GRAD_STRIP + oc) * GRAD_RQ + oj];
            }
            grad_put(part, da, db, one, for_da, n, j, sum);
        }
    }
}
