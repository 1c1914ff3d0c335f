/* lora_paths.c - lora_forward's plan: the #defines of the .cl prelude,
 * the buffers, and the paths, the launch sequences by rows, from a table
 * of the kinds of path (lora_path_kinds), with the scratch each takes. */
#include "lora_internal.h"

#include <assert.h>
#include <string.h>

/* The scratch PA's launches share, in floats (rows * per_row + fixed):
 * T's partial sums from lora_xa (rows x xa_split * r), rounded up to 4
 * where more follows; then the split path's partial sums of Y (slices x
 * rows x N, split_k.cl), or W's and B's padded copies and X's
 * (padded.cl); or lora_decode_split's partial sums of X*W and X*A
 * (decode_slices x rows x (N + r), lora_decode_part.cl), or
 * lora_decode_mma's (its band's slices x rows x (N + strips x r)); then
 * lora_wgmma's tensor maps. */
static void path_scratch(const struct lora *c, struct path *pa)
{
    long per_row = 0, fixed = 0, t_per_row = 0;
    for (int i = 0; i < pa->n_launch; i++) {
        const struct launch *l = &pa->launch[i];
        if (strcmp(l->kernel, "lora_xa") == 0 ||
            strcmp(l->kernel, "lora_xa_mma") == 0) {
            t_per_row = c->R * xa_split(c);
        } else if (strcmp(l->kernel, "lora_combine") == 0) {
            per_row += l->slices * c->N;
        } else if (strcmp(l->kernel, "lora_pad_w") == 0) {
            fixed += (w_rows_padded(c) + c->R) * (ceil_div(c->N, 4) * 4);
        } else if (strcmp(l->kernel, "lora_pad_x") == 0) {
            per_row += x_padded(c);
        } else if (strcmp(l->kernel, "lora_decode_sum") == 0) {
            per_row += c->decode_slices * (c->N + c->R);
        } else if (strcmp(l->kernel, "lora_decode_mma") == 0) {
            per_row += dmma_scratch_per_row(c, l->slices);
        }
    }
    if (t_per_row != 0 && (per_row != 0 || fixed != 0)) {
        fixed += 3;
    }
    /* lora_wgmma's tensor maps past the rest (LORA_WG_MAPS) */
    for (int i = 0; i < pa->n_launch; i++) {
        if (strncmp(pa->launch[i].kernel, "lora_wgmma", 10) == 0) {
            struct gemm_mma g;
            lora_gemm_mma(c, &g);
            fixed += gemm_wgmma_map_floats(&g);
            break;
        }
    }
    pa->scratch_per = t_per_row + per_row;
    pa->scratch_sizes = pa->scratch_per != 0 ? SIZE_FIRST : 0;
    pa->scratch_fixed = fixed;
}

/* lora_pad_x's and lora_pad_w's work-items per group: a row's padded
 * length in 4s, the longer of the two, up to 256. */
static long pad_threads(const struct lora *c)
{
    long most = ceil_div(x_padded(c) > c->N ? x_padded(c) : c->N, 4);
    return most < 256 ? pow2_ceil(most) : 256;
}

/* The shape and its scale, as lora_plan and the naive plan define them. */
void lora_plan_shape(const struct kernel_spec *ks, const struct lora *c,
                     struct plan *p)
{
    plan_int(p, "IN_FEATURES", "K: columns of X, rows of W and A", c->K);
    plan_int(p, "OUT_FEATURES", "N: columns of W, B and Y", c->N);
    plan_int(p, "RANK", "r: columns of A, rows of B", c->R);
    plan_float(p, "SCALE", "factor of (X*A)*B", spec_lora_scale(ks));
    plan_int(p, "HAS_BASE", "1: Y includes X*W", c->base);
    plan_int(p, "ACCUMULATE", "1: Y += result", c->accumulate);
    lora_plan_layout(p, c->layout);
}

/* lora_main's GEMM (gemm_simt.cl): Y = [X | T] * [W ; B], K then r;
 * T's elements the sums of lora_xa's partial sums. Y's stores take their
 * width at each call (lora_main_padded's is Y's own alignment). */
