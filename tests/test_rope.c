/* test_rope.c - rope on the device against its naive kernel and float64:
 * both styles, partial rotary, linear and llama3 scaling, inverse, f32,
 * f16 and bf16, head_dim 64, 80 and 128, rows 1, 2, 7, 33, positions
 * drawn from 0 to 65535, all 0, and all near 65535 (where an angle rounded
 * to float32 fails the bound); y computed in place of x, and the inverse
 * after the forward giving x back; the float64 reference itself against
 * mpmath's cos and sin and Llama 3.1's scaled frequencies. Joins the
 * numeric suite. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"

enum { BUF_X, BUF_POSITIONS, BUF_Y };

#define LLAMA3_SCALING                                                       \
    "scaling: {type: llama3, factor: 8, low_freq_factor: 1, "                \
    "high_freq_factor: 4, original_max_position: 8192}"

/* Builds a rope kernel of FIELDS (the defaults of TARGET) into K; 1 when
 * built. */
static int rope_build(struct nu_kernel *k, const char *fields,
                      enum target target)
{
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(k, "kernels:\n  - {name: t_rope, op: rope, %s}\n",
                    fields)) {
        return 0;
    }
    CU_ASSERT(spec_set_target(&k->set, target, &d) == 0);
    snprintf(k->yaml + strlen(k->yaml), sizeof k->yaml - strlen(k->yaml),
             "# op defaults for %s\n",
             target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
    return nu_build(k);
}

/* K over rows 1, 2, 7 and 33 with positions drawn from [0, 65535]; then
 * every position 0; then every one in [64512, 65535], where angles reach
 * 10^4 turns; then in [2^24 - 65536, 2^24 - 1], the last exact in a
 * float. */
static void rope_cases(struct nu_kernel *k)
{
    static const size_t rows[] = {1, 2, 7, 33};
    nu_run_rows(k, rows, 4, nu_unit());
    k->scale_input = "positions";
    k->scale_by = 0;
    k->shift_by = 0;
    nu_run(k, 3, nu_unit());
    k->scale_by = 1.0 / 64;
    k->shift_by = 64512;
    nu_run(k, 9, nu_unit());
    k->scale_by = 1;
    k->shift_by = 16777215 - 65535;
    nu_run(k, 5, nu_unit());
    k->scale_input = NULL;
}

struct rope_config {
    const char *fields;
    enum target target;
};

/* Few builds, each checked over every case: head_dim 80 (40 pairs: no
 * vector of 16 divides them) and 64 with 32 turning; both styles;
 * every scaling; odd knobs (slots that do not divide a head's). The
 * in-place test adds head_dim 128 with 64 turning, forward and inverse,
 * over the same cases. */
static const struct rope_config quick[] = {
    {"dtype: f32, heads: 2, head_dim: 80, style: interleaved, "
     "scaling: {type: linear, factor: 4}, inverse: true",
     TARGET_CPU},
    {"dtype: f16, heads: 5, head_dim: 64, rotary_dim: 32", TARGET_CPU},
    {"dtype: bf16, heads: 4, head_dim: 80, rotary_dim: 48, style: "
     "interleaved, theta: 500000, inverse: true, " LLAMA3_SCALING
     ", tile: {vec: 2, slots: 3, heads: 2, rows: 2}",
     TARGET_GPU},
};

static void test_rope_shapes(void)
{
    for (size_t i = 0; i < sizeof quick / sizeof quick[0]; i++) {
        struct nu_kernel k;
        if (rope_build(&k, quick[i].fields, quick[i].target)) {
            rope_cases(&k);
        }
        nu_kernel_free(&k);
    }
    if (!test_full) {
        return;
    }
    /* make test-full: every dtype x style x head_dim x rotary_dim. */
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    static const char *const styles[] = {"half", "interleaved"};
    static const char *const scalings[] = {
        "", ", scaling: {type: linear, factor: 2.5}", ", " LLAMA3_SCALING};
    static const int dims[] = {64, 80, 96, 128, 256};
    int n = 0;
    for (int t = 0; t < 3; t++) {
        for (int s = 0; s < 2; s++) {
            for (int d = 0; d < 5; d++) {
                for (int half = 0; half < 2; half++, n++) {
                    char fields[512];
                    struct nu_kernel k;
                    snprintf(fields, sizeof fields,
                             "dtype: %s, heads: %d, head_dim: %d, "
                             "rotary_dim: %d, style: %s, theta: 500000, "
                             "inverse: %s%s",
                             dtypes[t], 1 + n % 6, dims[d],
                             half ? dims[d] / 2 : dims[d], styles[s],
                             n % 3 ? "false" : "true", scalings[n % 3]);
                    if (rope_build(&k, fields,
                                   n % 2 ? TARGET_CPU : TARGET_GPU)) {
                        rope_cases(&k);
                    }
                    nu_kernel_free(&k);
                }
            }
        }
    }
}

