/* cross_entropy.cl - lab kernels for bf16 cross_entropy (mean over the
 * rows, loss and dlogits; no smoothing, no softcap, every label valid),
 * timed by cross_entropy.c against a copy of the same bytes. Vectors of
 * 8 bf16 (uint4). Options: -DV (vocabulary, a multiple of 8), -DW
 * (work-items a group), -DS (vectors a work-item holds), -DG (groups a
 * row); xent_stream also -DREV=1 (the gradient pass from the row's end
 * back), -DSTCS=1 (its stores st.global.cs; 2: an evict_first
 * policy), -DLD1/-DLD2 (the two reads' cache hints, below) and
 * -DPAD_LOCAL=BYTES (local memory held, so that fewer groups share a
 * compute unit).
 *
 *   copy        x to dx, a vector an item
 *   xent_stream one group a row: (max, sum) in one read, the gradient
 *               reading the row again
 *   xent_split  G groups a row, streaming their parts as xent_stream does,
 *               the (max, sum) pairs exchanged as xent_regs does: fewer
 *               rows in flight, so that the second read finds the cache
 *   xent_regs   G groups a row, each holding S vectors an item from its
 *               one read to its store: (max, sum) of its part, published
 *               in global memory; the row's groups wait for one another
 *               and merge the G pairs in one order. Groups take their
 *               (row, part) from a ticket drawn when they start, so a
 *               group waits only on groups that have started or start
 *               after groups that can finish: no deadlock while G groups
 *               fit on the device at once.
 *   xent_local  xent_split's parts held in local memory (cp.async) from
 *               their one read to the gradient; built where a part fits
 *               48 KiB. */
#define NV (V / 8)
#define L2E 1.44269504088896341f
#define NO_MAX (-3.0e38f)

#ifdef FAST
#define exp2 native_exp2
#endif

inline float lo(uint w) { return as_float(w << 16); }
inline float hi(uint w) { return as_float(w & 0xffff0000u); }

inline uint pack(float a, float b)
{
    uint r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
    return r;
}

inline float shfl_xor(float v, int lane_mask)
{
    float r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                 : "=f"(r)
                 : "f"(v), "r"(lane_mask));
    return r;
}

inline float max8(uint4 q)
{
    return fmax(fmax(fmax(lo(q.x), hi(q.x)), fmax(lo(q.y), hi(q.y))),
                fmax(fmax(lo(q.z), hi(q.z)), fmax(lo(q.w), hi(q.w))));
}

/* sum of 2^(e L2E - ml) over the vector's 8 elements, ml = m L2E */
inline float sum8(uint4 q, float ml)
{
    return (exp2(fma(lo(q.x), L2E, -ml)) + exp2(fma(hi(q.x), L2E, -ml))) +
           (exp2(fma(lo(q.y), L2E, -ml)) + exp2(fma(hi(q.y), L2E, -ml))) +
           (exp2(fma(lo(q.z), L2E, -ml)) + exp2(fma(hi(q.z), L2E, -ml))) +
           (exp2(fma(lo(q.w), L2E, -ml)) + exp2(fma(hi(q.w), L2E, -ml)));
}

/* (m, s) merged with (m2, s2) */
inline void merge(float *m, float *s, float m2, float s2)
{
    const float mm = fmax(*m, m2);
    *s = *s * exp2((*m - mm) * L2E) + s2 * exp2((m2 - mm) * L2E);
    *m = mm;
}

/* the group's (m, s), every item taking it */
inline void group_merge(__local float *lm, __local float *ls, float *m,
                        float *s)
{
    const uint lid = get_local_id(0);
    for (int k = 16; k >= 1; k >>= 1) {
        merge(m, s, shfl_xor(*m, k), shfl_xor(*s, k));
    }
#if W > 32
    if (lid % 32 == 0) {
        lm[lid / 32] = *m;
        ls[lid / 32] = *s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *m = lm[0];
    *s = ls[0];
    for (int k = 1; k < W / 32; k++) {
        merge(m, s, lm[k], ls[k]);
    }
#endif
}

/* dlogits of vector Q: 2^(e L2E - ml) a, less g at element LY (or none) */
inline uint4 grad8(uint4 q, float ml, float a, int ly, float g)
{
    float d[8] = {lo(q.x), hi(q.x), lo(q.y), hi(q.y),
                  lo(q.z), hi(q.z), lo(q.w), hi(q.w)};
#pragma unroll
    for (int i = 0; i < 8; i++) {
        d[i] = exp2(fma(d[i], L2E, -ml)) * a - (i == ly ? g : 0.0f);
    }
    return (uint4)(pack(d[0], d[1]), pack(d[2], d[3]), pack(d[4], d[5]),
                   pack(d[6], d[7]));
}

__kernel void copy(const __global uint4 *x, __global uint4 *y)
{
    y[get_global_id(0)] = x[get_global_id(0)];
}

#ifndef U
#define U 1
#endif

/* Cache hints of the statistics' loads (LD1), the gradient's (LD2): 0
 * none, 1 an L2 evict_last policy, 2 evict_first, 3 ld.global.lu. */
#ifndef LD1
#define LD1 0
#endif
#ifndef LD2
#define LD2 0
#endif

inline ulong l2_policy(int last)
{
    ulong pol;
    if (last) {
        asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;"
            : "=l"(pol));
    } else {
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;"
            : "=l"(pol));
    }
    return pol;
}

