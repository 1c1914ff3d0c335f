/* lora_pad_w.cl - W's rows, then B's, into the scratch, padded to
 * N_PADDED elements, for lora_main_padded (see padded.cl); out_in's W and
 * B transposed on the way. */
#include "lora_common.cl"
#include "padded.cl"

#if !defined(PAD_THREADS) || !PADS_W
#error "lora_pad_w.cl: the plan must define PAD_THREADS, and N must need it"
#endif

/* Work-item (i, j): 4 elements from column 4 * i of row j of W (zeros
 * from K to W_ROWS_PADDED), or of row j - W_ROWS_PADDED of B;
 * W_ROWS_PADDED + RANK rows along dimension 1. */
__kernel __attribute__((reqd_work_group_size(PAD_THREADS, 1, 1)))
void lora_pad_w(const int rows, const __global storage_t *restrict w,
                const __global storage_t *restrict b,
                __global float *restrict scratch)
{
    const int j = get_global_id(1);
    const int col = get_global_id(0) * 4;
#if WEIGHT_OUT_IN
    /* W N x K and B N x r: their columns become the copies' rows */
    if (j < W_ROWS_PADDED) {
        pad_col4((__global storage_t *)(scratch + PADDED_W_AT(rows)), w,
                 IN_FEATURES, j < IN_FEATURES ? OUT_FEATURES : 0, N_PADDED,
                 j, col);
    } else {
        pad_col4((__global storage_t *)(scratch + PADDED_B_AT(rows)), b,
                 RANK, OUT_FEATURES, N_PADDED, j - W_ROWS_PADDED, col);
    }
#else
    if (j < W_ROWS_PADDED) {
        pad_row4((__global storage_t *)(scratch + PADDED_W_AT(rows)), w,
                 j < IN_FEATURES ? OUT_FEATURES : 0, N_PADDED, j, col);
    } else {
        pad_row4((__global storage_t *)(scratch + PADDED_B_AT(rows)), b,
                 OUT_FEATURES, N_PADDED, j - W_ROWS_PADDED, col);
    }
#endif
}
