/* c_layout.c - the emitted C's lines laid out again (c_layout.h). One
 * pass over the lines, carrying what each leaves open (a block comment,
 * parentheses and braces with the columns they stand at) into the next.
 * Only blanks and line breaks between tokens change: the stub compiles
 * to what its template says whatever the kernel's name. */
#include "c_layout.h"

#include <string.h>

/* Open parentheses and braces tracked, at most (deeper ones are counted
 * but not aligned under). */
#define MAX_OPEN 64
/* Break points remembered on one line, at most. */
#define MAX_BREAKS 64
/* An opener past this column takes its elements on the lines below it
 * when a line breaks inside it, not aligned under itself. */
#define C_LAYOUT_DEEP 48

/* A parenthesis, bracket or brace still open: its column; whether it
 * ended its line (then the lines below it keep their own indentation);
 * how far its line moved (LINE_SHIFT) and how far the first token of its
 * element that is open now moved (ELEM_SHIFT), in columns, from where
 * they stood in the text laid out: what the lines that continue them
 * move by. */
struct opener {
    char c;
    int init; /* a brace of an initialiser (after '=', ',' or '{') */
    int col;
    int hanging;
    int line_shift;
    int elem_shift;
    int hang_indent; /* -1, or the indentation a break after it set */
};

/* What the lines so far leave open. */
struct layout {
    int in_comment;   /* a block comment */
    int in_directive; /* a preprocessor line ended by a backslash */
    int depth;
    struct opener open[MAX_OPEN];
    char last_code; /* the last code line's last character */
};

/* A place to break a code line: before byte AT, the line that follows
 * starting at column CONT. */
struct line_break {
    int at;
    int cont;
    int opener; /* the column of the opener of the same line it aligns
                   under; -1: none */
};

/* What scan_line finds on one line. */
struct line_scan {
    struct line_break brk[MAX_BREAKS];
    int n_brk;
    int comment_at; /* where a comment that ends the line starts, after
                       code on it; -1: none */
    int opened_at;  /* the column of the last opener the line leaves open,
                       with code after it; -1: none */
    int paren_at;   /* the column of its first '(' with code after it; -1:
                       none */
};

static int leading_blanks(const char *s, int n)
{
    int i = 0;
    while (i < n && s[i] == ' ') {
        i++;
    }
    return i;
}

static int is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

/* Carries ST over the N bytes of line S as it will be written: its first
 * token SHIFT columns right of where it stood, its indentation LINE_SHIFT
 * right of its line's; with SC, notes its break points and a comment
 * that ends it. */
