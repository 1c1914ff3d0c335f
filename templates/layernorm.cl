/* layernorm.cl - y = (x - mean) / sqrt(var + EPS) * gamma + beta, row by
 * row, var the biased variance.
 *
 * Storage: storage_DTYPE.cl. Macros: FEATURES, VEC, WG_SIZE,
 * ROWS_PER_GROUP, ROW_IN_REGISTERS, NVEC, SLOTS (row_reduce.cl); and
 *   EPS   added to the variance (a float literal)
 * and norm_scale.cl's, for rows past float32's squares.
 *
 * The corrected two-pass algorithm (Chan, Golub and LeVeque): a first pass
 * gives mean0, the rounded mean; a second sums d = x - mean0 and d^2. The
 * mean of d, c, is only mean0's rounding error, so var = E[d^2] - c^2
 * cannot cancel, and d - c keeps the precision of the deviations even when
 * |mean| is far larger than the spread. That holds only while mean0 is
 * within a few roundings of the mean, so the first pass sums x - shift,
 * shift being the row's first element: terms at the scale of the spread,
 * not of the mean (and all 0 in a constant row, whose y is then beta
 * exactly); and streamed rows sum in compensated blocks (row_reduce.cl),
 * as one work-item per row on a CPU sums tens of thousands of terms.
 * Rows in registers are read once; streamed rows are read three times
 * (and four times more in the rare work-group that norm_scale.cl rescales).
 *
 * Buffers: x (rows x FEATURES), gamma, beta (FEATURES), y (rows x FEATURES).
 * Launch: local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE,
 * ceil(rows / ROWS_PER_GROUP) * ROWS_PER_GROUP). */
#include "storage_@dtype@.cl"

#if !defined(EPS)
#error "layernorm.cl: the plan must define EPS"
#endif

#include "row_reduce.cl"
#include "norm_scale.cl"

/* row_sum2(part, lid, v): row_sum() for two sums at once. */
ROW_REDUCTION(row_sum2, float2, ADD2)

/* The whole row again at scale s, for rows whose plain sums failed
 * (norm_scale.cl): the same two passes on x * s, EPS * s^2 for EPS, and
 * y from x * s. A constant row of huge values leaves var and EPS * s^2
 * both 0: FLT_MIN keeps r finite, and its 0 * r at 0. Every item of the
 * work-group calls it. */
inline void layernorm_scaled(const int rows, const __global storage_t *x,
                             const __global storage_t *gamma,
                             const __global storage_t *beta,
                             __global storage_t *y, size_t base, uint lid,
                             __local float *part_mean,
                             __local float2 *part_dev)
{
    const float s = norm_scale(row_max(part_mean, lid,
                                       item_max_abs(x, base, lid)));
    const float shift = load1(x, base) * s;
    floatv acc = 0.0f;
    floatv err = 0.0f;
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        csum_add(&acc, &err, loadv(x, base + j * VEC) * s - shift);
    }
    ROW_BARRIER(); /* every item has read the max */
    const float mean0 = shift + row_sum(part_mean, lid, hsum(acc + err)) /
                                    (float)FEATURES;
    floatv sd = 0.0f, sd_err = 0.0f;
    floatv sd2 = 0.0f, sd2_err = 0.0f;
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv d = loadv(x, base + j * VEC) * s - mean0;
        csum_add(&sd, &sd_err, d);
        csum_add(&sd2, &sd2_err, d * d);
    }
    const float2 sums = row_sum2(
        part_dev, lid, (float2)(hsum(sd + sd_err), hsum(sd2 + sd2_err)));
    const float c = sums.x / (float)FEATURES;
    const float var = fmax(sums.y / (float)FEATURES - c * c, 0.0f);
    const float r = rsqrt(fmax(var + EPS * s * s, FLT_MIN));
    if (!row_live(rows)) {
        return;
    }
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv d = loadv(x, base + j * VEC) * s - mean0 - c;
        storev(y, base + j * VEC,
               d * r * loadv(gamma, j * VEC) + loadv(beta, j * VEC));
    }
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void layernorm(const int rows, const __global storage_t *x,
               const __global storage_t *gamma,
               const __global storage_t *beta, __global storage_t *y)
{
    __local float part_mean[ROWS_PER_GROUP][WG_SIZE];
    __local float2 part_dev[ROWS_PER_GROUP][WG_SIZE];
    const uint lid = get_local_id(0);
    const uint ly = get_local_id(1);
    const size_t base = row_base(rows);

    /* Sums of x - shift, per vector lane. */
    const float shift = load1(x, base);
    floatv acc = 0.0f;
#if ROW_IN_REGISTERS
    floatv v[SLOTS];
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] = loadv(x, base + j * VEC);
            acc += v[k] - shift;
        }
    }
#else
    floatv acc_err = 0.0f;
    for (uint j0 = lid; j0 < NVEC; j0 += BLOCK_STRIDE) {
        floatv b = 0.0f;
        for (uint j = j0; j < block_end(j0); j += WG_SIZE) {
            b += loadv(x, base + j * VEC) - shift;
        }
        csum_add(&acc, &acc_err, b);
    }
    acc += acc_err;
#endif
#if PARAMS_EARLY
    floatv g[SLOTS], bt[SLOTS];
    load_param(g, gamma, lid);
    load_param(bt, beta, lid);
#endif
    const float mean0 =
        shift + row_sum(part_mean[ly], lid, hsum(acc)) / (float)FEATURES;

    /* Sums of d and d^2, per vector lane. */
    floatv sd = 0.0f;
    floatv sd2 = 0.0f;
#if ROW_IN_REGISTERS
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] -= mean0;
            sd += v[k];
            sd2 += v[k] * v[k];
        }
    }
#else
    floatv sd_err = 0.0f;
    floatv sd2_err = 0.0f;
    for (uint j0 = lid; j0 < NVEC; j0 += BLOCK_STRIDE) {
        floatv b = 0.0f;
        floatv b2 = 0.0f;
        for (uint j = j0; j < block_end(j0); j += WG_SIZE) {
            const floatv d = loadv(x, base + j * VEC) - mean0;
            b += d;
            b2 += d * d;
        }
        csum_add(&sd, &sd_err, b);
        csum_add(&sd2, &sd2_err, b2);
    }
    sd += sd_err;
    sd2 += sd2_err;
#endif
    const float2 sums =
        row_sum2(part_dev[ly], lid, (float2)(hsum(sd), hsum(sd2)));
    const float c = sums.x / (float)FEATURES;
    const float var = fmax(sums.y / (float)FEATURES - c * c, 0.0f);
    const float r = rsqrt(var + EPS);
    if (group_needs_scale((__local float *)&part_dev[0][0] + 1,
                          2 * WG_SIZE, sums.y)) {
        ROW_BARRIER(); /* every item has read the plain sums */
        layernorm_scaled(rows, x, gamma, beta, y, base, lid, part_mean[ly],
                         part_dev[ly]);
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
            storev(y, base + j * VEC,
                   (v[k] - c) * r * PARAM_AT(g, gamma, k, j) +
                       PARAM_AT(bt, beta, k, j));
        }
    }
#else
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv d = loadv(x, base + j * VEC) - mean0 - c;
        storev(y, base + j * VEC,
               d * r * loadv(gamma, j * VEC) + loadv(beta, j * VEC));
    }
#endif
}
