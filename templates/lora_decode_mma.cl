/* lora_decode_mma.cl - few rows on NVIDIA tensor cores (f16/bf16 with
 * W), in one launch: Y (+)= X*W + (SCALE X*A)*B, X*W and X*A summed over
 * `slices` slices of K by the work-groups of each strip, the strip's
 * last work-group to finish adding them up. The tensor-core counterpart
 * of lora_decode.cl, for rows <= DMMA_ROWS per work-group.
 *
 * W streams once, in strips of DMMA_COLS columns: each k-row of a strip
 * is DMMA_COLS * 2 contiguous bytes, and a work-group per strip and slice
 * makes enough of them to keep the device's memory busy (narrow strips
 * over all of K leave too few loads in flight). Each work-group also
 * streams the slice of A (DMMA_RANK_COLS columns, the rank rounded up)
 * beside its strip, so that every strip holds the partial sums of T that
 * its own Y needs: no strip waits for another.
 *
 * The work-group's DMMA_WARPS warps take every DMMA_WARPS-th step of 16
 * values of K of the slice, each with a cp.async pipeline of its own
 * (DMMA_STAGES steps of local memory per warp, synchronised within the
 * warp only); X's fragments come straight from global memory (X is
 * small and cached), one step ahead. The warps' sums then meet in local
 * memory and go to scratch, float:
 *   DMMA_PART(rows, s)          X*W of slice s, rows x OUT_FEATURES
 *   DMMA_TPART(rows, s, strip, slices)
 *                               X*A of slice s, by that strip's group,
 *                               rows x RANK (not yet scaled)
 * Rows past `rows` are zero in X and never stored. Then each work-group
 * counts itself done on its strip's word of `sync` (one word per strip
 * and block of rows, zero at create); the last of the slices sets
 * the word back to zero and writes the strip's Y: T's slices summed and
 * scaled, then X*W's slices in slice order plus T*B. The sums' order is
 * fixed, so Y has the same bits whichever group finishes last.
 *
 * With WEIGHT_OUT_IN (W N x K, A r x K) a step's strip is staged
 * n-major, its rows 16 values of K, and read without .trans (mma_x4).
 *
 * Needs K, N and r multiples of 8 (whole 16-byte chunks; checked by the
 * plan). Local size (32 * DMMA_WARPS, 1); along dimension 0 `slices` x
 * DMMA_STRIPS work-groups (the plan's count for the rows' band), along 1
 * one per DMMA_ROWS rows. */
#include "lora_common.cl"
#include "mma_ptx.cl"
#include "lora_store.cl"
#include "grid_fence.cl"

#if !defined(DMMA_ROWS) || !defined(DMMA_COLS) || !defined(DMMA_WARPS) || \
    !defined(DMMA_STAGES) || !defined(DMMA_PENDING) ||                   \
    !defined(DMMA_RANK_COLS)
#error "lora_decode_mma.cl: the plan must define the DMMA_ constants"
#endif
#if DTYPE_F32 || !HAS_BASE
#error "lora_decode_mma.cl: tensor cores take f16 or bf16 storage, and W"
#endif
#if IN_FEATURES % 8 != 0 || OUT_FEATURES % 8 != 0 || RANK % 8 != 0 ||    \
    DMMA_COLS % 16 != 0 || DMMA_ROWS % 16 != 0 || DMMA_STAGES < 2
#error "lora_decode_mma.cl: K, N, r multiples of 8; columns, rows of 16"
#endif

