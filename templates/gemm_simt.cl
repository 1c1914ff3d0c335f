/* gemm_simt.cl - the register-tiled core of the GEMMs that run on plain
 * work-items: lora_forward's [X | T] * [W ; B] (main_tiles.cl) and
 * lora_backward's [dY | G] * [W^T ; A^T] (lora_bwd_dx.cl). A work-group
 * owns GEMM_TILE_M x GEMM_TILE_N of the output; each work-item keeps
 * GEMM_WORK_M x GEMM_WORK_N of them in registers and adds the outer
 * products of the two operand tiles its kernel stages in local memory,
 * both k-major: the A side (rows of the output) GEMM_LDA floats a k step,
 * the B side (columns) GEMM_LDB.
 *
 * The pieces, each under its own heading below: the inner product
 * (gemm_place, gemm_zero, gemm_mac); the loaders of the first stretch of
 * the reduction, through registers (gemm_fetch_a/b, gemm_stash_a/b); the
 * loaders of the rank-r stretch, straight into local memory (gemm_rank_a,
 * gemm_rank_b_rows, gemm_rank_b_cols); the epilogue (gemm_store,
 * gemm_store_part). The kernel owns its local memory and the loops over
 * the stretches.
 *
 * Parameters, #defines of the kernel's plan (gen/lora_common.c,
 * lora_plan_gemm_simt); the ones a piece needs are checked beside it:
 *   GEMM_TILE_M, GEMM_TILE_N  rows, columns of the output per work-group
 *   GEMM_TILE_K               reduction step staged through local memory
 *   GEMM_WORK_M, GEMM_WORK_N  rows, columns per work-item (registers)
 *   GEMM_PAD                  floats of padding per local-memory row
 *   GEMM_WARP_N               work-items along N within each warp of 32
 *                             consecutive ones; 0: GEMM_THREADS_N
 *                             (row-major)
 * and under the pieces that read them: GEMM_N, GEMM_VEC; GEMM_STAGE_A,
 * GEMM_STAGE_B, GEMM_K; GEMM_RANK, GEMM_RANK_PARTS; GEMM_OUT_ADD,
 * GEMM_OUT_FIXED. Work-group: (GEMM_THREADS_N, GEMM_THREADS_M). */
#if !defined(GEMM_TILE_M) || !defined(GEMM_TILE_N) ||                    \
    !defined(GEMM_TILE_K) || !defined(GEMM_WORK_M) ||                    \
    !defined(GEMM_WORK_N) || !defined(GEMM_PAD) || !defined(GEMM_WARP_N)
#error "gemm_simt.cl: the kernel must set the GEMM_ tiles, PAD and WARP_N"
#endif
#if GEMM_TILE_M % GEMM_WORK_M != 0 || GEMM_TILE_N % GEMM_WORK_N != 0 ||  \
    GEMM_WORK_M > 16 || GEMM_WORK_N > 16
#error "gemm_simt.cl: GEMM_WORK_M, GEMM_WORK_N must divide the tiles, <= 16"
#endif

#define GEMM_THREADS_M (GEMM_TILE_M / GEMM_WORK_M)
#define GEMM_THREADS_N (GEMM_TILE_N / GEMM_WORK_N)
#define GEMM_THREADS (GEMM_THREADS_M * GEMM_THREADS_N)
#if GEMM_THREADS > 1024
#error "gemm_simt.cl: more than 1024 work-items per work-group"
#endif
#define GEMM_LDA (GEMM_TILE_M + GEMM_PAD) /* k stride of the A-side tile */
#define GEMM_LDB (GEMM_TILE_N + GEMM_PAD) /* k stride of the B-side tile */

/* Local-memory read widths of the inner product. A work-item's GEMM_WORK_M
 * rows are groups of GEMM_LVM adjacent rows, the groups GEMM_THREADS_M *
 * GEMM_LVM apart, so one float4 read serves four rows and neighbouring
 * work-items read neighbouring addresses (no bank conflicts). Same for
 * columns with GEMM_LVN. */
