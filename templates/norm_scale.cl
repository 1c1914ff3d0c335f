/* norm_scale.cl - the norms' sums at a power-of-two scale (rmsnorm.cl,
 * layernorm.cl; include it after row_reduce.cl, with EPS defined).
 *
 * In float32, squares overflow from |x| = 2^64 (a row's sum of them
 * sooner), x - mean near FLT_MAX, and squares under 2^-63 fall among the
 * subnormals (or to zero where a GPU flushes them) while eps may be as
 * small as 2^-126. So the norms work on x * 2^k, k chosen from max |x|
 * so that the largest scaled value lies in [1, 2): every product by 2^k
 * is exact (but for values far below the largest, which count for
 * nothing beside it), and the sums take the roundings they take on x.
 * eps becomes
 * EPS * 2^2k. k stays within [SCALE_MIN, SCALE_MAX]: 2^-126 is the
 * smallest normal power of two (|x| * 2^-126 < 4), and from SCALE_MAX
 * (rows of tiny values) EPS * 2^2k is 2^59 to 2^62, beside which the
 * row's own scaled squares, under 4 each, no longer count.
 *
 * Each work-item sums its part unscaled and, where its max |x| calls for
 * it (item_scale), again at the scale of that max; it hands on the pair
 * (k, sum), a float2, and the row's reduction brings pairs to the
 * smaller k, that of the larger values (ldexp, exact but for what falls
 * below the other pair's last bits). */
#define SCALE_MIN (-126)
#define SCALE_MAX ((60 - ilogb(EPS)) / 2)

/* k for the largest magnitude M (>= 0): M * 2^k in [1, 2), clamped; the
 * exponent field read directly (0 and subnormals give 127: clamped). */
inline int scale_of(float m)
{
    return clamp(127 - (int)(as_uint(m) >> 23), SCALE_MIN, SCALE_MAX);
}

/* k for a work-item whose largest magnitude is M: 0, no scaling, while
 * neither its squares nor their sums over a row of up to 2^24 can
 * overflow or fall among the subnormals (M in [2^-32, 2^48]), so that
 * rows of ordinary values take the path they took unscaled; else
 * scale_of(M). */
inline int item_scale(float m)
{
    return m >= 0x1p-32f && m <= 0x1p48f ? 0 : scale_of(m);
}

/* 2^k for k in [SCALE_MIN, 127]. */
inline float pow2(int k)
{
    return as_float((uint)(k + 127) << 23);
}

/* a + b for pairs (k, s) that stand for s * 2^(-P k): P 1 for sums of
 * values, 2 for sums of squares. Pairs of one scale (all of a row of
 * ordinary values) add plainly. */
inline float2 scaled_add(float2 a, float2 b, int p)
{
    if (a.x == b.x) {
        return (float2)(a.x, a.y + b.y);
    }
    const float k = fmin(a.x, b.x);
    return (float2)(k, ldexp(a.y, p * (int)(k - a.x)) +
                           ldexp(b.y, p * (int)(k - b.x)));
}

/* row_sum() of pairs (k, s), P as in scaled_add. */
inline float2 row_sum_scaled(__local float2 *part, uint lid, float2 v, int p)
{
#if WG_SIZE == 1
    (void)part;
    (void)lid;
    (void)p;
    return v;
#else
    part[lid] = v;
    for (uint n = WG_SIZE; n > 1; n = RED_NEXT(n)) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint step = RED_NEXT(n);
        if (lid < step) {
            float2 s = part[lid];
            for (uint k = 1; k < n / step; k++) {
                s = scaled_add(s, part[lid + k * step], p);
            }
            part[lid] = s;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return part[0];
#endif
}
