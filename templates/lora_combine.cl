/* lora_combine.cl - Y (+)= the sum of the SPLIT_K partial sums that the
 * split path's lora_main (or lora_mma_split) left in scratch (see
 * lora_common.cl). */
#include "lora_common.cl"
#include "lora_store.cl"
#include "split_k.cl"

#if !defined(SPLIT_K) || !defined(COMBINE_N)
#error "lora_combine.cl: the plan must define SPLIT_K and COMBINE_N"
#endif

/* A work-item sums VEC columns of one row (rows along dimension 1) over
 * the SLICES slices (at most SPLIT_K) the split path ran at these rows, in
 * slice order: the same bits whatever the timing. */
__kernel __attribute__((reqd_work_group_size(COMBINE_N, 1, 1)))
void lora_combine(const int rows, const int slices,
                  __global storage_t *restrict y,
                  const __global float *restrict scratch)
{
    const int col = (get_group_id(0) * COMBINE_N + get_local_id(0)) * VEC;
#if OUT_FEATURES % (COMBINE_N * VEC) != 0
    if (col >= OUT_FEATURES) {
        return;
    }
#endif
    const size_t at = (size_t)get_group_id(1) * OUT_FEATURES + col;
    vecf_t sum = PARTIAL_V(scratch + SPLIT_PART(rows, 0) + at);
#pragma unroll
    for (int s = 1; s < SPLIT_K; s++) {
        if (s < slices) {
            sum += PARTIAL_V(scratch + SPLIT_PART(rows, s) + at);
        }
    }
    store_vec(y, at, sum);
}
