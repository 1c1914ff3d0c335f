/* op_rmsnorm.c - RMS normalisation of each row, times gamma; few long
 * rows take the split path (op_rows_split.c): rmsnorm_part writes each
 * chunk's sum of squares to scratch, rmsnorm_combine adds a row's and
 * writes the chunk's outputs (templates/rmsnorm_split.cl). */
#include "op_rows.h"

static const struct param_def fields[] = {
    ROWS_FEATURES_FIELD,
    ROWS_EPS_FIELD,
};

/* Inputs besides x and y, FEATURES elements each. */
static const char *const params[] = {"gamma", NULL};

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    rows_validate_eps(ks, d);
    /* The sum of squares of each item. */
    rows_validate(ks, d, 1);
}

/* The split path (rows up to split_max): rmsnorm_part, then
 * rmsnorm_combine, over the chunks of every row; their sums in scratch. */
static void plan_split(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const kernels[] = {"rmsnorm_part", "rmsnorm_combine"};
    static const char *const part_args[] = {"x", "scratch", NULL};
    static const char *const combine_args[] = {"rows", "x", "gamma", "y",
                                               "scratch", NULL};
    static const char *const *const args[] = {part_args, combine_args};
    struct path *pa = rows_plan_split(ks, p, kernels, args);
    pa->why = "few rows: each row in SPLIT_GROUPS chunks, a work-group "
              "each: their sums of squares, then the outputs";
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
    rows_plan_end(ks, p, "rmsnorm", params);
}

static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sizes, double *const *out)
{
    return rows_norm_reference(ks, in, sizes, out, 0);
}

static void naive(const struct kernel_spec *ks, struct plan *p)
{
    rows_naive(ks, p, "naive_rmsnorm", "eps", "EPS",
               "added to the mean square", params);
}

/* The split path's, searched by the tuner (rows_split_tune_space) but
 * taken from an entry by entry_rows. */
static const char *const few_rows_knobs[] = {"split", "split_max", NULL};

static const char *const rmsnorm_kernels[] = {"rmsnorm", "rmsnorm_part",
                                              "rmsnorm_combine", NULL};

const struct op_def op_rmsnorm = {
    .name = "rmsnorm",
    .summary = "y = x / sqrt(mean(x^2) + eps) * gamma per row",
    .kernels = rmsnorm_kernels,
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