static void plan_main_gemm(const struct lora *c, struct plan *p)
{
    const struct gemm_simt g = {
        .kernel = "lora_main", .m = c->m, .n = c->n, .k = c->k,
        .wm = c->wm, .wn = c->wn, .pad = c->pad, .warp_n = c->warp_n,
        .reduce = c->K, .cols = c->N, .rank = c->R,
        .rank_parts = xa_split(c), .vec = c->vec, .stage_a = 1,
        .stage_b = c->base, .out_add = c->accumulate, .out_fixed = 0};
    lora_plan_gemm_simt(p, &g);
    /* a CPU runs a group's items in turn: the idle ones cost time */
    plan_int(p, "MAIN_SKIP_ROWS", "lora_main: no products past the rows",
             c->cpu);
}

/* The tiles of lora_main, lora_mma and lora_wgmma, and VEC. Each knob
 * only where its kernel runs: a knob that changes no code then leaves the
 * emitted source as it is, and `specl tune`, which merges configs by that
 * source, times it once. */
static void plan_tile_defines(const struct lora *c, struct plan *p)
{
    if (uses_main(c)) {
        plan_main_gemm(c, p);
    }
    if (uses_lora_mma(c)) {
        struct gemm_mma g;
        lora_gemm_mma(c, &g);
        gemm_mma_plan(p, &g);
    }
    plan_int(p, "VEC", "elements per global load or store", c->vec);
}

/* lora_xa's and lora_expand's geometry. */
static void plan_xa_defines(const struct lora *c, struct plan *p)
{
    plan_int(p, "XA_M", "lora_xa: rows per work-group", c->xa_m);
    plan_int(p, "XA_K", "lora_xa: work-items along K", c->xa_k);
    plan_int(p, "XA_W", "lora_xa: rows per work-item", xa_rows_per_item(c));
    plan_int(p, "XA_CHUNK", "lora_xa: rows of A staged at once", c->xa_chunk);
    plan_int(p, "EXPAND_N", "lora_expand: work-items along N",
             expand_threads(c));
    plan_int(p, "EXPAND_VEC", "lora_expand: columns per work-item",
             expand_vec(c));
    plan_int(p, "EXPAND_ROWS", "lora_expand: rows per work-group",
             expand_rows(c) < 1 ? 1 : expand_rows(c));
}

/* The split paths' slices and lora_combine. */
static void plan_split_defines(const struct lora *c, struct plan *p)
{
    int runs_main = uses_main(c);
    if (runs_main || uses_lora_mma(c)) {
        plan_int(p, "SPLIT_K",
                 runs_main ? "K slices of the split path's lora_main; 1: "
                             "no split path"
                 : uses_wgmma(c) ? "most K slices of lora_mma_split, "
                                   "lora_wgmma_split; 1: none"
                                 : "K slices of the split path's lora_mma; "
                                   "1: no split path",
                 split_slices_most(c));
    }
    if (uses_split(c) || uses_wg_split(c)) {
        plan_int(p, "COMBINE_N", "lora_combine: work-items along N",
                 row_threads(c, c->vec));
    }
}

/* lora_decode's geometry, and lora_decode_mma's, lora_decode_split's and
 * lora_decode_sum's where they run. */
static void plan_decode_defines(const struct lora *c, struct plan *p)
{
    plan_int(p, "DECODE_ROWS", "rows lora_decode handles at most",
             c->decode_rows);
    plan_int(p, "DECODE_N", "lora_decode: work-items along N", c->decode_n);
    plan_int(p, "DECODE_K", "lora_decode: work-items along the reduction",
             c->decode_k);
    plan_int(p, "DECODE_VEC", "lora_decode: columns per work-item",
             decode_vec(c));
    if (uses_decode_mma(c)) {
        plan_int(p, "DMMA_ROWS", "lora_decode_mma: rows per work-group",
                 dmma_rows(c));
        plan_int(p, "DMMA_COLS", "lora_decode_mma: columns of W per "
                 "work-group", c->decode_cols);
        plan_int(p, "DMMA_RANK_COLS", "lora_decode_mma: columns of A's "
                 "strip (rank rounded up)", dmma_rank_cols(c));
        plan_int(p, "DMMA_WARPS", "lora_decode_mma: warps per work-group",
                 c->decode_warps);
        plan_int(p, "DMMA_STAGES", "lora_decode_mma: K steps staged per warp",
                 dmma_stages(c));
        plan_int(p, "DMMA_PENDING", "copies in flight while a step is used",
                 dmma_stages(c) - 2);
        /* its strips' counters: fences of device scope (NVIDIA alone
         * runs it) */
        plan_int(p, "GRID_MEMBAR_PTX", "fences as PTX membar.gl", 1);
    }
    if (uses_decode_split(c)) {
        plan_int(p, "DSPLIT_ROWS", "lora_decode_split: rows per work-group",
                 dsplit_rows(c));
        plan_int(p, "DSPLIT_COLS", "lora_decode_split: columns (work-items) "
                 "per work-group", c->decode_cols);
    }
    if (uses_decode_split(c)) {
        plan_int(p, "DSUM_SLICES", "slices of K summed by lora_decode_sum",
                 c->decode_slices);
        plan_int(p, "DSUM_N", "lora_decode_sum: work-items along N",
                 row_threads(c, c->vec));
    }
}

