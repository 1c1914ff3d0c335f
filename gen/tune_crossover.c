/* tune_crossover.c - where a ladder's neighbouring row counts give way to
 * each other: their bests and the defaults built, checked and timed back
 * to back at rows between them (specl tune --rows). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "clsource.h"
#include "knobs.h"
#include "measure.h"
#include "spec.h"
#include "tune.h"
#include "tunedb.h"
#include "variant.h"

/* KS with the knobs of TEXT (NULL: KS's own, the defaults) into *CFG, to
 * run at ROWS. Returns 0, or -1 with why in ERR. */
static int config_at(const struct kernel_spec *ks, const char *text,
                     long rows, struct kernel_spec *cfg, char *err,
                     size_t size)
{
    struct diags quiet = {.out = NULL};
    *cfg = *ks;
    if (text != NULL && (tunedb_entry_knobs(cfg, text, rows) < 0 ||
                         knobs_resolve(cfg, &quiet) != 0)) {
        snprintf(err, size, "knobs \"%.60s\" do not fit %.32s%s%.100s",
                 text, ks->name, quiet.first[0] ? ": " : "", quiet.first);
        return -1;
    }
    cfg->measure_rows = rows;
    return 0;
}

/* The N configs CFG at ROWS: each built and checked against float64, then
 * timed back to back (time_interleaved, O's reps), as the tune's best is
 * re-timed against the defaults: the device's drift between two runs
 * apart would otherwise decide. Their medians into US (O's fake times
 * by the configs' knobs where it has them); -1 with why in ERR where one
 * fails. */
static int time_configs_at(const struct rt *rt, struct naive_stubs *naive,
                           const struct tune_options *o,
                           const struct kernel_spec *cfg, int n, long rows,
                           double *us, char *err, size_t size)
{
    double runs[TUNE_CROSS_CONFIGS][MAX_REPS];
    struct variant_set vs;
    struct measure_case mc;
    struct stub stub[TUNE_CROSS_CONFIGS];
    int loaded = 0, rounds = 0, failed = 0;
    if (mcase_init(&mc, rt, naive, &cfg[0], (size_t)rows, o->seed, 1) !=
        CL_SUCCESS) {
        snprintf(err, size, "cannot set up %ld rows", rows);
        return -1;
    }
    memset(stub, 0, sizeof stub);
    for (; loaded < n && !failed; loaded++) {
        struct result res;
        memset(&res, 0, sizeof res);
        variants_one(&cfg[loaded], &vs);
        /* verified as MC's own stub, then moved out (with any scratch
         * its run grew) */
        cl_int st = stub_load(&mc.stub, rt, &vs, -1, NULL);
        if (st != CL_SUCCESS) {
            snprintf(err, size, "at %ld rows: build failed: %s", rows,
                     rt_status(st));
            failed = 1;
            break;
        }
        verify_variant(&mc, run_specl, &res);
        stub[loaded] = mc.stub;
        memset(&mc.stub, 0, sizeof mc.stub);
        if (!res.ok) {
            snprintf(err, size, "at %ld rows: %s", rows,
                     res.note[0] ? res.note : "wrong");
            failed = 1;
        }
    }
    if (!failed && time_interleaved(&mc, stub, n, o->reps, runs, &rounds) !=
                       CL_SUCCESS) {
        snprintf(err, size, "at %ld rows: a timed run failed", rows);
        failed = 1;
    }
    for (int i = 0; i < loaded; i++) {
        stub_unload(&stub[i]);
    }
    mcase_free(&mc);
    for (int i = 0; i < n && !failed; i++) {
        char knobs[TUNE_TEXT];
        knobs_text(&cfg[i], knobs, sizeof knobs);
        for (int k = 0; o->fake_us != NULL && k < rounds; k++) {
            runs[i][k] = o->fake_us(knobs, rows, k, o->fake_ctx);
        }
        us[i] = median(runs[i], rounds);
    }
    return failed ? -1 : 0;
}

/* Probe P at ROWS: below's best, above's and the defaults (TEXT[i], NULL
 * for the defaults), each code emitted at ROWS timed once (configs of
 * the same code share its time), into P's times and winner: the fastest,
 * ties to the first of below, above, defaults. */
