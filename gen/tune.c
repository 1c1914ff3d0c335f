/* tune.c - the tuner's search over one kernel's candidates: verifying
 * every candidate before timing it, keeping the results in a
 * tuning-database entry (the space and the filter are tune_space.c's, the
 * plot tune_plot.c's, the command tune_cli.c's). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "knobs.h"
#include "measure.h"
#include "spec.h"
#include "tune.h"
#include "tunedb.h"
#include "version.h"

/* What became of one configuration. SAME: valid, but it emits the code
 * of another config (a knob without effect for this spec); only that one
 * is timed. */
enum outcome { UNSEEN, INVALID, SAME, FAILED, WRONG, TIMED };

struct config_state {
    unsigned char outcome;
    double us;  /* as measured: a float would move a best across the
                   0.01 us the database keeps, away from its record */
};

double tune_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the search ------------------------------------------------------- */

/* State of one kernel's search. */
struct search {
    const struct tune_options *o;
    const struct kernel_spec *ks;
    struct measure_case *mc;
    const struct tune_space *sp;
    const long *rep;      /* the filter's: per valid config, the candidate
                             emitting its code */
    const uint64_t *code; /* the filter's: per valid config, its code hash */
    struct config_state *state;
    struct tune_result *r;
    double t0;
    struct variant_set one; /* the config being loaded, as its one variant */
};

static void progress(struct search *s, int final)
{
    if (s->o->on_progress != NULL) {
        s->o->on_progress(s->r, tune_clock_s() - s->t0, final, s->o->ctx);
    }
}

/* Config INDEX's code as a record holds it: the filter's hash, 16 hex
 * digits. */
static void code_text(const struct search *s, long index, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)s->code[index]);
}

/* Whether REC measured the code CODE: a record without a code, from an
 * older file, measured code that may have changed since. */
static int record_current(const struct tune_record *rec, const char *code)
{
    return rec != NULL && rec->code[0] != '\0' && strcmp(rec->code, code) == 0;
}

/* Builds, checks against the device, verifies and times config INDEX;
 * records the outcome in the state and the database entry, with the hash
 * of its code. A record of the same knobs is taken instead if it measured
 * the same code. */
static void evaluate(struct search *s, long index)
{
    struct config_state *st = &s->state[index];
    struct tune_result *res = s->r;
    struct kernel_spec cks;
    char knobs[TUNE_TEXT], code[17];
    tune_space_config(s->ks, s->sp, index, &cks, NULL, 0);
    knobs_text(&cks, knobs, sizeof knobs);
    code_text(s, index, code);
    res->evaluated++;
    const struct tune_record *rec = tune_entry_tried(res->entry, knobs);
    if (record_current(rec, code)) {
        res->from_db++;
        st->outcome = rec->us > 0 ? TIMED : FAILED;
        st->us = rec->us;
    } else {
        int stale = rec != NULL;
        struct result r;
        memset(&r, 0, sizeof r);
        variants_one(&cks, &s->one);
        enum stub_outcome got =
            measure_stub(s->mc, &s->one, s->o->reps, &r, NULL);
        /* A stop while it ran may have cut it short (Ctrl-C reaches the
         * compiler too): a failure then says nothing of the config, and
         * a resume must try it again. */
        if (got != STUB_TIMED && s->o->stop != NULL && *s->o->stop) {
            res->evaluated--;
            return;
        }
        struct tune_record *nr = NULL;
        switch (got) {
        case STUB_BUILD_FAILED:
            st->outcome = FAILED;
            nr = tune_entry_record(res->entry, knobs, -1, r.note);
            break;
        case STUB_RUN_FAILED:
            res->built++;
            res->verified++;
            st->outcome = FAILED;
            nr = tune_entry_record(res->entry, knobs, -1, r.note);
            break;
        case STUB_WRONG:
            res->built++;
            st->outcome = WRONG;
            nr = tune_entry_record(res->entry, knobs, -1,
                                   r.note[0] ? r.note : "wrong result");
            break;
        case STUB_TIMED:
            res->built++;
            res->verified++;
            res->timed++;
            res->stale += stale;
            st->outcome = TIMED;
            st->us = r.us;
            nr = tune_entry_record(res->entry, knobs, r.us, "ok");
            break;
        }
        if (nr != NULL) {
            snprintf(nr->code, sizeof nr->code, "%s", code);
            nr->fresh = 1;
        }
        if (s->o->on_record != NULL) {
            s->o->on_record(res, s->o->ctx);
        }
    }
    if (st->outcome == TIMED && (res->best < 0 || st->us < res->best_us)) {
        res->best = index;
        res->best_us = st->us;
    }
}