/* BUF of C (f32) read back into a new array of N floats (caller frees). */
static float *read_f32(cl_mem buf, size_t n)
{
    float *v = malloc(n * sizeof *v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL(clEnqueueReadBuffer(nu_rt()->queue, buf, CL_TRUE, 0,
                                        n * sizeof *v, v, 0, NULL, NULL),
                    CL_SUCCESS);
    return v;
}

/* Positions out of the contract (negative, past 2^24, INT32_MIN and the
 * largest float below 2^31) on K: every output finite and no larger than
 * the largest |x| times sqrt(2), nothing written past y. */
static void rope_any_position(struct nu_kernel *k)
{
    static const float odd[] = {-2147483648.0f, -1, 2147483520.0f,
                                16777216, 1073741824, -65535};
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_FATAL(vcase_init(&c, k->ks, 6, 13, nu_unit()) == 0);
    memcpy(c.host[BUF_POSITIONS], odd, sizeof odd);
    CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
    CU_ASSERT_EQUAL(stub_enqueue(&k->stub, nu_rt()->queue,
                                 c.sizes, b.mem, 0, NULL, NULL),
                    CL_SUCCESS);
    float *y = malloc(c.out_count * sizeof *y);
    int canary_ok = 0, bounded = 1;
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL(vbuffers_read_output(nu_rt(), &c, &b, y, &canary_ok),
                    CL_SUCCESS);
    for (size_t i = 0; i < c.count[BUF_Y]; i++) {
        bounded &= fabsf(y[c.out_at[BUF_Y] + i]) <= 1.415f;
    }
    TU_CHECK(canary_ok && bounded, "rope at positions out of the contract: "
             "canary %s, outputs %s", canary_ok ? "intact" : "overwritten",
             bounded ? "bounded" : "NaN or past sqrt(2) |x|");
    free(y);
    vbuffers_free(&b);
    vcase_free(&c);
}

/* Forward and inverse kernels (head_dim 128, 64 turning) over
 * rope_cases; then y computed in place of x by the forward kernel:
 * float64's y, the elements past rotary_dim untouched (their copies are
 * skipped in place); then the inverse, in place too, gives x back within
 * both turns' bounds. Then both kernels at positions out of the
 * contract. */
static void test_rope_in_place(void)
{
    static const char *const fields =
        "dtype: f32, heads: 3, head_dim: 128, rotary_dim: 64, "
        "theta: 500000, " LLAMA3_SCALING;
    char inverse_fields[512];
    struct nu_kernel fwd, inv;
    struct vcase c;
    struct vbuffers b;
    snprintf(inverse_fields, sizeof inverse_fields, "%s, inverse: true",
             fields);
    int built = rope_build(&fwd, fields, TARGET_GPU) &&
                rope_build(&inv, inverse_fields, TARGET_CPU);
    if (!built) {
        nu_kernel_free(&fwd);
        nu_kernel_free(&inv);
        return;
    }
    rope_cases(&fwd);
    rope_cases(&inv);
    CU_ASSERT_FATAL(vcase_init(&c, fwd.ks, 9, 11, nu_unit()) == 0);
    for (size_t r = 0; r < c.rows; r++) {
        c.host[BUF_POSITIONS][r] = (float)(65535 - 977 * (r % 4) - r);
    }
    CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
    cl_mem mem[SPECL_MAX_BUFFERS];
    memcpy(mem, b.mem, sizeof mem);
    mem[BUF_Y] = b.mem[BUF_X];
    size_t n = c.count[BUF_X];
    cl_command_queue q = nu_rt()->queue;

    CU_ASSERT_EQUAL(stub_enqueue(&fwd.stub, q, c.sizes, mem, 0, NULL, NULL),
                    CL_SUCCESS);
    float *y = read_f32(b.mem[BUF_X], n);
    double *ref = vcase_reference(&c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
    double e = rel_l2(y, ref + c.out_at[BUF_Y], n);
    TU_CHECK(e <= 1e-5, "rope in place: error %g against float64", e);
    int passed = 1;
    for (size_t i = 0; i < n; i++) {
        passed &= i % 128 < 64 || y[i] == c.host[BUF_X][i];
    }
    TU_CHECK(passed, "rope in place: elements past rotary_dim changed");

    CU_ASSERT_EQUAL(stub_enqueue(&inv.stub, q, c.sizes, mem, 0, NULL, NULL),
                    CL_SUCCESS);
    float *back = read_f32(b.mem[BUF_X], n);
    double *x = malloc(n * sizeof *x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (size_t i = 0; i < n; i++) {
        x[i] = c.host[BUF_X][i];
    }
    e = rel_l2(back, x, n);
    TU_CHECK(e <= 2e-5, "rope: inverse after forward is off x by %g", e);
    rope_any_position(&fwd);
    rope_any_position(&inv);
    free(x);
    free(back);
    free(ref);
    free(y);
    vbuffers_free(&b);
    vcase_free(&c);
    nu_kernel_free(&fwd);
    nu_kernel_free(&inv);
}

/* The reference of the one-row, one-head kernel FIELDS (half style) on
 * X at position POS into Y (head_dim values); 0 when it ran. */
static int reference_row(const char *fields, const float *x, float pos,
                         double *y)
{
    struct nu_kernel k;
    int rc = -1;
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_rope, op: rope, heads: 1, "
                   "%s}\n", fields)) {
        const float *in[3] = {x, &pos, NULL};
        double *out[3] = {NULL, NULL, y};
        size_t rows = 1;
        rc = k.ks->op->reference(k.ks, in, &rows, out);
    }
    nu_kernel_free(&k);
    return rc;
}

/* cos and sin of position * 10000^(-1/2) = position / 100, the second
 * pair of head_dim 4, near 65535 and at 2^24 - 1, against mpmath (40
 * digits): an angle in double is within 1e-13, one rounded to float32 off
 * by up to 1e-3. */
static void test_rope_reference_angles(void)
{
    static const struct {
        float pos;
        double cos, sin;
    } want[] = {
        {65535, -3.22085662419371920873e-01, 9.46710529181900684037e-01},
        {65534, -3.12602610762933108557e-01, 9.49883996993421408916e-01},
        {40000, -5.25296338642535998176e-01, -8.50919359639176531296e-01},
        {12345, -5.99526861542538536121e-01, -8.00354635326711805199e-01},
        {1, 9.99950000416665263359e-01, 9.99983333416666446414e-03},
        {0, 1, 0},
        {16777215, 1.06521534782475585379e-01, -9.94310395514190425992e-01},
    };
    static const float x[4] = {0, 1, 0, 0}; /* the pairs (x0, x2), (x1, x3) */
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double y[4];
        CU_ASSERT_EQUAL_FATAL(reference_row("head_dim: 4", x, want[i].pos, y),
                              0);
        TU_CHECK(fabs(y[1] - want[i].cos) < 1e-13 &&
                     fabs(y[3] - want[i].sin) < 1e-13,
                 "reference at position %.0f: (%.17g, %.17g), mpmath "
                 "(%.17g, %.17g)",
                 (double)want[i].pos, y[1], y[3], want[i].cos, want[i].sin);
    }
}

