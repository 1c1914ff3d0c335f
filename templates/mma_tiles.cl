/* mma_tiles.cl - the tensor-core GEMM of NVIDIA compute capability 8.0
 * and later: OUT (+)= [X | T] * [W ; B], with X
 * rows x MMA_K, W MMA_K x MMA_N, T rows x MMA_RANK floats in the scratch
 * (MMA_RANK_PARTS partial sums an element, added here) and B MMA_RANK x
 * MMA_N. lora_forward runs it as Y = [X | SCALE*X*A] * [W ; B] (lora_mma,
 * lora_mma_split, after lora_xa_mma); lora_backward as dX = [dY | G] *
 * [W^T ; A^T] (lora_bwd_dx_mma, after lora_bwd_tg), its W and A read
 * transposed where they lie.
 *
 * Inline PTX, which only NVIDIA's OpenCL compiler accepts: the stub
 * builds this source only on devices that report compute capability 8.0
 * or more (cl_nv_device_attribute_query); every other device gets a
 * variant without it.
 *
 * A work-group computes TILE_M x TILE_N of OUT with (TILE_M / MMA_WARP_M)
 * x (TILE_N / MMA_WARP_N) warps of 32 work-items, each warp MMA_WARP_M x
 * MMA_WARP_N of it, in m16n8k16 products with float accumulators:
 *   - the reduction in steps of TILE_K: cp.async copies the X and W tiles
 *     into local memory MMA_STAGES - 1 steps ahead of the products, 16
 *     bytes at a time (zero-filled past the rows, MMA_K and MMA_N);
 *   - ldmatrix loads the fragments (.trans for W, which is k-major; with
 *     MMA_W_NK, W stored MMA_N x MMA_K and B MMA_N x MMA_RANK, both are
 *     staged n-major, TILE_K a row as X's, and read without .trans); the
 *     16-byte chunks of each tile row are XOR-swizzled so that the eight
 *     rows one ldmatrix phase reads fall in distinct banks;
 *     MMA_PENDING = MMA_STAGES - 2 copies stay in flight while a step's
 *     products run;
 *   - float32 storage runs on tf32 units, three m16n8k8 products a
 *     product (mma_product's float32 form: float32's accuracy), its
 *     fragments 8 deep: A's and an n-major W's by ldmatrix (a lane's
 *     32-bit word of an 8 x 8 b16 matrix is the tf32 fragment's
 *     element), a k-major W's a float a lane; a step's products are
 *     summed apart and then added to the accumulators in float, since
 *     the tensor cores' own sums truncate and that loss would grow with
 *     the reduction;
 *   - the rank stretch first: T split into two halves, hi + lo, so that
 *     it keeps 16 bits or more, against [B ; B]: up to TILE_K / 2 ranks per
 *     step (float32: T as it is against B, up to TILE_K ranks), staged in
 *     the last stage's buffers while the first steps' copies are in
 *     flight, so that the latency of its loads hides behind theirs.
 * The kernel's plan defines the shape (MMA_K, MMA_N, MMA_RANK,
 * MMA_RANK_PARTS, MMA_W_NK, MMA_OUT_ADD: gen/lora_common.c,
 * lora_plan_mma), the tiles, and SPLIT_K where a split path cuts the
 * reduction into slices (split_k.cl; absent: none). The kernel's common
 * part comes first: storage_t, load2, store2, CEIL_DIV. Needs MMA_K and
 * MMA_N multiples of MMA_CHUNK (whole 16-byte chunks; checked by the
 * plan). Local size (32 * warps, 1). */
#include "mma_ptx.cl"
#include "mma_rank.cl"

#if !defined(TILE_M) || !defined(TILE_N) || !defined(TILE_K) ||            \
    !defined(MMA_WARP_M) || !defined(MMA_WARP_N) || !defined(MMA_STAGES) || \
    !defined(MMA_PENDING)
#error "mma_tiles.cl: the plan must define the tiles and MMA_STAGES"
#endif
#if !defined(MMA_K) || !defined(MMA_N) || !defined(MMA_W_NK) ||           \
    !defined(MMA_OUT_ADD) || !defined(CEIL_DIV)
