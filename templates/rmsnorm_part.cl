/* rmsnorm_part.cl - rmsnorm's split path, first launch: each chunk's sum
 * of squares into scratch (rmsnorm_split.cl).
 *
 * Buffers: x (rows x FEATURES); scratch (rows x SPLIT_GROUPS floats).
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "rmsnorm_split.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void rmsnorm_part(const __global storage_t *x, __global float *scratch)
{
    __local float part[SPLIT_WG];
    rmsnorm_split_part(x, scratch, part);
}
