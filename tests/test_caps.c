/* test_caps.c - the capability table: what it grants which device, the
 * target derived from that, which variants a device can run, and the
 * emitted stub's reading of the same rules. No device needed. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "emit.h"
#include "emit_caps.h"
#include "lora_internal.h"
#include "measure.h"
#include "spec.h"
#include "suites.h"
#include "testutil.h"
#include "variant.h"

/* Every bit of the table. */
static unsigned all_caps(void)
{
    unsigned all = 0;
    for (int i = 0; cap_rule(i) != NULL; i++) {
        all |= cap_rule(i)->bit;
    }
    return all;
}

#define NV "cl_nv_device_attribute_query"
#define SM80                                                                 \
    (CAP_SHFL_SYNC | CAP_CVT_BF16 | CAP_MMA_SYNC_BF16_F16 | CAP_L2_HINT |    \
     CAP_CP_ASYNC | CAP_APPROX_TRIG)

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

/* The variants specl gen emits for every kernel of the spec files: each
 * match for a kind of device (no device name) is one whose devices offer
 * every capability its variant needs, so that NAME_create's first choice
 * builds there; and of the fake devices, one that lacks a variant's needs
 * is refused it. */
static void test_variant_needs(void)
{
    static const char *const files[] = {
        "tests/golden/golden.yaml", "tests/stubs.yaml", "specs/seeds.yaml",
        "specs/llama2-7b.yaml", "specs/llama2-7b-train.yaml"};
    int needing = 0, refused = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        struct spec_set s;
        struct diags d = {.out = stderr};
        spec_set_init(&s);
        CU_ASSERT_EQUAL_FATAL(spec_read_file(&s, files[f], &d), 0);
        for (int k = 0; k < s.n_kernel; k++) {
            const struct variant_set *vs = tu_gen_variants(&s.kernel[k]);
            for (int v = 0; v < vs->n; v++) {
                struct plan p;
                memset(&p, 0, sizeof p);
                vs->v[v].ks.op->plan(&vs->v[v].ks, &p);
                needing += p.needs != 0;
                for (int m = 0; m < vs->v[v].n_match; m++) {
                    const struct variant_match *vm = &vs->v[v].match[m];
                    TU_CHECK(vm->device[0] != '\0' ||
                                 caps_lacking(p.needs, vm->caps) == 0,
                             "%s variant %d needs 0x%x, meant for devices "
                             "of 0x%x", s.kernel[k].name, v, p.needs,
                             vm->caps);
                }
                for (int i = 0; i < N_FAKES; i++) {
                    unsigned have = caps_grant(fakes[i].extensions,
                                               fake_cc(&fakes[i]));
                    refused += caps_lacking(p.needs, have) != 0;
                }
            }
        }
        spec_set_free(&s);
    }
    /* the tensor-core variants are there, and some fakes lack them */
    CU_ASSERT(needing > 0);
    CU_ASSERT(refused > 0);
}

/* A stub emitted for S (a spec of one kernel) as the single variant of
 * T_CAPS whose plan needs ASKED, into DIR. Returns 0 when written. */
static int emit_asking(const char *s, unsigned asked, const char *dir,
                       char *c_text, size_t size)
{
    struct spec_set set;
    struct diags d = {.out = stderr};
    struct plan p;
    struct emitted e;
    char err[256] = "";
    spec_set_init(&set);
    int rc = spec_read_buffer(&set, "<test>", (const unsigned char *)s,
                              strlen(s), &d);
    if (rc == 0 && set.n_kernel == 1) {
        memset(&p, 0, sizeof p);
        set.kernel[0].op->plan(&set.kernel[0], &p);
        p.needs = asked;
        rc = emit_stub(&set.kernel[0], "t_caps", &p, NULL, &e, err,
                       sizeof err);
        if (rc == 0) {
            if (c_text != NULL) {
                snprintf(c_text, size, "%s", buf_str(&e.c));
            }
            if (dir != NULL) {
                rc = emit_write(dir, &e, err, sizeof err);
            }
            emitted_free(&e);
        }
    }
    TU_CHECK(rc == 0, "cannot emit: %s", err);
    spec_set_free(&set);
    return rc;
}

static const char rmsnorm[] =
    "kernels:\n  - {name: t_caps, op: rmsnorm, features: 64}\n";

