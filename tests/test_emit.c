/* test_emit.c - emitted text: golden files (tests/golden, refreshed on
 * purpose by `make golden-update`: what was decided for every kernel, and
 * the full emission of a few), header comments and symbol prefixes, the
 * .cl embedded in the .c, decisions that agree with the emitted files,
 * determinism of `specl gen` over every spec in specs/, a run's output all
 * or nothing (no temporary files, nothing written for a bad spec, the
 * previous files kept when a write fails, concurrent runs never mixed),
 * spec paths that would break a comment, the same files wherever specl
 * runs and the spec lives, and kernel names that would clash with a
 * stub's own. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cl_prune.h"
#include "cl_resolve.h"
#include "clsource.h"
#include "emit.h"
#include "emit_text.h"
#include "emit_variants.h"
#include "files.h"
#include "knobs.h"
#include "render.h"
#include "runtime.h"
#include "spec.h"
#include "suites.h"
#include "testutil.h"

#define GOLDEN_DIR "tests/golden"
#define GOLDEN_SPEC GOLDEN_DIR "/golden.yaml"

static const char *const exts[3] = {"cl", "h", "c"};

static const struct buf *emitted_file(const struct emitted *e, int i)
{
    return i == 0 ? &e->cl : i == 1 ? &e->h : &e->c;
}

/* Reads SPEC in process; returns its error count (messages on stderr). */
static int read_spec(struct spec_set *s, const char *path)
{
    struct diags d = {.out = stderr};
    spec_set_init(s);
    return spec_read_file(s, path, &d);
}

/* ---- golden files ------------------------------------------------------ */

/* tests/golden holds, for every kernel of golden.yaml, what the generator
 * decided (NAME.plan, from emit_decisions), the same for every kernel of
 * each model spec specs/MODEL.yaml (MODEL/NAME.plan), and the three
 * emitted files of the kernels of GOLDEN_FULL only: the syntax and stub
 * suites compile and run every other emission. tests.mk sets both lists
 * (golden-update writes from them). */
#ifndef SPECL_GOLDEN_FULL
#define SPECL_GOLDEN_FULL "golden_rmsnorm"
#endif
#ifndef SPECL_GOLDEN_MODELS
#define SPECL_GOLDEN_MODELS "llama2-7b"
#endif

/* Whether NAME is a word of the space-separated LIST. */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t w = strcspn(p, " ");
        if (w == n && strncmp(p, name, n) == 0) {
            return 1;
        }
        p += w;
        p += strspn(p, " ");
    }
    return 0;
}

/* The number of words of the space-separated LIST. */
static int count_words(const char *list)
{
    int n = 0;
    for (const char *p = list + strspn(list, " "); *p;
         p += strspn(p, " ")) {
        p += strcspn(p, " ");
        n++;
    }
    return n;
}

/* Compares GOT (LEN bytes) with the file at PATH; 1 if they differ. */
static int golden_differs(const char *path, const char *got, size_t len)
{
    size_t want_len = 0;
    char *want = tu_read(path, &want_len);
    int same = want != NULL && want_len == len && memcmp(want, got, len) == 0;
    TU_CHECK(same, "%s differs from what specl emits now%s", path,
             want == NULL ? " (missing)" : "");
    if (!same && want != NULL) {
        tu_report_diff(path, want, got);
    }
    free(want);
    return !same;
}

/* Checks the .plan of every kernel of SPEC against DIR/NAME.plan; returns
 * the number of kernels (-1 if SPEC does not read), *STALE set on a
 * difference. */
static int golden_plans(const char *spec, const char *dir, int *stale)
{
    struct spec_set s;
    if (read_spec(&s, spec) != 0) {
        TU_CHECK(0, "%s does not read", spec);
        spec_set_free(&s);
        return -1;
    }
    for (int k = 0; k < s.n_kernel; k++) {
        struct buf plan;
        char err[256] = "", path[512];
        buf_init(&plan);
        int rc = emit_decisions(tu_gen_variants(&s.kernel[k]), &plan, err,
                                sizeof err);
        TU_CHECK(rc == 0, "%s: %s", s.kernel[k].name, err);
        snprintf(path, sizeof path, "%s/%s.plan", dir, s.kernel[k].name);
        if (rc == 0) {
            *stale |= golden_differs(path, buf_str(&plan), plan.len);
        }
        buf_free(&plan);
    }
    int n = s.n_kernel;
    spec_set_free(&s);
    return n;
}

/* The number of entries of DIR (-1 if it cannot be read). */
static int count_entries(const char *dir)
{
    char **names;
    int n = tu_list(dir, NULL, &names);
    if (n >= 0) {
        tu_free_list(names, n);
    }
    return n;
}

static void test_golden(void)
{
    struct spec_set s;
    int stale = 0, n_full = 0, n_models = 0;
    int n_plans = golden_plans(GOLDEN_SPEC, GOLDEN_DIR, &stale);
    CU_ASSERT(n_plans >= 5);
    CU_ASSERT_EQUAL_FATAL(read_spec(&s, GOLDEN_SPEC), 0);
    for (int k = 0; k < s.n_kernel; k++) {
        if (!in_list(SPECL_GOLDEN_FULL, s.kernel[k].name)) {
            continue;
        }
        struct emitted e;
        char err[256] = "";
        int rc = emit_kernel(tu_gen_variants(&s.kernel[k]), &e, err,
                             sizeof err);
        TU_CHECK(rc == 0, "%s: %s", s.kernel[k].name, err);
        if (rc != 0) {
            continue;
        }
        n_full++;
        for (int i = 0; i < 3; i++) {
            char path[256];
            snprintf(path, sizeof path, GOLDEN_DIR "/%s.%s", e.name, exts[i]);
            const struct buf *got = emitted_file(&e, i);
            stale |= golden_differs(path, buf_str(got), got->len);
        }
        emitted_free(&e);
    }
    spec_set_free(&s);
    TU_CHECK(n_full == count_words(SPECL_GOLDEN_FULL),
             "GOLDEN_FULL (%s): %d of its names are kernels of " GOLDEN_SPEC,
             SPECL_GOLDEN_FULL, n_full);
    /* Each model: specs/MODEL.yaml, its plans in tests/golden/MODEL/ and
     * nothing else there. */
    for (const char *m = SPECL_GOLDEN_MODELS; *m; m += strspn(m, " ")) {
        char model[64], spec[128], dir[128];
        size_t w = strcspn(m, " ");
        snprintf(model, sizeof model, "%.*s", (int)w, m);
        m += w;
        snprintf(spec, sizeof spec, "specs/%s.yaml", model);
        snprintf(dir, sizeof dir, GOLDEN_DIR "/%s", model);
        int n = golden_plans(spec, dir, &stale);
        CU_ASSERT(n > 0);
        int files = count_entries(dir);
        TU_CHECK(files == n, "%s holds %d files, expected %d (one .plan per "
                 "kernel of %s)", dir, files, n, spec);
        n_models++;
    }
    if (stale) {
        fputs("\n    golden files are stale: if the change is intended, run "
              "`make golden-update` and review the diff\n",
              stderr);
    }
    /* Nothing else in tests/golden: golden.yaml, a .plan per kernel, the
     * full emissions and a directory per model. */
    int want = 1 + n_plans + 3 * n_full + n_models;
    int files = count_entries(GOLDEN_DIR);
    TU_CHECK(files == want, GOLDEN_DIR " holds %d files, expected %d "
             "(golden.yaml, %d .plan, %d full emissions of 3 files, %d "
             "model directories)", files, want, n_plans, n_full, n_models);
}

/* Every file of GOT_DIR (at least MIN of them) equals the one of the same
 * name in WANT_DIR. */
static void same_files(const char *got_dir, const char *want_dir, int min)
{
    char **names;
    int n = tu_list(got_dir, NULL, &names);
    TU_CHECK(n >= min, "%s: %d files, expected %d", got_dir, n, min);
    for (int i = 0; i < n; i++) {
        char *got_path = tu_path(got_dir, names[i]);
        char *want_path = tu_path(want_dir, names[i]);
        size_t got_len = 0, want_len = 0;
        char *got = tu_read(got_path, &got_len);
        char *want = tu_read(want_path, &want_len);
        TU_CHECK(got != NULL && want != NULL && got_len == want_len &&
                     memcmp(got, want, got_len) == 0,
                 "%s differs from %s", got_path, want_path);
        free(got);
        free(want);
        free(got_path);
        free(want_path);
    }
    if (n >= 0) {
        tu_free_list(names, n);
    }
}

/* The command line writes the same bytes as emit_decisions and
 * emit_kernel: specl plan -o DIR, specl plan to stdout (the plans one
 * after the other, a blank line between), and specl gen for the full
 * emissions kept. */
