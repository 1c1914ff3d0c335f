/* test_numeric.c - every op's generated kernel on the OpenCL device (PoCL
 * in CI) against the naive kernel and a float64 reference: default and
 * explicit tiles, row counts around the tile (1, tile-1, tile, tile+1, a
 * larger one), every storage dtype, the lora options and paths, inputs
 * that stress the row ops' numerics, and the kernels of specs/seeds.yaml. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"

static const char *const dtypes[] = {"f32", "f16", "bf16"};
#define N_DTYPES 3

static const char *const row_ops[] = {"softmax", "rmsnorm", "layernorm"};
#define N_ROW_OPS 3

#define SEEDS_FILE "specs/seeds.yaml"

/* ---- row ops ----------------------------------------------------------- */

/* Builds one row-op kernel (FIELDS and TILE are flow-mapping entries, TILE
 * may be "") and runs it over 1, tile-1, tile, tile+1 and a larger number
 * of rows, tile being its `rows` knob. */
static void check_row_kernel(const char *op, const char *dtype,
                             const char *fields, const char *tile,
                             struct vdist dist)
{
    struct nu_kernel k;
    size_t rows[8];
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_%s, op: %s, dtype: %s, "
                   "%s%s%s%s}\n", op, op, dtype, fields,
                   *tile ? ", tile: {" : "", tile, *tile ? "}" : "") &&
        nu_build(&k)) {
        long t = nu_knob(&k, "rows");
        int n = nu_tile_rows(t, 3 * t + 2 < 21 ? 21 : 3 * t + 2, rows);
        nu_run_rows(&k, rows, n, dist);
    }
    nu_kernel_free(&k);
}

/* Default tiles and two explicit ones (streaming with vec 2 and three rows
 * per group; registers with one row per group), the first two in every
 * dtype, the third in f32 (every dtype with --full). */
static void test_row_tiles(void)
{
    static const char *const tiles[] = {
        "",
        "wg: 32, rows: 3, vec: 2, mode: streaming",
        "wg: 128, rows: 1, vec: 4, mode: registers",
    };
    for (int o = 0; o < N_ROW_OPS; o++) {
        for (int t = 0; t < 3; t++) {
            for (int d = 0; d < (t < 2 || test_full ? N_DTYPES : 1); d++) {
                check_row_kernel(row_ops[o], dtypes[d],
                                 "features: 1000", tiles[t], nu_unit());
            }
        }
    }
}

/* Shapes beside the 4-aligned one: odd and tiny rows (vec 1, a row
 * shorter than the work-group), and a long odd row streamed. */
static void test_row_shapes(void)
{
    static const struct {
        const char *fields;
        const char *tile;
    } cases[] = {
        {"features: 1", ""},
        {"features: 7", ""},
        {"features: 30", "wg: 8, rows: 5"},
        {"features: 4097", ""},
        {"features: 4097, eps: 0.001", "wg: 64, rows: 2, mode: streaming"},
    };
    for (int o = 0; o < N_ROW_OPS; o++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const char *fields = cases[c].fields;
            if (o == 0 && c == 4) {
                fields = "features: 4097, scale: 0.5";
            }
            check_row_kernel(row_ops[o], c == 3 ? "bf16" : "f32", fields,
                             cases[c].tile, nu_unit());
        }
    }
}

/* Softmax with a scale (negative, not a power of two) and inputs up to
 * +-1e4: exp must not overflow, nor lose the precision of x - max. */
static void test_softmax_large(void)
{
    static const char *const cases[][2] = {
        {"features: 1000, scale: 1.0", ""},
        {"features: 1000, scale: -0.7", "mode: streaming"},
        {"features: 1000, scale: 0.0883883", "wg: 128, rows: 1"},
        {"features: 7, scale: 3.0", ""},
        {"features: 4097, scale: 1.0", "mode: streaming"},
    };
    struct vdist wide = {0.0, 1e4};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int d = 0; d < N_DTYPES; d++) {
            if (d > 0 && c > 1 && !test_full) {
                continue;
            }
            check_row_kernel("softmax", dtypes[d], cases[c][0], cases[c][1],
                             wide);
        }
    }
}

/* Layernorm (and rmsnorm) of rows with mean 1e4 and spread 1e-2: the
 * variance is 1e-9 of the mean square, so E[x^2] - mean^2 would be noise.
 * (In f16 every x of a row rounds to one value: y = beta exactly.) */
static void test_norm_offset(void)
{
    static const char *const cases[][2] = {
        {"features: 1000, eps: 1.0e-6", ""},
        {"features: 1000, eps: 1.0e-6", "mode: streaming"},
        {"features: 1000, eps: 1.0e-6",
         "wg: 32, rows: 3, vec: 2, mode: streaming"},
        {"features: 4097, eps: 1.0e-6", ""},
        {"features: 4097, eps: 1.0e-6", "mode: streaming"},
    };
    struct vdist off = {1e4, 1e-2};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        check_row_kernel("layernorm", "f32", cases[c][0], cases[c][1], off);
    }
    check_row_kernel("layernorm", "f16", cases[0][0], "", off);
    check_row_kernel("rmsnorm", "f32", cases[0][0], "", off);
    check_row_kernel("rmsnorm", "f32", cases[1][0], cases[1][1], off);
}

/* ---- hard inputs, with the GPU and the CPU defaults --------------------- */

/* Inputs that break float32 row arithmetic done the simple way, at the row
 * lengths where it breaks. Each case runs with the op defaults for GPUs
 * (many work-items per row, each summing a few elements) and for CPUs
 * (gen --target cpu: one work-item sums the whole row alone, so its sums
 * are as long as the row). */
struct hard_case {
    const char *op, *dtype, *fields;
    struct vdist x;
    size_t rows;
    /* The float64 reference alone judges: the naive kernel's one running
     * sum per row nears or passes its room (4e-5) from about 50000 terms,
     * depending on the seed, and its scale * x overflows for huge
     * scales. */
    int reference_only;
    double x_ramp; /* x also rises by this much along each row */
};

/* Runs C with the defaults for TARGET and the knobs TILE ("" for none:
 * those of the flow mapping `tile: {...}`). */
static void run_hard_case_tile(const struct hard_case *c, enum target target,
                               const char *tile)
{
    struct nu_kernel k;
    struct diags d = {.out = stderr};
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_hard, op: %s, dtype: %s, "
                   "%s%s%s%s}\n", c->op, c->dtype, c->fields,
                   *tile ? ", tile: {" : "", tile, *tile ? "}" : "")) {
        CU_ASSERT(spec_set_target(&k.set, target, &d) == 0);
        /* Shown with the spec when a case fails. */
        snprintf(k.yaml + strlen(k.yaml), sizeof k.yaml - strlen(k.yaml),
                 "# op defaults for %s\n",
                 target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
        k.reference_only = c->reference_only;
        k.x_ramp = c->x_ramp;
        if (nu_build(&k)) {
            nu_run(&k, c->rows, c->x);
        }
    }
    nu_kernel_free(&k);
}

static void run_hard_case(const struct hard_case *c, enum target target)
{
    run_hard_case_tile(c, target, "");
}

/* Softmax's two paths for long rows: the defaults at these few rows take
 * the split path (each row in chunks over work-groups) where the row is
 * long enough; SPLIT forces it at any width, ROW_PATH turns it off. */
#define SPLIT "split: 8, split_max: 8"
#define ROW_PATH "split_max: 0"

static void run_hard_cases(const struct hard_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        run_hard_case(&c[i], TARGET_GPU);
        run_hard_case(&c[i], TARGET_CPU);
    }
}

/* Long rows of small terms: a float32 running sum over a whole row drifts
 * by far more than 1e-5 (softmax with logits in +-5 at 50257 features:
 * 4e-5; squares of 1e4 +- 0.01 at 65537: 3e-5). Odd lengths take vec 1
 * on CPUs, one sum per row; the most features take vec 16 there, a
 * million terms per lane (1e-3 for softmax, 2e-4 for the norms). */
static void test_long_sums(void)
{
    static const struct hard_case cases[] = {
        {"softmax", "f32", "features: 50257", {0, 5}, 3, 1, 0},
        {"softmax", "f32", "features: 65537", {0, 5}, 2, 1, 0},
        /* Rising rows: the max grows all along, and a sum rescaled at
         * each new max took a rounding each time (6e-5 at 50257). */
        {"softmax", "f32", "features: 50257", {0, 0}, 1, 0, 10},
        {"softmax", "f32", "features: 65537", {0, 0}, 1, 1, 10},
        /* Rising far past e^32 per slot: a row held in registers moves its
         * reference up slot by slot, rescaling the slots before. */
        {"softmax", "f32", "features: 50257", {0, 1}, 2, 0, 3000},
        {"softmax", "f32", "features: 4096", {0, 1}, 3, 0, 200},
        {"rmsnorm", "f32", "features: 65537", {1e4, 1e-2}, 2, 1, 0},
    };
    run_hard_cases(cases, sizeof cases / sizeof cases[0]);
    /* Softmax past 128 KiB rows on GPUs: the defaults above split them;
     * one work-group per row here (in registers at 50257, streamed at
     * 65537). */
    static const int row_path[] = {0, 3, 4};
    for (size_t i = 0; i < sizeof row_path / sizeof row_path[0]; i++) {
        run_hard_case_tile(&cases[row_path[i]], TARGET_GPU, ROW_PATH);
    }
    /* Rows of 2^24: the CPU defaults' vec 16 sums a million terms per
     * lane (softmax: 2^18 elements a chunk on its split path; the whole
     * row on the row path with --full); the GPU defaults (far fewer per
     * work-item) with --full. */
    static const struct hard_case huge[] = {
        {"softmax", "f32", "features: 16777216", {0, 5}, 1, 1, 0},
        {"rmsnorm", "f32", "features: 16777216", {0, 1}, 1, 1, 0},
        {"layernorm", "f32", "features: 16777216", {0, 1}, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        run_hard_case(&huge[i], TARGET_CPU);
        if (i == 0 && test_full) {
            run_hard_case_tile(&huge[i], TARGET_CPU, ROW_PATH);
        }
        if (test_full) {
            run_hard_case(&huge[i], TARGET_GPU);
        }
    }
}

/* Layer norms whose variance cancels unless the mean is right to a few
 * roundings: mean 1e4 and spread 1e-2 over a long row (one float32 sum
 * of the row gave errors of 4.3), and constant rows, where y must be beta
 * (5e-4 off at 50257 features). */
static void test_norm_cancel(void)
{
    static const struct hard_case cases[] = {
        {"layernorm", "f32", "features: 65537, eps: 1.0e-6", {1e4, 1e-2},
         2, 1, 0},
        {"layernorm", "f32", "features: 50257", {3.3, 0}, 2, 0, 0},
        {"layernorm", "f32", "features: 4096", {-1234.567, 0}, 3, 0, 0},
    };
    run_hard_cases(cases, sizeof cases / sizeof cases[0]);
}

/* Builds OP in DTYPE with FIELDS and the defaults for TARGET, and runs it
 * on 3 rows of each of the N input distributions DISTS, judged by float64
 * alone. */
static void run_norm_dists(const char *op, const char *dtype,
                           const char *fields, enum target target,
                           const struct vdist *dists, size_t n)
{
    struct nu_kernel k;
    struct diags d = {.out = stderr};
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_norm, op: %s, dtype: %s, "
                   "%s}\n", op, dtype, fields)) {
        CU_ASSERT(spec_set_target(&k.set, target, &d) == 0);
        snprintf(k.yaml + strlen(k.yaml), sizeof k.yaml - strlen(k.yaml),
                 "# op defaults for %s\n",
                 target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
        k.reference_only = 1;
        if (nu_build(&k)) {
            for (size_t i = 0; i < n; i++) {
                nu_run(&k, 3, dists[i]);
            }
        }
    }
    nu_kernel_free(&k);
}

