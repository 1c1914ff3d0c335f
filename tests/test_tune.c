/* test_tune.c - the tuner and the tuning database: the constraint filter
 * (tune_filter_run against each op's tune_space and validate()), the
 * candidates (one per distinct emitted code), tiny tuning runs on PoCL in
 * process through tune_kernel (random, exhaustive, local, no valid
 * config; the database, the plot), resume, the `specl tune` command (what
 * it prints, --kernel, bad options, exit codes), `specl db merge` and
 * tunedb_merge, saving as it goes (SIGKILL, SIGTERM and Ctrl-C in the
 * middle of a run), the loader's checks (tests/tune/bad) and the
 * database fuzz target's regressions, key matching and the nearest-shape
 * fallback (tunedb_pick, tunedb_apply, `specl gen --db`), the knob text
 * round trip and device slugs.
 *
 * Fixtures are under tests/tune/: small.yaml (kernels to tune), best.yaml
 * (the bests of a database the tests build), gen.yaml (kernels that take
 * their knobs from it), a.yaml and b.yaml (databases to merge), two
 * malformed databases, bad/ (databases the loader rejects, with their
 * messages), and lsan.supp (PoCL's leaks, for SANITIZE runs). */
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "caps.h"
#include "clsource.h"
#include "emit.h"
#include "fuzz_db.h"
#include "knobs.h"
#include "runtime.h"
#include "spec.h"
#include "suites.h"
#include "testutil.h"
#include "tune.h"
#include "tunedb.h"
#include "tunedb_internal.h"
#include "tunedb_lock.h"

#define TUNE_DIR "tests/tune"
#define SMALL_SPEC TUNE_DIR "/small.yaml"
#define OUTSIDE_SPEC TUNE_DIR "/outside.yaml"
#define BEST_SPEC TUNE_DIR "/best.yaml"
#define GEN_SPEC TUNE_DIR "/gen.yaml"
#define PARTS_SPEC TUNE_DIR "/parts.yaml"
#define DB_A TUNE_DIR "/a.yaml"
#define DB_B TUNE_DIR "/b.yaml"
#define DB_BAD_ENTRY TUNE_DIR "/bad_entry.yaml"
#define DB_BAD_YAML TUNE_DIR "/bad_yaml.yaml"
#define DB_BAD_DIR TUNE_DIR "/bad"
#define MIN_DB_BAD_FIXTURES 27
#define DB_REGRESSION_DIR "tests/fuzz/db-regressions"

#define TEST_DEVICE "Test Device"
#define OTHER_DEVICE "Other GPU"

static char *tmp; /* the suite's temporary directory */

static void device_close(void);

static int suite_init(void)
{
    tmp = tu_tempdir();
    return tmp == NULL;
}

static int suite_cleanup(void)
{
    if (tmp != NULL) {
        tu_rmtree(tmp);
    }
    free(tmp);
    tmp = NULL;
    device_close();
    return 0;
}

/* ---- helpers ----------------------------------------------------------- */

/* TMP/NAME in BUF. */
static const char *tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmp, name);
    return buf;
}

/* Under SANITIZE=address, LeakSanitizer would fail every run that
 * compiles with PoCL (whose compiler keeps objects past exit) and lose
 * its buffered stdout: its leaks are suppressed, specl's still count. */
#define LSAN_ENV "LSAN_OPTIONS=\"suppressions=" TUNE_DIR "/lsan.supp:" \
                 "print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}\" "

/* No run of this suite takes more than a few seconds; one that hangs (a
 * kernel or the OpenCL runtime) fails its test with status 124. */
#define RUN_TIMEOUT "timeout 180 "

/* Runs `specl ARGS` (printf-style) with stdout in TMP/out.txt and stderr in
 * TMP/err.txt; returns its exit status. *OUT and *ERR (if not NULL) get
 * the text of each (caller frees). */
static int specl(char **out, char **err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int specl(char **out, char **err, const char *fmt, ...)
{
    char args[4096], o[4096], e[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    tmp_path(o, sizeof o, "out.txt");
    tmp_path(e, sizeof e, "err.txt");
    int rc = tu_run(LSAN_ENV RUN_TIMEOUT "%s %s >'%s' 2>'%s'", TU_SPECL,
                    args, o, e);
    if (out != NULL) {
        *out = tu_read(o, NULL);
        if (*out == NULL) {
            *out = calloc(1, 1);
        }
    }
    if (err != NULL) {
        *err = tu_read(e, NULL);
        if (*err == NULL) {
            *err = calloc(1, 1);
        }
    }
    return rc;
}

static int read_spec(struct spec_set *s, const char *path)
{
    struct diags d = {.out = stderr};
    spec_set_init(s);
    return spec_read_file(s, path, &d);
}

/* Reads a spec held in TEXT (PATH names it; a string literal). */
static int read_spec_text(struct spec_set *s, const char *path,
                          const char *text)
{
    struct diags d = {.out = stderr};
    spec_set_init(s);
    return spec_read_buffer(s, path, (const unsigned char *)text,
                            strlen(text), &d);
}

/* read_spec_text, then the knobs of TARGET's defaults: 0 when both went
 * through. */
static int read_spec_on(struct spec_set *s, const char *path,
                        const char *text, enum target target)
{
    struct diags d = {.out = stderr};
    if (read_spec_text(s, path, text) != 0) {
        return -1;
    }
    return spec_set_target(s, target, &d) != 0 ? -1 : 0;
}

/* The default device (as `specl tune` opens it without --device) and the
 * naive kernels, for the tuning runs in process: opened on first use,
 * closed with the suite. NULL when there is no device. */
static struct rt dev;
static struct naive_stubs dev_naive;
static int dev_state; /* 0: not tried; 1: open; -1: failed */

static const struct rt *device(void)
{
    char err[256];
    if (dev_state == 0) {
        naive_init(&dev_naive);
        dev_state = rt_open(&dev, NULL, err, sizeof err) < 0 ? -1 : 1;
        if (dev_state < 0) {
            fprintf(stderr, "tune: no OpenCL device: %s\n", err);
        }
    }
    return dev_state > 0 ? &dev : NULL;
}

static void device_close(void)
{
    if (dev_state > 0) {
        rt_close(&dev);
    }
    if (dev_state != 0) {
        naive_free(&dev_naive);
    }
    dev_state = 0;
}

/* Gives S the defaults `specl tune` gives it on the default device (those
 * for CPUs on PoCL); the number of errors, or -1 without a device. */
static int set_device_target(struct spec_set *s)
{
    struct diags d = {.out = stderr};
    const struct rt *rt = device();
    return rt == NULL ? -1 : spec_set_target(s, rt->target, &d);
}

static int read_spec_for_device(struct spec_set *s, const char *path)
{
    return read_spec(s, path) != 0 ? -1 : set_device_target(s);
}

static const struct kernel_spec *find_kernel(const struct spec_set *s,
                                             const char *name)
{
    for (int i = 0; i < s->n_kernel; i++) {
        if (strcmp(s->kernel[i].name, name) == 0) {
            return &s->kernel[i];
        }
    }
    return NULL;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f != NULL) {
        fclose(f);
    }
    return f != NULL;
}

/* Validates KS silently with the op's checks alone: the number of errors,
 * and the first message in WHY. */
static int check_config(const struct kernel_spec *ks, char *why, size_t size)
{
    struct diags d = {.out = NULL};
    ks->op->validate(ks, &d);
    snprintf(why, size, "%s", d.first);
    if (d.count != 0) {
        return d.count;
    }
    /* and, as a candidate of the tuner, what its plan needs of the
     * target's device (an f32 lora_forward on tf32 tensor cores) */
    struct plan p;
    memset(&p, 0, sizeof p);
    ks->op->plan(ks, &p);
    unsigned lacking = caps_lacking(p.needs, target_caps(ks->target));
    if (lacking != 0) {
        char names[128];
        caps_names(lacking, names, sizeof names);
        snprintf(why, size, "needs %s, which the device lacks", names);
        return 1;
    }
    return 0;
}

/* BASE with the knobs of TEXT set, resolved quietly by knobs_resolve (the
 * knobs TEXT leaves out chosen again by the op's defaults): the number of
 * problems with the first in WHY, or -1 if TEXT does not parse. */
static int resolve_text(const struct kernel_spec *base, const char *text,
                        struct kernel_spec *out, char *why, size_t size)
{
    struct diags d = {.out = NULL};
    *out = *base;
    if (knobs_parse(out, text, why, size) != 0) {
        return -1;
    }
    int errors = knobs_resolve(out, &d);
    snprintf(why, size, "%s", d.first);
    return errors;
}

/* The knob text of config INDEX of SP for KS. */
static void config_text(const struct kernel_spec *ks,
                        const struct tune_space *sp, long index, char *out,
                        size_t size)
{
    struct kernel_spec cks;
    tune_space_config(ks, sp, index, &cks, NULL, 0);
    knobs_text(&cks, out, size);
}

static int cmp_text(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* ---- 1. the constraint filter ------------------------------------------ */

/* KS with KNOBS set validates (REASON NULL), or is rejected with a first
 * reason containing REASON. */
static void expect_config(const struct kernel_spec *ks, const char *knobs,
                          const char *reason)
{
    struct kernel_spec cks;
    char why[256];
    int errors = resolve_text(ks, knobs, &cks, why, sizeof why);
    TU_CHECK(errors >= 0, "%s: cannot apply '%s': %s", ks->name, knobs, why);
    if (errors < 0) {
        return;
    }
    if (reason == NULL) {
        TU_CHECK(errors == 0, "%s {%s}: should be valid, rejected: %s",
                 ks->name, knobs, why);
    } else {
        TU_CHECK(errors > 0 && strstr(why, reason) != NULL,
                 "%s {%s}: expected rejection '%s', got %s", ks->name, knobs,
                 reason, errors ? why : "valid");
    }
}

static const char *const filter_spec =
    "kernels:\n"
    "  - {name: f_lora, op: lora_forward, in_features: 64, "
    "out_features: 64, rank: 4}\n"
    "  - {name: f_softmax, op: softmax, features: 4096}\n"
    "  - {name: f_softmax_odd, op: softmax, features: 1000}\n"
    "  - {name: f_layernorm, op: layernorm, features: 768}\n";

static void test_filter_cases(void)
{
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec_text(&s, "filter.yaml", filter_spec), 0);
    const struct kernel_spec *lora = find_kernel(&s, "f_lora");
    const struct kernel_spec *sm = find_kernel(&s, "f_softmax");
    const struct kernel_spec *odd = find_kernel(&s, "f_softmax_odd");
    CU_ASSERT_PTR_NOT_NULL_FATAL(lora);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(odd);

    /* lora_forward: the op defaults and a hand-picked tile are valid. */
    expect_config(lora, "", NULL);
    expect_config(lora, "m=64 n=64 k=16 wm=8 wn=8 warp_n=0 xa=prepass",
                  NULL);
    expect_config(lora, "m=128 n=64 k=16 wm=4 wn=4 warp_n=8 xa=inline", NULL);
    /* Register tiles that do not divide the tile. */
    expect_config(lora, "m=64 wm=3", "tile m (64) must be a multiple of wm "
                  "(3)");
    expect_config(lora, "n=64 wn=3", "tile n (64) must be a multiple of wn "
                  "(3)");
    /* Work-groups too large: 128/1 x 64/4 work-items. */
    expect_config(lora, "m=128 n=64 wm=1 wn=4", "lora_main work-group of "
                  "2048 work-items");
    /* Local memory: 2 x 64 x (128 + 64) floats (the default pad
     * drops to 0 when it alone overflows). */
    expect_config(lora, "m=128 n=64 k=64 wm=8 wn=8", "lora_main needs 98304 "
                  "bytes of local memory");
    /* Tiles beyond the shape, and warps that do not fit the work-group. */
    expect_config(lora, "n=128", "tile n (128) exceeds out_features (64)");
    expect_config(lora, "k=128", "tile k (128) exceeds in_features (64)");
    expect_config(lora, "m=64 n=32 wm=8 wn=8 warp_n=8", "warp_n (8) must "
                  "divide the work-items along N");

    /* Row ops: registers mode only where the row fits 64 floats per
     * work-item (4096 / 64 work-items = 64 fits, / 32 does not). */
    expect_config(sm, "", NULL);
    expect_config(sm, "wg=64 rows=2 vec=4 mode=registers", NULL);
    expect_config(sm, "wg=32 rows=2 vec=4 mode=registers",
                  "tile mode registers needs 128 floats per work-item");
    expect_config(sm, "wg=1 rows=256 vec=4 mode=registers",
                  "tile mode registers needs 4096 floats per work-item");
    expect_config(sm, "wg=1 rows=256 vec=16 mode=streaming", NULL);
    expect_config(sm, "wg=1024 rows=2", "tile wg (1024) times rows (2) must "
                  "be <= 1024");
    expect_config(sm, "wg=48", "tile wg (48) must be a power of two");
    expect_config(odd, "vec=16", "tile vec (16) must divide features (1000)");
    expect_config(odd, "wg=8 rows=1 vec=8 mode=streaming", NULL);

    /* Kinds of reasons: every run of digits one '#'. */
    char kind[128];
    tune_reason_kind("tile n (128) exceeds out_features (64); use at most 64",
                     kind, sizeof kind);
    CU_ASSERT_STRING_EQUAL(kind, "tile n (#) exceeds out_features (#); use "
                                 "at most #");
    tune_reason_kind("12x3.5", kind, sizeof kind);
    CU_ASSERT_STRING_EQUAL(kind, "#x#.#");
    tune_reason_kind("a 1234567", kind, 4);
    CU_ASSERT_STRING_EQUAL(kind, "a #");
    spec_set_free(&s);
}

/* tune_space_add_home puts a kernel's own value of a knob into its axis
 * in value order, leaves an axis that holds it as it is, and refuses,
 * saying why, a space it would take past TUNE_MAX_DECLARED. */
static void test_space_add_home(void)
{
    struct spec_set s;
    struct tune_space sp;
    char err[256] = "";
    CU_ASSERT_EQUAL_FATAL(read_spec_text(&s, "add_home.yaml",
                                         "kernels:\n  - {name: t_home, op: "
                                         "softmax, features: 8, tile: "
                                         "{rows: 32, wg: 16}}\n"), 0);
    const struct kernel_spec *ks = &s.kernel[0];
    CU_ASSERT_EQUAL_FATAL(tune_space_build(ks->op, &sp, err, sizeof err), 0);
    long before = sp.n_config;
    int rows_axis = -1, wg_axis = -1;
    for (int a = 0; a < sp.n_axis; a++) {
        const char *name = ks->op->knobs[sp.knob[a]].key;
        rows_axis = strcmp(name, "rows") == 0 ? a : rows_axis;
        wg_axis = strcmp(name, "wg") == 0 ? a : wg_axis;
    }
    CU_ASSERT_FATAL(rows_axis >= 0 && wg_axis >= 0);
    int rows_n = sp.n_value[rows_axis], wg_n = sp.n_value[wg_axis];
    CU_ASSERT_EQUAL(tune_space_add_home(&sp, ks, err, sizeof err), 0);
    int ordered = 1, has32 = 0;
    for (int v = 0; v < sp.n_value[rows_axis]; v++) {
        has32 |= sp.value[rows_axis][v] == 32;
        ordered &= v == 0 ||
                   sp.value[rows_axis][v - 1] < sp.value[rows_axis][v];
    }
    TU_CHECK(has32 && ordered && sp.n_value[rows_axis] == rows_n + 1 &&
                 sp.n_value[wg_axis] == wg_n &&
                 sp.n_config == before / rows_n * (rows_n + 1) &&
                 tune_space_home(&sp, ks) >= 0,
             "rows 32 %s the axis (%d values, in order %d), wg's %d of %d, "
             "%ld configs of %ld", has32 ? "in" : "not in",
             sp.n_value[rows_axis], ordered, sp.n_value[wg_axis], wg_n,
             sp.n_config, before);
    /* A space at its bound takes no more. */
    CU_ASSERT_EQUAL_FATAL(tune_space_build(ks->op, &sp, err, sizeof err), 0);
    sp.n_config = TUNE_MAX_DECLARED / sp.n_value[rows_axis] *
                  sp.n_value[rows_axis];
    TU_CHECK(tune_space_add_home(&sp, ks, err, sizeof err) < 0 &&
                 strstr(err, "t_home's own knobs is too large") != NULL,
             "a space past its bound: %s", err);
    spec_set_free(&s);
}

/* The op defaults lie in the space for every kind of device, so that a
 * search's best is confirmed against them back to back (without a home
 * config it is not, and its ratio would rest on one timing of the
 * defaults): each op at a shape of its own, f32 and bf16, on GPUs, CPUs
 * and tensor cores. */
static void test_filter_home_targets(void)
{
    static const char spec[] =
        "kernels:\n"
        "  - {name: h_lora, op: lora_forward, in_features: 512, "
        "out_features: 512, rank: 8}\n"
        "  - {name: h_lora_bf16, op: lora_forward, dtype: bf16, "
        "in_features: 4096, out_features: 4096, rank: 16}\n"
        "  - {name: h_delta, op: lora_forward, in_features: 2048, "
        "out_features: 2048, rank: 8, base: false}\n"
        "  - {name: h_bwd, op: lora_backward, in_features: 512, "
        "out_features: 512, rank: 8}\n"
        "  - {name: h_bwd_wide, op: lora_backward, in_features: 4096, "
        "out_features: 4096, rank: 16}\n"
        /* ranks whose defaults take more rows per lora_bwd_tg
         * work-group, narrower loads, fewer lora_bwd_grad work-items */
        "  - {name: h_bwd_r100, op: lora_backward, in_features: 4096, "
        "out_features: 4096, rank: 100}\n"
        "  - {name: h_bwd_r1023, op: lora_backward, in_features: 4096, "
        "out_features: 4096, rank: 1023}\n"
        "  - {name: h_bwd_r1024, op: lora_backward, in_features: 4096, "
        "out_features: 4096, rank: 1024}\n"
        /* Llama 2 7B's bf16 training shapes, every gradient and the
         * adapter's alone */
        "  - {name: h_bwd_up, op: lora_backward, dtype: bf16, "
        "in_features: 4096, out_features: 11008, rank: 16}\n"
        "  - {name: h_bwd_down, op: lora_backward, dtype: bf16, "
        "in_features: 11008, out_features: 4096, rank: 16}\n"
        "  - {name: h_bwd_q_ad, op: lora_backward, dtype: bf16, "
        "in_features: 4096, out_features: 4096, rank: 16, "
        "input_grad: false}\n"
        "  - {name: h_bwd_up_ad, op: lora_backward, dtype: bf16, "
        "in_features: 4096, out_features: 11008, rank: 16, "
        "input_grad: false}\n"
        "  - {name: h_bwd_down_ad, op: lora_backward, dtype: bf16, "
        "in_features: 11008, out_features: 4096, rank: 16, "
        "input_grad: false}\n"
        "  - {name: h_softmax, op: softmax, features: 32000}\n"
        /* with the split path at few rows */
        "  - {name: h_vocab, op: softmax, features: 151936}\n"
        "  - {name: h_vocab_bf16, op: softmax, dtype: bf16, "
        "features: 151936}\n"
        "  - {name: h_rmsnorm, op: rmsnorm, dtype: bf16, features: 4096}\n"
        "  - {name: h_layernorm, op: layernorm, features: 1024}\n";
    static const enum target targets[] = {TARGET_GPU, TARGET_CPU,
                                          TARGET_TENSOR, TARGET_SM90A};
    static const char *const names[] = {"gpu", "cpu", "tensor", "sm90a"};
    for (int t = 0; t < 4; t++) {
        struct spec_set s;
        struct diags d = {.out = stderr};
        CU_ASSERT_EQUAL_FATAL(read_spec_text(&s, "home.yaml", spec), 0);
        CU_ASSERT_EQUAL_FATAL(spec_set_target(&s, targets[t], &d), 0);
        for (int k = 0; k < s.n_kernel; k++) {
            const struct kernel_spec *ks = &s.kernel[k];
            struct tune_space sp;
            struct kernel_spec cks;
            char err[256], own[TUNE_TEXT], why[DIAG_MESSAGE_MAX] = "";
            CU_ASSERT_EQUAL_FATAL(tune_space_build(ks->op, &sp, err,
                                                   sizeof err), 0);
            CU_ASSERT_EQUAL_FATAL(tune_space_add_home(&sp, ks, err,
                                                      sizeof err), 0);
            knobs_text(ks, own, sizeof own);
            long home = tune_space_home(&sp, ks);
            TU_CHECK(home >= 0 && tune_space_config(ks, &sp, home, &cks, why,
                                                    sizeof why),
                     "%s, target %s: the op defaults {%s} are not a valid "
                     "config of the tune space (home %ld%s%s)", ks->name,
                     names[t], own, home, *why ? ": " : "", why);
        }
        spec_set_free(&s);
    }
}

/* The values of axis A of OP's tune_space as the op writes them. */
static int axis_values(const struct op_def *op, int a, char values[][32],
                       int max)
{
    char copy[256], *save = NULL;
    int n = 0;
    snprintf(copy, sizeof copy, "%s", op->tune_space[a].values);
    for (char *t = strtok_r(copy, " ", &save); t && n < max;
         t = strtok_r(NULL, " ", &save)) {
        snprintf(values[n++], 32, "%s", t);
    }
    return n;
}

/* An entry of KNOBS timed at LAST rows (the last its few-rows path
 * takes) keeps knob K at WANT; one timed at LAST + 1 leaves the default
 * KS has. */
static void check_entry_keeps(const struct kernel_spec *ks, const char *knobs,
                              int k, long want, long last)
{
    for (long rows = last; rows <= last + 1; rows++) {
        struct kernel_spec e = *ks;
        struct diags quiet = {.out = NULL};
        CU_ASSERT_FATAL(tunedb_entry_knobs(&e, knobs, rows) == 0 &&
                        knobs_resolve(&e, &quiet) == 0);
        long expect = rows == last ? want : (long)ks->knob[k].num;
        TU_CHECK((long)e.knob[k].num == expect,
                 "an entry '%s' timed at %ld rows gives %s %g (want %ld)",
                 knobs, rows, ks->op->knobs[k].key, e.knob[k].num, expect);
    }
}

/* lora_forward at the rows its defaults give to lora_decode: the tuner
 * searches lora_decode's shape there (the tiles do not run), the tiles
 * elsewhere; an entry timed where lora_decode ran keeps its shape, one
 * timed past decode_max leaves it to the defaults. */
static void test_decode_space(void)
{
    static const char *const text =
        "kernels:\n  - {name: t_dec, op: lora_forward, in_features: 256, "
        "out_features: 256, rank: 8}\n";
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec_on(&s, "dec.yaml", text, TARGET_CPU), 0);
    const struct kernel_spec *ks = &s.kernel[0];
    const struct op_def *op = ks->op;
    int most = op_knob_index(op, "decode_max");
    int rows_k = op_knob_index(op, "decode_rows");
    long decode_max = (long)ks->knob[most].num;
    CU_ASSERT_FATAL(decode_max >= 1);
    static const struct {
        long rows;
        const char *first_axis;
    } at[] = {{1, "decode_rows"}, {0, "m"}, {4096, "m"}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        long rows = at[i].rows == 0 ? decode_max + 1 : at[i].rows;
        struct tune_filter f;
        char err[256];
        CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, rows, &f, err,
                                                 sizeof err), 0);
        const char *axis = op->knobs[f.sp.knob[0]].key;
        TU_CHECK(strcmp(axis, at[i].first_axis) == 0 && f.n_cand > 1,
                 "at %ld rows (decode_max %ld) the space starts with %s "
                 "(want %s), %ld candidates", rows, decode_max, axis,
                 at[i].first_axis, f.n_cand);
        tune_filter_free(&f);
    }
    long other = (long)ks->knob[rows_k].num == 4 ? 16 : 4;
    char knobs[128];
    snprintf(knobs, sizeof knobs, "decode_rows=%ld decode_max=%ld", other,
             decode_max);
    check_entry_keeps(ks, knobs, rows_k, other, decode_max);
    spec_set_free(&s);
}

/* lora_forward in bf16 on tensor cores at the rows its defaults give to
 * lora_decode_mma: the tuner searches its slices, strips and warps there;
 * an entry timed there keeps them, one timed past decode_mma_max leaves
 * them to the defaults. */
static void test_decode_mma_space(void)
{
    static const char *const text =
        "kernels:\n  - {name: t_dmma, op: lora_forward, dtype: bf16, "
        "in_features: 2048, out_features: 2048, rank: 8}\n";
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(
        read_spec_on(&s, "dmma.yaml", text, TARGET_TENSOR), 0);
    const struct kernel_spec *ks = &s.kernel[0];
    const struct op_def *op = ks->op;
    long decode_max = (long)ks->knob[op_knob_index(op, "decode_max")].num;
    int most_k = op_knob_index(op, "decode_mma_max");
    int slices_k = op_knob_index(op, "decode_slices");
    long most = (long)ks->knob[most_k].num;
    CU_ASSERT_FATAL(most > decode_max);
    struct tune_filter f;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, most, &f, err, sizeof err),
                          0);
    const char *axis = op->knobs[f.sp.knob[0]].key;
    TU_CHECK(strcmp(axis, "decode_slices") == 0 && f.n_cand > 1,
             "at %ld rows (decode_mma_max %ld) the space starts with %s "
             "(want decode_slices), %ld candidates", most, most, axis,
             f.n_cand);
    tune_filter_free(&f);
    long other = (long)ks->knob[slices_k].num == 2 ? 4 : 2;
    char knobs[64];
    snprintf(knobs, sizeof knobs, "decode_slices=%ld", other);
    check_entry_keeps(ks, knobs, slices_k, other, most);
    spec_set_free(&s);
}

/* lora_backward at the rows its defaults give to lora_bwd_fused (the
 * generic GPU target): the tuner searches its slices and float tile
 * there, the launch sequence's knobs past fused_max; an entry timed there
 * keeps its slices, one timed past it leaves them to the defaults. */
static void test_bwd_fused_space(void)
{
    static const char *const text =
        "kernels:\n  - {name: t_fused, op: lora_backward, in_features: 512, "
        "out_features: 512, rank: 8}\n";
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec_on(&s, "fused.yaml", text, TARGET_GPU), 0);
    const struct kernel_spec *ks = &s.kernel[0];
    const struct op_def *op = ks->op;
    long most = (long)ks->knob[op_knob_index(op, "fused_max")].num;
    int slices_k = op_knob_index(op, "fused_slices");
    CU_ASSERT_FATAL(most >= 1);
    static const struct {
        long rows;
        const char *first_axis;
    } at[] = {{1, "fused_slices"}, {0, "fused_slices"}, {-1, "m"}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        long rows = at[i].rows > 0 ? at[i].rows
                    : at[i].rows == 0 ? most : most + 1;
        struct tune_filter f;
        char err[256];
        CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, rows, &f, err,
                                                 sizeof err), 0);
        const char *axis = op->knobs[f.sp.knob[0]].key;
        TU_CHECK(strcmp(axis, at[i].first_axis) == 0 && f.n_cand > 1 &&
                     f.home >= 0,
                 "at %ld rows (fused_max %ld) the space starts with %s "
                 "(want %s), %ld candidates, home %ld", rows, most, axis,
                 at[i].first_axis, f.n_cand, f.home);
        tune_filter_free(&f);
    }
    long other = (long)ks->knob[slices_k].num == 2 ? 4 : 2;
    char knobs[64];
    snprintf(knobs, sizeof knobs, "fused_slices=%ld", other);
    check_entry_keeps(ks, knobs, slices_k, other, most);
    spec_set_free(&s);
}

/* kernel_code_hash_at of KS with the knobs TEXT at ROWS (0: the whole
 * code); 0 where the knobs do not validate. */
static uint64_t hash_at(const struct kernel_spec *ks, const char *text,
                        long rows)
{
    struct kernel_spec cks;
    char why[256];
    uint64_t h = 0;
    if (resolve_text(ks, text, &cks, why, sizeof why) != 0 ||
        kernel_code_hash_at(&cks, rows, &h, why, sizeof why) != 0) {
        CU_FAIL("knobs that do not validate");
        return 0;
    }
    return h;
}

/* The tuner at a row count compares configs by the code that runs there:
 * how far softmax's split path reaches (split_max) changes nothing at
 * rows past it or within it, but does at rows between, and the row
 * path's knobs count wherever it runs; of the configs of one
 * code the candidate differs from the defaults in the fewest knobs, so a
 * knob that changes nothing at the tuned rows keeps the defaults' value
 * in the entry. */