static void scan_line(struct layout *st, const char *s, int n, int shift,
                      int line_shift, struct line_scan *sc)
{
    const int indent = leading_blanks(s, n);
    int min_depth = st->depth, last_code = -1, comment_at = -1;
    char quote = 0, before = st->last_code;
    if (sc != NULL) {
        sc->n_brk = 0;
        sc->paren_at = -1;
    }
    for (int i = 0; i < n; i++) {
        const char c = s[i];
        if (st->in_comment) {
            if (c == '*' && i + 1 < n && s[i + 1] == '/') {
                st->in_comment = 0;
                i++;
            }
            continue;
        }
        if (quote != 0) {
            if (c == '\\') {
                i++;
            } else if (c == quote) {
                quote = 0;
            }
            last_code = i;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            break; /* a line comment: never moved */
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            if (comment_at < 0 || last_code > comment_at) {
                comment_at = i;
            }
            st->in_comment = 1;
            i++;
            continue;
        }
        if (c == ' ') {
            continue;
        }
        if (last_code >= 0) {
            before = s[last_code];
        }
        last_code = i;
        if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '(' || c == '[' || c == '{') {
            if (c == '(' && sc != NULL && sc->paren_at < 0 && i + 1 < n &&
                s[i + 1] != ')' && i > 0 && is_word(s[i - 1])) {
                sc->paren_at = i;
            }
            if (st->depth < MAX_OPEN) {
                st->open[st->depth].c = c;
                st->open[st->depth].init =
                    c == '{' && (before == '=' || before == ',' ||
                                 before == '{');
                st->open[st->depth].col = i;
                st->open[st->depth].hanging = 0;
                st->open[st->depth].line_shift = line_shift;
                st->open[st->depth].elem_shift = shift;
                st->open[st->depth].hang_indent = -1;
            }
            st->depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (st->depth > 0) {
                st->depth--;
            }
            if (st->depth < min_depth) {
                min_depth = st->depth;
            }
        } else if (c == '=' && i > 0 && s[i - 1] == ' ' && i + 2 < n &&
                   s[i + 1] == ' ' && s[i + 2] != '{' && sc != NULL &&
                   sc->n_brk < MAX_BREAKS && st->depth <= MAX_OPEN) {
            /* After an initialiser's or assignment's " = ", the value 4
             * columns in from its line or its opener. */
            const struct opener *o =
                st->depth > 0 ? &st->open[st->depth - 1] : NULL;
            sc->brk[sc->n_brk].at = i + 2;
            sc->brk[sc->n_brk].cont =
                (o != NULL && !o->hanging ? o->col + 1 : indent) + 4;
            sc->brk[sc->n_brk].opener = -1;
            sc->n_brk++;
        } else if (((c == ';' && i + 1 < n && s[i + 1] == ' ') ||
                    ((c == '&' || c == '|') && i + 2 < n && s[i + 1] == c &&
                     s[i + 2] == ' ')) &&
                   st->depth > 0 && st->depth <= MAX_OPEN && sc != NULL &&
                   sc->n_brk < MAX_BREAKS &&
                   !st->open[st->depth - 1].hanging) {
            /* In a for's parentheses after "; ", in a condition after
             * "&& " or "|| ": under the opener. */
            const struct opener *o = &st->open[st->depth - 1];
            sc->brk[sc->n_brk].at = i + (c == ';' ? 2 : 3);
            sc->brk[sc->n_brk].cont = o->col + 1;
            sc->brk[sc->n_brk].opener = -1;
            sc->n_brk++;
            i += c == ';' ? 0 : 1;
        } else if (c == ',' && st->depth > 0 && st->depth <= MAX_OPEN) {
            struct opener *o = &st->open[st->depth - 1];
            o->elem_shift = shift;
            if (i + 1 < n && s[i + 1] == ' ' && sc != NULL &&
                sc->n_brk < MAX_BREAKS) {
                /* Under the opener; below one that ended its line, at
                 * the line's indentation (an initialiser's elements, a
                 * call's arguments) or 4 in (a block's declarators). */
                sc->brk[sc->n_brk].at = i + 2;
                sc->brk[sc->n_brk].cont =
                    !o->hanging           ? o->col + 1
                    : o->hang_indent >= 0 ? o->hang_indent
                    : o->c == '{' && !o->init ? indent + 4
                                              : indent;
                sc->brk[sc->n_brk].opener =
                    !o->hanging && st->depth - 1 >= min_depth ? o->col : -1;
                sc->n_brk++;
            }
        }
    }
    if (last_code >= 0) {
        st->last_code = s[last_code];
    }
    /* An opener this line left last: what follows it is indented by the
     * lines themselves. */
    if (st->depth > min_depth && st->depth <= MAX_OPEN &&
        st->open[st->depth - 1].col == last_code) {
        st->open[st->depth - 1].hanging = 1;
    }
    if (sc != NULL) {
        sc->opened_at = st->depth > min_depth && st->depth <= MAX_OPEN &&
                                !st->open[st->depth - 1].hanging
                            ? st->open[st->depth - 1].col
                            : -1;
        sc->comment_at = comment_at > last_code && !st->in_comment &&
                                 last_code >= 0
                             ? comment_at
                             : -1;
    }
}

static void put_line(struct buf *out, struct layout *st, const char *s,
                     int n, int shift, int line_shift)
{
    while (n > 0 && s[n - 1] == ' ') {
        n--;
    }
    scan_line(st, s, n, shift, line_shift, NULL);
    buf_add(out, s, (size_t)n);
    buf_add(out, "\n", 1);
}

static void put_blanks(struct buf *b, int n)
{
    for (int i = 0; i < n; i++) {
        buf_add(b, " ", 1);
    }
}

/* The column a comment line's text continues at below itself, its text
 * starting at TEXT: under the text after a leading label ("fields: ",
 * "2: ": a word of up to 15 characters ending in a colon), else under
 * the text. */
