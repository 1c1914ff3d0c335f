/* tunedb.c - the tuning database: best knobs per device, op and shape,
 * kept as YAML. Written by `specl tune`, read by `specl gen` for
 * `tile: auto` and by `specl db merge`. */
#include "tunedb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tunedb_internal.h"

void tunedb_init(struct tunedb *db)
{
    memset(db, 0, sizeof *db);
}

void tunedb_free(struct tunedb *db)
{
    for (int i = 0; i < db->n; i++) {
        free(db->entry[i].tried);
    }
    free(db->entry);
    tunedb_init(db);
}

void *tunedb_grow(void *p, int *cap, int need, size_t size)
{
    if (need <= *cap) {
        return p;
    }
    int c = *cap ? *cap * 2 : 8;
    while (c < need) {
        c *= 2;
    }
    void *q = realloc(p, (size_t)c * size);
    if (q == NULL) {
        fputs("specl: out of memory\n", stderr);
        exit(1);
    }
    *cap = c;
    return q;
}

struct tune_entry *tunedb_add(struct tunedb *db, const struct tune_entry *e)
{
    db->entry = tunedb_grow(db->entry, &db->cap, db->n + 1, sizeof *db->entry);
    struct tune_entry *n = &db->entry[db->n++];
    *n = *e;
    n->tried = NULL;
    n->n_tried = n->cap_tried = 0;
    for (int i = 0; i < e->n_tried; i++) {
        tune_entry_copy_record(n, &e->tried[i]);
    }
    return n;
}

struct tune_entry *tunedb_find(struct tunedb *db, const char *device,
                               const char *driver, const char *op,
                               const char *dtype, const char *shape,
                               long rows)
{
    for (int i = 0; i < db->n; i++) {
        struct tune_entry *e = &db->entry[i];
        if (strcmp(e->device, device) == 0 &&
            strcmp(e->driver, driver) == 0 && strcmp(e->op, op) == 0 &&
            strcmp(e->dtype, dtype) == 0 && strcmp(e->shape, shape) == 0 &&
            e->rows == rows) {
            return e;
        }
    }
    return NULL;
}

const struct tune_record *tune_entry_tried(const struct tune_entry *e,
                                           const char *knobs)
{
    for (int i = 0; i < e->n_tried; i++) {
        if (strcmp(e->tried[i].knobs, knobs) == 0) {
            return &e->tried[i];
        }
    }
    return NULL;
}

struct tune_record *tune_entry_record(struct tune_entry *e, const char *knobs,
                                      double us, const char *status)
{
    struct tune_record *r = (struct tune_record *)tune_entry_tried(e, knobs);
    if (r == NULL) {
        e->tried = tunedb_grow(e->tried, &e->cap_tried, e->n_tried + 1,
                        sizeof *e->tried);
        r = &e->tried[e->n_tried++];
    }
    snprintf(r->knobs, sizeof r->knobs, "%s", knobs);
    snprintf(r->status, sizeof r->status, "%s", status);
    r->us = us;
    r->code[0] = '\0';
    r->fresh = 0;
    return r;
}

void tune_entry_copy_record(struct tune_entry *e,
                            const struct tune_record *src)
{
    struct tune_record *r = tune_entry_record(e, src->knobs, src->us,
                                              src->status);
    snprintf(r->code, sizeof r->code, "%s", src->code);
    r->fresh = src->fresh;
}

