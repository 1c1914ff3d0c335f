/* op_lora_backward.c - lora_backward: the gradients of a LoRA layer with
 * its base weight frozen, dA, dB and (input_grad) dX, for any M. */
#include "gemm_mma.h"
#include "lora_backward.h"

#include <stdlib.h>

/* The widest rank whose rows lora_bwd_tg (A, B^T) and lora_bwd_grad (G,
 * SCALE*T) stage in local memory whatever the shape: two of 4064 floats
 * and their padding (the defaults' vec 1 at the most rows per work-group
 * for the former, grad_threads 32 for the latter). */
#define RANK_MAX 4064L

/* The kernel that computes dX in a launch sequence: lora_bwd_dx (float
 * multiply-adds), lora_bwd_dx_mma or lora_bwd_dx_wgmma (tensor cores). */
enum dx_kernel { DX_NONE, DX_SIMT, DX_MMA, DX_WGMMA };

/* lora_bwd_dx_mma runs: engine mma, or wgmma's fewest rows. */
static int dx_runs_mma(const struct bwd *c)
{
    return bwd_dx_tensor(c) &&
           (c->engine == ENGINE_MMA || c->dx_mma_max > 0);
}

/* The kernel that computes dX at ROWS rows (0: any number). */
static enum dx_kernel dx_kernel_at(const struct bwd *c, long rows)
{
    if (!c->input_grad) {
        return DX_NONE;
    }
    if (!bwd_dx_tensor(c)) {
        return DX_SIMT;
    }
    if (c->engine == ENGINE_MMA || (rows != 0 && rows <= c->dx_mma_max)) {
        return DX_MMA;
    }
    return DX_WGMMA;
}

/* lora_bwd_dx reads W^T's tiles along K: from lora_bwd_wt's copy in the
 * scratch where W is K x N (in_out); out_in's W, N x K, is W^T itself.
 * The tensor cores' loaders read either layout as it lies. */
static int copies_wt(const struct bwd *c)
{
    return bwd_uses_w(c) && !bwd_dx_tensor(c) && c->layout == LAYOUT_IN_OUT;
}

/* lora_bwd_grad_mma's geometry: GM_WARPS warps of 32 columns each, the
 * rows in steps of GM_STEP through GM_STAGES stages of local memory; and
 * the widest rank whose accumulators (the rank's worth of floats per
 * work-item) it and lora_bwd_tg_mma keep in registers. */
#define GM_WARPS 4L
#define GM_STEP 32L
#define GM_STAGES 3L
#define GM_RANK_MOST 64L
/* lora_bwd_tg_mma's rows per work-group (a warp per 16). */
#define TM_M 64L

/* T, G, dA and dB on tensor cores: lora_bwd_tg_mma and lora_bwd_grad_mma
 * for lora_bwd_tg and lora_bwd_grad (f16 and bf16; float32's engine: mma
 * is dX's GEMM alone, on tf32). */
static int grad_tensor(const struct bwd *c)
{
    return c->engine != ENGINE_SIMT && c->dtype != DTYPE_F32 &&
           c->R <= GM_RANK_MOST;
}

/* lora_bwd_tg_mma's stretches of the reduction a row gets: up to 4 of
 * at least 1024 values, so that 4096 rows make some 512 groups of 4
 * warps; one, whole, where lora_bwd_tg writes T and G or lora_bwd_dx
 * (float multiply-adds) reads G. */
static long tg_stretches(const struct bwd *c)
{
    if (!grad_tensor(c) || (c->input_grad && !bwd_dx_tensor(c))) {
        return 1;
    }
    return min_l(4, pow2_floor(max_l(1, max_l(c->K, c->N) / 1024)));
}

/* lora_bwd_tg_mma's rows of the weight staged at once: 256, or 128 where
 * the rank makes that more than LOCAL_MAX; and a stretch's local memory
 * in bytes (a row per rank column, padded). */
static long tm_chunk(const struct bwd *c)
{
    long ranks = ceil_div(c->R, 8) * 8;
    return ranks * (256 + 32) * 2 <= LOCAL_MAX ? 256 : 128;
}

static long tm_stretch_local(const struct bwd *c)
{
    long chunk = tm_chunk(c), steps = chunk / 32;
    return ceil_div(c->R, 8) * 8 * (chunk + (steps % 2 == 0 ? 32 : 0)) * 2;
}

/* The stretches one lora_bwd_tg_mma work-group takes, a group of warps
 * each, adding them up before it stores (4, 2 or 1: as many as the local
 * memory a work-group may declare holds); the rest are work-groups
 * apart, TG_PARTS partial sums a row that the kernels after add. Only
 * where T's and G's reductions (K and N long) differ by at most 2x: else
 * the work-groups of the longer one would hold half the compute units
 * while the others idle, where smaller work-groups are handed out as
 * compute units free up. */
static long tm_split(const struct bwd *c)
{
    if (max_l(c->K, c->N) > 2 * min_l(c->K, c->N)) {
        return 1;
    }
    long split = tg_stretches(c);
    while (split > 1 &&
           split * tm_stretch_local(c) > c->dev->local_per_group) {
        split /= 2;
    }
    return split;
}

static long tg_parts(const struct bwd *c)
{
    return tg_stretches(c) / tm_split(c);
}

static long tm_local(const struct bwd *c)
{
    return tm_split(c) * tm_stretch_local(c);
}

/* lora_bwd_grad's (lora_bwd_grad_mma's) strips of columns of X and dY. */
static long grad_strips_all(const struct bwd *c)
{
    long w = grad_tensor(c) ? 32 * GM_WARPS : 32;
    return ceil_div(c->K, w) + ceil_div(c->N, w);
}

/* dX's GEMM on tensor cores (gemm_mma.h): [dY | G] * [W^T ; A^T], the
 * reduction over N, then r; G whole in the scratch. In_out's W (K x N)
 * and A (K x r) are W^T and A^T stored n-major. */
