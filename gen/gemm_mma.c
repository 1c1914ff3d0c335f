/* gemm_mma.c - the tensor-core GEMM's sizes, checks and #defines
 * (gemm_mma.h). */
#include "gemm_mma.h"

#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "spec.h"

#define THREADS_MOST 1024L /* work-items per work-group */

int gemm_tf32_default(const struct kernel_spec *ks, long k, long n)
{
    return ks->dtype == DTYPE_F32 &&
           target_offers(ks->target, CAP_MMA_SYNC_BF16_F16) && k % 4 == 0 &&
           n % 4 == 0 && (k > TF32_WIDE || n > TF32_WIDE);
}

long gemm_mma_threads(const struct gemm_mma *g)
{
    return 32 * (g->m / g->wm) * (g->n / g->wn);
}

long gemm_mma_local(const struct gemm_mma *g)
{
    return g->elem_bytes * g->stages * (g->m * g->k + g->k * g->n);
}

/* A warpgroup of 128 work-items that copies, and one that multiplies
 * per 64 rows. */
long gemm_wgmma_threads(const struct gemm_mma *g)
{
    return 128 + 2 * g->wg_m;
}

/* Registers a multiplying work-item of the wgmma kernel holds besides its
 * WG_N / 2 accumulators (ptxas: 162 in all at WG_N 256, 96 at 128). */
#define WGMMA_OTHER_REGS 32L

/* The stages' tiles, and two 8-byte mbarriers per stage. */
long gemm_wgmma_local(const struct gemm_mma *g)
{
    return 2 * g->wg_stages * (g->wg_m * g->k + g->k * g->wg_n) +
           16 * g->wg_stages;
}

long gemm_wgmma_map_floats(const struct gemm_mma *g)
{
    /* two maps of 128 bytes a slot; up to 15 floats to a 64-byte line */
    return g->wgmma && g->tma ? WGMMA_MAP_SLOTS * 64 + 15 : 0;
}

struct mark knob_blame(const struct kernel_spec *ks, const char *k1,
                       const char *k2)
{
    if (!spec_knob_set(ks, k1) && k2 != NULL && spec_knob_set(ks, k2)) {
        return spec_knob_mark(ks, k2);
    }
    return spec_knob_mark(ks, k1);
}

