/* spec.c - reads YAML op spec files (libyaml) into validated kernel specs.
 *
 * A file is a mapping with an optional `defaults:` mapping (dtype, and
 * any field of an op: spec_defaults.c) and a `kernels:` sequence. Each
 * kernel is a mapping of `name`, `op`, `dtype`,
 * `tile` (a mapping of the op's knobs, or `auto`) and the op's fields.
 * Every problem is reported where it is written; reading goes on after an
 * error so that one run shows them all.
 *
 * This file reads whole files over the parts below it, each with its
 * header: the document (spec_doc.c), its nodes (spec_node.c), scalar
 * values (spec_scalar.c), one kernel (spec_kernel.c), the name index
 * (spec_index.c) and memory (spec_strmap.c).
 * Time and memory stay linear in the size of the file. */
#include "spec.h"

#include "spec_kernel.h"
#include "spec_defaults.h"
#include "spec_scalar.h"
#include "spec_index.h"
#include "spec_node.h"
#include "spec_doc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"

/* Larger specs are refused: node and kernel counts stay far from INT_MAX. */
#define SPEC_MAX_BYTES (1024L * 1024 * 1024)

/* Appends KS to S. */
static void append_kernel(struct spec_set *s, const struct kernel_spec *ks)
{
    if (s->n_kernel == s->cap) {
        size_t cap = (size_t)s->cap;
        s->kernel = spec_grow(s->kernel, &cap, sizeof *s->kernel);
        s->cap = (int)cap;
    }
    s->kernel[s->n_kernel++] = *ks;
}

/* Reads the kernels: sequence, each valid kernel into S. */
static void read_kernels(struct reader *r, struct ref kernels,
                         struct spec_set *s)
{
    char tmp[96];
    if (!node_usable(r, kernels)) {
        return;
    }
    if (!is_kind(r, kernels, NODE_SEQUENCE) || n_items(r, kernels) == 0) {
        diag_error(r->d, r->path, at(r, kernels),
                   "kernels must be a non-empty sequence, found %s",
                   is_kind(r, kernels, NODE_SEQUENCE)
                       ? "an empty one"
                       : node_shown(r, kernels, tmp, sizeof tmp));
        return;
    }
    int entered = enter_node(r, kernels);
    for (size_t i = 0; i < n_items(r, kernels); i++) {
        struct ref k = item_of(r, kernels, i);
        int inner = enter_node(r, k);
        struct kernel_spec ks;
        if (spec_read_kernel(r, k, &ks)) {
            append_kernel(s, &ks);
        }
        leave_node(r, inner);
    }
    leave_node(r, entered);
}

static void read_root(struct reader *r, struct ref root, struct spec_set *s)
{
    char tmp[96];
    if (!node_usable(r, root)) {
        return;
    }
    if (!is_kind(r, root, NODE_MAPPING)) {
        diag_error(r->d, r->path, at(r, root),
                   "expected a mapping with 'kernels:', found %s",
                   node_shown(r, root, tmp, sizeof tmp));
        return;
    }
    if (!map_check_keys(r, root)) {
        return;
    }
    /* Kernels need the defaults even when `defaults:` comes after them:
     * read it quietly first, then report in file order. */
    struct ref defaults, kernels;
    if (map_lookup(r, root, "defaults", &defaults)) {
        struct diags quiet = {.out = NULL};
        struct diags *loud = r->d;
        r->d = &quiet;
        spec_read_defaults(r, defaults);
        r->d = loud;
    }
    for (size_t p = 0; p + 1 < n_items(r, root); p += 2) {
        struct ref k = item_of(r, root, p);
        struct ref v = item_of(r, root, p + 1);
        if (scalar_is(r, k, "defaults")) {
            spec_read_defaults(r, v);
        } else if (scalar_is(r, k, "kernels")) {
            read_kernels(r, v, s);
        } else {
            diag_error(r->d, r->path, at(r, k),
                       "unknown key '%s' (expected 'defaults' or "
                       "'kernels')",
                       text_of(r, k));
        }
    }
    if (!map_lookup(r, root, "kernels", &kernels)) {
        diag_error(r->d, r->path, at(r, root),
                   "spec has no 'kernels:' sequence");
    }
}

void spec_set_init(struct spec_set *s)
{
    s->n_kernel = 0;
    s->cap = 0;
    s->kernel = NULL;
    s->names = NULL;
}

void spec_set_free(struct spec_set *s)
{
    spec_names_free(s->names);
    free(s->kernel);
    spec_set_init(s);
}

