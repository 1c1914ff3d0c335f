/* gemm_mma.h - the tensor-core GEMM of templates/mma_tiles.cl (mma.sync,
 * compute capability 8.0+) and wgmma_tiles.cl (warpgroups, 9.0) as an
 * op's plan sets it up: OUT (+)= [X | T] * [W ; B], its tiles (the op's
 * knobs), the sizes they take, their checks and the #defines the
 * templates read. lora_forward's lora_mma and lora_wgmma and
 * lora_backward's lora_bwd_dx_mma and lora_bwd_dx_wgmma are instances. */
#ifndef SPECL_GEMM_MMA_H
#define SPECL_GEMM_MMA_H

#include "op.h"

/* Local memory a tensor-core work-group may ask for: the most one
 * work-group of compute capability 9.0 gets (227 KiB); a device with less
 * fails to build the variant, and the stub passes over it. */
#define MMA_LOCAL_MAX 232448L

struct gemm_mma {
    const char *kernel;    /* the mma.sync kernel, for messages */
    const char *wg_kernel; /* the wgmma kernel, for messages */
    const char *out;       /* the output's name in comments: "Y", "dX" */
    int mma, wgmma;        /* which of the two kernels the plan runs */
    long m, n, k;          /* mma: TILE_M x TILE_N of OUT per work-group,
                              TILE_K of the reduction per step (wgmma's
                              too) */
    long wm, wn;           /* mma: OUT per warp (MMA_WARP_M, _N) */
    long stages;           /* mma: MMA_STAGES */
    long wg_m, wg_n;       /* wgmma: WG_M x WG_N of OUT per work-group */
    long wg_stages;        /* wgmma: WG_STAGES */
    long reduce;           /* MMA_K: the reduction before the rank */
    long cols;             /* MMA_N: OUT's columns */
    long rank;             /* MMA_RANK: the reduction's last stretch */
    long rank_parts;       /* MMA_RANK_PARTS: partial sums a T element */
    int w_nk;              /* MMA_W_NK: W stored MMA_N x MMA_K, B MMA_N x
                              MMA_RANK */
    int out_add;           /* MMA_OUT_ADD: OUT += the product */
    int tma;               /* WG_TMA: wgmma's K steps loaded by the tensor
                              memory accelerator, its maps in the scratch
                              (gemm_wgmma_map_floats) */
    long elem_bytes;       /* a staged element: 2 (f16, bf16), or 4
                              (float32, on tf32 units: mma alone) */
};

/* Slots of tensor maps WG_TMA keeps in the scratch, one per compute unit
 * up to this count, and the floats they take with a 64-byte alignment. */
#define WGMMA_MAP_SLOTS 128
long gemm_wgmma_map_floats(const struct gemm_mma *g);

/* Whether KS's GEMM with W, over K and N (the reduction and the output's
 * columns, either order), defaults to tf32 units (engine mma, three
 * products a product): float32 on a target with mma.sync, rows of whole
 * 16-byte chunks, and a layer wider than TF32_WIDE in K or N, where one
 * tile's long run of products is one of many. On narrower layers the
 * float kernels' smaller tiles and one-launch paths keep more compute
 * units busy (K = N = 512: 1.5-2.4x faster at 192 to 1024 rows;
 * bench/RESULTS.md, "lora_forward float32 on tf32 tensor cores"). */
#define TF32_WIDE 2048L
int gemm_tf32_default(const struct kernel_spec *ks, long k, long n);

/* Work-items and bytes of local memory of the mma and wgmma kernels. */
long gemm_mma_threads(const struct gemm_mma *g);
long gemm_mma_local(const struct gemm_mma *g);
long gemm_wgmma_threads(const struct gemm_mma *g);
long gemm_wgmma_local(const struct gemm_mma *g);

/* Reports, at the knob `engine` (set to ENGINE), a storage type that
 * engine cannot multiply: f32 where the op's instance has no float32
 * form (TF32: it has one, on engine mma's tf32 units); returns 0 when it
 * did. */
int gemm_mma_check_dtype(const struct kernel_spec *ks, const char *engine,
                         int tf32, struct diags *d);

/* Reports what the mma kernel's tiles break (a multiple of 16, powers of
 * two, the work-group and local memory limits) at the knob the spec gave
 * (tile knobs m, n, k, wm, wn, stages; else `engine`). */
void gemm_mma_check(const struct kernel_spec *ks, const struct gemm_mma *g,
                    struct diags *d);
/* The same for the wgmma kernel's (wg_n, k, wg_m, wg_stages). */
void gemm_wgmma_check(const struct kernel_spec *ks, const struct gemm_mma *g,
                      struct diags *d);

/* Adds G's #defines to P's prelude: the tiles of the kernels it runs and
 * the shape, every one mma_tiles.cl and wgmma_tiles.cl read. */
void gemm_mma_plan(struct plan *p, const struct gemm_mma *g);

/* The mark of knob K1 where the spec gave it or did not give K2, else
 * K2's: where an error about the two is reported. */
struct mark knob_blame(const struct kernel_spec *ks, const char *k1,
                       const char *k2);

#endif
