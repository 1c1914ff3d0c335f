/* emit_variants.c - the variants of one kernel, which NAME_create picks
 * from per device: each variant's prelude and distinct kernel source, its
 * kernel and path tables, its NAME_variants row and device matches; and
 * the entry points that plan a kernel's variants and render its files. */
#include "emit.h"
#include "emit_stub.h"
#include "emit_variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_prune.h"
#include "cl_resolve.h"
#include "clsource.h"
#include "emit_texts.h"
#include "knobs.h"
#include "stub_names.h"

/* Index of NAME in the plan's distinct kernel names, adding it if new. */
static int kernel_index(const char **names, int *n, const char *name)
{
    for (int i = 0; i < *n; i++) {
        if (strcmp(names[i], name) == 0) {
            return i;
        }
    }
    names[*n] = name;
    return (*n)++;
}

/* The kernels of P in the stub's order (first launch first), with the
 * work-items of a group each is launched with; returns how many. */
int plan_kernels(const struct plan *p, const char **names, size_t *threads)
{
    int n = 0;
    for (int pi = 0; pi < p->n_path; pi++) {
        for (int li = 0; li < p->path[pi].n_launch; li++) {
            const struct launch *l = &p->path[pi].launch[li];
            int ki = kernel_index(names, &n, l->kernel);
            threads[ki] = l->local[0] * (l->dims > 1 ? l->local[1] : 1);
        }
    }
    return n;
}

/* Dimension D's work-groups per ceil(P / per_group), per_group 0 read
 * as 1. */
static size_t per_group(const struct launch *l, int d)
{
    return l->per_group[d] > 1 ? l->per_group[d] : 1;
}

/* The bits (1 << buffer index) of the nullable buffers of P that NAMES
 * lists (NULL-terminated; up to 3), into *MASK; -1 with a message in ERR
 * for a name that is no nullable buffer of P. */
static int given_mask(const struct plan *p, const char *const *names,
                      unsigned *mask, char *err, size_t errsize)
{
    *mask = 0;
    for (int i = 0; i < 3 && names[i] != NULL; i++) {
        int b = buffer_index(p, names[i]);
        if (b < 0 || !p->buffer[b].nullable) {
            snprintf(err, errsize, "if_given: %s is no nullable buffer",
                     names[i]);
            return -1;
        }
        *mask |= 1u << b;
    }
    return 0;
}

/* Tables of a NAME.c written once where they are the same (argument
 * lists, kernel lists, launch sequences): each one's text, and the name
 * it was written under. */
struct shared_tables {
    char **text, **name;
    int n, cap;
};

/* The name TEXT was written under in ST, or NULL when it is new. */
static const char *shared_name(const struct shared_tables *st,
                               const char *text)
{
    for (int i = 0; i < st->n; i++) {
        if (strcmp(st->text[i], text) == 0) {
            return st->name[i];
        }
    }
    return NULL;
}

/* Records that TEXT is written under NAME; -1 when out of memory. */
static int shared_add(struct shared_tables *st, const char *text,
                      const char *name)
{
    if (st->n == st->cap) {
        int cap = st->cap ? 2 * st->cap : 16;
        char **text_grown = realloc(st->text, (size_t)cap * sizeof(char *));
        if (text_grown == NULL) {
            return -1;
        }
        st->text = text_grown;
        char **name_grown = realloc(st->name, (size_t)cap * sizeof(char *));
        if (name_grown == NULL) {
            return -1;
        }
        st->name = name_grown;
        st->cap = cap;
    }
    st->text[st->n] = strdup(text);
    st->name[st->n] = strdup(name);
    if (st->text[st->n] == NULL || st->name[st->n] == NULL) {
        free(st->text[st->n]);
        free(st->name[st->n]);
        return -1;
    }
    st->n++;
    return 0;
}

static void shared_tables_free(struct shared_tables *st)
{
    for (int i = 0; i < st->n; i++) {
        free(st->text[i]);
        free(st->name[i]);
    }
    free(st->text);
    free(st->name);
}

/* The distinct argument lists of a NAME.c's launches, in the order first
 * met, kept in a struct shared_tables of their own: a kernel's
 * launches, in every variant, mostly pass the same arguments, so each
 * list is written once (NAME_argsI) and the launches point to it. */

/* The index of argument list TEXT in AL, added (and its table appended
 * to OUT) when new; -1 past STUB_MAX_ARG_LISTS or out of memory. */
