/* tunedb.c - the tuning database: best knobs per device, op and shape,
 * kept as YAML. Written by `specl tune`, read by `specl gen` for
 * `tile: auto` and by `specl db merge`. */
#include "tunedb.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "knobs.h"

#include "buf.h"
#include "emit.h"
#include "spec.h"

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

static void *grow(void *p, int *cap, int need, size_t size)
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
    db->entry = grow(db->entry, &db->cap, db->n + 1, sizeof *db->entry);
    struct tune_entry *n = &db->entry[db->n++];
    *n = *e;
    n->tried = NULL;
    n->n_tried = n->cap_tried = 0;
    for (int i = 0; i < e->n_tried; i++) {
        tune_entry_record(n, e->tried[i].knobs, e->tried[i].us,
                          e->tried[i].status);
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

void tune_entry_record(struct tune_entry *e, const char *knobs, double us,
                       const char *status)
{
    struct tune_record *r = (struct tune_record *)tune_entry_tried(e, knobs);
    if (r == NULL) {
        e->tried = grow(e->tried, &e->cap_tried, e->n_tried + 1,
                        sizeof *e->tried);
        r = &e->tried[e->n_tried++];
    }
    snprintf(r->knobs, sizeof r->knobs, "%s", knobs);
    snprintf(r->status, sizeof r->status, "%s", status);
    r->us = us;
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
        for (int t = 0; t < s->n_tried; t++) {
            if (tune_entry_tried(d, s->tried[t].knobs) == NULL) {
                tune_entry_record(d, s->tried[t].knobs, s->tried[t].us,
                                  s->tried[t].status);
            }
        }
        if (s->best[0] && (!d->best[0] || s->best_us < d->best_us)) {
            snprintf(d->best, sizeof d->best, "%s", s->best);
            d->best_us = s->best_us;
            d->best_gbs = s->best_gbs;
            d->best_gflops = s->best_gflops;
            snprintf(d->version, sizeof d->version, "%s", s->version);
        }
        if (d->default_us <= 0) {
            d->default_us = s->default_us;
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
        if (f->kind != VALUE_INT && f->kind != VALUE_BOOL) {
            continue; /* eps, scale: no bearing on speed */
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

/* ---- picking knobs for `specl gen` ------------------------------------ */

const char *tunedb_device(const struct tunedb *db, const char *name,
                          char *list, size_t list_size)
{
    char slug[256];
    if (list != NULL && list_size > 0) {
        list[0] = '\0';
    }
    for (int i = 0; i < db->n; i++) {
        const char *dev = db->entry[i].device;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen = strcmp(db->entry[j].device, dev) == 0;
        }
        if (seen) {
            continue;
        }
        tune_device_slug(dev, slug, sizeof slug);
        if (strcmp(dev, name) == 0 || strcmp(slug, name) == 0) {
            return dev;
        }
        if (list != NULL && list_size > 0) {
            size_t len = strlen(list);
            snprintf(list + len, list_size - len, "%s%s (%s)", len ? "; " : "",
                     dev, slug);
        }
    }
    return NULL;
}

/* Value of KEY in a "k=v k=v" text (true and false as 1 and 0); NAN
 * when absent. */
static double text_value(const char *text, const char *key)
{
    char v[64];
    if (knobs_text_value(text, key, v, sizeof v) < 0) {
        return NAN;
    }
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
        return v[0] == 't';
    }
    return strtod(v, NULL);
}

/* How far shape B is from A: the sum of |log2| ratios of the sizes;
 * infinite when a flag differs. */
static double shape_distance(const struct kernel_spec *ks, const char *a,
                             const char *b)
{
    double dist = 0;
    for (int i = 0; i < ks->op->n_fields; i++) {
        const struct param_def *f = &ks->op->fields[i];
        if (f->kind != VALUE_INT && f->kind != VALUE_BOOL) {
            continue;
        }
        double va = text_value(a, f->key), vb = text_value(b, f->key);
        if (isnan(va) || isnan(vb)) {
            return INFINITY;
        }
        if (f->kind == VALUE_BOOL) {
            if (va != vb) {
                return INFINITY;
            }
        } else {
            dist += fabs(log2(va / vb));
        }
    }
    return dist;
}

enum tune_pick tunedb_pick(const struct tunedb *db, const char *device,
                           const struct kernel_spec *ks, char *knobs,
                           size_t knobs_size, char *why, size_t why_size)
{
    enum tune_pick pick;
    const struct tune_entry *e =
        tunedb_pick_entry(db, device, ks, &pick, why, why_size);
    if (e != NULL) {
        snprintf(knobs, knobs_size, "%s", e->best);
    }
    return pick;
}

const struct tune_entry *tunedb_pick_entry(const struct tunedb *db,
                                           const char *device,
                                           const struct kernel_spec *ks,
                                           enum tune_pick *pick, char *why,
                                           size_t why_size)
{
    char shape[TUNE_TEXT];
    tune_shape_text(ks, shape, sizeof shape);
    /* Without a device named, only a database of one device answers:
     * knobs tuned on one device are no guide for another. */
    for (int i = 1; device == NULL && i < db->n; i++) {
        if (strcmp(db->entry[i].device, db->entry[0].device) != 0) {
            snprintf(why, why_size, "the tuning database holds several "
                     "devices and none was named (gen --db-device)");
            *pick = PICK_NONE;
            return NULL;
        }
    }
    const struct tune_entry *exact = NULL, *near = NULL;
    double best_dist = INFINITY;
    for (int i = 0; i < db->n; i++) {
        const struct tune_entry *e = &db->entry[i];
        if ((device != NULL && strcmp(e->device, device) != 0) ||
            strcmp(e->op, ks->op->name) != 0 ||
            strcmp(e->dtype, dtype_name(ks->dtype)) != 0 || !e->best[0]) {
            continue;
        }
        if (strcmp(e->shape, shape) == 0) {
            if (exact == NULL || e->rows > exact->rows) {
                exact = e;
            }
            continue;
        }
        double dist = shape_distance(ks, shape, e->shape);
        if (dist < best_dist ||
            (dist == best_dist && near != NULL && e->rows > near->rows)) {
            best_dist = dist;
            near = e;
        }
    }
    const struct tune_entry *e = exact ? exact : near;
    if (e == NULL) {
        snprintf(why, why_size, "no tuning entry for this op and dtype%s%s",
                 device ? " on " : "", device ? device : "");
        *pick = PICK_NONE;
        return NULL;
    }
    snprintf(why, why_size, "%s tuning entry: %s, %s, rows %ld (%.1f us, "
             "specl %s)",
             exact ? "exact" : "nearest-shape", e->device, e->shape, e->rows,
             e->best_us, e->version);
    *pick = exact ? PICK_EXACT : PICK_NEAREST;
    return e;
}

/* ---- applying a database to specs ------------------------------------ */

/* Takes knobs from DB for every kernel that asked for `tile: auto` or
 * gave no knob at all; says which source it used in the header. */
void tunedb_apply(const struct tunedb *db, struct spec_set *set,
                  const char *device)
{
    for (int i = 0; i < set->n_kernel; i++) {
        struct kernel_spec *ks = &set->kernel[i];
        int any_set = 0;
        for (int k = 0; k < ks->op->n_knobs; k++) {
            any_set |= ks->knob[k].set;
        }
        if (any_set && !ks->tile_auto) {
            continue;
        }
        char knobs[TUNE_TEXT] = "", why[200] = "an empty tuning database";
        enum tune_pick pick =
            db == NULL ? PICK_NONE
                       : tunedb_pick(db, device, ks, knobs, sizeof knobs, why,
                                     sizeof why);
        if (pick == PICK_NONE) {
            snprintf(ks->tile_note, sizeof ks->tile_note,
                     "op defaults (%s)", why);
            continue;
        }
        struct kernel_spec tuned = *ks;
        struct diags quiet = {.out = NULL};
        if (knobs_parse(&tuned, knobs, NULL, 0) == 0 &&
            knobs_resolve(&tuned, &quiet) == 0) {
            snprintf(tuned.tile_note, sizeof tuned.tile_note, "%s", why);
            *ks = tuned;
        } else {
            snprintf(ks->tile_note, sizeof ks->tile_note,
                     "op defaults (the %s does not fit this shape)", why);
        }
    }
}

/* ---- YAML ------------------------------------------------------------ */

static void put_string(struct buf *b, const char *s)
{
    buf_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            buf_printf(b, "\\%c", *s);
        } else if ((unsigned char)*s < 32) {
            buf_printf(b, "\\x%02x", (unsigned char)*s);
        } else {
            buf_add(b, s, 1);
        }
    }
    buf_puts(b, "\"");
}