/* lora_pad_x's and lora_pad_w's, and lora_delta's, where they run. */
static void plan_pad_delta_defines(const struct lora *c, struct plan *p)
{
    if (pads_x(c) || pads_w(c)) {
        plan_int(p, "PAD_THREADS", "lora_pad_x, lora_pad_w: work-items "
                 "per work-group", pad_threads(c));
    }
    if (uses_delta(c)) {
        plan_int(p, "DELTA_ROWS", "lora_delta: rows per work-group",
                 c->delta_rows);
        plan_int(p, "DELTA_THREADS", "lora_delta: work-items per work-group",
                 c->delta_threads);
    }
}

/* The .cl prelude's #defines (the local memory the kernels take follows
 * the launches: plan_local_bytes) and NAME.h's constants. */
static void plan_prelude(const struct kernel_spec *ks, const struct lora *c,
                         struct plan *p)
{
    lora_plan_shape(ks, c, p);
    plan_int(p, "XA_INLINE", "1: lora_main computes X*A itself",
             c->xa == XA_INLINE);
    plan_tile_defines(c, p);
    plan_xa_defines(c, p);
    plan_split_defines(c, p);
    plan_decode_defines(c, p);
    plan_pad_delta_defines(c, p);
    plan_storage(p, ks);

    /* The weights' shapes by layout are the buffers' to say. */
    plan_public_int(p, "IN_FEATURES", "K: columns of x", c->K);
    plan_public_int(p, "OUT_FEATURES", "N: columns of y", c->N);
    plan_public_int(p, "RANK", "r: the adapter's rank", c->R);
    plan_public_float(p, "SCALE", "factor of (x*a)*b", spec_lora_scale(ks));
}

/* lora_xa, or on tensor cores (f16, bf16) lora_xa_mma (a warp per 16
 * rows), with
 * XA_SPLIT work-groups along K: as many partial sums of T. */
static void launch_xa(const struct lora *c, struct launch *l)
{
    static const char *const args[] = {"rows", "x", "a", "scratch", NULL};
    l->dims = 2;
    if (xa_on_mma(c)) {
        l->kernel = "lora_xa_mma";
        l->local[0] = (size_t)(2 * c->xa_m);
        l->local[1] = 1;
    } else {
        l->kernel = "lora_xa";
        l->local[0] = (size_t)c->xa_k;
        l->local[1] = (size_t)(c->xa_m / xa_rows_per_item(c));
    }
    launch_fixed(l, 0, (size_t)xa_split(c));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)c->xa_m);
    launch_args(l, args);
}

/* lora_expand and lora_combine: THREADS work-items along N, WIDTH columns
 * each, ROWS rows per work-group. */
static void launch_rows(const struct lora *c, struct launch *l,
                        const char *kernel, long threads, long width,
                        long rows, const char *const *args)
{
    l->kernel = kernel;
    l->dims = 2;
    l->local[0] = (size_t)threads;
    l->local[1] = 1;
    launch_fixed(l, 0, (size_t)ceil_div(c->N, threads * width));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)rows);
    launch_args(l, args);
}

static void launch_expand(const struct lora *c, struct launch *l)
{
    static const char *const args[] = {"rows", "b", "y", "scratch", NULL};
    launch_rows(c, l, "lora_expand", expand_threads(c), expand_vec(c),
                expand_rows(c), args);
}

