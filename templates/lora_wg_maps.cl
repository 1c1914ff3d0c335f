/* lora_wg_maps.cl - where lora_wgmma's and lora_wgmma_split's tensor
 * maps (wgmma_tiles.cl's WG_TMA) lie in the scratch: past T's partial
 * sums (rounded up to 4 floats) and the split path's SLICES slices of Y
 * (none at 1), on a 64-byte line. Include after lora_common.cl. */
#define LORA_WG_MAPS(scratch, rows, slices)                                \
    ((__global ulong *)((scratch) +                                        \
                        (((((size_t)(rows) * (XA_SPLIT * RANK) + 3) &      \
                           ~(size_t)3) +                                   \
                          ((slices) > 1 ? (size_t)(slices) * (rows) *      \
                                              OUT_FEATURES                 \
                                        : 0) +                             \
                          15) &                                            \
                         ~(size_t)15)))
