/* spec.c - reads YAML op spec files (libyaml) into validated kernel specs.
 *
 * A file is a mapping with an optional `defaults:` mapping (dtype) and a
 * `kernels:` sequence. Each kernel is a mapping of `name`, `op`, `dtype`,
 * `tile` (a mapping of the op's knobs, or `auto`) and the op's fields.
 * Every problem is reported at its node's mark; reading goes on after an
 * error so that one run shows them all. */
#include "spec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "knobs.h"

void spec_set_init(struct spec_set *s)
{
    s->n_kernel = 0;
    s->cap = 0;
    s->kernel = NULL;
}

void spec_set_free(struct spec_set *s)
{
    free(s->kernel);
    spec_set_init(s);
}

/* A kernel name given in the file being read, valid or not. */
struct seen_name {
    char name[SPECL_NAME_MAX];
    struct mark mark;
};

/* Reading state for one file. */
struct reader {
    yaml_document_t *doc;
    const char *path;
    struct diags *d;
    struct spec_set *set;
    int first_kernel;      /* index in set of this file's first kernel */
    enum dtype dtype;      /* from defaults: */
    struct seen_name *seen; /* every name of this file so far (owned) */
    int n_seen, cap_seen;
};

static struct mark mark_of(const yaml_node_t *n)
{
    struct mark m = {(int)n->start_mark.line + 1,
                     (int)n->start_mark.column + 1};
    return m;
}

static const char *node_kind(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE:
        if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
            return "a string";
        }
        return n->data.scalar.length == 0 ? "an empty value" : "a scalar";
    case YAML_SEQUENCE_NODE:
        return "a sequence";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "nothing";
    }
}

/* Quotes a scalar for a message, cut to a readable length. */
static const char *shown(const yaml_node_t *n, char *buf, size_t size)
{
    if (n->type != YAML_SCALAR_NODE) {
        snprintf(buf, size, "%s", node_kind(n));
        return buf;
    }
    const char *v = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    if (len > 40) {
        snprintf(buf, size, "'%.37s...'", v);
    } else {
        snprintf(buf, size, "'%.*s'", (int)len, v);
    }
    return buf;
}

static int is_scalar(const yaml_node_t *n, const char *text)
{
    return n->type == YAML_SCALAR_NODE &&
           strlen(text) == n->data.scalar.length &&
           memcmp(n->data.scalar.value, text, n->data.scalar.length) == 0;
}

static const char *scalar_text(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* Checks that the keys of mapping N are scalars and not repeated. Returns
 * 0 when some key is bad (reported). */
static int check_keys(struct reader *r, yaml_node_t *n)
{
    int ok = 1;
    yaml_node_pair_t *p;
    for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        if (k->type != YAML_SCALAR_NODE) {
            diag_error(r->d, r->path, mark_of(k),
                       "expected a key (a plain word), found %s",
                       node_kind(k));
            ok = 0;
            continue;
        }
        for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k0 = yaml_document_get_node(r->doc, q->key);
            if (k0->type == YAML_SCALAR_NODE &&
                is_scalar(k, scalar_text(k0))) {
                struct mark m0 = mark_of(k0);
                diag_error(r->d, r->path, mark_of(k),
                           "duplicate key '%s' (first given at line %d)",
                           scalar_text(k), m0.line);
                ok = 0;
                break;
            }
        }
    }
    return ok;
}

/* Finds KEY in mapping N; NULL if absent. */
static yaml_node_t *lookup(struct reader *r, yaml_node_t *n, const char *key)
{
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
         p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        if (is_scalar(k, key)) {
            return yaml_document_get_node(r->doc, p->value);
        }
    }
    return NULL;
}

static int parse_dtype(struct reader *r, yaml_node_t *v, enum dtype *out)
{
    static const char *const names[] = {"f32", "f16", "bf16"};
    char tmp[64];
    for (int i = 0; i < 3; i++) {
        if (is_scalar(v, names[i]) &&
            v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
            *out = (enum dtype)i;
            return 1;
        }
    }
    diag_error(r->d, r->path, mark_of(v),
               "dtype must be one of f32, f16, bf16 (got %s)",
               shown(v, tmp, sizeof tmp));
    return 0;
}

/* Parses V as the value of parameter DEF into OUT (set and mark filled).
 * WHAT names it in messages ("in_features", "tile m"). */
