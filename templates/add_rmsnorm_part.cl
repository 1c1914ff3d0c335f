/* add_rmsnorm_part.cl - add_rmsnorm's split path, first launch: each
 * chunk's sum = x + residual stored, and the sum of squares of the sum as
 * stored into scratch (rmsnorm_split.cl). Each item reads back the
 * elements it stored (its own writes: in order).
 *
 * Buffers: x, residual (rows x FEATURES), sum (rows x FEATURES, may be
 * residual: each item reads its elements of residual before it writes the
 * same ones of sum); scratch (rows x SPLIT_GROUPS floats).
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "rmsnorm_split.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void add_rmsnorm_part(const __global storage_t *x,
                      const __global storage_t *residual,
                      __global storage_t *sum, __global float *scratch)
{
    __local float part[SPLIT_WG];
    const uint chunk = get_group_id(0);
    const size_t base = get_group_id(1) * FEATURES;
    for (uint j = chunk * SPLIT_VECS + get_local_id(0); j < chunk_end(chunk);
         j += SPLIT_WG) {
        const size_t at = base + j * VEC;
        storev(sum, at, loadv(x, at) + loadv(residual, at));
    }
    rmsnorm_split_part(sum, scratch, part);
}