inline uint4 ld_hint(const __global uint4 *p, int how)
{
    uint4 v;
    if (how == 0) {
        v = *p;
    } else if (how == 3) {
        asm volatile("ld.global.lu.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
    } else {
        asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], "
                     "%5;"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p), "l"(l2_policy(how == 1)));
    }
    return v;
}

/* The (max, sum) of this item's vectors FIRST, FIRST + W, ... below END
 * of row XR, read once, U at a time. */
inline void part_stats(const __global uint4 *xr, uint first, uint end,
                       float *m_out, float *s_out)
{
    float m = NO_MAX, s = 0.0f;
    for (uint j0 = first; j0 < end; j0 += U * W) {
        uint4 q[U];
        float mx = NO_MAX;
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (j0 + u * W < end) {
                q[u] = ld_hint(xr + j0 + u * W, LD1);
                mx = fmax(mx, max8(q[u]));
            }
        }
        if (mx > m) {
            s *= exp2((m - mx) * L2E);
            m = mx;
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (j0 + u * W < end) {
                s += sum8(q[u], m * L2E);
            }
        }
    }
    *m_out = m;
    *s_out = s;
}

#ifndef REV
#define REV 0
#endif
#ifndef STCS
#define STCS 0
#endif
#ifndef PAD_LOCAL
#define PAD_LOCAL 0
#endif

/* dlogits vector D to P: with STCS as st.global.cs (evict first), so that
 * the stores leave the cache to the row's second read. */
inline void store_grad(__global uint4 *p, uint4 d)
{
#if STCS == 2
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, "
                 "%5;"
                 :: "l"(p), "r"(d.x), "r"(d.y), "r"(d.z), "r"(d.w),
                    "l"(l2_policy(0))
                 : "memory");
#elif STCS
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "l"(p), "r"(d.x), "r"(d.y), "r"(d.z), "r"(d.w)
                 : "memory");
#else
    *p = d;
#endif
}

/* dlogits DXR of the same vectors of row XR, re-read U at a time; with
 * REV from the row's end back, so that the vectors read last by the
 * statistics (the most likely still cached) are read again first. */
