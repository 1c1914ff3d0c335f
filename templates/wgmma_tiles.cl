/* wgmma_tiles.cl - mma_tiles.cl's GEMM, OUT (+)= [X | T] * [W ; B], on
 * the warpgroup tensor cores of compute capability 9.0 (wgmma), for f16
 * and bf16 storage: lora_forward runs it in lora_wgmma
 * (all of MMA_K) and lora_wgmma_split (slices of it), lora_backward in
 * lora_bwd_dx_wgmma. The shape and T are as mma_tiles.cl says.
 *
 * Its wgmma instructions reach the device through the stub's sm_90a
 * rebuild (wgmma_ptx.cl); the plan gives these kernels only to the
 * variant for compute capability 9.0.
 *
 * A work-group computes WG_M x WG_N of OUT. Its warpgroups (128
 * work-items each) take one of two roles, so that no work-group barrier
 * stands between the copies and the products:
 *   - warpgroup 0 copies: step by step it fills WG_STAGES buffers in
 *     local memory, each once the products that read it last are done,
 *     and marks it full when its copies have landed (an mbarrier per
 *     buffer each way);
 *   - warpgroups 1 .. WG_M / 64 multiply, each 64 rows x WG_N in
 *     m64nNk16 products with float accumulators, which wgmma reads from
 *     local memory itself; one step's products stay in flight behind
 *     the next step's, and a buffer is handed back once its products
 *     are done.
 * The steps: first the rank stretch, T as hi + lo halves against
 * [B ; B] (mma_rank.cl) RANK_STEP ranks a step, then the reduction in
 * steps of TILE_K (zero past the rows, MMA_K and MMA_N).
 *   - X's tile is K-major, rows of TILE_K halves whose 16-byte chunks are
 *     XOR-swizzled the way wgmma's 128-, 64- or 32-byte swizzle reads
 *     them (mma_swizzle); W's tile is N-major in blocks of 64 columns,
 *     each TILE_K rows of 128 bytes with the 128-byte swizzle; with
 *     MMA_W_NK (W stored MMA_N x MMA_K, B MMA_N x MMA_RANK) W's tile is
 *     K-major like X's, WG_N rows of TILE_K, and wgmma reads B
 *     untransposed (WG_TRANS_B).
 * WG_TMA: the K steps' tiles come by the tensor memory accelerator
 * instead (tma_ptx.cl): one work-item of warpgroup 0 loads each step in
 * a few boxes (zeros past the edges, the same swizzled layouts; TILE_K
 * 64), counted on the full mbarrier by bytes, from tensor maps it writes
 * first into MAPS, a slot per compute unit (every work-group's maps hold
 * the same words). The rank stretch keeps its copies.
 * Needs MMA_K and MMA_N multiples of 8 (checked by the plan). Local size
 * (WG_THREADS, 1); the kernel declares WG_LOCAL_HALVES halves of local
 * memory aligned to 1024 bytes. */
#include "mma_ptx.cl"
#include "mma_rank.cl"
#include "wgmma_ptx.cl"

#if !defined(WG_M) || !defined(WG_STAGES) || !defined(WG_N) ||           \
    !defined(TILE_K)
#error "wgmma_tiles.cl: the plan must define WG_M, WG_STAGES and the tiles"
#endif
#if !defined(MMA_K) || !defined(MMA_N) || !defined(MMA_W_NK) ||           \
    !defined(MMA_OUT_ADD) || !defined(CEIL_DIV) || !defined(WG_TMA)
#error "wgmma_tiles.cl: the plan must define the GEMM's shape (lora_plan_mma)"
#endif
#if defined(SPLIT_K) && SPLIT_K > 1
#define WG_SPLIT 1
#include "split_k.cl"
#else
#define WG_SPLIT 0
#endif
#if DTYPE_F32
#error "wgmma_tiles.cl: tensor cores take f16 or bf16 storage"
#endif
#if WG_TMA
#include "tma_ptx.cl"
#if TILE_K != 64
#error "wgmma_tiles.cl: WG_TMA loads rows of one 128-byte line (TILE_K 64)"
#endif
#if !defined(WG_MAP_SLOTS)
#error "wgmma_tiles.cl: WG_TMA needs the plan's WG_MAP_SLOTS"
#endif
/* Words of a slot of maps in MAPS (X's, then W's: 16 each); one slot per
 * compute unit up to WG_MAP_SLOTS, units past it sharing one, whose
 * words are the same. */
