/* clsource.c - a plan's kernel source (its #define prelude and the
 * rendered templates) and the hash of the code a plan emits, which the
 * variants and the tuner compare (clsource.h says what each does). */
#include "clsource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

void define_lines(const struct define *defs, int n, const char *prefix,
                  size_t cols, struct buf *out)
{
    char value[48];
    size_t width = 0, comment = 0;
    for (int i = 0; i < n; i++) {
        define_text(&defs[i], value, sizeof value);
        size_t w = strlen(prefix) + strlen(defs[i].name) + 1 + strlen(value);
        width = w > width ? w : width;
        size_t c = strlen(defs[i].comment);
        comment = c > comment ? c : comment;
    }
    /* The widest aligned line: "#define " (8 columns), the widest define,
     * then a blank and the widest comment with its delimiters (7). */
    int above = cols != 0 && comment > 0 && 8 + width + 4 + comment + 3 > cols;
    for (int i = 0; i < n; i++) {
        define_text(&defs[i], value, sizeof value);
        size_t w = strlen(prefix) + strlen(defs[i].name) + 1 + strlen(value);
        if (above && defs[i].comment[0]) {
            buf_printf(out, "/* %s */\n", defs[i].comment);
        }
        buf_printf(out, "#define %s%s %s", prefix, defs[i].name, value);
        if (!above && defs[i].comment[0]) {
            buf_printf(out, "%*s /* %s */", (int)(width - w), "",
                       defs[i].comment);
        }
        buf_puts(out, "\n");
    }
}

/* PLAN's tables as __constant arrays, four values a line. */
static void table_lines(const struct plan *plan, struct buf *out)
{
    char value[48];
    for (int t = 0; t < plan->n_table; t++) {
        const struct plan_table *tb = &plan->table[t];
        buf_printf(out, "/* %s */\n__constant float %s[%d] = {", tb->comment,
                   tb->name, tb->n);
        for (int i = 0; i < tb->n; i++) {
            format_float(value, sizeof value, plan->table_value[tb->at + i]);
            buf_printf(out, "%s%s%s", i % 4 ? " " : "\n    ", value,
                       i + 1 < tb->n ? "," : "\n");
        }
        buf_puts(out, "};\n");
    }
}

/* The #define prelude of PLAN: the values the kernels are built with. */
void cl_prelude(const struct plan *plan, struct buf *out)
{
    buf_puts(out, "\n/* Parameters: the values of this kernel's plan. */\n");
    define_lines(plan->define, plan->n_define, "", 0, out);
    table_lines(plan, out);
    buf_puts(out, "\n");
}

/* The kernels after the prelude: TEMPLATE_FILE, or when it is NULL the
 * template of each kernel of KS's op that the plan launches (their shared
 * parts, included by each, once); storage_@dtype@.cl is KS's dtype's. */
int cl_kernels(const struct kernel_spec *ks, const struct plan *plan,
               const char *template_file, struct buf *out,
               struct render_cuts *cuts, char *err, size_t errsize)
{
    struct buf top;
    int n = 0;
    buf_init(&top);
    if (template_file != NULL) {
        buf_printf(&top, "#include \"%s\"\n", template_file);
        n = template_text(template_file) != NULL;
    }
    for (const char *const *k = ks->op->kernels;
         template_file == NULL && *k != NULL; k++) {
        char name[SPECL_NAME_MAX + 8];
        snprintf(name, sizeof name, "%s.cl", *k);
        if (template_text(name) == NULL) {
            snprintf(err, errsize, "no template %s for kernel %s of %s",
                     name, *k, ks->op->name);
            buf_free(&top);
            return -1;
        }
        if (plan_launches(plan, *k)) {
            buf_printf(&top, "#include \"%s\"\n", name);
            n++;
        }
    }
    int rc = 0;
    if (n == 0) {
        snprintf(err, errsize, "no template for the kernels of %s (%s)",
                 ks->name, ks->op->name);
        rc = -1;
    } else {
        const struct hole holes[] = {{"dtype", dtype_name(ks->dtype)},
                                     {NULL, NULL}};
        rc = render_cut(out, buf_str(&top), holes, cuts, err, errsize);
    }
    buf_free(&top);
    return rc;
}

