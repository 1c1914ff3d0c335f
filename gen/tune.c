/* tune.c - the tuner's search over one kernel's candidates: verifying
 * every candidate before timing it, keeping the results in a
 * tuning-database entry (the space and the filter are tune_space.c's, the
 * plot tune_plot.c's, a ladder's crossovers tune_crossover.c's, the
 * command tune_cli.c's). */
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
#include "variant.h"
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
    const struct tune_filter *f;
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
        res->compile_s += r.compile_s;
        res->build_s += r.build_s;
        res->check_s += r.check_s;
        res->timing_s += r.timing_s;
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
            st->us = s->o->fake_us != NULL
                         ? s->o->fake_us(knobs, s->r->rows, -1,
                                           s->o->fake_ctx)
                         : r.us;
            nr = tune_entry_record(res->entry, knobs, st->us, "ok");
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

/* The config of F's space whose knobs are KNOBS when the entry's record
 * of them measured the code that config emits now, else -1 (always for
 * knobs outside the space). */
static long record_of_now(struct search *s, const struct tune_filter *f,
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
            return record_current(rec, code) ? i : -1;
        }
    }
    return -1;
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

/* The values of part P's axes of the config whose axes' values are IDX
 * as one number (mixed radix), below *COMBOS, the count of such values. */
static long part_values_of(const struct tune_space *sp, int p,
                           const int *idx, long *combos)
{
    long v = 0, n = 1;
    for (int a = 0; a < sp->n_axis; a++) {
        if (sp->part[a] == p) {
            v = v * sp->n_value[a] + idx[a];
            n *= sp->n_value[a];
        }
    }
    if (combos != NULL) {
        *combos = n;
    }
    return v;
}

/* The same of config INDEX. */
static long part_values(const struct tune_space *sp, int p, long index,
                        long *combos)
{
    int idx[TUNE_MAX_AXES];
    tune_space_decode(sp, index, idx);
    return part_values_of(sp, p, idx, combos);
}

/* What each value of each axis cost where a config that changed it
 * alone from the best so far was measured: its time over the best's
 * (a failed one as FAILED_COST); 0 where none was. A candidate's
 * predicted cost is the product of its changed values' (1 where
 * unknown): a K step that ran 2x slower alone puts every tile with it
 * after those of values not yet known to lose. */
#define FAILED_COST 2.0
struct value_cost {
    double of[TUNE_MAX_AXES][TUNE_AXIS_ROOM];
};

/* The predicted cost of the config of values B_IDX against that of
 * A_IDX, and in *APART the count of values they differ in. */
static double predicted_cost(const struct value_cost *vc,
                             const struct tune_space *sp, const int *a_idx,
                             const int *b_idx, int *apart)
{
    double cost = 1;
    *apart = 0;
    for (int a = 0; a < sp->n_axis; a++) {
        double c = vc->of[a][b_idx[a]];
        if (b_idx[a] != a_idx[a]) {
            cost *= c > 0 ? c : 1;
            ++*apart;
        }
    }
    return cost;
}

/* After config CONFIG, chosen against FROM (the best then), was
 * measured (as its code's candidate): the cost of its value where it
 * changed one knob alone. */
static void note_cost(struct value_cost *vc, const struct search *s,
                      long from, long config)
{
    const struct config_state *st = &s->state[s->rep[config]];
    int a_idx[TUNE_MAX_AXES], b_idx[TUNE_MAX_AXES], changed = -1;
    if (tune_space_apart(s->sp, from, config) != 1 ||
        s->state[from].outcome != TIMED || s->state[from].us <= 0) {
        return;
    }
    tune_space_decode(s->sp, from, a_idx);
    tune_space_decode(s->sp, config, b_idx);
    for (int a = 0; a < s->sp->n_axis; a++) {
        changed = a_idx[a] != b_idx[a] ? a : changed;
    }
    if (st->outcome == TIMED) {
        vc->of[changed][b_idx[changed]] = st->us / s->state[from].us;
    } else if (st->outcome == FAILED || st->outcome == WRONG) {
        vc->of[changed][b_idx[changed]] = FAILED_COST;
    }
}

/* Where the best moved from OLD to NEW, the costs of the values of each
 * part whose values it changed: they were measured against the old
 * ones (a tile's K step that lost with one engine may win with another);
 * the other parts' costs hold, their kernels being apart. */
