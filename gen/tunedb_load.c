/* tunedb_load.c - a tuning database read from YAML (libyaml's loader):
 * every entry checked, every problem reported at file:line:col, and a
 * file with any left out whole. */
#include "tunedb.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "buf.h"
#include "tunedb_internal.h"

struct loader {
    yaml_document_t *doc;
    const char *path;
    struct diags *d;
    int *entry_line;    /* per entry loaded, its line: for duplicates */
    int cap_entry_line;
};

static struct mark node_mark(const yaml_node_t *n)
{
    struct mark m = {(int)n->start_mark.line + 1,
                     (int)n->start_mark.column + 1};
    return m;
}

static const char *scalar(struct loader *l, yaml_node_t *n, const char *key)
{
    if (n->type != YAML_SCALAR_NODE) {
        diag_error(l->d, l->path, node_mark(n), "%s must be a scalar", key);
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

/* Whether N is a plain scalar with nothing in it: what a bare `key:`
 * reads as. */
static int is_null(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0 &&
           n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* Reports every key of mapping M that is no scalar or repeats an earlier
 * one (in the spec reader's words). */
static void check_keys(struct loader *l, yaml_node_t *m)
{
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
         p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
        if (k->type != YAML_SCALAR_NODE) {
            diag_error(l->d, l->path, node_mark(k),
                       "expected a key (a plain word)");
            continue;
        }
        for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k0 = yaml_document_get_node(l->doc, q->key);
            if (k0->type == YAML_SCALAR_NODE &&
                k0->data.scalar.length == k->data.scalar.length &&
                memcmp(k0->data.scalar.value, k->data.scalar.value,
                       k->data.scalar.length) == 0) {
                diag_error(l->d, l->path, node_mark(k),
                           "duplicate key '%s' (first given at line %d)",
                           (const char *)k->data.scalar.value,
                           node_mark(k0).line);
                break;
            }
        }
    }
}

/* Looks KEY up in NAMES (NULL-ended): its index, or -1. */
static int key_index(const char *const *names, const char *key)
{
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(names[i], key) == 0) {
            return i;
        }
    }
    return -1;
}

/* Gathers the values of mapping M by key into NODE (as NAMES, the first
 * of repeated keys: check_keys reports the others) and reports keys not
 * in NAMES as unknown in WHAT. */
static void gather(struct loader *l, yaml_node_t *m,
                   const char *const *names, yaml_node_t **node,
                   const char *what)
{
    check_keys(l, m);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
         p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
        if (k->type != YAML_SCALAR_NODE) {
            continue;
        }
        const char *key = (const char *)k->data.scalar.value;
        int i = key_index(names, key);
        if (i < 0) {
            diag_error(l->d, l->path, node_mark(k), "unknown key '%s' in %s",
                       key, what);
        } else if (node[i] == NULL) {
            node[i] = yaml_document_get_node(l->doc, p->value);
        }
    }
}

static void copy_text(struct loader *l, yaml_node_t *v, const char *key,
                      char *dst, size_t size)
{
    const char *s = scalar(l, v, key);
    if (s != NULL) {
        /* A "\0" escape would cut the text short, silently. */
        if (strlen(s) != v->data.scalar.length) {
            diag_error(l->d, l->path, node_mark(v),
                       "%s must not hold a NUL character (\\0)", key);
            return;
        }
        if (strlen(s) >= size) {
            diag_error(l->d, l->path, node_mark(v), "%s is too long", key);
            return;
        }
        snprintf(dst, size, "%s", s);
    }
}

/* V's number into *OUT: decimal digits with sign, point and exponent
 * (not the nan, inf or hexadecimal that strtod takes too), finite.
 * Returns 0, or -1 when reported. */
