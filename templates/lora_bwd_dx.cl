/* lora_bwd_dx.cl - dX = dY*W^T + G*A^T (see lora_bwd_common.cl): the
 * register-tiled GEMM over [dY | G] * [W^T ; A^T], built like lora_main's
 * (main_tiles.cl) with the reduction over N, then r.
 *
 * Work-group (c, b) owns DX_TILE_M rows of dX from b * DX_TILE_M and
 * DX_TILE_N columns from c * DX_TILE_N; each work-item keeps
 * DX_WORK_M x DX_WORK_N of them in registers. N is stepped by DX_TILE_K
 * through double-buffered local memory, software-pipelined. The dY tile
 * is read VEC-wide along n (dY's rows) and stored transposed, n-major,
 * where the inner product reads it as vectors. W^T comes from lora_bwd_wt's
 * copy in the scratch (SCRATCH_WT, N x K), so its tile is read VEC-wide
 * along K and stored as it comes, like lora_main's W tile: read from W
 * itself (K x N), each column of the tile would be a short segment of a
 * row of W to scatter transposed. On the H100 (f32, 4096 rows, K = N =
 * 4096, 64 x 128 tiles of 8 x 8) that took 3729 us with pad 4 and 3653
 * with pad 0; from the copy 3322 and 3018, plus 53 for the copy.
 * The r stretch then takes G from the scratch and A^T from a (a[k][j],
 * contiguous along j), DX_RANK_K of r per stage. HAS_BASE 0 has only the
 * r stretch (and no copy of W).
 *
 * Knobs, set by the plan (gen/op_lora_backward.c):
 *   DX_TILE_M, DX_TILE_N  rows, columns of dX per work-group
 *   DX_TILE_K             N step staged through local memory
 *   DX_WORK_M, DX_WORK_N  rows, columns of dX per work-item (registers)
 *   DX_PAD                floats of padding per local-memory row
 *   DX_WARP_N             work-items along N within each warp of 32
 *                         consecutive ones; 0: GEMM_THREADS_N (row-major).
 *                         Divides GEMM_THREADS_N and 32, and 32 / DX_WARP_N
 *                         divides GEMM_THREADS_M; GEMM_THREADS a multiple
 *                         of 32
 *   VEC                   width of the global loads of dY and W^T and of
 *                         the stores of dX: 1, 2 or 4
 *   DX_LOCAL_BYTES        the plan's count of local memory: DX_LOCAL * 4
 * The plan must see to these (all but the device's limits are checked
 * here too):
 *   DX_TILE_M % DX_WORK_M == 0 and DX_TILE_N % DX_WORK_N == 0
 *   DX_WORK_M, DX_WORK_N <= 16 (the accumulators are registers)
 *   VEC divides DX_TILE_K, DX_TILE_N, IN_FEATURES and OUT_FEATURES
 *     (vector loads and stores sit at multiples of VEC, so a vector is
 *     wholly inside N or K or wholly past it)
 *   work-items (DX_TILE_M / DX_WORK_M) * (DX_TILE_N / DX_WORK_N) <= 1024
 *     and <= the device's work-group limit
 *   DX_LOCAL_BYTES <= the device's local memory
 * Local memory, in floats, with GEMM_LDA = DX_TILE_M + DX_PAD and
 * GEMM_LDB = DX_TILE_N + DX_PAD (row strides of the dY or G and the W^T or
 * A^T tiles) and DX_RANK_K = min(RANK, DX_TILE_K):
 *   HAS_BASE 1: DX_LOCAL = 2 * DX_TILE_K * (GEMM_LDA + GEMM_LDB)
 *   HAS_BASE 0: DX_LOCAL = DX_RANK_K * (GEMM_LDA + GEMM_LDB)
 *
 * Edges: rows is a run-time argument and always checked (rows past the end
 * repeat the last row and are never stored); the K, N and r edges cost
 * code only where the shape does not divide the tiles: columns past K
 * repeat earlier ones and are never stored, n and j past the end read as
 * zero. Names start with DX_ or dx_: one source holds every kernel of
 * lora_backward. */
#include "lora_bwd_common.cl"

#if !defined(DX_TILE_M) || !defined(DX_TILE_N) || !defined(DX_TILE_K) ||  \
    !defined(DX_WORK_M) || !defined(DX_WORK_N) || !defined(DX_PAD) ||     \
    !defined(DX_WARP_N) || !defined(VEC)
