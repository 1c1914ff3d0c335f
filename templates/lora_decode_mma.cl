/* lora_decode_mma.cl - few rows on NVIDIA tensor cores (f16/bf16 with
 * W): the partial sums of X*W and of X*A over DSUM_SLICES slices of K,
 * which lora_decode_sum.cl adds up with T*B. The tensor-core counterpart
 * of lora_decode.cl, for rows <= DMMA_ROWS per work-group.
 *
 * W streams once, in strips of DMMA_COLS columns: each k-row of a strip
 * is DMMA_COLS * 2 contiguous bytes, and a work-group per strip and slice
 * makes enough of them to keep the device's memory busy (narrow strips
 * over all of K leave too few loads in flight). One more strip per slice
 * streams A
 * instead, for T's partial sums.
 *
 * The work-group's DMMA_WARPS warps take every DMMA_WARPS-th step of 16
 * values of K of the slice, each with a cp.async pipeline of its own
 * (DMMA_STAGES steps of local memory per warp, synchronised within the
 * warp only); X's fragments come straight from global memory (X is
 * small and cached), one step ahead. The warps' sums then meet in local
 * memory and go to scratch, float:
 *   DSUM_PART(rows, s)   X*W of slice s, rows x OUT_FEATURES
 *   DSUM_TPART(rows, s)  X*A of slice s, rows x RANK (not yet scaled)
 * Rows past `rows` are zero in X and never stored.
 *
 * With WEIGHT_OUT_IN (W N x K, A r x K) a step's strip is staged
 * n-major, its rows 16 values of K, and read without .trans (mma_x4).
 *
 * Needs K, N and r multiples of 8 (whole 16-byte chunks; checked by the
 * plan). Local size (32 * DMMA_WARPS, 1); along dimension 0 DSUM_SLICES x
 * (DMMA_STRIPS + 1) work-groups, along 1 one per DMMA_ROWS rows. */
#include "lora_common.cl"
#include "mma_ptx.cl"
#include "lora_decode_part.cl"

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
#define DMMA_WIDTH                                                       \
    (DMMA_COLS > DMMA_RANK_COLS ? DMMA_COLS : DMMA_RANK_COLS)
#define DMMA_TILES_N (DMMA_WIDTH / 8) /* n8 tiles of the wider strip */
#define DMMA_K_STEPS CEIL_DIV(IN_FEATURES, DMMA_STEP)
#define DMMA_STAGE (DMMA_STEP * DMMA_WIDTH) /* ushorts */
#define DMMA_WARP_STAGES (DMMA_STAGES * DMMA_STAGE)
/* The warps' sums of one m16 tile: [warp][tile * 4 + element][lane]. */
#define DMMA_RED (DMMA_WARPS * DMMA_TILES_N * 4 * 32) /* floats */
#define DMMA_LOCAL                                                       \
    (2 * DMMA_RED > DMMA_WARPS * DMMA_WARP_STAGES                        \
         ? 2 * DMMA_RED                                                  \
         : DMMA_WARPS * DMMA_WARP_STAGES) /* ushorts */
#if !defined(DMMA_LOCAL_BYTES) || 2 * DMMA_LOCAL != DMMA_LOCAL_BYTES
#error "lora_decode_mma.cl: local memory differs from the plan's count"
#endif

/* Starts the copies of K step KT of a strip of P (LD columns a row, COLS
 * of them from COL0, zero past K and past LD) into STAGE, a tile of COLS
 * columns. out_in: P is LD x K (W N x K, A r x K), the strip its rows
 * col0 .., and STAGE n-major, COLS rows of DMMA_STEP. */
