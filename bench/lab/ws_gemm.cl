/* lab: Y (f32) = X * W, bf16, X M x K row-major, W K x N row-major, on
 * wgmma through a retargeted PTX binary, with the work-group's warps
 * split by role: warpgroup 0 copies tiles (cp.async) into STAGES buffers,
 * warpgroups 1..CW multiply (wgmma m64nWG_Nk16), and the two sides meet
 * on mbarriers per buffer (full: the copies landed; empty: the products
 * that read it are done) instead of a work-group barrier each K step.
 * TM = 64 * CW rows, TN = WG_N columns, TK = 64 deep.
 * Options: SIGNAL 0: each copier waits for its own copies of the step
 * before (cp.async.wait_group 1), fences them for the async proxy and
 * arrives; SIGNAL 1: cp.async.mbarrier.arrive.noinc arrives when the
 * copies land and the multipliers fence after their wait.
 * REGS_COPY / REGS_MMA: setmaxnreg per role (0: leave the registers).
 * TMA 1: one work-item of warpgroup 0 loads each stage by the tensor
 * memory accelerator (cp.async.bulk.tensor, 128-byte swizzle, the same
 * layout as the copies) from the tensor maps in MAPS (X's, then W's:
 * 128 bytes each, made by the host), counted on the full barrier by
 * bytes (templates/tma_ptx.cl). TMA 2: the same, the maps written by
 * the copying work-item of each work-group itself (tma_map_2d) before its
 * first load; TMA 3: each work-group into 256 bytes of its own.
 * PERSIST 1 (with TMA): as many work-groups as the host launches (one per
 * compute unit), each taking tiles G, G + groups, ... of the M / TM x N /
 * TN tiles, row by row; the steps count on across tiles, so the copier
 * loads the next tile's first stages while the multipliers store this
 * tile (its last step handed back before the stores). M: the rows. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define MMA_WAIT 1
#include "sm90a_gemm_asm.h"
#define DTYPE_BF16 1
#include "tma_ptx.cl" /* templates/: the maps, the boxes, expect_tx */
#ifndef SIGNAL
#define SIGNAL 0
#endif
#ifndef TMA
#define TMA 0
#endif
#ifndef PERSIST
#define PERSIST 0
#endif
#if PERSIST && !TMA
#error "ws_gemm.cl: PERSIST needs TMA"
#endif
#define TK 64
#define TM (64 * CW)
#define TN WG_N
#define THREADS (128 * (CW + 1))
#define A_BYTES (TM * TK * 2)
#define B_BYTES (TK * TN * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define B_BLOCK (TK * 128) /* N-major blocks of 64 columns, 128-byte swizzle */

inline void copy16(__local uchar *dst, const __global ushort *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"l"(dst), "l"(src) : "memory");
}
inline void bar_init(__local ulong *bar, uint count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"l"(bar), "r"(count) : "memory");
}
inline void bar_arrive(__local ulong *bar)
{
    asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0]; }" ::"l"(bar) : "memory");
}
inline void bar_wait(__local ulong *bar, uint parity)
{
    uint done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "l"(bar), "r"(parity) : "memory");
    } while (!done);
}
inline void load_stage(__local uchar *st, const __global ushort *x, const __global ushort *w,
                       uint row0, uint col0, uint k0, uint tid)
{
    /* A: TM rows x 8 chunks of 16 bytes, 128-byte swizzle */
#pragma unroll
    for (uint j = 0; j < TM * TK / 8 / 128; j++) {
        uint i = tid + j * 128, r = i / 8, c = i % 8;
        copy16(st + r * 128 + ((c ^ (r % 8)) * 16), x + (size_t)(row0 + r) * K + k0 + c * 8);
    }
    __local uchar *b = st + A_BYTES;
#pragma unroll
    for (uint j = 0; j < TK * TN / 8 / 128; j++) {
        uint i = tid + j * 128, k = i / (TN / 8), c = i % (TN / 8);
        copy16(b + (c / 8) * B_BLOCK + k * 128 + (((c % 8) ^ (k % 8)) * 16),
               w + (size_t)(k0 + k) * N + col0 + c * 8);
    }
}
/* Where X and W lie in the device's address space, for the host's
 * tensor maps. */