#define WG_MAP_WORDS 32
#endif
#if MMA_K % 8 != 0 || MMA_N % 8 != 0 || WG_M % 64 != 0 ||    \
    WG_STAGES < 3 || (TILE_K != 16 && TILE_K != 32 && TILE_K != 64)
#error "wgmma_tiles.cl: MMA_K, MMA_N multiples of 8, WG_M of 64, TILE_K 16 to 64"
#endif

#define WG_COPIERS 128                  /* warpgroup 0 */
#define WG_THREADS (WG_COPIERS + 2 * WG_M) /* and a warpgroup per 64 rows */
#define WG_X_CHUNKS (TILE_K / 8)        /* 16-byte chunks per X row */
#define WG_W_CHUNKS (WG_N / 8)        /* 16-byte chunks per W row */
#define WG_X_STAGE (WG_M * TILE_K)      /* halves */
#define WG_W_STAGE (TILE_K * WG_N)    /* halves */
#define WG_STAGE (WG_X_STAGE + WG_W_STAGE)
#define WG_W_BLOCK (TILE_K * 64)        /* halves of 64 columns of W */
/* The buffers, then their mbarriers: 8 bytes each, full and empty per
 * buffer. The plan counted this kernel's local memory (WG_LOCAL_BYTES)
 * to check it against the limit. */
#define WG_LOCAL_HALVES (WG_STAGES * WG_STAGE + 2 * WG_STAGES * 4)
#if !defined(WG_LOCAL_BYTES) || 2 * WG_LOCAL_HALVES != WG_LOCAL_BYTES
#error "wgmma_tiles.cl: local memory differs from the plan's count"
#endif
#if WG_STAGES < 3 || WG_STAGES > 6
#error "wgmma_tiles.cl: WG_STAGES 3 to 6"
#endif
/* The copying warpgroup's loops take whole rounds of WG_COPIERS chunks:
 * a tile holds 128 chunks or a multiple (64 rows or columns, 16 deep). */
#if (WG_M * WG_X_CHUNKS) % WG_COPIERS != 0 ||                             \
    (TILE_K * WG_W_CHUNKS) % WG_COPIERS != 0 ||                           \
    (WG_N * WG_X_CHUNKS) % WG_COPIERS != 0
#error "wgmma_tiles.cl: tiles of whole rounds of copies"
#endif
#define WG_K_TILES CEIL_DIV(MMA_K, TILE_K)
#define WG_RANK_STEPS CEIL_DIV(MMA_RANK, RANK_STEP)
#if TILE_K == 64
#define WG_X_SWIZZLE 1UL /* 128-byte rows */
#elif TILE_K == 32
#define WG_X_SWIZZLE 2UL /* 64-byte rows */
#else
#define WG_X_SWIZZLE 3UL /* 32-byte rows */
#endif

/* 16 bytes from SRC to DST, asynchronously, past L1 (.cg): each tile is
 * read once per work-group, and L1 would only hold it twice. */
inline void wg_copy16(__local ushort *dst, const __global storage_t *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"l"(dst),
                 "l"(src)
                 : "memory");
}

/* The same for edge tiles: the first SRC_BYTES read (16 or 0), the rest
 * zero. */
inline void wg_copy16_edge(__local ushort *dst, const __global storage_t *src,
                           uint src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"l"(dst),
                 "l"(src), "r"(src_bytes)
                 : "memory");
}

/* Where chunk C of row R of X's tile goes: X_CHUNKS chunks a row. */
inline __local ushort *wg_x_at(__local ushort *xs, uint r, uint c)
{
    return xs + r * TILE_K + mma_swizzle(r, c, WG_X_CHUNKS) * 8;
}

/* Where chunk C (8 columns) of row K of W's tile goes. */
inline __local ushort *wg_w_at(__local ushort *ws, uint k, uint c)
{
    return ws + (c / 8) * WG_W_BLOCK + k * 64 + ((c % 8) ^ (k % 8)) * 8;
}

