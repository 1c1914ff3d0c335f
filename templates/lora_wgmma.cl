/* lora_wgmma.cl - lora_wgmma: the GEMM on warpgroups over all of K (see
 * wgmma_tiles.cl). */
#include "lora_common.cl"
#include "lora_wg_maps.cl"
#include "wgmma_tiles.cl"

__kernel __attribute__((reqd_work_group_size(WG_THREADS, 1, 1))) void
lora_wgmma(const int rows, const __global storage_t *restrict x,
           const __global storage_t *restrict w,
           const __global storage_t *restrict b,
           __global storage_t *restrict y, __global float *restrict scratch)
{
    /* wgmma's swizzles follow address bits: stages on 1024-byte lines */
    __local ushort tiles[WG_LOCAL_HALVES] __attribute__((aligned(1024)));
    wg_tiles((uint)rows, x, w, b, y, scratch, LORA_WG_MAPS(scratch, rows, 1),
             tiles, 1, 0);
}