void tunedb_merge(struct tunedb *dst, const struct tunedb *src)
{
    for (int i = 0; i < src->n; i++) {
        const struct tune_entry *s = &src->entry[i];
        struct tune_entry *d = tunedb_find(dst, s->device, s->driver, s->op,
                                           s->dtype, s->shape, s->rows);
        if (d == NULL) {
            tunedb_add(dst, s);
            continue;
        }
        /* The first record of each config stands, but one measured by
         * this process replaces an older one (of older code, maybe). */
        for (int t = 0; t < s->n_tried; t++) {
            if (tune_entry_tried(d, s->tried[t].knobs) == NULL ||
                s->tried[t].fresh) {
                tune_entry_copy_record(d, &s->tried[t]);
            }
        }
        int best_from_s =
            s->best[0] &&
            (!d->best[0] || s->best_us < d->best_us ||
             (s->best_fresh && strcmp(d->best, s->best_seen) == 0));
        if (best_from_s) {
            snprintf(d->best, sizeof d->best, "%s", s->best);
            d->best_us = s->best_us;
            d->best_gbs = s->best_gbs;
            d->best_gflops = s->best_gflops;
            d->retimed_reps = s->retimed_reps;
            d->best_p10_us = s->best_p10_us;
            d->best_p90_us = s->best_p90_us;
            snprintf(d->version, sizeof d->version, "%s", s->version);
            /* the best's knobs are on the defaults of the run that found
             * them (tensor-core entries retuned on compute capability 9.0
             * have sm90a's) */
            if (s->target[0] != '\0') {
                snprintf(d->target, sizeof d->target, "%s", s->target);
            }
        }
        /* The defaults as last timed: a tuning run that resumes an entry
         * times them again, and a file saved earlier must not keep them
         * at what an older build took. A best taken from S brings the
         * defaults timed back to back with it, so that the entry's two
         * figures stay one measurement's (files merged with `specl db
         * merge` keep those of the file whose best stands, else the
         * first's). */
        if (d->default_us <= 0 || s->default_fresh ||
            (best_from_s && s->default_us > 0)) {
            d->default_us = s->default_us;
            d->default_p10_us = s->default_p10_us;
            d->default_p90_us = s->default_p90_us;
        }
        /* What the latest search covered (a resumed run counts what it
         * took from the database too), or the search that found the best
         * taken from S. */
        if (d->candidates <= 0 || s->search_fresh ||
            (best_from_s && s->candidates > 0)) {
            d->searched = s->searched;
            d->candidates = s->candidates;
            snprintf(d->stopped, sizeof d->stopped, "%s", s->stopped);
        }
        if (d->target[0] == '\0') {
            snprintf(d->target, sizeof d->target, "%s", s->target);
        }
        /* A crossover is of the best it was measured with: it comes with
         * a best taken from S (none, when S measured none), or from S
         * where S measured one for the best D keeps. */
        if (best_from_s ||
            (s->upto_next > 0 && strcmp(s->best, d->best) == 0)) {
            d->upto_rows = s->upto_rows;
            d->upto_next = s->upto_next;
            d->next_from = s->next_from;
            snprintf(d->upto_with, sizeof d->upto_with, "%s", s->upto_with);
        }
    }
}

/* ---- text forms ------------------------------------------------------ */

void tune_shape_text(const struct kernel_spec *ks, char *out, size_t size)
{
    char v[64];
    out[0] = '\0';
    for (int i = 0; i < ks->op->n_fields; i++) {
        const struct param_def *f = &ks->op->fields[i];
        if (f->kind != VALUE_INT && f->kind != VALUE_BOOL &&
            f->kind != VALUE_CHOICE) {
            continue; /* eps, scale: no bearing on speed */
        }
        if (!ks->field[i].set && param_stand_in(f)) {
            continue; /* rope's rotary_dim left to head_dim */
        }
        if (f->kind == VALUE_CHOICE && ks->field[i].num == f->def) {
            continue; /* weight_layout: in_out, as keys were before it */
        }
        param_format(f, ks->field[i].num, v, sizeof v);
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s=%s", len ? " " : "", f->key, v);
    }
}

void tune_device_slug(const char *device, char *out, size_t size)
{
    size_t n = 0;
    int dash = 0;
    for (const char *p = device; *p && n + 1 < size; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            out[n++] = c;
            dash = 0;
        } else if (!dash && n > 0) {
            out[n++] = '-';
            dash = 1;
        }
    }
    while (n > 0 && out[n - 1] == '-') {
        n--;
    }
    out[n] = '\0';
    if (n == 0) {
        snprintf(out, size, "device");
    }
}
