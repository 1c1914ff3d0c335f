/* norm_backward_fused.cl - the one-launch path of the norms' backward
 * (rmsnorm_backward_fused.cl, layernorm_backward_fused.cl): the blocks of
 * rows as norm_backward.cl makes them, then, once every work-group has
 * written its partial rows (a barrier across the launch, grid_sync.cl:
 * the stub takes this path only while the BLOCKS work-groups fit the
 * device's compute units, one each), work-group b sums columns
 * [b * FUSED_COLS, (b + 1) * FUSED_COLS) of every partial row into
 * dgamma (and dbeta) in a fixed order: the same bits on every run. A
 * second launch would cost more than the sums (bench/RESULTS.md, "The
 * norms' backward in one launch").
 *
 * Each column's partial rows split over FUSED_LANES lanes of the group's
 * items (lane l takes rows l, l + FUSED_LANES, ...), whose sums lane 0
 * adds in lane order. The sync buffer holds the barrier's two words.
 * Include after norm_backward.cl. */
#include "grid_sync.cl"

#define GROUP_ITEMS (WG_SIZE * ROWS_PER_GROUP)
#define FUSED_COLS ((FEATURES + BLOCKS - 1) / BLOCKS)
#if GROUP_ITEMS >= FUSED_COLS
#define FUSED_LANES (GROUP_ITEMS / FUSED_COLS)
#else
#define FUSED_LANES 1
#endif
/* The lanes' sums, before lane 0 adds them up. */
#define NB_LANES (FUSED_LANES > 1 ? FUSED_LANES * FUSED_COLS : 1)

/* OUT (+)= the sum of the partial rows FROM over this group's columns;
 * LANES: FUSED_LANES x FUSED_COLS floats of local memory. Every item
 * calls it; nothing is written when OUT is NULL (not wanted). */
inline void fused_column_sums(const int rows, const __global float *from,
                              __global float *out, __local float *lanes)
{
    const uint parts = partial_rows(rows);
    const uint item = get_local_id(1) * WG_SIZE + get_local_id(0);
    const uint first = get_group_id(1) * FUSED_COLS;
    /* The partial rows of other work-groups: read past the cache, which
     * does not see their writes. */
    const volatile __global float *p = from;
#if FUSED_LANES > 1
    const uint lane = item / FUSED_COLS, col = item % FUSED_COLS;
    const bool mine = lane < FUSED_LANES && first + col < FEATURES;
    float s = 0.0f;
    for (uint r = lane; mine && r < parts; r += FUSED_LANES) {
        s += p[(size_t)r * FEATURES + first + col];
    }
    if (lane < FUSED_LANES) {
        lanes[lane * FUSED_COLS + col] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0 && mine && out != 0) {
        for (uint l = 1; l < FUSED_LANES; l++) {
            s += lanes[l * FUSED_COLS + col];
        }
#if ACCUMULATE
        s += out[first + col];
#endif
        out[first + col] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* lanes read before they are reused */
#else
    (void)lanes;
    for (uint col = item; col < FUSED_COLS; col += GROUP_ITEMS) {
        if (first + col < FEATURES && out != 0) {
            float s = 0.0f;
            for (uint r = 0; r < parts; r++) {
                s += p[(size_t)r * FEATURES + first + col];
            }
#if ACCUMULATE
            s += out[first + col];
#endif
            out[first + col] = s;
        }
    }
#endif
}

/* After the rows: dgamma (and dbeta) from every group's partial rows.
 * Every item of every group calls it. */
inline void fused_sums(const int rows, __global float *scratch,
                       __global float *dgamma, __global float *dbeta,
                       volatile __global uint *sync, __local float *lanes)
{
    if (scratch == 0) {
        return; /* neither dgamma nor dbeta wanted: no partial rows */
    }
    grid_fence(); /* this item's partial sums, for every group */
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    grid_wait(sync, BLOCKS, get_local_id(1) * WG_SIZE + get_local_id(0));
    fused_column_sums(rows, scratch, dgamma, lanes);
#if NORM_CENTRED
    fused_column_sums(rows, scratch + BETA_PARTIALS, dbeta, lanes);
#else
    (void)dbeta;
#endif
}
