/* norm_scale.cl - the norms' second chance for rows whose float32 sums fail
 * (rmsnorm.cl, layernorm.cl; include it after row_reduce.cl).
 *
 * Squares overflow float32 from |x| = 2^64 (a row's sum of them sooner),
 * x - mean does near FLT_MAX, and squares under 2^-63 fall among the
 * subnormals (or to zero where a device flushes them). Rows like that are
 * rare, so the kernels sum as usual and only then look at the result: when
 * a row's sum of squares is not finite, or is tiny while EPS is too small
 * to hide the lost squares, the work-group reads its rows again at x * 2^k,
 * k chosen from the row's max |x| so that the largest scaled value lies in
 * [1, 2). Products by 2^k are exact, so the scaled sums round as the plain
 * ones would where those do not fail. Ordinary rows pay one compare per
 * row of the group.
 *
 * Macros (from the plan):
 *   NORM_TINY_SUMS  1 when EPS is so small (under 2^-96) that squares lost
 *                   among the subnormals would show: tiny sums rescale too
 *   NORM_SCALE_MAX  the largest k: EPS * 2^2k stays finite (at most 100)
 */
#if !defined(NORM_TINY_SUMS) || !defined(NORM_SCALE_MAX)
#error "norm_scale.cl: the plan must define NORM_TINY_SUMS and NORM_SCALE_MAX"
#endif

/* A barrier among the items of a row. With one item per row the scaled
 * pass runs per item (rows decide alone) and needs none. */
#if WG_SIZE > 1
#define ROW_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#else
#define ROW_BARRIER() ((void)0)
#endif

/* Whether a row whose sum of squares (or of squared deviations) is SUM
 * needs the scaled pass. NaN fails both compares and takes it too. */
inline bool sum_needs_scale(float sum)
{
#if NORM_TINY_SUMS
    return !(sum <= FLT_MAX) || sum < 0x1p-60f;
#else
    return !(sum <= FLT_MAX);
#endif
}

/* Whether the scaled pass runs for this item. With several items per row
 * it must be the same for the whole work-group (the pass has barriers):
 * after a row reduction every row's total sits at the head of its
 * partials, SUMS[r * STRIDE], for each item to read. */
inline bool group_needs_scale(const __local float *sums, uint stride,
                              float own)
{
#if WG_SIZE == 1
    (void)sums;
    (void)stride;
    return sum_needs_scale(own);
#else
    (void)own;
    bool any = false;
    for (uint r = 0; r < ROWS_PER_GROUP; r++) {
        any |= sum_needs_scale(sums[r * stride]);
    }
    return any;
#endif
}

/* row_max(part, lid, v): the max of v over the items of this row. */
ROW_REDUCTION(row_max, float, MAX2)

/* The largest |x| of this item's share of the row. */
inline float item_max_abs(const __global storage_t *x, size_t base, uint lid)
{
    floatv m = 0.0f;
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        m = MAX2(m, fabs(loadv(x, base + j * VEC)));
    }
    return hmax(m);
}

/* 2^-k for the row's max |x| M: M * 2^-k in [1, 2). k stays at most 125,
 * so that 2^-k, and a factor r * 2^-k with r >= 1/2, are normal; and at
 * least -NORM_SCALE_MAX (an all-zero row takes that end). */
inline float norm_scale(float m)
{
    const int k = clamp(ilogb(m), -NORM_SCALE_MAX, 125);
    return as_float((uint)(127 - k) << 23);
}
