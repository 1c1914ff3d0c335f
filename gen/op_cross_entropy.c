/* op_cross_entropy.c - the cross-entropy loss of each row of logits over
 * the vocabulary, and its gradient, for a language model's head: the
 * loss (mean over the rows whose label is not ignore_index, sum, or one
 * per row) and dlogits, which may overwrite the logits.
 *
 * A row op (op_rows.c's knobs and geometry, vocab the row's length): one
 * work-group per row reads the row once for its max, sum of exponentials
 * (and sum, for label smoothing), then again, recently read, for the
 * gradient, which it writes once (templates/cross_entropy.cl); few long
 * rows take the split paths (op_rows_split.c), and many long rows on
 * NVIDIA GPUs the shared path: `share` work-groups a row, so that fewer
 * rows are in flight and the second read finds the first's in the cache
 * (templates/cross_entropy_shared.cl). The mean needs the count
 * of rows that count before any gradient is written: a first launch of
 * one work-group counts the labels (4 bytes a row). The rows' losses go
 * to scratch and a last launch of one work-group sums them in a fixed
 * order, so that the loss has the same bits on every run. */
#include "op_rows.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const reduction_choices[] = {"mean", "sum", "none", NULL};
enum { REDUCE_MEAN, REDUCE_SUM, REDUCE_NONE };

static const struct param_def fields[] = {
    {"vocab", VALUE_INT, 1, 0, 1, 16777216, NULL,
     "classes per row (V), the logits' columns; rows are given at run "
     "time"},
    {"ignore_index", VALUE_INT, 0, -100, INT32_MIN, INT32_MAX, NULL,
     "the label of rows that do not count: loss 0, gradient 0 (default "
     "-100)"},
    {"label_smoothing", VALUE_FLOAT, 0, 0, 0, 1, NULL,
     "eps in [0, 1): the target is 1 - eps at the label plus eps / vocab "
     "everywhere (default 0)"},
    {"softcap", VALUE_FLOAT, 0, 0, 0, 1e30, NULL,
     "logits -> softcap * tanh(logits / softcap) first; 0: none (default)"},
    {"reduction", VALUE_CHOICE, 0, REDUCE_MEAN, 0, 0, reduction_choices,
     "mean (over the rows whose label is not ignore_index), sum, or none "
     "(a loss per row)"},
    {"grad", VALUE_BOOL, 0, 1, 0, 1, NULL,
     "write dlogits, the gradient of the loss (default true)"},
};

enum { BUF_LOGITS, BUF_LABELS, BUF_LOSS, BUF_DLOGITS };

/* The count and reduction kernels' work-group: wide on GPUs, one item
 * on CPUs (PoCL runs a group's barriers as loops). */
#define RED_GPU_ITEMS 256

/* Vectors a streaming work-item loads before it uses any of them (the
 * block of SUM_BLOCK): on GPUs four 16-byte loads in flight per item,
 * on CPUs 16 vectors, whose sums across lanes (once a block) then cost
 * less (bench/RESULTS.md, "cross_entropy: each logit read once for the
 * statistics"). */
#define CE_SUM_BLOCK_GPU 4
#define CE_SUM_BLOCK_CPU 16

/* Work-items of a streaming half-width row on GPUs: 256 (more rows at
 * once, more of the cache) and 1024 (fewer) measured slower (the same
 * section). */
#define CE_GPU_WG 512

/* The shared path's defaults on NVIDIA GPUs: bf16 rows of at least
 * CE_SHARE_ROW_BYTES shared by CE_SHARE_GROUPS work-groups of
 * CE_SHARE_WG items. bf16 rows of 128256 took 0.92x the row path's time
 * a launch at 1024 rows and 0.99x at 4096 on an H200; rows of 65536
 * (128 KiB) ran slower shared, before the row words of the sync buffer
 * (bench/RESULTS.md, "cross_entropy over many long rows: each row shared
 * by work-groups"). */
#define CE_SHARE_ROW_BYTES (192L * 1024)
#define CE_SHARE_GROUPS 8
#define CE_SHARE_WG 256