static int comment_cont(const char *s, int n, int text)
{
    const int i = text + leading_blanks(s + text, n - text);
    int j = i;
    while (j < n && j < i + 15 && s[j] != ' ') {
        j++;
    }
    if (j > i && s[j - 1] == ':' && j < n) {
        const int k = j + leading_blanks(s + j, n - j);
        if (k < n) {
            return k;
        }
    }
    return i;
}

/* Where the text of comment line S (N bytes) starts, and in *STAR the
 * column of its star (on a first line, the one that opens the comment;
 * -1: none). */
static int comment_text_at(const char *s, int n, int *star)
{
    const int lead = leading_blanks(s, n);
    *star = -1;
    if (lead + 1 < n && s[lead] == '/' && s[lead + 1] == '*') {
        *star = lead + 1;
        return lead + 2;
    }
    if (lead < n && s[lead] == '*' && !(lead + 1 < n && s[lead + 1] == '/')) {
        *star = lead;
        return lead + 1;
    }
    return lead;
}

/* Whether comment line S (N bytes) goes on with the paragraph of a line
 * whose star stands at STAR and whose text starts at CONT: text that
 * starts there too, and no list item. */
static int same_paragraph(const char *s, int n, int star, int cont)
{
    int at;
    const int text = comment_text_at(s, n, &at);
    if (at != star || star < 0 || cont >= n ||
        text + leading_blanks(s + text, n - text) != cont) {
        return 0;
    }
    const char c = s[cont];
    return c != '-' && c != '*' && !(c >= '0' && c <= '9');
}

/* A line of a block comment: past C_LAYOUT_COLS, broken between words
 * (not before its closing), each part under the first's text after a
 * "*" under the comment's; what is left over goes into CARRY (for the
 * front of NEXT, N_NEXT bytes, the next line) where NEXT goes on with
 * its paragraph, else onto lines of its own. */
static void put_comment_line(struct buf *out, struct layout *st,
                             const char *s, int n, const char *next,
                             int n_next, struct buf *carry)
{
    int star;
    const int text = comment_text_at(s, n, &star);
    const int cont = comment_cont(s, n, text);
    /* Prose, not a labelled line ("fields: ..."), flows into the next. */
    const int prose = cont == text + leading_blanks(s + text, n - text);
    struct buf line;
    buf_init(&line);
    buf_add(&line, s, (size_t)n);
    while ((int)line.len > C_LAYOUT_COLS) {
        const char *l = line.data;
        int sp = -1;
        for (int i = C_LAYOUT_COLS; i > cont; i--) {
            if (l[i] == ' ' && l[i - 1] != ' ' &&
                !(l[i + 1] == '*' && l[i + 2] == '/')) {
                sp = i;
                break;
            }
        }
        if (sp < 0) {
            break; /* one word past the line: left long */
        }
        put_line(out, st, l, sp, 0, 0);
        const char *r = l + sp;
        while (*r == ' ') {
            r++;
        }
        /* Not past a sentence's end: the next line may start another
         * (a header's lines do). */
        const size_t rn = strlen(r);
        if (prose && st->in_comment && strstr(r, "*/") == NULL &&
            rn > 0 && r[rn - 1] != '.' && next != NULL &&
            same_paragraph(next, n_next, star, cont)) {
            buf_puts(carry, r);
            buf_free(&line);
            return;
        }
        struct buf rest;
        buf_init(&rest);
        if (star >= 0) {
            put_blanks(&rest, star);
            buf_add(&rest, "*", 1);
            put_blanks(&rest, cont - star - 1);
        } else {
            put_blanks(&rest, cont);
        }
        buf_puts(&rest, r);
        buf_free(&line);
        line = rest;
    }
    put_line(out, st, buf_str(&line), (int)line.len, 0, 0);
    buf_free(&line);
}

/* Whether line S (N bytes, LEAD blanks first) is a comment alone: one
 * that opens there and closes at its end or on a later line. */
static int comment_alone(const char *s, int n, int lead)
{
    if (!(lead + 1 < n && s[lead] == '/' && s[lead + 1] == '*')) {
        return 0;
    }
    for (int i = lead + 2; i + 1 < n; i++) {
        if (s[i] == '*' && s[i + 1] == '/') {
            return leading_blanks(s + i + 2, n - i - 2) == n - i - 2;
        }
    }
    return 1;
}

