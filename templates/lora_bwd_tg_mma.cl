/* lora_bwd_tg_mma.cl - lora_bwd_tg on NVIDIA tensor cores (f16, bf16;
 * compute capability 8.0+): SCALE*T = SCALE*X*A and G = SCALE*dY*B^T into
 * the float scratch, the first kernel of lora_backward (see
 * lora_bwd_common.cl). Reads X and dY once each.
 *
 * Work-group (p, b) takes rows b * TM_ROWS .. + TM_ROWS of X (p = 0: T,
 * against A over K) or of dY (p = 1: G, against B^T over N), a warp per
 * 16 rows, every rank column, in m16n8k16 products with float
 * accumulators. The reduction runs in steps of TM_K: cp.async copies the
 * rows' tiles into local memory TM_STAGES - 1 steps ahead of the
 * products (zero past the rows and the width); the same step's TM_K rows
 * of A (of B^T) go into an n-major tile element by element, from either
 * weight layout (A_AT, B_AT), zero past the rank. Needs K and N multiples
 * of 8 (16-byte chunks; the plan checks it). Local size (32 * TM_WARPS,
 * 1). */
#include "lora_bwd_common.cl"
#include "mma_ptx.cl"

#if !defined(TM_WARPS) || !defined(TM_K) || !defined(TM_STAGES) ||        \
    !defined(TM_PENDING)
#error "lora_bwd_tg_mma.cl: the plan must define TM_WARPS, TM_K, TM_STAGES"
#endif
#if DTYPE_F32 || IN_FEATURES % 8 != 0 || OUT_FEATURES % 8 != 0 ||       \
    TM_K % 16 != 0 || TM_STAGES < 2
#error "lora_bwd_tg_mma.cl: f16 or bf16, K and N multiples of 8, TM_K of 16"
#endif

/* Whether A's rows run along the reduction (out_in: A is r x K); B's
 * (B^T's columns) then do not. */
#if defined(WEIGHT_OUT_IN) && WEIGHT_OUT_IN
#define TM_A_ALONG_K 1
#else
#define TM_A_ALONG_K 0
#endif

#define TM_THREADS (32 * TM_WARPS)
#define TM_ROWS (16 * TM_WARPS)             /* rows per work-group */
#define TM_RANK_PAD (CEIL_DIV(RANK, 16) * 16) /* pairs of n8 tiles */
#define TM_X_STAGE (TM_ROWS * TM_K)         /* halves */
#define TM_W_STAGE (TM_RANK_PAD * TM_K)     /* halves */

/* Stores rows K0 .. K0 + TM_K of A (FOR_T) or of B^T, zero past WIDTH and
 * RANK, into WS: row j of the tile is rank column j, TM_K halves of the
 * reduction, its 16-byte chunks swizzled as the X tile's. Consecutive
 * work-items read along the weight's rows. */
inline void tm_stage_weight(__local ushort *ws,
                            const __global storage_t *restrict a,
                            const __global storage_t *restrict b,
                            const int for_t, const uint width,
                            const uint k0, const uint tid)
{
    const __global ushort *bits =
        (const __global ushort *)(for_t ? a : b);
    const int along_k = for_t ? TM_A_ALONG_K : !TM_A_ALONG_K;
    for (uint i = tid; i < TM_W_STAGE; i += TM_THREADS) {
        const uint j = along_k ? i / TM_K : i % TM_RANK_PAD;
        const uint kk = along_k ? i % TM_K : i / TM_RANK_PAD;
        const uint k = k0 + kk;
        ushort v = 0;
        if (j < RANK && k < width)
            v = bits[for_t ? A_AT(k, j) : B_AT(j, k)];
        ws[j * TM_K + mma_swizzle(j, kk / 8, TM_K / 8) * 8 + kk % 8] = v;
    }
}

