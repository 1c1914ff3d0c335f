#include "specl_common.cl"

/* lora_forward.cl - Y (+)= X*W + SCALE*(X*A)*B as tiled OpenCL C kernels.
 *
 * X is rows x K, W is K x N, A is K x r, B is r x N, Y is rows x N, all
 * row-major in storage_t; arithmetic and accumulation are float. The LoRA
 * term is one more stretch of the reduction: with T = SCALE*X*A (rows x r),
 * Y = [X | T]*[W ; B], so base and adapter come out of one accumulator and
 * Y is written once.
 *
 * Kernels:
 *   lora_main    register-tiled GEMM: TILE_M x TILE_N of Y per work-group,
 *                WORK_M x WORK_N per work-item, K stepped by TILE_K through
 *                double-buffered local memory, then the r stretch.
 *                Local size (THREADS_N, THREADS_M).
 *   lora_xa      XA_INLINE 0, before lora_main or lora_expand: T =
 *                SCALE*X*A into a float scratch buffer; reads X once.
 *                Local size (XA_K, XA_M / XA_W), XA_M rows per work-group,
 *                XA_W per work-item; XA_SPLIT work-groups along dimension
 *                0 split K and write XA_SPLIT partial sums of T.
 *   lora_expand  HAS_BASE 0 after lora_xa: Y = T*B, EXPAND_ROWS rows per
 *                work-group, VEC columns per work-item. Local size
 *                (EXPAND_N, 1).
 *   lora_decode  rows <= DECODE_ROWS: each work-item owns VEC columns for
 *                every row, the reduction is split over DECODE_K work-items,
 *                so W is streamed once; T is computed alongside, in the
 *                same launch. Local size (DECODE_N, DECODE_K).
 *
 * Edges: rows is a run-time argument and always checked; the K, N and r
 * edges cost code only where the shape does not divide the tiles (#if on
 * the constants), so a shape that divides evenly has no guards.
 *
 * Shape, set by the generator:
 *   IN_FEATURES   K
 *   OUT_FEATURES  N
 *   RANK          r
 *   SCALE         float literal multiplying (X*A)*B
 *   HAS_BASE      1: Y includes X*W; 0: Y is the adapter term alone (no W)
 *   ACCUMULATE    1: Y += result; 0: Y = result
 *   XA_INLINE     1: lora_main computes X*A itself; 0: it reads T
 * Tuning knobs (defaults below):
 *   TILE_M, TILE_N  rows, columns of Y per work-group of lora_main
 *   TILE_K          K step staged through local memory
 *   WORK_M, WORK_N  rows, columns of Y per work-item (registers)
 *   VEC             width of global loads and stores: 1, 2 or 4; divides K
 *                   and N
 *   PAD             floats of padding per local-memory row
 *   XA_M, XA_K      lora_xa: rows per work-group, work-items along K
 *   XA_W            lora_xa: rows per work-item; divides XA_M
 *   XA_CHUNK        lora_xa: rows of A staged in local memory at once
 *   EXPAND_N        lora_expand: work-items per work-group
 *   EXPAND_ROWS     lora_expand: rows of Y per work-group
 *   WARP_N          lora_main: work-items along N within each group of 32
 *                   consecutive ones (a warp); 0: THREADS_N (row-major)
 *   DECODE_ROWS     most rows lora_decode handles; 0: no lora_decode
 *   DECODE_N        lora_decode: work-items along N, VEC columns each
 *   DECODE_K        lora_decode: work-items sharing one column's reduction
 * Storage (specl_common.cl): DTYPE_F32, DTYPE_F16 or DTYPE_BF16. */

/* Shape: defaults only so that the template builds on its own. */
#ifndef IN_FEATURES
#define IN_FEATURES 256
#endif
#ifndef OUT_FEATURES
#define OUT_FEATURES 256
#endif
#ifndef RANK
#define RANK 16
#endif
#ifndef SCALE
#define SCALE 2.0f
#endif
#ifndef HAS_BASE
#define HAS_BASE 1
#endif
#ifndef ACCUMULATE
#define ACCUMULATE 0
#endif
#ifndef XA_INLINE
#define XA_INLINE 0
#endif

/* Knobs. */
#ifndef TILE_M
#define TILE_M 128 /* rows of Y per work-group */
#endif
#ifndef TILE_N
#define TILE_N 128 /* columns of Y per work-group */
#endif
#ifndef TILE_K
#define TILE_K 8 /* K elements per local-memory stage */
#endif
#ifndef WORK_M
#define WORK_M 8 /* rows of Y per work-item */
#endif
#ifndef WORK_N
#define WORK_N 8 /* columns of Y per work-item */
#endif
#ifndef VEC
#define VEC 4 /* elements per global load or store */
#endif
#ifndef PAD
#define PAD 4 /* floats appended to each local-memory row */
#endif
#ifndef XA_M
#define XA_M 16 /* lora_xa: rows per work-group */
#endif
#ifndef XA_K
#define XA_K 16 /* lora_xa: work-items along K */
#endif
#ifndef XA_W
#define XA_W 4 /* lora_xa: rows per work-item */
#endif
#ifndef XA_CHUNK
#define XA_CHUNK 256 /* lora_xa: K rows of A staged in local memory at once */
#endif
#ifndef EXPAND_N
#define EXPAND_N 256 /* lora_expand: work-items along N */
#endif
#ifndef EXPAND_ROWS
#define EXPAND_ROWS 64 /* lora_expand: rows of Y per work-group */
#endif
#ifndef WARP_N
#define WARP_N 0 /* lora_main: work-items along N per warp; 0: plain */
#endif
#ifndef DECODE_ROWS
#define DECODE_ROWS 16 /* rows lora_decode handles at most */
#endif
#ifndef DECODE_N
#define DECODE_N 8 /* lora_decode: work-items along N */
#endif
#ifndef DECODE_K
#define DECODE_K 32 /* lora_decode: work-items along the reduction */
#endif

