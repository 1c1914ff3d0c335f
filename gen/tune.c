/* tune.c - `specl tune`: searches each kernel's knobs on a device, verifies
 * every candidate before timing it, and keeps the results in the tuning
 * database. */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "emit.h"
#include "knobs.h"
#include "measure.h"
#include "spec.h"
#include "tune.h"
#include "tunedb.h"

#define MAX_AXES 12
#define MAX_VALUES 16
#define MAX_CONFIGS 200000

enum strategy { EXHAUSTIVE, RANDOM, LOCAL };

struct tune_opts {
    const char *device;
    enum strategy strategy;
    double budget_s;      /* 0: none */
    long max_evals;       /* 0: by strategy */
    long rows;            /* 0: per op default */
    const char *db_path;  /* NULL: tuning/<device-slug>.yaml */
    const char *plot;     /* SVG path or NULL */
    const char *kernel;   /* only this kernel */
    int reps;
    unsigned long seed;
};

/* The knob values a kernel's search runs over. */
struct space {
    int n_axis;
    int knob[MAX_AXES];           /* index in op->knobs */
    int n_value[MAX_AXES];
    double value[MAX_AXES][MAX_VALUES];
    long n_config;                /* product of n_value */
};

/* What became of one configuration. SAME: valid, but it emits the code
 * of another config (a knob without effect for this spec); only that one
 * is timed. */
enum outcome { UNSEEN, INVALID, SAME, FAILED, WRONG, TIMED };

struct config_state {
    unsigned char outcome;
    double us;  /* as measured: a float would move a best across the
                   0.01 us the database keeps, away from its record */
};

static volatile sig_atomic_t interrupted = 0;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int build_space(const struct kernel_spec *ks, struct space *sp,
                       char *err, size_t errsize)
{
    const struct op_def *op = ks->op;
    memset(sp, 0, sizeof *sp);
    sp->n_config = 1;
    if (op->tune_space == NULL) {
        snprintf(err, errsize, "op %s declares no tuning space", op->name);
        return -1;
    }
    for (const struct tune_axis *ax = op->tune_space; ax->knob; ax++) {
        int k = op_knob_index(op, ax->knob);
        if (k < 0 || sp->n_axis == MAX_AXES) {
            snprintf(err, errsize, "tuning space of %s: bad knob %s",
                     op->name, ax->knob);
            return -1;
        }
        const struct param_def *def = &op->knobs[k];
        int a = sp->n_axis++;
        sp->knob[a] = k;
        char copy[256];
        snprintf(copy, sizeof copy, "%s", ax->values);
        for (char *t = strtok(copy, " "); t; t = strtok(NULL, " ")) {
            double v;
            if (def->kind == VALUE_CHOICE) {
                v = -1;
                for (int c = 0; def->choices[c]; c++) {
                    if (strcmp(def->choices[c], t) == 0) {
                        v = c;
                    }
                }
            } else {
                v = strtod(t, NULL);
            }
            if (v < 0 || sp->n_value[a] == MAX_VALUES) {
                snprintf(err, errsize, "tuning space of %s: bad value %s "
                         "for %s", op->name, t, ax->knob);
                return -1;
            }
            sp->value[a][sp->n_value[a]++] = v;
        }
        sp->n_config *= sp->n_value[a];
        if (sp->n_config > MAX_CONFIGS) {
            snprintf(err, errsize, "tuning space of %s is too large",
                     op->name);
            return -1;
        }
    }
    return 0;
}

static void decode(const struct space *sp, long index, int *idx)
{
    for (int a = sp->n_axis - 1; a >= 0; a--) {
        idx[a] = (int)(index % sp->n_value[a]);
        index /= sp->n_value[a];
    }
}

static long encode(const struct space *sp, const int *idx)
{
    long index = 0;
    for (int a = 0; a < sp->n_axis; a++) {
        index = index * sp->n_value[a] + idx[a];
    }
    return index;
}

/* KS with the knobs of config INDEX (the axes set, every other knob the
 * spec left out chosen again by the op's defaults), resolved quietly:
 * returns 1 if valid, else 0 with the first reason in WHY (when not
 * NULL). */
