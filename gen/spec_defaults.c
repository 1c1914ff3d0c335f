/* spec_defaults.c - a spec's `defaults:`: dtype, and any field of an op
 * (rank, alpha, eps, weight_layout, a group such as rope's scaling).
 * A default is checked where it is written, against the op of each
 * kernel that takes it: the same key may be a field of several ops, with
 * ranges of their own. */
#include "spec_defaults.h"
#include "spec_group.h"
#include "spec_scalar.h"

#include <stdio.h>
#include <string.h>

/* Fields that say one thing two ways: defaults give at most one of a
 * pair, and a kernel that gives either takes neither from defaults. */
static const char *const exclusive[][2] = {{"alpha", "scale"}};
#define N_EXCLUSIVE (sizeof exclusive / sizeof exclusive[0])

/* Whether some op of the registry has KEY as a field, or as a group of
 * fields. (A program's own ops, op_add, are not asked: what defaults
 * take is the same in every program.) */
static int some_op_has(const char *key)
{
    if (strchr(key, '.') != NULL) {
        return 0;
    }
    for (int i = 0; op_registry[i] != NULL; i++) {
        if (op_field_index(op_registry[i], key) >= 0 ||
            op_field_group(op_registry[i], key)) {
            return 1;
        }
    }
    return 0;
}

/* Whether the comma-separated LIST holds the LEN bytes of WORD. */
static int list_has(const char *list, const char *word, size_t len)
{
    for (const char *p = list; *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, word, len) == 0) {
            return 1;
        }
        p += n;
        p += strspn(p, ", ");
    }
    return 0;
}

/* "dtype, " then the fields of every op, each once, a group by its
 * name: what defaults: accepts. */
static void accepted_keys(char *list, size_t size)
{
    snprintf(list, size, "dtype");
    for (int i = 0; op_registry[i] != NULL; i++) {
        const struct op_def *op = op_registry[i];
        for (int f = 0; f < op->n_fields; f++) {
            const char *key = op->fields[f].key;
            size_t len = strcspn(key, ".");
            size_t at = strlen(list);
            if (!list_has(list, key, len)) {
                snprintf(list + at, size - at, ", %.*s", (int)len, key);
            }
        }
    }
}

/* Reports the second of a pair of exclusive fields that mapping N
 * gives. */
static void check_exclusive(struct reader *r, struct ref n)
{
    for (size_t e = 0; e < N_EXCLUSIVE; e++) {
        struct ref a, b;
        if (map_lookup(r, n, exclusive[e][0], &a) &&
            map_lookup(r, n, exclusive[e][1], &b)) {
            diag_error(r->d, r->path, at(r, b),
                       "defaults give %s and %s; give one (scale = alpha / "
                       "rank)",
                       exclusive[e][0], exclusive[e][1]);
        }
    }
}

void spec_read_defaults(struct reader *r, struct ref n)
{
    char tmp[96];
    r->has_defaults = 0;
    if (!node_usable(r, n)) {
        return;
    }
    if (!is_kind(r, n, NODE_MAPPING)) {
        diag_error(r->d, r->path, at(r, n),
                   "defaults must be a mapping, found %s",
                   node_shown(r, n, tmp, sizeof tmp));
        return;
    }
    int entered = enter_node(r, n);
    if (map_check_keys(r, n)) {
        r->has_defaults = 1;
        r->defaults = n;
        for (size_t p = 0; p + 1 < n_items(r, n); p += 2) {
            struct ref k = item_of(r, n, p);
            if (scalar_is(r, k, "dtype")) {
                parse_dtype(r, item_of(r, n, p + 1), &r->dtype);
            } else if (!some_op_has(text_of(r, k))) {
                char list[1024];
                accepted_keys(list, sizeof list);
                diag_error(r->d, r->path, at(r, k),
                           "unknown key '%s' in defaults: no op has such a "
                           "field (expected one of: %s)",
                           text_of(r, k), list);
            }
        }
        check_exclusive(r, n);
    }
    leave_node(r, entered);
}

/* Whether KS gives a field that says what KEY says (exclusive). */
static int excluded(const struct kernel_spec *ks, const char *key)
{
    for (size_t e = 0; e < N_EXCLUSIVE; e++) {
        for (int side = 0; side < 2; side++) {
            int other = op_field_index(ks->op, exclusive[e][1 - side]);
            if (strcmp(key, exclusive[e][side]) == 0 && other >= 0 &&
                ks->field[other].set) {
                return 1;
            }
        }
    }
    return 0;
}