#define DMMA_STEP 16 /* values of K per step: one m16n8k16 deep */
#define DMMA_STRIPS CEIL_DIV(OUT_FEATURES, DMMA_COLS)
#define DMMA_THREADS (32 * DMMA_WARPS)
#define DMMA_TILES_M (DMMA_ROWS / 16)
#define DMMA_WIDTH (DMMA_COLS + DMMA_RANK_COLS) /* W's strip, then A's */
#define DMMA_TILES_N (DMMA_WIDTH / 8) /* n8 tiles of both */
#define DMMA_W_TILES (DMMA_COLS / 8)
#define DMMA_K_STEPS CEIL_DIV(IN_FEATURES, DMMA_STEP)
#define DMMA_STAGE (DMMA_STEP * DMMA_WIDTH) /* ushorts */
#define DMMA_A_STAGE (DMMA_STEP * DMMA_COLS) /* A's part of a stage */
/* In floats of scratch: X*W of slice S, then (past SLICES of them) X*A
 * of slice S by STRIP's group. */
#define DMMA_PART(rows, s) ((size_t)(s) * (size_t)(rows) * OUT_FEATURES)
#define DMMA_TPART(rows, s, strip, slices)                               \
    ((size_t)(slices) * (size_t)(rows) * OUT_FEATURES +                  \
     ((size_t)(s) * DMMA_STRIPS + (strip)) * (size_t)(rows) * RANK)
#define DMMA_WARP_STAGES (DMMA_STAGES * DMMA_STAGE)
/* The warps' sums of one m16 tile: [warp][tile * 4 + element][lane]. */
#define DMMA_RED (DMMA_WARPS * DMMA_TILES_N * 4 * 32) /* floats */
/* Local memory, ushorts: the warps' stages, reused for their sums and
 * then for the last group's T (DMMA_ROWS x RANK floats). */
#define DMMA_MAX(a, b) ((a) > (b) ? (a) : (b))
#define DMMA_LOCAL                                                       \
    DMMA_MAX(DMMA_MAX(2 * DMMA_RED, DMMA_WARPS * DMMA_WARP_STAGES),      \
             2 * DMMA_ROWS * RANK)
#if !defined(DMMA_LOCAL_BYTES) || 2 * DMMA_LOCAL != DMMA_LOCAL_BYTES
#error "lora_decode_mma.cl: local memory differs from the plan's count"
#endif

/* Starts the copies of K step KT of P's strip of COLS columns from COL0
 * (LD columns a row; zero past K and past LD) into STAGE, a tile of COLS
 * columns. out_in: P is LD x K (W N x K, A r x K), the strip its rows
 * col0 .., and STAGE n-major, COLS rows of DMMA_STEP. */
inline void dmma_copy_strip(__local ushort *stage,
                            const __global storage_t *p, const uint ld,
                            const uint cols, const uint col0, const uint kt,
                            const uint lane)
{
#if WEIGHT_OUT_IN
    mma_copy_tile(stage, p, IN_FEATURES, col0, cols, ld, kt * DMMA_STEP,
                  DMMA_STEP, IN_FEATURES, lane, 32);
#else
    mma_copy_tile(stage, p, ld, kt * DMMA_STEP, DMMA_STEP, IN_FEATURES, col0,
                  cols, ld, lane, 32);
#endif
}

/* Starts the copies of K step KT: W's strip from COL0, then A's. */
inline void dmma_load_step(__local ushort *stage,
                           const __global storage_t *w,
                           const __global storage_t *a, const uint col0,
                           const uint kt, const uint lane)
{
    dmma_copy_strip(stage, w, OUT_FEATURES, DMMA_COLS, col0, kt, lane);
    dmma_copy_strip(stage + DMMA_A_STAGE, a, RANK, DMMA_RANK_COLS, 0, kt,
                    lane);
    mma_commit();
}

/* The A fragments of K step KT for TM m16 tiles of X, from global memory
 * (zero past `rows` and K). */
