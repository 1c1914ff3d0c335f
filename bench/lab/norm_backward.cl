/* norm_backward.cl (lab) - bf16 rmsnorm_backward at D features, for
 * designs of the row pass before they enter templates/norm_backward.cl:
 * T items a row, PER 8-element vectors an item, PF 1 to load the next
 * row while this one is reduced; each work-group takes a block of rows
 * and writes one partial row of dgamma, summed by nb_reduce.
 * FL 1 holds the row as floats (converted on load) instead of bf16
 * pairs; GL 1 reads gamma where used instead of holding it.
 * ACC_LOCAL 1 keeps the work-group's partial row of dgamma in local
 * memory (D floats, each item adding into its own columns) instead of
 * PER x 8 registers an item, for more work-groups a compute unit.
 * LN 1 is layernorm_backward instead: four sums a row (x, x^2, g, g x),
 * and dbeta's partial row after dgamma's in each block's part.
 * RR 1 holds no row: the sums' loop reads x and dy, and the outputs'
 * loop reads them again (from L1, 16 KiB a row), so that registers
 * leave room for more work-groups a compute unit.
 * Macros: D, T, PER, PF, EPS, FL, GL, ACC_LOCAL, LN, RR. */
#ifndef RR
#define RR 0
#endif
#ifndef LN
#define LN 0
#endif
#ifndef FL
#define FL 0
#endif
#ifndef GL
#define GL 0
#endif
#ifndef ACC_LOCAL
#define ACC_LOCAL 0
#endif
#if FL
typedef float8 rowv;
#define LOADR(p, i) unpack((p)[i])
#define UNP(v) (v)
#else
typedef uint4 rowv;
#define LOADR(p, i) ((p)[i])
#define UNP(v) unpack(v)
#endif
#if GL
#define GAM(k) unpack(gamma[lid + (k) * T])
#else
#define GAM(k) unpack(gr[k])
#endif
#define NV (D / 8)
#define WARPS (T / 32)

inline float8 unpack(uint4 u)
{
    const uint4 lo = u << 16, hi = u & 0xffff0000u;
    return as_float8(shuffle2(lo, hi, (uint8)(0, 4, 1, 5, 2, 6, 3, 7)));
}

/* A load the compiler cannot merge with an earlier one of the same
 * address (restrict lets it keep the first load's registers instead). */
inline uint4 reload(const __global uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

inline uint pack2(float a, float b)
{
    uint r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
    return r;
}

inline uint4 pack(float8 v)
{
    return (uint4)(pack2(v.s0, v.s1), pack2(v.s2, v.s3), pack2(v.s4, v.s5),
                   pack2(v.s6, v.s7));
}

inline float warp_add(float v)
{
    for (uint o = 16; o > 0; o >>= 1) {
        float w;
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                     : "=f"(w) : "f"(v), "r"(o));
        v += w;
    }
    return v;
}