#if GEMM_WORK_M % 4 == 0 && GEMM_PAD % 4 == 0
#define GEMM_LVM 4
#elif GEMM_WORK_M % 2 == 0 && GEMM_PAD % 2 == 0
#define GEMM_LVM 2
#else
#define GEMM_LVM 1
#endif
#if GEMM_WORK_N % 4 == 0 && GEMM_PAD % 4 == 0
#define GEMM_LVN 4
#elif GEMM_WORK_N % 2 == 0 && GEMM_PAD % 2 == 0
#define GEMM_LVN 2
#else
#define GEMM_LVN 1
#endif
/* Row (column) of the tile held in work-item (tm, tn)'s i-th row (j-th
 * column). */
#define GEMM_ROW_OF(i)                                                   \
    (((i) / GEMM_LVM) * (GEMM_THREADS_M * GEMM_LVM) + tm * GEMM_LVM +    \
     (i) % GEMM_LVM)
#define GEMM_COL_OF(j)                                                   \
    (((j) / GEMM_LVN) * (GEMM_THREADS_N * GEMM_LVN) + tn * GEMM_LVN +    \
     (j) % GEMM_LVN)

/* LDS_N(n)(d, p): copies N floats (1, 2 or 4) from local memory at P,
 * N-aligned, to the private array D in one access. */
#define LDS_1(d, p) ((d)[0] = (p)[0])
#define LDS_2(d, p)                                                      \
    do {                                                                 \
        const float2 v_ = *(const __local float2 *)(p);                  \
        (d)[0] = v_.s0;                                                  \
        (d)[1] = v_.s1;                                                  \
    } while (0)
#define LDS_4(d, p)                                                      \
    do {                                                                 \
        const float4 v_ = *(const __local float4 *)(p);                  \
        (d)[0] = v_.s0;                                                  \
        (d)[1] = v_.s1;                                                  \
        (d)[2] = v_.s2;                                                  \
        (d)[3] = v_.s3;                                                  \
    } while (0)
#define LDS_CAT(n) LDS_##n
#define LDS_N(n) LDS_CAT(n)

/* This work-item's place (tm, tn) in the work-group's grid of
 * GEMM_THREADS_M x GEMM_THREADS_N, from its flat local id LID. With
 * GEMM_WARP_N each warp (32 consecutive ids) is a (32 / GEMM_WARP_N) x
 * GEMM_WARP_N block of work-items, so its local reads touch few distinct
 * addresses. */
inline void gemm_place(const int lid, int *tm, int *tn)
{
#if GEMM_WARP_N > 0 && GEMM_WARP_N != GEMM_THREADS_N
    *tn = (lid / 32) % (GEMM_THREADS_N / GEMM_WARP_N) * GEMM_WARP_N +
          lid % GEMM_WARP_N;
    *tm = (lid / 32) / (GEMM_THREADS_N / GEMM_WARP_N) *
              (32 / GEMM_WARP_N) +
          lid % 32 / GEMM_WARP_N;
#else
    (void)lid;
    *tn = get_local_id(0);
    *tm = get_local_id(1);
#endif
}

inline void gemm_zero(float acc[GEMM_WORK_M][GEMM_WORK_N])
{
#pragma unroll
    for (int i = 0; i < GEMM_WORK_M; i++) {
#pragma unroll
        for (int j = 0; j < GEMM_WORK_N; j++) {
            acc[i][j] = 0.0f;
        }
    }
}

/* This work-item's GEMM_WORK_M values of k step K of the A-side tile AP
 * (already offset to its rows, tm * GEMM_LVM), GEMM_LVM to a read. */
inline void gemm_read_a(float av[GEMM_WORK_M], const __local float *ap,
                        const int k)
{
#pragma unroll
    for (int g = 0; g < GEMM_WORK_M / GEMM_LVM; g++) {
        LDS_N(GEMM_LVM)(av + g * GEMM_LVM,
                        ap + k * GEMM_LDA + g * GEMM_THREADS_M * GEMM_LVM);
    }
}

/* acc += the N k-steps' outer products of the A-side tile AP (already
 * offset to this work-item's rows, tm * GEMM_LVM) and the B-side tile BP
 * (offset to its columns). N <= GEMM_TILE_K is a constant at each call;
 * the loop runs to GEMM_TILE_K so that it unrolls before inlining. */