static int parse_param(struct reader *r, const struct param_def *def,
                       const char *what, yaml_node_t *v,
                       struct param_value *out)
{
    char tmp[64];
    const char *text = v->type == YAML_SCALAR_NODE ? scalar_text(v) : "";
    int plain = v->type == YAML_SCALAR_NODE &&
                v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                v->data.scalar.length > 0;
    out->set = 1;
    out->mark = mark_of(v);
    switch (def->kind) {
    case VALUE_INT: {
        char *end = NULL;
        errno = 0;
        long long n = plain ? strtoll(text, &end, 10) : 0;
        if (!plain || *end != '\0' || end == text) {
            diag_error(r->d, r->path, out->mark,
                       "%s must be an integer, found %s", what,
                       shown(v, tmp, sizeof tmp));
            return 0;
        }
        if (errno == ERANGE || n < (long long)def->min ||
            n > (long long)def->max) {
            /* On ERANGE n is LLONG_MIN or LLONG_MAX: the sign still says
             * which bound was crossed. */
            if (n < (long long)def->min) {
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
        out->num = (double)n;
        return 1;
    }
    case VALUE_FLOAT: {
        char *end = NULL;
        double f = plain ? strtod(text, &end) : 0;
        if (!plain || *end != '\0' || end == text || isnan(f) ||
            strpbrk(text, "xXnN") != NULL) {
            diag_error(r->d, r->path, out->mark,
                       "%s must be a number, found %s", what,
                       shown(v, tmp, sizeof tmp));
            return 0;
        }
        if (!isfinite(f) || fabs(f) > 3.4e38) {
            diag_error(r->d, r->path, out->mark,
                       "%s is out of float32 range (got %s)", what, text);
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
    case VALUE_BOOL:
        if (plain && (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)) {
            out->num = text[0] == 't';
            return 1;
        }
        diag_error(r->d, r->path, out->mark,
                   "%s must be true or false, found %s", what,
                   shown(v, tmp, sizeof tmp));
        return 0;
    case VALUE_CHOICE:
        for (int i = 0; def->choices[i] != NULL; i++) {
            if (plain && strcmp(text, def->choices[i]) == 0) {
                out->num = i;
                return 1;
            }
        }
        {
            char list[256] = "";
            for (int i = 0; def->choices[i] != NULL; i++) {
                strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, def->choices[i],
                        sizeof list - strlen(list) - 1);
            }
            diag_error(r->d, r->path, out->mark,
                       "%s must be one of %s (got %s)", what, list,
                       shown(v, tmp, sizeof tmp));
        }
        return 0;
    }
    return 0;
}

static void expected_keys(char *list, size_t size,
                          const struct param_def *defs, int n,
                          const char *const *extra)
{
    list[0] = '\0';
    for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
        strncat(list, list[0] ? ", " : "", size - strlen(list) - 1);
        strncat(list, extra[i], size - strlen(list) - 1);
    }
    for (int i = 0; i < n; i++) {
        strncat(list, list[0] ? ", " : "", size - strlen(list) - 1);
        strncat(list, defs[i].key, size - strlen(list) - 1);
    }
}

static void read_tile(struct reader *r, struct kernel_spec *ks,
                      yaml_node_t *v)
{
    const struct op_def *op = ks->op;
    if (is_scalar(v, "auto") &&
        v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        ks->tile_auto = 1;
        return;
    }
    if (v->type != YAML_MAPPING_NODE) {
        char tmp[64];
        diag_error(r->d, r->path, mark_of(v),
                   "tile must be a mapping of knobs or 'auto', found %s",
                   shown(v, tmp, sizeof tmp));
        return;
    }
    if (!check_keys(r, v)) {
        return;
    }
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start;
         p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *val = yaml_document_get_node(r->doc, p->value);
        int i = op_knob_index(op, scalar_text(k));
        if (i < 0) {
            char list[512];
            expected_keys(list, sizeof list, op->knobs, op->n_knobs, NULL);
            diag_error(r->d, r->path, mark_of(k),
                       "unknown tile knob '%s' for op %s (expected one of: "
                       "%s)",
                       scalar_text(k), op->name, list);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "tile %s", op->knobs[i].key);
        parse_param(r, &op->knobs[i], what, val, &ks->knob[i]);
    }
}

static int same_ignoring_case(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (ca != cb) {
            return 0;
        }
    }
    return *a == *b;
}

/* Reports NAME (at AT) if it equals OTHER, defined at FILE:M, or differs
 * from it only in case (NAME.h and OTHER.h would be one file on a
 * case-insensitive file system). Returns 1 if reported. */