int cl_body(const struct kernel_spec *ks, const struct plan *plan,
            const char *template_file, struct buf *out, char *err,
            size_t errsize)
{
    cl_prelude(plan, out);
    return cl_kernels(ks, plan, template_file, out, NULL, err, errsize);
}

/* FNV-1a, 64 bits. */
static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211u;
    }
    return h;
}

/* "if_given NAME...\n" for if_given names (NULL-terminated); nothing
 * for none, so that the hashes of plans without them stay as they were
 * (tuning databases hold them). */
static void given_hash_text(const char *const *names, struct buf *b)
{
    for (int i = 0; i < 3 && names[i] != NULL; i++) {
        buf_printf(b, "%s %s", i ? "" : "if_given", names[i]);
    }
    if (names[0] != NULL) {
        buf_puts(b, "\n");
    }
}

/* P's buffers and sync words as the code hash takes them. */
static void buffers_hash_text(const struct plan *p, struct buf *b)
{
    for (int i = 0; i < p->n_buffer; i++) {
        buf_printf(b, "buffer %s %ld %ld %d\n", p->buffer[i].name,
                   p->buffer[i].per, p->buffer[i].fixed,
                   p->buffer[i].optional);
        /* Only when not a row buffer of the storage dtype, as above. */
        if (p->buffer[i].sizes != (p->buffer[i].per ? SIZE_FIRST : 0u) ||
            p->buffer[i].elem != ELEM_STORAGE) {
            buf_printf(b, "sizes %u elem %d\n", p->buffer[i].sizes,
                       (int)p->buffer[i].elem);
        }
        /* Only when set: the hashes of plans without it stay as they
         * were (tuning databases hold them). */
        if (p->buffer[i].may_alias != NULL) {
            buf_printf(b, "may_alias %s\n", p->buffer[i].may_alias);
        }
        if (p->buffer[i].nullable) {
            buf_puts(b, "nullable\n");
        }
    }
    if (p->sync_words != 0) {
        buf_printf(b, "sync %ld\n", p->sync_words);
    }
}

/* Path PA of a plan as the code hash takes it; its rows (max_rows) when
 * WITH_ROWS. */
static void path_hash_text(const struct path *pa, int with_rows,
                           struct buf *b)
{
    if (with_rows) {
        buf_printf(b, "path %ld ", pa->max_rows);
    } else {
        buf_puts(b, "path ");
    }
    buf_printf(b, "%s\nscratch %ld %u %ld\n", pa->why, pa->scratch_per,
               pa->scratch_sizes, pa->scratch_fixed);
    given_hash_text(pa->scratch_if_given, b);
    /* Each only when set: the hashes of plans without them stay as they
     * were (tuning databases hold them). */
    if (pa->coop_total != 0) {
        buf_printf(b, "coop_total %ld\n", pa->coop_total);
    }
    if (pa->coop_groups != 0) {
        buf_printf(b, "coop %ld\n", pa->coop_groups);
    }
    if (pa->coop_most != 0) {
        buf_printf(b, "coop_most %ld\n", pa->coop_most);
    }
    if (pa->sync_per != 0) {
        buf_printf(b, "sync_per %ld %u\n", pa->sync_per, pa->sync_sizes);
    }
    if (pa->units_groups != 0) {
        buf_printf(b, "units %ld %u %ld %ld %d\n", pa->units_groups,
                   pa->units_sizes, pa->units_fill, pa->units_least,
                   pa->units_least_size);
    }
    for (int l = 0; l < pa->n_launch; l++) {
        const struct launch *la = &pa->launch[l];
        buf_printf(b, "launch %s %d %zu %zu", la->kernel, la->dims,
                   la->local[0], la->local[1]);
        for (int d = 0; d < 2; d++) {
            buf_printf(b, " %zu*%u/%zu", la->groups[d], la->grid[d],
                       la->per_group[d]);
        }
        buf_printf(b, " %d", la->slices);
        for (int a = 0; la->args[a] != NULL; a++) {
            buf_printf(b, " %s", la->args[a]);
        }
        buf_puts(b, "\n");
        given_hash_text(la->if_given, b);
    }
}

