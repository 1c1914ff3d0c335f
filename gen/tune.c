/* tune.c - the tuner: each kernel's search space, the constraint filter,
 * the search (verifying every candidate before timing it, keeping the
 * results in a tuning-database entry), and `specl tune` around it. */
#include <errno.h>
#include <fcntl.h>
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
#include "cli.h"
#include "emit.h"
#include "knobs.h"
#include "measure.h"
#include "spec.h"
#include "tune.h"
#include "tunedb.h"

/* What became of one configuration. SAME: valid, but it emits the code
 * of another config (a knob without effect for this spec); only that one
 * is timed. */
enum outcome { UNSEEN, INVALID, SAME, FAILED, WRONG, TIMED };

struct config_state {
    unsigned char outcome;
    double us;  /* as measured: a float would move a best across the
                   0.01 us the database keeps, away from its record */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the search space ------------------------------------------------- */

int tune_space_build(const struct op_def *op, struct tune_space *sp,
                     char *err, size_t errsize)
{
    memset(sp, 0, sizeof *sp);
    sp->n_config = 1;
    if (op->tune_space == NULL) {
        snprintf(err, errsize, "op %s declares no tuning space", op->name);
        return -1;
    }
    for (const struct tune_axis *ax = op->tune_space; ax->knob; ax++) {
        int k = op_knob_index(op, ax->knob);
        if (k < 0 || sp->n_axis == TUNE_MAX_AXES) {
            snprintf(err, errsize, "tuning space of %s: bad knob %s",
                     op->name, ax->knob);
            return -1;
        }
        const struct param_def *def = &op->knobs[k];
        int a = sp->n_axis++;
        sp->knob[a] = k;
        char copy[256], *save = NULL;
        snprintf(copy, sizeof copy, "%s", ax->values);
        for (char *t = strtok_r(copy, " ", &save); t;
             t = strtok_r(NULL, " ", &save)) {
            double v;
            if (knobs_parse_value(def, t, &v) < 0 ||
                sp->n_value[a] == TUNE_MAX_VALUES) {
                snprintf(err, errsize, "tuning space of %s: bad value %s "
                         "for %s", op->name, t, ax->knob);
                return -1;
            }
            sp->value[a][sp->n_value[a]++] = v;
        }
        sp->n_config *= sp->n_value[a];
        if (sp->n_config > TUNE_MAX_CONFIGS) {
            snprintf(err, errsize, "tuning space of %s is too large",
                     op->name);
            return -1;
        }
    }
    return 0;
}

static void decode(const struct tune_space *sp, long index, int *idx)
{
    for (int a = sp->n_axis - 1; a >= 0; a--) {
        idx[a] = (int)(index % sp->n_value[a]);
        index /= sp->n_value[a];
    }
}

static long encode(const struct tune_space *sp, const int *idx)
{
    long index = 0;
    for (int a = 0; a < sp->n_axis; a++) {
        index = index * sp->n_value[a] + idx[a];
    }
    return index;
}

int tune_space_config(const struct kernel_spec *ks,
                      const struct tune_space *sp, long index,
                      struct kernel_spec *out, char *why, size_t size)
{
    int idx[TUNE_MAX_AXES] = {0};
    struct diags quiet = {.out = NULL};
    *out = *ks;
    decode(sp, index, idx);
    for (int a = 0; a < sp->n_axis; a++) {
        out->knob[sp->knob[a]].num = sp->value[a][idx[a]];
        out->knob[sp->knob[a]].set = 1;
    }
    int valid = knobs_resolve(out, &quiet) == 0;
    if (why != NULL) {
        snprintf(why, size, "%s", quiet.first);
    }
    /* Kernels that only NVIDIA tensor cores build are no candidates on
     * other devices (ks->target says which the tuner runs on); wgmma's
     * only on compute capability 9.0. */
    if (valid && ks->target != TARGET_SM90A) {
        struct plan p;
        memset(&p, 0, sizeof p);
        out->op->plan(out, &p);
        if (p.needs == NEEDS_SM90A ||
            (p.needs == NEEDS_TENSOR_CORES && ks->target != TARGET_TENSOR)) {
            valid = 0;
            if (why != NULL) {
                snprintf(why, size, "needs NVIDIA %s, which the device "
                                    "lacks",
                         p.needs == NEEDS_SM90A
                             ? "compute capability 9.0 (wgmma)"
                             : "tensor cores (compute capability 8.0+)");
            }
        }
    }
    return valid;
}

long tune_space_home(const struct tune_space *sp,
                     const struct kernel_spec *ks)
{
    int idx[TUNE_MAX_AXES] = {0};
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

/* ---- the constraint filter -------------------------------------------- */

void tune_reason_kind(const char *why, char *out, size_t size)
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

static void count_reason(struct tune_reasons *r, const char *why)
{
    char kind[128];
    tune_reason_kind(why, kind, sizeof kind);
    int k = 0;
    while (k < r->n_kinds && strcmp(r->kind[k], kind) != 0) {
        k++;
    }
    if (k == r->n_kinds && r->n_kinds < TUNE_MAX_KINDS) {
        snprintf(r->kind[r->n_kinds++], sizeof r->kind[0], "%s", kind);
    }
    if (k < TUNE_MAX_KINDS) {
        r->count[k]++;
    }
}

void tune_filter_free(struct tune_filter *f)
{
    free(f->rep);
    free(f->code);
    free(f->cand);
    f->rep = NULL;
    f->code = NULL;
    f->cand = NULL;
}

/* The configs that validate emit code; merges those of equal code (an
 * open-addressing table of the hashes seen, at most half full), the home
 * config first. */
static int merge_same_code(const struct kernel_spec *ks, struct tune_filter *f,
                           char *err, size_t errsize)
{
    long n = f->sp.n_config, size = 1;
    while (size < 2 * f->n_valid) {
        size *= 2;
    }
    uint64_t *hash = malloc((size_t)size * sizeof *hash);
    long *slot = malloc((size_t)size * sizeof *slot);
    int rc = 0;
    if (hash == NULL || slot == NULL) {
        snprintf(err, errsize, "out of memory");
        rc = -1;
    }
    for (long t = 0; rc == 0 && t < size; t++) {
        slot[t] = -1;
    }
    for (long o = -1; rc == 0 && o < n; o++) {
        long i = o < 0 ? f->home : o; /* the defaults' config first */
        if (i < 0 || (o >= 0 && i == f->home) || f->rep[i] < 0) {
            continue;
        }
        struct kernel_spec cks;
        uint64_t h;
        tune_space_config(ks, &f->sp, i, &cks, NULL, 0);
        if (emit_code_hash(&cks, &h, err, errsize) < 0) {
            rc = -1;
            break;
        }
        f->code[i] = h;
        long t = (long)(h & (uint64_t)(size - 1));
        while (slot[t] >= 0 && hash[t] != h) {
            t = (t + 1) & (size - 1);
        }
        if (slot[t] < 0) {
            slot[t] = i;
            hash[t] = h;
        }
        f->rep[i] = slot[t];
    }
    free(hash);
    free(slot);
    return rc;
}

int tune_filter_run(const struct kernel_spec *ks, struct tune_filter *f,
                    char *err, size_t errsize)
{
    memset(f, 0, sizeof *f);
    if (tune_space_build(ks->op, &f->sp, err, errsize) < 0) {
        return -1;
    }
    long n = f->sp.n_config;
    f->home = tune_space_home(&f->sp, ks);
    f->rep = malloc((size_t)n * sizeof *f->rep);
    f->code = calloc((size_t)n, sizeof *f->code);
    f->cand = malloc((size_t)n * sizeof *f->cand);
    if (f->rep == NULL || f->code == NULL || f->cand == NULL) {
        tune_filter_free(f);
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    for (long i = 0; i < n; i++) {
        struct kernel_spec cks;
        char why[DIAG_MESSAGE_MAX];
        if (tune_space_config(ks, &f->sp, i, &cks, why, sizeof why)) {
            f->rep[i] = i;
            f->n_valid++;
        } else {
            f->rep[i] = -1;
            count_reason(&f->why, why);
        }
    }
    if (merge_same_code(ks, f, err, errsize) < 0) {
        tune_filter_free(f);
        return -1;
    }
    for (long i = 0; i < n; i++) {
        if (f->rep[i] == i) {
            f->cand[f->n_cand++] = i;
        }
    }
    return 0;
}

long tune_candidates(const struct kernel_spec *ks, char **texts,
                     long *n_valid)
{
    struct tune_filter f;
    char err[256];
    *texts = NULL;
    if (tune_filter_run(ks, &f, err, sizeof err) < 0) {
        return -1;
    }
    long n = f.n_cand;
    *texts = malloc((size_t)(n ? n : 1) * TUNE_TEXT);
    for (long i = 0; *texts != NULL && i < n; i++) {
        struct kernel_spec cks;
        tune_space_config(ks, &f.sp, f.cand[i], &cks, NULL, 0);
        knobs_text(&cks, *texts + i * TUNE_TEXT, TUNE_TEXT);
    }
    *n_valid = f.n_valid;
    tune_filter_free(&f);
    return *texts != NULL ? n : -1;
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
        s->o->on_progress(s->r, now_s() - s->t0, final, s->o->ctx);
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
        int idx[TUNE_MAX_AXES] = {0};
        long moves[4 * TUNE_MAX_AXES];
        int n_moves = 0;
        decode(s->sp, cur, idx);
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
                    long n = encode(s->sp, nidx);
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
    const struct tune_space *sp = s->sp;
    const struct op_def *op = s->ks->op;
    int ax = 0, ay = sp->n_axis > 1 ? 1 : 0;
    int nx = sp->n_value[ax], ny = sp->n_axis > 1 ? sp->n_value[ay] : 1;
    double cell[TUNE_MAX_VALUES][TUNE_MAX_VALUES];
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
        int idx[TUNE_MAX_AXES] = {0};
        decode(sp, i, idx);
        int x = idx[ax], y = sp->n_axis > 1 ? idx[ay] : 0;
        double us = s->state[c].us;
        cell[x][y] = us < cell[x][y] ? us : cell[x][y];
        lo = us < lo ? us : lo;
        hi = us > hi ? us : hi;
    }
    int bx = -1, by = -1;
    if (s->r->best >= 0) {
        int idx[TUNE_MAX_AXES] = {0};
        decode(sp, s->r->best, idx);
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
    if (s->r->best >= 0) {
        buf_printf(&b, "<text x=\"10\" y=\"%d\">chosen: %s (%.1f us)</text>\n",
                   top + ny * ch + 56, s->r->best_knobs, s->r->best_us);
    }
    buf_puts(&b, "</svg>\n");
    int rc = write_file_atomic(path, buf_str(&b), b.len, err, errsize);
    buf_free(&b);
    return rc;
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

int tune_kernel(const struct rt *rt, struct naive *naive,
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

    s.t0 = now_s();
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
    /* Keep the database's best if an earlier run found a faster one, or
     * one as fast (a resume then keeps it, ties among records included),
     * or if this run timed nothing new (the earlier decision stands); the
     * defaults kept back to back replace it. An earlier best counts only
     * with its record's time, and only if that record measured the code
     * its knobs emit now. */
    double kept_us = -1;
    snprintf(e->best_seen, sizeof e->best_seen, "%s", e->best);
    if (e->best[0] && record_of_now(&s, &f, e->best)) {
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
        e->best_gbs = mc.bytes / (kept_us * 1e3);
        e->best_gflops = mc.flops / (kept_us * 1e3);
        e->best_fresh = 1;
    }
    if (r->default_us > 0) {
        e->default_us = r->default_us;
        e->default_fresh = 1;
    }
    snprintf(e->version, sizeof e->version, "%s", SPECL_VERSION);
    int failed = r->best < 0;
    if (o->plot != NULL && r->evaluated > 0 &&
        write_plot(&s, o->plot, rt->name, r->error, sizeof r->error) < 0) {
        failed = 1;
    }
    free(s.state);
    tune_filter_free(&f);
    mcase_free(&mc);
    return failed;
}

/* ---- specl tune ------------------------------------------------------- */

/* The signal that asked `specl tune` to stop (SIGINT, SIGTERM), or 0. */
static volatile sig_atomic_t stop_signal = 0;

/* Takes PATH.lock for writing, waiting for another run that holds it; the
 * descriptor, or -1 with the reason in ERR. A lock file that its holder
 * removed in the meantime is taken again. */
static int lock_db(const char *path, char *err, size_t errsize)
{
    char lock[600];
    snprintf(lock, sizeof lock, "%s.lock", path);
    for (;;) {
        int fd = open(lock, O_RDWR | O_CREAT, 0666);
        if (fd < 0) {
            snprintf(err, errsize, "%s: cannot create: %s", lock,
                     strerror(errno));
            return -1;
        }
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        int rc;
        while ((rc = fcntl(fd, F_SETLKW, &fl)) < 0 && errno == EINTR) {
        }
        struct stat held, now;
        if (rc == 0 && fstat(fd, &held) == 0 && stat(lock, &now) == 0 &&
            held.st_ino == now.st_ino && held.st_dev == now.st_dev) {
            return fd;
        }
        if (rc < 0) {
            snprintf(err, errsize, "%s: cannot lock: %s", lock,
                     strerror(errno));
            close(fd);
            return -1;
        }
        close(fd);
    }
}

static void unlock_db(const char *path, int fd)
{
    char lock[600];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    close(fd);
}

/* Saves DB into PATH merged with what PATH holds now (another run's
 * entries and records kept; of two bests the faster), under PATH.lock, so
 * that runs writing one database at once lose nothing. */
static int save_merged(const struct tunedb *db, const char *path, char *err,
                       size_t errsize)
{
    int fd = lock_db(path, err, errsize);
    if (fd < 0) {
        return -1;
    }
    struct tunedb disk;
    struct diags d = {.out = stderr};
    tunedb_init(&disk);
    int rc = tunedb_load(&disk, path, 1, &d) == 0 ? 0 : -1;
    if (rc < 0) {
        snprintf(err, errsize, "%s changed into a file that does not load; "
                 "not overwritten", path);
    } else {
        tunedb_merge(&disk, db);
        rc = tunedb_save(&disk, path, err, errsize);
    }
    tunedb_free(&disk);
    unlock_db(path, fd);
    return rc;
}

/* Whether the database at PATH can be written (its directory, since it is
 * replaced through a temporary file), before any measuring. */
static int db_writable(const char *path, char *err, size_t errsize)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) {
        snprintf(dir, sizeof dir, ".");
    } else if (slash == dir) {
        dir[1] = '\0';
    } else {
        *slash = '\0';
    }
    if (access(dir, W_OK) != 0) {
        snprintf(err, errsize, "cannot write the tuning database %s: %s: %s",
                 path, dir, strerror(errno));
        return 0;
    }
    return 1;
}

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
 * (5%) however large the database grows. Measured on PoCL (2 cores): a
 * save of tuning/'s H100 database (310 records) takes 5 ms, of one ten
 * times its size 30 ms, while a config of tests/tune/small.yaml takes 0.5
 * to 4 s to build, verify and time: runs save after every config. */
#define SAVE_SPACING 20.0

static void save_now(struct saver *sv)
{
    char err[2048];
    double t0 = now_s();
    if (save_merged(sv->db, sv->path, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s\n", err);
        sv->failed = 1;
        return;
    }
    sv->last_end = now_s();
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
        now_s() - sv->last_end >= SAVE_SPACING * sv->last_cost) {
        save_now(sv);
    }
}

/* The first line of a kernel: the space, and why configs were rejected. */
static void print_start(const struct tune_result *r, void *ctx)
{
    const struct report *rep = ctx;
    const struct kernel_spec *ks = rep->ks;
    char shape[TUNE_TEXT];
    tune_shape_text(ks, shape, sizeof shape);
    printf("%s: %s %s, rows %ld: %ld configs, %ld valid, %ld distinct",
           ks->name, ks->op->name, shape, r->rows, r->n_configs, r->n_valid,
           r->n_cand);
    for (int k = 0; k < r->why.n_kinds; k++) {
        printf("%s%ld %s", k ? "; " : " (invalid: ", r->why.count[k],
               r->why.kind[k]);
    }
    printf("%s\n", r->why.n_kinds ? ")" : "");
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
        fprintf(stderr, "  %s: %ld/%ld evaluated, best %s, %.0f s elapsed, "
                "~%.0f s left\n",
                rep->ks->name, r->evaluated, r->max_evals, best, el, left);
        rep->last_report = el;
    }
    fflush(stderr);
}

/* Tunes KS with O and prints what it did; returns 1 when it failed. */
static int tune_and_print(const struct tune_options *o, const struct rt *rt,
                          struct naive *naive, struct tunedb *db,
                          const struct kernel_spec *ks, struct saver *saver)
{
    struct tune_options ko = *o;
    struct tune_result r;
    struct report rep = {ks, o->budget_s, isatty(2), 0, saver};
    ko.on_start = print_start;
    ko.on_progress = print_progress;
    ko.on_record = save_as_measured;
    ko.ctx = &rep;
    int failed = tune_kernel(rt, naive, ks, &ko, db, &r);
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
    if (r.confirmed) {
        printf("  back to back, %d rounds: defaults %.1f us (%.1f-%.1f), "
               "search's best %.1f us (%.1f-%.1f)%s\n",
               TUNE_CONFIRM_ROUNDS, r.confirm_default_us, r.default_spread[0],
               r.default_spread[1], r.confirm_best_us, r.best_spread[0],
               r.best_spread[1],
               r.kept_defaults ? ": not faster, the defaults are kept" : "");
    }
    if (r.kept_defaults) {
        printf("  best: the op defaults (%.1f us in the search): %s\n",
               r.best_us, r.best_knobs);
    } else if (r.best >= 0) {
        printf("  best %.1f us (%.1f GB/s, %.1f GFLOP/s): %s\n", r.best_us,
               r.best_gbs, r.best_gflops, r.best_knobs);
        if (r.best_is_default) {
            /* one config timed twice: their ratio is noise, no gain */
            printf("  the best is the op defaults (%.1f us when timed "
                   "before the search)\n", r.default_us);
        } else if (r.confirmed) {
            printf("  tuned is %.2fx the defaults, back to back\n",
                   r.confirm_default_us / r.confirm_best_us);
        } else if (r.default_us > 0) {
            printf("  defaults %.1f us: tuned is %.2fx\n", r.default_us,
                   r.default_us / r.best_us);
        }
    } else {
        printf("  no config ran correctly\n");
    }
    if (r.error[0]) {
        fprintf(stderr, "specl: tune: %s\n", r.error);
    } else if (o->plot != NULL && r.evaluated > 0) {
        printf("  plot: %s\n", o->plot);
    }
    return failed;
}

static const char tune_usage[] =
    "usage: specl tune [OPTION]... SPEC.yaml...\n"
    "\n"
    "Searches each kernel's knob space on one device: builds, verifies\n"
    "against float64 and times each candidate, and keeps every\n"
    "measurement in a tuning database (saved as it goes, under a lock;\n"
    "a second run resumes). A best that is not the op defaults is timed\n"
    "against them again, back to back, and stored only if it stays\n"
    "faster. Ctrl-C or SIGTERM stops after the config being measured,\n"
    "saves, and exits with 130 or 143. A spec file '-' is standard\n"
    "input.\n"
    "\n"
    "Options:\n"
    "      --device N|P:D     the device ('specl devices'; default:\n"
    "                         $SPECL_DEVICE, else the first)\n"
    "      --kernel NAME      only that kernel\n"
    "      --strategy S       exhaustive, random, or local (default: the op\n"
    "                         defaults and random points, then hill\n"
    "                         climbing one knob step at a time)\n"
    "      --max-evals N      candidates to evaluate (default: all for\n"
    "                         exhaustive, else a quarter)\n"
    "      --budget SECONDS   stop searching a kernel after that long\n"
    "      --rows M           rows measured (default: the op's)\n"
    "      --reps N           timed runs per config, 1 to 1000 (default 20)\n"
    "      --seed N           of the inputs and the search order (default 1)\n"
    "      --db FILE          the database (default:\n"
    "                         tuning/DEVICE-SLUG.yaml)\n"
    "      --plot FILE.svg    a heat map of each kernel's search over its\n"
    "                         first two knobs: FILE.svg when one kernel is\n"
    "                         tuned, else FILE-NAME.svg for each kernel NAME\n"
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
        case OPT_ROWS:
            bad = cli_long(c, 1, TUNE_MAX_ROWS, &o->rows);
            break;
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

/* The plot of kernel NAME: PLOT itself when one kernel is tuned, else
 * PLOT with "-NAME" before its extension (plot.svg: plot-NAME.svg). */
static void plot_path(const char *plot, const char *name, int several,
                      char *out, size_t size)
{
    if (!several) {
        snprintf(out, size, "%s", plot);
        return;
    }
    const char *dot = strrchr(plot, '.');
    const char *slash = strrchr(plot, '/');
    if (dot == NULL || (slash != NULL && dot < slash) || dot == plot ||
        dot[-1] == '/') {
        dot = plot + strlen(plot); /* no extension: append */
    }
    snprintf(out, size, "%.*s-%s%s", (int)(dot - plot), plot, name, dot);
}

/* `specl tune ARGS...` (ARGV[0]: "tune"): the arguments, the specs, the
 * kernel and the database are checked before the device is opened. */
int specl_tune_main(int argc, char **argv)
{
    struct tune_options o;
    struct tune_args args = {NULL, NULL, NULL, NULL};
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
        if (!db_writable(db_path, err, sizeof err)) {
            fprintf(stderr, "specl: error: %s\n", err);
            rc = CLI_EXIT_INVALID;
        } else if (tunedb_load(&db, db_path, 1, &d) != 0) {
            rc = CLI_EXIT_INVALID;
        }
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
        if (!db_writable(db_path, err, sizeof err)) {
            fprintf(stderr, "specl: error: %s\n", err);
            rc = CLI_EXIT_INVALID;
        } else if (tunedb_load(&db, db_path, 1, &d) != 0) {
            rc = CLI_EXIT_INVALID;
        }
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
    struct saver saver = {&db, db_path, now_s(), 0, 0, 0, 0};
    printf("device: %s (%s, driver %s); database %s\n", rt.name,
           rt.platform_name, rt.driver, db_path);
    struct naive naive;
    naive_init(&naive);
    int matched = 0;
    int several = args.kernel == NULL && set.n_kernel > 1;
    char plot[1024];
    for (int k = 0; k < set.n_kernel && !stop_signal; k++) {
        if (args.kernel != NULL &&
            strcmp(args.kernel, set.kernel[k].name) != 0) {
            continue;
        }
        matched++;
        if (args.plot != NULL) {
            plot_path(args.plot, set.kernel[k].name, several, plot,
                      sizeof plot);
        }
        o.plot = args.plot != NULL ? plot : NULL;
        rc |= tune_and_print(&o, &rt, &naive, &db, &set.kernel[k], &saver);
        /* And after every kernel: its best, its default time. */
        if (save_merged(&db, db_path, err, sizeof err) < 0) {
            fprintf(stderr, "specl: error: %s\n", err);
            rc = 1;
        }
        rc |= saver.failed;
        saver.failed = 0;
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
