/* lora_mma.cl - lora_mma: the tensor-core GEMM over all of K (see
 * mma_tiles.cl). */
#include "lora_common.cl"
#include "mma_tiles.cl"

__kernel __attribute__((reqd_work_group_size(MMA_THREADS, 1, 1))) void
lora_mma(const int rows, const __global storage_t *restrict x,
         const __global storage_t *restrict w,
         const __global storage_t *restrict b, __global storage_t *restrict y,
         __global float *restrict scratch)
{
    __local mma_local_t xs[MMA_STAGES * MMA_X_STAGE]
        __attribute__((aligned(16)));
    __local mma_local_t ws[MMA_STAGES * MMA_W_STAGE]
        __attribute__((aligned(16)));
    mma_tiles((uint)rows, x, w, b, y, scratch, xs, ws, 1, 0);
}
