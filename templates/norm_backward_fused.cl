/* norm_backward_fused.cl - the one-launch path of the norms' backward
 * (rmsnorm_backward_fused.cl, layernorm_backward_fused.cl): the blocks of
 * rows as norm_backward.cl makes them, then, once every work-group has
 * written its partial rows (a barrier across the launch, grid_sync.cl:
 * the stub takes this path only while the BLOCKS work-groups fit the
 * device's compute units, one each), work-group b sums columns
 * [b * FUSED_COLS, (b + 1) * FUSED_COLS) of every partial row into
 * dgamma (and dbeta) in a fixed order: the same bits on every run. A
 * second launch would cost more than the sums.
 *
 * Each column's partial rows split over FUSED_LANES lanes of the group's
 * items (lane l takes rows l, l + FUSED_LANES, ...), whose sums lane 0
 * adds in lane order; a lane loads its rows FUSED_BATCH at a time,
 * dgamma's and dbeta's together. The sync buffer holds the barrier's two
 * words.
 * Include after norm_backward.cl. */
#include "grid_sync.cl"

#define GROUP_ITEMS (WG_SIZE * ROWS_PER_GROUP)
#define FUSED_COLS ((FEATURES + BLOCKS - 1) / BLOCKS)
#if GROUP_ITEMS >= FUSED_COLS
#define FUSED_LANES (GROUP_ITEMS / FUSED_COLS)
#else
#define FUSED_LANES 1
#endif
/* The lanes' sums of each output, before lane 0 adds them up. */
#define LANE_SUMS (FUSED_LANES > 1 ? FUSED_LANES * FUSED_COLS : 1)
#define NB_LANES ((1 + NORM_CENTRED) * LANE_SUMS)

/* Partial rows a lane loads before it adds them: the loads of a batch
 * are in flight together, where one at a time each would wait out the
 * latency of the cache. */
#define FUSED_BATCH 8

/* OUT[I] (+)= S; nothing when OUT is NULL (not wanted). */
inline void store_sum(__global float *out, uint i, float s)
{
    if (out != 0) {
#if ACCUMULATE
        s += out[i];
#endif
        out[i] = s;
    }
}

/* The sum of column COL of partial rows LANE, LANE + STEP, ... below
 * PARTS at P (dbeta's at P + BETA_PARTIALS in *BETA), in row order. */
inline float column_sum(const volatile __global float *p, uint col,
                        uint lane, uint step, uint parts, float *beta)
{
    float s = 0.0f, sb = 0.0f;
    for (uint r0 = lane; r0 < parts; r0 += FUSED_BATCH * step) {
        float g[FUSED_BATCH];
#if NORM_CENTRED
        float b[FUSED_BATCH];
#endif
#pragma unroll
        for (uint u = 0; u < FUSED_BATCH; u++) {
            const size_t at = (size_t)(r0 + u * step) * FEATURES + col;
            if (r0 + u * step < parts) {
                g[u] = p[at];
#if NORM_CENTRED
                b[u] = p[BETA_PARTIALS + at];
#endif
            }
        }
#pragma unroll
        for (uint u = 0; u < FUSED_BATCH; u++) {
            if (r0 + u * step < parts) {
                s += g[u];
#if NORM_CENTRED
                sb += b[u];
#endif
            }
        }
    }
    *beta = sb;
    return s;
}

/* DGAMMA (+)= the sum of the partial rows FROM over this group's
 * columns, and DBETA (+)= that of dbeta's (layernorm); LANES: NB_LANES
 * floats of local memory. Every item calls it; nothing is written to an
 * output that is NULL (not wanted). */
inline void fused_column_sums(const int rows, const __global float *from,
                              __global float *dgamma, __global float *dbeta,
                              __local float *lanes)
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
    float sb = 0.0f;
    float s = mine ? column_sum(p, first + col, lane, FUSED_LANES, parts, &sb)
                   : 0.0f;
    if (lane < FUSED_LANES) {
        lanes[lane * FUSED_COLS + col] = s;
#if NORM_CENTRED
        lanes[LANE_SUMS + lane * FUSED_COLS + col] = sb;
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0 && mine) {
        for (uint l = 1; l < FUSED_LANES; l++) {
            s += lanes[l * FUSED_COLS + col];
#if NORM_CENTRED
            sb += lanes[LANE_SUMS + l * FUSED_COLS + col];
#endif
        }
        store_sum(dgamma, first + col, s);
        store_sum(dbeta, first + col, sb);
    }
#else
    (void)lanes;
    for (uint col = item; col < FUSED_COLS; col += GROUP_ITEMS) {
        if (first + col < FEATURES) {
            float sb = 0.0f;
            const float s = column_sum(p, first + col, 0, 1, parts, &sb);
            store_sum(dgamma, first + col, s);
            store_sum(dbeta, first + col, sb);
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
    fused_column_sums(rows, scratch, dgamma, dbeta, lanes);
}