static int number(struct loader *l, yaml_node_t *v, const char *key,
                  double *out)
{
    const char *s = scalar(l, v, key);
    if (s == NULL) {
        return -1;
    }
    char *end = NULL;
    int decimal = s[0] != '\0' && s[strspn(s, "0123456789+-.eE")] == '\0';
    double f = decimal ? strtod(s, &end) : 0;
    if (!decimal || *end != '\0') {
        diag_error(l->d, l->path, node_mark(v),
                   "%s must be a number (got '%.40s')", key, s);
        return -1;
    }
    if (!isfinite(f)) {
        diag_error(l->d, l->path, node_mark(v),
                   "%s is out of range (got '%.40s')", key, s);
        return -1;
    }
    *out = f;
    return 0;
}

/* A time, rate or speed: a number >= 0. */
static void non_negative(struct loader *l, yaml_node_t *v, const char *key,
                         double *out)
{
    double f;
    if (number(l, v, key, &f) == 0) {
        if (f < 0) {
            diag_error(l->d, l->path, node_mark(v),
                       "%s must be >= 0 (got '%s')", key,
                       (const char *)v->data.scalar.value);
        } else {
            *out = f;
        }
    }
}

/* V's integer in [LO, HI] into *OUT (decimal digits and a sign). */
static void integer(struct loader *l, yaml_node_t *v, const char *key,
                    long lo, long hi, long *out)
{
    const char *s = scalar(l, v, key);
    if (s == NULL) {
        return;
    }
    char *end = NULL;
    errno = 0;
    /* strtoll would skip leading blanks, which a quoted scalar can have */
    long long n = (s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '+'
                      ? strtoll(s, &end, 10)
                      : 0;
    if (end == NULL || end == s || *end != '\0') {
        diag_error(l->d, l->path, node_mark(v),
                   "%s must be an integer (got '%.40s')", key, s);
    } else if (errno == ERANGE || n < lo || n > hi) {
        /* On ERANGE n is LLONG_MIN or LLONG_MAX: its sign still says
         * which bound was crossed. */
        diag_error(l->d, l->path, node_mark(v), n < lo
                   ? "%s must be >= %ld (got '%.40s')"
                   : "%s must be <= %ld (got '%.40s')",
                   key, n < lo ? lo : hi, s);
    } else {
        *out = (long)n;
    }
}

enum record_key { R_KNOBS, R_US, R_STATUS, R_CODE, N_RECORD_KEYS };
static const char *const record_keys[] = {"knobs", "us", "status", "code",
                                          NULL};

/* Loads the tried configs of SEQ into E; OP (NULL when unknown: already
 * reported) checks their knobs. */
static void load_tried(struct loader *l, struct tune_entry *e,
                       const struct op_def *op, yaml_node_t *seq)
{
    if (is_null(seq)) {
        return; /* `tried:` with nothing: none (as older versions wrote) */
    }
    if (seq->type != YAML_SEQUENCE_NODE) {
        diag_error(l->d, l->path, node_mark(seq), "tried must be a sequence");
        return;
    }
    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         it < seq->data.sequence.items.top; it++) {
        yaml_node_t *m = yaml_document_get_node(l->doc, *it);
        yaml_node_t *node[N_RECORD_KEYS] = {NULL};
        struct tune_record r;
        memset(&r, 0, sizeof r);
        r.us = -1;
        int before = l->d->count;
        char why[DIAG_MESSAGE_MAX];
        if (m->type != YAML_MAPPING_NODE) {
            diag_error(l->d, l->path, node_mark(m),
                       "a tried config must be a mapping");
            continue;
        }
        gather(l, m, record_keys, node, "a tried config");
        for (int k = R_KNOBS; k <= R_US; k++) {
            if (node[k] == NULL) {
                diag_error(l->d, l->path, node_mark(m),
                           "a tried config needs '%s'", record_keys[k]);
            }
        }
        if (node[R_KNOBS] != NULL) {
            copy_text(l, node[R_KNOBS], "knobs", r.knobs, sizeof r.knobs);
        }
        if (node[R_STATUS] != NULL) {
            copy_text(l, node[R_STATUS], "status", r.status, sizeof r.status);
        }
        if (node[R_CODE] != NULL) {
            int had = l->d->count;
            char code[TUNE_TEXT] = "";
            copy_text(l, node[R_CODE], "code", code, sizeof code);
            if (l->d->count == had && !tunedb_code_hash_text(code)) {
                diag_error(l->d, l->path, node_mark(node[R_CODE]),
                           "code must be 16 hexadecimal digits, 0-9 and "
                           "a-f (got '%s')", code);
            } else {
                snprintf(r.code, sizeof r.code, "%s", code);
            }
        }
        /* Negative: a config that did not run, which the tuner writes as
         * -1; any other negative time is no measurement. */
        if (node[R_US] != NULL && number(l, node[R_US], "us", &r.us) == 0 &&
            r.us < 0 && r.us != -1) {
            diag_error(l->d, l->path, node_mark(node[R_US]),
                       "us must be >= 0, or -1 for a config that did not "
                       "run (got '%s')",
                       (const char *)node[R_US]->data.scalar.value);
        }
        if (l->d->count == before && node[R_STATUS] != NULL &&
            !tunedb_status_fits(r.status, r.us, why, sizeof why)) {
            diag_error(l->d, l->path, node_mark(node[R_STATUS]), "%s", why);
        }
        if (l->d->count != before) {
            continue;
        }
        const struct tune_record *twice = tune_entry_tried(e, r.knobs);
        if (r.knobs[0] == '\0') {
            diag_error(l->d, l->path, node_mark(node[R_KNOBS]),
                       "a tried config's knobs must not be empty");
        } else if (op != NULL &&
                   !tunedb_knobs_fit(op, r.knobs, why, sizeof why)) {
            diag_error(l->d, l->path, node_mark(node[R_KNOBS]),
                       "knobs do not fit %s: %s", op->name, why);
        } else if (twice != NULL) {
            diag_error(l->d, l->path, node_mark(node[R_KNOBS]),
                       "tried config \"%s\" given twice", r.knobs);
        } else {
            tune_entry_copy_record(e, &r);
        }
    }
}

