/* layernorm.cl - y = (x - mean) / sqrt(var + EPS) * gamma + beta, row by
 * row, var the biased variance.
 *
 * Macros: DTYPE_* (specl_common.cl); FEATURES, VEC, WG_SIZE,
 * ROWS_PER_GROUP, ROW_IN_REGISTERS, NVEC, SLOTS (row_reduce.cl); and
 *   EPS   added to the variance (a float literal)
 *
 * Statistics are taken of d = x - x[0], the row's first element: when the
 * mean is large next to the spread, x - x[0] is exact and the sums stay at
 * the scale of the spread, so the mean's rounding does not swamp it.
 * In registers the variance is a second pass, sum((d - mean)^2); streamed,
 * each item runs Welford's update and the items' (count, mean, M2) are
 * merged with Chan's formula. Neither subtracts mean^2 from E[x^2].
 *
 * Buffers: x (rows x FEATURES), gamma, beta (FEATURES), y (rows x FEATURES).
 * Launch: local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE,
 * ceil(rows / ROWS_PER_GROUP) * ROWS_PER_GROUP). */
#include "specl_common.cl"

#ifndef EPS
#define EPS 1e-5f
#endif

#include "row_reduce.cl"

#if !ROW_IN_REGISTERS
/* Merges the statistics (nb, mb, qb) into (n, m, q): counts, means and
 * sums of squared deviations. Either count may be 0. */
inline void chan(float *n, float *m, float *q, float nb, float mb, float qb)
{
    const float total = *n + nb;
    const float delta = mb - *m;
    const float wb = nb / fmax(total, 1.0f);
    *m += delta * wb;
    *q += qb + delta * delta * *n * wb;
    *n = total;
}

/* Merges (n, m, q) over the items of this row, as row_sum() does sums. */
inline void row_chan(__local float *pn, __local float *pm, __local float *pq,
                     uint lid, float *n, float *m, float *q)
{
    pn[lid] = *n;
    pm[lid] = *m;
    pq[lid] = *q;
    for (uint c = WG_SIZE; c > 1; c = red_next(c)) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint step = red_next(c);
        if (lid < step) {
            float nn = pn[lid];
            float mm = pm[lid];
            float qq = pq[lid];
            for (uint k = lid + step; k < c; k += step) {
                chan(&nn, &mm, &qq, pn[k], pm[k], pq[k]);
            }
            pn[lid] = nn;
            pm[lid] = mm;
            pq[lid] = qq;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *n = pn[0];
    *m = pm[0];
    *q = pq[0];
}
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void layernorm(const int rows, const __global storage_t *x,
               const __global storage_t *gamma,
               const __global storage_t *beta, __global storage_t *y)
{
    const uint lid = get_local_id(0);
    const uint ly = get_local_id(1);
    const size_t base = row_base(rows);
    const float shift = load1(x, base);

#if ROW_IN_REGISTERS
    __local float part_mean[ROWS_PER_GROUP][WG_SIZE];
    __local float part_var[ROWS_PER_GROUP][WG_SIZE];
    floatv v[SLOTS];
    floatv acc = 0.0f;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] = loadv(x, base + j * VEC) - shift;
            acc += v[k];
        }
    }
    const float mean =
        row_sum(part_mean[ly], lid, hsum(acc)) / (float)FEATURES;
    acc = 0.0f;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] -= mean;
            acc = mad(v[k], v[k], acc);
        }
    }
    const float var = row_sum(part_var[ly], lid, hsum(acc)) / (float)FEATURES;
    const float r = rsqrt(var + EPS);
    if (!row_live(rows)) {
        return;
    }
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            storev(y, base + j * VEC,
                   mad(v[k] * r, loadv(gamma, j * VEC), loadv(beta, j * VEC)));
        }
    }
#else
    __local float part_n[ROWS_PER_GROUP][WG_SIZE];
    __local float part_mean[ROWS_PER_GROUP][WG_SIZE];
    __local float part_m2[ROWS_PER_GROUP][WG_SIZE];
    /* Welford per vector lane: the lanes share the count. */
    float n = 0.0f;
    floatv mv = 0.0f;
    floatv qv = 0.0f;
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv d = loadv(x, base + j * VEC) - shift;
        n += 1.0f;
        const floatv delta = d - mv;
        mv += delta / n;
        qv = mad(delta, d - mv, qv);
    }
#if VEC == 1
    float mean = mv;
    float m2 = qv;
#else
    float mean = mv.s0;
    float m2 = qv.s0;
    float count = n;
    chan(&count, &mean, &m2, n, mv.s1, qv.s1);
#if VEC == 4
    float mean23 = mv.s2;
    float m2_23 = qv.s2;
    float count23 = n;
    chan(&count23, &mean23, &m2_23, n, mv.s3, qv.s3);
    chan(&count, &mean, &m2, count23, mean23, m2_23);
#endif
    n = count;
#endif
    row_chan(part_n[ly], part_mean[ly], part_m2[ly], lid, &n, &mean, &m2);
    const float r = rsqrt(m2 / (float)FEATURES + EPS);
    if (!row_live(rows)) {
        return;
    }
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv d = loadv(x, base + j * VEC) - shift - mean;
        storev(y, base + j * VEC,
               mad(d * r, loadv(gamma, j * VEC), loadv(beta, j * VEC)));
    }
#endif
}
