/* main_tiles.cl - the register-tiled GEMM over [X | T] * [W ; B] that
 * lora_main, lora_main_split and lora_main_padded run (see
 * lora_common.cl). */
#include "lora_common.cl"

/* The register-tiled core over the plan's GEMM_ #defines (gen/lora_paths.c):
 * the output is Y, the reduction runs over K (GEMM_K), then r; the A side
 * is [X | T], the B side [W ; B]. */
#include "gemm_simt.cl"

#if !defined(SPLIT_K)
#error "main_tiles.cl: the plan must define SPLIT_K"
#endif
#if SPLIT_K > 1 && XA_INLINE
#error "main_tiles.cl: a split K needs T from lora_xa"
#endif
#if SPLIT_K > 1
#include "split_k.cl"
#endif
/* What the plan's GEMM_ #defines must say for this product. */
#if GEMM_K != IN_FEATURES || GEMM_N != OUT_FEATURES || GEMM_RANK != RANK || \
    GEMM_RANK_PARTS != XA_SPLIT || GEMM_VEC != VEC || !GEMM_STAGE_A ||       \
    GEMM_STAGE_B != HAS_BASE || GEMM_OUT_ADD != ACCUMULATE
#error "main_tiles.cl: the plan's GEMM_ #defines are not [X | T] * [W ; B]"
#endif

/* ---- Derived sizes ---- */

#define K_TILES CEIL_DIV(IN_FEATURES, GEMM_TILE_K)
#define COL_TILES CEIL_DIV(OUT_FEATURES, GEMM_TILE_N)
#define RANK_CEIL (GEMM_RANK_TILES * GEMM_RANK_K)
/* W's row stride: N (in_out), or K (out_in, whose rows are W's columns). */
#define W_LD (WEIGHT_OUT_IN ? IN_FEATURES : OUT_FEATURES)

/* Tile loads: VW-wide along K for X, along N for W and B (gemm_simt.cl's
 * loaders), where VW is VEC, or 4 in lora_main_padded (padded.cl), a
 * constant at each call. Inline X*A: work-item (tm, tn) accumulates T
 * for its GEMM_WORK_M rows and columns tn, tn + GEMM_THREADS_N, ...; the
 * A tile is AL_W wide, zero beyond r. */
#define XA_PER CEIL_DIV(RANK_CEIL, GEMM_THREADS_N)
#define AL_W (XA_PER * GEMM_THREADS_N)
#define A_ELEMS (GEMM_TILE_K * AL_W)
#define A_LOADS CEIL_DIV(A_ELEMS, GEMM_THREADS)

/* Local memory of lora_main, in floats. */
#define AS_SIZE (2 * GEMM_TILE_K * GEMM_LDA)
#if HAS_BASE
#define BS_SIZE (2 * GEMM_TILE_K * GEMM_LDB)
#else
#define BS_SIZE (GEMM_RANK_K * GEMM_LDB)
#endif
/* The plan counted this kernel's local memory (MAIN_LOCAL_BYTES) to
 * check it against the device: it must be what the arrays take. */
#if XA_INLINE
#define MAIN_LOCAL (AS_SIZE + BS_SIZE + 2 * A_ELEMS + RANK_CEIL * GEMM_LDA)
#else
#define MAIN_LOCAL (AS_SIZE + BS_SIZE)
#endif
#if !defined(MAIN_LOCAL_BYTES) || MAIN_LOCAL * 4 != MAIN_LOCAL_BYTES
#error "main_tiles.cl: local memory differs from the plan's count"
#endif

/* How lora_main meets K's end (gemm_simt.cl's GEMM_K_GUARD, ...): it
 * clamps where VEC is 4 and T comes from lora_xa, and guards the last K
 * step otherwise (the split path, VEC 1 and 2, where clamping is the
 * slower of the two). */
#if IN_FEATURES % GEMM_TILE_K != 0
#define MAIN_K_END (VEC == 4 && !XA_INLINE ? GEMM_K_CLAMP : GEMM_K_GUARD)
#else
#define MAIN_K_END GEMM_K_GUARD
#endif

#if XA_INLINE
/* Global -> registers: the A tile at k0, AL_W columns, zero past r or K. */
inline void fetch_a(float ar[A_LOADS], const __global storage_t *a,
                    const int k0, const int lid, const int edge)
{
#pragma unroll
    for (int l = 0; l < A_LOADS; l++) {
        const int v = lid + l * GEMM_THREADS;
        const int k = k0 + v / AL_W;
        const int j = v % AL_W;
        ar[l] = 0.0f;
#if A_ELEMS % GEMM_THREADS != 0
        if (v < A_ELEMS)
#endif
#if AL_W != RANK
        if (j < RANK)
#endif
        if (GEMM_K_LIVE(edge, k)) {
            ar[l] = load1(a, A_AT(k, j));
        }
    }
}

inline void stash_a(__local float *al, const float ar[A_LOADS],
                    const int lid)
{
#pragma unroll
    for (int l = 0; l < A_LOADS; l++) {
        const int v = lid + l * GEMM_THREADS;
#if A_ELEMS % GEMM_THREADS != 0
        if (v < A_ELEMS)
#endif
        {
            al[v] = ar[l];
        }
    }
}