/* A comment alone on its line, INDENT columns in, from TEXT (N bytes,
 * with its delimiters): as written when it fits, else in lines of a
 * block comment. */
static void put_comment(struct buf *out, struct layout *st, int indent,
                        const char *text, int n)
{
    struct buf b;
    buf_init(&b);
    put_blanks(&b, indent);
    buf_add(&b, text, (size_t)n);
    put_comment_line(out, st, buf_str(&b), (int)b.len, NULL, 0, NULL);
    buf_free(&b);
}

/* A preprocessor line S (N bytes) as it is; but past C_LAYOUT_COLS, a
 * comment that ends it moves above it (not on a line a backslash
 * continues, or continued: the comment would be the macro's). */
static void put_directive(struct buf *out, struct layout *st, const char *s,
                          int n)
{
    if (n > C_LAYOUT_COLS && !st->in_directive && s[n - 1] != '\\') {
        struct layout probe = *st;
        struct line_scan sc;
        scan_line(&probe, s, n, 0, 0, &sc);
        if (sc.comment_at >= 0) {
            put_comment(out, st, leading_blanks(s, n), s + sc.comment_at,
                        n - sc.comment_at);
            n = sc.comment_at;
        }
    }
    put_line(out, st, s, n, 0, 0);
}

/* Where the declarator of the declaration on line L (N bytes) starts:
 * the name (and its '*'s) before the first '[', '(' or " = ", after a
 * blank, the line starting with a word (its type); or -1. */
static int declarator_at(const char *l, int n)
{
    int i = leading_blanks(l, n);
    if (i >= n || !is_word(l[i])) {
        return -1;
    }
    while (i < n && l[i] != '[' && l[i] != '(' && l[i] != '"' &&
           !(l[i] == '=' && i > 0 && l[i - 1] == ' ')) {
        i++;
    }
    if (i >= n || l[i] == '"') {
        return -1;
    }
    while (i > 0 && l[i - 1] == ' ') {
        i--;
    }
    while (i > 0 && is_word(l[i - 1])) {
        i--;
    }
    while (i > 0 && l[i - 1] == '*') {
        i--;
    }
    return i > 0 && l[i - 1] == ' ' ? i : -1;
}

/* The widest of the pieces that breaks of the opener of break B would
 * leave on a line of LEN bytes: from each of its breaks to the next, or
 * to the line's end. */
static int widest_after(const struct line_scan *sc, int b, int len)
{
    int most = 0, from = -1;
    for (int i = 0; i < sc->n_brk; i++) {
        if (sc->brk[i].opener != sc->brk[b].opener) {
            continue;
        }
        if (from >= 0 && sc->brk[i].at - 2 - from > most) {
            most = sc->brk[i].at - 2 - from;
        }
        from = sc->brk[i].at;
    }
    return from >= 0 && len - from > most ? len - from : most;
}

/* Writes LINE's first END bytes and makes LINE its rest, from byte AT,
 * COL columns in; the rest's first token moves by COL - AT (*SHIFT), its
 * line stands COL - FROM right of where the text stood (*LINE_SHIFT). */
static void break_line(struct buf *out, struct layout *st, struct buf *line,
                       int end, int at, int col, int from, int *shift,
                       int *line_shift)
{
    put_line(out, st, line->data, end, *shift, *line_shift);
    struct buf rest;
    buf_init(&rest);
    put_blanks(&rest, col);
    buf_puts(&rest, line->data + at);
    *shift += col - at;
    *line_shift = col - from;
    buf_free(line);
    *line = rest;
}

/* The opener a break left open: its element moved by SHIFT, and, where
 * HANG is not -1, its elements below it HANG columns in. */
static void set_open(struct layout *st, int hang, int shift)
{
    if (st->depth > 0 && st->depth <= MAX_OPEN) {
        struct opener *o = &st->open[st->depth - 1];
        if (hang >= 0) {
            o->hang_indent = hang;
        }
        o->elem_shift = shift;
    }
}

