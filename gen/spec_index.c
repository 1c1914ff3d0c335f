/* spec_index.c - kernel names: their syntax, and the index of a set's
 * names that finds a name given twice (in any case) or one whose symbols
 * would clash with another kernel's, in time linear in the names. */
#include "spec_index.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "stub_names.h"

static void lower_name(const char *name, char *out)
{
    size_t i = 0;
    for (; name[i] != '\0' && i < SPECL_NAME_MAX - 1; i++) {
        char c = name[i];
        out[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    out[i] = '\0';
}

static const struct strmap *symbol_tails(void);

static void names_add(struct spec_names *ix, const char *name,
                      const char *file, struct mark mark)
{
    char lower[SPECL_NAME_MAX];
    int id = (int)ix->n, old;
    if (ix->n == ix->cap) {
        ix->entry = spec_grow(ix->entry, &ix->cap, sizeof *ix->entry);
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
            strmap_get(symbol_tails(), tail, strlen(tail), &old) &&
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
    /* On the heap: NAME.c's numbered kernel texts make them many. */
    char (*t)[48] = malloc(MAX_SUFFIXES * sizeof *t);
    if (t == NULL) {
        fputs("specl: out of memory\n", stderr);
        exit(1);
    }
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
    free(t);
}

/* The tails S (values unused): the same for every set, so built once
 * (every op planned) and kept for the process. */
static struct strmap tails;
static pthread_once_t tails_once = PTHREAD_ONCE_INIT;

static void tails_build_once(void)
{
    build_tails(&tails);
}

static const struct strmap *symbol_tails(void)
{
    pthread_once(&tails_once, tails_build_once);
    return &tails;
}

void spec_names_rebuild(struct spec_names **index,
                        const struct kernel_spec *kernel, int n)
{
    if (*index == NULL) {
        *index = calloc(1, sizeof **index);
        if (*index == NULL) {
            fputs("specl: out of memory\n", stderr);
            exit(1);
        }
    }
    struct spec_names *ix = *index;
    strmap_free(&ix->by_name);
    strmap_free(&ix->by_prefix);
    ix->n = 0;
    for (int i = 0; i < n; i++) {
        names_add(ix, kernel[i].name, kernel[i].file, kernel[i].mark);
    }
    ix->covers = n;
}

void spec_names_free(struct spec_names *ix)
{
    if (ix != NULL) {
        strmap_free(&ix->by_name);
        strmap_free(&ix->by_prefix);
        free(ix->entry);
        free(ix);
    }
}

int spec_name_clash(struct spec_names *ix, struct diags *d, const char *path,
                    const char *name, struct mark where, struct mark kernel)
{
    char lower[SPECL_NAME_MAX];
    int id;
    lower_name(name, lower);
    if (strmap_get(&ix->by_name, lower, strlen(lower), &id)) {
        const struct name_entry *e = &ix->entry[id];
        if (strcmp(e->name, name) == 0) {
            diag_error(d, path, where,
                       "duplicate kernel name '%s' (first defined at "
                       "%s:%d:%d)",
                       name, e->file, e->mark.line, e->mark.col);
        } else {
            diag_error(d, path, where,
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
            !strmap_get(symbol_tails(), tail, strlen(tail), &id)) {
            continue;
        }
        snprintf(prefix, sizeof prefix, "%.*s", (int)i, name);
        lower_name(prefix, lower);
        if (strmap_get(&ix->by_name, lower, i, &id) &&
            strcmp(ix->entry[id].name, prefix) == 0) {
            const struct name_entry *e = &ix->entry[id];
            diag_error(d, path, where,
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
        diag_error(d, path, where,
                   "kernel name '%s' clashes with kernel '%s' (defined at "
                   "%s:%d:%d): '%s' or its symbols would be among %s's "
                   "(%s_create ... %s_N_VARIANTS, constants such as "
                   "%s_RANK, the naive stub %s_naive); rename one",
                   name, e->name, e->file, e->mark.line, e->mark.col,
                   e->name, name, name, name, name, name);
        return 1;
    }
    names_add(ix, name, path, kernel);
    return 0;
}

int spec_identifier_syntax(const char *name)
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