static int name_clash(struct reader *r, const char *name, struct mark at,
                      const char *other, const char *file, struct mark m)
{
    if (strcmp(name, other) == 0) {
        diag_error(r->d, r->path, at,
                   "duplicate kernel name '%s' (first defined at %s:%d:%d)",
                   name, file, m.line, m.col);
        return 1;
    }
    if (same_ignoring_case(name, other)) {
        diag_error(r->d, r->path, at,
                   "kernel name '%s' differs from '%s' (defined at "
                   "%s:%d:%d) only in case; their files would collide on "
                   "case-insensitive file systems",
                   name, other, file, m.line, m.col);
        return 1;
    }
    return 0;
}

/* Reports NAME (at AT) if an earlier file of the set or an earlier kernel
 * of this file (valid or not) has it, in any case; else remembers it with
 * KERNEL, the mark of its kernel. Returns 1 if reported. */
static int duplicate_name(struct reader *r, const char *name,
                          struct mark at, struct mark kernel)
{
    for (int i = 0; i < r->first_kernel; i++) {
        const struct kernel_spec *o = &r->set->kernel[i];
        if (name_clash(r, name, at, o->name, o->file, o->mark)) {
            return 1;
        }
    }
    for (int i = 0; i < r->n_seen; i++) {
        if (name_clash(r, name, at, r->seen[i].name, r->path,
                       r->seen[i].mark)) {
            return 1;
        }
    }
    if (r->n_seen == r->cap_seen) {
        int cap = r->cap_seen ? r->cap_seen * 2 : 16;
        struct seen_name *p = realloc(r->seen, (size_t)cap * sizeof *p);
        if (p == NULL) {
            fputs("specl: out of memory\n", stderr);
            exit(1);
        }
        r->seen = p;
        r->cap_seen = cap;
    }
    snprintf(r->seen[r->n_seen].name, SPECL_NAME_MAX, "%s", name);
    r->seen[r->n_seen].mark = kernel;
    r->n_seen++;
    return 0;
}

static void append_kernel(struct spec_set *s, const struct kernel_spec *ks)
{
    if (s->n_kernel == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        struct kernel_spec *k = realloc(s->kernel, (size_t)cap * sizeof *k);
        if (k == NULL) {
            fputs("specl: out of memory\n", stderr);
            exit(1);
        }
        s->kernel = k;
        s->cap = cap;
    }
    s->kernel[s->n_kernel++] = *ks;
}

/* Whether every character of NAME may be in a C identifier and its length
 * fits. */
static int identifier_syntax(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= SPECL_NAME_MAX) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) {
            return 0;
        }
    }
    return 1;
}