inline void dmma_load_step(__local ushort *stage,
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

/* The warp's share of the slice's steps [KT0, KT1) of a strip of NT n8
 * tiles of P into ACC, for TM m16 tiles of rows. TM and NT are constants
 * at each call, so ACC stays in registers. */
inline void dmma_stream(float acc[DMMA_TILES_M][DMMA_TILES_N][4],
                        const uint tm, const uint nt,
                        const __global storage_t *x,
                        const __global storage_t *p, const uint ld,
                        const uint col0, __local ushort *stages,
                        const uint rows, const uint kt0, const uint kt1,
                        const uint warp, const uint lane)
{
    const uint cols = nt * 8;
    uint steps = kt1 - kt0 > warp
                     ? (kt1 - kt0 - warp + DMMA_WARPS - 1) / DMMA_WARPS
                     : 0;
    /* One commit group per step (empty past the end) keeps the wait
     * counts fixed. */
    for (uint s = 0; s < DMMA_STAGES - 1; s++) {
        if (s < steps)
            dmma_load_step(stages + s * DMMA_STAGE, p, ld, cols, col0,
                           kt0 + warp + s * DMMA_WARPS, lane);
        else
            mma_commit();
    }
    uint xf[DMMA_TILES_M][4], xn[DMMA_TILES_M][4];
    if (steps > 0)
        dmma_load_x(xf, x, rows, kt0 + warp, lane, tm);
#if !WEIGHT_OUT_IN
    uint row = (lane % 8) + ((lane >> 3) & 1) * 8, chunk = lane >> 4;
#endif
    for (uint s = 0; s < steps; s++) {
        asm volatile("cp.async.wait_group " STR(DMMA_PENDING) ";" ::
                         : "memory");
        /* The warp's copies are its own: a warp barrier makes them
         * visible to its other lanes. */
        asm volatile("bar.warp.sync -1;" ::: "memory");
        uint next = s + DMMA_STAGES - 1;
        if (next < steps)
            dmma_load_step(stages + (next % DMMA_STAGES) * DMMA_STAGE, p, ld,
                           cols, col0, kt0 + warp + next * DMMA_WARPS, lane);
        else
            mma_commit();
        if (s + 1 < steps)
            dmma_load_x(xn, x, rows, kt0 + warp + (s + 1) * DMMA_WARPS,
                        lane, tm);
        __local ushort *stage = stages + (s % DMMA_STAGES) * DMMA_STAGE;
#pragma unroll
        for (uint j = 0; j < DMMA_TILES_N / 2; j++) {
            if (2 * j < nt) {
                uint b[4];
#if WEIGHT_OUT_IN
                /* n-major, two chunks a row (mma_x4's lanes) */
                uint bn = 16 * j + (lane % 8) + (lane >> 4) * 8;
                mma_x4(stage + bn * DMMA_STEP +
                           mma_swizzle(bn, (lane >> 3) & 1,
                                       DMMA_STEP / 8) * 8,
                       &b[0], &b[1], &b[2], &b[3]);
#else
                uint c = 2 * j + chunk;
                mma_trans_x4(stage + row * cols +
                                 mma_swizzle(row, c, cols / 8) * 8,
                             &b[0], &b[1], &b[2], &b[3]);
#endif
#pragma unroll
                for (uint i = 0; i < DMMA_TILES_M; i++) {
                    if (i < tm) {
                        mma_product(acc[i][2 * j], xf[i], b[0], b[1]);
                        mma_product(acc[i][2 * j + 1], xf[i], b[2], b[3]);
                    }
                }
            }
        }
#pragma unroll
        for (uint i = 0; i < DMMA_TILES_M; i++)
#pragma unroll
            for (uint e = 0; e < 4; e++)
                xf[i][e] = xn[i][e];
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}

/* ACC's m16 tile I summed over the warps, to OUT (LD floats a row, COLS
 * columns from COL0): each of NT n8 tiles' element e of lane l is row
 * 16 I + l / 4 (+ 8 for e >= 2), column 8 j + 2 (l % 4) (+ 1 for odd
 * e). */
inline void dmma_sum_tile(float acc[DMMA_TILES_M][DMMA_TILES_N][4],
                          const uint i, const uint nt, __local float *red,
                          __global float *out, const uint ld,
                          const uint col0, const uint rows, const uint warp,
                          const uint lane, const uint tid)
{
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint j = 0; j < DMMA_TILES_N; j++)
        if (j < nt)
#pragma unroll
            for (uint e = 0; e < 4; e++)
                red[((warp * DMMA_TILES_N + j) * 4 + e) * 32 + lane] =
                    acc[i][j][e];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint o = tid; o < nt * 4 * 32; o += DMMA_THREADS) {
        float sum = 0.0f;
        for (uint w = 0; w < DMMA_WARPS; w++)
            sum += red[w * DMMA_TILES_N * 4 * 32 + o];
        uint l = o % 32, e = o / 32 % 4, j = o / 128;
        uint r = i * 16 + l / 4 + (e >= 2 ? 8 : 0);
        uint c = col0 + j * 8 + (l % 4) * 2 + (e & 1);
        if (r < rows && c < ld)
            out[(size_t)r * ld + c] = sum;
    }
}

