/* softmax_common.cl - what the softmax kernels share: the exponent they
 * form, the (max, sum) pairs they keep and merge, and the streamed walk
 * over a stretch of a row (softmax.cl, one work-group per row; the split
 * path's softmax_part.cl and softmax_combine.cl, several per row).
 *
 * Storage: storage_DTYPE.cl. Macros: FEATURES, VEC, WG_SIZE,
 * ROWS_PER_GROUP, ROW_IN_REGISTERS, NVEC, SLOTS (row_reduce.cl); and
 *   SCALE      applied to x first (a float literal)
 *   HALF_X     1: x is halved first (|SCALE| < 128/FLT_MAX, see below)
 *   EXP_POLY   1: exponentials by exp2_poly.cl (softmax on CPUs)
 *   EXP_BASE2  else 1: by exp2 (GPUs), 0: by exp
 *   SHFL_PTX   1: row_merge by PTX warp shuffles (NVIDIA only)
 *   STREAM_LOADS  where softmax streams: vectors an item loads at once
 *                 and holds from their loads to their exponentials
 *   STREAM_FMAX   where softmax or cross_entropy streams: the max by fmax
 * and, where the plan has a split path, row_reduce.cl's SPLIT_* macros.
 *
 * The kernels work on h = sign(SCALE)*x and form SCALE*x - m as
 * |SCALE|*(h - max h): a difference of inputs, scaled afterwards, so it
 * keeps its precision when |x| is large, and <= 0, so exp cannot
 * overflow. h - max h itself overflows to -inf when x spans more than
 * FLT_MAX; for |SCALE| >= 128/FLT_MAX the exponent is then below -128
 * anyway, and exp gives the 0 it should (so does a huge |SCALE|, for all
 * but the largest elements). Smaller scales, 0 among them, would turn
 * that into 0 * inf = NaN, or lose exp(-6) terms to 0: for those the plan
 * sets HALF_X and h is sign(SCALE)*x/2, whose differences stay finite,
 * scaled by 2|SCALE| (halving and doubling are exact; SCALE 0 then gives
 * the uniform row). Each work-item keeps a reference, a max of h or not
 * far below it, and a sum of exponentials relative to it; the pairs are
 * then merged. */
#include "storage_@dtype@.cl"

#if !defined(SCALE) || !defined(HALF_X) || !defined(EXP_POLY) ||          \
    !defined(EXP_BASE2) || !defined(SHFL_PTX)
#error "softmax: the plan defines SCALE, HALF_X, EXP_POLY, EXP_BASE2, SHFL_PTX"
#endif

#include "row_reduce.cl"
#include "l2_policy.cl"

/* h = H_SIGN * x, and SCALE*x - m = EXP_SCALE * (h - max h). Halving is
 * exact but for subnormal x (off by 2^-150 at most, which no exponent
 * notices). With HALF_X 0, H_SIGN is +-1 and folds away: the common
 * scales pay nothing for the rare ones. */
#if HALF_X
#define H_PER_X 0.5f
#else
#define H_PER_X 1.0f
#endif
#define H_SIGN (SCALE < 0.0f ? -H_PER_X : H_PER_X)
#define EXP_SCALE ((SCALE < 0.0f ? -(SCALE) : (SCALE)) / H_PER_X)
/* No h is below it: the max of an item without elements, or with only
 * -inf ones (masked), which must merge as a zero sum, not as inf - inf. */
#define NO_MAX (-H_PER_X * FLT_MAX)

/* The largest exponent EXP_SCALE * (h - m) that a term may have before
 * the reference m moves up: a row in registers takes its reference from
 * the slots as they arrive, so that their exponentials need not wait for
 * the item's other loads. e^32 per term keeps a row's sum below
 * 2^24 e^32 < 1e22, far from overflow. */
#define RESCALE_ABOVE 32.0f

/* e^(EXP_SCALE * D), in base 2 as 2^(EXP_SCALE * D * log2 e), the
 * product first, so that a huge EXP_SCALE still meets D = 0 as 0: by
 * exp2_poly.cl's polynomial (EXP_POLY, for floats and floatv), else by
 * exp2 (EXP_BASE2), else by exp. The polynomial, for floats and
 * floatv, is here too for a file that includes this one and wants it
 * apart from EXPS (CAP_POLY: cross_entropy_common.cl's cap): a
 * template's text is rendered once, at its first include. */