/* ---- Derived sizes ---- */

#define THREADS_M (TILE_M / WORK_M)
#define THREADS_N (TILE_N / WORK_N)
#define THREADS (THREADS_M * THREADS_N)
#define LDA (TILE_M + PAD) /* row stride of X and T tiles (k-major) */
#define LDB (TILE_N + PAD) /* row stride of W and B tiles */
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
#define K_TILES CEIL_DIV(IN_FEATURES, TILE_K)
#define RANK_K (RANK < TILE_K ? RANK : TILE_K) /* r elements per stage */
#define RANK_TILES CEIL_DIV(RANK, RANK_K)
#define RANK_CEIL (RANK_TILES * RANK_K)
/* Partial sums of T that lora_xa writes per row for lora_main and
 * lora_expand: one per XA_CHUNK of K. */
#define XA_SPLIT CEIL_DIV(IN_FEATURES, XA_CHUNK)

/* Local-memory read widths of the inner product. A work-item's WORK_M rows
 * are groups of LVM adjacent rows, the groups THREADS_M * LVM apart, so one
 * float4 read serves four rows and neighbouring work-items read neighbouring
 * addresses (no bank conflicts). Same for columns with LVN. */
#if WORK_M % 4 == 0 && PAD % 4 == 0
#define LVM 4
#elif WORK_M % 2 == 0 && PAD % 2 == 0
#define LVM 2
#else
#define LVM 1
#endif
#if WORK_N % 4 == 0 && PAD % 4 == 0
#define LVN 4
#elif WORK_N % 2 == 0 && PAD % 2 == 0
#define LVN 2
#else
#define LVN 1
#endif
/* Row (column) of the tile held in a work-item's i-th row (j-th column). */
#define ROW_OF(i) (((i) / LVM) * (THREADS_M * LVM) + tm * LVM + (i) % LVM)
#define COL_OF(j) (((j) / LVN) * (THREADS_N * LVN) + tn * LVN + (j) % LVN)
/* Width of the stores of Y: a column group of LVN, split to VEC. */
#define SVW (VEC < LVN ? VEC : LVN)

/* Tile loads: VEC-wide along K for X, along N for W and B; each work-item
 * takes every THREADS-th vector. */
#define X_VECS (TILE_M * TILE_K / VEC)
#define X_LOADS CEIL_DIV(X_VECS, THREADS)
#define W_VECS (TILE_K * TILE_N / VEC)
#define W_LOADS CEIL_DIV(W_VECS, THREADS)
#define B_VECS (RANK_K * TILE_N / VEC)
#define B_LOADS CEIL_DIV(B_VECS, THREADS)
#define T_ELEMS (TILE_M * RANK_K)
#define T_LOADS CEIL_DIV(T_ELEMS, THREADS)
/* Inline X*A: work-item (tm, tn) accumulates T for its WORK_M rows and
 * columns tn, tn + THREADS_N, ...; the A tile is AL_W wide, zero beyond r. */
#define XA_PER CEIL_DIV(RANK_CEIL, THREADS_N)
#define AL_W (XA_PER * THREADS_N)
#define A_ELEMS (TILE_K * AL_W)
#define A_LOADS CEIL_DIV(A_ELEMS, THREADS)

/* Local memory of lora_main, in floats. */
#define AS_SIZE (2 * TILE_K * LDA)
#if HAS_BASE
#define BS_SIZE (2 * TILE_K * LDB)
#else
#define BS_SIZE (RANK_K * LDB)
#endif

/* ---- Vectors of VEC elements ---- */

#if VEC == 4
typedef float4 vecf_t;
#define VEC_AT(v, c)                                                     \
    ((c) == 0 ? (v).s0 : (c) == 1 ? (v).s1 : (c) == 2 ? (v).s2 : (v).s3)
#define loadv load4
#define STASH_V(v, p) vstore4((v), 0, (p))
#elif VEC == 2
typedef float2 vecf_t;
#define VEC_AT(v, c) ((c) == 0 ? (v).s0 : (v).s1)
inline float2 loadv(const __global storage_t *p, size_t i)
{
    return (float2)(load1(p, i), load1(p, i + 1));
}
#define STASH_V(v, p) vstore2((v), 0, (p))
#elif VEC == 1
typedef float vecf_t;
#define VEC_AT(v, c) (v)
#define loadv load1
#define STASH_V(v, p) (*(p) = (v))
#else
#error "VEC must be 1, 2 or 4"
#endif

/* Copies N floats from local memory at P (N-aligned) to the private D. */
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
#define LDS_M LDS_N(LVM)
#define LDS_W LDS_N(LVN)

/* ---- lora_main ---- */

#if HAS_BASE || XA_INLINE
/* Stores (or adds, ACCUMULATE) SVW floats of private V at Y[I]; I is a
 * multiple of SVW. */
inline void put_y(__global storage_t *y, size_t i, const float *v)
{
#if SVW == 4
    float4 s = (float4)(v[0], v[1], v[2], v[3]);
#if ACCUMULATE
    s += load4(y, i);
#endif
    store4(y, i, s);
#else
#pragma unroll
    for (int c = 0; c < SVW; c++) {
#if ACCUMULATE
        store1(y, i + c, v[c] + load1(y, i + c));
#else
        store1(y, i + c, v[c]);
#endif
    }
#endif
}

/* acc += the N-step outer products of the local A-side tile AP (k-major,
 * stride LDA, already offset to this work-item's rows) and B-side tile BP
 * (stride LDB, offset to its columns). N <= TILE_K is a constant at each
 * call; the loop runs to TILE_K so that it unrolls before inlining. */
