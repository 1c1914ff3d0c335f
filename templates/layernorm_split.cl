/* layernorm_split.cl - the split path of layernorm (few long rows,
 * gen/op_rows_split.c): each row in SPLIT_GROUPS chunks, a work-group of
 * SPLIT_WG items each, in two launches.
 *
 * layernorm_part runs layernorm.cl's corrected two-pass algorithm on its
 * chunk alone: mean0_c, the chunk's rounded mean (from sums of x - shift,
 * shift the chunk's first element), then the sums of d = x - mean0_c and
 * d^2; it writes the three to scratch as floats at (row * SPLIT_GROUPS +
 * chunk) * 3. layernorm_combine merges a row's: mean0 = mean0_0 + the
 * sum of n_c (mean0_c - mean0_0) over FEATURES (terms at the scale of the
 * spread, as the row path's x - shift; a constant row gives mean0 exactly,
 * and y = beta), then about mean0 the sums of d and d^2 of the row, from
 * each chunk's with e_c = mean0_c - mean0:
 *   sum d = sum_c (sd_c + n_c e_c)
 *   sum d^2 = sum_c (sd2_c + e_c (2 sd_c + n_c e_c))
 * and from those var and the correction c as the row path does. Every
 * work-group of a row merges the same floats in the same order (item i
 * takes chunks i, i + SPLIT_WG, ... compensated, then split_sum's tree),
 * so all of them hold the same bits, whatever the timing; no atomics. A
 * row whose sum of d^2 fails as norm_scale.cl says is summed again whole
 * at a power-of-two scale by each of its work-groups (rare, and only for
 * the rows that need it).
 *
 * Include after storage_DTYPE.cl, row_reduce.cl (with the plan's SPLIT_*
 * macros) and norm_scale.cl. Macros: EPS, added to the variance. */

#if !defined(EPS) || !defined(SPLIT_GROUPS)
#error "layernorm_split.cl: the plan must define EPS and the split path"
#endif

#if SPLIT_WG > 1
GROUP_REDUCTION(split_sum2, float2, ADD2, SPLIT_WG)
#else
GROUP_REDUCTION_ONE(split_sum2, float2)
#endif

/* This item's sum of x s - shift over vectors FIRST, FIRST + SPLIT_WG,
 * ... below END of the row at element BASE, in compensated blocks
 * (row_reduce.cl). */
inline float split_shifted(const __global storage_t *x, size_t base,
                           uint first, uint end, float s, float shift)
{
    floatv acc = 0.0f;
    floatv err = 0.0f;
    for (uint j0 = first; j0 < end; j0 += SUM_BLOCK * SPLIT_WG) {
        const uint j1 = min(j0 + SUM_BLOCK * SPLIT_WG, end);
        floatv b = 0.0f;
        for (uint j = j0; j < j1; j += SPLIT_WG) {
            b += loadv(x, base + j * VEC) * s - shift;
        }
        csum_add(&acc, &err, b);
    }
    return hsum(acc + err);
}

/* The same for the sums of d = x s - mean0 and d^2. */
inline float2 split_deviations(const __global storage_t *x, size_t base,
                               uint first, uint end, float s, float mean0)
{
    floatv sd = 0.0f, sd_err = 0.0f;
    floatv sd2 = 0.0f, sd2_err = 0.0f;
    for (uint j0 = first; j0 < end; j0 += SUM_BLOCK * SPLIT_WG) {
        const uint j1 = min(j0 + SUM_BLOCK * SPLIT_WG, end);
        floatv b = 0.0f;
        floatv b2 = 0.0f;
        for (uint j = j0; j < j1; j += SPLIT_WG) {
            const floatv d = loadv(x, base + j * VEC) * s - mean0;
            b += d;
            b2 += d * d;
        }
        csum_add(&sd, &sd_err, b);
        csum_add(&sd2, &sd2_err, b2);
    }
    return (float2)(hsum(sd + sd_err), hsum(sd2 + sd2_err));
}

