/* json_syntax.c - a strict check of JSON's syntax, by recursive descent
 * over the bytes. It says only where the text first leaves JSON: the
 * values themselves are read afterwards through libyaml (spec_doc.c),
 * which keeps each one's position for the messages about keys. Strings
 * are checked for their escapes and control characters, not for UTF-8
 * (libyaml checks that). */
#include "json_syntax.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Deeper than any config; keeps the recursion's stack small. */
#define JSON_MAX_DEPTH 256

struct scan {
    const unsigned char *p, *end;
    struct mark at;       /* of p */
    struct mark error_at; /* of the first error, once there is one */
    char error[DIAG_MESSAGE_MAX];
};

/* The digits at P (before END). */
static size_t digits(const unsigned char *p, const unsigned char *end)
{
    size_t n = 0;
    while (p + n < end && isdigit(p[n])) {
        n++;
    }
    return n;
}

/* How many bytes from P (before END) JSON's number grammar takes:
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; 0 when it takes none. */
static size_t number_span(const unsigned char *start, const unsigned char *end)
{
    const unsigned char *p = start;
    p += p < end && *p == '-';
    size_t n = p < end && *p == '0' ? 1 : digits(p, end);
    if (n == 0) {
        return 0;
    }
    p += n;
    if (p < end && *p == '.') {
        if ((n = digits(p + 1, end)) == 0) {
            return 0;
        }
        p += 1 + n;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        const unsigned char *e = p + 1;
        e += e < end && (*e == '+' || *e == '-');
        if ((n = digits(e, end)) == 0) {
            return 0;
        }
        p = e + n;
    }
    return (size_t)(p - start);
}

int json_number_syntax(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t len = strlen(text);
    return len > 0 && number_span(p, p + len) == len;
}

/* Whether the N bytes at P are WORD. */
static int is_word(const unsigned char *p, size_t n, const char *word)
{
    return n == strlen(word) && memcmp(p, word, n) == 0;
}

/* Moves past N bytes: a column per character (UTF-8 continuation bytes
 * count none), a line per newline. */
static void advance(struct scan *s, size_t n)
{
    for (; n > 0 && s->p < s->end; n--, s->p++) {
        if (*s->p == '\n') {
            s->at.line++;
            s->at.col = 1;
        } else if ((*s->p & 0xC0) != 0x80) {
            s->at.col++;
        }
    }
}

/* Whether P holds C. */
static int at(const struct scan *s, char c)
{
    return s->p < s->end && *s->p == (unsigned char)c;
}

static int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_blanks(struct scan *s)
{
    while (s->p < s->end && is_blank(*s->p)) {
        advance(s, 1);
    }
}

