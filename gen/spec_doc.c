/* spec_doc.c - the YAML document of a spec, composed from libyaml's
 * events, and libyaml's own problems reported at file:line:col.
 *
 * The document is composed here rather than by yaml_parser_load, which
 * keeps neither where an alias is written nor whether a tag was given, and
 * looks anchors up by a linear search. Time and memory stay linear in the
 * size of the file. */
#include "spec_doc.h"
#include "spec_strmap.h"

#include <stdio.h>
#include <string.h>

void doc_free(struct doc *doc)
{
    free(doc->node);
    free(doc->item);
    free(doc->text);
}

static size_t doc_add_text(struct doc *doc, const void *text, size_t len)
{
    while (doc->n_text + len + 1 > doc->cap_text) {
        doc->text = spec_grow(doc->text, &doc->cap_text, 1);
    }
    size_t offset = doc->n_text;
    memcpy(doc->text + offset, text, len);
    doc->text[offset + len] = '\0';
    doc->n_text += len + 1;
    return offset;
}

static struct mark mark_of_yaml(yaml_mark_t m)
{
    struct mark out = {(int)m.line + 1, (int)m.column + 1};
    return out;
}

static enum node_tag classify_tag(const char *tag, enum node_kind kind)
{
    static const char *const core[] = {"str", "int", "float", "bool",
                                       "null", "seq", "map", "merge"};
    static const char prefix[] = "tag:yaml.org,2002:";
    if (tag == NULL) {
        return TAG_NONE;
    }
    if (strcmp(tag, "!") == 0) {
        /* The non-specific tag: a string for a scalar, else no tag. */
        return kind == NODE_SCALAR ? TAG_STR : TAG_NONE;
    }
    if (strncmp(tag, prefix, sizeof prefix - 1) == 0) {
        for (int i = 0; i < 8; i++) {
            if (strcmp(tag + sizeof prefix - 1, core[i]) == 0) {
                return (enum node_tag)(TAG_STR + i);
            }
        }
    }
    return TAG_OTHER;
}

/* Line and column (from 1) of byte OFFSET of DATA, counting columns in
 * characters as libyaml does. */
static struct mark mark_at_offset(const unsigned char *data, size_t len,
                                  size_t offset)
{
    struct mark m = {1, 1};
    size_t i = 0;
    if (len >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) {
        i = 3; /* a byte order mark is no column */
    }
    for (; i < offset && i < len; i++) {
        if (data[i] == '\n' ||
            (data[i] == '\r' && (i + 1 >= len || data[i + 1] != '\n'))) {
            m.line++;
            m.col = 1;
        } else if ((data[i] & 0xC0) != 0x80 && data[i] != '\r') {
            m.col++;
        }
    }
    return m;
}

/* Reports libyaml's own problem where it is. Problems of its reader
 * (invalid UTF-8, control characters) carry a byte offset, not a mark. */
static void report_yaml_error(struct diags *d, const char *path,
                              const yaml_parser_t *parser,
                              const unsigned char *data, size_t len)
{
    const char *problem = parser->problem ? parser->problem : "error";
    char value[32] = "";
    struct mark m = mark_of_yaml(parser->problem_mark);
    if (parser->error == YAML_MEMORY_ERROR) {
        diag_error(d, path, (struct mark){0, 0}, "out of memory");
        return;
    }
    if (parser->error == YAML_READER_ERROR) {
        m = mark_at_offset(data, len, parser->problem_offset);
        if (parser->problem_value >= 0) {
            snprintf(value, sizeof value,
                     strstr(problem, "octet") ? " (byte 0x%02X)" : " (U+%04X)",
                     (unsigned)parser->problem_value);
        }
    }
    if (parser->context != NULL) {
        diag_error(d, path, m, "malformed YAML: %s%s %s", problem, value,
                   parser->context);
    } else {
        diag_error(d, path, m, "malformed YAML: %s%s", problem, value);
    }
}

/* The composer's state between events. */
struct composer {
    struct doc *doc;
    struct ref *pending; /* items of the open collections, in order */
    size_t n_pending, cap_pending;
    size_t *open;        /* per open collection: its node, its first item */
    size_t n_open, cap_open;
    struct strmap anchors; /* name -> node (the latest with that anchor) */
};

static void push_ref(struct composer *c, int node, int alias,
                     struct mark where)
{
    if (c->n_pending == c->cap_pending) {
        c->pending =
            spec_grow(c->pending, &c->cap_pending, sizeof *c->pending);
    }
    c->pending[c->n_pending++] = (struct ref){node, alias, where};
}

/* Adds a node for event EV (a scalar or a collection's start) and its
 * use in the open collection; returns its index. */