/* The two passes over vectors FIRST.. below END (N elements) at scale s:
 * the rounded mean and the sums of d and d^2 about it, in *SUMS. Every
 * item of the work-group calls it. */
inline float split_two_pass(const __global storage_t *x, size_t base,
                            uint first, uint end, float n, float s,
                            __local float *part_mean,
                            __local float2 *part_dev, float2 *sums)
{
    const uint lid = get_local_id(0);
    const float shift = load1(x, base + first * VEC) * s;
    const float mean0 =
        shift + split_sum(part_mean, lid,
                          split_shifted(x, base, first + lid, end, s,
                                        shift)) / n;
    *sums = split_sum2(part_dev, lid,
                       split_deviations(x, base, first + lid, end, s,
                                        mean0));
    return mean0;
}

/* Elements of chunk c. */
inline float chunk_elements(uint c)
{
    return (float)((chunk_end(c) - c * SPLIT_VECS) * VEC);
}

/* The row's mean0 from its chunks' STATS (mean0_c, sd_c, sd2_c), and
 * the sums of d and d^2 about it in *SUMS. */
inline float split_merge(const __global float *stats, uint lid,
                         __local float *part_mean, __local float2 *part_dev,
                         float2 *sums)
{
    const float m0 = stats[0];
    float acc = 0.0f, err = 0.0f;
    for (uint c = lid; c < SPLIT_GROUPS; c += SPLIT_WG) {
        csum_add1(&acc, &err, chunk_elements(c) * (stats[3 * c] - m0));
    }
    const float mean0 =
        m0 + split_sum(part_mean, lid, acc + err) / (float)FEATURES;
    float sd = 0.0f, sd_err = 0.0f, sd2 = 0.0f, sd2_err = 0.0f;
    for (uint c = lid; c < SPLIT_GROUPS; c += SPLIT_WG) {
        const float e = stats[3 * c] - mean0;
        const float n = chunk_elements(c);
        csum_add1(&sd, &sd_err, stats[3 * c + 1] + n * e);
        csum_add1(&sd2, &sd2_err,
                  stats[3 * c + 2] + e * (2.0f * stats[3 * c + 1] + n * e));
    }
    *sums = split_sum2(part_dev, lid, (float2)(sd + sd_err, sd2 + sd2_err));
    return mean0;
}

/* The row's mean0, correction c, r and scale s: from the chunks' STATS,
 * or, where their sum of d^2 fails (norm_scale.cl), the two passes again
 * over the whole row at a power-of-two scale. Every item of the
 * work-group calls it. */
inline float split_stats(const __global storage_t *x, size_t base,
                         const __global float *stats,
                         __local float *part_mean, __local float2 *part_dev,
                         float *mean0, float *c, float *r)
{
    const uint lid = get_local_id(0);
    float2 sums;
    float s = 1.0f;
    *mean0 = split_merge(stats, lid, part_mean, part_dev, &sums);
    if (sum_needs_scale(sums.y)) {
        SPLIT_BARRIER(); /* every item has read the plain sums */
        floatv m = 0.0f;
        for (uint j = lid; j < NVEC; j += SPLIT_WG) {
            m = MAX2(m, fabs(loadv(x, base + j * VEC)));
        }
        s = norm_scale(split_max(part_mean, lid, hmax(m)));
        SPLIT_BARRIER(); /* every item has read the max */
        *mean0 = split_two_pass(x, base, 0, NVEC, (float)FEATURES, s,
                                part_mean, part_dev, &sums);
    }
    *c = sums.x / (float)FEATURES;
    const float var = fmax(sums.y / (float)FEATURES - *c * *c, 0.0f);
    /* A constant row of huge values leaves var and EPS s^2 both 0:
     * FLT_MIN keeps r finite (layernorm.cl). */
    *r = s == 1.0f ? rsqrt(var + EPS) : rsqrt(fmax(var + EPS * s * s,
                                                   FLT_MIN));
    return s;
}
