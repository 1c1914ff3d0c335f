/* op_layernorm.c - layer normalisation of each row, times gamma plus beta. */
#include "op_rows.h"

static const struct param_def fields[] = {
    ROWS_FEATURES_FIELD,
    ROWS_EPS_FIELD,
};

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    rows_validate_eps(ks, d);
    /* Registers: two sums; streaming: count, mean and M2 per item. */
    rows_validate(ks, d, rows_in_registers(ks) ? 2 : 3);
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const params[] = {"gamma", "beta", NULL};
    rows_plan_begin(ks, p);
    rows_plan_float(ks, p, "eps", "EPS", "added to the variance");
    rows_plan_end(ks, p, "layernorm", params);
}

const struct op_def op_layernorm = {
    "layernorm",
    "y = (x - mean) / sqrt(var + eps) * gamma + beta per row (biased var)",
    "layernorm.cl",
    fields,
    sizeof fields / sizeof fields[0],
    rows_knobs,
    ROWS_N_KNOBS,
    rows_defaults,
    validate,
    plan,
    rows_tune_space,
};
