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
