/* knobs.c - resolving a kernel's knobs and their text form. */
#include "knobs.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int knobs_resolve(struct kernel_spec *ks, struct diags *d)
{
    int before = d->count;
    for (int k = 0; k < ks->op->n_knobs; k++) {
        if (!ks->knob[k].set) {
            ks->knob[k].num = ks->op->knobs[k].def;
        }
    }
    if (ks->op->defaults != NULL) {
        ks->op->defaults(ks);
    }
    ks->op->validate(ks, d);
    return d->count - before;
}

void knobs_text(const struct kernel_spec *ks, char *out, size_t size)
{
    char v[64];
    out[0] = '\0';
    for (int i = 0; i < ks->op->n_knobs; i++) {
        param_format(&ks->op->knobs[i], ks->knob[i].num, v, sizeof v);
        size_t len = strlen(out);
        int n = snprintf(out + len, size - len, "%s%s=%s", i ? " " : "",
                         ks->op->knobs[i].key, v);
        /* A truncated text would name other knobs: OUT holds them all. */
        assert(n >= 0 && (size_t)n < size - len);
    }
}

int knobs_text_value(const char *text, const char *key, char *value,
                     size_t size)
{
    size_t kl = strlen(key);
    for (const char *p = text; *p != '\0';) {
        size_t len = strcspn(p, " ");
        if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            snprintf(value, size, "%.*s", (int)(len - kl - 1), p + kl + 1);
            return 0;
        }
        p += len;
        p += strspn(p, " ");
    }
    return -1;
}

int knobs_parse_value(const struct param_def *def, const char *val,
                      double *num)
{
    if (def->kind == VALUE_CHOICE) {
        for (int c = 0; def->choices[c] != NULL; c++) {
            if (strcmp(def->choices[c], val) == 0) {
                *num = c;
                return 0;
            }
        }
        return -1;
    }
    if (def->kind == VALUE_BOOL) {
        if (strcmp(val, "true") != 0 && strcmp(val, "false") != 0) {
            return -1;
        }
        *num = strcmp(val, "true") == 0;
        return 0;
    }
    char *end;
    *num = strtod(val, &end);
    if (end == val || *end != '\0' || *num < def->min || *num > def->max ||
        (def->kind == VALUE_INT && *num != floor(*num))) {
        return -1;
    }
    return 0;
}

int knobs_parse(struct kernel_spec *ks, const char *text, char *why,
                size_t why_size)
{
    struct param_value knob[SPECL_MAX_PARAMS];
    int given[SPECL_MAX_PARAMS] = {0};
    char key[64], val[64];
    memcpy(knob, ks->knob, sizeof knob);
    for (const char *p = text + strspn(text, " "); *p != '\0';) {
        size_t len = strcspn(p, " ");
        const char *eq = memchr(p, '=', len);
        size_t kl = eq != NULL ? (size_t)(eq - p) : len;
        snprintf(key, sizeof key, "%.*s", (int)kl, p);
        snprintf(val, sizeof val, "%.*s", eq != NULL ? (int)(len - kl - 1) : 0,
                 eq != NULL ? eq + 1 : "");
        int k = eq != NULL ? op_knob_index(ks->op, key) : -1;
        double num = 0;
        if (eq == NULL || k < 0 ||
            knobs_parse_value(&ks->op->knobs[k], val, &num) < 0) {
            if (why != NULL) {
                snprintf(why, why_size, "%s '%.*s' in \"%s\"",
                         eq == NULL ? "no '=' in" :
                         k < 0      ? "unknown knob" : "bad value of",
                         (int)len, p, text);
            }
            return -1;
        }
        if (given[k]) { /* the last would win, silently */
            if (why != NULL) {
                snprintf(why, why_size, "knob '%s' given twice in \"%s\"",
                         key, text);
            }
            return -1;
        }
        given[k] = 1;
        knob[k].num = num;
        knob[k].set = 1;
        p += len;
        p += strspn(p, " ");
    }
    memcpy(ks->knob, knob, sizeof knob);
    return 0;
}

int knobs_example(const struct op_def *op, enum target target,
                  struct kernel_spec *out)
{
    struct diags quiet = {.out = NULL};
    char value[64];
    memset(out, 0, sizeof *out);
    out->op = op;
    out->target = target;
    snprintf(out->name, sizeof out->name, "example");
    for (int i = 0; i < op->n_fields; i++) {
        out->field[i].num = op->fields[i].def;
        if (op->example != NULL &&
            knobs_text_value(op->example, op->fields[i].key, value,
                             sizeof value) == 0) {
            if (knobs_parse_value(&op->fields[i], value,
                                  &out->field[i].num) < 0) {
                return -1;
            }
            out->field[i].set = 1;
        }
    }
    return knobs_resolve(out, &quiet) == 0 ? 0 : -1;
}
