/* lora_main.cl - the register-tiled GEMM over [X | T] * [W ; B], all of K
 * per work-group (see main_tiles.cl). Launched when the plan has a base
 * product or computes X*A inline. */
#include "main_tiles.cl"

__kernel
__attribute__((reqd_work_group_size(GEMM_THREADS_N, GEMM_THREADS_M, 1)))
void lora_main(const int rows,
               const __global storage_t *restrict x,
#if HAS_BASE
               const __global storage_t *restrict w,
#endif
#if XA_INLINE
               const __global storage_t *restrict a,
#endif
               const __global storage_t *restrict b,
#if XA_INLINE
               __global storage_t *restrict y)
#else
               __global storage_t *restrict y,
               const __global float *restrict scratch)
#endif
{
    __local float as[AS_SIZE] __attribute__((aligned(16)));
    __local float bs[BS_SIZE] __attribute__((aligned(16)));
#if XA_INLINE
    __local float al[2 * A_ELEMS];
    __local float tl[RANK_CEIL * GEMM_LDA] __attribute__((aligned(16)));
#endif
    main_tiles(rows, x,
#if HAS_BASE
               w,
#endif
#if XA_INLINE
               a, b, y, al, tl,
#else
               /* one slice only reads the scratch (T) */
               b, y, (__global float *)scratch,
#endif
               as, bs, 1, 0, MAIN_K_END, IN_FEATURES, W_LD, VEC, GEMM_SW,
               WEIGHT_OUT_IN);
}