/* Llama 3.1 8B's frequencies (theta 500000, head_dim 128, factor 8,
 * low_freq_factor 1, high_freq_factor 4, original 8192) as Meta's
 * apply_scaling defines them, from mpmath: kept (i <= 28), smoothed
 * (29 .. 34, wavelengths 2048 to 8192) and divided by 8 (35 on); the
 * reference's at position 1 is the angle of pair i. */
static void test_rope_reference_llama3(void)
{
    static const struct {
        int i;
        double freq;
    } want[] = {
        {0, 1},
        {20, 1.65604400809944464490e-02},
        {28, 3.21144599475259090102e-03},
        {29, 2.16657076350335866741e-03},
        {32, 5.24846160992954681099e-04},
        {35, 9.55621235396468326562e-05},
        {36, 7.78465527393244982818e-05},
        {63, 3.06892598891451108316e-07},
    };
    float x[128] = {0};
    double y[128];
    for (int i = 0; i < 64; i++) {
        x[i] = 1;
    }
    CU_ASSERT_EQUAL_FATAL(
        reference_row("head_dim: 128, theta: 500000, " LLAMA3_SCALING, x, 1,
                      y),
        0);
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int i = want[k].i;
        double freq = atan2(y[i + 64], y[i]);
        TU_CHECK(fabs(freq - want[k].freq) <= 1e-13 * want[k].freq,
                 "llama3 frequency %d: %.17g, expected %.17g", i, freq,
                 want[k].freq);
    }
}

