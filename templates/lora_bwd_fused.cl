/* lora_bwd_fused.cl - every gradient of lora_backward in one launch, for
 * few rows (see lora_bwd_common.cl for the algebra): dX, dA and dB from
 * X, dY, W, A and B alone, with no G or T handed between launches, where
 * a launch costs more than the work between two.
 *
 * The reductions are cut into `slices` (a kernel argument: the plan's
 * paths take fewer as the rows grow), so that few rows still make many
 * short work-groups. Every product here is linear in the slice's share
 * of G or T, so each slice's work-group computes its share alone:
 * dY_s*W_s^T + (SCALE*dY_s*B_s^T)*A^T of dX, X_b^T*(SCALE*dY_s*B_s^T) of
 * dA and dY_b^T*(SCALE*X_s*A_s) of dB^T. Work-group (s * FUSED_GROUPS +
 * c, b) takes slice s and the GEMM_TILE_M rows of block b (from b *
 * GEMM_TILE_M):
 *   c < FUSED_DX_TILES (INPUT_GRAD 1): dX's columns from c * GEMM_TILE_N,
 *     gemm_simt.cl's register-tiled GEMM over [dY | G] * [W^T ; A^T]: N
 *     stepped by GEMM_TILE_K through double-buffered local memory, dY's
 *     tile k-major and W^T's read from W where it lies (in_out: W's rows
 *     are W^T's columns; out_in: W, N x K, is W^T). The block's G =
 *     SCALE*dY*B^T (GEMM_TILE_M x r) accumulates from the same staged dY
 *     tiles, so the r stretch that follows needs nothing from elsewhere.
 *   c == FUSED_DX_TILES: dA's part of the block, X_b^T * G_b, G_b made as
 *     above from the slice of N (no W).
 *   c == FUSED_DX_TILES + 1: dB's part, dY_b^T * SCALE*T_b (dB^T), T_b =
 *     X_b * A made the same way from the slice of K.
 * With one slice (and, for dA and dB, one block of rows) the results go
 * straight to dX, dA and dB (the latter added with ACCUMULATE). Else
 * each work-group stores its partial sums in the scratch, and of the
 * work-groups of a tile of dX (of dA, of dB) the last to finish (a
 * counter in the handle's sync words, set back to 0 by that work-group)
 * sums them in slice (block, then slice) order: the same bits whichever
 * finishes last, and no work-group waits for another.
 *
 * Parameters (gen/op_lora_backward.c): gemm_simt.cl's GEMM_ #defines,
 * those of lora_bwd_dx (GEMM_K = N, GEMM_N = K, GEMM_RANK = r,
 * GEMM_STAGE_B = INPUT_GRAD && HAS_BASE, GEMM_VEC = VEC); and
 *   FUSED_DX_TILES     CEIL_DIV(K, GEMM_TILE_N) with INPUT_GRAD, else 0
 *   FUSED_PART_VEC     columns of X or dY per work-item in dA's and dB's
 *                      parts: 1, 2 or 4, dividing VEC; times RANK <= 64
 *   FUSED_LOCAL_BYTES  the plan's count of the local memory below
 * Local size (GEMM_THREADS_N, GEMM_THREADS_M); work-groups
 * (slices * FUSED_GROUPS, CEIL_DIV(rows, GEMM_TILE_M)). Rows past the end
 * repeat the last (their sums are never stored); k past K and n past N
 * read as zero.
 *
 * Scratch (floats), for `rows` rows and `slices` slices:
 *   dX's partial sums, with INPUT_GRAD and slices > 1: slices x rows x K,
 *     slice s at
 *     s * rows * K, row-major;
 *   then dA's and dB^T's, where there are more than one: a slot of
 *     (K + N) * RANK floats (lora_bwd_common.cl's slice of partials: dA,
 *     K x r, then dB^T, N x r) for each block of rows and slice, slot
 *     b * slices + s.
 * Sync words: FUSED_DONE_DA, FUSED_DONE_DB, then one per tile of dX:
 * FUSED_DONE_DX + b * FUSED_DX_TILES + c. */
#include "lora_bwd_common.cl"
#include "grid_fence.cl"
#include "gemm_simt.cl"