/* The stub carries the rules of the capabilities it asks for, and no
 * other: one that asks nothing of NVIDIA's devices reads no compute
 * capability; one that asks nothing at all lists no extension. */
static void test_stub_asks_only(void)
{
    static const struct {
        unsigned asked;
        int nv, extensions;
    } cases[] = {{0, 0, 0},
                 {CAP_FP16, 0, 1},
                 {CAP_SUBGROUPS | CAP_INTEL_SUBGROUPS, 0, 1},
                 {CAP_CVT_BF16, 1, 1},
                 {CAP_WGMMA | CAP_FP16, 1, 1}};
    static char c[1 << 20];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (emit_asking(rmsnorm, cases[k].asked, NULL, c, sizeof c) != 0) {
            continue;
        }
        int nv = strstr(c, NV) != NULL && strstr(c, "0x4000") != NULL;
        int ext = strstr(c, "CL_DEVICE_EXTENSIONS") != NULL;
        TU_CHECK(nv == cases[k].nv && ext == cases[k].extensions,
                 "asking 0x%x: NVIDIA query %d, extensions %d",
                 cases[k].asked, nv, ext);
        for (int i = 0; cap_rule(i) != NULL; i++) {
            char row[64];
            snprintf(row, sizeof row, "{0x%xu, \"%s: ", cap_rule(i)->bit,
                     cap_rule(i)->name);
            TU_CHECK((strstr(c, row) != NULL) ==
                         ((cases[k].asked & cap_rule(i)->bit) != 0),
                     "asking 0x%x: row %s", cases[k].asked, row);
        }
        /* the rebuild for sm_90a only where a variant needs wgmma */
        TU_CHECK((strstr(c, "_rebuild_sm90a(_k, _ctx, _dev)") != NULL) ==
                     ((cases[k].asked & CAP_WGMMA) != 0),
                 "asking 0x%x: the sm_90a rebuild", cases[k].asked);
    }
}

/* The emitted t_caps.c compiled with clGetDeviceInfo answered by a fake
 * device (a line of stdin each: major, minor, its extensions): prints what
 * t_caps_device_caps grants, then how t_caps_match_rank ranks a match for
 * every device, for CPUs, for each target of capabilities, and for a
 * device named as it. */
static const char harness[] =
    "#define CL_TARGET_OPENCL_VERSION 120\n"
    "#include <CL/cl.h>\n"
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "static char t_ext[512];\n"
    "static cl_uint t_major, t_minor;\n"
    "static cl_int t_info(cl_device_id dev, cl_device_info what, "
    "size_t size,\n"
    "                     void *value, size_t *ret)\n"
    "{\n"
    "    size_t n = strlen(t_ext) + 1;\n"
    "    (void)dev;\n"
    "    if (what == CL_DEVICE_EXTENSIONS) {\n"
    "        if (ret != NULL) *ret = n;\n"
    "        if (value != NULL && size < n) return CL_INVALID_VALUE;\n"
    "        if (value != NULL) memcpy(value, t_ext, n);\n"
    "        return CL_SUCCESS;\n"
    "    }\n"
    "    if ((what == 0x4000 || what == 0x4001) && size == sizeof t_major &&\n"
    "        strstr(t_ext, \"" NV "\") != NULL) {\n"
    "        memcpy(value, what == 0x4000 ? &t_major : &t_minor, size);\n"
    "        return CL_SUCCESS;\n"
    "    }\n"
    "    return CL_INVALID_VALUE;\n"
    "}\n"
    "#define clGetDeviceInfo t_info\n"
    "#include \"t_caps.c\"\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    unsigned rows[] = {0u, 0u, ROWS};\n"
    "    char line[600];\n"
    "    int at = 0;\n"
    "    while (fgets(line, sizeof line, stdin) != NULL &&\n"
    "           sscanf(line, \"%u %u %n\", &t_major, &t_minor, &at) == 2) {\n"
    "        line[strcspn(line, \"\\n\")] = '\\0';\n"
    "        snprintf(t_ext, sizeof t_ext, \"%s\", line + at);\n"
    "        unsigned have = t_caps_device_caps(NULL);\n"
    "        printf(\"%u\", have);\n"
    "        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {\n"
    "            struct t_caps_match m = {NULL, NULL, i == 1, rows[i], 0};\n"
    "            printf(\" %d\", t_caps_match_rank(&m, \"d\", \"v\", 0, "
    "have));\n"
    "        }\n"
    "        struct t_caps_match named = {\"d\", \"v\", 0, 0u, 0};\n"
    "        printf(\" %d\\n\", t_caps_match_rank(&named, \"d\", \"v\", 0, "
    "have));\n"
    "    }\n"
    "    (void)argc;\n"
    "    (void)argv;\n"
    "    return 0;\n"
    "}\n";