/* The last line (or last part of a line) put_code wrote: where it
 * starts in the output, its indentation and first token's column
 * before, and the state before it was written; BROKEN whether put_code
 * broke the line (VALID 0: a line of another kind came after it). */
struct piece {
    int valid, broken;
    size_t at;
    int indent, from;
    struct layout before;
};

/* One code line: INDENT blanks, then the N bytes of TEXT (from its first
 * token), which stood at column FROM; broken past C_LAYOUT_COLS, or
 * after the opener it leaves open where NEED columns (the widest element
 * of the lines that continue it) would not fit under it. Its last part,
 * when it was broken, into *LAST. */
static void put_code(struct buf *out, struct layout *st, int indent,
                     const char *text, int n, int from, int need,
                     struct piece *last)
{
    last->broken = 0;
    struct buf line;
    buf_init(&line);
    put_blanks(&line, indent);
    buf_add(&line, text, (size_t)n);
    int shift = indent - from, line_shift = shift;
    for (;;) {
        const char *l = buf_str(&line);
        const int len = (int)line.len;
        struct layout probe = *st;
        struct line_scan sc;
        scan_line(&probe, l, len, shift, line_shift, &sc);
        const int deep = sc.opened_at >= 0 &&
                         sc.opened_at + 1 + need > C_LAYOUT_COLS;
        if (len <= C_LAYOUT_COLS && !deep) {
            break;
        }
        if (sc.comment_at >= 0 && len > C_LAYOUT_COLS) {
            /* The comment moves above the code it ends. */
            const int code = leading_blanks(l, len);
            put_comment(out, st, code, l + sc.comment_at,
                        len - sc.comment_at);
            line.len = (size_t)sc.comment_at;
            line.data[line.len] = '\0';
            continue;
        }
        int b = -1;
        for (int i = 0; i < sc.n_brk; i++) {
            /* ", " then the next token: the part before it ends at
             * at - 1, and the next line must come out shorter. */
            if (sc.brk[i].at - 1 <= C_LAYOUT_COLS &&
                sc.brk[i].cont < sc.brk[i].at) {
                b = i;
            }
        }
        int after = -1; /* a break just after an opener */
        if (deep || (b < 0 && sc.opened_at >= 0 &&
                     sc.opened_at < C_LAYOUT_COLS)) {
            after = sc.opened_at + 1;
        } else if (b >= 0 && sc.brk[b].opener >= 0 &&
                   (sc.brk[b].opener >= C_LAYOUT_DEEP ||
                    sc.brk[b].opener + 1 + widest_after(&sc, b, len) >
                        C_LAYOUT_COLS)) {
            after = sc.brk[b].opener + 1;
            for (int i = 0; i < sc.n_brk; i++) {
                /* Rather after a " = " before the opener. */
                if (sc.brk[i].opener < 0 && sc.brk[i].at <= after &&
                    sc.brk[i].cont + len - sc.brk[i].at <= C_LAYOUT_COLS) {
                    after = -1;
                    b = i;
                }
            }
        } else if (b < 0 && sc.paren_at >= 0 &&
                   sc.paren_at < C_LAYOUT_COLS) {
            after = sc.paren_at + 1;
        }
        if (after > C_LAYOUT_COLS) {
            after = -1; /* the declarator first, below */
            b = -1;
        }
        const int hang = leading_blanks(l, len) + 4;
        if (after > hang && after < len && l[after] != ' ') {
            /* Under an opener too far right (or no break inside it):
             * break after it, the rest indented by its line's
             * indentation and 4. */
            break_line(out, st, &line, after, after, hang, from, &shift,
                       &line_shift);
            set_open(st, hang, shift);
            need = 0;
            last->broken = 1;
            continue;
        }
        if (len <= C_LAYOUT_COLS) {
            break; /* it fits: no opener to break after */
        }
        if (b < 0) {
            /* A declaration: its declarator 4 columns in below its type. */
            const int at = declarator_at(l, len);
            if (at <= hang) {
                break;
            }
            break_line(out, st, &line, at - 1, at, hang, from, &shift,
                       &line_shift);
            last->broken = 1;
            continue;
        }
        break_line(out, st, &line, sc.brk[b].at - 1, sc.brk[b].at,
                   sc.brk[b].cont, from, &shift, &line_shift);
        set_open(st, -1, shift);
        last->broken = 1;
    }
    last->valid = 1;
    last->at = out->len;
    last->indent = leading_blanks(line.data, (int)line.len);
    last->from = last->indent - shift;
    last->before = *st;
    put_line(out, st, buf_str(&line), (int)line.len, shift, line_shift);
    buf_free(&line);
}

