/* render.c - template renderer: named holes and inlined includes.
 *
 * Kernel templates are plain OpenCL C and use no holes: a #define prelude
 * specialises them. Host-stub templates have `@name@` holes where macros
 * cannot shape the code (argument lists, tables) and sections between
 * `@if name@` and `@endif@` lines that only some stubs need. Includes are
 * inlined so that every emitted file stands alone. */
#include "render.h"

#include <stdio.h>
#include <string.h>

const char *template_text(const char *name)
{
    for (int i = 0; template_files[i].name != NULL; i++) {
        if (strcmp(template_files[i].name, name) == 0) {
            return template_files[i].text;
        }
    }
    return NULL;
}

struct render_state {
    const struct hole *holes;
    const char *included[RENDER_MAX_INCLUDES];
    int n_included;
    const char *current; /* the template being rendered; NULL: the top */
    struct render_cuts *cuts; /* NULL: not asked for */
    size_t base; /* OUT's length before the render */
    int depth; /* sections open */
    int kept[RENDER_MAX_DEPTH]; /* per open section: its lines are kept */
    int cond[RENDER_MAX_DEPTH]; /* per open section: its condition held */
    char *err;
    size_t errsize;
};

static int render_text(struct render_state *st, struct buf *out,
                       const char *text);
static int render_text_line(struct render_state *st, struct buf *out,
                            const char *p, const char *end);

/* Notes that the text of template NAME begins or resumes at the end of
 * OUT (at most two cuts per include, which RENDER_MAX_INCLUDES bounds). */
static void add_cut(struct render_state *st, const struct buf *out,
                    const char *name)
{
    st->current = name;
    if (st->cuts != NULL) {
        struct render_cut *c = &st->cuts->cut[st->cuts->n++];
        c->at = out->len - st->base;
        c->name = name;
    }
}

/* If LINE (up to END) is `#include "X"` with X a template, renders X and
 * returns 1; returns 0 for any other line; -1 on error. */
static int try_include(struct render_state *st, struct buf *out,
                       const char *line, const char *end)
{
    const char *p = line;
    while (p < end && (*p == ' ' || *p == '\t')) {
        p++;
    }
    static const char directive[] = "#include \"";
    size_t dl = sizeof directive - 1;
    if ((size_t)(end - p) < dl || memcmp(p, directive, dl) != 0) {
        return 0;
    }
    p += dl;
    const char *q = memchr(p, '"', (size_t)(end - p));
    if (q == NULL || q - p >= 64) {
        return 0;
    }
    /* The name may hold holes: `#include "storage_@dtype@.cl"`. */
    struct buf named;
    buf_init(&named);
    if (render_text_line(st, &named, p, q) < 0) {
        buf_free(&named);
        return -1;
    }
    char name[64];
    snprintf(name, sizeof name, "%s", buf_str(&named));
    buf_free(&named);
    const struct template_file *t = NULL;
    for (int i = 0; template_files[i].name != NULL; i++) {
        if (strcmp(template_files[i].name, name) == 0) {
            t = &template_files[i];
        }
    }
    if (t == NULL) {
        /* Not one of ours (a system header): keep the line. */
        return 0;
    }
    for (int i = 0; i < st->n_included; i++) {
        if (st->included[i] == t->name) {
            return 1;
        }
    }
    if (st->n_included == RENDER_MAX_INCLUDES) {
        snprintf(st->err, st->errsize, "too many included templates at %s",
                 name);
        return -1;
    }
    st->included[st->n_included++] = t->name;
    const char *includer = st->current;
    add_cut(st, out, t->name);
    if (render_text(st, out, t->text) < 0) {
        return -1;
    }
    add_cut(st, out, includer);
    return 1;
}

/* The value of hole NAME (LEN bytes), or NULL with a message in ERR. */
static const char *hole_value(struct render_state *st, const char *name,
                              size_t len)
{
    for (const struct hole *h = st->holes; h && h->name; h++) {
        if (strlen(h->name) == len && memcmp(h->name, name, len) == 0) {
            return h->value;
        }
    }
    snprintf(st->err, st->errsize, "template hole @%.*s@ has no value",
             (int)len, name);
    return NULL;
}

static int fill_hole(struct render_state *st, struct buf *out,
                     const char *name, size_t len)
{
    const char *value = hole_value(st, name, len);
    if (value == NULL) {
        return -1;
    }
    buf_puts(out, value);
    return 0;
}