/* tacc += the GEMM_TILE_K outer products of this work-item's X rows
 * (AP, as in gemm_mac) and its T columns of the A tile (AL, offset to
 * tn). */
inline void mac_xa(float tacc[GEMM_WORK_M][XA_PER], const __local float *ap,
                   const __local float *al)
{
#pragma unroll
    for (int k = 0; k < GEMM_TILE_K; k++) {
        float av[GEMM_WORK_M];
        gemm_read_a(av, ap, k);
#pragma unroll
        for (int q = 0; q < XA_PER; q++) {
            const float aq = al[k * AL_W + q * GEMM_THREADS_N];
#pragma unroll
            for (int i = 0; i < GEMM_WORK_M; i++) {
                tacc[i][q] = fma(av[i], aq, tacc[i][q]);
            }
        }
    }
}
#endif

/* One work-group's GEMM_TILE_M x GEMM_TILE_N of Y, or with SLICES > 1
 * its partial sums over slice SLICE of K. Along dimension 0 run SLICES x
 * COL_TILES work-groups. lora_main runs one slice, all of K, and writes
 * Y. Few rows fill few work-groups, so the plan's split path launches
 * lora_main_split (SPLIT_K > 1), which cuts K into SPLIT_K slices: slice
 * s runs K tiles [kt0, kt1) and leaves its partial sums in scratch for
 * lora_combine; slice 0 adds T*B. Constants at each call: K_END, how
 * K's end is handled (see GEMM_K_LIVE); LDX and LDW, the row strides of X
 * and of W and B; VW, the width of their loads (VEC, or 4 on the copies of
 * lora_main_padded); SW, the width of Y's stores; W_COLS, 1 where W and B
 * are out_in's (W N x K, its rows LDW apart, read along K; B N x r), 0
 * where they lie K x N and r x N (in_out's, or lora_main_padded's
 * copies). Local memory: the kernel's arrays. */
