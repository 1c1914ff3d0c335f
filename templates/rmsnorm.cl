/* rmsnorm.cl - y = x / sqrt(mean(x^2) + EPS) * gamma, row by row.
 *
 * Storage: storage_DTYPE.cl. Macros: FEATURES, VEC, WG_SIZE,
 * ROWS_PER_GROUP, ROW_IN_REGISTERS, NVEC, SLOTS (row_reduce.cl); and
 *   EPS   added to the mean square (a float literal)
 *
 * Rows of huge or tiny values (|x| past 2^48 or under 2^-32) sum their
 * squares at a power-of-two scale (norm_scale.cl); a streamed row is read
 * once more by a work-item whose values need it.
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

#if !ROW_IN_REGISTERS
/* This item's sum of the squares of x * S (a power of two) over its
 * vectors, in compensated blocks (row_reduce.cl: a CPU's one item per row
 * sums tens of thousands of squares); the max of |x| into *M. */
inline floatv sum_squares(const __global storage_t *x, size_t base, uint lid,
                          float s, floatv *m)
{
    floatv acc = 0.0f;
    floatv acc_err = 0.0f;
    for (uint j0 = lid; j0 < NVEC; j0 += BLOCK_STRIDE) {
        floatv b = 0.0f;
        for (uint j = j0; j < block_end(j0); j += WG_SIZE) {
            const floatv xv = loadv(x, base + j * VEC);
            const floatv u = xv * s;
            *m = MAX2(*m, fabs(xv));
            b += u * u;
        }
        csum_add(&acc, &acc_err, b);
    }
    return acc + acc_err;
}
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void rmsnorm(const int rows, const __global storage_t *x,
             const __global storage_t *gamma, __global storage_t *y)
{
    __local float2 part[ROWS_PER_GROUP][WG_SIZE];
    const uint lid = get_local_id(0);
    const size_t base = row_base(rows);

    /* Each item sums squares per vector lane (VEC short sums, not one
     * long); where its max |x| calls for it, again scaled by 2^k
     * (norm_scale.cl). */
    floatv mx = 0.0f;
    floatv acc = 0.0f;
#if ROW_IN_REGISTERS
    floatv v[SLOTS];
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] = loadv(x, base + j * VEC);
            mx = MAX2(mx, fabs(v[k]));
            acc += v[k] * v[k];
        }
    }
    const int k_item = item_scale(hmax(mx));
    if (k_item != 0) {
        const float s = pow2(k_item);
        acc = 0.0f;
#pragma unroll
        for (uint k = 0; k < SLOTS; k++) {
            const uint j = lid + k * WG_SIZE;
            if (SLOT_IN_ROW(k, j)) {
                const floatv u = v[k] * s;
                acc += u * u;
            }
        }
    }
#else
    acc = sum_squares(x, base, lid, 1.0f, &mx);
    const int k_item = item_scale(hmax(mx));
    if (k_item != 0) {
        acc = sum_squares(x, base, lid, pow2(k_item), &mx);
    }
#endif
#if PARAMS_EARLY
    floatv g[SLOTS];
    load_param(g, gamma, lid);
#endif
    const float2 ss = row_sum_scaled(part[get_local_id(1)], lid,
                                     (float2)((float)k_item, hsum(acc)), 2);
    const float sc = pow2((int)ss.x);
    const float r = rsqrt(ss.y / (float)FEATURES + EPS * sc * sc);
    if (!row_live(rows)) {
        return;
    }

#if ROW_IN_REGISTERS
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            storev(y, base + j * VEC,
                   v[k] * sc * r * PARAM_AT(g, gamma, k, j));
        }
    }
#else
    for (uint j = lid; j < NVEC; j += WG_SIZE) {
        const floatv xv = loadv(x, base + j * VEC);
        storev(y, base + j * VEC, xv * sc * r * loadv(gamma, j * VEC));
    }
#endif
}
