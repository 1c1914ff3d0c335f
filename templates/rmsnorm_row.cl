/* rmsnorm_row.cl - the rows of rmsnorm: y = x / sqrt(mean(x^2) + EPS) *
 * gamma for the ROWS_PER_GROUP rows of a work-group, as a function the
 * rmsnorm kernel runs on x and add_rmsnorm on the sum it stores.
 *
 * Include after storage_DTYPE.cl, row_reduce.cl and norm_scale.cl. Macros:
 * EPS, added to the mean square (a float literal). */

#if !defined(EPS)
#error "rmsnorm_row.cl: the plan must define EPS"
#endif

/* The whole row again at scale s, for rows whose plain sum failed
 * (norm_scale.cl): y = (x s) * rsqrt(mean((x s)^2) + EPS s^2) * gamma.
 * Every item of the work-group calls it. */
inline void rmsnorm_scaled(const int rows, const __global storage_t *x,
                           const __global storage_t *gamma,
                           __global storage_t *y, size_t base, uint lid,
                           __local float *part)
{
    const float s =
        norm_scale(row_max(part, lid, item_max_abs(x, base, lid)));
    floatv acc = 0.0f;
    floatv err = 0.0f;
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv xs = loadv(x, base + j * VEC) * s;
        csum_add(&acc, &err, xs * xs);
    }
    ROW_BARRIER(); /* every item has read the max */
    const float ss = row_sum(part, lid, hsum(acc + err));
    const float r = rsqrt(ss / (float)FEATURES + EPS * s * s);
    if (!row_live(rows)) {
        return;
    }
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        storev(y, base + j * VEC,
               loadv(x, base + j * VEC) * s * r * loadv(gamma, j * VEC));
    }
}

/* The work-group's rows of x into y; PART holds ROWS_PER_GROUP x WG_SIZE
 * floats of local memory. Every item of the work-group calls it. */
inline void rmsnorm_rows(const int rows, const __global storage_t *x,
                         const __global storage_t *gamma,
                         __global storage_t *y, __local float *part)
{
    const uint lid = get_local_id(0);
    const size_t base = row_base(rows);
    __local float *row_part = part + get_local_id(1) * WG_SIZE;

    /* Each item sums squares per vector lane: VEC short sums, not one long. */
    floatv acc = 0.0f;
#if ROW_IN_REGISTERS
    floatv v[SLOTS];
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] = loadv(x, base + j * VEC);
            acc += v[k] * v[k];
        }
    }
#else
    /* Compensated blocks (row_reduce.cl): a CPU's one item per row sums
     * tens of thousands of squares. */
    floatv acc_err = 0.0f;
    for (uint j0 = lid; j0 < NVEC; j0 += BLOCK_STRIDE) {
        floatv b = 0.0f;
        for (uint j = j0; j < block_end(j0); j += WG_SIZE) {
            const floatv xv = loadv(x, base + j * VEC);
            b += xv * xv;
        }
        csum_add(&acc, &acc_err, b);
    }
    acc += acc_err;
#endif
#if PARAMS_EARLY
    floatv g[SLOTS];
    load_param(g, gamma, lid);
#endif
    const float ss = row_sum(row_part, lid, hsum(acc));
    const float r = rsqrt(ss / (float)FEATURES + EPS);
    if (group_needs_scale(part, WG_SIZE, ss)) {
        ROW_BARRIER(); /* every item has read the plain sums */
        rmsnorm_scaled(rows, x, gamma, y, base, lid, row_part);
        return;
    }
    if (!row_live(rows)) {
        return;
    }

#if ROW_IN_REGISTERS
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            storev(y, base + j * VEC, v[k] * r * PARAM_AT(g, gamma, k, j));
        }
    }
#else
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv xv = loadv(x, base + j * VEC);
        storev(y, base + j * VEC, xv * r * loadv(gamma, j * VEC));
    }
#endif
}
