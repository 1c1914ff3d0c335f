/* spec.c - reads YAML op spec files (libyaml) into validated kernel specs.
 *
 * A file is a mapping with an optional `defaults:` mapping (dtype) and a
 * `kernels:` sequence. Each kernel is a mapping of `name`, `op`, `dtype`,
 * `tile` (a mapping of the op's knobs, or `auto`) and the op's fields.
 * Every problem is reported where it is written; reading goes on after an
 * error so that one run shows them all.
 *
 * The document is composed here from libyaml's events rather than by
 * yaml_parser_load, which keeps neither where an alias is written nor
 * whether a tag was given, and looks anchors up by a linear search. Time
 * and memory stay linear in the size of the file. */
#include "spec.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "stub_names.h"
#include "knobs.h"

/* Larger specs are refused: node and kernel counts stay far from INT_MAX. */
#define SPEC_MAX_BYTES (1024L * 1024 * 1024)

/* Mappings with more pairs than this find duplicate keys by hashing. */
#define FEW_KEYS 16

static void *grow(void *p, size_t *cap, size_t size)
{
    size_t n = *cap ? *cap * 2 : 16;
    void *q = realloc(p, n * size);
    if (q == NULL) {
        fputs("specl: out of memory\n", stderr);
        exit(1);
    }
    *cap = n;
    return q;
}

/* ---- a hash map from strings to ints ----------------------------------- */

struct strmap {
    char **key;   /* owned copies; NULL: empty slot */
    int *value;
    size_t cap;   /* a power of two, or 0 */
    size_t n;
};

static size_t hash_text(const char *s, size_t len)
{
    size_t h = 14695981039346656037ULL & SIZE_MAX; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (unsigned char)s[i]) * (1099511628211ULL & SIZE_MAX);
    }
    return h;
}

/* The slot of KEY (LEN bytes) in M: where it is, or the empty one where it
 * would go. M must have a free slot. */
static size_t strmap_slot(const struct strmap *m, const char *key, size_t len)
{
    size_t i = hash_text(key, len) & (m->cap - 1);
    while (m->key[i] != NULL &&
           !(strncmp(m->key[i], key, len) == 0 && m->key[i][len] == '\0')) {
        i = (i + 1) & (m->cap - 1);
    }
    return i;
}

static int strmap_get(const struct strmap *m, const char *key, size_t len,
                      int *value)
{
    if (m->n == 0) {
        return 0;
    }
    size_t i = strmap_slot(m, key, len);
    if (m->key[i] == NULL) {
        return 0;
    }
    *value = m->value[i];
    return 1;
}

/* Maps KEY to VALUE, replacing what it mapped to. */
static void strmap_put(struct strmap *m, const char *key, size_t len,
                       int value)
{
    if (2 * (m->n + 1) > m->cap) {
        struct strmap bigger = {NULL, NULL, m->cap ? m->cap * 2 : 64, 0};
        bigger.key = calloc(bigger.cap, sizeof *bigger.key);
        bigger.value = calloc(bigger.cap, sizeof *bigger.value);
        if (bigger.key == NULL || bigger.value == NULL) {
            fputs("specl: out of memory\n", stderr);
            exit(1);
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->key[i] != NULL) {
                size_t j = strmap_slot(&bigger, m->key[i], strlen(m->key[i]));
                bigger.key[j] = m->key[i];
                bigger.value[j] = m->value[i];
                bigger.n++;
            }
        }
        free(m->key);
        free(m->value);
        *m = bigger;
    }
    size_t i = strmap_slot(m, key, len);
    if (m->key[i] == NULL) {
        m->key[i] = malloc(len + 1);
        if (m->key[i] == NULL) {
            fputs("specl: out of memory\n", stderr);
            exit(1);
        }
        memcpy(m->key[i], key, len);
        m->key[i][len] = '\0';
        m->n++;
    }
    m->value[i] = value;
}

static void strmap_free(struct strmap *m)
{
    for (size_t i = 0; i < m->cap; i++) {
        free(m->key[i]);
    }
    free(m->key);
    free(m->value);
    memset(m, 0, sizeof *m);
}

/* ---- the index of kernel names ------------------------------------------ */

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