/* The hash of kernel_code_hash for KS's PLAN over TEMPLATE_FILE (NULL:
 * the op's kernels). */
static int plan_code_hash(const struct kernel_spec *ks, const struct plan *p,
                          const char *template_file, uint64_t *hash,
                          char *err, size_t errsize)
{
    struct buf b;
    buf_init(&b);
    if (cl_body(ks, p, template_file, &b, err, errsize) < 0) {
        buf_free(&b);
        return -1;
    }
    /* What the header and the stub take from the plan, as text. */
    for (int i = 0; i < p->n_constant; i++) {
        char value[48];
        define_text(&p->constant[i], value, sizeof value);
        buf_printf(&b, "constant %s %s\n", p->constant[i].name, value);
    }
    buffers_hash_text(p, &b);
    for (int i = 0; i < p->n_path; i++) {
        path_hash_text(&p->path[i], 1, &b);
    }
    *hash = fnv1a(14695981039346656037u, buf_str(&b), b.len);
    buf_free(&b);
    return 0;
}

int kernel_code_hash(const struct kernel_spec *ks, uint64_t *hash,
                     char *err, size_t errsize)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    ks->op->plan(ks, &p);
    return plan_code_hash(ks, &p, NULL, hash, err, errsize);
}

int naive_code_hash(const struct kernel_spec *ks, uint64_t *hash, char *err,
                    size_t errsize)
{
    struct plan p;
    naive_plan(ks, &p);
    return plan_code_hash(ks, &p, NAIVE_TEMPLATE, hash, err, errsize);
}

/* Which of P's defines and tables the code of TEXT names (its comments
 * and strings aside): USED[i] for define i, USED[n_define + t] for table
 * t (a table of the names' hashes, probed for each identifier). */
#define NAME_SLOTS 256 /* a power of two, past twice the defines and tables */
_Static_assert(NAME_SLOTS >= 2 * (SPECL_MAX_DEFINES + SPECL_MAX_TABLES),
               "names_used: a table too small");
static void names_used(const struct plan *p, const char *text,
                       unsigned char *used)
{
    uint64_t key[NAME_SLOTS];
    int which[NAME_SLOTS];
    int n = p->n_define + p->n_table;
    for (int t = 0; t < NAME_SLOTS; t++) {
        which[t] = -1;
    }
    for (int i = 0; i < n; i++) {
        const char *name = i < p->n_define ? p->define[i].name
                                           : p->table[i - p->n_define].name;
        uint64_t h = fnv1a(14695981039346656037u, name, strlen(name));
        int t = (int)(h & (NAME_SLOTS - 1));
        while (which[t] >= 0) {
            t = (t + 1) & (NAME_SLOTS - 1);
        }
        key[t] = h;
        which[t] = i;
        used[i] = 0;
    }
    for (const char *c = text; *c != '\0';) {
        /* Comments and strings (#error's) name what no code uses. */
        if (c[0] == '/' && c[1] == '*') {
            const char *end = strstr(c + 2, "*/");
            c = end != NULL ? end + 2 : c + strlen(c);
            continue;
        }
        if (c[0] == '/' && c[1] == '/') {
            c += strcspn(c, "\n");
            continue;
        }
        if (c[0] == '"') {
            for (c++; *c != '\0' && *c != '"' && *c != '\n'; c++) {
                c += c[0] == '\\' && c[1] != '\0';
            }
            c += *c == '"';
            continue;
        }
        if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') ||
              (*c >= 'a' && *c <= 'z'))) {
            c++;
            continue;
        }
        const char *start = c; /* an identifier, whole */
        while (*c == '_' || (*c >= 'A' && *c <= 'Z') ||
               (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')) {
            c++;
        }
        uint64_t h = fnv1a(14695981039346656037u, start, (size_t)(c - start));
        for (int t = (int)(h & (NAME_SLOTS - 1)); which[t] >= 0;
             t = (t + 1) & (NAME_SLOTS - 1)) {
            if (key[t] == h) {
                used[which[t]] = 1;
                break;
            }
        }
    }
}