/* Writes the fake devices to PATH, a line each: major, minor and
 * extensions. */
static int write_fakes(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        return -1;
    }
    for (int i = 0; i < N_FAKES; i++) {
        fprintf(f, "%u %u %s\n", fakes[i].major, fakes[i].minor,
                fakes[i].extensions);
    }
    return fclose(f);
}

/* Checks one line of the harness's output for fake I (targets: the
 * targets of capabilities, in enum order, as its ROWS): the stub grants
 * what the table does, ranks the named device above all, and the best
 * of its rows is the target caps_target derives. */
static void check_harness_line(int i, const char *line,
                               const enum target *targets, int n_targets)
{
    unsigned have;
    int any, cpu, rank[N_TARGETS], named, used;
    unsigned want = caps_grant(fakes[i].extensions, fake_cc(&fakes[i]));
    int ok = sscanf(line, "%u %d %d%n", &have, &any, &cpu, &used) == 3;
    for (int t = 0; ok && t < n_targets; t++) {
        int more;
        ok = sscanf(line + used, "%d%n", &rank[t], &more) == 1;
        used += more;
    }
    ok = ok && sscanf(line + used, "%d", &named) == 1;
    TU_CHECK(ok && have == want, "'%s' %u.%u: the stub grants '%s', the "
             "table 0x%x", fakes[i].extensions, fakes[i].major,
             fakes[i].minor, line, want);
    if (!ok) {
        return;
    }
    struct device_caps d;
    memset(&d, 0, sizeof d);
    d.have = want;
    int best = any, best_target = TARGET_GPU;
    for (int t = 0; t < n_targets; t++) {
        if (rank[t] > best) {
            best = rank[t];
            best_target = targets[t];
        }
    }
    TU_CHECK(any == 1 && cpu == 0 && named > best &&
                 best_target == (int)caps_target(&d),
             "'%s' %u.%u: ranks '%s': best %s, caps_target %s",
             fakes[i].extensions, fakes[i].major, fakes[i].minor, line,
             target_name((enum target)best_target),
             target_name(caps_target(&d)));
}

/* Writes into DIR the stub of spec S's one kernel with matches for every
 * device (those of each capability of ALL_CAPS) and for a device named
 * "d" measured with driver "v": the stub then carries both the query of
 * every capability and the ranking of device names. */
static int emit_named_and_asking(const char *s, const char *dir)
{
    struct spec_set set;
    struct diags d = {.out = stderr};
    struct emitted e;
    char err[256] = "";
    static struct variant_set vs;
    spec_set_init(&set);
    int rc = spec_read_buffer(&set, "<test>", (const unsigned char *)s,
                              strlen(s), &d);
    if (rc == 0 && set.n_kernel == 1) {
        variants_one(&set.kernel[0], &vs);
        struct variant *v = &vs.v[0];
        v->n_match = 0;
        for (unsigned c = all_caps(); c != 0u; c &= c - 1u) {
            memset(&v->match[v->n_match], 0, sizeof v->match[0]);
            v->match[v->n_match++].caps = c & ~(c - 1u);
        }
        memset(&v->match[v->n_match], 0, sizeof v->match[0]);
        snprintf(v->match[v->n_match].device, SPECL_DEVICE_NAME_MAX, "d");
        snprintf(v->match[v->n_match++].driver, SPECL_DRIVER_MAX, "v");
        rc = emit_kernel(&vs, &e, err, sizeof err);
        if (rc == 0) {
            rc = emit_write(dir, &e, err, sizeof err);
            emitted_free(&e);
        }
    }
    TU_CHECK(rc == 0, "cannot emit: %s", err);
    spec_set_free(&set);
    return rc;
}

/* The stub's own query, compiled and run against the fake devices,
 * grants what the table does, and its ranking of matches picks the
 * target caps_target derives. */