static void test_candidates_at_rows(void)
{
    static const char *const text =
        "kernels:\n  - {name: t_rows, op: softmax, features: 32000}\n";
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec_on(&s, "rows.yaml", text, TARGET_GPU), 0);
    const struct kernel_spec *ks = &s.kernel[0];
    /* Split paths up to 64 and 256 rows: the same row path past them. */
    const char *to64 = "split=4 split_max=64", *to256 = "split=4 "
                                                        "split_max=256",
               *wide = "split=4 split_max=64 wg=256";
    CU_ASSERT(hash_at(ks, to64, 4096) == hash_at(ks, to256, 4096));
    CU_ASSERT(hash_at(ks, to64, 4096) != hash_at(ks, wide, 4096));
    CU_ASSERT(hash_at(ks, to64, 128) != hash_at(ks, to256, 128));
    CU_ASSERT(hash_at(ks, to64, 8) == hash_at(ks, to256, 8));
    CU_ASSERT(hash_at(ks, to64, 0) != hash_at(ks, to256, 0));
    struct tune_filter all, at;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(tune_filter_run(ks, &all, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, 4096, &at, err, sizeof err),
                          0);
    TU_CHECK(at.n_cand > 1 && at.n_cand < all.n_cand &&
                 at.n_valid == all.n_valid && at.rep[at.home] == at.home,
             "at 4096 rows %ld candidates, %ld over all rows (%ld and %ld "
             "valid)", at.n_cand, all.n_cand, at.n_valid, all.n_valid);
    /* Each candidate (one in seven): setting any knob it has apart from
     * the defaults back to theirs leaves no valid config of its code. */
    int h[TUNE_MAX_AXES], c[TUNE_MAX_AXES];
    tune_space_decode(&at.sp, at.home, h);
    for (long i = 0; i < at.n_cand; i += 7) {
        tune_space_decode(&at.sp, at.cand[i], c);
        for (int a = 0; a < at.sp.n_axis; a++) {
            if (c[a] == h[a]) {
                continue;
            }
            int back[TUNE_MAX_AXES];
            memcpy(back, c, sizeof back);
            back[a] = h[a];
            long j = tune_space_encode(&at.sp, back);
            char mine[TUNE_TEXT], other[TUNE_TEXT];
            config_text(ks, &at.sp, at.cand[i], mine, sizeof mine);
            config_text(ks, &at.sp, j, other, sizeof other);
            TU_CHECK(at.rep[j] < 0 || at.code[j] != at.code[at.cand[i]],
                     "candidate {%s} has the code of {%s}, nearer the "
                     "defaults", mine, other);
        }
    }
    tune_filter_free(&all);
    tune_filter_free(&at);
    spec_set_free(&s);
}

/* What the tuner builds at some rows (measure_rows): the plan keeps the
 * paths those rows may take, the last of them for any rows, and the
 * program renders their kernels alone; the code that runs there is the
 * whole plan's. */
static void test_measure_rows(void)
{
    static const char *const text =
        "kernels:\n  - {name: t_meas, op: lora_forward, dtype: bf16, "
        "in_features: 512, out_features: 512, rank: 8}\n";
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec_on(&s, "meas.yaml", text, TARGET_SM90A), 0);
    struct kernel_spec ks = s.kernel[0];
    static struct plan whole, part;
    plan_of(&ks, &whole);
    CU_ASSERT_FATAL(whole.n_path > 2);
    static const long rows[] = {1, 40, 4096};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        ks.measure_rows = rows[r];
        plan_of(&ks, &part);
        int first = 0;
        while (whole.path[first].max_rows != 0 &&
               rows[r] > whole.path[first].max_rows) {
            first++;
        }
        TU_CHECK(part.n_path >= 1 && part.n_path < whole.n_path &&
                     part.path[part.n_path - 1].max_rows == 0 &&
                     strcmp(part.path[0].why, whole.path[first].why) == 0,
                 "at %ld rows %d paths of %d kept, the first '%s'", rows[r],
                 part.n_path, whole.n_path,
                 part.n_path ? part.path[0].why : "");
        int fewer = 0;
        for (int i = 0; i < whole.n_path; i++) {
            for (int l = 0; l < whole.path[i].n_launch; l++) {
                fewer |= !plan_launches(&part, whole.path[i].launch[l].kernel);
            }
        }
        TU_CHECK(fewer, "at %ld rows every kernel kept", rows[r]);
        uint64_t h_whole, h_part;
        char err[256];
        struct kernel_spec plain = ks;
        plain.measure_rows = 0;
        CU_ASSERT(kernel_code_hash_at(&plain, rows[r], &h_whole, err,
                                      sizeof err) == 0 &&
                  kernel_code_hash_at(&ks, rows[r], &h_part, err,
                                      sizeof err) == 0 &&
                  h_whole == h_part);
    }
    spec_set_free(&s);
}

/* Whether the space-separated list LIST holds NAME. */
static int list_holds(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *c = list; *c != '\0';) {
        size_t len = strcspn(c, " ");
        if (len == n && strncmp(c, name, n) == 0) {
            return 1;
        }
        c += len + (c[len] == ' ');
    }
    return 0;
}

/* Over the whole space of each op, against what the op declares and what
 * its checks say on each config: the space has the op's axes and values,
 * but for those the filter left out (idle), in the op's order, and as
 * many configs as their product, each a different combination of those
 * values; config I validates exactly when the op's checks accept it,
 * with their first reason, and the filter's reasons are those counted by
 * kind; some configs pass and some not; the op defaults lie in the space
 * and pass; every config that passes plans launches of at most 1024
 * work-items, and a row kept in registers fits. */
static void test_filter_space(void)
{
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec_text(&s, "filter.yaml", filter_spec), 0);
    for (int k = 0; k < s.n_kernel; k++) {
        const struct kernel_spec *ks = &s.kernel[k];
        const struct op_def *op = ks->op;
        struct tune_filter f;
        char err[256];
        CU_ASSERT_EQUAL_FATAL(tune_filter_run(ks, &f, err, sizeof err), 0);
        const struct tune_space *sp = &f.sp;
        long product = 1;
        int n_axes = 0, op_axis[TUNE_MAX_AXES];
        char values[TUNE_MAX_VALUES][32];
        for (int i = 0; op->tune_space[i].knob != NULL; i++) {
            if (list_holds(sp->idle, op->tune_space[i].knob)) {
                continue;
            }
            int a = n_axes++, n = axis_values(op, i, values,
                                              TUNE_MAX_VALUES);
            op_axis[a < TUNE_MAX_AXES ? a : 0] = i;
            product *= n;
            TU_CHECK(a < sp->n_axis && sp->n_value[a] == n &&
                         strcmp(op->knobs[sp->knob[a]].key,
                                op->tune_space[i].knob) == 0,
                     "%s: axis %d is not %s with %d values", ks->name, a,
                     op->tune_space[i].knob, n);
            for (int v = 0; a < sp->n_axis && v < n && v < sp->n_value[a];
                 v++) {
                char text[64];
                param_format(&op->knobs[sp->knob[a]], sp->value[a][v], text,
                             sizeof text);
                TU_CHECK(strcmp(text, values[v]) == 0, "%s: %s value %d is "
                         "%s, the op says %s", ks->name,
                         op->tune_space[i].knob, v, text, values[v]);
            }
        }
        TU_CHECK(n_axes >= 2 && sp->n_axis == n_axes &&
                     sp->n_config == product,
                 "%s: %d axes, %ld configs; the op has %d axes, %ld "
                 "combinations", ks->name, sp->n_axis, sp->n_config, n_axes,
                 product);
        TU_CHECK(f.n_valid > 0 && f.n_valid < sp->n_config,
                 "%s: %ld of %ld configs valid", ks->name, f.n_valid,
                 sp->n_config);
        char own[TUNE_TEXT], home[TUNE_TEXT] = "-";
        knobs_text(ks, own, sizeof own);
        if (f.home >= 0) {
            config_text(ks, sp, f.home, home, sizeof home);
        }
        TU_CHECK(f.home >= 0 && f.home == tune_space_home(sp, ks) &&
                     f.rep[f.home] >= 0 && strcmp(home, own) == 0,
                 "%s: the op defaults %s are not a valid config of the "
                 "space (home %ld: %s)", ks->name, own, f.home, home);

        /* Config by config. */
        char (*text)[TUNE_TEXT] = calloc((size_t)sp->n_config, TUNE_TEXT);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        struct tune_reasons tally;
        memset(&tally, 0, sizeof tally);
        long n_valid = 0, n_invalid = 0;
        int in_registers = op_knob_index(op, "mode");
        for (long i = 0; i < sp->n_config; i++) {
            struct kernel_spec cks;
            char why[DIAG_MESSAGE_MAX], first[DIAG_MESSAGE_MAX];
            int valid = tune_space_config(ks, sp, i, &cks, why, sizeof why);
            knobs_text(&cks, text[i], TUNE_TEXT);
            for (int a = 0; a < sp->n_axis; a++) {
                int found = 0;
                char v[64];
                param_format(&op->knobs[sp->knob[a]],
                             cks.knob[sp->knob[a]].num, v, sizeof v);
                int n = axis_values(op, op_axis[a], values, TUNE_MAX_VALUES);
                for (int j = 0; j < n; j++) {
                    found |= strcmp(v, values[j]) == 0;
                }
                TU_CHECK(found && cks.knob[sp->knob[a]].set,
                         "%s config %ld: %s=%s is not a value of the axis",
                         ks->name, i, op->knobs[sp->knob[a]].key, v);
            }
            int errors = check_config(&cks, first, sizeof first);
            TU_CHECK(valid == (errors == 0) && (f.rep[i] >= 0) == valid &&
                         strcmp(why, first) == 0,
                     "%s config %ld {%s}: tune says %s (%s), filter %ld, the "
                     "op's checks %d errors (%s)", ks->name, i, text[i],
                     valid ? "valid" : "invalid", why, f.rep[i], errors,
                     first);
            if (errors != 0) {
                char kind[128];
                int kk = 0;
                n_invalid++;
                tune_reason_kind(first, kind, sizeof kind);
                TU_CHECK(strpbrk(kind, "0123456789") == NULL, "kind '%s'",
                         kind);
                while (kk < tally.n_kinds && strcmp(tally.kind[kk], kind)) {
                    kk++;
                }
                if (kk == tally.n_kinds && kk < TUNE_MAX_KINDS) {
                    snprintf(tally.kind[tally.n_kinds++], 128, "%s", kind);
                }
                if (kk < TUNE_MAX_KINDS) {
                    tally.count[kk]++;
                }
                continue;
            }
            n_valid++;
            struct plan p;
            memset(&p, 0, sizeof p);
            op->plan(&cks, &p);
            for (int pa = 0; pa < p.n_path; pa++) {
                for (int l = 0; l < p.path[pa].n_launch; l++) {
                    const struct launch *la = &p.path[pa].launch[l];
                    size_t items = la->local[0] *
                                   (la->dims > 1 ? la->local[1] : 1);
                    TU_CHECK(items >= 1 && items <= 1024,
                             "%s config %ld: %s work-group of %zu", ks->name,
                             i, la->kernel, items);
                }
            }
            if (in_registers >= 0 &&
                strcmp(op->knobs[in_registers].choices[(int)cks.knob
                           [in_registers].num], "registers") == 0) {
                long feat = (long)spec_field(&cks, "features");
                long wg = (long)spec_knob(&cks, "wg");
                long vec = (long)spec_knob(&cks, "vec");
                long slots = (feat / vec + wg - 1) / wg;
                TU_CHECK(slots * vec <= 64, "%s config %ld: %ld floats in "
                         "registers", ks->name, i, slots * vec);
            }
        }
        TU_CHECK(n_valid == f.n_valid, "%s: %ld valid configs, the filter "
                 "says %ld", ks->name, n_valid, f.n_valid);
        /* Every combination once. */
        qsort(text, (size_t)sp->n_config, TUNE_TEXT, cmp_text);
        for (long i = 1; i < sp->n_config; i++) {
            TU_CHECK(strcmp(text[i - 1], text[i]) != 0,
                     "%s: two configs are {%s}", ks->name, text[i]);
        }
        free(text);
        /* The reasons, counted by kind in the order met. */
        long counted = 0;
        int same = tally.n_kinds == f.why.n_kinds;
        for (int i = 0; same && i < tally.n_kinds; i++) {
            same = strcmp(tally.kind[i], f.why.kind[i]) == 0 &&
                   tally.count[i] == f.why.count[i];
            counted += f.why.count[i];
        }
        TU_CHECK(same && f.why.n_kinds > 0, "%s: the filter's reasons "
                 "differ from the op's (%d kinds, %d expected)", ks->name,
                 f.why.n_kinds, tally.n_kinds);
        TU_CHECK(f.why.n_kinds < TUNE_MAX_KINDS ? counted == n_invalid
                                                : counted <= n_invalid,
                 "%s: reasons count %ld of %ld invalid configs", ks->name,
                 counted, n_invalid);
        tune_filter_free(&f);
    }
    spec_set_free(&s);
}

/* The code KS emits as the compiler sees it: its kernel source after the
 * header comment (which lists the knobs) through the C preprocessor, then
 * the launch plan; NULL if that fails. DIR: a scratch directory. */
static char *code_text(const struct kernel_spec *ks, const char *dir)
{
    struct plan p;
    struct buf b;
    char err[256], cl[4200], pre[4300];
    memset(&p, 0, sizeof p);
    ks->op->plan(ks, &p);
    buf_init(&b);
    if (emit_cl(ks, &p, &b, err, sizeof err) < 0) {
        buf_free(&b);
        return NULL;
    }
    const char *body = strstr(buf_str(&b), "\n/* Parameters");
    snprintf(cl, sizeof cl, "%s/code.cl", dir);
    snprintf(pre, sizeof pre, "%s/code.i", dir);
    write_text(cl, body != NULL ? body : buf_str(&b));
    buf_free(&b);
    if (tu_run("cc -E -P -undef -x c '%s' -o '%s'", cl, pre) != 0) {
        return NULL;
    }
    char *text = tu_read(pre, NULL);
    if (text == NULL) {
        return NULL;
    }
    buf_init(&b);
    buf_puts(&b, text);
    free(text);
    for (int i = 0; i < p.n_path; i++) {
        buf_printf(&b, "path %ld scratch %ld %u %ld\n", p.path[i].max_rows,
                   p.path[i].scratch_per, p.path[i].scratch_sizes,
                   p.path[i].scratch_fixed);
        for (int l = 0; l < p.path[i].n_launch; l++) {
            const struct launch *la = &p.path[i].launch[l];
            buf_printf(&b, "%s %zu %zu %zu*%u/%zu %zu*%u/%zu", la->kernel,
                       la->local[0], la->local[1], la->groups[0], la->grid[0],
                       la->per_group[0], la->groups[1], la->grid[1],
                       la->per_group[1]);
            for (int a = 0; la->args[a] != NULL; a++) {
                buf_printf(&b, " %s", la->args[a]);
            }
            buf_puts(&b, "\n");
        }
    }
    text = strdup(buf_str(&b));
    buf_free(&b);
    return text;
}

static const char *const same_code_spec =
    "kernels:\n"
    "  - {name: c_lora, op: lora_forward, in_features: 8, out_features: 32, "
    "rank: 2}\n"
    "  - {name: c_delta, op: lora_forward, in_features: 8, out_features: "
    "32, rank: 2, base: false, accumulate: true}\n";

/* The candidates `specl tune` times (tune_candidates, and the filter's
 * cand and rep): each validates with knobs_resolve as its text reads; no
 * two of them emit the same code (preprocessed, with the same launches);
 * every valid config emits the code of the candidate the filter maps it
 * to; the op defaults are a candidate. Both kernels have knobs without
 * effect: warp_n, when a warp spans a row of 8 work-items, changes no
 * code from the defaults, so the filter leaves it out of c_lora's space
 * (idle); with base: false and xa: prepass every knob of lora_main,
 * which does not run, so c_delta has configs of one code. */
static void test_candidates_distinct(void)
{
    struct spec_set s;
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    CU_ASSERT_EQUAL_FATAL(read_spec_text(&s, "same.yaml", same_code_spec),
                          0);
    for (int k = 0; k < s.n_kernel; k++) {
        const struct kernel_spec *ks = &s.kernel[k];
        struct tune_filter f;
        char err[256], *texts = NULL;
        long n_valid = -1;
        CU_ASSERT_EQUAL_FATAL(tune_filter_run(ks, &f, err, sizeof err), 0);
        long n_cand = tune_candidates(ks, 0, &texts, &n_valid);
        TU_CHECK(n_cand == f.n_cand && n_valid == f.n_valid,
                 "%s: tune_candidates says %ld of %ld, the filter %ld of %ld",
                 ks->name, n_cand, n_valid, f.n_cand, f.n_valid);
        int lora = strcmp(ks->name, "c_lora") == 0;
        TU_CHECK(f.n_cand > 1 &&
                     (lora ? list_holds(f.sp.idle, "warp_n")
                           : f.n_cand < f.n_valid),
                 "%s: %ld candidates of %ld valid configs; idle: %s",
                 ks->name, f.n_cand, f.n_valid, f.sp.idle);
        TU_CHECK(f.home >= 0 && f.rep[f.home] == f.home,
                 "%s: the op defaults are not a candidate", ks->name);
        char **code = calloc((size_t)f.n_cand, sizeof *code);
        CU_ASSERT_PTR_NOT_NULL_FATAL(code);
        for (long c = 0; c < f.n_cand; c++) {
            struct kernel_spec cks;
            char own[TUNE_TEXT], why[256];
            config_text(ks, &f.sp, f.cand[c], own, sizeof own);
            const char *text = c < n_cand ? texts + c * TUNE_TEXT : own;
            TU_CHECK(strcmp(text, own) == 0 && f.rep[f.cand[c]] == f.cand[c]
                         && (c == 0 || f.cand[c - 1] < f.cand[c]),
                     "%s: candidate %ld is {%s}, config %ld {%s}", ks->name,
                     c, text, f.cand[c], own);
            int errors = resolve_text(ks, text, &cks, why, sizeof why);
            knobs_text(&cks, own, sizeof own);
            TU_CHECK(errors == 0 && strcmp(own, text) == 0,
                     "%s: candidate {%s} does not validate as it reads: %s",
                     ks->name, text, errors ? why : own);
            code[c] = code_text(&cks, dir);
            TU_CHECK(code[c] != NULL, "%s {%s}: no code", ks->name, text);
            for (long d = 0; code[c] != NULL && d < c; d++) {
                TU_CHECK(code[d] == NULL || strcmp(code[c], code[d]) != 0,
                         "%s: candidates %ld and %ld ({%s}) emit the same "
                         "code", ks->name, f.cand[d], f.cand[c], text);
            }
        }
        /* Every valid config with --full; by default one in five and
         * those that merged into the defaults, a different fifth for each
         * kernel. */
        for (long i = 0; i < f.sp.n_config; i++) {
            if (f.rep[i] < 0 || (!test_full && f.rep[i] != f.home &&
                                 (i + k) % 5 != 0)) {
                continue;
            }
            struct kernel_spec cks;
            char text[TUNE_TEXT];
            tune_space_config(ks, &f.sp, i, &cks, NULL, 0);
            knobs_text(&cks, text, sizeof text);
            char *mine = code_text(&cks, dir);
            long c = 0;
            while (c < f.n_cand && f.cand[c] != f.rep[i]) {
                c++;
            }
            TU_CHECK(mine != NULL && c < f.n_cand && code[c] != NULL &&
                         strcmp(mine, code[c]) == 0,
                     "%s: {%s} does not emit the code of candidate %ld",
                     ks->name, text, f.rep[i]);
            free(mine);
        }
        for (long c = 0; c < f.n_cand; c++) {
            free(code[c]);
        }
        free(code);
        free(texts);
        tune_filter_free(&f);
    }
    spec_set_free(&s);
    tu_rmtree(dir);
    free(dir);
}

/* ---- 2. tuning runs on the device --------------------------------------- */

/* The line of OUT that is exactly LINE exists. */
static int has_line(const char *out, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = out; p != NULL && *p;) {
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0')) {
            return 1;
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return 0;
}

static const struct tune_entry *entry_for(const struct tunedb *db,
                                          const struct kernel_spec *ks)
{
    char shape[TUNE_TEXT];
    tune_shape_text(ks, shape, sizeof shape);
    for (int i = 0; i < db->n; i++) {
        const struct tune_entry *e = &db->entry[i];
        if (strcmp(e->op, ks->op->name) == 0 &&
            strcmp(e->dtype, dtype_name(ks->dtype)) == 0 &&
            strcmp(e->shape, shape) == 0) {
            return e;
        }
    }
    return NULL;
}

/* PATH loads without errors into DB. */
static int load_db(struct tunedb *db, const char *path)
{
    struct diags d = {.out = stderr};
    tunedb_init(db);
    return tunedb_load(db, path, 0, &d);
}

/* The in-process runs: 8 rows, 2 reps. */
/* Past the rows lora_decode takes (decode_max: 16 on CPUs, 32 for the
 * narrowest shapes here), where the tuner searches the tiles. */
#define RUN_ROWS 64
#define RUN_REPS 2

/* The random run that the resume tests repeat. */
#define RANDOM_EVALS 4
#define RANDOM_SEED 3

static void run_options(struct tune_options *o, enum tune_strategy strategy,
                        long max_evals, unsigned long seed)
{
    tune_options_init(o);
    o->strategy = strategy;
    o->max_evals = max_evals;
    o->rows = RUN_ROWS;
    o->reps = RUN_REPS;
    o->seed = seed;
}

/* Tunes KS in process on the default device into DB; R gets what the run
 * did. Returns tune_kernel's status (-1: no device). */
static int tune_in_process(const struct kernel_spec *ks,
                           const struct tune_options *o, struct tunedb *db,
                           struct tune_result *r)
{
    const struct rt *rt = device();
    memset(r, 0, sizeof *r);
    return rt == NULL ? -1 : tune_kernel(rt, &dev_naive, ks, o, db, r);
}

/* R's counts of the space are what the filter says for KS, and the run
 * made EVALS evaluations: TIMED timed (built, verified), the rest from the
 * database. */
static void check_result(const struct kernel_spec *ks,
                         const struct tune_result *r, int rc, long evals,
                         long timed)
{
    struct tune_filter f;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, RUN_ROWS, &f, err,
                                             sizeof err),
                          0);
    TU_CHECK(rc == 0 && r->searched && r->error[0] == '\0',
             "%s: status %d, searched %d: %s", ks->name, rc, r->searched,
             r->error);
    TU_CHECK(r->rows == RUN_ROWS && r->n_configs == f.sp.n_config &&
                 r->n_valid == f.n_valid && r->n_cand == f.n_cand &&
                 r->max_evals == evals,
             "%s: rows %ld, %ld configs, %ld valid, %ld distinct, %ld at "
             "most; the filter says %ld, %ld, %ld", ks->name, r->rows,
             r->n_configs, r->n_valid, r->n_cand, r->max_evals,
             f.sp.n_config, f.n_valid, f.n_cand);
    int same = r->why.n_kinds == f.why.n_kinds;
    for (int i = 0; same && i < f.why.n_kinds; i++) {
        same = strcmp(r->why.kind[i], f.why.kind[i]) == 0 &&
               r->why.count[i] == f.why.count[i];
    }
    TU_CHECK(same, "%s: the run's reasons differ from the filter's",
             ks->name);
    TU_CHECK(r->evaluated == evals && r->timed == timed &&
                 r->built == timed && r->verified == timed &&
                 r->from_db == evals - timed,
             "%s: evaluated %ld (%ld expected): %ld built, %ld verified, "
             "%ld timed (%ld expected), %ld from the database", ks->name,
             r->evaluated, evals, r->built, r->verified, r->timed, timed,
             r->from_db);
    char text[TUNE_TEXT] = "";
    if (r->best >= 0 && r->best < f.sp.n_config) {
        config_text(ks, &f.sp, r->best, text, sizeof text);
    }
    TU_CHECK(r->best >= 0 && r->best < f.sp.n_config &&
                 f.rep[r->best] == r->best &&
                 strcmp(r->best_knobs, text) == 0 && r->best_us > 0 &&
                 r->best_gbs > 0 && r->default_us > 0,
             "%s: best %ld {%s} (%g us, %g GB/s), config {%s}, defaults %g "
             "us", ks->name, r->best, r->best_knobs, r->best_us, r->best_gbs,
             text, r->default_us);
    /* The best, the defaults (and an earlier best) were re-timed back to
     * back when anything was timed: the best is the fastest median, the
     * defaults' on a tie. Else no spreads. */
    TU_CHECK(r->retimed == (r->timed > 0 ? RUN_REPS : 0) &&
                 (!r->retimed ||
                  (r->best_spread[0] <= r->best_us &&
                   r->best_us <= r->best_spread[1] &&
                   r->default_spread[0] <= r->default_us &&
                   r->default_us <= r->default_spread[1] &&
                   (r->best == f.home || r->best_us < r->default_us))) &&
                 (!r->kept_defaults || r->best == f.home),
             "%s: back to back, %d runs: best %g (%g-%g), defaults %g "
             "(%g-%g), kept defaults %d, best config %ld, defaults' %ld",
             ks->name, r->retimed, r->best_us, r->best_spread[0],
             r->best_spread[1], r->default_us, r->default_spread[0],
             r->default_spread[1], r->kept_defaults, r->best, f.home);
    TU_CHECK(strcmp(r->stopped, r->evaluated < f.n_cand ? "max evals" : "")
                 == 0,
             "%s: %ld of %ld evaluated, stopped '%s'", ks->name,
             r->evaluated, f.n_cand, r->stopped);
    TU_CHECK(r->entry != NULL && strcmp(r->entry->device, dev.name) == 0 &&
                 strcmp(r->entry->driver, dev.driver) == 0 &&
                 r->entry->rows == RUN_ROWS,
             "%s: not recorded in the entry of this device and rows",
             ks->name);
    tune_filter_free(&f);
}

/* E is what tuning KS over RUN_ROWS rows with N_TRIED evaluations
 * records: the op defaults it ran on (KS's target), every tried config a candidate (tune_candidates) and valid as
 * its text reads (knobs_resolve), none twice, the first the op defaults
 * (KS's own knobs), each timed; the best is the fastest of them. */
static void check_entry(const struct kernel_spec *ks,
                        const struct tune_entry *e, int n_tried)
{
    TU_CHECK(e != NULL, "%s: no database entry", ks->name);
    if (e == NULL) {
        return;
    }
    char home[TUNE_TEXT], *cand = NULL;
    long n_valid, n_cand = tune_candidates(ks, RUN_ROWS, &cand, &n_valid);
    CU_ASSERT_FATAL(n_cand > 0);
    knobs_text(ks, home, sizeof home);
    TU_CHECK(e->device[0] && e->driver[0], "%s: no device or driver",
             ks->name);
    TU_CHECK(e->rows == RUN_ROWS, "%s: rows %ld", ks->name, e->rows);
    TU_CHECK(strcmp(e->target, target_name(ks->target)) == 0,
             "%s: target '%s', tuned on %s", ks->name, e->target,
             target_name(ks->target));
    TU_CHECK(strcmp(e->version, SPECL_VERSION) == 0, "%s: version '%s'",
             ks->name, e->version);
    TU_CHECK(e->best[0] != '\0', "%s: no best", ks->name);
    TU_CHECK(e->best_us > 0 && e->default_us > 0 && e->best_gbs > 0,
             "%s: time %g us, defaults %g us, %g GB/s", ks->name, e->best_us,
             e->default_us, e->best_gbs);
    TU_CHECK(e->n_tried == n_tried, "%s: %d tried, expected %d", ks->name,
             e->n_tried, n_tried);
    TU_CHECK(e->n_tried > 0 && strcmp(e->tried[0].knobs, home) == 0,
             "%s: the first config tried is %s, not the op defaults %s",
             ks->name, e->n_tried ? e->tried[0].knobs : "-", home);
    double fastest = INFINITY;
    for (int t = 0; t < e->n_tried; t++) {
        const struct tune_record *r = &e->tried[t];
        struct kernel_spec cks;
        char why[256], again[TUNE_TEXT];
        int errors = resolve_text(ks, r->knobs, &cks, why, sizeof why);
        knobs_text(&cks, again, sizeof again);
        TU_CHECK(errors == 0 && strcmp(again, r->knobs) == 0,
                 "%s: tried %s is not a valid config: %s", ks->name,
                 r->knobs, errors ? why : again);
        long c = 0;
        while (c < n_cand && strcmp(cand + c * TUNE_TEXT, r->knobs) != 0) {
            c++;
        }
        TU_CHECK(c < n_cand, "%s: tried %s is no candidate (it emits the "
                 "code of another config)", ks->name, r->knobs);
        TU_CHECK(strcmp(r->status, "ok") == 0 && r->us > 0,
                 "%s: %s: %s, %g us", ks->name, r->knobs, r->status, r->us);
        for (int u = 0; u < t; u++) {
            TU_CHECK(strcmp(e->tried[u].knobs, r->knobs) != 0,
                     "%s: %s tried twice", ks->name, r->knobs);
        }
        fastest = r->us > 0 && r->us < fastest ? r->us : fastest;
    }
    const struct tune_record *best = tune_entry_tried(e, e->best);
    TU_CHECK(best != NULL && fastest > 0, "%s: best %s is not among the "
             "tried", ks->name, e->best);
    /* The best's time and the defaults' are their medians re-timed back
     * to back, within their spreads; the entry says how many runs. */
    TU_CHECK(e->retimed_reps == RUN_REPS &&
                 e->best_p10_us <= e->best_us &&
                 e->best_us <= e->best_p90_us &&
                 e->default_p10_us <= e->default_us &&
                 e->default_us <= e->default_p90_us,
             "%s: %d runs back to back: best %g us (%g-%g), defaults %g "
             "(%g-%g)", ks->name, e->retimed_reps, e->best_us,
             e->best_p10_us, e->best_p90_us, e->default_us,
             e->default_p10_us, e->default_p90_us);
    TU_CHECK(e->searched == n_tried && e->candidates == n_cand &&
                 strcmp(e->stopped, n_tried < n_cand ? "max evals" : "") ==
                     0,
             "%s: searched %ld of %ld, stopped '%s'; %d tried of %ld",
             ks->name, e->searched, e->candidates, e->stopped, n_tried,
             n_cand);
    free(cand);
}