static void dx_gemm_mma(const struct bwd *c, struct gemm_mma *g)
{
    *g = (struct gemm_mma){
        .kernel = "lora_bwd_dx_mma", .wg_kernel = "lora_bwd_dx_wgmma",
        .out = "dX", .mma = dx_runs_mma(c),
        .wgmma = bwd_dx_tensor(c) && c->engine == ENGINE_WGMMA, .m = c->m,
        .n = c->n, .k = c->k, .wm = c->wm, .wn = c->wn,
        .stages = c->stages, .wg_m = c->wg_m, .wg_n = c->wg_n,
        .wg_stages = c->wg_stages,
        .reduce = c->N, .cols = c->K, .rank = c->R,
        .rank_parts = tg_parts(c),
        .w_nk = c->layout == LAYOUT_IN_OUT, .out_add = 0,
        .elem_bytes = (long)dtype_size(c->dtype),
        /* the accelerator's boxes: rows of one 128-byte swizzle line */
        .tma = bwd_dx_tensor(c) && c->engine == ENGINE_WGMMA && c->k == 64};
}

/* ---- local memory, in floats, as the templates declare it ------------- */

/* lora_bwd_grad: two steps of rows of G (SCALE*T), rows GRAD_LD floats
 * apart, 8, 4, 2 or 1 rows per work-item, the most within 6144 floats; or
 * the sums meeting at the end, 4 columns of the rank at a time where they
 * fit as well. */
static long grad_local(const struct bwd *c)
{
    long cl = 32 / c->grad_vec;
    long rw = c->grad_threads >= cl ? c->grad_threads / cl : 1;
    long ld = c->R % 4 == 0 && c->R % 8 != 4 ? c->R + 4 : c->R;
    long u = 8;
    while (u > 1 && 2 * rw * u * ld > 6144) {
        u /= 2;
    }
    long rq = c->R % 4 == 0 && rw * 32 * 4 <= 6144 ? 4 : 1;
    return max_l(2 * rw * u * ld, rw * 32 * rq);
}

/* Two stages of the dY and W^T tiles; without W, one stage of the G and
 * A^T tiles, r deep at most. */
static long dx_local(const struct bwd *c)
{
    long lda = c->m + c->pad, ldb = c->n + c->pad;
    long rank_k = c->R < c->k ? c->R : c->k;
    return c->base ? 2 * c->k * (lda + ldb) : rank_k * (lda + ldb);
}

static long dx_threads(const struct bwd *c)
{
    return (c->m / c->wm) * (c->n / c->wn);
}


/* ---- defaults --------------------------------------------------------- */

/* The widest loads that divide both K and N. */
static long widest_vec(long K, long N, long most)
{
    long v = most;
    while (v > 1 && (K % v != 0 || N % v != 0)) {
        v /= 2;
    }
    return v;
}

/* dX's tiles. Wide layers on GPUs: 128 x 128 with 16 x 8 per work-item,
 * N in steps of 8, no padding: the fastest of the tiles tried, ahead of
 * lora_forward's 64 x 128 of 8 x 8; padding costs here. Whatever the
 * tile, 128 or more sums per work-item take k 8 (fewer registers for
 * the stash), fewer k 16 (bench/RESULTS.md, "Training: lora_backward").
 * Narrow layers (K <= 2048): 64 x 64 of 4 x 4, which lora_bwd_fused
 * takes too (few rows; bench/RESULTS.md, "lora_backward in one
 * launch"). On CPUs 128 x 64 of 8 x 4, and 64 x 64 of 8 x 4 on narrow
 * layers, whose few rows a 128-row tile computes in vain (bench/
 * RESULTS.md, "lora_backward's dX tile on CPUs"). */
static void dx_defaults(struct kernel_spec *ks, const struct bwd *c)
{
    int cpu = ks->target == TARGET_CPU, narrow = c->K <= 2048;
    int wide = !cpu && !narrow;
    long n = cpu ? min_l(64, pow2_ceil(c->K))
                 : narrow ? min_l(64, pow2_ceil(c->K)) : 128;
    long m = wide || (cpu && !narrow) ? 128 : 64;
    long wn = cpu || narrow ? 4 : 8, wm = cpu ? 8 : narrow ? 4 : 16;
    if (spec_knob_set(ks, "n") || spec_knob_set(ks, "wn")) {
        n = (long)spec_knob(ks, "n");
        wn = (long)spec_knob(ks, "wn");
    }
    if (spec_knob_set(ks, "m") || spec_knob_set(ks, "wm")) {
        m = (long)spec_knob(ks, "m");
        wm = (long)spec_knob(ks, "wm");
    }
    spec_knob_default(ks, "n", n);
    spec_knob_default(ks, "wn", min_l(wn, n));
    spec_knob_default(ks, "m", m);
    spec_knob_default(ks, "wm", min_l(wm, m));
    if (wide) {
        struct bwd now;
        bwd_read(ks, &now);
        spec_knob_default(ks, "pad", 0);
        spec_knob_default(ks, "k", now.wm * now.wn >= 128 ? 8 : 16);
    }
}

/* lora_bwd_grad stages rows of G (SCALE*T), one per row of work-items at
 * least, each GRAD_LD floats: fewer work-items where a wide rank's
 * overflow local memory. */
static void grad_fit_defaults(struct kernel_spec *ks)
{
    struct bwd c;
    bwd_read(ks, &c);
    if (spec_knob_set(ks, "grad_threads")) {
        return;
    }
    while (c.grad_threads > 32 && 4 * grad_local(&c) > LOCAL_MAX) {
        c.grad_threads /= 2;
    }
    spec_knob_default(ks, "grad_threads", c.grad_threads);
}

