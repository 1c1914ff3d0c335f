/* softmax.cl - y = exp(SCALE*x - m) / sum(exp(SCALE*x - m)), m the row's
 * largest SCALE*x, row by row.
 *
 * Storage: storage_DTYPE.cl. Macros: FEATURES, VEC, WG_SIZE,
 * ROWS_PER_GROUP, ROW_IN_REGISTERS, NVEC, SLOTS (row_reduce.cl); and
 *   SCALE   applied to x first (a float literal)
 *
 * The kernel works on z = sign(SCALE)*x: SCALE*x - m is formed as
 * |SCALE|*(z - max z), a difference of inputs scaled afterwards, so it keeps
 * its precision when |x| is large, and it is <= 0, so exp cannot overflow.
 * Each item keeps a running max of z and a sum of exponentials relative to
 * it (rescaled when the max grows); the row's pairs are then merged.
 *
 * Buffers: x (rows x FEATURES), y (rows x FEATURES).
 * Launch: local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE,
 * ceil(rows / ROWS_PER_GROUP) * ROWS_PER_GROUP). */
#include "storage_@dtype@.cl"

#if !defined(SCALE)
#error "softmax.cl: the plan must define SCALE"
#endif

#include "row_reduce.cl"

#define SIGN (SCALE < 0.0f ? -1.0f : 1.0f)
#define ABS_SCALE (SCALE < 0.0f ? -(SCALE) : (SCALE))

/* Merges the partial (m2, s2) into (m, s): maxima of z and sums of
 * exp(ABS_SCALE*(z - max)), rescaled to the larger max. */
inline void merge_max_sum(float *m, float *s, float m2, float s2)
{
    if (m2 > *m) {
        *s = *s * exp(ABS_SCALE * (*m - m2)) + s2;
        *m = m2;
    } else {
        *s += s2 * exp(ABS_SCALE * (m2 - *m));
    }
}

/* Merges (m, s) over the items of this row, as row_sum() does sums. */
inline void row_merge(__local float *pm, __local float *ps, uint lid,
                      float *m, float *s)
{
#if WG_SIZE == 1
    (void)pm;
    (void)ps;
    (void)lid;
    (void)m;
    (void)s;
#else
    pm[lid] = *m;
    ps[lid] = *s;
    for (uint n = WG_SIZE; n > 1; n = RED_NEXT(n)) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint step = RED_NEXT(n);
        if (lid < step) {
            float mm = pm[lid];
            float ss = ps[lid];
            for (uint k = 1; k < n / step; k++) {
                merge_max_sum(&mm, &ss, pm[lid + k * step],
                              ps[lid + k * step]);
            }
            pm[lid] = mm;
            ps[lid] = ss;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *m = pm[0];
    *s = ps[0];
#endif
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void softmax(const int rows, const __global storage_t *x,
             __global storage_t *y)
{
    __local float pm[ROWS_PER_GROUP][WG_SIZE];
    __local float ps[ROWS_PER_GROUP][WG_SIZE];
    const uint lid = get_local_id(0);
    const size_t base = row_base(rows);

    /* -FLT_MAX, not -INFINITY: an item without elements, or with only
     * -inf ones (masked), must merge as a zero sum, not as inf - inf. */
    float m = -FLT_MAX;
    float s;
    floatv sv = 0.0f;
#if ROW_IN_REGISTERS
    floatv v[SLOTS];
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] = SIGN * loadv(x, base + j * VEC);
            m = MAX2(m, hmax(v[k]));
        }
    }
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] = exp(ABS_SCALE * (v[k] - m));
            sv += v[k];
        }
    }
    s = hsum(sv);
    const float mine = m;
    row_merge(pm[get_local_id(1)], ps[get_local_id(1)], lid, &m, &s);
    if (!row_live(rows)) {
        return;
    }
    /* v holds exponentials relative to this item's max. */
    const float f = exp(ABS_SCALE * (mine - m)) / s;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            storev(y, base + j * VEC, v[k] * f);
        }
    }
#else
    /* Online: the sum is rescaled whenever the max grows. */
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv z = SIGN * loadv(x, base + j * VEC);
        const float mz = hmax(z);
        if (mz > m) {
            sv *= exp(ABS_SCALE * (m - mz));
            m = mz;
        }
        sv += exp(ABS_SCALE * (z - m));
    }
    s = hsum(sv);
    row_merge(pm[get_local_id(1)], ps[get_local_id(1)], lid, &m, &s);
    if (!row_live(rows)) {
        return;
    }
    const float inv = 1.0f / s;
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv z = SIGN * loadv(x, base + j * VEC);
        storev(y, base + j * VEC, exp(ABS_SCALE * (z - m)) * inv);
    }
#endif
}
