/* test_ladder.c - ladders of row counts: `specl tune --rows 1,8,...` (the
 * list as read, the lists refused before anything is measured, a tiny
 * ladder tuned on PoCL storing an entry per row count) and `specl gen
 * --db` of a device's entries at several row counts (the rows ranges
 * they become, the notes, bench at the rows on either side of each
 * boundary running and verifying that range's variant, and a database of
 * one row count, or of row counts that share their knobs, emitting no
 * range code); a program that spies on the kernels a stub of ranges
 * launches (tests/tune/ladder_spy.c). Joins the tune suite. */
#include <CUnit/Basic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knobs.h"
#include "runtime.h"
#include "spec.h"
#include "suites.h"
#include "testutil.h"
#include "tune.h"
#include "tunedb.h"
#include "variant.h"
#include "version.h"

#define SMALL_SPEC "tests/tune/small.yaml"
#define LADDER_SPY "tests/tune/ladder_spy.c"
/* It compiles with the emitted stub as a vendoring project's build would
 * (tests.mk's STUB_CFLAGS). */
#define SPY_CC                                                              \
    "${SPECL_CC:-${CC:-cc}} -std=c99 -Wpedantic -Wall -Wextra -Wshadow "    \
    "-Wcast-qual -Wconversion -Werror ${SPECL_STUB_CFLAGS:-} "

/* As test_tune.c's: PoCL's compiler leaks past exit under SANITIZE, and
 * no run here should take more than a few seconds. */
#define LSAN_ENV "LSAN_OPTIONS=\"suppressions=tests/tune/lsan.supp:" \
                 "print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}\" "
#define RUN_TIMEOUT "timeout 180 "

/* Runs `specl ARGS` (printf-style) in DIR, its stdout and stderr into
 * *OUT and *ERR (caller frees; never NULL); returns its exit status. */
static int run_specl(const char *dir, char **out, char **err,
                     const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int run_specl(const char *dir, char **out, char **err,
                     const char *fmt, ...)
{
    char args[4096], o[4200], e[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(o, sizeof o, "%s/out.txt", dir);
    snprintf(e, sizeof e, "%s/err.txt", dir);
    int rc = tu_run(LSAN_ENV RUN_TIMEOUT "%s %s >'%s' 2>'%s'", TU_SPECL,
                    args, o, e);
    *out = tu_read(o, NULL);
    *err = tu_read(e, NULL);
    if (*out == NULL) {
        *out = calloc(1, 1);
    }
    if (*err == NULL) {
        *err = calloc(1, 1);
    }
    return rc;
}

static int file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* ---- the list --rows takes -------------------------------------------- */

static void test_rows_parse(void)
{
    static const struct {
        const char *text;
        int n;
        long rows[4];
    } good[] = {
        {"8", 1, {8}},
        {"1,8,32", 3, {1, 8, 32}},
        {"32,1,8,8,1", 3, {1, 8, 32}},   /* sorted, repeats once */
        {"16777216,007", 2, {7, 16777216}},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        long rows[TUNE_MAX_LADDER];
        char why[96] = "";
        int n = tune_rows_parse(good[i].text, rows, why, sizeof why);
        int same = n == good[i].n;
        for (int k = 0; same && k < n; k++) {
            same = rows[k] == good[i].rows[k];
        }
        TU_CHECK(same, "--rows %s: %d row counts (%s), expected %d",
                 good[i].text, n, why, good[i].n);
    }
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"", "item 1 is empty"},
        {"8,,3", "item 2 is empty"},
        {",8", "item 1 is empty"},
        {"8,", "item 2 is empty"},
        {"0", "0 is out of range"},
        {"1,16777217", "16777217 is out of range"},
        {"99999999999999999999", "99999999999999999999 is out of range"},
        {"abc", "'abc' is not a whole number"},
        {"3,x", "'x' is not a whole number"},
        {"-1", "'-1' is not a whole number"},
        {"+8", "'+8' is not a whole number"},
        {" 8", "' 8' is not a whole number"},
        {"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
         "more than 16 row counts"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        long rows[TUNE_MAX_LADDER];
        char why[96] = "";
        int n = tune_rows_parse(bad[i].text, rows, why, sizeof why);
        TU_CHECK(n == -1 && strcmp(why, bad[i].why) == 0,
                 "--rows '%s': %d, '%s'; expected -1, '%s'", bad[i].text, n,
                 why, bad[i].why);
    }
    /* Sixteen distinct row counts are the most; repeats do not count. */
    long rows[TUNE_MAX_LADDER];
    char why[96];
    CU_ASSERT_EQUAL(tune_rows_parse("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,"
                                    "16,16,1", rows, why, sizeof why), 16);
}

/* A bad list is a usage error (exit 2) before the specs, the database or
 * the device are looked at: nothing measured, nothing written. */
static void test_rows_refused(void)
{
    static const char *const lists[] = {"8,,3", "0", "abc", "16777217",
                                        "4,8,"};
    char *dir = tu_tempdir();
    CU_ASSERT_FATAL(dir != NULL);
    char db[4200];
    snprintf(db, sizeof db, "%s/never.yaml", dir);
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        char *out, *err;
        int rc = run_specl(dir, &out, &err,
                           "tune " SMALL_SPEC " --rows '%s' --db '%s'",
                           lists[i], db);
        char want[160];
        snprintf(want, sizeof want, "specl tune: error: --rows needs a "
                 "whole number in [1, 16777216] or a comma-separated list "
                 "of them (1,8,32), got '%s': ", lists[i]);
        TU_CHECK(rc == 2 && strstr(err, want) != NULL &&
                     strstr(err, "Try 'specl tune --help'.") != NULL &&
                     out[0] == '\0' && !file_exists(db),
                 "tune --rows '%s': exit %d, %s\n%s%s", lists[i], rc,
                 file_exists(db) ? "wrote the database" : "wrote nothing",
                 out, err);
        free(out);
        free(err);
    }
    tu_rmtree(dir);
    free(dir);
}

