/* op_norm_backward.c - the backward of the norms, row by row: dx of
 * rmsnorm and layernorm with the statistics recomputed from x, and dgamma
 * (and layernorm's dbeta), float32 sums over every row, reproducible to
 * the bit: each work-group sums its block of rows, a second kernel the
 * blocks, both in a fixed order (templates/norm_backward.cl). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "op_rows.h"

static const struct param_def fields[] = {
    ROWS_FEATURES_FIELD,
    ROWS_EPS_FIELD,
    {"accumulate", VALUE_BOOL, 0, 0, 0, 1, NULL,
     "add into dgamma (and dbeta) instead of writing them"},
};

/* The row ops' knobs, then the blocks of dgamma's partial sums. */
enum { KNOB_BLOCKS = ROWS_N_KNOBS, N_KNOBS };
static const struct param_def knobs[N_KNOBS] = {
    [ROWS_KNOB_WG] = ROWS_KNOB_WG_DEF("work-items per row, a power of two "
                                      "(shape: about 8 elements each)"),
    [ROWS_KNOB_ROWS] = ROWS_KNOB_ROWS_DEF,
    [ROWS_KNOB_VEC] = ROWS_KNOB_VEC_DEF,
    [ROWS_KNOB_MODE] = ROWS_KNOB_MODE_DEF,
    [KNOB_BLOCKS] = {"blocks", VALUE_INT, 0, 128, 1, 4096, NULL,
                     "the most blocks of rows, a work-group and a partial "
                     "sum of dgamma each (shape: 128, 64 on CPUs)"},
};

static const struct tune_axis tune_space[] = {
    ROWS_TUNE_AXES,
    {"blocks", "32 64 128 256 512"},
    {NULL, NULL},
};

/* GPUs: 64 bytes of x a work-item (16 float32 elements, 32 of f16 or
 * bf16) in pairs, groups of 256 items, and a block of rows for each
 * compute unit a wave counts (device_wave_units). An item holds seven
 * arrays of its share (x, dy, the next row's, gamma and the partial
 * sums): more elements spill, and smaller shares leave the reductions to
 * dominate (bench/RESULTS.md, "cross_entropy and the norms' backward");
 * `specl tune` searches the rest. CPUs: one work-item per block of rows,
 * streaming them with wide vectors. */
static const struct rows_aim backward_aim = {16, 32, 256, 256, 1, 2};
/* Where each row slot runs on its own (row_shfl: NVIDIA): 16 elements a
 * work-item in loads of 8 bytes (16-byte ones measured slower), x and dy
 * alone held (gamma read where used), two slots a group of 512 items,
 * which leaves 128 registers an item (bench/RESULTS.md, "The norms'
 * backward in one launch"). */
static const struct rows_aim slots_aim = {16, 16, 512, 512, 1, 0};
#define SLOTS_LOAD_BYTES 8
#define CPU_BLOCKS 64

/* The second kernel's work-group: lanes that sum every RED_LANES-th
 * partial row of RED_COLS vectors of columns. */
#define RED_COLS 32
#define RED_LANES 8

enum { BUF_X, BUF_GAMMA, BUF_DY, BUF_DX, BUF_DGAMMA, BUF_DBETA };

static const char *const rmsnorm_kernels[] = {
    "rmsnorm_backward", "norm_backward_reduce", "rmsnorm_backward_fused",
    NULL};
static const char *const layernorm_kernels[] = {
    "layernorm_backward", "norm_backward_reduce", "layernorm_backward_fused",
    NULL};

static int centred(const struct kernel_spec *ks)
{
    return ks->op->kernels == layernorm_kernels;
}

static long features(const struct kernel_spec *ks)
{
    return (long)spec_field(ks, "features");
}

static long knob(const struct kernel_spec *ks, int i)
{
    return (long)ks->knob[i].num;
}

/* Where the target offers shfl.sync (NVIDIA) and rows are whole warps:
 * each row slot's sums by warp shuffles and a barrier of its own, and the
 * one-launch path (its barrier across work-groups is PTX-fenced). */
static int row_shfl(const struct kernel_spec *ks)
{
    /* bar.sync has ids 1 to 15 for the slots (0 is barrier()'s). */
    return target_offers(ks->target, CAP_SHFL_SYNC) &&
           knob(ks, ROWS_KNOB_WG) % 32 == 0 &&
           knob(ks, ROWS_KNOB_ROWS) <= 15;
}