/* The most rows of the shared path, which keeps words for each row in
 * the handle's sync buffer (27 words a row at 8 work-groups, 1.7 MiB);
 * more rows take the row path. */
#define CE_SHARE_ROWS 16384

/* The least softcap taken: 1 / softcap must stay a float. */
#define SOFTCAP_MIN 1e-30

/* The knobs: the row ops' (op_rows.h), then the shared path's. */
enum { CE_KNOB_SHARE = ROWS_N_COOP_KNOBS, CE_N_KNOBS };

static const struct param_def knobs[CE_N_KNOBS] = {
    ROWS_COOP_KNOB_DEFS("work-items per row, a power of two (shape: 512 "
                        "for bf16 and f16 rows of 2048 vectors or more on "
                        "GPUs, 256 where rows are shared)"),
    [CE_KNOB_SHARE] = {"share", VALUE_INT, 0, 1, 1, 32, NULL,
                       "work-groups sharing each row past the split "
                       "paths' rows, up to 16384 rows, where the device "
                       "runs that many at once; 1: none (shape: 8 for bf16 "
                       "rows of 192 KiB or more on NVIDIA GPUs)"},
};

static long share(const struct kernel_spec *ks)
{
    return (long)ks->knob[CE_KNOB_SHARE].num;
}

static long vocab(const struct kernel_spec *ks)
{
    return (long)spec_field(ks, "vocab");
}

static int reduction(const struct kernel_spec *ks)
{
    return (int)spec_field(ks, "reduction");
}

static int grad(const struct kernel_spec *ks)
{
    return spec_field(ks, "grad") != 0;
}

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    double eps = spec_field(ks, "label_smoothing");
    double cap = spec_field(ks, "softcap");
    if (!(eps < 1)) {
        diag_error(d, ks->file, spec_field_mark(ks, "label_smoothing"),
                   "label_smoothing (%g) must be < 1", eps);
    }
    if (cap != 0 && cap < SOFTCAP_MIN) {
        diag_error(d, ks->file, spec_field_mark(ks, "softcap"),
                   "softcap (%g) must be 0 (none) or at least %g", cap,
                   SOFTCAP_MIN);
    }
    /* The max, the sum of exponentials and the sum of each item. */
    rows_validate(ks, d, 3);
    rows_validate_coop(ks, d);
    long nvec = vocab(ks) / (long)ks->knob[ROWS_KNOB_VEC].num;
    if (share(ks) > 1 && ks->knob[ROWS_KNOB_ROWS].num != 1) {
        diag_error(d, ks->file, ks->knob[CE_KNOB_SHARE].mark,
                   "tile share (%ld) needs rows 1: a row shared by "
                   "work-groups (got rows %g)", share(ks),
                   ks->knob[ROWS_KNOB_ROWS].num);
    } else if (share(ks) > nvec) {
        diag_error(d, ks->file, ks->knob[CE_KNOB_SHARE].mark,
                   "tile share (%ld) must be <= the row's vectors (%ld: "
                   "vocab %ld over vec %g)", share(ks), nvec, vocab(ks),
                   ks->knob[ROWS_KNOB_VEC].num);
    }
}