static void test_golden_cli(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    int rc = tu_run("%s plan " GOLDEN_SPEC " -o '%s/plan' >/dev/null",
                    TU_SPECL, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    char *dir = tu_path(tmp, "plan");
    same_files(dir, GOLDEN_DIR, 5);
    free(dir);
    for (const char *m = SPECL_GOLDEN_MODELS; *m; m += strspn(m, " ")) {
        char model[64], want[128];
        size_t w = strcspn(m, " ");
        snprintf(model, sizeof model, "%.*s", (int)w, m);
        m += w;
        rc = tu_run("%s plan specs/%s.yaml -o '%s/%s' >/dev/null", TU_SPECL,
                    model, tmp, model);
        CU_ASSERT_EQUAL(rc, 0);
        dir = tu_path(tmp, model);
        snprintf(want, sizeof want, GOLDEN_DIR "/%s", model);
        same_files(dir, want, 1);
        free(dir);
    }

    /* stdout: the .plan files in spec order. */
    struct spec_set s;
    struct buf all;
    buf_init(&all);
    CU_ASSERT_EQUAL_FATAL(read_spec(&s, GOLDEN_SPEC), 0);
    for (int k = 0; k < s.n_kernel; k++) {
        char path[256];
        snprintf(path, sizeof path, GOLDEN_DIR "/%s.plan", s.kernel[k].name);
        char *text = tu_read(path, NULL);
        buf_puts(&all, k ? "\n" : "");
        buf_puts(&all, text != NULL ? text : "");
        free(text);
    }
    rc = tu_run("%s plan " GOLDEN_SPEC " > '%s/stdout.txt'", TU_SPECL, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    char *path = tu_path(tmp, "stdout.txt");
    char *out = tu_read(path, NULL);
    TU_CHECK(out != NULL && strcmp(out, buf_str(&all)) == 0,
             "specl plan " GOLDEN_SPEC ": stdout is not the .plan files of "
             GOLDEN_DIR " one after the other");
    if (out != NULL) {
        tu_report_diff("specl plan stdout", buf_str(&all), out);
    }
    free(out);
    free(path);
    buf_free(&all);

    /* specl gen: the full emissions kept. */
    rc = tu_run("%s gen " GOLDEN_SPEC " -o '%s/gen' >/dev/null", TU_SPECL,
                tmp);
    CU_ASSERT_EQUAL(rc, 0);
    for (int k = 0; k < s.n_kernel; k++) {
        if (!in_list(SPECL_GOLDEN_FULL, s.kernel[k].name)) {
            continue;
        }
        for (int i = 0; i < 3; i++) {
            rc = tu_run("cmp -s '%s/gen/%s.%s' " GOLDEN_DIR "/%s.%s", tmp,
                        s.kernel[k].name, exts[i], s.kernel[k].name,
                        exts[i]);
            TU_CHECK(rc == 0, "specl gen: %s.%s differs from " GOLDEN_DIR,
                     s.kernel[k].name, exts[i]);
        }
    }
    spec_set_free(&s);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* ---- what every emitted file carries ------------------------------------ */

/* Checks that the non-static functions defined in C (lines starting at
 * column 0 with a return type and holding "(") are NAME_-prefixed. */
static void check_prefixes(const char *name, const char *c)
{
    size_t nl = strlen(name);
    for (const char *line = c; *line; line = strchr(line, '\n') + 1) {
        size_t len = strcspn(line, "\n");
        static const char *const types[] = {"cl_int ", "void ",
                                            "const char *", NULL};
        for (int t = 0; types[t] != NULL; t++) {
            size_t tl = strlen(types[t]);
            if (len > tl && strncmp(line, types[t], tl) == 0 &&
                memchr(line, '(', len) != NULL) {
                TU_CHECK(strncmp(line + tl, name, nl) == 0 &&
                             line[tl + nl] == '_',
                         "%s.c: public function without the kernel's prefix: "
                         "%.*s",
                         name, (int)len, line);
            }
        }
        if (line[len] == '\0') {
            break;
        }
    }
}

/* Whether every line after the one at P (a newline) to the end of the
 * text is an #undef. */
static int only_undefs_after(const char *p)
{
    for (p = strchr(p + 1, '\n'); p != NULL && p[1] != '\0';
         p = strchr(p + 1, '\n')) {
        if (strncmp(p + 1, "#undef ", 7) != 0) {
            return 0;
        }
    }
    return 1;
}

/* Every macro NAME.c defines (a #define at the start of a line: the
 * embedded source's are inside strings) begins with NAME_ and is
 * #undef'd at the end of the file, where nothing but #undefs follows, so
 * that another kernel's NAME.c may follow in the same translation unit. */
static void check_macros_undefined(const char *name, const char *c)
{
    size_t nl = strlen(name);
    int n = 0;
    for (const char *p = strstr(c, "\n#define "); p != NULL;
         p = strstr(p + 1, "\n#define ")) {
        const char *macro = p + strlen("\n#define ");
        size_t len = strcspn(macro, " (\n");
        char undef[128];
        snprintf(undef, sizeof undef, "\n#undef %.*s\n", (int)len, macro);
        const char *at = strstr(macro, undef);
        TU_CHECK(strncmp(macro, name, nl) == 0 && macro[nl] == '_',
                 "%s.c: macro %.*s without the kernel's prefix", name,
                 (int)len, macro);
        TU_CHECK(at != NULL && only_undefs_after(at),
                 "%s.c: macro %.*s is not #undef'd at the end", name, (int)len,
                 macro);
        n++;
    }
    TU_CHECK(n > 0, "%s.c: no macro found", name);
}

/* NAME.h says, for each buffer of KS's plan, which array it holds (the
 * shape its op gives) and, for half-width storage, the bit patterns. */
static void check_buffer_doc(const struct kernel_spec *ks, const char *h)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    ks->op->plan(ks, &p);
    for (int i = 0; i < p.n_buffer; i++) {
        char want[128];
        TU_CHECK(p.buffer[i].shape != NULL, "%s: buffer %s has no shape",
                 ks->name, p.buffer[i].name);
        snprintf(want, sizeof want, "\n *   %-6s %s, ", p.buffer[i].name,
                 p.buffer[i].shape ? p.buffer[i].shape : "");
        TU_CHECK(strstr(h, want) != NULL, "%s.h: no line `%s`", ks->name,
                 want + 1);
    }
    TU_CHECK(strstr(h, "row-major") != NULL, "%s.h: no word of the layout",
             ks->name);
    if (ks->dtype != DTYPE_F32) {
        TU_CHECK(strstr(h, "bit patterns, 2 bytes each") != NULL &&
                     strstr(h, "uint16_t") != NULL,
                 "%s.h: the 16-bit storage is not explained", ks->name);
    }
}

/* Undoes the C string escapes of the emitted .c (\\ \" \t \n \? \ooo). */
static size_t unescape(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 == n) {
            out[o++] = s[i];
            continue;
        }
        char c = s[++i];
        if (c >= '0' && c <= '7') {
            int v = 0;
            for (int d = 0; d < 3 && i < n && s[i] >= '0' && s[i] <= '7';
                 d++) {
                v = v * 8 + (s[i++] - '0');
            }
            i--;
            out[o++] = (char)v;
        } else {
            out[o++] = c == 'n' ? '\n' : c == 't' ? '\t' : c;
        }
    }
    return o;
}

/* The lines of the string table TABLE embedded in an emitted .c, as one
 * string (caller frees); NULL if the table is not found. */
static char *embedded_table(const char *c, const char *table)
{
    const char *start = strstr(c, table);
    if (start == NULL) {
        return NULL;
    }
    start = strchr(start, '\n') + 1;
    const char *end = strstr(start, "\n};\n");
    if (end == NULL) {
        return NULL;
    }
    char *out = malloc((size_t)(end - start) + 1);
    size_t o = 0;
    for (const char *line = start; out != NULL && line < end;) {
        const char *eol = strchr(line, '\n');
        if (eol == NULL || eol > end) {
            eol = end;
        }
        /* A line of the text: `"..."`, with a comma after a string's
         * last. */
        const char *q2 = eol - (eol > line && eol[-1] == ',') - 1;
        if (line[0] == '"' && q2 > line && q2[0] == '"') {
            o += unescape(line + 1, (size_t)(q2 - line - 1), out + o);
        }
        line = eol + 1;
    }
    if (out != NULL) {
        out[o] = '\0';
    }
    return out;
}

/* Variant V's source as NAME.c (C) holds it: its list NAME_sourceV of
 * texts, each text's lines, concatenated (caller frees); NULL if a table
 * is missing. Counts the texts it lists into *N_TEXTS. */
static char *embedded_source(const char *c, const char *name, int v,
                             int *n_texts)
{
    char table[SPECL_NAME_MAX + 32];
    snprintf(table, sizeof table, "%s_source%d[] = {", name, v);
    const char *ref = strstr(c, table);
    const char *end = ref != NULL ? strstr(ref, "NULL};\n") : NULL;
    struct buf out;
    buf_init(&out);
    *n_texts = 0;
    if (end == NULL) {
        return NULL;
    }
    size_t n = strlen(name);
    for (ref += strlen(table); ref < end; ref++) {
        int text;
        if (strncmp(ref, name, n) != 0 ||
            sscanf(ref + n, "_text%d,", &text) != 1) {
            continue;
        }
        snprintf(table, sizeof table, "%s_text%d[] = {\n", name, text);
        char *piece = embedded_table(c, table);
        if (piece == NULL) {
            buf_free(&out);
            return NULL;
        }
        buf_puts(&out, piece);
        free(piece);
        (*n_texts)++;
        ref += n;
    }
    char *text = strdup(buf_str(&out));
    buf_free(&out);
    return text;
}

/* CODE less comments and indentation (strip_comments, compact_blanks),
 * its lines joined wherever C allows (reflow_lines at any width), into
 * OUT: the same for any text of the same tokens and directives. */
static void stripped_code(const char *code, size_t n, struct buf *out)
{
    struct buf stripped, compact;
    buf_init(&stripped);
    buf_init(&compact);
    strip_comments(code, n, &stripped);
    compact_blanks(buf_str(&stripped), stripped.len, &compact);
    reflow_lines(buf_str(&compact), compact.len, (size_t)-1, out);
    buf_free(&stripped);
    buf_free(&compact);
}

/* Each variant's source as NAME.c embeds it, a list of texts, is the
 * source the generator renders for it (the parameters its kernels use,
 * then its kernels with the conditionals every variant's plan decides
 * alike resolved and the definitions no variant uses left out) less
 * comments and blanks, byte for byte once lines are joined wherever C
 * allows, and variant 0's is NAME.cl's after its comment, less those;
 * no two texts are the same, and
 * variants that share templates share texts (the .c holds fewer texts
 * than its lists name). */
static void check_variant_sources(const struct kernel_spec *ks,
                                  const struct emitted *e)
{
    const struct variant_set *vs = tu_gen_variants(ks);
    struct emit_variant *ev = plan_variants(vs);
    CU_ASSERT_FATAL(ev != NULL);
    const char *c = buf_str(&e->c);
    int listed = 0;
    const struct plan *plans[SPECL_MAX_VARIANTS];
    static struct render_cuts cuts[SPECL_MAX_VARIANTS];
    const struct render_cuts *plan_cuts[SPECL_MAX_VARIANTS];
    struct buf kernels[SPECL_MAX_VARIANTS];
    for (int v = 0; v < vs->n; v++) {
        char err[256] = "";
        plans[v] = &ev[v].plan;
        plan_cuts[v] = &cuts[v];
        buf_init(&kernels[v]);
        CU_ASSERT_EQUAL(cl_kernels(ev[v].ks, &ev[v].plan, NULL, &kernels[v],
                                   &cuts[v], err, sizeof err),
                        0);
    }
    struct buf resolved[SPECL_MAX_VARIANTS];
    for (int v = 0; v < vs->n; v++) {
        buf_init(&resolved[v]);
        cl_resolve(buf_str(&kernels[v]), kernels[v].len, plans, plan_cuts,
                   vs->n, &cuts[v], &resolved[v]);
        buf_free(&kernels[v]);
    }
    cl_prune(resolved, cuts, vs->n);
    for (int v = 0; v < vs->n; v++) {
        struct buf want;
        int n_texts = 0;
        buf_init(&want);
        struct buf rendered, cl_code;
        buf_init(&rendered);
        buf_init(&cl_code);
        cl_prelude_used(&ev[v].plan, buf_str(&resolved[v]), resolved[v].len,
                        &rendered);
        buf_puts(&rendered, buf_str(&resolved[v]));
        buf_free(&resolved[v]);
        stripped_code(buf_str(&rendered), rendered.len, &want);
        char *embedded = embedded_source(c, ks->name, v, &n_texts);
        char *got = NULL;
        if (embedded != NULL) {
            struct buf flat;
            buf_init(&flat);
            reflow_lines(embedded, strlen(embedded), (size_t)-1, &flat);
            got = strdup(buf_str(&flat));
            buf_free(&flat);
            free(embedded);
        }
        TU_CHECK(got != NULL && strcmp(got, buf_str(&want)) == 0,
                 "%s.c: the embedded source of variant %d is not the one "
                 "rendered for it, less comments", ks->name, v);
        TU_CHECK(got != NULL && strstr(got, "/*") == NULL,
                 "%s.c: the embedded source of variant %d has a comment",
                 ks->name, v);
        const char *cl = strstr(buf_str(&e->cl), "\n/* Parameters:");
        if (cl != NULL) {
            stripped_code(cl, strlen(cl), &cl_code);
        }
        TU_CHECK(v > 0 || (got != NULL && cl != NULL &&
                           strcmp(buf_str(&cl_code), got) == 0),
                 "%s.c: the embedded source of variant 0 is not %s.cl's "
                 "code", ks->name, ks->name);
        listed += n_texts;
        free(got);
        buf_free(&want);
        buf_free(&rendered);
        buf_free(&cl_code);
    }
    free(ev);
    int stored = 0;
    char *texts[STUB_MAX_TEXTS];
    for (; stored < STUB_MAX_TEXTS; stored++) {
        char table[SPECL_NAME_MAX + 32];
        snprintf(table, sizeof table, "%s_text%d[] = {\n", ks->name, stored);
        texts[stored] = embedded_table(c, table);
        if (texts[stored] == NULL) {
            break;
        }
        for (int i = 0; i < stored; i++) {
            TU_CHECK(strcmp(texts[i], texts[stored]) != 0,
                     "%s.c: texts %d and %d are the same", ks->name, i,
                     stored);
        }
    }
    TU_CHECK(stored > 0 && (vs->n == 1 || stored < listed),
             "%s.c: %d texts for %d variants naming %d", ks->name, stored,
             vs->n, listed);
    for (int i = 0; i < stored; i++) {
        free(texts[i]);
    }
}

