/* op_softmax.c - softmax over each row, with an optional scale first.
 *
 * One work-group per row (softmax.cl, the row ops' geometry) leaves most
 * of a GPU idle when rows are few and long (a vocabulary at decode: one
 * to a few rows of 150k columns). Up to `split_max` rows the split path
 * cuts each row into `split` chunks, a work-group each, in two launches:
 * softmax_part writes each chunk's (max, sum of exponentials) to
 * scratch, softmax_combine merges a row's pairs and writes the chunk's
 * outputs, reading it again while it is recent (in a GPU's cache), so
 * that memory sees about one read and one write of x. */
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

/* ---- the split path's geometry ---------------------------------------- */

/* GPUs: the chunks of one row spread over about a wave of a large GPU,
 * one work-group per compute unit (the H100 has 132), each item of a
 * split work-group loading at least SPLIT_ITEM_VECTORS vectors of the
 * chunk at once; rows split into fewer than SPLIT_GPU_MIN chunks (under
 * 128 KiB) gain too little to pay for a second launch. Up to
 * SPLIT_GPU_ROWS rows, one work-group per row would leave part of that
 * wave idle. */
#define SPLIT_GPU_GROUPS 128
#define SPLIT_ITEM_VECTORS 2
#define SPLIT_GPU_MIN 16
#define SPLIT_GPU_ROWS 128
/* CPUs (one work-item per work-group; PoCL runs each work-group on one
 * core): chunks of at least SPLIT_CPU_CHUNK bytes, up to
 * SPLIT_CPU_GROUPS per row, where a row makes SPLIT_CPU_MIN of them or
 * more. The row path's first work-group takes up to `rows` rows (16) on
 * one core, but reads each row twice from the cache where the split path,
 * once the rows outgrow the cache, reads its chunks again from memory
 * (PoCL, 2 cores, f32 151936: 1.0 against 1.3 ms at 8 rows, 1.9 against
 * 1.8 at 16): the split path runs up to half of `rows`. */
#define SPLIT_CPU_CHUNK 65536
#define SPLIT_CPU_GROUPS 64
#define SPLIT_CPU_MIN 4

static long knob(const struct kernel_spec *ks, int i)
{
    return (long)ks->knob[i].num;
}

static long pow2_at_most(long n)
{
    long p = 1;
    while (p * 2 <= n) {
        p *= 2;
    }
    return p;
}

/* Vectors per row. */
static long row_vectors(const struct kernel_spec *ks)
{
    return (long)spec_field(ks, "features") / knob(ks, ROWS_KNOB_VEC);
}

/* Work-items of a split work-group: as many as the row ops give a group
 * of short rows (ROWS_GROUP_ITEMS), no more than wg (1 on CPUs). */
static long split_items(const struct kernel_spec *ks)
{
    long most = dtype_size(ks->dtype) == 2 ? ROWS_GROUP_HALVES
                                           : ROWS_GROUP_ITEMS;
    long wg = knob(ks, ROWS_KNOB_WG);
    return wg < most ? wg : most;
}

/* Vectors per chunk, and the chunks of a row: `split` of them, fewer
 * where the row has fewer vectors or ceil(vectors / split) per chunk
 * leaves the last ones empty. */
static long chunk_vectors(const struct kernel_spec *ks)
{
    long split = knob(ks, ROWS_KNOB_SPLIT);
    return (row_vectors(ks) + split - 1) / split;
}

static long split_groups(const struct kernel_spec *ks)
{
    return (row_vectors(ks) + chunk_vectors(ks) - 1) / chunk_vectors(ks);
}

/* Whether the plan has the split path: `split` 1 or `split_max` 0 turn
 * it off. */
static int has_split(const struct kernel_spec *ks)
{
    return knob(ks, ROWS_KNOB_SPLIT) > 1 && knob(ks, ROWS_KNOB_SPLIT_MAX) > 0;
}

/* The chunks the shape makes for the target, a power of two (0: too few
 * to split). */
static long shape_split(const struct kernel_spec *ks)
{
    long vectors = row_vectors(ks);
    if (ks->target == TARGET_CPU) {
        long bytes = vectors * knob(ks, ROWS_KNOB_VEC) *
                     (long)dtype_size(ks->dtype);
        long n = bytes / SPLIT_CPU_CHUNK;
        n = pow2_at_most(n < SPLIT_CPU_GROUPS ? (n > 0 ? n : 1)
                                              : SPLIT_CPU_GROUPS);
        return n >= SPLIT_CPU_MIN ? n : 0;
    }
    long n = vectors / (split_items(ks) * SPLIT_ITEM_VECTORS);
    n = pow2_at_most(n < SPLIT_GPU_GROUPS ? (n > 0 ? n : 1)
                                          : SPLIT_GPU_GROUPS);
    return n >= SPLIT_GPU_MIN ? n : 0;
}

/* The row knobs' defaults, then the split path's: the shape's chunks up
 * to the target's rows, none (split 1, split_max 0) for rows too short.
 * A spec that gives split (2 or more) alone gets those rows; one that
 * gives split_max alone, the shape's chunks, at least 2. */
static void defaults(struct kernel_spec *ks)
{
    rows_defaults(ks);
    long n = shape_split(ks);
    int rows_asked = spec_knob_set(ks, "split_max") &&
                     knob(ks, ROWS_KNOB_SPLIT_MAX) > 0;
    spec_knob_default(ks, "split", n > 1 ? (double)n : rows_asked ? 2 : 1);
    long rows = ks->target == TARGET_CPU
                    ? (knob(ks, ROWS_KNOB_ROWS) + 1) / 2
                    : SPLIT_GPU_ROWS;
    spec_knob_default(ks, "split_max",
                      knob(ks, ROWS_KNOB_SPLIT) > 1 ? (double)rows : 0.0);
}

