/* op_rmsnorm.c - RMS normalisation of each row, times gamma. */
#include "op_rows.h"

static const struct param_def fields[] = {
    ROWS_FEATURES_FIELD,
    ROWS_EPS_FIELD,
};

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    rows_validate_eps(ks, d);
    rows_validate(ks, d, 1);
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const params[] = {"gamma", NULL};
    rows_plan_begin(ks, p);
    rows_plan_float(ks, p, "eps", "EPS", "added to the mean square");
    rows_plan_end(ks, p, "rmsnorm", params);
}

const struct op_def op_rmsnorm = {
    "rmsnorm",
    "y = x / sqrt(mean(x^2) + eps) * gamma per row",
    "rmsnorm.cl",
    fields,
    sizeof fields / sizeof fields[0],
    rows_knobs,
    ROWS_N_KNOBS,
    rows_defaults,
    validate,
    plan,
    rows_tune_space,
};