/* The engine, then dX's tiles. Tensor cores where the target offers them
 * (CAP_MMA_SYNC_BF16_F16) for f16 and bf16 with K and N multiples of 8
 * (16-byte rows): dA and dB on them, and dX's GEMM with W; warpgroups for
 * that GEMM where the target offers wgmma too and K takes a tile of 64
 * columns. The tiles are lora_forward's: 128 x 128 in warps of
 * 64 x 64, N in steps of 64, 2 stages (64 KiB of local memory, which
 * every such device grants); on warpgroups 256 x 128 in 4 stages, and
 * lora_bwd_dx_mma's tiles up to half of such a tile's rows, which would
 * run its work-groups half empty. Float32 with W and K and N multiples
 * of 4: dX's GEMM on tf32 units (three products a product), in warps of
 * 64 x 32 (the accumulators and a step's sums apart fill the registers
 * at 64 x 64) and 128 KiB of local memory; on wide layers alone
 * (gemm_tf32_default: on the narrow ones lora_bwd_fused takes the few rows
 * with dX's float tile, and at K = N = 512 the tf32 tiles ran 512 rows
 * 1.46x slower: bench/RESULTS.md, "lora_backward float32's dX on tf32
 * tensor cores"). */
static void engine_defaults(struct kernel_spec *ks)
{
    struct bwd c;
    bwd_read(ks, &c);
    int f32 = ks->dtype == DTYPE_F32;
    if (target_offers(ks->target, CAP_MMA_SYNC_BF16_F16) && !f32 &&
        c.K % 8 == 0 && c.N % 8 == 0) {
        int wgmma = target_offers(ks->target, CAP_WGMMA) && bwd_uses_w(&c) &&
                    c.K >= 64;
        spec_knob_default(ks, "engine", wgmma ? ENGINE_WGMMA : ENGINE_MMA);
        bwd_read(ks, &c);
    }
    if (bwd_uses_w(&c) && gemm_tf32_default(ks, c.N, c.K)) {
        spec_knob_default(ks, "engine", ENGINE_MMA);
        bwd_read(ks, &c);
    }
    if (!bwd_dx_tensor(&c)) {
        return;
    }
    spec_knob_default(ks, "m", 128);
    spec_knob_default(ks, "n", min_l(128, pow2_ceil(max_l(c.K, 16))));
    spec_knob_default(ks, "k", min_l(64, pow2_ceil(max_l(c.N, 16))));
    bwd_read(ks, &c);
    spec_knob_default(ks, "wm", min_l(64, c.m));
    spec_knob_default(ks, "wn", min_l(f32 ? 32 : 64, c.n));
    if (c.engine == ENGINE_WGMMA) {
        spec_knob_default(ks, "dx_mma_max", c.wg_m / 2);
    }
}

static void bwd_defaults(struct kernel_spec *ks)
{
    struct bwd c;
    engine_defaults(ks);
    bwd_read(ks, &c);
    spec_knob_default(ks, "vec", widest_vec(c.K, c.N, 4));
    /* grad_vec * rank sums per work-item in lora_bwd_grad */
    spec_knob_default(ks, "grad_vec",
                 widest_vec(c.K, c.N, c.R <= 16 ? 4 : c.R <= 32 ? 2 : 1));
    /* CPUs (PoCL): small work-groups, whose items run one after another
     * (bench/RESULTS.md, "Training: lora_backward"). */
    if (ks->target == TARGET_CPU) {
        spec_knob_default(ks, "tg_rows", 16);
        spec_knob_default(ks, "tg_threads", 64);
        spec_knob_default(ks, "grad_threads", 32);
    }
    bwd_tg_defaults(ks);
    grad_fit_defaults(ks);
    if (grad_tensor(&c)) {
        /* lora_bwd_grad_mma: slices that bring 4096 rows to some 512
         * work-groups: the power of two of rows nearest that, four steps
         * at least. */
        long rows = 4096 * grad_strips_all(&c) / 512;
        long below = pow2_floor(rows);
        spec_knob_default(ks, "grad_rows",
                          max_l(4 * GM_STEP,
                                min_l(8192, rows - below < 2 * below - rows
                                                ? below
                                                : 2 * below)));
    } else {
        /* lora_bwd_grad: about 16 rows per strip of 32 columns, so that
         * 4096 rows make some 256 work-groups or more; a whole number of
         * 128-row steps, 128 to 8192 rows. */
        spec_knob_default(ks, "grad_rows",
                     min_l(8192, max_l(128, ceil_div(16 * (ceil_div(c.K, 32) +
                                                           ceil_div(c.N, 32)),
                                                     128) * 128)));
    }
    bwd_read(ks, &c);
    if (bwd_dx_tensor(&c)) {
        bwd_fused_defaults(ks);
        return;
    }
    dx_defaults(ks, &c);
    bwd_read(ks, &c);
    /* The dX tile's K step keeps loads whole vectors. */
    if (!spec_knob_set(ks, "k") && c.k % c.vec != 0) {
        spec_knob_default(ks, "k", c.vec * 4);
    }
    /* Warps of 4 x 8 work-items, as lora_main's (GPUs only). */
    lora_warp_n_default(ks, c.m, c.n, c.wm, c.wn);
    bwd_fused_defaults(ks);
}

/* ---- checks ----------------------------------------------------------- */

static void check_vec(const struct kernel_spec *ks, const struct bwd *c,
                      const char *key, long v, struct diags *d)
{
    if (v != 1 && v != 2 && v != 4) {
        diag_error(d, ks->file, spec_knob_mark(ks, key),
                   "%s must be 1, 2 or 4 (got %ld)", key, v);
    } else if (c->K % v != 0 || c->N % v != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, key),
                   "%s (%ld) must divide in_features (%ld) and out_features "
                   "(%ld)",
                   key, v, c->K, c->N);
    }
}

