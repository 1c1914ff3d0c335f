/* op_rows.c - knobs, defaults, checks and plans shared by the row ops.
 *
 * A row op runs one work-group of wg x rows work-items per `rows` rows
 * (templates/row_reduce.cl). Defaults aim at memory speed on GPUs:
 * 16-byte vectors where the row allows, about ROWS_ITEM_FLOATS elements
 * per work-item (enough loads in flight, few idle items), ROWS_GROUP_ITEMS
 * items per group for short rows (ROWS_ITEM_HALVES and ROWS_GROUP_HALVES
 * for f16 and bf16), and the row in registers when it fits.
 * CPUs want one work-item per row and wide vectors instead (wg 1, vec 16,
 * mode streaming); `specl tune` finds those. */
#include "op_rows.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Elements per work-item that the default wg aims at: 8 (two float4)
 * keep enough loads in flight for norms near copy bandwidth, more left
 * items idle; rows too long for 1024 items simply hold more. Half-width
 * storage wants more per item, in 16-byte accesses (vec 8): 32 elements
 * (bench/RESULTS.md, "Half-width row ops in 16-byte accesses"). */
#define ROWS_ITEM_FLOATS 8
#define ROWS_ITEM_HALVES 32
/* Largest local memory (bytes) a spec may ask for (and work-group:
 * ROWS_MAX_GROUP, op_rows.h): what every OpenCL GPU of interest offers. */
#define ROWS_MAX_LOCAL 32768

const char *const rows_mode_choices[] = {"auto", "registers", "streaming",
                                         NULL};
const struct param_def rows_knobs[ROWS_N_COOP_KNOBS] = {
    ROWS_COOP_KNOB_DEFS("work-items per row, a power of two (shape: about "
                        "8 elements each, 32 in f16 and bf16)"),
};

/* What the forward row ops' defaults aim at (the figures above). */
static const struct rows_aim forward_aim = {
    ROWS_ITEM_FLOATS, ROWS_ITEM_HALVES, ROWS_GROUP_ITEMS, ROWS_GROUP_HALVES,
    16, 0};

/* GPUs want many work-items per row and vec <= 4; CPUs one work-item per
 * row (wg 1) with wide vectors. */
const struct tune_axis rows_tune_space[] = {
    ROWS_TUNE_AXES,
    {NULL, NULL},
};

/* The same, then the split path's work-groups and rows. */
const struct tune_axis rows_split_tune_space[] = {
    ROWS_TUNE_AXES,
    ROWS_SPLIT_TUNE_AXES,
    {NULL, NULL},
};

/* The row's length: the op's first field (ROWS_FEATURES_FIELD, or
 * cross_entropy's vocab), named in messages by its key. */
static long features(const struct kernel_spec *ks)
{
    return (long)ks->field[0].num;
}

static const char *features_key(const struct kernel_spec *ks)
{
    return ks->op->fields[0].key;
}

static long knob(const struct kernel_spec *ks, int i)
{
    return (long)ks->knob[i].num;
}

static long ceil_div(long a, long b)
{
    return (a + b - 1) / b;
}

static long pow2_at_least(long n)
{
    long p = 1;
    while (p < n) {
        p *= 2;
    }
    return p;
}

static long pow2_at_most(long n)
{
    long p = 1;
    while (p * 2 <= n) {
        p *= 2;
    }
    return p;
}

/* Vectors per row, and per work-item (the last maybe partly past the end). */
static long row_vectors(const struct kernel_spec *ks)
{
    return features(ks) / knob(ks, ROWS_KNOB_VEC);
}

static long item_vectors(const struct kernel_spec *ks)
{
    return ceil_div(row_vectors(ks), knob(ks, ROWS_KNOB_WG));
}

static int row_fits(const struct kernel_spec *ks)
{
    return item_vectors(ks) * knob(ks, ROWS_KNOB_VEC) <= ROWS_REG_FLOATS;
}

int rows_in_registers(const struct kernel_spec *ks)
{
    switch ((int)knob(ks, ROWS_KNOB_MODE)) {
    case ROWS_MODE_REGISTERS:
        return 1;
    case ROWS_MODE_STREAMING:
        return 0;
    default:
        return row_fits(ks);
    }
}

/* CPUs: one work-item per row, 16 rows per work-group (AIM's), the widest
 * vector that divides the row, the row re-read (streaming): each
 * work-item walks its row with wide loads, which PoCL turns into SIMD
 * code, instead of a work-group reduction whose barriers it runs as loops
 * (the best config `specl tune` found for D = 4096 on PoCL: 3x the GPU
 * defaults there). */
