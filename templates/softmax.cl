/* softmax.cl - y = exp(SCALE*x - m) / sum(exp(SCALE*x - m)), m the row's
 * largest SCALE*x, one row per WG_SIZE work-items (softmax_common.cl
 * says how the exponent is formed and the pairs kept).
 *
 * Buffers: x (rows x FEATURES), y (rows x FEATURES).
 * Launch: local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE,
 * ceil(rows / ROWS_PER_GROUP) * ROWS_PER_GROUP). */
#include "softmax_common.cl"

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
    s = stream_sum(x, base, lid, NVEC, WG_SIZE, &m, 0);
    row_merge(pm[get_local_id(1)], ps[get_local_id(1)], lid, &m, &s);
    if (!row_live(rows)) {
        return;
    }
    stream_out(x, y, base, lid, NVEC, WG_SIZE, m, 1.0f / s, 0);
#endif
}