/* lora_main, or with SLICES > 1 lora_main_split over that many slices of
 * K: a work-group per slice and tile; lora_main_padded (SLICES 1, the
 * scratch holding the copies). */
static void launch_main(const struct lora *c, struct launch *l, long slices,
                        int padded)
{
    int n = 0;
    l->kernel = padded        ? "lora_main_padded"
                : slices > 1 ? "lora_main_split"
                             : "lora_main";
    l->dims = 2;
    l->local[0] = (size_t)(c->n / c->wn);
    l->local[1] = (size_t)(c->m / c->wm);
    launch_fixed(l, 0, (size_t)(ceil_div(c->N, c->n) * slices));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)c->m);
    l->args[n++] = "rows";
    l->args[n++] = "x"; /* lora_main runs with base or inline X*A */
    if (c->base) {
        l->args[n++] = "w";
    }
    if (c->xa == XA_INLINE) {
        l->args[n++] = "a";
    }
    l->args[n++] = "b";
    l->args[n++] = "y";
    if (c->xa == XA_PREPASS) {
        l->args[n++] = "scratch";
    }
    l->args[n] = NULL;
}

/* lora_pad_x: a work-item per 4 elements of a row of X's copy, a row of
 * work-groups per row; lora_pad_w: the same over W's rows (K, or to a
 * whole K step) and B's R. */
static void launch_pad(const struct lora *c, struct launch *l, int x)
{
    static const char *const x_args[] = {"rows", "x", "scratch", NULL};
    static const char *const w_args[] = {"rows", "w", "b", "scratch", NULL};
    long threads = pad_threads(c);
    l->kernel = x ? "lora_pad_x" : "lora_pad_w";
    l->dims = 2;
    l->local[0] = (size_t)threads;
    l->local[1] = 1;
    launch_fixed(l, 0,
                 (size_t)ceil_div(ceil_div(x ? x_padded(c) : c->N, 4),
                                  threads));
    if (x) {
        launch_over(l, 1, 1, SIZE_FIRST, 1);
    } else {
        launch_fixed(l, 1, (size_t)(w_rows_padded(c) + c->R));
    }
    launch_args(l, x ? x_args : w_args);
}

/* lora_combine: the sum of SLICES slices' partial sums. */
static void launch_combine(const struct lora *c, struct launch *l,
                           long slices)
{
    static const char *const args[] = {"rows", "slices", "y", "scratch",
                                       NULL};
    launch_rows(c, l, "lora_combine", row_threads(c, c->vec), c->vec, 1,
                args);
    l->slices = (int)slices;
}

/* lora_mma (with WGMMA lora_wgmma), or with SLICES > 1 lora_mma_split
 * (lora_wgmma_split) over that many slices of K: a work-group per slice
 * and tile. */
static void launch_mma(const struct lora *c, struct launch *l, long slices,
                       int wgmma)
{
    int n = 0;
    l->kernel = slices > 1 ? (wgmma ? "lora_wgmma_split" : "lora_mma_split")
                : wgmma    ? "lora_wgmma"
                           : "lora_mma";
    l->dims = 2;
    l->local[0] = (size_t)(wgmma ? wgmma_threads(c) : mma_threads(c));
    l->local[1] = 1;
    launch_fixed(l, 0,
                 (size_t)(ceil_div(c->N, wgmma ? c->wg_n : c->n) * slices));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)(wgmma ? c->wg_m : c->m));
    l->args[n++] = "rows";
    l->args[n++] = "x";
    l->args[n++] = "w";
    l->args[n++] = "b";
    l->args[n++] = "y";
    l->args[n++] = "scratch";
    l->args[n] = NULL;
}

static void launch_decode(const struct lora *c, struct launch *l)
{
    int n = 0;
    l->kernel = "lora_decode";
    l->dims = 2;
    l->local[0] = (size_t)c->decode_n;
    l->local[1] = (size_t)c->decode_k;
    launch_fixed(l, 0, (size_t)ceil_div(c->N, c->decode_n * decode_vec(c)));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)c->decode_rows);
    l->args[n++] = "rows";
    l->args[n++] = "x";
    if (c->base) {
        l->args[n++] = "w";
    }
    l->args[n++] = "a";
    l->args[n++] = "b";
    l->args[n++] = "y";
    l->args[n] = NULL;
}