/* A 64-bit digest of the N bytes at S, eight at a time (FNV-1a takes
 * one: a tuner's filter hashes tens of thousands of kernel texts of
 * some 100 KB each). */
static uint64_t text_digest(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    for (; i < n; i++) {
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    }
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 32);
}

/* names_used of the last kernel texts a thread saw, by their digest and
 * the prelude's names: a tuner's configs mostly share their kernels'
 * text and differ in the values alone. */
#define USED_CACHE 16
struct used_entry {
    uint64_t text, names;
    int n; /* defines and tables; 0: empty */
    unsigned char used[SPECL_MAX_DEFINES + SPECL_MAX_TABLES];
};
static _Thread_local struct used_entry used_cache[USED_CACHE];
static _Thread_local int used_next;

/* names_used through the cache; *DIGEST gets TEXT's. */
static void names_used_cached(const struct plan *p, const char *text,
                              size_t len, unsigned char *used,
                              uint64_t *digest)
{
    int n = p->n_define + p->n_table;
    uint64_t names = 14695981039346656037u;
    for (int i = 0; i < n; i++) {
        const char *name = i < p->n_define ? p->define[i].name
                                           : p->table[i - p->n_define].name;
        names = fnv1a(names, name, strlen(name) + 1);
    }
    *digest = text_digest(text, len);
    for (int e = 0; e < USED_CACHE; e++) {
        const struct used_entry *c = &used_cache[e];
        if (c->n == n && n > 0 && c->text == *digest && c->names == names) {
            memcpy(used, c->used, (size_t)n);
            return;
        }
    }
    names_used(p, text, used);
    struct used_entry *c = &used_cache[used_next];
    used_next = (used_next + 1) % USED_CACHE;
    c->text = *digest;
    c->names = names;
    c->n = n;
    memcpy(c->used, used, (size_t)n);
}

int kernel_code_hash_at(const struct kernel_spec *ks, long rows,
                        uint64_t *hash, char *err, size_t errsize)
{
    if (rows <= 0) {
        return kernel_code_hash(ks, hash, err, errsize);
    }
    struct plan *p = calloc(1, sizeof *p);
    if (p == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    ks->op->plan(ks, p);
    plan_keep_rows(p, rows);
    struct buf kernels, b;
    buf_init(&kernels);
    buf_init(&b);
    int rc = cl_kernels(ks, p, NULL, &kernels, NULL, err, errsize);
    if (rc == 0) {
        /* The prelude's values those kernels name. */
        unsigned char used[SPECL_MAX_DEFINES + SPECL_MAX_TABLES];
        char value[48];
        uint64_t digest;
        names_used_cached(p, buf_str(&kernels), kernels.len, used, &digest);
        for (int i = 0; i < p->n_define; i++) {
            if (used[i]) {
                define_text(&p->define[i], value, sizeof value);
                buf_printf(&b, "#define %s %s\n", p->define[i].name, value);
            }
        }
        for (int t = 0; t < p->n_table; t++) {
            const struct plan_table *tb = &p->table[t];
            if (used[p->n_define + t]) {
                buf_printf(&b, "table %s", tb->name);
                for (int i = 0; i < tb->n; i++) {
                    format_float(value, sizeof value,
                                 p->table_value[tb->at + i]);
                    buf_printf(&b, " %s", value);
                }
                buf_puts(&b, "\n");
            }
        }
        /* the kernels by their digest: their text is most of it */
        buf_printf(&b, "kernels %016llx\n", (unsigned long long)digest);
        buffers_hash_text(p, &b);
        /* Not the paths' rows: these rows take them either way. */
        for (int i = 0; i < p->n_path; i++) {
            path_hash_text(&p->path[i], 0, &b);
        }
        *hash = fnv1a(14695981039346656037u, buf_str(&b), b.len);
    }
    buf_free(&kernels);
    buf_free(&b);
    free(p);
    return rc;
}
