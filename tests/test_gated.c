/* test_gated.c - swiglu and swiglu_backward on the device against their
 * naive kernels and float64: every activation and dtype, odd widths, the
 * GPU and CPU defaults, gates far into the tails. Joins the numeric
 * suite. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"

static const char *const gated_ops[] = {"swiglu", "swiglu_backward"};
static const char *const activations[] = {"silu", "gelu_tanh", "gelu"};
static const char *const dtypes[] = {"f32", "f16", "bf16"};

/* Builds OP (DTYPE, ACTIVATION, FEATURES; the defaults of TARGET) into K;
 * 1 when built. */
static int gated_build(struct nu_kernel *k, const char *op, const char *dtype,
                       const char *activation, int features,
                       enum target target)
{
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(k, "kernels:\n  - {name: t_gated, op: %s, dtype: %s, "
                    "features: %d, activation: %s}\n", op, dtype, features,
                    activation)) {
        return 0;
    }
    CU_ASSERT(spec_set_target(&k->set, target, &d) == 0);
    snprintf(k->yaml + strlen(k->yaml), sizeof k->yaml - strlen(k->yaml),
             "# op defaults for %s\n",
             target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
    return nu_build(k);
}

/* Widths of Llama, Qwen and Gemma MLPs that no vector divides, or only
 * some do; rows of one, two, an odd count and past a group. By default
 * each op, activation and dtype at one of the two quick widths (each
 * width meets every dtype and activation); --full: all of them at every
 * width. */
static void test_gated_shapes(void)
{
    static const int quick[] = {896, 4865};
    static const int full[] = {896, 2560, 3072, 4864, 4865, 11008, 14336};
    static const size_t rows[] = {1, 2, 7, 33};
    const int *widths = test_full ? full : quick;
    int n_widths = test_full ? 7 : 2;
    for (int o = 0; o < 2; o++) {
        for (int a = 0; a < 3; a++) {
            for (int t = 0; t < 3; t++) {
                for (int w = 0; w < n_widths; w++) {
                    if (!test_full && w != (o + a + t) % 2) {
                        continue;
                    }
                    struct nu_kernel k;
                    enum target target = (a + t + w) % 2 ? TARGET_CPU
                                                          : TARGET_GPU;
                    if (gated_build(&k, gated_ops[o], dtypes[t],
                                    activations[a], widths[w], target)) {
                        nu_run_rows(&k, rows, 4, nu_unit());
                    }
                    nu_kernel_free(&k);
                }
            }
        }
    }
}

/* Gates far into the tails, where exp overflows, x^3 passes FLT_MAX,
 * and (gates all in [-9, -3]) 1 + tanh and 1 + erf cancel to nothing:
 * every output within its bound of float64 (the naive kernel, written
 * the textbook way, is not asked). */
static void test_gated_tails(void)
{
    static const struct {
        double scale, shift;
    } gates[] = {{12, 0}, {1e3, 0}, {1e30, 0}, {3, -6}};
    for (int o = 0; o < 2; o++) {
        for (int a = 0; a < 3; a++) {
            struct nu_kernel k;
            if (gated_build(&k, gated_ops[o], "f32", activations[a], 1024,
                            (o + a) % 2 ? TARGET_CPU : TARGET_GPU)) {
                k.reference_only = 1;
                k.scale_input = "gate";
                for (int g = 0; g < 4; g++) {
                    k.scale_by = gates[g].scale;
                    k.shift_by = gates[g].shift;
                    nu_run(&k, 5, nu_unit());
                }
            }
            nu_kernel_free(&k);
        }
    }
}

int add_gated_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "swiglu: activations x dtypes x widths x rows, "
                       "GPU and CPU defaults", test_gated_shapes) == NULL ||
                   CU_add_test(s, "swiglu: gates far into the tails",
                               test_gated_tails) == NULL
               ? -1
               : 0;
}