/* The ranges of a ladder: up to the geometric mean of neighbours. */
static void test_ladder_ranges(void)
{
    static const struct {
        int n;
        long rows[6], max[6];
    } cases[] = {
        {6, {1, 8, 32, 128, 512, 4096}, {2, 16, 64, 256, 1448, 0}},
        {2, {1, 2}, {1, 0}},
        {2, {3, 4}, {3, 0}},
        {2, {4, 9}, {6, 0}},          /* an exact square root */
        {2, {4096, 16777216}, {262144, 0}},
        {1, {5}, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long max[6];
        ladder_ranges(cases[i].rows, cases[i].n, max);
        for (int k = 0; k < cases[i].n; k++) {
            TU_CHECK(max[k] == cases[i].max[k],
                     "ladder %zu: row count %ld serves up to %ld, expected "
                     "%ld", i, cases[i].rows[k], max[k], cases[i].max[k]);
        }
    }
}

/* ---- tune over a ladder ------------------------------------------------ */

/* One command tunes a kernel at each row count of the list: an entry per
 * row count, output that names the row count of each result, a summary,
 * and a plot per row count. */
static void test_tune_ladder(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_FATAL(dir != NULL);
    char db_path[4200], plot[4200];
    snprintf(db_path, sizeof db_path, "%s/ladder.yaml", dir);
    snprintf(plot, sizeof plot, "%s/l.svg", dir);
    char *out, *err;
    int rc = run_specl(dir, &out, &err,
                       "tune " SMALL_SPEC " --kernel t_lora --rows 8,1 "
                       "--strategy random --max-evals 2 --reps 2 --seed 3 "
                       "--db '%s' --plot '%s'",
                       db_path, plot);
    TU_CHECK(rc == 0, "tune --rows 8,1: exit %d\n%s%s", rc, out, err);
    struct tunedb db;
    struct diags d = {.out = stderr};
    tunedb_init(&db);
    CU_ASSERT_EQUAL(tunedb_load(&db, db_path, 0, &d), 0);
    int at1 = 0, at8 = 0;
    for (int i = 0; i < db.n; i++) {
        const struct tune_entry *e = &db.entry[i];
        TU_CHECK(strcmp(e->op, "lora_forward") == 0 && e->best[0] != '\0' &&
                     e->n_tried >= 1 && (e->rows == 1 || e->rows == 8),
                 "tune --rows 8,1: entry %d: %s rows %ld, best '%s'", i,
                 e->op, e->rows, e->best);
        at1 += e->rows == 1;
        at8 += e->rows == 8;
    }
    TU_CHECK(db.n == 2 && at1 == 1 && at8 == 1,
             "tune --rows 8,1: %d entries (rows 1: %d, rows 8: %d)", db.n,
             at1, at8);
    tunedb_free(&db);
    /* The fewest rows first; each result under its row count. */
    const char *first = strstr(out, "t_lora: lora_forward ");
    const char *r1 = strstr(out, ", rows 1: ");
    const char *r8 = strstr(out, ", rows 8: ");
    TU_CHECK(first != NULL && r1 != NULL && r8 != NULL && r1 < r8,
             "tune --rows 8,1: no start line per row count, in order:\n%s",
             out);
    const char *summary = strstr(out, "t_lora: ladder of 2 row counts:\n"
                                      "  rows 1: best ");
    TU_CHECK(summary != NULL && strstr(summary, "\n  rows 8: best ") != NULL,
             "tune --rows 8,1: no summary per row count:\n%s", out);
    static const char *const plots[] = {"l-rows1.svg", "l-rows1.csv",
                                        "l-rows8.svg", "l-rows8.csv"};
    for (int i = 0; i < 4; i++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/%s", dir, plots[i]);
        TU_CHECK(file_exists(path) && strstr(out, path) != NULL,
                 "tune --rows 8,1 --plot: no %s\n%s", path, out);
    }
    /* A second run resumes every row count from the database. */
    free(out);
    free(err);
    rc = run_specl(dir, &out, &err,
                   "tune " SMALL_SPEC " --kernel t_lora --rows 1,8 "
                   "--strategy random --max-evals 2 --reps 2 --seed 3 "
                   "--db '%s'",
                   db_path);
    const char *again = strstr(out, "0 timed, 2 from the database");
    TU_CHECK(rc == 0 && again != NULL &&
                 strstr(again + 1, "0 timed, 2 from the database") != NULL,
             "tune --rows 1,8 again: exit %d\n%s%s", rc, out, err);
    free(out);
    free(err);
    /* One that goes less far and times nothing (as to measure the
     * crossovers alone) leaves the entries' searches as they were. */
    rc = run_specl(dir, &out, &err,
                   "tune " SMALL_SPEC " --kernel t_lora --rows 1,8 "
                   "--max-evals 1 --reps 2 --db '%s'", db_path);
    tunedb_init(&db);
    CU_ASSERT_EQUAL(tunedb_load(&db, db_path, 0, &d), 0);
    for (int i = 0; i < db.n; i++) {
        TU_CHECK(rc == 0 && db.entry[i].searched == 2,
                 "tune --max-evals 1 over a database: rows %ld searched "
                 "%ld, was 2\n%s%s", db.entry[i].rows,
                 db.entry[i].searched, out, err);
    }
    tunedb_free(&db);
    free(out);
    free(err);
    tu_rmtree(dir);
    free(dir);
}

/* ---- gen --db of a ladder ---------------------------------------------- */

/* The kernel the database's entries are for, and three knob sets of its
 * shape that emit different code (the device's defaults resolve the
 * rest), none of them a device's defaults (a GPU's tile is 32 rows of
 * wm 4 and wn 4, a CPU's 128 rows): a layer too narrow for the CPU
 * defaults for few rows, whose NAME.c has no rows ranges but a
 * ladder's. */
static const char ladder_spec[] =
    "defaults: { dtype: f32 }\n"
    "kernels:\n"
    "  - {name: l_lora, op: lora_forward, in_features: 8, out_features: 32, "
    "rank: 2}\n";
static const char knob_spec[] =
    "defaults: { dtype: f32 }\n"
    "kernels:\n"
    "  - {name: k1, op: lora_forward, in_features: 8, out_features: 32, "
    "rank: 2, tile: {m: 32, wm: 2, wn: 4}}\n"
    "  - {name: k8, op: lora_forward, in_features: 8, out_features: 32, "
    "rank: 2, tile: {m: 64, wm: 8, wn: 8, xa: prepass}}\n"
    "  - {name: k64, op: lora_forward, in_features: 8, out_features: 32, "
    "rank: 2, tile: {m: 16, wm: 4, wn: 8}}\n";

/* The same at 128 columns, wide enough for the CPU defaults for few rows:
 * its NAME.c has every CPU's rows ranges too. */
static const char wide_spec[] =
    "defaults: { dtype: f32 }\n"
    "kernels:\n"
    "  - {name: l_lora, op: lora_forward, in_features: 8, out_features: 128, "
    "rank: 2}\n";
static const char wide_knob_spec[] =
    "defaults: { dtype: f32 }\n"
    "kernels:\n"
    "  - {name: k1, op: lora_forward, in_features: 8, out_features: 128, "
    "rank: 2, tile: {m: 32, wm: 2, wn: 4}}\n"
    "  - {name: k8, op: lora_forward, in_features: 8, out_features: 128, "
    "rank: 2, tile: {m: 64, wm: 8, wn: 8, xa: prepass}}\n"
    "  - {name: k64, op: lora_forward, in_features: 8, out_features: 128, "
    "rank: 2, tile: {m: 16, wm: 4, wn: 8}}\n";

/* A ladder's kernel (LADDER) and its knob sets (KNOBS, three kernels). */
struct ladder_specs {
    const char *ladder, *knobs;
};
static const struct ladder_specs narrow = {ladder_spec, knob_spec};
static const struct ladder_specs wide = {wide_spec, wide_knob_spec};

/* An entry of KS's shape on DEVICE (DRIVER) at ROWS whose best is BEST
 * ("": none). */
static void add_entry(struct tunedb *db, const struct rt *rt,
                      const char *driver, const struct kernel_spec *ks,
                      long rows, const char *best, double us)
{
    struct tune_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.device, sizeof e.device, "%s", rt->name);
    snprintf(e.driver, sizeof e.driver, "%s", driver);
    snprintf(e.op, sizeof e.op, "%s", ks->op->name);
    snprintf(e.dtype, sizeof e.dtype, "%s", dtype_name(ks->dtype));
    snprintf(e.target, sizeof e.target, "%s", target_name(rt->target));
    tune_shape_text(ks, e.shape, sizeof e.shape);
    e.rows = rows;
    snprintf(e.best, sizeof e.best, "%s", best);
    e.best_us = best[0] ? us : 0;
    e.default_us = 2 * us;
    snprintf(e.version, sizeof e.version, "%s", SPECL_VERSION);
    tunedb_add(db, &e);
}

