/* lora_mma_split.cl - lora_mma over slices of K (up to SPLIT_K), for the plan's
 * split path on tensor cores (see mma_tiles.cl's mma_tiles). */
#include "lora_common.cl"
#include "mma_tiles.cl"

#if SPLIT_K < 2
#error "lora_mma_split.cl: a split K needs SPLIT_K > 1"
#endif

__kernel __attribute__((reqd_work_group_size(MMA_THREADS, 1, 1))) void
lora_mma_split(const int rows, const __global storage_t *restrict x,
               const __global storage_t *restrict w,
               const __global storage_t *restrict b,
               __global storage_t *restrict y,
               __global float *restrict scratch)
{
    __local mma_local_t xs[MMA_STAGES * MMA_X_STAGE]
        __attribute__((aligned(16)));
    __local mma_local_t ws[MMA_STAGES * MMA_W_STAGE]
        __attribute__((aligned(16)));
    /* The plan launches as many slices (up to SPLIT_K) of MMA_COL_TILES
     * work-groups along 0 as the band of rows takes. */
    mma_tiles((uint)rows, x, w, b, y, scratch, xs, ws,
              get_num_groups(0) / MMA_COL_TILES,
              get_group_id(0) / MMA_COL_TILES);
}