#if EXP_POLY || CAP_POLY
#include "exp2_poly.cl"
#if VEC > 1
#define SOFTMAX_PASTE(a, b) a##b
#define SOFTMAX_XPASTE(a, b) SOFTMAX_PASTE(a, b)
EXP2_POLY(floatv, SOFTMAX_XPASTE(as_float, VEC), SOFTMAX_XPASTE(as_int, VEC))
#endif
#endif
#if EXP_POLY
#define EXPS(d) exp2_poly((EXP_SCALE * (d)) * M_LOG2E_F)
#elif EXP_BASE2
#define EXPS(d) exp2((EXP_SCALE * (d)) * M_LOG2E_F)
#else
#define EXPS(d) exp(EXP_SCALE * (d))
#endif

/* The max of a streamed row (STREAM_FMAX from the plan): fmax on GPUs,
 * one instruction where MAX2's ?: is a compare and a select; MAX2 on
 * CPUs, one max instruction where fmax's NaN rules take several. fmax
 * leaves a NaN out of the max but not out of the sum of exponentials,
 * which makes the row's every output NaN all the same. */
#ifdef STREAM_FMAX
#if STREAM_FMAX
#define STREAM_MAX(a, b) fmax(a, b)
#else
#define STREAM_MAX(a, b) MAX2(a, b)
#endif
#endif

/* (m, s) and (m2, s2) as one pair: the larger reference, both sums
 * rescaled to it. */
inline void merge_pair(float *m, float *s, const float m2, const float s2)
{
    const float mm = MAX2(*m, m2);
    *s = *s * EXPS(*m - mm) + s2 * EXPS(m2 - mm);
    *m = mm;
}

#if SHFL_PTX
/* The lanes of this work-item's warp that exist: a work-group of fewer
 * than 32 items, or a last warp cut short (WG_SIZE 16 x 3 rows), has
 * fewer, and shfl.sync must name only those. */
#define GROUP_ITEMS (WG_SIZE * ROWS_PER_GROUP)
inline uint warp_lanes(void)
{
#if GROUP_ITEMS % 32 == 0
    return 0xffffffffu;
#else
    const uint first = (get_local_id(1) * WG_SIZE + get_local_id(0)) & ~31u;
    const uint n = min(32u, (uint)GROUP_ITEMS - first);
    return n == 32 ? 0xffffffffu : (1u << n) - 1u;
#endif
}

/* Merges (m, s) over aligned groups of WIDTH lanes of a warp (a power of
 * two, at most 32) whose existing lanes LANES has, every lane taking the
 * group's result: butterfly shuffles, NVIDIA compute capability 7.0 and
 * later. */
inline void warp_merge_in(float *m, float *s, const uint width,
                          const uint lanes)
{
    for (uint o = width / 2; o > 0; o >>= 1) {
        float m2, s2;
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;"
                     : "=f"(m2)
                     : "f"(*m), "r"(o), "r"(lanes));
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;"
                     : "=f"(s2)
                     : "f"(*s), "r"(o), "r"(lanes));
        merge_pair(m, s, m2, s2);
    }
}

/* warp_merge_in over the lanes of this row's work-group. */
inline void warp_merge(float *m, float *s, const uint width)
{
    warp_merge_in(m, s, width, warp_lanes());
}

/* Merges (m, s) over the ITEMS work-items of a one-dimensional work-group
 * (a power of two), every item taking the result: by shuffles within
 * each warp, then every stretch of as many lanes as there are warps
 * merges the warps' pairs from PM and PS in the same steps, so every item
 * holds the same bits without a second round through local memory. Two
 * barriers, the second so that PM and PS may be written again once it
 * returns. */
