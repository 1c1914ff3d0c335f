/* lora_wgmma_split.cl - lora_wgmma over slices of K (up to SPLIT_K), for
 * the plan's split path on warpgroups (see wgmma_tiles.cl's
 * wg_tiles). */
#include "lora_common.cl"
#include "lora_wg_maps.cl"
#include "wgmma_tiles.cl"

#if SPLIT_K < 2
#error "lora_wgmma_split.cl: a split K needs SPLIT_K > 1"
#endif

__kernel __attribute__((reqd_work_group_size(WG_THREADS, 1, 1))) void
lora_wgmma_split(const int rows, const __global storage_t *restrict x,
                 const __global storage_t *restrict w,
                 const __global storage_t *restrict b,
                 __global storage_t *restrict y,
                 __global float *restrict scratch)
{
    /* wgmma's swizzles follow address bits: stages on 1024-byte lines */
    __local ushort tiles[WG_LOCAL_HALVES] __attribute__((aligned(1024)));
    /* The plan launches as many slices (up to SPLIT_K) of WG_COL_TILES
     * work-groups along 0 as the band of rows takes. */
    const uint slices = get_num_groups(0) / WG_COL_TILES;
    wg_tiles((uint)rows, x, w, b, y, scratch,
             LORA_WG_MAPS(scratch, rows, slices), tiles, slices,
             get_group_id(0) / WG_COL_TILES);
}
