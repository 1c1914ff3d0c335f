/* cross_entropy_common.cl - what the cross_entropy kernels share: the
 * logits as the loss sees them (capped), a row's statistics (the max m,
 * the sum s of exponentials relative to it, the sum t of the logits),
 * the loss of a row and the writing of its gradient. One work-group per
 * row (cross_entropy.cl), or several for few long rows (the split path:
 * cross_entropy_part.cl, cross_entropy_combine.cl; cross_entropy_coop.cl)
 * and for many (cross_entropy_shared.cl); a single work-group
 * counts the rows that count (cross_entropy_count.cl) and sums the rows'
 * losses (cross_entropy_reduce.cl), in a fixed order: the same bits on
 * every run.
 *
 * Storage: storage_DTYPE.cl. Macros: those of softmax_common.cl (SCALE 1,
 * HALF_X 0: the (max, sum) pairs and their merges; FEATURES is the
 * vocabulary) and
 *   IGNORE_INDEX   the label of rows that do not count
 *   CAPPED         1: z = SOFTCAP * tanh(x / SOFTCAP); 0: z = x
 *   SOFTCAP        the cap (a float literal; unused when CAPPED is 0)
 *   CAP_POLY       1: the cap's exponential by exp2_poly.cl (CPUs)
 *   CAP_NATIVE_RECIP 1: the cap's reciprocal by native_recip (GPUs)
 *   SMOOTH         1: label smoothing, the sum of z wanted
 *   ONE_MINUS_EPS  1 - label_smoothing
 *   EPS_OVER_V     label_smoothing / FEATURES
 *   REDUCE_MEAN    1: the loss is the mean over the rows that count
 *   REDUCE_NONE    1: a loss per row, written by the row's kernel; else
 *                  the rows' losses go to scratch and the reduction
 *                  kernel sums them
 *   GRAD           1: dlogits is written
 *   RED_WG         work-items of the count and reduction kernels
 *
 * Scratch (floats): [0] the count of rows whose label is not
 * IGNORE_INDEX (REDUCE_MEAN); then, unless REDUCE_NONE, the rows' losses
 * (LOSSES_AT + row); then the split path's per row: SPLIT_GROUPS triples
 * (m, s, t) and the logit at the label.
 *
 * A label that is neither IGNORE_INDEX nor in [0, FEATURES) gives its row
 * a NaN loss and a NaN gradient row (it counts, as a row to divide by). */
#include "softmax_common.cl"

#if !defined(IGNORE_INDEX) || !defined(CAPPED) || !defined(SOFTCAP) ||   \
    !defined(CAP_POLY) || !defined(CAP_NATIVE_RECIP) ||                   \
    !defined(SMOOTH) || !defined(ONE_MINUS_EPS) || !defined(EPS_OVER_V) || \
    !defined(REDUCE_MEAN) || !defined(REDUCE_NONE) || !defined(GRAD) ||   \
    !defined(RED_WG)
#error "cross_entropy: a macro of the plan is missing"
#endif
#if HALF_X
#error "cross_entropy: softmax_common.cl must be plain: SCALE 1, no HALF_X"
#endif

#define LOSSES_AT 1

#ifdef SPLIT_GROUPS
/* The split path's block of scratch of ROW: SPLIT_GROUPS triples, then z
 * at the label, after the count and (unless REDUCE_NONE) the rows'
 * losses. */
#define SPLIT_BLOCK (3 * SPLIT_GROUPS + 1)
inline size_t split_at(int rows, size_t row)
{
    return LOSSES_AT + (REDUCE_NONE ? 0 : (size_t)rows) + row * SPLIT_BLOCK;
}
#endif

/* z and its slope dz/dx for a logit x: with CAPPED, z = SOFTCAP tanh u,
 * u = x / SOFTCAP, and dz/dx = 1 - tanh^2 u, by tanh_poly.cl: a vector
 * whose logits all lie within 0.55 SOFTCAP takes no exponential and no
 * reciprocal. Its e by exp2, or on CPUs (CAP_POLY) by exp2_poly.cl, which
 * vectorizes where PoCL's exp2 runs lane by lane; 1 / (1 + e) on GPUs
 * (CAP_NATIVE_RECIP) by native_recip: the hardware's reciprocal in place
 * of a correctly rounded division (1 + e lies in [1, 2], no range to
 * guard). cap_z_slope and cap_z take floatv, cap_z_slope1 and cap_z1 a
 * float. */