enum entry_key {
    E_DEVICE, E_DRIVER, E_OP, E_DTYPE, E_SHAPE, E_ROWS, /* required */
    E_TARGET, E_BEST, E_TIME_US, E_GBS, E_GFLOPS, E_DEFAULT_US, E_SPECL,
    E_TRIED,
    /* optional, newer: how the times were measured, what was searched */
    E_TIME_P10, E_TIME_P90, E_DEFAULT_P10, E_DEFAULT_P90, E_RETIMED_REPS,
    E_SEARCHED, E_CANDIDATES, E_COMPLETE, E_STOPPED,
    E_UPTO_ROWS, E_UPTO_NEXT, E_UPTO_WITH, E_NEXT_FROM, N_ENTRY_KEYS
};
static const char *const entry_keys[] = {
    "device", "driver", "op", "dtype", "shape", "rows", "target", "best",
    "time_us", "gbs", "gflops", "default_us", "specl", "tried",
    "time_p10_us", "time_p90_us", "default_p10_us", "default_p90_us",
    "retimed_reps", "searched", "candidates", "complete", "stopped",
    "upto_rows", "upto_next", "upto_with", "next_from", NULL};

/* The tuner's best is the knobs of the fastest of the entry's tried
 * configs, every knob of the op as it had them: one that is none of
 * them (a hand edit, a part of the knobs) would be taken as tuned. An
 * entry without tried configs (as older versions wrote) cannot tell.
 * BEFORE: the error count when E began (a bad tried config or best has
 * been reported already). */
static void check_best_tried(struct loader *l, const struct tune_entry *e,
                             yaml_node_t *best, int before)
{
    if (l->d->count == before && e->best[0] != '\0' && e->n_tried > 0 &&
        tune_entry_tried(e, e->best) == NULL) {
        diag_error(l->d, l->path, node_mark(best),
                   "best \"%s\" is none of the entry's tried configs (the "
                   "tuner's best is one of them, every knob of the op)",
                   e->best);
    }
}

/* Reads the texts and numbers of entry E from its values NODE (by
 * enum entry_key; NULL: not given). */