static void forget_costs(struct value_cost *vc, const struct tune_space *sp,
                         long old, long now)
{
    for (int p = 0; old >= 0 && old != now && p < sp->n_part; p++) {
        if (part_values(sp, p, old, NULL) == part_values(sp, p, now, NULL)) {
            continue;
        }
        for (int a = 0; a < sp->n_axis; a++) {
            if (sp->part[a] == p) {
                memset(vc->of[a], 0, sizeof vc->of[a]);
            }
        }
    }
}

/* Marks in SEEN (a map a part) the values config INDEX has, where its
 * code was measured. */
static void mark_measured(const struct search *s, unsigned char **seen,
                          long index)
{
    enum outcome o = s->state[s->rep[index]].outcome;
    for (int q = 0; (o == TIMED || o == FAILED || o == WRONG) &&
                    q < s->sp->n_part;
         q++) {
        seen[q][part_values(s->sp, q, index, NULL)] = 1;
    }
}

/* The configs part P's knobs reach from FROM (the other parts' knobs
 * kept; every config where the space is one part) whose code is not
 * measured yet, nor their part's values: of those, the ones that cost
 * least (value_cost), of those the nearest FROM (fewest knobs apart),
 * one config a code, into PICK; returns their count. Costs and
 * distances are the configs' own, not their codes' candidates' (which
 * lie nearest the defaults, not FROM). */
static long cheapest(const struct search *s, const struct value_cost *vc,
                     unsigned char *const *seen, long from, int p,
                     long *pick)
{
    const struct tune_space *sp = s->sp;
    int from_idx[TUNE_MAX_AXES], idx[TUNE_MAX_AXES], axes[TUNE_MAX_AXES];
    int n_axes, nearest = TUNE_MAX_AXES + 1;
    long n = 0;
    double least = 0;
    tune_space_decode(sp, from, from_idx);
    long combos = tune_part_first(sp, from, p, idx, axes, &n_axes);
    for (long c = 0; c < combos; c++) {
        long config = tune_space_encode(sp, idx);
        long rep = s->rep[config];
        if (rep >= 0 && s->state[rep].outcome == UNSEEN &&
            !seen[p][part_values_of(sp, p, idx, NULL)]) {
            int d;
            double cost = predicted_cost(vc, sp, from_idx, idx, &d);
            if (n == 0 || cost < least || (cost == least && d < nearest)) {
                least = cost;
                nearest = d;
                n = 0;
            }
            int keep = cost == least && d == nearest; /* and a new code */
            for (long i = n - 1; i >= 0 && keep; i--) {
                keep = s->rep[pick[i]] != rep;
            }
            if (keep) {
                pick[n++] = config;
            }
        }
        tune_part_next(sp, idx, axes, n_axes);
    }
    return n;
}

/* One part's knobs at a time, the parts in turn (a space of one part:
 * every knob at once): of each part, a random config among the cheapest
 * (cheapest: changed from the best so far in that part's knobs alone,
 * untried values first, then those whose values measured alone cost
 * least, then the nearest the best: a tile's neighbours before another
 * engine's tiles). The best's neighbours one knob away come first, so
 * each value gets a measured cost before any config combines it; then
 * configs of the values that lost least, further out as the near ones
 * are measured, and from each new best again. Where a kernel's knobs
 * shape different kernels of a launch sequence, its time is their sum:
 * a part's values that lost with the other parts' knobs at some values
 * mostly lose at others, so the parts are searched apart, in as many
 * evaluations as the sum of their sizes instead of the product. Ends
 * when every part's values have been measured (or the budget ends). */