static void check_dx(const struct kernel_spec *ks, const struct bwd *c,
                     struct diags *d)
{
    const char *file = ks->file;
    if (c->wm > 16 || c->wn > 16) {
        const char *key = c->wm > 16 ? "wm" : "wn";
        diag_error(d, file, spec_knob_mark(ks, key),
                   "tile %s must be <= 16 (got %ld): a work-item's rows and "
                   "columns of dX (engine: mma takes a warp's, up to 128)",
                   key, c->wm > 16 ? c->wm : c->wn);
        return;
    }
    if (c->m % c->wm != 0) {
        diag_error(d, file, spec_knob_mark(ks, "wm"),
                   "wm (%ld) must divide m (%ld)", c->wm, c->m);
        return;
    }
    if (c->n % c->wn != 0) {
        diag_error(d, file, spec_knob_mark(ks, "wn"),
                   "wn (%ld) must divide n (%ld)", c->wn, c->n);
        return;
    }
    if (c->k % c->vec != 0) {
        diag_error(d, file, spec_knob_mark(ks, "k"),
                   "k (%ld) must be a multiple of vec (%ld)", c->k, c->vec);
        return;
    }
    if (c->n % c->vec != 0) {
        diag_error(d, file, spec_knob_mark(ks, "n"),
                   "n (%ld) must be a multiple of vec (%ld)", c->n, c->vec);
        return;
    }
    bwd_check_group(ks, "m", "lora_bwd_dx", dx_threads(c), dx_local(c), d);
    check_warp_n(ks, "lora_bwd_dx", c->warp_n, c->m, c->wm, c->n, c->wn, d);
}

/* What tensor cores need: 16-byte rows; wgmma, dX's GEMM with W and f16
 * or bf16; float32's (tf32), that GEMM; the GEMM's tiles (gemm_mma.h). */
static void check_tensor(const struct kernel_spec *ks, const struct bwd *c,
                         struct diags *d)
{
    const char *file = ks->file;
    struct mark at = spec_knob_mark(ks, "engine");
    const char *engine = lora_engine_choices[c->engine];
    if (c->engine == ENGINE_WGMMA && !bwd_uses_w(c)) {
        diag_error(d, file, at,
                   "engine: wgmma runs dX's GEMM with W on warpgroups: use "
                   "engine: mma (dA and dB on tensor cores) with %s",
                   c->input_grad ? "base: false" : "input_grad: false");
        return;
    }
    if (!gemm_mma_check_dtype(ks, engine, 1, d)) {
        return;
    }
    if (c->dtype == DTYPE_F32 && !bwd_uses_w(c)) {
        diag_error(d, file, at,
                   "engine: mma with dtype f32 runs dX's GEMM with W on tf32 "
                   "units, and %s leaves none: use engine: simt",
                   c->input_grad ? "base: false" : "input_grad: false");
        return;
    }
    long chunk = 16 / (long)dtype_size(c->dtype);
    if (c->K % chunk != 0 || c->N % chunk != 0) {
        diag_error(d, file, at,
                   "engine: %s needs in_features and out_features multiples "
                   "of %ld (got %ld, %ld): it copies 16-byte rows",
                   engine, chunk, c->K, c->N);
        return;
    }
    struct gemm_mma g;
    dx_gemm_mma(c, &g);
    if (g.mma) {
        gemm_mma_check(ks, &g, d);
    }
    if (g.wgmma) {
        gemm_wgmma_check(ks, &g, d);
    }
}

static void bwd_validate(const struct kernel_spec *ks, struct diags *d)
{
    struct bwd c;
    bwd_read(ks, &c);
    const char *file = ks->file;
    if (!lora_check_rank(ks, c.K, c.N, c.R, d)) {
        return;
    }
    if (c.R > RANK_MAX) {
        diag_error(d, file, spec_field_mark(ks, "rank"),
                   "rank must be <= %ld for lora_backward (got %ld): "
                   "lora_bwd_tg and lora_bwd_grad stage rows the rank wide "
                   "in %ld bytes of local memory",
                   RANK_MAX, c.R, LOCAL_MAX);
        return;
    }
    lora_check_alpha_scale(ks, d);
    int errors = d->count;
    check_vec(ks, &c, "vec", c.vec, d);
    check_vec(ks, &c, "grad_vec", c.grad_vec, d);
    if (d->count != errors) {
        return;
    }
    if (c.tg_threads % bwd_tg_items_m(&c) != 0) {
        diag_error(d, file, spec_knob_mark(ks, "tg_threads"),
                   "tg_threads (%ld) must be a multiple of the work-items "
                   "along tg_rows (%ld: %ld rows of %ld each)",
                   c.tg_threads, bwd_tg_items_m(&c), c.tg_rows,
                   bwd_tg_rows_per_item(&c));
        return;
    }
    bwd_check_group(ks, "tg_threads", "lora_bwd_tg", c.tg_threads,
                    bwd_tg_local(&c), d);
    if (!grad_tensor(&c)) {
        bwd_tg_check_stages(ks, &c, d);
    }
    bwd_check_group(ks, "grad_threads", "lora_bwd_grad", c.grad_threads,
                grad_local(&c), d);
    bwd_check_group(ks, "reduce_threads", "lora_bwd_reduce", c.reduce_threads,
                0, d);
    if (c.engine != ENGINE_SIMT) {
        check_tensor(ks, &c, d);
    }
    bwd_xpass_check(ks, &c, d);
    errors = d->count;
    if (!bwd_dx_tensor(&c) && (c.input_grad || bwd_fused(&c))) {
        check_dx(ks, &c, d);
    }
    if (bwd_fused(&c) && d->count == errors) {
        bwd_fused_check(ks, &c, d);
    }
}

/* ---- plan ------------------------------------------------------------- */