/* The characters of an SVG text's content, its entities counted as
 * the one character they stand for. */
static int svg_text_chars(const char *s, int len)
{
    int n = 0;
    for (int i = 0; i < len; i++) {
        if (s[i] == '&') {
            while (i < len && s[i] != ';') {
                i++;
            }
        }
        n++;
    }
    return n;
}

/* SVG, the plot of tuning KS with TIMED configs timed: as wide as each
 * of its left-aligned texts (from x, at 12 px or its font-size), every
 * searched knob listed with the chosen value in brackets, and the CSV
 * beside it (a column per searched knob, us, chosen) with a row per
 * config timed, one of them chosen. */
static void check_plot(const char *svg, const char *svg_path,
                       const struct kernel_spec *ks, int timed)
{
    int width = 0;
    sscanf(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\"",
           &width);
    for (const char *t = strstr(svg, "<text x=\""); t != NULL;
         t = strstr(t + 1, "<text x=\"")) {
        const char *gt = strchr(t, '>');
        const char *end = gt ? strstr(gt, "</text>") : NULL;
        char tag[256];
        int x = atoi(t + 9), font = 12;
        snprintf(tag, sizeof tag, "%.*s", gt ? (int)(gt - t) : 0, t);
        if (end == NULL || strstr(tag, "text-anchor") != NULL) {
            continue; /* centred or right-aligned: the map's labels */
        }
        const char *fs = strstr(tag, "font-size=\"");
        font = fs != NULL ? atoi(fs + 11) : font;
        int chars = svg_text_chars(gt + 1, (int)(end - gt - 1));
        TU_CHECK(x + tune_plot_text_width(chars, font) <= width,
                 "%s: a text of %d characters at x %d runs past the width "
                 "%d: %.*s", svg_path, chars, x, width,
                 (int)(end - gt - 1), gt + 1);
    }
    /* the space searched at the run's rows (a GPU's few-rows paths have
     * spaces of their own) */
    struct tune_filter f;
    char err[256], csv_path[4096], header[TUNE_TEXT * 2] = "";
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, RUN_ROWS, &f, err,
                                             sizeof err), 0);
    const struct tune_space sp = f.sp;
    tune_filter_free(&f);
    for (int a = 0; a < sp.n_axis; a++) {
        char line[128];
        const char *key = ks->op->knobs[sp.knob[a]].key;
        snprintf(line, sizeof line, ">  %s: ", key);
        const char *at = strstr(svg, line);
        const char *stop = at ? strstr(at, "</text>") : NULL;
        TU_CHECK(at != NULL && memchr(at, '[', (size_t)(stop - at)) != NULL,
                 "%s: no line of knob %s with its chosen value", svg_path,
                 key);
        snprintf(header + strlen(header), sizeof header - strlen(header),
                 "%s,", key);
    }
    strcat(header, "us,chosen\n");
    tune_plot_csv_path(svg_path, csv_path, sizeof csv_path);
    char *csv = tu_read(csv_path, NULL);
    TU_CHECK(csv != NULL && starts_with(csv, header),
             "%s: no header '%s'", csv_path, header);
    int rows = csv != NULL ? tu_count_lines(csv) - 1 : -1, chosen = 0;
    for (const char *l = csv ? strchr(csv, '\n') : NULL; l != NULL && l[1];
         l = strchr(l + 1, '\n')) {
        const char *eol = strchr(l + 1, '\n');
        chosen += eol != NULL && eol[-1] == '1' && eol[-2] == ',';
    }
    TU_CHECK(rows == timed && chosen == 1, "%s: %d rows (%d timed), %d "
             "chosen", csv_path, rows, timed, chosen);
    free(csv);
}

static int tuned_ok = 0; /* the random run passed: resume can go on */

/* Both kernels of small.yaml, random, in process: what each run did, the
 * database entries (in memory, and as saved and loaded again), the plot
 * of the first kernel. */
static void test_tune_random(void)
{
    char db_path[4096], svg_path[4096], err[256];
    struct spec_set s;
    struct tunedb db, back;
    struct tune_options o;
    tmp_path(db_path, sizeof db_path, "random.yaml");
    tmp_path(svg_path, sizeof svg_path, "random.svg");
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, SMALL_SPEC), 0);
    tunedb_init(&db);
    int ok = 1;
    for (int k = 0; k < s.n_kernel; k++) {
        const struct kernel_spec *ks = &s.kernel[k];
        struct tune_result r;
        run_options(&o, TUNE_RANDOM, RANDOM_EVALS, RANDOM_SEED);
        o.plot = k == 0 ? svg_path : NULL;
        int rc = tune_in_process(ks, &o, &db, &r);
        check_result(ks, &r, rc, RANDOM_EVALS, RANDOM_EVALS);
        check_entry(ks, r.entry, RANDOM_EVALS);
        TU_CHECK(r.entry == entry_for(&db, ks) &&
                     strcmp(r.entry->best, r.best_knobs) == 0 &&
                     r.entry->best_us == r.best_us &&
                     r.entry->default_us == r.default_us,
                 "%s: the entry's best is not the run's", ks->name);
        ok &= rc == 0;
    }
    TU_CHECK(db.n == s.n_kernel, "%d entries", db.n);
    CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, db_path, err, sizeof err), 0);
    tunedb_free(&db);

    int errors = load_db(&back, db_path);
    TU_CHECK(errors == 0 && back.n == s.n_kernel, "%s: %d errors, %d "
             "entries", db_path, errors, back.n);
    ok &= errors == 0 && back.n == s.n_kernel;
    for (int k = 0; k < s.n_kernel; k++) {
        const struct tune_entry *be = entry_for(&back, &s.kernel[k]);
        check_entry(&s.kernel[k], be, RANDOM_EVALS);
        for (int t = 0; be != NULL && t < be->n_tried; t++) {
            TU_CHECK(strlen(be->tried[t].code) == 16 && !be->tried[t].fresh,
                     "%s: record %d saved with code '%s'%s", be->op, t,
                     be->tried[t].code, be->tried[t].fresh ? ", fresh" : "");
        }
    }
    for (int i = 1; i < back.n; i++) {
        TU_CHECK(strcmp(back.entry[i].device, back.entry[0].device) == 0,
                 "entries of two devices: %s, %s", back.entry[0].device,
                 back.entry[i].device);
    }
    tunedb_free(&back);

    /* The plot of the first kernel. */
    char *svg = tu_read(svg_path, NULL);
    TU_CHECK(svg != NULL, "no plot %s", svg_path);
    if (svg != NULL) {
        size_t n = strlen(svg);
        while (n > 0 && (svg[n - 1] == '\n' || svg[n - 1] == ' ')) {
            svg[--n] = '\0';
        }
        TU_CHECK(starts_with(svg, "<svg") && ends_with(svg, "</svg>"),
                 "%s is not an SVG document", svg_path);
        TU_CHECK(strstr(svg, s.kernel[0].name) != NULL &&
                     strstr(svg, "chosen, ") != NULL,
                 "%s: no kernel name or chosen config", svg_path);
        check_plot(svg, svg_path, &s.kernel[0], RANDOM_EVALS);
    }
    free(svg);
    tuned_ok = ok;
    spec_set_free(&s);
}

/* Tunes KS (t_softmax) alone with STRATEGY and MAX evaluations into a new
 * database, saved as DB_NAME and loaded again into DB; checks the run and
 * returns 0 on success. */
static int tune_softmax(enum tune_strategy strategy, int max,
                        const char *db_name, struct tunedb *db,
                        const struct kernel_spec *ks)
{
    char db_path[4096], err[256];
    struct tune_options o;
    struct tune_result r;
    tmp_path(db_path, sizeof db_path, db_name);
    run_options(&o, strategy, max, 11);
    tunedb_init(db);
    int rc = tune_in_process(ks, &o, db, &r);
    check_result(ks, &r, rc, max, max);
    int saved = tunedb_save(db, db_path, err, sizeof err);
    tunedb_free(db);
    int errors = saved == 0 ? load_db(db, db_path) : -1;
    TU_CHECK(errors == 0 && db->n == 1, "%s: %d errors, %d entries",
             db_path, errors, db->n);
    if (rc != 0 || errors != 0 || db->n != 1) {
        tunedb_free(db);
        return -1;
    }
    check_entry(ks, entry_for(db, ks), max);
    return 0;
}

static void test_tune_exhaustive_local(void)
{
    struct spec_set s;
    struct tunedb db;
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, SMALL_SPEC), 0);
    const struct kernel_spec *ks = find_kernel(&s, "t_softmax");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ks);

    /* Exhaustive: the op defaults, then the candidates in order. */
    if (tune_softmax(TUNE_EXHAUSTIVE, 3, "exhaustive.yaml", &db, ks) == 0) {
        const struct tune_entry *e = entry_for(&db, ks);
        char home[TUNE_TEXT], *cand = NULL;
        long n_valid, n_cand = tune_candidates(ks, RUN_ROWS, &cand,
                                               &n_valid);
        knobs_text(ks, home, sizeof home);
        int t = 1;
        for (long i = 0; i < n_cand && t < 3 && e->n_tried == 3; i++) {
            const char *want = cand + i * TUNE_TEXT;
            if (strcmp(want, home) == 0) {
                continue;
            }
            TU_CHECK(strcmp(e->tried[t].knobs, want) == 0,
                     "exhaustive: tried #%d is %s, expected %s", t,
                     e->tried[t].knobs, want);
            t++;
        }
        TU_CHECK(t == 3, "exhaustive: %d of 3 checked", t);
        free(cand);
        tunedb_free(&db);
    }
    /* Local: checked by check_entry (defaults first, valid, distinct). */
    if (tune_softmax(TUNE_LOCAL, 5, "local.yaml", &db, ks) == 0) {
        tunedb_free(&db);
    }
    spec_set_free(&s);
}

/* The fake times of test_tune_retimed: the defaults take 100 us in the
 * search and 100 + HOME_STEP * (RUN - 2) back to back; the first other
 * config measured, 50 us in the search (a lucky median) and LUCKY_BASE +
 * 5 * RUN back to back; any other 200 us. */
struct fake_times {
    char home[TUNE_TEXT];
    char lucky[TUNE_TEXT];
    double lucky_base;
    double home_step;
};

static double fake_us(const char *knobs, long rows, int run,
                      void *ctx)
{
    (void)rows;
    struct fake_times *ft = ctx;
    if (strcmp(knobs, ft->home) == 0) {
        return run < 0 ? 100 : 100 + ft->home_step * (run - 2);
    }
    if (ft->lucky[0] == '\0' && run < 0) {
        snprintf(ft->lucky, sizeof ft->lucky, "%s", knobs);
    }
    if (strcmp(knobs, ft->lucky) == 0) {
        return run < 0 ? 50 : ft->lucky_base + 5 * run;
    }
    return 200;
}

/* The stored time is the best's median re-timed back to back with the
 * defaults, not its figure in the search (the luckiest of many); the
 * entry keeps the runs, the spreads and the defaults' median, and a
 * config lucky in the search that is slower back to back loses to the
 * defaults, also where the kernel's own knobs are on none of the op's
 * lists of values (its space takes them): never a stored best slower
 * than what NAME.c runs without it. Where the defaults' runs spread
 * (80 to 120 us), a config whose median (95) beats theirs (100) but not
 * their 10th percentile (80) is noise, and the defaults stay; one at 70
 * wins. Times are faked (tune_options.fake_us) over real runs. */
static void test_tune_retimed(void)
{
    static const struct {
        const char *spec, *kernel;
        double lucky_base, home_step;
        int lucky_wins;
    } cases[] = {{SMALL_SPEC, "t_softmax", 70, 0, 1},
                 {SMALL_SPEC, "t_softmax", 110, 0, 0},
                 {OUTSIDE_SPEC, "t_outside", 70, 0, 1},
                 {OUTSIDE_SPEC, "t_outside", 110, 0, 0},
                 {SMALL_SPEC, "t_softmax", 85, 10, 0},
                 {SMALL_SPEC, "t_softmax", 60, 10, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct spec_set s;
        CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, cases[i].spec), 0);
        const struct kernel_spec *ks = find_kernel(&s, cases[i].kernel);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
        /* t_outside's rows (32) are on none of the op's lists: the
         * space takes them (tune_space_add_home) */
        struct tune_space sp;
        struct tune_filter f;
        char why[256];
        CU_ASSERT_EQUAL_FATAL(tune_space_build(ks->op, &sp, why,
                                               sizeof why), 0);
        CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, RUN_ROWS, &f, why,
                                                 sizeof why), 0);
        int listed = tune_space_home(&sp, ks) >= 0;
        TU_CHECK(listed == (strcmp(cases[i].spec, OUTSIDE_SPEC) != 0) &&
                     f.home >= 0 && f.rep[f.home] == f.home,
                 "run %zu: %s's own knobs on the op's lists %d, config %ld "
                 "of its space", i, cases[i].kernel, listed, f.home);
        tune_filter_free(&f);
        struct fake_times ft;
        struct tune_options o;
        struct tune_result r;
        struct tunedb db, back;
        char path[4096], err[256];
        memset(&ft, 0, sizeof ft);
        knobs_text(ks, ft.home, sizeof ft.home);
        ft.lucky_base = cases[i].lucky_base;
        ft.home_step = cases[i].home_step;
        run_options(&o, TUNE_EXHAUSTIVE, 3, 1);
        o.reps = 5;
        o.fake_us = fake_us;
        o.fake_ctx = &ft;
        tunedb_init(&db);
        int rc = tune_in_process(ks, &o, &db, &r);
        const struct tune_entry *e = r.entry;
        TU_CHECK(rc == 0 && e != NULL && ft.lucky[0] != '\0',
                 "run %zu: status %d", i, rc);
        if (rc != 0 || e == NULL) {
            tunedb_free(&db);
            spec_set_free(&s);
            continue;
        }
        /* lucky: 5 runs of base + 0, 5, ... 20: median base + 10, p10
         * base, p90 base + 20; the defaults 100 - 2 * step, 100 - step,
         * ... 100 + 2 * step: median 100, p10 and p90 2 steps away */
        double step = cases[i].home_step;
        double mid = cases[i].lucky_wins ? ft.lucky_base + 10 : 100;
        double lo = cases[i].lucky_wins ? ft.lucky_base : 100 - 2 * step;
        double hi = cases[i].lucky_wins ? ft.lucky_base + 20 : 100 + 2 * step;
        const char *best = cases[i].lucky_wins ? ft.lucky : ft.home;
        TU_CHECK(r.retimed == 5 && r.search_best_us == 50 &&
                     r.kept_defaults == !cases[i].lucky_wins &&
                     strcmp(r.best_knobs, best) == 0 &&
                     strcmp(r.own_values, listed ? "" : "rows=32") == 0,
                 "run %zu: %d runs back to back, %g us in the search, kept "
                 "defaults %d, best {%s}, own values {%s}", i, r.retimed,
                 r.search_best_us, r.kept_defaults, r.best_knobs,
                 r.own_values);
        CU_ASSERT_EQUAL_FATAL(tmp_path(path, sizeof path, "retimed.yaml") !=
                                  NULL, 1);
        CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, path, err, sizeof err), 0);
        tunedb_free(&db);
        CU_ASSERT_EQUAL_FATAL(load_db(&back, path), 0);
        e = entry_for(&back, ks);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        TU_CHECK(strcmp(e->best, best) == 0 && e->best_us == mid &&
                     e->best_p10_us == lo && e->best_p90_us == hi &&
                     e->default_us == 100 &&
                     e->default_p10_us == 100 - 2 * step &&
                     e->default_p90_us == 100 + 2 * step &&
                     e->retimed_reps == 5,
                 "run %zu: stored best %s at %g us (%g-%g), defaults %g "
                 "(%g-%g), %d runs; expected %s at %g (%g-%g), defaults 100",
                 i, e->best, e->best_us, e->best_p10_us, e->best_p90_us,
                 e->default_us, e->default_p10_us, e->default_p90_us,
                 e->retimed_reps, best, mid, lo, hi);
        /* the search's own figure stays in the config's record */
        const struct tune_record *rec = tune_entry_tried(e, ft.lucky);
        TU_CHECK(rec != NULL && rec->us == 50, "run %zu: lucky record %g",
                 i, rec ? rec->us : -1);
        tunedb_free(&back);
        spec_set_free(&s);
    }
}

/* Whether the knob texts A and B ("key=value ...") differ in a knob that
 * KEYS (names separated by spaces) holds (INSIDE set), or in one it does
 * not (INSIDE clear). */
static int texts_differ(const char *a, const char *b, const char *keys,
                        int inside)
{
    while (*a != '\0' && *b != '\0') {
        size_t la = strcspn(a, " "), lb = strcspn(b, " ");
        size_t key = strcspn(a, "=");
        int held = 0;
        for (const char *k = keys; *k != '\0';) {
            size_t n = strcspn(k, " ");
            held |= n == key && strncmp(k, a, n) == 0;
            k += n;
            k += *k == ' ';
        }
        if (held == inside && (la != lb || strncmp(a, b, la) != 0)) {
            return 1;
        }
        a += la;
        a += *a == ' ';
        b += lb;
        b += *b == ' ';
    }
    return 0;
}

/* Into OUT, separated by spaces: the knobs of SP's axes in part PART
 * (IN 1) or in the others (IN 0); every axis's for PART -1. Knobs that
 * are no axis (those the defaults work out from the axes', such as
 * lora_backward's fused_max from dX's tile) are in neither. */
static void space_keys(const struct kernel_spec *ks,
                       const struct tune_space *sp, int part, int in,
                       char *out, size_t size)
{
    out[0] = '\0';
    for (int a = 0; a < sp->n_axis; a++) {
        if (part < 0 || (sp->part[a] == part) == in) {
            size_t len = strlen(out);
            snprintf(out + len, size - len, "%s%s", len ? " " : "",
                     ks->op->knobs[sp->knob[a]].key);
        }
    }
}

/* Every op's space builds: each value of each axis reads as its knob
 * takes it (a bool's "false true"), and its parts fit it. */
static void test_every_space(void)
{
    for (int i = 0; op_registry[i] != NULL; i++) {
        const struct op_def *op = op_registry[i];
        struct tune_space sp;
        char err[256] = "";
        if (op->tune_space == NULL) {
            continue;
        }
        int rc = tune_space_build(op, &sp, err, sizeof err);
        TU_CHECK(rc == 0 && sp.n_axis > 0 && sp.n_part >= 1,
                 "%s: %s", op->name, err);
    }
}

/* The filter leaves out the axes that shape no code at the rows: for
 * lora_backward at 4096 rows, on warpgroups (bf16, compute capability
 * 9.0) the SIMT tile, mma.sync's stages and T and G's knobs, keeping
 * the warpgroup tile; on a CPU (float32) the warpgroup tile and the
 * stages, keeping engine (its other values are refused there, but
 * could pass with other knobs); the same for a kernel whose own engine
 * the CPU lacks (the defaults stand in for its knobs). Each knob left
 * out, at each of its
 * values with the defaults elsewhere, is refused or emits the defaults'
 * code; the declared space passes the filter's bound, the space
 * searched does not; some candidate on warpgroups is another warpgroup
 * tile. */
static void test_idle_axes(void)
{
    static const char spec[] =
        "kernels:\n"
        "  - {name: i_bf16, op: lora_backward, dtype: bf16, in_features: "
        "4096, out_features: 4096, rank: 16}\n"
        "  - {name: i_f32, op: lora_backward, in_features: 4096, "
        "out_features: 4096, rank: 16}\n"
        /* an engine the CPU lacks: the defaults stand in for it */
        "  - {name: i_pinned, op: lora_backward, dtype: bf16, in_features: "
        "4096, out_features: 4096, rank: 16, tile: {engine: wgmma}}\n";
    static const struct {
        enum target target;
        const char *kernel, *idle, *kept;
    } cases[] = {
        {TARGET_SM90A, "i_bf16",
         "m n wm stages tg_rows tg_threads tg_stages",
         "wg_m wg_n wg_stages engine"},
        {TARGET_CPU, "i_f32", "wg_m wg_n wg_stages stages",
         "m n wm wn k engine tg_rows"},
        {TARGET_CPU, "i_pinned", "wg_m wg_n wg_stages stages",
         "m n wm wn k engine"},
    };
    const long rows = 4096;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct spec_set s;
        struct tune_filter f;
        struct tune_space declared;
        char err[256] = "", word[32];
        CU_ASSERT_EQUAL_FATAL(read_spec_on(&s, "idle.yaml", spec,
                                           cases[c].target), 0);
        const struct kernel_spec *ks = find_kernel(&s, cases[c].kernel);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
        CU_ASSERT_EQUAL_FATAL(tune_space_build(ks->op, &declared, err,
                                               sizeof err), 0);
        CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, rows, &f, err,
                                                 sizeof err), 0);
        TU_CHECK(declared.n_config > TUNE_MAX_CONFIGS &&
                     f.sp.n_config <= TUNE_MAX_CONFIGS,
                 "%s: declared %ld configs, searched %ld", ks->name,
                 declared.n_config, f.sp.n_config);
        for (const char *w = cases[c].idle; sscanf(w, "%31s", word) == 1;
             w += strlen(word) + (w[strlen(word)] == ' ')) {
            TU_CHECK(list_holds(f.sp.idle, word), "%s: %s not left out "
                     "(%s)", ks->name, word, f.sp.idle);
        }
        for (const char *w = cases[c].kept; sscanf(w, "%31s", word) == 1;
             w += strlen(word) + (w[strlen(word)] == ' ')) {
            int in_space = 0;
            for (int a = 0; a < f.sp.n_axis; a++) {
                in_space |= strcmp(ks->op->knobs[f.sp.knob[a]].key, word)
                            == 0;
            }
            TU_CHECK(in_space, "%s: %s left out (%s)", ks->name, word,
                     f.sp.idle);
        }
        /* Each knob left out, value by value, against the defaults (the
         * pinned kernel's own do not run here). */
        uint64_t home, code;
        CU_ASSERT_EQUAL_FATAL(kernel_code_hash_at(ks, rows, &home, err,
                                                  sizeof err), 0);
        int pinned = strcmp(ks->name, "i_pinned") == 0;
        for (int i = 0; !pinned && ks->op->tune_space[i].knob != NULL;
             i++) {
            const struct tune_axis *ax = &ks->op->tune_space[i];
            int k = op_knob_index(ks->op, ax->knob);
            char values[TUNE_MAX_VALUES][32];
            if (!list_holds(f.sp.idle, ax->knob)) {
                continue;
            }
            int n = axis_values(ks->op, i, values, TUNE_MAX_VALUES);
            for (int v = 0; v < n; v++) {
                struct kernel_spec cks = *ks;
                struct diags quiet = {.out = NULL};
                double num;
                CU_ASSERT_FATAL(knobs_parse_value(&ks->op->knobs[k],
                                                  values[v], &num) == 0);
                cks.knob[k].num = num;
                cks.knob[k].set = 1;
                if (knobs_resolve(&cks, &quiet) != 0) {
                    continue;
                }
                CU_ASSERT_EQUAL_FATAL(kernel_code_hash_at(&cks, rows, &code,
                                                          err, sizeof err),
                                      0);
                TU_CHECK(code == home, "%s: %s=%s, left out, changes the "
                         "code at %ld rows", ks->name, ax->knob, values[v],
                         rows);
            }
        }
        /* On warpgroups the space holds other warpgroup tiles. */
        int wg_m = op_knob_index(ks->op, "wg_m"), other = 0;
        for (long i = 0; i < f.n_cand; i++) {
            struct kernel_spec cks;
            tune_space_config(ks, &f.sp, f.cand[i], &cks, NULL, 0);
            other |= cks.knob[wg_m].num != ks->knob[wg_m].num;
        }
        TU_CHECK(other == (cases[c].target == TARGET_SM90A),
                 "%s: %s candidate of another wg_m among %ld", ks->name,
                 other ? "a" : "no", f.n_cand);
        tune_filter_free(&f);
        spec_set_free(&s);
    }
}

/* Rows of KS's (lora_backward's) main path: past lora_bwd_fused's, which
 * a GPU runs at few rows. */
static long parts_rows(const struct kernel_spec *ks)
{
    long fused = (long)ks->knob[op_knob_index(ks->op, "fused_max")].num;
    return fused >= 4096 ? fused + 1 : 4096;
}

/* lora_backward's knobs by the kernels they shape: its space has its
 * three parts, named with their knobs; a part's candidates around the
 * defaults are every code that a change of that part's knobs alone
 * gives, each differing from the defaults in that part's knobs alone
 * among the knobs of the space (those the defaults work out from them,
 * such as fused_max from dX's tile on a GPU, may follow).
 * A part naming a knob outside the space, or a knob in two parts, is
 * refused. */
static void test_tune_parts_space(void)
{
    struct spec_set s;
    struct tune_filter f;
    char err[256], text[TUNE_TEXT];
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, PARTS_SPEC), 0);
    const struct kernel_spec *ks = find_kernel(&s, "t_backward");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
    /* At few rows a GPU runs lora_bwd_fused, whose space is one part. */
    int fused = ks->knob[op_knob_index(ks->op, "fused_max")].num >= 64;
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, 64, &f, err, sizeof err),
                          0);
    TU_CHECK(f.sp.n_part == (fused ? 1 : 3), "%d parts at 64 rows (%s)",
             f.sp.n_part, fused ? "lora_bwd_fused" : "the main path");
    tune_filter_free(&f);
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, parts_rows(ks), &f, err,
                                             sizeof err), 0);
    tune_space_parts_text(ks->op, &f.sp, NULL, text, sizeof text);
    TU_CHECK(f.sp.n_part == 3 &&
                 strcmp(text, "dX (m n wm wn k engine), T and G (tg_rows "
                              "tg_threads tg_stages), dA and dB "
                              "(grad_threads grad_rows x_once)") == 0,
             "%d parts: %s", f.sp.n_part, text);
    const long counts[] = {12, 3, 4};
    tune_space_parts_text(ks->op, &f.sp, counts, text, sizeof text);
    TU_CHECK(strcmp(text, "dX (m n wm wn k engine: 12), T and G (tg_rows "
                          "tg_threads tg_stages: 3), dA and dB "
                          "(grad_threads grad_rows x_once: 4)") == 0,
             "with counts: %s", text);
    char home[TUNE_TEXT];
    config_text(ks, &f.sp, f.home, home, sizeof home);
    for (int p = 0; p < f.sp.n_part; p++) {
        const char *keys = ks->op->tune_parts[p].knobs;
        char others[TUNE_TEXT];
        long *cand = NULL;
        long n = tune_part_candidates(&f, f.home, p, &cand);
        space_keys(ks, &f.sp, p, 0, others, sizeof others);
        TU_CHECK(n > 1, "part %d: %ld candidates", p, n);
        for (long i = 0; i < n; i++) {
            char mine[TUNE_TEXT];
            config_text(ks, &f.sp, cand[i], mine, sizeof mine);
            TU_CHECK(f.rep[cand[i]] == cand[i] && cand[i] != f.home &&
                         (i == 0 || cand[i] > cand[i - 1]) &&
                         texts_differ(mine, home, keys, 1) &&
                         !texts_differ(mine, home, others, 1),
                     "part %d (%s): candidate {%s}, defaults {%s}", p, keys,
                     mine, home);
        }
        /* every valid config apart from the defaults in the part alone
         * has its code among them */
        int h[TUNE_MAX_AXES], c[TUNE_MAX_AXES];
        long missed = 0;
        tune_space_decode(&f.sp, f.home, h);
        for (long i = 0; i < f.sp.n_config; i++) {
            int other = 0, found = 0;
            tune_space_decode(&f.sp, i, c);
            for (int a = 0; a < f.sp.n_axis; a++) {
                other |= f.sp.part[a] != p && c[a] != h[a];
            }
            if (other || f.rep[i] < 0 || f.rep[i] == f.home) {
                continue;
            }
            for (long j = 0; j < n && !found; j++) {
                found = cand[j] == f.rep[i];
            }
            missed += !found;
        }
        TU_CHECK(missed == 0, "part %d: %ld configs' code missed", p, missed);
        free(cand);
    }
    tune_filter_free(&f);

    /* Parts that do not fit the space. */
    static const struct {
        struct tune_part parts[3];
        const char *error;
    } bad[] = {
        {{{"dX", "m nonesuch"}, {NULL, NULL}},
         "tuning parts of lora_backward: nonesuch is not in its space"},
        {{{"a", "m n"}, {"b", "k m"}, {NULL, NULL}},
         "tuning parts of lora_backward: m is in two parts"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct op_def op = *ks->op;
        struct tune_space sp;
        op.tune_parts = bad[i].parts;
        err[0] = '\0';
        TU_CHECK(tune_space_build(&op, &sp, err, sizeof err) < 0 &&
                     strcmp(err, bad[i].error) == 0,
                 "bad parts %zu: '%s'", i, err);
    }
    /* Knobs no part names are a part of their own, after the op's. */
    static const struct tune_part some[] = {{"dX", "n m"}, {NULL, NULL}};
    struct op_def op = *ks->op;
    struct tune_space sp;
    op.tune_parts = some;
    CU_ASSERT_EQUAL_FATAL(tune_space_build(&op, &sp, err, sizeof err), 0);
    tune_space_parts_text(&op, &sp, NULL, text, sizeof text);
    TU_CHECK(sp.n_part == 2 &&
                 strcmp(text, "dX (m n), the rest (wg_m wg_n wm wn k "
                              "wg_stages engine stages tg_rows "
                              "tg_threads tg_stages grad_threads "
                              "grad_rows x_once)") == 0,
             "%d parts: %s", sp.n_part, text);
    spec_set_free(&s);
}

