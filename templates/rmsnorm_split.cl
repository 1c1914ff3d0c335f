/* rmsnorm_split.cl - the split path of rmsnorm and add_rmsnorm (few long
 * rows, gen/op_rows_split.c): each row in SPLIT_GROUPS chunks, a
 * work-group of SPLIT_WG items each, in two launches. The first
 * (rmsnorm_part, add_rmsnorm_part) writes each chunk's sum of squares to
 * scratch at row * SPLIT_GROUPS + chunk; the second (rmsnorm_combine,
 * add_rmsnorm_combine) adds a row's sums and writes the chunk's outputs.
 *
 * Every work-group of a row adds the same sums in the same order (item i
 * takes sums i, i + SPLIT_WG, ... compensated, then split_sum's tree), so
 * all of them hold the same bits, whatever the timing; no atomics. A row
 * whose total fails as norm_scale.cl says (squares past float32, or lost
 * among the subnormals under a tiny EPS) is summed again whole at a
 * power-of-two scale by each of its work-groups: the row path's second
 * chance, rare, and only for the rows that need it.
 *
 * Include after storage_DTYPE.cl, row_reduce.cl (with the plan's SPLIT_*
 * macros) and norm_scale.cl. Macros: EPS, added to the mean square. */

#if !defined(EPS) || !defined(SPLIT_GROUPS)
#error "rmsnorm_split.cl: the plan must define EPS and the split path"
#endif

/* This item's sum of squares of vectors FIRST, FIRST + SPLIT_WG, ...
 * below END of the row at element BASE, in compensated blocks
 * (row_reduce.cl). */
inline float split_squares(const __global storage_t *x, size_t base,
                           uint first, uint end, float s)
{
    floatv acc = 0.0f;
    floatv err = 0.0f;
    for (uint j0 = first; j0 < end; j0 += SUM_BLOCK * SPLIT_WG) {
        const uint j1 = min(j0 + SUM_BLOCK * SPLIT_WG, end);
        floatv b = 0.0f;
        for (uint j = j0; j < j1; j += SPLIT_WG) {
            const floatv xv = loadv(x, base + j * VEC) * s;
            b += xv * xv;
        }
        csum_add(&acc, &err, b);
    }
    return hsum(acc + err);
}

/* The chunk's sum of squares (the first launch), into SCRATCH. */
inline void rmsnorm_split_part(const __global storage_t *x,
                               __global float *scratch, __local float *part)
{
    const uint lid = get_local_id(0);
    const uint chunk = get_group_id(0);
    const size_t row = get_group_id(1);
    const float ss =
        split_sum(part, lid, split_squares(x, row * FEATURES,
                                           chunk * SPLIT_VECS + lid,
                                           chunk_end(chunk), 1.0f));
    if (lid == 0) {
        scratch[row * SPLIT_GROUPS + chunk] = ss;
    }
}

/* The row's sum of squares from its chunks' SUMS, in every work-group
 * the same. */
inline float split_total(const __global float *sums, uint lid,
                         __local float *part)
{
    float acc = 0.0f;
    float err = 0.0f;
    for (uint c = lid; c < SPLIT_GROUPS; c += SPLIT_WG) {
        csum_add1(&acc, &err, sums[c]);
    }
    return split_sum(part, lid, acc + err);
}

/* The row's scale s and its r = rsqrt(mean((x s)^2) + EPS s^2) summed
 * again whole (norm_scale.cl), for a row whose plain total SS failed;
 * else s = 1 and r from SS. Every item of the work-group calls it. */
inline float split_scale(const __global storage_t *x, size_t base, uint lid,
                         float ss, __local float *part, float *r)
{
    if (!sum_needs_scale(ss)) {
        *r = rsqrt(ss / (float)FEATURES + EPS);
        return 1.0f;
    }
    SPLIT_BARRIER(); /* every item has read the plain total */
    floatv m = 0.0f;
    for (uint j = lid; j < NVEC; j += SPLIT_WG) {
        m = MAX2(m, fabs(loadv(x, base + j * VEC)));
    }
    const float s = norm_scale(split_max(part, lid, hmax(m)));
    SPLIT_BARRIER(); /* every item has read the max */
    const float scaled =
        split_sum(part, lid, split_squares(x, base, lid, NVEC, s));
    *r = rsqrt(scaled / (float)FEATURES + EPS * s * s);
    return s;
}

/* The chunk's outputs (the second launch): y = (x s) r gamma. The
 * work-groups take the chunks backwards, the last row's last chunk
 * first: those the first launch read last, the likeliest still in the
 * cache. */
inline void rmsnorm_split_out(const int rows, const __global storage_t *x,
                              const __global storage_t *gamma,
                              __global storage_t *y,
                              const __global float *scratch,
                              __local float *part)
{
    const uint lid = get_local_id(0);
    const uint chunk = SPLIT_GROUPS - 1 - get_group_id(0);
    const size_t row = (size_t)rows - 1 - get_group_id(1);
    const size_t base = row * FEATURES;
    float r;
    const float s =
        split_scale(x, base, lid,
                    split_total(scratch + row * SPLIT_GROUPS, lid, part),
                    part, &r);
    for (uint j = chunk * SPLIT_VECS + lid; j < chunk_end(chunk);
         j += SPLIT_WG) {
        storev(y, base + j * VEC,
               loadv(x, base + j * VEC) * s * r * loadv(gamma, j * VEC));
    }
}
