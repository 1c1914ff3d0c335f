/* spec_node.h - reading the nodes of a composed spec file (spec_node.c): a
 * part of the spec reader, for spec*.c only. */
#ifndef SPECL_SPEC_NODE_H
#define SPECL_SPEC_NODE_H

#include "op.h"
#include "spec_doc.h"

struct spec_names; /* spec_index.h */

/* Reading state for one file. */
struct reader {
    const struct doc *doc;
    const char *path;
    struct diags *d;
    struct spec_names *names; /* of every kernel read so far */
    enum dtype dtype;        /* from defaults: */
    int has_defaults;        /* defaults: is a mapping ... */
    struct ref defaults;     /* ... this one: the fields it gives kernels */
    /* Ops whose kernels could not take the defaults: reported for the
     * first of them, not again for each one after it. */
    const struct op_def *defaults_failed[8];
    int n_defaults_failed;
    int in_alias;            /* reading nodes reached through an alias */
    struct mark alias_mark;  /* ... written here */
};

static inline const struct node *node_of(const struct reader *r,
                                         struct ref ref)
{
    return &r->doc->node[ref.node];
}

static inline const char *text_of(const struct reader *r, struct ref ref)
{
    return r->doc->text + node_of(r, ref)->start;
}

/* Item I of collection REF (a mapping's pair I/2, key or value). */
static inline struct ref item_of(const struct reader *r, struct ref ref,
                                 size_t i)
{
    return r->doc->item[node_of(r, ref)->start + i];
}

static inline size_t n_items(const struct reader *r, struct ref ref)
{
    return node_of(r, ref)->count;
}

/* Where a problem with REF is reported: at REF, or, for what is read
 * through an alias, at the alias (the anchor's nodes are written once;
 * what the alias makes of them happens where the alias is). */
static inline struct mark at(const struct reader *r, struct ref ref)
{
    return r->in_alias ? r->alias_mark : ref.at;
}

/* Reading the nodes below REF starts; returns what leave_node needs. */
static inline int enter_node(struct reader *r, struct ref ref)
{
    if (!ref.alias || r->in_alias) {
        return 0;
    }
    r->in_alias = 1;
    r->alias_mark = ref.at;
    return 1;
}

static inline void leave_node(struct reader *r, int entered)
{
    if (entered) {
        r->in_alias = 0;
    }
}

static inline int is_kind(const struct reader *r, struct ref ref,
                          enum node_kind kind)
{
    return node_of(r, ref)->kind == kind;
}

/* A scalar read as a string: quoted, tagged !!str, or plain. */
int is_stringish(const struct reader *r, struct ref ref);

/* A scalar that is a string and nothing else: quoted, or tagged !!str. */
int is_string(const struct reader *r, struct ref ref);

/* Whether REF is a plain or string scalar whose text is TEXT. */
int scalar_is(const struct reader *r, struct ref ref, const char *text);

/* REF for a message: 'text' for a plain scalar, "text" for a quoted one,
 * the tag in front when one is given (!!str '64'), else what it is. Bytes
 * that are not printable are escaped; long text is cut. */
const char *node_shown(const struct reader *r, struct ref ref, char *buf,
                       size_t size);

/* Whether REF may be read at all: reports a tag specl does not read (or
 * one that does not fit the node) and a NUL character in a scalar, which
 * no name, key or value may hold (C strings would stop at it). */
int node_usable(struct reader *r, struct ref ref);

/* Checks that the keys of mapping REF are usable strings and not repeated,
 * and that none is a merge key. Returns 0 when some key is bad
 * (reported). */
int map_check_keys(struct reader *r, struct ref map);

/* Finds KEY in mapping MAP (keys checked); *FOUND is its value. */
int map_lookup(const struct reader *r, struct ref map, const char *key,
               struct ref *found);

#endif
