/* lora_bwd_grad_mma.cl - lora_bwd_grad on NVIDIA tensor cores (f16,
 * bf16; compute capability 8.0+): dA = X^T*G and dB^T = dY^T*(SCALE*T),
 * or their partial sums over slices of GRAD_ROWS rows, after lora_bwd_tg
 * (see lora_bwd_common.cl). Reads X and dY once each.
 *
 * Work-group (c, s) takes a strip of GM_COLS columns, strip c of X for
 * c < GM_STRIPS_K (dA), else of dY (dB), and the rows of slice s: s *
 * GRAD_ROWS .. + GRAD_ROWS, in steps of GM_STEP rows. Each of its
 * GM_WARPS warps owns 32 columns of the strip and every rank column: in
 * m16n8k16 products the strip's columns are the rows of the product (A,
 * X^T: ldmatrix .trans from the X tile, whose rows are the reduction),
 * the rank its columns (B, G: float, split into hi + lo halves of the
 * storage type, two products each, so that G keeps 16 bits or more), the
 * rows the reduction. cp.async copies the X (dY) tiles GM_STAGES - 1
 * steps ahead of the products, zero past the slice's rows and the width;
 * G's values come from the scratch (the same rows for every warp: from
 * the cache after the first).
 *
 * Where the rows make one slice (rows <= GRAD_ROWS) the sums go to dA
 * and dB; else to the slice's partials, which lora_bwd_reduce adds in
 * slice order. Needs K and N multiples of 8 (16-byte chunks; the plan
 * checks it). Local size (32 * GM_WARPS, 1). */
#include "lora_bwd_common.cl"
#include "mma_ptx.cl"

#if !defined(GM_WARPS) || !defined(GM_STEP) || !defined(GM_STAGES)
#error "lora_bwd_grad_mma.cl: the plan must define GM_WARPS, GM_STEP, GM_STAGES"
#endif
#if DTYPE_F32 || IN_FEATURES % 8 != 0 || OUT_FEATURES % 8 != 0 ||       \
    GM_STEP % 16 != 0 || GM_STAGES < 2
#error "lora_bwd_grad_mma.cl: f16 or bf16, K and N multiples of 8"
#endif

#define GM_THREADS (32 * GM_WARPS)
#define GM_COLS (32 * GM_WARPS)              /* columns per work-group */
#define GM_STRIPS_K CEIL_DIV(IN_FEATURES, GM_COLS)
#define GM_TILES_N CEIL_DIV(RANK, 8)          /* n8 tiles of the rank */
#define GM_STAGE (GM_STEP * GM_COLS)          /* halves of a stage */

/* Registers -> the B fragments of rank tile NT for the 16 rows from M of
 * G (rows x TG_PARTS x RANK floats at F, a row's parts added in order),
 * zero past END and RANK: b[0], b[1] the hi
 * halves, b[2], b[3] the lo. Lane (g, t) holds rows 2t, 2t + 1 (b[0])
 * and 2t + 8, 2t + 9 (b[1]) of rank column nt * 8 + g. */
inline void gm_factor(const __global float *f, int m, int end, int nt,
                      uint lane, uint b[4])
{
    const int j = nt * 8 + lane / 4;
    const int r = m + 2 * (lane % 4);
    ushort hi[4], lo[4];
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int row = r + (e / 2) * 8 + e % 2;
        float v = 0.0f;
        if (row < end && j < RANK) {
            const __global float *p = f + (size_t)row * TG_PARTS * RANK + j;
#pragma unroll
            for (int s = 0; s < TG_PARTS; s++)
                v += p[s * RANK];
        }
        mma_split(v, &hi[e], &lo[e]);
    }
    b[0] = (uint)hi[0] | (uint)hi[1] << 16;
    b[1] = (uint)hi[2] | (uint)hi[3] << 16;
    b[2] = (uint)lo[0] | (uint)lo[1] << 16;
    b[3] = (uint)lo[2] | (uint)lo[3] << 16;
}

/* The A fragments of the warp's two m16 tiles (columns C0 .. C0 + 31 of
 * the strip) for rows KK .. KK + 15 of the staged tile XS (GM_COLS
 * halves a row, the reduction along its rows): ldmatrix .trans, lane l
 * giving row (l % 8) + (l / 16) * 8 of column chunk (l / 8) % 2. */
