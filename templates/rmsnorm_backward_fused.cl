/* rmsnorm_backward_fused.cl - rmsnorm_backward.cl's dx and dgamma in one
 * launch: the blocks of rows, then dgamma from their partial sums
 * (norm_backward_fused.cl).
 *
 * Buffers: x, dy, dx (rows x FEATURES), gamma (FEATURES); dgamma
 * (FEATURES, float32); scratch, the partial rows (float32), and dgamma
 * NULL when dgamma is not wanted; sync, the barrier's words. Launch:
 * local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE, BLOCKS *
 * ROWS_PER_GROUP). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "norm_backward.cl"
#include "norm_backward_fused.cl"

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void rmsnorm_backward_fused(const int rows,
                            const __global storage_t *restrict x,
                            const __global storage_t *restrict gamma,
                            const __global storage_t *restrict dy,
                            __global storage_t *restrict dx,
                            __global float *restrict dgamma,
                            __global float *scratch,
                            volatile __global uint *sync)
{
    __local sumv part[NB_PART];
    __local floatv stage[NB_STAGE];
    __local uint4 ahead[NB_AHEAD_CHUNKS];
    __local float lanes[NB_LANES];
    norm_backward_rows(rows, x, gamma, dy, dx, scratch, part, stage,
                       (__local storage_t *)ahead);
    fused_sums(rows, scratch, dgamma, 0, sync, lanes);
}