inline void mac_tile(float acc[WORK_M][WORK_N], const __local float *ap,
                     const __local float *bp, const int n)
{
#pragma unroll
    for (int k = 0; k < TILE_K; k++) {
        if (k < n) {
            float av[WORK_M], bv[WORK_N];
#pragma unroll
            for (int g = 0; g < WORK_M / LVM; g++) {
                LDS_M(av + g * LVM, ap + k * LDA + g * THREADS_M * LVM);
            }
#pragma unroll
            for (int g = 0; g < WORK_N / LVN; g++) {
                LDS_W(bv + g * LVN, bp + k * LDB + g * THREADS_N * LVN);
            }
#pragma unroll
            for (int i = 0; i < WORK_M; i++) {
#pragma unroll
                for (int j = 0; j < WORK_N; j++) {
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
                }
            }
        }
    }
}

/* Global -> registers: this work-item's share of the X tile at
 * (row0, k0); rows past the end repeat the last row (their results are
 * never stored), K past the end reads as zero. */
inline void fetch_x(vecf_t xr[X_LOADS], const __global storage_t *x,
                    const int rows, const int row0, const int k0,
                    const int lid)
{
#pragma unroll
    for (int l = 0; l < X_LOADS; l++) {
        const int v = lid + l * THREADS;
        const int r = v / (TILE_K / VEC);
        const int k = k0 + v % (TILE_K / VEC) * VEC;
        const int row = min(row0 + r, rows - 1);
        xr[l] = (vecf_t)0.0f;
#if X_VECS % THREADS != 0
        if (v < X_VECS)
#endif
#if IN_FEATURES % TILE_K != 0
        if (k < IN_FEATURES)
#endif
        {
            xr[l] = loadv(x + (size_t)row * IN_FEATURES, k);
        }
    }
}

/* Registers -> local: the X tile transposed to k-major, so that the inner
 * product reads a work-item's rows as vectors. */
inline void stash_x(__local float *as, const vecf_t xr[X_LOADS],
                    const int lid)
{
#pragma unroll
    for (int l = 0; l < X_LOADS; l++) {
        const int v = lid + l * THREADS;
        const int r = v / (TILE_K / VEC);
        const int kk = v % (TILE_K / VEC) * VEC;
#if X_VECS % THREADS != 0
        if (v < X_VECS)
#endif
        {
#pragma unroll
            for (int c = 0; c < VEC; c++) {
                as[(kk + c) * LDA + r] = VEC_AT(xr[l], c);
            }
        }
    }
}

#if HAS_BASE
/* Global -> registers: this work-item's share of the W tile at (k0, col0).
 * Columns past N repeat the last vector (never stored); K past the end
 * reads as zero. */
inline void fetch_w(vecf_t wr[W_LOADS], const __global storage_t *w,
                    const int col0, const int k0, const int lid)
{
#pragma unroll
    for (int l = 0; l < W_LOADS; l++) {
        const int v = lid + l * THREADS;
        const int k = k0 + v / (TILE_N / VEC);
        int col = col0 + v % (TILE_N / VEC) * VEC;
#if OUT_FEATURES % TILE_N != 0
        col = min(col, OUT_FEATURES - VEC);
#endif
        wr[l] = (vecf_t)0.0f;
#if W_VECS % THREADS != 0
        if (v < W_VECS)
#endif
#if IN_FEATURES % TILE_K != 0
        if (k < IN_FEATURES)
#endif
        {
            wr[l] = loadv(w + col, (size_t)k * OUT_FEATURES);
        }
    }
}

inline void stash_w(__local float *bs, const vecf_t wr[W_LOADS],
                    const int lid)
{
#pragma unroll
    for (int l = 0; l < W_LOADS; l++) {
        const int v = lid + l * THREADS;
#if W_VECS % THREADS != 0
        if (v < W_VECS)
#endif
        {
            STASH_V(wr[l], bs + v / (TILE_N / VEC) * LDB +
                               v % (TILE_N / VEC) * VEC);
        }
    }
}
#endif

#if XA_INLINE
/* Global -> registers: the A tile at k0, AL_W columns, zero past r or K. */
inline void fetch_a(float ar[A_LOADS], const __global storage_t *a,
                    const int k0, const int lid)
{
#pragma unroll
    for (int l = 0; l < A_LOADS; l++) {
        const int v = lid + l * THREADS;
        const int k = k0 + v / AL_W;
        const int j = v % AL_W;
        ar[l] = 0.0f;
#if A_ELEMS % THREADS != 0
        if (v < A_ELEMS)
#endif
#if AL_W != RANK
        if (j < RANK)
#endif
#if IN_FEATURES % TILE_K != 0
        if (k < IN_FEATURES)
#endif
        {
            ar[l] = load1(a, (size_t)k * RANK + j);
        }
    }
}

inline void stash_a(__local float *al, const float ar[A_LOADS],
                    const int lid)
{
#pragma unroll
    for (int l = 0; l < A_LOADS; l++) {
        const int v = lid + l * THREADS;
#if A_ELEMS % THREADS != 0
        if (v < A_ELEMS)
#endif
        {
            al[v] = ar[l];
        }
    }
}

/* tacc += the TILE_K outer products of this work-item's X rows (AP, as in
 * mac_tile) and its T columns of the A tile (AL, offset to tn). */
inline void mac_xa(float tacc[WORK_M][XA_PER], const __local float *ap,
                   const __local float *al)
{
#pragma unroll
    for (int k = 0; k < TILE_K; k++) {
        float av[WORK_M];
#pragma unroll
        for (int g = 0; g < WORK_M / LVM; g++) {
            LDS_M(av + g * LVM, ap + k * LDA + g * THREADS_M * LVM);
        }
#pragma unroll
        for (int q = 0; q < XA_PER; q++) {
            const float aq = al[k * AL_W + q * THREADS_N];
#pragma unroll
            for (int i = 0; i < WORK_M; i++) {
                tacc[i][q] = fma(av[i], aq, tacc[i][q]);
            }
        }
    }
}
#endif

