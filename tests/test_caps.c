/* test_caps.c - the capability table: what it grants which device, and
 * the target derived from that. No device needed. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "suites.h"
#include "testutil.h"

#define NV "cl_nv_device_attribute_query"
#define SM80 (CAP_SHFL_SYNC | CAP_CVT_BF16 | CAP_MMA_SYNC_BF16_F16)

/* Fake devices: their extensions, the compute capability their NVIDIA
 * query reports (major, minor; read only where NV is listed), and what
 * the table grants them. */
static const struct fake_device {
    const char *extensions;
    unsigned major, minor;
    unsigned want;
} fakes[] = {
    {"", 0, 0, 0},
    {"cl_khr_fp64 cl_khr_fp16", 0, 0, CAP_FP16},
    {"cl_khr_fp16 cl_khr_subgroups cl_intel_subgroups", 0, 0,
     CAP_FP16 | CAP_SUBGROUPS | CAP_INTEL_SUBGROUPS},
    /* whole words only */
    {"cl_khr_fp16x xcl_khr_subgroups cl_intel_subgroups_short", 0, 0, 0},
    {NV, 7, 5, 0},
    {"cl_khr_fp64 " NV, 8, 0, SM80},
    {NV " cl_khr_fp16", 8, 6, SM80 | CAP_FP16},
    {NV, 8, 9, SM80},
    {"cl_khr_fp16 " NV " cl_khr_subgroups", 9, 0,
     SM80 | CAP_WGMMA | CAP_FP16 | CAP_SUBGROUPS},
    /* sm_90a code runs on 9.0 alone */
    {NV, 10, 0, SM80},
    {NV, 12, 0, SM80},
    /* a compute capability read without the extension counts for
     * nothing */
    {NV "x", 9, 0, 0},
    {"cl_khr_fp16", 9, 0, CAP_FP16},
};

#define N_FAKES (int)(sizeof fakes / sizeof fakes[0])

/* The compute capability caps_query reads from fake F. */
static int fake_cc(const struct fake_device *f)
{
    return caps_has_extension(f->extensions, NV)
               ? (int)(f->major * 10 + f->minor)
               : 0;
}

static void test_grant(void)
{
    for (int i = 0; i < N_FAKES; i++) {
        unsigned got = caps_grant(fakes[i].extensions, fake_cc(&fakes[i]));
        TU_CHECK(got == fakes[i].want, "'%s' %u.%u: granted 0x%x, want 0x%x",
                 fakes[i].extensions, fakes[i].major, fakes[i].minor, got,
                 fakes[i].want);
    }
    CU_ASSERT_EQUAL(caps_grant(NULL, 0), 0);
    CU_ASSERT_EQUAL(caps_grant(NULL, 90), SM80 | CAP_WGMMA);
    /* every row a bit of its own, named, and saying what it is */
    unsigned seen = 0;
    for (int i = 0; cap_rule(i) != NULL; i++) {
        const struct cap_rule *r = cap_rule(i);
        TU_CHECK(r->bit != 0 && (r->bit & (r->bit - 1)) == 0 &&
                     (seen & r->bit) == 0 && r->name[0] && r->what[0] &&
                     (r->extension != NULL || r->cc_min != 0),
                 "row %d (%s)", i, r->name);
        seen |= r->bit;
    }
    char names[128];
    caps_names(CAP_WGMMA | CAP_FP16, names, sizeof names);
    CU_ASSERT_STRING_EQUAL(names, "fp16, wgmma");
    caps_names(0, names, sizeof names);
    CU_ASSERT_STRING_EQUAL(names, "");
}

/* The target is derived from the capabilities alone: CPUs get the CPU
 * defaults whatever they list; a GPU the target whose capabilities it
 * offers, the most of them; one that offers some of tensor cores' only,
 * the GPU defaults. */
static void test_target(void)
{
    static const struct {
        int cpu;
        unsigned have;
        enum target want;
    } cases[] = {
        {1, 0, TARGET_CPU},
        {1, CAP_FP16 | CAP_SUBGROUPS, TARGET_CPU},
        {0, 0, TARGET_GPU},
        {0, CAP_FP16 | CAP_INTEL_SUBGROUPS, TARGET_GPU},
        {0, SM80, TARGET_TENSOR},
        {0, SM80 | CAP_FP16, TARGET_TENSOR},
        {0, SM80 | CAP_WGMMA, TARGET_SM90A},
        {0, CAP_MMA_SYNC_BF16_F16 | CAP_WGMMA, TARGET_GPU},
        {0, CAP_SHFL_SYNC, TARGET_GPU},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct device_caps d;
        memset(&d, 0, sizeof d);
        d.cpu = cases[c].cpu;
        d.have = cases[c].have;
        TU_CHECK(caps_target(&d) == cases[c].want,
                 "case %zu: target %s, want %s", c,
                 target_name(caps_target(&d)), target_name(cases[c].want));
    }
    /* the devices of the table's NVIDIA rows, read as caps_query does */
    for (int i = 0; i < N_FAKES; i++) {
        struct device_caps d;
        memset(&d, 0, sizeof d);
        d.have = caps_grant(fakes[i].extensions, fake_cc(&fakes[i]));
        int cc = fake_cc(&fakes[i]);
        enum target want = cc == 90 ? TARGET_SM90A
                           : cc >= 80 ? TARGET_TENSOR
                                      : TARGET_GPU;
        TU_CHECK(caps_target(&d) == want, "'%s' %d: target %s",
                 fakes[i].extensions, cc, target_name(caps_target(&d)));
    }
    /* The names `gen --target` and tuning databases keep. */
    static const char *const names[N_TARGETS] = {
        [TARGET_GPU] = "gpu", [TARGET_CPU] = "cpu",
        [TARGET_TENSOR] = "tensor", [TARGET_SM90A] = "sm90a"};
    for (int t = 0; t < N_TARGETS; t++) {
        enum target back = N_TARGETS;
        CU_ASSERT_STRING_EQUAL(target_name((enum target)t), names[t]);
        CU_ASSERT(target_from_name(names[t], &back) == 0 && (int)back == t);
        CU_ASSERT(target_offers((enum target)t, target_caps((enum target)t)));
    }
    enum target none = TARGET_GPU;
    CU_ASSERT_EQUAL(target_from_name("tpu", &none), -1);
    CU_ASSERT(target_offers(TARGET_SM90A, CAP_WGMMA | CAP_CVT_BF16));
    CU_ASSERT(!target_offers(TARGET_TENSOR, CAP_WGMMA));
    CU_ASSERT(!target_offers(TARGET_GPU, CAP_SHFL_SYNC));
    CU_ASSERT_EQUAL(caps_lacking(SM80 | CAP_WGMMA, SM80), CAP_WGMMA);
    CU_ASSERT_EQUAL(caps_lacking(SM80, SM80 | CAP_FP16), 0);
}

int add_caps_suite(void)
{
    CU_pSuite s = CU_add_suite("caps", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "the table grants by extension and compute "
                    "capability", test_grant) == NULL ||
        CU_add_test(s, "the target derives from the capabilities",
                    test_target) == NULL) {
        return -1;
    }
    return 0;
}
