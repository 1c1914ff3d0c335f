/* attention_backward_wgmma_common.cl - what attention_backward's kernels
 * on warpgroups (attention_backward_dkv_wgmma.cl, _dq_wgmma.cl) share
 * past attention_wgmma_tiles.cl: a work-group of WG_HALVES warpgroups,
 * each computing the scores whole and AW_O_COLS of the outputs' columns
 * (all of them at WG_HALVES 1, half at 2), and the stores of those
 * columns.
 *
 * Needs the plan's WG_HALVES and AW_O_COLS. */
#include "attention_backward_mma_common.cl"
#include "attention_wgmma_tiles.cl"

#if !defined(WG_HALVES) || AW_O_COLS * WG_HALVES != HEAD_DIM
#error "attention_backward_wgmma_common.cl: AW_O_COLS not the head's part"
#endif

#define AWB_ITEMS (WG_HALVES * AW_ITEMS) /* work-items a work-group */
#define AWB_OT (AW_O_COLS / 8) /* n8 tiles of a warpgroup's columns */

/* Work-item TID's warp within its warpgroup. */
inline uint awb_warp(uint tid)
{
    return (WG_HALVES > 1 ? tid % AW_ITEMS : tid) / 32;
}

/* The first of the head's columns work-item TID's warpgroup computes (0
 * where it computes them all). */
inline uint awb_col0(uint tid)
{
    return (WG_HALVES > 1 ? tid / AW_ITEMS : 0) * AW_O_COLS;
}

/* Where those columns start in a tile of WG_KEYS rows: a block of 64. */
inline uint awb_tile_part(uint tid)
{
    return awb_col0(tid) / 64 * WG_KEYS * 64;
}

/* Whether work-item TID copies tiles: the first warpgroup's do, for
 * both where two share a work-group. */
inline int awb_copies(uint tid)
{
    return WG_HALVES == 1 || tid < AW_ITEMS;
}

/* SCALE times this work-item's half H (row g or g + 8 of its warp's 16)
 * of the accumulators ACC of its warpgroup's columns into a row of OUT:
 * n8 tile d's columns 2 t and the next at AT + 8 d + 2 t. */
inline void awb_store_half(__global storage_t *out, size_t at,
                           float acc[AWB_OT][4], int h, uint t, float scale)
{
#pragma unroll
    for (int d = 0; d < AWB_OT; d++) {
        const size_t col = at + 8 * d + 2 * t;
        store1(out, col, scale * acc[d][2 * h]);
        store1(out, col + 1, scale * acc[d][2 * h + 1]);
    }
}