/* Whether the lines at the current depth are kept: every open section's
 * are. */
static int section_kept(const struct render_state *st)
{
    return st->depth == 0 || st->kept[st->depth - 1];
}

/* If LINE (up to END) is `@if NAME@`, `@else@` or `@endif@`, opens,
 * turns or closes a section and returns 1; 0 for any other line; -1 on
 * error. A section's lines are kept when NAME's value is neither empty
 * nor "0" (after @else@: when it is). */
static int try_section(struct render_state *st, const char *line,
                       const char *end)
{
    while (line < end && (*line == ' ' || *line == '\t')) {
        line++;
    }
    while (end > line && (end[-1] == '\n' || end[-1] == ' ')) {
        end--;
    }
    size_t n = (size_t)(end - line);
    if (n < 2 || line[0] != '@' || end[-1] != '@') {
        return 0;
    }
    if (n > 5 && memcmp(line, "@if ", 4) == 0) {
        const char *value = hole_value(st, line + 4, n - 5);
        if (value == NULL) {
            return -1;
        }
        if (st->depth == RENDER_MAX_DEPTH) {
            snprintf(st->err, st->errsize, "sections nested too deep");
            return -1;
        }
        int cond = value[0] != '\0' && strcmp(value, "0") != 0;
        st->kept[st->depth] = section_kept(st) && cond;
        st->cond[st->depth++] = cond;
        return 1;
    }
    int is_else = n == 6 && memcmp(line, "@else@", 6) == 0;
    int is_endif = n == 7 && memcmp(line, "@endif@", 7) == 0;
    if (!is_else && !is_endif) {
        return 0;
    }
    if (st->depth == 0) {
        snprintf(st->err, st->errsize, "%s without @if@",
                 is_else ? "@else@" : "@endif@");
        return -1;
    }
    if (is_endif) {
        st->depth--;
        return 1;
    }
    st->depth--;
    st->kept[st->depth] = section_kept(st) && !st->cond[st->depth];
    st->cond[st->depth] = !st->cond[st->depth];
    st->depth++;
    return 1;
}

static int is_hole_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           (c >= '0' && c <= '9');
}

/* Appends [P, END) to OUT with its holes filled. */
static int render_text_line(struct render_state *st, struct buf *out,
                            const char *p, const char *end)
{
    while (p < end) {
        const char *at = memchr(p, '@', (size_t)(end - p));
        if (at == NULL) {
            buf_add(out, p, (size_t)(end - p));
            break;
        }
        const char *close = at + 1;
        while (close < end && is_hole_char(*close)) {
            close++;
        }
        if (close < end && *close == '@' && close > at + 1) {
            buf_add(out, p, (size_t)(at - p));
            if (fill_hole(st, out, at + 1, (size_t)(close - at - 1)) < 0) {
                return -1;
            }
            p = close + 1;
        } else {
            buf_add(out, p, (size_t)(at + 1 - p));
            p = at + 1;
        }
    }
    return 0;
}

static int render_text(struct render_state *st, struct buf *out,
                       const char *text)
{
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        const char *next = end ? end + 1 : line + strlen(line);
        if (end == NULL) {
            end = next;
        }
        int section = try_section(st, line, end);
        if (section != 0 || !section_kept(st)) {
            if (section < 0) {
                return -1;
            }
            line = next;
            continue;
        }
        int inc = try_include(st, out, line, end);
        if (inc < 0) {
            return -1;
        }
        if (inc == 0 && render_text_line(st, out, line, next) < 0) {
            return -1;
        }
        line = next;
    }
    return 0;
}

int render_cut(struct buf *out, const char *text, const struct hole *holes,
               struct render_cuts *cuts, char *err, size_t errsize)
{
    struct render_state st;
    memset(&st, 0, sizeof st);
    st.holes = holes;
    st.err = err;
    st.errsize = errsize;
    st.cuts = cuts;
    st.base = out->len;
    if (cuts != NULL) {
        cuts->n = 0;
    }
    if (render_text(&st, out, text) < 0) {
        return -1;
    }
    if (st.depth != 0) {
        snprintf(err, errsize, "@if@ without @endif@");
        return -1;
    }
    return 0;
}

int render(struct buf *out, const char *text, const struct hole *holes,
           char *err, size_t errsize)
{
    return render_cut(out, text, holes, NULL, err, errsize);
}