inline void gemm_mac(float acc[GEMM_WORK_M][GEMM_WORK_N],
                     const __local float *ap, const __local float *bp,
                     const int n)
{
#pragma unroll
    for (int k = 0; k < GEMM_TILE_K; k++) {
        if (k < n) {
            float av[GEMM_WORK_M], bv[GEMM_WORK_N];
            gemm_read_a(av, ap, k);
#pragma unroll
            for (int g = 0; g < GEMM_WORK_N / GEMM_LVN; g++) {
                LDS_N(GEMM_LVN)(bv + g * GEMM_LVN,
                                bp + k * GEMM_LDB +
                                    g * GEMM_THREADS_N * GEMM_LVN);
            }
#pragma unroll
            for (int i = 0; i < GEMM_WORK_M; i++) {
#pragma unroll
                for (int j = 0; j < GEMM_WORK_N; j++) {
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
                }
            }
        }
    }
}

/* ---- Operand tiles from global memory ----
 *
 * Loads are VW wide (1, 2 or 4, a constant at each call, at most
 * GEMM_VEC) into float4 registers, the unused lanes folding away; each
 * work-item takes every GEMM_THREADS-th vector (or element) of a tile.
 * Parameters:
 *   GEMM_N      the output's columns
 *   GEMM_VEC    the widest load */
#if !defined(GEMM_N) || !defined(GEMM_VEC)
#error "gemm_simt.cl: the kernel must set GEMM_N and GEMM_VEC"
#endif

/* VW elements at P[I] as a float4, zero in the lanes past VW. */
inline float4 gemm_load_vw(const __global storage_t *p, size_t i,
                           const int vw)
{
    if (vw == 4) {
        return load4(p, i);
    }
    if (vw == 2) {
        return (float4)(load2(p, i), 0.0f, 0.0f);
    }
    return (float4)(load1(p, i), 0.0f, 0.0f, 0.0f);
}

/* The first VW lanes of V at P (local memory, VW-aligned). */
inline void gemm_stash_vw(__local float *p, const float4 v, const int vw)
{
    if (vw == 4) {
        vstore4(v, 0, p);
    } else if (vw == 2) {
        vstore2(v.s01, 0, p);
    } else {
        *p = v.s0;
    }
}

#define GEMM_LANE(v, c)                                                  \
    ((c) == 0 ? (v).s0 : (c) == 1 ? (v).s1 : (c) == 2 ? (v).s2 : (v).s3)

/* Vector V of a B-side tile read VW wide along its GEMM_TILE_N columns:
 * its row (k step) in the tile, returned, and in *COL its column from
 * COL0 in an operand whose rows are LD long; where the output's columns
 * end inside the tile, at most the row's last vector (the columns past
 * the output's are never stored). GEMM_B_SLOT: its place in the tile in
 * local memory, from BS. */
inline int gemm_b_at(const int v, const int vw, const int col0,
                     const int ld, int *col)
{
    *col = col0 + v % (GEMM_TILE_N / vw) * vw;
#if GEMM_N % GEMM_TILE_N != 0
    *col = min(*col, ld - vw);
#else
    (void)ld;
#endif
    return v / (GEMM_TILE_N / vw);
}
#define GEMM_B_SLOT(bs, v, vw)                                           \
    ((bs) + (v) / (GEMM_TILE_N / (vw)) * GEMM_LDB +                      \
     (v) % (GEMM_TILE_N / (vw)) * (vw))

/* ---- The first stretch of the reduction ----
 *
 * For a kernel that stages a side of the product from global memory
 * (GEMM_STAGE_A, GEMM_STAGE_B: 1), k step by k step through registers
 * (the next step's loads in flight while this step's tiles multiply):
 * the A side from a row-major operand whose k runs along its rows (X,
 * dY), stored k-major (transposed) for the inner product; the B side
 * from an operand whose rows are k steps and whose columns run along the
 * output's (W, W^T). The registers are float4s, as many as the narrowest
 * loads (GEMM_VEC) need, the unused loads folding away. Parameter:
 *   GEMM_K      the stretch's length
 *
 * The stretch's end, where GEMM_K is no multiple of GEMM_TILE_K, three
 * ways, a constant K_END at each call of the kernel's loop, from which
 * EDGE and CLAMP follow at each load. Guarded (GEMM_K_GUARD): the loads
 * of a step with EDGE test k and leave zeros (a kernel sets EDGE on the
 * last step only, or on every one). Clamped (GEMM_K_CLAMP, CLAMP): no
 * load is guarded; past the end, the A side's loads read the row's last
 * vector and the B side's its last row, and the stash stores zeros in
 * their place. Whole (GEMM_K_WHOLE): the operands hold zeros up to a
 * whole step (copies padded for it), so no load tests or clamps. */
