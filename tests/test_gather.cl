/* test_gather: the tests' op of two runtime sizes (batch, seq) and an
 * int32 buffer. y[b][s][:] = SCALE * table[ids[b][s]][:] + bias[b][:],
 * or bias[b][:] alone for an id outside [0, TABLE_ROWS).
 *
 * Work-group (g0, g1) holds ITEMS features of batch g0 / FEATURE_GROUPS
 * and TOKENS positions of it: the launch counts FEATURE_GROUPS groups
 * per batch in dimension 0 and ceil(seq / TOKENS) in dimension 1.
 *
 * Storage: storage_DTYPE.cl. Macros: FEATURES, TABLE_ROWS, SCALE (a float
 * literal), ITEMS, FEATURE_GROUPS. */

#include "storage_@dtype@.cl"

#if !defined(FEATURES) || !defined(TABLE_ROWS) || !defined(SCALE) ||         \
    !defined(ITEMS) || !defined(FEATURE_GROUPS)
#error "test_gather.cl: the plan defines FEATURES, TABLE_ROWS, SCALE, ITEMS and FEATURE_GROUPS"
#endif
__kernel void test_gather(int batch, int seq, __global const int *ids,
                          __global const storage_t *table,
                          __global const float *bias,
                          __global storage_t *y)
{
    int b = (int)get_group_id(0) / FEATURE_GROUPS;
    int d = ((int)get_group_id(0) % FEATURE_GROUPS) * ITEMS +
            (int)get_local_id(0);
    int s = (int)get_global_id(1);
    if (b >= batch || s >= seq || d >= FEATURES) {
        return;
    }
    size_t token = (size_t)b * seq + s;
    int id = ids[token];
    float v = bias[(size_t)b * FEATURES + d];
    if (id >= 0 && id < TABLE_ROWS) {
        v += SCALE * load1(table, (size_t)id * FEATURES + d);
    }
    store1(y, token * FEATURES + d, v);
}