/* What a code line's text (S, N bytes) holds outside quotes: whether it
 * closes the parenthesis or brace open at its start (with what is open
 * in it closed too), whether it leaves open nothing it opens, where its
 * first element ends (with the ", " after it at its outer level; N if
 * none), and whether it holds a comment. */
struct outer {
    int closes, whole, first, comment;
};

static struct outer outer_scan(const char *s, int n)
{
    struct outer o = {0, 0, n, 0};
    int depth = 0;
    char quote = 0;
    for (int i = 0; i < n; i++) {
        if (quote != 0) {
            if (s[i] == '\\') {
                i++;
            } else if (s[i] == quote) {
                quote = 0;
            }
        } else if (s[i] == '"' || s[i] == '\'') {
            quote = s[i];
        } else if (s[i] == '(' || s[i] == '[' || s[i] == '{') {
            depth++;
        } else if (s[i] == ')' || s[i] == ']' || s[i] == '}') {
            o.closes |= --depth < 0;
        } else if (i + 1 < n && s[i] == '/' &&
                   (s[i + 1] == '*' || s[i + 1] == '/')) {
            o.comment = 1;
        } else if (depth == 0 && o.first == n && s[i] == ',' && i + 1 < n &&
                   s[i + 1] == ' ') {
            o.first = i + 1;
        }
    }
    o.whole = depth <= 0;
    return o;
}

/* The column a code line of LEAD blanks that starts with C begins at:
 * one past the parenthesis or brace it continues when it begins an
 * element of it, else moved as far as what it continues moved. */
static int code_indent(const struct layout *st, int lead, char c)
{
    if (st->depth == 0 || st->depth > MAX_OPEN) {
        return lead;
    }
    const struct opener *o = &st->open[st->depth - 1];
    /* A brace's lines (a block's, an initialiser's) keep their own
     * indentation; a parenthesis' move with the line it stands on. */
    const int moved = o->c == '{' ? lead : lead + o->line_shift;
    if (c == ')' || c == ']' || c == '}') {
        return moved;
    }
    if (o->hanging) {
        return o->hang_indent >= 0 && st->last_code == ',' ? o->hang_indent
                                                            : moved;
    }
    if (st->last_code == ',') {
        return o->col + 1;
    }
    /* Within an element: as far as it moved, never left of the opener. */
    const int indent = lead + o->elem_shift;
    return indent > o->col ? indent : o->col + 1;
}

/* The widest element (a piece between the ", " that part them, at the
 * outer level of their line) of the lines from P (one past a line's end)
 * to END that continue the parenthesis a line of LEAD blanks leaves
 * open: indented further, up to the one that closes it. What must fit
 * under the parenthesis when those lines are broken after each ", ". */
