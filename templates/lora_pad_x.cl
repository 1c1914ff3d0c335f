/* lora_pad_x.cl - X's rows into the scratch, padded to K_PADDED
 * elements, for lora_main_padded (see padded.cl). */
#include "lora_common.cl"
#include "padded.cl"

#if !defined(PAD_THREADS) || !PADS_X
#error "lora_pad_x.cl: the plan must define PAD_THREADS, and K must need it"
#endif

/* Work-item (i, row): 4 elements of the row from column 4 * i. */
__kernel __attribute__((reqd_work_group_size(PAD_THREADS, 1, 1)))
void lora_pad_x(const int rows, const __global storage_t *restrict x,
                __global float *restrict scratch)
{
    __global storage_t *xp =
        (__global storage_t *)(scratch + PADDED_X_AT(rows));
    pad_row4(xp, x, IN_FEATURES, K_PADDED, get_global_id(1),
             get_global_id(0) * 4);
}