inline void gm_fragments(__local ushort *xs, uint kk, uint c0, uint lane,
                         uint a[2][4])
{
    const uint r = kk + (lane % 8) + (lane >> 4) * 8;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const uint c = (c0 + i * 16) / 8 + ((lane >> 3) & 1);
        mma_trans_x4(xs + r * GM_COLS + mma_swizzle(r, c, GM_COLS / 8) * 8,
                     &a[i][0], &a[i][1], &a[i][2], &a[i][3]);
    }
}

__kernel __attribute__((reqd_work_group_size(GM_THREADS, 1, 1))) void
lora_bwd_grad_mma(const int rows, const __global storage_t *restrict x,
                  const __global storage_t *restrict dy,
                  __global storage_t *restrict da,
                  __global storage_t *restrict db,
                  __global float *restrict scratch)
{
    __local ushort xs[GM_STAGES * GM_STAGE] __attribute__((aligned(16)));
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const int strip = get_group_id(0);
    const int slice = get_group_id(1);
    const int mbeg = slice * GRAD_ROWS;
    const int mend = min(rows, mbeg + GRAD_ROWS);

    /* dA: X's columns against G; dB: dY's against SCALE*T. */
    const int for_da = strip < GM_STRIPS_K;
    const __global storage_t *src = for_da ? x : dy;
    const uint width = for_da ? IN_FEATURES : OUT_FEATURES;
    const __global float *factor =
        for_da ? SCRATCH_G(scratch, rows) : SCRATCH_T(scratch, rows);
    const uint col0 = (for_da ? strip : strip - GM_STRIPS_K) * GM_COLS;
    const uint c0 = warp * 32;

    float acc[2][GM_TILES_N][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int n = 0; n < GM_TILES_N; n++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][n][e] = 0.0f;

    const int steps = CEIL_DIV(mend - mbeg, GM_STEP);
    /* GM_STAGES - 1 steps in flight; one commit group per step (empty
     * past the end) so that the wait counts stay fixed. */
    for (int s = 0; s < GM_STAGES - 1; s++) {
        if (s < steps)
            mma_copy_tile(xs + s * GM_STAGE, src, width, mbeg + s * GM_STEP,
                          GM_STEP, mend, col0, GM_COLS, width, tid,
                          GM_THREADS);
        mma_commit();
    }
    for (int s = 0; s < steps; s++) {
        asm volatile("cp.async.wait_group " STR(GM_PENDING) ";" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        const int next = s + GM_STAGES - 1;
        if (next < steps)
            mma_copy_tile(xs + next % GM_STAGES * GM_STAGE, src, width,
                          mbeg + next * GM_STEP, GM_STEP, mend, col0,
                          GM_COLS, width, tid, GM_THREADS);
        mma_commit();
        __local ushort *at = xs + s % GM_STAGES * GM_STAGE;
#pragma unroll
        for (uint kk = 0; kk < GM_STEP; kk += 16) {
            const int m = mbeg + s * GM_STEP + (int)kk;
            uint a[2][4];
            gm_fragments(at, kk, c0, lane, a);
#pragma unroll
            for (int n = 0; n < GM_TILES_N; n++) {
                uint b[4];
                gm_factor(factor, m, mend, n, lane, b);
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    mma_product(acc[i][n], a[i], b[0], b[1]);
                    mma_product(acc[i][n], a[i], b[2], b[3]);
                }
            }
        }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");

    /* Accumulator e of tile (i, n): column c0 + 16i + g (+8 for e >= 2)
     * of the strip, rank column 8n + 2t + e % 2. */
    const int one = GRAD_SLICES(rows) == 1;
    __global float *part = SCRATCH_PARTIALS(scratch, rows) +
                           (size_t)slice * SLICE_FLOATS +
                           (size_t)(for_da ? 0 : IN_FEATURES) * RANK;
    const uint g = lane / 4, t2 = (lane % 4) * 2;
#pragma unroll
    for (int i = 0; i < 2; i++) {
#pragma unroll
        for (int n = 0; n < GM_TILES_N; n++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const uint col = col0 + c0 + i * 16 + g + (e / 2) * 8;
                const uint j = n * 8 + t2 + e % 2;
                if (col < width && j < RANK)
                    grad_put(part, da, db, one, for_da, (int)col, (int)j,
                             acc[i][n][e]);
            }
        }
    }
}
