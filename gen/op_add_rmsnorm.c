/* op_add_rmsnorm.c - the residual add fused into the next RMS norm: sum =
 * x + residual stored in the storage type (sum may be residual), y =
 * rmsnorm(sum as stored) * gamma; few long rows take rmsnorm's split
 * path (op_rows_split.c): add_rmsnorm_part stores each chunk's sum and
 * its sum of squares, add_rmsnorm_combine is rmsnorm_combine's on sum
 * (templates/rmsnorm_split.cl). */
#include <stdlib.h>

#include "op_rows.h"

static const struct param_def fields[] = {
    ROWS_FEATURES_FIELD,
    ROWS_EPS_FIELD,
};

enum { BUF_X, BUF_RESIDUAL, BUF_GAMMA, BUF_SUM, BUF_Y };
static const char *const inputs[] = {"x", "residual", NULL};
static const char *const params[] = {"gamma", NULL};
static const char *const outputs[] = {"sum", "y", NULL};

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    rows_validate_eps(ks, d);
    /* The sum of squares of each item, as rmsnorm's. */
    rows_validate(ks, d, 1);
}

/* The split path (rows up to split_max): add_rmsnorm_part, then
 * add_rmsnorm_combine, over the chunks of every row; their sums of
 * squares in scratch. */
static void plan_split(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const kernels[] = {"add_rmsnorm_part",
                                          "add_rmsnorm_combine"};
    static const char *const part_args[] = {"x", "residual", "sum",
                                            "scratch", NULL};
    static const char *const combine_args[] = {"rows", "sum", "gamma", "y",
                                               "scratch", NULL};
    static const char *const *const args[] = {part_args, combine_args};
    struct path *pa = rows_plan_split(ks, p, kernels, args);
    pa->why = "few rows: each row in SPLIT_GROUPS chunks, a work-group "
              "each: sum and its squares, then the outputs";
    pa->scratch_per = rows_split_groups(ks);
    pa->scratch_sizes = SIZE_FIRST;
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    rows_plan_begin(ks, p);
    rows_plan_float(ks, p, "eps", "EPS", "added to the mean square");
    rows_plan_norm_scale(ks, p);
    if (rows_has_split(ks)) {
        plan_split(ks, p);
    }
    rows_plan_launch(ks, p, "add_rmsnorm", inputs, params, outputs);
    p->buffer[BUF_SUM].may_alias = "residual";
    p->buffer[BUF_SUM].note = "may be residual, in place";
}

/* sum as the kernels store it (float32, then the storage type), and
 * rmsnorm's reference of it. */
static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sizes, double *const *out)
{
    size_t n = sizes[0] * (size_t)spec_field(ks, "features");
    float *stored = malloc((n ? n : 1) * sizeof *stored);
    if (stored == NULL) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        stored[i] = round_to_dtype(in[BUF_X][i] + in[BUF_RESIDUAL][i],
                                   ks->dtype);
        if (out[BUF_SUM] != NULL) {
            out[BUF_SUM][i] = stored[i];
        }
    }
    const float *norm_in[] = {stored, in[BUF_GAMMA]};
    double *norm_out[] = {NULL, NULL, out[BUF_Y]};
    int rc = out[BUF_Y] != NULL
                 ? rows_norm_reference(ks, norm_in, sizes, norm_out, 0)
                 : 0;
    free(stored);
    return rc;
}

static void naive(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const args[] = {"rows", "x",   "residual", "gamma",
                                       "sum",  "y",   NULL};
    plan_dtype(p, ks->dtype);
    plan_int(p, "FEATURES", "elements per row",
             (long)spec_field(ks, "features"));
    plan_float(p, "EPS", "added to the mean square", spec_field(ks, "eps"));
    naive_launch(p, "naive_add_rmsnorm", 0, args);
}

/* The split path's, searched by the tuner (rows_split_tune_space) but
 * taken from an entry by entry_rows. */
static const char *const few_rows_knobs[] = {"split", "split_max", NULL};

static const char *const add_rmsnorm_kernels[] = {
    "add_rmsnorm", "add_rmsnorm_part", "add_rmsnorm_combine", NULL};

const struct op_def op_add_rmsnorm = {
    .name = "add_rmsnorm",
    .summary = "sum = x + residual; y = sum / sqrt(mean(sum^2) + eps) * "
               "gamma per row",
    .kernels = add_rmsnorm_kernels,
    .example = "features=4096",
    .fields = fields,
    .n_fields = sizeof fields / sizeof fields[0],
    .knobs = rows_knobs,
    .n_knobs = ROWS_N_SPLIT_KNOBS,
    .defaults = rows_split_defaults,
    .validate = validate,
    .plan = plan,
    .tune_space = rows_split_tune_space,
    .few_rows_knobs = few_rows_knobs,
    .entry_rows = rows_split_entry_rows,
    .reference = reference,
    .naive = naive,
    .input_range = rows_input_range,
    .costs = rows_costs,
    .error_bound = rows_error_bound,
    .bench_sizes = rows_bench_sizes,
    .shape_text = rows_shape_text,
};