#if !defined(FUSED_DX_TILES) || !defined(FUSED_PART_VEC) ||              \
    !defined(FUSED_LOCAL_BYTES) || !defined(VEC)
#error "lora_bwd_fused.cl: the plan must define FUSED_*, VEC"
#endif
#if GEMM_K != OUT_FEATURES || GEMM_N != IN_FEATURES || GEMM_RANK != RANK || \
    GEMM_RANK_PARTS != 1 || GEMM_VEC != VEC ||                             \
    GEMM_STAGE_B != (INPUT_GRAD && HAS_BASE) || GEMM_OUT_ADD
#error "lora_bwd_fused.cl: the GEMM_ #defines are not [dY | G] * [W^T ; A^T]"
#endif
#if GEMM_TILE_K % VEC != 0 || IN_FEATURES % VEC != 0 ||                  \
    OUT_FEATURES % VEC != 0 || VEC % FUSED_PART_VEC != 0 ||                \
    FUSED_PART_VEC * RANK > 64
#error "lora_bwd_fused.cl: VEC must divide GEMM_TILE_K, K and N, and \
FUSED_PART_VEC VEC, with FUSED_PART_VEC * RANK <= 64"
#endif

/* The work-groups of a slice along a block of rows: dX's tiles, dA's
 * part, dB's. */
#define FUSED_GROUPS (FUSED_DX_TILES + 2)
/* The counters of the work-groups done with their partial sums of dA,
 * of dB, then of each tile of dX. */
#define FUSED_DONE_DA 0
#define FUSED_DONE_DB 1
#define FUSED_DONE_DX 2

/* ---- Local memory, in floats ---- */

/* Two stages of the block's dY (X) tile, k-major. */
#define FUSED_AS_SIZE (2 * GEMM_TILE_K * GEMM_LDA)
/* Two stages of W^T's tile; the r stretch's A^T tile takes the first. */
#if INPUT_GRAD && HAS_BASE
#define FUSED_BS_SIZE (2 * GEMM_TILE_K * GEMM_LDB)
#elif INPUT_GRAD
#define FUSED_BS_SIZE (GEMM_RANK_K * GEMM_LDB)
#else
#define FUSED_BS_SIZE 1
#endif
/* Two stages of B's (A's) rows for G (T): r x GEMM_TILE_K each. */
#define FUSED_FS_SIZE (2 * RANK * GEMM_TILE_K)
/* The block's G (SCALE*T), k-major as the r stretch reads it: whole
 * steps of GEMM_RANK_K, zero past r. */
#define FUSED_GS_SIZE (GEMM_RANK_TILES * GEMM_RANK_K * GEMM_LDA)
/* And grid_last's flag, one word. */
#define FUSED_LOCAL                                                      \
    (FUSED_AS_SIZE + FUSED_BS_SIZE + FUSED_FS_SIZE + FUSED_GS_SIZE + 1)
#if FUSED_LOCAL * 4 != FUSED_LOCAL_BYTES
#error "lora_bwd_fused.cl: local memory differs from the plan's count"
#endif

/* ---- The block's stretch: G (T) alongside dX's GEMM ---- */

/* Loads per work-item of a stage: the block's tile of dY (X), VEC wide;
 * B's (A's) r x GEMM_TILE_K; G's (T's) sums, GEMM_TILE_M x r. */
#define FUSED_ROW_VECS (GEMM_TILE_M * GEMM_TILE_K / VEC)
#define FUSED_ROW_LOADS CEIL_DIV(FUSED_ROW_VECS, GEMM_THREADS)
#define FUSED_F_LOADS CEIL_DIV(RANK * GEMM_TILE_K, GEMM_THREADS)
#define FUSED_SUMS CEIL_DIV(GEMM_TILE_M * RANK, GEMM_THREADS)

/* Global -> registers: this work-item's share of the block's tile at
 * (row0, k0) of P, rows LEN long; rows past the end repeat the last, k
 * past LEN reads as zero. */
