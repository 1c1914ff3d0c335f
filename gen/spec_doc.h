/* spec_doc.h - a spec file composed into nodes (libyaml events to a tree)
 * (spec_doc.c): a part of the spec reader, for spec*.c only. */
#ifndef SPECL_SPEC_DOC_H
#define SPECL_SPEC_DOC_H

#include <stddef.h>
#include <yaml.h>
#include "diag.h"

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

#endif