/* The knob texts of SPECS' knob kernels for RT's device into KNOBS[3];
 * its ladder's kernel into *KS (of SET, which the caller frees). */
static int ladder_knobs(const struct rt *rt, const struct ladder_specs *specs,
                        struct spec_set *set, const struct kernel_spec **ks,
                        char knobs[3][TUNE_TEXT])
{
    struct spec_set k;
    struct diags d = {.out = stderr};
    spec_set_init(&k);
    spec_set_init(set);
    int bad = spec_read_buffer(&k, "knobs.yaml",
                               (const unsigned char *)specs->knobs,
                               strlen(specs->knobs), &d) != 0 ||
              spec_set_target(&k, rt->target, &d) != 0 ||
              spec_read_buffer(set, "ladder.yaml",
                               (const unsigned char *)specs->ladder,
                               strlen(specs->ladder), &d) != 0 ||
              spec_set_target(set, rt->target, &d) != 0 || k.n_kernel != 3;
    for (int i = 0; !bad && i < 3; i++) {
        knobs_text(&k.kernel[i], knobs[i], TUNE_TEXT);
    }
    *ks = bad ? NULL : &set->kernel[0];
    spec_set_free(&k);
    return bad ? -1 : 0;
}

/* What the gen tests start from: the default device (RT, closed by the
 * caller), a temporary directory (*DIR, the caller's to remove and
 * free), ladder_knobs' kernel and knob texts of SPECS, and its ladder's
 * spec written as DIR/ladder.yaml (its path in SPEC). -1 where there is
 * no device. */
