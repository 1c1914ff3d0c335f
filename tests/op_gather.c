/* op_gather.c - test_gather, the tests' own op: two runtime sizes (batch,
 * seq), an int32 buffer and a float32 one whatever the dtype, so that the
 * runtime model beyond rows goes through create, enqueue, bench, tune and
 * the numeric checks. Registered by the test driver (op_add); specl
 * itself does not offer it.
 *
 *   y[b][s][:] = scale * table[ids[b][s]][:] + bias[b][:]
 *
 * and bias[b][:] alone for an id outside [0, table_rows). */
#include "op_gather.h"

#include <stdio.h>

static const struct param_def fields[] = {
    {"features", VALUE_INT, 1, 0, 1, 65536, NULL, "elements per row (D)"},
    {"table_rows", VALUE_INT, 1, 0, 1, 1 << 24, NULL,
     "rows of the table (V); ids outside [0, V) take bias alone"},
    {"scale", VALUE_FLOAT, 0, 1, -1e30, 1e30, NULL, "times the table row"},
};

static const struct param_def knobs[] = {
    {"items", VALUE_INT, 0, 64, 1, 1024, NULL, "features per work-group"},
    {"tokens", VALUE_INT, 0, 4, 1, 1024, NULL, "positions per work-group"},
};

static const char *const sizes[] = {"batch", "seq", NULL};
static const char *const kernels[] = {"test_gather", NULL};
static const struct tune_axis tune_space[] = {
    {"items", "32 64 128"}, {"tokens", "1 4"}, {NULL, NULL}};

enum { BUF_IDS, BUF_TABLE, BUF_BIAS, BUF_Y };
#define BATCH SIZE_BIT(0)
#define SEQ SIZE_BIT(1)

static long field(const struct kernel_spec *ks, const char *key)
{
    return (long)spec_field(ks, key);
}

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    long threads = (long)spec_knob(ks, "items") * (long)spec_knob(ks, "tokens");
    if (threads > 1024) {
        diag_error(d, ks->file, spec_knob_mark(ks, "tokens"),
                   "items x tokens must be <= 1024 work-items (got %ld)",
                   threads);
    }
}

/* The buffers of the host API, in order, as plan and naive plan share. */
static void gather_buffers(const struct kernel_spec *ks, struct plan *p)
{
    long D = field(ks, "features"), V = field(ks, "table_rows");
    plan_buffer(p, "ids", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ, 1);
    plan_buffer_elem(p, ELEM_I32);
    plan_buffer_doc(p, "[batch][seq]", NULL);
    plan_buffer(p, "table", 0, V * D, 0);
    plan_buffer_doc(p, "[table_rows][features]", NULL);
    plan_buffer(p, "bias", 0, 0, 0);
    plan_buffer_over(p, BATCH, D);
    plan_buffer_elem(p, ELEM_F32);
    plan_buffer_doc(p, "[batch][features]", NULL);
    plan_buffer(p, "y", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ, D);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_doc(p, "[batch][seq][features]", NULL);
    plan_public_int(p, "FEATURES", "elements per row", D);
    plan_public_int(p, "TABLE_ROWS", "rows of the table", V);
}

/* One launch of test_gather: ITEMS x TOKENS work-items a group. */
static void launch_gather(struct path *pa, long D, long items, long tokens)
{
    static const char *const args[] = {"batch", "seq", "ids", "table",
                                       "bias",  "y",   NULL};
    struct launch *l = &pa->launch[pa->n_launch++];
    l->kernel = "test_gather";
    l->dims = 2;
    l->local[0] = (size_t)items;
    l->local[1] = (size_t)tokens;
    launch_over(l, 0, (size_t)((D + items - 1) / items), BATCH, 1);
    launch_over(l, 1, 1, SEQ, (size_t)tokens);
    for (int a = 0; args[a] != NULL; a++) {
        l->args[a] = args[a];
    }
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    long D = field(ks, "features"), items = (long)spec_knob(ks, "items");
    long tokens = (long)spec_knob(ks, "tokens");
    plan_storage(p, ks);
    plan_int(p, "FEATURES", "elements per row", D);
    plan_int(p, "TABLE_ROWS", "rows of the table", field(ks, "table_rows"));
    plan_float(p, "SCALE", "times the table row", spec_field(ks, "scale"));
    plan_int(p, "ITEMS", "features per work-group", items);
    plan_int(p, "FEATURE_GROUPS", "work-groups per batch in dimension 0",
             (D + items - 1) / items);
    gather_buffers(ks, p);
    /* One sequence: a position per work-group, so that short prompts
     * still spread over the device. The path rule reads the first size. */
    p->n_path = 2;
    p->path[0].max_rows = 1;
    p->path[0].why = "batch 1: one position per work-group";
    launch_gather(&p->path[0], D, items, 1);
    p->path[1].why = "`tokens` positions per work-group";
    launch_gather(&p->path[1], D, items, tokens);
}