static void search_parts(struct search *s, uint64_t *rng)
{
    const struct tune_space *sp = s->sp;
    unsigned char *seen[TUNE_MAX_AXES] = {NULL};
    long *pick = malloc((size_t)s->f->n_cand * sizeof *pick);
    int ok = pick != NULL;
    for (int p = 0; p < sp->n_part && ok; p++) {
        long combos;
        part_values(sp, p, 0, &combos);
        seen[p] = calloc((size_t)combos, 1);
        ok = seen[p] != NULL;
    }
    /* what was measured before (the defaults, a database's records):
     * candidates alone are */
    for (long c = 0; ok && c < s->f->n_cand; c++) {
        mark_measured(s, seen, s->f->cand[c]);
    }
    struct value_cost *vc = ok ? calloc(1, sizeof *vc) : NULL;
    int tried = vc != NULL;
    long last_best = s->r->best;
    while (tried && !out_of_budget(s)) {
        tried = 0;
        for (int p = 0; p < sp->n_part && !out_of_budget(s); p++) {
            long from = s->r->best;
            forget_costs(vc, sp, last_best, from);
            last_best = from;
            long n = from >= 0 ? cheapest(s, vc, seen, from, p, pick) : 0;
            if (n > 0) {
                long config = pick[rng_next(rng) % (uint64_t)n];
                try_config(s, s->rep[config]);
                note_cost(vc, s, from, config);
                mark_measured(s, seen, config);
                mark_measured(s, seen, s->rep[config]);
                tried = 1;
            }
        }
    }
    free(vc);
    free(pick);
    for (int p = 0; p < sp->n_part; p++) {
        free(seen[p]);
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
     * beat, and the local search starts there. */
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
    if (s->o->strategy == TUNE_LOCAL) {
        search_parts(s, &rng);
    }
    /* then, budget left, random points (where the defaults failed, the
     * local search has no best to start from) */
    for (long i = 0; i < n && !out_of_budget(s); i++) {
        try_config(s, order[i]);
    }
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
struct tune_entry *tune_find_entry(struct tunedb *db, const struct rt *rt,
                                   const struct kernel_spec *ks, long rows)
{
    char shape[TUNE_TEXT];
    tune_shape_text(ks, shape, sizeof shape);
    return tunedb_find(db, rt->name, rt->driver, ks->op->name,
                       dtype_name(ks->dtype), shape, rows);
}

static struct tune_entry *entry_of(struct tunedb *db, const struct rt *rt,
                                   const struct kernel_spec *ks, long rows)
{
    struct tune_entry *e = tune_find_entry(db, rt, ks, rows);
    if (e == NULL) {
        struct tune_entry n;
        memset(&n, 0, sizeof n);
        snprintf(n.device, sizeof n.device, "%s", rt->name);
        snprintf(n.driver, sizeof n.driver, "%s", rt->driver);
        snprintf(n.op, sizeof n.op, "%s", ks->op->name);
        snprintf(n.dtype, sizeof n.dtype, "%s", dtype_name(ks->dtype));
        tune_shape_text(ks, n.shape, sizeof n.shape);
        n.rows = rows;
        e = tunedb_add(db, &n);
    }
    /* The defaults it ran with (tensor cores or not): gen emits the
     * entry's knobs for the same ones. */
    snprintf(e->target, sizeof e->target, "%s", target_name(ks->target));
    return e;
}

/* "key=value ..." of the axes of SP that took KS's own value. */
static void own_values_text(const struct kernel_spec *ks,
                            const struct tune_space *sp, char *out,
                            size_t size)
{
    out[0] = '\0';
    for (int a = 0; a < sp->n_axis; a++) {
        if (!(sp->own & (1u << a))) {
            continue;
        }
        const struct param_def *def = &ks->op->knobs[sp->knob[a]];
        char v[64];
        size_t len = strlen(out);
        param_format(def, ks->knob[sp->knob[a]].num, v, sizeof v);
        snprintf(out + len, size - len, "%s%s=%s", len ? " " : "",
                 def->key, v);
    }
}

/* ---- re-timing the best ----------------------------------------------- */

/* The configs that could be stored as the best, re-timed back to back:
 * the op defaults (first: they win a tie), the entry's earlier best, the
 * search's best. */
enum { CONTEST_MAX = 3 };
struct contest {
    int n;
    long index[CONTEST_MAX]; /* config of the space; -1: the op defaults
                                outside it (timed, never stored as best) */
    double median[CONTEST_MAX], p10[CONTEST_MAX], p90[CONTEST_MAX];
    int reps;                /* runs each */
};

static void contest_add(struct contest *c, long index)
{
    for (int i = 0; i < c->n; i++) {
        if (c->index[i] == index) {
            return;
        }
    }
    c->index[c->n++] = index;
}

/* Loads C's configs and times them back to back (time_interleaved), with
 * O's reps; each one's median and spread into C. */
static cl_int contest_time(struct search *s, const struct tune_filter *f,
                           struct contest *c)
{
    double us[CONTEST_MAX][MAX_REPS];
    struct stub stub[CONTEST_MAX];
    char knobs[CONTEST_MAX][TUNE_TEXT];
    cl_int err = CL_SUCCESS;
    memset(stub, 0, sizeof stub);
    for (int i = 0; i < c->n && err == CL_SUCCESS; i++) {
        struct kernel_spec cfg = *s->ks;
        if (c->index[i] >= 0) {
            tune_space_config(s->ks, &f->sp, c->index[i], &cfg, NULL, 0);
        }
        knobs_text(&cfg, knobs[i], sizeof knobs[i]);
        variants_one(&cfg, &s->one);
        err = stub_load(&stub[i], s->mc->rt, &s->one, -1, NULL);
    }
    if (err == CL_SUCCESS) {
        err = time_interleaved(s->mc, stub, c->n, s->o->reps, us, &c->reps);
    }
    for (int i = 0; i < c->n; i++) {
        stub_unload(&stub[i]);
    }
    for (int i = 0; i < c->n && err == CL_SUCCESS; i++) {
        for (int k = 0; s->o->fake_us != NULL && k < c->reps; k++) {
            us[i][k] = s->o->fake_us(knobs[i], s->r->rows, k,
                                      s->o->fake_ctx);
        }
        c->median[i] = median(us[i], c->reps); /* sorts */
        c->p10[i] = percentile(us[i], c->reps, 0.1);
        c->p90[i] = percentile(us[i], c->reps, 0.9);
    }
    return err;
}

/* After the search: the defaults, the search's best and the entry's
 * earlier best (when its record measured the code its knobs emit now)
 * timed back to back; the fastest median becomes R's best, with that
 * median as its time: the search's own figure for the best is the
 * luckiest of many medians, which a config found fast once by noise
 * would keep. A config other than the defaults (where they are one of
 * the space) wins only with a median below the defaults' 10th
 * percentile: one ahead by less than the defaults' own spread is noise,
 * and the defaults are what NAME.c runs without a database. Leaves R as
 * it was when a run fails (all ran in the search, or before it). */
static void retime_best(struct search *s, const struct tune_filter *f,
                        struct tune_result *r)
{
    struct contest c;
    memset(&c, 0, sizeof c);
    contest_add(&c, f->home); /* -1: KS itself, outside the space */
    const struct tune_entry *e = r->entry;
    long earlier = e->best[0] ? record_of_now(s, f, e->best) : -1;
    const struct tune_record *rec = tune_entry_tried(e, e->best);
    if (earlier >= 0 && rec != NULL && rec->us > 0) {
        contest_add(&c, earlier);
    }
    contest_add(&c, r->best);
    if (contest_time(s, f, &c) != CL_SUCCESS || c.reps == 0) {
        return;
    }
    /* c.index[0] is the defaults' */
    int win = -1;
    for (int i = 0; i < c.n; i++) {
        int clear = i == 0 || c.index[0] < 0 || c.median[i] < c.p10[0];
        if (c.index[i] >= 0 && clear &&
            (win < 0 || c.median[i] < c.median[win])) {
            win = i;
        }
    }
    r->retimed = c.reps;
    r->search_best_us = r->best_us;
    r->default_us = c.median[0];
    r->default_spread[0] = c.p10[0];
    r->default_spread[1] = c.p90[0];
    r->kept_defaults = c.index[win] == f->home && r->best != f->home;
    r->kept_earlier = c.index[win] == earlier && r->best != earlier &&
                      !r->kept_defaults;
    r->best = c.index[win];
    r->best_us = c.median[win];
    r->best_spread[0] = c.p10[win];
    r->best_spread[1] = c.p90[win];
}

/* Why S ended before its last candidate, or "" when it did not. */
static void stop_reason(const struct search *s, char *out, size_t size)
{
    const struct tune_result *r = s->r;
    const char *why = "";
    if (r->evaluated >= r->n_cand) {
        why = "";
    } else if (s->o->stop != NULL && *s->o->stop) {
        why = "interrupted";
    } else if (r->evaluated >= r->max_evals) {
        why = "max evals";
    } else {
        why = "time budget";
    }
    snprintf(out, size, "%s", why);
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
    struct tune_plot pl = {s->ks,      s->sp,            us,
                           s->rep,     s->r->best,       s->r->best_knobs,
                           s->r->best_us, device};
    int rc = tune_plot_write(&pl, path, err, errsize);
    free(us);
    return rc;
}

/* Records the run's outcome in its entry. A re-timed best is stored as
 * it is (it was timed back to back against the entry's earlier best).
 * Else the run's best, unless the database's is faster or as fast (a
 * resume then keeps it, ties among records included) or this run timed
 * nothing new (the earlier decision stands). An earlier best counts only
 * with its record's time, and only if that record measured the code its
 * knobs emit now. */
static void record_best(struct search *s, const struct tune_filter *f,
                        const struct tune_result *r)
{
    struct tune_entry *e = r->entry;
    const struct measure_case *mc = s->mc;
    double kept_us = -1;
    snprintf(e->best_seen, sizeof e->best_seen, "%s", e->best);
    if (!r->retimed && e->best[0] && record_of_now(s, f, e->best) >= 0) {
        kept_us = tune_entry_tried(e, e->best)->us;
    }
    if (r->best >= 0 &&
        (r->retimed || kept_us <= 0 ||
         (r->timed > 0 && r->best_us < kept_us))) {
        if (strcmp(e->best, r->best_knobs) != 0) {
            /* its crossover was another config's */
            e->upto_rows = e->upto_next = e->next_from = 0;
            e->upto_with[0] = '\0';
        }
        snprintf(e->best, sizeof e->best, "%s", r->best_knobs);
        e->best_us = r->best_us;
        e->best_gbs = r->best_gbs;
        e->best_gflops = r->best_gflops;
        e->retimed_reps = r->retimed;
        e->best_p10_us = r->retimed ? r->best_spread[0] : 0;
        e->best_p90_us = r->retimed ? r->best_spread[1] : 0;
        e->best_fresh = 1;
    } else if (kept_us > 0 && kept_us != e->best_us &&
               e->retimed_reps == 0) {
        /* kept, as its record has it now (timed again in this run); a
         * re-timed figure stands */
        e->best_us = kept_us;
        e->best_gbs = mc->bytes / (kept_us * 1e3);
        e->best_gflops = mc->flops / (kept_us * 1e3);
        e->retimed_reps = 0;
        e->best_p10_us = e->best_p90_us = 0;
        e->best_fresh = 1;
    }
    /* A lone timing of the defaults does not replace a median re-timed
     * back to back with the stored best. */
    if (r->default_us > 0 && (r->retimed || e->retimed_reps == 0)) {
        e->default_us = r->default_us;
        e->default_p10_us = r->retimed ? r->default_spread[0] : 0;
        e->default_p90_us = r->retimed ? r->default_spread[1] : 0;
        e->default_fresh = 1;
    }
    /* A run that timed nothing and went less far than the entry's search
     * (one that measures a ladder's crossovers, --max-evals 1) leaves
     * that search's coverage. */
    if (r->timed == 0 && e->candidates == r->n_cand &&
        e->searched >= r->evaluated) {
        return;
    }
    e->searched = r->evaluated;
    e->candidates = r->n_cand;
    snprintf(e->stopped, sizeof e->stopped, "%s", r->stopped);
    e->search_fresh = 1;
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
    /* The defaults are what NAME.c runs at these rows: on a CPU at few
     * rows, the CPU defaults for few rows (they start the search, and
     * the best must beat them). */
    struct kernel_spec few, measured;
    measured = *cpu_defaults_at(ks, r->rows, &few);
    /* Every config built from it (the defaults, the candidates, those
     * re-timed) a program of the paths the rows take, which builds
     * faster than NAME.c's whole one: the same kernels. */
    measured.measure_rows = r->rows;
    ks = &measured;
    if (tune_filter_run_at(ks, r->rows, &f, r->error, sizeof r->error) <
        0) {
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
    s.f = &f;
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
    own_values_text(ks, &f.sp, r->own_values, sizeof r->own_values);
    snprintf(r->idle, sizeof r->idle, "%s", f.sp.idle);
    if (o->strategy == TUNE_LOCAL) {
        /* each part's candidates around the defaults */
        long counts[TUNE_MAX_AXES] = {0};
        for (int p = 0; p < f.sp.n_part; p++) {
            long *cand = NULL;
            counts[p] = tune_part_candidates(&f, f.home, p, &cand);
            free(cand);
        }
        tune_space_parts_text(ks->op, &f.sp, counts, r->parts,
                              sizeof r->parts);
    }
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
        char knobs[TUNE_TEXT];
        knobs_text(ks, knobs, sizeof knobs);
        r->default_us = o->fake_us != NULL
                            ? o->fake_us(knobs, r->rows, -1, o->fake_ctx)
                                           : dr.us;
    }

    s.t0 = tune_clock_s();
    run_strategy(&s, f.cand);
    progress(&s, 1);
    r->searched = 1;
    stop_reason(&s, r->stopped, sizeof r->stopped);
    r->best_is_default = r->best >= 0 && r->best == f.home;

    /* A run that timed nothing new leaves the entry's figures: they were
     * decided (and re-timed) by the run that measured them. */
    if (r->best >= 0 && r->timed > 0 && (o->stop == NULL || !*o->stop)) {
        retime_best(&s, &f, r);
    }
    struct tune_entry *e = r->entry;
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