__kernel void addresses(__global ulong *out, const __global ushort *x, const __global ushort *w)
{
    out[0] = (ulong)x;
    out[1] = (ulong)w;
}
inline ulong desc(__local uchar *p, ulong lbo, ulong sbo, ulong layout)
{
    uint a = (uint)(ulong)p;
    return (ulong)((a >> 4) & 0x3FFF) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (layout << 62);
}
/* Stage ST's X (rows R0..) and W (columns C0..) tiles of K step K0 by the
 * accelerator, counted on BAR. */
inline void tma_stage(__local uchar *st, const __global ulong *maps, uint k0, uint r0, uint c0,
                      __local ulong *bar)
{
    tma_bar_expect(bar, STAGE_BYTES);
    tma_load_2d((__local ushort *)st, maps, k0, r0, bar);
    for (uint b = 0; b < TN / 64; b++)
        tma_load_2d((__local ushort *)(st + A_BYTES + b * B_BLOCK), maps + 16, c0 + b * 64, k0, bar);
}
/* Warpgroup WG's products of stage ST into D: one commit group. */
inline void mma_stage(__local uchar *st, uint wg, float d[WG_ACCS])
{
    wg_fence(d);
#pragma unroll
    for (uint kk = 0; kk < TK; kk += 16) {
        ulong da = desc(st + wg * 64 * (TK * 2) + kk * 2, 16, 8 * TK * 2, 1UL);
        ulong db = desc(st + A_BYTES + (kk / 8) * 1024, B_BLOCK, 1024, 1UL);
        wg_mma(d, da, db);
    }
    asm volatile("// @wgmma.commit_group.sync.aligned;" ::: "memory");
}
/* Warpgroup WG's 64 x WG_N of the tile at (R0, C0) from D into Y. */
inline void store_tile(__global float *y, const float d[WG_ACCS], uint r0, uint c0, uint wg, uint tid)
{
    uint lane = tid % 32, warp = (tid % 128) / 32;
    uint r = r0 + wg * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < WG_N / 8; j++) {
        uint c = c0 + j * 8 + (lane % 4) * 2;
        vstore2((float2)(d[4 * j], d[4 * j + 1]), 0, y + (size_t)r * N + c);
        vstore2((float2)(d[4 * j + 2], d[4 * j + 3]), 0, y + (size_t)(r + 8) * N + c);
    }
}
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1))) void
ws_gemm(const __global ushort *restrict x, const __global ushort *restrict w, __global float *restrict y,
        __global ulong *restrict maps)
{
    __local uchar smem[STAGES * STAGE_BYTES] __attribute__((aligned(1024)));
    __local ulong full[STAGES], empty[STAGES];
    uint tid = get_local_id(0), role = tid / 128;
#if GROUP_M
    uint tiles_n = get_num_groups(0), lin = get_group_id(1) * tiles_n + get_group_id(0);
    uint per = GROUP_M * tiles_n, grp = lin / per, in = lin % per;
    uint row0 = (grp * GROUP_M + in % GROUP_M) * TM, col0 = (in / GROUP_M) * TN;
#else
    uint row0 = get_group_id(1) * TM, col0 = get_group_id(0) * TN;
#endif
    if (tid < STAGES) {
        bar_init(&full[tid], TMA ? 1 : 128);
        bar_init(&empty[tid], 4 * CW);
    }
#if TMA
    asm volatile("// @fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint KT = K / TK;
#if PERSIST
    const uint tiles_n = N / TN, n_tiles = tiles_n * (M / TM);
    if (role == 0) {
#if REGS_COPY
        asm volatile("// @setmaxnreg.dec.sync.aligned.u32 " STR(REGS_COPY) ";" ::: "memory");
#endif
        if (tid == 0) {
#if TMA >= 2
            maps += TMA == 3 ? 32 * get_group_id(0) : 0;
            tma_map_2d(maps, x, K, M, K * 2, 64, TM);
            tma_map_2d(maps + 16, w, N, K, N * 2, 64, 64);
#endif
            uint g = 0;
            for (uint t = get_group_id(0); t < n_tiles; t += get_num_groups(0)) {
                uint r0 = (t / tiles_n) * TM, c0 = (t % tiles_n) * TN;
                for (uint kt = 0; kt < KT; kt++, g++) {
                    uint s = g % STAGES;
                    if (g >= STAGES)
                        bar_wait(&empty[s], (g / STAGES - 1) & 1);
                    tma_stage(smem + s * STAGE_BYTES, maps, kt * TK, r0, c0, &full[s]);
                }
            }
        }
        return;
    }
#if REGS_MMA
    asm volatile("// @setmaxnreg.inc.sync.aligned.u32 " STR(REGS_MMA) ";" ::: "memory");
#endif
    {
        uint wg = role - 1, lane = tid % 32;
        uint g = 0;
        for (uint t = get_group_id(0); t < n_tiles; t += get_num_groups(0)) {
            uint r0 = (t / tiles_n) * TM, c0 = (t % tiles_n) * TN;
            float d[WG_ACCS];
#pragma unroll
            for (int i = 0; i < WG_ACCS; i++)
                d[i] = 0.0f;
            for (uint kt = 0; kt < KT; kt++, g++) {
                uint s = g % STAGES;
                bar_wait(&full[s], (g / STAGES) & 1);
                mma_stage(smem + s * STAGE_BYTES, wg, d);
                wg_wait(d);
                if (kt > 0 && lane == 0)
                    bar_arrive(&empty[(g - 1) % STAGES]);
            }
            wg_wait0(d);
            if (lane == 0)
                bar_arrive(&empty[(g - 1) % STAGES]); /* the tile's last step */
            store_tile(y, d, r0, c0, wg, tid);
        }
    }
    return;
#endif
#if TMA
    if (role == 0) {
        if (tid == 0) {
#if TMA >= 2
#if TMA == 3
            maps += 32 * (get_group_id(1) * get_num_groups(0) + get_group_id(0));
#endif
            tma_map_2d(maps, x, K, get_num_groups(1) * TM, K * 2, 64, TM);
            tma_map_2d(maps + 16, w, N, K, N * 2, 64, 64);
#endif
            for (uint kt = 0; kt < KT; kt++) {
                uint s = kt % STAGES;
                if (kt >= STAGES)
                    bar_wait(&empty[s], (kt / STAGES - 1) & 1);
                tma_stage(smem + s * STAGE_BYTES, maps, kt * TK, row0, col0, &full[s]);
            }
        }
        return;
    }
#else
    if (role == 0) {
#if REGS_COPY
        asm volatile("// @setmaxnreg.dec.sync.aligned.u32 " STR(REGS_COPY) ";" ::: "memory");
#endif
        for (uint kt = 0; kt < KT; kt++) {
            uint s = kt % STAGES;
            if (kt >= STAGES)
                bar_wait(&empty[s], (kt / STAGES - 1) & 1);
            load_stage(smem + s * STAGE_BYTES, x, w, row0, col0, kt * TK, tid);
#if SIGNAL
            asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"l"(&full[s]) : "memory");
#else
            asm volatile("cp.async.commit_group;" ::: "memory");
            if (kt > 0) {
                asm volatile("cp.async.wait_group 1;" ::: "memory");
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                bar_arrive(&full[(kt - 1) % STAGES]);
            }
#endif
        }
#if !SIGNAL
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        bar_arrive(&full[(KT - 1) % STAGES]);
#endif
        return;
    }
#endif
#if REGS_MMA
    asm volatile("// @setmaxnreg.inc.sync.aligned.u32 " STR(REGS_MMA) ";" ::: "memory");
#endif
    uint wg = role - 1, lane = tid % 32;
    float d[WG_ACCS];
#pragma unroll
    for (int i = 0; i < WG_ACCS; i++) d[i] = 0.0f;
    for (uint kt = 0; kt < KT; kt++) {
        uint s = kt % STAGES;
        bar_wait(&full[s], (kt / STAGES) & 1);
#if SIGNAL && !TMA
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
        mma_stage(smem + s * STAGE_BYTES, wg, d);
        wg_wait(d); /* the step before's products are done: free its buffer */
        if (kt > 0 && lane == 0)
            bar_arrive(&empty[(kt - 1) % STAGES]);
    }
    wg_wait0(d);
    store_tile(y, d, row0, col0, wg, tid);
}
