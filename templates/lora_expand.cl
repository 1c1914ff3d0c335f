/* lora_expand.cl - Y (+)= T*B after lora_xa, for base: false (see
 * lora_common.cl). */
#include "lora_common.cl"
#include "lora_store.cl"

#if !defined(EXPAND_N) || !defined(EXPAND_ROWS) || !defined(EXPAND_VEC)
#error "lora_expand.cl: the plan must define EXPAND_N, EXPAND_ROWS, EXPAND_VEC"
#endif

/* exv_t: EXPAND_VEC columns of a row: VEC, or 8 halves on GPUs (16-byte
 * stores), or 8 or 16 on CPUs, whose compilers make SIMD of an item's own
 * vectors (see expand_vec in the plan). */
#if EXPAND_VEC == VEC
typedef vecf_t exv_t;
#define ex_load loadv
#define ex_store store_vec
#elif EXPAND_VEC == 8 || EXPAND_VEC == 16
#if EXPAND_VEC == 8
typedef float8 exv_t;
inline exv_t ex_load(const __global storage_t *p, size_t i)
{
    return load8(p, i);
}
inline void ex_put(__global storage_t *p, size_t i, exv_t v)
{
    store8(p, i, v);
}
#else
typedef float16 exv_t;
inline exv_t ex_load(const __global storage_t *p, size_t i)
{
    return (float16)(load8(p, i), load8(p, i + 8));
}
inline void ex_put(__global storage_t *p, size_t i, exv_t v)
{
    store8(p, i, v.lo);
    store8(p, i + 8, v.hi);
}
#endif
inline void ex_store(__global storage_t *y, size_t i, exv_t v)
{
#if ACCUMULATE
    ex_put(y, i, v + ex_load(y, i));
#else
    ex_put(y, i, v);
#endif
}
#else
#error "EXPAND_VEC must be VEC, 8 or 16"
#endif

/* EXPAND_VEC columns of row J of B from column COL: out_in's B, N x r,
 * gathered. */
#if !WEIGHT_OUT_IN
#define ex_load_b(b, j, col) ex_load((b) + (col), B_AT(j, 0))
#elif EXPAND_VEC == 1
#define ex_load_b(b, j, col) load1((b), B_AT(j, col))
#elif EXPAND_VEC == 2
#define ex_load_b(b, j, col) load2_step((b), B_AT(j, col), B_NSTEP)
#elif EXPAND_VEC == 4
#define ex_load_b(b, j, col) load4_step((b), B_AT(j, col), B_NSTEP)
#elif EXPAND_VEC == 8
#define ex_load_b(b, j, col)                                             \
    ((float8)(load4_step((b), B_AT(j, col), B_NSTEP),                    \
              load4_step((b), B_AT(j, (col) + 4), B_NSTEP)))
#else
#define ex_load_b(b, j, col)                                             \
    ((float16)(load4_step((b), B_AT(j, col), B_NSTEP),                   \
               load4_step((b), B_AT(j, (col) + 4), B_NSTEP),             \
               load4_step((b), B_AT(j, (col) + 8), B_NSTEP),             \
               load4_step((b), B_AT(j, (col) + 12), B_NSTEP)))
#endif

/* base: false after lora_xa or lora_xa_mma: Y (+)= T*B. Work-item l of a
 * work-group owns EXPAND_VEC columns and keeps their RANK x EXPAND_VEC
 * block of B in registers (for RANK <= 32; above, it reads B through the
 * cache); the group sums the XA_SPLIT partials of its EXPAND_ROWS rows of
 * T into local memory once, then writes one row of Y after another,
 * EXPAND_VEC-wide stores coalesced along N. */
#define EX_COLS (EXPAND_N * EXPAND_VEC)
#define EX_B_REGS (RANK <= 32)
/* Values of T per work-item in a whole block of rows, and whether their
 * partial sums fit in registers all at once (64 floats at most). */
#define EX_T_EACH (EXPAND_ROWS * RANK / EXPAND_N)
#define EX_T_UNROLL                                                      \
    ((EXPAND_ROWS * RANK) % EXPAND_N == 0 && EX_T_EACH * XA_SPLIT <= 64)
#if !defined(EXPAND_LOCAL_BYTES) ||                                       \
    EXPAND_ROWS * RANK * 4 != EXPAND_LOCAL_BYTES
#error "lora_expand.cl: local memory differs from the plan's count"
#endif

/* The first of the XA_SPLIT partial sums (RANK floats apart) of value O
 * of T, [row][rank], counting from row ROW0. */
inline const __global float *ex_t_part(const __global float *t, int row0,
                                       int o)
{
    return t + (size_t)(row0 + o / RANK) * (XA_SPLIT * RANK) + o % RANK;
}

__kernel __attribute__((reqd_work_group_size(EXPAND_N, 1, 1)))
void lora_expand(const int rows, const __global storage_t *restrict b,
                 __global storage_t *restrict y,
                 const __global float *restrict scratch)
{
    const __global float *restrict t = scratch; /* lora_xa's T */
    __local float tl[EXPAND_ROWS * RANK];
    const int lid = get_local_id(0);
    const int row0 = get_group_id(1) * EXPAND_ROWS;
    const int nr = min(rows - row0, EXPAND_ROWS);
    int col = get_group_id(0) * EX_COLS + lid * EXPAND_VEC;
#if OUT_FEATURES % EX_COLS != 0
    const int live = col < OUT_FEATURES;
    col = min(col, OUT_FEATURES - EXPAND_VEC);
#endif
#if EX_B_REGS
    /* B's loads first: they travel while T is summed. */
    exv_t bv[RANK];
#pragma unroll
    for (int j = 0; j < RANK; j++) {
        bv[j] = ex_load_b(b, j, col);
    }
#endif
    /* T's values of the group's rows, each the sum of its XA_SPLIT
     * partials (in order). In a whole block, where they fit in registers,
     * every partial of the item's values is loaded before the first is
     * added (a loop would wait out a latency per value). */
#if EX_T_UNROLL
    if (nr == EXPAND_ROWS) {
        float part[EX_T_EACH][XA_SPLIT];
#pragma unroll
        for (int i = 0; i < EX_T_EACH; i++) {
#pragma unroll
            for (int p = 0; p < XA_SPLIT; p++) {
                part[i][p] = ex_t_part(t, row0, lid + i * EXPAND_N)[p * RANK];
            }
        }
#pragma unroll
        for (int i = 0; i < EX_T_EACH; i++) {
            float sum = 0.0f;
#pragma unroll
            for (int p = 0; p < XA_SPLIT; p++) {
                sum += part[i][p];
            }
            tl[lid + i * EXPAND_N] = sum;
        }
    } else
#endif
    {
        for (int o = lid; o < nr * RANK; o += EXPAND_N) {
            float sum = 0.0f;
#pragma unroll
            for (int p = 0; p < XA_SPLIT; p++) {
                sum += ex_t_part(t, row0, o)[p * RANK];
            }
            tl[o] = sum;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#if OUT_FEATURES % EX_COLS != 0
    if (!live) {
        return;
    }
#endif
    for (int m = 0; m < nr; m++) {
        exv_t yv = (exv_t)0.0f;
#pragma unroll
        for (int j = 0; j < RANK; j++) {
#if EX_B_REGS
            yv = fma((exv_t)tl[m * RANK + j], bv[j], yv);
#else
            yv = fma((exv_t)tl[m * RANK + j],
                     ex_load_b(b, j, col), yv);
#endif
        }
        ex_store(y, (size_t)(row0 + m) * OUT_FEATURES + col, yv);
    }
}
