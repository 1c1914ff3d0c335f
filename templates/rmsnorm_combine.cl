/* rmsnorm_combine.cl - rmsnorm's split path, second launch: a row's sums
 * of squares added, the chunk's y = x / sqrt(mean(x^2) + EPS) * gamma
 * written (rmsnorm_split.cl).
 *
 * Buffers: x (rows x FEATURES), gamma (FEATURES), y (rows x FEATURES);
 * scratch (rows x SPLIT_GROUPS floats, rmsnorm_part's).
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "rmsnorm_split.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void rmsnorm_combine(const int rows, const __global storage_t *x,
                     const __global storage_t *gamma, __global storage_t *y,
                     const __global float *scratch)
{
    __local float part[SPLIT_WG];
    rmsnorm_split_out(rows, x, gamma, y, scratch, part);
}
