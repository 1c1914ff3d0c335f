/* test_sizes.c - the runtime model beyond rows, through test_gather
 * (op_gather.c): two runtime sizes (batch, seq), an int32 buffer and a
 * float32 one. Its tests join the numeric and tune suites. */
#include <CUnit/Basic.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit.h"
#include "numeric_util.h"
#include "stubrun.h"
#include "suites.h"
#include "testutil.h"
#include "tune.h"
#include "tunedb.h"
#include "variant.h"

#define GATHER_YAML                                                          \
    "kernels:\n  - {name: t_gather_%s, op: test_gather, dtype: %s, "        \
    "features: %d, table_rows: 37, scale: 0.5, tile: {items: %d, "           \
    "tokens: %d}}\n"

/* Both paths (batch 1, and more), tails in both dimensions (features
 * past a multiple of items, seq past one of tokens), and one position. */
static void test_gather_numeric(void)
{
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    static const size_t sizes[][2] = {{1, 1}, {1, 9}, {2, 1}, {3, 5},
                                      {5, 33}, {2, 64}};
    for (int t = 0; t < 3; t++) {
        struct nu_kernel k;
        int features = t == 0 ? 100 : 64, items = t == 1 ? 64 : 32;
        if (nu_spec_ok(&k, GATHER_YAML, dtypes[t], dtypes[t], features,
                       items, 4) &&
            nu_build(&k)) {
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
                nu_run_sizes(&k, sizes[i], nu_unit());
            }
        }
        nu_kernel_free(&k);
    }
}

/* The op's own check: reported at the knob, the spec refused. */
static void test_gather_hostile(void)
{
    struct nu_kernel k;
    CU_ASSERT(nu_spec(&k, GATHER_YAML, "wide", "f32", 64, 64, 32) == 0);
    TU_CHECK(strstr(k.errors, ":2:") != NULL &&
                 strstr(k.errors, "items x tokens must be <= 1024 "
                        "work-items (got 2048)") != NULL,
             "messages: %s", k.errors);
    nu_kernel_free(&k);
    CU_ASSERT(nu_spec(&k, GATHER_YAML, "none", "f32", 0, 32, 4) == 0);
    nu_kernel_free(&k);
}

/* The path rule reads the first size: batch 1 takes path 0. */
static void test_gather_paths(void)
{
    struct nu_kernel k;
    if (nu_spec_ok(&k, GATHER_YAML, "path", "f32", 64, 32, 4) &&
        nu_build(&k)) {
        size_t one[2] = {1, 100}, two[2] = {2, 1}, zero[2] = {3, 0};
        CU_ASSERT_EQUAL(k.stub.fn_path_index(k.stub.handle, one), 0);
        CU_ASSERT_EQUAL(k.stub.fn_path_index(k.stub.handle, two), 1);
        CU_ASSERT_EQUAL(k.stub.fn_path_index(k.stub.handle, zero), -1);
        CU_ASSERT_EQUAL(k.stub.fn_scratch_bytes(one), 0);
    }
    nu_kernel_free(&k);
}

/* ---- stub misuse ------------------------------------------------------ */

/* A buffer of BYTES on the open device (NULL when that fails). */
static cl_mem device_buffer(size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(nu_rt()->ctx, CL_MEM_READ_WRITE, bytes, NULL,
                              &err);
    return err == CL_SUCCESS ? m : NULL;
}

/* Every size must be 1 to INT_MAX; each buffer as large as its own
 * sizes and element type say (ids 4 bytes an element in an f16 kernel,
 * bias float32 per batch); nothing else is refused. */
static void test_gather_misuse(void)
{
    struct nu_kernel k;
    enum { B = 3, S = 5, D = 64 };
    if (!nu_spec_ok(&k, GATHER_YAML, "misuse", "f16", D, 32, 4) ||
        !nu_build(&k)) {
        nu_kernel_free(&k);
        return;
    }
    size_t need[4] = {4 * B * S, 2 * 37 * D, 4 * B * D, 2 * B * S * D};
    cl_mem full[4], mem[4];
    for (int i = 0; i < 4; i++) {
        full[i] = device_buffer(need[i]);
        CU_ASSERT_FATAL(full[i] != NULL);
    }
    cl_command_queue q = nu_rt()->queue;
    struct {
        size_t sizes[2];
        cl_int want;
    } calls[] = {{{B, S}, CL_SUCCESS},
                 {{0, S}, CL_INVALID_VALUE},
                 {{B, 0}, CL_INVALID_VALUE},
                 {{(size_t)INT_MAX + 1, 1}, CL_INVALID_VALUE},
                 {{1, (size_t)INT_MAX + 1}, CL_INVALID_VALUE},
                 {{B + 1, S}, CL_INVALID_BUFFER_SIZE},
                 {{B, S + 1}, CL_INVALID_BUFFER_SIZE}};
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        cl_int got = stub_enqueue_scratch(&k.stub, q, calls[c].sizes, full,
                                          NULL, 0, NULL, NULL);
        TU_CHECK(got == calls[c].want, "sizes %zu x %zu: %s, not %s",
                 calls[c].sizes[0], calls[c].sizes[1], rt_status(got),
                 rt_status(calls[c].want));
    }
    /* Each buffer one element short of its own size. */
    for (int short_one = 0; short_one < 4; short_one++) {
        size_t elem = short_one == 0 || short_one == 2 ? 4 : 2;
        memcpy(mem, full, sizeof mem);
        mem[short_one] = device_buffer(need[short_one] - elem);
        CU_ASSERT_FATAL(mem[short_one] != NULL);
        size_t sizes[2] = {B, S};
        cl_int got = stub_enqueue_scratch(&k.stub, q, sizes, mem, NULL, 0,
                                          NULL, NULL);
        TU_CHECK(got == CL_INVALID_BUFFER_SIZE, "buffer %d short: %s",
                 short_one, rt_status(got));
        clReleaseMemObject(mem[short_one]);
    }
    /* NULL arrays through the array entry. */
    CU_ASSERT_EQUAL(k.stub.fn_enqueue(k.stub.handle, q, NULL, full, NULL, 0,
                                      NULL, NULL),
                    CL_INVALID_VALUE);
    CU_ASSERT_EQUAL(k.stub.fn_scratch_bytes(NULL), 0);
    clFinish(q);
    for (int i = 0; i < 4; i++) {
        clReleaseMemObject(full[i]);
    }
    nu_kernel_free(&k);
}