/* Whether the entry's record of KNOBS measured the code that config
 * emits now (none does for knobs outside F's space). */
static int record_of_now(struct search *s, const struct tune_filter *f,
                         const char *knobs)
{
    const struct tune_record *rec = tune_entry_tried(s->r->entry, knobs);
    for (long i = 0; rec != NULL && i < f->sp.n_config; i++) {
        struct kernel_spec cks;
        char text[TUNE_TEXT], code[17];
        if (f->rep[i] < 0) {
            continue;
        }
        tune_space_config(s->ks, &f->sp, i, &cks, NULL, 0);
        knobs_text(&cks, text, sizeof text);
        if (strcmp(text, knobs) == 0) {
            code_text(s, i, code);
            return record_current(rec, code);
        }
    }
    return 0;
}

static int out_of_budget(const struct search *s)
{
    return (s->o->stop != NULL && *s->o->stop) ||
           s->r->evaluated >= s->r->max_evals ||
           (s->o->budget_s > 0 && tune_clock_s() - s->t0 >= s->o->budget_s);
}
static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void try_config(struct search *s, long index)
{
    if (s->state[index].outcome == UNSEEN && !out_of_budget(s)) {
        evaluate(s, index);
        progress(s, 0);
    }
}

/* Hill climbing from START: tries the neighbours (one knob one or two
 * steps away; two when one step is invalid or emits the same code) in
 * random order and moves to the first that is faster, until none is: a
 * local optimum. */
static void climb(struct search *s, long start, uint64_t *rng)
{
    long cur = start;
    while (!out_of_budget(s)) {
        int idx[TUNE_MAX_AXES] = {0};
        long moves[4 * TUNE_MAX_AXES];
        int n_moves = 0;
        tune_space_decode(s->sp, cur, idx);
        for (int a = 0; a < s->sp->n_axis; a++) {
            for (int dir = -1; dir <= 1; dir += 2) {
                for (int step = 1; step <= 2; step++) {
                    int v = idx[a] + dir * step;
                    if (v < 0 || v >= s->sp->n_value[a]) {
                        break;
                    }
                    int nidx[TUNE_MAX_AXES];
                    memcpy(nidx, idx, sizeof nidx);
                    nidx[a] = v;
                    long n = tune_space_encode(s->sp, nidx);
                    /* a step that changes the code (to the candidate that
                     * emits it), else one more */
                    if (s->state[n].outcome != INVALID &&
                        s->rep[n] != cur) {
                        moves[n_moves++] = s->rep[n];
                        break;
                    }
                }
            }
        }
        for (int m = n_moves - 1; m > 0; m--) {
            int j = (int)(rng_next(rng) % (uint64_t)(m + 1));
            long t = moves[m];
            moves[m] = moves[j];
            moves[j] = t;
        }
        long next = -1;
        for (int m = 0; m < n_moves && next < 0; m++) {
            try_config(s, moves[m]);
            if (s->state[moves[m]].outcome == TIMED &&
                s->state[moves[m]].us < s->state[cur].us) {
                next = moves[m];
            }
        }
        if (next < 0) {
            return;
        }
        cur = next;
    }
}

