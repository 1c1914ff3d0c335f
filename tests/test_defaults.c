/* test_defaults.c - `defaults:` takes any field of an op: what each kernel
 * of tests/good/defaults.yaml ends up with, and that defaults read the
 * same as the fields written in each kernel. Joins the spec suite (the
 * hostile specs are tests/bad/defaults_*.yaml). */
#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

#include "spec.h"
#include "suites.h"
#include "testutil.h"

#define DEFAULTS_SPEC "tests/good/defaults.yaml"

static const struct kernel_spec *kernel_named(const struct spec_set *s,
                                              const char *name)
{
    for (int i = 0; i < s->n_kernel; i++) {
        if (strcmp(s->kernel[i].name, name) == 0) {
            return &s->kernel[i];
        }
    }
    TU_CHECK(0, "no kernel %s", name);
    return NULL;
}

/* Whether KS's field KEY is given (by the kernel or by defaults) and
 * equals V. */
static int given(const struct kernel_spec *ks, const char *key, double v)
{
    int i = op_field_index(ks->op, key);
    return i >= 0 && ks->field[i].set && ks->field[i].num == v;
}

static int unset(const struct kernel_spec *ks, const char *key)
{
    int i = op_field_index(ks->op, key);
    return i >= 0 && !ks->field[i].set;
}

static void test_defaults_fields(void)
{
    struct spec_set s;
    struct diags d = {.out = stderr};
    spec_set_init(&s);
    CU_ASSERT_EQUAL_FATAL(spec_read_file(&s, DEFAULTS_SPEC, &d), 0);
    const struct kernel_spec *k = kernel_named(&s, "dflt_q");
    TU_CHECK(k && given(k, "rank", 16) && given(k, "alpha", 32) &&
                 k->dtype == DTYPE_BF16,
             "dflt_q: rank, alpha and dtype from defaults");
    /* The defaults' rank is reported where defaults: writes it. */
    TU_CHECK(k && k->field[op_field_index(k->op, "rank")].mark.line == 7,
             "dflt_q: rank's mark is line %d, not the default's",
             k ? k->field[op_field_index(k->op, "rank")].mark.line : 0);
    k = kernel_named(&s, "dflt_k");
    TU_CHECK(k && given(k, "rank", 8) && given(k, "alpha", 32),
             "dflt_k: its own rank, alpha from defaults");
    k = kernel_named(&s, "dflt_v");
    TU_CHECK(k && given(k, "scale", 0.5) && unset(k, "alpha"),
             "dflt_v: gives scale, so takes no alpha");
    k = kernel_named(&s, "dflt_q_bwd");
    TU_CHECK(k && given(k, "rank", 16) && given(k, "alpha", 32),
             "dflt_q_bwd: lora_backward takes rank and alpha too");
    k = kernel_named(&s, "dflt_norm");
    TU_CHECK(k && given(k, "eps", 1e-6) && k->dtype == DTYPE_BF16,
             "dflt_norm: eps from defaults");
    k = kernel_named(&s, "dflt_norm_own");
    TU_CHECK(k && given(k, "eps", 1e-5) && k->dtype == DTYPE_F32,
             "dflt_norm_own: its own eps and dtype");
    k = kernel_named(&s, "dflt_act");
    TU_CHECK(k && given(k, "activation", 1), "dflt_act: gelu_tanh");
    k = kernel_named(&s, "dflt_rope");
    TU_CHECK(k && given(k, "scaling.type", 2) &&
                 given(k, "scaling.factor", 32) &&
                 given(k, "scaling.original_max_position", 8192) &&
                 given(k, "theta", 500000),
             "dflt_rope: llama3 scaling from defaults, its own theta");
    k = kernel_named(&s, "dflt_rope_linear");
    TU_CHECK(k && given(k, "scaling.type", 1) &&
                 given(k, "scaling.factor", 2) &&
                 unset(k, "scaling.low_freq_factor"),
             "dflt_rope_linear: its own scaling whole, nothing of the "
             "default's merged in");
    k = kernel_named(&s, "dflt_softmax");
    TU_CHECK(k && unset(k, "scale") && k->dtype == DTYPE_BF16,
             "dflt_softmax: no field of its op among the defaults");
    spec_set_free(&s);
}

/* Defaults give the kernels what the fields written in each kernel
 * give: the same values, set alike. */
static void test_defaults_same_as_inline(void)
{
    static const char inline_spec[] =
        "kernels:\n"
        "  - {name: q, op: lora_forward, dtype: bf16, in_features: 64,\n"
        "     out_features: 32, rank: 8, alpha: 16}\n"
        "  - {name: n, op: add_rmsnorm, dtype: bf16, features: 64,\n"
        "     eps: 1e-5}\n"
        "  - {name: r, op: rope, dtype: bf16, heads: 4, head_dim: 16,\n"
        "     theta: 1e6, scaling: {type: linear, factor: 4}}\n";
    static const char with_defaults[] =
        "defaults: {dtype: bf16, rank: 8, alpha: 16, eps: 1e-5, theta: 1e6,\n"
        "           scaling: {type: linear, factor: 4}}\n"
        "kernels:\n"
        "  - {name: q, op: lora_forward, in_features: 64, out_features: 32}\n"
        "  - {name: n, op: add_rmsnorm, features: 64}\n"
        "  - {name: r, op: rope, heads: 4, head_dim: 16}\n";
    struct spec_set a, b;
    struct diags d = {.out = stderr};
    spec_set_init(&a);
    spec_set_init(&b);
    CU_ASSERT_EQUAL_FATAL(
        spec_read_buffer(&a, "inline.yaml", (const unsigned char *)inline_spec,
                         strlen(inline_spec), &d),
        0);
    CU_ASSERT_EQUAL_FATAL(
        spec_read_buffer(&b, "defaults.yaml",
                         (const unsigned char *)with_defaults,
                         strlen(with_defaults), &d),
        0);
    CU_ASSERT_EQUAL_FATAL(a.n_kernel, b.n_kernel);
    for (int i = 0; i < a.n_kernel; i++) {
        const struct kernel_spec *x = &a.kernel[i], *y = &b.kernel[i];
        int same = x->op == y->op && x->dtype == y->dtype;
        for (int f = 0; same && f < x->op->n_fields; f++) {
            same = x->field[f].set == y->field[f].set &&
                   x->field[f].num == y->field[f].num;
        }
        for (int n = 0; same && n < x->op->n_knobs; n++) {
            same = x->knob[n].num == y->knob[n].num;
        }
        TU_CHECK(same, "kernel %s: defaults differ from the fields inline",
                 x->name);
    }
    spec_set_free(&a);
    spec_set_free(&b);
}

int add_defaults_spec_tests(CU_pSuite s)
{
    return CU_add_test(s, "defaults: any field of an op",
                       test_defaults_fields) == NULL ||
                   CU_add_test(s, "defaults: as the fields inline",
                               test_defaults_same_as_inline) == NULL
               ? -1
               : 0;
}