/* Local memory the row kernels declare besides AHEAD: the slots' sums,
 * the hand-over of their partial sums, the one-launch path's lanes. */
static long rows_local_bytes(const struct kernel_spec *ks)
{
    long wg = knob(ks, ROWS_KNOB_WG), rows = knob(ks, ROWS_KNOB_ROWS);
    long sumv = centred(ks) ? 16 : 8;
    long part = 2 * rows * (row_shfl(ks) ? wg / 32 : wg) * sumv;
    long stage = ((rows - 1) * wg + 1) * knob(ks, ROWS_KNOB_VEC) * 4;
    return part + stage + rows * wg * 4;
}

/* Whether held rows copy each slot's next row to local memory by
 * cp.async: where the slots run apart (row_shfl) and the registers hold
 * no second row (a second row of layernorm's spills, its sums beside
 * dbeta's), the target copies so, a vector is 8 or 16 bytes (f16 and
 * bf16: 4 or 8 elements), and the slots' next rows fit the local memory
 * a work-group may declare. */
static int ahead_async(const struct kernel_spec *ks)
{
    long size = dtype_size(ks->dtype), vec = knob(ks, ROWS_KNOB_VEC);
    long bytes = vec * size;
    long rows_bytes = knob(ks, ROWS_KNOB_ROWS) * 2 * features(ks) * size;
    return rows_in_registers(ks) && row_shfl(ks) && centred(ks) &&
           target_offers(ks->target, CAP_CP_ASYNC) &&
           (bytes == 8 || bytes == 16) &&
           rows_bytes + rows_local_bytes(ks) <=
               target_facts(ks->target)->local_per_group;
}

static void defaults(struct kernel_spec *ks)
{
    struct rows_aim aim = slots_aim;
    aim.gpu_vec = SLOTS_LOAD_BYTES / dtype_size(ks->dtype);
    rows_defaults_aim(ks, &aim);
    if (!row_shfl(ks)) {
        /* Rows too short for whole warps, or no PTX: the shared tiles
         * (knobs the spec set stay). */
        rows_defaults_aim(ks, &backward_aim);
    }
    spec_knob_default(ks, "blocks",
                      ks->target == TARGET_CPU
                          ? CPU_BLOCKS
                          : device_wave_units(target_facts(ks->target)));
}

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    rows_validate_eps(ks, d);
    /* Two arrays of sums: (sum x^2, sum g x) or four of layernorm's; in
     * registers with several rows, the slots' hand-over of a vector. */
    int stage = rows_in_registers(ks) && knob(ks, ROWS_KNOB_ROWS) > 1
                    ? (int)knob(ks, ROWS_KNOB_VEC)
                    : 0;
    rows_validate(ks, d, (centred(ks) ? 8 : 4) + stage);
}

static void plan_accumulate(const struct kernel_spec *ks, struct plan *p)
{
    int acc = spec_field(ks, "accumulate") != 0;
    plan_int(p, "ACCUMULATE", acc ? "dgamma (and dbeta) += the sums"
                                  : "dgamma (and dbeta) = the sums",
             acc);
}

/* The launch of kernel K with work-groups of LOCAL0 x LOCAL1 items,
 * GROUPS0 x GROUPS1 of them, taking ARGS. */
static struct launch *add_launch(struct path *pa, const char *k,
                                 long local0, long local1, long groups0,
                                 long groups1, const char *const *args)
{
    struct launch *l = &pa->launch[pa->n_launch++];
    l->kernel = k;
    l->dims = 2;
    l->local[0] = (size_t)local0;
    l->local[1] = (size_t)local1;
    launch_fixed(l, 0, (size_t)groups0);
    launch_fixed(l, 1, (size_t)groups1);
    launch_args(l, args);
    return l;
}

/* The buffers: x, gamma, dy, dx, then dgamma (and dbeta), float32, may
 * be NULL. */