#error "mma_tiles.cl: the plan must define the GEMM's shape (lora_plan_mma)"
#endif
#if defined(SPLIT_K) && SPLIT_K > 1
#define MMA_SPLIT 1
#include "split_k.cl"
#else
#define MMA_SPLIT 0
#endif
#if MMA_K % MMA_CHUNK != 0 || MMA_N % MMA_CHUNK != 0 ||                 \
    TILE_K % 16 != 0 || MMA_WARP_M % 16 != 0 || MMA_WARP_N % 16 != 0
#error "mma_tiles.cl: MMA_K, MMA_N whole chunks; TILE_K and warp tiles of 16"
#endif

#define MMA_WARPS_N (TILE_N / MMA_WARP_N)
#define MMA_THREADS (32 * (TILE_M / MMA_WARP_M) * MMA_WARPS_N)
#define MMA_TILES_M (MMA_WARP_M / 16) /* m16 tiles per warp */
#define MMA_TILES_N (MMA_WARP_N / 8)  /* n8 tiles per warp */
#define X_CHUNKS (TILE_K / MMA_CHUNK) /* 16-byte chunks per X tile row */
#define W_CHUNKS (TILE_N / MMA_CHUNK) /* 16-byte chunks per W tile row */
#define MMA_K_TILES CEIL_DIV(MMA_K, TILE_K)
/* Starts the copies of K step KT's X and W tiles into XS and WS. */
inline void mma_load_step(__local mma_local_t *xs, __local mma_local_t *ws,
                          const __global storage_t *x,
                          const __global storage_t *w, uint rows, uint row0,
                          uint col0, uint kt, uint tid)
{
    uint k0 = kt * TILE_K;
    mma_copy_tile(xs, x, MMA_K, row0, TILE_M, rows, k0, TILE_K,
                  MMA_K, tid, MMA_THREADS);
#if MMA_W_NK
    /* W is N x K: its rows col0 .. are the tile's, K along them */
    mma_copy_tile(ws, w, MMA_K, col0, TILE_N, MMA_N, k0, TILE_K,
                  MMA_K, tid, MMA_THREADS);
#else
    mma_copy_tile(ws, w, MMA_N, k0, TILE_K, MMA_K, col0, TILE_N,
                  MMA_N, tid, MMA_THREADS);
#endif
    mma_commit();
}

/* The products' depth: a tf32 fragment is 8 deep, an f16 or bf16 one
 * 16. */
#if DTYPE_F32
#define MMA_SLICE 8
#else
#define MMA_SLICE 16
#endif

/* The warp's A fragments (MMA_TILES_M m16 tiles) and B fragments
 * (MMA_TILES_N n8 tiles) of the MMA_SLICE-deep slice KK of the staged
 * tiles. ldmatrix.x4: lane l gives the address of row l % 8 of matrix
 * l / 8; float32's are 32-bit words of its b16 matrices, which is where
 * the tf32 fragments want them. */
inline void mma_fragments(__local mma_local_t *xs, __local mma_local_t *ws,
                          uint kk, uint warp_m, uint warp_n, uint lane,
                          uint a[MMA_TILES_M][4], uint b[MMA_TILES_N][2])
{
    /* rows 0-7 and 8-15 of the slice's first half, then of its second:
     * a0 .. a3 */
    uint row = (lane % 8) + ((lane >> 3) & 1) * 8, chunk = lane >> 4;
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++) {
        uint r = warp_m * MMA_WARP_M + i * 16 + row;
        uint c = kk / MMA_CHUNK + chunk;
        mma_x4(xs + r * TILE_K + mma_swizzle(r, c, X_CHUNKS) * MMA_CHUNK,
               &a[i][0], &a[i][1], &a[i][2], &a[i][3]);
    }
#if MMA_W_NK
    /* n-major: lane l gives row (l % 8) + (l / 16) * 8 of the 16 columns,
     * chunk (l / 8) % 2 of the slice (mma_x4) */
    uint bn = (lane % 8) + (lane >> 4) * 8, bc = (lane >> 3) & 1;
#pragma unroll
    for (int j = 0; j < MMA_TILES_N / 2; j++) {
        uint r = warp_n * MMA_WARP_N + j * 16 + bn;
        uint c = kk / MMA_CHUNK + bc;
        mma_x4(ws + r * TILE_K + mma_swizzle(r, c, X_CHUNKS) * MMA_CHUNK,
               &b[2 * j][0], &b[2 * j][1], &b[2 * j + 1][0],
               &b[2 * j + 1][1]);
    }