__kernel __attribute__((reqd_work_group_size(T, 1, 1)))
void nb_rows(const int rows, const int per_block,
             const __global uint4 *restrict x,
             const __global uint4 *restrict gamma,
             const __global uint4 *restrict dy, __global uint4 *restrict dx,
             __global float8 *restrict part)
{
#if LN
    __local float4 ws[2][WARPS];
#else
    __local float2 ws[2][WARPS];
#endif
    const uint lid = get_local_id(0);
    const int start = get_group_id(0) * per_block;
    const int end = min(start + per_block, rows);
#if ACC_LOCAL
    __local float8 accl[NV];
#define ACC(k) accl[lid + (k) * T]
#else
    float8 acc[PER];
#define ACC(k) acc[k]
#endif
#if LN
    float8 accb[PER];
#endif
#if !GL
    uint4 gr[PER];
#endif
    for (uint k = 0; k < PER; k++) {
        ACC(k) = 0.0f;
#if LN
        accb[k] = 0.0f;
#endif
#if !GL
        gr[k] = gamma[lid + k * T];
#endif
    }
#if RR
    uint it = 0;
    for (int r = start; r < end; r++, it++) {
        const size_t base = (size_t)r * NV + lid;
#if LN
        float sx = 0.0f, ss = 0.0f, sg = 0.0f, sgx = 0.0f;
#else
        float ss = 0.0f, sg = 0.0f;
#endif
        for (uint k = 0; k < PER; k++) {
            const float8 xv = unpack(x[base + k * T]);
            const float8 g = GAM(k) * unpack(dy[base + k * T]);
            const float8 a = xv * xv, b = g * xv;
#if LN
            sx += ((xv.s0 + xv.s1) + (xv.s2 + xv.s3)) +
                  ((xv.s4 + xv.s5) + (xv.s6 + xv.s7));
            sg += ((g.s0 + g.s1) + (g.s2 + g.s3)) + ((g.s4 + g.s5) + (g.s6 + g.s7));
            sgx += ((b.s0 + b.s1) + (b.s2 + b.s3)) + ((b.s4 + b.s5) + (b.s6 + b.s7));
#else
            sg += ((b.s0 + b.s1) + (b.s2 + b.s3)) + ((b.s4 + b.s5) + (b.s6 + b.s7));
#endif
            ss += ((a.s0 + a.s1) + (a.s2 + a.s3)) + ((a.s4 + a.s5) + (a.s6 + a.s7));
        }
#if LN
        sx = warp_add(sx);
        ss = warp_add(ss);
        sg = warp_add(sg);
        sgx = warp_add(sgx);
        if (lid % 32 == 0) {
            ws[it & 1][lid / 32] = (float4)(sx, ss, sg, sgx);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        float4 t = ws[it & 1][0];
        for (uint w = 1; w < WARPS; w++) {
            t += ws[it & 1][w];
        }
        const float mean = t.x / D;
        const float rs = rsqrt(fmax(t.y / D - mean * mean, 0.0f) + EPS);
        const float mg = t.z / D;
        const float mgx = rs * (t.w / D - mean * mg);
#else
        ss = warp_add(ss);
        sg = warp_add(sg);
        if (lid % 32 == 0) {
            ws[it & 1][lid / 32] = (float2)(ss, sg);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        float2 t = ws[it & 1][0];
        for (uint w = 1; w < WARPS; w++) {
            t += ws[it & 1][w];
        }
        const float mean = 0.0f, mg = 0.0f;
        const float rs = rsqrt(t.x / D + EPS);
        const float mgx = rs * t.y / D;
#endif
        for (uint k = 0; k < PER; k++) {
            const float8 dv = unpack(reload(dy + base + k * T));
            const float8 xh = (unpack(reload(x + base + k * T)) - mean) * rs;
            const float8 g = GAM(k) * dv;
            dx[base + k * T] = pack(rs * (g - mg - xh * mgx));
            ACC(k) += dv * xh;
#if LN
            accb[k] += dv;
#endif
        }
    }
#else
    rowv xr[PER], dr[PER];
    if (start < end) {
        for (uint k = 0; k < PER; k++) {
            xr[k] = LOADR(x, (size_t)start * NV + lid + k * T);
            dr[k] = LOADR(dy, (size_t)start * NV + lid + k * T);
        }
    }
    uint it = 0;
    for (int r = start; r < end; r++, it++) {
#if PF
        rowv nx[PER], nd[PER];
        const int rn = min(r + 1, end - 1);
        for (uint k = 0; k < PER; k++) {
            nx[k] = LOADR(x, (size_t)rn * NV + lid + k * T);
            nd[k] = LOADR(dy, (size_t)rn * NV + lid + k * T);
        }
#endif
#if LN
        float sx = 0.0f, ss = 0.0f, sg = 0.0f, sgx = 0.0f;
        for (uint k = 0; k < PER; k++) {
            const float8 xv = UNP(xr[k]);
            const float8 g = GAM(k) * UNP(dr[k]);
            const float8 a = xv * xv, b = g * xv;
            sx += ((xv.s0 + xv.s1) + (xv.s2 + xv.s3)) +
                  ((xv.s4 + xv.s5) + (xv.s6 + xv.s7));
            ss += ((a.s0 + a.s1) + (a.s2 + a.s3)) + ((a.s4 + a.s5) + (a.s6 + a.s7));
            sg += ((g.s0 + g.s1) + (g.s2 + g.s3)) + ((g.s4 + g.s5) + (g.s6 + g.s7));
            sgx += ((b.s0 + b.s1) + (b.s2 + b.s3)) + ((b.s4 + b.s5) + (b.s6 + b.s7));
        }
        sx = warp_add(sx);
        ss = warp_add(ss);
        sg = warp_add(sg);
        sgx = warp_add(sgx);
        if (lid % 32 == 0) {
            ws[it & 1][lid / 32] = (float4)(sx, ss, sg, sgx);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        float4 t = ws[it & 1][0];
        for (uint w = 1; w < WARPS; w++) {
            t += ws[it & 1][w];
        }
        const float mean = t.x / D;
        const float rs = rsqrt(fmax(t.y / D - mean * mean, 0.0f) + EPS);
        const float mg = t.z / D;
        const float mgx = rs * (t.w / D - mean * mg);
        for (uint k = 0; k < PER; k++) {
            const float8 dv = UNP(dr[k]);
            const float8 xh = (UNP(xr[k]) - mean) * rs;
            const float8 g = GAM(k) * dv;
            dx[(size_t)r * NV + lid + k * T] = pack(rs * (g - mg - xh * mgx));
            ACC(k) += dv * xh;
            accb[k] += dv;
        }
#else
        float ss = 0.0f, sg = 0.0f;
        for (uint k = 0; k < PER; k++) {
            const float8 xv = UNP(xr[k]);
            const float8 g = GAM(k) * UNP(dr[k]);
            const float8 a = xv * xv, b = g * xv;
            ss += ((a.s0 + a.s1) + (a.s2 + a.s3)) + ((a.s4 + a.s5) + (a.s6 + a.s7));
            sg += ((b.s0 + b.s1) + (b.s2 + b.s3)) + ((b.s4 + b.s5) + (b.s6 + b.s7));
        }
        ss = warp_add(ss);
        sg = warp_add(sg);
        if (lid % 32 == 0) {
            ws[it & 1][lid / 32] = (float2)(ss, sg);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        float2 t = ws[it & 1][0];
        for (uint w = 1; w < WARPS; w++) {
            t += ws[it & 1][w];
        }
        const float rs = rsqrt(t.x / D + EPS);
        const float mgx = rs * t.y / D;
        for (uint k = 0; k < PER; k++) {
            const float8 dv = UNP(dr[k]);
            const float8 xh = UNP(xr[k]) * rs;
            const float8 g = GAM(k) * dv;
            dx[(size_t)r * NV + lid + k * T] = pack(rs * (g - xh * mgx));
            ACC(k) += dv * xh;
        }
#endif
#if PF
        for (uint k = 0; k < PER; k++) {
            xr[k] = nx[k];
            dr[k] = nd[k];
        }
#else
        if (r + 1 < end) {
            for (uint k = 0; k < PER; k++) {
                xr[k] = LOADR(x, (size_t)(r + 1) * NV + lid + k * T);
                dr[k] = LOADR(dy, (size_t)(r + 1) * NV + lid + k * T);
            }
        }
#endif
    }
#endif
    for (uint k = 0; k < PER; k++) {
        part[(size_t)get_group_id(0) * NV * (1 + LN) + lid + k * T] = ACC(k);
#if LN
        part[(size_t)get_group_id(0) * NV * 2 + NV + lid + k * T] = accb[k];
#endif
    }
}

/* dgamma[j] = the sum of the partial rows, in order: 8 lanes a column. */
__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void nb_reduce(const int parts, const __global float8 *restrict part,
               __global float8 *restrict dgamma)
{
    __local float8 lanes[8][32];
    const uint j = get_global_id(0), l = get_local_id(1);
    float8 s = 0.0f;
    for (int p = l; p < parts; p += 8) {
        s += part[(size_t)p * NV * (1 + LN) + j];
    }
    lanes[l][get_local_id(0)] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        for (uint k = 1; k < 8; k++) {
            s += lanes[k][get_local_id(0)];
        }
        dgamma[j] = s;
    }
}

/* The same sums a float a work-item, get_local_size(1) lanes (at most
 * 32) a column: D / 32 work-groups. */
__kernel void nb_reduce1(const int parts, const __global float *restrict part,
                         __global float *restrict dgamma)
{
    __local float lanes[32][33];
    const uint j = get_global_id(0), l = get_local_id(1);
    const uint nl = get_local_size(1);
    float s = 0.0f;
#pragma unroll 4
    for (int p = l; p < parts; p += nl) {
        s += part[(size_t)p * D * (1 + LN) + j];
    }
    lanes[l][get_local_id(0)] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        for (uint k = 1; k < nl; k++) {
            s += lanes[k][get_local_id(0)];
        }
        dgamma[j] = s;
    }
}

__kernel void nb_copy(const __global uint4 *restrict x,
                      const __global uint4 *restrict dy,
                      __global uint4 *restrict dx)
{
    const size_t i = get_global_id(0);
    const uint4 a = x[i], b = dy[i];
    dx[i] = a ^ b;
}