static int add_node(struct composer *c, const yaml_event_t *ev,
                    enum node_kind kind, const yaml_char_t *anchor,
                    const yaml_char_t *tag)
{
    struct doc *doc = c->doc;
    if (doc->n_node == doc->cap_node) {
        doc->node = spec_grow(doc->node, &doc->cap_node, sizeof *doc->node);
    }
    int id = (int)doc->n_node++;
    struct node *n = &doc->node[id];
    memset(n, 0, sizeof *n);
    n->kind = (unsigned char)kind;
    n->tag = (unsigned char)classify_tag((const char *)tag, kind);
    n->mark = mark_of_yaml(ev->start_mark);
    if (n->tag != TAG_NONE) {
        n->tag_text = doc_add_text(doc, tag, strlen((const char *)tag));
    }
    if (kind == NODE_SCALAR) {
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        n->count = ev->data.scalar.length;
        n->start = doc_add_text(doc, ev->data.scalar.value, n->count);
    }
    if (anchor != NULL) {
        strmap_put(&c->anchors, (const char *)anchor,
                   strlen((const char *)anchor), id);
    }
    push_ref(c, id, 0, n->mark);
    return id;
}

int doc_compose(yaml_parser_t *parser, struct doc *doc, const char *path,
                const unsigned char *data, size_t len, struct diags *d)
{
    struct composer c;
    memset(&c, 0, sizeof c);
    c.doc = doc;
    doc->root.node = -1;
    int rc = 0;
    for (int done = 0; !done;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(parser, &ev)) {
            report_yaml_error(d, path, parser, data, len);
            rc = -1;
            break;
        }
        int target;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            doc->stream_ended = 1;
            done = 1;
            break;
        case YAML_DOCUMENT_END_EVENT:
            done = 1;
            break;
        case YAML_ALIAS_EVENT: {
            const char *name = (const char *)ev.data.alias.anchor;
            if (!strmap_get(&c.anchors, name, strlen(name), &target)) {
                /* libyaml's parser leaves this to its loader. */
                diag_error(d, path, mark_of_yaml(ev.start_mark),
                           "alias '*%s' names no anchor before it", name);
                rc = -1;
                done = 1;
                break;
            }
            push_ref(&c, target, 1, mark_of_yaml(ev.start_mark));
            break;
        }
        case YAML_SCALAR_EVENT:
            add_node(&c, &ev, NODE_SCALAR, ev.data.scalar.anchor,
                     ev.data.scalar.tag);
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
            int seq = ev.type == YAML_SEQUENCE_START_EVENT;
            int id = seq ? add_node(&c, &ev, NODE_SEQUENCE,
                                    ev.data.sequence_start.anchor,
                                    ev.data.sequence_start.tag)
                         : add_node(&c, &ev, NODE_MAPPING,
                                    ev.data.mapping_start.anchor,
                                    ev.data.mapping_start.tag);
            while (c.n_open + 2 > c.cap_open) {
                c.open = spec_grow(c.open, &c.cap_open, sizeof *c.open);
            }
            c.open[c.n_open++] = (size_t)id;
            c.open[c.n_open++] = c.n_pending;
            break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: {
            size_t first = c.open[--c.n_open];
            struct node *n = &doc->node[c.open[--c.n_open]];
            n->count = c.n_pending - first;
            n->start = doc->n_item;
            while (doc->n_item + n->count > doc->cap_item) {
                doc->item = spec_grow(doc->item, &doc->cap_item,
                                 sizeof *doc->item);
            }
            if (n->count > 0) { /* doc->item may still be NULL */
                memcpy(doc->item + doc->n_item, c.pending + first,
                       n->count * sizeof *c.pending);
            }
            doc->n_item += n->count;
            c.n_pending = first;
            break;
        }
        default: /* stream and document starts */
            break;
        }
        yaml_event_delete(&ev);
    }
    if (rc == 0 && c.n_pending == 1) {
        doc->root = c.pending[0];
    }
    free(c.pending);
    free(c.open);
    strmap_free(&c.anchors);
    return rc;
}

void doc_check_rest(yaml_parser_t *parser, const char *path,
                    const unsigned char *data, size_t len, struct diags *d)
{
    struct mark another = {0, 0};
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(parser, &ev)) {
            report_yaml_error(d, path, parser, data, len);
            return;
        }
        yaml_event_type_t type = ev.type;
        if (another.line == 0 &&
            (type == YAML_SCALAR_EVENT || type == YAML_ALIAS_EVENT ||
             type == YAML_SEQUENCE_START_EVENT ||
             type == YAML_MAPPING_START_EVENT)) {
            another = mark_of_yaml(ev.start_mark);
        }
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT) {
            break;
        }
    }
    if (another.line != 0) {
        diag_error(d, path, another,
                   "expected one YAML document, found another");
    }
}
