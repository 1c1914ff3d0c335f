/* cross_entropy.cl - the loss of each row and its gradient, one row per
 * WG_SIZE work-items (cross_entropy_common.cl): the row's statistics in
 * one pass over the logits (in registers, or streamed), merged across
 * the row's items; then the gradient, from the registers or re-reading
 * the row (recently read: from the cache on GPUs). The logit at the
 * label is read before the merge's barriers, so dlogits may be logits: each item
 * writes only what it read itself.
 *
 * Buffers: logits (rows x FEATURES), labels (rows, int32); loss (rows,
 * float32) with REDUCE_NONE; dlogits (rows x FEATURES) with GRAD; scratch
 * unless REDUCE_NONE (the count at [0], the rows' losses after it).
 * Launch: local (WG_SIZE, ROWS_PER_GROUP), global (WG_SIZE,
 * ceil(rows / ROWS_PER_GROUP) * ROWS_PER_GROUP). */
#include "cross_entropy_common.cl"

#if ROW_IN_REGISTERS
/* The statistics (m, s, t) of this item's vectors of the row at BASE,
 * whose logits it holds in V for the gradient (the slots unrolled: a
 * private array indexed at run time would live in memory). z rises with
 * x, so m is z at the largest logit: one cap for the max. */
inline void slots_stats(const __global storage_t *x, size_t base, uint lid,
                        floatv v[SLOTS], float *m, float *s, float *t)
{
    floatv mv = NO_MAX;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            v[k] = loadv(x, base + j * VEC);
            mv = MAX2(mv, v[k]);
        }
    }
    const float mx = hmax(mv);
    *m = mx == NO_MAX ? NO_MAX : cap_z1(mx);
    floatv sv = 0.0f, tv = 0.0f;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            const floatv z = cap_z(v[k]);
            sv += EXPS(z - *m);
            tv += z;
        }
    }
    *s = hsum(sv);
    *t = SMOOTH ? hsum(tv) : 0.0f;
}
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, ROWS_PER_GROUP, 1)))
void cross_entropy(const int rows, const __global storage_t *logits,
                   const __global int *labels
#if REDUCE_NONE
                   , __global float *loss
#endif
#if GRAD
                   , __global storage_t *dlogits
#endif
#if !REDUCE_NONE
                   , __global float *scratch
#endif
                   )
{
    __local float pm[ROWS_PER_GROUP][WG_SIZE];
    __local float ps[ROWS_PER_GROUP][WG_SIZE];
    __local float pt[ROWS_PER_GROUP][WG_SIZE];
    const uint lid = get_local_id(0);
    const size_t base = row_base(rows);
    const size_t row = base / FEATURES;
    const int label = labels[row];
    const float xy = label_x(logits, base, label);
#if GRAD
    /* Read now, so that its latency hides behind the row's loads. */
    const float g = KERNEL_GRAD_SCALE(label);
#endif

    float m = NO_MAX, s = 0.0f, t = 0.0f;
#if ROW_IN_REGISTERS
    floatv v[SLOTS];
#endif
    /* Items past the last row (they must meet the barriers) and ignored
     * rows read nothing. */
    if (row_live(rows) && !label_ignored(label)) {
#if ROW_IN_REGISTERS
        slots_stats(logits, base, lid, v, &m, &s, &t);
#else
        stream_stats(logits, base, lid, NVEC, WG_SIZE, &m, &s, &t, false);
#endif
    }
    row_merge(pm[get_local_id(1)], ps[get_local_id(1)], lid, &m, &s);
#if SMOOTH
    t = sum_items(pt[get_local_id(1)], lid, WG_SIZE, t);
#else
    (void)pt;
#endif
    if (!row_live(rows)) {
        return;
    }
    if (lid == 0) {
#if REDUCE_NONE
        loss[row] = row_loss(label, m, s, t, xy);
#else
        scratch[LOSSES_AT + row] = row_loss(label, m, s, t, xy);
#endif
    }
#if GRAD
#if ROW_IN_REGISTERS
    if (label_ignored(label)) {
        zero_row(dlogits, base, lid, NVEC, WG_SIZE);
        return;
    }
    const float a = g / s, b = g * EPS_OVER_V;
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            grad_store(dlogits, base, j, v[k], m, a, b, false);
        }
    }
    if (label_valid(label) && (uint)label / VEC % WG_SIZE == lid) {
        grad_label(dlogits, base, label, xy, m, a, b, g);
    }
#else
    stream_grad(logits, dlogits, base, lid, NVEC, WG_SIZE, label, m, s, xy,
                g, false);
#endif
#endif
}
