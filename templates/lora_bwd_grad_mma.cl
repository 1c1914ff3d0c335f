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
 * steps ahead of the products, zero past the slice's rows and the width.
 * G's values (the same rows for every warp) are read once per work-group:
 * each work-item loads its share of the next step's rows, every partial
 * sum, into registers before the products of this step and, after them,
 * adds the parts and stores the sums, split into hi and lo, in the order
 * of the B fragments into the other of two local buffers; a warp then
 * reads a fragment as one 16-byte load.
 *
 * Where the rows make one slice (rows <= GRAD_ROWS) the sums go to dA
 * and dB; else to the slice's partials, and the last of a strip's
 * work-groups to finish (counted on the strip's word of SYNC, zero at
 * create) adds the strip's partials in slice order into dA or dB: the
 * same bits whichever finishes last. Needs K and N multiples of 8
 * (16-byte chunks; the plan checks it). Local size (32 * GM_WARPS, 1). */
#include "lora_bwd_common.cl"
#include "mma_ptx.cl"
#include "grid_fence.cl"

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

#define GM_RANKS (GM_TILES_N * 8)             /* the rank, padded */
/* Factor values per step, and per work-item. */
#define GM_FACTOR (GM_STEP * GM_RANKS)
#define GM_FACTOR_PER (GM_FACTOR / GM_THREADS)
#if GM_FACTOR % GM_THREADS != 0
#error "lora_bwd_grad_mma.cl: a step's factor must share out evenly"
#endif
/* Halves of one local buffer of B fragments: per m16 x n8 tile of a
 * step, 32 lanes x (hi b0, hi b1, lo b0, lo b1) as pairs of halves. */
#define GM_FRAG (GM_FACTOR * 2)

/* Work-item TID's share of the step of rows from M of the factor F (rows
 * x TG_PARTS x RANK floats), every part, zero past END and RANK: value i
 * is element TID + i * GM_THREADS of the step (row-major, GM_RANKS a row),
 * so that neighbours read neighbouring floats. */
inline void gm_factor_load(const __global float *f, int m, int end, uint tid,
                           float v[GM_FACTOR_PER][TG_PARTS])
{
#pragma unroll
    for (int i = 0; i < GM_FACTOR_PER; i++) {
        const uint e = tid + i * GM_THREADS;
        const int row = m + (int)(e / GM_RANKS);
        const int j = e % GM_RANKS;
        const int live = row < end && j < RANK;
        const __global float *p = f + (size_t)(live ? row : 0) * TG_PARTS *
                                          RANK + (live ? j : 0);
#pragma unroll
        for (int s = 0; s < TG_PARTS; s++)
            v[i][s] = live ? p[s * RANK] : 0.0f;
    }
}

/* The sums of V's parts (in order) into FL, split into hi and lo halves,
 * where the lane that needs each holds it in its B fragment: lane
 * (g, t) of the tile (row / 16, j / 8) holds rows 2t, 2t + 1 (b0) and
 * 2t + 8, 2t + 9 (b1) of column j = 8 * (j / 8) + g. */
