/* tune_replay.c - replays specl tune's search against a landscape: a
 * database in which an exhaustive tune timed every candidate of a kernel
 * (`specl tune --strategy exhaustive`). Each config the search picks
 * takes the time its code measured there, so strategies compare free of
 * run-to-run noise and without a device. The search is gen/tune.c's own
 * (included, so that its static functions run as they do in specl), with
 * the stub's measurement replaced.
 *
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 \
 *      -Igen -Ibuild/include -o build/tune_replay bench/lab/tune_replay.c \
 *      build/libspecl.a -lyaml -lOpenCL -lm -ldl -pthread
 *   build/tune_replay SPEC KERNEL ROWS LANDSCAPE.yaml EVALS SEEDS HOMES
 *
 * (-DTUNE_C='"other/tune.c"' replays another version of the search.)
 * Target sm90a (the landscapes here are an H200's). HOMES: besides the
 * op defaults, that many candidates spread over the space each stand in
 * as the defaults (the start of the search, as on a device whose
 * defaults are poor); note that the space's idle axes are found against
 * the defaults too, so some starts cannot reach the landscape's best.
 * Prints, per start and seed, the best found (over the landscape's
 * best) after 10, 25 and 50 evaluations and at the end, the evaluation
 * that first came within 5% and 2% of it (-1: none), and how many
 * evaluations ran over 1.5x it. bench/lab/tune_replay.py sums them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "variant.h"

static enum stub_outcome replay_measure(struct measure_case *mc,
                                        const struct variant_set *vs,
                                        int reps, struct result *r,
                                        char **log);
#define measure_stub replay_measure
#ifndef TUNE_C
#define TUNE_C "tune.c"
#endif
#include TUNE_C
#undef measure_stub

#include "caps.h"
#include "diag.h"

static enum stub_outcome replay_measure(struct measure_case *mc,
                                        const struct variant_set *vs,
                                        int reps, struct result *r,
                                        char **log)
{
    (void)mc;
    (void)vs;
    (void)reps;
    (void)log;
    memset(r, 0, sizeof *r); /* the time comes from landscape_us */
    return STUB_TIMED;
}

/* The candidates of the space searched (their knobs and codes) and the
 * landscape's records (codes and times). */
struct landscape {
    long n;
    char (*knobs)[TUNE_TEXT];
    uint64_t *code;
    long n_rec;
    uint64_t *rec_code;
    double *rec_us;
};

static double landscape_us(const char *knobs, long rows, int run,
                           void *ctx)
{
    (void)rows;
    const struct landscape *l = ctx;
    (void)run;
    for (long i = 0; i < l->n; i++) {
        if (strcmp(l->knobs[i], knobs) != 0) {
            continue;
        }
        for (long j = 0; j < l->n_rec; j++) {
            if (l->rec_code[j] == l->code[i]) {
                return l->rec_us[j];
            }
        }
    }
    return 1e9; /* not in the landscape */
}

static double trace[1 << 16];
static long n_trace;

static void on_progress(const struct tune_result *r, double elapsed_s,
                        int final, void *ctx)
{
    (void)elapsed_s;
    (void)ctx;
    if (!final && n_trace < (long)(sizeof trace / sizeof trace[0])) {
        trace[n_trace++] = r->best_us;
    }
}

static double at(long k)
{
    return trace[k < n_trace ? k - 1 : n_trace - 1];
}

/* Runs the local search from KS's knobs, seed SEED, at most EVALS
 * evaluations; prints one line. */