#elif DTYPE_F32
    /* k-major floats: lane (g, t) takes rows t and t + 4 of column g */
    uint g = lane / 4, t = lane % 4;
#pragma unroll
    for (int j = 0; j < MMA_TILES_N; j++) {
        uint n = warp_n * MMA_WARP_N + j * 8 + g;
        uint r0 = kk + t, r1 = kk + t + 4;
        b[j][0] = as_uint(
            ws[r0 * TILE_N + mma_swizzle(r0, n / 4, W_CHUNKS) * 4 + n % 4]);
        b[j][1] = as_uint(
            ws[r1 * TILE_N + mma_swizzle(r1, n / 4, W_CHUNKS) * 4 + n % 4]);
    }
#else
    /* k-major halves: transposed by ldmatrix */
#pragma unroll
    for (int j = 0; j < MMA_TILES_N / 2; j++) {
        uint r = kk + row;
        uint c = (warp_n * MMA_WARP_N + j * 16) / 8 + chunk;
        mma_trans_x4(ws + r * TILE_N + mma_swizzle(r, c, W_CHUNKS) * 8,
                     &b[2 * j][0], &b[2 * j][1], &b[2 * j + 1][0],
                     &b[2 * j + 1][1]);
    }
#endif
}

/* acc += the products of one slice. */
inline void mma_multiply(float acc[MMA_TILES_M][MMA_TILES_N][4],
                         uint a[MMA_TILES_M][4], uint b[MMA_TILES_N][2])
{
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++) {
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; j++) {
            mma_product(acc[i][j], a[i], b[j][0], b[j][1]);
        }
    }
}

/* acc += the staged tiles XS and WS, DEPTH deep (a multiple of
 * MMA_SLICE up to TILE_K; a constant at every call, so the loop
 * unrolls). */
inline void mma_step(__local mma_local_t *xs, __local mma_local_t *ws,
                     uint depth, uint warp_m, uint warp_n, uint lane,
                     float acc[MMA_TILES_M][MMA_TILES_N][4])
{
#if DTYPE_F32
    /* the step's sums apart, added in float (round to nearest) */
    float part[MMA_TILES_M][MMA_TILES_N][4];
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++)
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                part[i][j][e] = 0.0f;
#else
#define part acc
#endif
#pragma unroll
    for (uint kk = 0; kk < depth; kk += MMA_SLICE) {
        uint a[MMA_TILES_M][4], b[MMA_TILES_N][2];
        mma_fragments(xs, ws, kk, warp_m, warp_n, lane, a, b);
        mma_multiply(part, a, b);
    }
#if DTYPE_F32
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++)
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] += part[i][j][e];
#else
#undef part
#endif
}

/* Starts the copies of B's rows [RS, RS + RANK_STEP) of the rank stretch
 * into WS twice, as rows [0, RANK_STEP) and [RANK_STEP, RANK_DEPTH) (zero
 * past r and N; float32 once, RANK_DEPTH being RANK_STEP), and commits
 * them as one group. */
#define RANK_B_CHUNKS (RANK_STEP * W_CHUNKS)
#if MMA_W_NK
/* out_in: B is N x r, its rows of r seldom whole 16-byte chunks: element
 * by element into the n-major tile (TILE_K a row, as mma_load_step's W),
 * B's column rs + j at columns j and RANK_STEP + j of row n; an empty
 * commit group keeps the pipeline's wait counts. */