/* A tuning entry timed at ROWS rows shows on which side of ROWS the
 * crossover lies, not where: the split path ran there when ROWS <= its
 * split_max (with split 2 or more), and its split count was timed. KS
 * keeps the spec's split_max (or the default), raised to ROWS where the
 * split path ran or lowered below ROWS where the row path did; and the
 * entry's split count where it was timed. */
static void entry_rows(struct kernel_spec *ks, const struct kernel_spec *entry,
                       long rows)
{
    int split_ran = has_split(entry) &&
                    rows <= knob(entry, ROWS_KNOB_SPLIT_MAX);
    if (split_ran) {
        ks->knob[ROWS_KNOB_SPLIT] = entry->knob[ROWS_KNOB_SPLIT];
    }
    struct kernel_spec chosen = *ks;
    defaults(&chosen);
    long most = knob(&chosen, ROWS_KNOB_SPLIT_MAX);
    if (split_ran ? most < rows : most >= rows) {
        ks->knob[ROWS_KNOB_SPLIT_MAX].num = (double)(split_ran ? rows
                                                               : rows - 1);
        ks->knob[ROWS_KNOB_SPLIT_MAX].set = 1;
    }
}

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    /* The max and the sum of exponentials of each item. */
    rows_validate(ks, d, 2);
}

/* The split path (rows up to split_max): softmax_part, then
 * softmax_combine, over the chunks of every row; their pairs in scratch.
 * Its #defines join the prelude, SUM_BLOCK where the row path holds its
 * rows in registers (the chunks are always streamed). */
static void plan_split(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const part_args[] = {"x", "scratch", NULL};
    static const char *const combine_args[] = {"rows", "x", "y", "scratch",
                                               NULL};
    const char *const *args[] = {part_args, combine_args};
    long groups = split_groups(ks), items = split_items(ks);
    int streamed = 0;
    for (int i = 0; i < p->n_define; i++) {
        streamed |= strcmp(p->define[i].name, "SUM_BLOCK") == 0;
    }
    if (!streamed) {
        plan_int(p, "SUM_BLOCK", "vectors summed apart (split path)",
                 ROWS_SUM_BLOCK);
    }
    plan_int(p, "SPLIT_GROUPS", "split path: work-groups (chunks) per row",
             groups);
    plan_int(p, "SPLIT_VECS", "split path: vectors per chunk",
             chunk_vectors(ks));
    plan_int(p, "SPLIT_WG", "split path: work-items per work-group", items);
    struct path *pa = &p->path[p->n_path++];
    pa->max_rows = knob(ks, ROWS_KNOB_SPLIT_MAX);
    pa->why = "few rows: each row in SPLIT_GROUPS chunks, a work-group "
              "each: their (max, sum) pairs, then the outputs";
    for (int k = 0; k < 2; k++) {
        struct launch *l = &pa->launch[pa->n_launch++];
        l->kernel = k == 0 ? "softmax_part" : "softmax_combine";
        l->dims = 2;
        l->local[0] = (size_t)items;
        l->local[1] = 1;
        launch_fixed(l, 0, (size_t)groups);
        launch_over(l, 1, 1, SIZE_FIRST, 1);
        int a = 0;
        for (; args[k][a] != NULL; a++) {
            l->args[a] = args[k][a];
        }
        l->args[a] = NULL;
    }
    pa->scratch_per = 2 * groups;
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
     * than exp (H100, bf16 4096 x 32000: 197 against 215 us); PoCL's
     * exp2 is the slower (32000 wide at 128 rows: 1.69-1.88 ms against
     * 1.62-1.73). */
    plan_int(p, "EXP_BASE2", "exponentials as exp2 (GPUs) or exp",
             ks->target != TARGET_CPU);
    /* Where the target offers shfl.sync (NVIDIA): the row's (max, sum)
     * pairs merge across a warp by PTX shuffles, then across warps through
     * local memory, in two barriers where the tree took up to four (H100,
     * bf16 4096 x 32000: 183-184 against 196 us). */
    int shfl = target_offers(ks->target, CAP_SHFL_SYNC);
    plan_int(p, "SHFL_PTX",
             shfl ? "pairs merged across a warp by PTX shuffles"
                  : "pairs merged in local memory",
             shfl);
    if (shfl) {
        p->needs |= CAP_SHFL_SYNC;
    }
    if (has_split(ks)) {
        plan_split(ks, p);
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
static const char *const few_rows_knobs[] = {"split", "split_max", NULL};

static const char *const softmax_kernels[] = {"softmax", "softmax_part",
                                              "softmax_combine", NULL};

const struct op_def op_softmax = {
    .name = "softmax",
    .summary = "y = exp(scale*x - max) / sum(exp(scale*x - max)) per row",
    .kernels = softmax_kernels,
    .example = "features=4096",
    .fields = fields,
    .n_fields = sizeof fields / sizeof fields[0],
    .knobs = rows_knobs,
    .n_knobs = ROWS_N_SPLIT_KNOBS,
    .defaults = defaults,
    .validate = validate,
    .plan = plan,
    .tune_space = rows_split_tune_space,
    .few_rows_knobs = few_rows_knobs,
    .entry_rows = entry_rows,
    .reference = reference,
    .naive = naive,
    .costs = rows_costs,
    .error_bound = error_bound,
    .bench_sizes = rows_bench_sizes,
    .shape_text = rows_shape_text,
};