inline void dmma_load_x(uint xf[DMMA_TILES_M][4],
                        const __global storage_t *x, const uint rows,
                        const uint kt, const uint lane, const uint tm)
{
    uint g = lane / 4, k = kt * DMMA_STEP + (lane % 4) * 2;
#pragma unroll
    for (uint i = 0; i < DMMA_TILES_M; i++) {
        if (i < tm) {
            uint r0 = i * 16 + g, r1 = r0 + 8;
            const __global uint *p0 =
                (const __global uint *)(x + (size_t)r0 * IN_FEATURES + k);
            const __global uint *p1 =
                (const __global uint *)(x + (size_t)r1 * IN_FEATURES + k);
            xf[i][0] = r0 < rows && k < IN_FEATURES ? p0[0] : 0;
            xf[i][1] = r1 < rows && k < IN_FEATURES ? p1[0] : 0;
            xf[i][2] = r0 < rows && k + 8 < IN_FEATURES ? p0[4] : 0;
            xf[i][3] = r1 < rows && k + 8 < IN_FEATURES ? p1[4] : 0;
        }
    }
}

/* ACC's n8 tiles J0 .. J0 + COLS / 8 += X's fragments XF times the staged
 * strip STAGE of COLS columns, for TM m16 tiles of rows. */
inline void dmma_products(float acc[DMMA_TILES_M][DMMA_TILES_N][4],
                          const uint j0, const uint cols,
                          __local ushort *stage,
                          const uint xf[DMMA_TILES_M][4], const uint tm,
                          const uint lane)
{
#if !WEIGHT_OUT_IN
    uint row = (lane % 8) + ((lane >> 3) & 1) * 8, chunk = lane >> 4;
#endif
#pragma unroll
    for (uint j = 0; j < cols / 16; j++) {
        uint b[4];
#if WEIGHT_OUT_IN
        /* n-major, two chunks a row (mma_x4's lanes) */
        uint bn = 16 * j + (lane % 8) + (lane >> 4) * 8;
        mma_x4(stage + bn * DMMA_STEP +
                   mma_swizzle(bn, (lane >> 3) & 1, DMMA_STEP / 8) * 8,
               &b[0], &b[1], &b[2], &b[3]);
#else
        uint c = 2 * j + chunk;
        mma_trans_x4(stage + row * cols + mma_swizzle(row, c, cols / 8) * 8,
                     &b[0], &b[1], &b[2], &b[3]);
#endif
#pragma unroll
        for (uint i = 0; i < DMMA_TILES_M; i++) {
            if (i < tm) {
                mma_product(acc[i][j0 + 2 * j], xf[i], b[0], b[1]);
                mma_product(acc[i][j0 + 2 * j + 1], xf[i], b[2], b[3]);
            }
        }
    }
}

/* The warp's share of the slice's steps [KT0, KT1) of W's strip from
 * COL0 and of A into ACC, for TM m16 tiles of rows. TM is a constant at
 * each call, so ACC stays in registers. */