/* Norms of rows far from 1 in either direction, with the GPU and the CPU
 * defaults, in registers and streamed: squares of 1e18 overflow float32
 * over a row of 1000, x - mean overflows near FLT_MAX, squares of 1e-21
 * fall among the subnormals (eps 2^-126 leaves them to count); rows far
 * from 0 (mean 2e38), and rows of 1e-30 against the default eps. The
 * kernels sum such rows again at a power-of-two scale (norm_scale.cl).
 * The naive kernel overflows as plain float32 sums do: float64 alone
 * judges. */
static void test_norm_extremes(void)
{
    static const char *const ops[] = {"rmsnorm", "layernorm"};
    static const char *const dts[] = {"f32", "bf16"};
    static const char *const fields[] = {
        "features: 1000, eps: 1.1754943508222875e-38",
        ("features: 4097, eps: 1.1754943508222875e-38, "
         "tile: {mode: streaming}"),
        "features: 1000",
    };
    static const struct vdist tiny_eps[] = {
        {0, 1e18}, {0, 1e30}, {0, 3e38}, {0, 1e-21}, {2e38, 1e38},
    };
    static const struct vdist default_eps[] = {{0, 1e-30}, {0, 3e38}};
    for (int o = 0; o < 2; o++) {
        for (int d = 0; d < 2; d++) {
            for (int f = 0; f < 3; f++) {
                for (int t = 0; t < 2; t++) {
                    run_norm_dists(ops[o], dts[d], fields[f],
                                   t ? TARGET_CPU : TARGET_GPU,
                                   f < 2 ? tiny_eps : default_eps,
                                   f < 2 ? 5 : 2);
                }
            }
        }
    }
}

/* Softmax of the largest finite inputs and extreme scales: scale * (x -
 * max) must neither turn into 0 * inf (scale 0: a uniform row) nor lose
 * differences beyond FLT_MAX (a tiny scale makes exp(-6) of them), and a
 * huge scale must give the one-hot row, not NaN. The naive kernel forms
 * scale * x first, which overflows for the huge scales (and its
 * scale * x - max, contracted to an fma, is not 0 at the max). */
static void test_softmax_extremes(void)
{
    static const struct hard_case cases[] = {
        {"softmax", "f32", "features: 1000, scale: 0", {0, 3e38}, 3, 0, 0},
        {"softmax", "f32", "features: 4096, scale: 0", {0, 1e32}, 3, 0, 0},
        {"softmax", "f32", "features: 1000", {0, 3e38}, 3, 0, 0},
        {"softmax", "f32", "features: 4097, scale: 2.0e-38", {0, 3e38}, 3,
         0, 0},
        {"softmax", "f32", "features: 1000, scale: -1.0e30", {0, 3e38}, 3,
         1, 0},
        {"softmax", "f32", "features: 4097, scale: 1.0e30", {0, 1}, 3, 1, 0},
        {"softmax", "bf16", "features: 1000, scale: 0", {0, 3e38}, 3, 0, 0},
    };
    run_hard_cases(cases, sizeof cases / sizeof cases[0]);
    /* The same on the split path, each row's chunks merged: by a
     * work-group's items (GPUs), one after another (CPUs, scales 0 and
     * -1e30). */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_hard_case_tile(&cases[i], TARGET_GPU, SPLIT);
        if (i == 0 || i == 4) {
            run_hard_case_tile(&cases[i], TARGET_CPU, SPLIT);
        }
    }
}

/* A NaN in every even row of the first buffer (x), at a place of its
 * own. */
static void nan_in_even_rows(struct vcase *c)
{
    float *x = c->host[0];
    size_t v = c->rows ? c->count[0] / c->rows : 0;
    for (size_t m = 0; v != 0 && m < c->rows; m += 2) {
        x[m * v + (m * 7919 + 13) % v] = NAN;
    }
}

/* NaN inputs: a row with a NaN gives NaN outputs, as float64's does (a
 * streamed max leaves the NaN out, the sums carry it), and no other row
 * does. Each row op with the GPU defaults over a vocabulary-wide row at
 * 1 to 70 rows (softmax: the one-launch paths where the device holds
 * them, the split path, the row streamed), the split path forced, rows
 * held in registers, the CPU defaults. */
static void test_row_nan(void)
{
    static const struct {
        const char *dtype, *fields, *tile;
        enum target target;
        size_t rows[4]; /* 0-terminated */
    } cases[] = {
        {"f32", "features: 151936", "", TARGET_GPU, {1, 7, 70, 0}},
        {"bf16", "features: 65537", "", TARGET_GPU, {2, 40, 0}},
        {"f32", "features: 32000", SPLIT, TARGET_GPU, {3, 0}},
        {"f16", "features: 4096", "", TARGET_GPU, {5, 0}},
        {"f32", "features: 50257", "", TARGET_CPU, {3, 0}},
        {"bf16", "features: 4097", "", TARGET_CPU, {4, 0}},
    };
    for (int o = 0; o < 3; o++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            struct nu_kernel k;
            struct diags d = {.out = stderr};
            const char *tile = cases[i].tile;
            if (nu_spec_ok(&k, "kernels:\n  - {name: t_nan, op: %s, dtype: "
                           "%s, %s%s%s%s}\n", row_ops[o], cases[i].dtype,
                           cases[i].fields, *tile ? ", tile: {" : "", tile,
                           *tile ? "}" : "")) {
                CU_ASSERT(spec_set_target(&k.set, cases[i].target, &d) ==
                          0);
                k.fill = nan_in_even_rows;
                if (nu_build(&k)) {
                    for (int r = 0; r < 4 && cases[i].rows[r] != 0; r++) {
                        nu_run(&k, cases[i].rows[r], nu_unit());
                    }
                }
            }
            nu_kernel_free(&k);
        }
    }
}

/* The other ops with NaN in the first input's even rows: outputs NaN
 * exactly where float64's are (an element and what it reaches: its own
 * output in swiglu, its pair in rope, its row in the norms and their
 * backward, with the parameter gradients of every row; its row of Y in
 * lora_forward, dA's columns and all of dB in lora_backward), with the
 * GPU and the CPU defaults, and NVIDIA's where the device offers what
 * they need (the norms' backward: a row with a NaN takes the rescaled
 * pass, on a slot's own barriers and warp shuffles). */
static void test_ops_nan(void)
{
    static const char *const specs[] = {
        "op: swiglu, features: 4864",
        "op: swiglu, dtype: bf16, features: 2560, activation: gelu_tanh",
        "op: swiglu_backward, features: 3072",
        "op: add_rmsnorm, dtype: bf16, features: 4096",
        "op: rmsnorm_backward, features: 2560",
        "op: layernorm_backward, dtype: bf16, features: 896",
        "op: rope, heads: 4, head_dim: 64",
        "op: lora_forward, in_features: 512, out_features: 256, rank: 8",
        "op: lora_backward, in_features: 256, out_features: 512, rank: 8",
    };
    static const size_t rows[] = {1, 3, 40};
    static const enum target targets[] = {TARGET_GPU, TARGET_CPU,
                                          TARGET_TENSOR};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        for (int t = 0; t < 3; t++) {
            struct nu_kernel k;
            struct plan p;
            if (nu_spec_ok(&k, "kernels:\n  - {name: t_nan, %s}\n",
                           specs[i])) {
                nu_plan_for(&k, targets[t], &p);
                k.fill = nan_in_even_rows;
                if (caps_lacking(p.needs, nu_rt()->caps.have) == 0 &&
                    nu_build(&k)) {
                    nu_run_rows(&k, rows, 3, nu_unit());
                }
            }
            nu_kernel_free(&k);
        }
    }
}

/* Softmax in f16 past 16384 features: outputs near 1/D fall among the
 * subnormals, whose fixed spacing 2^-24 costs relative precision (0.003
 * at 200000 features, from rounding alone) that the op's error bound owns
 * up to; and the bound stays that of f16 rounding for short rows. */
static void test_softmax_f16_subnormal(void)
{
    static const struct hard_case cases[] = {
        {"softmax", "f16", "features: 65537", {0, 1}, 2, 0, 0},
        {"softmax", "f16", "features: 200000", {0, 1}, 1, 0, 0},
    };
    run_hard_cases(cases, sizeof cases / sizeof cases[0]);
    run_hard_case_tile(&cases[0], TARGET_GPU, ROW_PATH);
    struct nu_kernel k;
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_f16, op: softmax, dtype: "
                   "f16, features: 4096}\n")) {
        CU_ASSERT(error_bound(k.ks) < 2.2e-3);
    }
    nu_kernel_free(&k);
}

/* f16 outputs among the subnormals (under 6.1e-5, spaced 2^-24): their
 * rounding alone is off from float64 by more than the op's 2e-3, and by 1
 * where they all round to 0. The checker then bounds each output by that
 * rounding's error plus twice the f32 bound (numeric_util.c). Builds OP
 * in f16 with FIELDS, draws input SCALED (NULL: none) times BY and x from
 * X, and runs ROWS rows: the kernel must pass, off by more than
 * error_bound. */
static void check_f16_subnormal(const char *op, const char *fields,
                                const char *scaled, double by,
                                struct vdist x, size_t rows)
{
    struct nu_kernel k;
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_sub, op: %s, dtype: f16, "
                   "%s}\n", op, fields) &&
        nu_build(&k)) {
        k.scale_input = scaled;
        k.scale_by = by;
        if (nu_run(&k, rows, x)) {
            int beyond = k.last_error > error_bound(k.ks);
            if (!beyond) {
                fprintf(stderr, "\nFAIL: %s {%s}: error %.3g within %.3g: "
                        "no outputs among the subnormals?\n", op, fields,
                        k.last_error, error_bound(k.ks));
            }
            CU_ASSERT(beyond);
        }
    }
    nu_kernel_free(&k);
}