/* out_in: W's rows col0 .. (N x K) into WS as X's go into XS: rows of
 * TILE_K, K-major, swizzled alike (wg_x_at). */
inline void wg_load_w_rows(__local ushort *ws, const __global storage_t *w,
                           uint col0, uint k0, bool inside_k, uint tid)
{
    if (col0 + WG_N <= MMA_N && inside_k) {
#pragma unroll
        for (uint j = 0; j < WG_N * WG_X_CHUNKS / WG_COPIERS; j++) {
            uint i = tid + j * WG_COPIERS;
            uint n = i / WG_X_CHUNKS, c = i % WG_X_CHUNKS;
            wg_copy16(wg_x_at(ws, n, c),
                      w + (size_t)(col0 + n) * MMA_K + k0 + c * 8);
        }
    } else {
#pragma unroll
        for (uint j = 0; j < WG_N * WG_X_CHUNKS / WG_COPIERS; j++) {
            uint i = tid + j * WG_COPIERS;
            uint n = i / WG_X_CHUNKS, c = i % WG_X_CHUNKS;
            bool ok = col0 + n < MMA_N && k0 + c * 8 < MMA_K;
            wg_copy16_edge(wg_x_at(ws, n, c),
                           ok ? w + (size_t)(col0 + n) * MMA_K + k0 +
                                    c * 8
                              : w,
                           ok ? 16 : 0);
        }
    }
}

/* Starts the copies of K step KT's X and W tiles into XS and WS and
 * commits them as one group; the bounds are tested only in edge tiles. */
inline void wg_load_step(__local ushort *xs, __local ushort *ws,
                         const __global storage_t *x,
                         const __global storage_t *w, uint rows, uint row0,
                         uint col0, uint kt, uint tid)
{
    uint k0 = kt * TILE_K;
    bool inside_k = k0 + TILE_K <= MMA_K;
    if (row0 + WG_M <= rows && inside_k) {
#pragma unroll
        for (uint j = 0; j < WG_M * WG_X_CHUNKS / WG_COPIERS; j++) {
            uint i = tid + j * WG_COPIERS;
            uint r = i / WG_X_CHUNKS, c = i % WG_X_CHUNKS;
            wg_copy16(wg_x_at(xs, r, c),
                      x + (size_t)(row0 + r) * MMA_K + k0 + c * 8);
        }
    } else {
#pragma unroll
        for (uint j = 0; j < WG_M * WG_X_CHUNKS / WG_COPIERS; j++) {
            uint i = tid + j * WG_COPIERS;
            uint r = i / WG_X_CHUNKS, c = i % WG_X_CHUNKS;
            bool ok = row0 + r < rows && k0 + c * 8 < MMA_K;
            wg_copy16_edge(wg_x_at(xs, r, c),
                           ok ? x + (size_t)(row0 + r) * MMA_K + k0 +
                                    c * 8
                              : x,
                           ok ? 16 : 0);
        }
    }
#if MMA_W_NK
    wg_load_w_rows(ws, w, col0, k0, inside_k, tid);
#else
    if (col0 + WG_N <= MMA_N && inside_k) {
#pragma unroll
        for (uint j = 0; j < TILE_K * WG_W_CHUNKS / WG_COPIERS; j++) {
            uint i = tid + j * WG_COPIERS;
            uint k = i / WG_W_CHUNKS, c = i % WG_W_CHUNKS;
            wg_copy16(wg_w_at(ws, k, c),
                      w + (size_t)(k0 + k) * MMA_N + col0 + c * 8);
        }
    } else {
#pragma unroll
        for (uint j = 0; j < TILE_K * WG_W_CHUNKS / WG_COPIERS; j++) {
            uint i = tid + j * WG_COPIERS;
            uint k = i / WG_W_CHUNKS, c = i % WG_W_CHUNKS;
            bool ok = k0 + k < MMA_K && col0 + c * 8 < MMA_N;
            wg_copy16_edge(wg_w_at(ws, k, c),
                           ok ? w + (size_t)(k0 + k) * MMA_N + col0 +
                                    c * 8
                              : w,
                           ok ? 16 : 0);
        }
    }
#endif
    mma_commit();
}

#if WG_TMA
/* MAP: X's tensor map (TILE_K x WG_M boxes), then W's (64 x TILE_K, or
 * TILE_K x WG_N stored n-major). */