int spec_read_buffer(struct spec_set *s, const char *path,
                     const unsigned char *data, size_t len, struct diags *d)
{
    int before = d->count;
    int n_before = s->n_kernel;
    struct mark none = {0, 0};
    if (len > (size_t)SPEC_MAX_BYTES) {
        diag_error(d, path, none, "spec is larger than %ld MiB",
                   SPEC_MAX_BYTES >> 20);
        return 1;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        diag_error(d, path, none, "cannot initialise the YAML parser");
        return 1;
    }
    yaml_parser_set_input_string(&parser, data, len);
    /* The index may not hold the set's kernels (a set built by hand). */
    if (s->names == NULL || s->names->covers != s->n_kernel) {
        spec_names_rebuild(&s->names, s->kernel, s->n_kernel);
    }
    struct doc doc;
    memset(&doc, 0, sizeof doc);
    if (doc_compose(&parser, &doc, path, data, len, d) == 0) {
        if (doc.root.node < 0) {
            struct mark m = {1, 1};
            diag_error(d, path, m,
                       "empty spec: expected a mapping with 'kernels:'");
        } else {
            struct reader r;
            memset(&r, 0, sizeof r);
            r.doc = &doc;
            r.path = path;
            r.d = d;
            r.names = s->names;
            r.dtype = DTYPE_F32;
            read_root(&r, doc.root, s);
        }
        if (!doc.stream_ended) {
            doc_check_rest(&parser, path, data, len, d);
        }
    }
    doc_free(&doc);
    yaml_parser_delete(&parser);
    if (d->count != before) {
        s->n_kernel = n_before; /* nothing of a bad file is kept */
        spec_names_rebuild(&s->names, s->kernel, s->n_kernel);
    }
    s->names->covers = s->n_kernel;
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
        /* The note says which defaults, unless it says more (a
         * database entry); the GPU defaults go without one. */
        int defaults_note = ks->tile_note[0] == '\0';
        for (int t = 0; t < N_TARGETS; t++) {
            defaults_note |= strcmp(ks->tile_note,
                                    target_defaults_label((enum target)t)) ==
                              0;
        }
        ks->target = target;
        if (defaults_note) {
            snprintf(ks->tile_note, sizeof ks->tile_note, "%s",
                     target == TARGET_GPU ? ""
                                          : target_defaults_label(target));
        }
        knobs_resolve(ks, d);
    }
    return d->count - before;
}

int spec_read_file(struct spec_set *s, const char *path, struct diags *d)
{
    struct mark none = {0, 0};
    /* "-": standard input, named so in messages and emitted comments. */
    int from_stdin = strcmp(path, "-") == 0;
    if (from_stdin) {
        path = SPEC_STDIN_NAME;
    }
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        diag_error(d, path, none, "cannot open: %s", strerror(errno));
        return 1;
    }
    unsigned char *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            if (cap > (size_t)SPEC_MAX_BYTES) {
                break; /* spec_read_buffer refuses it */
            }
            cap = cap ? cap * 2 : 4096;
            unsigned char *p = realloc(data, cap);
            if (p == NULL) {
                free(data);
                if (!from_stdin) {
                    fclose(f);
                }
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
    if (!from_stdin) {
        fclose(f);
    }
    if (bad) {
        free(data);
        diag_error(d, path, none, "cannot read: %s", strerror(errno));
        return 1;
    }
    int errors = spec_read_buffer(s, path, data, len, d);
    free(data);
    return errors;
}

int spec_kernels_alike(const struct kernel_spec *a,
                       const struct kernel_spec *b)
{
    if (a->op != b->op || a->dtype != b->dtype || a->target != b->target ||
        a->tile_auto != b->tile_auto) {
        return 0;
    }
    for (int i = 0; i < a->op->n_fields; i++) {
        if (a->field[i].set != b->field[i].set ||
            a->field[i].num != b->field[i].num) {
            return 0;
        }
    }
    for (int i = 0; i < a->op->n_knobs; i++) {
        if (a->knob[i].set != b->knob[i].set ||
            a->knob[i].num != b->knob[i].num) {
            return 0;
        }
    }
    return 1;
}

/* FNV-1a over the LEN bytes at P, from H. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ b[i]) * 1099511628211u;
    }
    return h;
}

/* H and the given flag and value of V (-0 as 0, which == takes alike). */
static uint64_t key_value(uint64_t h, const struct param_value *v)
{
    double num = v->num == 0 ? 0.0 : v->num;
    h = fnv1a(h, &v->set, sizeof v->set);
    return fnv1a(h, &num, sizeof num);
}

uint64_t spec_kernel_key(const struct kernel_spec *ks)
{
    uint64_t h = fnv1a(14695981039346656037u, ks->op->name,
                       strlen(ks->op->name));
    int head[3] = {(int)ks->dtype, (int)ks->target, ks->tile_auto};
    h = fnv1a(h, head, sizeof head);
    for (int i = 0; i < ks->op->n_fields; i++) {
        h = key_value(h, &ks->field[i]);
    }
    for (int i = 0; i < ks->op->n_knobs; i++) {
        h = key_value(h, &ks->knob[i]);
    }
    return h;
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
    if (!spec_identifier_syntax(name)) {
        return 0;
    }
    for (int i = 0; keywords[i] != NULL; i++) {
        if (strcmp(name, keywords[i]) == 0) {
            return 0;
        }
    }
    return 1;
}
