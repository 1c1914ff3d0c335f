/* cl_resolve.c - a rendered kernel text's conditionals resolved where
 * the plan's integer #defines decide them (cl_resolve.h). The templates
 * serve every plan of an op, so they branch on the plan's values; once a
 * plan is fixed, the branches it cannot take are dead text to whoever
 * vendors and reads NAME.cl. Conditions are evaluated as the C
 * preprocessor would, in three values (known true, known false, not
 * known): anything this file cannot be sure of stays for the compiler. */
#include "cl_resolve.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "emit_text.h"

/* Nested conditionals followed at most; deeper texts are left as they
 * are. */
#define MAX_DEPTH 64

struct fact_set {
    /* The plans whose preludes may come before the text (plan p's text
     * holds the templates PLAN_CUTS[p] names), the one a condition is
     * being evaluated for, and those whose texts hold the line: a
     * condition is settled only where they all give it one value. */
    const struct plan *const *plans;
    const struct render_cuts *const *plan_cuts;
    int n_plans;
    int cur;
    unsigned voters; /* bit p: plan p's text holds the line evaluated */
    const char *text;
    /* The text's #defines and #undefs met so far on the kept lines: an
     * object-like macro defined where every enclosing conditional is
     * resolved is sure, its body evaluated where it is used; any other
     * (function-like, under a conditional left to the compiler, undone
     * by #undef) is unsure. The last of a name counts. */
    struct macro {
        size_t name, len, body, end;
        int sure;
    } *macros;
    size_t n_macros, cap_macros;
    int expanding; /* macro bodies being evaluated, one in another */
};

static const struct macro *macro_find(const struct fact_set *fs,
                                      const char *name, size_t len)
{
    for (size_t i = fs->n_macros; i-- > 0;) {
        const struct macro *m = &fs->macros[i];
        if (m->len == len && memcmp(fs->text + m->name, name, len) == 0) {
            return m;
        }
    }
    return NULL;
}

/* Plan P's #define of NAME, or NULL where it has none. */
static const struct define *plan_define(const struct plan *p,
                                        const char *name, size_t len)
{
    for (int i = 0; i < p->n_define; i++) {
        if (strlen(p->define[i].name) == len &&
            memcmp(p->define[i].name, name, len) == 0) {
            return &p->define[i];
        }
    }
    return NULL;
}

