/* lora_bwd_dx_wgmma.cl - lora_bwd_dx_mma's GEMM on warpgroups (compute
 * capability 9.0): wgmma_tiles.cl with dY for X, G for T, W^T for W and
 * A^T for B, W and A read where they lie (see lora_bwd_dx_mma.cl). Local
 * size (WG_THREADS, 1), WG_M x WG_N of dX per work-group. */
#include "lora_bwd_common.cl"
#include "wgmma_tiles.cl"

/* Where WG_TMA's tensor maps lie in the scratch: past the partials, where
 * lora_bwd_wt's copy would start (the tensor cores read W as it lies),
 * on a 64-byte line. */
#define LORA_BWD_WG_MAPS(scratch, rows)                                   \
    ((__global ulong *)((scratch) +                                       \
                        ((SCRATCH_WT(scratch, rows) - (scratch) + 15) &   \
                         ~(size_t)15)))

__kernel __attribute__((reqd_work_group_size(WG_THREADS, 1, 1))) void
lora_bwd_dx_wgmma(const int rows, const __global storage_t *restrict dy,
                  const __global storage_t *restrict w,
                  const __global storage_t *restrict a,
                  __global storage_t *restrict dx,
                  __global float *restrict scratch)
{
    /* wgmma's swizzles follow address bits: stages on 1024-byte lines */
    __local ushort tiles[WG_LOCAL_HALVES] __attribute__((aligned(1024)));
    wg_tiles((uint)rows, dy, w, a, dx, SCRATCH_G(scratch, rows),
             LORA_BWD_WG_MAPS(scratch, rows), tiles, 1, 0);
}