static int continued_width(const char *p, const char *end, int lead)
{
    int most = 0, depth = 1;
    for (int k = 0; p != NULL && p < end && k < 16 && depth > 0; k++) {
        p++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const int n = (int)((nl != NULL ? nl : end) - p);
        const int b = leading_blanks(p, n);
        if (b <= lead || b == n || p[b] == '#' || p[b] == '/') {
            break;
        }
        char quote = 0;
        int from = b, inner = 0;
        for (int i = b; i <= n && depth > 0; i++) {
            const char c = i < n ? p[i] : ',';
            if (quote != 0) {
                if (c == '\\') {
                    i++;
                } else if (c == quote) {
                    quote = 0;
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
                inner++;
            } else if (c == ')' || c == ']' || c == '}') {
                depth--;
                inner -= inner > 0;
            } else if (c == ',' && inner == 0) {
                if (i - from > most) {
                    most = i - from + 1;
                }
                from = i + 2;
            }
        }
        if (depth <= 0 && n - from > most) {
            most = n - from;
        }
        p = nl;
    }
    return most;
}

void c_layout(struct buf *text)
{
    struct buf out;
    struct layout st;
    buf_init(&out);
    memset(&st, 0, sizeof st);
    struct buf carry, joined;
    buf_init(&carry);
    buf_init(&joined);
    struct piece last = {0};
    const char *p = buf_str(text);
    const char *end = p + text->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const int n = (int)((nl != NULL ? nl : end) - p);
        const int lead = leading_blanks(p, n);
        const char *next = nl != NULL && nl + 1 < end ? nl + 1 : NULL;
        const char *next_nl =
            next != NULL ? memchr(next, '\n', (size_t)(end - next)) : NULL;
        const int n_next =
            next != NULL ? (int)((next_nl != NULL ? next_nl : end) - next)
                         : 0;
        if (st.in_comment) {
            const char *line = p;
            int len = n;
            if (carry.len > 0) {
                /* The words the line before had no room for, first. */
                int star;
                const int t = comment_text_at(p, n, &star);
                const int at = t + leading_blanks(p + t, n - t);
                buf_free(&joined);
                buf_add(&joined, p, (size_t)at);
                buf_add(&joined, carry.data, carry.len);
                buf_add(&joined, " ", 1);
                buf_add(&joined, p + at, (size_t)(n - at));
                buf_free(&carry);
                line = joined.data;
                len = (int)joined.len;
            }
            put_comment_line(&out, &st, line, len, next, n_next, &carry);
        } else if (st.in_directive || (lead < n && p[lead] == '#')) {
            struct layout keep = st;
            put_directive(&out, &st, p, n);
            keep.in_comment = st.in_comment;
            st = keep;
            st.in_directive = n > 0 && p[n - 1] == '\\';
        } else if (lead == n) {
            /* One blank line where sections left out left several. */
            if (out.len < 2 || out.data[out.len - 2] != '\n') {
                buf_add(&out, "\n", 1);
            }
        } else if (comment_alone(p, n, lead)) {
            put_comment_line(&out, &st, p, n, next, n_next, &carry);
        } else {
            const int indent = code_indent(&st, lead, p[lead]);
            /* The last part's columns, without its line break. */
            const size_t tail = last.valid ? out.len - 1 - last.at : 0;
            /* The last element of what a break left on a line of its
             * own, whole; or elements of a parenthesis (parameters,
             * arguments) after the one before, where the first fits
             * there (put_code breaks the rest off again). */
            const struct outer line = outer_scan(p + lead, n - lead);
            const struct outer none = {0, 0, 0, 0};
            const struct outer before =
                last.valid ? outer_scan(out.data + last.at, (int)tail) : none;
            const int closing = last.broken && line.closes;
            const int packs = st.depth > 0 && st.depth <= MAX_OPEN &&
                              st.open[st.depth - 1].c == '(' && line.whole &&
                              !line.comment && !before.comment;
            const size_t room = C_LAYOUT_COLS - tail - 1;
            if (last.valid && st.last_code == ',' && tail < C_LAYOUT_COLS &&
                ((closing && (size_t)(n - lead) <= room) ||
                 (packs && (size_t)line.first <= room))) {
                buf_free(&joined);
                buf_add(&joined, out.data + last.at + last.indent,
                        tail - (size_t)last.indent);
                buf_add(&joined, " ", 1);
                buf_add(&joined, p + lead, (size_t)(n - lead));
                out.len = last.at;
                out.data[out.len] = '\0';
                st = last.before;
                put_code(&out, &st, last.indent, joined.data, (int)joined.len,
                         last.from, 0, &last);
            } else {
                if (st.depth > 0 && st.depth <= MAX_OPEN &&
                    st.last_code == ',' && !st.open[st.depth - 1].hanging) {
                    st.open[st.depth - 1].elem_shift = indent - lead;
                }
                put_code(&out, &st, indent, p + lead, n - lead, lead,
                         continued_width(nl, end, lead), &last);
            }
            p += n + 1;
            continue;
        }
        last.valid = 0;
        p += n + 1;
    }
    buf_free(&carry);
    buf_free(&joined);
    if (text->len > 0 && text->data[text->len - 1] != '\n' && out.len > 0) {
        out.len--; /* no newline was there to keep */
        out.data[out.len] = '\0';
    }
    buf_free(text);
    *text = out;
}