/* Outputs near 3e-6: rmsnorm with gamma drawn near 3e-6; layernorm with
 * rows of 3e-6 under eps 1, beta drawn near 3e-6; lora with x near 1e-6
 * (itself among the subnormals). Outputs all under 2^-25, which round to
 * 0: rmsnorm of rows of 1e-7 under eps 1, gamma near 0.1. */
static void test_f16_subnormal_outputs(void)
{
    struct vdist tiny = {0, 1e-6};
    struct vdist x3 = {0, 3e-6};
    struct vdist x7 = {0, 1e-7};
    check_f16_subnormal("rmsnorm", "features: 1000", "gamma", 3e-6,
                        nu_unit(), 5);
    check_f16_subnormal("layernorm", "features: 1000, eps: 1.0", "beta",
                        3e-6, x3, 5);
    check_f16_subnormal("lora_forward", "in_features: 64, out_features: "
                        "40, rank: 4, scale: 0.25", NULL, 1, tiny, 3);
    check_f16_subnormal("lora_forward", "in_features: 64, out_features: "
                        "40, rank: 4, scale: 0.25", NULL, 1, tiny, 70);
    check_f16_subnormal("rmsnorm", "features: 1000, eps: 1.0", "gamma", 0.1,
                        x7, 5);
}

/* ---- lora_forward ------------------------------------------------------ */

/* Runs built lora kernel K over 1, m-1, m, m+1 and a larger number of
 * rows (m its tile rows), and around the row limit of each of its paths
 * but the last (decode, split K). */
static void run_lora_rows(struct nu_kernel *k)
{
    size_t rows[5 + 3 * SPECL_MAX_PATHS];
    long limit[SPECL_MAX_PATHS];
    long m = nu_knob(k, "m");
    int n = nu_tile_rows(m, 2 * m + 3, rows);
    int paths = nu_path_limits(k, limit, SPECL_MAX_PATHS);
    for (int i = 0; i < paths; i++) {
        n = nu_rows_add(rows, n, limit[i]);
        n = nu_rows_add(rows, n, limit[i] + 1);
        n = nu_rows_add(rows, n, limit[i] > 2 ? limit[i] - 1 : 0);
    }
    nu_run_rows(k, rows, n, nu_unit());
}

/* Fields every lora_forward and lora_backward case of the tests below
 * takes besides its own: "" (in_out), or the out_in layout, which the
 * tests of weight_layout set while they run the others' cases. */
static const char *lora_layout = "";
#define OUT_IN ", weight_layout: out_in"

/* Builds one lora kernel, which must validate, and runs run_lora_rows. */
static void check_lora_kernel(const char *dtype, const char *fields,
                              const char *tile)
{
    struct nu_kernel k;
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_lora, op: lora_forward, "
                   "dtype: %s, %s%s%s%s%s}\n", dtype, fields, lora_layout,
                   *tile ? ", tile: {" : "", tile, *tile ? "}" : "") &&
        nu_build(&k)) {
        run_lora_rows(&k);
    }
    nu_kernel_free(&k);
}

/* Default and explicit tiles; every dtype on the default and on one
 * explicit tile (all of them with --full). */
static void test_lora_tiles(void)
{
    static const char *const tiles[] = {
        "",
        "m: 32, n: 32, k: 8, wm: 4, wn: 4, decode_rows: 4",
        ("m: 16, n: 64, k: 16, wm: 2, wn: 8, vec: 2, pad: 0, decode_rows: 5, "
         "decode_n: 4, decode_k: 16, xa_m: 8, xa_k: 4"),
    };
    for (int t = 0; t < 3; t++) {
        for (int d = 0; d < N_DTYPES; d++) {
            /* Without --full: tile 1 in f32 and f16, tile 2 in f32, bf16. */
            if (!test_full && t != 0 && d != 0 && d != t) {
                continue;
            }
            check_lora_kernel(dtypes[d], "in_features: 100, out_features: 72, "
                              "rank: 8, alpha: 16", tiles[t]);
        }
    }
}

/* base x accumulate, alpha or scale, X*A as prepass or inline, the decode
 * path off, tiny, uneven and past 16 rows (64, the most, with --full).
 * Each case in f32, one also in f16 (every dtype with --full). */
static void test_lora_options(void)
{
    static const char *const cases[][2] = {
        {"base: true, alpha: 16", "xa: prepass"},
        {"base: true, accumulate: true, scale: 0.5",
         "xa: inline, decode_rows: 0"},
        {"base: true, accumulate: true, alpha: -4",
         "xa: prepass, decode_rows: 6"},
        {"base: false, scale: 2", "xa: prepass, decode_rows: 1"},
        {"base: false, accumulate: false, alpha: 8", "xa: inline"},
        {"base: false, accumulate: true, scale: -1.5",
         "xa: prepass, decode_rows: 0"},
        {"base: false, accumulate: true, alpha: 3",
         "xa: inline, decode_rows: 20"},
    };
    char fields[256];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(fields, sizeof fields, "in_features: 100, out_features: 72, "
                 "rank: 8, %s", cases[c][0]);
        for (int d = 0; d < N_DTYPES; d++) {
            if (test_full || d == 0 || (c == 6 && d == 1)) {
                check_lora_kernel(dtypes[d], fields, cases[c][1]);
            }
        }
    }
    if (test_full) {
        /* The most rows the decode path may take. */
        check_lora_kernel("f32", "in_features: 100, out_features: 72, "
                          "rank: 8, alpha: 32", "xa: inline, decode_rows: 64");
        check_lora_kernel("f32", "in_features: 100, out_features: 72, "
                          "rank: 8, base: false, alpha: 32",
                          "xa: prepass, decode_rows: 64");
    }
}

/* Shapes that divide nothing: vec 1, partial tiles in every direction, a
 * rank that is not a multiple of the k step (test_sweep.c has K and N of
 * 1 and 3). */
static void test_lora_shapes(void)
{
    static const char *const cases[][2] = {
        {"in_features: 99, out_features: 37, rank: 5, alpha: 10", ""},
        {"in_features: 99, out_features: 37, rank: 5, scale: 0.25, "
         "accumulate: true", "m: 16, n: 16, k: 4, wm: 2, wn: 2, xa: inline"},
        {"in_features: 24, out_features: 520, rank: 20, alpha: 40",
         "m: 64, n: 128, k: 8, wm: 8, wn: 8, decode_rows: 4"},
        /* One or two output columns through the decode path (a work-group
         * of one work-item along N once summed wrongly on PoCL). */
        {"in_features: 64, out_features: 1, rank: 1", ""},
        {"in_features: 8, out_features: 2, rank: 1", "decode_rows: 4"},
        /* The decode path gathering 4 columns from rows that allow only
         * scalar loads: K under 4, N just past 4, no W. */
        {"in_features: 3, out_features: 5, rank: 2", ""},
        {"in_features: 13, out_features: 7, rank: 3, base: false, "
         "accumulate: true", "decode_rows: 4, decode_n: 2, decode_k: 2"},
        /* A delta in f16 whose K takes lora_xa_mma on tensor cores (the
         * device suites), 3 of 4 work-items of lora_expand live. */
        {"in_features: 40, out_features: 48, rank: 4, base: false, "
         "accumulate: true", "decode_rows: 0"},
        /* K past the last k step at vec 4 with X*A from lora_xa: the tile
         * loads clamped to K's last vector and row, zeros stashed in
         * their place (main_tiles.cl, K_LIVE); 12 of the last step's 16
         * values of K are past it. */
        {"in_features: 36, out_features: 136, rank: 3, alpha: 6",
         "m: 64, n: 128, k: 16, wm: 8, wn: 8, xa: prepass, decode_rows: 0"},
        /* lora_main_padded (padded.cl): X's rows padded (K odd, its last
         * k step 5 of 16 live), then W's and B's (N odd) with the rows
         * between the split path and pad_rows left to lora_main, then
         * both at K, N = 2 mod 4 in bf16 (Y stored 2 wide), accumulate. */
        {"in_features: 37, out_features: 136, rank: 3, alpha: 6",
         "m: 64, n: 128, k: 16, wm: 8, wn: 8, xa: prepass, decode_rows: 0, "
         "pad_rows: 1"},
        {"in_features: 40, out_features: 133, rank: 5, accumulate: true",
         "m: 32, n: 64, k: 8, wm: 4, wn: 4, xa: prepass, decode_rows: 0, "
         "split_k: 2, split_max: 20, pad_rows: 40"},
        {"in_features: 42, out_features: 70, rank: 4, accumulate: true",
         "m: 32, n: 32, k: 8, wm: 4, wn: 4, xa: prepass, decode_rows: 0, "
         "pad_rows: 1"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        check_lora_kernel(c == 2 || c == 11 ? "bf16" : c == 7 ? "f16" : "f32",
                          cases[c][0], cases[c][1]);
    }
}

/* lora_main_padded's copies (padded.cl) in every dtype: X's rows padded
 * (K odd), W's and B's (N odd), and both with K past a whole k step
 * (PADS_K); f16 copies its elements as bits, half being no value type
 * without cl_khr_fp16. And the layer of 2^20 weights whose plan pads by
 * default (a vocabulary head of odd N), built at a few rows. */
static void test_lora_padded(void)
{
    static const char *const shapes[] = {
        "in_features: 37, out_features: 136, rank: 3, alpha: 6",
        "in_features: 40, out_features: 133, rank: 5, accumulate: true",
        "in_features: 42, out_features: 70, rank: 4, scale: 0.5",
    };
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        for (int d = 0; d < N_DTYPES; d++) {
            check_lora_kernel(dtypes[d], shapes[c],
                              "m: 32, n: 32, k: 8, wm: 4, wn: 4, "
                              "xa: prepass, decode_rows: 0, pad_rows: 1");
        }
    }
    struct nu_kernel k;
    static const size_t rows[] = {1, 9};
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_head, op: lora_forward, "
                   "dtype: f16, in_features: 1024, out_features: 1025, "
                   "rank: 8, alpha: 16}\n")) {
        CU_ASSERT(nu_knob(&k, "pad_rows") > 0);
        if (nu_build(&k)) {
            nu_run_rows(&k, rows, 2, nu_unit());
        }
    }
    nu_kernel_free(&k);
}

/* lora_delta (base: false, few rows): K past one step of the work-group
 * and not a multiple of it, N in slices that divide it unevenly, vec 1
 * and 2, ranks that are not multiples of 4 (A in scalar loads at vec 4),
 * work-groups of a size that is
 * not a multiple of 32, the most values of T (64) an item holds, every
 * dtype, accumulate, many stretches of columns per work-item; the paths'
 * limits and their neighbours among the rows. */