/* Whether PLAN has a line "  NAME VALUE..." (any spacing between) after
 * its first. */
static int has_decision(const char *plan, const char *name, size_t name_len,
                        const char *value, size_t value_len)
{
    for (const char *p = strstr(plan, "\n  "); p != NULL;
         p = strstr(p + 1, "\n  ")) {
        const char *q = p + 3;
        if (strncmp(q, name, name_len) != 0 || q[name_len] != ' ') {
            continue;
        }
        q += name_len;
        q += strspn(q, " ");
        if (strncmp(q, value, value_len) == 0 &&
            (q[value_len] == ' ' || q[value_len] == '\n')) {
            return 1;
        }
    }
    return 0;
}

/* Checks the "#define PREFIXNAME VALUE" lines of TEXT from FROM (to the
 * first blank line when BLOCK) against PLAN's "  NAME VALUE"; returns how
 * many were found. */
static int check_defines(const char *what, const char *text, const char *from,
                         const char *prefix, int block, const char *plan)
{
    const char *p = strstr(text, from);
    size_t pl = strlen("#define ") + strlen(prefix);
    int n = 0;
    while (p != NULL && *p != '\0' && !(block && *p == '\n')) {
        size_t len = strcspn(p, "\n");
        if (strncmp(p, "#define ", 8) == 0 &&
            strncmp(p + 8, prefix, strlen(prefix)) == 0) {
            const char *name = p + pl;
            size_t name_len = strcspn(name, " \n");
            const char *value = name + name_len + strspn(name + name_len, " ");
            size_t value_len = strcspn(value, " \n");
            TU_CHECK(has_decision(plan, name, name_len, value, value_len),
                     "%s: %.*s is not in the decisions", what, (int)len, p);
            n++;
        }
        p += len + (p[len] != '\0');
    }
    return n;
}

/* A copy of the part of PLAN from the line ending in HEADING to the next
 * blank line ("" if there is none; caller frees). */
static char *plan_section(const char *plan, const char *heading)
{
    const char *p = strstr(plan, heading);
    const char *end = p != NULL ? strstr(p, "\n\n") : NULL;
    if (p == NULL) {
        return strdup("");
    }
    size_t n = end != NULL ? (size_t)(end - p) + 1 : strlen(p);
    char *out = malloc(n + 1);
    if (out != NULL) {
        memcpy(out, p, n);
        out[n] = '\0';
    }
    return out;
}

/* Each kernel of a stub's table (NAMES and THREADS after the brace, on
 * one line or more) is in the decisions with its work-group size. */
static void check_kernels(const char *name, const char *plan,
                          const char *names, const char *threads)
{
    for (int k = 0; *names == '"' || *names == ' ' || *names == '\n';
         k++) {
        names += strspn(names, " \n\"");
        threads += strspn(threads, " ,\n");
        size_t nl = strcspn(names, "\""), tl = strcspn(threads, ",}");
        TU_CHECK(has_decision(plan, names, nl, threads, tl),
                 "%s.c: kernel %d, %.*s with %.*s work-items, is not in the "
                 "decisions", name, k, (int)nl, names, (int)tl, threads);
        names += nl + 1;
        threads += tl;
        names += strspn(names, ",");
    }
}

/* The decisions agree with the files emitted: every #define of the .cl
 * prelude and of the header, every kernel with its work-group size, the
 * scratch and the number of paths. */
static void check_decisions(const struct kernel_spec *ks,
                            const struct emitted *e)
{
    struct buf b;
    char err[256] = "", prefix[SPECL_NAME_MAX + 1];
    buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(
        emit_decisions(tu_gen_variants(ks), &b, err, sizeof err), 0);
    const char *plan = buf_str(&b);
    char *prelude = plan_section(plan, ".cl, #define prelude:\n");
    char *constants = plan_section(plan, ".h, constants");
    CU_ASSERT_FATAL(prelude != NULL && constants != NULL);
    int n = check_defines(ks->name, buf_str(&e->cl), "/* Parameters:", "", 1,
                          prelude);
    TU_CHECK(n > 0, "%s.cl: no #define prelude found", ks->name);
    snprintf(prefix, sizeof prefix, "%s_", ks->name);
    n = check_defines(ks->name, buf_str(&e->h), "#define", prefix, 0,
                      constants);
    TU_CHECK(n > 0, "%s.h: no constants found", ks->name);
    free(prelude);
    free(constants);

    /* Every variant's kernels, each with its work-group size. */
    const char *c = buf_str(&e->c);
    int n_variants = 16;
    for (int v = 0; v < 16; v++) {
        /* Its row of NAME_variants names its tables, which variants of
         * the same kernels share. */
        char source[SPECL_NAME_MAX + 32];
        char names_table[SPECL_NAME_MAX + 40] = "";
        char threads_table[SPECL_NAME_MAX + 40] = "";
        snprintf(source, sizeof source, "%s_source%d,", ks->name, v);
        const char *row = strstr(c, source);
        if (row == NULL) {
            n_variants = v;
            break;
        }
        row += strlen(source);
        CU_ASSERT_FATAL(sscanf(row, " %[A-Za-z0-9_], %[A-Za-z0-9_],",
                               names_table, threads_table) == 2);
        strcat(names_table, "[] = {");
        strcat(threads_table, "[] = {");
        const char *names = strstr(c, names_table);
        const char *threads = strstr(c, threads_table);
        CU_ASSERT_FATAL(names != NULL && threads != NULL);
        names = strchr(names, '{') + 1;
        threads = strchr(threads, '{') + 1;
        check_kernels(ks->name, plan, names, threads);
    }
    TU_CHECK(n_variants > 0, "%s.c: no kernel table found", ks->name);
    int variants_plan = 0;
    for (const char *p = strstr(plan, "\n== variant "); p != NULL;
         p = strstr(p + 1, "\n== variant ")) {
        variants_plan++;
    }
    TU_CHECK(n_variants == (variants_plan ? variants_plan : 1),
             "%s: %d variants in the stub, %d in the decisions", ks->name,
             n_variants, variants_plan);
    /* Every path of every variant, in order, with its scratch. */
    char want[2 * SPECL_NAME_MAX + 64];
    int paths_c = 0, paths_plan = 0;
    const char *decided = strstr(plan, "\npath ");
    for (int v = 0; v < n_variants; v++) {
        snprintf(want, sizeof want, "%s_paths%d[] = {\n", ks->name, v);
        const char *row = strstr(c, want);
        CU_ASSERT_FATAL(row != NULL);
        row += strlen(want);
        /* A stub none of whose paths use scratch has no scratch columns. */
        int scratch_columns = strstr(c, "    size_t scratch_per;\n") != NULL;
        while (strncmp(row, "    {", 5) == 0) {
            long max_rows = 0, per_row = 0, fixed = 0;
            unsigned over = 0;
            int n_launch = 0, at = 0;
            char launches[SPECL_NAME_MAX + 32];
            int read = sscanf(row, " {%ld, %d, %[^,}]%n", &max_rows,
                              &n_launch, launches, &at);
            if (read == 3 && scratch_columns) {
                read += sscanf(row + at, ", %ld, %uu, %ld", &per_row, &over,
                               &fixed);
            }
            TU_CHECK(read == (scratch_columns ? 6 : 3) &&
                         (over != 0) == (per_row != 0),
                     "%s.c: path row %.*s", ks->name,
                     (int)strcspn(row, "\n"), row);
            /* Per row, or per product of the sizes OVER names (attention's
             * "batch x seq_q"). */
            char sizes[96];
            sizes_text(ks->op, over, " x ", sizes, sizeof sizes);
            /* The line may go on: " (when the call gives dgamma)". */
            if (fixed != 0 && per_row != 0) {
                snprintf(want, sizeof want,
                         "\n  scratch: %s x %ld + %ld floats", sizes, per_row,
                         fixed);
            } else if (fixed != 0) {
                snprintf(want, sizeof want, "\n  scratch: %ld floats", fixed);
            } else if (per_row != 0) {
                snprintf(want, sizeof want, "\n  scratch: %s x %ld floats",
                         sizes, per_row);
            } else {
                snprintf(want, sizeof want, "\n  scratch: ");
            }
            const char *line =
                decided != NULL ? strchr(decided + 1, '\n') : NULL;
            int none = per_row == 0 && fixed == 0;
            TU_CHECK(line != NULL &&
                         (strncmp(line, want, strlen(want)) == 0) != none,
                     "%s: variant %d path %d: %s `%.*s` in the decisions",
                     ks->name, v, paths_c, none ? "a" : "no",
                     (int)strcspn(want + 1, "\n"), want + 1);
            paths_c++;
            decided = decided != NULL ? strstr(decided + 1, "\npath ") : NULL;
            /* The row's end: it may go on over lines. */
            row = strchr(strchr(row, '}'), '\n') + 1;
        }
    }
    for (const char *p = strstr(plan, "\npath "); p != NULL;
         p = strstr(p + 1, "\npath ")) {
        paths_plan++;
    }
    TU_CHECK(paths_c == paths_plan && paths_c > 0,
             "%s: %d paths in the stub, %d in the decisions", ks->name,
             paths_c, paths_plan);
    buf_free(&b);
}


/* What the emitted files carry of the templates says what the code does:
 * no GPU model, no timing and no citation of this project's benchmark
 * log (those belong in bench/RESULTS.md), which a reader of a vendored
 * NAME.cl cannot check and which go stale. */
static int names_timing(const char *text, const char **at)
{
    static const char *const models[] = {"H100", "H200", "A100",
                                         "RESULTS.md", NULL};
    for (int i = 0; models[i] != NULL; i++) {
        if ((*at = strstr(text, models[i])) != NULL) {
            return 1;
        }
    }
    for (const char *p = text; (p = strstr(p, " us")) != NULL; p++) {
        int unit_ends = !isalnum((unsigned char)p[3]) && p[3] != '_';
        if (p > text && isdigit((unsigned char)p[-1]) && unit_ends) {
            *at = p;
            return 1;
        }
    }
    return 0;
}

static void test_templates_no_lab_notes(void)
{
    const char *at;
    CU_ASSERT(names_timing("took 3729 us with", &at));
    CU_ASSERT(names_timing("on the H100 (f32)", &at));
    CU_ASSERT(names_timing("slower (bench/RESULTS.md)", &at));
    CU_ASSERT(!names_timing("thus usable", &at));
    for (int i = 0; template_files[i].name != NULL; i++) {
        const char *text = template_files[i].text;
        if (names_timing(text, &at)) {
            int line = 1;
            for (const char *p = text; p < at; p++) {
                line += *p == '\n';
            }
            TU_CHECK(0, "templates/%s:%d: a device, a timing or the "
                     "benchmark log in the emitted text: %.40s",
                     template_files[i].name, line, at);
        }
    }
}

/* Whether TEXT (OpenCL C, comments stripped) passes a warp or work-group
 * collective (a shuffle, a barrier, or a function of the templates that
 * holds one) in the arguments of a macro (a name in capitals), which may
 * name an argument twice or under a condition (MAX2): a collective some
 * items skip waits for them forever. *AT: where. */
static int collective_in_macro(const char *text, const char **at)
{
    static const char *const collectives[] = {
        "lane_xor(", "lane_at(", "shfl", "bar.sync", "barrier(",
        "sub_group_", "warp_add(", "warp_max(", "row_total(",
        "row_peak(", "row_sums(", NULL};
    for (const char *p = text; *p != '\0'; p++) {
        if (!isupper((unsigned char)*p) ||
            (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))) {
            continue;
        }
        const char *q = p;
        while (isupper((unsigned char)*q) || isdigit((unsigned char)*q) ||
               *q == '_') {
            q++;
        }
        while (*q == ' ') {
            q++;
        }
        if (*q != '(') {
            p = q - 1;
            continue;
        }
        const char *open = q++;
        for (int depth = 1; *q != '\0' && depth > 0; q++) {
            depth += (*q == '(') - (*q == ')');
        }
        for (int c = 0; collectives[c] != NULL; c++) {
            const char *hit = strstr(open, collectives[c]);
            if (hit != NULL && hit < q) {
                *at = p;
                return 1;
            }
        }
    }
    return 0;
}

