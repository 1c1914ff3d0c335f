/* tune_cli.c - `specl tune`: its arguments, the specs, kernels and
 * database it reads, progress as it goes, Ctrl-C, and the database saved
 * as measurements come. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "knobs.h"
#include "measure.h"
#include "spec.h"
#include "tune.h"
#include "tunedb.h"
#include "tunedb_lock.h"

/* ---- specl tune ------------------------------------------------------- */

/* The signal that asked `specl tune` to stop (SIGINT, SIGTERM), or 0. */
static volatile sig_atomic_t stop_signal = 0;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
}

/* What the command's callbacks print for one kernel, and save. */
struct report {
    const struct kernel_spec *ks;
    double budget_s;
    int is_tty;
    double last_report;
    struct saver *saver;
    int ladder;         /* one of several row counts: progress names it */
};

/* Saving as measurements come (tune_options.on_record): the database,
 * merged into its file under the lock, after each config measured, unless
 * the last save was too recent for its cost. */
struct saver {
    const struct tunedb *db;
    const char *path;
    double last_end;    /* when the last save ended */
    double last_cost;   /* and the seconds it took */
    long saves;         /* saves as measurements came */
    double total_s;     /* and the seconds they took */
    int failed;         /* one failed (reported): no more until the end */
};

/* A save waits until SAVE_SPACING times the last one's cost has passed
 * since it ended: saving then takes at most 1 / SAVE_SPACING of the run
 * (5%) however large the database grows. A save of thousands of records
 * costs milliseconds, a config seconds to build, verify and time: runs
 * save after every config. */
#define SAVE_SPACING 20.0