/* test_tune_parts_search's fake times: a number from the knobs' text. */
static double hashed_us(const char *knobs, long rows, int run,
                        void *ctx)
{
    (void)rows;
    (void)run;
    (void)ctx;
    uint64_t h = 14695981039346656037u;
    for (const char *c = knobs; *c != '\0'; c++) {
        h = (h ^ (unsigned char)*c) * 1099511628211u;
    }
    return 100 + (double)(h % 1000) / 10;
}

/* How many knobs of KEYS (names separated by spaces) the knob texts A
 * and B differ in. */
static int texts_apart(const char *a, const char *b, const char *keys)
{
    int n = 0;
    while (*a != '\0' && *b != '\0') {
        size_t la = strcspn(a, " "), lb = strcspn(b, " ");
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(a, "="), a);
        n += list_holds(keys, key) && (la != lb || strncmp(a, b, la) != 0);
        a += la;
        a += *a == ' ';
        b += lb;
        b += *b == ' ';
    }
    return n;
}

/* The local search over lora_backward's parts: the defaults first, then
 * the parts in turn, each evaluation a change of that part's knobs alone
 * from the fastest config so far, of one knob of the space while there
 * are such (in five evaluations none is known to lose; knobs the
 * defaults work out from them may follow; times faked from the knobs'
 * text). */
static void test_tune_parts_search(void)
{
    enum { EVALS = 5 }; /* the defaults, each part, dX again */
    struct spec_set s;
    struct tunedb db;
    struct tune_options o;
    struct tune_result r;
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, PARTS_SPEC), 0);
    const struct kernel_spec *ks = find_kernel(&s, "t_backward");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
    run_options(&o, TUNE_LOCAL, EVALS, 5);
    o.rows = parts_rows(ks);
    o.fake_us = hashed_us;
    tunedb_init(&db);
    int rc = tune_in_process(ks, &o, &db, &r);
    TU_CHECK(rc == 0 && r.evaluated == EVALS && r.timed == EVALS,
             "status %d: %ld evaluated, %ld timed: %s", rc, r.evaluated,
             r.timed, r.error);
    const struct tune_entry *e = r.entry;
    char home[TUNE_TEXT], axes[TUNE_TEXT], err[256];
    struct tune_filter f;
    knobs_text(ks, home, sizeof home);
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, o.rows, &f, err,
                                             sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(f.sp.n_part, 3);
    TU_CHECK(e != NULL && e->n_tried == EVALS &&
                 strcmp(e->tried[0].knobs, home) == 0 &&
                 strncmp(r.parts, "dX (", 4) == 0,
             "%d tried, the first {%s}; parts '%s'", e ? e->n_tried : -1,
             e && e->n_tried ? e->tried[0].knobs : "", r.parts);
    for (int t = 1; e != NULL && t < e->n_tried; t++) {
        int best = 0;
        for (int u = 1; u < t; u++) {
            best = e->tried[u].us < e->tried[best].us ? u : best;
        }
        const char *keys = ks->op->tune_parts[(t - 1) % 3].knobs;
        const char *mine = e->tried[t].knobs, *from = e->tried[best].knobs;
        char others[TUNE_TEXT];
        space_keys(ks, &f.sp, (t - 1) % 3, 0, others, sizeof others);
        space_keys(ks, &f.sp, -1, 1, axes, sizeof axes);
        TU_CHECK(e->tried[t].us == hashed_us(mine, RUN_ROWS, -1, NULL) &&
                     texts_differ(mine, from, keys, 1) &&
                     !texts_differ(mine, from, others, 1) &&
                     texts_apart(mine, from, axes) == 1,
                 "tried #%d {%s}: not a change of one of %s from the best "
                 "so far {%s}", t, mine, keys, from);
    }
    tune_filter_free(&f);
    tunedb_free(&db);
    spec_set_free(&s);
}

/* test_tune_local_order's fake times: the defaults (CTX, their knobs'
 * text) 50 us, any other config 100 to 200. */
static double home_fastest_us(const char *knobs, long rows, int run,
                              void *ctx)
{
    return strcmp(knobs, ctx) == 0 ? 50 : hashed_us(knobs, rows, run, NULL);
}

/* The local search over a space of one part (lora_forward's) times the
 * defaults' neighbours one knob away before any config further out:
 * with the defaults the fastest, the evaluations after them are the
 * codes of the configs that change one knob of theirs, each once, and
 * nothing else. */
static void test_tune_local_order(void)
{
    struct spec_set s;
    struct tunedb db;
    struct tune_options o;
    struct tune_result r;
    struct tune_filter f;
    char err[256], home[TUNE_TEXT];
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, SMALL_SPEC), 0);
    const struct kernel_spec *ks0 = find_kernel(&s, "t_lora");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ks0);
    /* what the tune measures: the defaults NAME.c runs at its rows */
    struct kernel_spec few, ks = *cpu_defaults_at(ks0, RUN_ROWS, &few);
    ks.measure_rows = RUN_ROWS;
    knobs_text(&ks, home, sizeof home);
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(&ks, RUN_ROWS, &f, err,
                                             sizeof err), 0);
    CU_ASSERT_FATAL(f.home >= 0 && f.sp.n_part == 1);
    /* the codes one knob from the defaults */
    char(*near)[TUNE_TEXT] = calloc((size_t)f.n_cand, TUNE_TEXT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(near);
    long n_near = 0;
    int idx[TUNE_MAX_AXES];
    for (int a = 0; a < f.sp.n_axis; a++) {
        for (int v = 0; v < f.sp.n_value[a]; v++) {
            tune_space_decode(&f.sp, f.home, idx);
            if (idx[a] == v) {
                continue;
            }
            idx[a] = v;
            long rep = f.rep[tune_space_encode(&f.sp, idx)];
            struct kernel_spec cks;
            char text[TUNE_TEXT];
            int seen = rep < 0 || rep == f.home;
            if (!seen) {
                tune_space_config(&ks, &f.sp, rep, &cks, NULL, 0);
                knobs_text(&cks, text, sizeof text);
            }
            for (long i = 0; i < n_near && !seen; i++) {
                seen = strcmp(near[i], text) == 0;
            }
            if (!seen) {
                snprintf(near[n_near++], TUNE_TEXT, "%s", text);
            }
        }
    }
    TU_CHECK(n_near >= 3 && n_near < f.n_cand,
             "%ld of %ld candidates one knob from the defaults", n_near,
             f.n_cand);
    for (unsigned long seed = 1; seed <= 2; seed++) {
        run_options(&o, TUNE_LOCAL, 1 + n_near, seed);
        o.fake_us = home_fastest_us;
        o.fake_ctx = home;
        tunedb_init(&db);
        int rc = tune_in_process(ks0, &o, &db, &r);
        const struct tune_entry *e = r.entry;
        TU_CHECK(rc == 0 && e != NULL && e->n_tried == 1 + n_near &&
                     strcmp(e->tried[0].knobs, home) == 0,
                 "seed %lu: status %d, %d tried of %ld: %s", seed, rc,
                 e ? e->n_tried : -1, 1 + n_near, r.error);
        for (int t = 1; e != NULL && t < e->n_tried; t++) {
            long i = 0;
            while (i < n_near && strcmp(near[i], e->tried[t].knobs) != 0) {
                i++;
            }
            TU_CHECK(i < n_near, "seed %lu: tried #%d {%s} is not one "
                     "knob from the defaults {%s}", seed, t,
                     e->tried[t].knobs, home);
        }
        tunedb_free(&db);
    }
    free(near);
    tune_filter_free(&f);
    spec_set_free(&s);
}

/* test_tune_crossover's fake times, by config (CTX: the knobs texts of
 * the first best, the second, the defaults): the first 10 + rows us, the
 * second 100 + rows / 5, the defaults 40 + rows * 3 / 5: the first is
 * the fastest below 75 rows, the second from 151, the defaults between;
 * with crossing_bump set, the second takes 1000 us at 400 to 450 rows. */
static int crossing_bump;

static double three_us_at(int config, long rows)
{
    double r = (double)rows;
    return config == 0   ? 10.0 + r
           : config == 1 ? (crossing_bump && rows >= 400 && rows <= 450
                                ? 1000.0
                                : 100.0 + r / 5)
                         : 40.0 + r * 3 / 5;
}

static double three_us(const char *knobs, long rows, int run, void *ctx)
{
    const char *const *text = ctx;
    (void)run;
    return three_us_at(strcmp(knobs, text[0]) == 0   ? 0
                       : strcmp(knobs, text[1]) == 0 ? 1
                                                     : 2,
                       rows);
}

/* Checks X's probes between 32 and 512 rows against three_us (the first
 * best the defaults where SAME): each a row count of the geometric grid
 * between them (neighbours a quarter apart or less), with the fakes'
 * times and winner, and X's ends as the whole grid gives them: the first
 * best as far as it won every row count from 32, the second from where
 * it won every one up to 512. */
static void check_probes(const struct tune_crossover *x, int same)
{
    long grid[TUNE_MAX_PROBES];
    enum tune_winner won[TUNE_MAX_PROBES];
    int steps = (int)ceil(log(512.0 / 32) / log(1.25)), n = 0;
    for (int k = 1; k < steps; k++) {
        long r = lround(32 * pow(512.0 / 32, (double)k / steps));
        double want[3] = {three_us_at(0, r), three_us_at(1, r),
                          three_us_at(same ? 0 : 2, r)};
        won[n] = want[1] < want[0] ? TUNE_ABOVE : TUNE_BELOW;
        won[n] = want[2] < want[won[n]] ? TUNE_DEFAULTS : won[n];
        grid[n++] = r;
    }
    long upto = 32, from = 512;
    for (int i = 0; i < n && won[i] == TUNE_BELOW; i++) {
        upto = grid[i];
    }
    for (int i = n - 1; i >= 0 && won[i] == TUNE_ABOVE && grid[i] > upto;
         i--) {
        from = grid[i];
    }
    for (int i = 0; i < x->n; i++) {
        const struct tune_probe *p = &x->probe[i];
        int at = 0;
        while (at < n && grid[at] != p->rows) {
            at++;
        }
        TU_CHECK(at < n && p->below_us == three_us_at(0, p->rows) &&
                     p->above_us == three_us_at(1, p->rows) &&
                     p->defaults_us == three_us_at(same ? 0 : 2, p->rows) &&
                     p->winner == won[at] && p->codes == (same ? 2 : 3),
                 "probe %d at %ld rows (%s the grid): %.1f, %.1f, %.1f us, "
                 "winner %d of %d codes", i, p->rows, at < n ? "on" : "off",
                 p->below_us, p->above_us, p->defaults_us, (int)p->winner,
                 p->codes);
    }
    TU_CHECK(x->n <= n && x->upto == upto && x->from == from,
             "%d probes of a grid of %d; ends %ld and %ld, by the grid %ld "
             "and %ld", x->n, n, x->upto, x->from, upto, from);
}

/* Where a ladder's neighbours give way is found by probes at a grid of
 * rows between their row counts (from each end inward, as far as each
 * best stays the fastest), both bests and the defaults built, checked
 * and timed there: with times where the defaults win between 75 and 150
 * rows, the first best runs up to within a quarter below 75 rows and the
 * second from within a quarter above 150, and the rows between are not
 * all probed. Where the second is
 * slow inside its range (a probe at 400-450 rows) it runs only from its
 * own row count; where the first best is the defaults, their code is
 * timed once and the two meet (at 112 rows). */
static void test_tune_crossover(void)
{
    struct spec_set s;
    struct tune_options o;
    struct tune_filter f;
    struct tune_crossover x;
    char err[256], text[3][TUNE_TEXT];
    const struct rt *rt = device();
    if (rt == NULL) {
        return;
    }
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, SMALL_SPEC), 0);
    const struct kernel_spec *ks = find_kernel(&s, "t_lora");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, RUN_ROWS, &f, err,
                                             sizeof err), 0);
    knobs_text(ks, text[2], sizeof text[2]);
    int found = 0;
    for (long i = 0; i < f.n_cand && found < 2; i++) {
        struct kernel_spec cks;
        tune_space_config(ks, &f.sp, f.cand[i], &cks, NULL, 0);
        knobs_text(&cks, text[found], sizeof text[found]);
        found += strcmp(text[found], text[2]) != 0;
    }
    tune_filter_free(&f);
    CU_ASSERT_FATAL(found == 2);
    const char *ctx[3] = {text[0], text[1], text[2]};
    tune_options_init(&o);
    o.reps = 2;
    o.fake_us = three_us;
    o.fake_ctx = ctx;
    crossing_bump = 0;
    int rc = tune_crossover(rt, &dev_naive, ks, &o, text[0], text[1], 32,
                            512, &x);
    TU_CHECK(rc == 0 && x.upto >= 60 && x.upto <= 75 && x.from > 150 &&
                 x.from <= 188 && x.n >= 4 && x.n < 12,
             "crossovers of 32 and 512 rows at 75 and 150: status %d (%s), "
             "the first up to %ld rows, the second from %ld, after %d "
             "probes", rc, x.error, x.upto, x.from, x.n);
    check_probes(&x, 0);

    crossing_bump = 1;
    rc = tune_crossover(rt, &dev_naive, ks, &o, text[0], text[1], 32, 512,
                        &x);
    TU_CHECK(rc == 0 && x.upto >= 60 && x.upto <= 75 && x.from == 512,
             "crossovers with the second best slow at 400-450 rows: status "
             "%d (%s), the first up to %ld rows, the second from %ld", rc,
             x.error, x.upto, x.from);
    check_probes(&x, 0);
    crossing_bump = 0;

    /* The first best the defaults: two codes a probe, one meeting. */
    ctx[0] = text[2];
    rc = tune_crossover(rt, &dev_naive, ks, &o, text[2], text[1], 32, 512,
                        &x);
    TU_CHECK(rc == 0 && x.upto >= 90 && x.upto < 113 && x.from > 112 &&
                 x.from <= 141,
             "crossover of the defaults and a best at 112 rows: status %d "
             "(%s), up to %ld rows, from %ld, after %d probes", rc, x.error,
             x.upto, x.from, x.n);
    check_probes(&x, 1);

    /* A config that does not fit refuses the first probe, with why. */
    rc = tune_crossover(rt, &dev_naive, ks, &o, text[0], "m=7 speed=9", 32,
                        512, &x);
    TU_CHECK(rc == -1 && x.n == 0 && strstr(x.error, "do not fit") != NULL,
             "crossover against a config that does not fit: status %d, %d "
             "probes: %s", rc, x.n, x.error);
    spec_set_free(&s);
}

/* test_tune_parts_cost's fake times: 100 us, but 300 for a config
 * holding the knob value CTX ("m=64"). */
static double one_slow_value_us(const char *knobs, long rows, int run,
                                void *ctx)
{
    (void)rows;
    char padded[TUNE_TEXT + 2], key[64];
    (void)run;
    snprintf(padded, sizeof padded, " %s ", knobs);
    snprintf(key, sizeof key, " %s ", (const char *)ctx);
    return strstr(padded, key) != NULL ? 300 : 100;
}

/* The parts' search puts a value that ran slow where it alone changed
 * after the values not known to lose: with every config at 100 us but
 * those of one value of m at 300 (the defaults stay the best), dX's
 * candidates are tried one knob apart first, that value's among them,
 * then those without it; the others holding it come last. A budget of
 * one dX candidate more than there are without it takes the value
 * once. (lora_backward with a space of its own, two parts of a few
 * values, so that a PoCL run takes seconds.) */
static void test_tune_parts_cost(void)
{
    static const struct tune_axis axes[] = {
        {"m", "32 64 128"}, {"wm", "4 8 16"}, {"grad_threads", "32 64"},
        {NULL, NULL}};
    static const struct tune_part parts[] = {
        {"dX", "m wm"}, {"dA and dB", "grad_threads"}, {NULL, NULL}};
    struct spec_set s;
    struct tunedb db;
    struct tune_options o;
    struct tune_result r;
    struct tune_filter f;
    char err[256], bad[32] = "";
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, PARTS_SPEC), 0);
    const struct kernel_spec *found = find_kernel(&s, "t_backward");
    CU_ASSERT_PTR_NOT_NULL_FATAL(found);
    struct op_def op = *found->op;
    struct kernel_spec mine = *found;
    const struct kernel_spec *ks = &mine;
    op.tune_space = axes;
    op.tune_parts = parts;
    mine.op = &op;
    CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, parts_rows(ks), &f, err,
                                             sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(f.sp.n_part, 2);
    /* the value of m other than the defaults' most of dX's candidates
     * around them hold */
    long n_part[2], with_bad = 0, *cand[2];
    for (int p = 0; p < 2; p++) {
        n_part[p] = tune_part_candidates(&f, f.home, p, &cand[p]);
    }
    int m = op_knob_index(ks->op, "m");
    for (int v = 32; v <= 128; v *= 2) {
        long holding = 0;
        for (long i = 0; i < n_part[0]; i++) {
            struct kernel_spec cks;
            tune_space_config(ks, &f.sp, cand[0][i], &cks, NULL, 0);
            holding += cks.knob[m].num == v;
        }
        if (holding > with_bad && ks->knob[m].num != v) {
            with_bad = holding;
            snprintf(bad, sizeof bad, "m=%d", v);
        }
    }
    for (int p = 0; p < 2; p++) {
        free(cand[p]);
    }
    tune_filter_free(&f);
    TU_CHECK(with_bad >= 2 && n_part[0] - with_bad >= 1,
             "dX: %ld candidates, %ld of them with %s", n_part[0], with_bad,
             bad);
    long rounds = n_part[0] - with_bad + 1;
    long evals = 1 + rounds + (n_part[1] < rounds ? n_part[1] : rounds);
    run_options(&o, TUNE_LOCAL, evals, 5);
    o.rows = parts_rows(ks);
    o.fake_us = one_slow_value_us;
    o.fake_ctx = bad;
    tunedb_init(&db);
    int rc = tune_in_process(ks, &o, &db, &r);
    TU_CHECK(rc == 0 && r.evaluated == evals, "status %d: %ld of %ld "
             "evaluated: %s", rc, r.evaluated, evals, r.error);
    const struct tune_entry *e = r.entry;
    int holding = 0;
    for (int t = 0; e != NULL && t < e->n_tried; t++) {
        holding += one_slow_value_us(e->tried[t].knobs, RUN_ROWS, 0, bad) > 100;
    }
    TU_CHECK(e != NULL && holding == 1, "%d of %d tried configs hold %s "
             "(%ld dX candidates, %ld with it)", holding,
             e ? e->n_tried : -1, bad, n_part[0], with_bad);
    tunedb_free(&db);
    spec_set_free(&s);
}

/* The limits of a search: by default a quarter of the candidates
 * (rounded up) for local and random search and all of them for
 * exhaustive, never more than there are; a budget stops it after the
 * evaluation under way, and so does the stop flag, before the first. */
static void test_tune_limits(void)
{
    struct spec_set s;
    struct tunedb db;
    struct tune_options o;
    struct tune_result r;
    static volatile sig_atomic_t stop = 1;
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, SMALL_SPEC), 0);
    const struct kernel_spec *ks = find_kernel(&s, "t_lora");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
    char *cand = NULL;
    long n_valid, n_cand = tune_candidates(ks, RUN_ROWS, &cand, &n_valid);
    free(cand);
    CU_ASSERT_FATAL(n_cand > 4);
    tunedb_init(&db);

    run_options(&o, TUNE_LOCAL, 0, 1);
    o.budget_s = 0.001;
    int rc = tune_in_process(ks, &o, &db, &r);
    TU_CHECK(r.searched && r.max_evals == (n_cand + 3) / 4 &&
                 r.evaluated <= 1 && r.evaluated == r.timed &&
                 (rc == 0) == (r.evaluated == 1),
             "local, 1 ms: status %d, %ld of %ld allowed, %ld evaluated, "
             "%ld timed", rc, r.max_evals, n_cand, r.evaluated, r.timed);
    TU_CHECK(strcmp(r.stopped, "time budget") == 0 && r.entry != NULL &&
                 strcmp(r.entry->stopped, "time budget") == 0 &&
                 r.entry->searched == r.evaluated &&
                 r.entry->candidates == n_cand,
             "local, 1 ms: stopped '%s', the entry's '%s', searched %ld of "
             "%ld", r.stopped, r.entry ? r.entry->stopped : "-",
             r.entry ? r.entry->searched : -1,
             r.entry ? r.entry->candidates : -1);

    run_options(&o, TUNE_EXHAUSTIVE, 0, 1);
    o.stop = &stop;
    rc = tune_in_process(ks, &o, &db, &r);
    TU_CHECK(rc == 1 && r.searched && r.max_evals == n_cand &&
                 r.evaluated == 0 && r.best < 0 && r.default_us > 0,
             "exhaustive, stopped: status %d, %ld of %ld allowed, %ld "
             "evaluated", rc, r.max_evals, n_cand, r.evaluated);
    TU_CHECK(strcmp(r.stopped, "interrupted") == 0 && r.retimed == 0,
             "exhaustive, stopped: stopped '%s', re-timed %d", r.stopped,
             r.retimed);
    run_options(&o, TUNE_RANDOM, 1000, 1);
    o.stop = &stop;
    rc = tune_in_process(ks, &o, &db, &r);
    TU_CHECK(rc == 1 && r.max_evals == n_cand && r.evaluated == 0,
             "random, 1000 asked, stopped: %ld of %ld allowed, %ld "
             "evaluated", r.max_evals, n_cand, r.evaluated);
    TU_CHECK(db.n == 1 && db.entry[0].n_tried <= 1,
             "%d entries, %d tried", db.n, db.n ? db.entry[0].n_tried : -1);
    tunedb_free(&db);
    spec_set_free(&s);
}

/* The knobs of kernel NAME's best line in OUT (the words of the lines
 * after it indented by 4 spaces, joined by one space) into KNOBS; returns
 * where the line after them starts, or NULL when there is no best line. */
static const char *best_lines(const char *out, const char *name,
                              char *knobs, size_t size)
{
    char start[160];
    snprintf(start, sizeof start, "\n%s: ", name);
    const char *p = strstr(out, start);
    p = p != NULL ? strstr(p, "\n  best") : NULL;
    knobs[0] = '\0';
    if (p == NULL || (p = strchr(p + 1, '\n')) == NULL) {
        return NULL;
    }
    p++;
    while (starts_with(p, "    ")) {
        size_t len = strcspn(p + 4, "\n"), have = strlen(knobs);
        snprintf(knobs + have, size - have, "%s%.*s", have ? " " : "",
                 (int)len, p + 4);
        p += 4 + len + (p[4 + len] == '\n');
    }
    return p;
}

/* OUT with its wrapped lines joined again (a line break before 4 spaces:
 * one space); caller frees. */
static char *unwrapped(const char *out)
{
    char *flat = malloc(strlen(out) + 1), *w = flat;
    for (const char *p = out; flat != NULL && *p != '\0'; p++) {
        if (starts_with(p, "\n    ")) {
            *w++ = ' ';
            p += 4;
        } else {
            *w++ = *p;
        }
    }
    if (w != NULL) {
        *w = '\0';
    }
    return flat;
}

/* Every line of OUT indented (a kernel's lines under its first) is at most
 * MAX characters: long reasons and knob lists are wrapped. */
static void check_line_widths(const char *out, int max)
{
    for (const char *l = out; *l != '\0';) {
        int len = (int)strcspn(l, "\n");
        TU_CHECK(l[0] != ' ' || len <= max,
                 "a line of %d characters (at most %d):\n%.*s", len, max,
                 len, l);
        l += len + (l[len] == '\n');
    }
}

/* The command: what it prints (the device, for each kernel the filter's
 * line, the evaluated line, the best and the defaults), the database and
 * the plot it writes; then --kernel, resuming from that database. */
static void test_tune_cli(void)
{
    char db_path[4096], svg_path[4096], line[4200];
    char *out, *err;
    struct spec_set s;
    struct tunedb db;
    tmp_path(db_path, sizeof db_path, "cli.yaml");
    tmp_path(svg_path, sizeof svg_path, "cli.svg");
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, SMALL_SPEC), 0);
#define CLI_RUN "tune " SMALL_SPEC " --rows 64 --strategy random " \
                "--max-evals 2 --reps 2 --seed 3"
    int rc = specl(&out, &err, CLI_RUN " --db '%s' --plot '%s'", db_path,
                   svg_path);
    TU_CHECK(rc == 0, "specl %s: exit %d\n%s%s", CLI_RUN, rc, out, err);
    snprintf(line, sizeof line, "database %s\n", db_path);
    TU_CHECK(starts_with(out, "device: ") && strstr(out, line) != NULL,
             "first line: %.*s", (int)strcspn(out, "\n"), out);
    TU_CHECK(load_db(&db, db_path) == 0 && db.n == s.n_kernel,
             "%s: %d entries", db_path, db.n);
    char *flat = unwrapped(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(flat);
    for (int k = 0; k < s.n_kernel; k++) {
        const struct kernel_spec *ks = &s.kernel[k];
        const struct tune_entry *e = entry_for(&db, ks);
        struct tune_filter f;
        char shape[TUNE_TEXT], msg[256];
        CU_ASSERT_EQUAL_FATAL(tune_filter_run_at(ks, 64, &f, msg,
                                                 sizeof msg),
                              0);
        tune_shape_text(ks, shape, sizeof shape);
        snprintf(line, sizeof line, "%s: %s %s, rows 64: "
                 "%ld configs, %ld valid, %ld distinct",
                 ks->name, ks->op->name, shape, f.sp.n_config, f.n_valid,
                 f.n_cand);
        TU_CHECK(has_line(out, line), "expected the line\n%s\nin\n%s", line,
                 out);
        /* A line per kind of reason, its first instance with its digits. */
        for (int i = 0; i < f.why.n_kinds; i++) {
            char kind[128];
            tune_reason_kind(f.why.example[i], kind, sizeof kind);
            TU_CHECK(strcmp(kind, f.why.kind[i]) == 0 &&
                         strchr(f.why.example[i], '#') == NULL,
                     "kind '%s', its example '%s'", f.why.kind[i],
                     f.why.example[i]);
            snprintf(line, sizeof line, "  %ld invalid%s: %s",
                     f.why.count[i], f.why.count[i] > 1 ? ", the first" : "",
                     f.why.example[i]);
            TU_CHECK(has_line(flat, line), "expected the line\n%s\nin\n%s",
                     line, out);
        }
        TU_CHECK(f.why.n_kinds == 0 || strstr(out, "# ") == NULL,
                 "a reason with its digits masked:\n%s", out);
        snprintf(line, sizeof line, "  evaluated 2 of %ld distinct (%.0f%%)"
                 ": 2 built, 2 verified, 2 timed, 0 from the database",
                 f.n_cand, 200.0 / f.n_cand);
        TU_CHECK(has_line(out, line), "expected the line\n%s\nin\n%s", line,
                 out);
        /* Where a candidate's seconds went, four of them, after it. */
        const char *at = strstr(out, line);
        double sec[4] = {-1, -1, -1, -1};
        at = at != NULL ? strstr(at, "\n  seconds a candidate: ") : NULL;
        TU_CHECK(at != NULL &&
                     sscanf(at, "\n  seconds a candidate: %lf NAME.c emitted "
                                "and compiled, %lf program built, %lf "
                                "checked, %lf timed",
                            &sec[0], &sec[1], &sec[2], &sec[3]) == 4 &&
                     sec[0] > 0 && sec[1] >= 0 && sec[2] >= 0 && sec[3] >= 0,
                 "no line of a candidate's seconds after the count in\n%s",
                 out);
        if (e != NULL) {
            /* The coverage line; the best line, its knobs wrapped below
             * it, then the defaults' time and the ratio back to back, or
             * that the best is the defaults (kept back to back or not). */
            char home[TUNE_TEXT], knobs[TUNE_TEXT];
            struct kernel_spec hks;
            tune_space_config(ks, &f.sp, f.home, &hks, NULL, 0);
            knobs_text(&hks, home, sizeof home);
            snprintf(line, sizeof line, "  incomplete: searched 2 of %ld "
                     "candidates (--max-evals 2 reached)", f.n_cand);
            TU_CHECK(has_line(out, line), "expected the line\n%s\nin\n%s",
                     line, out);
            const char *best = best_lines(out, ks->name, knobs,
                                          sizeof knobs);
            TU_CHECK(e->n_tried == 2 && best != NULL &&
                         strcmp(knobs, e->best) == 0,
                     "%s: %d tried; best line with knobs '%s', stored '%s'"
                     "\n%s", ks->name, e->n_tried, knobs, e->best, out);
            int is_home = strcmp(e->best, home) == 0;
            int said = best != NULL &&
                       (is_home ? starts_with(best, "  the best is the op "
                                                    "defaults\n") ||
                                      strstr(out, "  best: the op defaults, ")
                                          != NULL
                                : starts_with(best, "  defaults ") &&
                                      strstr(best, "x, back to back\n") !=
                                          NULL);
            TU_CHECK(said, "%s: no defaults line after the best\n%s",
                     ks->name, out);
        }
        tune_filter_free(&f);
    }
    check_line_widths(out, 100);
    free(flat);
    tunedb_free(&db);
    free(out);
    free(err);
    /* Several kernels: a plot each, named after it. */
    for (int k = 0; k < s.n_kernel; k++) {
        char name[128];
        snprintf(name, sizeof name, "cli-%s.svg", s.kernel[k].name);
        tmp_path(svg_path, sizeof svg_path, name);
        char *svg = tu_read(svg_path, NULL);
        TU_CHECK(svg != NULL && starts_with(svg, "<svg") &&
                     strstr(svg, s.kernel[k].name) != NULL,
                 "no plot %s", svg_path);
        free(svg);
    }

    /* One kernel again: all from the database. */
    rc = specl(&out, &err, CLI_RUN " --kernel t_softmax --db '%s'", db_path);
    TU_CHECK(rc == 0 && strstr(out, "t_lora") == NULL &&
                 strstr(out, "\nt_softmax: ") != NULL &&
                 strstr(out, ": 0 built, 0 verified, 0 timed, 2 from the "
                        "database\n") != NULL,
             "--kernel t_softmax, resumed: exit %d\n%s%s", rc, out, err);
    free(out);
    free(err);

    /* A search its time budget ends says so, and so does its entry. */
    tmp_path(db_path, sizeof db_path, "budget.yaml");
    rc = specl(&out, &err, "tune " SMALL_SPEC " --kernel t_softmax --rows 8 "
               "--strategy random --reps 2 --budget 0.001 --db '%s'",
               db_path);
    char *saved = tu_read(db_path, NULL);
    TU_CHECK(rc == 0 && strstr(out, "\n  incomplete: searched 1 of ") !=
                         NULL &&
                 strstr(out, " candidates (the --budget of 0.001 s ran "
                             "out)\n") != NULL &&
                 saved != NULL && strstr(saved, "\n  searched: 1\n") &&
                 strstr(saved, "\n  complete: false\n  stopped: \"time "
                               "budget\"\n") != NULL,
             "--budget 0.001: exit %d\n%s%s\n%s", rc, out, err,
             saved ? saved : "(no database)");
    free(saved);
    free(out);
    free(err);
    spec_set_free(&s);
#undef CLI_RUN
}