static int probe_at(const struct rt *rt, struct naive_stubs *naive,
                    const struct kernel_spec *ks,
                    const struct tune_options *o,
                    const char *const text[TUNE_CROSS_CONFIGS], long rows,
                    struct tune_probe *p, char *err, size_t size)
{
    struct kernel_spec cfg[TUNE_CROSS_CONFIGS], timed[TUNE_CROSS_CONFIGS];
    uint64_t code[TUNE_CROSS_CONFIGS];
    int slot[TUNE_CROSS_CONFIGS], n = 0;
    double us[TUNE_CROSS_CONFIGS];
    for (int i = 0; i < TUNE_CROSS_CONFIGS; i++) {
        if (config_at(ks, text[i], rows, &cfg[i], err, size) < 0 ||
            kernel_code_hash_at(&cfg[i], rows, &code[i], err, size) < 0) {
            return -1;
        }
        slot[i] = -1;
        for (int j = 0; j < i && slot[i] < 0; j++) {
            slot[i] = code[j] == code[i] ? slot[j] : -1;
        }
        if (slot[i] < 0) {
            slot[i] = n;
            timed[n++] = cfg[i];
        }
    }
    if (time_configs_at(rt, naive, o, timed, n, rows, us, err, size) < 0) {
        return -1;
    }
    p->rows = rows;
    p->below_us = us[slot[0]];
    p->above_us = us[slot[1]];
    p->defaults_us = us[slot[2]];
    p->codes = n;
    p->winner = TUNE_BELOW;
    double best = p->below_us;
    if (p->above_us < best) {
        p->winner = TUNE_ABOVE;
        best = p->above_us;
    }
    if (p->defaults_us < best) {
        p->winner = TUNE_DEFAULTS;
    }
    return 0;
}

/* The rows strictly between LO and HI at which a crossover probes: a
 * geometric grid, neighbours (LO and HI among them) at most a quarter
 * apart where TUNE_MAX_PROBES allow (tiles and waves change little
 * within a quarter), each rounded and kept once. Returns their count. */
static int probe_rows(long lo, long hi, long rows[TUNE_MAX_PROBES])
{
    int steps = (int)ceil(log((double)hi / (double)lo) / log(1.25));
    steps = steps > TUNE_MAX_PROBES + 1 ? TUNE_MAX_PROBES + 1 : steps;
    int n = 0;
    for (int k = 1; k < steps; k++) {
        long r = lround((double)lo * pow((double)hi / (double)lo,
                                         (double)k / steps));
        if (r > lo && r < hi && (n == 0 || r > rows[n - 1])) {
            rows[n++] = r;
        }
    }
    return n;
}

/* Probe X->n at ROWS (appended to X); -1 where it failed or O->STOP was
 * set, with why in X->ERROR. */
static int probe_next(const struct rt *rt, struct naive_stubs *naive,
                      const struct kernel_spec *ks,
                      const struct tune_options *o,
                      const char *const text[TUNE_CROSS_CONFIGS], long rows,
                      struct tune_crossover *x)
{
    if (probe_at(rt, naive, ks, o, text, rows, &x->probe[x->n], x->error,
                 sizeof x->error) < 0) {
        return -1;
    }
    x->n++;
    if (o->stop != NULL && *o->stop) {
        snprintf(x->error, sizeof x->error, "stopped");
        return -1;
    }
    return 0;
}

int tune_crossover(const struct rt *rt, struct naive_stubs *naive,
                   const struct kernel_spec *ks, const struct tune_options *o,
                   const char *below, const char *above, long lo, long hi,
                   struct tune_crossover *x)
{
    const char *const text[TUNE_CROSS_CONFIGS] = {below, above, NULL};
    long rows[TUNE_MAX_PROBES];
    memset(x, 0, sizeof *x);
    int n = probe_rows(lo, hi, rows), up = 0, down = n - 1;
    /* From LO up while below's best is the fastest, then from HI down
     * while above's is: each runs only as far as every probe from its own
     * row count had it the fastest, and the probes between, where the
     * defaults run, are not needed. */
    x->upto = lo;
    x->from = hi;
    enum tune_winner last = TUNE_BELOW;
    while (up <= down && last == TUNE_BELOW) {
        if (probe_next(rt, naive, ks, o, text, rows[up], x) < 0) {
            return -1;
        }
        last = x->probe[x->n - 1].winner;
        x->upto = last == TUNE_BELOW ? rows[up] : x->upto;
        up++;
    }
    while (down >= up) {
        if (probe_next(rt, naive, ks, o, text, rows[down], x) < 0) {
            return -1;
        }
        if (x->probe[x->n - 1].winner != TUNE_ABOVE) {
            return 0;
        }
        x->from = rows[down--];
    }
    /* every probe above below's last won by above's: that one too, if
     * above's won it */
    if (last == TUNE_ABOVE && up > 0) {
        x->from = rows[up - 1];
    }
    return 0;
}
