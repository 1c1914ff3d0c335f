/* lora_bwd_dx_mma.cl - dX = dY*W^T + G*A^T (see lora_bwd_common.cl) on
 * tensor cores: mma_tiles.cl's GEMM with dY for X, G (lora_bwd_tg's, in
 * the scratch) for T, W^T for W and A^T for B; the reduction runs over N
 * (MMA_K), then r. W and A are read where they lie: with in_out, W (K x
 * N) and A (K x r) are W^T and A^T stored n-major (MMA_W_NK), with out_in
 * (N x K, r x K) they are W^T and A^T as they are. Local size
 * (MMA_THREADS, 1), TILE_M x TILE_N of dX per work-group. */
#include "lora_bwd_common.cl"
#include "mma_tiles.cl"

__kernel __attribute__((reqd_work_group_size(MMA_THREADS, 1, 1))) void
lora_bwd_dx_mma(const int rows, const __global storage_t *restrict dy,
                const __global storage_t *restrict w,
                const __global storage_t *restrict a,
                __global storage_t *restrict dx,
                __global float *restrict scratch)
{
    __local mma_local_t xs[MMA_STAGES * MMA_X_STAGE]
        __attribute__((aligned(16)));
    __local mma_local_t ws[MMA_STAGES * MMA_W_STAGE]
        __attribute__((aligned(16)));
    mma_tiles((uint)rows, dy, w, a, dx, SCRATCH_G(scratch, rows), xs, ws, 1,
              0);
}
