/* rmsnorm.cl - y = x / sqrt(mean(x^2) + EPS) * gamma, row by row.
 *
 * Storage: storage_DTYPE.cl. Macros: FEATURES, VEC, WG_SIZE,
 * ROWS_PER_GROUP, ROW_IN_REGISTERS, NVEC, SLOTS (row_reduce.cl); and
 *   EPS   added to the mean square (a float literal)
 * and norm_scale.cl's, for rows past float32's squares.
 *
 * Buffers: x (rows x FEATURES), gamma (FEATURES), y (rows x FEATURES).
 * Launch: local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE,
 * ceil(rows / ROWS_PER_GROUP) * ROWS_PER_GROUP). */
#include "storage_@dtype@.cl"

#if !defined(EPS)
#error "rmsnorm.cl: the plan must define EPS"
#endif

#include "row_reduce.cl"
#include "norm_scale.cl"

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

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void rmsnorm(const int rows, const __global storage_t *x,
             const __global storage_t *gamma, __global storage_t *y)
{
    __local float part[ROWS_PER_GROUP][WG_SIZE];
    const uint lid = get_local_id(0);
    const size_t base = row_base(rows);

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
    const float ss = row_sum(part[get_local_id(1)], lid, hsum(acc));
    const float r = rsqrt(ss / (float)FEATURES + EPS);
    if (group_needs_scale(&part[0][0], WG_SIZE, ss)) {
        ROW_BARRIER(); /* every item has read the plain sums */
        rmsnorm_scaled(rows, x, gamma, y, base, lid, part[get_local_id(1)]);
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
