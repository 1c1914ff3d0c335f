/* attention_tma_tiles.cl - tiles of a [batch][seq][heads][HEAD_DIM]
 * buffer loaded by the tensor memory accelerator (compute capability
 * 9.0; tma_ptx.cl) as attention_wgmma_tiles.cl lays tiles out: WG_KEYS
 * rows of one head, in blocks of 64 elements. The kernels write the
 * three-dimensional maps themselves into their scratch, a slot of two
 * maps per compute unit, the words the same in every work-group of a
 * launch. attention_wgmma_tma.cl loads its K and V tiles so,
 * attention_backward_dkv_wgmma.cl its q and dO rows.
 *
 * Needs the plan's ATM_MAP_SLOTS; include after attention_wgmma_tiles.cl.
 * A launch's groups: dimension 1 batch * KV_HEADS. */
#include "tma_ptx.cl"

#if !defined(ATM_MAP_SLOTS)
#error "attention_tma_tiles.cl: the plan's ATM_MAP_SLOTS"
#endif

#define ATM_MAP_WORDS 32 /* a slot: two maps of 16 words */

/* This work-item's slot of the slots from AT (128-byte aligned). */
inline __global ulong *atm_slot(__global float *at)
{
    return (__global ulong *)at +
           ATM_MAP_WORDS * (tma_unit() % ATM_MAP_SLOTS);
}

/* MAP := the map of X, [batch][SEQ][NHEADS][HEAD_DIM], in boxes of 64
 * elements of a head by WG_KEYS rows of one batch. */
inline void atm_map(__global ulong *map, const __global storage_t *x,
                    int seq, uint nheads)
{
    const ulong row = (ulong)nheads * HEAD_DIM;
    const ulong batch = get_num_groups(1) / KV_HEADS;
    tma_map_3d(map, x, row, (ulong)seq, batch, row * 2, row * 2 * seq, 64,
               WG_KEYS);
}

/* Rows [R0, R0 + WG_KEYS) of head H of batch B by MAP into DST (zeros
 * past the batch's rows), counted on BAR. A head of 80 or 96 takes its
 * second block as a whole box too: the box's elements past the head (the
 * next head's, or zeros past the row) land where no product reads. */
inline void atm_load(__local ushort *dst, const __global ulong *map, uint h,
                     uint r0, uint b, __local ulong *bar)
{
#pragma unroll
    for (uint c = 0; c < AW_LINE / 64; c++) {
        tma_load_3d(dst + c * WG_KEYS * 64, map, h * HEAD_DIM + c * 64, r0,
                    b, bar);
    }
}
