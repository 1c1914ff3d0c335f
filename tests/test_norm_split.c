/* test_norm_split.c - the norms' split path (each row cut into chunks, a
 * work-group each: NAME_part, then NAME_combine) on the device against
 * the naive kernel and float64: rmsnorm, layernorm and add_rmsnorm at 1,
 * 2, 3 and 7 rows of widths 4096, 11008, 151936 and an odd one, every
 * dtype, the GPU and CPU defaults; which rows take which path, through
 * the stub; rows that cancel or pass float32's squares on the split path;
 * and the defaults the split knobs take. Joins the numeric suite. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"

static const char *const norm_ops[] = {"rmsnorm", "layernorm", "add_rmsnorm"};
#define N_NORM_OPS 3

/* Rows up to 7 split; 8 take one work-group per row. */
#define SPLIT_MAX 7

/* Builds OP (DTYPE, FIELDS, tile knobs TILE, the defaults of TARGET)
 * into K; 1 when built. */
static int split_build(struct nu_kernel *k, const char *op,
                       const char *dtype, const char *fields,
                       const char *tile, enum target target)
{
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(k, "kernels:\n  - {name: t_split, op: %s, dtype: %s, "
                    "%s, tile: {%s}}\n", op, dtype, fields, tile)) {
        return 0;
    }
    CU_ASSERT(spec_set_target(&k->set, target, &d) == 0);
    snprintf(k->yaml + strlen(k->yaml), sizeof k->yaml - strlen(k->yaml),
             "# op defaults for %s\n",
             target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
    return nu_build(k);
}

/* Whether the stub of K runs the split path at ROWS: its first path,
 * whose first launch is OP_part; checks NAME_path_index agrees. */
static int runs_split(const struct nu_kernel *k, const char *op, size_t rows)
{
    char part[64];
    size_t sizes[SPECL_MAX_SIZES] = {rows};
    const struct path *pa = stub_path(&k->stub, sizes);
    int index = k->stub.fn_path_index(k->stub.handle, sizes);
    CU_ASSERT(pa != NULL && index >= 0);
    if (pa == NULL || index < 0) {
        return -1;
    }
    snprintf(part, sizeof part, "%s_part", op);
    return index == 0 && strcmp(pa->launch[0].kernel, part) == 0;
}

/* Runs built K at 1, 2, 3 and 7 rows (the split path) and at 8 (the row
 * path), checking the path each takes. */
static void run_split_rows(struct nu_kernel *k, const char *op,
                           struct vdist x)
{
    static const size_t rows[] = {1, 2, 3, 7, 8};
    TU_CHECK(nu_knob(k, "split_max") == SPLIT_MAX && nu_knob(k, "split") > 1,
             "no split path (split %ld, split_max %ld):\n%s",
             nu_knob(k, "split"), nu_knob(k, "split_max"), k->yaml);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int split = runs_split(k, op, rows[i]);
        TU_CHECK(split == (rows[i] <= SPLIT_MAX),
                 "%zu rows %s the split path:\n%s", rows[i],
                 split ? "take" : "do not take", k->yaml);
        nu_run(k, rows[i], x);
    }
}

/* Widths 4096 and 11008 (the shape's defaults do not split them: split
 * 8 and 16 given), 151936 (the shape's own chunks) and 4097 (odd: vec 1,
 * chunks of 513 and a last of 506); each op in every dtype at each
 * width, with the GPU defaults (split work-groups of 128 or 256 items)
 * or the CPU ones (one item each) in turn; --full: both. */
static void test_split_widths(void)
{
    static const char *const widths[][2] = {
        {"features: 4096", "split: 8, split_max: 7"},
        {"features: 11008", "split: 16, split_max: 7"},
        {"features: 151936", "split_max: 7"},
        {"features: 4097, eps: 1.0e-6", "split: 8, split_max: 7"},
    };
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    for (int o = 0; o < N_NORM_OPS; o++) {
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
            for (int dt = 0; dt < 3; dt++) {
                for (int t = 0; t < 2; t++) {
                    if (!test_full && t != (int)((o + w + dt) % 2)) {
                        continue;
                    }
                    struct nu_kernel k;
                    if (split_build(&k, norm_ops[o], dtypes[dt],
                                    widths[w][0], widths[w][1],
                                    t ? TARGET_CPU : TARGET_GPU)) {
                        run_split_rows(&k, norm_ops[o], nu_unit());
                    }
                    nu_kernel_free(&k);
                }
            }
        }
    }
}

/* The row path's hard rows on the split path, judged by float64 alone
 * (the naive kernel's plain float32 sums fail them): a mean of 1e4 and a
 * spread of 1e-2 over 65537, also rising by 1 along the row (the chunks'
 * means must merge to a few roundings, or layernorm's variance
 * cancels), constant rows (layernorm:
 * y = beta), squares past FLT_MAX and near it, and squares among the
 * subnormals under eps 2^-126, summed again at a power-of-two scale by
 * every work-group of the row (norm_scale.cl). GPU and CPU defaults. */