static int arg_list(struct shared_tables *al, const char *text,
                    const char *name, struct buf *out)
{
    for (int i = 0; i < al->n; i++) {
        if (strcmp(al->text[i], text) == 0) {
            return i;
        }
    }
    char table[EMIT_NAME_MAX + 32];
    snprintf(table, sizeof table, "%s_args%d", name, al->n);
    if (al->n == STUB_MAX_ARG_LISTS || shared_add(al, text, table) < 0) {
        return -1;
    }
    /* Its items four spaces in, lines within 80 columns. */
    buf_printf(out, "static const signed char %s[] = {\n    ", table);
    size_t column = 4;
    for (const char *item = text; *item != '\0';) {
        const char *comma = strstr(item, ", ");
        size_t n = comma != NULL ? (size_t)(comma - item) + 1 : strlen(item);
        if (column > 4 && column + 1 + n > 80) {
            buf_puts(out, "\n    ");
            column = 4;
        } else if (column > 4) {
            buf_puts(out, " ");
            column++;
        }
        buf_add(out, item, n);
        column += n;
        item += comma != NULL ? n + 1 : n;
    }
    buf_puts(out, "};\n");
    return al->n - 1;
}

/* The name of the table that holds TEXT: an earlier one that is the
 * same, else NAME_TABLE, whose definition, DECL TABLE[] = TEXT, with
 * COMMENT above it (NULL: none), is appended to OUT. NULL when out of
 * memory. */
static const char *shared_table(struct shared_tables *st, const char *decl,
                                const char *name, const char *table,
                                const char *text, const char *comment,
                                struct buf *out)
{
    struct buf key;
    buf_init(&key);
    buf_printf(&key, "%s %s", decl, text);
    const char *have = shared_name(st, buf_str(&key));
    if (have == NULL) {
        char full[EMIT_NAME_MAX + 48];
        snprintf(full, sizeof full, "%s_%s", name, table);
        if (comment != NULL) {
            buf_printf(out, "/* %s */\n", comment);
        }
        /* A list that would pass 80 columns starts on a line of its
         * own, where the layout can break it (stub.c's c_layout). */
        int own_line = strchr(text, '\n') == NULL &&
                       strlen(decl) + strlen(full) + strlen(text) + 20 > 80;
        buf_printf(out, "static const %s %s[] = %s%s;\n%s", decl, full,
                   own_line ? "{\n    " : "", own_line ? text + 1 : text,
                   comment != NULL ? "\n" : "");
        if (shared_add(st, buf_str(&key), full) == 0) {
            have = st->name[st->n - 1];
        }
    }
    buf_free(&key);
    return have;
}

/* Variant V's kernel table, paths and NAME_variants row (stub NAME of an
 * OP kernel), with the columns of the sections SEC; its launches'
 * argument lists from AL. */
