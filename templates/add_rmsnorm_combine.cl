/* add_rmsnorm_combine.cl - add_rmsnorm's split path, second launch:
 * rmsnorm_combine's on the sum that add_rmsnorm_part stored
 * (rmsnorm_split.cl).
 *
 * Buffers: sum (rows x FEATURES), gamma (FEATURES), y (rows x FEATURES);
 * scratch (rows x SPLIT_GROUPS floats, add_rmsnorm_part's).
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "rmsnorm_split.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void add_rmsnorm_combine(const int rows, const __global storage_t *sum,
                         const __global storage_t *gamma,
                         __global storage_t *y, const __global float *scratch)
{
    __local float part[SPLIT_WG];
    rmsnorm_split_out(rows, sum, gamma, y, scratch, part);
}
