/* layernorm_combine.cl - layernorm's split path, second launch: a row's
 * chunk statistics merged, the chunk's y = (x - mean) / sqrt(var + EPS) *
 * gamma + beta written (layernorm_split.cl). The work-groups take the
 * chunks backwards, the last row's last chunk first: those the first
 * launch read last, the likeliest still in the cache.
 *
 * Buffers: x (rows x FEATURES), gamma, beta (FEATURES), y (rows x
 * FEATURES); scratch (rows x SPLIT_GROUPS x 3 floats, layernorm_part's).
 * Launch: local (SPLIT_WG, 1), groups (SPLIT_GROUPS, rows). */
#include "storage_@dtype@.cl"

#include "row_reduce.cl"
#include "norm_scale.cl"
#include "layernorm_split.cl"

__kernel __attribute__((reqd_work_group_size(SPLIT_WG, 1, 1)))
void layernorm_combine(const int rows, const __global storage_t *x,
                       const __global storage_t *gamma,
                       const __global storage_t *beta, __global storage_t *y,
                       const __global float *scratch)
{
    __local float part_mean[SPLIT_WG];
    __local float2 part_dev[SPLIT_WG];
    const uint chunk = SPLIT_GROUPS - 1 - get_group_id(0);
    const size_t row = (size_t)rows - 1 - get_group_id(1);
    const size_t base = row * FEATURES;
    float mean0, c, r;
    const float s =
        split_stats(x, base, scratch + 3 * row * SPLIT_GROUPS, part_mean,
                    part_dev, &mean0, &c, &r);
    for (uint j = chunk * SPLIT_VECS + get_local_id(0); j < chunk_end(chunk);
         j += SPLIT_WG) {
        const floatv d = loadv(x, base + j * VEC) * s - mean0 - c;
        storev(y, base + j * VEC,
               d * r * loadv(gamma, j * VEC) + loadv(beta, j * VEC));
    }
}