inline void gm_factor_store(__local ushort *fl,
                            const float v[GM_FACTOR_PER][TG_PARTS], uint tid)
{
#pragma unroll
    for (int i = 0; i < GM_FACTOR_PER; i++) {
        const uint e = tid + i * GM_THREADS;
        const uint row = e / GM_RANKS, j = e % GM_RANKS;
        float sum = 0.0f;
#pragma unroll
        for (int s = 0; s < TG_PARTS; s++)
            sum += v[i][s];
        ushort hi, lo;
        mma_split(sum, &hi, &lo);
        const uint r16 = row % 16;
        const uint tile = (row / 16) * GM_TILES_N + j / 8;
        const uint lane = (j % 8) * 4 + (r16 % 8) / 2;
        __local ushort *at = fl + (tile * 32 + lane) * 8 + (r16 / 8) * 2 +
                             r16 % 2;
        at[0] = hi;
        at[4] = lo;
    }
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

/* Float4s of the strip's partials a work-item adds at once, and slices
 * of each loaded at once: 16 loads in flight, so that the last group of
 * a strip waits for memory a few times, not once a partial. */
#define GM_SUM_QUADS 4
#define GM_SUM_SLICES 4

/* dA's (FOR_DA) or dB's columns COL0 .. COL0 + GM_COLS - 1 of WIDTH (+)=
 * the sums of their partials over SLICES slices from PART0 (slice 0's
 * first partial of the strip), added in slice order. The strip's
 * partials lie together (columns x RANK floats, from a multiple of 4: K
 * and N are multiples of 8), so they are read as float4s. */
inline void gm_sum_strip(const __global float *part0, const uint slices,
                         __global storage_t *da, __global storage_t *db,
                         const int for_da, const uint col0,
                         const uint width, const uint tid)
{
    const uint quads = min((uint)GM_COLS, width - col0) * RANK / 4;
    const __global float4 *p = (const __global float4 *)part0;
    for (uint q0 = tid; q0 < quads; q0 += GM_SUM_QUADS * GM_THREADS) {
        float4 sum[GM_SUM_QUADS];
#pragma unroll
        for (int i = 0; i < GM_SUM_QUADS; i++)
            sum[i] = (float4)(0.0f);
        for (uint s = 0; s < slices; s += GM_SUM_SLICES) {
            float4 v[GM_SUM_QUADS][GM_SUM_SLICES];
#pragma unroll
            for (int i = 0; i < GM_SUM_QUADS; i++) {
                const uint q = q0 + i * GM_THREADS;
#pragma unroll
                for (uint u = 0; u < GM_SUM_SLICES; u++)
                    v[i][u] = q < quads && s + u < slices
                                  ? p[q + (s + u) * (SLICE_FLOATS / 4)]
                                  : (float4)(0.0f);
            }
#pragma unroll
            for (int i = 0; i < GM_SUM_QUADS; i++)
#pragma unroll
                for (uint u = 0; u < GM_SUM_SLICES; u++)
                    if (s + u < slices)
                        sum[i] += v[i][u];
        }
#pragma unroll
        for (int i = 0; i < GM_SUM_QUADS; i++) {
            const uint q = q0 + i * GM_THREADS;
            if (q >= quads)
                break;
            const float e4[4] = {sum[i].x, sum[i].y, sum[i].z, sum[i].w};
#pragma unroll
            for (uint c = 0; c < 4; c++) {
                const uint e = 4 * q + c;
                grad_put(NULL, da, db, 1, for_da, (int)(col0 + e / RANK),
                         (int)(e % RANK), e4[c]);
            }
        }
    }
}

__kernel __attribute__((reqd_work_group_size(GM_THREADS, 1, 1))) void
lora_bwd_grad_mma(const int rows, const __global storage_t *restrict x,
                  const __global storage_t *restrict dy,
                  __global storage_t *restrict da,
                  __global storage_t *restrict db,
                  __global float *restrict scratch,
                  volatile __global uint *restrict sync)
{
    __local ushort xs[GM_STAGES * GM_STAGE] __attribute__((aligned(16)));
    __local ushort fl[2 * GM_FRAG] __attribute__((aligned(16)));
    __local uint last;
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
    float next_factor[GM_FACTOR_PER][TG_PARTS];
    gm_factor_load(factor, mbeg, mend, tid, next_factor);
    gm_factor_store(fl, next_factor, tid);
    for (int s = 0; s < steps; s++) {
        asm volatile("cp.async.wait_group " STR(GM_PENDING) ";" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        const int next = s + GM_STAGES - 1;
        if (next < steps)
            mma_copy_tile(xs + next % GM_STAGES * GM_STAGE, src, width,
                          mbeg + next * GM_STEP, GM_STEP, mend, col0,
                          GM_COLS, width, tid, GM_THREADS);
        mma_commit();
        if (s + 1 < steps)
            gm_factor_load(factor, mbeg + (s + 1) * GM_STEP, mend, tid,
                           next_factor);
        __local ushort *at = xs + s % GM_STAGES * GM_STAGE;
        __local ushort *fs = fl + s % 2 * GM_FRAG;
#pragma unroll
        for (uint kk = 0; kk < GM_STEP; kk += 16) {
            uint a[2][4];
            gm_fragments(at, kk, c0, lane, a);
#pragma unroll
            for (int n = 0; n < GM_TILES_N; n++) {
                const uint4 b = *(__local uint4 *)(
                    fs + (((kk / 16) * GM_TILES_N + n) * 32 + lane) * 8);
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    mma_product(acc[i][n], a[i], b.x, b.y);
                    mma_product(acc[i][n], a[i], b.z, b.w);
                }
            }
        }
        /* The next step's buffer was last read in the step before this
         * one, which every warp has left (the barrier above). */
        if (s + 1 < steps)
            gm_factor_store(fl + (s + 1) % 2 * GM_FRAG, next_factor, tid);
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");

    /* Accumulator e of tile (i, n): column c0 + 16i + g (+8 for e >= 2)
     * of the strip, rank column 8n + 2t + e % 2. */
    const uint slices = GRAD_SLICES(rows);
    const int one = slices == 1;
    __global float *part0 = SCRATCH_PARTIALS(scratch, rows) +
                            (size_t)(for_da ? 0 : IN_FEATURES) * RANK;
    __global float *part = part0 + (size_t)slice * SLICE_FLOATS;
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
    if (!one && grid_last(sync + strip, slices, tid, &last))
        gm_sum_strip(part0 + (size_t)col0 * RANK, slices, da, db, for_da,
                     col0, width, tid);
}