static int stub_tables(const char *name, const struct op_def *op,
                       const struct plan *p, int v, const char *label,
                       const struct stub_sections *sec,
                       struct shared_tables *al, struct shared_tables *st,
                       struct buf *b, char *err, size_t errsize)
{
    const char *names[SPECL_MAX_PATHS * SPECL_MAX_LAUNCHES];
    size_t threads[SPECL_MAX_PATHS * SPECL_MAX_LAUNCHES];
    int n_names = plan_kernels(p, names, threads);
    struct buf *t = &b[H_VARIANT_TABLES];
    struct buf list;
    char table[64];
    const char *launches[SPECL_MAX_PATHS];
    struct buf counts;
    buf_init(&list);
    buf_init(&counts);
    buf_puts(&list, "{");
    buf_puts(&counts, "{");
    for (int i = 0; i < n_names; i++) {
        buf_printf(&list, "%s\"%s\"", i ? ", " : "", names[i]);
        buf_printf(&counts, "%s%zu", i ? ", " : "", threads[i]);
    }
    buf_puts(&list, "}");
    buf_puts(&counts, "}");
    snprintf(table, sizeof table, "kernel_names%d", v);
    const char *kernel_names = shared_table(st, "char *const", name, table,
                                            buf_str(&list), NULL, t);
    snprintf(table, sizeof table, "kernel_threads%d", v);
    const char *kernel_threads = shared_table(st, "size_t", name, table,
                                              buf_str(&counts), NULL, t);
    buf_free(&list);
    buf_free(&counts);
    buf_puts(t, "\n");
    for (int pi = 0; pi < p->n_path; pi++) {
        const struct path *path = &p->path[pi];
        struct buf rows;
        buf_init(&rows);
        buf_puts(&rows, "{\n");
        for (int li = 0; li < path->n_launch; li++) {
            const struct launch *l = &path->launch[li];
            int ki = kernel_index(names, &n_names, l->kernel);
            int two = l->dims > 1;
            buf_printf(&rows, "    {%d, %d, {%zu, %zu}, {%zu, %zu}, "
                       "{%u, %u}, {%zu, %zu}, ", ki, l->dims, l->local[0],
                       two ? l->local[1] : 1, l->groups[0],
                       two ? l->groups[1] : 1, l->grid[0],
                       two ? l->grid[1] : 0u, per_group(l, 0),
                       two ? per_group(l, 1) : 1);
            if (sec->slices) {
                buf_printf(&rows, "%d, ", l->slices);
            }
            buf_init(&list);
            for (int a = 0; l->args[a] != NULL; a++) {
                const char *arg = l->args[a];
                if (op_size_index(op, arg) >= 0) {
                    char up[32];
                    upper_name(up, arg, sizeof up);
                    buf_printf(&list, "%s_ARG_%s, ", name, up);
                } else if (strcmp(arg, "scratch") == 0) {
                    buf_printf(&list, "%s_ARG_SCRATCH, ", name);
                } else if (strcmp(arg, "slices") == 0) {
                    buf_printf(&list, "%s_ARG_SLICES, ", name);
                } else if (strcmp(arg, "sync") == 0 && p->sync_words > 0) {
                    buf_printf(&list, "%s_ARG_SYNC, ", name);
                } else if (buffer_index(p, arg) >= 0) {
                    char up[32];
                    upper_name(up, arg, sizeof up);
                    buf_printf(&list, "%s_BUF_%s, ", name, up);
                } else {
                    snprintf(err, errsize, "launch %s: unknown argument %s",
                             l->kernel, arg);
                    buf_free(&list);
                    buf_free(&rows);
                    return -1;
                }
            }
            buf_printf(&list, "%s_ARG_END", name);
            int at = arg_list(al, buf_str(&list), name, &b[H_ARG_LISTS]);
            buf_free(&list);
            if (at < 0) {
                snprintf(err, errsize, "%s: more than %d distinct argument "
                         "lists, or out of memory", name,
                         STUB_MAX_ARG_LISTS);
                buf_free(&rows);
                return -1;
            }
            unsigned if_given;
            if (given_mask(p, l->if_given, &if_given, err, errsize) < 0) {
                buf_free(&rows);
                return -1;
            }
            buf_printf(&rows, "%s_args%d", name, at);
            if (sec->if_given) {
                buf_printf(&rows, ", %uu", if_given);
            }
            buf_puts(&rows, "},\n");
        }
        buf_puts(&rows, "}");
        /* a band of the kind before (its slices for more rows) says so */
        int band = pi > 0 && strcmp(path->why, p->path[pi - 1].why) == 0;
        char decl[EMIT_NAME_MAX + 32];
        snprintf(decl, sizeof decl, "struct %s_launch", name);
        snprintf(table, sizeof table, "launches%d_%d", v, pi);
        launches[pi] = shared_table(st, decl, name, table, buf_str(&rows),
                                    band ? "the same, for more rows"
                                         : path->why, t);
        buf_free(&rows);
        if (launches[pi] == NULL) {
            snprintf(err, errsize, "%s: out of memory", name);
            return -1;
        }
    }
    if (kernel_names == NULL || kernel_threads == NULL) {
        snprintf(err, errsize, "%s: out of memory", name);
        return -1;
    }
    buf_printf(t, "static const struct %s_path %s_paths%d[] = {\n", name, name,
               v);
    for (int pi = 0; pi < p->n_path; pi++) {
        unsigned scratch_if;
        if (given_mask(p, p->path[pi].scratch_if_given, &scratch_if, err,
                       errsize) < 0) {
            return -1;
        }
        buf_printf(t, "    {%ld, %d, %s", p->path[pi].max_rows,
                   p->path[pi].n_launch, launches[pi]);
        if (sec->scratch) {
            buf_printf(t, ", %ld, %uu, %ld", p->path[pi].scratch_per,
                       p->path[pi].scratch_sizes, p->path[pi].scratch_fixed);
        }
        if (sec->scratch && sec->if_given) {
            buf_printf(t, ", %uu", scratch_if);
        }
        if (sec->coop) {
            buf_printf(t, ", %ld, %ld, %ld", p->path[pi].coop_groups,
                       p->path[pi].coop_most, p->path[pi].coop_total);
        }
        if (sec->sync_sized) {
            buf_printf(t, ", %ld, %uu", p->path[pi].sync_per,
                       p->path[pi].sync_sizes);
        }
        if (sec->units_sized) {
            buf_printf(t, ", %ld, %uu, %ld, %ld, %du",
                       p->path[pi].units_groups, p->path[pi].units_sizes,
                       p->path[pi].units_fill, p->path[pi].units_least,
                       p->path[pi].units_least_size);
        }
        buf_puts(t, "},\n");
    }
    buf_puts(t, "};\n\n");
    buf_puts(&b[H_VARIANTS], "    {\"");
    c_escape(&b[H_VARIANTS], label, strlen(label));
    buf_puts(&b[H_VARIANTS], "\",\n");
    buf_printf(&b[H_VARIANTS], "     %s_source%d,\n", name, v);
    buf_printf(&b[H_VARIANTS], "     %s, %s, %d, %s_paths%d", kernel_names,
               kernel_threads, n_names, name, v);
    if (sec->needed != 0) {
        buf_printf(&b[H_VARIANTS], ", 0x%xu", p->needs);
    }
    if (sec->sync) {
        buf_printf(&b[H_VARIANTS], ", %ld", p->sync_words);
    }
    buf_puts(&b[H_VARIANTS], "},\n");
    return n_names;
}