static void load_entry_values(struct loader *l, struct tune_entry *e,
                              yaml_node_t *const *node)
{
    const struct {
        enum entry_key key;
        char *dst;
        size_t size;
    } texts[] = {
        {E_DEVICE, e->device, sizeof e->device},
        {E_DRIVER, e->driver, sizeof e->driver},
        {E_OP, e->op, sizeof e->op},
        {E_DTYPE, e->dtype, sizeof e->dtype},
        {E_TARGET, e->target, sizeof e->target},
        {E_SHAPE, e->shape, sizeof e->shape},
        {E_BEST, e->best, sizeof e->best},
        {E_SPECL, e->version, sizeof e->version},
        {E_STOPPED, e->stopped, sizeof e->stopped},
        {E_UPTO_WITH, e->upto_with, sizeof e->upto_with},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (node[texts[i].key] != NULL) {
            copy_text(l, node[texts[i].key], entry_keys[texts[i].key],
                      texts[i].dst, texts[i].size);
        }
    }
    long reps = 0;
    const struct {
        enum entry_key key;
        long lo, hi;
        long *dst;
    } integers[] = {
        {E_ROWS, 1, TUNE_MAX_ROWS, &e->rows},
        {E_RETIMED_REPS, 1, TUNEDB_MAX_REPS, &reps},
        {E_SEARCHED, 0, TUNEDB_MAX_CONFIGS, &e->searched},
        {E_CANDIDATES, 1, TUNEDB_MAX_CONFIGS, &e->candidates},
        {E_UPTO_ROWS, 1, TUNE_MAX_ROWS, &e->upto_rows},
        {E_UPTO_NEXT, 1, TUNE_MAX_ROWS, &e->upto_next},
        {E_NEXT_FROM, 1, TUNE_MAX_ROWS, &e->next_from},
    };
    for (size_t i = 0; i < sizeof integers / sizeof integers[0]; i++) {
        if (node[integers[i].key] != NULL) {
            integer(l, node[integers[i].key], entry_keys[integers[i].key],
                    integers[i].lo, integers[i].hi, integers[i].dst);
        }
    }
    e->retimed_reps = (int)reps;
    const struct {
        enum entry_key key;
        double *dst;
    } numbers[] = {
        {E_TIME_US, &e->best_us},
        {E_GBS, &e->best_gbs},
        {E_GFLOPS, &e->best_gflops},
        {E_DEFAULT_US, &e->default_us},
        {E_TIME_P10, &e->best_p10_us},
        {E_TIME_P90, &e->best_p90_us},
        {E_DEFAULT_P10, &e->default_p10_us},
        {E_DEFAULT_P90, &e->default_p90_us},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        if (node[numbers[i].key] != NULL) {
            non_negative(l, node[numbers[i].key], entry_keys[numbers[i].key],
                         numbers[i].dst);
        }
    }
}

/* Checks what E's texts name: its op, dtype and target, and its shape and
 * best as the op's. Returns its op, or NULL when it names none (reported
 * unless E gave no op). */
