/* op_swiglu.c - the gated MLP's activation, forward (swiglu: y =
 * act(gate) * up) and backward (swiglu_backward: dgate = dy * up *
 * act'(gate), dup = dy * act(gate)), element by element over rows of
 * FEATURES; act is SiLU (Llama), GELU's tanh form (Gemma) or exact GELU. */
#include <math.h>
#include <stdio.h>

#include "op.h"

enum { ACT_SILU, ACT_GELU_TANH, ACT_GELU };
static const char *const activation_choices[] = {"silu", "gelu_tanh", "gelu",
                                                 NULL};

static const struct param_def fields[] = {
    {"features", VALUE_INT, 1, 0, 1, 16777216, NULL,
     "elements per row (D); rows (M) are given at run time"},
    {"activation", VALUE_CHOICE, 0, ACT_SILU, 0, 0, activation_choices,
     "silu (default), gelu_tanh or gelu (exact, erf)"},
};

enum { KNOB_WG, KNOB_VEC, KNOB_ROWS, N_KNOBS };
static const struct param_def knobs[N_KNOBS] = {
    [KNOB_WG] = {"wg", VALUE_INT, 0, 256, 1, 1024, NULL,
                 "work-items of a group along a row"},
    [KNOB_VEC] = {"vec", VALUE_INT, 0, 4, 1, 8, NULL,
                  "elements a work-item loads at once: 1, 2, 4 or 8, "
                  "dividing features"},
    [KNOB_ROWS] = {"rows", VALUE_INT, 0, 1, 1, 4096, NULL,
                   "rows each work-item walks"},
};

/* The elements and bytes make them memory-bound: wide groups on GPUs,
 * long walks on CPUs. */
static const struct tune_axis tune_space[] = {
    {"wg", "32 64 128 256 512 1024"},
    {"vec", "1 2 4 8"},
    {"rows", "1 2 4 8 16"},
    {NULL, NULL},
};

static const char *const forward_kernels[] = {"swiglu", NULL};
static const char *const backward_kernels[] = {"swiglu_backward", NULL};

static long features(const struct kernel_spec *ks)
{
    return (long)spec_field(ks, "features");
}

static long knob(const struct kernel_spec *ks, int i)
{
    return (long)ks->knob[i].num;
}

static int backward(const struct kernel_spec *ks)
{
    return ks->op->kernels == backward_kernels;
}

/* GPUs: 16-byte accesses (bf16 gelu_tanh went from 91% to 99% of a copy
 * at 8 elements; bench/RESULTS.md). CPUs: the widest vector but for
 * bf16, which PoCL vectorizes best across work-items of one element
 * each. */
static long default_vec(const struct kernel_spec *ks)
{
    if (ks->target != TARGET_CPU) {
        return ks->dtype == DTYPE_F32 ? 4 : 8;
    }
    return ks->dtype == DTYPE_BF16 ? 1 : 8;
}

static void defaults(struct kernel_spec *ks)
{
    long d = features(ks), vec = default_vec(ks);
    while (d % vec != 0) {
        vec /= 2;
    }
    /* A group spans 1024 elements on GPUs, 512 on CPUs, which PoCL
     * runs as one vectorized loop (bf16 went 1.2x faster than at 64). */
    long per_row = d / vec, wg = 1;
    long most = (ks->target == TARGET_CPU ? 512 : 1024) / vec;
    while (wg < per_row && wg < most) {
        wg *= 2;
    }
    spec_knob_default(ks, "vec", (double)vec);
    spec_knob_default(ks, "wg", (double)wg);
    /* One row a work-item on CPUs too: a loop over rows in each
     * work-item ran slower on PoCL (bench/RESULTS.md). */
    spec_knob_default(ks, "rows", 1);
}

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    long vec = knob(ks, KNOB_VEC);
    if (vec != 1 && vec != 2 && vec != 4 && vec != 8) {
        diag_error(d, ks->file, spec_knob_mark(ks, "vec"),
                   "vec must be 1, 2, 4 or 8 (got %ld)", vec);
    } else if (features(ks) % vec != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "vec"),
                   "vec must divide features (got vec %ld, features %ld)",
                   vec, features(ks));
    }
}

/* The defines both directions' kernels and naive kernels read. */
static void plan_common(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const names[] = {"ACT_SILU", "ACT_GELU_TANH",
                                        "ACT_GELU"};
    plan_int(p, "FEATURES", "elements per row", features(ks));
    plan_int(p, "ACTIVATION", names[(int)spec_field(ks, "activation")],
             (long)spec_field(ks, "activation"));
}