#define RANK_B_ELEMS (TILE_N * RANK_STEP)
inline void mma_load_rank_b(__local mma_local_t *ws,
                            const __global storage_t *b, uint col0, uint rs,
                            uint tid)
{
    const __global mma_local_t *bits = (const __global mma_local_t *)b;
    for (uint i = tid; i < RANK_B_ELEMS; i += MMA_THREADS) {
        uint n = i / RANK_STEP, j = i % RANK_STEP;
        mma_local_t v = rs + j < MMA_RANK && col0 + n < MMA_N
                            ? bits[(size_t)(col0 + n) * MMA_RANK + rs + j]
                            : 0;
        ws[n * TILE_K + mma_swizzle(n, j / MMA_CHUNK, X_CHUNKS) * MMA_CHUNK +
           j % MMA_CHUNK] = v;
#if !DTYPE_F32
        uint lo = RANK_STEP + j;
        ws[n * TILE_K + mma_swizzle(n, lo / 8, X_CHUNKS) * 8 + lo % 8] = v;
#endif
    }
    mma_commit();
}
#else
inline void mma_load_rank_b(__local mma_local_t *ws,
                            const __global storage_t *b, uint col0, uint rs,
                            uint tid)
{
#pragma unroll
    for (uint q = 0; q < CEIL_DIV(RANK_B_CHUNKS, MMA_THREADS); q++) {
        uint i = q * MMA_THREADS + tid;
        if (RANK_B_CHUNKS % MMA_THREADS == 0 || i < RANK_B_CHUNKS) {
            uint j = i / W_CHUNKS, c = i % W_CHUNKS;
            bool ok = rs + j < MMA_RANK && col0 + c * MMA_CHUNK < MMA_N;
            const __global storage_t *src =
                ok ? b + (size_t)(rs + j) * MMA_N + col0 + c * MMA_CHUNK : b;
            mma_copy16(ws + j * TILE_N +
                           mma_swizzle(j, c, W_CHUNKS) * MMA_CHUNK,
                       src, ok ? 16 : 0);
#if !DTYPE_F32
            uint lo = RANK_STEP + j;
            mma_copy16(ws + lo * TILE_N + mma_swizzle(lo, c, W_CHUNKS) * 8,
                       src, ok ? 16 : 0);
#endif
        }
    }
    mma_commit();
}
#endif

/* Stages T's ranks [RS, RS + RANK_STEP) of the rank stretch into XS
 * (mma_rank_t_store); every load is issued before the first store. */
#define RANK_T_ITEMS (TILE_M * RANK_STEP / MMA_TQ)
#define RANK_T_PER CEIL_DIV(RANK_T_ITEMS, MMA_THREADS)
inline void mma_stage_rank_t(__local mma_local_t *xs,
                             const __global float *t,
                             uint rows, uint row0, uint rs, uint tid)
{
    float4 sums[RANK_T_PER];
#pragma unroll
    for (uint q = 0; q < RANK_T_PER; q++) {
        uint i = q * MMA_THREADS + tid;
        sums[q] = RANK_T_ITEMS % MMA_THREADS == 0 || i < RANK_T_ITEMS
                      ? mma_rank_t_load(t, rows, row0, rs, i)
                      : (float4)0.0f;
    }
#pragma unroll
    for (uint q = 0; q < RANK_T_PER; q++) {
        uint i = q * MMA_THREADS + tid;
        if (RANK_T_ITEMS % MMA_THREADS != 0 && i >= RANK_T_ITEMS)
            break;
        mma_rank_t_store(xs, i, sums[q]);
    }
}

/* One work-group's TILE_M x TILE_N of OUT, or with SLICES > 1 its
 * partial sums over slice SLICE of the reduction. Along dimension 0 run
 * SLICES x MMA_COL_TILES work-groups. lora_mma runs one slice, all of
 * MMA_K, and writes OUT. Few rows make few tiles, so lora_forward's split
 * path launches lora_mma_split (SPLIT_K > 1), which cuts MMA_K into
 * SPLIT_K slices: slice s runs steps [kt0, kt1) and leaves its float
 * partial sums in scratch for lora_combine; slice 0 adds T*B. A warp
 * whose rows all lie past `rows` only copies: at a few rows most of the
 * tile is empty. XS and WS: the kernel's MMA_STAGES stages of local
 * memory. SLICES is a constant at each call (1, or the plan's SPLIT_K),
 * so each kernel keeps one kind of store. */
