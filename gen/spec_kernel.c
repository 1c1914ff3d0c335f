/* spec_kernel.c - one kernel of a spec: its name, op, dtype, tile and
 * the op's fields, then the op's checks; a valid kernel joins the set. */
#include "spec_kernel.h"
#include "spec_defaults.h"
#include "spec_group.h"
#include "spec_scalar.h"
#include "spec_index.h"
#include "spec_names.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "knobs.h"

/* The keys of DEFS after EXTRA, a group's fields ("scaling.type", ...)
 * by their group's name, once. */
static void expected_keys(char *list, size_t size,
                          const struct param_def *defs, int n,
                          const char *const *extra)
{
    list[0] = '\0';
    for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
        spec_list_add(list, size, extra[i], strlen(extra[i]));
    }
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(defs[i].key, ".");
        if (i > 0 && strncmp(defs[i - 1].key, defs[i].key, len) == 0 &&
            defs[i - 1].key[len] == '.' && defs[i].key[len] == '.') {
            continue; /* the group is listed */
        }
        spec_list_add(list, size, defs[i].key, len);
    }
}

static void read_tile(struct reader *r, struct kernel_spec *ks, struct ref v)
{
    const struct op_def *op = ks->op;
    char tmp[96];
    if (!node_usable(r, v)) {
        return;
    }
    if (scalar_is(r, v, "auto")) {
        ks->tile_auto = 1;
        return;
    }
    if (!is_kind(r, v, NODE_MAPPING)) {
        diag_error(r->d, r->path, at(r, v),
                   "tile must be a mapping of knobs or 'auto', found %s",
                   node_shown(r, v, tmp, sizeof tmp));
        return;
    }
    int entered = enter_node(r, v);
    if (map_check_keys(r, v)) {
        for (size_t i = 0; i + 1 < n_items(r, v); i += 2) {
            struct ref k = item_of(r, v, i);
            int knob = op_knob_index(op, text_of(r, k));
            if (knob < 0) {
                char list[512];
                expected_keys(list, sizeof list, op->knobs, op->n_knobs,
                              NULL);
                diag_error(r->d, r->path, at(r, k),
                           "unknown tile knob '%s' for op %s (expected one "
                           "of: %s)",
                           text_of(r, k), op->name, list);
                continue;
            }
            char what[64];
            snprintf(what, sizeof what, "tile %s", op->knobs[knob].key);
            parse_param(r, &op->knobs[knob], what, item_of(r, v, i + 1),
                        &ks->knob[knob]);
        }
    }
    leave_node(r, entered);
}

/* Float constants of KS's plan are float32 in the kernel: one the fields
 * give in range can still end up outside it (scale = alpha / rank). */
static void check_constants(struct reader *r, const struct kernel_spec *ks)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    ks->op->plan(ks, &p);
    for (int i = 0; i < p.n_define; i++) {
        const struct define *c = &p.define[i];
        double f = fabs(c->f);
        if (c->kind == DEFINE_FLOAT && f != 0 && !(f >= FLT_MIN)) {
            diag_error(r->d, r->path, ks->mark,
                       "kernel '%s': %s would be %g, below float32's normal "
                       "range (%g; devices may flush it to 0)",
                       ks->name, c->name, c->f, FLT_MIN);
        } else if (c->kind == DEFINE_FLOAT && !(f <= FLT_MAX)) {
            diag_error(r->d, r->path, ks->mark,
                       "kernel '%s': %s would be %g, out of float32 range",
                       ks->name, c->name, c->f);
        }
    }
}

static void read_kernel_name(struct reader *r, struct kernel_spec *ks,
                             struct ref name)
{
    char tmp[96], why[256];
    if (!node_usable(r, name)) {
        return;
    }
    if (!is_stringish(r, name) || !spec_identifier_syntax(text_of(r, name))) {
        diag_error(r->d, r->path, at(r, name),
                   "name must be a C identifier of at most %d characters "
                   "(got %s)",
                   SPECL_NAME_MAX - 1, node_shown(r, name, tmp, sizeof tmp));
    } else if (spec_name_reserved(text_of(r, name), why, sizeof why)) {
        diag_error(r->d, r->path, at(r, name),
                   "kernel name %s; choose another name", why);
    } else if (!spec_name_clash(r->names, r->d, r->path,
                                text_of(r, name), at(r, name), ks->mark)) {
        snprintf(ks->name, sizeof ks->name, "%s", text_of(r, name));
    }
}

/* The op that OP, the value of a kernel's op:, names; NULL when it names
 * none (reported). */
