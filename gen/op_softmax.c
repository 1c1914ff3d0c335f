/* op_softmax.c - softmax over each row, with an optional scale first. */
#include "op_rows.h"

static const struct param_def fields[] = {
    ROWS_FEATURES_FIELD,
    {"scale", VALUE_FLOAT, 0, 1.0, -1e30, 1e30, NULL,
     "multiplies x before the softmax (default 1)"},
};

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    /* The max and the sum of exponentials of each item. */
    rows_validate(ks, d, 2);
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const params[] = {NULL};
    rows_plan_begin(ks, p);
    rows_plan_float(ks, p, "scale", "SCALE", "applied to x first");
    rows_plan_end(ks, p, "softmax", params);
}

const struct op_def op_softmax = {
    .name = "softmax",
    .summary = "y = exp(scale*x - max) / sum(exp(scale*x - max)) per row",
    .template_file = "softmax.cl",
    .fields = fields,
    .n_fields = sizeof fields / sizeof fields[0],
    .knobs = rows_knobs,
    .n_knobs = ROWS_N_KNOBS,
    .defaults = rows_defaults,
    .validate = validate,
    .plan = plan,
    .tune_space = rows_tune_space,
};