int tunedb_save(const struct tunedb *db, const char *path, char *err,
                size_t errsize)
{
    struct buf b;
    buf_init(&b);
    buf_puts(&b, "# specl tuning database: the fastest knobs measured per "
                 "device, op, dtype\n# and shape. Written by `specl tune`; "
                 "read by `specl gen` for tile: auto.\nentries:\n");
    for (int i = 0; i < db->n; i++) {
        const struct tune_entry *e = &db->entry[i];
        buf_puts(&b, "  - device: ");
        put_string(&b, e->device);
        buf_puts(&b, "\n    driver: ");
        put_string(&b, e->driver);
        buf_printf(&b, "\n    op: %s\n    dtype: %s\n    shape: ", e->op,
                   e->dtype);
        put_string(&b, e->shape);
        buf_printf(&b, "\n    rows: %ld\n    best: ", e->rows);
        put_string(&b, e->best);
        /* No record: `tried: []`, since a bare `tried:` reads as null. */
        buf_printf(&b, "\n    time_us: %.2f\n    gbs: %.4g\n    gflops: %.4g"
                   "\n    default_us: %.2f\n    specl: \"%s\"\n    "
                   "tried:%s\n",
                   e->best_us, e->best_gbs, e->best_gflops, e->default_us,
                   e->version, e->n_tried ? "" : " []");
        for (int t = 0; t < e->n_tried; t++) {
            buf_puts(&b, "      - { knobs: ");
            put_string(&b, e->tried[t].knobs);
            buf_printf(&b, ", us: %.2f, status: ", e->tried[t].us);
            put_string(&b, e->tried[t].status);
            buf_puts(&b, " }\n");
        }
    }
    int rc = write_file_atomic(path, buf_str(&b), b.len, err, errsize);
    buf_free(&b);
    return rc;
}