/* The #defines of templates/cross_entropy_common.cl beyond the rows'. */
static void plan_defines(const struct kernel_spec *ks, struct plan *p)
{
    double eps = spec_field(ks, "label_smoothing");
    double cap = spec_field(ks, "softcap");
    plan_public_int(p, "VOCAB", "classes per row", vocab(ks));
    plan_float(p, "SCALE", "softmax_common.cl's scale: none", 1.0);
    plan_int(p, "HALF_X", "logits are not halved", 0);
    /* 184.0 µs against 193.7 for bf16 4096 x 32000 on an H200
     * (bench/RESULTS.md, "cross_entropy: each logit read once for the
     * statistics"). */
    rows_plan_shfl(ks, p);
    /* exp2 on GPUs, as softmax's (op_softmax.c); on CPUs exp: softmax's
     * polynomial measured no faster here (bench/RESULTS.md, "softmax on
     * CPUs: exponentials on the exponent bits"). */
    plan_int(p, "EXP_POLY", "no exponentials by polynomial", 0);
    plan_int(p, "EXP_BASE2", "exponentials as exp2 (GPUs) or exp",
             ks->target != TARGET_CPU);
    plan_int(p, "IGNORE_INDEX", "the label of rows that do not count",
             (long)spec_field(ks, "ignore_index"));
    plan_int(p, "CAPPED", cap > 0 ? "z = SOFTCAP * tanh(x / SOFTCAP)"
                                  : "z = x: no softcap",
             cap > 0);
    plan_float(p, "SOFTCAP", "the softcap (0: none)", cap);
    /* PoCL runs exp2 lane by lane; exp2_poly.cl's arithmetic vectorizes
     * (bench/RESULTS.md, "cross_entropy's softcap from one
     * exponential"). */
    plan_int(p, "CAP_POLY", "the cap's exponential by polynomial (CPUs)",
             cap > 0 && ks->target == TARGET_CPU);
    /* bf16 1024 x 256000 on an H200: 0.91x the time with the division
     * (bench/RESULTS.md, "cross_entropy's softcap: the reciprocal in
     * hardware"). */
    plan_int(p, "CAP_NATIVE_RECIP",
             "the cap's reciprocal by native_recip (GPUs)",
             cap > 0 && ks->target != TARGET_CPU);
    plan_int(p, "SMOOTH", "label smoothing: the sum of z wanted", eps > 0);
    plan_float(p, "ONE_MINUS_EPS", "1 - label_smoothing", 1.0 - eps);
    plan_float(p, "EPS_OVER_V", "label_smoothing / vocab",
               eps / (double)vocab(ks));
    plan_int(p, "REDUCE_MEAN", "loss: the mean over the rows that count",
             reduction(ks) == REDUCE_MEAN);
    plan_int(p, "REDUCE_NONE", "loss: one per row",
             reduction(ks) == REDUCE_NONE);
    plan_int(p, "GRAD", "dlogits written", grad(ks));
    plan_int(p, "RED_WG", "work-items counting and summing rows",
             ks->target == TARGET_CPU ? 1 : RED_GPU_ITEMS);
    /* The shared path's bf16 rows held as stored (vectors of 8, no cap)
     * read and written with L2 eviction priorities: 0.95x the time a
     * launch at 1024 rows of 128256 on an H200 (the same section). */
    rows_plan_l2_hints(ks, p, "L2_HINTS",
                       "shared rows: L2 eviction priorities by PTX",
                       share(ks) > 1 && ks->dtype == DTYPE_BF16 && cap == 0);
}

static void plan_buffers(const struct kernel_spec *ks, struct plan *p)
{
    long v = vocab(ks);
    int none = reduction(ks) == REDUCE_NONE;
    plan_buffer(p, "logits", v, 0, 0);
    plan_buffer_doc(p, "[rows][vocab]", NULL);
    plan_buffer(p, "labels", 1, 0, 0);
    plan_buffer_elem(p, ELEM_I32);
    plan_buffer_doc(p, "[rows]", "The class of each row in [0, vocab), or "
                    "ignore_index");
    plan_buffer(p, "loss", none ? 1 : 0, none ? 0 : 1, 0);
    plan_buffer_elem(p, ELEM_F32);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_doc(p, none ? "[rows]" : "[1]",
                    none ? "Each row's loss, 0 where ignored"
                         : reduction(ks) == REDUCE_MEAN
                               ? "The mean over the rows that count (NaN "
                                 "for none)"
                               : "The sum over the rows");
    plan_buffer(p, "dlogits", v, 0, !grad(ks));
    plan_buffer_role(p, BUFFER_OUT);
    if (grad(ks)) {
        plan_buffer_may_alias(p, "logits");
    }
    plan_buffer_doc(p, "[rows][vocab]",
                    "d loss / d logits, zero rows where ignored; may be "
                    "logits");
}