static void test_tune_bad_options(void)
{
    static const struct {
        const char *args;
        int status;
        const char *message;
    } cases[] = {
        {"tune " SMALL_SPEC " --strategy fastest", 2,
         "--strategy must be exhaustive, random or local (got fastest)"},
        {"tune " SMALL_SPEC " --max-evals 0", 2,
         "specl tune: error: --max-evals needs a whole number in [1, "
         "10000000], got '0'\nTry 'specl tune --help'.\n"},
        {"tune " SMALL_SPEC " --max-evals", 2,
         "option '--max-evals' needs a value"},
        {"tune " SMALL_SPEC " --max-evals 2x", 2, "got '2x'"},
        {"tune " SMALL_SPEC " --reps 0", 2, "--reps needs a whole number"},
        {"tune " SMALL_SPEC " --rows -1", 2, "--rows needs a whole number"},
        {"tune " SMALL_SPEC " --budget 0", 2, "--budget needs a number"},
        {"tune " SMALL_SPEC " --frobnicate", 2,
         "specl tune: error: unknown option '--frobnicate'"},
        {"tune " SMALL_SPEC " --db", 2, "option '--db' needs a value"},
        {"tune --rows 8 --strategy random", 2, "no spec files given"},
        {"tune", 2, "no spec files given"},
        {"tune tests/tune/no_such_spec.yaml", 1, "no_such_spec.yaml"},
        {"tune " SMALL_SPEC " --kernel no_such_kernel --db /nonexistent/x", 1,
         "no kernel named 'no_such_kernel' in the specs; they have: "
         "t_lora, t_softmax\n"},
        {"tune " SMALL_SPEC " --db " DB_BAD_ENTRY, 1,
         DB_BAD_ENTRY ":9:11: error: rows must be an integer (got 'many')"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        int rc = specl(&out, &err, "%s", cases[i].args);
        TU_CHECK(rc == cases[i].status, "specl %s: exit %d, expected %d\n%s",
                 cases[i].args, rc, cases[i].status, err);
        TU_CHECK(strstr(err, cases[i].message) != NULL,
                 "specl %s: no '%s' in\n%s", cases[i].args,
                 cases[i].message, err);
        TU_CHECK(strstr(out, "evaluated") == NULL, "specl %s tuned:\n%s",
                 cases[i].args, out);
        free(out);
        free(err);
    }
}

/* Two runs writing one database at once keep both their entries (saving
 * merges with the file under a lock); a database that cannot be written
 * is refused before anything is measured. */
static void test_tune_shared_db(void)
{
    char db_path[4096], out_a[4096], out_b[4096];
    tmp_path(db_path, sizeof db_path, "shared.yaml");
    tmp_path(out_a, sizeof out_a, "shared_a.txt");
    tmp_path(out_b, sizeof out_b, "shared_b.txt");
    remove(db_path);
    int rc = tu_run("(" LSAN_ENV RUN_TIMEOUT "%s tune " SMALL_SPEC
                    " --kernel t_softmax --rows 8 --strategy random "
                    "--max-evals 3 --reps 2 --db '%s' >'%s' 2>&1 & a=$!; "
                    LSAN_ENV RUN_TIMEOUT "%s tune " SMALL_SPEC
                    " --kernel t_lora --rows 8 --strategy random "
                    "--max-evals 3 --reps 2 --db '%s' >'%s' 2>&1 & b=$!; "
                    "wait $a && wait $b)",
                    TU_SPECL, db_path, out_a, TU_SPECL, db_path, out_b);
    char *a = tu_read(out_a, NULL), *b = tu_read(out_b, NULL);
    TU_CHECK(rc == 0, "two tunes at once: exit %d\n%s\n%s", rc,
             a ? a : "", b ? b : "");
    free(a);
    free(b);
    struct tunedb db;
    CU_ASSERT_EQUAL_FATAL(load_db(&db, db_path), 0);
    int softmax = 0, lora = 0;
    for (int i = 0; i < db.n; i++) {
        softmax += strcmp(db.entry[i].op, "softmax") == 0 &&
                   db.entry[i].n_tried == 3;
        lora += strcmp(db.entry[i].op, "lora_forward") == 0 &&
                db.entry[i].n_tried == 3;
    }
    TU_CHECK(db.n == 2 && softmax == 1 && lora == 1,
             "two tunes at once: %d entries (softmax %d, lora %d)", db.n,
             softmax, lora);
    tunedb_free(&db);
    char lock[4200];
    snprintf(lock, sizeof lock, "%s.lock", db_path);
    TU_CHECK(!file_exists(lock), "%s left behind", lock);

    char *out, *err;
    rc = specl(&out, &err, "tune " SMALL_SPEC " --kernel t_softmax --rows 8 "
               "--db /nonexistent-dir/db.yaml");
    TU_CHECK(rc == 1 && strstr(err, "cannot write the tuning database") &&
                 strstr(out, "evaluated") == NULL,
             "unwritable --db: exit %d\n%s%s", rc, out, err);
    free(out);
    free(err);
}

/* Rows past the few-rows paths of every device (lora_decode on GPUs, the
 * CPU's few-rows tiles), where the tiles run. */
#define NARROW_ROWS 4096

/* A kernel narrower than every tile the op lists (tile n >= 32 >
 * out_features 8): none of the listed configs is valid, but the space
 * takes the kernel's own knobs (tune_space_add_home), so the search runs
 * from them over the tiles that fit; the best is one of them (n 8),
 * never slower than the defaults where the two were re-timed back to
 * back (a run that timed nothing new keeps the first run's figure, which
 * a fresh timing of the defaults may beat), and the database
 * saves and loads again; `specl tune` resumes from it. */
static void test_tune_narrow(void)
{
    char db_path[4096], err_text[256];
    char *out, *err;
    struct spec_set s;
    struct tunedb db;
    struct tune_options o;
    struct tune_result r;
    tmp_path(db_path, sizeof db_path, "narrow_db.yaml");
    static const char *const spec_text =
        "kernels:\n  - {name: t_narrow, op: lora_forward, in_features: 8, "
        "out_features: 8, rank: 2}\n";
    CU_ASSERT_EQUAL_FATAL(read_spec_text(&s, "narrow.yaml", spec_text), 0);
    CU_ASSERT_EQUAL_FATAL(set_device_target(&s), 0);
    struct tune_space sp;
    CU_ASSERT_EQUAL_FATAL(tune_space_build(s.kernel[0].op, &sp, err_text,
                                           sizeof err_text), 0);
    TU_CHECK(tune_space_home(&sp, &s.kernel[0]) < 0,
             "t_narrow's own knobs are on the op's lists");
    run_options(&o, TUNE_LOCAL, 0, 1);
    o.rows = NARROW_ROWS;
    tunedb_init(&db);
    for (int run = 0; run < 2; run++) {
        int rc = tune_in_process(&s.kernel[0], &o, &db, &r);
        TU_CHECK(rc == 0 && r.searched && r.error[0] == '\0' &&
                     r.n_valid > 0 && r.n_cand > 0 && r.evaluated > 0 &&
                     r.best >= 0 && strstr(r.best_knobs, " n=8 ") != NULL &&
                     (run > 0 || r.retimed) &&
                     (!r.retimed || r.best_us <= r.default_us),
                 "run %d: status %d, %ld valid, %ld evaluated, best %ld "
                 "{%s} %g us, defaults %g us: %s", run + 1, rc, r.n_valid,
                 r.evaluated, r.best, r.best_knobs, r.best_us,
                 r.default_us, r.error);
        CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, db_path, err_text,
                                          sizeof err_text), 0);
        tunedb_free(&db);
        int errors = load_db(&db, db_path);
        TU_CHECK(errors == 0 && db.n == 1 && db.entry[0].n_tried > 0 &&
                     strstr(db.entry[0].best, " n=8 ") != NULL,
                 "run %d: %d errors, %d entries", run + 1, errors, db.n);
    }
    tunedb_free(&db);
    spec_set_free(&s);

    char spec_path[4096];
    tmp_path(spec_path, sizeof spec_path, "narrow.yaml");
    write_text(spec_path, spec_text);
    int rc = specl(&out, &err, "tune '%s' --rows %d --reps 2 --db '%s'",
                   spec_path, NARROW_ROWS, db_path);
    /* n=8 among them (a GPU's defaults take a wn of their own too) */
    static const char own_lead[] = "  its own values beside the op's lists: ";
    const char *own = out != NULL ? strstr(out, own_lead) : NULL;
    char own_line[256] = "";
    if (own != NULL) {
        own += strlen(own_lead);
        snprintf(own_line, sizeof own_line, "%.*s", (int)strcspn(own, "\n"),
                 own);
    }
    TU_CHECK(rc == 0 && strstr(out, " invalid") != NULL &&
                 list_holds(own_line, "n=8") &&
                 strstr(out, "no config ran correctly") == NULL &&
                 strstr(err, "error") == NULL,
             "specl tune: exit %d\n%s%s", rc, out, err);
    free(out);
    free(err);
    TU_CHECK(load_db(&db, db_path) == 0 && db.n == 1 &&
                 db.entry[0].n_tried > 0 && db.entry[0].best[0] != '\0',
             "specl tune: %d entries", db.n);
    tunedb_free(&db);
}

/* ---- 3. resume ---------------------------------------------------------- */

/* Tunes every kernel of S named ONLY (NULL: all) as the random run does,
 * with MAX evaluations, into DB; checks each run: EVALS evaluations of
 * which TIMED timed. */
static void resume_run(const struct spec_set *s, const char *only, long max,
                       struct tunedb *db, long timed, const char *what)
{
    struct tune_options o;
    run_options(&o, TUNE_RANDOM, max, RANDOM_SEED);
    for (int k = 0; k < s->n_kernel; k++) {
        const struct kernel_spec *ks = &s->kernel[k];
        struct tune_result r;
        if (only != NULL && strcmp(ks->name, only) != 0) {
            continue;
        }
        int rc = tune_in_process(ks, &o, db, &r);
        TU_CHECK(rc == 0, "%s: %s failed", what, ks->name);
        check_result(ks, &r, rc, max, timed);
    }
}

static void test_tune_resume(void)
{
    char db_path[4096];
    struct spec_set s;
    struct tunedb before, after;
    if (!tuned_ok) {
        CU_FAIL("the random tuning run failed; nothing to resume");
        return;
    }
    tmp_path(db_path, sizeof db_path, "random.yaml");
    CU_ASSERT_EQUAL_FATAL(read_spec_for_device(&s, SMALL_SPEC), 0);
    CU_ASSERT_EQUAL_FATAL(load_db(&before, db_path), 0);

    /* The same run again: everything from the database, nothing changed. */
    CU_ASSERT_EQUAL_FATAL(load_db(&after, db_path), 0);
    resume_run(&s, NULL, RANDOM_EVALS, &after, 0, "resume");
    TU_CHECK(after.n == before.n, "resume: %d entries, were %d", after.n,
             before.n);
    for (int i = 0; i < before.n && i < after.n; i++) {
        const struct tune_entry *b = &before.entry[i], *a = &after.entry[i];
        TU_CHECK(strcmp(a->best, b->best) == 0 && a->n_tried == b->n_tried &&
                     fabs(a->best_us - b->best_us) < 1e-9,
                 "resume changed %s: best %s (%g us, %d tried), was %s (%g "
                 "us, %d tried)", b->op, a->best, a->best_us, a->n_tried,
                 b->best, b->best_us, b->n_tried);
    }

    /* A larger budget for one kernel: the same first four from the
     * database, two more timed; the other kernel's entry kept. */
    resume_run(&s, "t_softmax", 6, &after, 2, "resume +2");
    const struct kernel_spec *sm = find_kernel(&s, "t_softmax");
    const struct kernel_spec *lora = find_kernel(&s, "t_lora");
    const struct tune_entry *e = entry_for(&after, sm);
    const struct tune_entry *el = entry_for(&after, lora);
    const struct tune_entry *bl = entry_for(&before, lora);
    TU_CHECK(after.n == before.n && e != NULL && e->n_tried == 6,
             "resume +2: %d entries, softmax %d tried", after.n,
             e ? e->n_tried : -1);
    TU_CHECK(el != NULL && bl != NULL && el->n_tried == bl->n_tried &&
                 strcmp(el->best, bl->best) == 0,
             "resume +2 changed t_lora's entry");
    if (e != NULL) {
        const struct tune_entry *be = entry_for(&before, sm);
        for (int t = 0; be != NULL && t < be->n_tried; t++) {
            TU_CHECK(strcmp(e->tried[t].knobs, be->tried[t].knobs) == 0 &&
                         e->tried[t].us == be->tried[t].us,
                     "resume +2 changed tried #%d", t);
        }
        check_entry(sm, e, 6);
    }
    tunedb_free(&after);

    /* Records of other code are timed again: the best's, made stale and
     * far faster than anything runs, and one without a code (as older
     * files have them); the others come from the database. The re-timed
     * records take the code they measured, and the stale best's time no
     * longer counts. */
    CU_ASSERT_EQUAL_FATAL(load_db(&after, db_path), 0);
    struct tune_entry *se = (struct tune_entry *)entry_for(&after, sm);
    int bi = -1, oi = -1;
    for (int t = 0; se != NULL && t < se->n_tried; t++) {
        if (se->tried[t].us <= 0) {
            continue;
        }
        if (strcmp(se->tried[t].knobs, se->best) == 0) {
            bi = t;
        } else if (oi < 0) {
            oi = t;
        }
    }
    TU_CHECK(bi >= 0 && oi >= 0, "no timed best and other record to stale");
    if (bi >= 0 && oi >= 0) {
        char best_code[17], other_code[17];
        snprintf(best_code, sizeof best_code, "%s", se->tried[bi].code);
        snprintf(other_code, sizeof other_code, "%s", se->tried[oi].code);
        snprintf(se->tried[bi].code, sizeof se->tried[bi].code, "%s",
                 strcmp(best_code, "0000000000000000") != 0
                     ? "0000000000000000"
                     : "1111111111111111");
        se->tried[bi].us = 0.001;
        se->best_us = 0.001;
        se->retimed_reps = 0; /* as an older file has it */
        se->best_p10_us = se->best_p90_us = 0;
        se->tried[oi].code[0] = '\0';
        /* As the file on disk holds it, for the merge a save makes. */
        char stale_path[4096], err[256];
        tmp_path(stale_path, sizeof stale_path, "stale.yaml");
        CU_ASSERT_EQUAL_FATAL(tunedb_save(&after, stale_path, err,
                                          sizeof err), 0);
        struct tune_options o;
        struct tune_result r;
        run_options(&o, TUNE_RANDOM, RANDOM_EVALS, RANDOM_SEED);
        int rc = tune_in_process(sm, &o, &after, &r);
        TU_CHECK(rc == 0 && r.stale == 2 && r.timed == 2 &&
                     r.from_db == RANDOM_EVALS - 2,
                 "resume (stale): %ld timed again of %ld timed, %ld from "
                 "the database", r.stale, r.timed, r.from_db);
        se = (struct tune_entry *)entry_for(&after, sm);
        const struct tune_record *rb =
            se ? tune_entry_tried(se, se->best) : NULL;
        TU_CHECK(se != NULL && strcmp(se->tried[bi].code, best_code) == 0 &&
                     strcmp(se->tried[oi].code, other_code) == 0 &&
                     se->tried[bi].fresh && se->tried[oi].fresh,
                 "resume (stale): re-timed records with code '%s' / '%s', "
                 "expected '%s' / '%s'", se ? se->tried[bi].code : "-",
                 se ? se->tried[oi].code : "-", best_code, other_code);
        TU_CHECK(se != NULL && se->best_us > 0.001 && rb != NULL &&
                     se->retimed_reps == RUN_REPS && r.retimed == RUN_REPS &&
                     se->best_us == r.best_us,
                 "resume (stale): the stale best's time stood: %g us",
                 se ? se->best_us : -1);
        /* Saved over the file: the run's records and best win. */
        struct tunedb disk;
        CU_ASSERT_EQUAL_FATAL(load_db(&disk, stale_path), 0);
        tunedb_merge(&disk, &after);
        const struct tune_entry *de = entry_for(&disk, sm);
        const struct tune_record *db_rec =
            de ? tune_entry_tried(de, de->best) : NULL;
        TU_CHECK(de != NULL && se != NULL && db_rec != NULL &&
                     strcmp(de->best, se->best) == 0 &&
                     de->best_us == se->best_us && db_rec->us == rb->us &&
                     strcmp(de->tried[bi].code, best_code) == 0 &&
                     strcmp(de->tried[oi].code, other_code) == 0,
                 "resume (stale) saved over the file: best %s (%g us), "
                 "codes '%s' / '%s'", de ? de->best : "-",
                 de ? de->best_us : -1, de ? de->tried[bi].code : "-",
                 de ? de->tried[oi].code : "-");
        tunedb_free(&disk);
    }
    tunedb_free(&after);

    /* Ties: every softmax record as fast as the best, which was tried
     * last, saved and loaded again. A resume finds the first of them, and
     * keeps the best. */
    char tie_path[4096], err_text[256];
    const struct tune_entry *be = entry_for(&before, sm);
    struct tune_entry *te = (struct tune_entry *)be;
    tmp_path(tie_path, sizeof tie_path, "tie.yaml");
    TU_CHECK(te != NULL && te->n_tried == RANDOM_EVALS, "no softmax entry");
    if (te != NULL && te->n_tried == RANDOM_EVALS) {
        for (int t = 0; t < te->n_tried; t++) {
            te->tried[t].us = 5.0;
        }
        snprintf(te->best, sizeof te->best, "%s",
                 te->tried[te->n_tried - 1].knobs);
        te->best_us = 5.0;
        te->retimed_reps = 0;
        te->best_p10_us = te->best_p90_us = 0;
        CU_ASSERT_EQUAL_FATAL(tunedb_save(&before, tie_path, err_text,
                                          sizeof err_text), 0);
        CU_ASSERT_EQUAL_FATAL(load_db(&after, tie_path), 0);
        resume_run(&s, "t_softmax", RANDOM_EVALS, &after, 0,
                   "resume (ties)");
        e = entry_for(&after, sm);
        TU_CHECK(e != NULL && strcmp(e->best, te->best) == 0 &&
                     e->best_us == 5.0,
                 "resume (ties) moved the best to %s (%g us), was %s",
                 e ? e->best : "-", e ? e->best_us : -1, te->best);
        tunedb_free(&after);
    }
    tunedb_free(&before);
    spec_set_free(&s);
}


/* ---- saving as it goes; stopped by signals --------------------------------- */

/* A run long enough to stop in the middle (24 distinct configs, a second
 * or more each on PoCL), of one kernel. */
#define LONG_RUN "tune " SMALL_SPEC " --kernel t_lora --rows 64 " \
                 "--strategy exhaustive --reps 2"

/* How long a stopped run may take to stop, or one to measure what the
 * test waits for, before it fails the test (a loaded machine is slow). */
#define WAIT_LIMIT_S 300.0

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Starts `ENV specl ARGS` (ENV: assignments, or "") in a process group of
 * its own, as a shell starts a job, with stdout and stderr in OUT;
 * returns its pid (specl's own: the shell execs it), or -1. */
static pid_t spawn_specl(const char *env, const char *args, const char *out)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "exec env " LSAN_ENV "%s %s %s >'%s' 2>&1",
             env, TU_SPECL, args, out);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) {
        setpgid(pid, pid); /* also here: whichever runs first */
    }
    return pid;
}

/* Waits up to WAIT_LIMIT_S for PID to end, its status in *ST; returns 0,
 * or -1 when it did not end (it is killed then). */
static int wait_child(pid_t pid, int *st)
{
    for (double waited = 0; waited < WAIT_LIMIT_S; waited += 0.05) {
        pid_t got = waitpid(pid, st, WNOHANG);
        if (got == pid) {
            return 0;
        }
        if (got < 0) {
            return -1;
        }
        sleep_s(0.05);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, st, 0);
    return -1;
}

/* The database at PATH, loaded as a run beside the tuning one would (the
 * file is replaced whole, never written in place), quietly; its number
 * of errors (0 when it does not exist yet). */
static int load_quietly(struct tunedb *db, const char *path)
{
    struct diags quiet = {.out = NULL};
    tunedb_init(db);
    return tunedb_load(db, path, 1, &quiet);
}

/* The first lora_forward entry of DB (LONG_RUN tunes t_lora alone). */
static const struct tune_entry *lora_entry(const struct tunedb *db)
{
    for (int i = 0; i < db->n; i++) {
        if (strcmp(db->entry[i].op, "lora_forward") == 0) {
            return &db->entry[i];
        }
    }
    return NULL;
}

/* Waits until the database at PATH holds N or more records of t_lora,
 * polling it while PID runs; then SEEN holds it (to free). Returns 0, or
 * -1 when PID ended first or WAIT_LIMIT_S passed. */
static int wait_for_records(pid_t pid, const char *path, int n,
                            struct tunedb *seen)
{
    for (double waited = 0; waited < WAIT_LIMIT_S; waited += 0.05) {
        const struct tune_entry *e;
        if (load_quietly(seen, path) == 0 && (e = lora_entry(seen)) != NULL &&
            e->n_tried >= n) {
            return 0;
        }
        tunedb_free(seen);
        if (waitpid(pid, NULL, WNOHANG) != 0) {
            return -1;
        }
        sleep_s(0.05);
    }
    return -1;
}

/* The number in "  evaluated N of" in OUT, or -1. */
static int evaluated_in(const char *out)
{
    const char *p = strstr(out, "\n  evaluated ");
    int n;
    return p != NULL && sscanf(p, "\n  evaluated %d of", &n) == 1 ? n : -1;
}

/* SIGKILL while tuning: the database the run saved as it measured loads
 * and holds every record seen before the kill, and a rerun resumes from
 * it, saying how many configs came from the database. */
static void test_tune_killed(void)
{
    char db_path[4096], out_path[4096];
    struct tunedb seen, after;
    tmp_path(db_path, sizeof db_path, "killed.yaml");
    tmp_path(out_path, sizeof out_path, "killed.txt");
    remove(db_path);
    char args[8192];
    snprintf(args, sizeof args, LONG_RUN " --db '%s'", db_path);
    pid_t pid = spawn_specl("", args, out_path);
    CU_ASSERT_FATAL(pid > 0);
    int got = wait_for_records(pid, db_path, 3, &seen);
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    char *out = tu_read(out_path, NULL);
    TU_CHECK(got == 0, "no 3 records saved in %s before the run ended (or "
             "%.0f s passed)\n%s", db_path, WAIT_LIMIT_S, out ? out : "");
    free(out);
    if (got != 0) {
        return;
    }
    TU_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
             "the run ended by itself (status %d) before it was killed", st);
    TU_CHECK(load_quietly(&after, db_path) == 0, "%s does not load after "
             "SIGKILL", db_path);
    const struct tune_entry *before = lora_entry(&seen);
    const struct tune_entry *e = lora_entry(&after);
    TU_CHECK(e != NULL && e->n_tried >= before->n_tried,
             "%s: %d records, %d seen before the kill", db_path,
             e ? e->n_tried : -1, before->n_tried);
    for (int t = 0; e != NULL && t < before->n_tried; t++) {
        const struct tune_record *r =
            tune_entry_tried(e, before->tried[t].knobs);
        TU_CHECK(r != NULL && r->us == before->tried[t].us,
                 "%s lost the record of %s", db_path, before->tried[t].knobs);
    }
    int saved = e != NULL ? e->n_tried : 0;
    tunedb_free(&seen);
    tunedb_free(&after);

    /* The same run resumed with one config more: the saved ones are the
     * first of its (exhaustive, so fixed) order. */
    char *err, want[128];
    int rc = specl(&out, &err, LONG_RUN " --max-evals %d --db '%s'",
                   saved + 1, db_path);
    snprintf(want, sizeof want, ", %d from the database\n", saved);
    TU_CHECK(rc == 0 && evaluated_in(out) == saved + 1 &&
                 strstr(out, want) != NULL,
             "the rerun after SIGKILL: exit %d, expected %d evaluated and "
             "'%s'\n%s%s", rc, saved + 1, want, out, err);
    TU_CHECK(load_quietly(&after, db_path) == 0 &&
                 (e = lora_entry(&after)) != NULL &&
                 e->n_tried == saved + 1 && e->best[0] != '\0',
             "after the rerun: %d records, best '%s'",
             lora_entry(&after) ? lora_entry(&after)->n_tried : -1,
             lora_entry(&after) ? lora_entry(&after)->best : "-");
    tunedb_free(&after);
    free(out);
    free(err);
}

/* Checks a run stopped by SIG (exit status ST, output OUT, database at
 * DB_PATH): 128 + SIG, the message, every config it evaluated saved (and
 * none failed: the one cut short is not recorded), a best, no lock. */
static void check_stopped(int sig, int st, const char *out,
                          const char *db_path)
{
    struct tunedb db;
    char want[4200], lock[4200];
    snprintf(want, sizeof want, "specl: tune: %s; results so far are in "
             "%s\n", sig == SIGTERM ? "terminated" : "interrupted", db_path);
    TU_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig &&
                 strstr(out, want) != NULL,
             "stopped by signal %d: status %d, expected exit %d and '%s'\n%s",
             sig, st, 128 + sig, want, out);
    int evaluated = evaluated_in(out);
    TU_CHECK(load_quietly(&db, db_path) == 0, "%s does not load", db_path);
    const struct tune_entry *e = lora_entry(&db);
    TU_CHECK(e != NULL && evaluated > 0 && e->n_tried == evaluated &&
                 e->best[0] != '\0',
             "stopped by signal %d: %d evaluated, %d records, best '%s'", sig,
             evaluated, e ? e->n_tried : -1, e ? e->best : "-");
    for (int t = 0; e != NULL && t < e->n_tried; t++) {
        TU_CHECK(strcmp(e->tried[t].status, "ok") == 0,
                 "stopped by signal %d: recorded %s as '%s'", sig,
                 e->tried[t].knobs, e->tried[t].status);
    }
    tunedb_free(&db);
    snprintf(lock, sizeof lock, "%s.lock", db_path);
    TU_CHECK(!file_exists(lock), "%s left behind", lock);
}

/* SIGTERM (kill) stops as Ctrl-C does: after the config being measured,
 * saving, with exit status 143. */
static void test_tune_sigterm(void)
{
    char db_path[4096], out_path[4096], args[8192];
    struct tunedb seen;
    tmp_path(db_path, sizeof db_path, "terminated.yaml");
    tmp_path(out_path, sizeof out_path, "terminated.txt");
    remove(db_path);
    snprintf(args, sizeof args, LONG_RUN " --db '%s'", db_path);
    pid_t pid = spawn_specl("", args, out_path);
    CU_ASSERT_FATAL(pid > 0);
    int got = wait_for_records(pid, db_path, 2, &seen);
    if (got == 0) {
        tunedb_free(&seen);
    }
    kill(pid, SIGTERM);
    int st = 0;
    int ended = wait_child(pid, &st);
    char *out = tu_read(out_path, NULL);
    TU_CHECK(got == 0 && ended == 0, "SIGTERM: %s\n%s",
             got ? "no 2 records saved before the run ended"
                 : "the run did not stop", out ? out : "");
    if (got == 0 && ended == 0) {
        check_stopped(SIGTERM, st, out ? out : "", db_path);
    }
    free(out);
}