void bwd_plan_shape(const struct kernel_spec *ks, const struct bwd *c,
                       struct plan *p)
{
    plan_int(p, "IN_FEATURES", "K: columns of X and dX, rows of W and A",
             c->K);
    plan_int(p, "OUT_FEATURES", "N: columns of W, B and dY", c->N);
    plan_int(p, "RANK", "r: columns of A, rows of B", c->R);
    plan_float(p, "SCALE", "factor of (X*A)*B in the forward",
               spec_lora_scale(ks));
    plan_int(p, "HAS_BASE", "1: dX includes dY*W^T", bwd_uses_w(c));
    plan_int(p, "INPUT_GRAD", "1: dX is computed", c->input_grad);
    plan_int(p, "ACCUMULATE", "1: dA += ..., dB += ...", c->accumulate);
    lora_plan_layout(p, c->layout);
}

/* lora_bwd_dx's GEMM (gemm_simt.cl): dX = [dY | G] * [W^T ; A^T], N
 * then r; dY and W^T's copy staged only with W. */
static void plan_dx_gemm(const struct bwd *c, struct plan *p)
{
    const struct gemm_simt g = {
        .kernel = "lora_bwd_dx", .m = c->m, .n = c->n, .k = c->k,
        .wm = c->wm, .wn = c->wn, .pad = c->pad, .warp_n = c->warp_n,
        .reduce = c->N, .cols = c->K, .rank = c->R, .rank_parts = 1,
        .vec = c->vec, .stage_a = bwd_uses_w(c), .stage_b = bwd_uses_w(c),
        .out_add = 0, .out_fixed = 1};
    lora_plan_gemm_simt(p, &g);
}

static void plan_knobs(const struct bwd *c, struct plan *p)
{
    plan_int(p, "GRAD_ROWS", "rows per slice of partial sums", c->grad_rows);
    plan_int(p, "TG_PARTS", "partial sums of a row of T and of G",
             tg_parts(c));
    plan_int(p, "VEC", "elements per global load of X and dY", c->vec);
    if (!grad_tensor(c)) {
        plan_int(p, "TG_ROWS", "lora_bwd_tg: rows per work-group",
                 c->tg_rows);
        plan_int(p, "TG_THREADS", "lora_bwd_tg: work-items per work-group",
                 c->tg_threads);
        plan_int(p, "TG_XSTAGES", "lora_bwd_tg: steps of X, dY in local "
                 "memory", c->tg_stages);
        if (c->tg_stages) {
            plan_int(p, "TG_XPENDING", "lora_bwd_tg: steps copied ahead",
                     c->tg_stages - 2);
        }
        plan_int(p, "GRAD_THREADS",
                 "lora_bwd_grad: work-items per work-group", c->grad_threads);
        plan_int(p, "GRAD_VEC", "lora_bwd_grad: columns per work-item",
                 c->grad_vec);
        plan_int(p, "REDUCE_THREADS", "lora_bwd_reduce: work-items per group",
                 c->reduce_threads);
        bwd_xpass_plan(c, p);
    } else {
        plan_int(p, "GM_WARPS", "lora_bwd_grad_mma: warps of 32 columns",
                 GM_WARPS);
        plan_int(p, "GM_STEP", "lora_bwd_grad_mma: rows per stage",
                 GM_STEP);
        plan_int(p, "GM_STAGES", "lora_bwd_grad_mma: stages in local memory",
                 GM_STAGES);
        plan_int(p, "GM_PENDING", "lora_bwd_grad_mma: copies in flight",
                 GM_STAGES - 2);
        plan_int(p, "TM_M", "lora_bwd_tg_mma: rows per work-group", TM_M);
        plan_int(p, "TM_SPLIT",
                 "lora_bwd_tg_mma: stretches of the reduction a work-group "
                 "adds", tm_split(c));
        plan_int(p, "TM_CHUNK", "lora_bwd_tg_mma: weight rows staged at once",
                 tm_chunk(c));
        plan_int(p, "TM_LOCAL_BYTES", "local memory the plan counted",
                 tm_local(c));
    }
    struct gemm_mma g;
    dx_gemm_mma(c, &g);
    if (bwd_dx_tensor(c)) {
        gemm_mma_plan(p, &g);
    } else if (c->input_grad) {
        plan_dx_gemm(c, p);
    }
    if (bwd_fused(c)) {
        bwd_fused_plan(c, p);
    }
    if (!grad_tensor(c)) {
        plan_int(p, "TG_LOCAL_BYTES", "local memory the plan counted",
                 4 * (bwd_tg_local(c) + bwd_tg_ring(c)));
        plan_int(p, "GRAD_LOCAL_BYTES", "local memory the plan counted",
                 4 * grad_local(c));
    }
    if (g.mma) {
        plan_int(p, "MMA_LOCAL_BYTES", "local memory the plan counted",
                 gemm_mma_local(&g));
    }
    if (g.wgmma) {
        plan_int(p, "WG_LOCAL_BYTES", "local memory the plan counted",
                 gemm_wgmma_local(&g));
    }
    if (c->input_grad && !bwd_dx_tensor(c)) {
        plan_int(p, "DX_LOCAL_BYTES", "local memory the plan counted",
                 4 * dx_local(c));
    }
}

/* lora_bwd_dx_mma or lora_bwd_dx_wgmma: a work-group per tile of dX. */
static void launch_dx_tensor(const struct bwd *c, enum dx_kernel dx,
                             struct launch *l)
{
    static const char *const args[] = {"rows", "dy",      "w", "a",
                                       "dx",   "scratch", NULL};
    struct gemm_mma g;
    dx_gemm_mma(c, &g);
    int wg = dx == DX_WGMMA;
    l->kernel = wg ? "lora_bwd_dx_wgmma" : "lora_bwd_dx_mma";
    l->dims = 2;
    l->local[0] = (size_t)(wg ? gemm_wgmma_threads(&g) : gemm_mma_threads(&g));
    l->local[1] = 1;
    launch_fixed(l, 0, (size_t)ceil_div(c->K, wg ? c->wg_n : c->n));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)(wg ? c->wg_m : c->m));
    launch_args(l, args);
}