static void test_stub_rules(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    char path[600], rows[256] = "";
    enum target targets[N_TARGETS];
    int n_targets = 0;
    for (int t = 0; t < N_TARGETS; t++) {
        if (target_caps((enum target)t) != 0) {
            targets[n_targets++] = (enum target)t;
            snprintf(rows + strlen(rows), sizeof rows - strlen(rows),
                     "%s0x%xu", n_targets > 1 ? ", " : "",
                     target_caps((enum target)t));
        }
    }
    if (emit_named_and_asking(rmsnorm, tmp) != 0) {
        tu_rmtree(tmp);
        free(tmp);
        return;
    }
    snprintf(path, sizeof path, "%s/harness.c", tmp);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#define ROWS %s\n%s", rows, harness);
    CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
    snprintf(path, sizeof path, "%s/fakes", tmp);
    CU_ASSERT_EQUAL_FATAL(write_fakes(path), 0);
    int rc = tu_run("cd '%s' && ${CC:-cc} -std=c99 -Wall -Wextra -Werror "
                    "-o harness harness.c -lOpenCL && ./harness <fakes "
                    ">granted",
                    tmp);
    TU_CHECK(rc == 0, "the harness of %s does not build or run", tmp);
    snprintf(path, sizeof path, "%s/granted", tmp);
    char *out = rc == 0 ? tu_read(path, NULL) : NULL;
    int i = 0;
    for (char *line = out ? strtok(out, "\n") : NULL; line != NULL;
         line = strtok(NULL, "\n"), i++) {
        if (i < N_FAKES) {
            check_harness_line(i, line, targets, n_targets);
        }
    }
    TU_CHECK(i == N_FAKES, "the harness answered %d of %d devices", i,
             N_FAKES);
    free(out);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* The tensor-core rate of the capability table reproduces NVIDIA's
 * dense f16 figures with float32 accumulation from each part's SMs and
 * clock (A100: 312 TFLOPS, 108 SMs at 1410 MHz; H100 SXM: 989.4, 132 at
 * 1830), and is 0 where the table has no row. */
static void test_tensor_rate(void)
{
    struct device_caps d;
    memset(&d, 0, sizeof d);
    d.compute_capability = 80;
    d.compute_units = 108;
    d.max_clock_mhz = 1410;
    TU_CHECK(fabs(caps_tensor_gflops(&d) / 312e3 - 1) < 1e-3,
             "A100: %.0f GFLOP/s", caps_tensor_gflops(&d));
    d.compute_capability = 90;
    d.compute_units = 132;
    d.max_clock_mhz = 1830;
    TU_CHECK(fabs(caps_tensor_gflops(&d) / 989.4e3 - 1) < 1e-3,
             "H100: %.0f GFLOP/s", caps_tensor_gflops(&d));
    d.max_clock_mhz = 0; /* no clock reported: no rate */
    CU_ASSERT_EQUAL(caps_tensor_gflops(&d), 0);
    d.max_clock_mhz = 1830;
    int none[] = {0, 75, 86, 89, 100};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        d.compute_capability = none[i];
        TU_CHECK(caps_tensor_gflops(&d) == 0, "cc %d: %g", none[i],
                 caps_tensor_gflops(&d));
    }
}

/* The floor of KERNEL (one kernel's spec) at 4096 rows on a device of
 * compute capability CC with an H200's 132 SMs at 1980 MHz, 4000 GB/s
 * and a measured fp32 rate of 50 TFLOP/s. */
static void floor_on(const char *kernel, int cc, struct case_floor *f)
{
    struct spec_set set;
    struct diags d = {.out = stderr};
    struct ceilings c = {4000, 4000, 4000, 50e3};
    struct device_caps caps;
    memset(&caps, 0, sizeof caps);
    memset(f, 0, sizeof *f);
    caps.compute_capability = cc;
    caps.compute_units = 132;
    caps.max_clock_mhz = 1980;
    spec_set_init(&set);
    int rc = spec_read_buffer(&set, "<test>", (const unsigned char *)kernel,
                              strlen(kernel), &d);
    TU_CHECK(rc == 0 && set.n_kernel == 1, "cannot read: %s", kernel);
    if (rc == 0 && set.n_kernel == 1) {
        size_t sizes[SPECL_MAX_SIZES] = {4096};
        double bytes = 0, flops = 0;
        set.kernel[0].op->costs(&set.kernel[0], sizes, &bytes, &flops);
        case_floor(&c, &caps, &set.kernel[0], bytes, flops, f);
        CU_ASSERT(fabs(f->flops_us - flops / (f->gflops * 1e3)) <
                  1e-9 * f->flops_us);
        CU_ASSERT(fabs(f->bytes_us - bytes / 4e6) < 1e-9 * f->bytes_us);
    }
    spec_set_free(&set);
}

