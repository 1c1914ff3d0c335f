/* lora_decode_sum.cl - after lora_decode_split: Y
 * (+)= the sum of its DSUM_SLICES partial sums of X*W + T*B, with T =
 * SCALE * the sum of its partial sums of X*A (lora_decode_part.cl).
 * Slices are summed in order: the same bits whatever the timing. A
 * work-item takes VEC columns of one row, rows along dimension 1; each
 * work-group sums its row's T first. Local size (DSUM_N, 1). */
#include "lora_common.cl"
#include "lora_store.cl"
#include "lora_decode_part.cl"

#if !defined(DSUM_N)
#error "lora_decode_sum.cl: the plan must define DSUM_N"
#endif

__kernel __attribute__((reqd_work_group_size(DSUM_N, 1, 1)))
void lora_decode_sum(const int rows, const __global storage_t *restrict b,
                     __global storage_t *restrict y,
                     const __global float *restrict scratch)
{
    __local float t[RANK];
    const size_t row = get_group_id(1);
    int col = (get_group_id(0) * DSUM_N + get_local_id(0)) * VEC;
#if OUT_FEATURES % (DSUM_N * VEC) != 0
    /* Past the last column: the last columns' loads, never stored. */
    const bool live = col < OUT_FEATURES;
    col = min(col, OUT_FEATURES - VEC);
#endif
    const size_t at = row * OUT_FEATURES + col;
#if DSUM_SLICES <= 8
    /* Few slices: their loads travel while T is summed. */
    vecf_t part[DSUM_SLICES];
#pragma unroll
    for (int s = 0; s < DSUM_SLICES; s++) {
        part[s] = PARTIAL_V(scratch + DSUM_PART(rows, s) + at);
    }
#endif
    for (int j = get_local_id(0); j < RANK; j += DSUM_N) {
        float sum = 0.0f;
        for (int s = 0; s < DSUM_SLICES; s++) {
            sum += scratch[DSUM_TPART(rows, s) + row * RANK + j];
        }
        t[j] = SCALE * sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#if OUT_FEATURES % (DSUM_N * VEC) != 0
    if (!live) {
        return;
    }
#endif
#if DSUM_SLICES <= 8
    vecf_t sum = part[0];
#pragma unroll
    for (int s = 1; s < DSUM_SLICES; s++) {
        sum += part[s];
    }
#else
    vecf_t sum = PARTIAL_V(scratch + DSUM_PART(rows, 0) + at);
    for (int s = 1; s < DSUM_SLICES; s++) {
        sum += PARTIAL_V(scratch + DSUM_PART(rows, s) + at);
    }
#endif
    for (int j = 0; j < RANK; j++) {
        sum += t[j] * loadv_step(b, B_AT(j, col), B_NSTEP);
    }
    store_vec(y, at, sum);
}