static void rows_defaults_cpu(struct kernel_spec *ks,
                              const struct rows_aim *aim)
{
    struct param_value *k = ks->knob;
    long d = features(ks);
    if (!k[ROWS_KNOB_VEC].set) {
        long vec = 16;
        while (vec > 1 && d % vec != 0) {
            vec /= 2;
        }
        k[ROWS_KNOB_VEC].num = (double)vec;
    }
    if (!k[ROWS_KNOB_WG].set) {
        k[ROWS_KNOB_WG].num = 1;
    }
    if (!k[ROWS_KNOB_ROWS].set) {
        long wg = knob(ks, ROWS_KNOB_WG);
        k[ROWS_KNOB_ROWS].num =
            (double)(wg < aim->cpu_rows ? aim->cpu_rows / wg : 1);
    }
    if (!k[ROWS_KNOB_MODE].set) {
        k[ROWS_KNOB_MODE].num = knob(ks, ROWS_KNOB_WG) == 1 || !row_fits(ks)
                                    ? ROWS_MODE_STREAMING
                                    : ROWS_MODE_REGISTERS;
    }
}

void rows_defaults(struct kernel_spec *ks)
{
    rows_defaults_aim(ks, &forward_aim);
}

void rows_defaults_aim(struct kernel_spec *ks, const struct rows_aim *aim)
{
    struct param_value *k = ks->knob;
    long d = features(ks);
    if (ks->target == TARGET_CPU) {
        rows_defaults_cpu(ks, aim);
        return;
    }
    int half = dtype_size(ks->dtype) == 2;
    if (!k[ROWS_KNOB_VEC].set) {
        long widest = aim->gpu_vec != 0 ? aim->gpu_vec : half ? 8 : 4;
        long vec = widest;
        while (d % vec != 0) {
            vec /= 2;
        }
        k[ROWS_KNOB_VEC].num = (double)vec;
    }
    if (!k[ROWS_KNOB_WG].set) {
        long cap = ROWS_MAX_GROUP;
        if (k[ROWS_KNOB_ROWS].set) {
            cap = pow2_at_most(ROWS_MAX_GROUP / knob(ks, ROWS_KNOB_ROWS));
        }
        long want = pow2_at_least(
            ceil_div(d, half ? aim->item_halves : aim->item_floats));
        k[ROWS_KNOB_WG].num = (double)(want < cap ? want : cap);
    }
    if (!k[ROWS_KNOB_ROWS].set) {
        long wg = knob(ks, ROWS_KNOB_WG);
        long items = half ? aim->group_halves : aim->group_items;
        k[ROWS_KNOB_ROWS].num = wg < items ? (double)(items / wg) : 1;
    }
    if (!k[ROWS_KNOB_MODE].set) {
        k[ROWS_KNOB_MODE].num =
            row_fits(ks) ? ROWS_MODE_REGISTERS : ROWS_MODE_STREAMING;
    }
}

/* The mark of the first of knobs A, B that the spec set, else of A. */
static struct mark mark_of(const struct kernel_spec *ks, int a, int b)
{
    return !ks->knob[a].set && ks->knob[b].set ? ks->knob[b].mark
                                                : ks->knob[a].mark;
}

void rows_validate(const struct kernel_spec *ks, struct diags *d,
                   int local_floats)
{
    long feat = features(ks);
    long wg = knob(ks, ROWS_KNOB_WG);
    long rows = knob(ks, ROWS_KNOB_ROWS);
    long vec = knob(ks, ROWS_KNOB_VEC);
    int vec_ok = 0;
    if (vec != 1 && vec != 2 && vec != 4 && vec != 8 && vec != 16) {
        diag_error(d, ks->file, ks->knob[ROWS_KNOB_VEC].mark,
                   "tile vec (%ld) must be 1, 2, 4, 8 or 16", vec);
    } else if (feat % vec != 0) {
        diag_error(d, ks->file, ks->knob[ROWS_KNOB_VEC].mark,
                   "tile vec (%ld) must divide %s (%ld)", vec,
                   features_key(ks), feat);
    } else {
        vec_ok = 1;
    }
    if ((wg & (wg - 1)) != 0) {
        diag_error(d, ks->file, ks->knob[ROWS_KNOB_WG].mark,
                   "tile wg (%ld) must be a power of two", wg);
    }
    if (wg * rows > ROWS_MAX_GROUP) {
        diag_error(d, ks->file, mark_of(ks, ROWS_KNOB_ROWS, ROWS_KNOB_WG),
                   "tile wg (%ld) times rows (%ld) must be <= %d", wg, rows,
                   ROWS_MAX_GROUP);
    } else if (local_floats * wg * rows * 4 > ROWS_MAX_LOCAL) {
        diag_error(d, ks->file, mark_of(ks, ROWS_KNOB_ROWS, ROWS_KNOB_WG),
                   "tile wg (%ld) times rows (%ld) needs %ld bytes of local "
                   "memory; at most %d",
                   wg, rows, local_floats * wg * rows * 4, ROWS_MAX_LOCAL);
    }
    if (vec_ok && knob(ks, ROWS_KNOB_MODE) == ROWS_MODE_REGISTERS &&
        !row_fits(ks)) {
        diag_error(d, ks->file, ks->knob[ROWS_KNOB_MODE].mark,
                   "tile mode registers needs %ld floats per work-item "
                   "(%s %ld over wg %ld); at most %d fit: %suse mode "
                   "streaming",
                   item_vectors(ks) * vec, features_key(ks), feat, wg,
                   ROWS_REG_FLOATS,
                   wg < ROWS_MAX_GROUP ? "raise wg or " : "");
    }
}