inline void dmma_stream(float acc[DMMA_TILES_M][DMMA_TILES_N][4],
                        const uint tm, const __global storage_t *x,
                        const __global storage_t *w,
                        const __global storage_t *a, const uint col0,
                        __local ushort *stages, const uint rows,
                        const uint kt0, const uint kt1, const uint warp,
                        const uint lane)
{
    uint steps = kt1 - kt0 > warp
                     ? (kt1 - kt0 - warp + DMMA_WARPS - 1) / DMMA_WARPS
                     : 0;
    /* One commit group per step (empty past the end) keeps the wait
     * counts fixed. */
    for (uint s = 0; s < DMMA_STAGES - 1; s++) {
        if (s < steps)
            dmma_load_step(stages + s * DMMA_STAGE, w, a, col0,
                           kt0 + warp + s * DMMA_WARPS, lane);
        else
            mma_commit();
    }
    uint xf[DMMA_TILES_M][4], xn[DMMA_TILES_M][4];
    if (steps > 0)
        dmma_load_x(xf, x, rows, kt0 + warp, lane, tm);
    for (uint s = 0; s < steps; s++) {
        asm volatile("cp.async.wait_group " STR(DMMA_PENDING) ";" ::
                         : "memory");
        /* The warp's copies are its own: a warp barrier makes them
         * visible to its other lanes. */
        asm volatile("bar.warp.sync -1;" ::: "memory");
        uint next = s + DMMA_STAGES - 1;
        if (next < steps)
            dmma_load_step(stages + (next % DMMA_STAGES) * DMMA_STAGE, w, a,
                           col0, kt0 + warp + next * DMMA_WARPS, lane);
        else
            mma_commit();
        if (s + 1 < steps)
            dmma_load_x(xn, x, rows, kt0 + warp + (s + 1) * DMMA_WARPS,
                        lane, tm);
        __local ushort *stage = stages + (s % DMMA_STAGES) * DMMA_STAGE;
        dmma_products(acc, 0, DMMA_COLS, stage, xf, tm, lane);
        dmma_products(acc, DMMA_W_TILES, DMMA_RANK_COLS,
                      stage + DMMA_A_STAGE, xf, tm, lane);
#pragma unroll
        for (uint i = 0; i < DMMA_TILES_M; i++)
#pragma unroll
            for (uint e = 0; e < 4; e++)
                xf[i][e] = xn[i][e];
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}

/* ACC's m16 tile I summed over the warps: W's tiles to PART (OUT_FEATURES
 * floats a row, from column COL0), A's to TPART (RANK a row). Each n8
 * tile j's element e of lane l is row 16 I + l / 4 (+ 8 for e >= 2),
 * column 8 j + 2 (l % 4) (+ 1 for odd e) of the strip. */
inline void dmma_sum_tile(float acc[DMMA_TILES_M][DMMA_TILES_N][4],
                          const uint i, __local float *red,
                          __global float *part, __global float *tpart,
                          const uint col0, const uint rows, const uint warp,
                          const uint lane, const uint tid)
{
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint j = 0; j < DMMA_TILES_N; j++)
#pragma unroll
        for (uint e = 0; e < 4; e++)
            red[((warp * DMMA_TILES_N + j) * 4 + e) * 32 + lane] =
                acc[i][j][e];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint o = tid; o < DMMA_TILES_N * 4 * 32; o += DMMA_THREADS) {
        float sum = 0.0f;
        for (uint w = 0; w < DMMA_WARPS; w++)
            sum += red[w * DMMA_TILES_N * 4 * 32 + o];
        uint l = o % 32, e = o / 32 % 4, j = o / 128;
        uint r = i * 16 + l / 4 + (e >= 2 ? 8 : 0);
        uint c = j * 8 + (l % 4) * 2 + (e & 1);
        if (r >= rows)
            continue;
        if (j < DMMA_W_TILES) {
            if (col0 + c < OUT_FEATURES)
                part[(size_t)r * OUT_FEATURES + col0 + c] = sum;
        } else if (c - DMMA_COLS < RANK) {
            tpart[(size_t)r * RANK + c - DMMA_COLS] = sum;
        }
    }
}

/* The strip's Y, by the last of its work-groups: T = SCALE * the sum of
 * the strip's slices of X*A (into T, local), then each VEC columns of a
 * row the sum of the slices of X*W, in slice order, plus T*B. */
