/* spec_scalar.c - the values of a spec's fields and knobs: integers,
 * float32 numbers, booleans, choices and dtypes, each checked against its
 * limits and reported where it is written. */
#include "spec_scalar.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reports that V, the value of WHAT at WHERE, is none of LIST. Returns
 * 0. */
static int not_one_of(struct reader *r, const char *what, const char *list,
                      struct ref v, struct mark where)
{
    char tmp[96];
    diag_error(r->d, r->path, where, "%s must be one of %s (got %s)", what,
               list, node_shown(r, v, tmp, sizeof tmp));
    return 0;
}

int parse_dtype(struct reader *r, struct ref v, enum dtype *out)
{
    static const char *const names[] = {"f32", "f16", "bf16"};
    if (!node_usable(r, v)) {
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        if (scalar_is(r, v, names[i])) {
            *out = (enum dtype)i;
            return 1;
        }
    }
    return not_one_of(r, "dtype", "f32, f16, bf16", v, at(r, v));
}

/* What V is, said before it is shown where a number or boolean was
 * expected: a string written as one is not read as a number. */
static const char *string_note(const struct reader *r, struct ref v)
{
    if (!is_string(r, v)) {
        return "";
    }
    return node_of(r, v)->tag == TAG_STR ? "a string: " : "a quoted string: ";
}

/* Whether TEXT, a YAML 1.1 boolean that YAML 1.2 reads as a string,
 * is one. */
