/* test_add_norm.c - add_rmsnorm on the device against its naive kernel and
 * float64: dtypes, widths, rows, the GPU and CPU defaults, sums that
 * cancel or pass float32's squares, and sum computed in place of
 * residual. Joins the numeric suite. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"

enum { BUF_X, BUF_RESIDUAL, BUF_GAMMA, BUF_SUM, BUF_Y };

/* Builds add_rmsnorm (DTYPE, FEATURES, extra fields MORE; the defaults of
 * TARGET) into K; 1 when built. */
static int add_norm_build(struct nu_kernel *k, const char *dtype,
                          int features, const char *more, enum target target)
{
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(k, "kernels:\n  - {name: t_add_norm, op: add_rmsnorm, "
                    "dtype: %s, features: %d%s}\n", dtype, features, more)) {
        return 0;
    }
    CU_ASSERT(spec_set_target(&k->set, target, &d) == 0);
    snprintf(k->yaml + strlen(k->yaml), sizeof k->yaml - strlen(k->yaml),
             "# op defaults for %s\n",
             target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
    return nu_build(k);
}

static void test_add_norm_shapes(void)
{
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    static const int widths[] = {896, 4097, 11008};
    static const char *const tiles[] = {"", ", tile: {mode: streaming}",
                                        ", tile: {rows: 4, wg: 32}"};
    static const size_t rows[] = {1, 2, 7, 33};
    for (int t = 0; t < 3; t++) {
        for (int w = 0; w < 3; w++) {
            for (int g = 0; g < 3; g++) {
                /* By default one tile per dtype and width, each tile
                 * at every dtype and width once; --full: all. */
                if (!test_full && g != (t + w) % 3) {
                    continue;
                }
                struct nu_kernel k;
                enum target target = (t + w + g) % 2 ? TARGET_CPU : TARGET_GPU;
                if (add_norm_build(&k, dtypes[t], widths[w], tiles[g],
                                   target)) {
                    nu_run_rows(&k, rows, 4, nu_unit());
                }
                nu_kernel_free(&k);
            }
        }
    }
}

/* The split path at 1000 features (chunks of 125) up to 9 rows. */
#define SPLIT_TILE ", tile: {split: 8, split_max: 9}"

/* x near 1e4 and residual near -1e4: sums of a few units, whose norm is
 * not x's; and sums near 2e38, whose squares pass FLT_MAX (the scaled
 * second pass); with TILE ("" for the defaults, SPLIT_TILE). */
static void run_add_norm_hard(const char *tile)
{
    static const char *const dtypes[] = {"f32", "bf16"};
    static const struct {
        struct vdist x;
        double scale, shift;
    } cases[] = {{{1e4, 1}, 1, -1e4}, {{1e38, 1e37}, 1e37, 1e38}};
    for (int i = 0; i < 2; i++) {
        for (int t = 0; t < 2; t++) {
            struct nu_kernel k;
            if (add_norm_build(&k, dtypes[i], 1000, tile,
                               t ? TARGET_CPU : TARGET_GPU)) {
                k.reference_only = 1;
                k.scale_input = "residual";
                for (int c = 0; c < 2; c++) {
                    k.scale_by = cases[c].scale;
                    k.shift_by = cases[c].shift;
                    nu_run(&k, 5, cases[c].x);
                }
            }
            nu_kernel_free(&k);
        }
    }
}

static void test_add_norm_hard(void)
{
    run_add_norm_hard("");
}

/* The same on the split path (each of the 5 rows in 8 chunks). */
static void test_add_norm_split_hard(void)
{
    run_add_norm_hard(SPLIT_TILE);
}

/* sum given as residual's own buffer: both outputs as float64 says, at 9
 * rows of one work-group per row (TILE "") or of the split path. */
static void run_in_place(const char *tile)
{
    struct nu_kernel k;
    struct vcase c;
    struct vbuffers b;
    if (!add_norm_build(&k, "f32", 1000, tile, TARGET_GPU)) {
        nu_kernel_free(&k);
        return;
    }
    CU_ASSERT_FATAL(vcase_init(&c, k.ks, 9, 7, nu_unit()) == 0);
    CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
    cl_mem mem[SPECL_MAX_BUFFERS];
    memcpy(mem, b.mem, sizeof mem);
    mem[BUF_SUM] = b.mem[BUF_RESIDUAL];
    cl_command_queue q = nu_rt()->queue;
    CU_ASSERT_EQUAL(stub_enqueue(&k.stub, q, c.sizes, mem, 0, NULL, NULL),
                    CL_SUCCESS);
    size_t n = c.count[BUF_SUM];
    float *sum = malloc(n * sizeof *sum);
    float *got = malloc(c.out_count * sizeof *got);
    double *ref = vcase_reference(&c);
    int canary_ok = 0;
    CU_ASSERT_FATAL(sum != NULL && got != NULL && ref != NULL);
    CU_ASSERT_EQUAL(clEnqueueReadBuffer(q, b.mem[BUF_RESIDUAL], CL_TRUE, 0,
                                        n * sizeof *sum, sum, 0, NULL, NULL),
                    CL_SUCCESS);
    CU_ASSERT_EQUAL(vbuffers_read_output(nu_rt(), &c, &b, got, &canary_ok),
                    CL_SUCCESS);
    double e_sum = rel_l2(sum, ref + c.out_at[BUF_SUM], n);
    double e_y = rel_l2(got + c.out_at[BUF_Y], ref + c.out_at[BUF_Y], n);
    TU_CHECK(e_sum <= 1e-6 && e_y <= 1e-5,
             "in place%s: sum error %g, y error %g", tile, e_sum, e_y);
    free(sum);
    free(got);
    free(ref);
    vbuffers_free(&b);
    vcase_free(&c);
    nu_kernel_free(&k);
}

static void test_add_norm_in_place(void)
{
    run_in_place("");
    run_in_place(SPLIT_TILE);
}

int add_add_norm_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "add_rmsnorm: dtypes x widths x tiles x rows, GPU "
                       "and CPU defaults", test_add_norm_shapes) == NULL ||
                   CU_add_test(s, "add_rmsnorm: sums that cancel or pass "
                               "float32's squares", test_add_norm_hard) ==
                       NULL ||
                   CU_add_test(s, "add_rmsnorm: sum in place of residual",
                               test_add_norm_in_place) == NULL
               ? -1
               : 0;
}

int add_add_norm_split_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "add_rmsnorm: sums that cancel or pass float32's "
                       "squares, on the split path",
                       test_add_norm_split_hard) == NULL
               ? -1
               : 0;
}