#define MMA_X_STAGE (TILE_M * TILE_K)
#define MMA_W_STAGE (TILE_K * TILE_N)
#define MMA_COL_TILES CEIL_DIV(MMA_N, TILE_N)
inline void mma_tiles(const uint rows, const __global storage_t *restrict x,
                      const __global storage_t *restrict w,
                      const __global storage_t *restrict b,
                      __global storage_t *restrict y,
                      __global float *restrict scratch,
                      __local mma_local_t *xs, __local mma_local_t *ws,
                      const uint slices,
                      const uint slice)
{
    uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    uint warp_m = warp / MMA_WARPS_N, warp_n = warp % MMA_WARPS_N;
    uint row0 = get_group_id(1) * TILE_M;
    uint col0 = (get_group_id(0) - slice * MMA_COL_TILES) * TILE_N;
    uint kt0 = slice * MMA_K_TILES / slices;
    uint kt1 = (slice + 1) * MMA_K_TILES / slices;
    /* Uniform within each warp, so ldmatrix and mma.sync stay whole. */
    bool live = row0 + warp_m * MMA_WARP_M < rows;

    float acc[MMA_TILES_M][MMA_TILES_N][4];
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++)
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;

    /* The rank stretch first, in the last stage's buffers, which the
     * pipeline's first MMA_STAGES - 1 steps leave free: its loads are in
     * flight together with theirs. Slice 0 alone adds T*B. */
    __local mma_local_t *xr = xs + (MMA_STAGES - 1) * MMA_X_STAGE;
    __local mma_local_t *wr = ws + (MMA_STAGES - 1) * MMA_W_STAGE;
    if (slice == 0)
        mma_load_rank_b(wr, b, col0, 0, tid);

    /* The pipeline: MMA_STAGES - 1 steps in flight; one commit group per
     * step (empty past the end) so that the wait counts stay fixed. */
    for (uint s = 0; s < MMA_STAGES - 1; s++) {
        if (kt0 + s < kt1)
            mma_load_step(xs + s * MMA_X_STAGE, ws + s * MMA_W_STAGE, x, w,
                          rows, row0, col0, kt0 + s, tid);
        else
            mma_commit();
    }

    if (slice == 0) {
        for (uint rs = 0; rs < MMA_RANK; rs += RANK_STEP) {
            if (rs > 0) {
                barrier(CLK_LOCAL_MEM_FENCE); /* the last step's products */
                mma_load_rank_b(wr, b, col0, rs, tid);
            }
            mma_stage_rank_t(xr, scratch, rows, row0, rs, tid);
            /* B's rows, and the pipeline's first steps, which the loop
             * below waits for at once anyway */
            asm volatile("cp.async.wait_group 0;" ::: "memory");
            barrier(CLK_LOCAL_MEM_FENCE);
            if (live)
                mma_step(xr, wr, RANK_DEPTH, warp_m, warp_n, lane, acc);
        }
    }

    for (uint kt = kt0; kt < kt1; kt++) {
        asm volatile("cp.async.wait_group " STR(MMA_PENDING) ";" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        uint next = kt + MMA_STAGES - 1;
        uint at = (next - kt0) % MMA_STAGES;
        if (next < kt1)
            mma_load_step(xs + at * MMA_X_STAGE, ws + at * MMA_W_STAGE, x,
                          w, rows, row0, col0, next, tid);
        else
            mma_commit();
        at = (kt - kt0) % MMA_STAGES;
        if (live)
            mma_step(xs + at * MMA_X_STAGE, ws + at * MMA_W_STAGE, TILE_K,
                     warp_m, warp_n, lane, acc);
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");

    /* Accumulator e of tile (i, j) is row g (+8 for e >= 2), columns 2t
     * and 2t + 1 of the tile: stored as pairs. */
    uint g = lane / 4, t2 = (lane % 4) * 2;
#if MMA_SPLIT
    /* Partial sums, float, SPLIT_PART(rows, slice) (split_k.cl). */
    __global float *part = scratch + SPLIT_PART(rows, slice);
#endif
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; i++) {
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; j++) {
            uint c = col0 + warp_n * MMA_WARP_N + j * 8 + t2;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                uint r = row0 + warp_m * MMA_WARP_M + i * 16 + g + h * 8;
                if (r < rows && c < MMA_N) {
                    size_t at = (size_t)r * MMA_N + c;
                    float2 v =
                        (float2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
#if MMA_SPLIT
                    if (slices > 1) {
                        vstore2(v, 0, part + at);
                        continue;
                    }
#endif
#if MMA_OUT_ADD
                    v += load2(y, at);
#endif
                    store2(y, at, v);
                }
            }
        }
    }
}