/* Appends to PA a launch of one work-group of RED_WG items of KERNEL. */
static void add_single(const struct kernel_spec *ks, struct path *pa,
                       const char *kernel, const char *const *args)
{
    struct launch *l = &pa->launch[pa->n_launch++];
    l->kernel = kernel;
    l->dims = 2;
    l->local[0] = ks->target == TARGET_CPU ? 1 : RED_GPU_ITEMS;
    l->local[1] = 1;
    launch_fixed(l, 0, 1);
    launch_fixed(l, 1, 1);
    launch_args(l, args);
}

/* The arguments of a rows kernel (cross_entropy, cross_entropy_combine):
 * rows, logits, labels, loss (reduction none), dlogits (grad), scratch
 * (WITH_SCRATCH), NULL-terminated. */
#define ROW_IN "rows", "logits", "labels"
static const char *const kernel_args[2][2][2][7] = {
    {{{ROW_IN, NULL}, {ROW_IN, "scratch", NULL}},
     {{ROW_IN, "dlogits", NULL}, {ROW_IN, "dlogits", "scratch", NULL}}},
    {{{ROW_IN, "loss", NULL}, {ROW_IN, "loss", "scratch", NULL}},
     {{ROW_IN, "loss", "dlogits", NULL},
      {ROW_IN, "loss", "dlogits", "scratch", NULL}}},
};
#undef ROW_IN

static const char *const *rows_args(const struct kernel_spec *ks,
                                    int with_scratch)
{
    return kernel_args[reduction(ks) == REDUCE_NONE][grad(ks)]
                      [with_scratch != 0];
}

/* ARGS: the NULL-terminated GIVEN, then "sync" (room for
 * SYNC_ARGS_MOST, the NULL among them). */
#define SYNC_ARGS_MOST 8
static void with_sync(const char *const *given, const char **args)
{
    int n = 0;
    while (given[n] != NULL) {
        args[n] = given[n];
        n++;
    }
    args[n++] = "sync";
    args[n] = NULL;
}

/* The path's first launch (the count, for the mean) and last (the sum of
 * the rows' losses, unless none), around its rows launches. */
static void path_begin(const struct kernel_spec *ks, struct path *pa)
{
    static const char *const count_args[] = {"rows", "labels", "scratch",
                                             NULL};
    if (reduction(ks) == REDUCE_MEAN) {
        add_single(ks, pa, "cross_entropy_count", count_args);
    }
}

static void path_end(const struct kernel_spec *ks, struct path *pa)
{
    static const char *const reduce_args[] = {"rows", "loss", "scratch",
                                              NULL};
    if (reduction(ks) != REDUCE_NONE) {
        add_single(ks, pa, "cross_entropy_reduce", reduce_args);
    }
}

/* The split path: cross_entropy_part, then cross_entropy_combine, over
 * the chunks of every row; scratch: the count, the rows' losses, and per
 * row the chunks' statistics and the logit at the label. */
static void plan_split(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const kernels[] = {"cross_entropy_part",
                                          "cross_entropy_combine"};
    static const char *const part_args[] = {"rows", "logits", "labels",
                                            "scratch", NULL};
    const char *const *const args[] = {part_args, rows_args(ks, 1)};
    struct path probe;
    memset(&probe, 0, sizeof probe);
    path_begin(ks, &probe);
    struct path *pa = rows_plan_split(ks, p, kernels, args);
    /* The count goes first. */
    if (probe.n_launch > 0) {
        memmove(&pa->launch[1], &pa->launch[0], 2 * sizeof pa->launch[0]);
        pa->launch[0] = probe.launch[0];
        pa->n_launch++;
    }
    path_end(ks, pa);
    pa->why = "few rows: each row in SPLIT_GROUPS chunks, a work-group "
              "each: their statistics, then loss and gradient";
    pa->scratch_fixed = 1;
    pa->scratch_per = (reduction(ks) == REDUCE_NONE ? 0 : 1) +
                      3 * rows_split_groups(ks) + 1;
    pa->scratch_sizes = SIZE_FIRST;
}