/* Records the error at AT; returns -1. */
static int fail(struct scan *s, struct mark at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(struct scan *s, struct mark at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
    s->error_at = at;
    return -1;
}

/* The bytes of a bare word at P: up to a blank, a control character or
 * JSON's punctuation. */
static size_t word_length(const struct scan *s)
{
    size_t n = 0;
    while (s->p + n < s->end && s->p[n] >= 0x20 && s->p[n] != ' ' &&
           strchr("{}[],:\"", s->p[n]) == NULL) {
        n++;
    }
    return n;
}

/* What stands at P, as a message shows it: "the end of the file", "a
 * string", "','", "'word'" (a long word cut short). */
static const char *found(const struct scan *s, char *buf, size_t size)
{
    size_t n = word_length(s);
    if (s->p == s->end) {
        return "the end of the file";
    }
    if (*s->p == '"') {
        return "a string";
    }
    if (*s->p < 0x20) {
        snprintf(buf, size, "the control character 0x%02x", *s->p);
    } else if (n == 0) {
        snprintf(buf, size, "'%c'", *s->p);
    } else {
        snprintf(buf, size, "'%.*s%s'", n > 24 ? 24 : (int)n,
                 (const char *)s->p, n > 24 ? "..." : "");
    }
    return buf;
}

static int value(struct scan *s, int depth);

/* A string from its opening quote at P. */
static int string(struct scan *s)
{
    struct mark open = s->at;
    advance(s, 1);
    while (s->p < s->end && *s->p != '"') {
        if (*s->p < 0x20) {
            return fail(s, s->at, "not JSON: a control character in a "
                        "string (JSON writes it as an escape: \\n, \\t, "
                        "\\u0001)");
        }
        if (*s->p == '\\') {
            const unsigned char *e = s->p + 1;
            int hex = s->end - e >= 5 && *e == 'u' && isxdigit(e[1]) &&
                      isxdigit(e[2]) && isxdigit(e[3]) && isxdigit(e[4]);
            if (!hex && (e == s->end || *e == '\0' ||
                         strchr("\"\\/bfnrt", *e) == NULL)) {
                return fail(s, s->at, "not JSON: an escape JSON does not "
                            "have (it has \\\" \\\\ \\/ \\b \\f \\n \\r \\t "
                            "\\uXXXX)");
            }
            advance(s, hex ? 5 : 1);
        }
        advance(s, 1);
    }
    if (s->p == s->end) {
        return fail(s, open, "not JSON: a string that does not end");
    }
    advance(s, 1);
    return 0;
}

/* After an item of an object or array that END closes: 1 past the comma
 * when another item follows, 0 past END, -1 on an error (a comma right
 * before END, JSON's refused trailing comma, reported at the comma). */
static int next_item(struct scan *s, char end)
{
    char tmp[40];
    skip_blanks(s);
    if (at(s, end)) {
        advance(s, 1);
        return 0;
    }
    if (!at(s, ',')) {
        return fail(s, s->at, "not JSON: expected ',' or '%c', found %s",
                    end, found(s, tmp, sizeof tmp));
    }
    struct mark comma = s->at;
    advance(s, 1);
    skip_blanks(s);
    if (at(s, end)) {
        return fail(s, comma, "not JSON: a comma before '%c' (JSON has no "
                    "trailing comma)", end);
    }
    return 1;
}

/* An object from its '{' at P. */
static int object(struct scan *s, int depth)
{
    char tmp[40];
    advance(s, 1);
    skip_blanks(s);
    if (at(s, '}')) {
        advance(s, 1);
        return 0;
    }
    int more = 1;
    while (more == 1) {
        skip_blanks(s);
        if (!at(s, '"')) {
            return fail(s, s->at, "not JSON: expected a key (a string in "
                        "double quotes), found %s",
                        found(s, tmp, sizeof tmp));
        }
        if (string(s) < 0) {
            return -1;
        }
        skip_blanks(s);
        if (!at(s, ':')) {
            return fail(s, s->at, "not JSON: expected ':' after the key, "
                        "found %s", found(s, tmp, sizeof tmp));
        }
        advance(s, 1);
        more = value(s, depth + 1) < 0 ? -1 : next_item(s, '}');
    }
    return more;
}

/* An array from its '[' at P. */
static int array(struct scan *s, int depth)
{
    advance(s, 1);
    skip_blanks(s);
    if (at(s, ']')) {
        advance(s, 1);
        return 0;
    }
    int more = 1;
    while (more == 1) {
        more = value(s, depth + 1) < 0 ? -1 : next_item(s, ']');
    }
    return more;
}

/* One value at P (blanks before it skipped). */
static int value(struct scan *s, int depth)
{
    char tmp[40];
    skip_blanks(s);
    if (depth > JSON_MAX_DEPTH) {
        return fail(s, s->at, "not JSON for specl: nested deeper than %d",
                    JSON_MAX_DEPTH);
    }
    if (at(s, '{')) {
        return object(s, depth);
    }
    if (at(s, '[')) {
        return array(s, depth);
    }
    if (at(s, '"')) {
        return string(s);
    }
    size_t n = word_length(s);
    if (n > 0 && (is_word(s->p, n, "true") || is_word(s->p, n, "false") ||
                  is_word(s->p, n, "null") ||
                  number_span(s->p, s->p + n) == n)) {
        advance(s, n);
        return 0;
    }
    return fail(s, s->at, "not JSON: expected a value (an object, array, "
                "string, number, true, false or null), found %s",
                found(s, tmp, sizeof tmp));
}

int json_syntax_check(const unsigned char *data, size_t len,
                      const char *path, struct diags *d)
{
    struct scan s = {data, data + len, {1, 1}, {0, 0}, ""};
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
        s.p += 3; /* a byte order mark: not a character of the text */
    }
    int bad = value(&s, 0);
    if (bad == 0) {
        char tmp[40];
        skip_blanks(&s);
        if (s.p < s.end) {
            bad = fail(&s, s.at, "not JSON: expected the end of the file "
                       "after the value, found %s",
                       found(&s, tmp, sizeof tmp));
        }
    }
    if (bad) {
        diag_error(d, path, s.error_at, "%s", s.error);
    }
    return bad != 0;
}
