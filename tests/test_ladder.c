/* test_ladder.c - ladders of row counts: `specl tune --rows 1,8,...` (the
 * list as read, the lists refused before anything is measured, a tiny
 * ladder tuned on PoCL storing an entry per row count). Joins the tune
 * suite. */
#include <CUnit/Basic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "testutil.h"
#include "tune.h"
#include "tunedb.h"

#define SMALL_SPEC "tests/tune/small.yaml"
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
    tu_rmtree(dir);
    free(dir);
}

int add_ladder_tune_tests(CU_pSuite s)
{
    return CU_add_test(s, "ladder: --rows lists", test_rows_parse) == NULL ||
                   CU_add_test(s, "ladder: bad --rows lists refused",
                               test_rows_refused) == NULL ||
                   CU_add_test(s, "ladder: tune at each row count",
                               test_tune_ladder) == NULL
               ? -1
               : 0;
}