static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sz, double *const *out)
{
    size_t D = (size_t)field(ks, "features");
    long V = field(ks, "table_rows");
    double scale = emitted_float(spec_field(ks, "scale"));
    double *y = out[BUF_Y];
    for (size_t b = 0; b < sz[0]; b++) {
        for (size_t s = 0; s < sz[1]; s++) {
            size_t t = b * sz[1] + s;
            double id = in[BUF_IDS][t];
            for (size_t d = 0; d < D; d++) {
                double v = in[BUF_BIAS][b * D + d];
                if (id >= 0 && id < (double)V) {
                    v += scale * in[BUF_TABLE][(size_t)id * D + d];
                }
                y[t * D + d] = v;
            }
        }
    }
    return 0;
}

static void naive(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const args[] = {"batch", "seq", "ids", "table",
                                       "bias",  "y",   NULL};
    plan_storage(p, ks);
    plan_int(p, "FEATURES", "elements per row", field(ks, "features"));
    plan_int(p, "TABLE_ROWS", "rows of the table", field(ks, "table_rows"));
    plan_float(p, "SCALE", "times the table row", spec_field(ks, "scale"));
    naive_launch(p, "naive_gather", field(ks, "features"), args);
    struct path *pa = &p->path[p->n_path - 1];
    /* One work-item per element of y: dimension 1 over every token. */
    launch_over(&pa->launch[pa->n_launch - 1], 1, 1, BATCH | SEQ, 16);
}

static void input_range(const struct kernel_spec *ks, const char *buffer,
                        double *lo, double *hi)
{
    /* Ids: every row of the table, and some on either side of it. */
    if (buffer[0] == 'i') {
        *lo = -2;
        *hi = (double)field(ks, "table_rows") + 1;
    }
}

static void costs(const struct kernel_spec *ks, const size_t *sz,
                  double *bytes, double *flops)
{
    double tokens = (double)sz[0] * (double)sz[1];
    double D = (double)field(ks, "features");
    double row = D * (double)dtype_size(ks->dtype);
    /* ids, one table row and y per token; bias per batch. */
    *bytes = tokens * (4 + 2 * row) + (double)sz[0] * D * 4;
    *flops = 2 * tokens * D;
}

static double error_bound(const struct kernel_spec *ks)
{
    return storage_error_bound(ks->dtype, 1e-6);
}

static void bench_sizes(const struct kernel_spec *ks, size_t *sz)
{
    (void)ks;
    sz[0] = 4;
    sz[1] = 512;
}

static void shape_text(const struct kernel_spec *ks, const size_t *sz,
                       char *buf, size_t size)
{
    snprintf(buf, size, "batch=%zu seq=%zu D=%ld V=%ld", sz[0], sz[1],
             field(ks, "features"), field(ks, "table_rows"));
}

const struct op_def op_test_gather = {
    .name = "test_gather",
    .summary = "y[b][s] = scale * table[ids[b][s]] + bias[b] (tests only)",
    .sizes = sizes,
    .kernels = kernels,
    .example = "features=256 table_rows=1000",
    .fields = fields,
    .n_fields = sizeof fields / sizeof fields[0],
    .knobs = knobs,
    .n_knobs = sizeof knobs / sizeof knobs[0],
    .validate = validate,
    .plan = plan,
    .tune_space = tune_space,
    .reference = reference,
    .naive = naive,
    .input_range = input_range,
    .costs = costs,
    .error_bound = error_bound,
    .bench_sizes = bench_sizes,
    .shape_text = shape_text,
};