/* The row path: a work-group per `rows` rows. */
static void plan_rows(const struct kernel_spec *ks, struct plan *p)
{
    int none = reduction(ks) == REDUCE_NONE;
    struct path *pa = &p->path[p->n_path++];
    pa->max_rows = 0;
    pa->why = spec_knob(ks, "rows") == 1
                  ? "one work-group per row"
                  : "one work-group per `rows` rows (tile knob)";
    path_begin(ks, pa);
    struct launch *l = &pa->launch[pa->n_launch++];
    l->kernel = "cross_entropy";
    l->dims = 2;
    l->local[0] = (size_t)spec_knob(ks, "wg");
    l->local[1] = (size_t)spec_knob(ks, "rows");
    launch_fixed(l, 0, 1);
    launch_over(l, 1, 1, SIZE_FIRST, l->local[1]);
    const char *const *args = rows_args(ks, !none);
    launch_args(l, args);
    path_end(ks, pa);
    pa->scratch_fixed = none ? 0 : 1;
    pa->scratch_per = none ? 0 : 1;
    pa->scratch_sizes = none ? 0 : SIZE_FIRST;
}

/* The shared path (share > 1): every row past the split paths' (up to
 * CE_SHARE_ROWS) shared by `share` work-groups, which take (row, part)
 * from tickets in the order they start and trade their statistics
 * through the row's words of the handle's sync buffer
 * (templates/cross_entropy_shared.cl), while the device runs that many
 * work-groups at once (else the row path after it); scratch as the row
 * path's. Its sync words follow the one-launch split path's: the tickets
 * drawn, the work-groups done, then per row its arrivals, departures,
 * the logit at the label and a (m, s, t) per part. */
static void plan_shared(const struct kernel_spec *ks, struct plan *p)
{
    int none = reduction(ks) == REDUCE_NONE;
    long nvec = vocab(ks) / (long)ks->knob[ROWS_KNOB_VEC].num;
    plan_int(p, "SHARE_GROUPS", "shared rows: work-groups a row", share(ks));
    plan_int(p, "SHARE_VECS", "shared rows: vectors a work-group's part",
             (nvec + share(ks) - 1) / share(ks));
    plan_int(p, "SHARE_ROWS", "shared rows: rows at most", CE_SHARE_ROWS);
    plan_int(p, "SHARE_SYNC_AT", "shared rows: their first sync word",
             p->sync_words);
    if (!rows_has_coop(ks)) {
        rows_plan_grid_sync(ks, p);
    }
    p->sync_words += 2 + CE_SHARE_ROWS * (3 + 3 * share(ks));
    const char *args[SYNC_ARGS_MOST];
    with_sync(rows_args(ks, !none), args);
    struct path *pa = &p->path[p->n_path++];
    pa->max_rows = CE_SHARE_ROWS;
    pa->coop_total = share(ks);
    pa->why = "many long rows: each shared by `share` work-groups that "
              "trade their statistics, then loss and gradient";
    path_begin(ks, pa);
    struct launch *l = &pa->launch[pa->n_launch++];
    l->kernel = "cross_entropy_shared";
    l->dims = 2;
    l->local[0] = (size_t)spec_knob(ks, "wg");
    l->local[1] = 1;
    launch_over(l, 0, (size_t)share(ks), SIZE_FIRST, 1);
    launch_fixed(l, 1, 1);
    launch_args(l, args);
    path_end(ks, pa);
    pa->scratch_fixed = none ? 0 : 1;
    pa->scratch_per = none ? 0 : 1;
    pa->scratch_sizes = none ? 0 : SIZE_FIRST;
}

/* The one-launch split path (rows up to coop_max, while rows x chunks fit
 * the device's compute units): cross_entropy_coop alone, each chunk's
 * statistics and the logit at the label in the handle's sync buffer; it
 * counts the rows for the mean and sums the rows' losses itself (after
 * the rows' words, one word of the rows done). */