static void test_lora_delta(void)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 1100, out_features: 76, rank: 6, base: false",
         "delta_split: 3"},
        {"f32", "in_features: 37, out_features: 51, rank: 5, base: false, "
         "accumulate: true", "delta_rows: 3, delta_threads: 24, "
         "delta_split: 5, delta_max: 40"},
        {"f32", "in_features: 256, out_features: 40, rank: 8, base: false, "
         "alpha: 4", "delta_rows: 8, delta_threads: 32, delta_max: 50"},
        {"bf16", "in_features: 264, out_features: 72, rank: 16, "
         "base: false", "delta_threads: 64, delta_split: 2"},
        {"f16", "in_features: 130, out_features: 66, rank: 32, base: false, "
         "accumulate: true", ""},
        /* 16 stretches of columns per work-item, B loaded ahead */
        {"f32", "in_features: 64, out_features: 2048, rank: 4, base: false, "
         "accumulate: true", "delta_threads: 32"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        check_lora_kernel(cases[c][0], cases[c][1], cases[c][2]);
    }
}

/* The split path: K in slices summed by lora_combine, with partial tiles,
 * vec 1 and 2, accumulate, slices of unequal K steps, and each dtype;
 * bands of rows on 8, 4 and 2 slices of one program (32 column tiles);
 * the paths' limits and their neighbours among the rows. */
static void test_lora_split(void)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 1000, out_features: 1064, rank: 40, alpha: 16, "
         "accumulate: true", "split_k: 3, split_max: 100, decode_max: 16, "
         "vec: 2"},
        {"f32", "in_features: 37, out_features: 51, rank: 3",
         "split_k: 2, split_max: 40, decode_rows: 4, decode_max: 4, m: 16, "
         "n: 16, k: 8, wm: 2, wn: 2"},
        {"f16", "in_features: 264, out_features: 72, rank: 8, alpha: 16",
         "split_k: 5, split_max: 70, decode_rows: 0"},
        {"bf16", "in_features: 264, out_features: 72, rank: 8, "
         "accumulate: true", "split_k: 4, split_max: 33, decode_max: 16"},
        {"f32", "in_features: 64, out_features: 1024, rank: 4, alpha: 8, "
         "accumulate: true", "m: 32, n: 32, k: 8, wm: 4, wn: 4, "
         "xa: prepass, decode_rows: 0, split_k: 8, split_max: 200"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        check_lora_kernel(cases[c][0], cases[c][1], cases[c][2]);
    }
}

/* Few rows on tensor cores (lora_decode_mma, one launch; the device
 * suites; elsewhere the variants without it): a last K step half past K,
 * strips of W and of A past N and the rank, slices of unequal steps,
 * warps that share the steps unevenly, 16-column strips, one and two m16
 * tiles and a second block of 32 rows, bands of rows whose slices halve
 * (5, 2, 1 over four blocks), one slice, accumulate, both dtypes; the
 * paths' limits and their neighbours among the rows. */
static void lora_decode_mma_cases(void)
{
    static const char *const cases[][3] = {
        {"bf16", "in_features: 1000, out_features: 1064, rank: 40, "
         "alpha: 16, accumulate: true", "decode_mma_max: 40, "
         "decode_slices: 3"},
        {"f16", "in_features: 520, out_features: 200, rank: 16",
         "decode_max: 3, decode_mma_max: 100, decode_slices: 5, "
         "decode_cols: 32"},
        {"bf16", "in_features: 136, out_features: 64, rank: 8",
         "decode_max: 0, decode_mma_max: 70, decode_slices: 1"},
        {"f16", "in_features: 264, out_features: 72, rank: 8",
         "decode_max: 2, decode_mma_max: 20, decode_cols: 16, "
         "decode_warps: 3, decode_slices: 2"},
        {"bf16", "in_features: 520, out_features: 136, rank: 16, scale: 0.5",
         "decode_rows: 0, decode_mma_max: 16, decode_cols: 128, "
         "decode_warps: 4"},
        {"f16", "in_features: 1024, out_features: 1032, rank: 24, "
         "alpha: 48", ""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        check_lora_kernel(cases[c][0], cases[c][1], cases[c][2]);
    }
}

/* A lora_forward case (DTYPE, FIELDS, TILE) run where the device has
 * NEEDS; elsewhere its spec must validate. */
static void lora_case_where_it_runs(const char *dtype, const char *fields,
                                    const char *tile, unsigned needs)
{
    if (caps_lacking(needs, nu_rt()->caps.have) == 0) {
        check_lora_kernel(dtype, fields, tile);
        return;
    }
    struct nu_kernel k;
    nu_spec_ok(&k, "kernels:\n  - {name: t_lora, op: lora_forward, "
               "dtype: %s, %s%s, tile: {%s}}\n", dtype, fields, lora_layout,
               tile);
    nu_kernel_free(&k);
}

/* lora_wgmma, the GEMM on warpgroups of compute capability 9.0 (the
 * device suites; elsewhere each case must validate): a last K step part
 * past K, tiles past N and the rows (257 to 259 rows: a second row of
 * tiles), two rank steps, accumulate, both dtypes; each K step (16, 32,
 * 64: each swizzle), wg_n (64, 128, 256), work-groups of one to four
 * multiplying warpgroups and 3 to 6 stages. lora_wgmma_split: slices of unequal
 * steps (63 over 4, 9 over 2, the last step part past K), rank
 * steps in slice 0, accumulate, bands of rows over three row tiles and
 * past the path. */
static void lora_wgmma_cases(void)
{
    static const char *const cases[][3] = {
        {"bf16", "in_features: 1000, out_features: 1064, rank: 40, "
         "alpha: 16, accumulate: true", "split_k: 1"},
        {"f16", "in_features: 264, out_features: 72, rank: 8",
         "wg_n: 64, k: 32, wg_m: 64, wg_stages: 3, split_k: 1"},
        {"bf16", "in_features: 520, out_features: 136, rank: 16, scale: 0.5",
         "wg_n: 128, k: 16, wg_m: 256, wg_stages: 6, split_k: 1"},
        {"f16", "in_features: 1024, out_features: 520, rank: 24, "
         "alpha: 48, accumulate: true",
         "wg_m: 192, wg_n: 128, wg_stages: 5, split_k: 1"},
        {"bf16", "in_features: 1000, out_features: 1064, rank: 40, "
         "alpha: 16, accumulate: true", "k: 16, split_k: 1, "
         "wg_split_max: 600"},
        {"f16", "in_features: 264, out_features: 72, rank: 8",
         "wg_n: 64, k: 32, wg_m: 64, wg_stages: 3, split_k: 1, "
         "wg_split_max: 200"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char tile[256];
        snprintf(tile, sizeof tile, "engine: wgmma, decode_max: 0, "
                 "decode_mma_max: 0, %s", cases[c][2]);
        lora_case_where_it_runs(cases[c][0], cases[c][1], tile, CAP_WGMMA);
    }
}

/* Float32's GEMM with W on tf32 units (engine: mma; the device suites,
 * elsewhere each case must validate): K and N multiples of 4 and not of
 * 8 (in_out's W k-major, its B fragments a float a lane), a rank in one
 * step and past one (72 at k 64), accumulate, tiles of 16-deep steps in
 * 3 stages, and the split path's slices (lora_mma_split, unequal steps)
 * between lora_decode's rows and the tiles'. */
static void lora_tf32_cases(void)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 300, out_features: 196, rank: 12", ""},
        {"f32", "in_features: 1004, out_features: 268, rank: 72, "
         "alpha: 16, accumulate: true", ""},
        {"f32", "in_features: 132, out_features: 1028, rank: 40, "
         "scale: 0.5", "m: 64, n: 64, k: 16, wm: 32, wn: 32, stages: 3, "
         "split_k: 3, split_max: 100, decode_max: 8"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char tile[256];
        snprintf(tile, sizeof tile, "engine: mma%s%s",
                 cases[c][2][0] != '\0' ? ", " : "", cases[c][2]);
        lora_case_where_it_runs(cases[c][0], cases[c][1], tile,
                                CAP_MMA_SYNC_BF16_F16);
    }
}

static void test_lora_tf32(void)
{
    lora_tf32_cases();
    lora_layout = OUT_IN;
    lora_tf32_cases();
    lora_layout = "";
}

/* The tensor-core cases above in both weight layouts: out_in's W (N x K)
 * is mma.sync's B fragments as they come (ldmatrix without .trans) and
 * wgmma's B K-major; B (N x r) and A (r x K) the same. */
static void test_lora_decode_mma(void)
{
    lora_decode_mma_cases();
    lora_layout = OUT_IN;
    lora_decode_mma_cases();
    lora_layout = "";
}

static void test_lora_wgmma(void)
{
    lora_wgmma_cases();
    lora_layout = OUT_IN;
    lora_wgmma_cases();
    lora_layout = "";
}

/* Few rows without tensor cores (lora_decode_split, then
 * lora_decode_sum): odd K and N, slices of unequal length and past a
 * whole group of loads, strips past N and the rank, row blocks of 32,
 * 20, 12 and 7 (8, 16 and the block's own accumulators), accumulate,
 * each dtype; the paths' limits and their neighbours among the rows. */
static void test_lora_decode_split(void)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 411, out_features: 301, rank: 5",
         "decode_max: 1, decode_split_max: 32, decode_cols: 64, "
         "decode_slices: 3"},
        {"f32", "in_features: 300, out_features: 520, rank: 16, alpha: 8, "
         "accumulate: true", "decode_max: 2, decode_split_max: 20, "
         "decode_cols: 128, decode_slices: 5"},
        {"bf16", "in_features: 257, out_features: 130, rank: 3",
         "decode_rows: 0, decode_split_max: 7, decode_cols: 32, "
         "decode_slices: 2"},
        {"f16", "in_features: 1000, out_features: 1064, rank: 40, "
         "scale: 0.5", "decode_max: 4, decode_split_max: 16, "
         "decode_cols: 64, decode_slices: 4"},
        /* a row block of 12 (12 accumulators), lora_decode_sum's loop
         * over more than 8 slices at vec 4 */
        {"f32", "in_features: 700, out_features: 72, rank: 40",
         "decode_max: 1, decode_split_max: 12, decode_cols: 64, "
         "decode_slices: 9"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        check_lora_kernel(cases[c][0], cases[c][1], cases[c][2]);
    }
}

/* weight_layout: out_in (W N x K, A r x K, B N x r: PyTorch's and PEFT's)
 * on the paths a CPU runs, each reading the three in that layout:
 * lora_decode; lora_xa then lora_main (W's tiles read along K and
 * transposed into local memory, B's rank stretch by columns), X*A
 * inline; lora_expand (B gathered 1, 8 and 16 wide); lora_main_padded,
 * its copies of W and B transposed where K is no multiple of 4 and read
 * as they are where only N is odd; the split path, K past its last step
 * (clamped and guarded); lora_delta; lora_decode_split and
 * lora_decode_sum; every dtype, vec 1, 2 and 4, accumulate. With --full,
 * every case of the tests above in out_in. */
