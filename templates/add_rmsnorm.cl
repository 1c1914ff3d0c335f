/* add_rmsnorm.cl - the residual add fused into the next norm: sum = x +
 * residual, stored in the storage type, then y = rmsnorm(sum as stored) *
 * gamma, row by row (rmsnorm_row.cl).
 *
 * Storage: storage_DTYPE.cl. Macros: row_reduce.cl's, EPS and
 * norm_scale.cl's, as rmsnorm.cl.
 *
 * Buffers: x, residual (rows x FEATURES), gamma (FEATURES), sum and y
 * (rows x FEATURES); sum may be residual (each item reads its elements of
 * residual before it writes the same ones of sum). Launch as rmsnorm.cl's. */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "rmsnorm_row.cl"

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void add_rmsnorm(const int rows, const __global storage_t *x,
                 const __global storage_t *residual,
                 const __global storage_t *gamma, __global storage_t *sum,
                 __global storage_t *y)
{
    __local float part[ROWS_PER_GROUP * WG_SIZE];
    const size_t base = row_base(rows);
    if (row_live(rows)) {
        for (uint j = get_local_id(0); j < NVEC; j += WG_SIZE) {
            const size_t at = base + j * VEC;
            storev(sum, at, loadv(x, at) + loadv(residual, at));
        }
    }
    /* The rows past the end read the last row's sum: stored by an item of
     * this work-group, which the barrier makes visible to all of them. */
    barrier(CLK_GLOBAL_MEM_FENCE);
    rmsnorm_rows(rows, sum, gamma, y, part);
}