inline void wg_tma_maps(__global ulong *map, const __global storage_t *x,
                        const __global storage_t *w, uint rows)
{
    tma_map_2d(map, x, MMA_K, rows, MMA_K * 2, TILE_K, WG_M);
#if MMA_W_NK
    tma_map_2d(map + 16, w, MMA_K, MMA_N, MMA_K * 2, TILE_K, WG_N);
#else
    tma_map_2d(map + 16, w, MMA_N, MMA_K, MMA_N * 2, 64, TILE_K);
#endif
}

/* K step KT's X and W tiles into XS and WS by MAP's boxes, counted on
 * FULL by bytes: the calling work-item's arrival there. */
inline void wg_tma_step(__local ushort *xs, __local ushort *ws,
                        const __global ulong *map, uint row0, uint col0,
                        uint kt, __local ulong *full)
{
    uint k0 = kt * TILE_K;
    tma_bar_expect(full, 2 * WG_STAGE);
    tma_load_2d(xs, map, k0, row0, full);
#if MMA_W_NK
    tma_load_2d(ws, map + 16, k0, col0, full);
#else
#pragma unroll
    for (uint c = 0; c < WG_N / 64; c++) {
        tma_load_2d(ws + c * WG_W_BLOCK, map + 16, col0 + c * 64, k0, full);
    }
#endif
}
#endif

/* Starts the copies of B's rows [RS, RS + RANK_STEP) into WS twice, as
 * rows [0, RANK_STEP) and [RANK_STEP, RANK_DEPTH) (zero past r and N),
 * committed as one group. */
#if MMA_W_NK
/* out_in: B is N x r, its rows seldom whole 16-byte chunks: element by
 * element into the K-major tile (wg_x_at's layout), B's column rs + j at
 * columns j and RANK_STEP + j of row n; an empty commit group keeps the
 * wait counts (wg_fence_proxy before the step is marked full makes the
 * stores visible to wgmma). */
inline void wg_load_rank_b(__local ushort *ws, const __global storage_t *b,
                           uint col0, uint rs, uint tid)
{
    const __global ushort *bits = (const __global ushort *)b;
    for (uint i = tid; i < WG_N * RANK_STEP; i += WG_COPIERS) {
        uint n = i / RANK_STEP, j = i % RANK_STEP, lo = RANK_STEP + j;
        ushort v = rs + j < MMA_RANK && col0 + n < MMA_N
                       ? bits[(size_t)(col0 + n) * MMA_RANK + rs + j]
                       : 0;
        wg_x_at(ws, n, j / 8)[j % 8] = v;
        wg_x_at(ws, n, lo / 8)[lo % 8] = v;
    }
    mma_commit();
}
#else
inline void wg_load_rank_b(__local ushort *ws, const __global storage_t *b,
                           uint col0, uint rs, uint tid)
{
#pragma unroll
    for (uint i = tid; i < RANK_STEP * WG_W_CHUNKS; i += WG_COPIERS) {
        uint j = i / WG_W_CHUNKS, c = i % WG_W_CHUNKS;
        bool ok = rs + j < MMA_RANK && col0 + c * 8 < MMA_N;
        const __global storage_t *src =
            ok ? b + (size_t)(rs + j) * MMA_N + col0 + c * 8 : b;
        wg_copy16_edge(wg_w_at(ws, j, c), src, ok ? 16 : 0);
        wg_copy16_edge(wg_w_at(ws, RANK_STEP + j, c), src, ok ? 16 : 0);
    }
    mma_commit();
}
#endif

/* Stages T's ranks [RS, RS + RANK_STEP) into XS (mma_rank_t_store, the
 * same layout as wg_x_at's); every load before the first store. */
#define WG_T_ITEMS (WG_M * RANK_STEP / MMA_TQ)
#define WG_T_PER CEIL_DIV(WG_T_ITEMS, WG_COPIERS)
inline void wg_stage_rank_t(__local ushort *xs, const __global float *t,
                            uint rows, uint row0, uint rs, uint tid)
{
    float4 sums[WG_T_PER];
#pragma unroll
    for (uint q = 0; q < WG_T_PER; q++) {
        uint i = q * WG_COPIERS + tid;
        sums[q] = i < WG_T_ITEMS ? mma_rank_t_load(t, rows, row0, rs, i)
                                 : (float4)0.0f;
    }
#pragma unroll
    for (uint q = 0; q < WG_T_PER; q++) {
        uint i = q * WG_COPIERS + tid;
        if (i >= WG_T_ITEMS)
            break;
        mma_rank_t_store(xs, i, sums[q]);
    }
}