static int config_spec(const struct kernel_spec *base, const struct space *sp,
                       long index, struct kernel_spec *out, char *why,
                       size_t size)
{
    int idx[MAX_AXES] = {0};
    struct diags quiet = {.out = NULL};
    *out = *base;
    decode(sp, index, idx);
    for (int a = 0; a < sp->n_axis; a++) {
        out->knob[sp->knob[a]].num = sp->value[a][idx[a]];
        out->knob[sp->knob[a]].set = 1;
    }
    int valid = knobs_resolve(out, &quiet) == 0;
    if (why != NULL) {
        snprintf(why, size, "%s", quiet.first);
    }
    return valid;
}

/* A reason with its numbers blanked, to count reasons of the same kind. */
static void reason_kind(const char *why, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = why; *p && n + 1 < size; p++) {
        if (*p >= '0' && *p <= '9') {
            if (n == 0 || out[n - 1] != '#') {
                out[n++] = '#';
            }
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

/* The kinds of reasons for which configs were rejected, counted. */
#define MAX_KINDS 8
struct reasons {
    int n_kinds;
    char kinds[MAX_KINDS][128];
    long count[MAX_KINDS];
};

/* The constraint filter (the op's checks), then the merging of configs
 * that emit the same code: marks each config of SP in STATE as INVALID
 * (its reason counted in R), SAME (REP[i]: the config whose code it
 * emits) or UNSEEN, a candidate (REP[i] = i). HOME (the op defaults'
 * config, or -1) stands for its equals, else the first in space order.
 * Writes the candidates, in space order, to CAND; returns their number
 * (N_VALID: the valid configs), or -1 if memory runs out or a config does
 * not render (message in ERR). */
static long filter_space(const struct kernel_spec *ks, const struct space *sp,
                         long home, struct config_state *state, long *rep,
                         long *cand, long *n_valid, struct reasons *r,
                         char *err, size_t errsize)
{
    long n = sp->n_config, valid = 0, size = 1, n_cand = 0;
    memset(r, 0, sizeof *r);
    for (long i = 0; i < n; i++) {
        struct kernel_spec cks;
        char why[DIAG_MESSAGE_MAX], kind[128];
        if (config_spec(ks, sp, i, &cks, why, sizeof why)) {
            state[i].outcome = UNSEEN;
            valid++;
            continue;
        }
        state[i].outcome = INVALID;
        reason_kind(why, kind, sizeof kind);
        int k = 0;
        while (k < r->n_kinds && strcmp(r->kinds[k], kind) != 0) {
            k++;
        }
        if (k == r->n_kinds && r->n_kinds < MAX_KINDS) {
            snprintf(r->kinds[r->n_kinds++], sizeof r->kinds[0], "%s", kind);
        }
        if (k < MAX_KINDS) {
            r->count[k]++;
        }
    }
    *n_valid = valid;
    /* An open-addressing table of the code hashes seen, at most half
     * full. */
    while (size < 2 * valid) {
        size *= 2;
    }
    uint64_t *hash = malloc((size_t)size * sizeof *hash);
    long *slot = malloc((size_t)size * sizeof *slot);
    if (hash == NULL || slot == NULL) {
        free(hash);
        free(slot);
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    for (long t = 0; t < size; t++) {
        slot[t] = -1;
    }
    for (long o = -1; o < n; o++) {
        long i = o < 0 ? home : o; /* the defaults' config first */
        if (i < 0 || (o >= 0 && i == home) || state[i].outcome == INVALID) {
            continue;
        }
        struct kernel_spec cks;
        uint64_t h;
        config_spec(ks, sp, i, &cks, NULL, 0);
        if (emit_code_hash(&cks, &h, err, errsize) < 0) {
            free(hash);
            free(slot);
            return -1;
        }
        long t = (long)(h & (uint64_t)(size - 1));
        while (slot[t] >= 0 && hash[t] != h) {
            t = (t + 1) & (size - 1);
        }
        if (slot[t] >= 0) {
            state[i].outcome = SAME;
            rep[i] = slot[t];
        } else {
            slot[t] = i;
            hash[t] = h;
            rep[i] = i;
        }
    }
    free(hash);
    free(slot);
    for (long i = 0; i < n; i++) {
        if (state[i].outcome == UNSEEN) {
            cand[n_cand++] = i;
        }
    }
    return n_cand;
}

/* State of one kernel's search. */
struct search {
    const struct tune_opts *o;
    const struct rt *rt;
    const struct kernel_spec *ks;
    struct measure_case *mc;
    struct space sp;
    struct config_state *state;
    long *rep;            /* per valid config: the candidate emitting its
                             code (filter_space) */
    struct tune_entry *entry;
    long n_cand;          /* configs to time: valid, distinct code */
    long evaluated, built, verified, timed, from_db;
    long max_evals;
    long best;            /* config index, -1 none */
    double best_us;
    double t0;
    double last_report;
};

static int is_tty = 0;

static void progress(struct search *s, int final)
{
    double el = now_s() - s->t0;
    double left = s->evaluated > 0
                      ? el / s->evaluated * (s->max_evals - s->evaluated)
                      : 0;
    if (s->o->budget_s > 0 && s->o->budget_s - el < left) {
        left = s->o->budget_s - el;
    }
    if (left < 0) {
        left = 0;
    }
    char best[48] = "-";
    if (s->best >= 0) {
        snprintf(best, sizeof best, "%.1f us", s->best_us);
    }
    if (is_tty) {
        int width = 30;
        int filled = s->max_evals
                         ? (int)(width * s->evaluated / s->max_evals)
                         : width;
        fprintf(stderr, "\r  [%.*s%*s] %ld/%ld best %s  %d:%02d elapsed, "
                "~%d:%02d left ",
                filled, "==============================", width - filled, "",
                s->evaluated, s->max_evals, best, (int)el / 60, (int)el % 60,
                (int)left / 60, (int)left % 60);
        if (final) {
            fputc('\n', stderr);
        }
    } else if (final || el - s->last_report >= 5.0) {
        fprintf(stderr, "  %s: %ld/%ld evaluated, best %s, %.0f s elapsed, "
                "~%.0f s left\n",
                s->ks->name, s->evaluated, s->max_evals, best, el, left);
        s->last_report = el;
    }
    fflush(stderr);
}

/* Builds, checks against the device, verifies and times config INDEX;
 * records the outcome in the state and the database entry. */
static void evaluate(struct search *s, long index)
{
    struct config_state *st = &s->state[index];
    struct kernel_spec cks;
    char knobs[TUNE_TEXT];
    config_spec(s->ks, &s->sp, index, &cks, NULL, 0);
    knobs_text(&cks, knobs, sizeof knobs);
    s->evaluated++;
    const struct tune_record *rec = tune_entry_tried(s->entry, knobs);
    if (rec != NULL) {
        s->from_db++;
        st->outcome = rec->us > 0 ? TIMED : FAILED;
        st->us = rec->us;
    } else {
        struct result r;
        memset(&r, 0, sizeof r);
        switch (measure_stub(s->mc, &cks, s->o->reps, &r, NULL)) {
        case STUB_BUILD_FAILED:
            st->outcome = FAILED;
            tune_entry_record(s->entry, knobs, -1, r.note);
            break;
        case STUB_RUN_FAILED:
            s->built++;
            s->verified++;
            st->outcome = FAILED;
            tune_entry_record(s->entry, knobs, -1, r.note);
            break;
        case STUB_WRONG:
            s->built++;
            st->outcome = WRONG;
            tune_entry_record(s->entry, knobs, -1,
                              r.note[0] ? r.note : "wrong result");
            break;
        case STUB_TIMED:
            s->built++;
            s->verified++;
            s->timed++;
            st->outcome = TIMED;
            st->us = r.us;
            tune_entry_record(s->entry, knobs, r.us, "ok");
            break;
        }
    }
    if (st->outcome == TIMED && (s->best < 0 || st->us < s->best_us)) {
        s->best = index;
        s->best_us = st->us;
    }
}

static int out_of_budget(const struct search *s)
{
    return interrupted || s->evaluated >= s->max_evals ||
           (s->o->budget_s > 0 && now_s() - s->t0 >= s->o->budget_s);
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
        int idx[MAX_AXES] = {0};
        long moves[4 * MAX_AXES];
        int n_moves = 0;
        decode(&s->sp, cur, idx);
        for (int a = 0; a < s->sp.n_axis; a++) {
            for (int dir = -1; dir <= 1; dir += 2) {
                for (int step = 1; step <= 2; step++) {
                    int v = idx[a] + dir * step;
                    if (v < 0 || v >= s->sp.n_value[a]) {
                        break;
                    }
                    int nidx[MAX_AXES];
                    memcpy(nidx, idx, sizeof nidx);
                    nidx[a] = v;
                    long n = encode(&s->sp, nidx);
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

/* The config of the space holding KS's own knobs (its defaults), or -1
 * when some default lies outside the space. */
static long default_config(const struct space *sp,
                           const struct kernel_spec *ks)
{
    int idx[MAX_AXES] = {0};
    for (int a = 0; a < sp->n_axis; a++) {
        idx[a] = -1;
        for (int v = 0; v < sp->n_value[a]; v++) {
            if (sp->value[a][v] == ks->knob[sp->knob[a]].num) {
                idx[a] = v;
            }
        }
        if (idx[a] < 0) {
            return -1;
        }
    }
    return encode(sp, idx);
}

static void run_strategy(struct search *s, const long *cand)
{
    long n = s->n_cand;
    long *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    uint64_t rng = s->o->seed * 2654435761u + 88172645463325252ull;
    if (order == NULL) {
        return;
    }
    memcpy(order, cand, (size_t)n * sizeof *order);
    /* The op's defaults first: every strategy then knows the number to
     * beat, and the local search climbs from there too. */
    long home = default_config(&s->sp, s->ks);
    if (home >= 0 && s->state[home].outcome == UNSEEN) {
        try_config(s, home);
    }
    if (s->o->strategy != EXHAUSTIVE) {
        for (long i = n - 1; i > 0; i--) {
            long j = (long)(rng_next(&rng) % (uint64_t)(i + 1));
            long t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
    if (s->o->strategy != LOCAL) {
        for (long i = 0; i < n && !out_of_budget(s); i++) {
            try_config(s, order[i]);
        }
        free(order);
        return;
    }
    /* Local: half the budget on random points (measured on PoCL: a third
     * left rmsnorm stuck in poorer basins for 4 seeds of 10, half for 1),
     * then climb from the best of them and the defaults in turn. */
    long seeds = s->max_evals / 2 > 1 ? s->max_evals / 2 : 1;
    long i = 0;
    for (; i < n && s->evaluated < seeds && !out_of_budget(s); i++) {
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

/* ---- plot ------------------------------------------------------------- */

static void svg_color(double t, char *out, size_t size)
{
    /* 0: fastest (green) .. 1: slowest (red), through yellow. */
    int r = t < 0.5 ? (int)(510 * t) : 255;
    int g = t < 0.5 ? 200 : (int)(200 * (1 - t) * 2);
    snprintf(out, size, "rgb(%d,%d,60)", r, g);
}

static int write_plot(const struct search *s, const char *path,
                      const char *device, char *err, size_t errsize)
{
    const struct space *sp = &s->sp;
    const struct op_def *op = s->ks->op;
    int ax = 0, ay = sp->n_axis > 1 ? 1 : 0;
    int nx = sp->n_value[ax], ny = sp->n_axis > 1 ? sp->n_value[ay] : 1;
    double cell[MAX_VALUES][MAX_VALUES];
    double lo = INFINITY, hi = 0;
    for (int x = 0; x < nx; x++) {
        for (int y = 0; y < ny; y++) {
            cell[x][y] = INFINITY;
        }
    }
    for (long i = 0; i < sp->n_config; i++) {
        /* a config that emits another's code has its time */
        long c = s->state[i].outcome == SAME ? s->rep[i] : i;
        if (s->state[c].outcome != TIMED) {
            continue;
        }
        int idx[MAX_AXES] = {0};
        decode(sp, i, idx);
        int x = idx[ax], y = sp->n_axis > 1 ? idx[ay] : 0;
        double us = s->state[c].us;
        cell[x][y] = us < cell[x][y] ? us : cell[x][y];
        lo = us < lo ? us : lo;
        hi = us > hi ? us : hi;
    }
    int bx = -1, by = -1;
    if (s->best >= 0) {
        int idx[MAX_AXES] = {0};
        decode(sp, s->best, idx);
        bx = idx[ax];
        by = sp->n_axis > 1 ? idx[ay] : 0;
    }
    const int cw = 90, ch = 44, left = 110, top = 70;
    int width = left + nx * cw + 40, height = top + ny * ch + 90;
    struct buf b;
    buf_init(&b);
    buf_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n",
               width, height);
    buf_printf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"10\" y=\"22\" font-size=\"15\">%s (%s): best time "
               "over the other knobs</text>\n<text x=\"10\" y=\"42\">%s; "
               "green fast, red slow, grey not timed; the box marks the "
               "chosen config</text>\n",
               s->ks->name, op->name, device);
    char v[64], col[32];
    for (int x = 0; x < nx; x++) {
        param_format(&op->knobs[sp->knob[ax]], sp->value[ax][x], v, sizeof v);
        buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s"
                   "</text>\n", left + x * cw + cw / 2, top - 8, v);
    }
    for (int y = 0; y < ny; y++) {
        if (sp->n_axis > 1) {
            param_format(&op->knobs[sp->knob[ay]], sp->value[ay][y], v,
                         sizeof v);
        } else {
            snprintf(v, sizeof v, "-");
        }
        buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s"
                   "</text>\n", left - 8, top + y * ch + ch / 2 + 4, v);
        for (int x = 0; x < nx; x++) {
            double us = cell[x][y];
            if (isfinite(us)) {
                double t = hi > lo ? log(us / lo) / log(hi / lo) : 0;
                svg_color(t, col, sizeof col);
            } else {
                snprintf(col, sizeof col, "#ddd");
            }
            buf_printf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height="
                       "\"%d\" fill=\"%s\" stroke=\"white\"/>\n",
                       left + x * cw, top + y * ch, cw, ch, col);
            if (isfinite(us)) {
                buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle"
                           "\">%.1f us</text>\n", left + x * cw + cw / 2,
                           top + y * ch + ch / 2 + 4, us);
            }
        }
    }
    if (bx >= 0) {
        buf_printf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                   "fill=\"none\" stroke=\"black\" stroke-width=\"4\"/>\n",
                   left + bx * cw + 2, top + by * ch + 2, cw - 4, ch - 4);
    }
    buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s"
               "</text>\n", left + nx * cw / 2, top + ny * ch + 24,
               op->knobs[sp->knob[ax]].key);
    buf_printf(&b, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" "
               "text-anchor=\"middle\">%s</text>\n",
               top + ny * ch / 2, top + ny * ch / 2,
               sp->n_axis > 1 ? op->knobs[sp->knob[ay]].key : "");
    if (s->best >= 0) {
        char knobs[TUNE_TEXT];
        struct kernel_spec cks;
        config_spec(s->ks, sp, s->best, &cks, NULL, 0);
        knobs_text(&cks, knobs, sizeof knobs);
        buf_printf(&b, "<text x=\"10\" y=\"%d\">chosen: %s (%.1f us)</text>\n",
                   top + ny * ch + 56, knobs, s->best_us);
    }
    buf_puts(&b, "</svg>\n");
    int rc = write_file_atomic(path, buf_str(&b), b.len, err, errsize);
    buf_free(&b);
    return rc;
}

/* ---- one kernel ------------------------------------------------------- */

static int tune_kernel(const struct tune_opts *o, const struct rt *rt,
                       struct naive *naive, struct tunedb *db,
                       const struct kernel_spec *ks, const char *plot)
{
    struct search s;
    char err[256];
    memset(&s, 0, sizeof s);
    s.o = o;
    s.rt = rt;
    s.ks = ks;
    s.best = -1;
    if (build_space(ks, &s.sp, err, sizeof err) < 0) {
        fprintf(stderr, "specl: tune: %s: %s\n", ks->name, err);
        return 1;
    }
    size_t rows = (size_t)(o->rows > 0 ? o->rows : measure_default_rows(ks));
    struct measure_case mc;
    cl_int st = mcase_init(&mc, rt, naive, ks, rows, o->seed, 1);
    if (st != CL_SUCCESS) {
        fprintf(stderr, "specl: tune: %s: cannot set up %zu rows: %s\n",
                ks->name, rows, rt_status(st));
        return 1;
    }
    s.mc = &mc;
    s.state = calloc((size_t)s.sp.n_config, sizeof *s.state);
    s.rep = malloc((size_t)s.sp.n_config * sizeof *s.rep);
    long *cand = malloc((size_t)s.sp.n_config * sizeof *cand);
    struct reasons why;
    long n_ok = 0;
    if (s.state == NULL || s.rep == NULL || cand == NULL ||
        (s.n_cand = filter_space(ks, &s.sp, default_config(&s.sp, ks),
                                 s.state, s.rep, cand, &n_ok, &why, err,
                                 sizeof err)) < 0) {
        fprintf(stderr, "specl: tune: %s: %s\n", ks->name,
                s.state && s.rep && cand ? err : "out of memory");
        free(s.state);
        free(s.rep);
        free(cand);
        mcase_free(&mc);
        return 1;
    }

    char shape[TUNE_TEXT];
    tune_shape_text(ks, shape, sizeof shape);
    s.entry = tunedb_find(db, rt->name, rt->driver, ks->op->name,
                          dtype_name(ks->dtype), shape, (long)rows);
    if (s.entry == NULL) {
        struct tune_entry e;
        memset(&e, 0, sizeof e);
        snprintf(e.device, sizeof e.device, "%s", rt->name);
        snprintf(e.driver, sizeof e.driver, "%s", rt->driver);
        snprintf(e.op, sizeof e.op, "%s", ks->op->name);
        snprintf(e.dtype, sizeof e.dtype, "%s", dtype_name(ks->dtype));
        snprintf(e.shape, sizeof e.shape, "%s", shape);
        e.rows = (long)rows;
        s.entry = tunedb_add(db, &e);
    }

    s.max_evals = o->max_evals > 0 ? o->max_evals
                  : o->strategy == EXHAUSTIVE ? s.n_cand
                                              : (s.n_cand + 3) / 4;
    if (s.max_evals > s.n_cand) {
        s.max_evals = s.n_cand;
    }
    printf("%s: %s %s, rows %zu: %ld configs, %ld valid, %ld distinct",
           ks->name, ks->op->name, shape, rows, s.sp.n_config, n_ok,
           s.n_cand);
    for (int k = 0; k < why.n_kinds; k++) {
        printf("%s%ld %s", k ? "; " : " (invalid: ", why.count[k],
               why.kinds[k]);
    }
    printf("%s\n", why.n_kinds ? ")" : "");
    fflush(stdout);

    /* The op's defaults, measured in the same run for comparison. */
    double default_us = -1;
    {
        struct result r;
        memset(&r, 0, sizeof r);
        if (measure_stub(&mc, ks, o->reps, &r, NULL) == STUB_TIMED) {
            default_us = r.us;
        }
    }

    s.t0 = now_s();
    run_strategy(&s, cand);
    progress(&s, 1);

    int failed = 0;
    char knobs[TUNE_TEXT] = "";
    if (s.best >= 0) {
        struct kernel_spec cks;
        config_spec(ks, &s.sp, s.best, &cks, NULL, 0);
        knobs_text(&cks, knobs, sizeof knobs);
    }
    /* Keep the database's best if an earlier run found a faster one, or
     * one as fast (a resume then keeps it, ties among records included). */
    if (s.best >= 0 && (!s.entry->best[0] || s.best_us < s.entry->best_us ||
                        tune_entry_tried(s.entry, s.entry->best) == NULL)) {
        snprintf(s.entry->best, sizeof s.entry->best, "%s", knobs);
        s.entry->best_us = s.best_us;
        s.entry->best_gbs = mc.bytes / (s.best_us * 1e3);
        s.entry->best_gflops = mc.flops / (s.best_us * 1e3);
    }
    if (default_us > 0) {
        s.entry->default_us = default_us;
    }
    snprintf(s.entry->version, sizeof s.entry->version, "%s", SPECL_VERSION);
    printf("  evaluated %ld of %ld distinct (%.0f%%): %ld built, %ld "
           "verified, %ld timed, %ld from the database\n",
           s.evaluated, s.n_cand,
           s.n_cand ? 100.0 * s.evaluated / s.n_cand : 0.0, s.built,
           s.verified, s.timed, s.from_db);
    if (s.best >= 0) {
        printf("  best %.1f us (%.1f GB/s, %.1f GFLOP/s): %s\n", s.best_us,
               mc.bytes / (s.best_us * 1e3), mc.flops / (s.best_us * 1e3),
               knobs);
        if (default_us > 0) {
            printf("  defaults %.1f us: tuned is %.2fx\n", default_us,
                   default_us / s.best_us);
        }
    } else {
        printf("  no config ran correctly\n");
        failed = 1;
    }
    if (plot != NULL && s.evaluated > 0 &&
        write_plot(&s, plot, rt->name, err, sizeof err) < 0) {
        fprintf(stderr, "specl: tune: %s\n", err);
        failed = 1;
    }
    free(cand);
    free(s.rep);
    free(s.state);
    mcase_free(&mc);
    return failed;
}

long tune_candidates(const struct kernel_spec *ks, char **texts,
                     long *n_valid)
{
    struct space sp;
    char err[256];
    *texts = NULL;
    if (build_space(ks, &sp, err, sizeof err) < 0) {
        return -1;
    }
    struct config_state *state = calloc((size_t)sp.n_config, sizeof *state);
    long *rep = malloc((size_t)sp.n_config * sizeof *rep);
    long *cand = malloc((size_t)sp.n_config * sizeof *cand);
    struct reasons why;
    long n = -1;
    if (state != NULL && rep != NULL && cand != NULL) {
        n = filter_space(ks, &sp, default_config(&sp, ks), state, rep, cand,
                         n_valid, &why, err, sizeof err);
    }
    if (n >= 0) {
        *texts = malloc((size_t)(n ? n : 1) * TUNE_TEXT);
        for (long i = 0; *texts != NULL && i < n; i++) {
            struct kernel_spec cks;
            config_spec(ks, &sp, cand[i], &cks, NULL, 0);
            knobs_text(&cks, *texts + i * TUNE_TEXT, TUNE_TEXT);
        }
        n = *texts != NULL ? n : -1;
    }
    free(state);
    free(rep);
    free(cand);
    return n;
}

static int parse_number(const char *opt, const char *val, double lo,
                        double hi, double *out)
{
    char *end;
    double v = val ? strtod(val, &end) : 0;
    if (val == NULL || *end != '\0' || end == val || v < lo || v > hi) {
        fprintf(stderr, "specl: error: %s needs a number in [%g, %g]%s%s\n",
                opt, lo, hi, val ? ", got " : "", val ? val : "");
        return -1;
    }
    *out = v;
    return 0;
}

int specl_tune_main(int argc, char **argv);

int specl_tune_main(int argc, char **argv)
{
    struct tune_opts o = {NULL, LOCAL, 0, 0, 0, NULL, NULL, NULL, 20, 1};
    struct spec_set set;
    struct diags d = {.out = stderr};
    int n_files = 0, rc = 0;
    double num;
    spec_set_init(&set);
    for (int i = 0; i < argc && rc == 0; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--device") == 0 && val) {
            o.device = argv[++i];
        } else if (strcmp(a, "--strategy") == 0 && val) {
            i++;
            if (strcmp(val, "exhaustive") == 0) {
                o.strategy = EXHAUSTIVE;
            } else if (strcmp(val, "random") == 0) {
                o.strategy = RANDOM;
            } else if (strcmp(val, "local") == 0) {
                o.strategy = LOCAL;
            } else {
                fprintf(stderr, "specl: error: --strategy must be "
                        "exhaustive, random or local (got %s)\n", val);
                rc = 2;
            }
        } else if (strcmp(a, "--budget") == 0) {
            rc = parse_number(a, val, 0.001, 1e7, &o.budget_s) ? 2 : 0;
            i++;
        } else if (strcmp(a, "--max-evals") == 0) {
            rc = parse_number(a, val, 1, 1e7, &num) ? 2 : 0;
            o.max_evals = (long)num;
            i++;
        } else if (strcmp(a, "--rows") == 0) {
            rc = parse_number(a, val, 1, 1 << 24, &num) ? 2 : 0;
            o.rows = (long)num;
            i++;
        } else if (strcmp(a, "--reps") == 0) {
            rc = parse_number(a, val, 1, MAX_REPS, &num) ? 2 : 0;
            o.reps = (int)num;
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            rc = parse_number(a, val, 0, 4e9, &num) ? 2 : 0;
            o.seed = (unsigned long)num;
            i++;
        } else if (strcmp(a, "--db") == 0 && val) {
            o.db_path = argv[++i];
        } else if (strcmp(a, "--plot") == 0 && val) {
            o.plot = argv[++i];
        } else if (strcmp(a, "--kernel") == 0 && val) {
            o.kernel = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "specl: error: unknown or incomplete tune option "
                    "'%s'\n", a);
            rc = 2;
        } else {
            spec_read_file(&set, a, &d);
            n_files++;
        }
    }
    if (rc == 0 && n_files == 0) {
        fputs("specl: error: tune needs spec files\n", stderr);
        rc = 2;
    }
    if (rc == 0 && d.count) {
        rc = 1;
    }
    struct rt rt;
    char err[256];
    if (rc == 0 && rt_open(&rt, o.device, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s\n", err);
        rc = 1;
    } else if (rc == 0 && spec_set_target(&set, rt.target, &d) != 0) {
        rt_close(&rt); /* the defaults for this device do not validate */
        rc = 1;
    }
    if (rc != 0) {
        spec_set_free(&set);
        return rc;
    }
    char db_path[512];
    if (o.db_path != NULL) {
        snprintf(db_path, sizeof db_path, "%s", o.db_path);
    } else {
        char slug[160];
        tune_device_slug(rt.name, slug, sizeof slug);
        mkdir("tuning", 0777);
        snprintf(db_path, sizeof db_path, "tuning/%s.yaml", slug);
    }
    struct tunedb db;
    tunedb_init(&db);
    if (tunedb_load(&db, db_path, 1, &d) != 0) {
        rt_close(&rt);
        tunedb_free(&db);
        spec_set_free(&set);
        return 1;
    }
    is_tty = isatty(2);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    printf("device: %s (%s, driver %s); database %s\n", rt.name,
           rt.platform_name, rt.driver, db_path);
    struct naive naive;
    naive_init(&naive);
    int matched = 0;
    for (int k = 0; k < set.n_kernel && !interrupted; k++) {
        if (o.kernel != NULL && strcmp(o.kernel, set.kernel[k].name) != 0) {
            continue;
        }
        matched++;
        rc |= tune_kernel(&o, &rt, &naive, &db, &set.kernel[k],
                          matched == 1 ? o.plot : NULL);
        /* Save after every kernel: an interrupted run keeps its results. */
        if (tunedb_save(&db, db_path, err, sizeof err) < 0) {
            fprintf(stderr, "specl: error: %s\n", err);
            rc = 1;
        }
    }
    if (matched == 0) {
        fprintf(stderr, "specl: error: no kernel to tune%s%s\n",
                o.kernel ? " named " : "", o.kernel ? o.kernel : "");
        rc = 1;
    }
    if (interrupted) {
        fprintf(stderr, "specl: tune: interrupted; results so far are in "
                "%s\n", db_path);
        rc = 130;
    }
    naive_free(&naive);
    rt_close(&rt);
    tunedb_free(&db);
    spec_set_free(&set);
    return rc;
}