static int pow2(long v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

int gemm_mma_check_dtype(const struct kernel_spec *ks, const char *engine,
                         int tf32, struct diags *d)
{
    if (ks->dtype != DTYPE_F32 || (tf32 && strcmp(engine, "mma") == 0)) {
        return 1;
    }
    diag_error(d, ks->file, spec_knob_mark(ks, "engine"),
               "engine: %s needs dtype f16 or bf16 (%s)", engine,
               tf32 ? "float32 runs on engine: mma, three tf32 products a "
                      "product"
                    : "tensor cores multiply half-width values");
    return 0;
}

void gemm_mma_check(const struct kernel_spec *ks, const struct gemm_mma *g,
                    struct diags *d)
{
    const char *file = ks->file;
    if (g->k % 16 != 0) {
        diag_error(d, file, knob_blame(ks, "k", "engine"),
                   "engine: mma needs tile k a multiple of 16 (got %ld)",
                   g->k);
    } else if (!pow2(g->k) || !pow2(g->n)) {
        /* mma_swizzle permutes chunks within a power of two */
        diag_error(d, file, knob_blame(ks, !pow2(g->k) ? "k" : "n", "engine"),
                   "engine: mma needs tiles k and n that are powers of two "
                   "(got %ld, %ld): the 16-byte chunks of their rows are "
                   "swizzled by XOR",
                   g->k, g->n);
    }
    if (g->wm % 16 != 0 || g->wn % 16 != 0) {
        diag_error(d, file, knob_blame(ks, g->wm % 16 ? "wm" : "wn", "engine"),
                   "engine: mma needs wm and wn (a warp's rows and columns "
                   "of %s) multiples of 16 (got %ld, %ld)",
                   g->out, g->wm, g->wn);
    }
    long threads = gemm_mma_threads(g);
    if (threads > THREADS_MOST) {
        diag_error(d, file, knob_blame(ks, "m", "n"),
                   "%s work-group of %ld work-items (32 per warp of wm %ld "
                   "x wn %ld in tile m %ld x n %ld) exceeds %ld",
                   g->kernel, threads, g->wm, g->wn, g->m, g->n,
                   THREADS_MOST);
    }
    long bytes = gemm_mma_local(g);
    if (bytes > MMA_LOCAL_MAX) {
        diag_error(d, file, knob_blame(ks, "stages", "k"),
                   "%s needs %ld bytes of local memory (stages %ld x (m %ld "
                   "+ n %ld) x k %ld values of %ld bytes), more than %ld",
                   g->kernel, bytes, g->stages, g->m, g->n, g->k,
                   g->elem_bytes, MMA_LOCAL_MAX);
    }
}

void gemm_wgmma_check(const struct kernel_spec *ks, const struct gemm_mma *g,
                      struct diags *d)
{
    const char *file = ks->file;
    if (g->wg_n != 64 && g->wg_n != 128 && g->wg_n != 256) {
        diag_error(d, file, knob_blame(ks, "wg_n", "engine"),
                   "engine: wgmma needs wg_n of 64, 128 or 256 (got %ld): "
                   "a warpgroup's product is 64 rows by wg_n, its W tile "
                   "blocks of 64 columns",
                   g->wg_n);
    }
    if (g->k != 16 && g->k != 32 && g->k != 64) {
        diag_error(d, file, knob_blame(ks, "k", "engine"),
                   "engine: wgmma needs tile k of 16, 32 or 64 (got %ld): "
                   "X's tile rows are one swizzle line of 32, 64 or 128 "
                   "bytes",
                   g->k);
    }
    if (g->wg_m % 64 != 0) {
        diag_error(d, file, spec_knob_mark(ks, "wg_m"),
                   "wg_m must be a multiple of 64, a warpgroup's rows "
                   "(got %ld)",
                   g->wg_m);
    }
    if (gemm_wgmma_threads(g) > THREADS_MOST) {
        diag_error(d, file, spec_knob_mark(ks, "wg_m"),
                   "%s work-group of %ld work-items (128 to copy and 128 "
                   "per 64 rows of wg_m %ld) exceeds %ld",
                   g->wg_kernel, gemm_wgmma_threads(g), g->wg_m,
                   THREADS_MOST);
    }
    /* wgmma runs on compute capability 9.0 alone: its register file */
    long regs = g->wg_n / 2 + WGMMA_OTHER_REGS;
    long file_regs = target_facts(TARGET_SM90A)->registers_per_unit;
    if (gemm_wgmma_threads(g) * regs > file_regs) {
        diag_error(d, file, knob_blame(ks, "wg_m", "wg_n"),
                   "%s work-group of %ld work-items at %ld registers or "
                   "more (wg_n %ld / 2 accumulators each) exceeds the %ld "
                   "registers of a compute unit: lower wg_m or wg_n",
                   g->wg_kernel, gemm_wgmma_threads(g), regs, g->wg_n,
                   file_regs);
    }
    long bytes = gemm_wgmma_local(g);
    if (bytes > MMA_LOCAL_MAX) {
        diag_error(d, file, knob_blame(ks, "wg_stages", "wg_m"),
                   "%s needs %ld bytes of local memory (wg_stages %ld x "
                   "(wg_m %ld + wg_n %ld) x k %ld halves), more than %ld",
                   g->wg_kernel, bytes, g->wg_stages, g->wg_m, g->wg_n, g->k,
                   MMA_LOCAL_MAX);
    }
}

/* One #define whose comment is WHAT, of G's output, after BEFORE. */
static void out_define(struct plan *p, const struct gemm_mma *g,
                       const char *name, const char *before,
                       const char *what, long v)
{
    char comment[64];
    snprintf(comment, sizeof comment, "%s%s%s%s", before, what,
             what[0] != '\0' ? " " : "", g->out);
    plan_int(p, name, comment, v);
}

void gemm_mma_plan(struct plan *p, const struct gemm_mma *g)
{
    if (g->mma) {
        out_define(p, g, "TILE_M", "", "rows per work-group of", g->m);
    }
    if (g->mma) {
        out_define(p, g, "TILE_N", "", "columns per work-group of", g->n);
    }
    if (g->mma || g->wgmma) {
        plan_int(p, "TILE_K", "reduction step staged in local memory", g->k);
    }
    if (g->wgmma) {
        out_define(p, g, "WG_M", "wgmma: ", "rows per work-group of",
                   g->wg_m);
        out_define(p, g, "WG_N", "wgmma: ", "columns per work-group of",
                   g->wg_n);
        plan_int(p, "WG_STAGES", "wgmma: steps staged in local memory",
                 g->wg_stages);
        plan_int(p, "WG_TMA",
                 "wgmma: 1: K steps by the tensor memory accelerator",
                 g->tma);
        if (g->tma) {
            plan_int(p, "WG_MAP_SLOTS", "wgmma: slots of tensor maps",
                     WGMMA_MAP_SLOTS);
        }
    }
    if (g->mma) {
        out_define(p, g, "MMA_WARP_M", "", "rows per warp of", g->wm);
        out_define(p, g, "MMA_WARP_N", "", "columns per warp of", g->wn);
        plan_int(p, "MMA_STAGES", "steps staged in local memory",
                 g->stages);
        plan_int(p, "MMA_PENDING", "copies in flight while a step is used",
                 g->stages - 2);
    }
    plan_int(p, "MMA_K", "tensor cores: the reduction before the rank",
             g->reduce);
    out_define(p, g, "MMA_N", "tensor cores: ", "columns of", g->cols);
    plan_int(p, "MMA_RANK", "tensor cores: the rank, the last stretch",
             g->rank);
    plan_int(p, "MMA_RANK_PARTS", "tensor cores: partial sums a T element",
             g->rank_parts);
    plan_int(p, "MMA_W_NK", "tensor cores: 1: W, B stored n-major",
             g->w_nk);
    out_define(p, g, "MMA_OUT_ADD", "tensor cores: 1: add into ", "",
               g->out_add);
}
