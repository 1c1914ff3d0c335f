/* spec_group.c - a mapping of fields inside a kernel (rope's scaling),
 * read for a kernel and for defaults alike; a part of the spec reader. */
#include "spec_group.h"
#include "spec_scalar.h"

#include <stdio.h>
#include <string.h>

/* Appends WORD to the comma-separated LIST. */
void spec_list_add(char *list, size_t size, const char *word, size_t len)
{
    size_t at = strlen(list);
    snprintf(list + at, size - at, "%s%.*s", at ? ", " : "", (int)len, word);
}

/* The field index of KEY of mapping GROUP ("scaling", "factor"); -1 if
 * the op has none. */
static int group_field(const struct op_def *op, const char *group,
                       const char *key)
{
    char full[128];
    if (strchr(key, '.') != NULL ||
        snprintf(full, sizeof full, "%s.%s", group, key) >= (int)sizeof full) {
        return -1;
    }
    return op_field_index(op, full);
}

void spec_read_field_group(struct reader *r, struct kernel_spec *ks,
                             const char *group, struct ref v)
{
    const struct op_def *op = ks->op;
    size_t len = strlen(group);
    char tmp[96], list[512] = "";
    for (int i = 0; i < op->n_fields; i++) {
        const char *key = op->fields[i].key;
        if (strncmp(key, group, len) == 0 && key[len] == '.') {
            spec_list_add(list, sizeof list, key + len + 1, strlen(key + len + 1));
        }
    }
    if (!node_usable(r, v)) {
        return;
    }
    if (!is_kind(r, v, NODE_MAPPING)) {
        diag_error(r->d, r->path, at(r, v),
                   "%s must be a mapping of %s, found %s", group, list,
                   node_shown(r, v, tmp, sizeof tmp));
        return;
    }
    int entered = enter_node(r, v);
    if (map_check_keys(r, v)) {
        for (size_t p = 0; p + 1 < n_items(r, v); p += 2) {
            struct ref k = item_of(r, v, p);
            int f = group_field(op, group, text_of(r, k));
            if (f < 0) {
                diag_error(r->d, r->path, at(r, k),
                           "unknown key '%s' in %s (expected one of: %s)",
                           text_of(r, k), group, list);
                continue;
            }
            char what[128];
            snprintf(what, sizeof what, "%s %s", group, text_of(r, k));
            parse_param(r, &op->fields[f], what, item_of(r, v, p + 1),
                        &ks->field[f]);
        }
    }
    for (int i = 0; i < op->n_fields; i++) {
        const char *key = op->fields[i].key;
        if (strncmp(key, group, len) == 0 && key[len] == '.' &&
            !ks->field[i].set) {
            ks->field[i].mark = at(r, v);
        }
    }
    leave_node(r, entered);
}
