/* spec_node.c - reading the nodes of a spec's document: what a node is,
 * how it is shown in messages, whether it may be read at all, and the keys
 * of a mapping. */
#include "spec_node.h"
#include "spec_strmap.h"

#include <stdio.h>
#include <string.h>

/* Mappings with more pairs than this find duplicate keys by hashing. */
#define FEW_KEYS 16

/* A scalar read as a string: quoted, tagged !!str, or plain. */
int is_stringish(const struct reader *r, struct ref ref)
{
    const struct node *n = node_of(r, ref);
    return n->kind == NODE_SCALAR &&
           (n->tag == TAG_NONE || n->tag == TAG_STR);
}

/* A scalar that is a string and nothing else: quoted, or tagged !!str. */
int is_string(const struct reader *r, struct ref ref)
{
    const struct node *n = node_of(r, ref);
    return n->kind == NODE_SCALAR &&
           (n->tag == TAG_STR || (n->tag == TAG_NONE && n->quoted));
}

/* Whether REF is a plain or string scalar whose text is TEXT. */
int scalar_is(const struct reader *r, struct ref ref, const char *text)
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
const char *node_shown(const struct reader *r, struct ref ref, char *buf,
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
int node_usable(struct reader *r, struct ref ref)
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
                   node_shown(r, ref, tmp, sizeof tmp));
        return 0;
    }
    return 1;
}

/* Checks that the keys of mapping REF are usable strings and not repeated,
 * and that none is a merge key. Returns 0 when some key is bad
 * (reported). */
int map_check_keys(struct reader *r, struct ref map)
{
    char tmp[96];
    int ok = 1;
    size_t pairs = n_items(r, map) / 2;
    struct strmap seen = {NULL, NULL, 0, 0};
    for (size_t i = 0; i < pairs; i++) {
        struct ref k = item_of(r, map, 2 * i);
        const struct node *kn = node_of(r, k);
        if (!node_usable(r, k)) {
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
                       node_shown(r, k, tmp, sizeof tmp));
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
int map_lookup(const struct reader *r, struct ref map, const char *key,
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