static void save_now(struct saver *sv)
{
    char err[2048];
    double t0 = tune_clock_s();
    if (tunedb_save_merged(sv->db, sv->path, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s\n", err);
        sv->failed = 1;
        return;
    }
    sv->last_end = tune_clock_s();
    sv->last_cost = sv->last_end - t0;
    sv->saves++;
    sv->total_s += sv->last_cost;
}

static void save_as_measured(const struct tune_result *r, void *ctx)
{
    struct report *rep = ctx;
    struct saver *sv = rep->saver;
    (void)r;
    if (!sv->failed &&
        tune_clock_s() - sv->last_end >= SAVE_SPACING * sv->last_cost) {
        save_now(sv);
    }
}

/* TEXT after LEAD, its words wrapped at WRAP_COLUMNS, later lines
 * indented by INDENT spaces: a line of every knob of an op runs to
 * hundreds of characters. */
#define WRAP_COLUMNS 78
static void print_wrapped(const char *lead, const char *text, int indent)
{
    const char *nl = strrchr(lead, '\n');
    printf("%s", lead);
    int col = (int)strlen(nl != NULL ? nl + 1 : lead);
    for (const char *p = text + strspn(text, " "); *p != '\0';) {
        int len = (int)strcspn(p, " ");
        if (col > indent && col + 1 + len > WRAP_COLUMNS) {
            col = printf("\n%*s", indent, "") - 1;
        } else if (col > indent && p != text) {
            col += printf(" ");
        }
        col += printf("%.*s", len, p);
        p += len;
        p += strspn(p, " ");
    }
    printf("\n");
}

/* The first lines of a kernel: the space, then a line per kind of
 * reason configs were rejected for (reasons that differ in their
 * numbers alone are one kind): how many, and the first of them. */
static void print_start(const struct tune_result *r, void *ctx)
{
    const struct report *rep = ctx;
    const struct kernel_spec *ks = rep->ks;
    char shape[TUNE_TEXT];
    tune_shape_text(ks, shape, sizeof shape);
    printf("%s: %s %s, rows %ld: %ld configs, %ld valid, %ld distinct\n",
           ks->name, ks->op->name, shape, r->rows, r->n_configs, r->n_valid,
           r->n_cand);
    if (r->own_values[0]) {
        print_wrapped("  its own values beside the op's lists: ",
                      r->own_values, 4);
    }
    if (r->idle[0]) {
        print_wrapped("  left out, shaping no code at these rows: ",
                      r->idle, 4);
    }
    if (r->parts[0]) {
        print_wrapped("  searched a part at a time: ", r->parts, 4);
    }
    for (int k = 0; k < r->why.n_kinds; k++) {
        char lead[64];
        snprintf(lead, sizeof lead, "  %ld invalid%s: ", r->why.count[k],
                 r->why.count[k] > 1 ? ", the first" : "");
        print_wrapped(lead, r->why.example[k], 4);
    }
    fflush(stdout);
}

static void print_progress(const struct tune_result *r, double el, int final,
                           void *ctx)
{
    struct report *rep = ctx;
    double left = r->evaluated > 0
                      ? el / r->evaluated * (r->max_evals - r->evaluated)
                      : 0;
    if (rep->budget_s > 0 && rep->budget_s - el < left) {
        left = rep->budget_s - el;
    }
    if (left < 0) {
        left = 0;
    }
    char best[48] = "-";
    if (r->best >= 0) {
        snprintf(best, sizeof best, "%.1f us", r->best_us);
    }
    if (rep->is_tty) {
        int width = 30;
        int filled = r->max_evals
                         ? (int)(width * r->evaluated / r->max_evals)
                         : width;
        fprintf(stderr, "\r  [%.*s%*s] %ld/%ld best %s  %d:%02d elapsed, "
                "~%d:%02d left ",
                filled, "==============================", width - filled, "",
                r->evaluated, r->max_evals, best, (int)el / 60, (int)el % 60,
                (int)left / 60, (int)left % 60);
        if (final) {
            fputc('\n', stderr);
        }
    } else if (final || el - rep->last_report >= 5.0) {
        char rows[40] = "";
        if (rep->ladder) {
            snprintf(rows, sizeof rows, " (rows %ld)", r->rows);
        }
        fprintf(stderr, "  %s%s: %ld/%ld evaluated, best %s, %.0f s "
                "elapsed, ~%.0f s left\n",
                rep->ks->name, rows, r->evaluated, r->max_evals, best, el,
                left);
        rep->last_report = el;
    }
    fflush(stderr);
}

/* Whether the search covered every candidate, and if not what stopped
 * it: a best from part of the space may not be the space's best. */
static void print_coverage(const struct tune_result *r,
                           const struct tune_options *o)
{
    if (r->stopped[0] == '\0') {
        printf("  complete: searched all %ld candidates\n", r->n_cand);
        return;
    }
    printf("  incomplete: searched %ld of %ld candidates (", r->evaluated,
           r->n_cand);
    if (strcmp(r->stopped, "time budget") == 0) {
        printf("the --budget of %g s ran out)\n", o->budget_s);
    } else if (strcmp(r->stopped, "max evals") == 0) {
        printf("--max-evals %ld reached%s)\n", r->max_evals,
               o->max_evals > 0 ? "" : ": by default a quarter of them");
    } else {
        printf("%s)\n", r->stopped);
    }
}

/* The best, and how it compares with the op defaults: back to back when
 * re-timed. */
static void print_best(const struct tune_result *r)
{
    if (r->best < 0) {
        printf("  no config ran correctly\n");
        return;
    }
    if (r->retimed) {
        printf("  re-timed back to back, %d runs each (median, p10-p90):\n"
               "    defaults %.1f us (%.1f-%.1f), best %.1f us (%.1f-%.1f; "
               "%.1f us in the search)\n", r->retimed, r->default_us,
               r->default_spread[0], r->default_spread[1], r->best_us,
               r->best_spread[0], r->best_spread[1], r->search_best_us);
    }
    char lead[160];
    if (r->kept_defaults) {
        snprintf(lead, sizeof lead, "  best: the op defaults, %.1f us (the "
                 "search's best not below their p10 back to back):\n    ",
                 r->best_us);
    } else if (r->kept_earlier) {
        snprintf(lead, sizeof lead, "  best: the database's earlier best, "
                 "%.1f us (faster back to back than this search's):\n    ",
                 r->best_us);
    } else {
        /* TFLOP/s from 1000 GFLOP/s on, as bench prints them */
        int tera = r->best_gflops >= 1000;
        snprintf(lead, sizeof lead, "  best %.1f us (%.1f GB/s, %.*f "
                 "%s):\n    ", r->best_us, r->best_gbs, tera ? 2 : 1,
                 tera ? r->best_gflops / 1000 : r->best_gflops,
                 tera ? "TFLOP/s" : "GFLOP/s");
    }
    print_wrapped(lead, r->best_knobs, 4);
    if (r->kept_defaults) {
        return;
    }
    if (r->best_is_default) {
        printf("  the best is the op defaults\n");
    } else if (r->default_us > 0) {
        printf("  defaults %.1f us: tuned is %.2fx%s\n", r->default_us,
               r->default_us / r->best_us,
               r->retimed ? ", back to back" : "");
    }
}

/* What one row count of a ladder came to, for its summary. */
struct ladder_point {
    long rows;
    int ran;            /* some config ran correctly */
    double best_us, default_us;
    char knobs[TUNE_TEXT];
};

/* The summary of kernel NAME's ladder: per row count its best against
 * the op defaults, and whether its knobs are those of the row count
 * before (`gen --db` gives such neighbours one range). */
static void print_ladder(const char *name, const struct ladder_point *p,
                         int n)
{
    printf("%s: ladder of %d row counts:\n", name, n);
    for (int i = 0; i < n; i++) {
        printf("  rows %ld: ", p[i].rows);
        if (!p[i].ran) {
            printf("no config ran correctly\n");
            continue;
        }
        printf("best %.1f us", p[i].best_us);
        if (p[i].default_us > 0) {
            printf(", defaults %.1f us (%.2fx)", p[i].default_us,
                   p[i].default_us / p[i].best_us);
        }
        int same = i > 0 && p[i - 1].ran &&
                   strcmp(p[i - 1].knobs, p[i].knobs) == 0;
        printf("%s\n", same ? "; the knobs of the row count before" : "");
    }
}

/* After KS's ladder (its N row counts P): where the bests of neighbouring
 * row counts differ, the rows where the one gives way to the defaults or
 * to the other, timed (tune_crossover), into the entry of the fewer
 * rows; `gen --db` ends their ranges there. Returns 1 when one could not
 * be measured. */
static int crossovers(const struct tune_options *o, const struct rt *rt,
                      struct naive_stubs *naive, struct tunedb *db,
                      const struct kernel_spec *ks,
                      const struct ladder_point *p, int n)
{
    static const char *const winner[] = {"the first", "the second",
                                         "the defaults"};
    int failed = 0;
    for (int i = 0; i + 1 < n && !stop_signal; i++) {
        struct tune_entry *e = tune_find_entry(db, rt, ks, p[i].rows);
        const struct tune_entry *next = tune_find_entry(db, rt, ks,
                                                        p[i + 1].rows);
        if (e == NULL || next == NULL || !e->best[0] || !next->best[0] ||
            strcmp(e->best, next->best) == 0) {
            continue;
        }
        if (e->upto_next == next->rows &&
            strcmp(e->upto_with, next->best) == 0) {
            printf("%s: rows %ld to %ld: the first best up to %ld rows, "
                   "the second from %ld, as measured before\n", ks->name,
                   e->rows, next->rows, e->upto_rows, e->next_from);
            continue;
        }
        struct tune_crossover x;
        if (tune_crossover(rt, naive, ks, o, e->best, next->best, e->rows,
                           next->rows, &x) < 0) {
            fprintf(stderr, "specl: tune: %s: rows %ld to %ld: no "
                    "crossover: %s\n", ks->name, e->rows, next->rows,
                    x.error);
            failed = 1;
            continue;
        }
        e->upto_rows = x.upto;
        e->next_from = x.from;
        e->upto_next = next->rows;
        snprintf(e->upto_with, sizeof e->upto_with, "%s", next->best);
        printf("%s: rows %ld to %ld: the best of %ld rows runs up to %ld "
               "rows, the best of %ld from %ld", ks->name, e->rows,
               next->rows, e->rows, x.upto, next->rows, x.from);
        if (x.from > x.upto + 1) {
            printf(", the defaults between");
        }
        for (int k = 0; k < x.n; k++) {
            const struct tune_probe *q = &x.probe[k];
            printf("%s %ld rows %.1f, %.1f and %.1f us: %s", k ? ";" : " (at",
                   q->rows, q->below_us, q->above_us, q->defaults_us,
                   winner[q->winner]);
        }
        printf("%s\n", x.n ? ")" : "");
    }
    return failed;
}

/* Tunes KS with O and prints what it did (LADDER: one of several row
 * counts, which its progress lines name), into *POINT; returns 1 when it
 * failed. */
static int tune_and_print(const struct tune_options *o, const struct rt *rt,
                          struct naive_stubs *naive, struct tunedb *db,
                          const struct kernel_spec *ks, struct saver *saver,
                          int ladder, struct ladder_point *point)
{
    struct tune_options ko = *o;
    struct tune_result r;
    struct report rep = {ks, o->budget_s, isatty(2), 0, saver, ladder};
    ko.on_start = print_start;
    ko.on_progress = print_progress;
    ko.on_record = save_as_measured;
    ko.ctx = &rep;
    int failed = tune_kernel(rt, naive, ks, &ko, db, &r);
    memset(point, 0, sizeof *point);
    point->rows = r.rows;
    point->ran = r.searched && r.best >= 0;
    point->best_us = r.best_us;
    point->default_us = r.default_us;
    snprintf(point->knobs, sizeof point->knobs, "%s", r.best_knobs);
    if (!r.searched) {
        fprintf(stderr, "specl: tune: %s: %s\n", ks->name, r.error);
        return 1;
    }
    printf("  evaluated %ld of %ld distinct (%.0f%%): %ld built, %ld "
           "verified, %ld timed, %ld from the database",
           r.evaluated, r.n_cand,
           r.n_cand ? 100.0 * r.evaluated / r.n_cand : 0.0, r.built,
           r.verified, r.timed, r.from_db);
    if (r.stale > 0) {
        printf(" (%ld timed again: their records measured other code)",
               r.stale);
    }
    printf("\n");
    long made = r.evaluated - r.from_db;
    if (made > 0) {
        printf("  seconds a candidate: %.2f NAME.c emitted and compiled, "
               "%.2f program built,\n    %.2f checked, %.2f timed\n",
               r.compile_s / made, r.build_s / made, r.check_s / made,
               r.timing_s / made);
    }
    print_coverage(&r, o);
    print_best(&r);
    if (r.error[0]) {
        fprintf(stderr, "specl: tune: %s\n", r.error);
    } else if (o->plot != NULL && r.evaluated > 0) {
        char csv[1100];
        tune_plot_csv_path(o->plot, csv, sizeof csv);
        printf("  plot: %s\n  plot data: %s\n", o->plot, csv);
    }
    return failed;
}

int tune_rows_parse(const char *text, long *rows, char *why,
                    size_t why_size)
{
    int n = 0, item = 1;
    for (const char *p = text;; item++) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            snprintf(why, why_size, "item %d is empty", item);
            return -1;
        }
        if (strspn(p, "0123456789") != len) {
            snprintf(why, why_size, "'%.*s' is not a whole number",
                     (int)(len > 32 ? 32 : len), p);
            return -1;
        }
        long v = 0;
        for (size_t i = 0; i < len && v <= TUNE_MAX_ROWS; i++) {
            v = v * 10 + (p[i] - '0');
        }
        if (v < 1 || v > TUNE_MAX_ROWS) {
            snprintf(why, why_size, "%.*s is out of range",
                     (int)(len > 32 ? 32 : len), p);
            return -1;
        }
        /* Kept ascending, a repeat once: each row count is one entry. */
        int at = 0;
        while (at < n && rows[at] < v) {
            at++;
        }
        if (at == n || rows[at] != v) {
            if (n == TUNE_MAX_LADDER) {
                snprintf(why, why_size, "more than %d row counts",
                         TUNE_MAX_LADDER);
                return -1;
            }
            memmove(rows + at + 1, rows + at, (size_t)(n - at) * sizeof *rows);
            rows[at] = v;
            n++;
        }
        p += len;
        if (*p == '\0') {
            return n;
        }
        p++; /* the comma */
    }
}