/* lora_bwd_dx: the register-tiled GEMM, after W^T's copy where it needs
 * one. */
static void launch_dx_simt(const struct bwd *c, struct path *pa)
{
    struct launch *l;
    if (copies_wt(c)) {
        l = &pa->launch[pa->n_launch++];
        static const char *const wt_args[] = {"rows", "w", "scratch", NULL};
        l->kernel = "lora_bwd_wt";
        l->dims = 2;
        l->local[0] = 32;
        l->local[1] = 8;
        launch_fixed(l, 0, (size_t)ceil_div(c->N, 32));
        launch_fixed(l, 1, (size_t)ceil_div(c->K, 32));
        launch_args(l, wt_args);
    }
    l = &pa->launch[pa->n_launch++];
    static const char *const dx_args[] = {"rows", "dy",      "a",
                                          "dx",   "scratch", NULL};
    static const char *const dx_w_args[] = {"rows", "dy", "w", "a",
                                            "dx", "scratch", NULL};
    l->kernel = "lora_bwd_dx";
    l->dims = 2;
    l->local[0] = (size_t)(c->n / c->wn);
    l->local[1] = (size_t)(c->m / c->wm);
    launch_fixed(l, 0, (size_t)ceil_div(c->K, c->n));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)c->m);
    launch_args(l, bwd_uses_w(c) && !copies_wt(c) ? dx_w_args : dx_args);
}

/* The scratch every launch sequence shares, for PA. */
static void seq_scratch(const struct bwd *c, struct path *pa)
{
    /* G and T per row (TG_PARTS partial sums each), then, from a
     * multiple of 4 floats, a slice of partial sums per grad_rows rows:
     * ceil(rows / grad_rows) slices fit in rows * ceil(slice / grad_rows)
     * + slice floats. */
    long slice = (c->K + c->N) * c->R;
    long parts_per_row = ceil_div(slice, c->grad_rows), parts_fixed = slice;
    /* or, before lora_bwd_grad's, lora_bwd_xpass's partials there */
    if (bwd_xpass(c)) {
        long xp_per_row, xp_fixed;
        bwd_xpass_scratch(c, &xp_per_row, &xp_fixed);
        parts_per_row = max_l(parts_per_row, xp_per_row);
        parts_fixed = max_l(parts_fixed, xp_fixed);
    }
    long per_row = 2 * c->R * tg_parts(c) + parts_per_row;
    long fixed = parts_fixed + 3;
    /* Then W^T for lora_bwd_dx (lora_bwd_wt), K x N, at a multiple of 4
     * floats. Every sequence finds it there. */
    if (copies_wt(c)) {
        fixed += c->K * c->N + 3;
    }
    /* Or lora_bwd_dx_wgmma's tensor maps (LORA_BWD_WG_MAPS), at a 64-byte
     * line past the partials' rounding to 4. */
    struct gemm_mma dx_g;
    dx_gemm_mma(c, &dx_g);
    if (dx_g.tma) {
        fixed += 3 + gemm_wgmma_map_floats(&dx_g);
    }
    pa->scratch_per = per_row;
    pa->scratch_sizes = SIZE_FIRST;
    pa->scratch_fixed = fixed;
}

/* One launch sequence: G and scale*T, dA and dB (their partial sums and
 * the sums of those with REDUCE), then dX with DX. */
static void bwd_path(const struct bwd *c, int reduce, enum dx_kernel dx,
                     struct path *pa)
{
    long slice = (c->K + c->N) * c->R;
    pa->n_launch = 0;
    struct launch *l = &pa->launch[pa->n_launch++];
    static const char *const tg_args[] = {"rows", "x",  "a",      "b",
                                          "dy",   "scratch", NULL};
    if (grad_tensor(c)) {
        l->kernel = "lora_bwd_tg_mma";
        l->dims = 2;
        l->local[0] = (size_t)(2 * TM_M * tm_split(c));
        l->local[1] = 1;
        launch_fixed(l, 0, (size_t)(2 * tg_parts(c)));
        launch_over(l, 1, 1, SIZE_FIRST, (size_t)TM_M);
    } else {
        /* T and G in work-groups apart: the second dimension; G alone
         * where lora_bwd_xpass computes T */
        l->kernel = "lora_bwd_tg";
        l->dims = 2;
        l->local[0] = (size_t)c->tg_threads;
        l->local[1] = 1;
        launch_over(l, 0, 1, SIZE_FIRST, (size_t)c->tg_rows);
        launch_fixed(l, 1, bwd_xpass(c) ? 1 : 2);
    }
    launch_args(l, tg_args);
    if (bwd_xpass(c)) {
        bwd_xpass_launches(c, pa);
    }

    l = &pa->launch[pa->n_launch++];
    static const char *const grad_args[] = {"rows", "x",       "dy", "da",
                                            "db",   "scratch", NULL};
    /* lora_bwd_grad_mma's last work-group of a strip adds its partials */
    static const char *const grad_mma_args[] = {
        "rows", "x", "dy", "da", "db", "scratch", "sync", NULL};
    l->kernel = grad_tensor(c) ? "lora_bwd_grad_mma" : "lora_bwd_grad";
    l->dims = 2;
    l->local[0] = (size_t)(grad_tensor(c) ? 32 * GM_WARPS : c->grad_threads);
    l->local[1] = 1;
    launch_fixed(l, 0, (size_t)(bwd_xpass(c) ? ceil_div(c->N, 32)
                                             : grad_strips_all(c)));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)c->grad_rows);
    launch_args(l, grad_tensor(c) ? grad_mma_args : grad_args);

    if (reduce && !grad_tensor(c)) {
        l = &pa->launch[pa->n_launch++];
        static const char *const reduce_args[] = {"rows", "da", "db",
                                                  "scratch", NULL};
        l->kernel = "lora_bwd_reduce";
        l->dims = 1;
        l->local[0] = (size_t)c->reduce_threads;
        launch_fixed(l, 0, (size_t)ceil_div(slice, c->reduce_threads));
        launch_args(l, reduce_args);
    }
    if (dx == DX_SIMT) {
        launch_dx_simt(c, pa);
    } else if (dx != DX_NONE) {
        launch_dx_tensor(c, dx, &pa->launch[pa->n_launch++]);
    }
    seq_scratch(c, pa);
}

