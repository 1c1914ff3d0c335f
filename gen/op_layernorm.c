/* op_layernorm.c - layer normalisation of each row, times gamma plus beta. */
#include "op_rows.h"

static const struct param_def fields[] = {
    ROWS_FEATURES_FIELD,
    ROWS_EPS_FIELD,
};

/* Inputs besides x and y, FEATURES elements each. */
static const char *const params[] = {"gamma", "beta", NULL};

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    rows_validate_eps(ks, d);
    /* The sum of x, then the sums of d and d^2. */
    rows_validate(ks, d, 3);
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    rows_plan_begin(ks, p);
    rows_plan_float(ks, p, "eps", "EPS", "added to the variance");
    rows_plan_norm_scale(ks, p);
    rows_plan_end(ks, p, "layernorm", params);
}

static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sizes, double *const *out)
{
    return rows_norm_reference(ks, in, sizes, out, 1);
}

static void naive(const struct kernel_spec *ks, struct plan *p)
{
    rows_naive(ks, p, "naive_layernorm", "eps", "EPS",
               "added to the variance", params);
}

static const char *const layernorm_kernels[] = {"layernorm", NULL};

const struct op_def op_layernorm = {
    .name = "layernorm",
    .summary = "y = (x - mean) / sqrt(var + eps) * gamma + beta per row "
               "(biased var)",
    .kernels = layernorm_kernels,
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