/* NAME.h declares the sizes in order, and says what each buffer holds. */
static void test_gather_header(void)
{
    struct nu_kernel k;
    if (!nu_spec_ok(&k, GATHER_YAML, "header", "bf16", 64, 32, 4)) {
        nu_kernel_free(&k);
        return;
    }
    struct emitted e;
    char err[256];
    CU_ASSERT_FATAL(emit_kernel(tu_gen_variants(k.ks), &e, err,
                                sizeof err) == 0);
    /* Its lines as one, the layout aside. */
    char *h = tu_flat(buf_str(&e.h));
    CU_ASSERT_FATAL(h != NULL);
    static const char *const want[] = {
        "at the runtime sizes BATCH and SEQ",
        "cl_command_queue q, size_t batch, size_t seq, cl_mem ",
        "size_t t_gather_header_scratch_bytes(size_t batch, size_t seq);",
        "batch x seq x 1 elements of int32 (cl_int)",
        "batch x 64 elements of float (cl_float)",
        "#define t_gather_header_N_SIZES 2",
        "runtime sizes (batch, seq)"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        TU_CHECK(strstr(h, want[i]) != NULL, "t_gather_header.h lacks '%s'",
                 want[i]);
    }
    free(h);
    emitted_free(&e);
    nu_kernel_free(&k);
}

int add_sizes_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "two runtime sizes, int32 ids: test_gather",
                       test_gather_numeric) == NULL ||
                   CU_add_test(s, "two runtime sizes: the path rule",
                               test_gather_paths) == NULL ||
                   CU_add_test(s, "two runtime sizes: sizes and buffers "
                               "refused", test_gather_misuse) == NULL ||
                   CU_add_test(s, "two runtime sizes: NAME.h",
                               test_gather_header) == NULL ||
                   CU_add_test(s, "two runtime sizes: hostile specs",
                               test_gather_hostile) == NULL
               ? -1
               : 0;
}

/* ---- bench and tune --------------------------------------------------- */

int specl_bench_main(int argc, char **argv); /* gen/bench.c */

/* Runs MAIN(ARGC, ARGV) with its standard output in a string (caller
 * frees); its exit status in *RC. */
static char *capture(int (*main_fn)(int, char **), int argc, char **argv,
                     int *rc)
{
    char *dir = tu_tempdir();
    char *path = tu_path(dir, "out");
    fflush(stdout);
    int saved = dup(1);
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL && saved >= 0);
    dup2(fileno(f), 1);
    *rc = main_fn(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    fclose(f);
    char *text = tu_read(path, NULL);
    tu_rmtree(dir);
    free(path);
    free(dir);
    return text;
}

/* `specl bench` and `specl tune` of a test_gather spec: verified and
 * timed through the stub at the op's bench sizes, and a tuning entry. */
static void test_gather_bench_tune(void)
{
    char *dir = tu_tempdir();
    char *spec = tu_path(dir, "g.yaml"), *db = tu_path(dir, "g.tune.yaml");
    FILE *f = fopen(spec, "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f, "kernels:\n  - {name: g, op: test_gather, features: 128, "
            "table_rows: 1000}\n");
    fclose(f);
    int rc;
    char *bench_argv[] = {"bench", "--quick", "--csv", spec};
    char *out = capture(specl_bench_main, 4, bench_argv, &rc);
    TU_CHECK(rc == 0 && out != NULL && strstr(out, "g,test_gather,f32") &&
                 strstr(out, ",specl,") && strstr(out, ",ok,"),
             "bench exit %d:\n%s", rc, out ? out : "");
    free(out);
    char *tune_argv[] = {"tune", "--reps", "3", "--db", db, spec};
    out = capture(specl_tune_main, 6, tune_argv, &rc);
    char *saved = tu_read(db, NULL);
    TU_CHECK(rc == 0 && saved != NULL && strstr(saved, "test_gather") &&
                 strstr(saved, "items="),
             "tune exit %d:\n%s\ndatabase:\n%s", rc, out ? out : "",
             saved ? saved : "(none)");
    free(saved);
    free(out);
    tu_rmtree(dir);
    free(spec);
    free(db);
    free(dir);
}

int add_sizes_tune_tests(CU_pSuite s)
{
    return CU_add_test(s, "two runtime sizes: bench and tune test_gather",
                       test_gather_bench_tune) == NULL
               ? -1
               : 0;
}