#error "lora_bwd_dx.cl: the plan must define DX_ tiles, PAD, WARP_N and VEC"
#endif
#if !INPUT_GRAD
#error "lora_bwd_dx.cl: launched only with INPUT_GRAD 1"
#endif
#if DX_TILE_K % VEC != 0 || DX_TILE_N % VEC != 0 ||                     \
    IN_FEATURES % VEC != 0 || OUT_FEATURES % VEC != 0
#error "lora_bwd_dx.cl: VEC must divide DX_TILE_K, DX_TILE_N, K and N"
#endif

/* ---- Derived sizes ---- */

/* The register-tiled core (gemm_simt.cl) over this kernel's tiles; the
 * output is dX, the reduction runs over N, then r. */
#define GEMM_TILE_M DX_TILE_M
#define GEMM_TILE_N DX_TILE_N
#define GEMM_TILE_K DX_TILE_K
#define GEMM_WORK_M DX_WORK_M
#define GEMM_WORK_N DX_WORK_N
#define GEMM_PAD DX_PAD
#define GEMM_WARP_N DX_WARP_N
#define GEMM_K OUT_FEATURES
#define GEMM_N IN_FEATURES
#define GEMM_VEC VEC
#define GEMM_STAGE_A HAS_BASE /* dY */
#define GEMM_STAGE_B HAS_BASE /* W^T */
#include "gemm_simt.cl"

#define DX_N_TILES CEIL_DIV(OUT_FEATURES, DX_TILE_K)
#define DX_RANK_K (RANK < DX_TILE_K ? RANK : DX_TILE_K) /* r per stage */
#define DX_RANK_TILES CEIL_DIV(RANK, DX_RANK_K)

/* Width of the stores of dX: a column group of GEMM_LVN, split to VEC. */
#define DX_SVW (VEC < GEMM_LVN ? VEC : GEMM_LVN)

/* The dY and W^T tiles load VEC-wide along n (gemm_simt.cl); the G and
 * A^T tiles of the r stretch go element by element, since r need not be
 * a multiple of VEC. */
#define DX_G_ELEMS (DX_TILE_M * DX_RANK_K)
#define DX_G_LOADS CEIL_DIV(DX_G_ELEMS, GEMM_THREADS)
#define DX_A_ELEMS (DX_TILE_N * DX_RANK_K)
#define DX_A_LOADS CEIL_DIV(DX_A_ELEMS, GEMM_THREADS)

/* Local memory of lora_bwd_dx, in floats. */
#if HAS_BASE
#define DX_AS_SIZE (2 * DX_TILE_K * GEMM_LDA)
#define DX_BS_SIZE (2 * DX_TILE_K * GEMM_LDB)
#else
#define DX_AS_SIZE (DX_RANK_K * GEMM_LDA)
#define DX_BS_SIZE (DX_RANK_K * GEMM_LDB)
#endif
/* The plan counted this kernel's local memory (DX_LOCAL_BYTES) to check
 * it against the device: it must be what the arrays take. */
#define DX_LOCAL (DX_AS_SIZE + DX_BS_SIZE)
#if !defined(DX_LOCAL_BYTES) || DX_LOCAL * 4 != DX_LOCAL_BYTES
#error "lora_bwd_dx.cl: local memory differs from the plan's count"
#endif

#if VEC != 1 && VEC != 2 && VEC != 4
#error "lora_bwd_dx.cl: VEC must be 1, 2 or 4"
#endif

/* Stores DX_SVW floats of private V at DX[I]; I is a multiple of DX_SVW. */
inline void dx_put(__global storage_t *dx, size_t i, const float *v)
{
#if DX_SVW == 4
    store4(dx, i, (float4)(v[0], v[1], v[2], v[3]));
#elif DX_SVW == 2
    store2(dx, i, (float2)(v[0], v[1]));
#else
    store1(dx, i, v[0]);
#endif
}

__kernel __attribute__((reqd_work_group_size(DX_TILE_N / DX_WORK_N,
                                              DX_TILE_M / DX_WORK_M, 1)))