static void read_kernel(struct reader *r, yaml_node_t *n)
{
    static const char *const common[] = {"name", "op", "dtype", "tile",
                                         NULL};
    char tmp[64], why[256];
    int errors = r->d->count;
    if (n->type != YAML_MAPPING_NODE) {
        diag_error(r->d, r->path, mark_of(n),
                   "expected a kernel (a mapping with name and op), found "
                   "%s",
                   shown(n, tmp, sizeof tmp));
        return;
    }
    if (!check_keys(r, n)) {
        return;
    }
    struct kernel_spec ks;
    memset(&ks, 0, sizeof ks);
    ks.file = r->path;
    ks.mark = mark_of(n);
    ks.dtype = r->dtype;

    yaml_node_t *name = lookup(r, n, "name");
    yaml_node_t *op = lookup(r, n, "op");
    if (name == NULL) {
        diag_error(r->d, r->path, ks.mark, "kernel has no 'name'");
    } else if (name->type != YAML_SCALAR_NODE ||
               !identifier_syntax(scalar_text(name))) {
        diag_error(r->d, r->path, mark_of(name),
                   "name must be a C identifier of at most %d characters "
                   "(got %s)",
                   SPECL_NAME_MAX - 1, shown(name, tmp, sizeof tmp));
    } else if (spec_name_reserved(scalar_text(name), why, sizeof why)) {
        diag_error(r->d, r->path, mark_of(name),
                   "kernel name %s; choose another name", why);
    } else if (!duplicate_name(r, scalar_text(name), mark_of(name),
                               ks.mark)) {
        snprintf(ks.name, sizeof ks.name, "%s", scalar_text(name));
    }
    if (op == NULL) {
        diag_error(r->d, r->path, ks.mark, "kernel has no 'op'");
        return;
    }
    ks.op = op->type == YAML_SCALAR_NODE ? op_find(scalar_text(op)) : NULL;
    if (ks.op == NULL) {
        char list[256] = "";
        for (int i = 0; op_registry[i] != NULL; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, op_registry[i]->name,
                    sizeof list - strlen(list) - 1);
        }
        diag_error(r->d, r->path, mark_of(op),
                   "unknown op %s (expected one of: %s)",
                   shown(op, tmp, sizeof tmp), list);
        return;
    }

    for (int i = 0; i < ks.op->n_fields; i++) {
        ks.field[i].num = ks.op->fields[i].def;
        ks.field[i].mark = ks.mark;
    }
    for (int i = 0; i < ks.op->n_knobs; i++) {
        ks.knob[i].mark = ks.mark;
    }

    for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
         p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(r->doc, p->value);
        const char *key = scalar_text(k);
        if (strcmp(key, "name") == 0 || strcmp(key, "op") == 0) {
            continue;
        }
        if (strcmp(key, "dtype") == 0) {
            parse_dtype(r, v, &ks.dtype);
            continue;
        }
        if (strcmp(key, "tile") == 0) {
            read_tile(r, &ks, v);
            continue;
        }
        int i = op_field_index(ks.op, key);
        if (i < 0) {
            char list[512];
            expected_keys(list, sizeof list, ks.op->fields,
                          ks.op->n_fields, common);
            diag_error(r->d, r->path, mark_of(k),
                       "unknown key '%s' for op %s (expected one of: %s)",
                       key, ks.op->name, list);
            continue;
        }
        parse_param(r, &ks.op->fields[i], key, v, &ks.field[i]);
    }
    for (int i = 0; i < ks.op->n_fields; i++) {
        if (ks.op->fields[i].required && !ks.field[i].set) {
            diag_error(r->d, r->path, ks.mark,
                       "kernel '%s' (%s) has no '%s' (%s)",
                       ks.name[0] ? ks.name : "?", ks.op->name,
                       ks.op->fields[i].key, ks.op->fields[i].help);
        }
    }
    if (r->d->count != errors) {
        return;
    }
    knobs_resolve(&ks, r->d);
    if (r->d->count == errors) {
        append_kernel(r->set, &ks);
    }
}

static void read_defaults(struct reader *r, yaml_node_t *n)
{
    char tmp[64];
    if (n->type != YAML_MAPPING_NODE) {
        diag_error(r->d, r->path, mark_of(n),
                   "defaults must be a mapping, found %s",
                   shown(n, tmp, sizeof tmp));
        return;
    }
    if (!check_keys(r, n)) {
        return;
    }
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
         p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(r->doc, p->value);
        if (is_scalar(k, "dtype")) {
            parse_dtype(r, v, &r->dtype);
        } else {
            diag_error(r->d, r->path, mark_of(k),
                       "unknown key '%s' in defaults (expected: dtype)",
                       scalar_text(k));
        }
    }
}

static void read_kernels(struct reader *r, yaml_node_t *kernels)
{
    char tmp[64];
    if (kernels->type != YAML_SEQUENCE_NODE ||
        kernels->data.sequence.items.start ==
            kernels->data.sequence.items.top) {
        diag_error(r->d, r->path, mark_of(kernels),
                   "kernels must be a non-empty sequence, found %s",
                   kernels->type == YAML_SEQUENCE_NODE
                       ? "an empty one"
                       : shown(kernels, tmp, sizeof tmp));
        return;
    }
    for (yaml_node_item_t *it = kernels->data.sequence.items.start;
         it < kernels->data.sequence.items.top; it++) {
        read_kernel(r, yaml_document_get_node(r->doc, *it));
    }
}

static void read_root(struct reader *r, yaml_node_t *root)
{
    char tmp[64];
    if (root->type != YAML_MAPPING_NODE) {
        diag_error(r->d, r->path, mark_of(root),
                   "expected a mapping with 'kernels:', found %s",
                   shown(root, tmp, sizeof tmp));
        return;
    }
    if (!check_keys(r, root)) {
        return;
    }
    /* Kernels need the default dtype even when `defaults:` comes after
     * them: read it quietly first, then report in file order. */
    yaml_node_t *defaults = lookup(r, root, "defaults");
    if (defaults != NULL) {
        struct diags quiet = {.out = NULL};
        struct diags *loud = r->d;
        r->d = &quiet;
        read_defaults(r, defaults);
        r->d = loud;
    }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
         p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(r->doc, p->value);
        if (is_scalar(k, "defaults")) {
            read_defaults(r, v);
        } else if (is_scalar(k, "kernels")) {
            read_kernels(r, v);
        } else {
            diag_error(r->d, r->path, mark_of(k),
                       "unknown key '%s' (expected 'defaults' or "
                       "'kernels')",
                       scalar_text(k));
        }
    }
    if (lookup(r, root, "kernels") == NULL) {
        diag_error(r->d, r->path, mark_of(root),
                   "spec has no 'kernels:' sequence");
    }
}