inline void merge_pairs(__local float *pm, __local float *ps, uint lid,
                        const uint items, float *m, float *s)
{
    if (items == 1) {
        return;
    }
    const uint width = items < 32 ? items : 32;
    warp_merge_in(m, s, width,
                  width == 32 ? 0xffffffffu : (1u << width) - 1u);
    if (items <= 32) {
        return;
    }
    const uint warps = items / 32, lane = lid % 32;
    if (lane == 0) {
        pm[lid / 32] = *m;
        ps[lid / 32] = *s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Each aligned stretch of WARPS lanes merges all the warps' pairs. */
    float mw = pm[lane % warps];
    float sw = ps[lane % warps];
    warp_merge_in(&mw, &sw, warps, 0xffffffffu);
    barrier(CLK_LOCAL_MEM_FENCE);
    *m = mw;
    *s = sw;
}
#else
/* Merges (m, s) over ITEMS work-items (a power of two; the group's, or
 * its row's) through their ITEMS words of PM and PS, in the steps
 * row_sum() takes for sums, every item taking the result: the same tree
 * whatever the timing. A step folds its pairs at once: the largest
 * reference first, then the sums rescaled to it, whose exponentials do
 * not wait on one another (one pair after another would make a chain of
 * exp latencies). */
inline void merge_pairs(__local float *pm, __local float *ps, uint lid,
                        const uint items, float *m, float *s)
{
    if (items == 1) {
        return;
    }
    pm[lid] = *m;
    ps[lid] = *s;
    for (uint n = items; n > 1; n = RED_NEXT(n)) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint step = RED_NEXT(n);
        if (lid < step) {
            float mm = pm[lid];
            for (uint k = 1; k < n / step; k++) {
                mm = MAX2(mm, pm[lid + k * step]);
            }
            float ss = 0.0f;
            for (uint k = 0; k < n / step; k++) {
                ss += ps[lid + k * step] * EXPS(pm[lid + k * step] - mm);
            }
            pm[lid] = mm;
            ps[lid] = ss;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *m = pm[0];
    *s = ps[0];
}
#endif

#if SHFL_PTX
/* Merges (m, s) over the items of this row: within each warp by
 * shuffles (a row of WG_SIZE <= 32 items is a group of one warp: work
 * groups are WG_SIZE x ROWS_PER_GROUP), then the warps' pairs through
 * local memory, merged by the first warp; every item takes the row's. */
inline void row_merge(__local float *pm, __local float *ps, uint lid,
                      float *m, float *s)
{
#if WG_SIZE <= 32
    (void)pm;
    (void)ps;
    (void)lid;
    warp_merge(m, s, WG_SIZE);
#else
#define ROW_WARPS (WG_SIZE / 32)
    warp_merge(m, s, 32);
    if (lid % 32 == 0) {
        pm[lid / 32] = *m;
        ps[lid / 32] = *s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 32) {
        float mw = lid < ROW_WARPS ? pm[lid] : NO_MAX;
        float sw = lid < ROW_WARPS ? ps[lid] : 0.0f;
        warp_merge(&mw, &sw, ROW_WARPS);
        if (lid == 0) {
            /* A slot of its own, past the warps'. */
            pm[WG_SIZE - 1] = mw;
            ps[WG_SIZE - 1] = sw;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *m = pm[WG_SIZE - 1];
    *s = ps[WG_SIZE - 1];
#undef ROW_WARPS
#endif
}
#else
/* Merges (m, s) over the items of this row in local memory (ROW_MERGE's
 * words of PM and PS, WG_SIZE each). */
inline void row_merge(__local float *pm, __local float *ps, uint lid,
                      float *m, float *s)
{
    merge_pairs(pm, ps, lid, WG_SIZE, m, s);
}
#endif

#ifdef STREAM_LOADS
#if defined(STREAM_L2_HINTS) && STREAM_L2_HINTS
/* STREAM_L2_HINTS (NVIDIA; float32 vectors of 4, bf16 of 8): where a
 * caller asks (HOW 1 or 2; the one-launch paths, whose rows' chunks fit
 * the cache), the statistics' reads ask L2 to keep the lines
 * (evict_last, 1), the outputs' reads and stores to let them go first
 * (evict_first, 2), so that a chunk's second read finds it in the
 * cache. HOW 0: a plain read or store. */
inline floatv stream_loadv(const __global storage_t *x, size_t i, int how)
{
    if (how == 0) {
        return loadv(x, i);
    }
    const uint4 u = load16_policy(x + i, how == 1 ? l2_keep() : l2_drop());
#if defined(DTYPE_BF16)
    return unpack8(u);
#else
    return as_float4(u);
#endif
}
inline void stream_storev(__global storage_t *y, size_t i, floatv v,
                          int how)
{
    if (how == 0) {
        storev(y, i, v);
        return;
    }
#if defined(DTYPE_BF16)
    store16_policy(y + i, pack8(v), l2_drop());
#else
    store16_policy(y + i, as_uint4(v), l2_drop());
#endif
}
#else
#define stream_loadv(x, i, how) ((void)(how), loadv(x, i))
#define stream_storev(y, i, v, how) ((void)(how), storev(y, i, v))
#endif

/* STREAM_LOADS vectors of the row at BASE, from vector J0 in steps of
 * STEP, into V (times H_SIGN): one unrolled group of loads, all in
 * flight at once. Past END a load takes vector J0 again (in the row: the
 * callers' J0 is below END), so that no branch separates the loads (a
 * branch around each load, with its use, made it wait for the one
 * before); the callers leave those out of their sums and stores. HOW:
 * stream_loadv's. */
inline void stream_group(const __global storage_t *x, size_t base, uint j0,
                         uint end, uint step, floatv v[STREAM_LOADS],
                         int how)
{
#pragma unroll
    for (uint k = 0; k < STREAM_LOADS; k++) {
        const uint j = j0 + k * step;
        v[k] = H_SIGN * stream_loadv(x, base + (j < end ? j : j0) * VEC,
                                     how);
    }
}

/* The sum of exponentials of vectors FIRST, FIRST + STEP, ... below END
 * of the row at element BASE, relative to *M_IO (NO_MAX for none yet),
 * which it raises. Group by group of STREAM_LOADS vectors, held in
 * registers from their loads to their exponentials (the row read once):
 * the group's max first, then its exponentials relative to m, a
 * reference that may trail the max by an exponent of up to
 * RESCALE_ABOVE. Only when a group's max gets past that is the
 * compensated sum rescaled to it, so a rising row is rescaled a few
 * times, not once per vector: each rescale rounds the whole sum (up to
 * 6e-5 relative at 50257 features when it was per vector). HINTED: the
 * reads ask L2 to keep their lines (STREAM_L2_HINTS). */
inline float stream_sum(const __global storage_t *x, size_t base,
                        uint first, uint end, uint step, float *m_io,
                        int hinted)
{
    float m = *m_io;
    floatv sum = 0.0f;
    floatv err = 0.0f;
    for (uint j0 = first; j0 < end; j0 += STREAM_LOADS * step) {
        floatv v[STREAM_LOADS];
        stream_group(x, base, j0, end, step, v, hinted ? 1 : 0);
        floatv mv = m;
#pragma unroll
        for (uint k = 0; k < STREAM_LOADS; k++) {
            mv = STREAM_MAX(mv, v[k]);
        }
        const float mb = hmax(mv);
        if (EXP_SCALE * (mb - m) > RESCALE_ABOVE) {
            const float rescale = EXPS(m - mb);
            sum *= rescale;
            err *= rescale;
            m = mb;
        }
        floatv b = 0.0f;
#pragma unroll
        for (uint k = 0; k < STREAM_LOADS; k++) {
            if (j0 + k * step < end) {
                b += EXPS(v[k] - m);
            }
        }
        csum_add(&sum, &err, b);
    }
    *m_io = m;
    return hsum(sum + err);
}

/* y = exp(SCALE*x - m) / s at vectors FIRST, FIRST + STEP, ... below END
 * of the row at element BASE, M and INV = 1 / s the row's, read in
 * groups of STREAM_LOADS. HINTED: the reads and stores let L2 drop their
 * lines first (STREAM_L2_HINTS). */
inline void stream_out(const __global storage_t *x, __global storage_t *y,
                       size_t base, uint first, uint end, uint step,
                       float m, float inv, int hinted)
{
    for (uint j0 = first; j0 < end; j0 += STREAM_LOADS * step) {
        floatv v[STREAM_LOADS];
        stream_group(x, base, j0, end, step, v, hinted ? 2 : 0);
#pragma unroll
        for (uint k = 0; k < STREAM_LOADS; k++) {
            const uint j = j0 + k * step;
            if (j < end) {
                stream_storev(y, base + j * VEC, EXPS(v[k] - m) * inv,
                              hinted ? 2 : 0);
            }
        }
    }
}
#endif