/* lora_decode_mma (over SLICES slices of K) or lora_decode_split (over
 * decode_slices): a work-group per slice of K and strip of W
 * (lora_decode_split one more for A's), per dmma_rows or dsplit_rows
 * rows. */
static void launch_decode_parts(const struct lora *c, struct launch *l,
                                long slices)
{
    static const char *const args[] = {"rows", "x", "w", "a", "scratch",
                                       NULL};
    static const char *const mma_args[] = {"rows", "slices", "x", "w", "a",
                                           "b", "y", "scratch", "sync", NULL};
    int mma = uses_decode_mma(c);
    l->kernel = mma ? "lora_decode_mma" : "lora_decode_split";
    l->dims = 2;
    l->local[0] = (size_t)(mma ? 32 * c->decode_warps : c->decode_cols);
    l->local[1] = 1;
    l->slices = (int)(mma ? slices : c->decode_slices);
    launch_fixed(l, 0, (size_t)(decode_strips(c) * l->slices));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)(mma ? dmma_rows(c) : dsplit_rows(c)));
    launch_args(l, mma ? mma_args : args);
}

static void launch_decode_sum(const struct lora *c, struct launch *l)
{
    static const char *const args[] = {"rows", "b", "y", "scratch", NULL};
    launch_rows(c, l, "lora_decode_sum", row_threads(c, c->vec), c->vec, 1,
                args);
}

/* lora_delta over SLICES work-groups along N. */
static void launch_delta(const struct lora *c, struct launch *l, long slices)
{
    static const char *const args[] = {"rows", "x", "a", "b", "y", NULL};
    l->kernel = "lora_delta";
    l->dims = 2;
    l->local[0] = (size_t)c->delta_threads;
    l->local[1] = 1;
    launch_fixed(l, 0, (size_t)slices);
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)c->delta_rows);
    launch_args(l, args);
}

/* The local memory of each kernel P launches, as the checks above count
 * it: the templates #error when their arrays take another size, so the
 * limits checked here are the ones the kernels meet. */
static void plan_local_bytes(const struct lora *c, struct plan *p)
{
    static const char *const kernel[] = {"lora_main", "lora_xa",
                                         "lora_expand", "lora_decode",
                                         "lora_mma", "lora_xa_mma",
                                         "lora_delta", "lora_decode_mma",
                                         "lora_decode_split", "lora_wgmma"};
    /* lora_combine uses none. */
    static const char *const name[] = {"MAIN_LOCAL_BYTES", "XA_LOCAL_BYTES",
                                       "EXPAND_LOCAL_BYTES",
                                       "DECODE_LOCAL_BYTES",
                                       "MMA_LOCAL_BYTES",
                                       "XA_MMA_LOCAL_BYTES",
                                       "DELTA_LOCAL_BYTES",
                                       "DMMA_LOCAL_BYTES",
                                       "DSPLIT_LOCAL_BYTES",
                                       "WG_LOCAL_BYTES"};
    long bytes[] = {main_local(c, c->xa), xa_local(c),
                    4 * expand_rows(c) * c->R, decode_local(c), mma_local(c),
                    xa_mma_local(c), delta_local(c), dmma_local(c),
                    dsplit_local(c), wgmma_local(c)};
    for (size_t k = 0; k < sizeof kernel / sizeof kernel[0]; k++) {
        /* lora_main_split and lora_main_padded share main_tiles.cl */
        int main_tiles = k == 0 && (plan_launches(p, "lora_main_split") ||
                                    plan_launches(p, "lora_main_padded"));
        if (plan_launches(p, kernel[k]) || main_tiles) {
            plan_int(p, name[k], "local memory the plan counted", bytes[k]);
        }
    }
}

/* The most rows the paths of P so far take. */
static long rows_before(const struct plan *p)
{
    long most = 0;
    for (int i = 0; i < p->n_path; i++) {
        most = p->path[i].max_rows > most ? p->path[i].max_rows : most;
    }
    return most;
}

/* A new path of P, empty, up to MAX_ROWS (0: any rows). */
static struct path *add_path(struct plan *p, long max_rows, const char *why)
{
    assert(p->n_path < SPECL_MAX_PATHS);
    struct path *pa = &p->path[p->n_path++];
    pa->max_rows = max_rows;
    pa->n_launch = 0;
    pa->why = why;
    return pa;
}