static int gen_setup(const struct ladder_specs *specs, struct rt *rt,
                     char **dir, struct spec_set *set,
                     const struct kernel_spec **ks, char knobs[3][TUNE_TEXT],
                     char *spec, size_t spec_size)
{
    char rt_err[256];
    if (rt_open(rt, NULL, rt_err, sizeof rt_err) < 0) {
        TU_CHECK(0, "no OpenCL device: %s", rt_err);
        return -1;
    }
    *dir = tu_tempdir();
    CU_ASSERT_FATAL(*dir != NULL);
    CU_ASSERT_FATAL(ladder_knobs(rt, specs, set, ks, knobs) == 0);
    snprintf(spec, spec_size, "%s/ladder.yaml", *dir);
    FILE *f = fopen(spec, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs(specs->ladder, f);
    fclose(f);
    return 0;
}

/* The variant index the note "NAME: DEVICE: rows RANGE: variant V, ..."
 * of ERRS gives; -1 without one. */
static int range_variant(const char *errs, const char *device,
                         const char *range)
{
    char line[512];
    snprintf(line, sizeof line, "specl: note: l_lora: %s: rows %s: variant ",
             device, range);
    const char *p = strstr(errs, line);
    return p != NULL ? atoi(p + strlen(line)) : -1;
}

/* A device's entries at rows 1, 8 and 64 whose bests differ: three rows
 * ranges, split at the geometric means (2 and 22), in the stub as a
 * table; the entries of another driver or without a result are passed
 * over with a note; bench at the rows either side of each boundary runs
 * that range's variant (NAME_variant_at) and verifies it. */
static void test_gen_ladder(void)
{
    struct rt rt;
    char *dir;
    struct spec_set set;
    const struct kernel_spec *ks;
    char knobs[3][TUNE_TEXT], spec[4200], db_path[4200], out_dir[4200];
    if (gen_setup(&narrow, &rt, &dir, &set, &ks, knobs, spec, sizeof spec) <
        0) {
        return;
    }
    TU_CHECK(strcmp(knobs[0], knobs[1]) != 0 &&
                 strcmp(knobs[1], knobs[2]) != 0,
             "the ladder's knob sets are not distinct");
    struct tunedb db;
    tunedb_init(&db);
    add_entry(&db, &rt, rt.driver, ks, 64, knobs[2], 30);
    add_entry(&db, &rt, rt.driver, ks, 1, knobs[0], 3);
    add_entry(&db, &rt, rt.driver, ks, 8, knobs[1], 5);
    add_entry(&db, &rt, "other driver 9.9", ks, 16, knobs[0], 7);
    add_entry(&db, &rt, rt.driver, ks, 4, "", 0);
    snprintf(db_path, sizeof db_path, "%s/db.yaml", dir);
    snprintf(out_dir, sizeof out_dir, "%s/gen", dir);
    char err[256];
    CU_ASSERT_FATAL(tunedb_save(&db, db_path, err, sizeof err) == 0);
    tunedb_free(&db);

    char *out, *errs;
    int rc = run_specl(dir, &out, &errs, "gen '%s' --db '%s' -o '%s'", spec,
                       db_path, out_dir);
    TU_CHECK(rc == 0, "gen --db of a ladder: exit %d\n%s", rc, errs);
    int v1 = range_variant(errs, rt.name, "1 to 2");
    int v8 = range_variant(errs, rt.name, "3 to 22");
    int v64 = range_variant(errs, rt.name, "23 and more");
    TU_CHECK(v1 > 0 && v8 > 0 && v64 > 0 && v1 != v8 && v8 != v64 &&
                 v1 != v64,
             "gen --db of a ladder: ranges' variants %d, %d, %d\n%s", v1, v8,
             v64, errs);
    char note[512];
    snprintf(note, sizeof note, "specl: note: l_lora: %s: rows 16: skipped: "
             "measured with driver other driver 9.9, not %s as the entry of "
             "rows 64\n", rt.name, rt.driver);
    TU_CHECK(strstr(errs, note) != NULL, "no note '%s' in\n%s", note, errs);
    snprintf(note, sizeof note, "specl: note: l_lora: %s: rows 4: skipped: "
             "the entry has no result\n", rt.name);
    TU_CHECK(strstr(errs, note) != NULL, "no note '%s' in\n%s", note, errs);
    free(out);
    free(errs);

    /* The stub holds the ranges as a table, and says them in NAME.h. */
    char path[4300];
    snprintf(path, sizeof path, "%s/l_lora.c", out_dir);
    char *c = tu_read(path, NULL);
    snprintf(path, sizeof path, "%s/l_lora.h", out_dir);
    char *h = tu_read(path, NULL);
    CU_ASSERT_FATAL(c != NULL && h != NULL);
    const int want_v[3] = {v1, v8, v64};
    const long want_max[3] = {2, 22, 0};
    char *flat = tu_flat(c);
    CU_ASSERT_FATAL(flat != NULL);
    for (int i = 0; i < 3; i++) {
        char row[512];
        snprintf(row, sizeof row, " {\"%s\", %ld, %d},", rt.name,
                 want_max[i], want_v[i]);
        TU_CHECK(strstr(flat, row) != NULL, "l_lora.c: no range row '%s'",
                 row);
    }
    free(flat);
    snprintf(note, sizeof note, " *   %s, rows 3 to 22: variant %d (tuned "
             "at rows 8)\n", rt.name, v8);
    TU_CHECK(strstr(h, "int l_lora_variant_at(const struct l_lora *k, "
                       "const size_t *sizes);") != NULL &&
                 strstr(h, note) != NULL,
             "l_lora.h: no l_lora_variant_at or no '%s'", note);
    free(c);
    free(h);

    /* Either side of each boundary, the range's variant runs, verified
     * against float64 (bench exits 1 when it is wrong). */
    static const struct {
        long rows;
        int range;
    } calls[] = {{2, 0}, {3, 1}, {22, 1}, {23, 2}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        rc = run_specl(dir, &out, &errs,
                       "bench '%s' --db '%s' --rows %ld --quick --reps 2 "
                       "--no-naive -v",
                       spec, db_path, calls[i].rows);
        char ran[64];
        snprintf(ran, sizeof ran, "  specl ran variant %d of ",
                 want_v[calls[i].range]);
        TU_CHECK(rc == 0 && strstr(out, ran) != NULL &&
                     strstr(out, "WRONG") == NULL &&
                     strstr(out, knobs[calls[i].range]) != NULL,
                 "bench --rows %ld: exit %d, expected '%s' with knobs %s\n"
                 "%s%s", calls[i].rows, rc, ran, knobs[calls[i].range], out,
                 errs);
        free(out);
        free(errs);
    }
    /* The kernels launched are those of the range's variant, through the
     * handle and through a clone (tests/tune/ladder_spy.c spies on
     * clEnqueueNDRangeKernel). */
    rc = tu_run(SPY_CC "-I'%s' " LADDER_SPY " -o '%s/spy' "
                "-lOpenCL >'%s/spy.log' 2>&1 && " LSAN_ENV RUN_TIMEOUT
                "'%s/spy' 1:%d 2:%d 3:%d 22:%d 23:%d 64:%d >>'%s/spy.log' "
                "2>&1",
                out_dir, dir, dir, dir, v1, v1, v8, v8, v64, v64, dir);
    snprintf(path, sizeof path, "%s/spy.log", dir);
    char *log = tu_read(path, NULL);
    TU_CHECK(rc == 0, "ladder_spy: exit %d\n%s", rc, log ? log : "");
    free(log);

    /* A range whose variant does not build (an #error in its parameters)
     * runs the handle's own variant, the one of the most rows, and the
     * build log says why; the other ranges keep theirs. */
    rc = tu_run("sed -i '/^\\/\\* the parameters of variant %d \\*\\/$/{n;"
                "s/$/\\n    \"#error range broken on purpose\\\\n\",/;}' "
                "'%s/l_lora.c' && grep -q 'range broken on purpose' "
                "'%s/l_lora.c' && " SPY_CC "-I'%s' " LADDER_SPY
                " -o '%s/spy' -lOpenCL >'%s/spy.log' 2>&1 && " LSAN_ENV
                RUN_TIMEOUT "'%s/spy' 1:%d 3:%d 22:%d 23:%d "
                "'log:l_lora variant %d (' >>'%s/spy.log' 2>&1",
                v8, out_dir, out_dir, out_dir, dir, dir, dir, v1, v64, v64,
                v64, v8, dir);
    log = tu_read(path, NULL);
    TU_CHECK(rc == 0, "ladder_spy, variant %d broken: exit %d\n%s", v8, rc,
             log ? log : "");
    free(log);
    spec_set_free(&set);
    rt_close(&rt);
    tu_rmtree(dir);
    free(dir);
}

/* A database of one row count emits no range code; nor does one whose
 * row counts share their knobs, whose files are the same. */
static void test_gen_one_row_count(void)
{
    struct rt rt;
    char *dir;
    struct spec_set set;
    const struct kernel_spec *ks;
    char knobs[3][TUNE_TEXT], spec[4200], err[256];
    if (gen_setup(&narrow, &rt, &dir, &set, &ks, knobs, spec, sizeof spec) <
        0) {
        return;
    }
    static const char *const names[] = {"one", "shared"};
    for (int run = 0; run < 2; run++) {
        struct tunedb db;
        char db_path[4300];
        tunedb_init(&db);
        add_entry(&db, &rt, rt.driver, ks, 64, knobs[2], 30);
        if (run == 1) {
            add_entry(&db, &rt, rt.driver, ks, 8, knobs[2], 5);
        }
        snprintf(db_path, sizeof db_path, "%s/%s.yaml", dir, names[run]);
        CU_ASSERT_FATAL(tunedb_save(&db, db_path, err, sizeof err) == 0);
        tunedb_free(&db);
        char *out, *errs;
        int rc = run_specl(dir, &out, &errs, "gen '%s' --db '%s' -o '%s/%s'",
                           spec, db_path, dir, names[run]);
        TU_CHECK(rc == 0, "gen --db %s: exit %d\n%s", names[run], rc, errs);
        if (run == 1) {
            char note[512];
            snprintf(note, sizeof note, "specl: note: l_lora: %s: rows 8, "
                     "64: one config: no rows ranges\n", rt.name);
            TU_CHECK(strstr(errs, note) != NULL, "no note '%s' in\n%s", note,
                     errs);
        }
        free(out);
        free(errs);
    }
    static const char *const files[] = {"l_lora.c", "l_lora.h", "l_lora.cl"};
    for (int i = 0; i < 3; i++) {
        char a[4300], b[4300];
        snprintf(a, sizeof a, "%s/one/%s", dir, files[i]);
        snprintf(b, sizeof b, "%s/shared/%s", dir, files[i]);
        char *ta = tu_read(a, NULL), *tb = tu_read(b, NULL);
        TU_CHECK(ta != NULL && tb != NULL && strcmp(ta, tb) == 0,
                 "%s differs between one row count and two of one config",
                 files[i]);
        TU_CHECK(ta != NULL && strstr(ta, "_ranges") == NULL &&
                     strstr(ta, "variant_at") == NULL &&
                     strstr(ta, "rows range") == NULL,
                 "%s of one row count has range code", files[i]);
        free(ta);
        free(tb);
    }
    spec_set_free(&set);
    rt_close(&rt);
    tu_rmtree(dir);
    free(dir);
}

/* Builds LADDER_SPY against OUT_DIR's l_lora.c into DIR and runs it with
 * ARGS (ROWS:VARIANT ...): it must exit 0, or the test fails with its
 * output (DIR/spy.log). */
static void check_spy(const char *dir, const char *out_dir, const char *args)
{
    int rc = tu_run(SPY_CC "-I'%s' " LADDER_SPY " -o '%s/spy' -lOpenCL "
                    ">'%s/spy.log' 2>&1 && " LSAN_ENV RUN_TIMEOUT
                    "'%s/spy' %s >>'%s/spy.log' 2>&1",
                    out_dir, dir, dir, dir, args, dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/spy.log", dir);
    char *log = tu_read(path, NULL);
    TU_CHECK(rc == 0, "ladder_spy %s: exit %d\n%s", args, rc,
             log ? log : "");
    free(log);
}

/* The variant of TEXT's (an l_lora.c's) row of every CPU's rows ranges
 * up to MAX_ROWS rows (0: past the others), or of its device matches
 * for DEVICE (MAX_ROWS unused); -1 without one. */
static int stub_row_variant(const char *text, const char *device,
                            long max_rows)
{
    char row[512];
    if (device == NULL) {
        snprintf(row, sizeof row, "    {NULL, %ld, ", max_rows);
        const char *p = strstr(text, row);
        return p != NULL ? atoi(p + strlen(row)) : -1;
    }
    snprintf(row, sizeof row, "    {\"%s\", \"", device);
    const char *p = strstr(text, row);
    const char *end = p != NULL ? strstr(p, "},") : NULL;
    while (end != NULL && end > p && end[-1] >= '0' && end[-1] <= '9') {
        end--;
    }
    return end != NULL ? atoi(end) : -1;
}

/* A device's own rows ranges come before every CPU's. A layer whose
 * NAME.c has every CPU's: without a database, on a CPU, its calls of up
 * to the CPUs' range's rows run the CPU defaults for few rows, more the
 * CPU defaults; with a ladder of this device's own, its tuned variants
 * run at their rows however few; with one entry of its own, its tuned
 * variant runs at any rows. Checked on the kernels that stub launches
 * (ladder_spy), as this device's type makes them. */
static void test_gen_cpu_ranges(void)
{
    struct rt rt;
    char *dir;
    struct spec_set set;
    const struct kernel_spec *ks;
    char knobs[3][TUNE_TEXT], spec[4200], db_path[4200], out_dir[4200];
    char path[4300], args[256], err[256];
    if (gen_setup(&wide, &rt, &dir, &set, &ks, knobs, spec, sizeof spec) <
        0) {
        return;
    }
    const long upto = op_find("lora_forward")->cpu_few_rows->max_rows;
    const int cpu = rt.target == TARGET_CPU;

    /* No database: every CPU's ranges. */
    char *out, *errs;
    snprintf(out_dir, sizeof out_dir, "%s/plain", dir);
    int rc = run_specl(dir, &out, &errs, "gen '%s' -o '%s'", spec, out_dir);
    TU_CHECK(rc == 0, "gen: exit %d\n%s", rc, errs);
    free(out);
    free(errs);
    snprintf(path, sizeof path, "%s/l_lora.c", out_dir);
    char *c = tu_read(path, NULL);
    CU_ASSERT_FATAL(c != NULL);
    int few = stub_row_variant(c, NULL, upto);
    int most = stub_row_variant(c, NULL, 0);
    free(c);
    TU_CHECK(few > 0 && most > 0 && few != most,
             "l_lora.c: every CPU's ranges run variants %d and %d", few,
             most);
    int v_few = cpu ? few : 0, v_most = cpu ? most : 0;
    snprintf(args, sizeof args, "1:%d %ld:%d %ld:%d %ld:%d", v_few, upto,
             v_few, upto + 1, v_most, 2 * upto, v_most);
    check_spy(dir, out_dir, args);

    /* A ladder of this device's own: rows 1 to 8 and 9 on. */
    struct tunedb db;
    tunedb_init(&db);
    add_entry(&db, &rt, rt.driver, ks, 64, knobs[2], 30);
    add_entry(&db, &rt, rt.driver, ks, 1, knobs[0], 3);
    snprintf(db_path, sizeof db_path, "%s/ladder-db.yaml", dir);
    CU_ASSERT_FATAL(tunedb_save(&db, db_path, err, sizeof err) == 0);
    tunedb_free(&db);
    snprintf(out_dir, sizeof out_dir, "%s/ladder", dir);
    rc = run_specl(dir, &out, &errs, "gen '%s' --db '%s' -o '%s'", spec,
                   db_path, out_dir);
    int v1 = range_variant(errs, rt.name, "1 to 8");
    int v64 = range_variant(errs, rt.name, "9 and more");
    snprintf(path, sizeof path, "%s/l_lora.c", out_dir);
    c = tu_read(path, NULL);
    CU_ASSERT_FATAL(c != NULL);
    few = stub_row_variant(c, NULL, upto);
    free(c);
    TU_CHECK(rc == 0 && v1 > 0 && v64 > 0 && few > 0 && v1 != v64 &&
                 v1 != few && v64 != few,
             "gen --db of a ladder: exit %d, ranges' variants %d, %d, "
             "every CPU's for few rows %d\n%s",
             rc, v1, v64, few, errs);
    free(out);
    free(errs);
    snprintf(args, sizeof args, "1:%d 8:%d 9:%d %ld:%d %ld:%d", v1, v1, v64,
             upto, v64, upto + 1, v64);
    check_spy(dir, out_dir, args);

    /* One entry of this device's own: its variant at any rows. */
    tunedb_init(&db);
    add_entry(&db, &rt, rt.driver, ks, 64, knobs[1], 30);
    snprintf(db_path, sizeof db_path, "%s/one-db.yaml", dir);
    CU_ASSERT_FATAL(tunedb_save(&db, db_path, err, sizeof err) == 0);
    tunedb_free(&db);
    snprintf(out_dir, sizeof out_dir, "%s/one", dir);
    rc = run_specl(dir, &out, &errs, "gen '%s' --db '%s' -o '%s'", spec,
                   db_path, out_dir);
    TU_CHECK(rc == 0, "gen --db of one entry: exit %d\n%s", rc, errs);
    free(out);
    free(errs);
    snprintf(path, sizeof path, "%s/l_lora.c", out_dir);
    c = tu_read(path, NULL);
    CU_ASSERT_FATAL(c != NULL);
    int tuned = stub_row_variant(c, rt.name, 0);
    few = stub_row_variant(c, NULL, upto);
    free(c);
    TU_CHECK(tuned > 0 && few > 0 && tuned != few && tuned != most,
             "l_lora.c of one entry: tuned variant %d, every CPU's for few "
             "rows %d", tuned, few);
    snprintf(args, sizeof args, "1:%d 17:%d %ld:%d %ld:%d", tuned, tuned,
             upto, tuned, upto + 1, tuned);
    check_spy(dir, out_dir, args);
    spec_set_free(&set);
    rt_close(&rt);
    tu_rmtree(dir);
    free(dir);
}

/* `bench SPEC --db DB --rows ROWS` (in DIR) runs VARIANT, verified
 * against float64. */
static void check_bench_ran(const char *dir, const char *spec,
                            const char *db, long rows, int variant)
{
    char *out, *errs, ran[64];
    int rc = run_specl(dir, &out, &errs,
                       "bench '%s' --db '%s' --rows %ld --quick --reps 2 "
                       "--no-naive -v", spec, db, rows);
    snprintf(ran, sizeof ran, "  specl ran variant %d of ", variant);
    TU_CHECK(rc == 0 && strstr(out, ran) != NULL &&
                 strstr(out, "WRONG") == NULL,
             "bench --rows %ld: exit %d, expected '%s'\n%s%s", rows, rc, ran,
             out, errs);
    free(out);
    free(errs);
}

/* Where the tuner measured where neighbouring row counts' bests give way,
 * their ranges end there (saved and loaded with the entry), and the
 * defaults run the rows between them; one measured against a best the
 * next row count no longer has is passed over (the geometric mean). On
 * merge a crossover goes with the best it was measured with. */
static void test_gen_crossovers(void)
{
    struct rt rt;
    char *dir;
    struct spec_set set;
    const struct kernel_spec *ks;
    char knobs[3][TUNE_TEXT], spec[4200], db_path[4200], out_dir[4200];
    char err[256];
    if (gen_setup(&narrow, &rt, &dir, &set, &ks, knobs, spec, sizeof spec) <
        0) {
        return;
    }
    struct tunedb db;
    tunedb_init(&db);
    add_entry(&db, &rt, rt.driver, ks, 64, knobs[2], 30);
    add_entry(&db, &rt, rt.driver, ks, 1, knobs[0], 3);
    struct tune_entry *e = &db.entry[db.n - 1];
    e->upto_rows = 5;
    e->next_from = 7;
    e->upto_next = 8;
    snprintf(e->upto_with, sizeof e->upto_with, "%s", knobs[1]);
    add_entry(&db, &rt, rt.driver, ks, 8, knobs[1], 5);
    e = &db.entry[db.n - 1];
    e->upto_rows = 40;
    e->next_from = 41;
    e->upto_next = 64;
    snprintf(e->upto_with, sizeof e->upto_with, "%s", knobs[0]); /* stale */
    snprintf(db_path, sizeof db_path, "%s/db.yaml", dir);
    snprintf(out_dir, sizeof out_dir, "%s/gen", dir);
    CU_ASSERT_FATAL(tunedb_save(&db, db_path, err, sizeof err) == 0);

    /* Merged into a copy whose best at 8 rows differs: not its crossover;
     * into one whose best is the same: its crossover. */
    struct tunedb other;
    tunedb_init(&other);
    add_entry(&other, &rt, rt.driver, ks, 8, knobs[2], 4);
    tunedb_merge(&other, &db);
    TU_CHECK(other.entry[0].upto_next == 0,
             "merge: a crossover of another best kept (up to %ld rows)",
             other.entry[0].upto_rows);
    snprintf(other.entry[0].best, sizeof other.entry[0].best, "%s",
             knobs[1]);
    tunedb_merge(&other, &db);
    TU_CHECK(other.entry[0].upto_rows == 40 &&
                 other.entry[0].next_from == 41 &&
                 other.entry[0].upto_next == 64,
             "merge: the crossover of the same best not taken");
    tunedb_free(&other);
    tunedb_free(&db);

    char *out, *errs;
    int rc = run_specl(dir, &out, &errs, "gen '%s' --db '%s' -o '%s'", spec,
                       db_path, out_dir);
    int v1 = range_variant(errs, rt.name, "1 to 5");
    int v0 = range_variant(errs, rt.name, "6 to 6");
    int v8 = range_variant(errs, rt.name, "7 to 22");
    int v64 = range_variant(errs, rt.name, "23 and more");
    TU_CHECK(rc == 0 && v1 > 0 && v0 >= 0 && v8 > 0 && v64 > 0 &&
                 v1 != v0 && v0 != v8 && v1 != v8 && v8 != v64,
             "gen --db of measured crossovers: exit %d, ranges' variants "
             "%d, %d (the defaults), %d, %d\n%s", rc, v1, v0, v8, v64, errs);
    char note[512];
    snprintf(note, sizeof note, "specl: note: l_lora: %s: rows 1 to 8: "
             "measured: the first best fastest up to 5 rows, the second "
             "from 7, the defaults between\n", rt.name);
    TU_CHECK(strstr(errs, note) != NULL &&
                 strstr(errs, "rows 8 to 64: measured") == NULL,
             "gen --db of measured crossovers: no '%s' (or one for the "
             "stale crossover) in\n%s", note, errs);
    free(out);
    free(errs);
    /* Either side of each measured end, verified. */
    const long rows[] = {5, 6, 7};
    const int ran[] = {v1, v0, v8};
    for (int i = 0; i < 3; i++) {
        check_bench_ran(dir, spec, db_path, rows[i], ran[i]);
    }
    spec_set_free(&set);
    rt_close(&rt);
    tu_rmtree(dir);
    free(dir);
}

/* Eight knob sets of the wide layer that emit different code. */
static const char full_knob_spec[] =
    "defaults: { dtype: f32, in_features: 8, out_features: 128, rank: 2 }\n"
    "kernels:\n"
    "  - {name: k1, op: lora_forward, tile: {m: 32, wm: 2, wn: 4}}\n"
    "  - {name: k2, op: lora_forward, tile: {m: 64, wm: 8, wn: 8}}\n"
    "  - {name: k3, op: lora_forward, tile: {m: 16, wm: 4, wn: 8}}\n"
    "  - {name: k4, op: lora_forward, tile: {m: 32, wm: 4, wn: 4}}\n"
    "  - {name: k5, op: lora_forward, tile: {m: 16, wm: 2, wn: 4}}\n"
    "  - {name: k6, op: lora_forward, tile: {m: 64, wm: 4, wn: 8}}\n"
    "  - {name: k7, op: lora_forward, tile: {m: 32, wm: 8, wn: 8}}\n"
    "  - {name: k8, op: lora_forward, tile: {m: 16, wm: 4, wn: 4}}\n";

/* More row counts than a NAME.c has variants for: those whose tunes
 * gained most over the defaults keep theirs, each of the rest runs the
 * defaults (what its tune timed at its rows; a neighbour's knobs never
 * ran there), and every CPU keeps its variant for few rows. A measured
 * crossover with a row count left out still ends the range where the
 * tune measured it: the best was faster than the defaults up to there
 * (8 rows' up to 9, the 16 left out), and the defaults were up to where
 * the next best took over (32 rows' from 24). */
static void test_gen_ladder_full(void)
{
    struct rt rt;
    char *dir;
    struct spec_set set, k;
    const struct kernel_spec *ks;
    char knobs[3][TUNE_TEXT], spec[4200], db_path[4200], out_dir[4200];
    char err[256];
    struct diags d = {.out = stderr};
    if (gen_setup(&wide, &rt, &dir, &set, &ks, knobs, spec, sizeof spec) <
        0) {
        return;
    }
    spec_set_init(&k);
    CU_ASSERT_FATAL(spec_read_buffer(&k, "full.yaml",
                                     (const unsigned char *)full_knob_spec,
                                     strlen(full_knob_spec), &d) == 0 &&
                    spec_set_target(&k, rt.target, &d) == 0 &&
                    k.n_kernel == 8);
    /* The defaults' time over the best's at each row count, in no order
     * of rows; the entry of the most rows (4096) gains 2. */
    static const long rows[7] = {1, 2, 4, 8, 16, 32, 64};
    static const double gain[7] = {1.5, 3.0, 1.2, 2.5, 1.1, 2.2, 1.3};
    struct tunedb db;
    tunedb_init(&db);
    char text[TUNE_TEXT];
    knobs_text(&k.kernel[7], text, sizeof text);
    add_entry(&db, &rt, rt.driver, ks, 4096, text, 100);
    for (int i = 0; i < 7; i++) {
        knobs_text(&k.kernel[i], text, sizeof text);
        add_entry(&db, &rt, rt.driver, ks, rows[i], text, 10);
        db.entry[db.n - 1].default_us = 10 * gain[i];
    }
    for (int i = 4; i <= 5; i++) { /* rows 8 and 16 */
        struct tune_entry *e = &db.entry[i];
        e->upto_rows = i == 4 ? 9 : 20;
        e->next_from = i == 4 ? 12 : 24;
        e->upto_next = db.entry[i + 1].rows;
        snprintf(e->upto_with, sizeof e->upto_with, "%s",
                 db.entry[i + 1].best);
    }
    spec_set_free(&k);
    snprintf(db_path, sizeof db_path, "%s/db.yaml", dir);
    snprintf(out_dir, sizeof out_dir, "%s/gen", dir);
    CU_ASSERT_FATAL(tunedb_save(&db, db_path, err, sizeof err) == 0);
    tunedb_free(&db);
    char *out, *errs;
    int rc = run_specl(dir, &out, &errs, "gen '%s' --db '%s' -o '%s'", spec,
                       db_path, out_dir);
    TU_CHECK(rc == 0 && strstr(errs, "no CPU variant for few rows") == NULL,
             "gen --db of a full ladder: exit %d\n%s", rc, errs);
    double least_kept = 1e9, most_left = 0;
    long left_rows = 0;
    int left_variant = -1;
    for (int i = 0; i < 7; i++) {
        char line[512];
        snprintf(line, sizeof line, "specl: note: l_lora: %s: rows %ld: "
                 "left out: a NAME.c holds at most %d variants; the "
                 "defaults (variant ", rt.name, rows[i], SPECL_MAX_VARIANTS);
        const char *p = strstr(errs, line);
        if (p == NULL) {
            least_kept = gain[i] < least_kept ? gain[i] : least_kept;
            continue;
        }
        most_left = gain[i] > most_left ? gain[i] : most_left;
        left_rows = rows[i];
        left_variant = atoi(p + strlen(line));
    }
    TU_CHECK(left_rows > 0 && left_variant >= 0 && most_left < least_kept,
             "gen --db of a full ladder: the least gain kept %.1f, the most "
             "left out %.1f (none: 0)\n%s", least_kept, most_left, errs);
    /* 16 rows (the least gain) left out, 8 and 32 kept */
    int v8 = range_variant(errs, rt.name, "6 to 9");
    int v16 = range_variant(errs, rt.name, "10 to 23");
    int v32 = range_variant(errs, rt.name, "24 to 45");
    TU_CHECK(v8 >= 0 && v16 == left_variant && v32 >= 0 && v8 != v16 &&
                 v32 != v16,
             "gen --db of a full ladder, crossovers with a row count left "
             "out: variants %d, %d, %d (the defaults: %d)\n%s", v8, v16,
             v32, left_variant, errs);
    free(out);
    free(errs);
    /* At a row count left out the defaults run, and either side of each
     * measured end, verified. */
    check_bench_ran(dir, spec, db_path, left_rows, left_variant);
    const long at[] = {9, 10, 23, 24};
    const int ran[] = {v8, v16, v16, v32};
    for (int i = 0; i < 4; i++) {
        check_bench_ran(dir, spec, db_path, at[i], ran[i]);
    }
    spec_set_free(&set);
    rt_close(&rt);
    tu_rmtree(dir);
    free(dir);
}

/* On a CPU the defaults a ladder's row count is tuned against are what
 * NAME.c runs there: up to the CPU rows for few rows, the CPU defaults
 * for few rows (which the search then starts from: with one evaluation
 * they are the best), past them the CPU defaults. Elsewhere the op
 * defaults at both. */
static void test_tune_cpu_few_rows(void)
{
    struct rt rt;
    char rt_err[256], spec[4200], db_path[4200], few_knobs[TUNE_TEXT];
    if (rt_open(&rt, NULL, rt_err, sizeof rt_err) < 0) {
        TU_CHECK(0, "no OpenCL device: %s", rt_err);
        return;
    }
    const struct cpu_few_rows *few = op_find("lora_forward")->cpu_few_rows;
    char *dir = tu_tempdir();
    CU_ASSERT_FATAL(dir != NULL);
    snprintf(spec, sizeof spec, "%s/wide.yaml", dir);
    snprintf(db_path, sizeof db_path, "%s/db.yaml", dir);
    FILE *f = fopen(spec, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs(wide_spec, f);
    fclose(f);
    /* The few-rows knobs as knobs_text writes them, the rest resolved. */
    struct spec_set set;
    struct diags d = {.out = stderr};
    spec_set_init(&set);
    CU_ASSERT_FATAL(spec_read_buffer(&set, "wide.yaml",
                                     (const unsigned char *)wide_spec,
                                     strlen(wide_spec), &d) == 0 &&
                    spec_set_target(&set, TARGET_CPU, &d) == 0);
    struct kernel_spec one;
    char why[256];
    CU_ASSERT_FATAL(cpu_few_rows_spec(&set.kernel[0], &one, why,
                                      sizeof why) == 1);
    knobs_text(&one, few_knobs, sizeof few_knobs);
    spec_set_free(&set);

    char *out, *err;
    int rc = run_specl(dir, &out, &err,
                       "tune '%s' --kernel l_lora --rows %ld,%ld "
                       "--strategy random --max-evals 1 --reps 2 "
                       "--db '%s'",
                       spec, few->max_rows, few->max_rows + 1, db_path);
    TU_CHECK(rc == 0, "tune: exit %d\n%s%s", rc, out, err);
    struct tunedb db;
    tunedb_init(&db);
    CU_ASSERT_EQUAL(tunedb_load(&db, db_path, 0, &d), 0);
    const int cpu = rt.target == TARGET_CPU;
    int seen = 0;
    for (int i = 0; i < db.n; i++) {
        const struct tune_entry *e = &db.entry[i];
        int want_few = cpu && e->rows <= few->max_rows;
        TU_CHECK((strcmp(e->best, few_knobs) == 0) == want_few,
                 "rows %ld on %s: best '%s' (the CPU defaults for few "
                 "rows: '%s')",
                 e->rows, cpu ? "a CPU" : "a GPU", e->best, few_knobs);
        seen++;
    }
    CU_ASSERT_EQUAL(seen, 2);
    tunedb_free(&db);
    free(out);
    free(err);
    rt_close(&rt);
    tu_rmtree(dir);
    free(dir);
}

int add_ladder_tune_tests(CU_pSuite s)
{
    return CU_add_test(s, "ladder: --rows lists", test_rows_parse) == NULL ||
                   CU_add_test(s, "ladder: bad --rows lists refused",
                               test_rows_refused) == NULL ||
                   CU_add_test(s, "ladder: ranges at the geometric means",
                               test_ladder_ranges) == NULL ||
                   CU_add_test(s, "ladder: tune at each row count",
                               test_tune_ladder) == NULL ||
                   CU_add_test(s, "ladder: gen --db rows ranges, bench "
                               "in each",
                               test_gen_ladder) == NULL ||
                   CU_add_test(s, "ladder: one row count, no range code",
                               test_gen_one_row_count) == NULL ||
                   CU_add_test(s, "ladder: a device's own ranges before "
                               "every CPU's",
                               test_gen_cpu_ranges) == NULL ||
                   CU_add_test(s, "ladder: ranges end at measured "
                               "crossovers",
                               test_gen_crossovers) == NULL ||
                   CU_add_test(s, "ladder: more row counts than "
                               "variants: the largest gains kept",
                               test_gen_ladder_full) == NULL ||
                   CU_add_test(s, "ladder: tuned on a CPU against the "
                               "defaults for few rows",
                               test_tune_cpu_few_rows) == NULL
               ? -1
               : 0;
}