static const struct op_def *check_entry_op(struct loader *l,
                                           const struct tune_entry *e,
                                           yaml_node_t *const *node)
{
    char why[DIAG_MESSAGE_MAX], ops[256];
    const struct op_def *op = NULL;
    if (node[E_OP] != NULL && node[E_OP]->type == YAML_SCALAR_NODE) {
        op = op_find(e->op);
        if (op == NULL) {
            tunedb_known_ops(ops, sizeof ops);
            diag_error(l->d, l->path, node_mark(node[E_OP]),
                       "unknown op '%s' (known: %s)", e->op, ops);
        }
    }
    /* A text too long for its field has been reported already. */
    enum dtype dtype = DTYPE_F32;
    int dtype_known = tunedb_dtype_from_text(e->dtype, &dtype);
    if (node[E_DTYPE] != NULL && node[E_DTYPE]->type == YAML_SCALAR_NODE &&
        node[E_DTYPE]->data.scalar.length < sizeof e->dtype && !dtype_known) {
        diag_error(l->d, l->path, node_mark(node[E_DTYPE]),
                   "dtype must be one of f32, f16, bf16 (got '%s')", e->dtype);
    }
    enum target target = TARGET_GPU;
    int target_known = e->target[0] == '\0' ||
                       target_from_name(e->target, &target) == 0;
    if (node[E_TARGET] != NULL && node[E_TARGET]->type == YAML_SCALAR_NODE &&
        node[E_TARGET]->data.scalar.length < sizeof e->target &&
        !target_known) {
        diag_error(l->d, l->path, node_mark(node[E_TARGET]),
                   "target must be one of gpu, cpu, tensor, sm90a (got '%s')",
                   e->target);
    }
    if (op != NULL && dtype_known && target_known && node[E_SHAPE] != NULL &&
        node[E_SHAPE]->type == YAML_SCALAR_NODE &&
        !tunedb_shape_fits(op, dtype, target, e->shape, why, sizeof why)) {
        diag_error(l->d, l->path, node_mark(node[E_SHAPE]),
                   "shape of %s: %s", op->name, why);
    }
    if (op != NULL && e->best[0] != '\0' &&
        !tunedb_knobs_fit(op, e->best, why, sizeof why)) {
        diag_error(l->d, l->path, node_mark(node[E_BEST]),
                   "best does not fit %s: %s", op->name, why);
    }
    return op;
}

/* The spread of a re-timed median: P10 and P90 given together, and
 * around it (MEDIAN_KEY's value). */
static void check_spread(struct loader *l, yaml_node_t *m,
                         yaml_node_t *const *node, enum entry_key p10,
                         enum entry_key p90, double lo, double mid,
                         double hi, const char *median_key)
{
    if ((node[p10] == NULL) != (node[p90] == NULL)) {
        enum entry_key given = node[p10] != NULL ? p10 : p90;
        diag_error(l->d, l->path, node_mark(node[given]),
                   "%s needs %s too", entry_keys[given],
                   entry_keys[given == p10 ? p90 : p10]);
    } else if (node[p10] != NULL && !(lo <= mid && mid <= hi)) {
        diag_error(l->d, l->path, node_mark(node[p10] ? node[p10] : m),
                   "%s %.2f and %s %.2f must lie either side of %s %.2f",
                   entry_keys[p10], lo, entry_keys[p90], hi, median_key,
                   mid);
    }
}

/* A ladder's crossover: its four keys together, the rows in order (the
 * entry's, its best's last, the next best's first, the next row
 * count's), the next one's best a config. */
static void check_crossover(struct loader *l, const struct tune_entry *e,
                            yaml_node_t *m, yaml_node_t *const *node)
{
    int given = (node[E_UPTO_ROWS] != NULL) + (node[E_UPTO_NEXT] != NULL) +
                (node[E_UPTO_WITH] != NULL) + (node[E_NEXT_FROM] != NULL);
    char why[DIAG_MESSAGE_MAX];
    const struct op_def *op = op_find(e->op);
    if (given != 0 && given != 4) {
        diag_error(l->d, l->path, node_mark(m), "upto_rows, next_from, "
                   "upto_next and upto_with go together (give all four or "
                   "none)");
    } else if (given == 4 && !(e->rows <= e->upto_rows &&
                               e->upto_rows < e->next_from &&
                               e->next_from <= e->upto_next)) {
        diag_error(l->d, l->path, node_mark(node[E_UPTO_ROWS]),
                   "rows %ld, upto_rows %ld, next_from %ld and upto_next "
                   "%ld must be in order: rows <= upto_rows < next_from "
                   "<= upto_next",
                   e->rows, e->upto_rows, e->next_from, e->upto_next);
    } else if (given == 4 && op != NULL &&
               !tunedb_knobs_fit(op, e->upto_with, why, sizeof why)) {
        diag_error(l->d, l->path, node_mark(node[E_UPTO_WITH]),
                   "upto_with does not fit %s: %s", op->name, why);
    }
}