static void test_split_hard(void)
{
    static const struct {
        const char *op, *fields;
        struct vdist x;
        double ramp; /* x also rises by this much along each row */
    } cases[] = {
        {"layernorm", "features: 65537, eps: 1.0e-6", {1e4, 1e-2}, 0},
        /* chunks' means apart by 1/8, thousands of roundings of 1e4 */
        {"layernorm", "features: 65537", {1e4, 1e-2}, 1.0},
        {"rmsnorm", "features: 65537", {1e4, 1e-2}, 0},
        {"layernorm", "features: 50257", {3.3, 0}, 0},
        {"rmsnorm", "features: 4097, eps: 1.1754943508222875e-38",
         {0, 1e18}, 0},
        {"layernorm", "features: 4097, eps: 1.1754943508222875e-38",
         {0, 3e38}, 0},
        {"layernorm", "features: 4097, eps: 1.1754943508222875e-38",
         {2e38, 1e38}, 0},
        {"rmsnorm", "features: 4097, eps: 1.1754943508222875e-38",
         {0, 1e-21}, 0},
        {"layernorm", "features: 4097, eps: 1.1754943508222875e-38",
         {0, 1e-21}, 0},
        {"rmsnorm", "features: 4097", {0, 3e38}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int t = 0; t < 2; t++) {
            struct nu_kernel k;
            if (split_build(&k, cases[i].op, "f32", cases[i].fields,
                            "split: 8, split_max: 7",
                            t ? TARGET_CPU : TARGET_GPU)) {
                k.reference_only = 1;
                k.x_ramp = cases[i].ramp;
                CU_ASSERT_EQUAL(runs_split(&k, cases[i].op, 3), 1);
                nu_run(&k, 3, cases[i].x);
            }
            nu_kernel_free(&k);
        }
    }
}

/* The defaults, softmax's (op_rows_split.c): GPUs split rows of 128 KiB
 * and more, up to 128 rows; CPUs chunks of 64 KiB or more, up to half
 * the row path's 16 rows per work-group; 4096 and 11008 not at all. */
static void test_split_defaults(void)
{
    static const struct {
        const char *op, *dtype;
        int features;
        enum target target;
        long split, split_max;
    } cases[] = {
        {"rmsnorm", "f32", 151936, TARGET_GPU, 64, 128},
        {"layernorm", "bf16", 151936, TARGET_GPU, 64, 128},
        {"add_rmsnorm", "f32", 65536, TARGET_GPU, 32, 128},
        {"rmsnorm", "f32", 4096, TARGET_GPU, 1, 0},
        {"layernorm", "bf16", 11008, TARGET_GPU, 1, 0},
        {"rmsnorm", "f32", 151936, TARGET_CPU, 8, 8},
        {"add_rmsnorm", "bf16", 151936, TARGET_CPU, 4, 8},
        {"layernorm", "f32", 11008, TARGET_CPU, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        struct diags d = {.out = stderr};
        if (nu_spec_ok(&k, "kernels:\n  - {name: t_def, op: %s, dtype: %s, "
                       "features: %d}\n", cases[i].op, cases[i].dtype,
                       cases[i].features)) {
            CU_ASSERT(spec_set_target(&k.set, cases[i].target, &d) == 0);
            long limit[4];
            int paths = nu_path_limits(&k, limit, 4) + 1;
            int want = cases[i].split > 1 ? 2 : 1;
            TU_CHECK(nu_knob(&k, "split") == cases[i].split &&
                         nu_knob(&k, "split_max") == cases[i].split_max &&
                         paths == want &&
                         (paths == 1 || limit[0] == cases[i].split_max),
                     "%s %s %d, target %d: split %ld, split_max %ld, %d "
                     "paths (want %ld, %ld, %d)", cases[i].op,
                     cases[i].dtype, cases[i].features,
                     (int)cases[i].target, nu_knob(&k, "split"),
                     nu_knob(&k, "split_max"), paths, cases[i].split,
                     cases[i].split_max, want);
        }
        nu_kernel_free(&k);
    }
}

int add_norm_split_numeric_tests(CU_pSuite s)
{
    if (CU_add_test(s, "norms: rows split over work-groups, widths 4096 to "
                    "151936", test_split_widths) == NULL ||
        CU_add_test(s, "norms: hard rows on the split path",
                    test_split_hard) == NULL ||
        CU_add_test(s, "norms: the split path's defaults",
                    test_split_defaults) == NULL) {
        return -1;
    }
    return 0;
}
