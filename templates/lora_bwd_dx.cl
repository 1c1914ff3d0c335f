/* lora_bwd_dx.cl - dX = dY*W^T + G*A^T (see lora_bwd_common.cl): the
 * register-tiled GEMM over [dY | G] * [W^T ; A^T], built like lora_main's
 * (main_tiles.cl) with the reduction over N, then r.
 *
 * Work-group (c, b) owns GEMM_TILE_M rows of dX from b * GEMM_TILE_M
 * and GEMM_TILE_N columns from c * GEMM_TILE_N; each work-item keeps
 * GEMM_WORK_M x GEMM_WORK_N of them in registers. N is stepped by
 * GEMM_TILE_K through double-buffered local memory, software-pipelined.
 * The dY tile is read VEC-wide along n (dY's rows) and stored transposed,
 * n-major, where the inner product reads it as vectors. W^T comes from
 * lora_bwd_wt's copy in the scratch (SCRATCH_WT, N x K), or with
 * weight_layout: out_in from W itself (N x K already), so its tile is
 * read VEC-wide along K and stored as it comes, like lora_main's W tile:
 * read from W itself (K x N), each column of the tile would be a short
 * segment of a row of W to scatter transposed, which is slower than the
 * copy and the tile from it together.
 * The r stretch then takes G from the scratch and A^T from a (a[k][j],
 * contiguous along j), GEMM_RANK_K of r per stage. HAS_BASE 0 has only the
 * r stretch (and no copy of W).
 *
 * The tiles are gemm_simt.cl's GEMM_ #defines, which the plan sets
 * (gen/op_lora_backward.c, through lora_plan_gemm_simt): the output is
 * dX (GEMM_N = K), the reduction runs over N (GEMM_K), then r. VEC is the
 * width of the global loads of dY and W^T and of the stores of dX: 1, 2
 * or 4. DX_LOCAL_BYTES, the plan's count of local memory: DX_LOCAL * 4.
 * The plan must see to these (all but the device's limits are checked
 * here or in gemm_simt.cl too):
 *   GEMM_TILE_M % GEMM_WORK_M == 0 and GEMM_TILE_N % GEMM_WORK_N == 0
 *   GEMM_WORK_M, GEMM_WORK_N <= 16 (the accumulators are registers)
 *   GEMM_WARP_N divides GEMM_THREADS_N and 32, and 32 / GEMM_WARP_N
 *     divides GEMM_THREADS_M; GEMM_THREADS a multiple of 32
 *   VEC divides GEMM_TILE_K, GEMM_TILE_N, IN_FEATURES and OUT_FEATURES
 *     (vector loads and stores sit at multiples of VEC, so a vector is
 *     wholly inside N or K or wholly past it)
 *   work-items GEMM_THREADS <= 1024 and <= the device's work-group limit
 *   DX_LOCAL_BYTES <= the device's local memory
 * Local memory, in floats (GEMM_LDA = GEMM_TILE_M + GEMM_PAD and
 * GEMM_LDB = GEMM_TILE_N + GEMM_PAD, the row strides of the dY or G and
 * the W^T or A^T tiles):
 *   HAS_BASE 1: DX_LOCAL = 2 * GEMM_TILE_K * (GEMM_LDA + GEMM_LDB)
 *   HAS_BASE 0: DX_LOCAL = GEMM_RANK_K * (GEMM_LDA + GEMM_LDB)
 *
 * Edges: rows is a run-time argument and always checked (rows past the end
 * repeat the last row and are never stored); the K, N and r edges cost
 * code only where the shape does not divide the tiles: columns past K
 * repeat earlier ones and are never stored, n and j past the end read as
 * zero. Names start with DX_ or dx_: one source holds every kernel of
 * lora_backward. */
#include "lora_bwd_common.cl"

#if TG_PARTS != 1
#error "lora_bwd_dx.cl: G and T whole (TG_PARTS 1)"
#endif

#if !defined(VEC)
#error "lora_bwd_dx.cl: the plan must define VEC"
#endif
#if !INPUT_GRAD
#error "lora_bwd_dx.cl: launched only with INPUT_GRAD 1"
#endif

#include "gemm_simt.cl"

#if GEMM_TILE_K % VEC != 0 || GEMM_TILE_N % VEC != 0 ||                 \
    IN_FEATURES % VEC != 0 || OUT_FEATURES % VEC != 0