#if !defined(GEMM_STAGE_A) || !defined(GEMM_STAGE_B)
#error "gemm_simt.cl: the kernel must set GEMM_STAGE_A and GEMM_STAGE_B"
#endif
#if (GEMM_STAGE_A || GEMM_STAGE_B) && !defined(GEMM_K)
#error "gemm_simt.cl: staged tiles need GEMM_K"
#endif

#if GEMM_STAGE_A || GEMM_STAGE_B
#define GEMM_A_VECS(vw) (GEMM_TILE_M * GEMM_TILE_K / (vw))
#define GEMM_A_LOADS(vw) CEIL_DIV(GEMM_A_VECS(vw), GEMM_THREADS)
#define GEMM_B_VECS(vw) (GEMM_TILE_K * GEMM_TILE_N / (vw))
#define GEMM_B_LOADS(vw) CEIL_DIV(GEMM_B_VECS(vw), GEMM_THREADS)

#define GEMM_K_GUARD 0
#define GEMM_K_CLAMP 1
#define GEMM_K_WHOLE 2
#if GEMM_K % GEMM_TILE_K != 0
#define GEMM_K_LIVE(edge, k) (!(edge) || (k) < GEMM_K)
#define GEMM_K_IN(clamp, k, vw)                                          \
    ((clamp) ? min((k), (GEMM_K - 1) / (vw) * (vw)) : (k))
#define GEMM_K_ROW_IN(clamp, k) ((clamp) ? min((k), GEMM_K - 1) : (k))
#define GEMM_K_PAST(clamp, k) ((clamp) && (k) >= GEMM_K)
#else
#define GEMM_K_LIVE(edge, k) 1
#define GEMM_K_IN(clamp, k, vw) (k)
#define GEMM_K_ROW_IN(clamp, k) (k)
#define GEMM_K_PAST(clamp, k) 0
#endif
#endif

#if GEMM_STAGE_A
/* Global -> registers: this work-item's share of the A-side tile at
 * (row0, k0) of P, whose rows lie LD elements apart; rows past the end
 * repeat the last row (their results are never stored), k past the end
 * reads as zero (EDGE) or as the row's last vector (CLAMP). */
inline void gemm_fetch_a(float4 ar[GEMM_A_LOADS(GEMM_VEC)],
                         const __global storage_t *p, const int ld,
                         const int vw, const int rows, const int row0,
                         const int k0, const int lid, const int edge,
                         const int clamp)
{
#pragma unroll
    for (int l = 0; l < GEMM_A_LOADS(GEMM_VEC); l++) {
        const int v = lid + l * GEMM_THREADS;
        const int r = v / (GEMM_TILE_K / vw);
        const int k = k0 + v % (GEMM_TILE_K / vw) * vw;
        const int row = min(row0 + r, rows - 1);
        if (l < GEMM_A_LOADS(vw)) {
            ar[l] = (float4)0.0f;
            if ((GEMM_A_VECS(vw) % GEMM_THREADS == 0 ||
                 v < GEMM_A_VECS(vw)) &&
                GEMM_K_LIVE(edge, k)) {
                ar[l] = gemm_load_vw(p + (size_t)row * ld,
                                     GEMM_K_IN(clamp, k, vw), vw);
            }
        }
    }
}

/* Registers -> local: the A-side tile at K0 transposed to k-major, so
 * that the inner product reads a work-item's rows as vectors; with
 * CLAMP, zeros past the end. */
