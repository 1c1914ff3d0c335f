/* tma_ptx.cl - the tensor memory accelerator of compute capability 9.0
 * from OpenCL (sm_90 PTX): tensor maps written by the kernel itself, and
 * tiles loaded by them into local memory, counted on an mbarrier by
 * bytes (wgmma_ptx.cl's barriers).
 *
 * A tensor map is 128 bytes that the CUDA driver's cuTensorMapEncodeTiled
 * makes, which an OpenCL program cannot call. tma_map_2d writes the same
 * words (every field compared with the driver's, 580 series: bench/logs/
 * h200-tma/) for the one kind used here: two dimensions, 16-bit
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
    for (uint i = 10; i < 16; i++) {
        map[i] = 0;
    }
    asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
    asm volatile("{ .reg .u64 g; cvta.global.u64 g, %0; "
                 "fence.proxy.tensormap::generic.acquire.gpu [g], 128; }"
                 ::"l"(map)
                 : "memory");
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