/* The next launch of PA. */
static struct launch *add_launch(struct path *pa)
{
    return &pa->launch[pa->n_launch++];
}

/* The buffers of the host API, in order: x, w, a, b, y. */
static void plan_buffers(const struct lora *c, struct plan *p)
{
    plan_buffer(p, "x", c->K, 0, 0);
    plan_buffer_doc(p, "[rows][in_features]", NULL);
    plan_buffer(p, "w", 0, c->K * c->N, !c->base);
    if (c->layout == LAYOUT_OUT_IN) {
        plan_buffer_doc(p, "[out_features][in_features]",
                        "PyTorch's nn.Linear.weight as it is");
    } else {
        plan_buffer_doc(p, "[in_features][out_features]",
                        "PyTorch and PEFT keep the base layer's weight as "
                        "[out_features][in_features]: pass its transpose "
                        "(transposed once, when the weights are loaded)");
    }
    lora_plan_adapter_buffers(p, c->K, c->N, c->R, c->layout);
    plan_buffer(p, "y", c->N, 0, 0);
    plan_buffer_role(p, c->accumulate ? BUFFER_INOUT : BUFFER_OUT);
    plan_buffer_doc(p, "[rows][out_features]", NULL);
}

/* ---- the paths, as a table ------------------------------------------
 * A plan's paths are kinds of the table below, taken in its order, fewest
 * rows first: each kind says where it applies and the rows it takes (its
 * crossovers are knobs: decode_max, decode_mma_max or decode_split_max,
 * delta_max, split_max, wg_split_max, mma_max, pad_rows), what it does,
 * and its launches. A kind adds no path, one, or one per band of rows
 * (the split paths: K's slices halve as the rows grow). */

/* Where a kind of path applies and the rows it takes. */
enum path_where {
    AT_DECODE,         /* lora_decode, to decode_max */
    AT_DECODE_MMA,     /* lora_decode_mma, to decode_mma_max */
    AT_DECODE_SPLIT,   /* lora_decode_split, to decode_split_max */
    AT_DELTA_SPLIT,    /* lora_delta over slices of N */
    AT_DELTA,          /* lora_delta, to delta_max */
    AT_SPLIT,          /* the split path's bands, to split_max */
    AT_WG_SPLIT,       /* lora_wgmma_split's bands, to wg_split_max */
    AT_MMA_TILES,      /* lora_mma's tiles before lora_wgmma's, to mma_max */
    AT_TILED_MMA,      /* the rows past every other: tensor cores */
    AT_TILED_MMA_DELTA, /* the same without W */
    AT_TILED_EXPAND,   /* lora_expand */
    AT_UNPADDED,       /* below pad_rows, X, W and B as they are */
    AT_PADDED,         /* lora_main over padded copies */
    AT_TILED_XA,       /* lora_xa, then lora_main */
    AT_TILED_INLINE,   /* lora_main alone */
};

/* A path's launches, with K in SLICES slices. */
typedef void path_launches(const struct lora *c, struct path *pa,
                           long slices);

struct path_kind {
    const char *why;
    enum path_where where;
    path_launches *launches;
};

/* One path up to ROWS, K whole, where WHERE. */
static int one(long upto[SPLIT_BANDS], long slices[SPLIT_BANDS], int where,
               long rows)
{
    upto[0] = rows;
    slices[0] = 1;
    return where != 0;
}

/* The path that takes the rows past every other: which GEMM runs it. */
enum tiled { TILED_MMA, TILED_EXPAND, TILED_PADDED, TILED_XA, TILED_INLINE };

static enum tiled tiled_by(const struct lora *c)
{
    return uses_mma(c)              ? TILED_MMA
           : uses_expand(c)         ? TILED_EXPAND
           : uses_padded(c)         ? TILED_PADDED
           : c->xa == XA_PREPASS    ? TILED_XA
                                    : TILED_INLINE;
}

/* How many paths of kind W P takes next (0 to SPLIT_BANDS): for each, the
 * most rows (0: any) into UPTO and K's slices into SLICES. */
