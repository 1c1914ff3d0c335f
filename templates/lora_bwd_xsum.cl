/* lora_bwd_xsum.cl - with X_ONCE, the sums of lora_bwd_xpass's partials
 * (see lora_bwd_common.cl): SCALE*T = SCALE * the sum of the blocks of
 * columns' partials, in block order, into the scratch's T for
 * lora_bwd_grad (dB) and lora_bwd_dx; dA (+)= the sum of the slices of
 * rows', in slice order: the same bits on every run.
 *
 * Plan: XSUM_THREADS work-items per work-group (1-D), XSUM_ROWS rows of T
 * per work-group (XSUM_ROWS * RANK <= XSUM_THREADS); dA's elements run
 * over the whole grid, as many rounds as they need. */
#include "lora_bwd_common.cl"

#if !defined(XSUM_THREADS) || !defined(XSUM_ROWS)
#error "lora_bwd_xsum.cl: the plan must define XSUM_THREADS, XSUM_ROWS"
#endif

__kernel __attribute__((reqd_work_group_size(XSUM_THREADS, 1, 1))) void
lora_bwd_xsum(const int rows, __global storage_t *restrict da,
              __global float *restrict scratch)
{
    const int lid = get_local_id(0);
    const int r = get_group_id(0) * XSUM_ROWS + lid / RANK;
    if (lid < XSUM_ROWS * RANK && r < rows) {
        const int j = lid % RANK;
        const __global float *tp = SCRATCH_XT(scratch, rows);
        float sum = 0.0f;
        for (int b = 0; b < XP_BLOCKS; b++)
            sum += tp[((size_t)b * rows + r) * RANK + j];
        SCRATCH_T(scratch, rows)[(size_t)r * RANK + j] = SCALE * sum;
    }
    const int slices = XP_SLICES(rows);
    const __global float *dap = SCRATCH_XDA(scratch, rows);
    /* e runs along dA as it lies (lora_layout.cl); the partials hold it
     * as K x r */
    for (size_t e = get_global_id(0); e < (size_t)IN_FEATURES * RANK;
         e += get_global_size(0)) {
#if WEIGHT_OUT_IN
        const size_t from = (e % IN_FEATURES) * RANK + e / IN_FEATURES;
#else
        const size_t from = e;
#endif
        float sum = 0.0f;
        for (int s = 0; s < slices; s++)
            sum += dap[(size_t)s * IN_FEATURES * RANK + from];
#if ACCUMULATE
        sum = load1(da, e) + sum;
#endif
        store1(da, e, sum);
    }
}
