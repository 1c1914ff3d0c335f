/* lora_bwd_reduce.cl - dA and dB (+)= the sums of lora_bwd_grad's
 * partials, the last kernel of lora_backward's adapter gradients (see
 * lora_bwd_common.cl).
 *
 * Plan: REDUCE_THREADS work-items per work-group (1-D). No local
 * memory. */
#include "lora_bwd_common.cl"

#if !defined(REDUCE_THREADS) || !defined(X_ONCE)
#error "lora_bwd_reduce.cl: the plan must define REDUCE_THREADS, X_ONCE"
#endif

/* One work-item per element: e < K * RANK is dA's element e (k * RANK + j:
 * the partials' order, so the reads are coalesced); past it, e - K * RANK
 * is dB's element j * N + n, so that consecutive work-items store
 * consecutive columns of one row of dB (their partials, at n * RANK + j,
 * are RANK floats apart, read through the cache). The slices are summed
 * in order 0, 1, ...: the same bits on every run. The elements, (K + N)
 * * RANK, may pass 2^31: e and its offsets are size_t. */
__kernel __attribute__((reqd_work_group_size(REDUCE_THREADS, 1, 1)))
void lora_bwd_reduce(const int rows, __global storage_t *restrict da,
                     __global storage_t *restrict db,
                     const __global float *restrict scratch)
{
    const size_t e = get_global_id(0);
    const int slices = GRAD_SLICES(rows);
    if (slices == 1) {
        return; /* lora_bwd_grad wrote dA and dB */
    }
    const __global float *from = SCRATCH_PARTIALS(scratch, rows);
    __global storage_t *to;
    size_t at;
    /* e runs along dA's and dB's rows as they lie (lora_layout.cl); the
     * partials hold dA as K x r and dB^T as N x r */
    if (e < (size_t)IN_FEATURES * RANK) {
        if (X_ONCE) {
            return; /* lora_bwd_xsum wrote dA */
        }
#if WEIGHT_OUT_IN
        const int j = e / IN_FEATURES;
        const int k = e % IN_FEATURES;
        from += (size_t)k * RANK + j;
#else
        from += e;
#endif
        to = da;
        at = e;
    } else if (e < SLICE_FLOATS) {
        const size_t jn = e - (size_t)IN_FEATURES * RANK;
#if WEIGHT_OUT_IN
        from += (size_t)IN_FEATURES * RANK + jn;
#else
        const int j = jn / OUT_FEATURES;
        const int n = jn % OUT_FEATURES;
        from += (size_t)(IN_FEATURES + n) * RANK + j;
#endif
        to = db;
        at = jn;
    } else {
        return;
    }
    float sum = 0.0f;
    for (int s = 0; s < slices; s++) {
        sum += from[(size_t)s * SLICE_FLOATS];
    }
#if ACCUMULATE
    sum = load1(to, at) + sum;
#endif
    store1(to, at, sum);
}