static void plan_coop(const struct kernel_spec *ks, struct plan *p)
{
    int none = reduction(ks) == REDUCE_NONE;
    const char *args[SYNC_ARGS_MOST];
    with_sync(kernel_args[1][grad(ks)][!none], args);
    /* Each chunk's (m, s, t), then the logit at the label. */
    struct path *pa = rows_plan_coop(ks, p, "cross_entropy_coop", args, 3,
                                     1, 0, 0, 0);
    if (!none) {
        p->sync_words += 1;
    }
    pa->why = "few rows: each row in COOP_GROUPS chunks, a work-group "
              "each, that wait for one another's statistics within one "
              "launch, then loss and gradient";
    pa->scratch_fixed = none ? 0 : 1;
    pa->scratch_per = none ? 0 : 1;
    pa->scratch_sizes = none ? 0 : SIZE_FIRST;
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    rows_plan_begin(ks, p);
    plan_defines(ks, p);
    plan_buffers(ks, p);
    if (rows_has_coop(ks)) {
        plan_coop(ks, p);
    }
    if (rows_has_split(ks)) {
        plan_split(ks, p);
    }
    if (share(ks) > 1) {
        plan_shared(ks, p);
    }
    plan_rows(ks, p);
    /* Streamed paths read each vector once, a block of vectors at a
     * time held in registers (cross_entropy_common.cl): a small block,
     * not the row ops' 64 vectors summed apart. */
    if (plan_set_int(p, "SUM_BLOCK", "vectors loaded at once, then summed",
                     ks->target == TARGET_CPU ? CE_SUM_BLOCK_CPU
                                              : CE_SUM_BLOCK_GPU)) {
        rows_plan_stream_max(ks, p);
    }
}

/* ---- checking and measuring ------------------------------------------ */

/* The loss of row X (float64) with label LABEL, and into DX, when not
 * NULL, its gradient times G; Z is room for the row's capped logits. */
static double reference_row(const struct kernel_spec *ks, const float *x,
                            double label, double g, double *z, double *dx)
{
    size_t v = (size_t)vocab(ks);
    double eps = emitted_float(spec_field(ks, "label_smoothing"));
    double cap = emitted_float(spec_field(ks, "softcap"));
    if (label == spec_field(ks, "ignore_index")) {
        for (size_t j = 0; dx != NULL && j < v; j++) {
            dx[j] = 0;
        }
        return 0;
    }
    if (!(label >= 0 && label < (double)v)) {
        for (size_t j = 0; dx != NULL && j < v; j++) {
            dx[j] = NAN;
        }
        return NAN;
    }
    double mx = -INFINITY, sum = 0, zsum = 0;
    for (size_t j = 0; j < v; j++) {
        z[j] = cap > 0 ? cap * tanh(x[j] / cap) : x[j];
        mx = fmax(mx, z[j]);
        zsum += z[j];
    }
    for (size_t j = 0; j < v; j++) {
        sum += exp(z[j] - mx);
    }
    size_t y = (size_t)label;
    for (size_t j = 0; dx != NULL && j < v; j++) {
        double d = exp(z[j] - mx) / sum - eps / (double)v -
                   (j == y ? 1 - eps : 0);
        double slope = cap > 0 ? 1 - (z[j] / cap) * (z[j] / cap) : 1;
        dx[j] = g * d * slope;
    }
    /* No smoothing: no sum of z, which a masked (-inf) logit makes -inf
     * (0 times it is NaN); with smoothing the loss is then +inf. */
    double smoothing = eps > 0 ? eps / (double)v * zsum : 0;
    return mx + log(sum) - (1 - eps) * z[y] - smoothing;
}

/* The reference at rows ROWS_IDX[0 .. N_ROWS) of the case (NULL: every
 * row): the per-row outputs of those rows, the mean or sum over every
 * row. The mean's gradient divides by the count over every row, which a
 * case of the sampled rows alone would not have. */