/* What a path does, for the stub's comment: REDUCE, its partial sums of
 * dA and dB per grad_rows rows (on tensor cores, TENSOR, summed by each
 * strip's last work-group); DX, its kernel for dX. */
#define WHY_TG "G = scale*dY*B^T and scale*X*A, "
#define WHY_WHOLE "dA and dB by strips of columns over every row"
#define WHY_PARTS "partial sums of dA and dB per grad_rows rows by strips " \
                  "of columns"
#define WHY_LAST "each strip's summed by its last work-group"
#define WHY_WT ", W^T (with the base)"
#define WHY_DX ", then dX = [dY | G]*[W^T ; A^T]"
static const char *path_why(int reduce, int tensor, enum dx_kernel dx)
{
    static const char *const why[3][4] = {
        {WHY_TG "then dA and dB by strips of 32 columns over every row",
         WHY_TG WHY_WHOLE WHY_WT WHY_DX,
         WHY_TG WHY_WHOLE WHY_DX " on tensor cores",
         WHY_TG WHY_WHOLE WHY_DX " on warpgroups"},
        {WHY_TG WHY_PARTS ", then their sums",
         WHY_TG WHY_PARTS ", their sums" WHY_WT WHY_DX,
         WHY_TG WHY_PARTS ", their sums" WHY_DX " on tensor cores",
         WHY_TG WHY_PARTS ", their sums" WHY_DX " on warpgroups"},
        {WHY_TG "then " WHY_PARTS ", " WHY_LAST,
         WHY_TG WHY_PARTS " (" WHY_LAST ")" WHY_WT WHY_DX,
         WHY_TG WHY_PARTS " (" WHY_LAST ")" WHY_DX " on tensor cores",
         WHY_TG WHY_PARTS " (" WHY_LAST ")" WHY_DX " on warpgroups"}};
    return why[reduce ? 1 + (tensor != 0) : 0][dx];
}

/* The same with x_once (dX, if any, by lora_bwd_dx). */
#define WHY_X "G = scale*dY*B^T, then scale*X*A and dA from one read of X " \
              "(tensor cores) and their sums, then dB by strips of dY's "   \
              "columns "
static const char *xpass_why(int reduce, enum dx_kernel dx)
{
    static const char *const why[2][2] = {
        {WHY_X "over every row", WHY_X "over every row" WHY_WT WHY_DX},
        {WHY_X "per grad_rows rows, then their sums",
         WHY_X "per grad_rows rows, their sums" WHY_WT WHY_DX}};
    return why[reduce != 0][dx != DX_NONE];
}

/* The paths, fewest rows first: up to fused_max, lora_bwd_fused; past
 * it, a path ends where the kernels change, at grad_rows (past it,
 * partial sums of dA and dB and their sums) and, with engine: wgmma, at
 * dx_mma_max (up to it, dX on lora_bwd_dx_mma's tiles). */
static void bwd_paths(const struct bwd *c, struct plan *p)
{
    long ends[2];
    int n = 0;
    p->n_path = 0;
    if (bwd_fused(c)) {
        bwd_fused_paths(c, p);
    }
    if (c->grad_rows > c->fused_max) {
        ends[n++] = c->grad_rows;
    }
    if (dx_kernel_at(c, 0) == DX_WGMMA && c->dx_mma_max > c->fused_max &&
        c->dx_mma_max != c->grad_rows) {
        ends[n++] = c->dx_mma_max;
    }
    if (n == 2 && ends[1] < ends[0]) {
        long t = ends[0];
        ends[0] = ends[1];
        ends[1] = t;
    }
    for (int i = 0; i <= n; i++) {
        struct path *pa = &p->path[p->n_path++];
        long rows = i < n ? ends[i] : 0;
        int reduce = rows == 0 || rows > c->grad_rows;
        enum dx_kernel dx = dx_kernel_at(c, rows);
        pa->max_rows = rows;
        pa->why = bwd_xpass(c) ? xpass_why(reduce, dx)
                               : path_why(reduce, grad_tensor(c), dx);
        bwd_path(c, reduce, dx, pa);
    }
}

/* The handle's sync words: lora_bwd_fused's counters, and a counter per
 * strip of lora_bwd_grad_mma's. Their kernels run one after another and
 * leave every counter at 0, so they share the words. On NVIDIA the
 * kernels fence at device scope by membar.gl, which the variant then
 * needs. */
static void plan_sync(const struct kernel_spec *ks, const struct bwd *c,
                      struct plan *p)
{
    long words = bwd_fused(c) ? bwd_fused_sync_words(c) : 0;
    if (grad_tensor(c)) {
        words = max_l(words, grad_strips_all(c));
    }
    p->sync_words = words;
    if (words == 0) {
        return;
    }
    int membar = target_offers(ks->target, CAP_SHFL_SYNC);
    plan_int(p, "GRID_MEMBAR_PTX",
             membar ? "fences as PTX membar.gl" : "fences as mem_fence",
             membar);
    if (membar) {
        p->needs |= CAP_SHFL_SYNC;
    }
}