inline void gemm_stash_a(__local float *as,
                         const float4 ar[GEMM_A_LOADS(GEMM_VEC)],
                         const int vw, const int k0, const int lid,
                         const int clamp)
{
#pragma unroll
    for (int l = 0; l < GEMM_A_LOADS(GEMM_VEC); l++) {
        const int v = lid + l * GEMM_THREADS;
        const int r = v / (GEMM_TILE_K / vw);
        const int kk = v % (GEMM_TILE_K / vw) * vw;
        if (l < GEMM_A_LOADS(vw) &&
            (GEMM_A_VECS(vw) % GEMM_THREADS == 0 || v < GEMM_A_VECS(vw))) {
            const int past = GEMM_K_PAST(clamp, k0 + kk);
#pragma unroll
            for (int c = 0; c < 4; c++) {
                if (c < vw) {
                    as[(kk + c) * GEMM_LDA + r] =
                        past ? 0.0f : GEMM_LANE(ar[l], c);
                }
            }
        }
    }
}
#endif

#if GEMM_STAGE_B
/* Global -> registers: this work-item's share of the B-side tile at
 * (k0, col0) of P, whose rows (k steps) lie LD elements apart. Columns
 * past the output's repeat the last vector (never stored); k past the
 * end reads as zero (EDGE) or as the last row (CLAMP). */
inline void gemm_fetch_b(float4 br[GEMM_B_LOADS(GEMM_VEC)],
                         const __global storage_t *p, const int ld,
                         const int vw, const int col0, const int k0,
                         const int lid, const int edge, const int clamp)
{
#pragma unroll
    for (int l = 0; l < GEMM_B_LOADS(GEMM_VEC); l++) {
        const int v = lid + l * GEMM_THREADS;
        int col;
        const int k = k0 + gemm_b_at(v, vw, col0, ld, &col);
        if (l < GEMM_B_LOADS(vw)) {
            br[l] = (float4)0.0f;
            if ((GEMM_B_VECS(vw) % GEMM_THREADS == 0 ||
                 v < GEMM_B_VECS(vw)) &&
                GEMM_K_LIVE(edge, k)) {
                br[l] = gemm_load_vw(p + col,
                                     (size_t)GEMM_K_ROW_IN(clamp, k) * ld,
                                     vw);
            }
        }
    }
}

/* Global -> registers: the B-side tile at (k0, col0) of P stored by
 * columns, column n at n * LD with k along it (W as PyTorch keeps it,
 * weight_layout: out_in), VW wide along k, as gemm_fetch_a reads its
 * rows. Columns past the output's repeat the last one (never stored); k
 * past the end reads as zero (EDGE) or as the column's last vector
 * (CLAMP). */
inline void gemm_fetch_b_cols(float4 br[GEMM_B_LOADS(GEMM_VEC)],
                              const __global storage_t *p, const int ld,
                              const int vw, const int col0, const int k0,
                              const int lid, const int edge,
                              const int clamp)
{
#pragma unroll
    for (int l = 0; l < GEMM_B_LOADS(GEMM_VEC); l++) {
        const int v = lid + l * GEMM_THREADS;
        const int c = v / (GEMM_TILE_K / vw);
        const int k = k0 + v % (GEMM_TILE_K / vw) * vw;
#if GEMM_N % GEMM_TILE_N != 0
        const int col = min(col0 + c, GEMM_N - 1);
#else
        const int col = col0 + c;
#endif
        if (l < GEMM_B_LOADS(vw)) {
            br[l] = (float4)0.0f;
            if ((GEMM_B_VECS(vw) % GEMM_THREADS == 0 ||
                 v < GEMM_B_VECS(vw)) &&
                GEMM_K_LIVE(edge, k)) {
                br[l] = gemm_load_vw(p + (size_t)col * ld,
                                     GEMM_K_IN(clamp, k, vw), vw);
            }
        }
    }
}

/* Registers -> local: gemm_fetch_b_cols's tile transposed to k-major;
 * with CLAMP, zeros past the end. */
