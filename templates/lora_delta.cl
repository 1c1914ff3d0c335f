/* lora_delta.cl - base: false at few rows, in one launch: Y (+)= T*B with
 * T = SCALE*X*A computed in the same work-group (see lora_common.cl). */
#include "lora_common.cl"
#include "lora_store.cl"

#if !defined(DELTA_ROWS) || !defined(DELTA_THREADS)
#error "lora_delta.cl: the plan must define DELTA_ROWS and DELTA_THREADS"
#endif

/* A work-group takes DELTA_ROWS rows whole. Its work-items first split K,
 * VEC elements of each row of X and VEC rows of A each per step, every
 * item accumulating all DL_T values of T for its share of K; the shares
 * meet in local memory (below), and the group then writes its rows of Y,
 * VEC columns per work-item, with B in registers. Where the rows alone
 * make too few work-groups, the plan launches several along N: each takes
 * one slice of the columns, and computes its rows' T for itself. */
#define DL_T (DELTA_ROWS * RANK) /* values of T per work-group */
#define DL_STEP (DELTA_THREADS * VEC)
#define DL_K_STEPS CEIL_DIV(IN_FEATURES, DL_STEP)
/* The reduction: each of DL_T values has DELTA_THREADS partial sums,
 * stored [value][item]; DL_LANES consecutive work-items sum strided
 * stretches of one value's partials (conflict-free reads), and one
 * work-item per value sums those DL_LANES (rows padded by one float, so
 * that the values' rows fall in different banks). */
#define DL_LANES (DELTA_THREADS % 32 == 0 ? 32 : DELTA_THREADS)
#define DL_PART (DL_LANES + 1)
#if !defined(DELTA_LOCAL_BYTES) ||                                        \
    (DL_T * (DELTA_THREADS + DL_PART + 1)) * 4 != DELTA_LOCAL_BYTES
#error "lora_delta.cl: local memory differs from the plan's count"
#endif
#define DL_B_REGS (RANK <= 32)

/* VEC rows of A from row K on, RANK values each, into AV[c][j]. */
inline void delta_load_a(const __global storage_t *restrict a, const int k,
                         float av[VEC][RANK])
{
#if RANK % 4 == 0
#pragma unroll
    for (int c = 0; c < VEC; c++) {
#pragma unroll
        for (int j = 0; j < RANK; j += 4) {
            const float4 v = load4_step(a, A_AT(k + c, j), A_JSTEP);
            av[c][j] = v.s0;
            av[c][j + 1] = v.s1;
            av[c][j + 2] = v.s2;
            av[c][j + 3] = v.s3;
        }
    }
#else
#pragma unroll
    for (int c = 0; c < VEC; c++) {
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            av[c][j] = load1(a, A_AT(k + c, j));
        }
    }
#endif
}

__kernel __attribute__((reqd_work_group_size(DELTA_THREADS, 1, 1)))
void lora_delta(const int rows, const __global storage_t *restrict x,
                const __global storage_t *restrict a,
                const __global storage_t *restrict b,
                __global storage_t *restrict y)
{
    __local float partial[DL_T * DELTA_THREADS];
    __local float lanes[DL_T * DL_PART];
    __local float tl[DL_T];
    const int lid = get_local_id(0);
    const int row0 = get_group_id(1) * DELTA_ROWS;
    const int nr = min(rows - row0, DELTA_ROWS);

    float acc[DELTA_ROWS][RANK];
#pragma unroll
    for (int m = 0; m < DELTA_ROWS; m++) {
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            acc[m][j] = 0.0f;
        }
    }
    for (int s = 0; s < DL_K_STEPS; s++) {
        const int k = (s * DELTA_THREADS + lid) * VEC;
#if IN_FEATURES % DL_STEP != 0
        if (k >= IN_FEATURES) {
            break; /* VEC divides K: a step is in or out whole */
        }
#endif
        vecf_t xv[DELTA_ROWS];
#pragma unroll
        for (int m = 0; m < DELTA_ROWS; m++) {
            xv[m] = m < nr ? loadv(x, (size_t)(row0 + m) * IN_FEATURES + k)
                           : (vecf_t)0.0f;
        }
        float av[VEC][RANK];
        delta_load_a(a, k, av);
#pragma unroll
        for (int c = 0; c < VEC; c++) {
#pragma unroll
            for (int m = 0; m < DELTA_ROWS; m++) {
                const float xe = VEC_AT(xv[m], c);
#pragma unroll
                for (int j = 0; j < RANK; j++) {
                    acc[m][j] = fma(xe, av[c][j], acc[m][j]);
                }
            }
        }
    }

#pragma unroll
    for (int m = 0; m < DELTA_ROWS; m++) {
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            partial[(m * RANK + j) * DELTA_THREADS + lid] = acc[m][j];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int o = lid; o < DL_T * DL_LANES; o += DELTA_THREADS) {
        const int v = o / DL_LANES, lane = o % DL_LANES;
        float sum = 0.0f;
#pragma unroll
        for (int i = lane; i < DELTA_THREADS; i += DL_LANES) {
            sum += partial[v * DELTA_THREADS + i];
        }
        lanes[v * DL_PART + lane] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int v = lid; v < DL_T; v += DELTA_THREADS) {
        float sum = 0.0f;
#pragma unroll
        for (int lane = 0; lane < DL_LANES; lane++) {
            sum += lanes[v * DL_PART + lane];
        }
        tl[v] = SCALE * sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const int slice = CEIL_DIV(OUT_FEATURES / VEC, (int)get_num_groups(0)) * VEC;
    const int c0 = get_group_id(0) * slice;
    const int c_end = min(c0 + slice, OUT_FEATURES);
    for (int col = c0 + lid * VEC; col < c_end; col += DL_STEP) {
#if DL_B_REGS
        vecf_t bv[RANK];
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            bv[j] = loadv_step(b, B_AT(j, col), B_NSTEP);
        }
#endif
        for (int m = 0; m < nr; m++) {
            vecf_t yv = (vecf_t)0.0f;
#pragma unroll
            for (int j = 0; j < RANK; j++) {
#if DL_B_REGS
                yv = fma((vecf_t)tl[m * RANK + j], bv[j], yv);
#else
                yv = fma((vecf_t)tl[m * RANK + j],
                         loadv_step(b, B_AT(j, col), B_NSTEP), yv);
#endif
            }
            store_vec(y, (size_t)(row0 + m) * OUT_FEATURES + col, yv);
        }
    }
}