static const char tune_usage[] =
    "usage: specl tune [OPTION]... SPEC.yaml...\n"
    "\n"
    "Searches each kernel's knob space on one device: builds, verifies\n"
    "against float64 and times each candidate, and keeps every\n"
    "measurement in a tuning database (saved as it goes, under a lock;\n"
    "a second run resumes). The search's best, the defaults (what NAME.c\n"
    "runs at those rows) and the entry's earlier best are then re-timed\n"
    "back to back, --reps runs each in turn: the fastest median is\n"
    "stored, with its spread and the defaults'. Ctrl-C or SIGTERM stops\n"
    "after the config being measured, saves, and exits with 130 or 143.\n"
    "A spec file '-' is standard input.\n"
    "\n"
    "Options:\n"
    "      --device N|P:D     the device ('specl devices'; default:\n"
    "                         $SPECL_DEVICE, else the first)\n"
    "      --kernel NAME      only that kernel\n"
    "      --strategy S       exhaustive, random, or local (default: from\n"
    "                         the op defaults, each knob changed alone,\n"
    "                         then configs further out, those whose\n"
    "                         values lost least alone first, around each\n"
    "                         new best; where the knobs shape different\n"
    "                         kernels, one part's knobs at a time)\n"
    "      --max-evals N      candidates to evaluate (default: all for\n"
    "                         exhaustive, else a quarter)\n"
    "      --budget SECONDS   stop searching a kernel (at each row count)\n"
    "                         after that long\n"
    "      --rows M[,M...]    rows measured (default: the op's); a list\n"
    "                         (1,8,32,128) tunes each kernel at each row\n"
    "                         count, one database entry each, then times\n"
    "                         neighbours' bests and the defaults at rows\n"
    "                         between them for where each best is the\n"
    "                         fastest: 'specl gen --db' turns them into\n"
    "                         row ranges, the defaults between\n"
    "      --reps N           timed runs per config, 1 to 1000 (default 20)\n"
    "      --seed N           of the inputs and the search order (default 1)\n"
    "      --db FILE          the database (default:\n"
    "                         tuning/DEVICE-SLUG.yaml)\n"
    "      --plot FILE.svg    a heat map of each kernel's search over its\n"
    "                         first two knobs, with every searched knob\n"
    "                         listed: FILE.svg when one kernel is tuned,\n"
    "                         else FILE-NAME.svg for each kernel NAME; the\n"
    "                         timed configs as CSV beside it (FILE.csv)\n"
    "  -h, --help             this text\n";