static const struct op_def *read_kernel_op(struct reader *r, struct ref op)
{
    char tmp[96];
    if (!node_usable(r, op)) {
        return NULL;
    }
    const struct op_def *def =
        is_stringish(r, op) ? op_find(text_of(r, op)) : NULL;
    if (def == NULL) {
        char list[256] = "";
        for (int i = 0; op_registry[i] != NULL; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, op_registry[i]->name,
                    sizeof list - strlen(list) - 1);
        }
        diag_error(r->d, r->path, at(r, op),
                   "unknown op %s (expected one of: %s)",
                   node_shown(r, op, tmp, sizeof tmp), list);
    }
    return def;
}

/* Reads the keys of kernel N but name and op into KS (its op known). */
static void read_kernel_fields(struct reader *r, struct kernel_spec *ks,
                               struct ref n)
{
    static const char *const common[] = {"name", "op", "dtype", "tile",
                                         NULL};
    for (size_t p = 0; p + 1 < n_items(r, n); p += 2) {
        struct ref k = item_of(r, n, p);
        struct ref v = item_of(r, n, p + 1);
        const char *key = text_of(r, k);
        if (strcmp(key, "name") == 0 || strcmp(key, "op") == 0) {
            continue;
        }
        if (strcmp(key, "dtype") == 0) {
            parse_dtype(r, v, &ks->dtype);
            continue;
        }
        if (strcmp(key, "tile") == 0) {
            read_tile(r, ks, v);
            continue;
        }
        if (strchr(key, '.') == NULL && op_field_group(ks->op, key)) {
            spec_read_field_group(r, ks, key, v);
            continue;
        }
        /* A group's fields are keys of its mapping alone. */
        int i = strchr(key, '.') == NULL ? op_field_index(ks->op, key) : -1;
        if (i < 0) {
            char list[512];
            expected_keys(list, sizeof list, ks->op->fields,
                          ks->op->n_fields, common);
            diag_error(r->d, r->path, at(r, k),
                       "unknown key '%s' for op %s (expected one of: %s)",
                       key, ks->op->name, list);
            continue;
        }
        parse_param(r, &ks->op->fields[i], key, v, &ks->field[i]);
    }
}

/* Reports the fields KS's op requires that neither the kernel nor the
 * defaults give. */
static void check_required(struct reader *r, const struct kernel_spec *ks)
{
    for (int i = 0; i < ks->op->n_fields; i++) {
        if (ks->op->fields[i].required && !ks->field[i].set) {
            diag_error(r->d, r->path, ks->mark,
                       "kernel '%s' (%s) has no '%s' (%s)",
                       ks->name[0] ? ks->name : "?", ks->op->name,
                       ks->op->fields[i].key, ks->op->fields[i].help);
        }
    }
}

int spec_read_kernel(struct reader *r, struct ref n,
                     struct kernel_spec *out)
{
    char tmp[96];
    int errors = r->d->count;
    if (!node_usable(r, n)) {
        return 0;
    }
    if (!is_kind(r, n, NODE_MAPPING)) {
        diag_error(r->d, r->path, at(r, n),
                   "expected a kernel (a mapping with name and op), found "
                   "%s",
                   node_shown(r, n, tmp, sizeof tmp));
        return 0;
    }
    if (!map_check_keys(r, n)) {
        return 0;
    }
    struct kernel_spec ks;
    memset(&ks, 0, sizeof ks);
    ks.file = r->path;
    ks.mark = at(r, n);
    ks.dtype = r->dtype;

    struct ref name, op;
    if (!map_lookup(r, n, "name", &name)) {
        diag_error(r->d, r->path, ks.mark, "kernel has no 'name'");
    } else {
        read_kernel_name(r, &ks, name);
    }
    if (!map_lookup(r, n, "op", &op)) {
        diag_error(r->d, r->path, ks.mark, "kernel has no 'op'");
        return 0;
    }
    ks.op = read_kernel_op(r, op);
    if (ks.op == NULL) {
        return 0;
    }

    for (int i = 0; i < ks.op->n_fields; i++) {
        ks.field[i].num = ks.op->fields[i].def;
        ks.field[i].mark = ks.mark;
    }
    for (int i = 0; i < ks.op->n_knobs; i++) {
        ks.knob[i].mark = ks.mark;
    }
    read_kernel_fields(r, &ks, n);
    struct defaults_note note = {.ks = &ks};
    if (!spec_apply_defaults(r, &ks, &note.from)) {
        return 0;
    }
    check_required(r, &ks);
    if (r->d->count != errors) {
        return 0;
    }
    spec_defaults_watch(r, &note);
    knobs_resolve(&ks, r->d);
    spec_defaults_quiet(r, &note);
    if (r->d->count == errors) {
        check_constants(r, &ks);
    }
    if (r->d->count != errors) {
        return 0;
    }
    *out = ks;
    return 1;
}