struct loader {
    yaml_document_t *doc;
    const char *path;
    struct diags *d;
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

static void copy_text(struct loader *l, yaml_node_t *v, const char *key,
                      char *dst, size_t size)
{
    const char *s = scalar(l, v, key);
    if (s != NULL) {
        if (strlen(s) >= size) {
            diag_error(l->d, l->path, node_mark(v), "%s is too long", key);
            return;
        }
        snprintf(dst, size, "%s", s);
    }
}

static double number(struct loader *l, yaml_node_t *v, const char *key)
{
    const char *s = scalar(l, v, key);
    char *end;
    if (s == NULL) {
        return 0;
    }
    double f = strtod(s, &end);
    if (*end != '\0' || end == s) {
        diag_error(l->d, l->path, node_mark(v), "%s must be a number (got "
                   "'%s')", key, s);
    }
    return f;
}

static void load_tried(struct loader *l, struct tune_entry *e,
                       yaml_node_t *seq)
{
    if (seq->type == YAML_SCALAR_NODE && seq->data.scalar.length == 0 &&
        seq->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        return; /* `tried:` with nothing: none (as older versions wrote) */
    }
    if (seq->type != YAML_SEQUENCE_NODE) {
        diag_error(l->d, l->path, node_mark(seq), "tried must be a sequence");
        return;
    }
    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         it < seq->data.sequence.items.top; it++) {
        yaml_node_t *m = yaml_document_get_node(l->doc, *it);
        struct tune_record r = {"", -1, ""};
        if (m->type != YAML_MAPPING_NODE) {
            diag_error(l->d, l->path, node_mark(m),
                       "a tried config must be a mapping");
            continue;
        }
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
             p < m->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
            yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
            const char *key = scalar(l, k, "key");
            if (key == NULL) {
                continue;
            }
            if (strcmp(key, "knobs") == 0) {
                copy_text(l, v, key, r.knobs, sizeof r.knobs);
            } else if (strcmp(key, "us") == 0) {
                r.us = number(l, v, key);
            } else if (strcmp(key, "status") == 0) {
                copy_text(l, v, key, r.status, sizeof r.status);
            } else {
                diag_error(l->d, l->path, node_mark(k),
                           "unknown key '%s' in a tried config", key);
            }
        }
        tune_entry_record(e, r.knobs, r.us, r.status);
    }
}

