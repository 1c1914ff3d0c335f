/* rmsnorm.cl - y = x / sqrt(mean(x^2) + EPS) * gamma, row by row.
 *
 * Storage: storage_DTYPE.cl. Macros: FEATURES, VEC, WG_SIZE,
 * ROWS_PER_GROUP, ROW_IN_REGISTERS, NVEC, SLOTS (row_reduce.cl); and
 *   EPS   added to the mean square (a float literal)
 * and norm_scale.cl's, for rows past float32's squares.
 *
 * Buffers: x (rows x FEATURES), gamma (FEATURES), y (rows x FEATURES).
 * Launch: local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE,
 * ceil(rows / ROWS_PER_GROUP) * ROWS_PER_GROUP). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "rmsnorm_row.cl"

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void rmsnorm(const int rows, const __global storage_t *x,
             const __global storage_t *gamma, __global storage_t *y)
{
    __local float part[ROWS_PER_GROUP * WG_SIZE];
    rmsnorm_rows(rows, x, gamma, y, part);
}
