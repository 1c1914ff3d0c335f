/* op_softmax.c - softmax over each row, with an optional scale first;
 * few long rows take the split path (op_rows_split.c): softmax_part
 * writes each chunk's (max, sum of exponentials) to scratch,
 * softmax_combine merges a row's pairs and writes the chunk's outputs.
 * Fewer rows still, on GPUs, take the one-launch split path first:
 * softmax_coop's chunks wait for one another's pairs within one launch. */
#include "op_rows.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const struct param_def fields[] = {
    ROWS_FEATURES_FIELD,
    {"scale", VALUE_FLOAT, 0, 1.0, -1e30, 1e30, NULL,
     "multiplies x before the softmax (default 1)"},
};

/* Inputs besides x and y: none. */
static const char *const params[] = {NULL};

/* Rows the one-launch split path takes by default where it is on
 * (NVIDIA) over rows of COOP_STREAM_BYTES and more: past the rows its
 * chunks are sized for, in fewer, longer chunks read twice, which beat
 * the split path's two launches up to here (bench/RESULTS.md, "Softmax
 * over a vocabulary: many rows in one launch"). Then, up to
 * COOP_LONG_ROWS, a second one-launch path, softmax_coop_long: each row
 * in COOP_LONG_GROUPS chunks of the most items a work-group has, read
 * twice. */
#define COOP_STREAM_ROWS 32
#define COOP_STREAM_BYTES (192L << 10)
#define COOP_LONG_ROWS 64
#define COOP_LONG_GROUPS 2

/* Where a row is streamed, each work-item's loads of a group in flight
 * together: four 16-byte loads, as cross_entropy's blocks (bench/
 * RESULTS.md, "Streamed rows: a block's loads in flight together"). */
#define STREAM_LOADS 4

/* Whether the coop knobs are the defaults of NVIDIA's over long rows,
 * where the split path's rows reach COOP_LONG_ROWS. */
static int coop_streams(const struct kernel_spec *ks)
{
    return rows_has_coop(ks) && !spec_knob_set(ks, "coop_max") &&
           !spec_knob_set(ks, "coop_split") &&
           target_offers(ks->target, CAP_SHFL_SYNC) &&
           ks->knob[ROWS_KNOB_SPLIT_MAX].num >= COOP_LONG_ROWS &&
           (long)ks->field[0].num * dtype_size(ks->dtype) >=
               COOP_STREAM_BYTES;
}

/* The row ops' defaults, then the split paths' (op_rows_split.c). */
static void defaults(struct kernel_spec *ks)
{
    rows_split_defaults(ks);
    rows_coop_defaults(ks);
    if (coop_streams(ks)) {
        spec_knob_default(ks, "coop_max", COOP_STREAM_ROWS);
    }
}

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    /* The max and the sum of exponentials of each item. */
    rows_validate(ks, d, 2);
    rows_validate_coop(ks, d);
}

/* The one-launch split path (rows up to coop_max, while rows x chunks
 * fit the device's compute units): softmax_coop alone, the pairs in the
 * handle's sync buffer. */
static void plan_coop(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const args[] = {"x", "y", "sync", NULL};
    /* Each chunk's pair. */
    int longer = coop_streams(ks);
    struct path *pa = rows_plan_coop(ks, p, "softmax_coop", args, 2, 0, 1,
                                     1, longer ? COOP_LONG_ROWS : 0);
    pa->why = "few rows: each row in chunks, a work-group each, that wait "
              "for one another's (max, sum) pairs within one launch";
    if (!longer) {
        return;
    }
    plan_int(p, "COOP_LONG_WG", "one-launch split, most rows: work-items "
             "per group", ROWS_MAX_GROUP);
    plan_int(p, "COOP_LONG_ROWS", "one-launch split, most rows: rows at "
             "most", COOP_LONG_ROWS);
    pa = rows_plan_coop_path(p, "softmax_coop_long", args, COOP_LONG_ROWS,
                             COOP_LONG_GROUPS, COOP_LONG_GROUPS,
                             ROWS_MAX_GROUP);
    pa->why = "more rows: each row in 2 chunks read twice, a work-group "
              "each, that wait for one another within one launch";
}

/* The split path (rows up to split_max): softmax_part, then
 * softmax_combine, over the chunks of every row; their pairs in scratch. */
