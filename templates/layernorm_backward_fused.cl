/* layernorm_backward_fused.cl - layernorm_backward.cl's dx, dgamma and
 * dbeta in one launch: the blocks of rows, then dgamma and dbeta from
 * their partial sums (norm_backward_fused.cl).
 *
 * Buffers: x, dy, dx (rows x FEATURES), gamma (FEATURES); dgamma and
 * dbeta (FEATURES, float32, either NULL when not wanted); scratch, the
 * partial rows (float32), NULL when neither is wanted; sync, the
 * barrier's words. Launch: local (WG_SIZE, ROWS_PER_GROUP), global
 * (WG_SIZE, BLOCKS * ROWS_PER_GROUP). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "norm_backward.cl"
#include "norm_backward_fused.cl"

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void layernorm_backward_fused(const int rows,
                              const __global storage_t *restrict x,
                              const __global storage_t *restrict gamma,
                              const __global storage_t *restrict dy,
                              __global storage_t *restrict dx,
                              __global float *restrict dgamma,
                              __global float *restrict dbeta,
                              __global float *scratch,
                              volatile __global uint *sync)
{
    __local sumv part[NB_PART];
    __local floatv stage[NB_STAGE];
    __local uint4 ahead[NB_AHEAD_CHUNKS];
    __local float lanes[NB_LANES];
    norm_backward_rows(rows, x, gamma, dy, dx, scratch, part, stage,
                       (__local storage_t *)ahead);
    fused_sums(rows, scratch, dgamma, dbeta, sync, lanes);
}
