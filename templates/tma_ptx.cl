/* tma_ptx.cl - the tensor memory accelerator of compute capability 9.0
 * from OpenCL (sm_90 PTX): tensor maps written by the kernel itself, and
 * tiles loaded by them into local memory, counted on an mbarrier by
 * bytes (wgmma_ptx.cl's barriers).
 *
 * A tensor map is 128 bytes that the CUDA driver's cuTensorMapEncodeTiled
 * makes, which an OpenCL program cannot call. tma_map_2d writes the same
 * words (every field compared with the driver's, 580 series: bench/logs/
 * h200-tma/) for the kinds used here: two or three dimensions, 16-bit
 * elements, boxes whose rows are one 128-byte swizzle line, L2
 * promotion of 256 bytes, zeros past the edges.
 * Include after storage_DTYPE.cl. */

/* The map's code for the element type: f16 6, bf16 10. */
#if DTYPE_BF16
#define TMA_TYPE 10UL
#elif DTYPE_F16
#define TMA_TYPE 6UL
#else
#error "tma_ptx.cl: tensor maps of 16-bit elements only"
#endif

/* The last words of MAP (10 to 15: zeros), then the fences that make
 * its generic stores visible to this work-item's loads by the map. */
inline void tma_map_done(__global ulong *map)
{
    for (uint i = 10; i < 16; i++) {
        map[i] = 0;
    }
    asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
    asm volatile("{ .reg .u64 g; cvta.global.u64 g, %0; "
                 "fence.proxy.tensormap::generic.acquire.gpu [g], 128; }"
                 ::"l"(map)
                 : "memory");
}

/* MAP := the tensor map of the row-major matrix at ADDRESS: INNER
 * elements a row, OUTER rows, ROW_BYTES apart (a multiple of 16), read in
 * boxes of BOX_INNER (64: 128 bytes) x BOX_OUTER (at most 256). Written
 * by generic stores, then fenced so that this work-item's loads by the
 * map see them. */
inline void tma_map_2d(__global ulong *map, const __global void *address,
                       ulong inner, ulong outer, ulong row_bytes,
                       uint box_inner, uint box_outer)
{
    map[0] = (ulong)address;
    /* row stride / 16; L2 promotion 256 bytes (3); 128-byte swizzle (3);
     * the element type; 2 dimensions (1) */
    map[1] = (row_bytes >> 4) << 32 | 3UL << 17 | 3UL << 13 | TMA_TYPE << 7 |
             1UL << 4;
    map[2] = 0;
    map[3] = 0;
    map[4] = (outer - 1) << 32 | (inner - 1);
    map[5] = 0;
    map[6] = (ulong)(box_inner - 1) << 56;
    map[7] = box_outer - 1;
    map[8] = (ulong)box_inner * box_outer * 2; /* bytes a box */
    map[9] = 1024; /* the 128-byte swizzle's span: 8 lines */
    tma_map_done(map);
}

/* MAP := the tensor map of the three-dimensional array at ADDRESS:
 * INNER elements a row, MIDDLE rows STRIDE1 bytes apart, OUTER blocks of
 * them STRIDE2 bytes apart (multiples of 16 under 2^40), read in boxes
 * of BOX_INNER (64: 128 bytes) x BOX_MIDDLE (at most 256) x 1: zeros
 * past the rows of a block, not the next block's rows. The words differ
 * from tma_map_2d's in the rank, the second stride (word 2; the strides'
 * bits from 36 up in word 3), the third size (word 5) and the third box
 * size (word 7, byte 1: 0 for 1). */
inline void tma_map_3d(__global ulong *map, const __global void *address,
                       ulong inner, ulong middle, ulong outer, ulong stride1,
                       ulong stride2, uint box_inner, uint box_middle)
{
    map[0] = (ulong)address;
    map[1] = (stride1 >> 4 & 0xFFFFFFFFUL) << 32 | 3UL << 17 | 3UL << 13 |
             TMA_TYPE << 7 | 2UL << 4;
    map[2] = stride2 >> 4 & 0xFFFFFFFFUL;
    map[3] = (stride1 >> 36) << 32 | (stride2 >> 36) << 36;
    map[4] = (middle - 1) << 32 | (inner - 1);
    map[5] = outer - 1;
    map[6] = (ulong)(box_inner - 1) << 56;
    map[7] = box_middle - 1;
    map[8] = (ulong)box_inner * box_middle * 2;
    map[9] = 1024;
    tma_map_done(map);
}

/* The box at element (C_INNER, C_OUTER) of the matrix of MAP into DST
 * (aligned to 1024 bytes), its bytes counted on BAR. */
inline void tma_load_2d(__local ushort *dst, const __global ulong *map,
                        uint c_inner, uint c_outer, __local ulong *bar)
{
    asm volatile("{ .reg .u64 g; cvta.global.u64 g, %1; "
                 "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [g, {%2, %3}], [%4]; }"
                 ::"l"(dst), "l"(map), "r"(c_inner), "r"(c_outer), "l"(bar)
                 : "memory");
}

/* The box at element (C_INNER, C_MIDDLE, C_OUTER) of the array of MAP
 * (tma_map_3d) into DST (aligned to 1024 bytes), counted on BAR. */
inline void tma_load_3d(__local ushort *dst, const __global ulong *map,
                        uint c_inner, uint c_middle, uint c_outer,
                        __local ulong *bar)
{
    asm volatile("{ .reg .u64 g; cvta.global.u64 g, %1; "
                 "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [g, {%2, %3, %4}], [%5]; }"
                 ::"l"(dst), "l"(map), "r"(c_inner), "r"(c_middle),
                 "r"(c_outer), "l"(bar)
                 : "memory");
}

/* An arrival on BAR that also makes its phase wait for BYTES more bytes
 * of loads. */
inline void tma_bar_expect(__local ulong *bar, uint bytes)
{
    asm volatile("{ .reg .b64 state; "
                 "mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1; }"
                 ::"l"(bar), "r"(bytes)
                 : "memory");
}

/* The compute unit this work-item runs on. */
inline uint tma_unit(void)
{
    uint id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}