#error "lora_bwd_dx.cl: VEC must divide GEMM_TILE_K, GEMM_TILE_N, K and N"
#endif
/* What the plan's GEMM_ #defines must say for this product. */
#if GEMM_K != OUT_FEATURES || GEMM_N != IN_FEATURES || GEMM_RANK != RANK || \
    GEMM_RANK_PARTS != 1 || GEMM_VEC != VEC || GEMM_STAGE_A != HAS_BASE ||   \
    GEMM_STAGE_B != HAS_BASE || GEMM_OUT_ADD
#error "lora_bwd_dx.cl: the GEMM_ #defines are not [dY | G] * [W^T ; A^T]"
#endif

/* ---- Derived sizes ---- */

#define DX_N_TILES CEIL_DIV(OUT_FEATURES, GEMM_TILE_K)

/* Local memory of lora_bwd_dx, in floats. */
#if HAS_BASE
#define DX_AS_SIZE (2 * GEMM_TILE_K * GEMM_LDA)
#define DX_BS_SIZE (2 * GEMM_TILE_K * GEMM_LDB)
#else
#define DX_AS_SIZE (GEMM_RANK_K * GEMM_LDA)
#define DX_BS_SIZE (GEMM_RANK_K * GEMM_LDB)
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

__kernel __attribute__((reqd_work_group_size(GEMM_THREADS_N,
                                              GEMM_THREADS_M, 1)))
void lora_bwd_dx(const int rows, const __global storage_t *restrict dy,
#if HAS_BASE && WEIGHT_OUT_IN
                 const __global storage_t *restrict w,
#endif
                 const __global storage_t *restrict a,
                 __global storage_t *restrict dx,
                 const __global float *restrict scratch)
{
    const __global float *restrict g = SCRATCH_G(scratch, rows);
#if HAS_BASE && WEIGHT_OUT_IN
    const __global storage_t *restrict wt = w; /* N x K: W^T itself */
#elif HAS_BASE
    const __global storage_t *restrict wt =
        (const __global storage_t *)SCRATCH_WT(scratch, rows);
#endif
    __local float as[DX_AS_SIZE] __attribute__((aligned(16)));
    __local float bs[DX_BS_SIZE] __attribute__((aligned(16)));
    const int lid = get_local_id(1) * GEMM_THREADS_N + get_local_id(0);
    int tm, tn;
    gemm_place(lid, &tm, &tn);
    const int col0 = get_group_id(0) * GEMM_TILE_N;
    const int row0 = get_group_id(1) * GEMM_TILE_M;

    float acc[GEMM_WORK_M][GEMM_WORK_N];
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
            FETCH_STAGE((nt + 1) * GEMM_TILE_K);
        }
        gemm_mac(acc, as + cur * (GEMM_TILE_K * GEMM_LDA) + tm * GEMM_LVM,
                 bs + cur * (GEMM_TILE_K * GEMM_LDB) + tn * GEMM_LVN,
                 GEMM_TILE_K);
        if (more) {
            gemm_stash_a(as + (cur ^ 1) * (GEMM_TILE_K * GEMM_LDA), dr, VEC,
                         0, lid, 0);
            gemm_stash_b(bs + (cur ^ 1) * (GEMM_TILE_K * GEMM_LDB), wr, VEC,
                         0, lid, 0);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif

    /* The r stretch: acc += G*A^T, GEMM_RANK_K of r per stage; G from the
     * scratch, A^T from a (K x r, read as its transpose; out_in's r x K
     * is A^T, read along its rows VEC wide). */
    for (int rt = 0; rt < GEMM_RANK_TILES; rt++) {
        const int j0 = rt * GEMM_RANK_K;
        gemm_rank_a(as, g, rows, row0, j0, lid);
#if WEIGHT_OUT_IN
        gemm_rank_b_rows(bs, a, IN_FEATURES, VEC, col0, j0, lid);
#else
        gemm_rank_b_cols(bs, a, RANK, col0, j0, lid);
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        gemm_mac(acc, as + tm * GEMM_LVM, bs + tn * GEMM_LVN, GEMM_RANK_K);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* dX = acc (never accumulated). */
    gemm_store(dx, GEMM_SW, acc, tm, tn, rows, row0, col0);
}
