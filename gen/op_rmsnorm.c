/* op_rmsnorm.c - RMS normalisation of each row, times gamma. */
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

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    rows_plan_begin(ks, p);
    rows_plan_float(ks, p, "eps", "EPS", "added to the mean square");
    rows_plan_norm_scale(ks, p);
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

static const char *const rmsnorm_kernels[] = {"rmsnorm", NULL};

const struct op_def op_rmsnorm = {
    .name = "rmsnorm",
    .summary = "y = x / sqrt(mean(x^2) + eps) * gamma per row",
    .kernels = rmsnorm_kernels,
    .example = "features=4096",
    .fields = fields,
    .n_fields = sizeof fields / sizeof fields[0],
    .knobs = rows_knobs,
    .n_knobs = ROWS_N_KNOBS,
    .defaults = rows_defaults,
    .validate = validate,
    .plan = plan,
    .tune_space = rows_tune_space,
    .reference = reference,
    .naive = naive,
    .input_range = rows_input_range,
    .costs = rows_costs,
    .error_bound = rows_error_bound,
    .bench_sizes = rows_bench_sizes,
    .shape_text = rows_shape_text,
};
