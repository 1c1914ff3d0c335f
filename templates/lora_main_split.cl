/* lora_main_split.cl - lora_main over SPLIT_K slices of K, for the plan's
 * split path (see main_tiles.cl and lora_common.cl). */
#include "main_tiles.cl"

#if SPLIT_K < 2 || !HAS_BASE || XA_INLINE
#error "lora_main_split.cl: a split K needs SPLIT_K > 1, W and T from lora_xa"
#endif

__kernel
__attribute__((reqd_work_group_size(GEMM_THREADS_N, GEMM_THREADS_M, 1)))
void lora_main_split(const int rows, const __global storage_t *restrict x,
                     const __global storage_t *restrict w,
                     const __global storage_t *restrict b,
                     __global storage_t *restrict y,
                     __global float *restrict scratch)
{
    __local float as[AS_SIZE] __attribute__((aligned(16)));
    __local float bs[BS_SIZE] __attribute__((aligned(16)));
    main_tiles(rows, x, w, b, y, scratch, as, bs,
               get_num_groups(0) / COL_TILES, get_group_id(0) / COL_TILES, 0,
               IN_FEATURES, W_LD, VEC, GEMM_SW, WEIGHT_OUT_IN);
}