static int path_bands(const struct lora *c, const struct plan *p,
                      enum path_where w, long upto[SPLIT_BANDS],
                      long slices[SPLIT_BANDS])
{
    enum tiled tiled = tiled_by(c);
    switch (w) {
    case AT_DECODE: /* decode_max: 0 runs no lora_decode */
        return one(upto, slices, decode_upto(c) > 0, c->decode_max);
    case AT_DECODE_MMA:
        return dmma_bands(c, slices, upto);
    case AT_DECODE_SPLIT:
        return one(upto, slices, !uses_decode_mma(c) && uses_decode_split(c),
                   few_upto(c));
    case AT_DELTA_SPLIT: {
        int n = one(upto, slices, delta_split_upto(c) > 0,
                    delta_split_upto(c));
        slices[0] = c->delta_split;
        return n;
    }
    case AT_DELTA:
        return one(upto, slices, uses_delta(c), c->delta_max);
    case AT_SPLIT:
        return split_bands(c, slices, upto);
    case AT_WG_SPLIT:
        return wg_split_bands(c, slices, upto);
    case AT_MMA_TILES: /* where no path before takes those rows */
        return one(upto, slices, uses_wgmma(c) && c->mma_max > rows_before(p),
                   c->mma_max);
    case AT_TILED_MMA:
        return one(upto, slices, tiled == TILED_MMA && c->base, 0);
    case AT_TILED_MMA_DELTA:
        return one(upto, slices, tiled == TILED_MMA && !c->base, 0);
    case AT_TILED_EXPAND:
        return one(upto, slices, tiled == TILED_EXPAND, 0);
    case AT_UNPADDED: /* where no path before takes those rows */
        return one(upto, slices,
                   tiled == TILED_PADDED && c->pad_rows - 1 > rows_before(p),
                   c->pad_rows - 1);
    case AT_PADDED:
        return one(upto, slices, tiled == TILED_PADDED, 0);
    case AT_TILED_XA:
        return one(upto, slices, tiled == TILED_XA, 0);
    case AT_TILED_INLINE:
        return one(upto, slices, tiled == TILED_INLINE, 0);
    }
    return 0;
}

static void decode_launches(const struct lora *c, struct path *pa,
                            long slices)
{
    (void)slices;
    launch_decode(c, add_launch(pa));
}

static void decode_parts_launches(const struct lora *c, struct path *pa,
                                  long slices)
{
    launch_decode_parts(c, add_launch(pa), slices);
    if (!uses_decode_mma(c)) {
        launch_decode_sum(c, add_launch(pa));
    }
}

static void delta_launches(const struct lora *c, struct path *pa,
                           long slices)
{
    launch_delta(c, add_launch(pa), slices);
}

static void split_launches(const struct lora *c, struct path *pa,
                           long slices)
{
    launch_xa(c, add_launch(pa));
    if (uses_mma(c)) {
        launch_mma(c, add_launch(pa), slices, 0);
    } else {
        launch_main(c, add_launch(pa), slices, 0);
    }
    launch_combine(c, add_launch(pa), slices);
}

static void wg_split_launches(const struct lora *c, struct path *pa,
                              long slices)
{
    launch_xa(c, add_launch(pa));
    launch_mma(c, add_launch(pa), slices, 1);
    launch_combine(c, add_launch(pa), slices);
}

static void mma_tiles_launches(const struct lora *c, struct path *pa,
                               long slices)
{
    launch_xa(c, add_launch(pa));
    launch_mma(c, add_launch(pa), slices, 0);
}

static void tiled_mma_launches(const struct lora *c, struct path *pa,
                               long slices)
{
    launch_xa(c, add_launch(pa));
    launch_mma(c, add_launch(pa), slices, uses_wgmma(c));
}

static void expand_launches(const struct lora *c, struct path *pa,
                            long slices)
{
    (void)slices;
    launch_xa(c, add_launch(pa));
    launch_expand(c, add_launch(pa));
}

static void xa_main_launches(const struct lora *c, struct path *pa,
                             long slices)
{
    launch_xa(c, add_launch(pa));
    launch_main(c, add_launch(pa), slices, 0);
}

static void padded_launches(const struct lora *c, struct path *pa,
                            long slices)
{
    (void)slices;
    launch_xa(c, add_launch(pa));
    if (pads_w(c)) {
        launch_pad(c, add_launch(pa), 0);
    }
    if (pads_x(c)) {
        launch_pad(c, add_launch(pa), 1);
    }
    launch_main(c, add_launch(pa), 1, 1);
}

