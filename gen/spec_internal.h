/* spec_internal.h - what the parts of the spec reader share; only spec*.c
 * include it. From the bottom up: memory (spec_strmap.c), the kernel-name
 * index (spec_index.c), the YAML document (spec_doc.c), reading its nodes
 * (spec_node.c), scalar values (spec_scalar.c), one kernel
 * (spec_kernel.c); spec.c reads whole files. */
#ifndef SPECL_SPEC_INTERNAL_H
#define SPECL_SPEC_INTERNAL_H

#include <stddef.h>
#include <yaml.h>

#include "spec.h"

/* ---- memory (spec_strmap.c) --------------------------------------------- */

/* P grown to twice *CAP elements of SIZE bytes (16 at first); *CAP set.
 * Out of memory ends the run. */
void *spec_grow(void *p, size_t *cap, size_t size);

/* A hash map from strings to ints. */
struct strmap {
    char **key;   /* owned copies; NULL: empty slot */
    int *value;
    size_t cap;   /* a power of two, or 0 */
    size_t n;
};

/* Whether M maps KEY (LEN bytes); its value in *VALUE. */
int strmap_get(const struct strmap *m, const char *key, size_t len,
               int *value);
/* Maps KEY to VALUE, replacing what it mapped to. */
void strmap_put(struct strmap *m, const char *key, size_t len, int value);
void strmap_free(struct strmap *m);

/* ---- the index of kernel names (spec_index.c) --------------------------- */

struct name_entry {
    char name[SPECL_NAME_MAX];
    const char *file;
    struct mark mark; /* of the kernel */
};

/* Kernel P emits symbols P_t for t in T: its host API, its header's
 * constants, the names of its NAME.c (stub_suffix: unity builds
 * compile several in one unit), and its naive stub P_naive with the same
 * symbols. A kernel named P_S clashes with P when P_S or one of its own
 * symbols P_S_t2 is one of P's: when S is a tail of T, that is, S is in T
 * or t = S_t2 for some t and t2 in T. (stub_lora_delta and stub_lora do
 * not clash.) */
struct spec_names {
    struct name_entry *entry;
    size_t n, cap;
    struct strmap by_name;   /* lower-cased name -> entry */
    struct strmap by_prefix; /* P -> the first entry named P_S, S a tail */
    struct strmap tails;     /* the tails S (value unused) */
    int covers;              /* the set's kernels the index holds */
};

/* Makes S's index hold exactly the names of S's kernels. */
void spec_names_rebuild(struct spec_set *s);

/* Reports NAME (at WHERE in PATH, the mark of its value) through D if an
 * earlier kernel of the set or of this file (valid or not) has it, in any
 * case, or if the two clash (see stub_names.h): one is P, the other P_S
 * and S a tail. Else remembers it in IX with KERNEL, the mark of its
 * kernel. Returns 1 if reported. */
int spec_name_clash(struct spec_names *ix, struct diags *d, const char *path,
                    const char *name, struct mark where, struct mark kernel);

/* Whether every character of NAME may be in a C identifier and its length
 * fits. */
int spec_identifier_syntax(const char *name);

/* ---- the document (spec_doc.c) ------------------------------------------ */

enum node_kind { NODE_SCALAR, NODE_SEQUENCE, NODE_MAPPING };

/* A node's tag, when the file gives one (TAG_NONE: it does not). */
enum node_tag {
    TAG_NONE, TAG_STR, TAG_INT, TAG_FLOAT, TAG_BOOL, TAG_NULL, TAG_SEQ,
    TAG_MAP, TAG_MERGE, TAG_OTHER
};

struct node {
    unsigned char kind;   /* enum node_kind */
    unsigned char tag;    /* enum node_tag */
    unsigned char quoted; /* a scalar in any style but plain */
    struct mark mark;     /* where the node is written */
    size_t tag_text;      /* explicit tags: offset of the tag in doc text */
    size_t start, count;  /* scalars: offset and bytes of the text;
                             collections: first item and number of items
                             (a mapping's are key, value, key, ...) */
};

/* A use of a node: where it stands in its parent. An alias uses the node
 * of its anchor, at the alias's own mark. */
struct ref {
    int node;
    int alias;
    struct mark at;
};

struct doc {
    struct node *node;
    size_t n_node, cap_node;
    struct ref *item; /* the items of every collection, each contiguous */
    size_t n_item, cap_item;
    char *text;       /* scalars and tags, each followed by a NUL */
    size_t n_text, cap_text;
    struct ref root;  /* root.node < 0: the stream holds no document */
    int stream_ended; /* no event is left after the document */
};

void doc_free(struct doc *doc);

/* Composes the first document of PARSER (reading DATA, LEN bytes, named
 * PATH) into DOC. Returns 0, or -1 after reporting a problem through D. */
int doc_compose(yaml_parser_t *parser, struct doc *doc, const char *path,
                const unsigned char *data, size_t len, struct diags *d);

/* After the first document: another one would be silently ignored, so it
 * is refused; junk after the spec is reported as libyaml sees it. */
void doc_check_rest(yaml_parser_t *parser, const char *path,
                    const unsigned char *data, size_t len, struct diags *d);

/* ---- reading nodes (spec_node.c) ---------------------------------------- */

/* Reading state for one file. */
struct reader {
    const struct doc *doc;
    const char *path;
    struct diags *d;
    struct spec_set *set;
    enum dtype dtype;        /* from defaults: */
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

/* ---- scalar values (spec_scalar.c) -------------------------------------- */

/* Reads V as a dtype into *OUT; returns 0 when it is none (reported). */
int parse_dtype(struct reader *r, struct ref v, enum dtype *out);

/* Parses V as the value of parameter DEF into OUT (set and mark filled).
 * WHAT names it in messages ("in_features", "tile m"). Plain scalars are
 * read by their text; a quoted or !!str one is a string, read only where a
 * string is expected; !!int, !!float and !!bool say what the text must
 * be. */
int parse_param(struct reader *r, const struct param_def *def,
                const char *what, struct ref v, struct param_value *out);

/* ---- one kernel (spec_kernel.c) ----------------------------------------- */

/* Reads kernel N of the kernels: sequence; a valid one is appended to
 * R's set. */
void spec_read_kernel(struct reader *r, struct ref n);

#endif