void rows_validate_eps(const struct kernel_spec *ks, struct diags *d)
{
    double eps = spec_field(ks, "eps");
    if (!((float)eps > 0)) {
        diag_error(d, ks->file, spec_field_mark(ks, "eps"),
                   "eps (%g) must be > 0%s", eps,
                   eps > 0 ? " as a float32" : "");
    }
}

void rows_plan_begin(const struct kernel_spec *ks, struct plan *p)
{
    plan_storage(p, ks);
    plan_int(p, "FEATURES", "elements per row", features(ks));
    plan_public_int(p, "FEATURES", "elements per row", features(ks));
    plan_int(p, "VEC", "elements per load and store", knob(ks, ROWS_KNOB_VEC));
    plan_int(p, "WG_SIZE", "work-items per row", knob(ks, ROWS_KNOB_WG));
    plan_int(p, "ROWS_PER_GROUP", "rows per work-group",
             knob(ks, ROWS_KNOB_ROWS));
    plan_int(p, "ROW_IN_REGISTERS",
             rows_in_registers(ks) ? "row held in registers, x read once"
                                   : "row streamed, x re-read",
             rows_in_registers(ks));
    plan_int(p, "NVEC", "vectors per row", row_vectors(ks));
    plan_int(p, "SLOTS", "vectors per work-item, rounded up",
             item_vectors(ks));
    if (!rows_in_registers(ks)) {
        plan_int(p, "SUM_BLOCK", "vectors summed apart, then added "
                 "compensated", ROWS_SUM_BLOCK);
    }
}

void rows_plan_shfl(const struct kernel_spec *ks, struct plan *p)
{
    plan_flag(p, "SHFL_PTX", "pairs merged across a warp by PTX shuffles",
              "pairs merged in local memory",
              target_offers(ks->target, CAP_SHFL_SYNC), CAP_SHFL_SYNC);
}

int rows_plan_l2_hints(const struct kernel_spec *ks, struct plan *p,
                       const char *name, const char *text, int wanted)
{
    long vec = (long)ks->knob[ROWS_KNOB_VEC].num;
    int hints = wanted && target_offers(ks->target, CAP_L2_HINT) &&
                ((ks->dtype == DTYPE_F32 && vec == 4) ||
                 (ks->dtype == DTYPE_BF16 && vec == 8 &&
                  target_offers(ks->target, CAP_CVT_BF16)));
    plan_flag(p, name, text, "no cache hints", hints, CAP_L2_HINT);
    return hints;
}

void rows_plan_stream_max(const struct kernel_spec *ks, struct plan *p)
{
    int gpu = ks->target != TARGET_CPU;
    plan_int(p, "STREAM_FMAX",
             gpu ? "the streamed max by fmax" : "the streamed max by ?:",
             gpu);
}

void rows_plan_float(const struct kernel_spec *ks, struct plan *p,
                     const char *key, const char *name, const char *comment)
{
    double value = spec_field(ks, key);
    plan_float(p, name, comment, value);
    plan_public_float(p, name, comment, value);
}

void rows_plan_norm_scale(const struct kernel_spec *ks, struct plan *p)
{
    float eps = (float)spec_field(ks, "eps");
    /* EPS * 2^2k <= 2^100 keeps the scaled eps, and a mean square under
     * 2^3 beside it, finite. */
    int k = (int)floor((100.0 - log2(eps)) / 2.0);
    plan_int(p, "NORM_TINY_SUMS",
             "squares among the subnormals would show beside eps",
             eps < 0x1p-96f);
    plan_int(p, "NORM_SCALE_MAX", "largest rescaling exponent",
             k < 0 ? 0 : k > 100 ? 100 : k);
}

void rows_plan_end(const struct kernel_spec *ks, struct plan *p,
                   const char *kernel, const char *const *params)
{
    static const char *const x[] = {"x", NULL}, *const y[] = {"y", NULL};
    rows_plan_launch(ks, p, kernel, x, params, y);
}