/* Ctrl-C in a terminal sends SIGINT to the whole process group, the
 * compiler of the config being built included (while system() makes
 * specl ignore it): the run stops, its compiler's failure is not recorded
 * against the config, and the rest is saved. A compiler wrapper sends
 * SIGINT to its process group (specl's, of its own) during the fourth
 * build of t_lora (the defaults, the home config, one more, then that
 * one). */
static void test_tune_ctrl_c(void)
{
    char db_path[4096], out_path[4096], cc_path[4096], count_path[4096];
    char args[8192], env[8400], script[16384];
    tmp_path(db_path, sizeof db_path, "ctrl_c.yaml");
    tmp_path(out_path, sizeof out_path, "ctrl_c.txt");
    tmp_path(cc_path, sizeof cc_path, "ctrl_c_cc.sh");
    tmp_path(count_path, sizeof count_path, "ctrl_c_count");
    remove(db_path);
    remove(count_path);
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "case \"$*\" in *t_lora.c*)\n"
             "    n=$(($(cat '%s' 2>/dev/null || echo 0) + 1))\n"
             "    echo $n >'%s'\n"
             "    if [ $n -eq 4 ]; then kill -INT 0; sleep 5; fi;;\n"
             "esac\n"
             "exec ${CC:-cc} \"$@\"\n",
             count_path, count_path);
    write_text(cc_path, script);
    CU_ASSERT_EQUAL_FATAL(tu_run("chmod +x '%s'", cc_path), 0);
    snprintf(args, sizeof args, LONG_RUN " --max-evals 8 --db '%s'", db_path);
    snprintf(env, sizeof env, "SPECL_CC='%s'", cc_path);
    pid_t pid = spawn_specl(env, args, out_path);
    CU_ASSERT_FATAL(pid > 0);
    int st = 0;
    int ended = wait_child(pid, &st);
    char *out = tu_read(out_path, NULL);
    char *count = tu_read(count_path, NULL);
    TU_CHECK(ended == 0 && count != NULL && atoi(count) == 4,
             "Ctrl-C: %s, %s builds of t_lora\n%s",
             ended ? "the run did not end" : "ended", count ? count : "no",
             out ? out : "");
    if (ended == 0) {
        check_stopped(SIGINT, st, out ? out : "", db_path);
    }
    free(count);
    free(out);
}

/* ---- 4. merge ----------------------------------------------------------- */

static const struct tune_entry *entry_key(const struct tunedb *db,
                                          const char *driver, const char *op,
                                          long rows)
{
    for (int i = 0; i < db->n; i++) {
        const struct tune_entry *e = &db->entry[i];
        if (strcmp(e->driver, driver) == 0 && strcmp(e->op, op) == 0 &&
            e->rows == rows) {
            return e;
        }
    }
    return NULL;
}

static const char *const S64 =
    "in_features=64 out_features=64 rank=4 base=true accumulate=false";

/* DB is a.yaml merged with b.yaml; A_FIRST: a.yaml's records win where
 * both timed a config. */
static void check_merged(const struct tunedb *db, int a_first,
                         const char *what)
{
    TU_CHECK(db->n == 5, "%s: %d entries, expected 5", what, db->n);
    const struct tune_entry *shared = entry_key(db, "1.0", "lora_forward",
                                                512);
    TU_CHECK(shared != NULL, "%s: no shared entry", what);
    if (shared != NULL) {
        TU_CHECK(strcmp(shared->device, "Merge GPU") == 0 &&
                     strcmp(shared->shape, S64) == 0,
                 "%s: shared entry %s / %s", what, shared->device,
                 shared->shape);
        TU_CHECK(strcmp(shared->best, "m=128 n=64 k=16 wm=8 wn=4") == 0 &&
                     shared->best_us == 9.75 && shared->best_gbs == 51.5 &&
                     shared->best_gflops == 25.5 &&
                     strcmp(shared->version, "0.1.0") == 0,
                 "%s: best %s (%g us, %g GB/s, %s), expected b.yaml's",
                 what, shared->best, shared->best_us, shared->best_gbs,
                 shared->version);
        /* b.yaml's best, and the defaults timed with it */
        TU_CHECK(shared->default_us == 21.0, "%s: default_us %g", what,
                 shared->default_us);
        static const char *const tried[] = {
            "m=64 n=64 k=16 wm=8 wn=8", "m=64 n=32 k=8 wm=4 wn=4",
            "m=128 n=128 k=32 wm=8 wn=8", "m=128 n=64 k=16 wm=8 wn=4",
            "m=64 n=64 k=32 wm=8 wn=8"};
        TU_CHECK(shared->n_tried == 5, "%s: %d tried, expected 5", what,
                 shared->n_tried);
        for (int t = 0; t < 5; t++) {
            TU_CHECK(tune_entry_tried(shared, tried[t]) != NULL,
                     "%s: %s not tried", what, tried[t]);
        }
        const struct tune_record *both =
            tune_entry_tried(shared, "m=64 n=64 k=16 wm=8 wn=8");
        TU_CHECK(both != NULL && both->us == (a_first ? 12.5 : 13.0),
                 "%s: the config both timed has %g us", what,
                 both ? both->us : -1);
        const struct tune_record *failed =
            tune_entry_tried(shared, "m=128 n=128 k=32 wm=8 wn=8");
        TU_CHECK(failed != NULL && failed->us < 0 &&
                     strcmp(failed->status,
                            "build failed: CL_OUT_OF_RESOURCES") == 0,
                 "%s: a failed record lost its status", what);
    }
    const struct tune_entry *e = entry_key(db, "1.0", "lora_forward", 64);
    TU_CHECK(e != NULL && strcmp(e->best, "m=64 n=32 k=8 wm=4 wn=4") == 0 &&
                 e->n_tried == 1,
             "%s: a.yaml's rows 64 entry", what);
    e = entry_key(db, "2.0", "lora_forward", 512);
    TU_CHECK(e != NULL && e->best_us == 11.0 && e->n_tried == 1,
             "%s: b.yaml's driver 2.0 entry", what);
    e = entry_key(db, "1.0", "softmax", 4096);
    TU_CHECK(e != NULL && e->best_us == 8.25, "%s: a.yaml's softmax", what);
    e = entry_key(db, "1.0", "rmsnorm", 128);
    TU_CHECK(e != NULL && strcmp(e->dtype, "bf16") == 0 && e->n_tried == 2,
             "%s: b.yaml's rmsnorm", what);
}

static void test_merge_cli(void)
{
    char c[4096], d[4096];
    char *out, *err;
    struct tunedb db;
    tmp_path(c, sizeof c, "merged.yaml");
    int rc = specl(&out, &err, "db merge " DB_A " " DB_B " -o '%s'", c);
    TU_CHECK(rc == 0, "db merge: exit %d\n%s", rc, err);
    char want[4200];
    snprintf(want, sizeof want, "merged 2 files: 5 entries in %s\n", c);
    TU_CHECK(strcmp(out, want) == 0, "db merge said: %s", out);
    free(out);
    free(err);
    if (load_db(&db, c) == 0) {
        check_merged(&db, 1, "db merge a b");
    } else {
        CU_FAIL("the merged database does not load");
    }
    tunedb_free(&db);

    rc = specl(&out, &err, "db merge " DB_B " " DB_A " -o '%s'", c);
    TU_CHECK(rc == 0, "db merge b a: exit %d\n%s", rc, err);
    free(out);
    free(err);
    if (load_db(&db, c) == 0) {
        check_merged(&db, 0, "db merge b a");
    } else {
        CU_FAIL("the merged database does not load");
    }
    tunedb_free(&db);

    /* Merging a database with itself changes nothing. */
    rc = specl(&out, &err, "db merge " DB_A " " DB_A " -o '%s'", c);
    TU_CHECK(rc == 0, "db merge a a: exit %d\n%s", rc, err);
    free(out);
    free(err);
    struct tunedb a;
    if (load_db(&db, c) == 0 && load_db(&a, DB_A) == 0) {
        TU_CHECK(db.n == a.n, "a + a: %d entries, a has %d", db.n, a.n);
        for (int i = 0; i < db.n && i < a.n; i++) {
            TU_CHECK(db.entry[i].n_tried == a.entry[i].n_tried &&
                         strcmp(db.entry[i].best, a.entry[i].best) == 0,
                     "a + a: entry %d changed", i);
        }
    }
    tunedb_free(&a);
    tunedb_free(&db);

    /* Malformed inputs: file:line:col, exit 1, nothing written. */
    static const struct {
        const char *file;
        const char *message;
    } bad[] = {
        {DB_BAD_ENTRY, DB_BAD_ENTRY ":9:11: error: rows must be an integer "
                       "(got 'many')\n"},
        {DB_BAD_ENTRY, DB_BAD_ENTRY ":12:65: error: unknown key 'speed' in "
                       "a tried config\n"},
        {DB_BAD_YAML, DB_BAD_YAML ":4:14: error: malformed YAML: "},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tmp_path(d, sizeof d, "never.yaml");
        rc = specl(&out, &err, "db merge " DB_A " %s -o '%s'", bad[i].file,
                   d);
        TU_CHECK(rc == 1, "db merge %s: exit %d", bad[i].file, rc);
        TU_CHECK(strstr(err, bad[i].message) != NULL &&
                     strstr(err, "nothing written") != NULL,
                 "db merge %s: no '%s' in\n%s", bad[i].file, bad[i].message,
                 err);
        TU_CHECK(!file_exists(d), "db merge %s wrote %s", bad[i].file, d);
        free(out);
        free(err);
    }
    /* Usage errors. */
    static const char *const usage[] = {
        "db", "db split " DB_A " -o /nonexistent/x.yaml", "db merge " DB_A,
        "db merge -o /nonexistent/x.yaml",
        "db merge " DB_A " --force -o /nonexistent/x.yaml",
        "db merge " DB_A " -o"};
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        rc = specl(NULL, NULL, "%s", usage[i]);
        TU_CHECK(rc == 2, "specl %s: exit %d, expected 2", usage[i], rc);
    }
    rc = specl(NULL, &err, "db merge " DB_A " %s/missing.yaml -o '%s'", tmp,
               d);
    TU_CHECK(rc == 1 && strstr(err, "cannot open") != NULL &&
                 !file_exists(d),
             "db merge of a missing file: exit %d\n%s", rc, err);
    free(err);
}

static void test_merge_in_process(void)
{
    struct tunedb a, b, ab, ba;
    CU_ASSERT_EQUAL_FATAL(load_db(&a, DB_A), 0);
    CU_ASSERT_EQUAL_FATAL(load_db(&b, DB_B), 0);
    TU_CHECK(a.n == 3 && b.n == 3, "a %d entries, b %d", a.n, b.n);
    tunedb_init(&ab);
    tunedb_merge(&ab, &a);
    tunedb_merge(&ab, &b);
    check_merged(&ab, 1, "tunedb_merge a b");
    tunedb_init(&ba);
    tunedb_merge(&ba, &b);
    tunedb_merge(&ba, &a);
    check_merged(&ba, 0, "tunedb_merge b a");
    /* The sources are left alone. */
    TU_CHECK(a.n == 3 && a.entry[0].n_tried == 3 &&
                 strcmp(a.entry[0].best, "m=64 n=64 k=16 wm=8 wn=8") == 0,
             "tunedb_merge changed its source");
    /* A slower best does not replace a faster one; an empty best never. */
    struct tunedb one;
    struct tune_entry e = a.entry[0];
    tunedb_init(&one);
    snprintf(e.best, sizeof e.best, "m=8 n=8");
    e.best_us = 100;
    e.n_tried = 0;
    e.tried = NULL;
    tunedb_add(&one, &e);
    tunedb_merge(&ab, &one);
    const struct tune_entry *shared = entry_key(&ab, "1.0", "lora_forward",
                                                512);
    TU_CHECK(shared != NULL && shared->best_us == 9.75, "a slower best won");
    one.entry[0].best[0] = '\0';
    one.entry[0].best_us = 0;
    tunedb_merge(&ab, &one);
    shared = entry_key(&ab, "1.0", "lora_forward", 512);
    TU_CHECK(shared != NULL && shared->best_us == 9.75 &&
                 strcmp(shared->best, "m=128 n=64 k=16 wm=8 wn=4") == 0,
             "an entry without a best replaced the best");
    /* Into an entry without a best, any best goes. */
    struct tunedb empty;
    tunedb_init(&empty);
    tunedb_add(&empty, &one.entry[0]);
    tunedb_merge(&empty, &a);
    TU_CHECK(empty.n == 3 && strcmp(empty.entry[0].best,
                                    "m=64 n=64 k=16 wm=8 wn=8") == 0 &&
                 empty.entry[0].best_us == 12.5,
             "a best did not fill an entry without one");
    tunedb_free(&empty);
    /* The defaults' time: a run's own timing replaces the file's (the
     * code may have changed since), an older one merged in does not. */
    one.entry[0].default_us = 15.0;
    one.entry[0].default_fresh = 0;
    tunedb_merge(&ab, &one);
    shared = entry_key(&ab, "1.0", "lora_forward", 512);
    TU_CHECK(shared != NULL && shared->default_us == 21.0,
             "a default_us merged in from a file replaced the entry's: %g",
             shared ? shared->default_us : -1);
    one.entry[0].default_fresh = 1;
    tunedb_merge(&ab, &one);
    shared = entry_key(&ab, "1.0", "lora_forward", 512);
    TU_CHECK(shared != NULL && shared->default_us == 15.0,
             "the defaults timed in this run did not replace the file's "
             "default_us (%g)", shared ? shared->default_us : -1);
    /* A best decided in this run replaces the one it found there, even a
     * faster one (its record measured older code), but no other best
     * that is faster (another run's, saved in between). */
    snprintf(one.entry[0].best, sizeof one.entry[0].best, "m=8 n=8");
    one.entry[0].best_us = 30.0;
    one.entry[0].best_fresh = 1;
    snprintf(one.entry[0].best_seen, sizeof one.entry[0].best_seen,
             "m=64 n=64 k=16 wm=8 wn=8");
    tunedb_merge(&ab, &one);
    shared = entry_key(&ab, "1.0", "lora_forward", 512);
    TU_CHECK(shared != NULL && shared->best_us == 9.75,
             "a best decided over another than the file's replaced it");
    snprintf(one.entry[0].best_seen, sizeof one.entry[0].best_seen, "%s",
             shared ? shared->best : "");
    tunedb_merge(&ab, &one);
    shared = entry_key(&ab, "1.0", "lora_forward", 512);
    TU_CHECK(shared != NULL && shared->best_us == 30.0 &&
                 strcmp(shared->best, "m=8 n=8") == 0,
             "a best decided over the file's did not replace it: %s (%g us)",
             shared ? shared->best : "-", shared ? shared->best_us : -1);
    /* Likewise a record: one timed in this run replaces the file's record
     * of the same knobs (its code with it), one merged in from a file
     * does not. */
    struct tune_record *nr =
        tune_entry_record(&one.entry[0], "m=64 n=64 k=16 wm=8 wn=8", 7.5, "ok");
    snprintf(nr->code, sizeof nr->code, "0123456789abcdef");
    tunedb_merge(&ab, &one);
    shared = entry_key(&ab, "1.0", "lora_forward", 512);
    const struct tune_record *sr =
        shared ? tune_entry_tried(shared, "m=64 n=64 k=16 wm=8 wn=8") : NULL;
    TU_CHECK(sr != NULL && sr->us != 7.5 && sr->code[0] == '\0',
             "a record merged in from a file replaced the entry's");
    nr = (struct tune_record *)tune_entry_tried(&one.entry[0],
                                               "m=64 n=64 k=16 wm=8 wn=8");
    nr->fresh = 1;
    tunedb_merge(&ab, &one);
    shared = entry_key(&ab, "1.0", "lora_forward", 512);
    sr = shared ? tune_entry_tried(shared, "m=64 n=64 k=16 wm=8 wn=8") : NULL;
    TU_CHECK(sr != NULL && sr->us == 7.5 &&
                 strcmp(sr->code, "0123456789abcdef") == 0,
             "a record timed in this run did not replace the file's: %g us, "
             "code '%s'", sr ? sr->us : -1, sr ? sr->code : "-");
    /* A faster best from a file brings the figures of the run that
     * stored it: the defaults timed with it and what its search
     * covered. */
    snprintf(one.entry[0].best, sizeof one.entry[0].best, "m=16 n=16");
    one.entry[0].best_us = 5.0;
    one.entry[0].best_fresh = 0;
    one.entry[0].default_us = 9.0;
    one.entry[0].default_fresh = 0;
    one.entry[0].searched = 3;
    one.entry[0].candidates = 10;
    one.entry[0].search_fresh = 0;
    snprintf(one.entry[0].stopped, sizeof one.entry[0].stopped,
             "time budget");
    struct tune_entry *before = (struct tune_entry *)entry_key(
        &ab, "1.0", "lora_forward", 512);
    CU_ASSERT_PTR_NOT_NULL_FATAL(before);
    before->searched = 50; /* an earlier search, complete */
    before->candidates = 50;
    before->stopped[0] = '\0';
    tunedb_merge(&ab, &one);
    shared = entry_key(&ab, "1.0", "lora_forward", 512);
    TU_CHECK(shared != NULL && shared->best_us == 5.0 &&
                 shared->default_us == 9.0 && shared->searched == 3 &&
                 shared->candidates == 10 &&
                 strcmp(shared->stopped, "time budget") == 0,
             "a faster best from a file: %g us, defaults %g, %ld of %ld "
             "searched ('%s')", shared ? shared->best_us : -1,
             shared ? shared->default_us : -1,
             shared ? shared->searched : -1,
             shared ? shared->candidates : -1, shared ? shared->stopped : "");
    tunedb_free(&one);

    /* Malformed files, in process: errors at file:line:col, counted. */
    struct diags d = {.out = NULL}; /* then: none */
    char *text = NULL;
    size_t len = 0;
    struct tunedb bad;
    FILE *mem = open_memstream(&text, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
    d.count = 0;
    d.out = mem;
    tunedb_init(&bad);
    int errors = tunedb_load(&bad, DB_BAD_ENTRY, 0, &d);
    errors += tunedb_load(&bad, DB_BAD_YAML, 0, &d);
    errors += tunedb_load(&bad, "tests/tune/no_such_db.yaml", 1, &d);
    fclose(mem);
    TU_CHECK(errors == 3 && d.count == 3, "%d errors:\n%s", errors, text);
    TU_CHECK(strstr(text, DB_BAD_ENTRY ":9:11: error: rows must be an "
                    "integer") != NULL &&
                 strstr(text, DB_BAD_ENTRY ":12:65: error: unknown key "
                        "'speed'") != NULL &&
                 strstr(text, DB_BAD_YAML ":4:14: error: malformed YAML")
                     != NULL,
             "messages:\n%s", text);
    free(text);
    tunedb_free(&bad);
    d.out = NULL;
    d.count = 0;
    tunedb_init(&bad);
    TU_CHECK(tunedb_load(&bad, "tests/tune/no_such_db.yaml", 0, &d) == 1,
             "a missing database that must exist is no error");
    tunedb_free(&bad);

    tunedb_free(&ab);
    tunedb_free(&ba);
    tunedb_free(&a);
    tunedb_free(&b);
}

/* ---- bad databases ------------------------------------------------------ */

/* Every fixture tests/tune/bad/NAME.yaml gives exactly the messages of
 * NAME.err (made with `build/specl db merge NAME.yaml -o /tmp/x.yaml
 * 2>&1 | grep -v '^specl: '`), in process (nothing of the file kept in
 * the database it loads into) and through `specl db merge` (exit 1,
 * nothing written). */
static void test_bad_databases(void)
{
    char **names;
    int n = tu_list(DB_BAD_DIR, ".yaml", &names);
    TU_CHECK(n >= MIN_DB_BAD_FIXTURES, "only %d fixtures in " DB_BAD_DIR, n);
    for (int i = 0; i < n; i++) {
        char *path = tu_path(DB_BAD_DIR, names[i]);
        char err_path[4200], never[4096];
        snprintf(err_path, sizeof err_path, "%.*s.err",
                 (int)(strlen(path) - 5), path);
        char *expected = tu_read(err_path, NULL);
        TU_CHECK(expected != NULL && expected[0] != '\0',
                 "%s has no expected messages (%s)", path, err_path);
        if (expected == NULL) {
            free(path);
            continue;
        }
        /* In process, into a database that holds an entry already. */
        struct tunedb db;
        char *text = NULL;
        size_t len = 0;
        struct diags d = {.out = open_memstream(&text, &len)};
        CU_ASSERT_PTR_NOT_NULL_FATAL(d.out);
        CU_ASSERT_EQUAL_FATAL(load_db(&db, DB_A), 0);
        int before = db.n, tried = db.entry[0].n_tried;
        int errors = tunedb_load(&db, path, 0, &d);
        fclose(d.out);
        TU_CHECK(text != NULL && strcmp(text, expected) == 0,
                 "%s: messages differ\n--- expected\n%s--- got\n%s", path,
                 expected, text ? text : "");
        TU_CHECK(errors > 0 && errors == d.count &&
                     errors == tu_count_lines(expected),
                 "%s: %d errors reported, %d expected", path, errors,
                 tu_count_lines(expected));
        TU_CHECK(db.n == before && db.entry[0].n_tried == tried,
                 "%s: kept something of a bad file (%d entries, were %d)",
                 path, db.n, before);
        free(text);
        tunedb_free(&db);

        /* The command. */
        char *out, *err;
        tmp_path(never, sizeof never, "never.yaml");
        int rc = specl(&out, &err, "db merge %s -o '%s'", path, never);
        char want[8192];
        snprintf(want, sizeof want, "%sspecl: db merge: nothing written\n",
                 expected);
        TU_CHECK(rc == 1 && strcmp(err, want) == 0 && !file_exists(never),
                 "specl db merge %s: exit %d\n--- expected\n%s--- got\n%s",
                 path, rc, want, err);
        free(out);
        free(err);
        free(expected);
        free(path);
    }
    tu_free_list(names, n);
    /* No stray .err without its database. */
    n = tu_list(DB_BAD_DIR, ".err", &names);
    for (int i = 0; i < n; i++) {
        char yaml[4200];
        snprintf(yaml, sizeof yaml, DB_BAD_DIR "/%.*s.yaml",
                 (int)(strlen(names[i]) - 4), names[i]);
        TU_CHECK(file_exists(yaml), "%s/%s has no database", DB_BAD_DIR,
                 names[i]);
    }
    tu_free_list(names, n);
}

/* A file as the database's fuzz target takes it. */
static int db_input(const char *path, const char *data, size_t len)
{
    (void)path;
    return fuzz_db_input((const uint8_t *)data, len);
}

/* The database fuzz target on every file of DIR (tu_replay_dir). */
static int replay_db_dir(const char *dir, int expect_errors)
{
    return tu_replay_dir(dir, NULL, db_input, expect_errors,
                         "the database loader", "build/fuzz_db_replay");
}

/* The fuzz target's crashers (whatever they were: each is named after
 * its bug), the bad fixtures and the databases that load, through the
 * target's checks: a database that loads saves and loads back the
 * same, and gen --db can use it. */
static void test_db_fuzz_regressions(void)
{
    replay_db_dir(DB_REGRESSION_DIR, -1);
    CU_ASSERT(replay_db_dir(DB_BAD_DIR, 1) >= MIN_DB_BAD_FIXTURES);
    CU_ASSERT(replay_db_dir("tuning", 0) > 0);
    static const char *const good[] = {DB_A, DB_B};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        size_t len = 0;
        char *data = tu_read(good[i], &len);
        TU_CHECK(data != NULL &&
                     fuzz_db_input((const uint8_t *)data, len) == 0,
                 "%s does not load in the fuzz target", good[i]);
        free(data);
    }
}

/* tunedb_save and tunedb_load keep every field, quotes and backslashes in
 * names included. */
/* The keys that say how an entry's times were measured and what its
 * search covered: none in an older file (which loads as before), and
 * saved and loaded back as the tuner sets them, complete or not. */
static void test_db_measured_keys(void)
{
    struct tunedb db, back;
    struct buf text;
    struct diags d = {.out = stderr};
    CU_ASSERT_EQUAL_FATAL(load_db(&db, DB_A), 0);
    CU_ASSERT_FATAL(db.n >= 2);
    for (int i = 0; i < db.n; i++) {
        const struct tune_entry *e = &db.entry[i];
        TU_CHECK(e->retimed_reps == 0 && e->best_p90_us == 0 &&
                     e->default_p90_us == 0 && e->candidates == 0 &&
                     e->stopped[0] == '\0',
                 "%s: an older entry with measurement keys", DB_A);
    }
    struct tune_entry *a = &db.entry[0], *b = &db.entry[1];
    a->retimed_reps = 7;
    a->best_p10_us = a->best_us - 0.5;
    a->best_p90_us = a->best_us + 1.25;
    a->default_p10_us = a->default_us - 0.25;
    a->default_p90_us = a->default_us + 2;
    a->searched = a->candidates = 12;
    b->searched = 3;
    b->candidates = 12;
    snprintf(b->stopped, sizeof b->stopped, "time budget");
    buf_init(&text);
    tunedb_format(&db, &text);
    TU_CHECK(strstr(buf_str(&text), "\n  retimed_reps: 7\n  searched: 12\n"
                                    "  candidates: 12\n  complete: true\n"
                                    "  specl: ") != NULL &&
                 strstr(buf_str(&text), "\n  searched: 3\n  candidates: 12"
                                        "\n  complete: false\n  stopped: "
                                        "\"time budget\"\n") != NULL,
             "the measurement keys as saved:\n%s", buf_str(&text));
    tunedb_init(&back);
    int errors = tunedb_load_buffer(&back, "measured.yaml",
                                    (const unsigned char *)buf_str(&text),
                                    text.len, &d);
    CU_ASSERT_EQUAL_FATAL(errors, 0);
    CU_ASSERT_EQUAL_FATAL(back.n, db.n);
    const struct tune_entry *ba = &back.entry[0], *bb = &back.entry[1];
    TU_CHECK(ba->retimed_reps == 7 &&
                 fabs(ba->best_p10_us - a->best_p10_us) < 0.006 &&
                 fabs(ba->best_p90_us - a->best_p90_us) < 0.006 &&
                 fabs(ba->default_p10_us - a->default_p10_us) < 0.006 &&
                 fabs(ba->default_p90_us - a->default_p90_us) < 0.006 &&
                 ba->searched == 12 && ba->candidates == 12 &&
                 ba->stopped[0] == '\0' && bb->searched == 3 &&
                 bb->candidates == 12 &&
                 strcmp(bb->stopped, "time budget") == 0 &&
                 bb->retimed_reps == 0,
             "loaded back: %d runs, %g-%g, defaults %g-%g; searched %ld of "
             "%ld '%s', %ld of %ld '%s'", ba->retimed_reps, ba->best_p10_us,
             ba->best_p90_us, ba->default_p10_us, ba->default_p90_us,
             ba->searched, ba->candidates, ba->stopped, bb->searched,
             bb->candidates, bb->stopped);
    buf_free(&text);
    tunedb_free(&back);
    tunedb_free(&db);
}

/* E cleared to an entry of softmax over 100 features at ROWS rows, f32
 * unless DTYPE, on DEVICE with DRIVER. */
static void softmax_entry(struct tune_entry *e, const char *device,
                          const char *driver, const char *dtype, long rows)
{
    memset(e, 0, sizeof *e);
    snprintf(e->device, sizeof e->device, "%s", device);
    snprintf(e->driver, sizeof e->driver, "%s", driver);
    snprintf(e->op, sizeof e->op, "softmax");
    snprintf(e->dtype, sizeof e->dtype, "%s", dtype);
    snprintf(e->shape, sizeof e->shape, "features=100");
    e->rows = rows;
}

/* A database file that no longer loads is left as it is, and the run's
 * measurements go beside it, to PATH.unmerged, which loads. */
static void test_save_aside(void)
{
    struct tunedb db, back;
    struct tune_entry e;
    char path[4096], aside[4200], err[1024] = "";
    static const char broken[] = "entries:\n  - device: [\n";
    softmax_entry(&e, "GPU", "1", "f32", 64);
    tunedb_init(&db);
    tune_entry_record(tunedb_add(&db, &e), "wg=4 rows=2 vec=4", 1.5, "ok");
    tmp_path(path, sizeof path, "broken.yaml");
    snprintf(aside, sizeof aside, "%s.unmerged", path);
    remove(aside);
    write_text(path, broken);
    CU_ASSERT_EQUAL(tunedb_save_merged(&db, path, err, sizeof err), -1);
    TU_CHECK(strstr(err, "does not load") != NULL &&
                 strstr(err, aside) != NULL,
             "the message does not say where the measurements went: %s",
             err);
    char *kept = tu_read(path, NULL);
    TU_CHECK(kept != NULL && strcmp(kept, broken) == 0,
             "the file that does not load was overwritten");
    free(kept);
    TU_CHECK(load_db(&back, aside) == 0 && back.n == 1 &&
                 back.entry[0].n_tried == 1,
             "%s does not hold the run's entry", aside);
    tunedb_free(&back);
    tunedb_free(&db);
    remove(aside);
    remove(path);
}

/* Every kernel's shape as the tuner writes it reads back as a shape of
 * its op on every target: an entry the tuner saved must load (a rope
 * shape with llama3 scaling, whose numbers are float fields that no
 * shape holds, once failed its op's checks and left the database
 * unsaved). The benchmark specs and tests/good's cover every op and
 * most of their fields. */