/* Whether two plans give the same host API: buffers and constants. */
static int same_api(const struct plan *a, const struct plan *b)
{
    if (a->n_buffer != b->n_buffer || a->n_constant != b->n_constant) {
        return 0;
    }
    for (int i = 0; i < a->n_buffer; i++) {
        if (strcmp(a->buffer[i].name, b->buffer[i].name) != 0 ||
            a->buffer[i].per != b->buffer[i].per ||
            a->buffer[i].sizes != b->buffer[i].sizes ||
            a->buffer[i].elem != b->buffer[i].elem ||
            a->buffer[i].fixed != b->buffer[i].fixed ||
            a->buffer[i].optional != b->buffer[i].optional ||
            a->buffer[i].nullable != b->buffer[i].nullable ||
            a->buffer[i].role != b->buffer[i].role ||
            (a->buffer[i].may_alias == NULL) !=
                (b->buffer[i].may_alias == NULL) ||
            (a->buffer[i].may_alias != NULL &&
             strcmp(a->buffer[i].may_alias, b->buffer[i].may_alias) != 0)) {
            return 0;
        }
    }
    for (int i = 0; i < a->n_constant; i++) {
        char va[48], vb[48];
        define_text(&a->constant[i], va, sizeof va);
        define_text(&b->constant[i], vb, sizeof vb);
        if (strcmp(a->constant[i].name, b->constant[i].name) != 0 ||
            strcmp(va, vb) != 0) {
            return 0;
        }
    }
    return 1;
}

/* Variant V's rows of the stub's device matches (device and driver
 * columns when NAMED, a caps column when CAPS) and of the header's list
 * of variants (of N), its knobs KNOBS. */
static void variant_rows(const struct emit_variant *ev, int v, int n,
                         const char *knobs, int named, int caps,
                         struct buf *b)
{
    for (int m = 0; m < ev[v].n_match; m++) {
        const struct variant_match *vm = &ev[v].match[m];
        if (vm->device[0]) {
            buf_puts(&b[H_MATCHES], "    {\"");
            c_escape(&b[H_MATCHES], vm->device, strlen(vm->device));
            buf_puts(&b[H_MATCHES], "\", \"");
            c_escape(&b[H_MATCHES], vm->driver, strlen(vm->driver));
            buf_printf(&b[H_MATCHES], "\", 0, %s%d},\n", caps ? "0x0u, " : "",
                       v);
        } else {
            char names[128], column[16] = "";
            caps_names(vm->caps, names, sizeof names);
            if (caps) {
                snprintf(column, sizeof column, "0x%xu, ", vm->caps);
            }
            buf_printf(&b[H_MATCHES], "    {%s%d, %s%d}, /* %s */\n",
                       named ? "NULL, NULL, " : "", vm->cpu, column, v,
                       vm->caps ? names : vm->cpu ? "CPUs" : "any device");
        }
    }
    buf_printf(&b[H_VARIANT_DOC], " *   %d: ", v);
    comment_text(&b[H_VARIANT_DOC], ev[v].label);
    buf_puts(&b[H_VARIANT_DOC], "; for ");
    match_text(ev[v].match, ev[v].n_match, &b[H_VARIANT_DOC]);
    buf_printf(&b[H_VARIANT_DOC], "\n *      %s%s", knobs,
               v + 1 < n ? "\n" : "");
}