inline void dmma_finish(const uint rows_all, const uint slices,
                        const uint row0, const uint rows, const uint strip,
                        const __global storage_t *b,
                        __global storage_t *y,
                        const __global float *scratch, __local float *t,
                        const uint tid)
{
    for (uint o = tid; o < rows * RANK; o += DMMA_THREADS) {
        const size_t at = (size_t)(row0 + o / RANK) * RANK + o % RANK;
        float sum = 0.0f;
        for (uint s = 0; s < slices; s++)
            sum += scratch[DMMA_TPART(rows_all, s, strip, slices) + at];
        t[o] = SCALE * sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint col0 = strip * DMMA_COLS;
    for (uint o = tid; o < rows * (DMMA_COLS / VEC); o += DMMA_THREADS) {
        const uint r = o / (DMMA_COLS / VEC);
        const uint col = col0 + o % (DMMA_COLS / VEC) * VEC;
        if (col >= OUT_FEATURES)
            continue;
        const size_t at = (size_t)(row0 + r) * OUT_FEATURES + col;
        vecf_t sum = PARTIAL_V(scratch + DMMA_PART(rows_all, 0) + at);
        for (uint s = 1; s < slices; s++)
            sum += PARTIAL_V(scratch + DMMA_PART(rows_all, s) + at);
        for (uint j = 0; j < RANK; j++)
            sum += t[r * RANK + j] * loadv_step(b, B_AT(j, col), B_NSTEP);
        store_vec(y, at, sum);
    }
}

/* The slice's steps of W's strip and of A, summed and stored to scratch;
 * then, by the strip's last work-group, its Y. */
inline void dmma_strip(const uint tm, const uint rows_all, const uint slices,
                       const uint row0, const uint rows, const uint slice,
                       const uint strip,
                       const __global storage_t *x,
                       const __global storage_t *w,
                       const __global storage_t *a,
                       const __global storage_t *b, __global storage_t *y,
                       __global float *scratch,
                       volatile __global uint *sync,
                       __local ushort *local_mem, __local uint *last)
{
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const uint kt0 = slice * DMMA_K_STEPS / slices;
    const uint kt1 = (slice + 1) * DMMA_K_STEPS / slices;
    const uint col0 = strip * DMMA_COLS;
    float acc[DMMA_TILES_M][DMMA_TILES_N][4];
#pragma unroll
    for (uint i = 0; i < DMMA_TILES_M; i++)
#pragma unroll
        for (uint j = 0; j < DMMA_TILES_N; j++)
#pragma unroll
            for (uint e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;
    dmma_stream(acc, tm, x + (size_t)row0 * IN_FEATURES, w, a, col0,
                local_mem + warp * DMMA_WARP_STAGES, rows, kt0, kt1, warp,
                lane);
    __global float *part = scratch + DMMA_PART(rows_all, slice) +
                           (size_t)row0 * OUT_FEATURES;
    __global float *tpart = scratch +
                            DMMA_TPART(rows_all, slice, strip, slices) +
                            (size_t)row0 * RANK;
#pragma unroll
    for (uint i = 0; i < DMMA_TILES_M; i++)
        if (i < tm)
            dmma_sum_tile(acc, i, (__local float *)local_mem, part, tpart,
                          col0, rows, warp, lane, tid);
    if (!grid_last(sync + get_group_id(1) * DMMA_STRIPS + strip, slices,
                   tid, last))
        return;
    dmma_finish(rows_all, slices, row0, rows, strip, b, y, scratch,
                (__local float *)local_mem, tid);
}

__kernel __attribute__((reqd_work_group_size(DMMA_THREADS, 1, 1))) void
lora_decode_mma(const int rows_all, const int slices,
                const __global storage_t *restrict x,
                const __global storage_t *restrict w,
                const __global storage_t *restrict a,
                const __global storage_t *restrict b,
                __global storage_t *restrict y,
                __global float *restrict scratch,
                volatile __global uint *sync)
{
    __local ushort local_mem[DMMA_LOCAL] __attribute__((aligned(16)));
    __local uint last;
    const uint slice = get_group_id(0) / DMMA_STRIPS;
    const uint strip = get_group_id(0) % DMMA_STRIPS;
    const uint row0 = get_group_id(1) * DMMA_ROWS;
    const uint rows = min((uint)rows_all - row0, (uint)DMMA_ROWS);
    /* Uniform per work-group: one instantiation per count of m16
     * tiles. */
#if DMMA_TILES_M > 1
    if (rows > 16)
        dmma_strip(DMMA_TILES_M, rows_all, slices, row0, rows, slice, strip,
                   x, w, a, b, y, scratch, sync, local_mem, &last);
    else
#endif
        dmma_strip(1, rows_all, slices, row0, rows, slice, strip, x, w, a,
                   b, y, scratch, sync, local_mem, &last);
}
