/* Lab (not part of specl): a plain copy, read and write with PTX cache
 * hints, to see what a copy of 32-64 MiB costs with L2 clean or full of
 * dirty lines on the H100, and whether eviction priorities change it
 * (bench/logs/copy-hints-lab-h100.txt, delta-tb-lab-h100.txt: they do not).
 * Built by the lab timer with -DU=, -DLDH=, -DSTH= and optionally -DPERSIST. */
/* Copy variants: U float4 per item, loads first; PERSIST: grid-stride over
 * the groups launched. LDH: 0 plain, 1 ld.global.nc.L1::no_allocate,
 * 2 .L2::256B prefetch, 3 both, 4 .cs, 5 .lu, 6 / 7 an L2::cache_hint
 * policy of evict_first / evict_last. STH: 0 plain, 1 st.global.cs,
 * 2 / 3 the evict_first / evict_last policy. rd and wr: the read and the
 * write alone. */
#ifndef U
#define U 1
#endif
#ifndef LDH
#define LDH 0
#endif
#ifndef STH
#define STH 0
#endif
#if LDH >= 6 || STH >= 2
/* An L2 cache policy, evict_last or else evict_first, for all lines. */
inline ulong l2_policy(bool last)
{
    ulong pol;
    if (last)
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    else
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}
#endif
inline float4 ld(const __global float4 *p)
{
#if LDH == 0
    return *p;
#elif LDH >= 6
    float4 v;
    ulong pol = l2_policy(LDH == 7);
    asm volatile("ld.global.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
    return v;
#else
    float4 v;
#if LDH == 1
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];"
#elif LDH == 2
    asm volatile("ld.global.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
#elif LDH == 3
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
#elif LDH == 4
    asm volatile("ld.global.cs.v4.f32 {%0,%1,%2,%3}, [%4];"
#elif LDH == 5
    asm volatile("ld.global.lu.v4.f32 {%0,%1,%2,%3}, [%4];"
#endif
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
#endif
}
inline void st(__global float4 *p, float4 v)
{
#if STH == 0
    *p = v;
#elif STH == 1
    asm volatile("st.global.cs.v4.f32 [%0], {%1,%2,%3,%4};" :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
#else
    ulong pol = l2_policy(STH == 3);
    asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1,%2,%3,%4}, %5;" :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "l"(pol) : "memory");
#endif
}
__kernel void cp(const __global float4 *restrict src, __global float4 *restrict dst, const int n4)
{
    const int l = get_local_id(0), ls = get_local_size(0);
#ifdef PERSIST
    for (int base = get_group_id(0) * ls * U; base < n4; base += get_num_groups(0) * ls * U) {
#else
    { const int base = get_group_id(0) * ls * U;
#endif
        float4 v[U];
#pragma unroll
        for (int j = 0; j < U; j++) v[j] = ld(src + base + j * ls + l);
#pragma unroll
        for (int j = 0; j < U; j++) st(dst + base + j * ls + l, v[j]);
    }
}
__kernel void rd(const __global float4 *restrict src, __global float *restrict dst, const int n4)
{
    const int l = get_local_id(0), ls = get_local_size(0);
    const int base = get_group_id(0) * ls * U;
    float4 s = 0;
#pragma unroll
    for (int j = 0; j < U; j++) s += ld(src + base + j * ls + l);
    if (s.x == 1234.5f) dst[0] = s.y;
}
__kernel void wr(__global float4 *restrict dst, const int n4)
{
    const int l = get_local_id(0), ls = get_local_size(0);
    const int base = get_group_id(0) * ls * U;
#pragma unroll
    for (int j = 0; j < U; j++) st(dst + base + j * ls + l, (float4)(l, j, 1.0f, 2.0f));
}