static void lower_name(const char *name, char *out)
{
    size_t i = 0;
    for (; name[i] != '\0' && i < SPECL_NAME_MAX - 1; i++) {
        char c = name[i];
        out[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    out[i] = '\0';
}

static void names_add(struct spec_names *ix, const char *name,
                      const char *file, struct mark mark)
{
    char lower[SPECL_NAME_MAX];
    int id = (int)ix->n, old;
    if (ix->n == ix->cap) {
        ix->entry = grow(ix->entry, &ix->cap, sizeof *ix->entry);
    }
    struct name_entry *e = &ix->entry[ix->n++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->file = file;
    e->mark = mark;
    lower_name(name, lower);
    strmap_put(&ix->by_name, lower, strlen(lower), id);
    for (size_t i = 1; name[i] != '\0'; i++) {
        const char *tail = name + i + 1;
        if (name[i] == '_' &&
            strmap_get(&ix->tails, tail, strlen(tail), &old) &&
            !strmap_get(&ix->by_prefix, name, i, &old)) {
            strmap_put(&ix->by_prefix, name, i, id);
        }
    }
}

#define MAX_SUFFIXES (2 * (16 + STUB_SUFFIXES + SPECL_MAX_DEFINES))

/* The suffixes t of the symbols P_t a kernel P emits (see stub_names.h): the
 * host API, the names of NAME.c, every op's header constants (as its
 * example kernel's plan names them), its naive stub's name, and the naive
 * stub's own. Returns how many it wrote into T. */
static int symbol_suffixes(char (*t)[48])
{
    int n = 0;
    for (int i = 0; stub_host_api[i] != NULL; i++) {
        snprintf(t[n++], sizeof t[0], "%s", stub_host_api[i]);
    }
    for (int i = 0;
         n < MAX_SUFFIXES / 2 - 1 && stub_suffix(i, t[n], sizeof t[0]);
         i++) {
        n++;
    }
    for (int i = 0; op_registry[i] != NULL; i++) {
        struct kernel_spec ks;
        struct plan p;
        memset(&p, 0, sizeof p);
        if (knobs_example(op_registry[i], TARGET_GPU, &ks) != 0) {
            continue;
        }
        op_registry[i]->plan(&ks, &p);
        for (int c = 0; c < p.n_constant && n < MAX_SUFFIXES / 2 - 1; c++) {
            int known = 0;
            for (int k = 0; k < n && !known; k++) {
                known = strcmp(t[k], p.constant[c].name) == 0;
            }
            if (!known) {
                snprintf(t[n++], sizeof t[0], "%s", p.constant[c].name);
            }
        }
    }
    int own = n;
    for (int i = 0; i < own; i++) {
        snprintf(t[n++], sizeof t[0], "%s_%.32s", &EMIT_NAIVE_SUFFIX[1],
                 t[i]);
    }
    snprintf(t[n++], sizeof t[0], "%s", &EMIT_NAIVE_SUFFIX[1]);
    return n;
}

/* Fills TAILS with every S that makes P_S clash with P: S is a suffix t,
 * or t1 = S_t2 for suffixes t1 and t2. */
static void build_tails(struct strmap *tails)
{
    char t[MAX_SUFFIXES][48];
    int n = symbol_suffixes(t);
    for (int i = 0; i < n; i++) {
        size_t a = strlen(t[i]);
        strmap_put(tails, t[i], a, 0);
        for (int j = 0; j < n; j++) {
            size_t b = strlen(t[j]);
            if (a > b + 1 && t[i][a - b - 1] == '_' &&
                strcmp(t[i] + a - b, t[j]) == 0) {
                strmap_put(tails, t[i], a - b - 1, 0);
            }
        }
    }
}

/* Makes S's index hold exactly the names of S's kernels. */
static void names_rebuild(struct spec_set *s)
{
    if (s->names == NULL) {
        s->names = calloc(1, sizeof *s->names);
        if (s->names == NULL) {
            fputs("specl: out of memory\n", stderr);
            exit(1);
        }
    }
    struct spec_names *ix = s->names;
    if (ix->tails.n == 0) {
        build_tails(&ix->tails);
    }
    strmap_free(&ix->by_name);
    strmap_free(&ix->by_prefix);
    ix->n = 0;
    for (int i = 0; i < s->n_kernel; i++) {
        names_add(ix, s->kernel[i].name, s->kernel[i].file,
                  s->kernel[i].mark);
    }
    ix->covers = s->n_kernel;
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
    if (s->names != NULL) {
        strmap_free(&s->names->by_name);
        strmap_free(&s->names->by_prefix);
        strmap_free(&s->names->tails);
        free(s->names->entry);
        free(s->names);
    }
    free(s->kernel);
    spec_set_init(s);
}

/* ---- the document ------------------------------------------------------- */

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

static void doc_free(struct doc *doc)
{
    free(doc->node);
    free(doc->item);
    free(doc->text);
}

static size_t doc_add_text(struct doc *doc, const void *text, size_t len)
{
    while (doc->n_text + len + 1 > doc->cap_text) {
        doc->text = grow(doc->text, &doc->cap_text, 1);
    }
    size_t at = doc->n_text;
    memcpy(doc->text + at, text, len);
    doc->text[at + len] = '\0';
    doc->n_text += len + 1;
    return at;
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

static void push_ref(struct composer *c, int node, int alias, struct mark at)
{
    if (c->n_pending == c->cap_pending) {
        c->pending = grow(c->pending, &c->cap_pending, sizeof *c->pending);
    }
    c->pending[c->n_pending++] = (struct ref){node, alias, at};
}

/* Adds a node for event EV (a scalar or a collection's start) and its
 * use in the open collection; returns its index. */
static int add_node(struct composer *c, const yaml_event_t *ev,
                    enum node_kind kind, const yaml_char_t *anchor,
                    const yaml_char_t *tag)
{
    struct doc *doc = c->doc;
    if (doc->n_node == doc->cap_node) {
        doc->node = grow(doc->node, &doc->cap_node, sizeof *doc->node);
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

/* Composes the first document of PARSER into DOC. Returns 0, or -1 after
 * reporting a problem through D. */
static int compose(yaml_parser_t *parser, struct doc *doc, const char *path,
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
                c.open = grow(c.open, &c.cap_open, sizeof *c.open);
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
                doc->item = grow(doc->item, &doc->cap_item,
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

/* After the first document: another one would be silently ignored, so it
 * is refused; junk after the spec is reported as libyaml sees it. */
static void check_rest(yaml_parser_t *parser, const char *path,
                       const unsigned char *data, size_t len,
                       struct diags *d)
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

/* ---- reading ------------------------------------------------------------ */

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

static const struct node *node_of(const struct reader *r, struct ref ref)
{
    return &r->doc->node[ref.node];
}

static const char *text_of(const struct reader *r, struct ref ref)
{
    return r->doc->text + node_of(r, ref)->start;
}

/* Item I of collection REF (a mapping's pair I/2, key or value). */
static struct ref item_of(const struct reader *r, struct ref ref, size_t i)
{
    return r->doc->item[node_of(r, ref)->start + i];
}

static size_t n_items(const struct reader *r, struct ref ref)
{
    return node_of(r, ref)->count;
}

/* Where a problem with REF is reported: at REF, or, for what is read
 * through an alias, at the alias (the anchor's nodes are written once;
 * what the alias makes of them happens where the alias is). */
static struct mark at(const struct reader *r, struct ref ref)
{
    return r->in_alias ? r->alias_mark : ref.at;
}

/* Reading the nodes below REF starts; returns what leave_node needs. */
static int enter_node(struct reader *r, struct ref ref)
{
    if (!ref.alias || r->in_alias) {
        return 0;
    }
    r->in_alias = 1;
    r->alias_mark = ref.at;
    return 1;
}

static void leave_node(struct reader *r, int entered)
{
    if (entered) {
        r->in_alias = 0;
    }
}

static int is_kind(const struct reader *r, struct ref ref,
                   enum node_kind kind)
{
    return node_of(r, ref)->kind == kind;
}

/* A scalar read as a string: quoted, tagged !!str, or plain. */
static int is_stringish(const struct reader *r, struct ref ref)
{
    const struct node *n = node_of(r, ref);
    return n->kind == NODE_SCALAR &&
           (n->tag == TAG_NONE || n->tag == TAG_STR);
}

/* A scalar that is a string and nothing else: quoted, or tagged !!str. */
static int is_string(const struct reader *r, struct ref ref)
{
    const struct node *n = node_of(r, ref);
    return n->kind == NODE_SCALAR &&
           (n->tag == TAG_STR || (n->tag == TAG_NONE && n->quoted));
}

/* Whether REF is a plain or string scalar whose text is TEXT. */
static int scalar_is(const struct reader *r, struct ref ref,
                     const char *text)
{
    const struct node *n = node_of(r, ref);
    return is_stringish(r, ref) && strlen(text) == n->count &&
           memcmp(text_of(r, ref), text, n->count) == 0;
}

/* The tag of REF as written in messages (!!int for YAML's own), in BUF. */
static const char *tag_shown(const struct reader *r, struct ref ref,
                             char *buf, size_t size)
{
    static const char prefix[] = "tag:yaml.org,2002:";
    const char *tag = r->doc->text + node_of(r, ref)->tag_text;
    if (strncmp(tag, prefix, sizeof prefix - 1) == 0) {
        snprintf(buf, size, "!!%.40s", tag + sizeof prefix - 1);
    } else {
        snprintf(buf, size, "%.40s", tag);
    }
    return buf;
}

/* REF for a message: 'text' for a plain scalar, "text" for a quoted one,
 * the tag in front when one is given (!!str '64'), else what it is. Bytes
 * that are not printable are escaped; long text is cut. */
static const char *shown(const struct reader *r, struct ref ref, char *buf,
                         size_t size)
{
    const struct node *n = node_of(r, ref);
    size_t len = 0;
    buf[0] = '\0';
    if (n->tag != TAG_NONE && n->tag != TAG_SEQ && n->tag != TAG_MAP) {
        char tag[48];
        len = (size_t)snprintf(buf, size, "%s ",
                               tag_shown(r, ref, tag, sizeof tag));
    }
    if (n->kind != NODE_SCALAR || (n->count == 0 && !n->quoted)) {
        snprintf(buf + len, size - len, "%s",
                 n->kind == NODE_SEQUENCE  ? "a sequence"
                 : n->kind == NODE_MAPPING ? "a mapping"
                                           : "an empty value");
        return buf;
    }
    const unsigned char *v = (const unsigned char *)text_of(r, ref);
    char quote = n->quoted ? '"' : '\'';
    char out[200];
    size_t o = 0;
    out[o++] = quote;
    for (size_t i = 0; i < n->count && o < 60; i++) {
        if (o >= 38 && i + 3 < n->count) {
            /* Cut before a character, not inside one. */
            while (i < n->count && (v[i] & 0xC0) == 0x80) {
                out[o++] = (char)v[i++];
            }
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (v[i] == '\0') {
            memcpy(out + o, "\\0", 2);
            o += 2;
        } else if (v[i] < 0x20 || v[i] == 0x7F) {
            o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02X", v[i]);
        } else {
            out[o++] = (char)v[i];
        }
    }
    out[o++] = quote;
    out[o] = '\0';
    snprintf(buf + len, size - len, "%s", out);
    return buf;
}

/* Whether REF may be read at all: reports a tag specl does not read (or
 * one that does not fit the node) and a NUL character in a scalar, which
 * no name, key or value may hold (C strings would stop at it). */
static int usable(struct reader *r, struct ref ref)
{
    const struct node *n = node_of(r, ref);
    char tmp[96], tag[48];
    int tag_fits = n->kind == NODE_SCALAR
                       ? n->tag <= TAG_NULL || n->tag == TAG_MERGE
                       : n->tag == TAG_NONE ||
                             n->tag == (n->kind == NODE_SEQUENCE ? TAG_SEQ
                                                                 : TAG_MAP);
    if (!tag_fits) {
        diag_error(r->d, r->path, at(r, ref),
                   "unsupported tag '%s' on %s (specl reads !!str, !!int, "
                   "!!float, !!bool and !!null scalars, !!seq and !!map)",
                   tag_shown(r, ref, tag, sizeof tag),
                   n->kind == NODE_SCALAR     ? "a scalar"
                   : n->kind == NODE_SEQUENCE ? "a sequence"
                                              : "a mapping");
        return 0;
    }
    if (n->kind == NODE_SCALAR && memchr(text_of(r, ref), '\0', n->count)) {
        diag_error(r->d, r->path, at(r, ref),
                   "%s contains a NUL character (\\0), which no name, key "
                   "or value may contain",
                   shown(r, ref, tmp, sizeof tmp));
        return 0;
    }
    return 1;
}

/* Checks that the keys of mapping REF are usable strings and not repeated,
 * and that none is a merge key. Returns 0 when some key is bad
 * (reported). */
static int check_keys(struct reader *r, struct ref map)
{
    char tmp[96];
    int ok = 1;
    size_t pairs = n_items(r, map) / 2;
    struct strmap seen = {NULL, NULL, 0, 0};
    for (size_t i = 0; i < pairs; i++) {
        struct ref k = item_of(r, map, 2 * i);
        const struct node *kn = node_of(r, k);
        if (!usable(r, k)) {
            ok = 0;
            continue;
        }
        if (kn->kind == NODE_SCALAR &&
            (kn->tag == TAG_MERGE ||
             (kn->tag == TAG_NONE && !kn->quoted &&
              scalar_is(r, k, "<<")))) {
            diag_error(r->d, r->path, at(r, k),
                       "merge keys (<<) are not supported: write the keys "
                       "out (an alias of a whole value, such as tile: *t, "
                       "works)");
            ok = 0;
            continue;
        }
        if (!is_stringish(r, k)) {
            diag_error(r->d, r->path, at(r, k),
                       "expected a key (a plain word), found %s",
                       shown(r, k, tmp, sizeof tmp));
            ok = 0;
            continue;
        }
        int first = -1;
        if (pairs > FEW_KEYS) {
            int j;
            if (strmap_get(&seen, text_of(r, k), kn->count, &j)) {
                first = j;
            } else {
                strmap_put(&seen, text_of(r, k), kn->count, (int)i);
            }
        } else {
            for (size_t j = 0; j < i && first < 0; j++) {
                struct ref k0 = item_of(r, map, 2 * j);
                if (is_stringish(r, k0) && scalar_is(r, k0, text_of(r, k))) {
                    first = (int)j;
                }
            }
        }
        if (first >= 0) {
            struct mark m0 = at(r, item_of(r, map, 2 * (size_t)first));
            diag_error(r->d, r->path, at(r, k),
                       "duplicate key '%s' (first given at line %d)",
                       text_of(r, k), m0.line);
            ok = 0;
        }
    }
    strmap_free(&seen);
    return ok;
}

/* Finds KEY in mapping MAP (keys checked); *FOUND is its value. */
static int lookup(const struct reader *r, struct ref map, const char *key,
                  struct ref *found)
{
    for (size_t i = 0; i + 1 < n_items(r, map); i += 2) {
        if (scalar_is(r, item_of(r, map, i), key)) {
            *found = item_of(r, map, i + 1);
            return 1;
        }
    }
    return 0;
}

static int parse_dtype(struct reader *r, struct ref v, enum dtype *out)
{
    static const char *const names[] = {"f32", "f16", "bf16"};
    char tmp[96];
    if (!usable(r, v)) {
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        if (scalar_is(r, v, names[i])) {
            *out = (enum dtype)i;
            return 1;
        }
    }
    diag_error(r->d, r->path, at(r, v),
               "dtype must be one of f32, f16, bf16 (got %s)",
               shown(r, v, tmp, sizeof tmp));
    return 0;
}

/* What V is, said before it is shown where a number or boolean was
 * expected: a string written as one is not read as a number. */
static const char *string_note(const struct reader *r, struct ref v)
{
    if (!is_string(r, v)) {
        return "";
    }
    return node_of(r, v)->tag == TAG_STR ? "a string: " : "a quoted string: ";
}

/* Whether TEXT, a YAML 1.1 boolean that YAML 1.2 reads as a string,
 * is one. */
static int yaml11_bool(const char *text)
{
    static const char *const words[] = {"yes", "no", "on", "off", "y", "n"};
    char lower[8];
    size_t n = strlen(text);
    if (n >= sizeof lower) {
        return 0;
    }
    for (size_t i = 0; i <= n; i++) {
        lower[i] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] + 32
                                                           : text[i]);
    }
    for (int i = 0; i < 6; i++) {
        if (strcmp(lower, words[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* parse_param for an integer DEF: NUMBER says TEXT may be one. */
static int parse_int(struct reader *r, const struct param_def *def,
                     const char *what, struct ref v, const char *text,
                     int number, struct param_value *out)
{
    char tmp[96];
    char *end = NULL;
    errno = 0;
    long long i = number ? strtoll(text, &end, 10) : 0;
    if (!number || *end != '\0' || end == text) {
        diag_error(r->d, r->path, out->mark,
                   "%s must be an integer, found %s%s", what,
                   string_note(r, v), shown(r, v, tmp, sizeof tmp));
        return 0;
    }
    if (errno == ERANGE || i < (long long)def->min ||
        i > (long long)def->max) {
        /* On ERANGE i is LLONG_MIN or LLONG_MAX: the sign still says
         * which bound was crossed. */
        if (i < (long long)def->min) {
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
    out->num = (double)i;
    return 1;
}

/* parse_param for a real DEF: NUMBER says TEXT may be one. */
static int parse_float(struct reader *r, const struct param_def *def,
                       const char *what, struct ref v, const char *text,
                       int number, struct param_value *out)
{
    char tmp[96];
    char *end = NULL;
    errno = 0;
    double f = number ? strtod(text, &end) : 0;
    if (!number || *end != '\0' || end == text || isnan(f) ||
        strpbrk(text, "xXnN") != NULL) {
        diag_error(r->d, r->path, out->mark,
                   "%s must be a number, found %s%s", what,
                   string_note(r, v), shown(r, v, tmp, sizeof tmp));
        return 0;
    }
    if (!isfinite(f) || fabs(f) > FLT_MAX) {
        diag_error(r->d, r->path, out->mark,
                   "%s is out of float32 range (got %s)", what, text);
        return 0;
    }
    /* Kernels compute in float32: a value below its normal range is 0
     * there, or a subnormal that devices may flush to 0. */
    if ((errno == ERANGE && fabs(f) < 1) ||
        (f != 0 && fabs(f) < FLT_MIN)) {
        diag_error(r->d, r->path, out->mark,
                   "%s is too small for float32 (got %s): a nonzero "
                   "value needs a magnitude of at least %g",
                   what, text, FLT_MIN);
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

/* parse_param for a boolean DEF. */
static int parse_bool(struct reader *r, const char *what, struct ref v,
                      const char *text, struct param_value *out)
{
    char tmp[96];
    const struct node *n = node_of(r, v);
    /* YAML 1.2's booleans (core schema). */
    static const char *const spellings[] = {"true", "True", "TRUE",
                                            "false", "False", "FALSE"};
    int plain = n->kind == NODE_SCALAR &&
                (n->tag == TAG_BOOL || (n->tag == TAG_NONE && !n->quoted));
    for (int i = 0; plain && i < 6; i++) {
        if (strcmp(text, spellings[i]) == 0) {
            out->num = i < 3;
            return 1;
        }
    }
    diag_error(r->d, r->path, out->mark,
               "%s must be true or false, found %s%s%s", what,
               string_note(r, v), shown(r, v, tmp, sizeof tmp),
               plain && yaml11_bool(text)
                   ? " (YAML 1.1's yes, no, on and off are not booleans "
                     "in YAML 1.2)"
                   : "");
    return 0;
}

/* parse_param for a choice DEF. */
static int parse_choice(struct reader *r, const struct param_def *def,
                        const char *what, struct ref v,
                        struct param_value *out)
{
    char tmp[96];
    for (int i = 0; def->choices[i] != NULL; i++) {
        if (scalar_is(r, v, def->choices[i])) {
            out->num = i;
            return 1;
        }
    }
    char list[256] = "";
    for (int i = 0; def->choices[i] != NULL; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, def->choices[i], sizeof list - strlen(list) - 1);
    }
    diag_error(r->d, r->path, out->mark, "%s must be one of %s (got %s)",
               what, list, shown(r, v, tmp, sizeof tmp));
    return 0;
}

/* Parses V as the value of parameter DEF into OUT (set and mark filled).
 * WHAT names it in messages ("in_features", "tile m"). Plain scalars are
 * read by their text; a quoted or !!str one is a string, read only where a
 * string is expected; !!int, !!float and !!bool say what the text must
 * be. */
static int parse_param(struct reader *r, const struct param_def *def,
                       const char *what, struct ref v,
                       struct param_value *out)
{
    const struct node *n = node_of(r, v);
    const char *text = n->kind == NODE_SCALAR ? text_of(r, v) : "";
    /* Numbers have no leading space (strtoll and strtod would skip it). */
    int number = n->kind == NODE_SCALAR && n->count > 0 &&
                 (n->tag == TAG_NONE ? !n->quoted
                                     : n->tag == TAG_INT ||
                                           (n->tag == TAG_FLOAT &&
                                            def->kind == VALUE_FLOAT)) &&
                 strchr("+-.0123456789", text[0]) != NULL;
    out->set = 1;
    out->mark = at(r, v);
    if (!usable(r, v)) {
        return 0;
    }
    switch (def->kind) {
    case VALUE_INT:
        return parse_int(r, def, what, v, text, number, out);
    case VALUE_FLOAT:
        return parse_float(r, def, what, v, text, number, out);
    case VALUE_BOOL:
        return parse_bool(r, what, v, text, out);
    case VALUE_CHOICE:
        return parse_choice(r, def, what, v, out);
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

static void read_tile(struct reader *r, struct kernel_spec *ks, struct ref v)
{
    const struct op_def *op = ks->op;
    char tmp[96];
    if (!usable(r, v)) {
        return;
    }
    if (scalar_is(r, v, "auto")) {
        ks->tile_auto = 1;
        return;
    }
    if (!is_kind(r, v, NODE_MAPPING)) {
        diag_error(r->d, r->path, at(r, v),
                   "tile must be a mapping of knobs or 'auto', found %s",
                   shown(r, v, tmp, sizeof tmp));
        return;
    }
    int entered = enter_node(r, v);
    if (check_keys(r, v)) {
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

/* Reports NAME (at WHERE, the mark of its value) if an earlier kernel of
 * the set or of this file (valid or not) has it, in any case, or if the
 * two clash (see stub_names.h): one is P, the other P_S and S a tail. Else
 * remembers it with KERNEL, the mark of its kernel. Returns 1 if
 * reported. */
static int name_clash(struct reader *r, const char *name, struct mark where,
                      struct mark kernel)
{
    struct spec_names *ix = r->set->names;
    char lower[SPECL_NAME_MAX];
    int id;
    lower_name(name, lower);
    if (strmap_get(&ix->by_name, lower, strlen(lower), &id)) {
        const struct name_entry *e = &ix->entry[id];
        if (strcmp(e->name, name) == 0) {
            diag_error(r->d, r->path, where,
                       "duplicate kernel name '%s' (first defined at "
                       "%s:%d:%d)",
                       name, e->file, e->mark.line, e->mark.col);
        } else {
            diag_error(r->d, r->path, where,
                       "kernel name '%s' differs from '%s' (defined at "
                       "%s:%d:%d) only in case; their files would collide "
                       "on case-insensitive file systems",
                       name, e->name, e->file, e->mark.line, e->mark.col);
        }
        return 1;
    }
    for (size_t i = 1; name[i] != '\0'; i++) {
        char prefix[SPECL_NAME_MAX];
        const char *tail = name + i + 1;
        if (name[i] != '_' ||
            !strmap_get(&ix->tails, tail, strlen(tail), &id)) {
            continue;
        }
        snprintf(prefix, sizeof prefix, "%.*s", (int)i, name);
        lower_name(prefix, lower);
        if (strmap_get(&ix->by_name, lower, i, &id) &&
            strcmp(ix->entry[id].name, prefix) == 0) {
            const struct name_entry *e = &ix->entry[id];
            diag_error(r->d, r->path, where,
                       "kernel name '%s' clashes with kernel '%s' (defined "
                       "at %s:%d:%d): it or its symbols would be among "
                       "%s's (%s_create ... %s_N_VARIANTS, constants such "
                       "as %s_RANK, the naive stub %s_naive); rename one",
                       name, e->name, e->file, e->mark.line, e->mark.col,
                       e->name, e->name, e->name, e->name, e->name);
            return 1;
        }
    }
    if (strmap_get(&ix->by_prefix, name, strlen(name), &id)) {
        const struct name_entry *e = &ix->entry[id];
        diag_error(r->d, r->path, where,
                   "kernel name '%s' clashes with kernel '%s' (defined at "
                   "%s:%d:%d): '%s' or its symbols would be among %s's "
                   "(%s_create ... %s_N_VARIANTS, constants such as "
                   "%s_RANK, the naive stub %s_naive); rename one",
                   name, e->name, e->file, e->mark.line, e->mark.col,
                   e->name, name, name, name, name, name);
        return 1;
    }
    names_add(ix, name, r->path, kernel);
    return 0;
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

static void append_kernel(struct spec_set *s, const struct kernel_spec *ks)
{
    if (s->n_kernel == s->cap) {
        size_t cap = (size_t)s->cap;
        s->kernel = grow(s->kernel, &cap, sizeof *s->kernel);
        s->cap = (int)cap;
    }
    s->kernel[s->n_kernel++] = *ks;
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
    if (!usable(r, name)) {
        return;
    }
    if (!is_stringish(r, name) || !identifier_syntax(text_of(r, name))) {
        diag_error(r->d, r->path, at(r, name),
                   "name must be a C identifier of at most %d characters "
                   "(got %s)",
                   SPECL_NAME_MAX - 1, shown(r, name, tmp, sizeof tmp));
    } else if (spec_name_reserved(text_of(r, name), why, sizeof why)) {
        diag_error(r->d, r->path, at(r, name),
                   "kernel name %s; choose another name", why);
    } else if (!name_clash(r, text_of(r, name), at(r, name), ks->mark)) {
        snprintf(ks->name, sizeof ks->name, "%s", text_of(r, name));
    }
}

static void read_kernel(struct reader *r, struct ref n)
{
    static const char *const common[] = {"name", "op", "dtype", "tile",
                                         NULL};
    char tmp[96];
    int errors = r->d->count;
    if (!usable(r, n)) {
        return;
    }
    if (!is_kind(r, n, NODE_MAPPING)) {
        diag_error(r->d, r->path, at(r, n),
                   "expected a kernel (a mapping with name and op), found "
                   "%s",
                   shown(r, n, tmp, sizeof tmp));
        return;
    }
    if (!check_keys(r, n)) {
        return;
    }
    struct kernel_spec ks;
    memset(&ks, 0, sizeof ks);
    ks.file = r->path;
    ks.mark = at(r, n);
    ks.dtype = r->dtype;

    struct ref name, op;
    if (!lookup(r, n, "name", &name)) {
        diag_error(r->d, r->path, ks.mark, "kernel has no 'name'");
    } else {
        read_kernel_name(r, &ks, name);
    }
    if (!lookup(r, n, "op", &op)) {
        diag_error(r->d, r->path, ks.mark, "kernel has no 'op'");
        return;
    }
    if (!usable(r, op)) {
        return;
    }
    ks.op = is_stringish(r, op) ? op_find(text_of(r, op)) : NULL;
    if (ks.op == NULL) {
        char list[256] = "";
        for (int i = 0; op_registry[i] != NULL; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, op_registry[i]->name,
                    sizeof list - strlen(list) - 1);
        }
        diag_error(r->d, r->path, at(r, op),
                   "unknown op %s (expected one of: %s)",
                   shown(r, op, tmp, sizeof tmp), list);
        return;
    }

    for (int i = 0; i < ks.op->n_fields; i++) {
        ks.field[i].num = ks.op->fields[i].def;
        ks.field[i].mark = ks.mark;
    }
    for (int i = 0; i < ks.op->n_knobs; i++) {
        ks.knob[i].mark = ks.mark;
    }

    for (size_t p = 0; p + 1 < n_items(r, n); p += 2) {
        struct ref k = item_of(r, n, p);
        struct ref v = item_of(r, n, p + 1);
        const char *key = text_of(r, k);
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
            diag_error(r->d, r->path, at(r, k),
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
        check_constants(r, &ks);
    }
    if (r->d->count == errors) {
        append_kernel(r->set, &ks);
    }
}

static void read_defaults(struct reader *r, struct ref n)
{
    char tmp[96];
    if (!usable(r, n)) {
        return;
    }
    if (!is_kind(r, n, NODE_MAPPING)) {
        diag_error(r->d, r->path, at(r, n),
                   "defaults must be a mapping, found %s",
                   shown(r, n, tmp, sizeof tmp));
        return;
    }
    int entered = enter_node(r, n);
    if (check_keys(r, n)) {
        for (size_t p = 0; p + 1 < n_items(r, n); p += 2) {
            struct ref k = item_of(r, n, p);
            if (scalar_is(r, k, "dtype")) {
                parse_dtype(r, item_of(r, n, p + 1), &r->dtype);
            } else {
                diag_error(r->d, r->path, at(r, k),
                           "unknown key '%s' in defaults (expected: dtype)",
                           text_of(r, k));
            }
        }
    }
    leave_node(r, entered);
}

static void read_kernels(struct reader *r, struct ref kernels)
{
    char tmp[96];
    if (!usable(r, kernels)) {
        return;
    }
    if (!is_kind(r, kernels, NODE_SEQUENCE) || n_items(r, kernels) == 0) {
        diag_error(r->d, r->path, at(r, kernels),
                   "kernels must be a non-empty sequence, found %s",
                   is_kind(r, kernels, NODE_SEQUENCE)
                       ? "an empty one"
                       : shown(r, kernels, tmp, sizeof tmp));
        return;
    }
    int entered = enter_node(r, kernels);
    for (size_t i = 0; i < n_items(r, kernels); i++) {
        struct ref k = item_of(r, kernels, i);
        int inner = enter_node(r, k);
        read_kernel(r, k);
        leave_node(r, inner);
    }
    leave_node(r, entered);
}

static void read_root(struct reader *r, struct ref root)
{
    char tmp[96];
    if (!usable(r, root)) {
        return;
    }
    if (!is_kind(r, root, NODE_MAPPING)) {
        diag_error(r->d, r->path, at(r, root),
                   "expected a mapping with 'kernels:', found %s",
                   shown(r, root, tmp, sizeof tmp));
        return;
    }
    if (!check_keys(r, root)) {
        return;
    }
    /* Kernels need the default dtype even when `defaults:` comes after
     * them: read it quietly first, then report in file order. */
    struct ref defaults, kernels;
    if (lookup(r, root, "defaults", &defaults)) {
        struct diags quiet = {.out = NULL};
        struct diags *loud = r->d;
        r->d = &quiet;
        read_defaults(r, defaults);
        r->d = loud;
    }
    for (size_t p = 0; p + 1 < n_items(r, root); p += 2) {
        struct ref k = item_of(r, root, p);
        struct ref v = item_of(r, root, p + 1);
        if (scalar_is(r, k, "defaults")) {
            read_defaults(r, v);
        } else if (scalar_is(r, k, "kernels")) {
            read_kernels(r, v);
        } else {
            diag_error(r->d, r->path, at(r, k),
                       "unknown key '%s' (expected 'defaults' or "
                       "'kernels')",
                       text_of(r, k));
        }
    }
    if (!lookup(r, root, "kernels", &kernels)) {
        diag_error(r->d, r->path, at(r, root),
                   "spec has no 'kernels:' sequence");
    }
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
        names_rebuild(s);
    }
    struct doc doc;
    memset(&doc, 0, sizeof doc);
    if (compose(&parser, &doc, path, data, len, d) == 0) {
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
            r.set = s;
            r.dtype = DTYPE_F32;
            read_root(&r, doc.root);
        }
        if (!doc.stream_ended) {
            check_rest(&parser, path, data, len, d);
        }
    }
    doc_free(&doc);
    yaml_parser_delete(&parser);
    if (d->count != before) {
        s->n_kernel = n_before; /* nothing of a bad file is kept */
        names_rebuild(s);
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
        for (int t = TARGET_GPU; t <= TARGET_SM90A; t++) {
            defaults_note |= strcmp(ks->tile_note,
                                    target_defaults_label(t)) == 0;
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