static void test_lora_out_in(void)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 100, out_features: 72, rank: 8, alpha: 16",
         ""},
        {"f16", "in_features: 100, out_features: 72, rank: 8, alpha: 16",
         "m: 32, n: 32, k: 8, wm: 4, wn: 4, decode_rows: 4"},
        {"bf16", "in_features: 100, out_features: 72, rank: 8, alpha: 16",
         "m: 16, n: 64, k: 16, wm: 2, wn: 8, vec: 2, pad: 0, "
         "decode_rows: 5, decode_n: 4, decode_k: 16, xa_m: 8, xa_k: 4"},
        {"f32", "in_features: 100, out_features: 72, rank: 8, "
         "accumulate: true, scale: 0.5", "xa: inline, decode_rows: 0"},
        {"f32", "in_features: 100, out_features: 72, rank: 8, base: false, "
         "accumulate: true, alpha: 3", "xa: prepass, decode_rows: 0"},
        {"f16", "in_features: 40, out_features: 48, rank: 4, base: false, "
         "accumulate: true", "decode_rows: 0"},
        {"f32", "in_features: 99, out_features: 37, rank: 5, alpha: 10", ""},
        {"f32", "in_features: 36, out_features: 136, rank: 3, alpha: 6",
         "m: 64, n: 128, k: 16, wm: 8, wn: 8, xa: prepass, decode_rows: 0"},
        {"bf16", "in_features: 37, out_features: 136, rank: 3, alpha: 6",
         "m: 32, n: 32, k: 8, wm: 4, wn: 4, xa: prepass, decode_rows: 0, "
         "pad_rows: 1"},
        {"f32", "in_features: 40, out_features: 133, rank: 5, "
         "accumulate: true", "m: 32, n: 64, k: 8, wm: 4, wn: 4, "
         "xa: prepass, decode_rows: 0, split_k: 2, split_max: 20, "
         "pad_rows: 40"},
        {"f16", "in_features: 42, out_features: 70, rank: 4, scale: 0.5",
         "m: 32, n: 32, k: 8, wm: 4, wn: 4, xa: prepass, decode_rows: 0, "
         "pad_rows: 1"},
        {"f32", "in_features: 37, out_features: 51, rank: 3",
         "split_k: 2, split_max: 40, decode_rows: 4, decode_max: 4, m: 16, "
         "n: 16, k: 8, wm: 2, wn: 2"},
        {"bf16", "in_features: 264, out_features: 72, rank: 8, "
         "accumulate: true", "split_k: 4, split_max: 33, decode_max: 16"},
        {"f32", "in_features: 37, out_features: 51, rank: 5, base: false, "
         "accumulate: true", "delta_rows: 3, delta_threads: 24, "
         "delta_split: 5, delta_max: 40"},
        {"f32", "in_features: 411, out_features: 301, rank: 5",
         "decode_max: 1, decode_split_max: 32, decode_cols: 64, "
         "decode_slices: 3"},
        {"bf16", "in_features: 257, out_features: 130, rank: 3",
         "decode_rows: 0, decode_split_max: 7, decode_cols: 32, "
         "decode_slices: 2"},
    };
    lora_layout = OUT_IN;
    if (test_full) {
        test_lora_tiles();
        test_lora_options();
        test_lora_shapes();
        test_lora_padded();
        test_lora_split();
        test_lora_delta();
        test_lora_decode_split();
    } else {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            check_lora_kernel(cases[c][0], cases[c][1], cases[c][2]);
        }
    }
    lora_layout = "";
}

/* Every value of every choice knob of lora_forward (xa, and whatever the
 * op grows), with W and without (accumulating): a value that validates in
 * neither is a failure. Read from the op's table, so new choices are
 * covered without touching this test. */
static void test_lora_choices(void)
{
    const struct op_def *op = op_find("lora_forward");
    CU_ASSERT_FATAL(op != NULL);
    for (int i = 0; i < op->n_knobs; i++) {
        const struct param_def *kd = &op->knobs[i];
        if (kd->kind != VALUE_CHOICE) {
            continue;
        }
        for (int c = 0; kd->choices[c] != NULL; c++) {
            /* Tensor cores take half-width storage and K, N multiples of
             * 8, and run only where the device has them. */
            int mma = strcmp(kd->key, "engine") == 0 &&
                      strcmp(kd->choices[c], "simt") != 0;
            int wgmma = mma && strcmp(kd->choices[c], "wgmma") == 0;
            int valid = 0;
            for (int base = 1; base >= 0; base--) {
                struct nu_kernel k;
                if (nu_spec(&k, "kernels:\n  - {name: t_lora, op: "
                            "lora_forward, dtype: %s, in_features: %d, "
                            "out_features: 72, rank: 8, alpha: 16, base: %s, "
                            "accumulate: %s, tile: {%s: %s}}\n",
                            mma ? "bf16" : "f32", mma ? 104 : 100,
                            base ? "true" : "false", base ? "false" : "true",
                            kd->key, kd->choices[c])) {
                    valid = 1;
                    struct plan p;
                    memset(&p, 0, sizeof p);
                    k.ks->op->plan(k.ks, &p);
                    int runs = caps_lacking(p.needs, nu_rt()->caps.have) == 0;
                    /* what the engine runs on, its plan needs */
                    CU_ASSERT(!mma || (p.needs & CAP_MMA_SYNC_BF16_F16));
                    CU_ASSERT(!wgmma || (p.needs & CAP_WGMMA));
                    if (runs && nu_build(&k)) {
                        run_lora_rows(&k);
                    }
                }
                nu_kernel_free(&k);
            }
            if (!valid) {
                fprintf(stderr, "\nFAIL: tile %s: %s validates neither "
                        "with nor without W\n", kd->key, kd->choices[c]);
            }
            CU_ASSERT(valid);
        }
    }
}

/* ---- specs/seeds.yaml --------------------------------------------------- */

static void test_seeds(void)
{
    struct spec_set set;
    struct diags d = {.out = stderr};
    FILE *f = fopen(SEEDS_FILE, "r");
    if (f == NULL) {
        fprintf(stderr, "numeric: no %s here; skipped\n", SEEDS_FILE);
        return;
    }
    fclose(f);
    spec_set_init(&set);
    spec_read_file(&set, SEEDS_FILE, &d);
    CU_ASSERT(d.count == 0);
    for (int i = 0; i < set.n_kernel; i++) {
        struct nu_kernel k;
        static const size_t rows[] = {1, 7, 17};
        nu_adopt(&k, &set, i, SEEDS_FILE);
        if (k.ks != NULL && nu_build(&k)) {
            nu_run_rows(&k, rows, 3, nu_unit());
        }
        nu_kernel_free(&k);
    }
    spec_set_free(&set);
}

/* ---- naive stubs -------------------------------------------------------- */

#define GOLDEN_FILE "tests/golden/golden.yaml"

/* The naive stub (emit_naive) of every op builds and matches float64 on
 * its own, in every dtype: the kernels of tests/golden/golden.yaml (one or
 * more per op) at 1, 7 and 130 rows. */
static void test_naive_stubs(void)
{
    static const enum dtype dts[N_DTYPES] = {DTYPE_F32, DTYPE_F16,
                                             DTYPE_BF16};
    static const size_t rows[] = {1, 7, 130};
    struct spec_set set;
    struct diags d = {.out = stderr};
    spec_set_init(&set);
    spec_read_file(&set, GOLDEN_FILE, &d);
    CU_ASSERT_EQUAL(d.count, 0);
    for (int o = 0; op_registry[o] != NULL; o++) {
        int seen = 0;
        for (int i = 0; i < set.n_kernel; i++) {
            if (set.kernel[i].op != op_registry[o]) {
                continue;
            }
            seen++;
            for (int t = 0; t < N_DTYPES; t++) {
                struct kernel_spec ks = set.kernel[i];
                ks.dtype = dts[t];
                CU_ASSERT_EQUAL(nu_check_naive(&ks, rows, 3), 3);
            }
        }
        CU_ASSERT(seen > 0);
        if (seen == 0) {
            fprintf(stderr, "\nFAIL: op %s has no kernel in %s\n",
                    op_registry[o]->name, GOLDEN_FILE);
        }
    }
    spec_set_free(&set);
}

/* ---- lora_backward ---------------------------------------------------- */

/* Runs built lora_backward kernel K over 1, 2, m-1, m, m+1 and a larger
 * number of rows (m its dX tile rows), and one past its lora_bwd_tg and
 * lora_bwd_grad row blocks (the latter: two slices of partial sums). */
static void run_bwd_rows(struct nu_kernel *k)
{
    size_t rows[16];
    long m = nu_knob(k, "m");
    int n = nu_tile_rows(m, 2 * m + 3, rows);
    n = nu_rows_add(rows, n, 2);
    n = nu_rows_add(rows, n, nu_knob(k, "tg_rows") + 1);
    n = nu_rows_add(rows, n, nu_knob(k, "grad_rows") + 1);
    nu_run_rows(k, rows, n, nu_unit());
}

static void check_bwd_kernel(const char *dtype, const char *fields,
                             const char *tile)
{
    struct nu_kernel k;
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_bwd, op: lora_backward, "
                   "dtype: %s, %s%s%s%s%s}\n", dtype, fields, lora_layout,
                   *tile ? ", tile: {" : "", tile, *tile ? "}" : "") &&
        nu_build(&k)) {
        run_bwd_rows(&k);
    }
    nu_kernel_free(&k);
}

/* input_grad x base x accumulate, alpha or scale; odd K, N and r; tiles
 * that leave partial blocks everywhere. Each case in f32, two in f16 and
 * bf16 (every dtype with --full). */
static void test_bwd_options(void)
{
    static const char *const cases[][2] = {
        {"in_features: 96, out_features: 40, rank: 7, alpha: 14", ""},
        {"in_features: 37, out_features: 51, rank: 3, scale: -0.5, "
         "accumulate: true", "grad_rows: 16, tg_rows: 3, tg_threads: 96"},
        {"in_features: 100, out_features: 72, rank: 8, input_grad: false",
         "grad_rows: 32, grad_threads: 64"},
        {"in_features: 100, out_features: 72, rank: 8, input_grad: false, "
         "accumulate: true, alpha: 4", ""},
        {"in_features: 64, out_features: 128, rank: 16, base: false, "
         "scale: 2", "m: 32, n: 32, k: 8, wm: 4, wn: 4"},
        {"in_features: 72, out_features: 100, rank: 5, base: false, "
         "accumulate: true", "m: 16, n: 48, k: 4, wm: 2, wn: 3, vec: 2, "
         "pad: 0, grad_vec: 1, reduce_threads: 64"},
        {"in_features: 1, out_features: 3, rank: 1", ""},
    };
    char fields[256];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(fields, sizeof fields, "%s", cases[c][0]);
        for (int d = 0; d < N_DTYPES; d++) {
            if (test_full || d == 0 || c == 1 || c == 5) {
                check_bwd_kernel(dtypes[d], fields, cases[c][1]);
            }
        }
    }
}