#if CAPPED
#if CAP_POLY
#define TANH_EXP2(y) exp2_poly(y)
#else
#define TANH_EXP2(y) exp2(y)
#endif
#if CAP_NATIVE_RECIP
#define TANH_RECIP(y) native_recip(y)
#else
#define TANH_RECIP(y) (1.0f / (y))
#endif
#include "tanh_poly.cl"
#if VEC == 1
TANH_SLOPE(floatv, , )
#else
TANH_SLOPE(floatv, , any)
#endif
TANH_SLOPE(float, 1, )
#define CAP_FNS(T, N)                                                         \
    inline T cap_z_slope##N(T x, T *slope)                                    \
    {                                                                         \
        return SOFTCAP * tanh_slope##N(x * (1.0f / SOFTCAP), slope);          \
    }
#else
#define CAP_FNS(T, N)                                                         \
    inline T cap_z_slope##N(T x, T *slope)                                    \
    {                                                                         \
        *slope = 1.0f;                                                        \
        return x;                                                             \
    }
#endif
#define CAP_Z(T, N)                                                           \
    inline T cap_z##N(T x)                                                    \
    {                                                                         \
        T slope;                                                              \
        return cap_z_slope##N(x, &slope);                                     \
    }
CAP_FNS(floatv, )
CAP_Z(floatv, )
CAP_FNS(float, 1)
CAP_Z(float, 1)

/* The compensated total of row_reduce.cl's csum_add1 (SUM, ERR): an
 * infinite sum alone, its compensation being inf - inf, NaN. A masked
 * logit (-inf) makes the sum of the logits -inf, and a row's loss may be
 * +inf. */
inline float csum_total1(float sum, float err)
{
    return isinf(sum) ? sum : sum + err;
}

inline floatv load_z(const __global storage_t *x, size_t i)
{
    return cap_z(loadv(x, i));
}

/* The label of ROW, and what it makes of the row. */
inline bool label_ignored(int label)
{
    return label == IGNORE_INDEX;
}
inline bool label_valid(int label)
{
    return (uint)label < (uint)FEATURES;
}

/* The logit at the label of the row at element BASE (its z and slope
 * come from it); 0 for a label outside the row (not read). */
inline float label_x(const __global storage_t *x, size_t base, int label)
{
    return label_valid(label) ? load1(x, base + (uint)label) : 0.0f;
}

/* A streamed vector from its load to its use: bf16 vectors of 8 stay as
 * stored, in 4 registers instead of 8, so that an item's loads in flight
 * leave room for more work-groups per compute unit; other vectors (and
 * capped logits, whose tanh is taken once) as floats: the statistics hold
 * z, the gradient x. */
#if defined(DTYPE_BF16) && VEC == 8 && !CAPPED
typedef uint4 heldv;
inline heldv load_held_z(const __global storage_t *x, size_t i)
{
    return load8_bits(x, i);
}
inline heldv load_held_x(const __global storage_t *x, size_t i)
{
    return load8_bits(x, i);
}
inline floatv held_floats(heldv h)
{
    return unpack8(h);
}
#else
typedef floatv heldv;
inline heldv load_held_z(const __global storage_t *x, size_t i)
{
    return load_z(x, i);
}
inline heldv load_held_x(const __global storage_t *x, size_t i)
{
    return loadv(x, i);
}
inline floatv held_floats(heldv h)
{
    return h;
}
#endif

/* L2_HINTS 1 (NVIDIA, bf16 vectors of 8 held as stored): the shared
 * path's reads and writes carry L2 eviction priorities. Its first read
 * of a row asks the cache to keep the lines (evict_last), its second
 * read and its stores to let them go first (evict_first): the row stays
 * for the second read, which then makes way for the next rows' first. A
 * HINTED argument of 0 leaves a read or write plain. */
#if L2_HINTS
#if !defined(DTYPE_BF16) || VEC != 8 || CAPPED || !defined(BF16_CVT_PTX)
#error "cross_entropy: L2_HINTS needs bf16 vectors of 8 held as stored"
#endif
#endif

