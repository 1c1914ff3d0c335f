#include "storage_@dtype@.cl"


/* lora_common.cl - what the kernels of lora_forward share: Y (+)= X*W +
 * SCALE*(X*A)*B as tiled OpenCL C kernels. Each kernel is a template of
 * its own (lora_main.cl, lora_xa.cl, lora_expand.cl, lora_decode.cl,
 * lora_delta.cl, lora_combine.cl); the emitted source holds the ones its
 * plan launches.
 *
 * X is rows x K, W is K x N, A is K x r, B is r x N, Y is rows x N, all
 * row-major in storage_t (W, A and B as lora_layout.cl has them: with
 * weight_layout: out_in, N x K, r x K and N x r); arithmetic and accumulation are float. The LoRA
 * term is one more stretch of the reduction: with T = SCALE*X*A (rows x r),
 * Y = [X | T]*[W ; B], so base and adapter come out of one accumulator and
 * Y is written once.
 *
 * Kernels:
 *   lora_main    register-tiled GEMM (gemm_simt.cl): GEMM_TILE_M x
 *                GEMM_TILE_N of Y per work-group, GEMM_WORK_M x
 *                GEMM_WORK_N per work-item, K stepped by GEMM_TILE_K
 *                through double-buffered local memory, then the r stretch.
 *                Local size (GEMM_THREADS_N, GEMM_THREADS_M).
 *   lora_xa      XA_INLINE 0, before lora_main or lora_expand: T =
 *                SCALE*X*A into a float scratch buffer; reads X once.
 *                Local size (XA_K, XA_M / XA_W), XA_M rows per work-group,
 *                XA_W per work-item; XA_SPLIT work-groups along dimension
 *                0 split K and write XA_SPLIT partial sums of T.
 *   lora_xa_mma  lora_xa's tensor-core twin (NVIDIA, f16/bf16), before
 *                lora_mma or lora_expand: the same partial sums of T.
 *   lora_mma     [X | T]*[W ; B] on tensor cores after lora_xa_mma;
 *                lora_mma_split the same over SPLIT_K slices of K.
 *   lora_expand  HAS_BASE 0 after lora_xa or lora_xa_mma: Y = T*B,
 *                EXPAND_ROWS rows per work-group, EXPAND_VEC columns per
 *                work-item. Local size (EXPAND_N, 1).
 *   lora_decode  rows <= DECODE_ROWS: each work-item owns VEC columns for
 *                every row, the reduction is split over DECODE_K work-items,
 *                so W is streamed once; T is computed alongside, in the
 *                same launch. Local size (DECODE_N, DECODE_K).
 *   lora_decode_mma  its tensor-core counterpart past lora_decode's rows
 *                (NVIDIA, f16/bf16 with W): partial sums of X*W and X*A
 *                over DSUM_SLICES slices of K, in strips of DMMA_COLS
 *                columns; lora_decode_sum then adds them with T*B.
 *   lora_decode_split  the same partial sums without tensor cores, any
 *                K, N and r: a work-item per column of a strip of
 *                DSPLIT_COLS, up to DSPLIT_ROWS rows per work-group.
 *   lora_delta   HAS_BASE 0, few rows: DELTA_ROWS rows per work-group, T
 *                summed over K by all its work-items in local memory, then
 *                Y (+)= T*B; the work-groups along dimension 0 split N.
 *                Local size (DELTA_THREADS, 1).
 *   lora_combine SPLIT_K > 1, after lora_main_split (or lora_mma_split) ran
 *                over SPLIT_K slices of K
 *                (the plan's split path for few rows): Y (+)= the sum of
 *                their partial sums (split_k.cl), VEC columns per
 *                work-item, a row per work-group along dimension 1.
 *                Local size (COMBINE_N, 1).
 *
 * Edges: rows is a run-time argument and always checked; the K, N and r
 * edges cost code only where the shape does not divide the tiles (#if on
 * the constants), so a shape that divides evenly has no guards.
 *
 * Shape, set by the plan (gen/lora_paths.c):
 *   IN_FEATURES   K
 *   OUT_FEATURES  N
 *   RANK          r
 *   SCALE         float literal multiplying (X*A)*B
 *   HAS_BASE      1: Y includes X*W; 0: Y is the adapter term alone (no W)
 *   ACCUMULATE    1: Y += result; 0: Y = result
 *   XA_INLINE     1: lora_main computes X*A itself; 0: it reads T
 * Tuning knobs, set by the plan for the kernels it launches:
 *   GEMM_*          lora_main's tiles and what it multiplies (gemm_simt.cl
 *                   lists them)
 *   TILE_M, TILE_N  rows, columns of Y per work-group of lora_mma
 *   WG_M, WG_N      the same of lora_wgmma
 *   TILE_K          K step staged through local memory (both)
 *   VEC             width of global loads and stores: 1, 2 or 4; divides K
 *                   and N
 *   XA_M, XA_K      lora_xa: rows per work-group, work-items along K
 *   XA_W            lora_xa: rows per work-item; divides XA_M
 *   XA_CHUNK        lora_xa: rows of A staged in local memory at once
 *   EXPAND_N        lora_expand: work-items per work-group
 *   EXPAND_VEC      lora_expand: columns per work-item (VEC; 8 or 16 on
 *                   CPUs)
 *   EXPAND_ROWS     lora_expand: rows of Y per work-group
 *   DECODE_ROWS     most rows lora_decode handles; 0: no lora_decode
 *   DECODE_N        lora_decode: work-items along N, VEC columns each
 *   DECODE_K        lora_decode: work-items sharing one column's reduction
 *   DELTA_ROWS      lora_delta: rows per work-group
 *   DELTA_THREADS   lora_delta: work-items per work-group
 *   SPLIT_K         lora_main: slices of K of the split path; 1: none
 *   COMBINE_N       lora_combine: work-items per work-group
 * Storage: storage_DTYPE.cl, one of f32, f16, bf16, chosen by the plan. */