/* weight_layout: out_in for lora_backward: A (r x K) and B (N x r) read
 * by lora_bwd_tg the other way round, dX from W (N x K, no copy of W^T)
 * and A^T (A's rows), dA (r x K) and dB (N x r) written, and summed by
 * lora_bwd_reduce, in that layout: every gradient, the adapter's alone,
 * no base, accumulate, one and two slices of partial sums, odd shapes,
 * every dtype (every case of test_bwd_options with --full). */
static void test_bwd_out_in(void)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 96, out_features: 40, rank: 7, alpha: 14", ""},
        {"f16", "in_features: 37, out_features: 51, rank: 3, scale: -0.5, "
         "accumulate: true", "grad_rows: 16, tg_rows: 3, tg_threads: 96"},
        {"bf16", "in_features: 100, out_features: 72, rank: 8, "
         "input_grad: false, accumulate: true, alpha: 4", "grad_rows: 32"},
        {"f32", "in_features: 100, out_features: 72, rank: 8, "
         "input_grad: false", "grad_rows: 32, grad_threads: 64"},
        {"f32", "in_features: 64, out_features: 128, rank: 16, base: false, "
         "scale: 2", "m: 32, n: 32, k: 8, wm: 4, wn: 4"},
        {"bf16", "in_features: 72, out_features: 100, rank: 5, "
         "accumulate: true", "m: 16, n: 48, k: 4, wm: 2, wn: 3, vec: 2, "
         "pad: 0, grad_vec: 1, reduce_threads: 64"},
        {"f32", "in_features: 1, out_features: 3, rank: 1", ""},
    };
    lora_layout = OUT_IN;
    if (test_full) {
        test_bwd_options();
    } else {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            check_bwd_kernel(cases[c][0], cases[c][1], cases[c][2]);
        }
    }
    lora_layout = "";
}

/* Case C (dtype, fields, tile) run by CHECK where the device has what
 * its engine (mma, wgmma in the tile) needs; elsewhere it must validate. */
static void bwd_case_where_it_runs(const char *const c[3],
                                   void (*check)(const char *, const char *,
                                                 const char *))
{
    unsigned needs = strstr(c[2], "wgmma") != NULL
                         ? CAP_MMA_SYNC_BF16_F16 | CAP_WGMMA
                     : strstr(c[2], "mma") != NULL ? CAP_MMA_SYNC_BF16_F16
                                                   : 0;
    const char *stages = strstr(c[2], "tg_stages: ");
    if (stages != NULL && atoi(stages + strlen("tg_stages: ")) != 0) {
        needs |= CAP_CP_ASYNC;
    }
    if (strstr(c[2], "x_once: 1") != NULL) {
        needs |= CAP_MMA_SYNC_BF16_F16 | CAP_CP_ASYNC;
    }
    if (caps_lacking(needs, nu_rt()->caps.have) == 0) {
        check(c[0], c[1], c[2]);
        return;
    }
    struct nu_kernel k;
    nu_spec_ok(&k, "kernels:\n  - {name: t_bwd, op: lora_backward, "
               "dtype: %s, %s%s, tile: {%s}}\n", c[0], c[1], lora_layout,
               c[2]);
    nu_kernel_free(&k);
}

/* lora_bwd_tg with X and dY through a ring in local memory by cp.async
 * (the device suites; elsewhere each case must validate): a product of
 * one partial step (K, N under a step's span), of many with the last
 * partial, rows of a work-group past the last row (tg_rows 5), odd and
 * wide ranks, 2 stages (none in flight but the step's) to 6, both
 * weight layouts, accumulate, every gradient and the adapter's alone. */
static void test_bwd_tg_stages(void)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 100, out_features: 72, rank: 8, "
         "input_grad: false", "tg_stages: 3"},
        {"f32", "in_features: 96, out_features: 40, rank: 7, alpha: 14",
         "tg_stages: 3"},
        {"f32", "in_features: 520, out_features: 1028, rank: 16, "
         "accumulate: true", "tg_rows: 5, tg_threads: 160, tg_stages: 6"},
        {"f32", "in_features: 1028, out_features: 264, rank: 40, "
         "input_grad: false", "tg_stages: 2"},
    };
    for (int layout = 0; layout < 2; layout++) {
        lora_layout = layout ? OUT_IN : "";
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            bwd_case_where_it_runs(cases[c], check_bwd_kernel);
        }
    }
    lora_layout = "";
}

/* x_once: T and dA from one read of X on tf32 tensor cores
 * (lora_bwd_xpass, lora_bwd_xsum; the device suites, elsewhere each case
 * must validate), in both weight layouts: a last block of columns past K
 * (1000, 264, 520), ranks of one partial block of 8 (5, 12) and two (16),
 * one slice of rows and several (xpass_rows 64, 128: partial sums of dA
 * summed, and rows past the last slice's), accumulate, no base, dX after
 * it, lora_bwd_grad's slices of dB summed by lora_bwd_reduce; and the
 * same bits on every run. */
static void check_same_bits(const char *spec, size_t rows, const char *what);

static void test_bwd_x_once(void)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 1000, out_features: 264, rank: 5, "
         "input_grad: false", "x_once: 1"},
        {"f32", "in_features: 264, out_features: 72, rank: 16, alpha: 32, "
         "accumulate: true", "x_once: 1, xpass_rows: 64"},
        {"f32", "in_features: 520, out_features: 1028, rank: 12",
         "x_once: 1, xpass_rows: 128, grad_rows: 128"},
        {"f32", "in_features: 128, out_features: 96, rank: 9, base: false",
         "x_once: 1"},
    };
    for (int layout = 0; layout < 2; layout++) {
        lora_layout = layout ? OUT_IN : "";
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            bwd_case_where_it_runs(cases[c], check_bwd_kernel);
        }
    }
    lora_layout = "";
    if (caps_lacking(CAP_MMA_SYNC_BF16_F16 | CAP_CP_ASYNC,
                     nu_rt()->caps.have) == 0) {
        check_same_bits("kernels:\n  - {name: t_bwd, op: lora_backward, "
                        "in_features: 200, out_features: 136, rank: 12, "
                        "alpha: 24, tile: {x_once: 1, xpass_rows: 64}}\n",
                        300, "lora_backward x_once");
    }
}

/* dX on tensor cores (lora_bwd_dx_mma, lora_bwd_dx_wgmma: the device
 * suites; elsewhere each case must validate), in both weight layouts:
 * in_out's W and A read n-major, out_in's k-major. A last step of N part
 * past it, tiles past K and the rows, one and two rank steps (r 40 at k
 * 64: 32 + 8) and an odd rank, accumulate into dA and dB, scale, both
 * dtypes; each K step of wgmma (16, 32, 64), tile n 64 to 256, one to
 * three warpgroups, 3 to 6 stages, and the rows on either side of
 * dx_mma_max (lora_bwd_dx_mma below, lora_bwd_dx_wgmma above). dA and dB
 * on tensor cores (lora_bwd_grad_mma): strips past K and N, slices of
 * rows that end mid-step, one slice and several, ranks of 5 to 64
 * (partial n8 tiles), the adapter's alone and without the base; rank
 * 72, past lora_bwd_grad_mma's, keeps lora_bwd_grad. T and G on tensor
 * cores (lora_bwd_tg_mma): one, two and four partial sums a row (K or N
 * past 2048 and 4096), stretches that end mid-chunk, G from either
 * weight layout; two and four stretches added in one work-group (K and
 * N within 2x), with two partial sums a row where local memory holds
 * two stretches (rank 24), the weight staged a value at a time (rank 12)
 * or 16 bytes at a time. Float32's dX on tf32 units (three products a
 * product): K and N multiples of 4 and not of 8, a rank in one step and
 * past one (72 at k 64: 64 + 8), tiles of 16-deep steps in 3 stages. */
static void bwd_tensor_cases(void)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 300, out_features: 196, rank: 12",
         "engine: mma"},
        {"f32", "in_features: 1004, out_features: 268, rank: 72, "
         "alpha: 16, accumulate: true", "engine: mma"},
        {"f32", "in_features: 132, out_features: 1028, rank: 40, "
         "scale: 0.5", "engine: mma, m: 64, n: 64, k: 16, wm: 32, wn: 32, "
         "stages: 3"},
        {"bf16", "in_features: 1000, out_features: 1064, rank: 40, "
         "alpha: 16, accumulate: true", "engine: mma"},
        {"f16", "in_features: 264, out_features: 72, rank: 7",
         "engine: mma, m: 64, n: 64, k: 32, wm: 32, wn: 32, stages: 3"},
        {"bf16", "in_features: 520, out_features: 136, rank: 16, "
         "scale: 0.5", "engine: wgmma, k: 16, wg_stages: 6, "
         "dx_mma_max: 0"},
        {"f16", "in_features: 1024, out_features: 520, rank: 24, "
         "alpha: 48", "engine: wgmma, wg_m: 192, wg_n: 128, wg_stages: 5, "
         "dx_mma_max: 100"},
        {"bf16", "in_features: 72, out_features: 264, rank: 8, "
         "accumulate: true", "engine: wgmma, wg_n: 64, k: 32, wg_m: 64, "
         "wg_stages: 3, dx_mma_max: 2"},
        {"f16", "in_features: 136, out_features: 264, rank: 5, "
         "input_grad: false, accumulate: true", "engine: mma, "
         "grad_rows: 64"},
        {"bf16", "in_features: 264, out_features: 72, rank: 64, "
         "base: false", "engine: mma, grad_rows: 200"},
        {"bf16", "in_features: 96, out_features: 80, rank: 72, alpha: 14",
         "engine: mma, m: 64, n: 64, wm: 32, wn: 32"},
        {"bf16", "in_features: 2056, out_features: 520, rank: 24, "
         "alpha: 48", "engine: wgmma"},
        {"f16", "in_features: 4104, out_features: 136, rank: 16, "
         "input_grad: false, accumulate: true", "engine: mma"},
        {"bf16", "in_features: 4104, out_features: 2600, rank: 16, "
         "alpha: 8", "engine: mma"},
        {"f16", "in_features: 2600, out_features: 4104, rank: 24, "
         "accumulate: true", "engine: wgmma"},
        {"bf16", "in_features: 2056, out_features: 1032, rank: 12, "
         "scale: 0.5, input_grad: false", "engine: mma"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bwd_case_where_it_runs(cases[c], check_bwd_kernel);
    }
}

/* The tensor cores' launch sequence (any device: the plan alone) leaves
 * dA's and dB's sums to lora_bwd_grad_mma's last work-group of each
 * strip: no lora_bwd_reduce, the handle's sync words as an argument, and
 * a word for every strip of 128 columns of X and dY (whatever
 * lora_bwd_fused's counters, which share them, need). */
