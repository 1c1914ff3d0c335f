/* layernorm_part.cl - layernorm's split path, first launch: each chunk's
 * rounded mean and sums of deviations into scratch (layernorm_split.cl).
 *
 * Buffers: x (rows x FEATURES); scratch (rows x SPLIT_GROUPS x 3 floats).
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "layernorm_split.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void layernorm_part(const __global storage_t *x, __global float *scratch)
{
    __local float part_mean[SPLIT_WG];
    __local float2 part_dev[SPLIT_WG];
    const uint chunk = get_group_id(0);
    const size_t at = get_group_id(1) * SPLIT_GROUPS + chunk;
    float2 sums;
    const float mean0 =
        split_two_pass(x, get_group_id(1) * FEATURES, chunk * SPLIT_VECS,
                       chunk_end(chunk), chunk_elements(chunk), 1.0f,
                       part_mean, part_dev, &sums);
    if (get_local_id(0) == 0) {
        scratch[3 * at] = mean0;
        scratch[3 * at + 1] = sums.x;
        scratch[3 * at + 2] = sums.y;
    }
}