inline void gemm_stash_b_cols(__local float *bs,
                              const float4 br[GEMM_B_LOADS(GEMM_VEC)],
                              const int vw, const int k0, const int lid,
                              const int clamp)
{
#pragma unroll
    for (int l = 0; l < GEMM_B_LOADS(GEMM_VEC); l++) {
        const int v = lid + l * GEMM_THREADS;
        const int c = v / (GEMM_TILE_K / vw);
        const int kk = v % (GEMM_TILE_K / vw) * vw;
        if (l < GEMM_B_LOADS(vw) &&
            (GEMM_B_VECS(vw) % GEMM_THREADS == 0 || v < GEMM_B_VECS(vw))) {
            const int past = GEMM_K_PAST(clamp, k0 + kk);
#pragma unroll
            for (int e = 0; e < 4; e++) {
                if (e < vw) {
                    bs[(kk + e) * GEMM_LDB + c] =
                        past ? 0.0f : GEMM_LANE(br[l], e);
                }
            }
        }
    }
}

/* Registers -> local: the B-side tile as it came, k-major; with CLAMP,
 * zeros past the end. */
inline void gemm_stash_b(__local float *bs,
                         const float4 br[GEMM_B_LOADS(GEMM_VEC)],
                         const int vw, const int k0, const int lid,
                         const int clamp)
{
#pragma unroll
    for (int l = 0; l < GEMM_B_LOADS(GEMM_VEC); l++) {
        const int v = lid + l * GEMM_THREADS;
        if (l < GEMM_B_LOADS(vw) &&
            (GEMM_B_VECS(vw) % GEMM_THREADS == 0 || v < GEMM_B_VECS(vw))) {
            const int kk = v / (GEMM_TILE_N / vw);
            gemm_stash_vw(GEMM_B_SLOT(bs, v, vw),
                          GEMM_K_PAST(clamp, k0 + kk) ? (float4)0.0f : br[l],
                          vw);
        }
    }
}
#endif

/* ---- The rank-r stretch of the reduction ----
 *
 * The concatenated operands' last parts, GEMM_RANK long ([X | T] *
 * [W ; B]: T*B; [dY | G] * [W^T ; A^T]: G*A^T), GEMM_RANK_K of r a stage,
 * loaded straight into the local tiles the inner product reads (the
 * stretch is short: no registers in between); j past r reads as zero.
 * Parameters:
 *   GEMM_RANK        r
 *   GEMM_RANK_PARTS  the A side's elements are sums of as many float
 *                    partial sums, side by side in its rows (T from
 *                    lora_xa's slices of K), or 1 */
#if !defined(GEMM_RANK) || !defined(GEMM_RANK_PARTS)
#error "gemm_simt.cl: the kernel must set GEMM_RANK and GEMM_RANK_PARTS"
#endif
#define GEMM_RANK_K (GEMM_RANK < GEMM_TILE_K ? GEMM_RANK : GEMM_TILE_K)
#define GEMM_RANK_TILES CEIL_DIV(GEMM_RANK, GEMM_RANK_K)
#if GEMM_RANK % GEMM_RANK_K != 0
#define GEMM_RANK_LIVE(j) ((j) < GEMM_RANK)
#else
#define GEMM_RANK_LIVE(j) 1
#endif
#define GEMM_RANK_A_ELEMS (GEMM_TILE_M * GEMM_RANK_K)
#define GEMM_RANK_B_ELEMS (GEMM_TILE_N * GEMM_RANK_K)
#define GEMM_RANK_B_VECS(vw) (GEMM_RANK_K * GEMM_TILE_N / (vw))
#define GEMM_RANK_B_LOADS(vw) CEIL_DIV(GEMM_RANK_B_VECS(vw), GEMM_THREADS)

/* Element L of this work-item's share of a rank stage whose tile is
 * EXTENT (GEMM_TILE_M, GEMM_TILE_N) along the output by GEMM_RANK_K along
 * r, r fastest (neighbouring work-items on neighbouring j, element by
 * element: r need not be a multiple of a vector): 0 past the tile; else
 * 1, with *E its place along the output and *J along r from J0. In local
 * memory it goes k-major, to (*J - J0) * LD + *E. */
inline int gemm_rank_elem(const int l, const int lid, const int extent,
                          const int j0, int *e, int *j)
{
    const int v = lid + l * GEMM_THREADS;
    *e = v / GEMM_RANK_K;
    *j = j0 + v % GEMM_RANK_K;
    return extent * GEMM_RANK_K % GEMM_THREADS == 0 ||
           v < extent * GEMM_RANK_K;
}