/* The buffers: gate, up (and dy), then the outputs. */
static void plan_buffers(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const fwd[] = {"gate", "up", "y", NULL};
    static const char *const bwd[] = {"gate", "up", "dy", "dgate", "dup",
                                      NULL};
    const char *const *names = backward(ks) ? bwd : fwd;
    int inputs = backward(ks) ? 3 : 2;
    for (int i = 0; names[i] != NULL; i++) {
        plan_buffer(p, names[i], features(ks), 0, 0);
        if (i >= inputs) {
            plan_buffer_role(p, BUFFER_OUT);
        }
        plan_buffer_doc(p, "[rows][features]", NULL);
    }
    plan_public_int(p, "FEATURES", "elements per row", features(ks));
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    long vec = knob(ks, KNOB_VEC), wg = knob(ks, KNOB_WG);
    long rows = knob(ks, KNOB_ROWS);
    long per_row = features(ks) / vec;
    plan_storage(p, ks);
    plan_common(ks, p);
    plan_int(p, "VEC", "elements per load and store", vec);
    plan_int(p, "ROWS_PER_GROUP", "rows each work-item walks", rows);
    /* The test for work-items past the row, only where there are any:
     * PoCL vectorizes the straight kernel less well with it. */
    plan_int(p, "ROW_TAIL", "work-groups reach past a row",
             per_row % wg != 0);
    /* PoCL's exp left the CPU kernels compute-bound (bench/RESULTS.md);
     * a result stored in 16 bits needs 2^f to 1e-4 only. */
    plan_int(p, "EXP_POLY", "degree of the sigmoid's exp polynomial (CPUs)",
             ks->target != TARGET_CPU ? 0 : ks->dtype == DTYPE_F32 ? 5 : 3);
    plan_buffers(ks, p);
    struct path *pa = &p->path[p->n_path++];
    pa->why = "VEC elements a work-item, ROWS_PER_GROUP rows each";
    struct launch *l = &pa->launch[pa->n_launch++];
    l->kernel = ks->op->kernels[0];
    l->dims = 2;
    l->local[0] = (size_t)wg;
    l->local[1] = 1;
    launch_fixed(l, 0, (size_t)((per_row + wg - 1) / wg));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)rows);
    int a = 0;
    l->args[a++] = "rows";
    for (int i = 0; i < p->n_buffer; i++) {
        l->args[a++] = p->buffer[i].name;
    }
    l->args[a] = NULL;
}

/* ---- checking and measuring ------------------------------------------ */

/* 1 / (1 + e^-x), from e^-|x|. */
static double sigmoid(double x)
{
    double e = exp(-fabs(x));
    return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}

static const double gelu_k = 0.79788456080286535588; /* sqrt(2 / pi) */
static const double gelu_c = 0.044715;

static double act(int a, double x)
{
    switch (a) {
    case ACT_GELU_TANH:
        return x * sigmoid(2 * gelu_k * (x + gelu_c * x * x * x));
    case ACT_GELU:
        return 0.5 * x * erfc(-x / sqrt(2.0));
    default:
        return x * sigmoid(x);
    }
}

static double act_grad(int a, double x)
{
    switch (a) {
    case ACT_GELU_TANH: {
        double s = sigmoid(2 * gelu_k * (x + gelu_c * x * x * x));
        double slope = gelu_k * (1 + 3 * gelu_c * x * x);
        return s + (s == 1 || s == 0 ? 0 : 2 * x * s * (1 - s) * slope);
    }
    case ACT_GELU:
        return 0.5 * erfc(-x / sqrt(2.0)) +
               x * exp(-0.5 * x * x) / sqrt(2 * 3.14159265358979323846);
    default: {
        double s = sigmoid(x);
        return s + x * s * (1 - s);
    }
    }
}

static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sizes, double *const *out)
{
    size_t n = sizes[0] * (size_t)features(ks);
    int a = (int)spec_field(ks, "activation");
    const float *gate = in[0], *up = in[1];
    for (size_t i = 0; i < n; i++) {
        if (!backward(ks)) {
            if (out[2] != NULL) {
                out[2][i] = act(a, gate[i]) * up[i];
            }
            continue;
        }
        double dy = in[2][i];
        if (out[3] != NULL) {
            out[3][i] = dy * up[i] * act_grad(a, gate[i]);
        }
        if (out[4] != NULL) {
            out[4][i] = dy * act(a, gate[i]);
        }
    }
    return 0;
}

static void naive(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const fwd[] = {"rows", "gate", "up", "y", NULL};
    static const char *const bwd[] = {"rows", "gate", "up", "dy",
                                      "dgate", "dup", NULL};
    plan_dtype(p, ks->dtype);
    plan_common(ks, p);
    naive_launch(p, backward(ks) ? "naive_swiglu_backward" : "naive_swiglu",
                 features(ks), backward(ks) ? bwd : fwd);
}

/* Every buffer once; some 10 flops an element (20 backward). */
static void costs(const struct kernel_spec *ks, const size_t *sizes,
                  double *bytes, double *flops)
{
    *bytes = plan_io_bytes(ks, sizes);
    *flops = (backward(ks) ? 20.0 : 10.0) * (double)sizes[0] *
             (double)features(ks);
}

static double error_bound(const struct kernel_spec *ks)
{
    return storage_error_bound(ks->dtype, backward(ks) ? 1e-4 : 1e-5);
}

/* 16 Mi elements' worth of rows. */
static void bench_sizes(const struct kernel_spec *ks, size_t *sizes)
{
    long rows = (16L << 20) / features(ks);
    sizes[0] = rows < 1 ? 1 : (size_t)rows;
}

static void shape_text(const struct kernel_spec *ks, const size_t *sizes,
                       char *buf, size_t size)
{
    snprintf(buf, size, "%zux%ld %s", sizes[0], features(ks),
             activation_choices[(int)spec_field(ks, "activation")]);
}

#define SWIGLU_OP                                                            \
    .example = "features=11008", .fields = fields,                           \
    .n_fields = sizeof fields / sizeof fields[0], .knobs = knobs,            \
    .n_knobs = N_KNOBS, .defaults = defaults, .validate = validate,          \
    .plan = plan, .tune_space = tune_space, .reference = reference,          \
    .naive = naive, .costs = costs, .error_bound = error_bound,              \
    .bench_sizes = bench_sizes, .shape_text = shape_text

const struct op_def op_swiglu = {
    .name = "swiglu",
    .summary = "y = act(gate) * up per element (act: silu, gelu_tanh, gelu)",
    .kernels = forward_kernels,
    SWIGLU_OP,
};

const struct op_def op_swiglu_backward = {
    .name = "swiglu_backward",
    .summary = "dgate = dy * up * act'(gate), dup = dy * act(gate)",
    .kernels = backward_kernels,
    SWIGLU_OP,
};
