/* cross_entropy_reduce.cl - loss[0] = the sum of the rows' losses (sum),
 * or that over the count of rows that count (mean; 0 / 0 = NaN when none
 * does, as in PyTorch): one work-group of RED_WG items, item i summing
 * rows i, i + RED_WG, ... in order (compensated), then a fixed tree: the
 * same bits on every run.
 *
 * Buffers: loss (1 float32); scratch (the count, the rows' losses).
 * Launch: local (RED_WG, 1), groups (1, 1). */
#include "cross_entropy_common.cl"

__kernel __attribute__((reqd_work_group_size(RED_WG, 1, 1)))
void cross_entropy_reduce(const int rows, __global float *loss,
                          const __global float *scratch)
{
    __local float part[RED_WG];
    const uint lid = get_local_id(0);
    float sum = 0.0f, err = 0.0f;
    for (int r = (int)lid; r < rows; r += RED_WG) {
        csum_add1(&sum, &err, scratch[LOSSES_AT + r]);
    }
    part[lid] = csum_total1(sum, err);
    for (uint w = RED_WG / 2; w > 0; w /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < w) {
            part[lid] += part[lid + w];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        loss[0] = REDUCE_MEAN ? part[0] / scratch[0] : part[0];
    }
}