/* The keys that say how E's times were measured and how much of the
 * space its search covered agree with each other (E's values read, NODE
 * as load_entry's; M the entry). Checked only when the values read
 * without error (BEFORE: the error count when E began). */
static void check_measured(struct loader *l, const struct tune_entry *e,
                           yaml_node_t *m, yaml_node_t *const *node,
                           int before)
{
    char why[DIAG_MESSAGE_MAX];
    if (l->d->count != before) {
        return;
    }
    check_spread(l, m, node, E_TIME_P10, E_TIME_P90, e->best_p10_us,
                 e->best_us, e->best_p90_us, "time_us");
    check_spread(l, m, node, E_DEFAULT_P10, E_DEFAULT_P90,
                 e->default_p10_us, e->default_us, e->default_p90_us,
                 "default_us");
    if (node[E_TIME_P10] != NULL && node[E_RETIMED_REPS] == NULL) {
        diag_error(l->d, l->path, node_mark(node[E_TIME_P10]),
                   "time_p10_us needs retimed_reps (the runs it is of)");
    }
    int search_keys = (node[E_SEARCHED] != NULL) +
                      (node[E_CANDIDATES] != NULL) +
                      (node[E_COMPLETE] != NULL);
    if (search_keys != 0 && search_keys != 3) {
        diag_error(l->d, l->path, node_mark(m), "searched, candidates and "
                   "complete go together (give all three or none)");
        return;
    }
    if (node[E_STOPPED] != NULL && search_keys == 0) {
        diag_error(l->d, l->path, node_mark(node[E_STOPPED]),
                   "stopped needs searched, candidates and complete");
        return;
    }
    check_crossover(l, e, m, node);
    if (search_keys == 0) {
        return;
    }
    const char *complete = scalar(l, node[E_COMPLETE], "complete");
    if (complete == NULL) {
        return;
    }
    if (!tunedb_search_fits(e->searched, e->candidates, complete,
                            e->stopped, why, sizeof why)) {
        diag_error(l->d, l->path, node_mark(node[E_COMPLETE]), "%s", why);
    }
}

/* Adds E, an entry without errors written at M, to DB unless an earlier
 * entry has its key: entries are found by their key, so one that repeats
 * an earlier entry's would be merged into it or shadowed, silently. */
static void add_entry(struct loader *l, struct tunedb *db,
                      const struct tune_entry *e, yaml_node_t *m)
{
    struct tune_entry *twice = tunedb_find(db, e->device, e->driver, e->op,
                                           e->dtype, e->shape, e->rows);
    if (twice != NULL) {
        diag_error(l->d, l->path, node_mark(m), "duplicate entry: the "
                   "device, driver, op, dtype, shape and rows of the "
                   "entry at line %d",
                   l->entry_line[twice - db->entry]);
        return;
    }
    tunedb_add(db, e);
    l->entry_line = tunedb_grow(l->entry_line, &l->cap_entry_line, db->n,
                                sizeof *l->entry_line);
    l->entry_line[db->n - 1] = node_mark(m).line;
}

/* Loads the entry of mapping M into DB (a fresh database of this file's
 * entries alone); an entry with an error is left out. */
static void load_entry(struct loader *l, struct tunedb *db, yaml_node_t *m)
{
    struct tune_entry e;
    yaml_node_t *node[N_ENTRY_KEYS] = {NULL};
    int before = l->d->count;
    memset(&e, 0, sizeof e);
    if (m->type != YAML_MAPPING_NODE) {
        diag_error(l->d, l->path, node_mark(m), "an entry must be a mapping");
        return;
    }
    gather(l, m, entry_keys, node, "a tuning entry");
    for (int k = 0; k <= E_ROWS; k++) {
        if (node[k] == NULL) {
            diag_error(l->d, l->path, node_mark(m), "entry has no '%s'",
                       entry_keys[k]);
        }
    }
    load_entry_values(l, &e, node);
    const struct op_def *op = check_entry_op(l, &e, node);
    if (node[E_TRIED] != NULL) {
        load_tried(l, &e, op, node[E_TRIED]);
    }
    check_best_tried(l, &e, node[E_BEST], before);
    check_measured(l, &e, m, node, before);
    if (l->d->count == before) {
        add_entry(l, db, &e, m);
    }
    free(e.tried);
}