static void test_shapes_read_back(void)
{
    static const char *const dirs[] = {"bench/specs", "tests/good"};
    static const enum target targets[] = {TARGET_GPU, TARGET_CPU,
                                          TARGET_TENSOR};
    int kernels = 0;
    for (int i = 0; i < 2; i++) {
        char pattern[256];
        glob_t g;
        snprintf(pattern, sizeof pattern, "%s/*.yaml", dirs[i]);
        CU_ASSERT_EQUAL_FATAL(glob(pattern, 0, NULL, &g), 0);
        for (size_t f = 0; f < g.gl_pathc; f++) {
            for (int t = 0; t < 3; t++) {
                struct spec_set s;
                struct diags d = {.out = NULL};
                spec_set_init(&s);
                if (spec_read_file(&s, g.gl_pathv[f], &d) != 0 ||
                    spec_set_target(&s, targets[t], &d) != 0) {
                    spec_set_free(&s);
                    continue; /* a spec that names a device's limits */
                }
                for (int k = 0; k < s.n_kernel; k++) {
                    const struct kernel_spec *ks = &s.kernel[k];
                    char shape[TUNE_TEXT], why[256] = "";
                    tune_shape_text(ks, shape, sizeof shape);
                    kernels++;
                    TU_CHECK(tunedb_shape_fits(ks->op, ks->dtype, targets[t],
                                               shape, why, sizeof why),
                             "%s: %s (target %d): shape \"%s\" does not "
                             "read back: %s", g.gl_pathv[f], ks->name,
                             (int)targets[t], shape, why);
                }
                spec_set_free(&s);
            }
        }
        globfree(&g);
    }
    TU_CHECK(kernels > 300, "only %d kernels checked", kernels);
}

static void test_save_load(void)
{
    struct tunedb db, back;
    struct tune_entry e;
    char path[4096], err[256] = "";
    softmax_entry(&e, "GPU \"X\" \\ 2: #1, [a] {b}", "1.2 'beta'", "f16",
                  12345);
    snprintf(e.best, sizeof e.best, "wg=4 rows=2 vec=4 mode=streaming");
    e.best_us = 1.25;
    e.best_gbs = 12.5;
    e.best_gflops = 3.5;
    e.default_us = 2.5;
    snprintf(e.version, sizeof e.version, "9.9.9");
    tunedb_init(&db);
    struct tune_entry *in = tunedb_add(&db, &e);
    tune_entry_record(in, "wg=4 rows=2 vec=4 mode=streaming", 1.25, "ok");
    tune_entry_record(in, "wg=8 rows=2 vec=4 mode=registers", -1,
                      "WRONG: \"max error\" 1e9");
    tune_entry_record(in, "wg=4 rows=2 vec=4 mode=streaming", 1.5, "ok");
    TU_CHECK(in->n_tried == 2 && in->tried[0].us == 1.5,
             "tune_entry_record did not replace a record of the same knobs");
    tmp_path(path, sizeof path, "saved.yaml");
    CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, path, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(load_db(&back, path), 0);
    TU_CHECK(back.n == 1, "%d entries", back.n);
    if (back.n == 1) {
        const struct tune_entry *b = &back.entry[0];
        TU_CHECK(strcmp(b->device, e.device) == 0 &&
                     strcmp(b->driver, e.driver) == 0 &&
                     strcmp(b->op, e.op) == 0 &&
                     strcmp(b->dtype, e.dtype) == 0 &&
                     strcmp(b->shape, e.shape) == 0 && b->rows == e.rows &&
                     strcmp(b->best, e.best) == 0 && b->best_us == 1.25 &&
                     b->best_gbs == 12.5 && b->best_gflops == 3.5 &&
                     b->default_us == 2.5 &&
                     strcmp(b->version, "9.9.9") == 0,
                 "the entry changed: %s / %s / %s", b->device, b->driver,
                 b->best);
        TU_CHECK(b->n_tried == 2 && b->tried[0].us == 1.5 &&
                     b->tried[1].us == -1 &&
                     strcmp(b->tried[1].status, "WRONG: \"max error\" 1e9")
                         == 0,
                 "tried records changed");
    }
    tunedb_free(&back);
    /* An entry with no tried config (a space with no valid one) reads
     * back; so does the bare `tried:` that older versions wrote. */
    snprintf(e.shape, sizeof e.shape, "features=7");
    e.best[0] = '\0';
    tunedb_add(&db, &e);
    CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, path, err, sizeof err), 0);
    TU_CHECK(load_db(&back, path) == 0 && back.n == 2 &&
                 back.entry[1].n_tried == 0 && back.entry[1].best[0] == '\0',
             "an entry without tried configs does not read back");
    tunedb_free(&back);
    write_text(path, "entries:\n  - device: d\n    driver: v\n    op: "
               "softmax\n    dtype: f32\n    shape: \"features=7\"\n    "
               "rows: 1\n    tried:\n");
    TU_CHECK(load_db(&back, path) == 0 && back.n == 1 &&
                 back.entry[0].n_tried == 0,
             "a bare tried: does not read");
    tunedb_free(&back);
    tunedb_free(&db);
    /* A file without entries, and one that is no database. */
    write_text(path, "entries: []\n");
    TU_CHECK(load_db(&back, path) == 0 && back.n == 0, "entries: []");
    tunedb_free(&back);
    write_text(path, "- just\n- a list\n");
    struct diags quiet = {.out = NULL};
    tunedb_init(&back);
    TU_CHECK(tunedb_load(&back, path, 0, &quiet) == 1,
             "a list loaded as a database");
    tunedb_free(&back);
    /* Text YAML would not read back as written (control characters, line
     * breaks such as NEL and LS, a byte order mark, C1 controls) is
     * escaped; a byte that starts no UTF-8 sequence is written as the code
     * point of its value. An empty database saves as `entries: []`. */
    static const char odd[] = "tab\there nel\xc2\x85 ls\xe2\x80\xa8 "
                              "del\x7f bom\xef\xbb\xbf c1\xc2\x90 "
                              "\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\";
    tunedb_free(&db);
    tunedb_init(&db);
    softmax_entry(&e, odd, "latin-1 \xe9 \xff\xc3", "f32", 1);
    snprintf(e.version, sizeof e.version, "1\n2");
    in = tunedb_add(&db, &e);
    tune_entry_record(in, "wg=4", -1, "WRONG: line 1\nline 2\r\x01");
    CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, path, err, sizeof err), 0);
    TU_CHECK(load_db(&back, path) == 0 && back.n == 1,
             "odd names do not load back");
    if (back.n == 1) {
        const struct tune_entry *b = &back.entry[0];
        TU_CHECK(strcmp(b->device, odd) == 0, "device came back as '%s'",
                 b->device);
        TU_CHECK(strcmp(b->driver, "latin-1 \xc3\xa9 \xc3\xbf\xc3\x83") ==
                     0, "driver came back as '%s'", b->driver);
        TU_CHECK(strcmp(b->version, "1\n2") == 0 && b->n_tried == 1 &&
                     strcmp(b->tried[0].status,
                            "WRONG: line 1\nline 2\r\x01") == 0,
                 "version or status changed");
    }
    tunedb_free(&back);
    tunedb_free(&db);
    tunedb_init(&db);
    CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, path, err, sizeof err), 0);
    TU_CHECK(load_db(&back, path) == 0 && back.n == 0,
             "an empty database does not load back");
    tunedb_free(&back);
    /* Saving where no file can be written fails with a message. */
    TU_CHECK(tunedb_save(&db, "/nonexistent/dir/db.yaml", err, sizeof err) <
                     0 && err[0] != '\0',
             "tunedb_save into a missing directory");
}

/* Device names as drivers report them, whatever they hold (quotes, ': ',
 * '#', line breaks, text YAML would read as another type, non-ASCII),
 * save on one line each and load back as they were. */
static void test_save_load_names(void)
{
    static const char *const names[] = {
        "GPU \"X\": #1 'rev: 2' # not a comment",
        "line 1\nline 2\r\n\ttab",
        /* split where a letter would extend the \x escape */
        ("Gr\xc3\xa4"
         "fikkarte \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x9a\x80"),
        "- [a, b]: {c: d}, &anchor *alias !tag %directive @ `",
        "null",
        "0x1F",
        "  spaces around  ",
        "\\ \\n \\x41 \"\"",
    };
    enum { N_NAMES = sizeof names / sizeof names[0] };
    struct tunedb db, back;
    struct tune_entry e;
    char path[4096], err[256] = "";
    tunedb_init(&db);
    for (int i = 0; i < N_NAMES; i++) {
        softmax_entry(&e, names[i], names[N_NAMES - 1 - i], "f32", 1);
        snprintf(e.version, sizeof e.version, "0.1.0");
        /* the status too, after the words a known status starts with */
        char status[96];
        snprintf(status, sizeof status, "WRONG: %s", names[i]);
        tune_entry_record(tunedb_add(&db, &e), "wg=4", -1, status);
    }
    tmp_path(path, sizeof path, "names.yaml");
    CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, path, err, sizeof err), 0);
    CU_ASSERT_EQUAL_FATAL(load_db(&back, path), 0);
    TU_CHECK(back.n == N_NAMES, "%d entries of %d", back.n, (int)N_NAMES);
    for (int i = 0; i < back.n && i < N_NAMES; i++) {
        const struct tune_entry *b = &back.entry[i];
        TU_CHECK(strcmp(b->device, names[i]) == 0 &&
                     strcmp(b->driver, names[N_NAMES - 1 - i]) == 0 &&
                     b->n_tried == 1 &&
                     strncmp(b->tried[0].status, "WRONG: ", 7) == 0 &&
                     strcmp(b->tried[0].status + 7, names[i]) == 0,
                 "name %d came back as '%s' / '%s'", i, b->device, b->driver);
    }
    /* One line per entry's device, and the same text when saved again. */
    struct buf first, again;
    buf_init(&first);
    buf_init(&again);
    tunedb_format(&db, &first);
    tunedb_format(&back, &again);
    TU_CHECK(strcmp(buf_str(&first), buf_str(&again)) == 0,
             "saved again, the text differs:\n%s\n---\n%s", buf_str(&first),
             buf_str(&again));
    int devices = 0;
    const char *line = buf_str(&first);
    while (line != NULL) {
        line += strspn(line, " -");
        devices += strncmp(line, "device: \"", 9) == 0;
        line = strchr(line, '\n');
        line = line != NULL ? line + 1 : NULL;
    }
    TU_CHECK(devices == N_NAMES, "%d device lines of %d", devices,
             (int)N_NAMES);
    buf_free(&first);
    buf_free(&again);
    tunedb_free(&back);
    tunedb_free(&db);
}

/* ---- 5. key matching, nearest shape, gen --db --------------------------- */

/* Entries built from best.yaml: which kernel, device, rows, time. */
static const struct {
    const char *kernel;
    const char *device;
    long rows;
    double us;
} db_plan[] = {
    {"e_s64_small", TEST_DEVICE, 64, 3.5},
    {"e_s64", TEST_DEVICE, 512, 20.5},
    {"e_k128_n128", TEST_DEVICE, 256, 30.5},
    {"e_rank8", TEST_DEVICE, 8192, 90.75},
    {"e_s64_f16", TEST_DEVICE, 16384, 120},
    {"e_s64_delta", TEST_DEVICE, 32768, 150},
    {"e_softmax", TEST_DEVICE, 4096, 8.5},
    {"e_s64_other", OTHER_DEVICE, 100000, 500},
};
#define N_DB_PLAN (sizeof db_plan / sizeof db_plan[0])

static void entry_from(struct tune_entry *e, const struct kernel_spec *ks,
                       const char *device, long rows, double us)
{
    memset(e, 0, sizeof *e);
    snprintf(e->device, sizeof e->device, "%s", device);
    snprintf(e->driver, sizeof e->driver, "test 1.0");
    snprintf(e->op, sizeof e->op, "%s", ks->op->name);
    snprintf(e->dtype, sizeof e->dtype, "%s", dtype_name(ks->dtype));
    tune_shape_text(ks, e->shape, sizeof e->shape);
    e->rows = rows;
    knobs_text(ks, e->best, sizeof e->best);
    e->best_us = us;
    e->best_gbs = 1;
    e->default_us = 2 * us;
    snprintf(e->version, sizeof e->version, "%s", SPECL_VERSION);
}

/* The database of db_plan, on DEVICE only (NULL: every device), leaving
 * out the kernels named in SKIP (NULL-terminated, or NULL). */
static void build_db(struct tunedb *db, const struct spec_set *best,
                     const char *device, const char *const *skip)
{
    tunedb_init(db);
    for (size_t i = 0; i < N_DB_PLAN; i++) {
        int skipped = device != NULL &&
                      strcmp(device, db_plan[i].device) != 0;
        for (int k = 0; skip != NULL && skip[k] != NULL; k++) {
            skipped |= strcmp(skip[k], db_plan[i].kernel) == 0;
        }
        const struct kernel_spec *ks = find_kernel(best, db_plan[i].kernel);
        TU_CHECK(ks != NULL, "%s: no kernel %s", BEST_SPEC,
                 db_plan[i].kernel);
        if (ks != NULL && !skipped) {
            struct tune_entry e;
            entry_from(&e, ks, db_plan[i].device, db_plan[i].rows,
                       db_plan[i].us);
            tunedb_add(db, &e);
        }
    }
}

/* The best text of best.yaml's kernel NAME. */
static void best_of(const struct spec_set *best, const char *name, char *out,
                    size_t size)
{
    const struct kernel_spec *ks = find_kernel(best, name);
    out[0] = '\0';
    if (ks != NULL) {
        knobs_text(ks, out, size);
    }
}

/* tunedb_pick of the kernel TARGET of gen.yaml (or of SPEC when given)
 * gives PICK and the best of best.yaml's kernel FROM (NULL: none). */
static void expect_pick(const struct tunedb *db, const struct spec_set *best,
                        const struct spec_set *targets, const char *target,
                        const char *device, enum tune_pick pick,
                        const char *from, const char *why_prefix)
{
    const struct kernel_spec *ks = find_kernel(targets, target);
    char knobs[TUNE_TEXT] = "", why[512] = "", want[TUNE_TEXT] = "";
    TU_CHECK(ks != NULL, "no target %s", target);
    if (ks == NULL) {
        return;
    }
    enum tune_pick got = tunedb_pick(db, device, ks, knobs, sizeof knobs,
                                     why, sizeof why);
    TU_CHECK(got == pick, "%s on %s: pick %d, expected %d (%s)", target,
             device ? device : "any device", (int)got, (int)pick, why);
    if (from != NULL) {
        best_of(best, from, want, sizeof want);
        TU_CHECK(strcmp(knobs, want) == 0, "%s: picked %s, expected %s's %s",
                 target, knobs, from, want);
    }
    TU_CHECK(starts_with(why, why_prefix), "%s: why '%s', expected '%s...'",
             target, why, why_prefix);
}

/* An entry of TARGET's shape without a best, as a tune stopped before
 * it decided one leaves it: no pick, and the reason says what is there
 * rather than that there is no entry. */
static void expect_unfinished(const struct kernel_spec *target)
{
    static const struct {
        double us[2];
        int n_tried;
        const char *why;
    } cases[] = {
        {{0, 0}, 0, "the tuning entry of this shape on " TEST_DEVICE
                    " (rows 512) has no result: its tune did not finish "
                    "(0 configs measured)"},
        {{12.5, -1}, 2, "the tuning entry of this shape on " TEST_DEVICE
                        " (rows 512) has no result: its tune did not "
                        "finish (1 config measured)"},
        {{-1, -1}, 2, "the tuning entry of this shape on " TEST_DEVICE
                      " (rows 512) has no result: none of its 2 tried "
                      "configs ran"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct tunedb db;
        struct tune_entry e;
        char knobs[TUNE_TEXT] = "", why[512] = "";
        tunedb_init(&db);
        entry_from(&e, target, TEST_DEVICE, 512, 0);
        e.best[0] = '\0';
        struct tune_entry *added = tunedb_add(&db, &e);
        for (int t = 0; t < cases[c].n_tried; t++) {
            tune_entry_record(added, t ? "m=32" : "m=64", cases[c].us[t],
                              cases[c].us[t] < 0 ? "build failed" : "ok");
        }
        enum tune_pick p = tunedb_pick(&db, TEST_DEVICE, target, knobs,
                                       sizeof knobs, why, sizeof why);
        TU_CHECK(p == PICK_NONE && strcmp(why, cases[c].why) == 0,
                 "unfinished entry %zu: pick %d, why '%s'", c, (int)p, why);
        tunedb_free(&db);
    }
}

static void test_pick(void)
{
    struct spec_set best, gen;
    struct tunedb db;
    CU_ASSERT_EQUAL_FATAL(read_spec(&best, BEST_SPEC), 0);
    CU_ASSERT_EQUAL_FATAL(read_spec(&gen, GEN_SPEC), 0);
    build_db(&db, &best, TEST_DEVICE, NULL);
    char why[512];
    snprintf(why, sizeof why, "exact tuning entry: %s, %s, rows 512 (20.5 us"
             ", specl %s)", TEST_DEVICE, S64, SPECL_VERSION);
    /* Exact: the entry of the shape with the most rows, before nearer
     * shapes with more rows and the f16, base: false entries. */
    expect_pick(&db, &best, &gen, "g_exact", NULL, PICK_EXACT, "e_s64", why);
    expect_pick(&db, &best, &gen, "g_exact", TEST_DEVICE, PICK_EXACT,
                "e_s64", why);
    expect_pick(&db, &best, &gen, "g_explicit", NULL, PICK_EXACT, "e_s64",
                "exact tuning entry: ");
    /* Nearest by the sum of |log2| ratios: 128x128 (0.42) before S64
     * (1.58), though S64 has more rows. */
    expect_pick(&db, &best, &gen, "g_near", NULL, PICK_NEAREST,
                "e_k128_n128", "nearest-shape tuning entry: " TEST_DEVICE
                ", in_features=128 out_features=128 rank=4 base=true "
                "accumulate=false, rows 256 (30.5 us");
    expect_pick(&db, &best, &gen, "g_misfit", NULL, PICK_NEAREST, "e_s64",
                "nearest-shape tuning entry: ");
    /* Only the same dtype, only the same flags. */
    expect_pick(&db, &best, &gen, "g_f16", NULL, PICK_NEAREST, "e_s64_f16",
                "nearest-shape tuning entry: ");
    expect_pick(&db, &best, &gen, "g_delta", NULL, PICK_NEAREST,
                "e_s64_delta", "nearest-shape tuning entry: ");
    expect_pick(&db, &best, &gen, "g_softmax", NULL, PICK_NEAREST,
                "e_softmax", "nearest-shape tuning entry: ");
    expect_pick(&db, &best, &gen, "g_rmsnorm", NULL, PICK_NONE, NULL,
                "no tuning entry for this op and dtype");
    expect_pick(&db, &best, &gen, "g_exact", OTHER_DEVICE, PICK_NONE, NULL,
                "no tuning entry for this op and dtype on " OTHER_DEVICE);
    tunedb_free(&db);

    /* Without S64 (f32, base: true): the f16 and base: false entries of
     * the very same sizes, with the most rows, still never match; rank 8
     * (distance 1) goes before 128x128 (distance 2). */
    static const char *const no_s64[] = {"e_s64", "e_s64_small", NULL};
    build_db(&db, &best, TEST_DEVICE, no_s64);
    expect_pick(&db, &best, &gen, "g_exact", NULL, PICK_NEAREST, "e_rank8",
                "nearest-shape tuning entry: " TEST_DEVICE
                ", in_features=64 out_features=64 rank=8");
    tunedb_free(&db);
    /* Nothing of the dtype or the flags at all: none. */
    static const char *const only_f16[] = {"e_s64", "e_s64_small",
                                           "e_k128_n128", "e_rank8", NULL};
    build_db(&db, &best, TEST_DEVICE, only_f16);
    expect_pick(&db, &best, &gen, "g_exact", NULL, PICK_NONE, NULL,
                "no tuning entry");
    tunedb_free(&db);

    /* Two devices: a named device picks its own entries only; none named
     * picks nothing, since knobs of one device are no guide for another. */
    build_db(&db, &best, NULL, NULL);
    expect_pick(&db, &best, &gen, "g_exact", TEST_DEVICE, PICK_EXACT,
                "e_s64", "exact tuning entry: " TEST_DEVICE ",");
    expect_pick(&db, &best, &gen, "g_exact", OTHER_DEVICE, PICK_EXACT,
                "e_s64_other", "exact tuning entry: " OTHER_DEVICE ",");
    expect_pick(&db, &best, &gen, "g_near", OTHER_DEVICE, PICK_NEAREST,
                "e_s64_other", "nearest-shape tuning entry: " OTHER_DEVICE);
    expect_pick(&db, &best, &gen, "g_softmax", OTHER_DEVICE, PICK_NONE, NULL,
                "no tuning entry for this op and dtype on " OTHER_DEVICE);
    expect_pick(&db, &best, &gen, "g_exact", NULL, PICK_NONE, NULL,
                "the tuning database holds several devices");
    tunedb_free(&db);

    /* Equal distances: the entry with more rows; entries without a best
     * are skipped. */
    const struct kernel_spec *target = find_kernel(&gen, "g_exact");
    CU_ASSERT_PTR_NOT_NULL_FATAL(target);
    struct tune_entry e;
    char knobs[TUNE_TEXT], reason[512];
    for (int order = 0; order < 2; order++) {
        tunedb_init(&db);
        entry_from(&e, target, TEST_DEVICE, 0, 1);
        snprintf(e.shape, sizeof e.shape, "in_features=32 out_features=64 "
                 "rank=4 base=true accumulate=false");
        snprintf(e.best, sizeof e.best, "m=32");
        e.rows = order ? 100 : 200;
        tunedb_add(&db, &e);
        snprintf(e.shape, sizeof e.shape, "in_features=128 out_features=64 "
                 "rank=4 base=true accumulate=false");
        snprintf(e.best, sizeof e.best, "m=128");
        e.rows = order ? 200 : 100;
        tunedb_add(&db, &e);
        snprintf(e.shape, sizeof e.shape, "%s", S64);
        e.best[0] = '\0';
        e.rows = 1000;
        tunedb_add(&db, &e);
        enum tune_pick p = tunedb_pick(&db, NULL, target, knobs,
                                       sizeof knobs, reason, sizeof reason);
        TU_CHECK(p == PICK_NEAREST &&
                     strcmp(knobs, order ? "m=128" : "m=32") == 0,
                 "tie %d: picked %s (%s)", order, knobs, reason);
        tunedb_free(&db);
    }
    expect_unfinished(target);
    spec_set_free(&gen);
    spec_set_free(&best);
}

/* What tunedb_apply should make of each kernel of gen.yaml: the note's
 * start, and whose knobs (best.yaml's kernel; "-": unchanged). */
static const struct {
    const char *kernel;
    const char *note;
    const char *from;
} apply_plan[] = {
    {"g_exact", "exact tuning entry: " TEST_DEVICE ", ", "e_s64"},
    {"g_near", "nearest-shape tuning entry: " TEST_DEVICE
               ", in_features=128 out_features=128", "e_k128_n128"},
    {"g_misfit", "op defaults (the nearest-shape tuning entry: " TEST_DEVICE
                 ", " /* S64 */, "-"},
    {"g_f16", "nearest-shape tuning entry: ", "e_s64_f16"},
    {"g_delta", "nearest-shape tuning entry: ", "e_s64_delta"},
    {"g_explicit", "", "-"},
    {"g_softmax", "nearest-shape tuning entry: " TEST_DEVICE
                  ", features=1024", "e_softmax"},
    {"g_softmax_misfit", "op defaults (the nearest-shape tuning entry: ",
     "-"},
    {"g_rmsnorm", "op defaults (no tuning entry for this op and dtype",
     "-"},
};
#define N_APPLY_PLAN (sizeof apply_plan / sizeof apply_plan[0])

/* An entry's knobs as tunedb_apply gives them: the entry's values, set,
 * but for the few-row paths' knobs, which stay unset (the defaults). */
static int few_rows_knob(const struct op_def *op, const char *key)
{
    for (int f = 0; op->few_rows_knobs && op->few_rows_knobs[f]; f++) {
        if (strcmp(op->few_rows_knobs[f], key) == 0) {
            return 1;
        }
    }
    return 0;
}

static void check_entry_knobs(const struct kernel_spec *a, const char *got,
                              const char *want)
{
    for (int k = 0; k < a->op->n_knobs; k++) {
        const char *key = a->op->knobs[k].key;
        char g[64], w[64];
        CU_ASSERT_FATAL(knobs_text_value(got, key, g, sizeof g) == 0 &&
                        knobs_text_value(want, key, w, sizeof w) == 0);
        if (few_rows_knob(a->op, key)) {
            TU_CHECK(!a->knob[k].set, "%s: %s=%s pinned by the entry",
                     a->name, key, g);
        } else {
            TU_CHECK(a->knob[k].set && strcmp(g, w) == 0,
                     "%s: %s=%s%s, the entry has %s", a->name, key, g,
                     a->knob[k].set ? "" : " (unset)", w);
        }
    }
}

static void check_applied(const struct spec_set *before,
                          const struct spec_set *after,
                          const struct spec_set *best)
{
    CU_ASSERT_EQUAL_FATAL(after->n_kernel, (int)N_APPLY_PLAN);
    for (size_t i = 0; i < N_APPLY_PLAN; i++) {
        const struct kernel_spec *b = find_kernel(before, apply_plan[i].kernel);
        const struct kernel_spec *a = find_kernel(after, apply_plan[i].kernel);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        char got[TUNE_TEXT], want[TUNE_TEXT];
        knobs_text(a, got, sizeof got);
        if (strcmp(apply_plan[i].from, "-") == 0) {
            knobs_text(b, want, sizeof want);
            TU_CHECK(strcmp(got, want) == 0, "%s: knobs %s, expected %s",
                     a->name, got, want);
        } else {
            best_of(best, apply_plan[i].from, want, sizeof want);
            check_entry_knobs(a, got, want);
        }
        TU_CHECK(starts_with(a->tile_note, apply_plan[i].note) &&
                     (apply_plan[i].note[0] || !a->tile_note[0]),
                 "%s: note '%s', expected '%s...'", a->name, a->tile_note,
                 apply_plan[i].note);
        if (starts_with(apply_plan[i].note, "op defaults (the")) {
            TU_CHECK(ends_with(a->tile_note, "does not fit this shape)"),
                     "%s: note '%s'", a->name, a->tile_note);
        }
        /* What it was given: untouched. */
        for (int k = 0; k < a->op->n_knobs; k++) {
            if (b->knob[k].set) {
                TU_CHECK(a->knob[k].num == b->knob[k].num,
                         "%s: given knob %s changed", a->name,
                         a->op->knobs[k].key);
            }
        }
        /* And what it got validates. */
        char why[256];
        TU_CHECK(check_config(a, why, sizeof why) == 0, "%s: %s", a->name,
                 why);
    }
}

static void test_apply(void)
{
    struct spec_set best, before, after;
    struct tunedb db;
    CU_ASSERT_EQUAL_FATAL(read_spec(&best, BEST_SPEC), 0);
    CU_ASSERT_EQUAL_FATAL(read_spec(&before, GEN_SPEC), 0);
    CU_ASSERT_EQUAL_FATAL(read_spec(&after, GEN_SPEC), 0);
    build_db(&db, &best, TEST_DEVICE, NULL);
    tunedb_apply(&db, &after, NULL);
    check_applied(&before, &after, &best);
    spec_set_free(&after);

    /* The database's device named: the same; another device: defaults. */
    CU_ASSERT_EQUAL_FATAL(read_spec(&after, GEN_SPEC), 0);
    tunedb_apply(&db, &after, TEST_DEVICE);
    check_applied(&before, &after, &best);
    spec_set_free(&after);
    CU_ASSERT_EQUAL_FATAL(read_spec(&after, GEN_SPEC), 0);
    tunedb_apply(&db, &after, OTHER_DEVICE);
    for (int i = 0; i < after.n_kernel; i++) {
        const struct kernel_spec *a = &after.kernel[i];
        char got[TUNE_TEXT], want[TUNE_TEXT];
        knobs_text(a, got, sizeof got);
        knobs_text(&before.kernel[i], want, sizeof want);
        TU_CHECK(strcmp(got, want) == 0, "%s on %s: knobs changed", a->name,
                 OTHER_DEVICE);
        TU_CHECK(strcmp(a->name, "g_explicit") == 0
                     ? a->tile_note[0] == '\0'
                     : starts_with(a->tile_note, "op defaults (no tuning "
                                   "entry") &&
                           strstr(a->tile_note, OTHER_DEVICE) != NULL,
                 "%s: note '%s'", a->name, a->tile_note);
    }
    spec_set_free(&after);
    /* No database. */
    CU_ASSERT_EQUAL_FATAL(read_spec(&after, GEN_SPEC), 0);
    tunedb_apply(NULL, &after, NULL);
    for (int i = 0; i < after.n_kernel; i++) {
        const struct kernel_spec *a = &after.kernel[i];
        TU_CHECK(strcmp(a->name, "g_explicit") == 0
                     ? a->tile_note[0] == '\0'
                     : strcmp(a->tile_note,
                              "op defaults (an empty tuning database)") == 0,
                 "%s: note '%s'", a->name, a->tile_note);
    }
    spec_set_free(&after);
    tunedb_free(&db);
    spec_set_free(&before);
    spec_set_free(&best);
}

/* `specl gen --db`: the emitted header says where each kernel's knobs
 * came from (as tunedb_apply does in process) and shows them. */
static void check_gen_output(const char *dir, const struct spec_set *applied)
{
    for (int i = 0; i < applied->n_kernel; i++) {
        const struct kernel_spec *a = &applied->kernel[i];
        char path[4096], line[1024], knobs[TUNE_TEXT];
        snprintf(path, sizeof path, "%s/%s.h", dir, a->name);
        char *h = tu_read(path, NULL);
        TU_CHECK(h != NULL, "gen --db wrote no %s", path);
        if (h == NULL) {
            continue;
        }
        /* The header's lines, however they wrap. */
        char *flat = tu_flat(h);
        CU_ASSERT_FATAL(flat != NULL);
        if (a->tile_note[0]) {
            snprintf(line, sizeof line, " knobs: %s ", a->tile_note);
            char *want = tu_flat(line);
            TU_CHECK(want != NULL && strstr(flat, want) != NULL,
                     "%s: no line '%s'", path, a->tile_note);
            free(want);
        } else {
            TU_CHECK(strstr(h, " * knobs:") == NULL,
                     "%s: a knobs line for a kernel with its own", path);
        }
        /* Knobs from a database are set, but for the few-row paths':
         * '*' only on those in the tile line. */
        if (starts_with(a->tile_note, "exact") ||
            starts_with(a->tile_note, "nearest")) {
            knobs_text(a, knobs, sizeof knobs);
            char marked[TUNE_TEXT + 64] = "";
            for (int k = 0; k < a->op->n_knobs; k++) {
                char v[64];
                const char *key = a->op->knobs[k].key;
                CU_ASSERT_FATAL(knobs_text_value(knobs, key, v, sizeof v) ==
                                0);
                size_t len = strlen(marked);
                snprintf(marked + len, sizeof marked - len, "%s%s=%s%s",
                         k ? " " : "", key, v,
                         few_rows_knob(a->op, key) ? "*" : "");
            }
            snprintf(line, sizeof line, " tile: %s ", marked);
            TU_CHECK(strstr(flat, line) != NULL, "%s: no tile line '%s'",
                     path, marked);
        }
        free(flat);
        free(h);
    }
}

/* gen --db on the entry a stopped tune left (no best yet): the note
 * says what is there, not that there is no entry. */
static void test_gen_db_unfinished(void)
{
    char spec[4096], db[4096], out_dir[4096];
    tmp_path(spec, sizeof spec, "unfinished.yaml");
    tmp_path(db, sizeof db, "unfinished_db.yaml");
    tmp_path(out_dir, sizeof out_dir, "unfinished_out");
    TU_CHECK(tu_run("printf 'kernels: [{name: u_softmax, op: softmax, "
                    "features: 64}]\n' >'%s' && printf 'entries:\n"
                    "  - {device: \"Stopped GPU\", driver: \"1.0\", "
                    "op: softmax, dtype: f32, shape: \"features=64\", "
                    "rows: 128, best: \"\", tried: [{knobs: \"wg=64 "
                    "rows=1 vec=4 mode=registers\", us: 2.5, status: ok}]}"
                    "\n' >'%s'",
                    spec, db) == 0,
             "cannot write %s and %s", spec, db);
    char *out, *errs;
    int rc = specl(&out, &errs, "gen '%s' --db '%s' -o '%s'", spec, db,
                   out_dir);
    TU_CHECK(rc == 0 &&
                 strstr(errs, "specl: note: u_softmax: Stopped GPU: the "
                              "tuning entry of this shape on Stopped GPU "
                              "(rows 128) has no result: its tune did not "
                              "finish (1 config measured)\n") != NULL,
             "gen --db of an unfinished entry: exit %d\n%s", rc, errs);
    free(out);
    free(errs);
}

static void test_gen_db(void)
{
    struct spec_set best, applied;
    struct tunedb db;
    char db_path[4096], two_path[4096], out_dir[4096], err[256];
    char *out, *errs;
    CU_ASSERT_EQUAL_FATAL(read_spec(&best, BEST_SPEC), 0);
    tmp_path(db_path, sizeof db_path, "gen_db.yaml");
    tmp_path(two_path, sizeof two_path, "gen_db2.yaml");
    tmp_path(out_dir, sizeof out_dir, "gen_out");
    build_db(&db, &best, TEST_DEVICE, NULL);
    CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, db_path, err, sizeof err), 0);
    tunedb_free(&db);
    build_db(&db, &best, NULL, NULL);
    CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, two_path, err, sizeof err), 0);
    tunedb_free(&db);

    /* One device in the database: no --db-device needed. The expected
     * notes come from the saved file (its times are rounded). */
    CU_ASSERT_EQUAL_FATAL(load_db(&db, db_path), 0);
    CU_ASSERT_EQUAL_FATAL(read_spec(&applied, GEN_SPEC), 0);
    tunedb_apply(&db, &applied, NULL);
    tunedb_free(&db);
    int rc = specl(&out, &errs, "gen " GEN_SPEC " --target gpu --db '%s' -o '%s/one'",
                   db_path, out_dir);
    TU_CHECK(rc == 0, "gen --db: exit %d\n%s", rc, errs);
    free(out);
    free(errs);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/one", out_dir);
    check_gen_output(dir, &applied);
    spec_set_free(&applied);

    /* Two devices: one must be named. */
    CU_ASSERT_EQUAL_FATAL(load_db(&db, two_path), 0);
    const char *const devices[] = {NULL, TEST_DEVICE, OTHER_DEVICE};
    for (int d = 0; d < 3; d++) {
        CU_ASSERT_EQUAL_FATAL(read_spec(&applied, GEN_SPEC), 0);
        tunedb_apply(&db, &applied, devices[d]);
        snprintf(dir, sizeof dir, "%s/two%d", out_dir, d);
        rc = specl(&out, &errs, "gen " GEN_SPEC " --target gpu --db '%s'%s%s%s -o '%s'",
                   two_path, devices[d] ? " --db-device '" : "",
                   devices[d] ? devices[d] : "", devices[d] ? "'" : "", dir);
        TU_CHECK(rc == 0, "gen --db two devices (%s): exit %d\n%s",
                 devices[d] ? devices[d] : "none named", rc, errs);
        free(out);
        check_gen_output(dir, &applied);
        const struct kernel_spec *g = find_kernel(&applied, "g_exact");
        const char *want = d == 0 ? "op defaults (the tuning database holds "
                                    "several devices"
                                  : "exact tuning entry: ";
        TU_CHECK(g != NULL && starts_with(g->tile_note, want),
                 "two devices, %s: g_exact note '%s'",
                 devices[d] ? devices[d] : "none named",
                 g ? g->tile_note : "-");
        /* Every kernel's source is said, on stderr. */
        for (int k = 0; k < applied.n_kernel; k++) {
            char line[512];
            const struct kernel_spec *ks = &applied.kernel[k];
            snprintf(line, sizeof line, "specl: note: %s: %s\n", ks->name,
                     ks->tile_note[0] ? ks->tile_note
                                      : "knobs as the spec gives them");
            TU_CHECK(strstr(errs, line) != NULL,
                     "gen --db (%s): no note for %s in\n%s",
                     devices[d] ? devices[d] : "none named", ks->name, errs);
        }
        free(errs);
        spec_set_free(&applied);
    }

    /* --db-device takes the slug of the file name too, and one that names
     * no device of the file is an error that lists them; nothing written. */
    CU_ASSERT_EQUAL_FATAL(read_spec(&applied, GEN_SPEC), 0);
    tunedb_apply(&db, &applied, OTHER_DEVICE);
    char slug[256];
    tune_device_slug(OTHER_DEVICE, slug, sizeof slug);
    snprintf(dir, sizeof dir, "%s/slug", out_dir);
    rc = specl(&out, &errs, "gen " GEN_SPEC " --target gpu --db '%s' --db-device '%s' "
               "-o '%s'", two_path, slug, dir);
    TU_CHECK(rc == 0, "gen --db-device %s: exit %d\n%s", slug, rc, errs);
    free(out);
    free(errs);
    check_gen_output(dir, &applied);
    spec_set_free(&applied);
    snprintf(dir, sizeof dir, "%s/typo", out_dir);
    rc = specl(&out, &errs, "gen " GEN_SPEC " --target gpu --db '%s' --db-device 'Other' "
               "-o '%s'", two_path, dir);
    TU_CHECK(rc == 1 && strstr(errs, "--db-device 'Other' names no device") &&
                 strstr(errs, TEST_DEVICE) && strstr(errs, slug) &&
                 !file_exists(dir),
             "gen --db-device Other: exit %d, wrote %s\n%s", rc,
             file_exists(dir) ? "files" : "nothing", errs);
    free(out);
    free(errs);
    tunedb_free(&db);

    /* An empty database; a missing or malformed one writes nothing. */
    char empty[4096];
    tmp_path(empty, sizeof empty, "empty_db.yaml");
    write_text(empty, "# nothing tuned yet\nentries: []\n");
    snprintf(dir, sizeof dir, "%s/empty", out_dir);
    rc = specl(NULL, NULL, "gen " GEN_SPEC " --target gpu --db '%s' -o '%s'", empty, dir);
    TU_CHECK(rc == 0, "gen --db (empty): exit %d", rc);
    char path[4300];
    snprintf(path, sizeof path, "%s/g_exact.h", dir);
    char *h = tu_read(path, NULL);
    TU_CHECK(h != NULL && strstr(h, " * knobs:  op defaults (an empty tuning "
                                    "database)\n") != NULL,
             "gen --db (empty): %s", path);
    free(h);
    static const char *const bad[] = {DB_BAD_ENTRY, DB_BAD_YAML,
                                      TUNE_DIR "/no_such_db.yaml"};
    for (int i = 0; i < 3; i++) {
        snprintf(dir, sizeof dir, "%s/bad%d", out_dir, i);
        rc = specl(NULL, &errs, "gen " GEN_SPEC " --target gpu --db %s -o '%s'", bad[i],
                   dir);
        snprintf(path, sizeof path, "%s/g_exact.h", dir);
        TU_CHECK(rc == 1 && strstr(errs, bad[i]) != NULL &&
                     strstr(errs, "nothing written") != NULL &&
                     !file_exists(path),
                 "gen --db %s: exit %d\n%s", bad[i], rc, errs);
        free(errs);
    }
    rc = specl(NULL, NULL, "gen " GEN_SPEC " -o '%s' --db", out_dir);
    TU_CHECK(rc == 2, "gen --db without a file: exit %d", rc);
    spec_set_free(&best);
}