#define LORA(DTYPE)                                                       \
    "kernels:\n  - {name: q, op: lora_forward, dtype: " DTYPE              \
    ", in_features: 4096, out_features: 4096, rank: 16}\n"

/* bench's floor of a half-precision GEMM counts its flops at the tensor
 * cores' rate where the table knows it (132 SMs x 4096 flops x 1980 MHz
 * for an H200), and at the measured fp32 rate otherwise: in f32, on a
 * device the table has no rate for, and for an op that is no GEMM. */
static void test_tensor_floor(void)
{
    const double h200 = 132 * 4096 * 1980 / 1e3;
    struct case_floor f;
    floor_on(LORA("bf16"), 90, &f);
    TU_CHECK(f.tensor && f.gflops == h200, "bf16 on sm_90: %g GFLOP/s",
             f.gflops);
    CU_ASSERT(!f.memory_bound && f.us == f.flops_us);
    double tensor_us = f.us;
    floor_on(LORA("f16"), 90, &f);
    CU_ASSERT(f.tensor && f.gflops == h200);
    floor_on(LORA("f32"), 90, &f);
    TU_CHECK(!f.tensor && f.gflops == 50e3, "f32 on sm_90: %g GFLOP/s",
             f.gflops);
    CU_ASSERT(f.us > 20 * tensor_us);
    floor_on(LORA("bf16"), 86, &f);
    CU_ASSERT(!f.tensor && f.gflops == 50e3);
    floor_on(LORA("bf16"), 0, &f);
    CU_ASSERT(!f.tensor && f.gflops == 50e3);
    floor_on("kernels:\n  - {name: n, op: rmsnorm, dtype: bf16, "
             "features: 4096}\n",
             90, &f);
    CU_ASSERT(!f.tensor && f.gflops == 50e3 && f.memory_bound);
    floor_on("kernels:\n  - {name: g, op: lora_backward, dtype: bf16, "
             "in_features: 4096, out_features: 4096, rank: 16}\n",
             90, &f);
    CU_ASSERT(f.tensor && f.gflops == h200);
}

/* ---- device facts ------------------------------------------------------ */

/* Every target's entry holds every fact the derivations divide by or
 * scale with. */
static void test_facts_complete(void)
{
    for (int t = 0; t < N_TARGETS; t++) {
        const struct device_facts *f = target_facts((enum target)t);
        TU_CHECK(f->compute_units > 0 && f->registers_per_unit > 0 &&
                     f->local_per_unit > 0 && f->cache_bytes > 0,
                 "target %s lacks a device fact", target_name(t));
    }
}

/* Reads the one lora_forward kernel of YAML for TARGET into C (its spec
 * in SET, which the caller frees). */
static int lora_for(const char *yaml, enum target target,
                    struct spec_set *set, struct lora *c)
{
    struct diags d = {.out = stderr};
    spec_set_init(set);
    int ok = spec_read_buffer(set, "<test>", (const unsigned char *)yaml,
                              strlen(yaml), &d) == 0 &&
             set->n_kernel == 1 && spec_set_target(set, target, &d) == 0;
    TU_CHECK(ok, "cannot read for %s: %s", target_name(target), yaml);
    if (ok) {
        lora_read(&set->kernel[0], c);
    }
    return ok;
}

/* The waves follow the compute units: the GPU targets' facts give the
 * waves the defaults were tuned at, a GPU of half the units half of
 * each, and a CPU one work-group a hardware thread. */