static void test_bwd_tensor_strip_counters(void)
{
    static const int shapes[][2] = {
        {4096, 4096}, {4096, 11008}, {11008, 4096}, {520, 136}, {16, 4104}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        struct nu_kernel k;
        const int K = shapes[i][0], N = shapes[i][1];
        if (!nu_spec_ok(&k, "kernels:\n  - {name: t_bwd_strips, op: "
                        "lora_backward, dtype: bf16, in_features: %d, "
                        "out_features: %d, rank: 16%s}\n", K, N,
                        lora_layout)) {
            nu_kernel_free(&k);
            continue;
        }
        struct plan p;
        nu_plan_for(&k, TARGET_TENSOR, &p);
        const long strips = (K + 127) / 128 + (N + 127) / 128;
        int grads = 0, reduces = 0, synced = 0;
        for (int a = 0; a < p.n_path; a++) {
            for (int l = 0; l < p.path[a].n_launch; l++) {
                const struct launch *ln = &p.path[a].launch[l];
                reduces += strcmp(ln->kernel, "lora_bwd_reduce") == 0;
                if (strcmp(ln->kernel, "lora_bwd_grad_mma") != 0) {
                    continue;
                }
                grads++;
                for (int g = 0; ln->args[g] != NULL; g++) {
                    synced += strcmp(ln->args[g], "sync") == 0;
                }
            }
        }
        TU_CHECK(grads > 0 && synced == grads && reduces == 0 &&
                     p.sync_words >= strips,
                 "K %d, N %d: %d lora_bwd_grad_mma launches (%d given the "
                 "sync words), %d of lora_bwd_reduce, %ld sync words for "
                 "%ld strips:\n%s",
                 K, N, grads, synced, reduces, p.sync_words, strips, k.yaml);
        nu_kernel_free(&k);
    }
}

/* lora_bwd_tg_mma adds a row's stretches in one work-group where T's and
 * G's reductions are within 2x of each other and local memory holds them
 * (the plan alone): llama-q's four at rank 16, two at rank 32; llama-up's
 * and -down's stay work-groups apart, four partial sums a row. */
static void test_bwd_tg_split_plan(void)
{
    static const struct {
        int K, N, r;
        long split, parts;
    } cases[] = {{4096, 4096, 16, 4, 1},
                 {4096, 4096, 32, 2, 2},
                 {4096, 11008, 16, 1, 4},
                 {11008, 4096, 16, 1, 4},
                 {2056, 1032, 12, 2, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        if (!nu_spec_ok(&k, "kernels:\n  - {name: t_bwd_split, op: "
                        "lora_backward, dtype: bf16, in_features: %d, "
                        "out_features: %d, rank: %d, input_grad: false%s}\n",
                        cases[i].K, cases[i].N, cases[i].r, lora_layout)) {
            nu_kernel_free(&k);
            continue;
        }
        struct plan p;
        nu_plan_for(&k, TARGET_TENSOR, &p);
        long split = -1, parts = -1;
        for (int d = 0; d < p.n_define; d++) {
            if (strcmp(p.define[d].name, "TM_SPLIT") == 0) {
                split = p.define[d].i;
            } else if (strcmp(p.define[d].name, "TG_PARTS") == 0) {
                parts = p.define[d].i;
            }
        }
        TU_CHECK(split == cases[i].split && parts == cases[i].parts,
                 "K %d, N %d, rank %d: TM_SPLIT %ld, TG_PARTS %ld (want "
                 "%ld, %ld):\n%s",
                 cases[i].K, cases[i].N, cases[i].r, split, parts,
                 cases[i].split, cases[i].parts, k.yaml);
        nu_kernel_free(&k);
    }
}

static void test_bwd_tensor(void)
{
    bwd_tensor_cases();
    test_bwd_tensor_strip_counters();
    test_bwd_tg_split_plan();
    lora_layout = OUT_IN;
    bwd_tensor_cases();
    test_bwd_tensor_strip_counters();
    test_bwd_tg_split_plan();
    lora_layout = "";
}

/* A rank whose rows of A the first defaults could not stage (rank 100
 * at tg_rows 8, tg_threads 128, vec 4: 54400 bytes of local memory): the
 * GPU defaults take 16 rows per lora_bwd_tg work-group, whose sums then
 * meet in three rounds of the rank's columns (46, 46 and 8). One row, a
 * work-group's rows and one past, and one past lora_bwd_grad's rows (two
 * slices of partial sums). */
static void test_bwd_wide_rank(void)
{
    struct nu_kernel k;
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_bwd, op: lora_backward, "
                   "in_features: 512, out_features: 512, rank: 100, "
                   "alpha: 200}\n") &&
        nu_build(&k)) {
        size_t rows[8] = {1};
        long tg = nu_knob(&k, "tg_rows");
        CU_ASSERT_EQUAL(tg, 16);
        int n = nu_rows_add(rows, 1, tg + 1);
        n = nu_rows_add(rows, n, 2 * tg + 3);
        n = nu_rows_add(rows, n, nu_knob(&k, "grad_rows") + 1);
        nu_run_rows(&k, rows, n, nu_unit());
    }
    nu_kernel_free(&k);
}

/* The kernel of SPEC run twice over ROWS rows of the same inputs: the
 * same bits both times (WHAT names it on failure). */
static void check_same_bits(const char *spec, size_t rows, const char *what)
{
    struct nu_kernel k;
    if (!nu_spec_ok(&k, "%s", spec) || !nu_build(&k)) {
        nu_kernel_free(&k);
        return;
    }
    struct vcase c;
    struct vbuffers b;
    unsigned long seed = 77;
    CU_ASSERT_FATAL(vcase_init(&c, k.ks, rows, seed, nu_unit()) == 0);
    CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
    float *run[2];
    for (int r = 0; r < 2; r++) {
        int canary_ok = 0;
        cl_event done = NULL;
        run[r] = malloc((c.out_count + 1) * sizeof *run[r]);
        CU_ASSERT_FATAL(run[r] != NULL);
        CU_ASSERT(vbuffers_reset_output(nu_rt(), &c, &b) == CL_SUCCESS);
        CU_ASSERT(stub_enqueue(&k.stub, nu_rt()->queue, c.sizes, b.mem, 0,
                               NULL, &done) == CL_SUCCESS);
        CU_ASSERT(clFinish(nu_rt()->queue) == CL_SUCCESS);
        if (done != NULL) {
            clReleaseEvent(done);
        }
        CU_ASSERT(vbuffers_read_output(nu_rt(), &c, &b, run[r],
                                       &canary_ok) == CL_SUCCESS);
        CU_ASSERT(canary_ok);
    }
    int same = memcmp(run[0], run[1], c.out_count * sizeof *run[0]) == 0;
    if (!same) {
        fprintf(stderr, "\nFAIL: %s gave different bits on two runs (rows "
                "%zu, seed %lu)\n", what, c.rows, seed);
    }
    CU_ASSERT(same);
    free(run[0]);
    free(run[1]);
    vbuffers_free(&b);
    vcase_free(&c);
    nu_kernel_free(&k);
}

/* dA and dB are sums over every row in a fixed order: two runs on the same
 * inputs give the same bits (dX too). */
static void test_bwd_deterministic(void)
{
    check_same_bits("kernels:\n  - {name: t_bwd, op: lora_backward, "
                    "in_features: 200, out_features: 136, rank: 12, "
                    "alpha: 24, tile: {grad_rows: 32}}\n",
                    300, "lora_backward");
}

/* lora_bwd_fused (every gradient in one launch) over 1, 2, m - 1, m,
 * m + 1 and 3m + 1 rows (one to four blocks of rows: dA and dB written
 * by their only block, or summed from the slices by the last), its
 * fused_max and one past it (the next path). */
static void check_fused_kernel(const char *dtype, const char *fields,
                               const char *tile)
{
    struct nu_kernel k;
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_bwd, op: lora_backward, "
                   "dtype: %s, %s%s, tile: {%s}}\n", dtype, fields,
                   lora_layout, tile) &&
        nu_build(&k)) {
        size_t rows[16];
        /* engine: mma and wgmma leave m to their own tiles: lora_bwd_fused
         * then takes blocks of 32 rows */
        long m = strstr(tile, "mma") != NULL ? 32 : nu_knob(&k, "m");
        int n = nu_tile_rows(m, 3 * m + 1, rows);
        n = nu_rows_add(rows, n, 2);
        n = nu_rows_add(rows, n, nu_knob(&k, "fused_max"));
        n = nu_rows_add(rows, n, nu_knob(&k, "fused_max") + 1);
        nu_run_rows(&k, rows, n, nu_unit());
    }
    nu_kernel_free(&k);
}

/* lora_bwd_fused in both weight layouts (out_in: every third case, every
 * case with --full): odd K, N and r (a last stage
 * of N and of K part past it, tiles past K and the rows), the slices of
 * its bands (the defaults', three and one, as many as K's steps),
 * accumulate,
 * a negative scale, the adapter's gradients alone, no base, ranks of 1
 * to 64 (sums of 4, 2 and 1 columns a work-item), tiles of 16 to 64
 * rows, every dtype; on tensor-core engines (f16, bf16: its own float
 * tile beside dX's tensor-core paths), where the device has them. */