/* Variant V's source as the list of T's texts NAME_source<V>. */
static void source_list(const char *name, int v, const struct emit_texts *t,
                        struct buf *b)
{
    struct buf *list = &b[H_VARIANT_TABLES];
    if (v == 0) {
        buf_puts(list, "/* Each variant's texts, kernels and paths, variant 0 "
                       "first. */\n");
    }
    buf_printf(list, "static const char *const *const %s_source%d[] = {\n"
               "    ", name, v);
    emit_texts_list(name, t, v, list);
    buf_puts(list, "NULL};\n\n");
}

/* The rows ranges of VS as the rows of the stub's NAME_ranges (device
 * NULL: every CPU) and the lines of NAME.h's doc of NAME_variant_at. */
static void range_rows(const struct variant_set *vs, struct buf *b)
{
    for (int i = 0; vs != NULL && i < vs->n_range; i++) {
        const struct variant_range *r = &vs->range[i];
        char upto[64];
        range_rows_text(vs, i, upto, sizeof upto);
        if (r->device[0]) {
            buf_puts(&b[H_RANGES], "    {\"");
            c_escape(&b[H_RANGES], r->device, strlen(r->device));
            buf_printf(&b[H_RANGES], "\", %ld, %d}, /* %s: %s%s */\n",
                       r->max_rows, r->variant, upto,
                       r->tuned[0] ? "tuned at rows " : "the defaults",
                       r->tuned);
        } else {
            buf_printf(&b[H_RANGES], "    {NULL, %ld, %d}, /* every CPU, "
                       "%s */\n", r->max_rows, r->variant, upto);
        }
        buf_puts(&b[H_RANGE_DOC], " *   ");
        range_text(vs, i, &b[H_RANGE_DOC]);
        buf_puts(&b[H_RANGE_DOC], "\n");
    }
}

/* Renders the files of stub NAME with the N variants of EV and the rows
 * ranges of VS (NULL: none) into E. */
static int emit_variants(const char *name, const struct emit_variant *ev,
                         int n, const struct variant_set *vs,
                         struct emitted *e, char *err, size_t errsize)
{
    struct buf b[N_HOLES];
    struct emit_texts texts_store, *texts = &texts_store;
    int rc = -1, bad = 0;
    const struct plan *plan = &ev[0].plan;

    memset(e, 0, sizeof *e);
    if (strlen(name) >= sizeof e->name) {
        snprintf(err, errsize, "name too long: %s", name);
        return -1;
    }
    if (n < 1 || n > SPECL_MAX_VARIANTS) {
        snprintf(err, errsize, "%s: %d variants (1 to %d)", name, n,
                 SPECL_MAX_VARIANTS);
        return -1;
    }
    emit_texts_init(texts);
    snprintf(e->name, sizeof e->name, "%s", name);
    for (int i = 0; i < N_HOLES; i++) {
        buf_init(&b[i]);
    }