/* Vector I of X for the statistics and for the gradient, and the
 * gradient's stores: with L2_HINTS and HINTED, by their priorities. */
inline heldv load_stats(const __global storage_t *x, size_t i, bool hinted)
{
#if L2_HINTS
    if (hinted) {
        return load16_policy(x + i, l2_keep());
    }
#endif
    (void)hinted;
    return load_held_z(x, i);
}
inline heldv load_grad(const __global storage_t *x, size_t i, bool hinted)
{
#if L2_HINTS
    if (hinted) {
        return load16_policy(x + i, l2_drop());
    }
#endif
    (void)hinted;
    return load_held_x(x, i);
}
inline void store_grad(__global storage_t *dx, size_t i, floatv v,
                       bool hinted)
{
#if L2_HINTS
    if (hinted) {
        store16_policy(dx + i, pack8(v), l2_drop());
        return;
    }
#endif
    (void)hinted;
    storev(dx, i, v);
}

/* The statistics of vectors FIRST, FIRST + STEP, ... below END of the row
 * at element BASE: *m_io raised to their max (NO_MAX for none yet), *s
 * their sum of exponentials relative to it, *t their sum (SMOOTH). Each
 * vector is read once, in blocks of SUM_BLOCK vectors an item (their
 * loads in flight together; past END the block loads the first vector
 * again): the block's max, the sums rescaled only
 * when it passes m by more than RESCALE_ABOVE (softmax_common.cl's
 * stream_sum says why), the block's exponentials relative to m summed
 * apart, then added compensated to one total. HINTED: load_stats'. */
#ifdef SUM_BLOCK
inline void stream_stats(const __global storage_t *x, size_t base,
                         uint first, uint end, uint step, float *m_io,
                         float *s, float *t, bool hinted)
{
    float m = *m_io;
    float sum = 0.0f, err = 0.0f, zsum = 0.0f, zerr = 0.0f;
    for (uint j0 = first; j0 < end; j0 += SUM_BLOCK * step) {
        heldv h[SUM_BLOCK];
        floatv mv = m;
#pragma unroll
        for (uint k = 0; k < SUM_BLOCK; k++) {
            /* Past END the item's first vector again, which cannot raise
             * the max: no branch between the block's loads, so that
             * they are all in flight at once (a branch around each load
             * and its max made each wait for the one before). */
            const uint j = j0 + k * step;
            h[k] = load_stats(x, base + (j < end ? j : first) * VEC, hinted);
            mv = STREAM_MAX(mv, held_floats(h[k]));
        }
        const float mb = hmax(mv);
        if (mb - m > RESCALE_ABOVE) {
            const float rescale = EXPS(m - mb);
            sum *= rescale;
            err *= rescale;
            m = mb;
        }
        /* The block's sums across lanes once, then scalar totals:
         * vectors of them would take registers an item's loads in
         * flight need. */
        floatv bv = 0.0f, bzv = 0.0f;
#pragma unroll
        for (uint k = 0; k < SUM_BLOCK; k++) {
            if (j0 + k * step < end) {
                const floatv z = held_floats(h[k]);
                bv += EXPS(z - m);
#if SMOOTH
                bzv += z;
#endif
            }
        }
        const float b = hsum(bv), bz = hsum(bzv);
        csum_add1(&sum, &err, b);
#if SMOOTH
        csum_add1(&zsum, &zerr, bz);
#endif
    }
    *m_io = m;
    *s = sum + err;
    /* A masked (-inf) logit makes t -inf, and the loss, with smoothing,
     * +inf. */
    *t = csum_total1(zsum, zerr);
}
#endif

/* The sum of V over ITEMS work-items (a power of two) through their
 * words of PT, every item taking it: merge_pairs' tree. */