enum {
    OPT_DEVICE = 256,
    OPT_KERNEL,
    OPT_STRATEGY,
    OPT_MAX_EVALS,
    OPT_BUDGET,
    OPT_ROWS,
    OPT_REPS,
    OPT_SEED,
    OPT_DB,
    OPT_PLOT
};

static const struct cli_option tune_cli_options[] = {
    {"device", OPT_DEVICE, 1},
    {"kernel", OPT_KERNEL, 1},
    {"strategy", OPT_STRATEGY, 1},
    {"max-evals", OPT_MAX_EVALS, 1},
    {"budget", OPT_BUDGET, 1},
    {"rows", OPT_ROWS, 1},
    {"reps", OPT_REPS, 1},
    {"seed", OPT_SEED, 1},
    {"db", OPT_DB, 1},
    {"plot", OPT_PLOT, 1},
    {NULL, 0, 0},
};

/* What tune's command line asks beyond the tuning options. */
struct tune_args {
    const char *device, *db, *plot, *kernel;
    int n_rows;                  /* 0: the op's default rows */
    long rows[TUNE_MAX_LADDER];  /* ascending */
};

/* Reads tune's command line C into O and A: -1 to go on, else the exit
 * status (0 after --help). */
static int parse_tune(struct cli *c, struct tune_options *o,
                      struct tune_args *a)
{
    static const char *const strategies[] = {"exhaustive", "random", "local",
                                             NULL};
    static const enum tune_strategy strategy_of[] = {TUNE_EXHAUSTIVE,
                                                     TUNE_RANDOM, TUNE_LOCAL};
    int key;
    while ((key = cli_next(c)) != CLI_END) {
        int bad = 0, index;
        long n;
        switch (key) {
        case CLI_HELP:
            return 0;
        case CLI_ERROR:
            return CLI_EXIT_USAGE;
        case OPT_DEVICE:
            bad = cli_device(c);
            a->device = c->value;
            break;
        case OPT_KERNEL:
            a->kernel = c->value;
            break;
        case OPT_STRATEGY:
            index = cli_choice(c, strategies);
            bad = index < 0;
            o->strategy = bad ? o->strategy : strategy_of[index];
            break;
        case OPT_MAX_EVALS:
            bad = cli_long(c, 1, 10000000, &o->max_evals);
            break;
        case OPT_BUDGET:
            bad = cli_double(c, 0.001, 1e7, &o->budget_s);
            break;
        case OPT_ROWS: {
            char why[96];
            a->n_rows = tune_rows_parse(c->value, a->rows, why, sizeof why);
            if (a->n_rows < 0) {
                cli_usage_error(c->cmd, "%s needs a whole number in [1, %ld] "
                                "or a comma-separated list of them "
                                "(1,8,32), got '%s': %s",
                                c->name, TUNE_MAX_ROWS, c->value, why);
                bad = 1;
            }
            break;
        }
        case OPT_REPS:
            bad = cli_long(c, 1, MAX_REPS, &n);
            o->reps = (int)n;
            break;
        case OPT_SEED:
            bad = cli_long(c, 0, 4000000000L, &n);
            o->seed = (unsigned long)n;
            break;
        case OPT_DB:
            a->db = c->value;
            break;
        case OPT_PLOT:
            a->plot = c->value;
            break;
        }
        if (bad) {
            return CLI_EXIT_USAGE;
        }
    }
    return -1;
}