inline void main_tiles(const int rows,
                       const __global storage_t *restrict x,
#if HAS_BASE
                       const __global storage_t *restrict w,
#endif
#if XA_INLINE
                       const __global storage_t *restrict a,
#endif
                       const __global storage_t *restrict b,
                       __global storage_t *restrict y,
#if XA_INLINE
                       __local float *al, __local float *tl,
#else
                       __global float *restrict scratch,
#endif
                       __local float *as, __local float *bs,
                       const int slices, const int slice, const int k_end,
                       const int ldx, const int ldw, const int vw,
                       const int sw, const int w_cols)
{
    const int clamp = k_end == GEMM_K_CLAMP;
#if !XA_INLINE
    const __global float *restrict t = scratch; /* lora_xa's T */
#endif
    const int lid = get_local_id(1) * GEMM_THREADS_N + get_local_id(0);
    int tm, tn;
    gemm_place(lid, &tm, &tn);
    const int kt0 = slice * K_TILES / slices;
    const int kt1 = (slice + 1) * K_TILES / slices;
    const int col0 = (get_group_id(0) - slice * COL_TILES) * GEMM_TILE_N;
    const int row0 = get_group_id(1) * GEMM_TILE_M;

    /* MAIN_SKIP_ROWS: an item wholly past Y's rows (its first row is its
     * lowest) only helps its group copy the K stretch's tiles. */
    const int live = !MAIN_SKIP_ROWS || row0 + tm * GEMM_LVM < rows;

    float acc[GEMM_WORK_M][GEMM_WORK_N];
    gemm_zero(acc);

    /* The K stretch, software-pipelined: the next stage's tiles travel
     * from global memory into registers while this stage's are multiplied,
     * then go to the other half of local memory; one barrier per stage. */
#if XA_INLINE
    float tacc[GEMM_WORK_M][XA_PER];
#pragma unroll
    for (int i = 0; i < GEMM_WORK_M; i++) {
#pragma unroll
        for (int q = 0; q < XA_PER; q++) {
            tacc[i][q] = 0.0f;
        }
    }
    float ar[A_LOADS];
#endif
    float4 xr[GEMM_A_LOADS(VEC)];
#if HAS_BASE
    float4 wr[GEMM_B_LOADS(VEC)];
#endif
    /* The tiles of K step KT into registers (xr, wr, ar), guarded
     * against K's end in the last step only, clamped, or neither (K_END,
     * see GEMM_K_LIVE above). */
#if HAS_BASE
#define FETCH_W(kt, edge)                                                \
    do {                                                                 \
        if (w_cols) {                                                    \
            gemm_fetch_b_cols(wr, w, ldw, vw, col0, (kt) * GEMM_TILE_K,  \
                              lid, edge, clamp);                         \
        } else {                                                         \
            gemm_fetch_b(wr, w, ldw, vw, col0, (kt) * GEMM_TILE_K, lid,  \
                         edge, clamp);                                   \
        }                                                                \
    } while (0)
#define STASH_W(buf, kt)                                                 \
    do {                                                                 \
        if (w_cols) {                                                    \
            gemm_stash_b_cols(buf, wr, vw, (kt) * GEMM_TILE_K, lid,      \
                              clamp);                                    \
        } else {                                                         \
            gemm_stash_b(buf, wr, vw, (kt) * GEMM_TILE_K, lid, clamp);   \
        }                                                                \
    } while (0)
#else
#define FETCH_W(kt, edge)
#define STASH_W(buf, kt)
#endif
#if XA_INLINE
#define FETCH_A(kt, edge) fetch_a(ar, a, (kt) * GEMM_TILE_K, lid, edge)
#else
#define FETCH_A(kt, edge)
#endif
#define FETCH_TILES(kt, edge)                                            \
    do {                                                                 \
        gemm_fetch_a(xr, x, ldx, vw, rows, row0, (kt) * GEMM_TILE_K,     \
                     lid, edge, clamp);                                  \
        FETCH_W(kt, edge);                                               \
        FETCH_A(kt, edge);                                               \
    } while (0)
#if IN_FEATURES % GEMM_TILE_K != 0
#define FETCH_STEP(kt)                                                   \
    do {                                                                 \
        if (k_end == GEMM_K_GUARD && (kt) == K_TILES - 1) {              \
            FETCH_TILES(kt, 1);                                          \
        } else {                                                         \
            FETCH_TILES(kt, 0);                                          \
        }                                                                \
    } while (0)
#else
#define FETCH_STEP(kt) FETCH_TILES(kt, 0)
#endif
    FETCH_STEP(kt0);
    gemm_stash_a(as, xr, vw, kt0 * GEMM_TILE_K, lid, clamp);
    STASH_W(bs, kt0);
#if XA_INLINE
    stash_a(al, ar, lid);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int kt = kt0; kt < kt1; kt++) {
        const int cur = (kt - kt0) & 1;
        const int more = kt + 1 < kt1;
        if (more) {
            FETCH_STEP(kt + 1);
        }
        if (live) {
#if HAS_BASE
            gemm_mac(acc, as + cur * (GEMM_TILE_K * GEMM_LDA) + tm * GEMM_LVM,
                     bs + cur * (GEMM_TILE_K * GEMM_LDB) + tn * GEMM_LVN,
                     GEMM_TILE_K);
#endif
#if XA_INLINE
            mac_xa(tacc, as + cur * (GEMM_TILE_K * GEMM_LDA) + tm * GEMM_LVM,
                   al + cur * A_ELEMS + tn);
#endif
        }
        if (more) {
            gemm_stash_a(as + (cur ^ 1) * (GEMM_TILE_K * GEMM_LDA), xr, vw,
                         (kt + 1) * GEMM_TILE_K, lid, clamp);
            STASH_W(bs + (cur ^ 1) * (GEMM_TILE_K * GEMM_LDB), kt + 1);
#if XA_INLINE
            stash_a(al + (cur ^ 1) * A_ELEMS, ar, lid);
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

#if XA_INLINE
    /* Park T = SCALE*X*A of this row block in local memory, r-major like
     * the X tiles; columns past r hold zeros. */
#pragma unroll
    for (int q = 0; q < XA_PER; q++) {
        const int j = tn + q * GEMM_THREADS_N;
#if AL_W > RANK_CEIL
        if (j < RANK_CEIL)
#endif
        {
#pragma unroll
            for (int i = 0; i < GEMM_WORK_M; i++) {
                tl[j * GEMM_LDA + GEMM_ROW_OF(i)] = SCALE * tacc[i][q];
            }
        }
    }
#endif

    /* The r stretch: acc += T*B, GEMM_RANK_K rows of B per stage. */
    for (int rt = 0; rt < (slice == 0 ? GEMM_RANK_TILES : 0); rt++) {
        const int j0 = rt * GEMM_RANK_K;
        if (w_cols) {
            gemm_rank_b_cols(bs, b, RANK, col0, j0, lid);
        } else {
            gemm_rank_b_rows(bs, b, ldw, vw, col0, j0, lid);
        }
#if !XA_INLINE
        gemm_rank_a(as, t, rows, row0, j0, lid);
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
#if XA_INLINE
        gemm_mac(acc, tl + j0 * GEMM_LDA + tm * GEMM_LVM,
                 bs + tn * GEMM_LVN, GEMM_RANK_K);
#else
        gemm_mac(acc, as + tm * GEMM_LVM, bs + tn * GEMM_LVN, GEMM_RANK_K);
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
    }

#if SPLIT_K > 1
    if (slices > 1) {
        /* Partial sums, float, SPLIT_PART(rows, slice) (split_k.cl). A
         * loop of its own: sharing the Y stores' loop, with the store
         * picked per element, made lora_main_split slower. */
        gemm_store_part(scratch + SPLIT_PART(rows, slice), acc, tm, tn,
                        rows, row0, col0);
        return;
    }
#endif
    gemm_store(y, sw, acc, tm, tn, rows, row0, col0);
}