static void plan_buffers(const struct kernel_spec *ks, struct plan *p)
{
    long d = features(ks);
    int acc = spec_field(ks, "accumulate") != 0;
    plan_buffer(p, "x", d, 0, 0);
    plan_buffer_doc(p, "[rows][features]", "The forward's input");
    plan_buffer(p, "gamma", 0, d, 0);
    plan_buffer_doc(p, "[features]", NULL);
    plan_buffer(p, "dy", d, 0, 0);
    plan_buffer_doc(p, "[rows][features]",
                    "The gradient of the forward's output");
    plan_buffer(p, "dx", d, 0, 0);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_doc(p, "[rows][features]", "The gradient of x");
    plan_buffer(p, "dgamma", 0, d, 0);
    plan_buffer_elem(p, ELEM_F32);
    plan_buffer_role(p, acc ? BUFFER_INOUT : BUFFER_OUT);
    plan_buffer_nullable(p);
    plan_buffer_doc(p, "[features]",
                    acc ? "dgamma += the sum over rows of dy * xhat"
                        : "The sum over rows of dy * xhat");
    if (centred(ks)) {
        plan_buffer(p, "dbeta", 0, d, 0);
        plan_buffer_elem(p, ELEM_F32);
        plan_buffer_role(p, acc ? BUFFER_INOUT : BUFFER_OUT);
        plan_buffer_nullable(p);
        plan_buffer_doc(p, "[features]",
                        acc ? "dbeta += the sum over rows of dy"
                            : "The sum over rows of dy");
    }
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    /* The rows kernel makes partial sums when it gets scratch: when the
     * call gives dgamma or dbeta (scratch_if_given). */
    static const char *const rows_args[] = {"rows", "x",       "gamma", "dy",
                                            "dx",   "scratch", NULL};
    static const char *const rms_reduce[] = {"rows", "dgamma", "scratch",
                                             NULL};
    static const char *const ln_reduce[] = {"rows", "dgamma", "dbeta",
                                            "scratch", NULL};
    int c = centred(ks);
    long d = features(ks), wg = knob(ks, ROWS_KNOB_WG);
    long rows = knob(ks, ROWS_KNOB_ROWS), blocks = knob(ks, KNOB_BLOCKS);
    /* Wide work-groups suit GPUs, which sum the partial rows in lanes. */
    long lanes = wg >= 32 ? RED_LANES : 1;
    long nvec = d / knob(ks, ROWS_KNOB_VEC);
    rows_plan_begin(ks, p);
    if (rows_in_registers(ks)) {
        plan_int(p, "SUM_BLOCK", "vectors summed apart in a rescaled pass",
                 ROWS_SUM_BLOCK);
    }
    /* A work-group a compute unit needs the next row in flight through
     * the reductions. Slots that run apart (row_shfl) hold their rows in
     * 128 registers an item: a second row fits only where x and dy stay
     * as stored, half-width, and gamma is read where used; layernorm's
     * sums and dbeta's then spill, so its next row goes to local memory
     * (ahead_async) and the row in registers stays as stored, which
     * spills nothing (bench/RESULTS.md, "The norms' backward in one
     * launch", "rmsnorm_backward: rows held as stored, the next row
     * ahead", "layernorm_backward: the next row by cp.async"). */
    int held = rows_in_registers(ks);
    long vec = knob(ks, ROWS_KNOB_VEC);
    int async = ahead_async(ks);
    int as_stored = held && dtype_size(ks->dtype) == 2 &&
                    (vec == 4 || vec == 8) && (!c || async);
    int ahead = held && !async && (!row_shfl(ks) || as_stored);
    int gamma_held = held && !row_shfl(ks);
    plan_int(p, "ROW_AHEAD",
             ahead ? "the next row loads while this one is reduced"
                   : "no row loaded ahead",
             ahead);
    plan_int(p, "ROW_AHEAD_ASYNC",
             async ? "the next row copies to local memory as this one is "
                     "reduced"
                   : "no row copied ahead",
             async);
    if (async) {
        plan_int(p, "ROW_COPY_BYTES", "bytes a cp.async copies",
                 vec * dtype_size(ks->dtype));
        p->needs |= CAP_CP_ASYNC;
    }
    plan_int(p, "GAMMA_HELD",
             gamma_held ? "gamma's share held in registers"
                        : "gamma read where used",
             gamma_held);
    plan_int(p, "ROW_AS_STORED",
             as_stored ? "x and dy held as stored, half-width"
                       : "x and dy held as floats",
             as_stored);
    rows_plan_float(ks, p, "eps", "EPS",
                    c ? "added to the variance" : "added to the mean square");
    rows_plan_norm_scale(ks, p);
    if (c) {
        plan_float(p, "RSQRT_EPS", "1 / sqrt(eps): dx's factor on a "
                   "constant row", 1.0 / sqrt(emitted_float(
                                        spec_field(ks, "eps"))));
    }
    plan_int(p, "NORM_CENTRED", c ? "layernorm: x - mean, and dbeta"
                                  : "rmsnorm",
             c);
    plan_int(p, "BLOCKS", "the most blocks of rows, a work-group each",
             blocks);
    plan_flag(p, "ROW_SHFL", "row sums by PTX warp shuffles, a barrier "
              "per slot", "row sums in local memory", row_shfl(ks),
              CAP_SHFL_SYNC);
    plan_accumulate(ks, p);
    plan_int(p, "RED_COLS", "reduction: vectors of columns per group",
             RED_COLS);
    plan_int(p, "RED_LANES", "reduction: lanes over the partial rows",
             lanes);
    plan_buffers(ks, p);

    /* A partial row per block, or per row slot when rows stream. */
    long slot_partials = rows_in_registers(ks) ? 1 : rows;
    long scratch = blocks * slot_partials * d * (c ? 2 : 1);
    struct path *pa;
    if (row_shfl(ks)) {
        /* One launch while the blocks fit the device's compute units. */
        static const char *const rms_fused[] = {
            "rows", "x", "gamma", "dy", "dx", "dgamma", "scratch", "sync",
            NULL};
        static const char *const ln_fused[] = {
            "rows", "x",      "gamma",   "dy",   "dx",
            "dgamma", "dbeta", "scratch", "sync", NULL};
        rows_plan_grid_sync(ks, p);
        p->sync_words = 2;
        pa = &p->path[p->n_path++];
        pa->why = "a work-group per block of rows, then each sums a share "
                  "of the columns of the blocks' sums, in one launch";
        pa->coop_total = blocks;
        pa->scratch_fixed = scratch;
        pa->scratch_if_given[0] = "dgamma";
        pa->scratch_if_given[1] = c ? "dbeta" : NULL;
        add_launch(pa, ks->op->kernels[2], wg, rows, 1, blocks,
                   c ? ln_fused : rms_fused);
    }
    pa = &p->path[p->n_path++];
    pa->why = "a work-group per block of rows, then the blocks' sums";
    pa->scratch_fixed = scratch;
    pa->scratch_if_given[0] = "dgamma";
    pa->scratch_if_given[1] = c ? "dbeta" : NULL;
    add_launch(pa, ks->op->kernels[0], wg, rows, 1, blocks, rows_args);
    struct launch *l =
        add_launch(pa, "norm_backward_reduce", RED_COLS, lanes,
                   (nvec + RED_COLS - 1) / RED_COLS, 1,
                   c ? ln_reduce : rms_reduce);
    memcpy(l->if_given, pa->scratch_if_given, sizeof l->if_given);
}

