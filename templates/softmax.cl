/* softmax.cl - y = exp(SCALE*x - m) / sum(exp(SCALE*x - m)), m the row's
 * largest SCALE*x, one row per WG_SIZE work-items (softmax_common.cl
 * says how the exponent is formed and the pairs kept).
 *
 * Buffers: x (rows x FEATURES), y (rows x FEATURES).
 * Launch: local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE,
 * ceil(rows / ROWS_PER_GROUP) * ROWS_PER_GROUP). */
#include "softmax_common.cl"

#if SHFL_PTX
/* The lanes of this work-item's warp that exist: a work-group of fewer
 * than 32 items, or a last warp cut short (WG_SIZE 16 x 3 rows), has
 * fewer, and shfl.sync must name only those. */
#define GROUP_ITEMS (WG_SIZE * ROWS_PER_GROUP)
inline uint warp_lanes(void)
{
#if GROUP_ITEMS % 32 == 0
    return 0xffffffffu;
#else
    const uint first = (get_local_id(1) * WG_SIZE + get_local_id(0)) & ~31u;
    const uint n = min(32u, (uint)GROUP_ITEMS - first);
    return n == 32 ? 0xffffffffu : (1u << n) - 1u;
#endif
}

/* Merges (m, s) over aligned groups of WIDTH lanes of a warp (a power of
 * two, at most 32), every lane taking the group's result: butterfly
 * shuffles, NVIDIA compute capability 7.0 and later. */
inline void warp_merge(float *m, float *s, const uint width)
{
    const uint lanes = warp_lanes();
    for (uint o = width / 2; o > 0; o >>= 1) {
        float m2, s2;
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;"
                     : "=f"(m2)
                     : "f"(*m), "r"(o), "r"(lanes));
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;"
                     : "=f"(s2)
                     : "f"(*s), "r"(o), "r"(lanes));
        merge_pair(m, s, m2, s2);
    }
}

/* Merges (m, s) over the items of this row: within each warp by
 * shuffles (a row of WG_SIZE <= 32 items is a group of one warp: work
 * groups are WG_SIZE x ROWS_PER_GROUP), then the warps' pairs through
 * local memory, merged by the first warp; every item takes the row's. */
inline void row_merge(__local float *pm, __local float *ps, uint lid,
                      float *m, float *s)
{
#if WG_SIZE <= 32
    (void)pm;
    (void)ps;
    (void)lid;
    warp_merge(m, s, WG_SIZE);
#else
#define ROW_WARPS (WG_SIZE / 32)
    warp_merge(m, s, 32);
    if (lid % 32 == 0) {
        pm[lid / 32] = *m;
        ps[lid / 32] = *s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 32) {
        float mw = lid < ROW_WARPS ? pm[lid] : NO_MAX;
        float sw = lid < ROW_WARPS ? ps[lid] : 0.0f;
        warp_merge(&mw, &sw, ROW_WARPS);
        if (lid == 0) {
            /* A slot of its own, past the warps'. */
            pm[WG_SIZE - 1] = mw;
            ps[WG_SIZE - 1] = sw;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *m = pm[WG_SIZE - 1];
    *s = ps[WG_SIZE - 1];
#undef ROW_WARPS
#endif
}
#else
/* Merges (m, s) over the items of this row in local memory. */
inline void row_merge(__local float *pm, __local float *ps, uint lid,
                      float *m, float *s)
{
    merge_pairs(pm, ps, lid, WG_SIZE, m, s);
}
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void softmax(const int rows, const __global storage_t *x,
             __global storage_t *y)
{
    __local float pm[ROWS_PER_GROUP][WG_SIZE];
    __local float ps[ROWS_PER_GROUP][WG_SIZE];
    const uint lid = get_local_id(0);
    const size_t base = row_base(rows);

    float m = NO_MAX;
    float s;
#if ROW_IN_REGISTERS
    floatv v[SLOTS];
    floatv sv = 0.0f;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] = H_SIGN * loadv(x, base + j * VEC);
        }
    }
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            const float mk = hmax(v[k]);
            if (EXP_SCALE * (mk - m) > RESCALE_ABOVE) {
                const float rescale = EXPS(m - mk);
                sv *= rescale;
#pragma unroll
                for (uint i = 0; i < k; i++) {
                    v[i] *= rescale;
                }
                m = mk;
            }
            v[k] = EXPS(v[k] - m);
            sv += v[k];
        }
    }
    s = hsum(sv);
    const float mine = m;
    row_merge(pm[get_local_id(1)], ps[get_local_id(1)], lid, &m, &s);
    if (!row_live(rows)) {
        return;
    }
    /* v holds exponentials relative to this item's reference. */
    const float f = EXPS(mine - m) / s;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            storev(y, base + j * VEC, v[k] * f);
        }
    }
#else
    s = stream_sum(x, base, lid, NVEC, WG_SIZE, &m);
    row_merge(pm[get_local_id(1)], ps[get_local_id(1)], lid, &m, &s);
    if (!row_live(rows)) {
        return;
    }
    stream_out(x, y, base, lid, NVEC, WG_SIZE, m, 1.0f / s);
#endif
}
