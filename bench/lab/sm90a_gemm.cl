/* lab: Y (f32) = X * W, bf16, X M x K row-major, W K x N row-major, on
 * wgmma through a retargeted PTX binary. TM = 64 * WGS rows, TN = WG_N
 * columns, TK deep, STAGES stages of cp.async. */
#define STR_(x) #x
#define STR(x) STR_(x)
#include "sm90a_gemm_asm.h"
#ifdef CACHE_CA
#define CACHE "ca"
#else
#define CACHE "cg"
#endif
#ifndef WGS_N
#define WGS_N 1
#endif
#define PF (STAGES - 1 - MMA_WAIT)
#define TM (64 * WGS)
#define TN (WG_N * WGS_N)
#define THREADS (128 * WGS * WGS_N)
#define A_BYTES (TM * TK * 2)
#define B_BYTES (TK * TN * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
/* A: K-major, rows of TK * 2 bytes, swizzle of that width */
#if TK == 64
#define A_LAYOUT 1UL
#define A_SW(r) ((r) % 8)
#elif TK == 32
#define A_LAYOUT 2UL
#define A_SW(r) (((r) / 2) % 4)
#else
#define A_LAYOUT 3UL
#define A_SW(r) (((r) / 4) % 2)
#endif
/* B: N-major blocks of 64 columns x TK rows, 128-byte swizzle */
#define B_BLOCK (TK * 128)

inline void copy16(__local uchar *dst, const __global ushort *src)
{
    asm volatile("cp.async." CACHE ".shared.global [%0], [%1], 16;" ::"l"(dst), "l"(src) : "memory");
}
inline void load_stage(__local uchar *st, const __global ushort *x, const __global ushort *w,
                       uint row0, uint col0, uint k0, uint tid)
{
    /* A: TM rows x TK/8 chunks */
#pragma unroll
    for (uint i = tid; i < TM * TK / 8; i += THREADS) {
        uint r = i / (TK / 8), c = i % (TK / 8);
        copy16(st + r * (TK * 2) + ((c ^ A_SW(r)) * 16),
               x + (size_t)(row0 + r) * K + k0 + c * 8);
    }
    /* B: TK rows x TN/8 chunks */
    __local uchar *b = st + A_BYTES;
#pragma unroll
    for (uint i = tid; i < TK * TN / 8; i += THREADS) {
        uint k = i / (TN / 8), c = i % (TN / 8);
        copy16(b + (c / 8) * B_BLOCK + k * 128 + (((c % 8) ^ (k % 8)) * 16),
               w + (size_t)(k0 + k) * N + col0 + c * 8);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}
inline ulong desc(__local uchar *p, ulong lbo, ulong sbo, ulong layout)
{
    uint a = (uint)(ulong)p; /* shared window address */
    return (ulong)((a >> 4) & 0x3FFF) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (layout << 62);
}
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1))) void
wg_gemm(const __global ushort *restrict x, const __global ushort *restrict w, __global float *restrict y)
{
    __local uchar smem[STAGES * STAGE_BYTES] __attribute__((aligned(1024)));
    uint tid = get_local_id(0), wg = tid / 128 / WGS_N, wgn = tid / 128 % WGS_N, lane = tid % 32, warp = (tid % 128) / 32;
#if GROUP_M
    /* column-major walk over groups of GROUP_M row tiles */
    uint tiles_n = get_num_groups(0), lin = get_group_id(1) * tiles_n + get_group_id(0);
    uint per = GROUP_M * tiles_n, grp = lin / per, in = lin % per;
    uint row0 = (grp * GROUP_M + in % GROUP_M) * TM, col0 = (in / GROUP_M) * TN;
#else
    uint row0 = get_group_id(1) * TM, col0 = get_group_id(0) * TN;
#endif
    float d[WG_ACCS];
#pragma unroll
    for (int i = 0; i < WG_ACCS; i++) d[i] = 0.0f;
    const uint KT = K / TK;
    for (uint s = 0; s < PF; s++)
        load_stage(smem + s * STAGE_BYTES, x, w, row0, col0, s * TK, tid);
    for (uint kt = 0; kt < KT; kt++) {
        asm volatile("cp.async.wait_group " STR(WAIT) ";" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        uint next = kt + PF;
        if (next < KT)
            load_stage(smem + (next % STAGES) * STAGE_BYTES, x, w, row0, col0, next * TK, tid);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
        __local uchar *st = smem + (kt % STAGES) * STAGE_BYTES;
        wg_fence(d);
#pragma unroll
        for (uint kk = 0; kk < TK; kk += 16) {
            ulong da = desc(st + wg * 64 * (TK * 2) + kk * 2, 16, 8 * TK * 2, A_LAYOUT);
            ulong db = desc(st + A_BYTES + wgn * (WG_N / 64) * B_BLOCK + (kk / 8) * 1024, B_BLOCK, 1024, 1UL);
            wg_mma(d, da, db);
        }
        asm volatile("// @wgmma.commit_group.sync.aligned;" ::: "memory");
        wg_wait(d);
    }
    wg_wait0(d);
    uint r = row0 + wg * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < WG_N / 8; j++) {
        uint c = col0 + wgn * WG_N + j * 8 + (lane % 4) * 2;
        vstore2((float2)(d[4 * j], d[4 * j + 1]), 0, y + (size_t)r * N + c);
        vstore2((float2)(d[4 * j + 2], d[4 * j + 3]), 0, y + (size_t)(r + 8) * N + c);
    }
}