static int reference_rows(const struct kernel_spec *ks,
                          const float *const *in, const size_t *sizes,
                          const size_t *rows_idx, size_t n_rows,
                          double *const *out)
{
    size_t rows = sizes[0], v = (size_t)vocab(ks);
    const float *x = in[BUF_LOGITS], *labels = in[BUF_LABELS];
    double *loss = out[BUF_LOSS], *dx = grad(ks) ? out[BUF_DLOGITS] : NULL;
    int r = reduction(ks);
    double count = 0, total = 0;
    double *z = malloc(v * sizeof *z);
    if (z == NULL) {
        return -1;
    }
    for (size_t m = 0; m < rows; m++) {
        count += labels[m] != spec_field(ks, "ignore_index");
    }
    double g = r == REDUCE_MEAN ? 1 / count : 1;
    for (size_t m = 0; loss != NULL && r != REDUCE_NONE && m < rows; m++) {
        total += reference_row(ks, x + m * v, labels[m], g, z, NULL);
    }
    for (size_t i = 0; i < n_rows; i++) {
        size_t m = rows_idx != NULL ? rows_idx[i] : i;
        double l = reference_row(ks, x + m * v, labels[m], g, z,
                                 dx != NULL ? dx + i * v : NULL);
        if (loss != NULL && r == REDUCE_NONE) {
            loss[i] = l;
        }
    }
    if (loss != NULL && r != REDUCE_NONE) {
        loss[0] = r == REDUCE_MEAN ? total / count : total;
    }
    free(z);
    return 0;
}

static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sizes, double *const *out)
{
    return reference_rows(ks, in, sizes, NULL, sizes[0], out);
}

static void naive(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const count_args[] = {"rows", "labels", "scratch",
                                             NULL};
    static const char *const reduce_args[] = {"rows", "loss", "scratch",
                                              NULL};
    static const char *const row_args[2][7] = {
        {"rows", "logits", "labels", "loss", "scratch", NULL},
        {"rows", "logits", "labels", "loss", "dlogits", "scratch", NULL}};
    struct path *pa = &p->path[0];
    plan_dtype(p, ks->dtype);
    plan_int(p, "FEATURES", "elements per row", vocab(ks));
    plan_int(p, "CE_IGNORE_INDEX", "rows that do not count",
             (long)spec_field(ks, "ignore_index"));
    plan_float(p, "CE_SOFTCAP", "0: none", spec_field(ks, "softcap"));
    plan_float(p, "CE_SMOOTHING", "label smoothing",
               spec_field(ks, "label_smoothing"));
    plan_int(p, "CE_REDUCTION", "0 mean, 1 sum, 2 none", reduction(ks));
    plan_int(p, "CE_GRAD", "dlogits written", grad(ks));
    /* The count, then each row's loss. */
    pa->scratch_fixed = 1;
    pa->scratch_per = 1;
    pa->scratch_sizes = SIZE_FIRST;
    if (reduction(ks) == REDUCE_MEAN) {
        naive_launch_fixed(p, "naive_cross_entropy_count", 1, count_args);
    }
    naive_launch(p, "naive_cross_entropy", 0, row_args[grad(ks)]);
    if (reduction(ks) != REDUCE_NONE) {
        naive_launch_fixed(p, "naive_cross_entropy_reduce", 1, reduce_args);
    }
}

/* Labels of the vocabulary; logits in [-4, 4], a spread of e^8 between
 * classes, as trained heads give. */
static void input_range(const struct kernel_spec *ks, const char *buffer,
                        double *lo, double *hi)
{
    if (strcmp(buffer, "labels") == 0) {
        *lo = 0;
        *hi = (double)(vocab(ks) - 1);
    } else if (strcmp(buffer, "logits") == 0) {
        *lo = -4;
        *hi = 4;
    }
}

/* Each buffer once: the logits and labels read, dlogits and the loss
 * written; some 8 flops an element a pass. */
static void costs(const struct kernel_spec *ks, const size_t *sizes,
                  double *bytes, double *flops)
{
    *bytes = plan_io_bytes(ks, sizes);
    *flops = 8.0 * (grad(ks) ? 2 : 1) * (double)vocab(ks) * (double)sizes[0];
}

/* The loss is float32 (1e-5); dlogits the f32 bound plus the storage's
 * rounding, and in f16 what its subnormals cost gradients near 1/vocab
 * (op_softmax.c's reasoning: vocab 2^-25 at most). */
static double error_bound(const struct kernel_spec *ks)
{
    double sub = ks->dtype == DTYPE_F16 ? (double)vocab(ks) * 0x1p-25 : 0;
    return storage_error_bound(ks->dtype, 1e-5) + sub;
}

