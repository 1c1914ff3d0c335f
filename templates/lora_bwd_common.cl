/* lora_bwd_common.cl - what the kernels of lora_backward share: the
 * gradients of Y = X*W + SCALE*(X*A)*B with W frozen. With T = X*A and
 * G = SCALE*dY*B^T (rows x r each):
 *
 *     dB = SCALE*T^T*dY   (r x N)    dA = X^T*G   (K x r)
 *     dX = dY*W^T + G*A^T   (rows x K)
 *
 * X is rows x K, W is K x N, A is K x r, B is r x N, dY is rows x N, dX is
 * rows x K, dA is K x r, dB is r x N, all row-major in storage_t (W, A, B,
 * dA and dB as lora_layout.cl has them: with weight_layout: out_in, N x
 * K, r x K, N x r, r x K and N x r);
 * arithmetic and accumulation are float. dA and dB come out the same bit
 * for bit on every run: their sums over rows run in a fixed order (no
 * atomics).
 *
 * Kernels, in launch order:
 *   lora_bwd_tg      G and SCALE*T into the scratch (reads X and dY once).
 *                    Local size (TG_THREADS), TG_ROWS rows per work-group.
 *   lora_bwd_grad    dA and dB, or where rows > GRAD_ROWS their partial
 *                    sums over each slice of GRAD_ROWS rows: work-group
 *                    (c, s) takes strip c of 32 columns of X (dA's K rows;
 *                    the first CEIL_DIV(K, 32) strips) or of dY (dB's N
 *                    columns; the CEIL_DIV(N, 32) after) and the rows
 *                    s * GRAD_ROWS .. + GRAD_ROWS, walked from the last
 *                    down. Local size (GRAD_THREADS), GRAD_VEC columns per
 *                    work-item.
 *   lora_bwd_reduce  where rows > GRAD_ROWS: dA, dB (+)= the sum of the
 *                    partials in slice order (else it returns at once).
 *                    Local size (REDUCE_THREADS), one work-item per
 *                    element of dA and dB.
 *   lora_bwd_wt      INPUT_GRAD 1 and HAS_BASE 1, W in_out, before
 *                    lora_bwd_dx: W^T into the scratch (out_in's W is
 *                    W^T). Local size (32, 8), a 32 x 32 block of W per
 *                    work-group.
 *   lora_bwd_dx      INPUT_GRAD 1: dX = [dY | G] * [W^T ; A^T], a
 *                    register-tiled GEMM whose reduction runs over N, then
 *                    r. Local size (DX_TILE_N / DX_WORK_N, DX_TILE_M /
 *                    DX_WORK_M), DX_TILE_M rows and DX_TILE_N columns of
 *                    dX per work-group.
 *   lora_bwd_dx_mma, lora_bwd_dx_wgmma  lora_bwd_dx's GEMM with W on
 *                    tensor cores (f16, bf16; NVIDIA compute capability
 *                    8.0+, and 9.0 for warpgroups): mma_tiles.cl and
 *                    wgmma_tiles.cl, W and A read as they lie, no copy.
 *   lora_bwd_tg_mma, lora_bwd_grad_mma  lora_bwd_tg and lora_bwd_grad on
 *                    tensor cores (f16, bf16, rank <= 64; compute
 *                    capability 8.0+): T and G as TG_PARTS partial sums
 *                    over stretches of K and N, then the same slices and
 *                    partial sums of dA and dB, which the last
 *                    work-group of each strip adds up (no
 *                    lora_bwd_reduce).
 *   lora_bwd_xpass, lora_bwd_xsum  X_ONCE (float32, tensor cores): after
 *                    lora_bwd_tg's G alone, T and dA from one read of X
 *                    as partial sums, then their sums; lora_bwd_grad and
 *                    lora_bwd_reduce then take dB alone. The plan defines
 *                    X_ONCE wherever lora_bwd_tg runs, and with it
 *                    XP_ROWS, XP_COLS, XP_WARPS and XP_BLOCKS.
 *
 * Scratch (floats), for `rows` rows:
 *   G          at 0:              rows x TG_PARTS x RANK
 *   SCALE*T    at rows * TG_PARTS * RANK: rows x TG_PARTS x RANK (a row's
 *              TG_PARTS partial sums over stretches of K or N, which the
 *              kernels after add; lora_bwd_tg writes one, whole)
 *   partials   at 2 * rows * TG_PARTS * RANK rounded up to a multiple of
 *              4 (16 bytes, for float4 reads): GRAD_SLICES(rows) slices of
 *              (K + N) * RANK floats; slice s holds the sums over its rows
 *              of dA (K x RANK, row-major) then of dB^T (N x RANK: column
 *              n of dB at n * RANK). Unused with one slice. With X_ONCE
 *              lora_bwd_xpass's partials there first (lora_bwd_xpass.cl),
 *              summed before lora_bwd_grad writes its own.
 *   W^T        lora_bwd_wt (in_out): past the partials, rounded up
 *              to a multiple of 4 floats: N x K storage_t (W transposed,
 *              row n at n * K), written by lora_bwd_wt for lora_bwd_dx.
 *              The plan counts K * N + 3 floats for it.
 *
 * Shape, set by the plan (gen/op_lora_backward.c):
 *   IN_FEATURES   K
 *   OUT_FEATURES  N
 *   RANK          r
 *   SCALE         float literal
 *   HAS_BASE      1: dX includes dY*W^T; 0: dX = G*A^T (no W)
 *   INPUT_GRAD    1: dX is computed; 0: no dX (and no W)
 *   ACCUMULATE    1: dA += ..., dB += ...; 0: dA = ..., dB = ...
 * Storage: storage_DTYPE.cl, one of f32, f16, bf16, chosen by the plan. */