/* The GEMM_RANK_PARTS partial sums GEMM_RANK apart at P[I], added. */
inline float gemm_rank_sum(const __global float *p, const size_t i)
{
    float sum = p[i];
#pragma unroll
    for (int q = 1; q < GEMM_RANK_PARTS; q++) {
        sum += p[i + q * GEMM_RANK];
    }
    return sum;
}

/* The A side's stage at J0, transposed to k-major, from P: float, rows x
 * GEMM_RANK_PARTS * GEMM_RANK (T's partial sums side by side, G), each
 * element the sum of its parts. Rows past the end repeat the last (their
 * results are never stored). */
inline void gemm_rank_a(__local float *as, const __global float *p,
                        const int rows, const int row0, const int j0,
                        const int lid)
{
#pragma unroll
    for (int l = 0; l < CEIL_DIV(GEMM_RANK_A_ELEMS, GEMM_THREADS); l++) {
        int r, j;
        if (gemm_rank_elem(l, lid, GEMM_TILE_M, j0, &r, &j)) {
            const int row = min(row0 + r, rows - 1);
            const size_t at =
                (size_t)row * (GEMM_RANK_PARTS * GEMM_RANK) + j;
            as[(j - j0) * GEMM_LDA + r] =
                GEMM_RANK_LIVE(j) ? gemm_rank_sum(p, at) : 0.0f;
        }
    }
}

/* The B side's stage at J0 from an operand stored row-major, r x N
 * (B), rows LD apart: VW wide along its columns (as gemm_fetch_b). */
inline void gemm_rank_b_rows(__local float *bs, const __global storage_t *p,
                             const int ld, const int vw, const int col0,
                             const int j0, const int lid)
{
#pragma unroll
    for (int l = 0; l < GEMM_RANK_B_LOADS(GEMM_VEC); l++) {
        const int v = lid + l * GEMM_THREADS;
        int col;
        const int j = j0 + gemm_b_at(v, vw, col0, ld, &col);
        if (l < GEMM_RANK_B_LOADS(vw) &&
            (GEMM_RANK_B_VECS(vw) % GEMM_THREADS == 0 ||
             v < GEMM_RANK_B_VECS(vw))) {
            gemm_stash_vw(GEMM_B_SLOT(bs, v, vw),
                          GEMM_RANK_LIVE(j)
                              ? gemm_load_vw(p + col, (size_t)j * ld, vw)
                              : (float4)0.0f,
                          vw);
        }
    }
}

/* The B side's stage at J0 from an operand stored column-major, N x r
 * (A, read as A^T), columns LD apart. Columns past the output's repeat
 * its last (never stored). */
inline void gemm_rank_b_cols(__local float *bs, const __global storage_t *p,
                             const int ld, const int col0, const int j0,
                             const int lid)
{
#pragma unroll
    for (int l = 0; l < CEIL_DIV(GEMM_RANK_B_ELEMS, GEMM_THREADS); l++) {
        int c, j;
        if (gemm_rank_elem(l, lid, GEMM_TILE_N, j0, &c, &j)) {
            int col = col0 + c;
#if GEMM_N % GEMM_TILE_N != 0
            col = min(col, GEMM_N - 1);
#endif
            bs[(j - j0) * GEMM_LDB + c] =
                GEMM_RANK_LIVE(j) ? load1(p, (size_t)col * ld + j) : 0.0f;
        }
    }
}

/* ---- The epilogue ----
 *
 * This work-item's acc into the output's tile at (row0, col0): its rows
 * below ROWS and columns below GEMM_N of a row-major output GEMM_N wide,
 * each group of GEMM_LVN columns in pieces. gemm_store: into OUT, in
 * storage_t; gemm_store_part: into PART, float, GEMM_SW wide, partial
 * sums of a slice of the reduction that a kernel adds up after. Each
 * walks its own loops, which unroll before inlining as they are.
 * Parameters:
 *   GEMM_OUT_ADD    1: OUT += acc; 0: OUT = acc
 *   GEMM_OUT_FIXED  1: OUT in pieces of GEMM_SW, each one access;
 *                   0: in pieces of SW (1, 2 or 4, dividing GEMM_N), a
 *                   constant at each call, one access for 4 and element
 *                   by element below (lora_main: lora_main_padded writes
 *                   Y at Y's own alignment; the narrow stores as they
 *                   have always been) */