__kernel __attribute__((reqd_work_group_size(THREADS_N, THREADS_M, 1)))
void lora_main(const int rows,
               const __global storage_t *restrict x,
#if HAS_BASE
               const __global storage_t *restrict w,
#endif
#if XA_INLINE
               const __global storage_t *restrict a,
#endif
               const __global storage_t *restrict b,
#if XA_INLINE
               __global storage_t *restrict y)
#else
               __global storage_t *restrict y,
               const __global float *restrict t)
#endif
{
    __local float as[AS_SIZE] __attribute__((aligned(16)));
    __local float bs[BS_SIZE] __attribute__((aligned(16)));
#if XA_INLINE
    __local float al[2 * A_ELEMS];
    __local float tl[RANK_CEIL * LDA] __attribute__((aligned(16)));
#endif
    const int lid = get_local_id(1) * THREADS_N + get_local_id(0);
#if WARP_N > 0 && WARP_N != THREADS_N
    /* Each warp (32 consecutive lid) is a (32 / WARP_N) x WARP_N block of
     * work-items, so its local reads touch few distinct addresses. */
    const int tn = (lid / 32) % (THREADS_N / WARP_N) * WARP_N + lid % WARP_N;
    const int tm = (lid / 32) / (THREADS_N / WARP_N) * (32 / WARP_N) +
                   lid % 32 / WARP_N;
#else
    const int tn = get_local_id(0);
    const int tm = get_local_id(1);
#endif
    const int col0 = get_group_id(0) * TILE_N;
    const int row0 = get_group_id(1) * TILE_M;

    float acc[WORK_M][WORK_N];
#pragma unroll
    for (int i = 0; i < WORK_M; i++) {
#pragma unroll
        for (int j = 0; j < WORK_N; j++) {
            acc[i][j] = 0.0f;
        }
    }

    /* The K stretch, software-pipelined: the next stage's tiles travel
     * from global memory into registers while this stage's are multiplied,
     * then go to the other half of local memory; one barrier per stage. */
#if XA_INLINE
    float tacc[WORK_M][XA_PER];
#pragma unroll
    for (int i = 0; i < WORK_M; i++) {
#pragma unroll
        for (int q = 0; q < XA_PER; q++) {
            tacc[i][q] = 0.0f;
        }
    }
    float ar[A_LOADS];
    fetch_a(ar, a, 0, lid);
    stash_a(al, ar, lid);
#endif
    vecf_t xr[X_LOADS];
    fetch_x(xr, x, rows, row0, 0, lid);
    stash_x(as, xr, lid);
#if HAS_BASE
    vecf_t wr[W_LOADS];
    fetch_w(wr, w, col0, 0, lid);
    stash_w(bs, wr, lid);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int kt = 0; kt < K_TILES; kt++) {
        const int cur = kt & 1;
        const int more = kt + 1 < K_TILES;
        if (more) {
            fetch_x(xr, x, rows, row0, (kt + 1) * TILE_K, lid);
#if HAS_BASE
            fetch_w(wr, w, col0, (kt + 1) * TILE_K, lid);
#endif
#if XA_INLINE
            fetch_a(ar, a, (kt + 1) * TILE_K, lid);
#endif
        }
#if HAS_BASE
        mac_tile(acc, as + cur * (TILE_K * LDA) + tm * LVM,
                 bs + cur * (TILE_K * LDB) + tn * LVN, TILE_K);
#endif
#if XA_INLINE
        mac_xa(tacc, as + cur * (TILE_K * LDA) + tm * LVM,
               al + cur * A_ELEMS + tn);
#endif
        if (more) {
            stash_x(as + (cur ^ 1) * (TILE_K * LDA), xr, lid);
#if HAS_BASE
            stash_w(bs + (cur ^ 1) * (TILE_K * LDB), wr, lid);
#endif
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
        const int j = tn + q * THREADS_N;
#if AL_W > RANK_CEIL
        if (j < RANK_CEIL)
#endif
        {
#pragma unroll
            for (int i = 0; i < WORK_M; i++) {
                tl[j * LDA + ROW_OF(i)] = SCALE * tacc[i][q];
            }
        }
    }
#endif

    /* The r stretch: acc += T*B, RANK_K rows of B per stage. */
    for (int rt = 0; rt < RANK_TILES; rt++) {
        const int j0 = rt * RANK_K;
#pragma unroll
        for (int l = 0; l < B_LOADS; l++) {
            const int v = lid + l * THREADS;
            const int j = j0 + v / (TILE_N / VEC);
            int col = col0 + v % (TILE_N / VEC) * VEC;
#if OUT_FEATURES % TILE_N != 0
            col = min(col, OUT_FEATURES - VEC);
#endif
#if B_VECS % THREADS != 0
            if (v < B_VECS)
#endif
            {
                vecf_t bv = (vecf_t)0.0f;
#if RANK % RANK_K != 0
                if (j < RANK)
#endif
                {
                    bv = loadv(b + col, (size_t)j * OUT_FEATURES);
                }
                STASH_V(bv, bs + v / (TILE_N / VEC) * LDB +
                                v % (TILE_N / VEC) * VEC);
            }
        }
#if !XA_INLINE
#pragma unroll
        for (int l = 0; l < T_LOADS; l++) {
            const int v = lid + l * THREADS;
            const int r = v / RANK_K;
            const int j = j0 + v % RANK_K;
            const int row = min(row0 + r, rows - 1);
#if T_ELEMS % THREADS != 0
            if (v < T_ELEMS)
#endif
            {
                float tv = 0.0f;
#if RANK % RANK_K != 0
                if (j < RANK)
#endif
                {
                    /* the XA_SPLIT partial sums from lora_xa */
                    const __global float *tp =
                        t + (size_t)row * (XA_SPLIT * RANK) + j;
#pragma unroll
                    for (int p = 0; p < XA_SPLIT; p++) {
                        tv += tp[p * RANK];
                    }
                }
                as[v % RANK_K * LDA + r] = tv;
            }
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
#if XA_INLINE
        mac_tile(acc, tl + j0 * LDA + tm * LVM, bs + tn * LVN, RANK_K);
#else
        mac_tile(acc, as + tm * LVM, bs + tn * LVN, RANK_K);
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* Y = acc, or Y += acc; each group of LVN columns in SVW-wide stores. */
#pragma unroll
    for (int i = 0; i < WORK_M; i++) {
        const int row = row0 + ROW_OF(i);
        if (row < rows) {
            __global storage_t *yr = y + (size_t)row * OUT_FEATURES;
#pragma unroll
            for (int j = 0; j < WORK_N; j += SVW) {
                const int col = col0 + COL_OF(j);
#if OUT_FEATURES % TILE_N != 0
                if (col < OUT_FEATURES)
#endif
                {
                    put_y(yr, col, &acc[i][j]);
                }
            }
        }
    }
}
#endif

/* ---- lora_xa and lora_expand ---- */

/* lora_xa runs before lora_main or lora_expand. */
#if !XA_INLINE
/* Work-item (tk, tm) of a (XA_K, XA_T) work-group owns rows
 * row0 + i * XA_T + tm (i < XA_W) of an XA_M-row block; the XA_K partial
 * sums of each (row, j) meet in local memory at the end, one round per i. */
#define XA_T (XA_M / XA_W)
#define XA_THREADS (XA_K * XA_T)
#if RANK % 4 == 0
#define AV 4 /* A and T read from local memory as float4 */
#else
#define AV 1
#endif

/* Round I of the reduction: parks acc[i] in RED; after it, output
 * o < XA_T * RANK (row row0 + I * XA_T + o / RANK, column o % RANK) is
 * xa_sum(red, o). The caller adds a barrier before the next round. */
inline void xa_park(__local float *red, const float acc[XA_W][RANK],
                    const int i, const int tm, const int tk)
{
#pragma unroll
    for (int w = 0; w < XA_W; w++) {
        if (w == i) {
#pragma unroll
            for (int j = 0; j < RANK; j++) {
                red[(tm * RANK + j) * (XA_K + 1) + tk] = acc[w][j];
            }
        }
    }
}

inline float xa_sum(const __local float *red, const int o)
{
    float sum = 0.0f;
#pragma unroll
    for (int p = 0; p < XA_K; p++) {
        sum += red[o * (XA_K + 1) + p];
    }
    return sum;
}

/* T = SCALE * X*A into the float scratch. Work-group (s, b) takes rows
 * b * XA_M .. + XA_M and stretch s of S = get_num_groups(0) equal
 * stretches of K, and writes its partial sum of T: T[m][s][j] at
 * t[(m * S + s) * RANK + j]. A stretch is at most XA_CHUNK long (the
 * host launches S = XA_SPLIT = CEIL_DIV(K, XA_CHUNK) work-groups along K;
 * one stretch per work-group keeps the kernel within 128 registers on the
 * H100). Its rows of A are staged in local memory once, so the loop
 * over K that follows has no barrier: work-item (tk, tm)
 * loads X VEC-wide at k = (step * XA_K + tk) * VEC, coalesced along K,
 * and each A value it reads serves XA_W rows. Each VEC rows of A in
 * local memory are followed by XA_APAD floats, so that the XA_K
 * work-items of a warp read distinct banks. */
#if AV == 4
#define XA_APAD 4
#else
#define XA_APAD 1
#endif
#define XA_AGROUP (VEC * RANK + XA_APAD)
#define XA_AT(kk, j) ((kk) / VEC * XA_AGROUP + (kk) % VEC * RANK + (j))
#define XA_STEPS CEIL_DIV(XA_CHUNK, XA_K * VEC)
#define XA_ASIZE (CEIL_DIV(XA_CHUNK, VEC) * XA_AGROUP)
#define XA_RSIZE (XA_T * RANK * (XA_K + 1))
#define XA_LOCAL (XA_ASIZE > XA_RSIZE ? XA_ASIZE : XA_RSIZE)

/* Global -> local: rows K0 .. K0 + N of A, N a multiple of VEC. */
inline void xa_stage(__local float *as, const __global storage_t *a,
                     const int k0, const int n, const int lid)
{
#if AV == 4
    for (int v = lid; v < n * (RANK / 4); v += XA_THREADS) {
        const int kk = v / (RANK / 4);
        vstore4(load4(a, (size_t)k0 * RANK + (size_t)v * 4), 0,
                as + XA_AT(kk, v % (RANK / 4) * 4));
    }
#else
    for (int v = lid; v < n * RANK; v += XA_THREADS) {
        as[XA_AT(v / RANK, v % RANK)] = load1(a, (size_t)k0 * RANK + v);
    }
#endif
}

/* f32 X through vload4: with load4's float4 pointer the H100 compiler
 * spends 164 registers on lora_xa instead of 124 (half the work-groups
 * per compute unit, 1.2x slower). */
#if defined(DTYPE_F32) && VEC == 4
#define XA_LOADV(p, i) vload4(0, (p) + (i))
#else
#define XA_LOADV(p, i) loadv((p), (i))
#endif

/* Global -> registers: XR[i][K0 + KK ..] for each of the XA_W rows, if
 * KK < N (else XV is left as it is). */
inline void xa_fetch(vecf_t xv[XA_W], const __global storage_t *xr[XA_W],
                     const int k0, const int kk, const int n)
{
    if (kk < n) {
#pragma unroll
        for (int i = 0; i < XA_W; i++) {
            xv[i] = XA_LOADV(xr[i], k0 + kk);
        }
    }
}

/* acc[i][j] += this work-item's share of XR[i][K0 .. K0 + N) * A, from
 * the N rows of A staged at AS. XN holds the first step's X on entry;
 * each step loads the next step's X before it computes, so that a load
 * is always in flight. */
inline void xa_stream(float acc[XA_W][RANK], const __local float *as,
                      const __global storage_t *xr[XA_W], vecf_t xn[XA_W],
                      const int k0, const int n, const int tk)
{
    for (int step = 0; step < XA_STEPS; step++) {
        const int kk = (step * XA_K + tk) * VEC;
        vecf_t xv[XA_W];
#pragma unroll
        for (int i = 0; i < XA_W; i++) {
            xv[i] = xn[i];
        }
        xa_fetch(xn, xr, k0, kk + XA_K * VEC, n);
        if (kk < n) {
#pragma unroll
            for (int c = 0; c < VEC; c++) {
#if AV == 4
#pragma unroll
                for (int j = 0; j < RANK; j += 4) {
                    const float4 av = vload4(0, as + XA_AT(kk + c, j));
#pragma unroll
                    for (int i = 0; i < XA_W; i++) {
                        const float xc = VEC_AT(xv[i], c);
                        acc[i][j] = fma(xc, av.s0, acc[i][j]);
                        acc[i][j + 1] = fma(xc, av.s1, acc[i][j + 1]);
                        acc[i][j + 2] = fma(xc, av.s2, acc[i][j + 2]);
                        acc[i][j + 3] = fma(xc, av.s3, acc[i][j + 3]);
                    }
                }
#else
#pragma unroll
                for (int j = 0; j < RANK; j++) {
                    const float av = as[XA_AT(kk + c, j)];
#pragma unroll
                    for (int i = 0; i < XA_W; i++) {
                        acc[i][j] = fma(VEC_AT(xv[i], c), av, acc[i][j]);
                    }
                }
#endif
            }
        }
    }
}

__kernel __attribute__((reqd_work_group_size(XA_K, XA_T, 1)))
void lora_xa(const int rows, const __global storage_t *restrict x,
             const __global storage_t *restrict a,
             __global float *restrict t)
{
    __local float as[XA_LOCAL] __attribute__((aligned(16)));
    const int tk = get_local_id(0);
    const int tm = get_local_id(1);
    const int lid = tm * XA_K + tk;
    const int nsplit = get_num_groups(0);
    const int split = get_group_id(0);
    const int row0 = get_group_id(1) * XA_M;
    /* This work-group's stretch of K, in whole vectors. */
    const int per = CEIL_DIV(IN_FEATURES / VEC, nsplit) * VEC;
    const int kbeg = min(split * per, IN_FEATURES);
    const int kend = min(kbeg + per, IN_FEATURES);

    const int n = kend - kbeg; /* <= XA_CHUNK */

    float acc[XA_W][RANK];
    const __global storage_t *xr[XA_W];
#pragma unroll
    for (int i = 0; i < XA_W; i++) {
        /* rows past the end repeat the last row (never stored) */
        xr[i] = x + (size_t)min(row0 + i * XA_T + tm, rows - 1) * IN_FEATURES;
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            acc[i][j] = 0.0f;
        }
    }
    /* the first X loads travel while A is staged */
    vecf_t xn[XA_W];
    xa_fetch(xn, xr, kbeg, tk * VEC, n);
    xa_stage(as, a, kbeg, n, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    xa_stream(acc, as, xr, xn, kbeg, n, tk);
#pragma unroll
    for (int i = 0; i < XA_W; i++) {
        barrier(CLK_LOCAL_MEM_FENCE); /* A (or the last round) is done */
        xa_park(as, acc, i, tm, tk);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int o = lid; o < XA_T * RANK; o += XA_THREADS) {
            const int row = row0 + i * XA_T + o / RANK;
            const float sum = xa_sum(as, o);
            if (row < rows) {
                t[((size_t)row * nsplit + split) * RANK + o % RANK] =
                    SCALE * sum;
            }
        }
    }
}
#endif

#if !HAS_BASE && !XA_INLINE
/* Y[i .. i + VEC) = V, or += V with ACCUMULATE. */
inline void store_vec(__global storage_t *y, const size_t i, const vecf_t v)
{
#if VEC == 4
#if ACCUMULATE
    store4(y, i, v + load4(y, i));
#else
    store4(y, i, v);
#endif
#else
#pragma unroll
    for (int c = 0; c < VEC; c++) {
#if ACCUMULATE
        store1(y, i + c, VEC_AT(v, c) + load1(y, i + c));
#else
        store1(y, i + c, VEC_AT(v, c));
#endif
    }
#endif
}

/* base: false after lora_xa: Y (+)= T*B. Work-item l of a work-group owns
 * VEC columns and keeps their RANK x VEC block of B in registers (for
 * RANK <= 32; above, it reads B through the cache); the group sums the
 * XA_SPLIT partials of its EXPAND_ROWS rows of T into local memory once,
 * then writes one row of Y after another, VEC-wide stores coalesced
 * along N. */
#define EX_COLS (EXPAND_N * VEC)
#define EX_B_REGS (RANK <= 32)
__kernel __attribute__((reqd_work_group_size(EXPAND_N, 1, 1)))
void lora_expand(const int rows, const __global storage_t *restrict b,
                 __global storage_t *restrict y,
                 const __global float *restrict t)
{
    __local float tl[EXPAND_ROWS * RANK];
    const int lid = get_local_id(0);
    const int row0 = get_group_id(1) * EXPAND_ROWS;
    const int nr = min(rows - row0, EXPAND_ROWS);
    int col = get_group_id(0) * EX_COLS + lid * VEC;
#if OUT_FEATURES % EX_COLS != 0
    const int live = col < OUT_FEATURES;
    col = min(col, OUT_FEATURES - VEC);
#endif
    for (int o = lid; o < nr * RANK; o += EXPAND_N) {
        const __global float *tp =
            t + (size_t)(row0 + o / RANK) * (XA_SPLIT * RANK) + o % RANK;
        float sum = 0.0f;
#pragma unroll
        for (int p = 0; p < XA_SPLIT; p++) {
            sum += tp[p * RANK];
        }
        tl[o] = sum;
    }
#if EX_B_REGS
    vecf_t bv[RANK];
#pragma unroll
    for (int j = 0; j < RANK; j++) {
        bv[j] = loadv(b + col, (size_t)j * OUT_FEATURES);
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
#if OUT_FEATURES % EX_COLS != 0
    if (!live) {
        return;
    }
#endif
    for (int m = 0; m < nr; m++) {
        vecf_t yv = (vecf_t)0.0f;
#pragma unroll
        for (int j = 0; j < RANK; j++) {
#if EX_B_REGS
            yv = fma((vecf_t)tl[m * RANK + j], bv[j], yv);
#else
            yv = fma((vecf_t)tl[m * RANK + j],
                     loadv(b + col, (size_t)j * OUT_FEATURES), yv);
#endif
        }
        store_vec(y, (size_t)(row0 + m) * OUT_FEATURES + col, yv);
    }
}
#endif

/* ---- lora_decode ---- */

#if DECODE_ROWS > 0
#define DEC_COLS (DECODE_N * VEC) /* columns of Y per work-group */
#define DEC_THREADS (DECODE_N * DECODE_K)
/* Rows of PER_ROW partial sums that fit 4096 floats; 1..DECODE_ROWS. */
#define DEC_FIT(per_row)                                                 \
    (4096 / (per_row) < 1 ? 1                                            \
     : 4096 / (per_row) > DECODE_ROWS ? DECODE_ROWS : 4096 / (per_row))
#define DEC_RED_ROWS DEC_FIT(DECODE_K * DEC_COLS)
#define DEC_RED_Y (DEC_RED_ROWS * DECODE_K * DEC_COLS)
#define DEC_W_STEPS CEIL_DIV(IN_FEATURES, DECODE_K * VEC)
#define DEC_B_STEPS CEIL_DIV(RANK, DECODE_K)
/* Work-item (tn, tk) accumulates T for columns tn, tn + DECODE_N, ... of
 * every row over its k; the DECODE_K partial sums then meet in local
 * memory, DEC_T_ROWS rows at a time, laid out [row][tk][column]. */
#define DEC_TQ CEIL_DIV(RANK, DECODE_N)
#define DEC_TCOLS (DEC_TQ * DECODE_N)
#define DEC_T_ROWS DEC_FIT(DECODE_K * DEC_TCOLS)
#define DEC_RED_T (DEC_T_ROWS * DECODE_K * DEC_TCOLS)
#define DEC_RED_SIZE (DEC_RED_Y > DEC_RED_T ? DEC_RED_Y : DEC_RED_T)

/* acc[m] += this work-item's share of row m of X*W at columns
 * COL..COL+VEC-1 (with HAS_BASE) and tacc[m][q] += its share of
 * row m of X*A at column tn + q * DECODE_N, both from the same X loads,
 * for m < NR. NR is a constant at each call, so the accumulators stay in
 * registers and no work goes to rows that cannot exist; the loops run to
 * DECODE_ROWS and test NR so that they unroll before inlining. Rows past
 * `rows` repeat the last row (never stored). */
inline void decode_stream(const int nr, vecf_t acc[DECODE_ROWS],
                          float tacc[DECODE_ROWS][DEC_TQ], const int rows,
                          const int col, const int tn, const int tk,
                          const __global storage_t *restrict x,
                          const __global storage_t *restrict w,
                          const __global storage_t *restrict a)
{
    int rowc[DECODE_ROWS];
#pragma unroll
    for (int m = 0; m < DECODE_ROWS; m++) {
        rowc[m] = min(m, rows - 1);
    }
    /* Work-item tk takes VEC consecutive rows of W (and of A) per step,
     * k = (s * DECODE_K + tk) * VEC + c: the W rows are read once,
     * coalesced along N, and one VEC-wide load of each X row serves VEC
     * rows of W and of A (the X loads are shared by the DECODE_N
     * work-items of one tk, from cache; A, 64 bytes a row at rank 16,
     * comes from cache too). Unrolled so that several W loads are in
     * flight per work-item. */
#pragma unroll 2
    for (int s = 0; s < DEC_W_STEPS; s++) {
        const int k = (s * DECODE_K + tk) * VEC;
#if IN_FEATURES % (DECODE_K * VEC) != 0
        if (k < IN_FEATURES)
#endif
        {
#if HAS_BASE
            vecf_t wv[VEC];
#pragma unroll
            for (int c = 0; c < VEC; c++) {
                wv[c] = loadv(w + col, (size_t)(k + c) * OUT_FEATURES);
            }
#endif
            float av[VEC][DEC_TQ];
#pragma unroll
            for (int c = 0; c < VEC; c++) {
#pragma unroll
                for (int q = 0; q < DEC_TQ; q++) {
                    const int j = tn + q * DECODE_N;
                    av[c][q] = 0.0f;
#if RANK % DECODE_N != 0
                    if (j < RANK)
#endif
                    {
                        av[c][q] = load1(a, (size_t)(k + c) * RANK + j);
                    }
                }
            }
#pragma unroll
            for (int m = 0; m < DECODE_ROWS; m++) {
                if (m < nr) {
                    const vecf_t xv =
                        loadv(x + (size_t)rowc[m] * IN_FEATURES, k);
#pragma unroll
                    for (int c = 0; c < VEC; c++) {
#if HAS_BASE
                        acc[m] = fma((vecf_t)VEC_AT(xv, c), wv[c], acc[m]);
#endif
#pragma unroll
                        for (int q = 0; q < DEC_TQ; q++) {
                            tacc[m][q] =
                                fma(VEC_AT(xv, c), av[c][q], tacc[m][q]);
                        }
                    }
                }
            }
        }
    }
}

/* Few rows: Y (+)= X*W + T*B with W streamed once. The streaming is
 * instantiated for 1, 2, 4, ... rows up to DECODE_ROWS and picked at run
 * time (uniformly, so no divergence); the reductions that follow are
 * shared. Without HAS_BASE, W aliases B (never read through). */
__kernel __attribute__((reqd_work_group_size(DECODE_N, DECODE_K, 1)))
void lora_decode(const int rows,
                 const __global storage_t *restrict x,
#if HAS_BASE
                 const __global storage_t *restrict w,
#endif
                 const __global storage_t *restrict a,
                 const __global storage_t *restrict b,
                 __global storage_t *restrict y)
{
    /* Partial sums of T (DEC_T_ROWS rows), then of Y (DEC_RED_ROWS
     * rows), [row][tk][column]. */
    __local float red[DEC_RED_SIZE];
    __local float tl[DECODE_ROWS * RANK]; /* T of every row */
    const int tn = get_local_id(0);
    const int tk = get_local_id(1);
    const int lid = tk * DECODE_N + tn;
#if !HAS_BASE
    const __global storage_t *w = b;
#endif
    const int cb = get_group_id(0) * DEC_COLS;
    int col = cb + tn * VEC;
#if OUT_FEATURES % DEC_COLS != 0
    col = min(col, OUT_FEATURES - VEC);
#endif

    vecf_t acc[DECODE_ROWS];
    float tacc[DECODE_ROWS][DEC_TQ];
#pragma unroll
    for (int m = 0; m < DECODE_ROWS; m++) {
        acc[m] = (vecf_t)0.0f;
#pragma unroll
        for (int q = 0; q < DEC_TQ; q++) {
            tacc[m][q] = 0.0f;
        }
    }
#define DECODE_ARGS acc, tacc, rows, col, tn, tk, x, w, a
    if (rows <= 1) {
        decode_stream(1, DECODE_ARGS);
#if DECODE_ROWS > 2
    } else if (rows <= 2) {
        decode_stream(2, DECODE_ARGS);
#endif
#if DECODE_ROWS > 4
    } else if (rows <= 4) {
        decode_stream(4, DECODE_ARGS);
#endif
#if DECODE_ROWS > 8
    } else if (rows <= 8) {
        decode_stream(8, DECODE_ARGS);
#endif
#if DECODE_ROWS > 16
    } else if (rows <= 16) {
        decode_stream(16, DECODE_ARGS);
#endif
#if DECODE_ROWS > 32
    } else if (rows <= 32) {
        decode_stream(32, DECODE_ARGS);
#endif
    } else {
        decode_stream(DECODE_ROWS, DECODE_ARGS);
    }
#undef DECODE_ARGS

    /* T = SCALE * the sum of the DECODE_K partials of each (row, column),
     * DEC_T_ROWS rows at a time; uniform pass count, constant indices. */
    for (int m0 = 0; m0 < rows; m0 += DEC_T_ROWS) {
#pragma unroll
        for (int m = 0; m < DECODE_ROWS; m++) {
            if (m >= m0 && m < m0 + DEC_T_ROWS) {
#pragma unroll
                for (int q = 0; q < DEC_TQ; q++) {
                    red[((m - m0) * DECODE_K + tk) * DEC_TCOLS + tn +
                        q * DECODE_N] = tacc[m][q];
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int o = lid; o < DEC_T_ROWS * RANK; o += DEC_THREADS) {
            const int row = m0 + o / RANK;
            float sum = 0.0f;
#pragma unroll
            for (int p = 0; p < DECODE_K; p++) {
                sum += red[(o / RANK * DECODE_K + p) * DEC_TCOLS + o % RANK];
            }
            if (row < rows && row < DECODE_ROWS) {
                tl[row * RANK + o % RANK] = SCALE * sum;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* acc += T*B: work-item tk takes rows j = tk, tk + DECODE_K, ... of B;
     * rows past `rows` repeat the last row (never stored). */
#pragma unroll
    for (int s = 0; s < DEC_B_STEPS; s++) {
        const int j = s * DECODE_K + tk;
#if RANK % DECODE_K != 0
        if (j < RANK)
#endif
        {
            const vecf_t bv = loadv(b + col, (size_t)j * OUT_FEATURES);
#pragma unroll
            for (int m = 0; m < DECODE_ROWS; m++) {
                const int row = min(m, rows - 1);
                acc[m] = fma((vecf_t)tl[row * RANK + j], bv, acc[m]);
            }
        }
    }

    /* Sum the DECODE_K partials of each (row, column), DEC_RED_ROWS rows
     * at a time. The pass count depends on rows only (uniform); acc is
     * indexed by constants so that it stays in registers. */
    for (int m0 = 0; m0 < rows; m0 += DEC_RED_ROWS) {
#pragma unroll
        for (int m = 0; m < DECODE_ROWS; m++) {
            if (m >= m0 && m < m0 + DEC_RED_ROWS) {
                STASH_V(acc[m], red + ((m - m0) * DECODE_K + tk) * DEC_COLS +
                                    tn * VEC);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int o = tk * DECODE_N + tn; o < DEC_RED_ROWS * DEC_COLS;
             o += DEC_THREADS) {
            const int row = m0 + o / DEC_COLS;
            const int c = cb + o % DEC_COLS;
            float sum = 0.0f;
#pragma unroll
            for (int p = 0; p < DECODE_K; p++) {
                sum += red[(o / DEC_COLS * DECODE_K + p) * DEC_COLS +
                           o % DEC_COLS];
            }
#if OUT_FEATURES % DEC_COLS != 0
            if (c < OUT_FEATURES)
#endif
            if (row < rows) {
                const size_t at = (size_t)row * OUT_FEATURES + c;
#if ACCUMULATE
                sum += load1(y, at);
#endif
                store1(y, at, sum);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif
