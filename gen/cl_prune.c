/* cl_prune.c - see cl_prune.h. */
#include "cl_prune.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "clsource.h"
#include "emit_text.h"
#include "spec_strmap.h"

/* ---- names ---------------------------------------------------------- */

/* M[NAME] += BY. */
static void name_add(struct strmap *m, const char *name, size_t len, int by)
{
    int had = 0;
    strmap_get(m, name, len, &had);
    strmap_put(m, name, len, had + by);
}

static int name_count(const struct strmap *m, const char *name, size_t len)
{
    int n = 0;
    strmap_get(m, name, len, &n);
    return n;
}

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static size_t skip_blanks(const char *t, size_t n, size_t p)
{
    while (p < n && (t[p] == ' ' || t[p] == '\t')) {
        p++;
    }
    return p;
}

/* Counts in USES the names of the N bytes of code at T (not of its
 * comments or quoted text). A number's letters (0x1fu, 2.0f) are not
 * names. */
static void count_uses(struct strmap *uses, const char *t, size_t n)
{
    for (size_t p = 0; p < n;) {
        int comment;
        size_t k = skip_length(t + p, t + n, &comment);
        if (k > 0) {
            p += k;
        } else if (is_name_char(t[p])) {
            size_t e = p;
            while (e < n && is_name_char(t[e])) {
                e++;
            }
            if (!isdigit((unsigned char)t[p])) {
                name_add(uses, t + p, e - p, 1);
            }
            p = e;
        } else {
            p++;
        }
    }
}

/* The names beside a ## in the N bytes of code at T, into PASTES (1 for
 * a name before one, 2 after, 3 both): a ## may paste a defined name
 * together from them. */
static void count_pastes(struct strmap *pastes, const char *t, size_t n)
{
    for (size_t p = 0; p + 1 < n;) {
        int comment;
        size_t k = skip_length(t + p, t + n, &comment);
        if (k > 0) {
            p += k;
            continue;
        }
        if (t[p] != '#' || t[p + 1] != '#') {
            p++;
            continue;
        }
        size_t b = p, a = p + 2;
        while (b > 0 && (t[b - 1] == ' ' || t[b - 1] == '\t')) {
            b--;
        }
        size_t bs = b;
        while (bs > 0 && is_name_char(t[bs - 1])) {
            bs--;
        }
        a = skip_blanks(t, n, a);
        size_t ae = a;
        while (ae < n && is_name_char(t[ae])) {
            ae++;
        }
        if (b > bs) {
            int side = name_count(pastes, t + bs, b - bs);
            strmap_put(pastes, t + bs, b - bs, side | 1);
        }
        if (ae > a) {
            int side = name_count(pastes, t + a, ae - a);
            strmap_put(pastes, t + a, ae - a, side | 2);
        }
        p += 2;
    }
}

/* Whether NAME begins with a name before a ## of PASTES or ends with
 * one after. */
static int maybe_pasted(const struct strmap *pastes, const char *name,
                        size_t len)
{
    for (size_t i = 0; i < pastes->cap; i++) {
        const char *k = pastes->key[i];
        size_t kl = k != NULL ? strlen(k) : 0;
        if (k != NULL && kl <= len &&
            (((pastes->value[i] & 1) && memcmp(name, k, kl) == 0) ||
             ((pastes->value[i] & 2) &&
              memcmp(name + len - kl, k, kl) == 0))) {
            return 1;
        }
    }
    return 0;
}

/* ---- definitions ---------------------------------------------------- */

/* A definition that may go: bytes [start, end) of its text (with the
 * comment above it), and its name. */
struct definition {
    size_t start, end;
    const char *name;
    size_t len;
};

struct definitions {
    struct definition *d;
    size_t n, cap;
};

static void add_definition(struct definitions *ds, size_t start, size_t end,
                           const char *name, size_t len)
{
    if (ds->n == ds->cap) {
        size_t cap = ds->cap ? 2 * ds->cap : 64;
        struct definition *grown = realloc(ds->d, cap * sizeof *grown);
        if (grown == NULL) {
            return; /* out of memory: fewer removed */
        }
        ds->d = grown;
        ds->cap = cap;
    }
    ds->d[ds->n++] = (struct definition){start, end, name, len};
}

/* The end of the line of T (N bytes) at P, past its newline and the
 * lines a backslash continues it into. */
static size_t line_end(const char *t, size_t n, size_t p)
{
    for (;;) {
        while (p < n && t[p] != '\n') {
            p++;
        }
        int continued = p > 0 && t[p - 1] == '\\';
        p += p < n;
        if (!continued || p >= n) {
            return p;
        }
    }
}

static int line_is_blank(const char *t, size_t n, size_t p)
{
    p = skip_blanks(t, n, p);
    return p >= n || t[p] == '\n';
}

/* Where the definition at line START begins with the block comment that
 * ends on the line above it, when that comment begins a line. */
static size_t with_comment(const char *t, size_t start)
{
    if (start == 0 || t[start - 1] != '\n') {
        return start;
    }
    size_t e = start - 1;
    while (e > 0 && (t[e - 1] == ' ' || t[e - 1] == '\t')) {
        e--;
    }
    if (e < 2 || t[e - 1] != '/' || t[e - 2] != '*') {
        return start;
    }
    size_t b = e - 2;
    while (b >= 2 && !(t[b - 2] == '/' && t[b - 1] == '*')) {
        b--;
    }
    if (b < 2) {
        return start;
    }
    b -= 2;
    size_t l = b;
    while (l > 0 && (t[l - 1] == ' ' || t[l - 1] == '\t')) {
        l--;
    }
    return l == 0 || t[l - 1] == '\n' ? l : start;
}

/* The end of the function whose body's { is at OPEN in T (N bytes),
 * past its line; 0 when the braces do not match or a directive other
 * than #pragma lies inside (its braces may differ by branch). */
static size_t function_end(const char *t, size_t n, size_t open)
{
    int depth = 0;
    for (size_t p = open; p < n;) {
        int comment;
        size_t k = skip_length(t + p, t + n, &comment);
        if (k > 0) {
            p += k;
            continue;
        }
        if (t[p] == '\n') {
            size_t q = skip_blanks(t, n, p + 1);
            if (q < n && t[q] == '#') {
                q = skip_blanks(t, n, q + 1);
                if (n - q < 6 || memcmp(t + q, "pragma", 6) != 0) {
                    return 0;
                }
            }
        } else if (t[p] == '{') {
            depth++;
        } else if (t[p] == '}' && --depth == 0) {
            return line_end(t, n, p);
        }
        p++;
    }
    return 0;
}

/* The inline function or macro defined at line START of T (N bytes), at
 * the outer level, into DS; returns where the next line begins. */
static size_t definition_at(const char *t, size_t n, size_t start,
                            struct definitions *ds)
{
    size_t p = skip_blanks(t, n, start);
    size_t end = line_end(t, n, start);
    if (p < n && t[p] == '#') {
        p = skip_blanks(t, n, p + 1);
        if (n - p > 6 && memcmp(t + p, "define", 6) == 0 &&
            (t[p + 6] == ' ' || t[p + 6] == '\t')) {
            size_t s = skip_blanks(t, n, p + 6), e = s;
            while (e < n && is_name_char(t[e])) {
                e++;
            }
            if (e > s) {
                add_definition(ds, with_comment(t, start), end, t + s, e - s);
            }
        }
        return end;
    }
    if (n - p < 7 || memcmp(t + p, "inline", 6) != 0 ||
        is_name_char(t[p + 6])) {
        return end;
    }
    /* The name before the first (, then the body's { (a ; first: a
     * declaration). */
    size_t paren = p;
    while (paren < n && t[paren] != '(' && t[paren] != ';' &&
           t[paren] != '{') {
        paren++;
    }
    if (paren >= n || t[paren] != '(') {
        return end;
    }
    size_t e = paren;
    while (e > p && (t[e - 1] == ' ' || t[e - 1] == '\t')) {
        e--;
    }
    size_t s = e;
    while (s > p && is_name_char(t[s - 1])) {
        s--;
    }
    size_t open = paren;
    for (; open < n && t[open] != '{' && t[open] != ';'; open++) {
        int comment;
        size_t k = skip_length(t + open, t + n, &comment);
        open += k > 0 ? k - 1 : 0;
    }
    size_t fend = open < n && t[open] == '{' ? function_end(t, n, open) : 0;
    if (s == e || fend == 0) {
        return end;
    }
    add_definition(ds, with_comment(t, start), fend, t + s, e - s);
    return fend;
}

/* The definitions at the outer level of the N bytes of T, in order.
 * Braces are counted outside comments, quoted text and directives; the
 * branches of a conditional are taken to leave the count as its first
 * does. */
static void find_definitions(const char *t, size_t n, struct definitions *ds)
{
    enum { MAX_NEST = 64 };
    int depth = 0, nest = 0, at_if[MAX_NEST], after[MAX_NEST];
    size_t p = 0;
    while (p < n) {
        if (p == 0 || t[p - 1] == '\n') {
            size_t q = skip_blanks(t, n, p);
            if (q < n && t[q] == '#') {
                q = skip_blanks(t, n, q + 1);
                if (n - q >= 2 && memcmp(t + q, "if", 2) == 0) {
                    if (nest < MAX_NEST) {
                        at_if[nest] = depth;
                        after[nest] = -1;
                    }
                    nest++;
                } else if (n - q >= 4 && (memcmp(t + q, "else", 4) == 0 ||
                                          memcmp(t + q, "elif", 4) == 0)) {
                    if (nest > 0 && nest <= MAX_NEST) {
                        after[nest - 1] =
                            after[nest - 1] < 0 ? depth : after[nest - 1];
                        depth = at_if[nest - 1];
                    }
                } else if (n - q >= 5 && memcmp(t + q, "endif", 5) == 0) {
                    if (nest > 0 && nest <= MAX_NEST &&
                        after[nest - 1] >= 0) {
                        depth = after[nest - 1];
                    }
                    nest -= nest > 0;
                }
                p = depth == 0 ? definition_at(t, n, p, ds)
                               : line_end(t, n, p);
                continue;
            }
            if (depth == 0) {
                size_t had = ds->n;
                size_t next = definition_at(t, n, p, ds);
                if (ds->n > had) {
                    p = next; /* a function, whole */
                    continue;
                }
            }
        }
        int comment;
        size_t k = skip_length(t + p, t + n, &comment);
        if (k > 0) {
            p += k;
            continue;
        }
        depth += t[p] == '{';
        depth -= t[p] == '}' && depth > 0;
        p++;
    }
}