/* The angles' cos and sin by the hardware's approximations (native_cos
 * and native_sin: ROPE_APPROX_TRIG, needing approx_trig) for half-width
 * rows on NVIDIA's targets alone; f32 and the other targets by cospi and
 * sinpi. Where the device has them, f16 and bf16 on the tensor-core
 * target against float64 at every position range of rope_cases. */
static long approx_trig(const struct kernel_spec *ks, unsigned *needs)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    ks->op->plan(ks, &p);
    *needs = p.needs;
    return nu_define(&p, "ROPE_APPROX_TRIG");
}

static void test_rope_approx_trig(void)
{
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    static const enum target targets[] = {TARGET_GPU, TARGET_CPU,
                                          TARGET_TENSOR, TARGET_SM90A};
    for (int i = 0; i < 3; i++) {
        for (int t = 0; t < 4; t++) {
            struct nu_kernel k;
            struct diags d = {.out = stderr};
            if (!nu_spec_ok(&k, "kernels:\n  - {name: t_rope, op: rope, "
                            "dtype: %s, heads: 32, head_dim: 128}\n",
                            dtypes[i])) {
                continue;
            }
            CU_ASSERT(spec_set_target(&k.set, targets[t], &d) == 0);
            unsigned needs;
            long want = i > 0 && targets[t] >= TARGET_TENSOR;
            long got = approx_trig(k.ks, &needs);
            TU_CHECK(got == want && ((needs & CAP_APPROX_TRIG) != 0) == want,
                     "%s, target %d: ROPE_APPROX_TRIG %ld, needs %#x "
                     "(want %ld)", dtypes[i], (int)targets[t], got, needs,
                     want);
            nu_kernel_free(&k);
        }
    }
    if (caps_lacking(CAP_APPROX_TRIG, nu_rt()->caps.have) != 0) {
        return;
    }
    static const char *const half[] = {
        "dtype: bf16, heads: 4, head_dim: 128, theta: 500000, " LLAMA3_SCALING,
        "dtype: f16, heads: 3, head_dim: 80, style: interleaved, inverse: "
        "true"};
    for (int i = 0; i < 2; i++) {
        struct nu_kernel k;
        if (rope_build(&k, half[i], TARGET_TENSOR)) {
            unsigned needs;
            TU_CHECK(approx_trig(k.ks, &needs) == 1,
                     "%s: not the approximations", half[i]);
            rope_cases(&k);
        }
        nu_kernel_free(&k);
    }
}

int add_rope_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "rope: styles, scalings, partial rotary, dtypes, "
                       "positions near 65535", test_rope_shapes) == NULL ||
                   CU_add_test(s, "rope: in place, inverse after forward, "
                               "any position in bounds",
                               test_rope_in_place) == NULL ||
                   CU_add_test(s, "rope: the reference's angles against "
                               "mpmath", test_rope_reference_angles) ==
                       NULL ||
                   CU_add_test(s, "rope: the reference's llama3 "
                               "frequencies", test_rope_reference_llama3) ==
                       NULL ||
                   CU_add_test(s, "rope: cos and sin by the hardware's "
                               "approximations on NVIDIA, half widths",
                               test_rope_approx_trig) == NULL
               ? -1
               : 0;
}