static void inline_launches(const struct lora *c, struct path *pa,
                            long slices)
{
    launch_main(c, add_launch(pa), slices, 0);
}

static const struct path_kind lora_path_kinds[] = {
    {"few rows, one launch: a work-group per decode_rows rows streams W, "
     "T = scale*X*A alongside",
     AT_DECODE, decode_launches},
    {"few rows on tensor cores, one launch: X*W and X*A over slices of K "
     "in strips (fewer as the rows grow), the last group of a strip "
     "summing them with T*B",
     AT_DECODE_MMA, decode_parts_launches},
    {"few rows: X*W and X*A over slices of K, a work-item per column, then "
     "their sums with T*B",
     AT_DECODE_SPLIT, decode_parts_launches},
    {"fewer rows without W, one launch: a work-group per delta_rows rows "
     "and slice of N computes their T = scale*X*A on chip, then its slice "
     "of Y = T*B",
     AT_DELTA_SPLIT, delta_launches},
    {"few rows without W, one launch: a work-group per delta_rows rows "
     "computes their T = scale*X*A on chip, then Y = T*B",
     AT_DELTA, delta_launches},
    {"few rows for the tiles: T = scale*X*A, the tiled GEMM over slices of "
     "K, then their sum",
     AT_SPLIT, split_launches},
    {"few rows for lora_wgmma's tiles: T = scale*X*A, the GEMM on "
     "warpgroups over slices of K, then their sum",
     AT_WG_SPLIT, wg_split_launches},
    {"rows that lora_wgmma's tiles would leave part empty: T = scale*X*A, "
     "then [X | T]*[W ; B] on lora_mma's tiles",
     AT_MMA_TILES, mma_tiles_launches},
    {"T = scale*X*A, then [X | T]*[W ; B] on tensor cores", AT_TILED_MMA,
     tiled_mma_launches},
    {"T = scale*X*A on tensor cores, then Y = T*B row by row",
     AT_TILED_MMA_DELTA, expand_launches},
    {"T = scale*X*A, then Y = T*B row by row", AT_TILED_EXPAND,
     expand_launches},
    {"T = scale*X*A, then the tiled GEMM over [X | T]", AT_UNPADDED,
     xa_main_launches},
    {"T = scale*X*A, copies of X, W and B with rows padded to multiples of "
     "4, then the tiled GEMM over them",
     AT_PADDED, padded_launches},
    {"T = scale*X*A, then the tiled GEMM over [X | T]", AT_TILED_XA,
     xa_main_launches},
    {"tiled GEMM, X*A computed alongside", AT_TILED_INLINE,
     inline_launches},
};

/* P's paths, kind by kind. */
static void add_paths(const struct lora *c, struct plan *p)
{
    for (size_t k = 0; k < sizeof lora_path_kinds / sizeof lora_path_kinds[0];
         k++) {
        const struct path_kind *kind = &lora_path_kinds[k];
        long upto[SPLIT_BANDS], slices[SPLIT_BANDS];
        int n = path_bands(c, p, kind->where, upto, slices);
        for (int i = 0; i < n; i++) {
            kind->launches(c, add_path(p, upto[i], kind->why), slices[i]);
        }
    }
}

/* The prelude, buffers and paths of lora_plan, fewest rows first. */
static void lora_plan_launches(const struct kernel_spec *ks, struct plan *p)
{
    struct lora c;
    lora_read(ks, &c);
    plan_prelude(ks, &c, p);
    plan_buffers(&c, p);
    p->n_path = 0;
    add_paths(&c, p);
    plan_local_bytes(&c, p);
    if (uses_decode_mma(&c)) {
        /* a counter per strip and block of rows lora_decode_mma takes */
        p->sync_words = decode_strips(&c) * ceil_div(few_upto(&c),
                                                     dmma_rows(&c));
    }
    if (uses_mma(&c)) {
        p->needs |= CAP_MMA_SYNC_BF16_F16 | (uses_wgmma(&c) ? CAP_WGMMA : 0);
    }
}

void lora_plan(const struct kernel_spec *ks, struct plan *p)
{
    struct lora c;
    lora_plan_launches(ks, p);
    lora_read(ks, &c);
    for (int i = 0; i < p->n_path; i++) {
        path_scratch(&c, &p->path[i]);
    }
}