void lora_bwd_dx(const int rows, const __global storage_t *restrict dy,
                 const __global storage_t *restrict a,
                 __global storage_t *restrict dx,
                 const __global float *restrict scratch)
{
    const __global float *restrict g = SCRATCH_G(scratch, rows);
#if HAS_BASE
    const __global storage_t *restrict wt =
        (const __global storage_t *)SCRATCH_WT(scratch, rows);
#endif
    __local float as[DX_AS_SIZE] __attribute__((aligned(16)));
    __local float bs[DX_BS_SIZE] __attribute__((aligned(16)));
    const int lid = get_local_id(1) * GEMM_THREADS_N + get_local_id(0);
    int tm, tn;
    gemm_place(lid, &tm, &tn);
    const int col0 = get_group_id(0) * DX_TILE_N;
    const int row0 = get_group_id(1) * DX_TILE_M;

    float acc[DX_WORK_M][DX_WORK_N];
    gemm_zero(acc);

#if HAS_BASE
    /* The N stretch, software-pipelined: the next stage's tiles travel
     * from global memory into registers while this stage's are multiplied,
     * then go to the other half of local memory; one barrier per stage.
     * dY's rows and W^T's copy (N x K) load VEC-wide, every stage guarded
     * against N's end (n past it reads as zero). */
#define FETCH_STAGE(n0)                                                  \
    do {                                                                 \
        gemm_fetch_a(dr, dy, OUT_FEATURES, VEC, rows, row0, (n0), lid,   \
                     1, 0);                                              \
        gemm_fetch_b(wr, wt, IN_FEATURES, VEC, col0, (n0), lid, 1, 0);   \
    } while (0)
    float4 dr[GEMM_A_LOADS(VEC)], wr[GEMM_B_LOADS(VEC)];
    FETCH_STAGE(0);
    gemm_stash_a(as, dr, VEC, 0, lid, 0);
    gemm_stash_b(bs, wr, VEC, 0, lid, 0);
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int nt = 0; nt < DX_N_TILES; nt++) {
        const int cur = nt & 1;
        const int more = nt + 1 < DX_N_TILES;
        if (more) {
            FETCH_STAGE((nt + 1) * DX_TILE_K);
        }
        gemm_mac(acc, as + cur * (DX_TILE_K * GEMM_LDA) + tm * GEMM_LVM,
               bs + cur * (DX_TILE_K * GEMM_LDB) + tn * GEMM_LVN, DX_TILE_K);
        if (more) {
            gemm_stash_a(as + (cur ^ 1) * (DX_TILE_K * GEMM_LDA), dr, VEC, 0,
                         lid, 0);
            gemm_stash_b(bs + (cur ^ 1) * (DX_TILE_K * GEMM_LDB), wr, VEC, 0,
                         lid, 0);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif

    /* The r stretch: acc += G*A^T, DX_RANK_K of r per stage; G from the
     * scratch, A^T from a, both contiguous along j, read element by
     * element with neighbouring work-items on neighbouring j. */
    for (int rt = 0; rt < DX_RANK_TILES; rt++) {
        const int j0 = rt * DX_RANK_K;
#pragma unroll
        for (int l = 0; l < DX_G_LOADS; l++) {
            const int v = lid + l * GEMM_THREADS;
            const int r = v / DX_RANK_K;
            const int j = j0 + v % DX_RANK_K;
            const int row = min(row0 + r, rows - 1);
#if DX_G_ELEMS % GEMM_THREADS != 0
            if (v < DX_G_ELEMS)
#endif
            {
                float gv = 0.0f;
#if RANK % DX_RANK_K != 0
                if (j < RANK)
#endif
                {
                    gv = g[(size_t)row * RANK + j];
                }
                as[v % DX_RANK_K * GEMM_LDA + r] = gv;
            }
        }
#pragma unroll
        for (int l = 0; l < DX_A_LOADS; l++) {
            const int v = lid + l * GEMM_THREADS;
            const int c = v / DX_RANK_K;
            const int j = j0 + v % DX_RANK_K;
            int col = col0 + c;
#if IN_FEATURES % DX_TILE_N != 0
            col = min(col, IN_FEATURES - 1);
#endif
#if DX_A_ELEMS % GEMM_THREADS != 0
            if (v < DX_A_ELEMS)
#endif
            {
                float av = 0.0f;
#if RANK % DX_RANK_K != 0
                if (j < RANK)
#endif
                {
                    av = load1(a, (size_t)col * RANK + j);
                }
                bs[v % DX_RANK_K * GEMM_LDB + c] = av;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        gemm_mac(acc, as + tm * GEMM_LVM, bs + tn * GEMM_LVN, DX_RANK_K);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* dX = acc (never accumulated); each group of GEMM_LVN columns in
     * DX_SVW-wide stores. */
#pragma unroll
    for (int i = 0; i < DX_WORK_M; i++) {
        const int row = row0 + GEMM_ROW_OF(i);
        if (row < rows) {
            __global storage_t *dxr = dx + (size_t)row * IN_FEATURES;
#pragma unroll
            for (int j = 0; j < DX_WORK_N; j += DX_SVW) {
                const int col = col0 + GEMM_COL_OF(j);
#if IN_FEATURES % DX_TILE_N != 0
                if (col < IN_FEATURES)
#endif
                {
                    dx_put(dxr, col, &acc[i][j]);
                }
            }
        }
    }
}