/* The plot of one tune: PLOT itself when the run tunes one kernel at one
 * row count, else PLOT with "-NAME" (several kernels) and "-rowsM" (a
 * ladder of row counts) before its extension (plot.svg:
 * plot-NAME-rows8.svg). */
static void plot_path(const char *plot, const char *name, int several,
                      long rows, int ladder, char *out, size_t size)
{
    char suffix[SPECL_NAME_MAX + 32] = "";
    if (several) {
        snprintf(suffix, sizeof suffix, "-%s", name);
    }
    if (ladder) {
        size_t len = strlen(suffix);
        snprintf(suffix + len, sizeof suffix - len, "-rows%ld", rows);
    }
    const char *dot = strrchr(plot, '.');
    const char *slash = strrchr(plot, '/');
    if (dot == NULL || (slash != NULL && dot < slash) || dot == plot ||
        dot[-1] == '/') {
        dot = plot + strlen(plot); /* no extension: append */
    }
    snprintf(out, size, "%.*s%s%s", (int)(dot - plot), plot, suffix, dot);
}

/* Loads the database at PATH into DB (a missing file is an empty one),
 * once it is known to be writable. Returns 0 or CLI_EXIT_INVALID (said
 * through D or on stderr). */
static int load_db(struct tunedb *db, const char *path, struct diags *d)
{
    char err[2048];
    if (!tunedb_writable(path, err, sizeof err)) {
        fprintf(stderr, "specl: error: %s\n", err);
        return CLI_EXIT_INVALID;
    }
    return tunedb_load(db, path, 1, d) != 0 ? CLI_EXIT_INVALID : 0;
}

