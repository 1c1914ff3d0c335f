/* layernorm_backward.cl - dx of y = (x - mean) / sqrt(var + EPS) * gamma +
 * beta, row by row, and the partial sums of dgamma and dbeta over blocks
 * of rows (norm_backward.cl; norm_backward_reduce.cl adds them up).
 *
 * Storage: storage_DTYPE.cl. Macros: row_reduce.cl's, EPS, norm_scale.cl's
 * and norm_backward.cl's (NORM_CENTRED 1).
 *
 * Buffers: x, dy, dx (rows x FEATURES), gamma (FEATURES); scratch, the
 * partial rows (float32), NULL when neither dgamma nor dbeta is wanted.
 * Launch: local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE, BLOCKS *
 * ROWS_PER_GROUP). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "norm_backward.cl"

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void layernorm_backward(const int rows, const __global storage_t *restrict x,
                        const __global storage_t *restrict gamma,
                        const __global storage_t *restrict dy,
                        __global storage_t *restrict dx,
                        __global float *restrict scratch)
{
    __local sumv part[NB_PART];
    __local floatv stage[NB_STAGE];
    __local uint4 ahead[NB_AHEAD_CHUNKS];
    norm_backward_rows(rows, x, gamma, dy, dx, scratch, part, stage,
                       (__local storage_t *)ahead);
}