static void test_templates_macro_collectives(void)
{
    const char *at;
    CU_ASSERT(collective_in_macro("v = MAX2(v, lane_xor(v, o));", &at));
    CU_ASSERT(collective_in_macro("v = FOLD(v, lane_xor(v, o));", &at));
    CU_ASSERT(collective_in_macro("t = MAX2(t, row_peak(p, l, m));", &at));
    CU_ASSERT(!collective_in_macro("w = lane_xor(v, o);\nv = FOLD(v, w);",
                                   &at));
    CU_ASSERT(!collective_in_macro("SLOT_FOLD(row_peak, warp_max, MAX2)",
                                   &at));
    for (int i = 0; template_files[i].name != NULL; i++) {
        const char *text = template_files[i].text;
        struct buf code;
        buf_init(&code);
        strip_comments(text, strlen(text), &code);
        if (collective_in_macro(buf_str(&code), &at)) {
            TU_CHECK(0, "templates/%s: a shuffle or barrier in a macro's "
                     "arguments: %.60s", template_files[i].name, at);
        }
        buf_free(&code);
    }
}

/* Each of the N CASES (input, wanted output) through FN, named NAME. */
static void check_text_cases(const char *name,
                             void (*fn)(const char *, size_t, struct buf *),
                             const char *const cases[][2], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct buf out;
        buf_init(&out);
        fn(cases[i][0], strlen(cases[i][0]), &out);
        TU_CHECK(strcmp(buf_str(&out), cases[i][1]) == 0,
                 "%s(\"%s\") gave \"%s\"", name, cases[i][0],
                 buf_str(&out));
        buf_free(&out);
    }
}

/* The kernel texts NAME.c embeds are without comments, cut as the
 * compiler reads them: quoted text stays, a comment spanning lines joins
 * them, a blank line (or one a comment emptied) goes unless a directive
 * continues into it. */
static void test_strip_comments(void)
{
    static const char *const cases[][2] = {
        {"a /* x */ b\n", "a   b\n"},
        {"/* doc\n * more */\nint x;\n", "int x;\n"},
        {"int y; // note\nint z;\n", "int y;\nint z;\n"},
        {"#error \"no /* comment */ here\"\n",
         "#error \"no /* comment */ here\"\n"},
        {"c = '\"'; /* q */ d = \"\\\"/*\";\n", "c = '\"';   d = \"\\\"/*\";\n"},
        {"#define A 1 /* a\n b */ + 2\n", "#define A 1   + 2\n"},
        {"#define A b \\\n/* c */\nint x;\n", "#define A b \\\n\nint x;\n"},
        {"\n\nx  \n", "x\n"},
        {"#define B \\\n\nint w;\n", "#define B \\\n\nint w;\n"},
        {"x /* open", "x"},
    };
    check_text_cases("strip_comments", strip_comments, cases,
                     sizeof cases / sizeof cases[0]);
}

/* The kernel texts lose their indentation and the blanks that part no
 * tokens, not the blanks of quoted text, nor those between words or
 * punctuators that would join (into -- or a comment), nor a directive's
 * after its name and a #define's after the macro's, nor the blank that
 * parts the tokens a continued line joins; lines stay lines. */
static void test_compact_blanks(void)
{
    static const char *const cases[][2] = {
        {"    int  x =   1;\n\ty;\n", "int x=1;\ny;\n"},
        {"  s = \"a   b\";  c = '  ';\n", "s=\"a   b\";c='  ';\n"},
        {"#define A(x) \\\n    (x)  +  1\n", "#define A(x) \\\n (x)+1\n"},
        {"#define B (x) + 1\n#if B > 1\n", "#define B (x)+1\n#if B>1\n"},
        {"a - -b + +c & &d / *p;\n", "a- -b+ +c& &d/ *p;\n"},
        {"f (a [1], b) { return -1 ; }\n", "f(a[1],b){return-1;}\n"},
        {"int\\\n  y;\n", "int\\\n y;\n"},
        {"s = \"a\\\n  b\";\n  z;\n", "s=\"a\\\n  b\";\nz;\n"},
        {"\n\n  x", "\n\nx"},
        {"e = \"\\\"  \";  f;\n", "e=\"\\\"  \";f;\n"},
    };
    check_text_cases("compact_blanks", compact_blanks, cases,
                     sizeof cases / sizeof cases[0]);
}

static void reflow_any(const char *text, size_t n, struct buf *out)
{
    reflow_lines(text, n, (size_t)-1, out);
}

static void reflow_narrow(const char *text, size_t n, struct buf *out)
{
    reflow_lines(text, n, 20, out);
}

/* The embedded texts' lines join where C needs no break: code joins code
 * (a blank where tokens need one: two words, punctuators that would
 * join, a word beside a quote or a period), directives keep their lines,
 * a continued line joins the next as the compiler splices them (quoted
 * text exact); at a width, code breaks after a punctuator or at a blank
 * and a continuation that would not fit stays. */
static void test_reflow_lines(void)
{
    static const char *const any[][2] = {
        {"a;\nb;\n", "a;b;\n"},
        {"int x\nint y;\n", "int x int y;\n"},
        {"#pragma unroll\nfor(;;){\nx;\n}\n", "#pragma unroll\nfor(;;){x;}\n"},
        {"a;\n#if X\nb;\n#endif\nc;\n", "a;\n#if X\nb;\n#endif\nc;\n"},
        {"#define A(x) \\\n (x)+1\ny;\n", "#define A(x) (x)+1\ny;\n"},
        {"a-\n-b;\n", "a- -b;\n"},
        {"f(L\n\"s\");\n", "f(L \"s\");\n"},
        {"x=1.\n5;\n", "x=1. 5;\n"},
        {"s=\"a\\\n  b\";\nz;\n", "s=\"a  b\";z;\n"},
        {"s=\"\\\" \\\n b\";\n", "s=\"\\\"  b\";\n"},
        {"a;\nb;", "a;b;"},
    };
    check_text_cases("reflow_lines", reflow_any, any,
                     sizeof any / sizeof any[0]);
    static const char *const narrow[][2] = {
        {"int alpha=1;\nint beta=2;\nint gamma=3;\n",
         "int alpha=1;\nint beta=2;\nint gamma=3;\n"},
        {"a;\nb;\nc;\n", "a;b;c;\n"},
        {"x=alpha+beta gamma;\n", "x=alpha+beta\ngamma;\n"},
        {"#define LONGNAME \\\n (1+2+3+4)\n",
         "#define LONGNAME \\\n (1+2+3+4)\n"},
        {"#define A \\\n 1\n", "#define A 1\n"},
    };
    check_text_cases("reflow_lines at 20 columns", reflow_narrow, narrow,
                     sizeof narrow / sizeof narrow[0]);
}

/* The strings of an embedded text: its characters packed into lines of
 * C of up to SOURCE_LINE_MAX columns, a line of C ending where it must
 * (a line of the text may span several) but never inside a word or a
 * number, strings of up to SOURCE_CHUNK_MAX characters, no trigraph;
 * read back as C reads them (the literals of a string joined, escapes
 * undone), the text itself. */
static void test_source_lines(void)
{
    struct buf text, out;
    buf_init(&text);
    buf_init(&out);
    for (int i = 0; i < 400; i++) {
        if (i % 50 == 7) {
            /* a line of the text longer than a line of C */
            buf_printf(&text, "#error \"line %d:", i);
            for (int w = 0; w < 40; w++) {
                buf_puts(&text, " ab");
            }
            buf_puts(&text, "\"\n");
            continue;
        }
        buf_printf(&text, i % 50 == 9 ? "t%d = \"?\?=%d\";\n"
                                      : "x%d = \\y? 1 : 2;\n",
                   i, 0);
    }
    buf_puts(&text, "last");
    source_lines(&text, &out);
    struct buf back, string;
    buf_init(&back);
    buf_init(&string);
    int lines = 0, packed = 0;
    char last = ' '; /* the last character of the line before */
    TU_CHECK(strstr(buf_str(&out), "??") == NULL, "a trigraph: %s",
             strstr(buf_str(&out), "??"));
    for (const char *p = buf_str(&out); *p != '\0'; lines++) {
        const char *eol = strchr(p, '\n');
        TU_CHECK(eol != NULL && *p == '"', "line %d: %.60s", lines, p);
        if (eol == NULL || *p != '"') {
            break;
        }
        size_t cols = (size_t)(eol - p);
        int comma = eol[-1] == ',';
        int pieces = 0;
        size_t at = string.len;
        for (const char *q = p + 1; q < eol - 1 - comma; q++) {
            if (*q == '\\') {
                q++;
                pieces += *q == 'n';
                buf_add(&string, *q == 'n' ? "\n" : q, 1);
                continue;
            }
            buf_add(&string, q, 1);
        }
        TU_CHECK(cols <= SOURCE_LINE_MAX, "line %d: %zu columns", lines,
                 cols);
        TU_CHECK(at == string.len || !(isalnum((unsigned char)last) &&
                                       isalnum((unsigned char)string.data[at])),
                 "line %d begins inside a word: %.20s", lines, p);
        last = string.len > 0 ? string.data[string.len - 1] : ' ';
        packed += pieces > 1;
        if (comma) {
            TU_CHECK(string.len <= SOURCE_CHUNK_MAX, "a string of %zu",
                     string.len);
            last = ' ';
            buf_add(&back, buf_str(&string), string.len);
            buf_free(&string);
            buf_init(&string);
        }
        p = eol + 1;
    }
    TU_CHECK(strcmp(buf_str(&back), buf_str(&text)) == 0,
             "the strings read back are not the text");
    TU_CHECK(packed > 0 && lines < 400, "%d lines of C, %d packed", lines,
             packed);
    buf_free(&string);
    buf_free(&back);
    buf_free(&text);
    buf_free(&out);
}

/* The bound on llama2-7b's largest stub: NAME.c holds each kernel text
 * once and without comments, indentation or blank lines (NAME.cl has
 * them), and only the runtime its plans run (132 KB before those went,
 * 170 KB with the comments). 99.7 KB with three variants; the fourth,
 * float32 on tf32 tensor cores, adds its kernels' 18 KB of text (127.7
 * KB in all), and resolving the conditionals all four plans decide
 * alike took 7.8 KB back (119.9 KB), those the plans holding each
 * template decide alike 8.6 KB more (111.3 KB); each kernel's argument
 * list written once, not in every launch, 2.2 KB (109.1 KB); the
 * definitions no variant uses, and the #defines no kernel of a variant
 * names, left out 1.7 KB (107.4 KB); the capabilities table holding what
 * some variant needs, not all it is meant for, 0.8 KB (106.5 KB); its
 * lines laid out within 80 columns for its name, 1.4 KB more (107.9 KB);
 * the texts that always come together stored as one, their lines joined
 * where C needs no break and packed into full lines of C, launch and
 * kernel tables that variants share written once, and the header's list
 * of variants left to NAME.h, 7.4 KB less (100.5 KB); parameters and
 * arguments packed onto their lines, 0.5 KB (99.96 KB). */
#define LLAMA_Q_PROJ_C_MAX 100000L

/* specl gen of the specs users vendor from: NAME.c within its bound, and
 * no emitted file (NAME.cl, .h, .c) names a device or a timing. */