/* Starts the products of the staged tiles XS and WS, DEPTH deep (a
 * multiple of 16; a constant at every call), for warpgroup G: one
 * commit group. */
inline void wg_step(__local ushort *xs, __local ushort *ws, uint depth,
                    uint g, float d[WG_ACCS])
{
    wg_fence(d);
#pragma unroll
    for (uint kk = 0; kk < depth; kk += 16) {
        ulong da = wg_desc(xs + g * 64 * TILE_K + kk, 16, 8 * TILE_K * 2,
                           WG_X_SWIZZLE);
#if MMA_W_NK
        ulong db = wg_desc(ws + kk, 16, 8 * TILE_K * 2, WG_X_SWIZZLE);
#else
        ulong db = wg_desc(ws + kk * 64, WG_W_BLOCK * 2, 1024, 1);
#endif
        wg_mma(d, da, db);
    }
    wg_commit();
}

/* Warpgroup 0: fills the buffers for STEPS steps, the first RANK_STEPS
 * of them the rank stretch's, then K steps kt0 on. A step's buffer is
 * marked full once its copies have landed and are fenced for wgmma;
 * that waits a step, so that one step's copies are in flight while the
 * one before lands. With WG_TMA the K steps are marked at once, the
 * accelerator's bytes still to come (MAPS: the maps' slots). */
inline void wg_copy_steps(__local ushort *tiles, __local ulong *full,
                          __local ulong *empty, uint steps, uint rank_steps,
                          const uint rows, const __global storage_t *x,
                          const __global storage_t *w,
                          const __global storage_t *b,
                          const __global float *t, __global ulong *maps,
                          uint row0, uint col0, uint kt0, uint tid)
{
#if WG_TMA
    __global ulong *map = maps + WG_MAP_WORDS * (tma_unit() % WG_MAP_SLOTS);
    if (tid == 0 && steps > rank_steps) {
        wg_tma_maps(map, x, w, rows);
    }
#else
    (void)maps;
#endif
    for (uint i = 0; i < steps; i++) {
        uint s = i % WG_STAGES;
        if (i >= WG_STAGES)
            wg_bar_wait(empty + s, (i / WG_STAGES - 1) & 1);
        __local ushort *at = tiles + s * WG_STAGE;
        if (i < rank_steps) {
            wg_load_rank_b(at + WG_X_STAGE, b, col0, i * RANK_STEP, tid);
            wg_stage_rank_t(at, t, rows, row0, i * RANK_STEP, tid);
        } else {
#if WG_TMA
            if (tid == 0)
                wg_tma_step(at, at + WG_X_STAGE, map, row0, col0,
                            kt0 + i - rank_steps, full + s);
            else
                wg_bar_arrive(full + s);
#else
            wg_load_step(at, at + WG_X_STAGE, x, w, rows, row0, col0,
                         kt0 + i - rank_steps, tid);
#endif
        }
        /* The step before, when copied: its copies landed (all but this
         * step's, which the accelerator's steps have none of). */
        if (i > 0 && (!WG_TMA || i - 1 < rank_steps)) {
            if (WG_TMA && i >= rank_steps)
                asm volatile("cp.async.wait_group 0;" ::: "memory");
            else
                asm volatile("cp.async.wait_group 1;" ::: "memory");
            wg_fence_proxy();
            wg_bar_arrive(full + (i - 1) % WG_STAGES);
        }
    }
    if (steps > 0 && (!WG_TMA || steps <= rank_steps)) {
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        wg_fence_proxy();
        wg_bar_arrive(full + (steps - 1) % WG_STAGES);
    }
}

/* Warpgroup G + 1: the products of steps [FROM, TO) DEPTH deep (a
 * constant at each call), each once its buffer is full; the buffer of
 * the step before is handed back once that step's products are done
 * (a step's products stay in flight behind the next's). */