__kernel __attribute__((reqd_work_group_size(TM_THREADS, 1, 1))) void
lora_bwd_tg_mma(const int rows, const __global storage_t *restrict x,
                const __global storage_t *restrict a,
                const __global storage_t *restrict b,
                const __global storage_t *restrict dy,
                __global float *restrict scratch)
{
    __local ushort xs[TM_STAGES * TM_X_STAGE] __attribute__((aligned(16)));
    __local ushort ws[TM_STAGES * TM_W_STAGE] __attribute__((aligned(16)));
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const int for_t = get_group_id(0) == 0;
    const uint row0 = get_group_id(1) * TM_ROWS;
    const __global storage_t *src = for_t ? x : dy;
    const uint width = for_t ? IN_FEATURES : OUT_FEATURES;
    __global float *out =
        for_t ? SCRATCH_T(scratch, rows) : SCRATCH_G(scratch, rows);

    float acc[TM_RANK_PAD / 8][4];
#pragma unroll
    for (int n = 0; n < TM_RANK_PAD / 8; n++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            acc[n][e] = 0.0f;

    const int steps = CEIL_DIV(width, TM_K);
    for (int s = 0; s < TM_STAGES - 1; s++) {
        if (s < steps) {
            mma_copy_tile(xs + s * TM_X_STAGE, src, width, row0, TM_ROWS,
                          rows, s * TM_K, TM_K, width, tid, TM_THREADS);
            tm_stage_weight(ws + s * TM_W_STAGE, a, b, for_t, width,
                            s * TM_K, tid);
        }
        mma_commit();
    }
    for (int s = 0; s < steps; s++) {
        asm volatile("cp.async.wait_group " STR(TM_PENDING) ";" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        const int next = s + TM_STAGES - 1;
        if (next < steps) {
            const int at = next % TM_STAGES;
            mma_copy_tile(xs + at * TM_X_STAGE, src, width, row0, TM_ROWS,
                          rows, next * TM_K, TM_K, width, tid, TM_THREADS);
            tm_stage_weight(ws + at * TM_W_STAGE, a, b, for_t, width,
                            next * TM_K, tid);
        }
        mma_commit();
        __local ushort *xt = xs + s % TM_STAGES * TM_X_STAGE;
        __local ushort *wt = ws + s % TM_STAGES * TM_W_STAGE;
#pragma unroll
        for (uint kk = 0; kk < TM_K; kk += 16) {
            /* A: ldmatrix.x4, lane l giving row (l % 8) + ((l / 8) % 2) *
             * 8 of the warp's 16, chunk l / 16 of the 16-deep slice */
            uint fa[4];
            const uint r = warp * 16 + (lane % 8) + ((lane >> 3) & 1) * 8;
            const uint c = kk / 8 + (lane >> 4);
            mma_x4(xt + r * TM_K + mma_swizzle(r, c, TM_K / 8) * 8, &fa[0],
                   &fa[1], &fa[2], &fa[3]);
            /* B: the n-major tile, two n8 tiles a load (mma_x4) */
            const uint bn = (lane % 8) + (lane >> 4) * 8;
            const uint bc = kk / 8 + ((lane >> 3) & 1);
#pragma unroll
            for (int p = 0; p < TM_RANK_PAD / 16; p++) {
                const uint j = p * 16 + bn;
                uint fb[4];
                mma_x4(wt + j * TM_K + mma_swizzle(j, bc, TM_K / 8) * 8,
                       &fb[0], &fb[1], &fb[2], &fb[3]);
                mma_product(acc[2 * p], fa, fb[0], fb[1]);
                mma_product(acc[2 * p + 1], fa, fb[2], fb[3]);
            }
        }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");

    /* Accumulator e of tile n: row g (+8 for e >= 2) of the warp's 16,
     * rank column 8n + 2t + e % 2. */
    const uint g = lane / 4, t2 = (lane % 4) * 2;
#pragma unroll
    for (int n = 0; n < TM_RANK_PAD / 8; n++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const uint row = row0 + warp * 16 + g + (e / 2) * 8;
            const uint j = n * 8 + t2 + e % 2;
            if (row < (uint)rows && j < RANK)
                out[(size_t)row * RANK + j] = SCALE * acc[n][e];
        }
    }
}