/* Every value comes from the plan: there are no defaults here, so that
 * specl's knob defaults live in one place (gen/lora_defaults.c). */
#if !defined(IN_FEATURES) || !defined(OUT_FEATURES) || !defined(RANK) ||  \
    !defined(SCALE) || !defined(HAS_BASE) || !defined(ACCUMULATE) ||      \
    !defined(XA_INLINE) || !defined(VEC)
#error "lora_common.cl: the plan must define the shape, XA_INLINE and VEC"
#endif

#include "lora_layout.cl"

/* ---- Derived sizes ---- */

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
/* Partial sums of T that lora_xa writes per row for lora_main and
 * lora_expand: one per XA_CHUNK of K. */
#define XA_SPLIT CEIL_DIV(IN_FEATURES, XA_CHUNK)

/* ---- Vectors of VEC elements ----
 * PARTIAL_V(p): VEC floats of partial sums in scratch at P (aligned to
 * VEC floats). */

#if VEC == 4
typedef float4 vecf_t;
#define VEC_AT(v, c)                                                     \
    ((c) == 0 ? (v).s0 : (c) == 1 ? (v).s1 : (c) == 2 ? (v).s2 : (v).s3)
#define loadv load4
#define STASH_V(v, p) vstore4((v), 0, (p))
#define PARTIAL_V(p) (*(const __global float4 *)(p))
#elif VEC == 2
typedef float2 vecf_t;
#define VEC_AT(v, c) ((c) == 0 ? (v).s0 : (v).s1)
inline float2 loadv(const __global storage_t *p, size_t i)
{
    return (float2)(load1(p, i), load1(p, i + 1));
}
#define STASH_V(v, p) vstore2((v), 0, (p))
#define PARTIAL_V(p) (*(const __global float2 *)(p))
#elif VEC == 1
typedef float vecf_t;
#define VEC_AT(v, c) (v)
#define loadv load1
#define STASH_V(v, p) (*(p) = (v))
#define PARTIAL_V(p) (*(p))
#else
#error "VEC must be 1, 2 or 4"
#endif

/* VEC elements STEP apart from P[I] (lora_layout.cl): W's, A's or B's
 * along n (j), one load where they lie side by side. */
#if VEC == 4
#define loadv_step load4_step
#elif VEC == 2
#define loadv_step(p, i, step)                                           \
    ((step) == 1 ? loadv((p), (i)) : load2_step((p), (i), (step)))
#else
#define loadv_step(p, i, step) load1((p), (i))
#endif