/* Without --target, gen puts each database device's entry for a kernel's
 * shape into its NAME.c beside the GPU and CPU defaults, for that device
 * (by name and driver), says per kernel which entries it used or why none,
 * and --db-device keeps one device's. */
static void test_gen_db_variants(void)
{
    static const struct {
        const char *device; /* --db-device, or none */
        int test, other;    /* whose entries g_exact gets */
    } runs[] = {{NULL, 1, 1}, {TEST_DEVICE, 1, 0}, {OTHER_DEVICE, 0, 1}};
    struct spec_set best;
    struct tunedb db;
    char db_path[4096], out_dir[4096], err[256], dir[4200], path[4400];
    CU_ASSERT_EQUAL_FATAL(read_spec(&best, BEST_SPEC), 0);
    tmp_path(db_path, sizeof db_path, "variants_db.yaml");
    tmp_path(out_dir, sizeof out_dir, "variants_out");
    build_db(&db, &best, NULL, NULL);
    CU_ASSERT_EQUAL_FATAL(tunedb_save(&db, db_path, err, sizeof err), 0);
    tunedb_free(&db);
    spec_set_free(&best);
    for (int r = 0; r < 3; r++) {
        const char *named = runs[r].device;
        char *out = NULL, *errs = NULL;
        snprintf(dir, sizeof dir, "%s/run%d", out_dir, r);
        int rc = specl(&out, &errs, "gen " GEN_SPEC " --db '%s'%s%s%s -o '%s'",
                       db_path, named ? " --db-device '" : "",
                       named ? named : "", named ? "'" : "", dir);
        TU_CHECK(rc == 0, "gen --db (%s): exit %d\n%s",
                 named ? named : "every device", rc, errs);
        snprintf(path, sizeof path, "%s/g_exact.h", dir);
        char *h = tu_read(path, NULL);
        snprintf(path, sizeof path, "%s/g_exact.c", dir);
        char *c = tu_read(path, NULL);
        CU_ASSERT_FATAL(h != NULL && c != NULL && errs != NULL);
        static const char *const names[] = {TEST_DEVICE, OTHER_DEVICE};
        for (int d = 0; d < 2; d++) {
            int want = d == 0 ? runs[r].test : runs[r].other;
            char doc[128], match[128], note[160];
            snprintf(doc, sizeof doc, "%s (driver test 1.0)", names[d]);
            snprintf(match, sizeof match, "    {\"%s\", \"test 1.0\", 0, ",
                     names[d]);
            snprintf(note, sizeof note, "specl: note: g_exact: %s: ",
                     names[d]);
            TU_CHECK((strstr(h, doc) != NULL) == want &&
                         (strstr(c, match) != NULL) == want &&
                         (strstr(errs, note) != NULL) == want,
                     "gen --db (%s): g_exact %s a variant for %s\n%s",
                     named ? named : "every device", want ? "lacks" : "has",
                     names[d], errs);
        }
        /* The defaults are always there, for every device and CPUs (no
         * caps column: none of g_exact's variants asks for any). */
        TU_CHECK(strstr(c, "    {NULL, NULL, 0, 0}, /* any device */") &&
                     strstr(h, "op defaults for GPUs; for any device"),
                 "gen --db (%s): g_exact without the GPU defaults",
                 named ? named : "every device");
        TU_CHECK(strstr(errs, "specl: note: g_explicit: knobs as the spec "
                              "gives them\n") != NULL &&
                     strstr(errs, "specl: note: g_rmsnorm: no tuning entry "
                                  "used: op defaults for every device\n") !=
                         NULL,
                 "gen --db (%s): notes\n%s", named ? named : "every device",
                 errs);
        free(h);
        free(c);
        free(out);
        free(errs);
    }
}

/* An entry is emitted on the op defaults it was tuned with: one from a
 * device of tensor cores keeps what only they run (bf16 rounded by PTX),
 * one without a target (older files) or from a GPU without them does
 * not. The variant found is the one given to the entry's device, merged
 * or not with the op defaults' variant of the same code. */
static void test_db_target(void)
{
    static const char spec[] =
        "kernels:\n"
        "  - {name: t_softmax, op: softmax, dtype: bf16, features: 4096}\n";
    static const struct {
        const char *target;
        enum target want;
    } cases[] = {{"tensor", TARGET_TENSOR},
                 {"", TARGET_GPU},
                 {"gpu", TARGET_GPU}};
    static struct variant_set vs; /* several whole kernel specs */
    struct spec_set set;
    CU_ASSERT_EQUAL_FATAL(read_spec_text(&set, "target.yaml", spec), 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct tunedb db;
        struct tune_entry e;
        struct buf notes;
        tunedb_init(&db);
        buf_init(&notes);
        entry_from(&e, &set.kernel[0], TEST_DEVICE, 4096, 10);
        snprintf(e.target, sizeof e.target, "%s", cases[c].target);
        tunedb_add(&db, &e);
        variants_build(&set.kernel[0], &db, NULL, &vs, &notes);
        const struct variant *tuned = NULL;
        for (int v = 0; v < vs.n && tuned == NULL; v++) {
            for (int m = 0; m < vs.v[v].n_match; m++) {
                if (strcmp(vs.v[v].match[m].device, TEST_DEVICE) == 0) {
                    tuned = &vs.v[v];
                }
            }
        }
        TU_CHECK(tuned != NULL, "target '%s': no variant for %s\n%s",
                 cases[c].target, TEST_DEVICE, buf_str(&notes));
        if (tuned != NULL) {
            struct plan p;
            memset(&p, 0, sizeof p);
            tuned->ks.op->plan(&tuned->ks, &p);
            int ptx = 0;
            for (int d = 0; d < p.n_define; d++) {
                ptx |= strcmp(p.define[d].name, "BF16_CVT_PTX") == 0;
            }
            TU_CHECK(tuned->ks.target == cases[c].want &&
                         ptx == (cases[c].want == TARGET_TENSOR),
                     "target '%s': variant '%s' on target %d (want %d), "
                     "BF16_CVT_PTX %d",
                     cases[c].target, tuned->label, (int)tuned->ks.target,
                     (int)cases[c].want, ptx);
        }
        buf_free(&notes);
        tunedb_free(&db);
    }
    spec_set_free(&set);
}

/* ---- 6. knob text, shape text, device slugs ----------------------------- */

static const char *const text_spec =
    "kernels:\n"
    "  - {name: x_lora, op: lora_forward, in_features: 96, out_features: "
    "64, rank: 8, alpha: 16}\n"
    "  - {name: x_delta, op: lora_forward, dtype: bf16, in_features: 4096, "
    "out_features: 4096, rank: 16, base: false, accumulate: true}\n"
    "  - {name: x_softmax, op: softmax, features: 1000, scale: 0.5}\n"
    "  - {name: x_rmsnorm, op: rmsnorm, features: 4096}\n"
    "  - {name: x_layernorm, op: layernorm, features: 768}\n"
    "  - {name: x_lora_oi, op: lora_forward, in_features: 96, out_features: "
    "64, rank: 8, alpha: 16, weight_layout: out_in}\n"
    "  - {name: x_lora_io, op: lora_forward, in_features: 96, out_features: "
    "64, rank: 8, alpha: 16, weight_layout: in_out}\n";

/* Every config of every op's space reads back from its text: the same
 * knobs, all marked set. */
static void test_knobs_text(void)
{
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec_text(&s, "text.yaml", text_spec), 0);
    long checked = 0;
    for (int k = 0; k < s.n_kernel; k++) {
        const struct kernel_spec *ks = &s.kernel[k];
        struct tune_space sp;
        char err[256];
        CU_ASSERT_EQUAL_FATAL(tune_space_build(ks->op, &sp, err, sizeof err),
                              0);
        for (long i = 0; i < sp.n_config; i++) {
            struct kernel_spec cks, back = *ks;
            char text[TUNE_TEXT], again[TUNE_TEXT];
            tune_space_config(ks, &sp, i, &cks, NULL, 0);
            knobs_text(&cks, text, sizeof text);
            for (int n = 0; n < ks->op->n_knobs; n++) {
                back.knob[n].set = 0;
                back.knob[n].num = -12345;
            }
            int rc = knobs_parse(&back, text, NULL, 0);
            knobs_text(&back, again, sizeof again);
            int same = rc == 0 && strcmp(text, again) == 0;
            for (int n = 0; n < ks->op->n_knobs; n++) {
                same &= back.knob[n].set &&
                        back.knob[n].num == cks.knob[n].num;
            }
            TU_CHECK(same, "%s config %ld: '%s' reads back as '%s' (%d)",
                     ks->name, i, text, again, rc);
            if (!same) {
                break;
            }
            checked++;
        }
    }
    CU_ASSERT(checked > 1000);

    /* The text names every knob in the op's order. */
    const struct kernel_spec *lora = find_kernel(&s, "x_lora");
    CU_ASSERT_PTR_NOT_NULL_FATAL(lora);
    char text[TUNE_TEXT];
    knobs_text(lora, text, sizeof text);
    TU_CHECK(starts_with(text, "m=") && strstr(text, " xa=") != NULL &&
                 strstr(text, "  ") == NULL && !ends_with(text, " "),
             "lora knobs: '%s'", text);
    const struct kernel_spec *sm = find_kernel(&s, "x_softmax");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sm);
    struct kernel_spec k = *sm;
    CU_ASSERT_EQUAL(knobs_parse(&k, "wg=8 rows=2 vec=8 mode=streaming "
                                "split=4 split_max=16 coop_split=2 "
                                "coop_max=1", NULL, 0),
                    0);
    knobs_text(&k, text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "wg=8 rows=2 vec=8 mode=streaming split=4 "
                                 "split_max=16 coop_split=2 coop_max=1");
    /* Part of the knobs: only those set. */
    k = *sm;
    CU_ASSERT_EQUAL(knobs_parse(&k, "vec=2", NULL, 0), 0);
    CU_ASSERT(k.knob[op_knob_index(k.op, "vec")].set &&
              !k.knob[op_knob_index(k.op, "wg")].set);
    k = *sm;
    CU_ASSERT_EQUAL(knobs_parse(&k, "", NULL, 0), 0);
    CU_ASSERT(!k.knob[0].set);

    /* Bad texts. */
    static const char *const bad[] = {
        "wg", "wg=", "=8", "wg=8 bogus=1", "wg=8x", "wg=abc", "wg=0",
        "wg=2048", "wg=8.5", "mode=fast", "mode=2", "vec=-4", "rows=1e9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        k = *sm;
        TU_CHECK(knobs_parse(&k, bad[i], NULL, 0) == -1, "'%s' accepted",
                 bad[i]);
    }
    k = *lora;
    TU_CHECK(knobs_parse(&k, "xa=sideways", NULL, 0) == -1 &&
                 knobs_parse(&k, "pad=", NULL, 0) == -1 &&
                 knobs_parse(&k, "m=64.5", NULL, 0) == -1 &&
                 knobs_parse(&k, "xa=inline warp_n=0", NULL, 0) == 0 &&
                 knobs_parse(&k, "xa=inline delta=split", NULL, 0) == -1,
             "lora knob texts");

    /* Shape texts: the int and bool fields, no floats; a choice where it
     * is not its default (out_in's kernels read W otherwise: their
     * entries are not in_out's). */
    static const struct {
        const char *kernel;
        const char *shape;
    } shapes[] = {
        {"x_lora", "in_features=96 out_features=64 rank=8 base=true "
                   "accumulate=false"},
        {"x_delta", "in_features=4096 out_features=4096 rank=16 base=false "
                    "accumulate=true"},
        {"x_softmax", "features=1000"},
        {"x_layernorm", "features=768"},
        {"x_lora_oi", "in_features=96 out_features=64 rank=8 base=true "
                      "accumulate=false weight_layout=out_in"},
        {"x_lora_io", "in_features=96 out_features=64 rank=8 base=true "
                      "accumulate=false"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const struct kernel_spec *ks = find_kernel(&s, shapes[i].kernel);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
        tune_shape_text(ks, text, sizeof text);
        TU_CHECK(strcmp(text, shapes[i].shape) == 0, "%s: shape '%s'",
                 ks->name, text);
        /* and the loader takes it back as that shape */
        char why[160] = "";
        TU_CHECK(tunedb_shape_fits(ks->op, ks->dtype, ks->target, text, why,
                                   sizeof why),
                 "%s: '%s' refused: %s", ks->name, text, why);
    }
    /* in_out is the default: named, it is no key the tuner writes */
    char why[160] = "";
    const struct kernel_spec *io = find_kernel(&s, "x_lora_io");
    CU_ASSERT_PTR_NOT_NULL_FATAL(io);
    TU_CHECK(!tunedb_shape_fits(io->op, io->dtype, io->target,
                                "in_features=96 out_features=64 rank=8 "
                                "base=true accumulate=false "
                                "weight_layout=in_out",
                                why, sizeof why),
             "weight_layout=in_out accepted as a shape");
    spec_set_free(&s);
}

static void test_device_slug(void)
{
    static const struct {
        const char *device;
        size_t size;
        const char *slug;
    } cases[] = {
        {"NVIDIA H100 80GB HBM3", 160, "nvidia-h100-80gb-hbm3"},
        {"pthread-skylake-avx512-AMD EPYC 7B13", 160,
         "pthread-skylake-avx512-amd-epyc-7b13"},
        {"  Intel(R) UHD Graphics 630 [0x3e92]  ", 160,
         "intel-r-uhd-graphics-630-0x3e92"},
        {"gfx90a:sramecc+:xnack-", 160, "gfx90a-sramecc-xnack"},
        {"A--B__C", 160, "a-b-c"},
        {"", 160, "device"},
        {"***", 160, "device"},
        {"NVIDIA H100", 8, "nvidia"},
        {"NVIDIA H100", 12, "nvidia-h100"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char slug[160];
        memset(slug, 'z', sizeof slug);
        tune_device_slug(cases[i].device, slug, cases[i].size);
        TU_CHECK(strcmp(slug, cases[i].slug) == 0,
                 "slug of '%s' (%zu): '%s', expected '%s'", cases[i].device,
                 cases[i].size, slug, cases[i].slug);
        TU_CHECK(strlen(slug) < cases[i].size, "slug '%s' overflows %zu",
                 slug, cases[i].size);
    }
}

int add_tune_suite(void)
{
    CU_pSuite s = CU_add_suite("tune", suite_init, suite_cleanup);
    if (s == NULL || add_sizes_tune_tests(s) != 0 ||
        add_ladder_tune_tests(s) != 0 ||
        CU_add_test(s, "filter: rejections and reasons", test_filter_cases) ==
            NULL ||
        CU_add_test(s, "filter: whole spaces", test_filter_space) == NULL ||
        CU_add_test(s, "filter: lora_decode's shape at few rows",
                    test_decode_space) == NULL ||
        CU_add_test(s, "filter: lora_bwd_fused's slices at few rows",
                    test_bwd_fused_space) == NULL ||
        CU_add_test(s, "filter: lora_decode_mma's slices at few rows",
                    test_decode_mma_space) == NULL ||
        CU_add_test(s, "filter: the op defaults of every target",
                    test_filter_home_targets) == NULL ||
        CU_add_test(s, "filter: a kernel's own knobs in its space",
                    test_space_add_home) == NULL ||
        CU_add_test(s, "candidates: one per distinct code",
                    test_candidates_distinct) == NULL ||
        CU_add_test(s, "candidates: the code that runs at the tuned rows",
                    test_candidates_at_rows) == NULL ||
        CU_add_test(s, "candidates: built with the tuned rows' paths alone",
                    test_measure_rows) == NULL ||
        CU_add_test(s, "tune: every op's space", test_every_space) ==
            NULL ||
        CU_add_test(s, "tune: a part of the knobs at a time",
                    test_tune_parts_space) == NULL ||
        CU_add_test(s, "tune: knobs that shape no code left out",
                    test_idle_axes) == NULL ||
        CU_add_test(s, "tune: the parts searched in turn",
                    test_tune_parts_search) == NULL ||
        CU_add_test(s, "tune: a value slow alone tried after the rest",
                    test_tune_parts_cost) == NULL ||
        CU_add_test(s, "tune: a ladder's crossover by probes between",
                    test_tune_crossover) == NULL ||
        CU_add_test(s, "tune: one part: the defaults' neighbours first",
                    test_tune_local_order) == NULL ||
        CU_add_test(s, "tune: random, db, plot", test_tune_random) == NULL ||
        CU_add_test(s, "tune: exhaustive, local",
                    test_tune_exhaustive_local) == NULL ||
        CU_add_test(s, "tune: the best re-timed back to back",
                    test_tune_retimed) == NULL ||
        CU_add_test(s, "tune: limits, budget, stop", test_tune_limits) ==
            NULL ||
        CU_add_test(s, "tune: the command", test_tune_cli) == NULL ||
        CU_add_test(s, "tune: bad options", test_tune_bad_options) == NULL ||
        CU_add_test(s, "tune: two runs, one database", test_tune_shared_db) ==
            NULL ||
        CU_add_test(s, "tune: narrower than every listed tile",
                    test_tune_narrow) ==
            NULL ||
        CU_add_test(s, "tune: resume", test_tune_resume) == NULL ||
        CU_add_test(s, "tune: SIGKILL, then resume", test_tune_killed) ==
            NULL ||
        CU_add_test(s, "tune: SIGTERM stops and saves", test_tune_sigterm) ==
            NULL ||
        CU_add_test(s, "tune: Ctrl-C during a build", test_tune_ctrl_c) ==
            NULL ||
        CU_add_test(s, "db merge: cli", test_merge_cli) == NULL ||
        CU_add_test(s, "db merge: tunedb_merge, malformed",
                    test_merge_in_process) == NULL ||
        CU_add_test(s, "db: save and load", test_save_load) == NULL ||
        CU_add_test(s, "db: a file that does not load, kept; the run "
                    "saved aside", test_save_aside) == NULL ||
        CU_add_test(s, "db: every spec's shapes read back",
                    test_shapes_read_back) == NULL ||
        CU_add_test(s, "db: how an entry was measured",
                    test_db_measured_keys) == NULL ||
        CU_add_test(s, "db: odd device names", test_save_load_names) ==
            NULL ||
        CU_add_test(s, "db: bad databases", test_bad_databases) == NULL ||
        CU_add_test(s, "db: fuzz regressions replayed",
                    test_db_fuzz_regressions) == NULL ||
        CU_add_test(s, "pick: exact, nearest, dtype, flags, device",
                    test_pick) == NULL ||
        CU_add_test(s, "apply: tunedb_apply", test_apply) == NULL ||
        CU_add_test(s, "gen --db", test_gen_db) == NULL ||
        CU_add_test(s, "gen --db: an entry a stopped tune left",
                    test_gen_db_unfinished) == NULL ||
        CU_add_test(s, "gen --db: a variant per device",
                    test_gen_db_variants) == NULL ||
        CU_add_test(s, "gen --db: an entry on the target it was tuned for",
                    test_db_target) == NULL ||
        CU_add_test(s, "knob and shape text", test_knobs_text) == NULL ||
        CU_add_test(s, "device slug", test_device_slug) == NULL) {
        return -1;
    }
    return 0;
}