static void run_strategy(struct search *s, const long *cand)
{
    long n = s->r->n_cand;
    long *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    uint64_t rng = s->o->seed * 2654435761u + 88172645463325252ull;
    if (order == NULL) {
        return;
    }
    memcpy(order, cand, (size_t)n * sizeof *order);
    /* The op's defaults first: every strategy then knows the number to
     * beat, and the local search climbs from there too. */
    long home = tune_space_home(s->sp, s->ks);
    if (home >= 0 && s->state[home].outcome == UNSEEN) {
        try_config(s, home);
    }
    if (s->o->strategy != TUNE_EXHAUSTIVE) {
        for (long i = n - 1; i > 0; i--) {
            long j = (long)(rng_next(&rng) % (uint64_t)(i + 1));
            long t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
    if (s->o->strategy != TUNE_LOCAL) {
        for (long i = 0; i < n && !out_of_budget(s); i++) {
            try_config(s, order[i]);
        }
        free(order);
        return;
    }
    /* Local: half the budget on random points (measured on PoCL: a third
     * left rmsnorm stuck in poorer basins for 4 seeds of 10, half for 1),
     * then climb from the best of them and the defaults in turn. */
    long seeds = s->r->max_evals / 2 > 1 ? s->r->max_evals / 2 : 1;
    long i = 0;
    for (; i < n && s->r->evaluated < seeds && !out_of_budget(s); i++) {
        try_config(s, order[i]);
    }
    long *starts = malloc((size_t)(i + 1) * sizeof *starts);
    long n_starts = 0;
    for (long k = 0; starts != NULL && k < i; k++) {
        if (s->state[order[k]].outcome == TIMED && order[k] != home) {
            starts[n_starts++] = order[k];
        }
    }
    if (starts != NULL && home >= 0 && s->state[home].outcome == TIMED) {
        starts[n_starts++] = home; /* ranked among the others below */
    }
    /* Best starts first (insertion sort: few of them). */
    for (long a = 1; a < n_starts; a++) {
        long v = starts[a], b = a - 1;
        while (b >= 0 && s->state[starts[b]].us > s->state[v].us) {
            starts[b + 1] = starts[b];
            b--;
        }
        starts[b + 1] = v;
    }
    for (long k = 0; k < n_starts && !out_of_budget(s); k++) {
        climb(s, starts[k], &rng);
    }
    /* Budget left after every climb: keep sampling. */
    for (; i < n && !out_of_budget(s); i++) {
        try_config(s, order[i]);
    }
    free(starts);
    free(order);
}

/* ---- one kernel ------------------------------------------------------- */

void tune_options_init(struct tune_options *o)
{
    memset(o, 0, sizeof *o);
    o->strategy = TUNE_LOCAL;
    o->reps = 20;
    o->seed = 1;
}

/* DB's entry for KS over ROWS rows on RT, made when missing. */
static struct tune_entry *entry_of(struct tunedb *db, const struct rt *rt,
                                   const struct kernel_spec *ks, long rows)
{
    char shape[TUNE_TEXT];
    tune_shape_text(ks, shape, sizeof shape);
    struct tune_entry *e = tunedb_find(db, rt->name, rt->driver,
                                       ks->op->name, dtype_name(ks->dtype),
                                       shape, rows);
    if (e == NULL) {
        struct tune_entry n;
        memset(&n, 0, sizeof n);
        snprintf(n.device, sizeof n.device, "%s", rt->name);
        snprintf(n.driver, sizeof n.driver, "%s", rt->driver);
        snprintf(n.op, sizeof n.op, "%s", ks->op->name);
        snprintf(n.dtype, sizeof n.dtype, "%s", dtype_name(ks->dtype));
        snprintf(n.shape, sizeof n.shape, "%s", shape);
        n.rows = rows;
        e = tunedb_add(db, &n);
    }
    /* The defaults it ran with (tensor cores or not): gen emits the
     * entry's knobs for the same ones. */
    snprintf(e->target, sizeof e->target, "%s", target_name(ks->target));
    return e;
}

/* The search's best against the op defaults (F's home config), re-timed
 * back to back in alternation: a config found faster in one noisy
 * measurement must beat the defaults again to be stored (else the
 * defaults are the best, with their record's time). */
static void confirm_best(struct search *s, const struct tune_filter *f,
                         struct tune_result *r)
{
    double t[2][TUNE_CONFIRM_ROUNDS];
    struct kernel_spec cfg[2];
    struct stub stub[2];
    cl_int err = CL_SUCCESS;
    /* Both verified in the search: loaded once here, then timed in turn. */
    memset(stub, 0, sizeof stub);
    tune_space_config(s->ks, &f->sp, f->home, &cfg[0], NULL, 0);
    tune_space_config(s->ks, &f->sp, r->best, &cfg[1], NULL, 0);
    for (int c = 0; c < 2 && err == CL_SUCCESS; c++) {
        variants_one(&cfg[c], &s->one);
        err = stub_load(&stub[c], s->mc->rt, &s->one, -1, NULL);
    }
    for (int round = 0; round < TUNE_CONFIRM_ROUNDS; round++) {
        for (int c = 0; c < 2 && err == CL_SUCCESS; c++) {
            struct result res;
            memset(&res, 0, sizeof res);
            s->mc->stub = stub[c];
            err = time_variant(s->mc->rt, run_specl, s->mc, s->mc->n_sets,
                               s->o->reps, &res);
            stub[c] = s->mc->stub; /* its scratch may have grown */
            t[c][round] = res.us;
        }
    }
    memset(&s->mc->stub, 0, sizeof s->mc->stub);
    stub_unload(&stub[0]);
    stub_unload(&stub[1]);
    if (err != CL_SUCCESS) {
        return; /* both ran in the search: leave the search's word */
    }
    r->confirmed = 1;
    r->confirm_default_us = median(t[0], TUNE_CONFIRM_ROUNDS);
    r->confirm_best_us = median(t[1], TUNE_CONFIRM_ROUNDS);
    r->default_spread[0] = t[0][0];
    r->default_spread[1] = t[0][TUNE_CONFIRM_ROUNDS - 1];
    r->best_spread[0] = t[1][0];
    r->best_spread[1] = t[1][TUNE_CONFIRM_ROUNDS - 1];
    /* The median of the defaults back to back replaces their one timing
     * before the search, which ran alone and can be off by a few percent
     * (bf16 llama-q on the H100: 432.1 against 416.5 us in one run). */
    r->default_us = r->confirm_default_us;
    if (r->confirm_best_us >= r->confirm_default_us) {
        r->kept_defaults = 1;
        r->best = f->home;
        r->best_us = s->state[f->home].us;
    }
}

/* Writes the plot of S's search to PATH (tune_plot_write). */
static int plot(const struct search *s, const char *path, const char *device,
                char *err, size_t errsize)
{
    double *us = malloc((size_t)s->sp->n_config * sizeof *us);
    if (us == NULL) {
        snprintf(err, errsize, "%s: out of memory", path);
        return -1;
    }
    for (long i = 0; i < s->sp->n_config; i++) {
        /* a config that emits another's code has its time */
        long c = s->state[i].outcome == SAME ? s->rep[i] : i;
        us[i] = s->state[c].outcome == TIMED ? s->state[c].us : INFINITY;
    }
    struct tune_plot pl = {s->ks,         s->sp,           us,
                           s->r->best,    s->r->best_knobs, s->r->best_us,
                           device};
    int rc = tune_plot_write(&pl, path, err, errsize);
    free(us);
    return rc;
}

/* Records the run's outcome in its entry: the run's best, unless the
 * database's is faster or as fast (a resume then keeps it, ties among
 * records included) or this run timed nothing new (the earlier decision
 * stands); the defaults kept back to back replace it. An earlier best
 * counts only with its record's time, and only if that record measured
 * the code its knobs emit now. */
static void record_best(struct search *s, const struct tune_filter *f,
                        const struct tune_result *r)
{
    struct tune_entry *e = r->entry;
    const struct measure_case *mc = s->mc;
    double kept_us = -1;
    snprintf(e->best_seen, sizeof e->best_seen, "%s", e->best);
    if (e->best[0] && record_of_now(s, f, e->best)) {
        kept_us = tune_entry_tried(e, e->best)->us;
    }
    if (r->best >= 0 &&
        (kept_us <= 0 || r->kept_defaults ||
         (r->timed > 0 && r->best_us < kept_us))) {
        snprintf(e->best, sizeof e->best, "%s", r->best_knobs);
        e->best_us = r->best_us;
        e->best_gbs = r->best_gbs;
        e->best_gflops = r->best_gflops;
        e->best_fresh = 1;
    } else if (kept_us > 0 && kept_us != e->best_us) {
        /* kept, as its record has it now (timed again in this run) */
        e->best_us = kept_us;
        e->best_gbs = mc->bytes / (kept_us * 1e3);
        e->best_gflops = mc->flops / (kept_us * 1e3);
        e->best_fresh = 1;
    }
    if (r->default_us > 0) {
        e->default_us = r->default_us;
        e->default_fresh = 1;
    }
}

int tune_kernel(const struct rt *rt, struct naive_stubs *naive,
                const struct kernel_spec *ks, const struct tune_options *o,
                struct tunedb *db, struct tune_result *r)
{
    struct tune_options defaults;
    struct tune_filter f;
    struct measure_case mc;
    struct search s;
    if (o == NULL) {
        tune_options_init(&defaults);
        o = &defaults;
    }
    memset(r, 0, sizeof *r);
    r->best = -1;
    r->default_us = -1;
    r->rows = o->rows > 0 ? o->rows : measure_default_rows(ks);
    if (tune_filter_run(ks, &f, r->error, sizeof r->error) < 0) {
        return 1;
    }
    cl_int st = mcase_init(&mc, rt, naive, ks, (size_t)r->rows, o->seed, 1);
    if (st != CL_SUCCESS) {
        snprintf(r->error, sizeof r->error, "cannot set up %ld rows: %s",
                 r->rows, rt_status(st));
        tune_filter_free(&f);
        return 1;
    }
    memset(&s, 0, sizeof s);
    s.o = o;
    s.ks = ks;
    s.mc = &mc;
    s.sp = &f.sp;
    s.rep = f.rep;
    s.code = f.code;
    s.r = r;
    s.state = calloc((size_t)f.sp.n_config, sizeof *s.state);
    if (s.state == NULL) {
        snprintf(r->error, sizeof r->error, "out of memory");
        tune_filter_free(&f);
        mcase_free(&mc);
        return 1;
    }
    for (long i = 0; i < f.sp.n_config; i++) {
        s.state[i].outcome = f.rep[i] < 0    ? INVALID
                             : f.rep[i] != i ? SAME
                                             : UNSEEN;
    }
    r->entry = entry_of(db, rt, ks, r->rows);
    r->n_configs = f.sp.n_config;
    r->n_valid = f.n_valid;
    r->n_cand = f.n_cand;
    r->why = f.why;
    r->max_evals = o->max_evals > 0 ? o->max_evals
                   : o->strategy == TUNE_EXHAUSTIVE ? f.n_cand
                                                    : (f.n_cand + 3) / 4;
    if (r->max_evals > f.n_cand) {
        r->max_evals = f.n_cand;
    }
    if (o->on_start != NULL) {
        o->on_start(r, o->ctx);
    }

    /* The op's defaults, measured in the same run for comparison. */
    struct result dr;
    memset(&dr, 0, sizeof dr);
    variants_one(ks, &s.one);
    if (measure_stub(&mc, &s.one, o->reps, &dr, NULL) == STUB_TIMED) {
        r->default_us = dr.us;
    }

    s.t0 = tune_clock_s();
    run_strategy(&s, f.cand);
    progress(&s, 1);
    r->searched = 1;

    if (r->best >= 0 && f.home >= 0 && r->best != f.home && r->timed > 0 &&
        s.state[f.home].outcome == TIMED &&
        (o->stop == NULL || !*o->stop)) {
        confirm_best(&s, &f, r);
    }
    struct tune_entry *e = r->entry;
    r->best_is_default = r->best >= 0 && r->best == f.home;
    if (r->best >= 0) {
        struct kernel_spec cks;
        tune_space_config(ks, &f.sp, r->best, &cks, NULL, 0);
        knobs_text(&cks, r->best_knobs, sizeof r->best_knobs);
        /* A time of 0 (a record that rounded to 0.00) would give infinite
         * rates, which no database loads. */
        if (r->best_us > 0) {
            r->best_gbs = mc.bytes / (r->best_us * 1e3);
            r->best_gflops = mc.flops / (r->best_us * 1e3);
        }
    }
    record_best(&s, &f, r);
    snprintf(e->version, sizeof e->version, "%s", SPECL_VERSION);
    int failed = r->best < 0;
    if (o->plot != NULL && r->evaluated > 0 &&
        plot(&s, o->plot, rt->name, r->error, sizeof r->error) < 0) {
        failed = 1;
    }
    free(s.state);
    tune_filter_free(&f);
    mcase_free(&mc);
    return failed;
}