/* The bits of the fields of KS's group GROUP ("scaling.*"). */
static unsigned long long group_bits(const struct kernel_spec *ks,
                                     const char *group)
{
    unsigned long long bits = 0;
    size_t len = strlen(group);
    for (int i = 0; i < ks->op->n_fields; i++) {
        const char *key = ks->op->fields[i].key;
        if (strncmp(key, group, len) == 0 && key[len] == '.') {
            bits |= 1ull << i;
        }
    }
    return bits;
}

/* The bits of the fields KS gives. */
static unsigned long long given_bits(const struct kernel_spec *ks)
{
    unsigned long long bits = 0;
    for (int i = 0; i < ks->op->n_fields; i++) {
        bits |= ks->field[i].set ? 1ull << i : 0;
    }
    return bits;
}

/* Gives KS default KEY, V, when its op has it and KS does not give it;
 * sets the bits of the fields it gave in *FROM. */
static void apply_one(struct reader *r, struct kernel_spec *ks,
                      const char *key, struct ref v, unsigned long long *from)
{
    const struct op_def *op = ks->op;
    if (strchr(key, '.') != NULL || strcmp(key, "dtype") == 0) {
        return;
    }
    if (op_field_group(op, key)) {
        unsigned long long bits = group_bits(ks, key);
        if ((given_bits(ks) & bits) == 0) {
            spec_read_field_group(r, ks, key, v);
            *from |= bits; /* missing members are reported there too */
        }
        return;
    }
    int i = op_field_index(op, key);
    if (i >= 0 && !ks->field[i].set && !excluded(ks, key)) {
        parse_param(r, &op->fields[i], key, v, &ks->field[i]);
        *from |= 1ull << i;
    }
}

static int failed_before(const struct reader *r, const struct op_def *op)
{
    for (int i = 0; i < r->n_defaults_failed; i++) {
        if (r->defaults_failed[i] == op) {
            return 1;
        }
    }
    return 0;
}

int spec_apply_defaults(struct reader *r, struct kernel_spec *ks,
                        unsigned long long *from)
{
    *from = 0;
    if (!r->has_defaults) {
        return 1;
    }
    struct diags quiet = {.out = NULL};
    struct diags *loud = r->d;
    int again = failed_before(r, ks->op);
    if (again) {
        r->d = &quiet;
    }
    int before = r->d->count;
    /* Read where they are written: outside the kernel's alias, if any. */
    int in_alias = r->in_alias;
    struct mark alias_mark = r->alias_mark;
    r->in_alias = 0;
    int entered = enter_node(r, r->defaults);
    for (size_t p = 0; p + 1 < n_items(r, r->defaults); p += 2) {
        int had = r->d->count;
        const char *key = text_of(r, item_of(r, r->defaults, p));
        apply_one(r, ks, key, item_of(r, r->defaults, p + 1), from);
        if (r->d->count != had) {
            diag_note(r->d, r->path, ks->mark,
                      "in kernel '%s' (%s), which takes %s from defaults",
                      ks->name[0] ? ks->name : "?", ks->op->name, key);
        }
    }
    leave_node(r, entered);
    r->in_alias = in_alias;
    r->alias_mark = alias_mark;
    int failed = r->d->count != before;
    r->d = loud;
    if (failed && !again &&
        r->n_defaults_failed < (int)(sizeof r->defaults_failed /
                                     sizeof r->defaults_failed[0])) {
        r->defaults_failed[r->n_defaults_failed++] = ks->op;
    }
    return !failed;
}

/* diags' `then` while a kernel is checked: a note after an error at the
 * place of a default the kernel took. */
static void note_default(struct diags *d, const char *file, struct mark at,
                         void *ctx)
{
    const struct defaults_note *n = ctx;
    const struct kernel_spec *ks = n->ks;
    if (file == NULL || strcmp(file, ks->file) != 0) {
        return;
    }
    for (int i = 0; i < ks->op->n_fields; i++) {
        struct mark m = ks->field[i].mark;
        if ((n->from >> i & 1) && m.line == at.line && m.col == at.col) {
            diag_note(d, file, ks->mark,
                      "in kernel '%s' (%s), which takes %s from defaults",
                      ks->name, ks->op->name, ks->op->fields[i].key);
            return;
        }
    }
}

void spec_defaults_watch(struct reader *r, struct defaults_note *ctx)
{
    ctx->then = r->d->then;
    ctx->then_ctx = r->d->then_ctx;
    if (ctx->from != 0) {
        r->d->then = note_default;
        r->d->then_ctx = ctx;
    }
}

void spec_defaults_quiet(struct reader *r, const struct defaults_note *ctx)
{
    r->d->then = ctx->then;
    r->d->then_ctx = ctx->then_ctx;
}