static void fused_cases(int every)
{
    static const char *const cases[][3] = {
        {"f32", "in_features: 96, out_features: 40, rank: 7, alpha: 14",
         "fused_max: 100"},
        {"bf16", "in_features: 37, out_features: 51, rank: 3, "
         "scale: -0.5, accumulate: true", "fused_max: 70, m: 16, n: 16, "
         "k: 8, wm: 2, wn: 2"},
        {"f16", "in_features: 100, out_features: 72, rank: 8, "
         "input_grad: false", "fused_max: 50"},
        {"f32", "in_features: 100, out_features: 72, rank: 8, "
         "input_grad: false, accumulate: true, alpha: 4",
         "fused_max: 90, m: 64, n: 32, wm: 4, wn: 4"},
        {"f32", "in_features: 64, out_features: 128, rank: 16, base: false, "
         "scale: 2", "fused_max: 40"},
        {"bf16", "in_features: 72, out_features: 100, rank: 5, base: false, "
         "accumulate: true", "fused_max: 60, m: 16, n: 48, k: 4, wm: 2, "
         "wn: 3, vec: 2, pad: 0"},
        {"f32", "in_features: 136, out_features: 264, rank: 33, alpha: 8",
         "fused_max: 40, m: 32, n: 32, wm: 4, wn: 4"},
        {"f32", "in_features: 128, out_features: 96, rank: 64, alpha: 8",
         "fused_max: 33, vec: 2, m: 32, n: 32, wm: 4, wn: 4"},
        {"f32", "in_features: 1, out_features: 3, rank: 1", "fused_max: 9"},
        {"f32", "in_features: 96, out_features: 80, rank: 4, alpha: 4",
         "fused_max: 70, fused_slices: 3, m: 16, n: 16, k: 16, wm: 2, "
         "wn: 2"},
        {"bf16", "in_features: 64, out_features: 200, rank: 9",
         "fused_max: 64, fused_slices: 4, m: 16, n: 32, k: 16, wm: 2, "
         "wn: 4"},
        {"bf16", "in_features: 520, out_features: 136, rank: 16, "
         "accumulate: true", "engine: wgmma, fused_max: 96"},
        {"f16", "in_features: 264, out_features: 72, rank: 7",
         "engine: mma, fused_max: 40"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (every || strstr(cases[c][2], "mma") != NULL || c % 3 == 1) {
            bwd_case_where_it_runs(cases[c], check_fused_kernel);
        }
    }
}

static void test_bwd_fused(void)
{
    fused_cases(1);
    lora_layout = OUT_IN;
    fused_cases(test_full);
    lora_layout = "";
}

/* lora_bwd_fused's slices of dA and dB summed by whichever work-group
 * ends last: in block order all the same. */
static void test_bwd_fused_deterministic(void)
{
    check_same_bits("kernels:\n  - {name: t_bwd, op: lora_backward, "
                    "in_features: 200, out_features: 136, rank: 12, "
                    "alpha: 24, tile: {fused_max: 100, fused_slices: 4}}\n",
                    100, "lora_bwd_fused");
}

/* lora_decode_mma's strips summed by whichever work-group of the strip
 * ends last: in slice order all the same (on devices without tensor
 * cores, the variant they run). */
static void test_decode_mma_deterministic(void)
{
    check_same_bits("kernels:\n  - {name: t_lora, op: lora_forward, "
                    "dtype: bf16, in_features: 1000, out_features: 1064, "
                    "rank: 16, alpha: 16, tile: {decode_max: 2, "
                    "decode_mma_max: 100, decode_slices: 8}}\n",
                    90, "lora_decode_mma");
}

/* ---- the op defaults for CPUs (gen --target cpu; bench and tune on a
 * CPU device) ------------------------------------------------------------ */

static const char cpu_spec[] =
    "kernels:\n"
    "  - {name: q, op: lora_forward, in_features: 4096, out_features: 4096, "
    "rank: 16, alpha: 32}\n"
    "  - {name: mid, op: lora_forward, in_features: 520, out_features: 264, "
    "rank: 16, alpha: 16}\n"
    "  - {name: delta, op: lora_forward, in_features: 200, out_features: "
    "100, rank: 8, scale: 2, base: false, accumulate: true}\n"
    /* lora_expand 16 and 8 columns wide */
    "  - {name: delta16, op: lora_forward, in_features: 40, out_features: "
    "48, rank: 4, base: false, accumulate: true}\n"
    "  - {name: delta8, op: lora_forward, dtype: f16, in_features: 100, "
    "out_features: 72, rank: 8, alpha: 4, base: false, accumulate: true}\n"
    "  - {name: odd, op: lora_forward, in_features: 99, out_features: 37, "
    "rank: 5, alpha: 10}\n"
    "  - {name: bwd, op: lora_backward, in_features: 99, out_features: 37, "
    "rank: 5, alpha: 10}\n"
    "  - {name: sm1, op: softmax, features: 1}\n"
    "  - {name: sm7, op: softmax, features: 7, scale: -0.5}\n"
    "  - {name: sm4097, op: softmax, features: 4097}\n"
    "  - {name: sm32000, op: softmax, features: 32000}\n"
    "  - {name: rms4096, op: rmsnorm, features: 4096}\n"
    "  - {name: rms7, op: rmsnorm, features: 7}\n"
    "  - {name: ln1024, op: layernorm, features: 1024}\n"
    "  - {name: ln4097, op: layernorm, features: 4097}\n";

static void test_cpu_defaults(void)
{
    static const char *const files[] = {SEEDS_FILE, "cpu_defaults.yaml"};
    for (int f = 0; f < 2; f++) {
        struct spec_set set;
        struct diags d = {.out = stderr};
        spec_set_init(&set);
        if (f == 0) {
            spec_read_file(&set, files[f], &d);
        } else {
            spec_read_buffer(&set, files[f], (const unsigned char *)cpu_spec,
                             sizeof cpu_spec - 1, &d);
        }
        CU_ASSERT(d.count == 0);
        CU_ASSERT(spec_set_target(&set, TARGET_CPU, &d) == 0);
        for (int i = 0; i < set.n_kernel; i++) {
            struct nu_kernel k;
            size_t rows[8] = {1, 7, 17};
            long limit[4];
            const struct kernel_spec *ks = &set.kernel[i];
            /* the row ops: one work-item per row on CPUs */
            int wg = op_knob_index(ks->op, "wg");
            if (wg >= 0) {
                CU_ASSERT(ks->knob[wg].num == 1);
            }
            CU_ASSERT(strcmp(ks->tile_note, "op defaults for CPUs") == 0);
            nu_adopt(&k, &set, i, files[f]);
            if (k.ks != NULL && nu_build(&k)) {
                /* and the first row of each path past the first */
                int n = 3, paths = nu_path_limits(&k, limit, 4);
                for (int p = 0; p < paths; p++) {
                    n = nu_rows_add(rows, n, limit[p] + 1);
                }
                nu_run_rows(&k, rows, n, nu_unit());
            }
            nu_kernel_free(&k);
        }
        spec_set_free(&set);
    }
}

static int suite_init(void)
{
    return nu_open("numeric");
}

static int suite_cleanup(void)
{
    return nu_close();
}

int add_numeric_suite(void)
{
    CU_pSuite s = CU_add_suite("numeric", suite_init, suite_cleanup);
    if (s == NULL || add_sizes_numeric_tests(s) != 0 ||
        add_gated_numeric_tests(s) != 0 || add_add_norm_numeric_tests(s) != 0 ||
        add_rope_numeric_tests(s) != 0 ||
        add_norm_backward_numeric_tests(s) != 0 ||
        add_softmax_split_numeric_tests(s) != 0 ||
        add_import_numeric_tests(s) != 0 ||
        add_cross_entropy_numeric_tests(s) != 0 ||
        add_attention_numeric_tests(s) != 0 ||
        add_attention_backward_numeric_tests(s) != 0 ||
        add_tma_numeric_tests(s) != 0 ||
        CU_add_test(s, "row ops: tiles x dtypes x rows", test_row_tiles) ==
            NULL ||
        CU_add_test(s, "row ops: odd and long rows", test_row_shapes) ==
            NULL ||
        CU_add_test(s, "softmax: scale, inputs up to 1e4",
                    test_softmax_large) == NULL ||
        CU_add_test(s, "norms: mean 1e4, spread 1e-2", test_norm_offset) ==
            NULL ||
        CU_add_test(s, "row ops: long sums, GPU and CPU defaults",
                    test_long_sums) == NULL ||
        CU_add_test(s, "layernorm: cancelling variance, GPU and CPU "
                    "defaults", test_norm_cancel) == NULL ||
        CU_add_test(s, "norms: rows near FLT_MAX and among the subnormals, "
                    "GPU and CPU defaults", test_norm_extremes) == NULL ||
        CU_add_test(s, "softmax: huge inputs, extreme scales, GPU and CPU "
                    "defaults", test_softmax_extremes) == NULL ||
        CU_add_test(s, "row ops: a NaN input, its row NaN and no other",
                    test_row_nan) == NULL ||
        CU_add_test(s, "ops: a NaN input, NaN where float64 has it",
                    test_ops_nan) == NULL ||
        CU_add_test(s, "softmax: f16 outputs among the subnormals",
                    test_softmax_f16_subnormal) == NULL ||
        CU_add_test(s, "f16 outputs among the subnormals: rmsnorm, "
                    "layernorm, lora", test_f16_subnormal_outputs) == NULL ||
        CU_add_test(s, "lora: tiles x dtypes x rows", test_lora_tiles) ==
            NULL ||
        CU_add_test(s, "lora: base, accumulate, scale, xa, decode",
                    test_lora_options) == NULL ||
        CU_add_test(s, "lora: every value of every choice knob",
                    test_lora_choices) == NULL ||
        CU_add_test(s, "lora: odd shapes", test_lora_shapes) == NULL ||
        CU_add_test(s, "lora: operands padded to 4s, every dtype",
                    test_lora_padded) == NULL ||
        CU_add_test(s, "lora: K split over work-groups", test_lora_split) ==
            NULL ||
        CU_add_test(s, "lora: few rows on tensor cores",
                    test_lora_decode_mma) == NULL ||
        CU_add_test(s, "lora: the GEMM on warpgroups (wgmma)",
                    test_lora_wgmma) == NULL ||
        CU_add_test(s, "lora: float32 on tf32 tensor cores",
                    test_lora_tf32) == NULL ||
        CU_add_test(s, "lora: few rows over slices of K",
                    test_lora_decode_split) == NULL ||
        CU_add_test(s, "lora: weight_layout out_in on every CPU path",
                    test_lora_out_in) == NULL ||
        CU_add_test(s, "lora: the delta in one launch", test_lora_delta) ==
            NULL ||
        CU_add_test(s, "lora_backward: input_grad, base, accumulate, "
                    "odd shapes", test_bwd_options) == NULL ||
        CU_add_test(s, "lora_backward: X and dY by cp.async",
                    test_bwd_tg_stages) == NULL ||
        CU_add_test(s, "lora_backward: weight_layout out_in",
                    test_bwd_out_in) == NULL ||
        CU_add_test(s, "lora_backward: dX on tensor cores (mma, wgmma)",
                    test_bwd_tensor) == NULL ||
        CU_add_test(s, "lora_backward: T and dA from one read of X "
                    "(x_once)", test_bwd_x_once) == NULL ||
        CU_add_test(s, "lora_backward: a wide rank at the defaults",
                    test_bwd_wide_rank) == NULL ||
        CU_add_test(s, "lora_backward: dA and dB the same bits every run",
                    test_bwd_deterministic) == NULL ||
        CU_add_test(s, "lora_backward: every gradient in one launch "
                    "(lora_bwd_fused)", test_bwd_fused) == NULL ||
        CU_add_test(s, "lora_backward: lora_bwd_fused the same bits every "
                    "run", test_bwd_fused_deterministic) == NULL ||
        CU_add_test(s, "lora: few rows on tensor cores, the same bits "
                    "every run", test_decode_mma_deterministic) == NULL ||
        CU_add_test(s, "op defaults for CPUs", test_cpu_defaults) == NULL ||
        CU_add_test(s, "specs/seeds.yaml at small rows", test_seeds) ==
            NULL ||
        CU_add_test(s, "naive stubs of every op and dtype",
                    test_naive_stubs) == NULL ||
        /* last: a case's seed counts the cases before it */
        add_norm_split_numeric_tests(s) != 0 ||
        add_add_norm_split_numeric_tests(s) != 0) {
        return -1;
    }
    return 0;
}