inline void fused_fetch_rows(float4 r[FUSED_ROW_LOADS],
                             const __global storage_t *p, const int len,
                             const int rows, const int row0, const int k0,
                             const int lid)
{
#pragma unroll
    for (int l = 0; l < FUSED_ROW_LOADS; l++) {
        const int v = lid + l * GEMM_THREADS;
        const int k = k0 + v % (GEMM_TILE_K / VEC) * VEC;
        const int row = min(row0 + v / (GEMM_TILE_K / VEC), rows - 1);
        r[l] = (float4)0.0f;
        if ((FUSED_ROW_VECS % GEMM_THREADS == 0 || v < FUSED_ROW_VECS) &&
            k < len) {
            r[l] = gemm_load_vw(p + (size_t)row * len, k, VEC);
        }
    }
}

/* Registers -> local: the tile k-major (AS[kk][m]). */
inline void fused_stash_rows(__local float *as,
                             const float4 r[FUSED_ROW_LOADS], const int lid)
{
#pragma unroll
    for (int l = 0; l < FUSED_ROW_LOADS; l++) {
        const int v = lid + l * GEMM_THREADS;
        const int m = v / (GEMM_TILE_K / VEC);
        const int kk = v % (GEMM_TILE_K / VEC) * VEC;
        if (FUSED_ROW_VECS % GEMM_THREADS == 0 || v < FUSED_ROW_VECS) {
#pragma unroll
            for (int c = 0; c < VEC; c++) {
                as[(kk + c) * GEMM_LDA + m] = GEMM_LANE(r[l], c);
            }
        }
    }
}

/* Global -> registers: the factor's r x GEMM_TILE_K at k0: B's (j, n)
 * for G (FOR_G), else A's (k, j) for T; zero past LEN. */
inline void fused_fetch_factor(float f[FUSED_F_LOADS],
                               const __global storage_t *p, const int for_g,
                               const int len, const int k0, const int lid)
{
#pragma unroll
    for (int l = 0; l < FUSED_F_LOADS; l++) {
        const int e = lid + l * GEMM_THREADS;
        const int j = min(e / GEMM_TILE_K, RANK - 1);
        const int k = k0 + e % GEMM_TILE_K;
        f[l] = 0.0f;
        if (k < len) {
            f[l] = load1(p, for_g ? B_AT(j, k) : A_AT(k, j));
        }
    }
}

inline void fused_stash_factor(__local float *fs,
                               const float f[FUSED_F_LOADS], const int lid)
{
#pragma unroll
    for (int l = 0; l < FUSED_F_LOADS; l++) {
        const int e = lid + l * GEMM_THREADS;
        if ((RANK * GEMM_TILE_K) % GEMM_THREADS == 0 ||
            e < RANK * GEMM_TILE_K) {
            fs[e] = f[l];
        }
    }
}

/* SUMS += the stage's products of the block's tile AS and the factor's
 * FS: sum i of this work-item is row (lid + i * GEMM_THREADS) %
 * GEMM_TILE_M, rank column (lid + i * GEMM_THREADS) / GEMM_TILE_M. */
inline void fused_sums(float sums[FUSED_SUMS], const __local float *as,
                       const __local float *fs, const int lid)
{
#pragma unroll
    for (int i = 0; i < FUSED_SUMS; i++) {
        const int e = lid + i * GEMM_THREADS;
        if ((GEMM_TILE_M * RANK) % GEMM_THREADS == 0 ||
            e < GEMM_TILE_M * RANK) {
            const int m = e % GEMM_TILE_M, j = e / GEMM_TILE_M;
#pragma unroll
            for (int kk = 0; kk < GEMM_TILE_K; kk++) {
                sums[i] = fma(as[kk * GEMM_LDA + m], fs[j * GEMM_TILE_K + kk],
                              sums[i]);
            }
        }
    }
}

/* SCALE * SUMS into GS, k-major, and zeros past r to the last step of
 * GEMM_RANK_K. */
inline void fused_park(__local float *gs, const float sums[FUSED_SUMS],
                       const int lid)
{
#pragma unroll
    for (int i = 0; i < FUSED_SUMS; i++) {
        const int e = lid + i * GEMM_THREADS;
        if ((GEMM_TILE_M * RANK) % GEMM_THREADS == 0 ||
            e < GEMM_TILE_M * RANK) {
            gs[e / GEMM_TILE_M * GEMM_LDA + e % GEMM_TILE_M] =
                SCALE * sums[i];
        }
    }
    for (int e = GEMM_TILE_M * RANK + lid;
         e < GEMM_RANK_TILES * GEMM_RANK_K * GEMM_TILE_M;
         e += GEMM_THREADS) {
        gs[e / GEMM_TILE_M * GEMM_LDA + e % GEMM_TILE_M] = 0.0f;
    }
}