/* ---- checking and measuring ------------------------------------------ */

/* Row M's statistics: its mean (0 for rmsnorm) and r. */
static void row_stats(const float *xm, size_t D, int c, double eps,
                      double *mean, double *r)
{
    double sum = 0, var = 0;
    for (size_t i = 0; c && i < D; i++) {
        sum += xm[i];
    }
    *mean = sum / (double)D;
    for (size_t i = 0; i < D; i++) {
        var += (xm[i] - *mean) * (xm[i] - *mean);
    }
    *r = 1.0 / sqrt(var / (double)D + eps);
}

/* dx = r (g - mean(g) - xhat mean(g xhat)); dgamma (+)= dy xhat, dbeta
 * (+)= dy, g = gamma dy, xhat = (x - mean) r, in double. */
static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sizes, double *const *out)
{
    int c = centred(ks);
    size_t rows = sizes[0], D = (size_t)features(ks);
    double eps = emitted_float(spec_field(ks, "eps"));
    int acc = spec_field(ks, "accumulate") != 0;
    double *dx = out[BUF_DX], *dg = out[BUF_DGAMMA];
    double *db = c ? out[BUF_DBETA] : NULL;
    const float *gamma = in[BUF_GAMMA];
    for (size_t j = 0; j < D; j++) {
        if (dg != NULL) {
            dg[j] = acc ? in[BUF_DGAMMA][j] : 0.0;
        }
        if (db != NULL) {
            db[j] = acc ? in[BUF_DBETA][j] : 0.0;
        }
    }
    for (size_t m = 0; m < rows; m++) {
        const float *xm = in[BUF_X] + m * D, *dym = in[BUF_DY] + m * D;
        double mean, r, sg = 0, sgx = 0;
        row_stats(xm, D, c, eps, &mean, &r);
        for (size_t i = 0; i < D; i++) {
            double xhat = (xm[i] - mean) * r;
            sg += gamma[i] * (double)dym[i];
            sgx += gamma[i] * (double)dym[i] * xhat;
            if (dg != NULL) {
                dg[i] += dym[i] * xhat;
            }
            if (db != NULL) {
                db[i] += dym[i];
            }
        }
        double mg = c ? sg / (double)D : 0.0, mgx = sgx / (double)D;
        for (size_t i = 0; dx != NULL && i < D; i++) {
            double xhat = (xm[i] - mean) * r;
            dx[m * D + i] = r * (gamma[i] * (double)dym[i] - mg - xhat * mgx);
        }
    }
    return 0;
}