static void replay(const struct kernel_spec *ks, long rows, long evals,
                   unsigned long seed, struct landscape *l, double best,
                   int start)
{
    struct tune_filter f;
    char err[256];
    if (tune_filter_run_at(ks, rows, &f, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    l->n = f.n_cand;
    l->knobs = calloc((size_t)f.n_cand, TUNE_TEXT);
    l->code = calloc((size_t)f.n_cand, sizeof *l->code);
    for (long i = 0; i < f.n_cand; i++) {
        struct kernel_spec c;
        tune_space_config(ks, &f.sp, f.cand[i], &c, NULL, 0);
        knobs_text(&c, l->knobs[i], TUNE_TEXT);
        l->code[i] = f.code[f.cand[i]];
    }
    char text[TUNE_TEXT];
    knobs_text(ks, text, sizeof text);
    double start_us = landscape_us(text, 0, 0, l);
    struct tune_options o;
    tune_options_init(&o);
    o.strategy = TUNE_LOCAL;
    o.seed = seed;
    o.max_evals = evals;
    o.fake_us = landscape_us;
    o.fake_ctx = l;
    o.on_progress = on_progress;
    struct tune_result r;
    struct tune_entry e;
    struct search s;
    memset(&r, 0, sizeof r);
    memset(&e, 0, sizeof e);
    memset(&s, 0, sizeof s);
    r.best = -1;
    r.n_cand = f.n_cand;
    r.max_evals = evals < f.n_cand ? evals : f.n_cand;
    r.entry = &e;
    s.o = &o;
    s.ks = ks;
    s.f = &f;
    s.sp = &f.sp;
    s.rep = f.rep;
    s.code = f.code;
    s.r = &r;
    s.state = calloc((size_t)f.sp.n_config, sizeof *s.state);
    for (long i = 0; i < f.sp.n_config; i++) {
        s.state[i].outcome = f.rep[i] < 0    ? INVALID
                             : f.rep[i] != i ? SAME
                                             : UNSEEN;
    }
    n_trace = 0;
    s.t0 = tune_clock_s();
    run_strategy(&s, f.cand);
    long within5 = -1, within2 = -1, slow = 0;
    for (long t = 0; t < n_trace; t++) {
        within5 = within5 < 0 && trace[t] <= best * 1.05 ? t + 1 : within5;
        within2 = within2 < 0 && trace[t] <= best * 1.02 ? t + 1 : within2;
    }
    for (int t = 0; t < e.n_tried; t++) {
        slow += e.tried[t].us > 1.5 * best;
    }
    printf("start %d (%.1f us) seed %lu: %ld evaluated, best %.2f us "
           "(%.3fx); at 10/25/50: %.3f %.3f %.3f; within 5%% at %ld, 2%% "
           "at %ld; over 1.5x: %ld\n",
           start, start_us, seed, n_trace, r.best_us, r.best_us / best,
           at(10) / best, at(25) / best, at(50) / best, within5, within2,
           slow);
    free(e.tried);
    free(s.state);
    free(l->knobs);
    free(l->code);
    tune_filter_free(&f);
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: %s SPEC KERNEL ROWS LANDSCAPE.yaml EVALS "
                        "SEEDS HOMES\n", argv[0]);
        return 2;
    }
    struct spec_set set;
    struct diags d = {.out = stderr};
    spec_set_init(&set);
    if (spec_read_file(&set, argv[1], &d) != 0 ||
        spec_set_target(&set, TARGET_SM90A, &d) != 0) {
        return 1;
    }
    const struct kernel_spec *ks0 = NULL;
    for (int k = 0; k < set.n_kernel; k++) {
        ks0 = strcmp(set.kernel[k].name, argv[2]) == 0 ? &set.kernel[k]
                                                        : ks0;
    }
    long rows = atol(argv[3]), evals = atol(argv[5]);
    int seeds = atoi(argv[6]), homes = atoi(argv[7]);
    struct tunedb db;
    tunedb_init(&db);
    if (ks0 == NULL || tunedb_load(&db, argv[4], 0, &d) != 0 ||
        db.n < 1) {
        fprintf(stderr, "no kernel %s or no landscape\n", argv[2]);
        return 1;
    }
    const struct tune_entry *le = &db.entry[0];
    struct landscape l = {0};
    double best = 1e30;
    l.n_rec = le->n_tried;
    l.rec_code = calloc((size_t)l.n_rec, sizeof *l.rec_code);
    l.rec_us = calloc((size_t)l.n_rec, sizeof *l.rec_us);
    for (long j = 0; j < l.n_rec; j++) {
        l.rec_code[j] = strtoull(le->tried[j].code, NULL, 16);
        l.rec_us[j] = le->tried[j].us > 0 ? le->tried[j].us : 1e9;
        best = l.rec_us[j] < best ? l.rec_us[j] : best;
    }
    struct kernel_spec ks = *ks0;
    ks.measure_rows = rows;
    struct tune_filter f0;
    char err[256];
    if (tune_filter_run_at(&ks, rows, &f0, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("# %s at %ld rows: %ld candidates, %ld in the landscape, its "
           "best %.2f us\n", argv[2], rows, f0.n_cand, l.n_rec, best);
    for (int h = 0; h <= homes; h++) {
        struct kernel_spec start = ks;
        if (h > 0) {
            long c = f0.cand[(long)h * 7919 % f0.n_cand];
            tune_space_config(&ks, &f0.sp, c, &start, NULL, 0);
        }
        for (int seed = 1; seed <= seeds; seed++) {
            replay(&start, rows, evals, (unsigned long)seed, &l, best, h);
        }
    }
    tune_filter_free(&f0);
    tunedb_free(&db);
    spec_set_free(&set);
    free(l.rec_code);
    free(l.rec_us);
    return 0;
}
