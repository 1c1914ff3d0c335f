/* tunedb.c - the tuning database: best knobs per device, op and shape,
 * kept as YAML. Written by `specl tune`, read by `specl gen` for
 * `tile: auto` and by `specl db merge`. */
#include "tunedb.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "knobs.h"

#include "buf.h"
#include "files.h"
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

static void copy_record(struct tune_entry *e,
                        const struct tune_record *src);

struct tune_entry *tunedb_add(struct tunedb *db, const struct tune_entry *e)
{
    db->entry = grow(db->entry, &db->cap, db->n + 1, sizeof *db->entry);
    struct tune_entry *n = &db->entry[db->n++];
    *n = *e;
    n->tried = NULL;
    n->n_tried = n->cap_tried = 0;
    for (int i = 0; i < e->n_tried; i++) {
        copy_record(n, &e->tried[i]);
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
        e->tried = grow(e->tried, &e->cap_tried, e->n_tried + 1,
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

/* SRC's record copied into E (replacing one with the same knobs). */
static void copy_record(struct tune_entry *e, const struct tune_record *src)
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
                copy_record(d, &s->tried[t]);
            }
        }
        if (s->best[0] &&
            (!d->best[0] || s->best_us < d->best_us ||
             (s->best_fresh && strcmp(d->best, s->best_seen) == 0))) {
            snprintf(d->best, sizeof d->best, "%s", s->best);
            d->best_us = s->best_us;
            d->best_gbs = s->best_gbs;
            d->best_gflops = s->best_gflops;
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
         * at what an older build took (files merged with `specl db
         * merge` keep the first's). */
        if (d->default_us <= 0 || s->default_fresh) {
            d->default_us = s->default_us;
        }
        if (d->target[0] == '\0') {
            snprintf(d->target, sizeof d->target, "%s", s->target);
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

/* What E, an entry without a best, holds: "has no result: ...". */
static void no_result_text(const struct tune_entry *e, char *out,
                           size_t size)
{
    int timed = 0;
    for (int i = 0; i < e->n_tried; i++) {
        timed += e->tried[i].us >= 0;
    }
    if (e->n_tried > 0 && timed == 0) {
        snprintf(out, size, "has no result: none of its %d tried configs "
                 "ran", e->n_tried);
    } else {
        /* The tuner decides the best at the end of its search: a run
         * stopped before that saved only what it measured. */
        snprintf(out, size, "has no result: its tune did not finish (%d "
                 "config%s measured)", timed, timed == 1 ? "" : "s");
    }
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
    const struct tune_entry *exact = NULL, *near = NULL, *unfinished = NULL;
    double best_dist = INFINITY;
    for (int i = 0; i < db->n; i++) {
        const struct tune_entry *e = &db->entry[i];
        if ((device != NULL && strcmp(e->device, device) != 0) ||
            strcmp(e->op, ks->op->name) != 0 ||
            strcmp(e->dtype, dtype_name(ks->dtype)) != 0) {
            continue;
        }
        if (!e->best[0]) { /* no result: named if nothing else answers */
            if (strcmp(e->shape, shape) == 0 &&
                (unfinished == NULL || e->rows > unfinished->rows)) {
                unfinished = e;
            }
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
        if (unfinished != NULL) {
            char none[160];
            no_result_text(unfinished, none, sizeof none);
            snprintf(why, why_size, "the tuning entry of this shape%s%s "
                     "(rows %ld) %s", device ? " on " : "",
                     device ? device : "", unfinished->rows, none);
        } else {
            snprintf(why, why_size, "no tuning entry for this op and "
                     "dtype%s%s", device ? " on " : "", device ? device : "");
        }
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

int tunedb_entry_knobs(struct kernel_spec *ks, const char *knobs)
{
    const struct kernel_spec spec = *ks;
    if (knobs_parse(ks, knobs, NULL, 0) < 0) {
        return -1;
    }
    /* The few-row paths' knobs as the spec has them: the tuner neither
     * chose nor timed them, and their defaults may have moved since. */
    for (int f = 0; ks->op->few_rows_knobs != NULL &&
                    ks->op->few_rows_knobs[f] != NULL;
         f++) {
        int k = op_knob_index(ks->op, ks->op->few_rows_knobs[f]);
        assert(k >= 0);
        ks->knob[k] = spec.knob[k];
    }
    return 0;
}

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
        if (tunedb_entry_knobs(&tuned, knobs) == 0 &&
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

/* The length of the UTF-8 sequence at S, its code point in *CP; 0 when S
 * starts none (a stray byte, an overlong form, a surrogate, a sequence
 * cut short by the end of the string). */
static int utf8_decode(const unsigned char *s, unsigned long *cp)
{
    int n;
    unsigned long c, least;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2, c = s[0] & 0x1fu, least = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3, c = s[0] & 0x0fu, least = 0x800;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4, c = s[0] & 0x07u, least = 0x10000;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0; /* the terminating NUL stops here too */
        }
        c = c << 6 | (s[i] & 0x3fu);
    }
    if (c < least || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
        return 0;
    }
    *cp = c;
    return n;
}

/* S as valid UTF-8, which is all the emitter takes, appended to OUT: a
 * byte that starts no UTF-8 sequence (a driver's name in another
 * encoding) becomes the code point of its value, so the file stays
 * loadable. */
static void put_utf8(struct buf *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        unsigned long cp;
        int n = utf8_decode(p, &cp);
        if (n > 0) {
            buf_add(out, (const char *)p, (size_t)n);
            p += n;
        } else {
            char pair[2] = {(char)(0xc0 | *p >> 6),
                            (char)(0x80 | (*p & 0x3f))};
            buf_add(out, pair, sizeof pair);
            p++;
        }
    }
}

/* libyaml's emitter writing into a buf; OK drops to 0 at its first
 * failure (out of memory), after which nothing more is emitted. */
struct yaml_out {
    yaml_emitter_t emitter;
    int ok;
};

static int append_output(void *data, unsigned char *text, size_t size)
{
    buf_add(data, (const char *)text, size);
    return 1;
}

static void emit_event(struct yaml_out *o, int made, yaml_event_t *event)
{
    if (!made) {
        o->ok = 0;
    } else if (!o->ok) {
        yaml_event_delete(event);
    } else {
        /* The emitter takes the event, even when it fails. */
        o->ok = yaml_emitter_emit(&o->emitter, event);
    }
}

static void emit_scalar(struct yaml_out *o, const char *text,
                        yaml_scalar_style_t style)
{
    yaml_event_t event;
    int made = yaml_scalar_event_initialize(&event, NULL, NULL,
                                            (const yaml_char_t *)text,
                                            (int)strlen(text), 1, 1, style);
    emit_event(o, made, &event);
}

/* Any text of the database: double-quoted, so that the loader reads back
 * a string whatever it holds (quotes, '#', ': ', line breaks, text that
 * reads as a number); the emitter escapes what needs it. */
static void emit_text(struct yaml_out *o, const char *key, const char *text)
{
    struct buf utf8;
    buf_init(&utf8);
    put_utf8(&utf8, text);
    emit_scalar(o, key, YAML_PLAIN_SCALAR_STYLE);
    emit_scalar(o, buf_str(&utf8), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    buf_free(&utf8);
}

/* A registry name (op, dtype) or a number, as a spec writes them. */
static void emit_plain(struct yaml_out *o, const char *key, const char *fmt,
                       ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void emit_plain(struct yaml_out *o, const char *key, const char *fmt,
                       ...)
{
    char text[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    emit_scalar(o, key, YAML_PLAIN_SCALAR_STYLE);
    emit_scalar(o, text, YAML_PLAIN_SCALAR_STYLE);
}

static void emit_mapping(struct yaml_out *o, yaml_mapping_style_t style)
{
    yaml_event_t event;
    emit_event(
        o, yaml_mapping_start_event_initialize(&event, NULL, NULL, 1, style),
        &event);
}

static void emit_mapping_end(struct yaml_out *o)
{
    yaml_event_t event;
    emit_event(o, yaml_mapping_end_event_initialize(&event), &event);
}

/* KEY: a block sequence (the emitter writes an empty one as [], since a
 * bare `KEY:` would read as null). */
static void emit_sequence(struct yaml_out *o, const char *key)
{
    yaml_event_t event;
    emit_scalar(o, key, YAML_PLAIN_SCALAR_STYLE);
    emit_event(o,
               yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
                                                    YAML_BLOCK_SEQUENCE_STYLE),
               &event);
}

static void emit_sequence_end(struct yaml_out *o)
{
    yaml_event_t event;
    emit_event(o, yaml_sequence_end_event_initialize(&event), &event);
}

static void emit_entry(struct yaml_out *o, const struct tune_entry *e)
{
    emit_mapping(o, YAML_BLOCK_MAPPING_STYLE);
    emit_text(o, "device", e->device);
    emit_text(o, "driver", e->driver);
    emit_plain(o, "op", "%s", e->op);
    emit_plain(o, "dtype", "%s", e->dtype);
    if (e->target[0] != '\0') {
        emit_plain(o, "target", "%s", e->target);
    }
    emit_text(o, "shape", e->shape);
    emit_plain(o, "rows", "%ld", e->rows);
    emit_text(o, "best", e->best);
    emit_plain(o, "time_us", "%.2f", e->best_us);
    emit_plain(o, "gbs", "%.4g", e->best_gbs);
    emit_plain(o, "gflops", "%.4g", e->best_gflops);
    emit_plain(o, "default_us", "%.2f", e->default_us);
    emit_text(o, "specl", e->version);
    emit_sequence(o, "tried");
    for (int t = 0; t < e->n_tried; t++) {
        /* One line per tried config: a flow mapping. */
        emit_mapping(o, YAML_FLOW_MAPPING_STYLE);
        emit_text(o, "knobs", e->tried[t].knobs);
        emit_plain(o, "us", "%.2f", e->tried[t].us);
        emit_text(o, "status", e->tried[t].status);
        if (e->tried[t].code[0] != '\0') {
            emit_text(o, "code", e->tried[t].code);
        }
        emit_mapping_end(o);
    }
    emit_sequence_end(o);
    emit_mapping_end(o);
}

/* DB's YAML appended to OUT. Returns 0, or -1 with ERR filled. */
static int format_db(const struct tunedb *db, struct buf *out, char *err,
                     size_t errsize)
{
    struct yaml_out o = {.ok = 1};
    yaml_event_t event;
    /* The emitter writes no comments: the header goes first. */
    buf_puts(out, "# specl tuning database: the fastest knobs measured per "
                  "device, op, dtype\n# and shape. Written by `specl tune`; "
                  "read by `specl gen` for tile: auto.\n");
    if (!yaml_emitter_initialize(&o.emitter)) {
        snprintf(err, errsize, "cannot start the YAML emitter");
        return -1;
    }
    yaml_emitter_set_output(&o.emitter, append_output, out);
    /* Non-ASCII names as they are; no folding: a line per config. */
    yaml_emitter_set_unicode(&o.emitter, 1);
    yaml_emitter_set_width(&o.emitter, -1);
    yaml_emitter_set_indent(&o.emitter, 2);
    emit_event(&o,
               yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING),
               &event);
    emit_event(
        &o, yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 1),
        &event);
    emit_mapping(&o, YAML_BLOCK_MAPPING_STYLE);
    emit_sequence(&o, "entries");
    for (int i = 0; i < db->n; i++) {
        emit_entry(&o, &db->entry[i]);
    }
    emit_sequence_end(&o);
    emit_mapping_end(&o);
    emit_event(&o, yaml_document_end_event_initialize(&event, 1), &event);
    emit_event(&o, yaml_stream_end_event_initialize(&event), &event);
    if (!o.ok) {
        snprintf(err, errsize, "cannot write YAML: %s",
                 o.emitter.problem ? o.emitter.problem : "out of memory");
    }
    yaml_emitter_delete(&o.emitter);
    return o.ok ? 0 : -1;
}

void tunedb_format(const struct tunedb *db, struct buf *b)
{
    char err[256];
    format_db(db, b, err, sizeof err);
}

int tunedb_save(const struct tunedb *db, const char *path, char *err,
                size_t errsize)
{
    struct buf b;
    buf_init(&b);
    int rc = format_db(db, &b, err, errsize);
    if (rc == 0) {
        rc = write_file_atomic(path, buf_str(&b), b.len, err, errsize);
    }
    buf_free(&b);
    return rc;
}

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

/* Whether TEXT reads as knobs of OP (knobs_parse: any of its knobs, each
 * with a value within its limits); else the reason in WHY. */
static int knobs_fit(const struct op_def *op, const char *text, char *why,
                     size_t size)
{
    struct kernel_spec ks;
    memset(&ks, 0, sizeof ks);
    ks.op = op;
    return knobs_parse(&ks, text, why, size) == 0;
}

/* Whether KS, its int and bool fields read from an entry's shape, is a
 * kernel a spec could give (rank <= in_features...): the op's checks
 * of its fields with the knobs its defaults choose for DTYPE and
 * TARGET, as `specl check` makes them. Else the first reason in WHY. */
static int shape_valid(struct kernel_spec *ks, enum dtype dtype,
                       enum target target, char *why, size_t size)
{
    struct diags quiet = {.out = NULL};
    for (int f = 0; f < ks->op->n_fields; f++) {
        const struct param_def *def = &ks->op->fields[f];
        if (def->kind != VALUE_INT && def->kind != VALUE_BOOL) {
            ks->field[f].num = def->def; /* not in the shape: the default */
        }
    }
    ks->dtype = dtype;
    ks->target = target;
    if (knobs_resolve(ks, &quiet) != 0) {
        snprintf(why, size, "%s", quiet.first);
        return 0;
    }
    return 1;
}

/* Whether TEXT is a shape of OP as tune_shape_text writes it (every int
 * and bool field once, in the op's order, values within their limits)
 * that a spec could give (shape_valid): entries are found by their
 * shape's text. Else the reason in WHY. */
static int shape_fits(const struct op_def *op, enum dtype dtype,
                      enum target target, const char *text, char *why,
                      size_t size)
{
    struct kernel_spec ks;
    int given[SPECL_MAX_PARAMS] = {0};
    char key[64], canonical[TUNE_TEXT];
    memset(&ks, 0, sizeof ks);
    ks.op = op;
    for (const char *p = text + strspn(text, " "); *p != '\0';) {
        size_t len = strcspn(p, " ");
        const char *eq = memchr(p, '=', len);
        size_t kl = eq != NULL ? (size_t)(eq - p) : len;
        snprintf(key, sizeof key, "%.*s", (int)kl, p);
        int f = eq != NULL ? op_field_index(op, key) : -1;
        const struct param_def *def = f >= 0 ? &op->fields[f] : NULL;
        char value[64];
        snprintf(value, sizeof value, "%.*s",
                 eq != NULL ? (int)(len - kl - 1) : 0, eq != NULL ? eq + 1 : "");
        if (eq == NULL) {
            snprintf(why, size, "no '=' in '%.*s'", (int)len, p);
            return 0;
        }
        if (def == NULL ||
            (def->kind != VALUE_INT && def->kind != VALUE_BOOL)) {
            snprintf(why, size, "'%s' is no shape key of %s", key, op->name);
            return 0;
        }
        if (given[f]) {
            snprintf(why, size, "'%s' given twice", key);
            return 0;
        }
        if (knobs_parse_value(def, value, &ks.field[f].num) < 0) {
            snprintf(why, size, "bad value of '%.*s'", (int)len, p);
            return 0;
        }
        given[f] = 1;
        p += len;
        p += strspn(p, " ");
    }
    for (int f = 0; f < op->n_fields; f++) {
        const struct param_def *def = &op->fields[f];
        if ((def->kind == VALUE_INT || def->kind == VALUE_BOOL) && !given[f]) {
            snprintf(why, size, "no '%s'", def->key);
            return 0;
        }
    }
    tune_shape_text(&ks, canonical, sizeof canonical);
    if (strcmp(canonical, text) != 0) {
        snprintf(why, size, "not as the tuner writes it: \"%.120s\"",
                 canonical);
        return 0;
    }
    return shape_valid(&ks, dtype, target, why, size);
}

enum record_key { R_KNOBS, R_US, R_STATUS, R_CODE, N_RECORD_KEYS };
static const char *const record_keys[] = {"knobs", "us", "status", "code",
                                          NULL};

/* Whether TEXT is a code hash as the tuner writes it: 16 hex digits. */
static int code_hash_text(const char *text)
{
    size_t n = strlen(text);
    return n == 16 && strspn(text, "0123456789abcdef") == n;
}

/* Whether STATUS is one the tuner writes for a config timed in US (-1:
 * it did not run): "ok" for one that ran; for one that did not, why, as
 * measure_stub's notes say it: "build failed[: ...]", "WRONG: ...",
 * "wrong result", "wrote past its output", or an OpenCL status (its
 * name, "CL error"). Else what is wrong in WHY. */
static int status_fits(const char *status, double us, char *why,
                       size_t size)
{
    static const char *const failed[] = {
        "build failed", "wrong result", "wrote past its output", "CL error",
        NULL};
    int ran = us >= 0;
    int known = strcmp(status, "ok") == 0 ||
                strncmp(status, "build failed: ", 14) == 0 ||
                strncmp(status, "WRONG: ", 7) == 0 ||
                (strncmp(status, "CL_", 3) == 0 &&
                 strspn(status, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
                     strlen(status));
    for (int i = 0; failed[i] != NULL && !known; i++) {
        known = strcmp(status, failed[i]) == 0;
    }
    if (!known) {
        snprintf(why, size, "unknown status \"%.40s\" (the tuner's: "
                 "\"ok\", or why the config did not run, as \"build "
                 "failed: ...\", \"WRONG: ...\")", status);
    } else if (ran != (strcmp(status, "ok") == 0)) {
        snprintf(why, size, ran ? "status \"%.40s\" is for a config that did "
                 "not run (us: -1)" : "status \"%.40s\" is for a config that "
                 "ran (us >= 0)", status);
    }
    return known && ran == (strcmp(status, "ok") == 0);
}

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
            if (l->d->count == had && !code_hash_text(code)) {
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
            !status_fits(r.status, r.us, why, sizeof why)) {
            diag_error(l->d, l->path, node_mark(node[R_STATUS]), "%s", why);
        }
        if (l->d->count != before) {
            continue;
        }
        const struct tune_record *twice = tune_entry_tried(e, r.knobs);
        if (r.knobs[0] == '\0') {
            diag_error(l->d, l->path, node_mark(node[R_KNOBS]),
                       "a tried config's knobs must not be empty");
        } else if (op != NULL && !knobs_fit(op, r.knobs, why, sizeof why)) {
            diag_error(l->d, l->path, node_mark(node[R_KNOBS]),
                       "knobs do not fit %s: %s", op->name, why);
        } else if (twice != NULL) {
            diag_error(l->d, l->path, node_mark(node[R_KNOBS]),
                       "tried config \"%s\" given twice", r.knobs);
        } else {
            copy_record(e, &r);
        }
    }
}

enum entry_key {
    E_DEVICE, E_DRIVER, E_OP, E_DTYPE, E_SHAPE, E_ROWS, /* required */
    E_TARGET, E_BEST, E_TIME_US, E_GBS, E_GFLOPS, E_DEFAULT_US, E_SPECL,
    E_TRIED, N_ENTRY_KEYS
};
static const char *const entry_keys[] = {
    "device", "driver", "op", "dtype", "shape", "rows", "target", "best",
    "time_us", "gbs", "gflops", "default_us", "specl", "tried", NULL};

/* Whether TEXT names a dtype (f32, f16, bf16); its value in *DTYPE. */
static int dtype_from_text(const char *text, enum dtype *dtype)
{
    static const enum dtype all[] = {DTYPE_F32, DTYPE_F16, DTYPE_BF16};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(text, dtype_name(all[i])) == 0) {
            *dtype = all[i];
            return 1;
        }
    }
    return 0;
}

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

/* OP's name and the names of every op, for a message. */
static void known_ops(char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; op_registry[i] != NULL; i++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", i ? ", " : "",
                 op_registry[i]->name);
    }
}

