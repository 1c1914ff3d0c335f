/* gemm_simt.cl - the register-tiled core of the GEMMs that run on plain
 * work-items: lora_forward's [X | T] * [W ; B] (main_tiles.cl) and
 * lora_backward's [dY | G] * [W^T ; A^T] (lora_bwd_dx.cl). A work-group
 * owns GEMM_TILE_M x GEMM_TILE_N of the output; each work-item keeps
 * GEMM_WORK_M x GEMM_WORK_N of them in registers and adds the outer
 * products of the two operand tiles its kernel stages in local memory,
 * both k-major: the A side (rows of the output) GEMM_LDA floats a k step,
 * the B side (columns) GEMM_LDB.
 *
 * Parameters, which the including kernel sets from its plan's knobs:
 *   GEMM_TILE_M, GEMM_TILE_N  rows, columns of the output per work-group
 *   GEMM_TILE_K               reduction step staged through local memory
 *   GEMM_WORK_M, GEMM_WORK_N  rows, columns per work-item (registers)
 *   GEMM_PAD                  floats of padding per local-memory row
 *   GEMM_WARP_N               work-items along N within each warp of 32
 *                             consecutive ones; 0: GEMM_THREADS_N
 *                             (row-major)
 * Work-group: (GEMM_THREADS_N, GEMM_THREADS_M). */
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
#pragma unroll
            for (int g = 0; g < GEMM_WORK_M / GEMM_LVM; g++) {
                LDS_N(GEMM_LVM)(av + g * GEMM_LVM,
                                ap + k * GEMM_LDA +
                                    g * GEMM_THREADS_M * GEMM_LVM);
            }
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
 * For a kernel that stages a side of the product from global memory
 * (GEMM_STAGE_A, GEMM_STAGE_B: 1), k step by k step: the A side from a
 * row-major operand whose k runs along its rows (X, dY), stored k-major
 * (transposed) for the inner product; the B side from an operand whose
 * rows are k steps and whose columns run along the output's (W, W^T).
 * Loads are VW wide (1, 2 or 4, a constant at each call, at most
 * GEMM_VEC); each work-item takes every GEMM_THREADS-th vector into
 * float4 registers, as many as the narrowest loads (GEMM_VEC) need, the
 * unused lanes and loads folding away. Further parameters:
 *   GEMM_K      the length of the reduction
 *   GEMM_N      the output's columns
 *   GEMM_VEC    the widest load
 *
 * The reduction's end, where GEMM_K is no multiple of GEMM_TILE_K, three
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
#if (GEMM_STAGE_A || GEMM_STAGE_B) &&                                    \
    (!defined(GEMM_K) || !defined(GEMM_N) || !defined(GEMM_VEC))
#error "gemm_simt.cl: staged tiles need GEMM_K, GEMM_N and GEMM_VEC"
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
        const int k = k0 + v / (GEMM_TILE_N / vw);
        int col = col0 + v % (GEMM_TILE_N / vw) * vw;
#if GEMM_N % GEMM_TILE_N != 0
        col = min(col, ld - vw);
#endif
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
            gemm_stash_vw(bs + kk * GEMM_LDB + v % (GEMM_TILE_N / vw) * vw,
                          GEMM_K_PAST(clamp, k0 + kk) ? (float4)0.0f : br[l],
                          vw);
        }
    }
}
#endif