static void test_emitted_lean(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    int rc = tu_run("%s gen specs/llama2-7b.yaml specs/seeds.yaml -o '%s' "
                    ">/dev/null", TU_SPECL, tmp);
    TU_CHECK(rc == 0, "specl gen llama2-7b.yaml seeds.yaml: exit %d", rc);
    char **names;
    int n = tu_list(tmp, NULL, &names), sized = 0;
    for (int i = 0; i < n; i++) {
        char *path = tu_path(tmp, names[i]);
        size_t len = 0;
        char *text = tu_read(path, &len);
        const char *at = "";
        CU_ASSERT_PTR_NOT_NULL(text);
        TU_CHECK(text == NULL || !names_timing(text, &at),
                 "%s: a device or a timing: %.40s", names[i], at);
        TU_CHECK(strcmp(names[i], "llama_q_proj.c") != 0 ||
                     (long)len <= LLAMA_Q_PROJ_C_MAX,
                 "llama_q_proj.c: %zu bytes (at most %ld)", len,
                 LLAMA_Q_PROJ_C_MAX);
        sized += strcmp(names[i], "llama_q_proj.c") == 0;
        free(text);
        free(path);
    }
    TU_CHECK(n > 0 && sized == 1, "gen wrote %d files, llama_q_proj.c "
             "among them %d times", n, sized);
    if (n >= 0) {
        tu_free_list(names, n);
    }
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* A NAME.c carries a part of the stub's runtime exactly when a variant
 * of it needs that part: the one-launch path's sync buffer and compute
 * unit check for a softmax that plans it and for no lora_forward, the
 * launches for some outputs alone for a backward whose dgamma may be
 * NULL, scratch and slices where a path has them, every CPU's rows
 * ranges for a lora_forward with W (without the lookup by device name
 * that only tuned ranges need), the device's capabilities where a
 * variant needs some (a float32 lora_forward's on tf32 tensor cores). */
static void test_stub_sections(void)
{
    static const char spec[] =
        "kernels:\n"
        "  - {name: t_coop, op: softmax, features: 1000,\n"
        "     tile: {coop_max: 1, coop_split: 2, split: 4, split_max: 8}}\n"
        "  - {name: t_softmax, op: softmax, features: 64}\n"
        "  - {name: t_lora, op: lora_forward, in_features: 4096,\n"
        "     out_features: 4096, rank: 16}\n"
        "  - {name: t_lnb, op: layernorm_backward, features: 256}\n";
    static const struct {
        const char *kernel, *marker;
        int carried;
    } want[] = {
        {"t_coop", "_ARG_SYNC (-1)", 1},
        {"t_coop", "_zeroed(_ctx, _var->sync_words, &_err)", 1},
        {"t_coop", "CL_DEVICE_MAX_COMPUTE_UNITS", 1},
        {"t_coop", "_path->coop_total > _k->units", 1},
        {"t_lora", "_ARG_SYNC", 0},
        {"t_lora", "sync_words", 0},
        {"t_lora", "coop", 0},
        {"t_lora", "CL_DEVICE_MAX_COMPUTE_UNITS", 0},
        {"t_lora", "_ARG_SLICES (-4)", 1},
        {"t_lora", "scratch_per", 1},
        {"t_lora", "_runs_for(", 0},
        {"t_lora", "device_caps", 1},
        {"t_lora", "{NULL, 96, 3}, /* every CPU, rows 1 to 96 */", 1},
        {"t_lora", "_ranges_of(", 0},
        {"t_softmax", "scratch_per", 0},
        {"t_softmax", "_ARG_SCRATCH", 0},
        {"t_softmax", "_ARG_SLICES", 0},
        {"t_softmax", "No path of any variant uses scratch.", 1},
        {"t_softmax", "_ranges", 0},
        {"t_lnb", "_runs_for(", 1},
        {"t_lnb", "int nullable;", 1},
        {"t_lnb", "int unused;", 0},
    };
    struct spec_set s;
    struct diags d = {.out = stderr};
    spec_set_init(&s);
    CU_ASSERT_EQUAL_FATAL(spec_read_buffer(&s, "<test>",
                                           (const unsigned char *)spec,
                                           strlen(spec), &d),
                          0);
    for (int k = 0; k < s.n_kernel; k++) {
        struct emitted e;
        char err[256] = "";
        CU_ASSERT_EQUAL_FATAL(emit_kernel(tu_gen_variants(&s.kernel[k]), &e,
                                          err, sizeof err),
                              0);
        const char *c = buf_str(&e.c);
        for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
            if (strcmp(want[w].kernel, s.kernel[k].name) != 0) {
                continue;
            }
            TU_CHECK((strstr(c, want[w].marker) != NULL) == want[w].carried,
                     "%s.c %s `%s`", want[w].kernel,
                     want[w].carried ? "lacks" : "carries", want[w].marker);
        }
        emitted_free(&e);
    }
    spec_set_free(&s);
}

/* The mark in front of the wgmma instructions reads the same in the
 * kernel template, the stub's rebuild and specl's runtime, and only a
 * NAME.c with a wgmma variant carries the rebuild. */
static void test_sm90a_mark(void)
{
    const char *ptx = template_text("wgmma_ptx.cl");
    const char *stub = template_text("stub_sm90a.c.in");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ptx);
    CU_ASSERT_PTR_NOT_NULL_FATAL(stub);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(ptx, "#define WG_MARK \"" RT_SM90A_MARK "\"\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(stub, "\"" RT_SM90A_MARK "\";\n"));
    static const char spec[] =
        "kernels:\n"
        "  - {name: t_wg, op: lora_forward, dtype: bf16, in_features: 64,\n"
        "     out_features: 128, rank: 4}\n"
        "  - {name: t_f32, op: lora_forward, in_features: 64,\n"
        "     out_features: 128, rank: 4}\n";
    struct spec_set s;
    struct diags d = {.out = stderr};
    spec_set_init(&s);
    CU_ASSERT_EQUAL_FATAL(spec_read_buffer(&s, "<test>", (const unsigned char *)spec,
                                           strlen(spec),
                                           &d),
                          0);
    for (int k = 0; k < s.n_kernel; k++) {
        struct emitted e;
        char err[256] = "";
        CU_ASSERT_EQUAL_FATAL(emit_kernel(tu_gen_variants(&s.kernel[k]), &e,
                                          err, sizeof err),
                              0);
        const char *c = buf_str(emitted_file(&e, 2));
        int rebuild = strstr(c, "_rebuild_sm90a(_k, _ctx, _dev);") != NULL;
        int marked = strstr(c, "trap; //@sm_90a ") != NULL;
        TU_CHECK(rebuild == (k == 0) && marked == (k == 0),
                 "%s: rebuild %d, marks %d", s.kernel[k].name, rebuild,
                 marked);
        emitted_free(&e);
    }
    spec_set_free(&s);
}

static void test_emitted_shape(void)
{
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec(&s, GOLDEN_SPEC), 0);
    for (int k = 0; k < s.n_kernel; k++) {
        const struct kernel_spec *ks = &s.kernel[k];
        struct emitted e;
        char err[256] = "";
        CU_ASSERT_EQUAL_FATAL(
            emit_kernel(tu_gen_variants(ks), &e, err, sizeof err), 0);
        for (int i = 0; i < 3; i++) {
            char head[512];
            snprintf(head, sizeof head,
                     "/* %s.%s - generated by specl %s from golden.yaml; do "
                     "not edit.\n * " EMIT_LICENCE "\n",
                     ks->name, exts[i], SPECL_VERSION);
            const char *text = buf_str(emitted_file(&e, i));
            /* The header comment's lines joined where they wrap. */
            char joined[512];
            size_t n = 0;
            for (const char *p = text; *p != '\0' && n + 1 < sizeof joined;
                 p++) {
                if (strncmp(p, "\n * ", 4) == 0 && n > 0 &&
                    joined[n - 1] != '.' && p[4] != ' ' && p[4] != '\n') {
                    joined[n++] = ' ';
                    p += 3;
                } else {
                    joined[n++] = *p;
                }
            }
            joined[n] = '\0';
            TU_CHECK(strncmp(joined, head, strlen(head)) == 0,
                     "%s.%s opens with: %.*s", ks->name, exts[i],
                     (int)strcspn(text, "\n"), text);
            TU_CHECK(strstr(text, ks->op->name) != NULL,
                     "%s.%s: header does not name op %s", ks->name, exts[i],
                     ks->op->name);
            TU_CHECK(emitted_file(&e, i)->len == strlen(text),
                     "%s.%s holds a NUL byte", ks->name, exts[i]);
        }
        char want[256];
        snprintf(want, sizeof want, "#include \"%s.h\"\n", ks->name);
        TU_CHECK(strstr(buf_str(&e.c), want) != NULL, "%s.c lacks %s",
                 ks->name, want);
        snprintf(want, sizeof want, "#define %s_", ks->name);
        TU_CHECK(strstr(buf_str(&e.h), want) != NULL,
                 "%s.h defines no %s* constant", ks->name, want + 8);
        snprintf(want, sizeof want, "cl_int %s_enqueue(", ks->name);
        TU_CHECK(strstr(buf_str(&e.h), want) != NULL, "%s.h lacks %s",
                 ks->name, want);
        check_prefixes(ks->name, buf_str(&e.c));
        check_macros_undefined(ks->name, buf_str(&e.c));
        check_buffer_doc(ks, buf_str(&e.h));
        check_variant_sources(ks, &e);
        check_decisions(ks, &e);
        emitted_free(&e);
    }
    spec_set_free(&s);
}

/* ---- determinism and atomic writes ------------------------------------- */

/* Number of kernels in the specs of specs/, read in process. */
static int count_spec_kernels(void)
{
    char **names;
    int n = tu_list("specs", ".yaml", &names), total = 0;
    struct spec_set s;
    struct diags d = {.out = stderr};
    spec_set_init(&s);
    for (int i = 0; i < n; i++) {
        char *path = tu_path("specs", names[i]);
        spec_read_file(&s, path, &d);
        free(path);
    }
    total = d.count == 0 ? s.n_kernel : -1;
    spec_set_free(&s);
    if (n >= 0) {
        tu_free_list(names, n);
    }
    return total;
}

static void test_determinism(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    int kernels = count_spec_kernels();
    CU_ASSERT(kernels > 0);
    for (int run = 1; run <= 2; run++) {
        int rc = tu_run("%s gen specs/*.yaml -o '%s/run%d' >/dev/null",
                        TU_SPECL, tmp, run);
        TU_CHECK(rc == 0, "specl gen specs/*.yaml: run %d exit %d", run, rc);
    }
    char *d1 = tu_path(tmp, "run1"), *d2 = tu_path(tmp, "run2");
    char **n1, **n2;
    int c1 = tu_list(d1, NULL, &n1), c2 = tu_list(d2, NULL, &n2);
    TU_CHECK(c1 == 3 * kernels && c2 == c1,
             "gen wrote %d and %d files for %d kernels", c1, c2, kernels);
    for (int i = 0; i < c1 && i < c2; i++) {
        TU_CHECK(strcmp(n1[i], n2[i]) == 0, "file lists differ: %s, %s",
                 n1[i], n2[i]);
        TU_CHECK(strstr(n1[i], ".tmp") == NULL, "temporary file left: %s",
                 n1[i]);
        char *p1 = tu_path(d1, n1[i]), *p2 = tu_path(d2, n2[i]);
        size_t l1 = 0, l2 = 0;
        char *t1 = tu_read(p1, &l1), *t2 = tu_read(p2, &l2);
        TU_CHECK(t1 != NULL && t2 != NULL && l1 == l2 &&
                     memcmp(t1, t2, l1) == 0,
                 "two runs differ: %s", n1[i]);
        free(t1);
        free(t2);
        free(p1);
        free(p2);
    }
    if (c1 >= 0) {
        tu_free_list(n1, c1);
    }
    if (c2 >= 0) {
        tu_free_list(n2, c2);
    }
    /* Generating again over existing files gives the same bytes, too. */
    int rc = tu_run("%s gen specs/*.yaml -o '%s' >/dev/null && "
                    "cmp -s '%s/seed_softmax_1024.c' '%s/seed_softmax_1024.c'",
                    TU_SPECL, d1, d1, d2);
    CU_ASSERT_EQUAL(rc, 0);
    free(d1);
    free(d2);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

static void test_in_process_determinism(void)
{
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec(&s, GOLDEN_SPEC), 0);
    for (int k = 0; k < s.n_kernel; k++) {
        struct emitted a, b;
        char err[256];
        CU_ASSERT_EQUAL_FATAL(
            emit_kernel(tu_gen_variants(&s.kernel[k]), &a, err, sizeof err),
            0);
        CU_ASSERT_EQUAL_FATAL(
            emit_kernel(tu_gen_variants(&s.kernel[k]), &b, err, sizeof err),
            0);
        for (int i = 0; i < 3; i++) {
            TU_CHECK(strcmp(buf_str(emitted_file(&a, i)),
                            buf_str(emitted_file(&b, i))) == 0,
                     "%s.%s differs between two emits", s.kernel[k].name,
                     exts[i]);
        }
        emitted_free(&a);
        emitted_free(&b);
    }
    spec_set_free(&s);
}