inline float sum_items(__local float *pt, uint lid, const uint items,
                       float v)
{
    if (items == 1) {
        return v;
    }
    pt[lid] = v;
    for (uint n = items; n > 1; n = RED_NEXT(n)) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint step = RED_NEXT(n);
        if (lid < step) {
            float acc = pt[lid];
            for (uint k = 1; k < n / step; k++) {
                acc += pt[lid + k * step];
            }
            pt[lid] = acc;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return pt[0];
}

/* The loss of a row of statistics (M, S, T) and the logit at the label
 * XY: log sum exp z - (1 - eps) z_label - eps / V sum z; 0 for an
 * ignored row, NaN for a label outside the row. */
inline float row_loss(int label, float m, float s, float t, float xy)
{
    if (label_ignored(label)) {
        return 0.0f;
    }
    if (!label_valid(label)) {
        return NAN;
    }
    return (m + log(s)) - ONE_MINUS_EPS * cap_z1(xy) - EPS_OVER_V * t;
}

/* What multiplies a row's gradient: 1 / the count of rows that count
 * (mean), else 1; NaN for a row whose label is outside it. */
inline float grad_scale(int label, const __global float *scratch)
{
#if REDUCE_MEAN
    const float g = 1.0f / scratch[0];
#else
    (void)scratch;
    const float g = 1.0f;
#endif
    return label_valid(label) ? g : NAN;
}

/* grad_scale in a kernel whose scratch argument is there unless
 * REDUCE_NONE. */
#if REDUCE_NONE
#define KERNEL_GRAD_SCALE(label) grad_scale(label, (const __global float *)0)
#else
#define KERNEL_GRAD_SCALE(label) grad_scale(label, scratch)
#endif

/* dx = g (softmax(z) - eps / V) dz/dx at vector J of the row at BASE
 * from its logits X, A = g / s, B = g eps / V; the label's element is
 * grad_label's. HINTED: store_grad's. */
inline void grad_store(__global storage_t *dx, size_t base, uint j,
                       floatv x, float m, float a, float b, bool hinted)
{
    floatv slope;
    const floatv z = cap_z_slope(x, &slope);
    store_grad(dx, base + j * VEC, (EXPS(z - m) * a - b) * slope, hinted);
}

/* The label's element, written after its vector by the same work-item:
 * dx_y = g (softmax(z_y) - eps / V - (1 - eps)) dz/dx at the logit XY,
 * G the scale. */
inline void grad_label(__global storage_t *dx, size_t base, int label,
                       float xy, float m, float a, float b, float g)
{
    float slope;
    const float z = cap_z_slope1(xy, &slope);
    store1(dx, base + (uint)label,
           (EXPS(z - m) * a - b - ONE_MINUS_EPS * g) * slope);
}

/* Vectors FIRST, FIRST + STEP, ... below END of the row at BASE set to
 * zero: the gradient of an ignored row. */
inline void zero_row(__global storage_t *dx, size_t base, uint first,
                     uint end, uint step)
{
    for (uint j = first; j < end; j += step) {
        storev(dx, base + j * VEC, (floatv)0.0f);
    }
}

/* The gradient of vectors FIRST, FIRST + STEP, ... below END of the row
 * at BASE, re-read in blocks of SUM_BLOCK vectors an item, for the row's
 * statistics (M, S), label, the logit at the label XY and scale G: zeros
 * for an ignored row; the label's element by the work-item whose vectors
 * hold it. HINTED: load_grad's and store_grad's. */
#ifdef SUM_BLOCK
inline void stream_grad(const __global storage_t *x, __global storage_t *dx,
                        size_t base, uint first, uint end, uint step,
                        int label, float m, float s, float xy, float g,
                        bool hinted)
{
    if (label_ignored(label)) {
        zero_row(dx, base, first, end, step);
        return;
    }
    const float a = g / s, b = g * EPS_OVER_V;
    for (uint j0 = first; j0 < end; j0 += SUM_BLOCK * step) {
        heldv h[SUM_BLOCK];
#pragma unroll
        for (uint k = 0; k < SUM_BLOCK; k++) {
            if (j0 + k * step < end) {
                h[k] = load_grad(x, base + (j0 + k * step) * VEC, hinted);
            }
        }
#pragma unroll
        for (uint k = 0; k < SUM_BLOCK; k++) {
            if (j0 + k * step < end) {
                grad_store(dx, base, j0 + k * step, held_floats(h[k]), m,
                           a, b, hinted);
            }
        }
    }
    const uint jy = (uint)label / VEC;
    if (label_valid(label) && jy >= first && jy < end &&
        (jy - first) % step == 0) {
        grad_label(dx, base, label, xy, m, a, b, g);
    }
}
#endif
