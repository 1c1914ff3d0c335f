/* emit_texts.c - the kernel texts of one NAME.c, each stored once, and
 * the lists of them that make the variants' sources: the variants of a
 * kernel render largely the same templates (storage, common parts), so
 * their sources are cut where one template's text gives way to another's
 * and the pieces are shared. The pieces are stored without comments and
 * indentation (NAME.cl keeps them, for the reader): the stub concatenates
 * a variant's pieces, so its program text is what the renderer made, line
 * for line, less comments and blanks. */
#include "emit_texts.h"

#include <stdio.h>
#include <string.h>

#include "emit_text.h"
#include "stub_names.h"

_Static_assert(EMIT_MAX_TEXTS ==
                   SPECL_MAX_VARIANTS * (2 * RENDER_MAX_INCLUDES + 2),
               "each variant's parameters and pieces fit");

void emit_texts_init(struct emit_texts *t)
{
    t->n = 0;
}

void emit_texts_free(struct emit_texts *t)
{
    for (int i = 0; i < t->n; i++) {
        buf_free(&t->text[i]);
    }
    t->n = 0;
}

/* The index in T of the N bytes at TEXT: an earlier piece that is the
 * same, else a new one, its array (commented with FROM) appended to DEFS;
 * -1 with a message in ERR when T is full. */
static int text_index(const char *name, struct emit_texts *t,
                      const char *text, size_t n, const char *from,
                      struct buf *defs, char *err, size_t errsize)
{
    for (int i = 0; i < t->n; i++) {
        if (t->text[i].len == n && memcmp(t->text[i].data, text, n) == 0) {
            return i;
        }
    }
    if (t->n == EMIT_MAX_TEXTS) {
        snprintf(err, errsize, "%s: more than %d distinct kernel texts",
                 name, EMIT_MAX_TEXTS);
        return -1;
    }
    int added = t->n++;
    buf_init(&t->text[added]);
    buf_add(&t->text[added], text, n);
    buf_puts(defs, "/* ");
    comment_text(defs, from);
    buf_printf(defs, " */\nstatic const char *const %s_text%d[] = {\n",
               name, added);
    source_lines(&t->text[added], defs);
    buf_puts(defs, "NULL\n};\n\n");
    return added;
}

/* Appends the N bytes at TEXT (from FROM), less their comments and
 * indentation, to LIST as a reference to its piece of T; does nothing
 * when no bytes remain. */
static int add_piece(const char *name, struct emit_texts *t, const char *text,
                     size_t n, const char *from, struct buf *defs,
                     struct buf *list, char *err, size_t errsize)
{
    struct buf stripped, code;
    buf_init(&stripped);
    buf_init(&code);
    strip_comments(text, n, &stripped);
    compact_blanks(buf_str(&stripped), stripped.len, &code);
    buf_free(&stripped);
    int i = code.len == 0 ? -2
                          : text_index(name, t, buf_str(&code), code.len,
                                       from, defs, err, errsize);
    buf_free(&code);
    if (i == -2) {
        return 0;
    }
    if (i < 0) {
        return -1;
    }
    char ref[EMIT_NAME_MAX + 24];
    snprintf(ref, sizeof ref, "%s_text%d,", name, i);
    buf_printf(list, "    %-*s /* ", (int)strlen(name) + 9, ref);
    comment_text(list, from);
    buf_puts(list, " */\n");
    return 0;
}

int emit_source_texts(const char *name, struct emit_texts *t,
                      const struct buf *prelude, const char *first,
                      const struct buf *kernels,
                      const struct render_cuts *cuts, struct buf *defs,
                      struct buf *list, char *err, size_t errsize)
{
    if (add_piece(name, t, buf_str(prelude), prelude->len, first, defs, list,
                  err, errsize) < 0) {
        return -1;
    }
    const char *text = buf_str(kernels);
    size_t at = 0;
    const char *from = "the kernel list";
    for (int c = 0; c <= cuts->n; c++) {
        size_t end = c < cuts->n ? cuts->cut[c].at : kernels->len;
        if (add_piece(name, t, text + at, end - at, from, defs, list, err,
                      errsize) < 0) {
            return -1;
        }
        if (c < cuts->n) {
            at = end;
            from = cuts->cut[c].name ? cuts->cut[c].name : "the kernel list";
        }
    }
    return 0;
}
