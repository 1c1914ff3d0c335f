/* tunedb_save.c - a tuning database written as YAML (libyaml's emitter):
 * every text double-quoted and valid UTF-8, so that it loads back the
 * same; the file replaced atomically. */
#include "tunedb.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "buf.h"
#include "files.h"

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

/* How much of the space the search that stored E covered, when known. */
static void emit_search(struct yaml_out *o, const struct tune_entry *e)
{
    if (e->candidates <= 0) {
        return;
    }
    emit_plain(o, "searched", "%ld", e->searched);
    emit_plain(o, "candidates", "%ld", e->candidates);
    emit_plain(o, "complete", "%s",
               e->searched == e->candidates ? "true" : "false");
    if (e->stopped[0] != '\0') {
        emit_text(o, "stopped", e->stopped);
    }
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
    if (e->retimed_reps > 0 && e->best_p90_us > 0) {
        emit_plain(o, "time_p10_us", "%.2f", e->best_p10_us);
        emit_plain(o, "time_p90_us", "%.2f", e->best_p90_us);
    }
    emit_plain(o, "gbs", "%.4g", e->best_gbs);
    emit_plain(o, "gflops", "%.4g", e->best_gflops);
    emit_plain(o, "default_us", "%.2f", e->default_us);
    if (e->default_p90_us > 0) {
        emit_plain(o, "default_p10_us", "%.2f", e->default_p10_us);
        emit_plain(o, "default_p90_us", "%.2f", e->default_p90_us);
    }
    if (e->retimed_reps > 0) {
        emit_plain(o, "retimed_reps", "%d", e->retimed_reps);
    }
    emit_search(o, e);
    if (e->upto_next > 0) {
        emit_plain(o, "upto_rows", "%ld", e->upto_rows);
        emit_plain(o, "next_from", "%ld", e->next_from);
        emit_plain(o, "upto_next", "%ld", e->upto_next);
        emit_text(o, "upto_with", e->upto_with);
    }
    emit_text(o, "specl", e->version);
    emit_sequence(o, "tried");
    for (int t = 0; t < e->n_tried; t++) {
        /* One line per tried config: a flow mapping. */
        emit_mapping(o, YAML_FLOW_MAPPING_STYLE);
        emit_text(o, "knobs", e->tried[t].knobs);
        emit_plain(o, "us", "%.2f", e->tried[t].us);
        /* A database may leave status out (read as ""), which the
         * reader takes only so: written back empty, it would be refused. */
        if (e->tried[t].status[0] != '\0') {
            emit_text(o, "status", e->tried[t].status);
        }
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
