/* attention_backward_tma.cl - the backward's tiles by the tensor memory
 * accelerator (compute capability 9.0; tma_ptx.cl): tensor maps of the
 * [batch][seq][heads][HEAD_DIM] buffers written by the kernels
 * themselves into the scratch past D, a slot per compute unit (the
 * words the same in every work-group of a launch), and tiles of 64 rows
 * of one head loaded by them as attention_wgmma_tiles.cl lays tiles out
 * (attention_backward_dkv_wgmma.cl's q and dO rows).
 *
 * Needs the plan's ABW_MAP_SLOTS; include after attention_wgmma_tiles.cl.
 * A launch's groups: dimension 1 batch * KV_HEADS. */
#include "tma_ptx.cl"

#if !defined(ABW_MAP_SLOTS)
#error "attention_backward_tma.cl: the plan's ABW_MAP_SLOTS"
#endif

#define ABW_MAP_WORDS 32 /* a slot: two maps of 16 words */

/* This work-item's slot of maps: past D's batch * seq_q * HEADS floats,
 * rounded up to 128 bytes. */
inline __global ulong *abw_maps(__global float *scratch, int seq_q)
{
    const long batch = get_num_groups(1) / KV_HEADS;
    const long d_floats = (batch * seq_q * HEADS + 31) / 32 * 32;
    return (__global ulong *)(scratch + d_floats) +
           (tma_unit() % ABW_MAP_SLOTS) * ABW_MAP_WORDS;
}

/* MAP := the map of X, [batch][SEQ][NHEADS][HEAD_DIM], in boxes of 64
 * elements of a head by 64 rows of one batch. */
inline void abw_map(__global ulong *map, const __global storage_t *x,
                    int seq, uint nheads)
{
    const ulong row = (ulong)nheads * HEAD_DIM;
    const ulong batch = get_num_groups(1) / KV_HEADS;
    tma_map_3d(map, x, row, (ulong)seq, batch, row * 2, row * 2 * seq, 64,
               64);
}

/* Rows [R0, R0 + 64) of head H of batch B by MAP into DST (zeros past
 * the batch's rows), counted on BAR. */
inline void abw_load_tile(__local ushort *dst, const __global ulong *map,
                          uint h, uint r0, uint b, __local ulong *bar)
{
#pragma unroll
    for (uint c = 0; c < HEAD_DIM / 64; c++) {
        tma_load_3d(dst + c * 64 * 64, map, h * HEAD_DIM + c * 64, r0, b,
                    bar);
    }
}