static void plan_split(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const kernels[] = {"softmax_part", "softmax_combine"};
    static const char *const part_args[] = {"x", "scratch", NULL};
    static const char *const combine_args[] = {"rows", "x", "y", "scratch",
                                               NULL};
    static const char *const *const args[] = {part_args, combine_args};
    struct path *pa = rows_plan_split(ks, p, kernels, args);
    pa->why = "few rows: each row in SPLIT_GROUPS chunks, a work-group "
              "each: their (max, sum) pairs, then the outputs";
    pa->scratch_per = 2 * rows_split_groups(ks);
    pa->scratch_sizes = SIZE_FIRST;
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    rows_plan_begin(ks, p);
    rows_plan_float(ks, p, "scale", "SCALE", "applied to x first");
    /* Below 128/FLT_MAX, scale * (x - max x) would be 0 * inf for a row
     * spanning more than FLT_MAX (scale 0), or lose moderate exponents
     * to -inf; at or above it, exp of an overflowed difference is 0 as it
     * should be (templates/softmax_common.cl). */
    int half_x = fabsf((float)spec_field(ks, "scale")) < 128.0f / FLT_MAX;
    plan_int(p, "HALF_X",
             half_x ? "x halved: x - max x must not overflow"
                    : "x - max x may overflow: exp gives 0",
             half_x);
    /* GPUs: exp2 of the exponent times log2 e takes fewer instructions
     * than exp (bench/RESULTS.md, "Softmax: exponentials as exp2 on
     * GPUs"); CPUs: PoCL runs exp and exp2 lane by lane, a polynomial on
     * the exponent bits vectorizes. */
    plan_int(p, "EXP_POLY", "exponentials as a polynomial on the exponent "
             "bits (CPUs)", ks->target == TARGET_CPU);
    plan_int(p, "EXP_BASE2", "else exponentials as exp2 (GPUs) or exp",
             ks->target != TARGET_CPU);
    /* Two barriers where the local-memory tree took up to four
     * (bench/RESULTS.md, "Softmax: the row merge on warp shuffles"). */
    rows_plan_shfl(ks, p);
    if (rows_has_coop(ks)) {
        plan_coop(ks, p);
    }
    if (rows_has_split(ks)) {
        plan_split(ks, p);
    }
    /* A streamed row is summed a group of STREAM_LOADS vectors at a
     * time (softmax_common.cl's stream_sum): the row ops' SUM_BLOCK says
     * so. */
    if (plan_set_int(p, "SUM_BLOCK", "vectors loaded at once, then summed",
                     STREAM_LOADS)) {
        plan_int(p, "STREAM_LOADS", "vectors an item loads at once where "
                 "it streams", STREAM_LOADS);
        rows_plan_l2_hints(ks, p, "STREAM_L2_HINTS",
                           "one launch: chunks read twice kept in L2", 1);
        rows_plan_stream_max(ks, p);
    }
    rows_plan_end(ks, p, "softmax", params);
}

static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sizes, double *const *out)
{
    size_t rows = sizes[0];
    double *y = out[1]; /* after x */
    size_t D = (size_t)spec_field(ks, "features");
    double s = spec_field(ks, "scale");
    for (size_t m = 0; m < rows; m++) {
        const float *xm = in[0] + m * D;
        double *ym = y + m * D;
        double mx = -INFINITY, sum = 0;
        for (size_t i = 0; i < D; i++) {
            mx = fmax(mx, s * xm[i]);
        }
        for (size_t i = 0; i < D; i++) {
            ym[i] = exp(s * xm[i] - mx);
            sum += ym[i];
        }
        for (size_t i = 0; i < D; i++) {
            ym[i] /= sum;
        }
    }
    return 0;
}

static void naive(const struct kernel_spec *ks, struct plan *p)
{
    rows_naive(ks, p, "naive_softmax", "scale", "SCALE",
               "applied to x first", params);
}

/* Half the spacing of the smallest values (the subnormals) of storage DT:
 * the most that rounding an output smaller than its least normal value
 * costs, however small the output. */
static double subnormal_half_spacing(enum dtype dt)
{
    switch (dt) {
    case DTYPE_F16:
        return 0x1p-25; /* normal from 2^-14 */
    case DTYPE_BF16:
        return 0x1p-134; /* normal from 2^-126, as float32 */
    default:
        return 0x1p-150;
    }
}

/* The rows' bound, plus what the storage's subnormals cost. Rounding y_i
 * costs 2^-11 |y_i| in f16 (within storage_error_bound's share) while y_i
 * is normal; below 2^-14 the grid is fixed, up to 2^-25 each. Outputs near
 * 1/D get there past D = 16384 (the naive kernel, rounding the same way,
 * too). They sum to 1, so ||y|| >= 1/sqrt(D), and D such errors add at
 * most sqrt(D) 2^-25 / (1/sqrt(D)) = D 2^-25 to the relative L2 error:
 * 0.002 at D = 65536, 0.5 at the most features, where f16 holds outputs
 * near 1/D to a bit or two. Negligible in bf16 and f32 storage. */
static double error_bound(const struct kernel_spec *ks)
{
    return rows_error_bound(ks) +
           spec_field(ks, "features") * subnormal_half_spacing(ks->dtype);
}

/* The split path's, searched by the tuner (rows_split_tune_space) but
 * taken from an entry by entry_rows. */
static const char *const few_rows_knobs[] = {"split", "split_max",
                                             "coop_split", "coop_max", NULL};

static const char *const softmax_kernels[] = {
    "softmax", "softmax_coop", "softmax_coop_long", "softmax_part",
    "softmax_combine", NULL};

const struct op_def op_softmax = {
    .name = "softmax",
    .summary = "y = exp(scale*x - max) / sum(exp(scale*x - max)) per row",
    .kernels = softmax_kernels,
    .example = "features=4096",
    .fields = fields,
    .n_fields = sizeof fields / sizeof fields[0],
    .knobs = rows_knobs,
    .n_knobs = ROWS_N_COOP_KNOBS,
    .defaults = defaults,
    .validate = validate,
    .plan = plan,
    .tune_space = rows_split_tune_space,
    .few_rows_knobs = few_rows_knobs,
    .entry_rows = rows_split_entry_rows,
    .reference = reference,
    .naive = naive,
    .costs = rows_costs,
    .error_bound = error_bound,
    .bench_sizes = rows_bench_sizes,
    .shape_text = rows_shape_text,
};