/* Loads the entry of mapping M into DB (a fresh database of this file's
 * entries alone); an entry with an error is left out. */
static void load_entry(struct loader *l, struct tunedb *db, yaml_node_t *m)
{
    struct tune_entry e;
    yaml_node_t *node[N_ENTRY_KEYS] = {NULL};
    char why[DIAG_MESSAGE_MAX], ops[128];
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
    const struct {
        enum entry_key key;
        char *dst;
        size_t size;
    } texts[] = {
        {E_DEVICE, e.device, sizeof e.device},
        {E_DRIVER, e.driver, sizeof e.driver},
        {E_OP, e.op, sizeof e.op},
        {E_DTYPE, e.dtype, sizeof e.dtype},
        {E_TARGET, e.target, sizeof e.target},
        {E_SHAPE, e.shape, sizeof e.shape},
        {E_BEST, e.best, sizeof e.best},
        {E_SPECL, e.version, sizeof e.version},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (node[texts[i].key] != NULL) {
            copy_text(l, node[texts[i].key], entry_keys[texts[i].key],
                      texts[i].dst, texts[i].size);
        }
    }
    if (node[E_ROWS] != NULL) {
        integer(l, node[E_ROWS], "rows", 1, TUNE_MAX_ROWS, &e.rows);
    }
    const struct {
        enum entry_key key;
        double *dst;
    } numbers[] = {
        {E_TIME_US, &e.best_us},
        {E_GBS, &e.best_gbs},
        {E_GFLOPS, &e.best_gflops},
        {E_DEFAULT_US, &e.default_us},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        if (node[numbers[i].key] != NULL) {
            non_negative(l, node[numbers[i].key], entry_keys[numbers[i].key],
                         numbers[i].dst);
        }
    }
    const struct op_def *op = NULL;
    if (node[E_OP] != NULL && node[E_OP]->type == YAML_SCALAR_NODE) {
        op = op_find(e.op);
        if (op == NULL) {
            known_ops(ops, sizeof ops);
            diag_error(l->d, l->path, node_mark(node[E_OP]),
                       "unknown op '%s' (known: %s)", e.op, ops);
        }
    }
    /* A text too long for its field has been reported already. */
    enum dtype dtype = DTYPE_F32;
    int dtype_known = dtype_from_text(e.dtype, &dtype);
    if (node[E_DTYPE] != NULL && node[E_DTYPE]->type == YAML_SCALAR_NODE &&
        node[E_DTYPE]->data.scalar.length < sizeof e.dtype && !dtype_known) {
        diag_error(l->d, l->path, node_mark(node[E_DTYPE]),
                   "dtype must be one of f32, f16, bf16 (got '%s')", e.dtype);
    }
    enum target target = TARGET_GPU;
    int target_known = e.target[0] == '\0' ||
                       target_from_name(e.target, &target) == 0;
    if (node[E_TARGET] != NULL && node[E_TARGET]->type == YAML_SCALAR_NODE &&
        node[E_TARGET]->data.scalar.length < sizeof e.target &&
        !target_known) {
        diag_error(l->d, l->path, node_mark(node[E_TARGET]),
                   "target must be one of gpu, cpu, tensor, sm90a (got '%s')",
                   e.target);
    }
    if (op != NULL && dtype_known && target_known && node[E_SHAPE] != NULL &&
        node[E_SHAPE]->type == YAML_SCALAR_NODE &&
        !shape_fits(op, dtype, target, e.shape, why, sizeof why)) {
        diag_error(l->d, l->path, node_mark(node[E_SHAPE]),
                   "shape of %s: %s", op->name, why);
    }
    if (op != NULL && e.best[0] != '\0' &&
        !knobs_fit(op, e.best, why, sizeof why)) {
        diag_error(l->d, l->path, node_mark(node[E_BEST]),
                   "best does not fit %s: %s", op->name, why);
    }
    if (node[E_TRIED] != NULL) {
        load_tried(l, &e, op, node[E_TRIED]);
    }
    check_best_tried(l, &e, node[E_BEST], before);
    if (l->d->count == before) {
        /* Entries are found by their key: one that repeats an earlier
         * entry's would be merged into it or shadowed, silently. */
        struct tune_entry *twice = tunedb_find(db, e.device, e.driver, e.op,
                                               e.dtype, e.shape, e.rows);
        if (twice != NULL) {
            diag_error(l->d, l->path, node_mark(m), "duplicate entry: the "
                       "device, driver, op, dtype, shape and rows of the "
                       "entry at line %d",
                       l->entry_line[twice - db->entry]);
        } else {
            tunedb_add(db, &e);
            l->entry_line = grow(l->entry_line, &l->cap_entry_line, db->n,
                                 sizeof *l->entry_line);
            l->entry_line[db->n - 1] = node_mark(m).line;
        }
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