static int yaml11_bool(const char *text)
{
    static const char *const words[] = {"yes", "no", "on", "off", "y", "n"};
    char lower[8];
    size_t n = strlen(text);
    if (n >= sizeof lower) {
        return 0;
    }
    for (size_t i = 0; i <= n; i++) {
        lower[i] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] + 32
                                                           : text[i]);
    }
    for (int i = 0; i < 6; i++) {
        if (strcmp(lower, words[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Reports that V, the value of WHAT, is not KIND ("an integer"): how it is
 * written, NOTE after it. Returns 0. */
static int not_a(struct reader *r, const char *what, const char *kind,
                 struct ref v, const struct param_value *out,
                 const char *note)
{
    char tmp[96];
    diag_error(r->d, r->path, out->mark, "%s must be %s, found %s%s%s", what,
               kind, string_note(r, v), node_shown(r, v, tmp, sizeof tmp),
               note);
    return 0;
}

/* parse_param for an integer DEF: NUMBER says TEXT may be one. */
static int parse_int(struct reader *r, const struct param_def *def,
                     const char *what, struct ref v, const char *text,
                     int number, struct param_value *out)
{
    char *end = NULL;
    errno = 0;
    long long i = number ? strtoll(text, &end, 10) : 0;
    if (!number || *end != '\0' || end == text) {
        return not_a(r, what, "an integer", v, out, "");
    }
    if (errno == ERANGE || i < (long long)def->min ||
        i > (long long)def->max) {
        /* On ERANGE i is LLONG_MIN or LLONG_MAX: the sign still says
         * which bound was crossed. */
        if (i < (long long)def->min) {
            diag_error(r->d, r->path, out->mark,
                       "%s must be >= %.0f (got %s)", what, def->min,
                       text);
        } else {
            diag_error(r->d, r->path, out->mark,
                       "%s must be <= %.0f (got %s)", what, def->max,
                       text);
        }
        return 0;
    }
    out->num = (double)i;
    return 1;
}

/* parse_param for a real DEF: NUMBER says TEXT may be one. */
static int parse_float(struct reader *r, const struct param_def *def,
                       const char *what, struct ref v, const char *text,
                       int number, struct param_value *out)
{
    char *end = NULL;
    errno = 0;
    double f = number ? strtod(text, &end) : 0;
    if (!number || *end != '\0' || end == text || isnan(f) ||
        strpbrk(text, "xXnN") != NULL) {
        return not_a(r, what, "a number", v, out, "");
    }
    if (!isfinite(f) || fabs(f) > FLT_MAX) {
        diag_error(r->d, r->path, out->mark,
                   "%s is out of float32 range (got %s)", what, text);
        return 0;
    }
    /* Kernels compute in float32: a value below its normal range is 0
     * there, or a subnormal that devices may flush to 0. */
    if ((errno == ERANGE && fabs(f) < 1) ||
        (f != 0 && fabs(f) < FLT_MIN)) {
        diag_error(r->d, r->path, out->mark,
                   "%s is too small for float32 (got %s): a nonzero "
                   "value needs a magnitude of at least %g",
                   what, text, FLT_MIN);
        return 0;
    }
    if (f < def->min || f > def->max) {
        diag_error(r->d, r->path, out->mark,
                   f < def->min ? "%s must be >= %g (got %s)"
                                : "%s must be <= %g (got %s)",
                   what, f < def->min ? def->min : def->max, text);
        return 0;
    }
    out->num = f;
    return 1;
}

/* parse_param for a boolean DEF. */
static int parse_bool(struct reader *r, const char *what, struct ref v,
                      const char *text, struct param_value *out)
{
    const struct node *n = node_of(r, v);
    /* YAML 1.2's booleans (core schema). */
    static const char *const spellings[] = {"true", "True", "TRUE",
                                            "false", "False", "FALSE"};
    int plain = n->kind == NODE_SCALAR &&
                (n->tag == TAG_BOOL || (n->tag == TAG_NONE && !n->quoted));
    for (int i = 0; plain && i < 6; i++) {
        if (strcmp(text, spellings[i]) == 0) {
            out->num = i < 3;
            return 1;
        }
    }
    return not_a(r, what, "true or false", v, out,
                 plain && yaml11_bool(text)
                     ? " (YAML 1.1's yes, no, on and off are not booleans "
                       "in YAML 1.2)"
                     : "");
}

/* parse_param for a choice DEF. */
static int parse_choice(struct reader *r, const struct param_def *def,
                        const char *what, struct ref v,
                        struct param_value *out)
{
    for (int i = 0; def->choices[i] != NULL; i++) {
        if (scalar_is(r, v, def->choices[i])) {
            out->num = i;
            return 1;
        }
    }
    char list[256] = "";
    for (int i = 0; def->choices[i] != NULL; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, def->choices[i], sizeof list - strlen(list) - 1);
    }
    return not_one_of(r, what, list, v, out->mark);
}

/* Parses V as the value of parameter DEF into OUT (set and mark filled).
 * WHAT names it in messages ("in_features", "tile m"). Plain scalars are
 * read by their text; a quoted or !!str one is a string, read only where a
 * string is expected; !!int, !!float and !!bool say what the text must
 * be. */
int parse_param(struct reader *r, const struct param_def *def,
                const char *what, struct ref v, struct param_value *out)
{
    const struct node *n = node_of(r, v);
    const char *text = n->kind == NODE_SCALAR ? text_of(r, v) : "";
    /* Numbers have no leading space (strtoll and strtod would skip it). */
    int number = n->kind == NODE_SCALAR && n->count > 0 &&
                 (n->tag == TAG_NONE ? !n->quoted
                                     : n->tag == TAG_INT ||
                                           (n->tag == TAG_FLOAT &&
                                            def->kind == VALUE_FLOAT)) &&
                 strchr("+-.0123456789", text[0]) != NULL;
    out->set = 1;
    out->mark = at(r, v);
    if (!node_usable(r, v)) {
        return 0;
    }
    switch (def->kind) {
    case VALUE_INT:
        return parse_int(r, def, what, v, text, number, out);
    case VALUE_FLOAT:
        return parse_float(r, def, what, v, text, number, out);
    case VALUE_BOOL:
        return parse_bool(r, what, v, text, out);
    case VALUE_CHOICE:
        return parse_choice(r, def, what, v, out);
    }
    return 0;
}
