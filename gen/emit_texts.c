/* emit_texts.c - the kernel texts of one NAME.c, each stored once, and
 * the lists of them that make the variants' sources: the variants of a
 * kernel render largely the same templates (storage, common parts), so
 * their sources are cut where one template's text gives way to another's
 * and the pieces are shared; pieces that every variant holding one holds
 * together, one after the other, are stored as one text. The texts are
 * stored without comments and indentation (NAME.cl keeps them, for the
 * reader), their lines joined where C needs no break: the stub
 * concatenates a variant's texts, so its program is what the renderer
 * made, token for token and directive for directive. */
#include "emit_texts.h"

#include <stdio.h>
#include <string.h>

#include "emit_text.h"
#include "stub_names.h"

_Static_assert(EMIT_MAX_TEXTS == SPECL_MAX_VARIANTS * EMIT_MAX_PIECES,
               "each variant's pieces fit");

void emit_texts_init(struct emit_texts *t)
{
    memset(t, 0, sizeof *t);
}

void emit_texts_free(struct emit_texts *t)
{
    for (int i = 0; i < t->n; i++) {
        buf_free(&t->text[i]);
    }
    t->n = 0;
}

/* Appends the N bytes at TEXT (from FROM), less their comments and
 * blanks, to variant V's pieces: an earlier piece that is the same, else
 * a new one; nothing when no bytes remain. */
static int add_piece(struct emit_texts *t, const char *name, int v,
                     const char *text, size_t n, const char *from, char *err,
                     size_t errsize)
{
    struct buf stripped, code;
    buf_init(&stripped);
    buf_init(&code);
    strip_comments(text, n, &stripped);
    compact_blanks(buf_str(&stripped), stripped.len, &code);
    buf_free(&stripped);
    int i = 0;
    while (i < t->n && !(t->text[i].len == code.len &&
                         memcmp(t->text[i].data, code.data, code.len) == 0)) {
        i++;
    }
    int rc = 0;
    if (code.len == 0) {
        /* nothing to add */
    } else if (t->n_piece[v] == EMIT_MAX_PIECES ||
               (i == t->n && t->n == EMIT_MAX_TEXTS)) {
        snprintf(err, errsize, "%s: variant %d: more than %d kernel texts",
                 name, v,
                 t->n_piece[v] == EMIT_MAX_PIECES ? EMIT_MAX_PIECES
                                                   : EMIT_MAX_TEXTS);
        rc = -1;
    } else {
        if (i == t->n) {
            t->text[t->n] = code;
            buf_init(&code);
            snprintf(t->from[t->n], EMIT_FROM_MAX, "%s", from);
            t->n++;
        }
        t->piece[v][t->n_piece[v]++] = i;
    }
    buf_free(&code);
    return rc;
}

int emit_texts_add(struct emit_texts *t, const char *name, int v,
                   const struct buf *prelude,
                   const char *first, const struct buf *kernels,
                   const struct render_cuts *cuts, char *err,
                   size_t errsize)
{
    if (add_piece(t, name, v, buf_str(prelude), prelude->len, first, err,
                  errsize) < 0) {
        return -1;
    }
    const char *text = buf_str(kernels);
    size_t at = 0;
    const char *from = "the kernel list";
    for (int c = 0; c <= cuts->n; c++) {
        size_t end = c < cuts->n ? cuts->cut[c].at : kernels->len;
        if (add_piece(t, name, v, text + at, end - at, from, err,
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

/* Sets NEXT[I] to the piece every occurrence of piece I is followed by
 * in the N variants' lists, and PREV[I] to the one every occurrence
 * comes after: -1 where they differ, or at a list's end or start. */
static void neighbours(const struct emit_texts *t, int n, int *next,
                       int *prev)
{
    for (int i = 0; i < t->n; i++) {
        next[i] = prev[i] = -2; /* not met yet */
    }
    for (int v = 0; v < n; v++) {
        for (int k = 0; k < t->n_piece[v]; k++) {
            int i = t->piece[v][k];
            int after = k + 1 < t->n_piece[v] ? t->piece[v][k + 1] : -1;
            int before = k > 0 ? t->piece[v][k - 1] : -1;
            next[i] = next[i] == -2 || next[i] == after ? after : -1;
            prev[i] = prev[i] == -2 || prev[i] == before ? before : -1;
        }
    }
}

/* The comment of the text whose pieces run from FIRST to last[FIRST]
 * along NEXT: where they come from, a repeat named once. */
static void text_from(const struct emit_texts *t, int first,
                      const int *next, struct buf *out)
{
    for (int i = first, k = 0; i >= 0; i = i == t->last[first] ? -1 : next[i]) {
        int seen = 0;
        for (int j = first; j != i; j = next[j]) {
            seen |= strcmp(t->from[j], t->from[i]) == 0;
        }
        if (!seen) {
            buf_puts(out, k++ > 0 ? ", " : "");
            comment_text(out, t->from[i]);
        }
    }
}

void emit_texts_write(const char *name, struct emit_texts *t, int n_variants,
                      struct buf *defs)
{
    int next[EMIT_MAX_TEXTS], prev[EMIT_MAX_TEXTS];
    neighbours(t, n_variants, next, prev);
    /* Piece I continues the text of the one before when each always
     * comes with the other. */
    for (int i = 0; i < t->n; i++) {
        int p = prev[i];
        t->stored[i] = p >= 0 && p != i && next[p] == i ? -1 : 0;
    }
    int stored = 0;
    for (int v = 0; v < n_variants; v++) {
        for (int k = 0; k < t->n_piece[v]; k++) {
            int first = t->piece[v][k];
            if (t->stored[first] != 0) {
                continue; /* continues a text, or written */
            }
            t->stored[first] = stored + 1; /* 1 + its index, for now */
            struct buf text, flowed;
            buf_init(&text);
            buf_init(&flowed);
            int i = first;
            for (;;) {
                buf_add(&text, t->text[i].data, t->text[i].len);
                t->last[first] = i;
                int n = next[i];
                if (n < 0 || n == first || t->stored[n] != -1) {
                    break;
                }
                i = n;
            }
            buf_puts(defs, "/* ");
            text_from(t, first, next, defs);
            buf_printf(defs, " */\nstatic const char *const %s_text%d[] = {\n",
                       name, stored);
            reflow_lines(text.data, text.len, SOURCE_FLOW_MAX, &flowed);
            source_lines(&flowed, defs);
            buf_puts(defs, "NULL\n};\n\n");
            buf_free(&text);
            buf_free(&flowed);
            stored++;
        }
    }
    for (int i = 0; i < t->n; i++) {
        t->stored[i] -= t->stored[i] > 0;
    }
}

void emit_texts_list(const char *name, const struct emit_texts *t, int v,
                     struct buf *list)
{
    for (int k = 0; k < t->n_piece[v]; k++) {
        int first = t->piece[v][k];
        if (t->stored[first] >= 0) {
            buf_printf(list, "%s_text%d, ", name, t->stored[first]);
        }
    }
}