static void test_facts_waves(void)
{
    struct spec_set set;
    struct lora c;
    if (!lora_for(LORA("bf16"), TARGET_SM90A, &set, &c)) {
        spec_set_free(&set);
        return;
    }
    long split = split_wave(&c), mma = mma_wave(&c), wg = wg_wave(&c);
    TU_CHECK(split == 384 && mma == 256 && wg == 128,
             "sm90a waves: %ld %ld %ld", split, mma, wg);
    struct device_facts half = *c.dev;
    half.compute_units /= 2;
    c.dev = &half;
    TU_CHECK(split_wave(&c) == split / 2 && mma_wave(&c) == mma / 2 &&
                 wg_wave(&c) == wg / 2,
             "half the units: waves %ld %ld %ld", split_wave(&c),
             mma_wave(&c), wg_wave(&c));
    half = *target_facts(TARGET_SM90A);
    half.local_per_unit /= 2; /* lora_mma's 64 KiB fit once, not twice */
    TU_CHECK(mma_wave(&c) == mma / 2 && wg_wave(&c) == wg,
             "half the local memory: lora_mma's wave %ld", mma_wave(&c));
    spec_set_free(&set);
    const struct device_facts *cpu = target_facts(TARGET_CPU);
    if (lora_for(LORA("f32"), TARGET_CPU, &set, &c)) {
        TU_CHECK(split_wave(&c) == device_wave_units(cpu),
                 "CPU wave %ld for %ld units", split_wave(&c),
                 cpu->compute_units);
    }
    spec_set_free(&set);
}

/* The cache thresholds follow the cache: half the cache, half the share
 * (W's bytes that keep lora_decode's blocks of 128 rows). */
static void test_facts_cache(void)
{
    struct device_facts f = *target_facts(TARGET_SM90A);
    long quarter = device_cache_share(&f, 4);
    TU_CHECK(quarter == 8L << 20, "a quarter of the cache: %ld", quarter);
    f.cache_bytes /= 2;
    CU_ASSERT_EQUAL(device_cache_share(&f, 4), quarter / 2);
}

/* A spec's split path on CPUs halves its slices at the CPU's wave, not a
 * GPU's: K = N = 1024 on 128 x 128 tiles (8 a row), 4 slices while
 * their work-groups fit in one wave, then 2. */
static void test_facts_split_bands(void)
{
    static const char yaml[] =
        "kernels:\n  - {name: s, op: lora_forward, in_features: 1024, "
        "out_features: 1024, rank: 8, tile: {decode_max: 16, split_k: 4, "
        "split_max: 1024}}\n";
    struct spec_set set;
    struct lora c;
    if (lora_for(yaml, TARGET_CPU, &set, &c)) {
        long slices[SPLIT_BANDS], upto[SPLIT_BANDS];
        int n = split_bands(&c, slices, upto);
        long fit = split_wave(&c) / (4 * ceil_div(c.N, c.n)) * c.m;
        TU_CHECK(fit < 1024 && n == 2 && slices[0] == 4 && upto[0] == fit &&
                     slices[1] == 2 && upto[1] == 1024,
                 "CPU bands: %d, the first %ld slices to %ld rows", n,
                 n > 0 ? slices[0] : 0, n > 0 ? upto[0] : 0);
    }
    spec_set_free(&set);
}

int add_caps_suite(void)
{
    CU_pSuite s = CU_add_suite("caps", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "the table grants by extension and compute "
                    "capability", test_grant) == NULL ||
        CU_add_test(s, "the target derives from the capabilities",
                    test_target) == NULL ||
        CU_add_test(s, "variants are meant for devices that can run them",
                    test_variant_needs) == NULL ||
        CU_add_test(s, "a stub carries only the rules it asks for",
                    test_stub_asks_only) == NULL ||
        CU_add_test(s, "the stub's query grants what the table does",
                    test_stub_rules) == NULL ||
        CU_add_test(s, "the tensor-core rate from the table",
                    test_tensor_rate) == NULL ||
        CU_add_test(s, "a half-precision GEMM's floor is the tensor "
                    "cores'", test_tensor_floor) == NULL ||
        CU_add_test(s, "every target holds every device fact",
                    test_facts_complete) == NULL ||
        CU_add_test(s, "the waves follow the compute units",
                    test_facts_waves) == NULL ||
        CU_add_test(s, "the cache thresholds follow the cache",
                    test_facts_cache) == NULL ||
        CU_add_test(s, "a CPU's split bands follow its wave",
                    test_facts_split_bands) == NULL) {
        return -1;
    }
    return 0;
}
