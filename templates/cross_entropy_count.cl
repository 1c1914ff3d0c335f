/* cross_entropy_count.cl - scratch[0] = the count of rows whose label is
 * not IGNORE_INDEX, for the mean: one work-group of RED_WG items, each
 * counting rows lid, lid + RED_WG, ..., then a tree in local memory
 * (integers: exact, in any order). Runs before the rows' kernels, which
 * divide the gradient by it.
 *
 * Buffers: labels (rows, int32); scratch.
 * Launch: local (RED_WG, 1), groups (1, 1). */
#include "cross_entropy_common.cl"

__kernel __attribute__((reqd_work_group_size(RED_WG, 1, 1)))
void cross_entropy_count(const int rows, const __global int *labels,
                         __global float *scratch)
{
    __local uint part[RED_WG];
    const uint lid = get_local_id(0);
    uint n = 0;
    for (int r = (int)lid; r < rows; r += RED_WG) {
        n += !label_ignored(labels[r]);
    }
    part[lid] = n;
    for (uint w = RED_WG / 2; w > 0; w /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < w) {
            part[lid] += part[lid + w];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        scratch[0] = (float)part[0];
    }
}
