/* lora_bwd_wt.cl - W^T into the scratch for lora_bwd_dx (see
 * lora_bwd_common.cl): W is K x N row-major (the forward's layout), its
 * copy at SCRATCH_WT is N x K, so that lora_bwd_dx reads its W^T tiles
 * along K, whole rows of the tile at a time, and stores them to local
 * memory as they come (as lora_main does W), instead of gathering short
 * segments of W's rows and scattering them transposed.
 *
 * Work-group (c, b) moves the WT_TILE x WT_TILE block of W at rows
 * b * WT_TILE, columns c * WT_TILE through local memory: read along W's
 * rows, written along W^T's. Local size (WT_TILE, WT_STEP); the copy is
 * in storage_t, bit for bit. Launched only with INPUT_GRAD and HAS_BASE. */
#include "lora_bwd_common.cl"

#define WT_TILE 32
#define WT_STEP 8

__kernel __attribute__((reqd_work_group_size(WT_TILE, WT_STEP, 1)))
void lora_bwd_wt(const int rows, const __global storage_t *restrict w,
                 __global float *restrict scratch)
{
    __global storage_t *restrict wt =
        (__global storage_t *)SCRATCH_WT(scratch, rows);
    __local float tile[WT_TILE][WT_TILE + 1];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int n0 = get_group_id(0) * WT_TILE;
    const int k0 = get_group_id(1) * WT_TILE;
#pragma unroll
    for (int step = 0; step < WT_TILE / WT_STEP; step++) {
        const int i = ty + step * WT_STEP;
        const int k = k0 + i, n = n0 + tx;
        if (k < IN_FEATURES && n < OUT_FEATURES) {
            tile[i][tx] = load1(w, (size_t)k * OUT_FEATURES + n);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int step = 0; step < WT_TILE / WT_STEP; step++) {
        const int i = ty + step * WT_STEP;
        const int n = n0 + i, k = k0 + tx;
        if (n < OUT_FEATURES && k < IN_FEATURES) {
            store1(wt, (size_t)n * IN_FEATURES + k, tile[tx][i]);
        }
    }
}