/* The split path's, searched by the tuner but taken from an entry by
 * entry_rows (as softmax's). */
static const char *const few_rows_knobs[] = {"split", "split_max",
                                             "coop_split", "coop_max", NULL};

static const char *const kernels[] = {
    "cross_entropy_count", "cross_entropy", "cross_entropy_coop",
    "cross_entropy_part", "cross_entropy_combine", "cross_entropy_reduce",
    "cross_entropy_shared", NULL};

/* The row ops' and split path's axes, then the shared path's. */
static const struct tune_axis tune_space[] = {
    ROWS_TUNE_AXES,
    ROWS_SPLIT_TUNE_AXES,
    {"share", "1 4 8 16"},
    {NULL, NULL},
};

/* The row ops' defaults and the split paths' (op_rows_split.c); then on
 * GPUs, half-width rows of at least a batch of loads per item stream in
 * groups of CE_GPU_WG items, unless the spec shapes the group itself: a
 * row of them moves half the bytes of a float32 row for the same fixed
 * costs (loads in flight, merges, barriers), so more rows at once pay
 * (bf16: 1.3x at 32000, 1.06x at 128256); float32 rows held in registers
 * by 1024 items measured faster than streamed ones (bench/RESULTS.md,
 * "cross_entropy: each logit read once for the statistics"). */
static void defaults(struct kernel_spec *ks)
{
    rows_split_defaults(ks);
    struct param_value *k = ks->knob;
    if (ks->target != TARGET_CPU && dtype_size(ks->dtype) == 2 &&
        !k[ROWS_KNOB_WG].set && !k[ROWS_KNOB_ROWS].set &&
        !k[ROWS_KNOB_MODE].set &&
        vocab(ks) / (long)k[ROWS_KNOB_VEC].num >=
            CE_GPU_WG * CE_SUM_BLOCK_GPU) {
        k[ROWS_KNOB_WG].num = CE_GPU_WG;
        k[ROWS_KNOB_ROWS].num = 1;
        k[ROWS_KNOB_MODE].num = ROWS_MODE_STREAMING;
    }
    rows_coop_defaults(ks);
    long row_bytes = vocab(ks) * (long)dtype_size(ks->dtype);
    int shared = target_offers(ks->target, CAP_SHFL_SYNC) &&
                 ks->dtype == DTYPE_BF16 && row_bytes >= CE_SHARE_ROW_BYTES &&
                 !k[ROWS_KNOB_ROWS].set && !k[ROWS_KNOB_MODE].set;
    spec_knob_default(ks, "share", shared ? CE_SHARE_GROUPS : 1.0);
    /* A shared row is streamed by groups of one row; the knobs the
     * spec left to the shape follow. */
    if (share(ks) > 1) {
        if (!k[ROWS_KNOB_WG].set) {
            k[ROWS_KNOB_WG].num = CE_SHARE_WG;
        }
        if (!k[ROWS_KNOB_ROWS].set) {
            k[ROWS_KNOB_ROWS].num = 1;
        }
        if (!k[ROWS_KNOB_MODE].set) {
            k[ROWS_KNOB_MODE].num = ROWS_MODE_STREAMING;
        }
    }
}

const struct op_def op_cross_entropy = {
    .name = "cross_entropy",
    .summary = "loss = log sum exp z - (1 - eps) z[label] - eps/V sum z per "
               "row (z the logits, softcapped), its mean, sum or rows, and "
               "dlogits",
    .kernels = kernels,
    .example = "vocab=128256",
    .fields = fields,
    .n_fields = sizeof fields / sizeof fields[0],
    .knobs = knobs,
    .n_knobs = CE_N_KNOBS,
    .defaults = defaults,
    .validate = validate,
    .plan = plan,
    .tune_space = tune_space,
    .few_rows_knobs = few_rows_knobs,
    .entry_rows = rows_split_entry_rows,
    .reference = reference,
    .reference_rows = reference_rows,
    .naive = naive,
    .input_range = input_range,
    .costs = costs,
    .error_bound = error_bound,
    .bench_sizes = rows_bench_sizes,
    .shape_text = rows_shape_text,
};