static void bwd_plan(const struct kernel_spec *ks, struct plan *p)
{
    struct bwd c;
    bwd_read(ks, &c);
    bwd_plan_shape(ks, &c, p);
    plan_knobs(&c, p);
    plan_storage(p, ks);
    /* The weights' shapes by layout are the buffers' to say. */
    plan_public_int(p, "IN_FEATURES", "K: columns of x and dx", c.K);
    plan_public_int(p, "OUT_FEATURES", "N: columns of dy", c.N);
    plan_public_int(p, "RANK", "r: the adapter's rank", c.R);
    plan_public_float(p, "SCALE", "factor of (x*a)*b in the forward",
                      spec_lora_scale(ks));

    plan_buffer(p, "x", c.K, 0, 0);
    plan_buffer_doc(p, "[rows][in_features]", "The forward's input");
    int out_in = c.layout == LAYOUT_OUT_IN;
    plan_buffer(p, "w", 0, c.K * c.N, !bwd_uses_w(&c));
    if (out_in) {
        plan_buffer_doc(p, "[out_features][in_features]",
                        "PyTorch's nn.Linear.weight as it is");
    } else {
        plan_buffer_doc(p, "[in_features][out_features]",
                        "PyTorch and PEFT keep the base layer's weight as "
                        "[out_features][in_features]: pass its transpose");
    }
    lora_plan_adapter_buffers(p, c.K, c.N, c.R, c.layout);
    plan_buffer(p, "dy", c.N, 0, 0);
    plan_buffer_doc(p, "[rows][out_features]", "The gradient of the output");
    plan_buffer(p, "dx", c.K, 0, !c.input_grad);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_doc(p, "[rows][in_features]", "The gradient of the input");
    plan_buffer(p, "da", 0, c.K * c.R, 0);
    plan_buffer_role(p, c.accumulate ? BUFFER_INOUT : BUFFER_OUT);
    plan_buffer_doc(p, out_in ? "[rank][in_features]" : "[in_features][rank]",
                    out_in ? "The gradient of a: lora_A.weight.grad"
                           : "The gradient of a; lora_A.weight.grad is its "
                             "transpose");
    plan_buffer(p, "db", 0, c.R * c.N, 0);
    plan_buffer_role(p, c.accumulate ? BUFFER_INOUT : BUFFER_OUT);
    plan_buffer_doc(p, out_in ? "[out_features][rank]" : "[rank][out_features]",
                    out_in ? "The gradient of b: lora_B.weight.grad"
                           : "The gradient of b; lora_B.weight.grad is its "
                             "transpose");

    /* Up to grad_rows rows lora_bwd_grad sums every row and writes dA and
     * dB itself: one launch fewer. */
    bwd_paths(&c, p);
    if (!grad_tensor(&c) && c.tg_stages) {
        p->needs |= CAP_CP_ASYNC;
    }
    if (c.engine != ENGINE_SIMT) {
        p->needs |= CAP_MMA_SYNC_BF16_F16 |
                    (c.engine == ENGINE_WGMMA ? CAP_WGMMA : 0);
    }
    plan_sync(ks, &c, p);
}

/* What `specl tune` searches, most important first. */
static const struct tune_axis bwd_tune_space[] = {
    /* dX's tile: SIMT and mma.sync's, then lora_bwd_dx_wgmma's (the
     * filter leaves out whichever the kernel's engine does not run) */
    {"m", "32 64 128"},
    {"n", "32 64 128"},
    {"wg_m", "64 128 192 256"},
    {"wg_n", "64 128 256"},
    {"wm", "4 8 16 64"},
    {"wn", "4 8 64"},
    {"k", "8 16 64"},
    {"wg_stages", "3 4 5 6"},
    /* tensor cores: f16 and bf16 (validate() rejects them elsewhere; the
     * tuner skips wgmma off compute capability 9.0), and mma.sync's K
     * steps in flight */
    {"engine", "simt mma wgmma"},
    {"stages", "2 3 4"},
    {"tg_rows", "4 8 16 32 64 128"},
    {"tg_threads", "64 128 256"},
    {"tg_stages", "0 3 4"},
    {"grad_threads", "32 64 128"},
    {"grad_rows", "128 512 4096"},
    {"x_once", "0 1"},
    {NULL, NULL},
};

/* The kernels each knob shapes: dX's GEMM (and, by its engine, which
 * kernels run), T and G's kernel, dA's and dB's. */
static const struct tune_part bwd_tune_parts[] = {
    {"dX", "m n wg_m wg_n wm wn k wg_stages engine stages"},
    {"T and G", "tg_rows tg_threads tg_stages"},
    {"dA and dB", "grad_threads grad_rows x_once"},
    {NULL, NULL},
};

/* Each is templates/NAME.cl; their shared part is lora_bwd_common.cl. */
static const char *const bwd_kernels[] = {
    "lora_bwd_tg", "lora_bwd_grad", "lora_bwd_reduce", "lora_bwd_wt",
    "lora_bwd_dx", "lora_bwd_dx_mma", "lora_bwd_dx_wgmma",
    "lora_bwd_tg_mma", "lora_bwd_grad_mma", "lora_bwd_fused",
    "lora_bwd_xpass", "lora_bwd_xsum", NULL};

const struct op_def op_lora_backward = {
    .name = "lora_backward",
    .summary = "dA, dB, dX of Y = X*W + scale*(X*A)*B with W frozen: "
               "LoRA training, rows at run time",
    .kernels = bwd_kernels,
    .example = "in_features=4096 out_features=4096 rank=16",
    .fields = bwd_fields,
    .n_fields = BWD_N_FIELDS,
    .knobs = bwd_knobs,
    .n_knobs = BWD_N_KNOBS,
    .defaults = bwd_defaults,
    .validate = bwd_validate,
    .plan = bwd_plan,
    .tune_space = bwd_tune_space,
    .tune_parts = bwd_tune_parts,
    .tune_space_rows = bwd_fused_tune_space,
    .few_rows_knobs = bwd_fused_knobs,
    .entry_rows = bwd_fused_entry_rows,
    .reference = bwd_reference,
    .naive = bwd_naive,
    .costs = bwd_costs,
    .error_bound = lora_error_bound,
    .bench_sizes = lora_bench_sizes,
    .shape_text = bwd_shape_text,
    .blas_peer = bwd_blas_peer,
};
