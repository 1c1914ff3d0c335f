/* norm_backward_reduce.cl - dgamma (and dbeta) (+)= the sums of the
 * partial rows of rmsnorm_backward or layernorm_backward (norm_backward.cl),
 * the second kernel of both.
 *
 * Each work-item takes VEC columns and one of RED_LANES lanes: the lane
 * sums partial rows lane, lane + RED_LANES, ... in order, then lane 0 adds
 * the lanes' sums in order: the same bits on every run. With ACCUMULATE
 * the sum is added to the output's old value.
 *
 * Buffers: dgamma (and dbeta), float32, FEATURES each, either may be NULL
 * (not wanted; the launch runs when one is given); scratch as the rows
 * kernel left it. Launch: local (RED_COLS, RED_LANES), global
 * (ceil(NVEC / RED_COLS) * RED_COLS, RED_LANES). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "norm_backward.cl"

#if !defined(RED_COLS) || !defined(RED_LANES) || !defined(ACCUMULATE)
#error "norm_backward_reduce.cl: a macro of the plan is missing"
#endif

/* The sum of PARTS partial rows from FROM at vector J, over this item's
 * lane: rows lane, lane + RED_LANES, ... */
inline floatv lane_sum(const __global float *from, uint parts, uint j)
{
    floatv sum = 0.0f;
    for (uint p = get_local_id(1); p < parts; p += RED_LANES) {
        sum += loadf(from, (size_t)p * FEATURES + j * VEC);
    }
    return sum;
}

/* Lane 0's: the sum of the lanes' sums in LANES (RED_LANES x RED_COLS),
 * in order. */
inline floatv lanes_sum(const __local floatv *lanes)
{
    const uint col = get_local_id(0);
    floatv sum = lanes[col];
    for (uint l = 1; l < RED_LANES; l++) {
        sum += lanes[l * RED_COLS + col];
    }
    return sum;
}

/* OUT (+)= SUM at vector J. */
inline void reduce_out(__global float *out, uint j, floatv sum)
{
#if ACCUMULATE
    sum = loadf(out, j * VEC) + sum;
#endif
    storef(out, j * VEC, sum);
}

/* One barrier, which every item meets unconditionally, and no return
 * after it: lane 0 of each column stores under a plain condition. (PoCL,
 * which runs a group's items as loops split at barriers, got barriers
 * under a condition, and returns after one, wrong here: outputs added
 * into several times.) */
__kernel __attribute__((reqd_work_group_size(RED_COLS, RED_LANES, 1)))
void norm_backward_reduce(const int rows, __global float *restrict dgamma,
#if NORM_CENTRED
                          __global float *restrict dbeta,
#endif
                          const __global float *restrict scratch)
{
    const uint parts = partial_rows(rows);
    const uint j = get_global_id(0);
    const bool in_row = j < NVEC;
    floatv sums[2] = {0.0f, 0.0f};
    if (in_row && dgamma != 0) {
        sums[0] = lane_sum(scratch, parts, j);
    }
#if NORM_CENTRED
    const bool beta = dbeta != 0;
    if (in_row && beta) {
        sums[1] = lane_sum(scratch + BETA_PARTIALS, parts, j);
    }
#endif
#if RED_LANES > 1
    __local floatv lanes[2][RED_LANES * RED_COLS];
    const uint at = get_local_id(1) * RED_COLS + get_local_id(0);
    lanes[0][at] = sums[0];
    lanes[1][at] = sums[1];
    barrier(CLK_LOCAL_MEM_FENCE);
    sums[0] = lanes_sum(lanes[0]);
    sums[1] = lanes_sum(lanes[1]);
#endif
    const bool store = get_local_id(1) == 0 && in_row;
    if (store && dgamma != 0) {
        reduce_out(dgamma, j, sums[0]);
    }
#if NORM_CENTRED
    if (store && beta) {
        reduce_out(dbeta, j, sums[1]);
    }
#endif
}