#include "storage_@dtype@.cl"

#if !defined(IN_FEATURES) || !defined(OUT_FEATURES) || !defined(RANK) ||  \
    !defined(SCALE) || !defined(HAS_BASE) || !defined(INPUT_GRAD) ||      \
    !defined(ACCUMULATE) || !defined(GRAD_ROWS) || !defined(TG_PARTS)
#error "lora_bwd_common.cl: the plan must define the shape, GRAD_ROWS, TG_PARTS"
#endif

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

#include "lora_layout.cl"

/* Slices of partial sums lora_bwd_grad writes for ROWS rows. */
#define GRAD_SLICES(rows) CEIL_DIV((rows), GRAD_ROWS)
/* Floats of one slice: past 2^31 where the layer is wide and the rank
 * too (the checker takes K, N up to 2^24 and the rank up to 4064), so in
 * size_t, as every offset into the scratch. */
#define SLICE_FLOATS ((size_t)(IN_FEATURES + OUT_FEATURES) * RANK)

/* Where the parts of the scratch start, for ROWS rows. */
#define SCRATCH_G(scratch, rows) (scratch)
#define SCRATCH_T(scratch, rows) ((scratch) + (size_t)(rows) * TG_PARTS * RANK)
#define SCRATCH_PARTIALS(scratch, rows)                                   \
    ((scratch) + CEIL_DIV((size_t)(rows) * 2 * TG_PARTS * RANK, 4) * 4)
/* Output (column N of X (FOR_DA) or dY, rank column J) of a slice of
 * lora_bwd_grad or lora_bwd_grad_mma: SUM into the slice's partials
 * PART (column-major by the rank), or where the rows make one slice
 * (ONE) into dA or dB in their layout (added with ACCUMULATE). */
inline void grad_put(__global float *part, __global storage_t *da,
                     __global storage_t *db, int one, int for_da, int n,
                     int j, float sum)
{
    if (!one) {
        part[(size_t)n * RANK + j] = sum;
    } else if (for_da) {
#if ACCUMULATE
        sum = load1(da, A_AT(n, j)) + sum;
#endif
        store1(da, A_AT(n, j), sum);
    } else {
#if ACCUMULATE
        sum = load1(db, B_AT(j, n)) + sum;
#endif
        store1(db, B_AT(j, n), sum);
    }
}

#if X_ONCE
/* lora_bwd_xpass's partials, where lora_bwd_grad's go after them: T's,
 * XP_BLOCKS x rows x RANK (a block of XP_COLS columns each), then dA's,
 * XP_SLICES(rows) x K x RANK (a slice of XP_ROWS rows each, row-major as
 * A in_out). */
#define XP_SLICES(rows) CEIL_DIV((rows), XP_ROWS)
#define SCRATCH_XT(scratch, rows) SCRATCH_PARTIALS(scratch, rows)
#define SCRATCH_XDA(scratch, rows)                                        \
    (SCRATCH_XT(scratch, rows) + (size_t)XP_BLOCKS * (rows) * RANK)
#endif

/* W^T (lora_bwd_wt), past the partials, at a multiple of 4 floats. */
#define SCRATCH_WT(scratch, rows)                                         \
    (SCRATCH_PARTIALS(scratch, rows) +                                    \
     CEIL_DIV((size_t)GRAD_SLICES(rows) * SLICE_FLOATS, 4) * 4)