int cl_device_name(const char *name, size_t len)
{
    static const char *const prefixes[] = {"__", "cl_", "CL_", "CLK_",
                                           "FP_", "FLT_", "DBL_", "HALF_",
                                           "M_", "CHAR_", "SCHAR_", "UCHAR_",
                                           "SHRT_", "USHRT_", "INT_", "UINT_",
                                           "LONG_", "ULONG_"};
    static const char *const names[] = {"INFINITY", "NAN", "MAXFLOAT",
                                        "HUGE_VAL", "HUGE_VALF", "NULL",
                                        "true", "false"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (len >= n && memcmp(name, prefixes[i], n) == 0) {
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strlen(names[i]) == len && memcmp(name, names[i], len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Whether NAME, which the text has neither defined nor undefined so
 * far, is known to be undefined after the current plan's prelude: the
 * prelude does not define it, and it is none of the device's. */
static int known_undefined(const struct fact_set *fs, const char *name,
                           size_t len)
{
    return !cl_device_name(name, len) &&
           plan_define(fs->plans[fs->cur], name, len) == NULL;
}

/* ---- lines ------------------------------------------------------------ */

/* A logical line of TEXT: [start, end), end past its newline; a
 * directive joins the physical lines its backslashes continue. */
struct line {
    size_t start, end;
    int directive;     /* its first non-blank is '#' outside a comment */
    size_t keyword;    /* a directive's name: [keyword, keyword_end) */
    size_t keyword_end;
};

static int is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Moves *UNTIL, the end of the block comment the next line may begin
 * in, past the comments and quoted text of [FROM, TO) of T (N bytes). */
static void scan_comments(const char *t, size_t n, size_t from, size_t to,
                          size_t *until)
{
    for (size_t p = from > *until ? from : *until; p < to;) {
        int comment;
        size_t k = skip_length(t + p, t + n, &comment);
        if (comment && p + k > to) {
            *until = p + k;
        }
        p += k > 0 ? k : 1;
    }
}

/* The line of T (N bytes) at AT, given the comment state there. */
static struct line next_line(const char *t, size_t n, size_t at,
                             int in_comment)
{
    struct line l = {at, at, 0, 0, 0};
    size_t i = at;
    while (i < n && (t[i] == ' ' || t[i] == '\t')) {
        i++;
    }
    l.directive = !in_comment && i < n && t[i] == '#';
    size_t e = at;
    for (;;) {
        while (e < n && t[e] != '\n') {
            e++;
        }
        int continued = l.directive && e > at && t[e - 1] == '\\';
        e += e < n;
        if (!continued || e >= n) {
            break;
        }
    }
    l.end = e;
    if (l.directive) {
        i++;
        while (i < e && (t[i] == ' ' || t[i] == '\t')) {
            i++;
        }
        l.keyword = i;
        while (i < e && is_ident(t[i])) {
            i++;
        }
        l.keyword_end = i;
    }
    return l;
}

static int line_blank(const char *t, const struct line *l)
{
    for (size_t i = l->start; i < l->end; i++) {
        if (!isspace((unsigned char)t[i])) {
            return 0;
        }
    }
    return 1;
}

static int keyword_is(const char *t, const struct line *l, const char *kw)
{
    size_t len = l->keyword_end - l->keyword;
    return len == strlen(kw) && memcmp(t + l->keyword, kw, len) == 0;
}

/* ---- conditions ----------------------------------------------------- */

struct value {
    int known;
    long long v;
};

struct expr {
    const char *t;
    size_t at, end;
    struct fact_set *fs;
    int bad; /* not an expression this file follows */
};

static const struct value unknown = {0, 0};

static struct value known(long long v)
{
    struct value r = {1, v};
    return r;
}

/* Skips blanks, comments and backslash-newlines. */
static void skip_space(struct expr *e)
{
    const char *t = e->t;
    while (e->at < e->end) {
        char c = t[e->at];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            e->at++;
        } else if (c == '\\' && e->at + 1 < e->end &&
                   t[e->at + 1] == '\n') {
            e->at += 2;
        } else {
            int comment;
            size_t k = skip_length(t + e->at, t + e->end, &comment);
            if (!comment) {
                return;
            }
            e->at += k;
        }
    }
}

/* Whether the next token is OP (and not the start of a longer one), and
 * if so takes it. */
static int take(struct expr *e, const char *op)
{
    skip_space(e);
    size_t len = strlen(op);
    if (e->at + len > e->end || memcmp(e->t + e->at, op, len) != 0) {
        return 0;
    }
    char next = e->at + len < e->end ? e->t[e->at + len] : '\0';
    if ((len == 1 && strchr("&|<>=", op[0]) != NULL && next == op[0]) ||
        (len == 1 && strchr("<>!=", op[0]) != NULL && next == '=') ||
        (len == 2 && (op[0] == '<' || op[0] == '>') && op[1] == op[0] &&
         next == '=')) {
        return 0;
    }
    e->at += len;
    return 1;
}

static struct value conditional(struct expr *e);

static struct value number(struct expr *e)
{
    const char *t = e->t;
    size_t i = e->at;
    long long v = 0;
    int base = 10;
    if (t[i] == '0' && i + 1 < e->end && (t[i + 1] == 'x' || t[i + 1] == 'X')) {
        base = 16;
        i += 2;
    } else if (t[i] == '0') {
        base = 8;
    }
    size_t digits = i;
    for (; i < e->end && isxdigit((unsigned char)t[i]); i++) {
        int d = isdigit((unsigned char)t[i])
                    ? t[i] - '0'
                    : tolower((unsigned char)t[i]) - 'a' + 10;
        if (d >= base || __builtin_mul_overflow(v, base, &v) ||
            __builtin_add_overflow(v, d, &v)) {
            e->bad = 1;
            return unknown;
        }
    }
    if (i == digits && base == 16) {
        e->bad = 1;
    }
    /* l and L suffixes keep a signed value; u and U make it unsigned,
     * which this file does not follow. */
    while (i < e->end && (t[i] == 'l' || t[i] == 'L')) {
        i++;
    }
    if (i < e->end && is_ident(t[i])) {
        e->bad = 1;
    }
    e->at = i;
    return known(v);
}

/* Whether NAME is defined here: 1, 0 or not known. */
static struct value defined_value(const struct fact_set *fs,
                                  const char *name, size_t len)
{
    const struct macro *m = macro_find(fs, name, len);
    if (m != NULL) {
        return m->sure ? known(1) : unknown;
    }
    if (plan_define(fs->plans[fs->cur], name, len) != NULL) {
        return known(1);
    }
    return known_undefined(fs, name, len) ? known(0) : unknown;
}

/* The value of sure macro M's body, an expression of T (not known past
 * a few macros deep: one may name itself, which the preprocessor does
 * not expand). */
static struct value expansion(struct fact_set *fs, const char *t,
                              const struct macro *m)
{
    if (fs->expanding >= 16) {
        return unknown;
    }
    fs->expanding++;
    struct expr sub = {t, m->body, m->end, fs, 0};
    struct value v = conditional(&sub);
    skip_space(&sub);
    fs->expanding--;
    return sub.bad || sub.at != sub.end ? unknown : v;
}

static struct value primary(struct expr *e)
{
    skip_space(e);
    if (e->at >= e->end) {
        e->bad = 1;
        return unknown;
    }
    const char *t = e->t;
    if (take(e, "(")) {
        struct value v = conditional(e);
        if (!take(e, ")")) {
            e->bad = 1;
        }
        return v;
    }
    if (isdigit((unsigned char)t[e->at])) {
        return number(e);
    }
    if (!is_ident(t[e->at])) {
        e->bad = 1;
        return unknown;
    }
    size_t s = e->at;
    while (e->at < e->end && is_ident(t[e->at])) {
        e->at++;
    }
    if (e->at - s == 7 && memcmp(t + s, "defined", 7) == 0) {
        int paren = take(e, "(");
        skip_space(e);
        size_t n = e->at;
        while (e->at < e->end && is_ident(t[e->at])) {
            e->at++;
        }
        size_t len = e->at - n;
        if (len == 0 || (paren && !take(e, ")"))) {
            e->bad = 1;
            return unknown;
        }
        if (e->fs->expanding > 0) {
            e->bad = 1; /* "defined" from a macro: compilers differ */
            return unknown;
        }
        return defined_value(e->fs, t + n, len);
    }
    size_t len = e->at - s;
    skip_space(e);
    if (e->at < e->end && t[e->at] == '(') {
        return unknown; /* a function-like macro's call */
    }
    /* The text's last #define or #undef of the name met so far, else
     * the prelude's. */
    const struct macro *m = macro_find(e->fs, t + s, len);
    if (m != NULL) {
        return m->sure ? expansion(e->fs, t, m) : unknown;
    }
    const struct define *d = plan_define(e->fs->plans[e->fs->cur], t + s,
                                         len);
    if (d != NULL) {
        return d->kind == DEFINE_INT ? known(d->i) : unknown;
    }
    /* As the preprocessor takes a name that no macro defines. */
    return known_undefined(e->fs, t + s, len) ? known(0) : unknown;
}

static struct value unary(struct expr *e)
{
    if (take(e, "!")) {
        struct value v = unary(e);
        return v.known ? known(!v.v) : unknown;
    }
    if (take(e, "~")) {
        struct value v = unary(e);
        return v.known ? known(~v.v) : unknown;
    }
    if (take(e, "-")) {
        struct value v = unary(e);
        return v.known && v.v != LLONG_MIN ? known(-v.v) : unknown;
    }
    if (take(e, "+")) {
        return unary(e);
    }
    return primary(e);
}

/* A binary operator's value where both sides are known. */
static struct value apply(const char *op, long long a, long long b)
{
    long long r;
    switch (op[0]) {
    case '*':
        return __builtin_mul_overflow(a, b, &r) ? unknown : known(r);
    case '/':
    case '%':
        if (b == 0 || (a == LLONG_MIN && b == -1)) {
            return unknown;
        }
        return known(op[0] == '/' ? a / b : a % b);
    case '+':
        return __builtin_add_overflow(a, b, &r) ? unknown : known(r);
    case '-':
        return __builtin_sub_overflow(a, b, &r) ? unknown : known(r);
    case '<':
        if (op[1] == '<') {
            return a < 0 || b < 0 || b > 62 || a > (LLONG_MAX >> b)
                       ? unknown
                       : known(a << b);
        }
        return known(op[1] == '=' ? a <= b : a < b);
    case '>':
        if (op[1] == '>') {
            return a < 0 || b < 0 || b > 62 ? unknown : known(a >> b);
        }
        return known(op[1] == '=' ? a >= b : a > b);
    case '=':
        return known(a == b);
    case '!':
        return known(a != b);
    case '&':
        return known(a & b);
    case '^':
        return known(a ^ b);
    default: /* '|' */
        return known(a | b);
    }
}

/* The binary operators by level, loosest first (|| and && apart). */
static const char *const levels[][5] = {
    {"|", NULL},           {"^", NULL},
    {"&", NULL},           {"==", "!=", NULL},
    {"<=", ">=", "<", ">", NULL}, {"<<", ">>", NULL},
    {"+", "-", NULL},      {"*", "/", "%", NULL},
};
#define N_LEVELS ((int)(sizeof levels / sizeof levels[0]))

static struct value binary(struct expr *e, int level)
{
    if (level == N_LEVELS) {
        return unary(e);
    }
    struct value a = binary(e, level + 1);
    for (;;) {
        const char *op = NULL;
        for (int i = 0; levels[level][i] != NULL && op == NULL; i++) {
            op = take(e, levels[level][i]) ? levels[level][i] : NULL;
        }
        if (op == NULL) {
            return a;
        }
        struct value b = binary(e, level + 1);
        a = a.known && b.known ? apply(op, a.v, b.v) : unknown;
    }
}

/* && (IS_OR 0) and || (IS_OR 1): one known side may settle them (0 for
 * &&, 1 for ||), as there is nothing for the other to do but be
 * evaluated. */
static struct value logical(struct expr *e, int is_or)
{
    struct value a = is_or ? logical(e, 0) : binary(e, 0);
    while (take(e, is_or ? "||" : "&&")) {
        struct value b = is_or ? logical(e, 0) : binary(e, 0);
        if ((a.known && (a.v != 0) == is_or) ||
            (b.known && (b.v != 0) == is_or)) {
            a = known(is_or);
        } else {
            a = a.known && b.known ? known(!is_or) : unknown;
        }
    }
    return a;
}

static struct value conditional(struct expr *e)
{
    struct value c = logical(e, 1);
    if (!take(e, "?")) {
        return c;
    }
    struct value a = conditional(e);
    if (!take(e, ":")) {
        e->bad = 1;
        return unknown;
    }
    struct value b = conditional(e);
    if (!c.known) {
        return unknown;
    }
    return c.v ? a : b;
}

/* The value of the #if or #elif condition of line L after the current
 * plan's prelude: 1, 0, or -1 when not known. */
static int condition_for(const char *t, const struct line *l,
                         struct fact_set *fs)
{
    struct expr e = {t, l->keyword_end, l->end, fs, 0};
    struct value v = conditional(&e);
    skip_space(&e);
    if (e.bad || e.at != e.end || !v.known) {
        return -1;
    }
    return v.v != 0;
}

/* The value of #ifdef (SENSE 1) or #ifndef (0) on line L after the
 * current plan's prelude. */
static int defined_for(const char *t, const struct line *l,
                       struct fact_set *fs, int sense)
{
    struct expr e = {t, l->keyword_end, l->end, fs, 0};
    skip_space(&e);
    size_t s = e.at;
    while (e.at < e.end && is_ident(t[e.at])) {
        e.at++;
    }
    size_t len = e.at - s;
    skip_space(&e);
    if (len == 0 || e.bad || e.at != e.end) {
        return -1;
    }
    struct value v = defined_value(fs, t + s, len);
    return !v.known ? -1 : v.v ? sense : !sense;
}

/* The value of line L's condition (SENSE -1: #if or #elif; 1: #ifdef;
 * 0: #ifndef) where every plan whose text holds the line gives it the
 * same one, else -1. */
static int condition(const char *t, const struct line *l,
                     struct fact_set *fs, int sense)
{
    int value = -1, first = 1;
    for (fs->cur = 0; fs->cur < fs->n_plans; fs->cur++) {
        if ((fs->voters >> fs->cur & 1u) == 0) {
            continue;
        }
        int c = sense < 0 ? condition_for(t, l, fs)
                          : defined_for(t, l, fs, sense);
        if (c < 0 || (!first && c != value)) {
            return -1;
        }
        value = c;
        first = 0;
    }
    return value;
}

/* Notes the #define or #undef of line L, met on a kept line; SURE: every
 * enclosing conditional is resolved. -1 when out of memory. */
static int note_macro(const char *t, const struct line *l, int sure,
                      struct fact_set *fs)
{
    size_t s = l->keyword_end;
    while (s < l->end && (t[s] == ' ' || t[s] == '\t')) {
        s++;
    }
    size_t e = s;
    while (e < l->end && is_ident(t[e])) {
        e++;
    }
    if (fs->n_macros == fs->cap_macros) {
        size_t cap = fs->cap_macros ? 2 * fs->cap_macros : 256;
        struct macro *grown = realloc(fs->macros, cap * sizeof *grown);
        if (grown == NULL) {
            return -1;
        }
        fs->macros = grown;
        fs->cap_macros = cap;
    }
    int object = keyword_is(t, l, "define") && e > s &&
                 (e == l->end || t[e] != '(');
    struct macro m = {s, e - s, e, l->end, sure && object};
    fs->macros[fs->n_macros++] = m;
    return 0;
}

/* ---- the text ---------------------------------------------------------- */

struct group {
    int outer; /* the text around it is kept */
    int kept;  /* its directives stay (from the first undecided one) */
    int taken; /* a branch known taken: the rest are dead */
    int live;  /* the branch now read is kept */
};

/* The plans whose texts include template NAME (NULL: the text around
 * the templates, which every plan's has), as bits. */
static unsigned voters_of(const struct fact_set *fs, const char *name)
{
    unsigned bits = 0u;
    for (int p = 0; p < fs->n_plans; p++) {
        const struct render_cuts *c = fs->plan_cuts[p];
        int holds = name == NULL || c == NULL;
        for (int i = 0; c != NULL && i < c->n && !holds; i++) {
            holds = c->cut[i].name != NULL &&
                    strcmp(c->cut[i].name, name) == 0;
        }
        bits |= (unsigned)holds << p;
    }
    return bits;
}

/* Resolves T into OUT and each cut's new offset into AT; -1 where the
 * text's conditionals do not balance or nest too deep, or a directive
 * ends inside a comment. */
static int resolve(const char *t, size_t n, struct fact_set *fs,
                   const struct render_cuts *cuts, size_t *at_out,
                   struct buf *out)
{
    struct group stack[MAX_DEPTH];
    int depth = 0, next_cut = 0, segment = -1;
    int dropped = 0, last_blank = 0;
    size_t until = 0;
    fs->voters = voters_of(fs, NULL);
    for (size_t at = 0; at < n;) {
        struct line l = next_line(t, n, at, at < until);
        /* The template the line is of: the last to begin or resume at
         * or before it. */
        int was = segment;
        while (cuts != NULL && segment + 1 < cuts->n &&
               cuts->cut[segment + 1].at <= l.start) {
            segment++;
        }
        if (segment != was) {
            fs->voters = voters_of(fs, cuts->cut[segment].name);
        }
        scan_comments(t, n, l.start, l.end, &until);
        if (l.directive && until > l.end) {
            return -1; /* the lines after it would be a comment's */
        }
        int live = depth == 0 || (stack[depth - 1].outer &&
                                  stack[depth - 1].live);
        size_t before = out->len;
        /* What of the line is written: all of it, none, or (an #elif
         * become an #if) all but the "el". */
        enum { NONE, ALL, AS_IF } put = live ? ALL : NONE;
        if (l.directive && (keyword_is(t, &l, "if") ||
                            keyword_is(t, &l, "ifdef") ||
                            keyword_is(t, &l, "ifndef"))) {
            if (depth == MAX_DEPTH) {
                return -1;
            }
            struct group g = {live, 0, !live, 0};
            int c = -1;
            if (live) {
                c = condition(t, &l, fs,
                              keyword_is(t, &l, "if")
                                  ? -1
                                  : keyword_is(t, &l, "ifdef"));
            }
            g.kept = live && c < 0;
            g.taken = !live || c == 1;
            g.live = live && c != 0;
            put = g.kept ? ALL : NONE;
            stack[depth++] = g;
        } else if (l.directive && keyword_is(t, &l, "elif")) {
            if (depth == 0) {
                return -1;
            }
            struct group *g = &stack[depth - 1];
            put = NONE;
            if (g->outer && g->kept) {
                g->live = 1;
                put = ALL;
            } else if (g->outer && g->taken) {
                g->live = 0;
            } else if (g->outer) {
                int c = condition(t, &l, fs, -1);
                g->live = c != 0;
                g->taken = c == 1;
                g->kept = c < 0;
                put = g->kept ? AS_IF : NONE;
            }
        } else if (l.directive && keyword_is(t, &l, "else")) {
            if (depth == 0) {
                return -1;
            }
            struct group *g = &stack[depth - 1];
            put = g->outer && g->kept ? ALL : NONE;
            if (g->outer && !g->kept) {
                g->live = !g->taken;
                g->taken = 1;
            } else {
                g->live = g->outer;
            }
        } else if (l.directive && keyword_is(t, &l, "endif")) {
            if (depth == 0) {
                return -1;
            }
            struct group *g = &stack[--depth];
            put = g->outer && g->kept ? ALL : NONE;
        } else if (l.directive && live &&
                   (keyword_is(t, &l, "define") ||
                    keyword_is(t, &l, "undef"))) {
            int sure = 1;
            for (int i = 0; i < depth; i++) {
                sure &= !stack[i].kept;
            }
            if (note_macro(t, &l, sure, fs) < 0) {
                return -1;
            }
        }
        /* A blank line that only left-out lines part from the last line
         * written, itself blank, would leave a wider gap than the text
         * has. */
        int blank = !l.directive && line_blank(t, &l);
        if (put == ALL && blank && dropped && last_blank) {
            put = NONE;
        }
        if (put != NONE) {
            last_blank = put == ALL && blank;
            dropped = 0;
        } else {
            dropped = 1;
        }
        if (put == ALL) {
            buf_add(out, t + l.start, l.end - l.start);
        } else if (put == AS_IF) {
            buf_add(out, t + l.start, l.keyword - l.start);
            buf_add(out, t + l.keyword + 2, l.end - l.keyword - 2);
        }
        for (; cuts != NULL && next_cut < cuts->n &&
               cuts->cut[next_cut].at < l.end;
             next_cut++) {
            size_t into = cuts->cut[next_cut].at - l.start;
            size_t wrote = out->len - before;
            at_out[next_cut] = before + (into < wrote ? into : wrote);
        }
        at = l.end;
    }
    for (; cuts != NULL && next_cut < cuts->n; next_cut++) {
        at_out[next_cut] = out->len;
    }
    return depth == 0 ? 0 : -1;
}

void cl_resolve(const char *text, size_t n, const struct plan *const *plans,
                const struct render_cuts *const *plan_cuts, int n_plans,
                struct render_cuts *cuts, struct buf *out)
{
    static const struct render_cuts *const every[SPECL_MAX_VARIANTS];
    struct fact_set fs;
    memset(&fs, 0, sizeof fs);
    fs.plans = plans;
    fs.plan_cuts = plan_cuts != NULL ? plan_cuts : every;
    fs.n_plans = n_plans;
    fs.text = text;
    struct buf r;
    size_t at[2 * RENDER_MAX_INCLUDES];
    buf_init(&r);
    size_t base = out->len;
    if (n_plans > 0 && n_plans <= SPECL_MAX_VARIANTS &&
        resolve(text, n, &fs, cuts, at, &r) == 0) {
        buf_add(out, buf_str(&r), r.len);
        for (int c = 0; cuts != NULL && c < cuts->n; c++) {
            cuts->cut[c].at = base + at[c];
        }
    } else {
        buf_add(out, text, n);
        for (int c = 0; cuts != NULL && c < cuts->n; c++) {
            cuts->cut[c].at += base;
        }
    }
    free(fs.macros);
    buf_free(&r);
}