/* ---- removal -------------------------------------------------------- */

/* TEXT less the definitions of DS marked to go (a NULL name), each with
 * the blank line after it where one is left before it; CUTS follow. */
static void remove_ranges(struct buf *text, const struct definitions *ds,
                          struct render_cuts *cuts)
{
    const char *t = buf_str(text);
    size_t n = text->len, at = 0;
    struct buf out;
    buf_init(&out);
    size_t cut_at[2 * RENDER_MAX_INCLUDES];
    int c = 0, n_cuts = cuts != NULL ? cuts->n : 0;
    for (size_t i = 0; i <= ds->n; i++) {
        size_t start = i < ds->n ? ds->d[i].start : n;
        size_t end = i < ds->n ? ds->d[i].end : n;
        if (i < ds->n && ds->d[i].name != NULL) {
            continue; /* kept */
        }
        if (i < ds->n && end < n && line_is_blank(t, n, end) &&
            (start == 0 || (start >= 2 && t[start - 2] == '\n'))) {
            end = line_end(t, n, end);
        }
        for (; c < n_cuts && cuts->cut[c].at < start; c++) {
            cut_at[c] = out.len + (cuts->cut[c].at - at);
        }
        buf_add(&out, t + at, start - at);
        for (; c < n_cuts && cuts->cut[c].at < end; c++) {
            cut_at[c] = out.len;
        }
        at = end;
    }
    for (; c < n_cuts; c++) {
        cut_at[c] = out.len;
    }
    for (c = 0; c < n_cuts; c++) {
        cuts->cut[c].at = cut_at[c];
    }
    buf_free(text);
    *text = out;
}

void cl_prune(struct buf *texts, struct render_cuts *cuts, int n)
{
    struct definitions *ds = calloc((size_t)(n > 0 ? n : 1), sizeof *ds);
    if (ds == NULL) {
        return;
    }
    for (int removed = 1; removed;) {
        struct strmap uses = {0}, defs = {0}, pastes = {0};
        removed = 0;
        for (int v = 0; v < n; v++) {
            ds[v].n = 0;
            count_uses(&uses, buf_str(&texts[v]), texts[v].len);
            count_pastes(&pastes, buf_str(&texts[v]), texts[v].len);
            find_definitions(buf_str(&texts[v]), texts[v].len, &ds[v]);
            for (size_t i = 0; i < ds[v].n; i++) {
                name_add(&defs, ds[v].d[i].name, ds[v].d[i].len, 1);
            }
        }
        /* A name whose every use is one of its definitions is used by
         * no text: its definitions go (a NULL name marks them). */
        for (int v = 0; v < n; v++) {
            for (size_t i = 0; i < ds[v].n; i++) {
                struct definition *d = &ds[v].d[i];
                if (name_count(&uses, d->name, d->len) ==
                        name_count(&defs, d->name, d->len) &&
                    !maybe_pasted(&pastes, d->name, d->len)) {
                    d->name = NULL;
                    removed = 1;
                }
            }
        }
        strmap_free(&uses);
        strmap_free(&defs);
        strmap_free(&pastes);
        for (int v = 0; removed && v < n; v++) {
            remove_ranges(&texts[v], &ds[v], cuts != NULL ? &cuts[v] : NULL);
        }
    }
    for (int v = 0; v < n; v++) {
        free(ds[v].d);
    }
    free(ds);
}

void cl_prelude_used(const struct plan *plan, const char *text, size_t n,
                     struct buf *out)
{
    struct plan *kept = malloc(sizeof *kept);
    if (kept == NULL) {
        cl_prelude(plan, out);
        return;
    }
    struct strmap uses = {0};
    count_uses(&uses, text, n);
    *kept = *plan;
    kept->n_define = 0;
    for (int i = 0; i < plan->n_define; i++) {
        const char *name = plan->define[i].name;
        if (name_count(&uses, name, strlen(name)) > 0) {
            kept->define[kept->n_define++] = plan->define[i];
        }
    }
    cl_prelude(kept, out);
    strmap_free(&uses);
    free(kept);
}