/* Reports libyaml's own problem and mark (line and column from 0). */
static void report_yaml_error(struct diags *d, const char *path,
                              const yaml_parser_t *parser)
{
    const yaml_mark_t *pm = &parser->problem_mark;
    struct mark m = {(int)pm->line + 1, (int)pm->column + 1};
    if (parser->context != NULL) {
        diag_error(d, path, m, "malformed YAML: %s %s",
                   parser->problem ? parser->problem : "error",
                   parser->context);
    } else {
        diag_error(d, path, m, "malformed YAML: %s",
                   parser->problem ? parser->problem : "error");
    }
}

int spec_read_buffer(struct spec_set *s, const char *path,
                     const unsigned char *data, size_t len, struct diags *d)
{
    int before = d->count;
    int n_before = s->n_kernel;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        struct mark none = {0, 0};
        diag_error(d, path, none, "cannot initialise the YAML parser");
        return 1;
    }
    yaml_parser_set_input_string(&parser, data, len);
    if (!yaml_parser_load(&parser, &doc)) {
        report_yaml_error(d, path, &parser);
        yaml_parser_delete(&parser);
        return d->count - before;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root == NULL) {
        struct mark m = {1, 1};
        diag_error(d, path, m,
                   "empty spec: expected a mapping with 'kernels:'");
    } else {
        struct reader r = {&doc, path, d, s, s->n_kernel, DTYPE_F32,
                           NULL, 0, 0};
        read_root(&r, root);
        free(r.seen);
        /* A second document would be silently ignored: refuse it. */
        yaml_document_t extra;
        if (yaml_parser_load(&parser, &extra)) {
            yaml_node_t *x = yaml_document_get_root_node(&extra);
            if (x != NULL) {
                diag_error(d, path, mark_of(x),
                           "expected one YAML document, found another");
            }
            yaml_document_delete(&extra);
        } else {
            report_yaml_error(d, path, &parser); /* junk after the spec */
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (d->count != before) {
        s->n_kernel = n_before; /* nothing of a bad file is kept */
    }
    return d->count - before;
}

int spec_set_target(struct spec_set *s, enum target target, struct diags *d)
{
    int before = d->count;
    for (int i = 0; i < s->n_kernel; i++) {
        struct kernel_spec *ks = &s->kernel[i];
        if (ks->target == target) {
            continue;
        }
        ks->target = target;
        if (target == TARGET_CPU && ks->tile_note[0] == '\0') {
            snprintf(ks->tile_note, sizeof ks->tile_note,
                     "op defaults for CPUs");
        } else if (target == TARGET_GPU &&
                   strcmp(ks->tile_note, "op defaults for CPUs") == 0) {
            ks->tile_note[0] = '\0';
        }
        knobs_resolve(ks, d);
    }
    return d->count - before;
}

int spec_read_file(struct spec_set *s, const char *path, struct diags *d)
{
    struct mark none = {0, 0};
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        diag_error(d, path, none, "cannot open: %s", strerror(errno));
        return 1;
    }
    unsigned char *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            unsigned char *p = realloc(data, cap);
            if (p == NULL) {
                free(data);
                fclose(f);
                diag_error(d, path, none, "out of memory");
                return 1;
            }
            data = p;
        }
        size_t n = fread(data + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            break;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(data);
        diag_error(d, path, none, "cannot read: %s", strerror(errno));
        return 1;
    }
    int errors = spec_read_buffer(s, path, data, len, d);
    free(data);
    return errors;
}

int spec_is_identifier(const char *name)
{
    static const char *const keywords[] = {
        "auto", "break", "case", "char", "const", "continue", "default",
        "do", "double", "else", "enum", "extern", "float", "for", "goto",
        "if", "inline", "int", "long", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch",
        "typedef", "union", "unsigned", "void", "volatile", "while",
        "kernel", "global", "local", "constant", "private", NULL};
    if (!identifier_syntax(name)) {
        return 0;
    }
    for (int i = 0; keywords[i] != NULL; i++) {
        if (strcmp(name, keywords[i]) == 0) {
            return 0;
        }
    }
    return 1;
}