/* The slice's steps for NT n8 tiles (a strip of W, or A's), summed and
 * stored to OUT. */
inline void dmma_strip(const uint tm, const uint nt,
                       const __global storage_t *x,
                       const __global storage_t *p, const uint ld,
                       const uint col0, __local ushort *local_mem,
                       __global float *out, const uint rows, const uint kt0,
                       const uint kt1)
{
    uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    float acc[DMMA_TILES_M][DMMA_TILES_N][4];
#pragma unroll
    for (uint i = 0; i < DMMA_TILES_M; i++)
#pragma unroll
        for (uint j = 0; j < DMMA_TILES_N; j++)
#pragma unroll
            for (uint e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;
    dmma_stream(acc, tm, nt, x, p, ld, col0,
                local_mem + warp * DMMA_WARP_STAGES, rows, kt0, kt1, warp,
                lane);
#pragma unroll
    for (uint i = 0; i < DMMA_TILES_M; i++)
        if (i < tm)
            dmma_sum_tile(acc, i, nt, (__local float *)local_mem, out, ld,
                          col0, rows, warp, lane, tid);
}

__kernel __attribute__((reqd_work_group_size(DMMA_THREADS, 1, 1))) void
lora_decode_mma(const int rows_all, const __global storage_t *restrict x,
                const __global storage_t *restrict w,
                const __global storage_t *restrict a,
                __global float *restrict scratch)
{
    __local ushort local_mem[DMMA_LOCAL] __attribute__((aligned(16)));
    const uint slice = get_group_id(0) / (DMMA_STRIPS + 1);
    const uint strip = get_group_id(0) % (DMMA_STRIPS + 1);
    const uint row0 = get_group_id(1) * DMMA_ROWS;
    const uint rows = min((uint)rows_all - row0, (uint)DMMA_ROWS);
    const uint kt0 = slice * DMMA_K_STEPS / DSUM_SLICES;
    const uint kt1 = (slice + 1) * DMMA_K_STEPS / DSUM_SLICES;
    x += (size_t)row0 * IN_FEATURES;
    /* Uniform per work-group: one instantiation per strip kind and
     * count of m16 tiles. */
    if (strip == DMMA_STRIPS) {
        __global float *t = scratch + DSUM_TPART(rows_all, slice) +
                            (size_t)row0 * RANK;
#if DMMA_TILES_M > 1
        if (rows > 16)
            dmma_strip(DMMA_TILES_M, DMMA_RANK_COLS / 8, x, a, RANK, 0,
                       local_mem, t, rows, kt0, kt1);
        else
#endif
            dmma_strip(1, DMMA_RANK_COLS / 8, x, a, RANK, 0, local_mem, t,
                       rows, kt0, kt1);
    } else {
        __global float *part = scratch + DSUM_PART(rows_all, slice) +
                               (size_t)row0 * OUT_FEATURES;
        const uint col0 = strip * DMMA_COLS;
#if DMMA_TILES_M > 1
        if (rows > 16)
            dmma_strip(DMMA_TILES_M, DMMA_COLS / 8, x, w, OUT_FEATURES,
                       col0, local_mem, part, rows, kt0, kt1);
        else
#endif
            dmma_strip(1, DMMA_COLS / 8, x, w, OUT_FEATURES, col0,
                       local_mem, part, rows, kt0, kt1);
    }
}