#if GEMM_STAGE_B
/* W^T's tile at (k0, col0): W's rows where it is N x K (out_in), its
 * columns where it is K x N (in_out). */
#if WEIGHT_OUT_IN
#define FUSED_W_FETCH(r, w_, vw, c0, k0, l, e, cl)                       \
    gemm_fetch_b(r, w_, IN_FEATURES, vw, c0, k0, l, e, cl)
#define FUSED_W_STASH gemm_stash_b
#else
#define FUSED_W_FETCH(r, w_, vw, c0, k0, l, e, cl)                       \
    gemm_fetch_b_cols(r, w_, OUT_FEATURES, vw, c0, k0, l, e, cl)
#define FUSED_W_STASH gemm_stash_b_cols
#endif
#endif

/* The block's stretch over steps STEP0 .. STEP1 of LEN of P (dY: N,
 * with B for G; X: K, with A for T) into SUMS, software-pipelined: the
 * next step's loads travel into registers while this one is multiplied,
 * then go to the other half of local memory; one barrier a step. With
 * WITH_W (dX's work-groups) W^T's tile at COL0 comes along and ACC gets
 * dY*W^T. SCALE*SUMS ends in GS. */
inline void fused_stretch(float acc[GEMM_WORK_M][GEMM_WORK_N],
                          const __global storage_t *p,
                          const __global storage_t *factor, const int for_g,
                          const __global storage_t *w, const int with_w,
                          const int len, const int step0, const int step1,
                          const int rows, const int row0,
                          const int col0, const int lid, const int tm,
                          const int tn, __local float *as,
                          __local float *bs, __local float *fs,
                          __local float *gs)
{
    float sums[FUSED_SUMS];
#pragma unroll
    for (int i = 0; i < FUSED_SUMS; i++) {
        sums[i] = 0.0f;
    }
    if (step0 >= step1) {
        /* a slice past the stretch's steps: no sums (the plan gives no
         * more slices than steps; this keeps W's loads inside it) */
        fused_park(gs, sums, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        return;
    }
    float4 pr[FUSED_ROW_LOADS];
    float fr[FUSED_F_LOADS];
#if GEMM_STAGE_B
    float4 wr[GEMM_B_LOADS(VEC)];
#define FUSED_FETCH_W(k0)                                                \
    if (with_w) {                                                        \
        FUSED_W_FETCH(wr, w, VEC, col0, (k0), lid, 1, 0);                \
    }
#define FUSED_STASH_W(at)                                                \
    if (with_w) {                                                        \
        FUSED_W_STASH((at), wr, VEC, 0, lid, 0);                         \
    }
#else
    (void)w;
    (void)with_w;
    (void)col0;
#define FUSED_FETCH_W(k0)
#define FUSED_STASH_W(at)
#endif
    /* Step STEP's loads into the registers; then to local memory's half
     * HALF. */
#define FUSED_FETCH(step)                                                \
    do {                                                                 \
        const int k0_ = (step) * GEMM_TILE_K;                            \
        fused_fetch_rows(pr, p, len, rows, row0, k0_, lid);              \
        fused_fetch_factor(fr, factor, for_g, len, k0_, lid);            \
        FUSED_FETCH_W(k0_);                                              \
    } while (0)
#define FUSED_STASH(half)                                                \
    do {                                                                 \
        fused_stash_rows(as + (half) * (GEMM_TILE_K * GEMM_LDA), pr,     \
                         lid);                                           \
        fused_stash_factor(fs + (half) * (RANK * GEMM_TILE_K), fr, lid); \
        FUSED_STASH_W(bs + (half) * (GEMM_TILE_K * GEMM_LDB));           \
    } while (0)
    FUSED_FETCH(step0);
    FUSED_STASH(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = step0; s < step1; s++) {
        const int cur = (s - step0) & 1, more = s + 1 < step1;
        if (more) {
            FUSED_FETCH(s + 1);
        }
#if GEMM_STAGE_B
        if (with_w) {
            gemm_mac(acc, as + cur * (GEMM_TILE_K * GEMM_LDA) + tm * GEMM_LVM,
                     bs + cur * (GEMM_TILE_K * GEMM_LDB) + tn * GEMM_LVN,
                     GEMM_TILE_K);
        }
#endif
        fused_sums(sums, as + cur * (GEMM_TILE_K * GEMM_LDA),
                   fs + cur * (RANK * GEMM_TILE_K), lid);
        if (more) {
            FUSED_STASH(cur ^ 1);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#undef FUSED_FETCH
#undef FUSED_STASH
#undef FUSED_FETCH_W
#undef FUSED_STASH_W
    fused_park(gs, sums, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    (void)tm;
    (void)tn;
}

/* ---- dA's and dB's parts ---- */

/* Element E of dA (FOR_DA: column E / r of X, rank column E % r) or of
 * dB^T (column E / r of dY), the sum SUM, into the gradient in its
 * layout (added with ACCUMULATE). */
inline void fused_put(__global storage_t *da, __global storage_t *db,
                      const int for_da, const int e, float sum)
{
    const int c = e / RANK, j = e % RANK;
    __global storage_t *g = for_da ? da : db;
    const size_t at = for_da ? A_AT(c, j) : B_AT(j, c);
#if ACCUMULATE
    sum += load1(g, at);
#endif
    store1(g, at, sum);
}

#if FUSED_PART_VEC == 4
#define FUSED_LOAD_PART(p, i) load4(p, i)
#elif FUSED_PART_VEC == 2
#define FUSED_LOAD_PART(p, i) ((float4)(load2(p, i), 0.0f, 0.0f))
#else
#define FUSED_LOAD_PART(p, i) ((float4)(load1(p, i), 0.0f, 0.0f, 0.0f))
#endif

/* The block's part of dA (FOR_DA: P is X, LEN K, GS holds G_b) or of
 * dB^T (P is dY, LEN N, GS holds SCALE*T_b) over its LIVE rows from
 * ROW0: FUSED_PART_VEC columns of P and every rank column a work-item,
 * the rows in order. Into the gradient itself (ONE: the only block), or
 * into the slice PART. */
inline void fused_part(const __global storage_t *p, const int len,
                       const __local float *gs, const int live,
                       const int row0, const int for_da, const int one,
                       __global float *part, __global storage_t *da,
                       __global storage_t *db, const int lid)
{
    for (int v = lid; v < len / FUSED_PART_VEC; v += GEMM_THREADS) {
        float s[FUSED_PART_VEC][RANK];
#pragma unroll
        for (int c = 0; c < FUSED_PART_VEC; c++) {
#pragma unroll
            for (int j = 0; j < RANK; j++) {
                s[c][j] = 0.0f;
            }
        }
        const __global storage_t *q =
            p + (size_t)row0 * len + v * FUSED_PART_VEC;
#pragma unroll 8
        for (int m = 0; m < live; m++) {
            const float4 x = FUSED_LOAD_PART(q, (size_t)m * len);
#pragma unroll
            for (int c = 0; c < FUSED_PART_VEC; c++) {
#pragma unroll
                for (int j = 0; j < RANK; j++) {
                    s[c][j] = fma(GEMM_LANE(x, c), gs[j * GEMM_LDA + m],
                                  s[c][j]);
                }
            }
        }
#pragma unroll
        for (int c = 0; c < FUSED_PART_VEC; c++) {
#pragma unroll
            for (int j = 0; j < RANK; j++) {
                const int e = (v * FUSED_PART_VEC + c) * RANK + j;
                if (one) {
                    fused_put(da, db, for_da, e, s[c][j]);
                } else {
                    part[e] = s[c][j];
                }
            }
        }
    }
}

/* The elements a work-item of a last work-group sums at once. */
#define FUSED_SUM_ELEMS 4

/* SUMS[i] = the COUNT partial sums STEP floats apart from PARTS[AT[i]],
 * added in order, for each live element (AT[i] >= 0): four partials of
 * every element in flight at once, so that the loads wait once a round
 * of four rather than once a partial. */
inline void fused_add_parts(float sums[FUSED_SUM_ELEMS],
                            const __global float *parts,
                            const long at[FUSED_SUM_ELEMS], const size_t step,
                            const uint count)
{
#pragma unroll
    for (int i = 0; i < FUSED_SUM_ELEMS; i++) {
        sums[i] = 0.0f;
    }
    for (uint q = 0; q < count; q += 4) {
        float v[FUSED_SUM_ELEMS][4];
#pragma unroll
        for (int i = 0; i < FUSED_SUM_ELEMS; i++) {
#pragma unroll
            for (uint u = 0; u < 4; u++) {
                v[i][u] = at[i] >= 0 && q + u < count
                              ? parts[at[i] + (q + u) * step]
                              : 0.0f;
            }
        }
#pragma unroll
        for (int i = 0; i < FUSED_SUM_ELEMS; i++) {
#pragma unroll
            for (uint u = 0; u < 4; u++) {
                if (q + u < count) {
                    sums[i] += v[i][u];
                }
            }
        }
    }
}

/* dA (FOR_DA) or dB: the SLOTS slots' LEN * r sums at PARTS, added in
 * slot order. */
inline void fused_sum_slots(const __global float *parts, const uint slots,
                            const int len, const int for_da,
                            __global storage_t *da, __global storage_t *db,
                            const int lid)
{
    for (int e0 = 0; e0 < len * RANK;
         e0 += FUSED_SUM_ELEMS * GEMM_THREADS) {
        long at[FUSED_SUM_ELEMS];
        float sums[FUSED_SUM_ELEMS];
#pragma unroll
        for (int i = 0; i < FUSED_SUM_ELEMS; i++) {
            const int e = e0 + lid + i * GEMM_THREADS;
            at[i] = e < len * RANK ? e : -1;
        }
        fused_add_parts(sums, parts, at, SLICE_FLOATS, slots);
#pragma unroll
        for (int i = 0; i < FUSED_SUM_ELEMS; i++) {
            if (at[i] >= 0) {
                fused_put(da, db, for_da, (int)at[i], sums[i]);
            }
        }
    }
}

#if INPUT_GRAD
/* dX's tile at (row0, col0): the SLICES slices' partial sums at PARTS
 * (slice s at s * rows * K), added in slice order. */
inline void fused_sum_dx(const __global float *parts, const int slices,
                         const int rows, const int row0, const int col0,
                         __global storage_t *dx, const int lid)
{
    for (int e0 = 0; e0 < GEMM_TILE_M * GEMM_TILE_N;
         e0 += FUSED_SUM_ELEMS * GEMM_THREADS) {
        long at[FUSED_SUM_ELEMS];
        float sums[FUSED_SUM_ELEMS];
#pragma unroll
        for (int i = 0; i < FUSED_SUM_ELEMS; i++) {
            const int e = e0 + lid + i * GEMM_THREADS;
            const int row = row0 + e / GEMM_TILE_N;
            const int col = col0 + e % GEMM_TILE_N;
            at[i] = e < GEMM_TILE_M * GEMM_TILE_N && row < rows &&
                            col < IN_FEATURES
                        ? (long)row * IN_FEATURES + col
                        : -1;
        }
        fused_add_parts(sums, parts, at, (size_t)rows * IN_FEATURES,
                        (uint)slices);
#pragma unroll
        for (int i = 0; i < FUSED_SUM_ELEMS; i++) {
            if (at[i] >= 0) {
                store1(dx, (size_t)at[i], sums[i]);
            }
        }
    }
}
#endif

__kernel __attribute__((reqd_work_group_size(GEMM_THREADS_N,
                                              GEMM_THREADS_M, 1)))
void lora_bwd_fused(const int rows, const int slices,
                    const __global storage_t *restrict x,
#if INPUT_GRAD && HAS_BASE
                    const __global storage_t *restrict w,
#endif
                    const __global storage_t *restrict a,
                    const __global storage_t *restrict b,
                    const __global storage_t *restrict dy,
#if INPUT_GRAD
                    __global storage_t *restrict dx,
#endif
                    __global storage_t *restrict da,
                    __global storage_t *restrict db,
                    __global float *restrict scratch,
                    volatile __global uint *restrict sync)
{
    __local float as[FUSED_AS_SIZE] __attribute__((aligned(16)));
    __local float bs[FUSED_BS_SIZE] __attribute__((aligned(16)));
    __local float fs[FUSED_FS_SIZE];
    __local float gs[FUSED_GS_SIZE] __attribute__((aligned(16)));
    __local uint last;
    const int lid = get_local_id(1) * GEMM_THREADS_N + get_local_id(0);
    const int c = get_group_id(0) % FUSED_GROUPS;
    const int slice = get_group_id(0) / FUSED_GROUPS;
    const int block = get_group_id(1);
    const uint blocks = get_num_groups(1);
    const int row0 = block * GEMM_TILE_M;
    /* dX's partial sums, then dA's and dB^T's */
#if INPUT_GRAD
    __global float *dx_parts = scratch;
    __global float *grad_parts =
        scratch + (slices > 1 ? (size_t)slices * rows * IN_FEATURES : 0);
#else
    __global float *grad_parts = scratch;
#endif
    int tm, tn;
    gemm_place(lid, &tm, &tn);
    float acc[GEMM_WORK_M][GEMM_WORK_N];
    gemm_zero(acc);
#if !(INPUT_GRAD && HAS_BASE)
    const __global storage_t *w = NULL;
#endif

#if INPUT_GRAD
    if (c < FUSED_DX_TILES) {
        const int col0 = c * GEMM_TILE_N;
        const int steps = CEIL_DIV(OUT_FEATURES, GEMM_TILE_K);
        fused_stretch(acc, dy, b, 1, w, 1, OUT_FEATURES,
                      slice * steps / slices, (slice + 1) * steps / slices,
                      rows, row0, col0, lid, tm, tn, as, bs, fs, gs);
        /* The r stretch: acc += G_s*A^T, G_s from GS, A^T from a (in_out's
         * K x r read as its transpose; out_in's r x K is A^T). */
        for (int rt = 0; rt < GEMM_RANK_TILES; rt++) {
            const int j0 = rt * GEMM_RANK_K;
#if WEIGHT_OUT_IN
            gemm_rank_b_rows(bs, a, IN_FEATURES, VEC, col0, j0, lid);
#else
            gemm_rank_b_cols(bs, a, RANK, col0, j0, lid);
#endif
            barrier(CLK_LOCAL_MEM_FENCE);
            gemm_mac(acc, gs + j0 * GEMM_LDA + tm * GEMM_LVM,
                     bs + tn * GEMM_LVN, GEMM_RANK_K);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (slices == 1) {
            gemm_store(dx, GEMM_SW, acc, tm, tn, rows, row0, col0);
            return;
        }
        gemm_store_part(dx_parts + (size_t)slice * rows * IN_FEATURES, acc,
                        tm, tn, rows, row0, col0);
        if (grid_last(sync + FUSED_DONE_DX + block * FUSED_DX_TILES + c,
                       slices, lid, &last)) {
            fused_sum_dx(dx_parts, slices, rows, row0, col0, dx, lid);
        }
        return;
    }
#endif

    /* dA's part (G_b from dY and B) or dB's (SCALE*T_b from X and A). */
    const int for_da = c == FUSED_DX_TILES;
    const int steps = CEIL_DIV(for_da ? OUT_FEATURES : IN_FEATURES,
                               GEMM_TILE_K);
    fused_stretch(acc, for_da ? dy : x, for_da ? b : a, for_da, w, 0,
                  for_da ? OUT_FEATURES : IN_FEATURES,
                  slice * steps / slices, (slice + 1) * steps / slices, rows,
                  row0, 0, lid, tm, tn, as, bs, fs, gs);
    const int len = for_da ? IN_FEATURES : OUT_FEATURES;
    const size_t offset = for_da ? 0 : (size_t)IN_FEATURES * RANK;
    const uint slots = blocks * slices;
    fused_part(for_da ? x : dy, len, gs, min(GEMM_TILE_M, rows - row0), row0,
               for_da, slots == 1,
               grad_parts + (block * slices + slice) * SLICE_FLOATS + offset,
               da, db, lid);
    if (slots > 1 &&
        grid_last(sync + (for_da ? FUSED_DONE_DA : FUSED_DONE_DB), slots,
                   lid, &last)) {
        fused_sum_slots(grad_parts + offset, slots, len, for_da, da, db,
                        lid);
    }
}