void rows_plan_launch(const struct kernel_spec *ks, struct plan *p,
                      const char *kernel, const char *const *inputs,
                      const char *const *params, const char *const *outputs)
{
    long d = features(ks);
    struct path *path = &p->path[p->n_path++];
    struct launch *l = &path->launch[path->n_launch++];
    int a = 0;
    path->max_rows = 0;
    path->why = knob(ks, ROWS_KNOB_ROWS) == 1
                    ? "one work-group per row"
                    : "one work-group per `rows` rows (tile knob)";
    l->kernel = kernel;
    l->dims = 2;
    l->local[0] = (size_t)knob(ks, ROWS_KNOB_WG);
    l->local[1] = (size_t)knob(ks, ROWS_KNOB_ROWS);
    launch_fixed(l, 0, 1);
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)knob(ks, ROWS_KNOB_ROWS));
    l->args[a++] = "rows";
    for (int i = 0; inputs[i] != NULL; i++) {
        plan_buffer(p, inputs[i], d, 0, 0);
        plan_buffer_doc(p, "[rows][features]", NULL);
        l->args[a++] = inputs[i];
    }
    for (int i = 0; params[i] != NULL; i++) {
        plan_buffer(p, params[i], 0, d, 0);
        plan_buffer_doc(p, "[features]", NULL);
        l->args[a++] = params[i];
    }
    for (int i = 0; outputs[i] != NULL; i++) {
        plan_buffer(p, outputs[i], d, 0, 0);
        plan_buffer_role(p, BUFFER_OUT);
        plan_buffer_doc(p, "[rows][features]", NULL);
        l->args[a++] = outputs[i];
    }
    l->args[a] = NULL;
}

/* ---- checking and measuring ------------------------------------------ */

int rows_norm_reference(const struct kernel_spec *ks, const float *const *in,
                        const size_t *sizes, double *const *out, int centred)
{
    size_t rows = sizes[0];
    double *y = out[centred ? 3 : 2]; /* after x, gamma (and beta) */
    size_t D = (size_t)features(ks);
    double eps = spec_field(ks, "eps");
    const float *x = in[0], *gamma = in[1];
    const float *beta = centred ? in[2] : NULL;
    for (size_t m = 0; m < rows; m++) {
        const float *xm = x + m * D;
        double *ym = y + m * D;
        double mean = 0, var = 0;
        for (size_t i = 0; centred && i < D; i++) {
            mean += xm[i];
        }
        mean /= (double)D;
        for (size_t i = 0; i < D; i++) {
            var += (xm[i] - mean) * (xm[i] - mean);
        }
        double inv = 1.0 / sqrt(var / (double)D + eps);
        for (size_t i = 0; i < D; i++) {
            ym[i] = (xm[i] - mean) * inv * gamma[i] +
                    (centred ? beta[i] : 0.0);
        }
    }
    return 0;
}

void rows_naive(const struct kernel_spec *ks, struct plan *p,
                const char *kernel, const char *key, const char *name,
                const char *comment, const char *const *params)
{
    const char *args[8];
    int a = 0;
    plan_dtype(p, ks->dtype);
    plan_int(p, "FEATURES", "elements per row", features(ks));
    plan_float(p, name, comment, spec_field(ks, key));
    args[a++] = "rows";
    args[a++] = "x";
    for (int i = 0; params[i] != NULL; i++) {
        args[a++] = params[i];
    }
    args[a++] = "y";
    args[a] = NULL;
    naive_launch(p, kernel, 0, args);
}

void rows_input_range(const struct kernel_spec *ks, const char *buffer,
                      double *lo, double *hi)
{
    (void)ks;
    if (strcmp(buffer, "gamma") == 0) {
        *lo = 0.5;
        *hi = 1.5;
    }
}

void rows_costs(const struct kernel_spec *ks, const size_t *sizes,
                double *bytes, double *flops)
{
    *bytes = plan_io_bytes(ks, sizes);
    *flops = 5.0 * (double)((size_t)features(ks) * sizes[0]);
}

double rows_error_bound(const struct kernel_spec *ks)
{
    return storage_error_bound(ks->dtype, 1e-5);
}

void rows_bench_sizes(const struct kernel_spec *ks, size_t *sizes)
{
    long rows = (16L << 20) / features(ks);
    sizes[0] = rows < 1 ? 1 : (size_t)rows;
}

void rows_shape_text(const struct kernel_spec *ks, const size_t *sizes,
                     char *buf, size_t size)
{
    snprintf(buf, size, "%zux%ld", sizes[0], features(ks));
}