static void report_yaml_error(struct diags *d, const char *path,
                              const yaml_parser_t *parser)
{
    const yaml_mark_t *pm = &parser->problem_mark;
    struct mark m = {(int)pm->line + 1, (int)pm->column + 1};
    diag_error(d, path, m, "malformed YAML: %s%s%s",
               parser->problem ? parser->problem : "error",
               parser->context ? " " : "",
               parser->context ? parser->context : "");
}

/* Loads the entries of document DOC into DB (empty). */
static void load_document(struct loader *l, struct tunedb *db,
                          yaml_node_t *root)
{
    static const char *const root_keys[] = {"entries", NULL};
    yaml_node_t *entries = NULL;
    if (root->type != YAML_MAPPING_NODE) {
        diag_error(l->d, l->path, node_mark(root),
                   "expected a mapping with an 'entries:' sequence");
        return;
    }
    gather(l, root, root_keys, &entries, "a tuning database");
    if (entries == NULL ||
        (entries->type != YAML_SEQUENCE_NODE && !is_null(entries))) {
        diag_error(l->d, l->path,
                   node_mark(entries != NULL ? entries : root),
                   "expected a mapping with an 'entries:' sequence");
        return;
    }
    if (is_null(entries)) {
        return; /* `entries:` with nothing: as older versions wrote none */
    }
    for (yaml_node_item_t *it = entries->data.sequence.items.start;
         it < entries->data.sequence.items.top; it++) {
        load_entry(l, db, yaml_document_get_node(l->doc, *it));
    }
}

int tunedb_load_buffer(struct tunedb *db, const char *path,
                       const unsigned char *data, size_t len,
                       struct diags *d)
{
    int before = d->count;
    struct tunedb file;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        diag_error(d, path, (struct mark){0, 0},
                   "cannot initialise the YAML parser");
        return 1;
    }
    yaml_parser_set_input_string(&parser, data, len);
    if (!yaml_parser_load(&parser, &doc)) {
        report_yaml_error(d, path, &parser);
        yaml_parser_delete(&parser);
        return d->count - before;
    }
    tunedb_init(&file);
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root != NULL) { /* none: an empty file, an empty database */
        struct loader l = {&doc, path, d, NULL, 0};
        load_document(&l, &file, root);
        free(l.entry_line);
        /* A second document would be silently ignored: refuse it. */
        yaml_document_t extra;
        if (yaml_parser_load(&parser, &extra)) {
            yaml_node_t *x = yaml_document_get_root_node(&extra);
            if (x != NULL) {
                diag_error(d, path, node_mark(x),
                           "expected one YAML document, found another");
            }
            yaml_document_delete(&extra);
        } else {
            report_yaml_error(d, path, &parser);
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (d->count == before) {
        tunedb_merge(db, &file); /* nothing of a bad file is kept */
    }
    tunedb_free(&file);
    return d->count - before;
}

int tunedb_load(struct tunedb *db, const char *path, int may_be_missing,
                struct diags *d)
{
    struct mark none = {0, 0};
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        if (may_be_missing && errno == ENOENT) {
            return 0;
        }
        diag_error(d, path, none, "cannot open: %s", strerror(errno));
        return 1;
    }
    struct buf text;
    char chunk[65536];
    size_t n;
    buf_init(&text);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        buf_add(&text, chunk, n);
    }
    int failed = ferror(f);
    fclose(f);
    int errors;
    if (failed) {
        diag_error(d, path, none, "cannot read: %s", strerror(errno));
        errors = 1;
    } else {
        errors = tunedb_load_buffer(db, path,
                                    (const unsigned char *)buf_str(&text),
                                    text.len, d);
    }
    buf_free(&text);
    return errors;
}