static void test_nothing_half_written(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    /* A bad spec among good ones: exit 1, the directory never made. */
    int rc = tu_run("%s gen specs/seeds.yaml tests/bad/zero_size.yaml "
                    "-o '%s/out' >/dev/null 2>&1",
                    TU_SPECL, tmp);
    CU_ASSERT_EQUAL(rc, 1);
    char *out = tu_path(tmp, "out");
    char **names;
    int n = tu_list(out, NULL, &names);
    TU_CHECK(n <= 0, "%d files written for a bad spec", n);
    if (n >= 0) {
        tu_free_list(names, n);
    }
    /* An output path that cannot be made: exit 1, no temporary files. */
    rc = tu_run("touch '%s/file' && %s gen specs/seeds.yaml -o '%s/file/sub' "
                ">/dev/null 2>&1",
                tmp, TU_SPECL, tmp);
    CU_ASSERT_EQUAL(rc, 1);
    n = tu_list(tmp, NULL, &names);
    TU_CHECK(n == 1, "%d entries in the temp dir, expected 1", n);
    if (n >= 0) {
        tu_free_list(names, n);
    }
    /* write_file_atomic leaves only the final file. */
    char *path = tu_path(tmp, "atomic.txt");
    char err[256];
    CU_ASSERT_EQUAL(write_file_atomic(path, "one\n", 4, err, sizeof err), 0);
    CU_ASSERT_EQUAL(write_file_atomic(path, "two\n", 4, err, sizeof err), 0);
    char *text = tu_read(path, NULL);
    CU_ASSERT(text != NULL && strcmp(text, "two\n") == 0);
    free(text);
    char *bad = tu_path(tmp, "file/x.txt");
    CU_ASSERT_EQUAL(write_file_atomic(bad, "x", 1, err, sizeof err), -1);
    n = tu_list(tmp, NULL, &names);
    TU_CHECK(n == 2, "%d entries after atomic writes, expected 2", n);
    for (int i = 0; i < n; i++) {
        TU_CHECK(strstr(names[i], ".tmp") == NULL, "temporary file left: %s",
                 names[i]);
    }
    if (n >= 0) {
        tu_free_list(names, n);
    }
    free(bad);
    free(path);
    free(out);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* gen --target cpu: the knobs a spec leaves out are the CPU defaults and
 * the header says so, one variant and no rows range (not every CPU's of
 * a lora_forward with W); a spec's own knobs stay; a bad target is a
 * usage error that writes nothing. */
static void test_target_cpu(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    int rc = tu_run("%s gen specs/seeds.yaml --target cpu -o '%s' >/dev/null",
                    TU_SPECL, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    char *path = tu_path(tmp, "seed_rmsnorm_1024.cl");
    char *text = tu_read(path, NULL);
    TU_CHECK(text != NULL &&
                 strstr(text, " * knobs:  op defaults for CPUs\n") != NULL &&
                 strstr(text, "wg=1* rows=16* vec=16* mode=streaming*") !=
                     NULL,
             "%s: no CPU defaults in the header", path);
    free(text);
    free(path);
    path = tu_path(tmp, "seed_lora_512.c");
    text = tu_read(path, NULL);
    TU_CHECK(text != NULL && strstr(text, "_ranges") == NULL &&
                 strstr(text, " * variants:") == NULL,
             "%s: more than one variant, or rows ranges", path);
    free(text);
    free(path);
    rc = tu_run("%s gen tests/golden/golden.yaml --target cpu -o '%s/g' "
                ">/dev/null", TU_SPECL, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    rc = tu_run("%s gen specs/seeds.yaml --target tpu -o '%s/bad' "
                "2>/dev/null", TU_SPECL, tmp);
    CU_ASSERT_EQUAL(rc, 2);
    rc = tu_run("test ! -e '%s/bad'", tmp);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* Every CPU's rows range, only where it pays: lora_forward with W whose
 * shape takes the CPU defaults for few rows gets them as a variant, run
 * up to the range's rows on every CPU, the CPU defaults past them, and
 * lora_decode still below both; none without W, for a layer narrower
 * than their tile, or for a spec that gives a knob (nor from --target:
 * test_target_cpu). */
static void test_cpu_rows_range(void)
{
    static const char spec[] =
        "defaults: { dtype: f32 }\n"
        "kernels:\n"
        "  - {name: c_wide, op: lora_forward, in_features: 512,\n"
        "     out_features: 512, rank: 8}\n"
        "  - {name: c_delta, op: lora_forward, in_features: 512,\n"
        "     out_features: 512, rank: 8, base: false}\n"
        "  - {name: c_narrow, op: lora_forward, in_features: 8,\n"
        "     out_features: 32, rank: 2}\n"
        "  - {name: c_pinned, op: lora_forward, in_features: 512,\n"
        "     out_features: 512, rank: 8, tile: {decode_max: 8}}\n";
    const struct cpu_few_rows *few = op_find("lora_forward")->cpu_few_rows;
    CU_ASSERT_PTR_NOT_NULL_FATAL(few);
    struct spec_set s;
    struct diags d = {.out = stderr};
    spec_set_init(&s);
    CU_ASSERT_EQUAL_FATAL(spec_read_buffer(&s, "cpu.yaml",
                                           (const unsigned char *)spec,
                                           strlen(spec), &d),
                          0);
    for (int k = 0; k < s.n_kernel; k++) {
        const struct variant_set *vs = tu_gen_variants(&s.kernel[k]);
        int ranged = k == 0;
        TU_CHECK(vs->n_range == (ranged ? 2 : 0), "%s: %d rows ranges",
                 s.kernel[k].name, vs->n_range);
        struct emitted e;
        char err[256] = "";
        CU_ASSERT_EQUAL_FATAL(emit_kernel(vs, &e, err, sizeof err), 0);
        TU_CHECK((strstr(buf_str(&e.c), "_ranges[] = {") != NULL) == ranged,
                 "%s.c: rows ranges %s", s.kernel[k].name,
                 ranged ? "missing" : "where none pays");
        emitted_free(&e);
    }
    const struct variant_set *vs = tu_gen_variants(&s.kernel[0]);
    const struct variant_range *r = vs->range;
    CU_ASSERT_FATAL(vs->n_range == 2);
    const struct variant *cpu = &vs->v[r[1].variant];
    const struct variant *fewer = &vs->v[r[0].variant];
    TU_CHECK(r[0].device[0] == '\0' && r[1].device[0] == '\0' &&
                 r[0].max_rows == few->max_rows && r[1].max_rows == 0 &&
                 cpu->n_match == 1 && cpu->match[0].cpu &&
                 fewer->n_match == 0 && r[0].variant != r[1].variant,
             "c_wide: ranges {%s, %ld, %d}, {%s, %ld, %d}", r[0].device,
             r[0].max_rows, r[0].variant, r[1].device, r[1].max_rows,
             r[1].variant);
    /* The few rows' knobs as the data gives them, each marked chosen;
     * lora_decode keeps the rows below them as in the CPU defaults. */
    char knobs[TUNE_TEXT + 2], want[TUNE_TEXT];
    knobs[0] = ' ';
    knobs_text(&fewer->ks, knobs + 1, TUNE_TEXT);
    strcat(knobs, " ");
    snprintf(want, sizeof want, "%s", few->knobs);
    for (char *one = strtok(want, " "); one; one = strtok(NULL, " ")) {
        char word[80];
        snprintf(word, sizeof word, " %s ", one);
        TU_CHECK(strstr(knobs, word) != NULL, "c_wide: %s not in%s", one,
                 knobs);
    }
    for (int k = 0; k < fewer->ks.op->n_knobs; k++) {
        TU_CHECK(!fewer->ks.knob[k].set, "c_wide: knob %s marked given",
                 fewer->ks.op->knobs[k].key);
    }
    struct plan *pc = calloc(2, sizeof *pc), *pf = pc + 1;
    CU_ASSERT_PTR_NOT_NULL_FATAL(pc);
    cpu->ks.op->plan(&cpu->ks, pc);
    fewer->ks.op->plan(&fewer->ks, pf);
    TU_CHECK(pc->n_path > 1 && pf->n_path > 1 &&
                 strcmp(pc->path[0].launch[0].kernel, "lora_decode") == 0 &&
                 strcmp(pf->path[0].launch[0].kernel, "lora_decode") == 0 &&
                 pf->path[0].max_rows == pc->path[0].max_rows &&
                 pf->path[0].max_rows < few->max_rows,
             "c_wide: lora_decode to %ld rows in the CPU defaults, %ld in "
             "those for few rows", pc->path[0].max_rows,
             pf->path[0].max_rows);
    free(pc);
    spec_set_free(&s);
}

/* ---- a run's output, all or nothing ----------------------------------- */

#define RUN_KERNELS 24 /* per spec: enough files for runs to overlap */

/* Writes a spec of RUN_KERNELS small kernels, k0 .. k23, to PATH; VERSION
 * changes every kernel's fields (same names, other content). */
static int write_run_spec(const char *path, int version)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        return -1;
    }
    fputs("kernels:\n", f);
    for (int k = 0; k < RUN_KERNELS; k++) {
        if (k % 2 == 0) {
            fprintf(f, "  - { name: k%d, op: rmsnorm, features: %d, "
                    "eps: %d.0e-6 }\n", k, 64 * (k + 1), version + 1);
        } else {
            fprintf(f, "  - { name: k%d, op: softmax, features: %d, "
                    "scale: %d.5 }\n", k, 32 * (k + 1), version);
        }
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* The files of a directory as they were: names, bytes and inodes. */
struct dir_state {
    int n;
    char **names;
    char **text;
    size_t *len;
    ino_t *ino;
};

static void dir_state_read(const char *dir, struct dir_state *st)
{
    memset(st, 0, sizeof *st);
    st->n = tu_list(dir, NULL, &st->names);
    if (st->n <= 0) {
        return;
    }
    st->text = calloc((size_t)st->n, sizeof *st->text);
    st->len = calloc((size_t)st->n, sizeof *st->len);
    st->ino = calloc((size_t)st->n, sizeof *st->ino);
    CU_ASSERT_FATAL(st->text != NULL && st->len != NULL && st->ino != NULL);
    for (int i = 0; i < st->n; i++) {
        char *path = tu_path(dir, st->names[i]);
        struct stat sb;
        memset(&sb, 0, sizeof sb);
        if (lstat(path, &sb) == 0) {
            st->ino[i] = sb.st_ino;
        }
        st->text[i] = S_ISREG(sb.st_mode) ? tu_read(path, &st->len[i])
                                          : NULL;
        free(path);
    }
}

static void dir_state_free(struct dir_state *st)
{
    for (int i = 0; i < st->n; i++) {
        free(st->text[i]);
    }
    if (st->n >= 0) {
        tu_free_list(st->names, st->n);
    }
    free(st->text);
    free(st->len);
    free(st->ino);
}

/* DIR holds exactly what WAS held: the same names, and each file the same
 * inode with the same bytes (untouched, not rewritten alike). */
static void same_state(const char *dir, const struct dir_state *was,
                       const char *after)
{
    struct dir_state now;
    dir_state_read(dir, &now);
    TU_CHECK(now.n == was->n, "after %s: %d entries in %s, %d before",
             after, now.n, dir, was->n);
    for (int i = 0; i < now.n && now.n == was->n; i++) {
        TU_CHECK(strcmp(now.names[i], was->names[i]) == 0 &&
                     now.ino[i] == was->ino[i] &&
                     now.len[i] == was->len[i] &&
                     (now.text[i] == NULL) == (was->text[i] == NULL) &&
                     (now.text[i] == NULL ||
                      memcmp(now.text[i], was->text[i], now.len[i]) == 0),
                 "after %s: %s/%s is not the file it was (name %s, bytes "
                 "or inode)", after, dir, now.names[i], was->names[i]);
    }
    dir_state_free(&now);
}

/* The spec a file emitted by specl names in its first line ("... from
 * SPEC; do not edit.": its base name), in a new string; NULL if none. */
static char *emitted_from(const char *path)
{
    char *text = tu_read(path, NULL);
    char *from = text != NULL ? strstr(text, " from ") : NULL;
    char *end = from != NULL ? strstr(from, "; do not edit.\n") : NULL;
    char *spec = NULL;
    if (end != NULL && memchr(from, '\n', (size_t)(end - from)) == NULL) {
        from += strlen(" from ");
        spec = strndup(from, (size_t)(end - from));
    }
    free(text);
    return spec;
}

/* Checks that the entries of DIR are the files of kernels k0 .. k23, one
 * per extension of KINDS each (nothing else: no staging directory, no
 * lock), all emitted from one spec, returned in a new string (NULL if
 * they are not). */
static char *one_run_only(const char *dir, const char *const *kinds,
                          int n_kinds, const char *when)
{
    char **names;
    int n = tu_list(dir, NULL, &names);
    TU_CHECK(n == RUN_KERNELS * n_kinds, "%s: %d entries in %s, expected "
             "%d", when, n, dir, RUN_KERNELS * n_kinds);
    for (int k = 0; k < RUN_KERNELS; k++) {
        for (int e = 0; e < n_kinds; e++) {
            char path[600];
            snprintf(path, sizeof path, "%s/k%d.%s", dir, k, kinds[e]);
            TU_CHECK(access(path, R_OK) == 0, "%s: no %s", when, path);
        }
    }
    char *first = NULL;
    int mixed = 0;
    for (int i = 0; i < n; i++) {
        char *path = tu_path(dir, names[i]);
        char *spec = emitted_from(path);
        TU_CHECK(spec != NULL && names[i][0] == 'k', "%s: %s is not a "
                 "file specl emitted", when, path);
        if (spec != NULL && first == NULL) {
            first = strdup(spec);
        } else if (spec != NULL && strcmp(spec, first) != 0) {
            TU_CHECK(0, "%s: %s is from %s, %s from %s", when, path, spec,
                     names[0], first);
            mixed = 1;
        }
        free(spec);
        free(path);
    }
    if (n >= 0) {
        tu_free_list(names, n);
    }
    if (mixed) {
        free(first);
        first = NULL;
    }
    return first;
}

/* A write that fails in the middle of a run, for real, leaves the files
 * of the run before as they were (same bytes, same inodes) and nothing
 * of its own: while staging (the file size limit, as a full disk would),
 * and while moving files into place (a directory where the last file
 * goes, after every other file has been moved: they are put back). */
static void test_write_failure_keeps_previous(void)
{
    static const char *const gen_exts[] = {"cl", "h", "c"};
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    char *a = tu_path(tmp, "a.yaml"), *b = tu_path(tmp, "b.yaml");
    char *out = tu_path(tmp, "out"), *log = tu_path(tmp, "log");
    CU_ASSERT_FATAL(write_run_spec(a, 0) == 0 && write_run_spec(b, 1) == 0);
    int rc = tu_run("%s gen '%s' -o '%s' >/dev/null", TU_SPECL, a, out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    char *from = one_run_only(out, gen_exts, 3, "gen a.yaml");
    TU_CHECK(from != NULL && strcmp(from, "a.yaml") == 0, "gen a.yaml: "
             "files from %s", from ? from : "several specs");
    free(from);
    struct dir_state before;
    dir_state_read(out, &before);

    /* Files over 14 or 28 KiB (ulimit -f counts 512 or 1024 bytes)
     * cannot be written, as on a full disk: k0.cl and k0.h are staged,
     * k0.c (some 40 KiB) fails. */
    rc = tu_run("(trap '' XFSZ; ulimit -f 28 && exec %s gen '%s' -o '%s') "
                ">/dev/null 2>'%s'", TU_SPECL, b, out, log);
    char *msg = tu_read(log, NULL);
    TU_CHECK(rc == 1 && msg != NULL && strstr(msg, ": cannot write: "
             "File too large") != NULL && strstr(msg, "nothing written") !=
             NULL, "gen over the file size limit: exit %d, stderr:\n%s", rc,
             msg ? msg : "");
    free(msg);
    same_state(out, &before, "a write failure while staging");

    /* A directory in place of the last file: every file before it has
     * been replaced when its move fails, and each is put back. */
    char last[600];
    snprintf(last, sizeof last, "%s/k%d.c", out, RUN_KERNELS - 1);
    CU_ASSERT_FATAL(unlink(last) == 0 && mkdir(last, 0777) == 0);
    dir_state_free(&before);
    dir_state_read(out, &before);
    rc = tu_run("%s gen '%s' -o '%s' >/dev/null 2>'%s'", TU_SPECL, b, out,
                log);
    msg = tu_read(log, NULL);
    TU_CHECK(rc == 1 && msg != NULL && strstr(msg, last) != NULL &&
                 strstr(msg, "Is a directory") != NULL &&
                 strstr(msg, "nothing written") != NULL,
             "gen with a directory in place of %s: exit %d, stderr:\n%s",
             last, rc, msg ? msg : "");
    free(msg);
    same_state(out, &before, "a failure moving files into place");
    dir_state_free(&before);

    /* specl plan -o: the same. */
    char *plans = tu_path(tmp, "plans");
    rc = tu_run("%s plan '%s' -o '%s' >/dev/null", TU_SPECL, a, plans);
    CU_ASSERT_EQUAL(rc, 0);
    snprintf(last, sizeof last, "%s/k%d.plan", plans, RUN_KERNELS - 1);
    CU_ASSERT_FATAL(unlink(last) == 0 && mkdir(last, 0777) == 0);
    dir_state_read(plans, &before);
    rc = tu_run("%s plan '%s' -o '%s' >/dev/null 2>&1", TU_SPECL, b, plans);
    CU_ASSERT_EQUAL(rc, 1);
    same_state(plans, &before, "plan with a directory in place of a file");
    dir_state_free(&before);

    /* Once the way is clear, the run writes every file. */
    rc = tu_run("rmdir '%s' '%s/k%d.c' && %s gen '%s' -o '%s' >/dev/null",
                last, out, RUN_KERNELS - 1, TU_SPECL, b, out);
    CU_ASSERT_EQUAL(rc, 0);
    from = one_run_only(out, gen_exts, 3, "gen b.yaml");
    TU_CHECK(from != NULL && strcmp(from, "b.yaml") == 0, "gen b.yaml: "
             "files from %s", from ? from : "several specs");
    free(from);
    free(plans);
    free(a);
    free(b);
    free(out);
    free(log);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* Starts `specl MODE SPEC -o DIR`, its output into LOG; the pid, or -1. */
static pid_t spawn_specl(const char *mode, const char *spec, const char *dir,
                         const char *log)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
            _exit(126);
        }
        execl(TU_SPECL, "specl", mode, spec, "-o", dir, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The exit status of child PID, or -1. */
static int wait_status(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Two runs of other specs with the same kernel names into one directory
 * at once, again and again (the first into a directory neither finds):
 * both succeed and, after both, every file is from one of them, the
 * same for all; nothing else is left. gen and plan -o alike. */
static void test_concurrent_runs(void)
{
    static const char *const gen_exts[] = {"cl", "h", "c"};
    static const char *const plan_exts[] = {"plan"};
    enum { ROUNDS = 20 };
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    char *spec[2] = {tu_path(tmp, "a.yaml"), tu_path(tmp, "b.yaml")};
    char *log[2] = {tu_path(tmp, "a.log"), tu_path(tmp, "b.log")};
    CU_ASSERT_FATAL(write_run_spec(spec[0], 0) == 0 &&
                    write_run_spec(spec[1], 1) == 0);
    int won[2] = {0, 0};
    for (int mode = 0; mode < 2; mode++) {
        char *out = tu_path(tmp, mode == 0 ? "gen" : "plan");
        for (int round = 0; round < ROUNDS; round++) {
            pid_t pid[2];
            int rc[2];
            for (int r = 0; r < 2; r++) {
                pid[r] = spawn_specl(mode == 0 ? "gen" : "plan", spec[r],
                                     out, log[r]);
            }
            for (int r = 0; r < 2; r++) {
                rc[r] = pid[r] > 0 ? wait_status(pid[r]) : -1;
                char *text = tu_read(log[r], NULL);
                TU_CHECK(rc[r] == 0, "round %d: %s %s: exit %d\n%s", round,
                         mode == 0 ? "gen" : "plan", spec[r], rc[r],
                         text ? text : "");
                free(text);
            }
            char when[64];
            snprintf(when, sizeof when, "%s, round %d",
                     mode == 0 ? "gen" : "plan", round);
            char *from = one_run_only(out, mode == 0 ? gen_exts : plan_exts,
                                      mode == 0 ? 3 : 1, when);
            for (int r = 0; r < 2 && from != NULL; r++) {
                won[r] += strcmp(from, strrchr(spec[r], '/') + 1) == 0;
            }
            free(from);
        }
        free(out);
    }
    /* Which run finishes last is up to the scheduler: not checked. */
    TU_CHECK(won[0] + won[1] == 2 * ROUNDS, "%d and %d of %d rounds whole",
             won[0], won[1], 2 * ROUNDS);
    for (int r = 0; r < 2; r++) {
        free(spec[r]);
        free(log[r]);
    }
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* ---- spec paths that would break a comment ----------------------------- */

/* The header comment of TEXT (an emitted file) opens the file and ends
 * on the first line that closes a comment: nothing in it closes one early
 * or opens another. */
static void check_header_closed(const char *what, const char *text)
{
    const char *end = strstr(text, "*/");
    const char *line_end = strstr(text, "\n */\n");
    const char *nested = strstr(text + 2, "/*");
    TU_CHECK(strncmp(text, "/* ", 3) == 0 && end != NULL &&
                 line_end != NULL && end == line_end + 2 &&
                 (nested == NULL || nested > end),
             "%s: the header comment ends or nests early:\n%.*s", what,
             end != NULL ? (int)(end - text) + 2 : 200, text);
}

/* A spec under directories named with the characters that end, open or
 * otherwise break a C comment ("a*", then "/b", "*d", "e??" and a tab and
 * a newline), itself named with those a file name can hold: every
 * emitted file's header names the spec by its base name only, escaped,
 * the .c builds with -Werror, and plan's header is the same. */
static void test_path_in_comment(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    char dir[512], spec[600];
    snprintf(dir, sizeof dir, "%s/a*/b/c/*d/e?\?/t\tn\nl", tmp);
    CU_ASSERT_EQUAL_FATAL(tu_run("mkdir -p '%s'", dir), 0);
    snprintf(spec, sizeof spec, "%s/x*?\?\t\\.yaml", dir);
    FILE *f = fopen(spec, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("kernels:\n  - { name: comment_path, op: rmsnorm, features: 64 "
          "}\n", f);
    CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
    const char *want = " from x*?\\?\\t\\\\.yaml; do not edit.\n";
    int rc = tu_run("%s gen '%s' -o '%s/out' >/dev/null && "
                    "%s plan '%s' -o '%s/out' >/dev/null",
                    TU_SPECL, spec, tmp, TU_SPECL, spec, tmp);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    static const char *const all_exts[] = {"cl", "h", "c", "plan"};
    for (int i = 0; i < 4; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s/out/comment_path.%s", tmp,
                 all_exts[i]);
        char *text = tu_read(path, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        const char *line = strstr(text, " from ");
        TU_CHECK(line != NULL && strncmp(line, want, strlen(want)) == 0,
                 "%s: the header names the spec as\n%.*s\nexpected\n%s",
                 path, line ? (int)strcspn(line, "\n") : 0,
                 line ? line : "", want);
        TU_CHECK(strstr(text, tmp) == NULL, "%s names the spec's directory",
                 path);
        check_header_closed(path, text);
        free(text);
    }
    rc = tu_run("cd '%s/out' && ${CC:-cc} -std=c99 -pedantic -Wall -Wextra "
                "-Werror -c comment_path.c -o comment_path.o", tmp);
    TU_CHECK(rc == 0, "the .c emitted from a spec under %s does not build",
             dir);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* ---- the same files wherever specl runs and the spec lives ------------ */

/* One spec copied into two directories and generated from each: by an
 * absolute path from the repository, and by a relative one from the
 * directory the spec is in. Both runs write the same bytes, and none of
 * them names either directory. */
static void test_reproducible(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    char *cwd = getcwd(NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cwd);
    int rc = tu_run("mkdir -p '%s/one/specs' '%s/two/deeper' && "
                    "cp " GOLDEN_SPEC " '%s/one/specs/golden.yaml' && "
                    "cp " GOLDEN_SPEC " '%s/two/deeper/golden.yaml'",
                    tmp, tmp, tmp, tmp);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    rc = tu_run("%s gen '%s/one/specs/golden.yaml' -o '%s/out1' >/dev/null",
                TU_SPECL, tmp, tmp);
    CU_ASSERT_EQUAL(rc, 0);
    rc = tu_run("cd '%s/two/deeper' && '%s/%s' gen golden.yaml -o ../out2 "
                ">/dev/null",
                tmp, cwd, TU_SPECL);
    CU_ASSERT_EQUAL(rc, 0);
    char *out1 = tu_path(tmp, "out1"), *out2 = tu_path(tmp, "two/out2");
    same_files(out1, out2, 15);
    same_files(out2, out1, 15);
    char **names;
    int n = tu_list(out1, NULL, &names);
    for (int i = 0; i < n; i++) {
        char *path = tu_path(out1, names[i]);
        char *text = tu_read(path, NULL);
        TU_CHECK(text != NULL && strstr(text, tmp) == NULL &&
                     strstr(text, "deeper") == NULL &&
                     strstr(text, "specs/") == NULL,
                 "%s names the directory of its spec", path);
        free(text);
        free(path);
    }
    if (n >= 0) {
        tu_free_list(names, n);
    }
    free(out1);
    free(out2);
    free(cwd);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* NAME.c's own names (stub_suffix) are NAME_ and a suffix: a kernel
 * named NAME_S that would define one of them (its struct NAME_S) is
 * refused next to NAME, as one whose public names would clash is. */
static void test_stub_names_clash(void)
{
    char suffix[64];
    int n = 0;
    for (; stub_suffix(n, suffix, sizeof suffix); n++) {
    }
    CU_ASSERT(n > 20 && n <= STUB_SUFFIXES);
    static const char *const clashing[] = {"launch", "variants", "paths0",
                                           "launches0_1"};
    for (size_t i = 0; i < sizeof clashing / sizeof clashing[0]; i++) {
        char text[512];
        struct spec_set s;
        struct diags quiet = {.out = NULL};
        snprintf(text, sizeof text,
                 "kernels:\n"
                 "  - { name: u, op: rmsnorm, features: 64 }\n"
                 "  - { name: u_%s, op: rmsnorm, features: 64 }\n",
                 clashing[i]);
        spec_set_init(&s);
        int errors = spec_read_buffer(&s, "clash.yaml",
                                      (const unsigned char *)text,
                                      strlen(text), &quiet);
        TU_CHECK(errors == 1, "kernels u and u_%s: %d errors, expected one "
                 "(a clash)", clashing[i], errors);
        spec_set_free(&s);
    }
}

/* TEXT (a C source) with each line break inside a comment and the " * "
 * after it as one space: the wrapped text of NAME.h as one line (caller
 * frees). */
static char *unwrapped(const char *text)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    for (const char *p = text; *p != '\0'; p++) {
        if (strncmp(p, "\n * ", 4) == 0) {
            *o++ = ' ';
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

/* Whether the emitted stub E says in NAME.h that the buffers listed by
 * WRITTEN are refused overlapping another, and ALLOWED ("" for none). */
static void check_alias_doc(const char *name, const struct emitted *e,
                            const char *written, const char *allowed)
{
    char *h = unwrapped(buf_str(&e->h));
    char want[256];
    snprintf(want, sizeof want, "CL_INVALID_VALUE as well when %s (which "
             "the kernels write) shares memory with another buffer or the "
             "scratch", written);
    TU_CHECK(strstr(h, want) != NULL, "%s.h lacks: %s", name, want);
    if (allowed[0] == '\0') {
        snprintf(want, sizeof want, "No output of %s may alias another "
                 "buffer.", name);
    } else {
        snprintf(want, sizeof want, "%s No other output of %s may alias "
                 "another buffer.", allowed, name);
    }
    TU_CHECK(strstr(h, want) != NULL, "%s.h lacks: %s", name, want);
    free(h);
}

/* NAME.h says which buffers may share memory, from the op's buffer table
 * (may_alias), and NAME.c's table of buffers carries it: none of today's
 * ops lets an output alias another buffer; a plan that lets softmax's y
 * be x says so, and marks it in NAME.c. */
static void test_alias_doc(void)
{
    static const struct {
        const char *kernel, *written;
    } golden[] = {
        {"golden_lora", "y"},
        {"golden_softmax", "y"},
        {"golden_layernorm", "y"},
        {"golden_lora_backward", "dx, da or db"},
        {"golden_lora_backward_adapter", "da or db"},
    };
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec(&s, GOLDEN_SPEC), 0);
    for (size_t g = 0; g < sizeof golden / sizeof golden[0]; g++) {
        const struct kernel_spec *ks = NULL;
        for (int k = 0; k < s.n_kernel; k++) {
            if (strcmp(s.kernel[k].name, golden[g].kernel) == 0) {
                ks = &s.kernel[k];
            }
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(ks);
        struct emitted e;
        char err[256] = "";
        CU_ASSERT_EQUAL_FATAL(
            emit_kernel(tu_gen_variants(ks), &e, err, sizeof err), 0);
        check_alias_doc(ks->name, &e, golden[g].written, "");
        TU_CHECK(strstr(buf_str(&e.c), "may_alias") == NULL,
                 "%s.c: the in-place section, which no buffer needs",
                 ks->name);
        emitted_free(&e);
        if (strcmp(ks->op->name, "softmax") != 0) {
            continue;
        }
        struct plan p;
        memset(&p, 0, sizeof p);
        ks->op->plan(ks, &p);
        CU_ASSERT_STRING_EQUAL_FATAL(p.buffer[p.n_buffer - 1].name, "y");
        plan_buffer_may_alias(&p, "x");
        CU_ASSERT_EQUAL_FATAL(
            emit_stub(ks, ks->name, &p, NULL, &e, err, sizeof err), 0);
        check_alias_doc(ks->name, &e, "y",
                        "y may be x, in place (the same cl_mem, or a "
                        "sub-buffer of the same buffer at the same offset).");
        /* per, sizes, fixed, bytes, written, may_alias (softmax has no
         * unused or nullable buffer: no columns for them) */
        TU_CHECK(strstr(buf_str(&e.c), ", 0, -1}, /* x */\n") != NULL &&
                     strstr(buf_str(&e.c), ", 1, 0}, /* y */\n") != NULL &&
                     strstr(buf_str(&e.c), "in place, as the op allows") !=
                         NULL,
                 "%s.c: the buffer table does not let y be x", ks->name);
        emitted_free(&e);
    }
    spec_set_free(&s);
}

int add_emit_suite(void)
{
    CU_pSuite s = CU_add_suite("emit", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "golden files (emit_decisions, emit_kernel)",
                    test_golden) == NULL ||
        CU_add_test(s, "golden files (specl plan, specl gen)",
                    test_golden_cli) == NULL ||
        CU_add_test(s, "no device, timing or log in the templates",
                    test_templates_no_lab_notes) == NULL ||
        CU_add_test(s, "no shuffle or barrier in a macro's arguments in "
                    "the templates",
                    test_templates_macro_collectives) == NULL ||
        CU_add_test(s, "embedded kernel texts without comments",
                    test_strip_comments) == NULL ||
        CU_add_test(s, "embedded kernel texts without indentation",
                    test_compact_blanks) == NULL ||
        CU_add_test(s, "embedded kernel texts packed into lines of C",
                    test_source_lines) == NULL ||
        CU_add_test(s, "embedded kernel texts: lines joined",
                    test_reflow_lines) == NULL ||
        CU_add_test(s, "llama2-7b and seeds: stub size, no device or timing",
                    test_emitted_lean) == NULL ||
        CU_add_test(s, "a stub's runtime sections exactly where needed",
                    test_stub_sections) == NULL ||
        CU_add_test(s, "the sm_90a mark, and the rebuild only with wgmma",
                    test_sm90a_mark) == NULL ||
        CU_add_test(s, "header, prefixes, embedded source, decisions",
                    test_emitted_shape) == NULL ||
        CU_add_test(s, "NAME.h says which buffers may alias",
                    test_alias_doc) == NULL ||
        CU_add_test(s, "deterministic in process",
                    test_in_process_determinism) == NULL ||
        CU_add_test(s, "deterministic specl gen specs/*.yaml",
                    test_determinism) == NULL ||
        CU_add_test(s, "atomic, nothing half-written",
                    test_nothing_half_written) == NULL ||
        CU_add_test(s, "a failed run keeps the previous files",
                    test_write_failure_keeps_previous) == NULL ||
        CU_add_test(s, "concurrent runs into one directory never mix",
                    test_concurrent_runs) == NULL ||
        CU_add_test(s, "spec paths that would break a comment",
                    test_path_in_comment) == NULL ||
        CU_add_test(s, "the same files from any directory",
                    test_reproducible) == NULL ||
        CU_add_test(s, "kernel names that would clash with a stub's names",
                    test_stub_names_clash) == NULL ||
        CU_add_test(s, "gen --target cpu", test_target_cpu) == NULL ||
        CU_add_test(s, "every CPU's rows range, where it pays",
                    test_cpu_rows_range) == NULL ||
        add_resolve_tests(s) < 0 || add_prune_tests(s) < 0 ||
        add_layout_tests(s) < 0) {
        return -1;
    }
    return 0;
}