#if !defined(GEMM_OUT_ADD) || !defined(GEMM_OUT_FIXED)
#error "gemm_simt.cl: the kernel must set GEMM_OUT_ADD and GEMM_OUT_FIXED"
#endif
/* The widest store: a group of GEMM_LVN columns in GEMM_VEC pieces. */
#define GEMM_SW (GEMM_VEC < GEMM_LVN ? GEMM_VEC : GEMM_LVN)
/* The width of OUT's pieces for a given SW, and the step of the walk. */
#if GEMM_OUT_FIXED
#define GEMM_OUT_W(sw) GEMM_SW
#define GEMM_OUT_STEP GEMM_SW
#else
#define GEMM_OUT_W(sw) (sw)
#define GEMM_OUT_STEP 1
#endif
#if GEMM_N % GEMM_TILE_N != 0
#define GEMM_COL_LIVE(col) ((col) < GEMM_N)
#else
#define GEMM_COL_LIVE(col) 1
#endif

/* A piece of private V to OUT[I] (I a multiple of its width). */
inline void gemm_put(__global storage_t *out, size_t i, const float *v,
                     const int sw)
{
    if (GEMM_OUT_W(sw) == 4) {
        float4 s = (float4)(v[0], v[1], v[2], v[3]);
#if GEMM_OUT_ADD
        s += load4(out, i);
#endif
        store4(out, i, s);
#if GEMM_OUT_FIXED
    } else if (GEMM_OUT_W(sw) == 2) {
        float2 s = (float2)(v[0], v[1]);
#if GEMM_OUT_ADD
        s += load2(out, i);
#endif
        store2(out, i, s);
#endif
    } else {
#pragma unroll
        for (int c = 0; c < 4; c++) {
            if (c < GEMM_OUT_W(sw)) {
#if GEMM_OUT_ADD
                store1(out, i + c, v[c] + load1(out, i + c));
#else
                store1(out, i + c, v[c]);
#endif
            }
        }
    }
}

inline void gemm_store(__global storage_t *out, const int sw,
                       float acc[GEMM_WORK_M][GEMM_WORK_N], const int tm,
                       const int tn, const int rows, const int row0,
                       const int col0)
{
#pragma unroll
    for (int i = 0; i < GEMM_WORK_M; i++) {
        const int row = row0 + GEMM_ROW_OF(i);
        if (row < rows) {
            __global storage_t *o = out + (size_t)row * GEMM_N;
#pragma unroll
            for (int j = 0; j < GEMM_WORK_N; j += GEMM_OUT_STEP) {
                const int col = col0 + GEMM_COL_OF(j);
                if (GEMM_COL_LIVE(col) && j % GEMM_OUT_W(sw) == 0) {
                    gemm_put(o, col, &acc[i][j], sw);
                }
            }
        }
    }
}

/* GEMM_SW floats of private V to P, float (GEMM_SW-aligned). */
inline void gemm_put_part(__global float *p, const float *v)
{
#if GEMM_SW == 4
    *(__global float4 *)p = (float4)(v[0], v[1], v[2], v[3]);
#elif GEMM_SW == 2
    *(__global float2 *)p = (float2)(v[0], v[1]);
#else
    *p = v[0];
#endif
}

inline void gemm_store_part(__global float *part,
                            float acc[GEMM_WORK_M][GEMM_WORK_N],
                            const int tm, const int tn, const int rows,
                            const int row0, const int col0)
{
#pragma unroll
    for (int i = 0; i < GEMM_WORK_M; i++) {
        const int row = row0 + GEMM_ROW_OF(i);
        if (row < rows) {
            __global float *p = part + (size_t)row * GEMM_N;
#pragma unroll
            for (int j = 0; j < GEMM_WORK_N; j += GEMM_SW) {
                const int col = col0 + GEMM_COL_OF(j);
                if (GEMM_COL_LIVE(col)) {
                    gemm_put_part(p + col, &acc[i][j]);
                }
            }
        }
    }
}