inline void part_grad(const __global uint4 *xr, __global uint4 *dxr,
                      uint first, uint end, int label, float ml, float a,
                      float g)
{
#if REV
    const uint rounds = (end - first + U * W - 1) / (U * W);
    for (uint r = rounds; r-- > 0;) {
        const uint j0 = first + r * (U * W);
#else
    for (uint j0 = first; j0 < end; j0 += U * W) {
#endif
        uint4 q[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (j0 + u * W < end) {
                q[u] = ld_hint(xr + j0 + u * W, LD2);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint j = j0 + u * W;
            if (j < end) {
                store_grad(dxr + j,
                           grad8(q[u], ml, a,
                                 (uint)label / 8 == j ? label % 8 : -1, g));
            }
        }
    }
}

__kernel __attribute__((reqd_work_group_size(W, 1, 1)))
void xent_stream(const __global uint4 *x, const __global int *labels,
                 __global uint4 *dx, __global float *loss, const float g)
{
    __local float lm[W / 32], ls[W / 32];
#if PAD_LOCAL
    /* holds the compute unit's local memory: fewer groups, rows, at once */
    __local float pad[PAD_LOCAL / 4];
    if (get_local_id(0) == 0 && lm[0] == 12345.0f) {
        pad[0] = 1.0f;
        loss[0] = pad[get_group_id(0) % (PAD_LOCAL / 4)];
    }
#endif
    const uint lid = get_local_id(0);
    const size_t row = get_group_id(0);
    const __global uint4 *xr = x + row * NV;
    float m, s;
    part_stats(xr, lid, NV, &m, &s);
    group_merge(lm, ls, &m, &s);
    const int label = labels[row];
    if (lid == 0) {
        const float xy = as_float(
            (uint)((const __global ushort *)xr)[label] << 16);
        loss[row] = m + log(s) - xy;
    }
    const float ml = m * L2E, a = g / s;
    part_grad(xr, dx + row * NV, lid, NV, label, ml, a, g);
}

#define PART (W * S)

__kernel __attribute__((reqd_work_group_size(W, 1, 1)))
void xent_regs(const __global uint4 *x, const __global int *labels,
               __global uint4 *dx, __global float *loss, const float g,
               volatile __global uint *sync, const uint groups)
{
    __local float lm[W / 32], ls[W / 32];
    __local uint ticket;
    __local float row_m, row_s;
    const uint lid = get_local_id(0);
    if (lid == 0) {
        ticket = atomic_inc(&sync[0]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint row = ticket / G, part = ticket % G;
    const __global uint4 *xr = x + (size_t)row * NV;
    uint4 v[S];
    float m = NO_MAX;
#pragma unroll
    for (int k = 0; k < S; k++) {
        const uint j = part * PART + k * W + lid;
        if (j < NV) {
            v[k] = xr[j];
            m = fmax(m, max8(v[k]));
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < S; k++) {
        const uint j = part * PART + k * W + lid;
        if (j < NV) {
            s += sum8(v[k], m * L2E);
        }
    }
    group_merge(lm, ls, &m, &s);
#if G > 1
    if (lid == 0) {
        volatile __global uint *w = sync + 2 + row * (2 + 2 * G);
        w[2 + 2 * part] = as_uint(m);
        w[3 + 2 * part] = as_uint(s);
        asm volatile("membar.gl;" ::: "memory");
        atomic_inc(&w[0]);
        while (atomic_add(&w[0], 0u) < G) {
        }
        asm volatile("membar.gl;" ::: "memory");
        float mm = as_float(w[2]), ss = as_float(w[3]);
        for (int p = 1; p < G; p++) {
            merge(&mm, &ss, as_float(w[2 + 2 * p]), as_float(w[3 + 2 * p]));
        }
        row_m = mm;
        row_s = ss;
        if (atomic_inc(&w[1]) == G - 1) {
            w[0] = 0;
            w[1] = 0;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    m = row_m;
    s = row_s;
#endif
    const int label = labels[row];
    if (part == 0 && lid == 0) {
        const float xy = as_float(
            (uint)((const __global ushort *)xr)[label] << 16);
        loss[row] = m + log(s) - xy;
    }
    const float ml = m * L2E, a = g / s;
#pragma unroll
    for (int k = 0; k < S; k++) {
        const uint j = part * PART + k * W + lid;
        if (j < NV) {
            dx[(size_t)row * NV + j] =
                grad8(v[k], ml, a, (uint)label / 8 == j ? label % 8 : -1, g);
        }
    }
    if (lid == 0 && atomic_inc(&sync[1]) == groups - 1) {
        sync[0] = 0;
        sync[1] = 0;
    }
}

/* the (max, sum) of the row of this group's PART, from the G groups of
 * the row: published, waited for, merged in one order */
inline void row_pairs(volatile __global uint *sync, uint row, uint part,
                      float *m, float *s)
{
    volatile __global uint *w = sync + 2 + row * (2 + 2 * G);
    w[2 + 2 * part] = as_uint(*m);
    w[3 + 2 * part] = as_uint(*s);
    asm volatile("membar.gl;" ::: "memory");
    atomic_inc(&w[0]);
    while (atomic_add(&w[0], 0u) < G) {
    }
    asm volatile("membar.gl;" ::: "memory");
    *m = as_float(w[2]);
    *s = as_float(w[3]);
    for (int p = 1; p < G; p++) {
        merge(m, s, as_float(w[2 + 2 * p]), as_float(w[3 + 2 * p]));
    }
    if (atomic_inc(&w[1]) == G - 1) {
        w[0] = 0;
        w[1] = 0;
    }
}

/* The row's (m, s) from this group's part: merged in the group, traded
 * with the row's other groups (row_pairs), every item taking them
 * through RM, RS; the row's loss by part 0's first item. Returns the
 * row's label. */
inline int share_stats(volatile __global uint *sync,
                       const __global int *labels, __global float *loss,
                       const __global uint4 *xr, uint row, uint part,
                       __local float *lm, __local float *ls,
                       __local float *rm, __local float *rs, float *m,
                       float *s)
{
    const uint lid = get_local_id(0);
    group_merge(lm, ls, m, s);
    if (lid == 0) {
        row_pairs(sync, row, part, m, s);
        *rm = *m;
        *rs = *s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *m = *rm;
    *s = *rs;
    const int label = labels[row];
    if (part == 0 && lid == 0) {
        const float xy = as_float(
            (uint)((const __global ushort *)xr)[label] << 16);
        loss[row] = *m + log(*s) - xy;
    }
    return label;
}

#define PART_V ((NV + G - 1) / G)

__kernel __attribute__((reqd_work_group_size(W, 1, 1)))
void xent_split(const __global uint4 *x, const __global int *labels,
                __global uint4 *dx, __global float *loss, const float g,
                volatile __global uint *sync, const uint groups)
{
    __local float lm[W / 32], ls[W / 32];
    __local uint ticket;
    __local float row_m, row_s;
    const uint lid = get_local_id(0);
    if (lid == 0) {
        ticket = atomic_inc(&sync[0]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint row = ticket / G, part = ticket % G;
    const __global uint4 *xr = x + (size_t)row * NV;
    const uint first = part * PART_V + lid;
    const uint end = min((uint)NV, (part + 1) * PART_V);
    float m, s;
    part_stats(xr, first, end, &m, &s);
    const int label = share_stats(sync, labels, loss, xr, row, part, lm, ls,
                                  &row_m, &row_s, &m, &s);
    const float ml = m * L2E, a = g / s;
    part_grad(xr, dx + (size_t)row * NV, first, end, label, ml, a, g);
    if (lid == 0 && atomic_inc(&sync[1]) == groups - 1) {
        sync[0] = 0;
        sync[1] = 0;
    }
}

/* xent_local: xent_split's parts held in local memory from their one
 * read to the gradient, copied there by cp.async (all of a part's
 * copies in flight at once, no registers held for them): the row read
 * once from memory, not twice. Each item uses only the vectors it
 * copied, so its own wait is enough. */
#define HELD_L ((PART_V + W - 1) / W)
#if HELD_L * W * 16 <= 48 * 1024 /* built where it fits local memory */

inline void copy16(__local uint4 *dst, const __global uint4 *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"l"(dst),
                 "l"(src)
                 : "memory");
}

__kernel __attribute__((reqd_work_group_size(W, 1, 1)))
void xent_local(const __global uint4 *x, const __global int *labels,
                __global uint4 *dx, __global float *loss, const float g,
                volatile __global uint *sync, const uint groups)
{
    __local float lm[W / 32], ls[W / 32];
    __local uint4 held[HELD_L * W];
    __local uint ticket;
    __local float row_m, row_s;
    const uint lid = get_local_id(0);
    if (lid == 0) {
        ticket = atomic_inc(&sync[0]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint row = ticket / G, part = ticket % G;
    const __global uint4 *xr = x + (size_t)row * NV;
    const uint first = part * PART_V + lid;
    const uint end = min((uint)NV, (part + 1) * PART_V);
#pragma unroll
    for (int k = 0; k < HELD_L; k++) {
        const uint j = first + k * W;
        if (j < end) {
            copy16(&held[k * W + lid], xr + j);
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    float m = NO_MAX;
#pragma unroll
    for (int k = 0; k < HELD_L; k++) {
        if (first + k * W < end) {
            m = fmax(m, max8(held[k * W + lid]));
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < HELD_L; k++) {
        if (first + k * W < end) {
            s += sum8(held[k * W + lid], m * L2E);
        }
    }
    const int label = share_stats(sync, labels, loss, xr, row, part, lm, ls,
                                  &row_m, &row_s, &m, &s);
    const float ml = m * L2E, a = g / s;
    __global uint4 *dxr = dx + (size_t)row * NV;
#pragma unroll
    for (int k = 0; k < HELD_L; k++) {
        const uint j = first + k * W;
        if (j < end) {
            store_grad(dxr + j,
                       grad8(held[k * W + lid], ml, a,
                             (uint)label / 8 == j ? label % 8 : -1, g));
        }
    }
    if (lid == 0 && atomic_inc(&sync[1]) == groups - 1) {
        sync[0] = 0;
        sync[1] = 0;
    }
}
#endif