static void naive(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const row_args[] = {"rows", "x",  "gamma", "dy",
                                           "dx",   "scratch", NULL};
    static const char *const dgamma_args[] = {"rows", "x", "dy", "dgamma",
                                              "scratch", NULL};
    static const char *const dbeta_args[] = {"rows", "dy", "dbeta", NULL};
    struct path *pa = &p->path[0];
    plan_dtype(p, ks->dtype);
    plan_int(p, "FEATURES", "elements per row", features(ks));
    plan_float(p, "EPS", "added under the root", spec_field(ks, "eps"));
    plan_accumulate(ks, p);
    /* Each row's shift, mean and r, for the column kernels. */
    pa->scratch_per = 3;
    pa->scratch_sizes = SIZE_FIRST;
    naive_launch(p, centred(ks) ? "naive_layernorm_backward"
                                : "naive_rmsnorm_backward",
                 0, row_args);
    naive_launch_fixed(p, "naive_norm_dgamma", features(ks), dgamma_args);
    pa->launch[pa->n_launch - 1].if_given[0] = "dgamma";
    if (centred(ks)) {
        naive_launch_fixed(p, "naive_norm_dbeta", features(ks), dbeta_args);
        pa->launch[pa->n_launch - 1].if_given[0] = "dbeta";
    }
}

/* Each buffer once (dgamma and dbeta twice when added into); some 10
 * flops an element. */
static void costs(const struct kernel_spec *ks, const size_t *sizes,
                  double *bytes, double *flops)
{
    double d = (double)features(ks);
    *bytes = plan_io_bytes(ks, sizes);
    if (spec_field(ks, "accumulate") != 0) {
        *bytes += 4.0 * d * (centred(ks) ? 2 : 1);
    }
    *flops = 10.0 * d * (double)sizes[0];
}

static double error_bound(const struct kernel_spec *ks)
{
    return storage_error_bound(ks->dtype, 1e-4);
}

#define NORM_BACKWARD_OP                                                     \
    .example = "features=4096", .fields = fields,                            \
    .n_fields = sizeof fields / sizeof fields[0], .knobs = knobs,            \
    .n_knobs = N_KNOBS, .defaults = defaults, .validate = validate,          \
    .plan = plan, .tune_space = tune_space, .reference = reference,          \
    .naive = naive, .input_range = rows_input_range, .costs = costs,         \
    .error_bound = error_bound, .bench_sizes = rows_bench_sizes,             \
    .shape_text = rows_shape_text

const struct op_def op_rmsnorm_backward = {
    .name = "rmsnorm_backward",
    .summary = "dx = r * (g - xhat * mean(g * xhat)), dgamma (+)= sum of dy "
               "* xhat per row (g = gamma * dy, xhat = x * r, r = 1 / "
               "sqrt(mean(x^2) + eps))",
    .kernels = rmsnorm_kernels,
    NORM_BACKWARD_OP,
};

const struct op_def op_layernorm_backward = {
    .name = "layernorm_backward",
    .summary = "dx = r * (g - mean(g) - xhat * mean(g * xhat)), dgamma (+)= "
               "sum of dy * xhat, dbeta (+)= sum of dy per row (g = gamma * "
               "dy, xhat = (x - mean) * r, r = 1 / sqrt(var + eps))",
    .kernels = layernorm_kernels,
    NORM_BACKWARD_OP,
};