static void load_entry(struct loader *l, struct tunedb *db, yaml_node_t *m)
{
    struct tune_entry e;
    memset(&e, 0, sizeof e);
    if (m->type != YAML_MAPPING_NODE) {
        diag_error(l->d, l->path, node_mark(m), "an entry must be a mapping");
        return;
    }
    static const char *const required[] = {"device", "driver", "op", "dtype",
                                           "shape", "rows", NULL};
    unsigned seen = 0;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
         p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(l->doc, p->value);
        const char *key = scalar(l, k, "key");
        if (key == NULL) {
            continue;
        }
        for (int r = 0; required[r]; r++) {
            if (strcmp(key, required[r]) == 0) {
                seen |= 1u << r;
            }
        }
        if (strcmp(key, "device") == 0) {
            copy_text(l, v, key, e.device, sizeof e.device);
        } else if (strcmp(key, "driver") == 0) {
            copy_text(l, v, key, e.driver, sizeof e.driver);
        } else if (strcmp(key, "op") == 0) {
            copy_text(l, v, key, e.op, sizeof e.op);
        } else if (strcmp(key, "dtype") == 0) {
            copy_text(l, v, key, e.dtype, sizeof e.dtype);
        } else if (strcmp(key, "shape") == 0) {
            copy_text(l, v, key, e.shape, sizeof e.shape);
        } else if (strcmp(key, "rows") == 0) {
            e.rows = (long)number(l, v, key);
        } else if (strcmp(key, "best") == 0) {
            copy_text(l, v, key, e.best, sizeof e.best);
        } else if (strcmp(key, "time_us") == 0) {
            e.best_us = number(l, v, key);
        } else if (strcmp(key, "gbs") == 0) {
            e.best_gbs = number(l, v, key);
        } else if (strcmp(key, "gflops") == 0) {
            e.best_gflops = number(l, v, key);
        } else if (strcmp(key, "default_us") == 0) {
            e.default_us = number(l, v, key);
        } else if (strcmp(key, "specl") == 0) {
            copy_text(l, v, key, e.version, sizeof e.version);
        } else if (strcmp(key, "tried") == 0) {
            load_tried(l, &e, v);
        } else {
            diag_error(l->d, l->path, node_mark(k),
                       "unknown key '%s' in a tuning entry", key);
        }
    }
    for (int r = 0; required[r]; r++) {
        if (!(seen & (1u << r))) {
            diag_error(l->d, l->path, node_mark(m), "entry has no '%s'",
                       required[r]);
        }
    }
    struct tune_entry *have = tunedb_find(db, e.device, e.driver, e.op,
                                          e.dtype, e.shape, e.rows);
    if (have != NULL) {
        struct tunedb one = {1, 1, &e};
        tunedb_merge(db, &one);
    } else {
        tunedb_add(db, &e);
    }
    free(e.tried);
}

int tunedb_load(struct tunedb *db, const char *path, int may_be_missing,
                struct diags *d)
{
    struct mark none = {0, 0};
    int before = d->count;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        if (may_be_missing && errno == ENOENT) {
            return 0;
        }
        diag_error(d, path, none, "cannot open: %s", strerror(errno));
        return 1;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        struct mark m = {(int)parser.problem_mark.line + 1,
                         (int)parser.problem_mark.column + 1};
        diag_error(d, path, m, "malformed YAML: %s",
                   parser.problem ? parser.problem : "error");
        yaml_parser_delete(&parser);
        fclose(f);
        return d->count - before;
    }
    struct loader l = {&doc, path, d};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    yaml_node_t *entries = NULL;
    if (root != NULL && root->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
             p < root->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(&doc, p->key);
            if (k->type == YAML_SCALAR_NODE &&
                strcmp((const char *)k->data.scalar.value, "entries") == 0) {
                entries = yaml_document_get_node(&doc, p->value);
            }
        }
    }
    if (root != NULL && (entries == NULL ||
                         entries->type != YAML_SEQUENCE_NODE)) {
        diag_error(d, path, node_mark(root),
                   "expected a mapping with an 'entries:' sequence");
    } else if (entries != NULL) {
        for (yaml_node_item_t *it = entries->data.sequence.items.start;
             it < entries->data.sequence.items.top; it++) {
            load_entry(&l, db, yaml_document_get_node(&doc, *it));
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    fclose(f);
    return d->count - before;
}