inline void wg_multiply_steps(__local ushort *tiles, __local ulong *full,
                              __local ulong *empty, uint from, uint to,
                              uint depth, uint g, uint lane,
                              float d[WG_ACCS])
{
    for (uint i = from; i < to; i++) {
        uint s = i % WG_STAGES;
        wg_bar_wait(full + s, (i / WG_STAGES) & 1);
        __local ushort *at = tiles + s * WG_STAGE;
        wg_step(at, at + WG_X_STAGE, depth, g, d);
        wg_wait_1(d);
        if (i > 0 && lane == 0)
            wg_bar_arrive(empty + (i - 1) % WG_STAGES);
    }
}

/* One work-group's WG_M x WG_N of OUT, or with SLICES > 1 its float
 * partial sums over slice SLICE of K (K steps [kt0, kt1)) for
 * lora_combine, at SPLIT_PART(rows, slice) (split_k.cl); slice 0 adds
 * T*B. Along dimension 0 run SLICES x WG_COL_TILES work-groups. TILES:
 * the kernel's WG_STAGES stages of local memory. SLICES is a constant at
 * each call (1, or the plan's SPLIT_K), so each kernel keeps one kind of
 * store. MAPS: WG_TMA's slots of tensor maps (WG_MAP_SLOTS x 256 bytes,
 * aligned to 64), else unused. */
#define WG_COL_TILES CEIL_DIV(MMA_N, WG_N)
inline void wg_tiles(const uint rows, const __global storage_t *restrict x,
                     const __global storage_t *restrict w,
                     const __global storage_t *restrict b,
                     __global storage_t *restrict y,
                     __global float *restrict scratch,
                     __global ulong *restrict maps, __local ushort *tiles,
                     const uint slices, const uint slice)
{
    uint tid = get_local_id(0), lane = tid % 32, warp = tid % 128 / 32;
    uint row0 = get_group_id(1) * WG_M;
    uint col0 = (get_group_id(0) - slice * WG_COL_TILES) * WG_N;
    uint kt0 = slice * WG_K_TILES / slices;
    uint kt1 = (slice + 1) * WG_K_TILES / slices;
    /* Slice 0 alone adds T*B. */
    uint rank_steps = slice == 0 ? WG_RANK_STEPS : 0;
    uint steps = rank_steps + kt1 - kt0;

    __local ulong *full = (__local ulong *)(tiles + WG_STAGES * WG_STAGE);
    __local ulong *empty = full + WG_STAGES;
    if (tid < WG_STAGES) {
        wg_bar_init(full + tid, WG_COPIERS);
        wg_bar_init(empty + tid, 2 * WG_M / 32); /* a warp each */
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid < WG_COPIERS) {
        wg_copy_steps(tiles, full, empty, steps, rank_steps, rows, x, w, b,
                      scratch, maps, row0, col0, kt0, tid);
        return;
    }

    uint g = tid / 128 - 1;
    float d[WG_ACCS];
#pragma unroll
    for (int i = 0; i < WG_ACCS; i++)
        d[i] = 0.0f;
    /* Every warpgroup multiplies, even one whose rows all lie past ROWS
     * (zeros): behind a branch, ptxas makes each product wait for the
     * one before. */
    wg_multiply_steps(tiles, full, empty, 0, rank_steps, RANK_DEPTH, g,
                      lane, d);
    wg_multiply_steps(tiles, full, empty, rank_steps, steps, TILE_K, g,
                      lane, d);
    wg_wait_0(d);

    /* Accumulators 4j .. 4j + 3: rows q and q + 8 of the warp's 16,
     * columns 8j + 2t and 8j + 2t + 1: stored as pairs. */
    uint q = lane / 4, t2 = (lane % 4) * 2;
    uint r0 = row0 + g * 64 + warp * 16 + q;
#if WG_SPLIT
    __global float *part = scratch + SPLIT_PART(rows, slice);
#endif
#pragma unroll
    for (int j = 0; j < WG_N / 8; j++) {
        uint c = col0 + j * 8 + t2;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            uint r = r0 + h * 8;
            if (r < rows && c < MMA_N) {
                size_t at = (size_t)r * MMA_N + c;
                float2 v = (float2)(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
#if WG_SPLIT
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