    /* NAME.cl is variant 0's source; the .c holds each distinct piece of
     * the variants' sources once. */
    header_comment(ev, n, name, "cl", &e->cl);
    if (n > 1) {
        buf_printf(&e->cl, "\n/* The source of variant 0; %s.c holds every "
                   "variant's. */\n", name);
    }
    struct stub_sections sec;
    stub_sections(ev, n, &sec);
    sec.ranges = vs != NULL && vs->n_range > 0;
    range_rows(vs, b);
    int max_kernels = 0;
    /* Every variant's kernels rendered first: a conditional of a
     * template is resolved where every variant whose source holds the
     * template decides it alike, so that the variants' texts of it stay
     * as shared as they were. */
    const struct plan *plans[SPECL_MAX_VARIANTS];
    const struct render_cuts *plan_cuts[SPECL_MAX_VARIANTS];
    struct buf rendered[SPECL_MAX_VARIANTS];
    struct shared_tables al = {NULL, NULL, 0, 0};
    struct shared_tables shared = {NULL, NULL, 0, 0};
    struct render_cuts cuts[SPECL_MAX_VARIANTS];
    for (int v = 0; v < n; v++) {
        plans[v] = &ev[v].plan;
        plan_cuts[v] = &cuts[v];
        buf_init(&rendered[v]);
        if (bad) {
            continue;
        }
        if (v > 0 && !same_api(plan, plans[v])) {
            snprintf(err, errsize, "%s: variant %d has other buffers or "
                     "constants than variant 0", name, v);
            bad = 1;
        } else if (cl_kernels(ev[v].ks, plans[v], ev[v].template_file,
                              &rendered[v], &cuts[v], err, errsize) < 0) {
            bad = 1;
        }
    }
    /* Then resolved, and the definitions no variant uses left out of
     * all. */
    struct buf text[SPECL_MAX_VARIANTS];
    for (int v = 0; v < n; v++) {
        buf_init(&text[v]);
        if (!bad) {
            cl_resolve(buf_str(&rendered[v]), rendered[v].len, plans,
                       plan_cuts, n, &cuts[v], &text[v]);
        }
    }
    if (!bad) {
        cl_prune(text, cuts, n);
    }
    for (int v = 0; v < n && !bad; v++) {
        struct buf prelude;
        char first[48];
        buf_init(&prelude);
        cl_prelude_used(&ev[v].plan, buf_str(&text[v]), text[v].len,
                        &prelude);
        if (v == 0) {
            buf_puts(&e->cl, buf_str(&prelude));
            buf_puts(&e->cl, buf_str(&text[v]));
        }
        snprintf(first, sizeof first, "the parameters of variant %d", v);
        bad = emit_texts_add(texts, name, v, &prelude, first, &text[v],
                             &cuts[v], err, errsize) < 0;
        buf_free(&prelude);
    }
    if (!bad) {
        emit_texts_write(name, texts, n, &b[H_SOURCES]);
    }
    for (int v = 0; v < n && !bad; v++) {
        char knobs[TUNE_TEXT];
        source_list(name, v, texts, b);
        knobs_text(ev[v].ks, knobs, sizeof knobs);
        int k = stub_tables(name, ev[v].ks->op, &ev[v].plan, v, ev[v].label,
                            &sec, &al, &shared, b, err, errsize);
        if (k < 0) {
            bad = 1;
        }
        max_kernels = k > max_kernels ? k : max_kernels;
        variant_rows(ev, v, n, knobs, sec.names, sec.asked != 0, b);
    }
    for (int v = 0; v < n; v++) {
        buf_free(&rendered[v]);
        buf_free(&text[v]);
    }
    shared_tables_free(&al);
    shared_tables_free(&shared);
    if (bad) {
        goto done;
    }
    rc = render_stub(name, ev, n, &sec, max_kernels, b, e, err, errsize);
done:
    for (int i = 0; i < N_HOLES; i++) {
        buf_free(&b[i]);
    }
    emit_texts_free(texts);
    if (rc != 0) {
        emitted_free(e);
        return -1;
    }
    return 0;
}

int emit_stub(const struct kernel_spec *ks, const char *name,
              const struct plan *plan, const char *template_file,
              struct emitted *e, char *err, size_t errsize)
{
    static const struct variant_match any;
    struct emit_variant *ev = calloc(1, sizeof *ev);
    if (ev == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    ev->ks = ks;
    ev->plan = *plan;
    ev->template_file = template_file;
    ev->label = "";
    ev->n_match = 1;
    ev->match = &any;
    int rc = emit_variants(name, ev, 1, NULL, e, err, errsize);
    free(ev);
    return rc;
}

/* VS as the emitter renders it (caller frees); NULL when out of memory. */
struct emit_variant *plan_variants(const struct variant_set *vs)
{
    struct emit_variant *ev = calloc((size_t)vs->n + 1, sizeof *ev);
    for (int v = 0; ev != NULL && v < vs->n; v++) {
        ev[v].ks = &vs->v[v].ks;
        plan_of(&vs->v[v].ks, &ev[v].plan);
        ev[v].label = vs->v[v].label;
        ev[v].n_match = vs->v[v].n_match;
        ev[v].match = vs->v[v].match;
    }
    return ev;
}

int emit_kernel(const struct variant_set *vs, struct emitted *e, char *err,
                size_t errsize)
{
    struct emit_variant *ev = plan_variants(vs);
    if (ev == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    int rc = emit_variants(vs->v[0].ks.name, ev, vs->n, vs, e, err,
                           errsize);
    free(ev);
    return rc;
}

int emit_naive(const struct kernel_spec *ks, struct emitted *e, char *err,
               size_t errsize)
{
    struct plan plan;
    char name[EMIT_NAME_MAX];
    naive_plan(ks, &plan);
    snprintf(name, sizeof name, "%s%s", ks->name, EMIT_NAIVE_SUFFIX);
    return emit_stub(ks, name, &plan, NAIVE_TEMPLATE, e, err, errsize);
}