/* `specl tune ARGS...` (ARGV[0]: "tune"): the arguments, the specs, the
 * kernel and the database are checked before the device is opened. */
int specl_tune_main(int argc, char **argv)
{
    struct tune_options o;
    struct tune_args args = {.n_rows = 0};
    struct cli c = {.cmd = "tune",
                    .usage = tune_usage,
                    .options = tune_cli_options,
                    .argc = argc,
                    .argv = argv};
    tune_options_init(&o);
    o.stop = &stop_signal;
    int rc = parse_tune(&c, &o, &args);
    if (rc >= 0) {
        return rc;
    }
    struct spec_set set;
    struct diags d = {.out = stderr};
    struct tunedb db;
    struct rt rt;
    char err[2048], db_path[512];
    spec_set_init(&set);
    tunedb_init(&db);
    int errors = cli_read_specs(&c, &set, &d);
    rc = 0;
    if (errors < 0) {
        rc = CLI_EXIT_USAGE;
    } else if (errors > 0 || (args.kernel != NULL &&
                              cli_find_kernel(&set, args.kernel) < 0)) {
        rc = CLI_EXIT_INVALID;
    } else if (args.db != NULL) {
        snprintf(db_path, sizeof db_path, "%s", args.db);
        rc = load_db(&db, db_path, &d);
    }
    if (rc == 0 && rt_open(&rt, args.device, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s\n", err);
        rc = CLI_EXIT_INVALID;
    } else if (rc == 0 && spec_set_target(&set, rt.target, &d) != 0) {
        rt_close(&rt); /* the defaults for this device do not validate */
        rc = CLI_EXIT_INVALID;
    } else if (rc == 0 && args.db == NULL) {
        /* The device's own database, named after it. */
        char slug[160];
        tune_device_slug(rt.name, slug, sizeof slug);
        mkdir("tuning", 0777);
        snprintf(db_path, sizeof db_path, "tuning/%s.yaml", slug);
        rc = load_db(&db, db_path, &d);
        if (rc != 0) {
            rt_close(&rt);
        }
    }
    if (rc != 0) {
        tunedb_free(&db);
        spec_set_free(&set);
        return rc;
    }
    /* Ctrl-C and kill (SIGTERM) stop after the config being measured;
     * what was measured is saved. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct saver saver = {&db, db_path, tune_clock_s(), 0, 0, 0, 0};
    printf("device: %s (%s, driver %s); database %s\n", rt.name,
           rt.platform_name, rt.driver, db_path);
    struct naive_stubs naive;
    naive_init(&naive);
    int matched = 0;
    int several = args.kernel == NULL && set.n_kernel > 1;
    int n_rows = args.n_rows > 0 ? args.n_rows : 1; /* 0: the op's rows */
    char plot[1024];
    for (int k = 0; k < set.n_kernel && !stop_signal; k++) {
        if (args.kernel != NULL &&
            strcmp(args.kernel, set.kernel[k].name) != 0) {
            continue;
        }
        matched++;
        struct ladder_point point[TUNE_MAX_LADDER];
        int done = 0;
        for (int i = 0; i < n_rows && !stop_signal; i++) {
            o.rows = args.n_rows > 0 ? args.rows[i] : 0;
            if (args.plot != NULL) {
                plot_path(args.plot, set.kernel[k].name, several, o.rows,
                          n_rows > 1, plot, sizeof plot);
            }
            o.plot = args.plot != NULL ? plot : NULL;
            rc |= tune_and_print(&o, &rt, &naive, &db, &set.kernel[k],
                                 &saver, n_rows > 1, &point[done++]);
            /* And after every kernel and row count: its best, its default
             * time. */
            if (tunedb_save_merged(&db, db_path, err, sizeof err) < 0) {
                fprintf(stderr, "specl: error: %s\n", err);
                rc = 1;
            }
            rc |= saver.failed;
            saver.failed = 0;
        }
        if (n_rows > 1) {
            print_ladder(set.kernel[k].name, point, done);
            rc |= crossovers(&o, &rt, &naive, &db, &set.kernel[k], point,
                             done);
            if (tunedb_save_merged(&db, db_path, err, sizeof err) < 0) {
                fprintf(stderr, "specl: error: %s\n", err);
                rc = 1;
            }
        }
    }
    if (saver.saves > 0) {
        printf("database %s: saved %ld time%s as measurements came, %.3f "
               "s in all\n", db_path, saver.saves, saver.saves == 1 ? "" : "s",
               saver.total_s);
    }
    if (matched == 0) {
        fputs("specl: error: the specs have no kernel\n", stderr);
        rc = 1;
    }
    if (stop_signal) {
        fprintf(stderr, "specl: tune: %s; results so far are in %s\n",
                stop_signal == SIGTERM ? "terminated" : "interrupted",
                db_path);
        rc = 128 + stop_signal; /* as the shell reports a signal's death */
    }
    naive_free(&naive);
    rt_close(&rt);
    tunedb_free(&db);
    spec_set_free(&set);
    return rc;
}
