/* test_resolve.c - the conditionals the plan decides, resolved before a
 * kernel text is emitted (gen/cl_resolve.c): each kind of directive and
 * condition on small texts, and every kernel of the spec files
 * preprocessing to the same tokens resolved as not. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_resolve.h"
#include "clsource.h"
#include "render.h"
#include "spec.h"
#include "suites.h"
#include "testutil.h"
#include "variant.h"

static struct define int_fact(const char *name, long value)
{
    struct define d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.kind = DEFINE_INT;
    d.i = value;
    return d;
}

/* Each text after the preludes of two plans, and what it resolves to:
 * both define A 1, B 0 and N 4, W 2 and 6, F a float; U 7 only the
 * first. Z is defined nowhere. */
static void test_resolve_cases(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"#if A\nx\n#else\ny\n#endif\n", "x\n"},
        {"#if B\nx\n#else\ny\n#endif\n", "y\n"},
        {"#if B\nx\n#elif U\ny\n#else\nz\n#endif\n",
         "#if U\ny\n#else\nz\n#endif\n"},
        {"#if B\nx\n#elif A\ny\n#elif U\nz\n#endif\n", "y\n"},
        {"#if U\nx\n#elif A\ny\n#endif\n", "#if U\nx\n#elif A\ny\n#endif\n"},
        {"#if U\nx\n#if A\ny\n#endif\n#endif\n", "#if U\nx\ny\n#endif\n"},
        {"#if A\n#if B\nx\n#else\ny\n#endif\n#else\nz\n#endif\n", "y\n"},
        {"#if B\n#if U\nx\n#else\nv\n#endif\n#endif\nw\n", "w\n"},
        {"#ifdef A\nx\n#endif\n#ifndef A\ny\n#endif\n", "x\n"},
        {"#ifdef U\nx\n#endif\n", "#ifdef U\nx\n#endif\n"},
        {"#if defined(A) && defined N && N > 2\nx\n#endif\n", "x\n"},
        {"#if defined(U)\nx\n#endif\n", "#if defined(U)\nx\n#endif\n"},
        {"#if B && U\nx\n#endif\n#if U || A\ny\n#endif\n", "y\n"},
        {"#if U && A\nx\n#endif\n", "#if U && A\nx\n#endif\n"},
        {"#if A ? N : U\nx\n#endif\n", "x\n"},
        {"#if U ? A : N\nx\n#endif\n", "x\n"},
        {"#if U ? B : N\nx\n#endif\n", "#if U ? B : N\nx\n#endif\n"},
        {"#if 0x10 == 16 && (N << 2) == 16 && -N < 0 && !B && ~B == -1 && "
         "N % 3 == 1 && N / 3 == 1 && (N ^ 5) == 1 && (N | 1) == 5 && "
         "(N & 6) == 4 && N >> 1 == 2 && 010 == 8 && 4L == N\nx\n#endif\n",
         "x\n"},
        {"#if N >= 4 && N <= 4 && N != 3 && !(N < 4) && !(N > 4)\nx\n"
         "#endif\n",
         "x\n"},
        {"#if A /* why */\nx\n#endif /* A */\n", "x\n"},
        {"#if A && \\\n    N == 4\nx\n#endif\n", "x\n"},
        {"  #  if B\nx\n  #  endif\ny\n", "y\n"},
        /* Values the plans do not share, where they decide alike. */
        {"#if W > 1 && W % 2 == 0\nx\n#else\ny\n#endif\n", "x\n"},
        {"#if W == 2\nx\n#endif\n", "#if W == 2\nx\n#endif\n"},
        {"#define T (W * 2)\n#if T % 4 == 0\nx\n#endif\n",
         "#define T (W * 2)\nx\n"},
        {"#ifdef F\nx\n#endif\n#if F\ny\n#endif\n",
         "x\n#if F\ny\n#endif\n"},
        {"#ifndef N\n#define N 3\n#endif\n#if N == 4\nx\n#endif\n", "x\n"},
        {"#if N == 4\nx\n#endif\n#undef N\n#define N 5\n#if N == 5\ny\n"
         "#endif\n",
         "x\n#undef N\n#define N 5\ny\n"},
        {"#ifndef U\n#define U 3\n#endif\n#if U\nx\n#endif\n",
         "#ifndef U\n#define U 3\n#endif\n#if U\nx\n#endif\n"},
        /* Left to the compiler: what this file cannot be sure of. */
        {"#if N / B\nx\n#endif\n", "#if N / B\nx\n#endif\n"},
        {"#if 1u\nx\n#endif\n", "#if 1u\nx\n#endif\n"},
        {"#if MAX(N, 2) > 1\nx\n#endif\n", "#if MAX(N, 2) > 1\nx\n#endif\n"},
        {"#if N 3\nx\n#endif\n", "#if N 3\nx\n#endif\n"},
        {"#if 1 << 70\nx\n#endif\n", "#if 1 << 70\nx\n#endif\n"},
        {"#define A 2\n#if A == 2\nx\n#endif\n", "#define A 2\nx\n"},
        {"#undef N\n#if N\nx\n#endif\n", "#undef N\n#if N\nx\n#endif\n"},
        /* Texts this file leaves whole. */
        {"/*\n#if B\n*/\nx\n", "/*\n#if B\n*/\nx\n"},
        {"#if B /* open\n*/\nx\n#endif\n", "#if B /* open\n*/\nx\n#endif\n"},
        {"x\n#endif\n", "x\n#endif\n"},
        {"#if B\nx\n", "#if B\nx\n"},
        {"#else\n", "#else\n"},
        /* Names no plan, text or device defines: undefined. */
        {"#if Z\nx\n#else\ny\n#endif\n", "y\n"},
        {"#ifdef Z\nx\n#endif\n#ifndef Z\ny\n#endif\n", "y\n"},
        {"#if defined(Z) || !A\nx\n#endif\n", ""},
        {"#if Z(1)\nx\n#endif\n", "#if Z(1)\nx\n#endif\n"},
        /* The text's own macros, where sure. */
        {"#define T 1\n#if defined(T) && Z == 0\nx\n#endif\n",
         "#define T 1\nx\n"},
        {"#define W (N * 2)\n#if W == 8\nx\n#endif\n",
         "#define W (N * 2)\nx\n"},
        {"#if B\n#define V 1\n#else\n#define V 2\n#endif\n#if V == 2\ny\n"
         "#endif\n",
         "#define V 2\ny\n"},
        {"#if U\n#define V 1\n#endif\n#if V\ny\n#endif\n",
         "#if U\n#define V 1\n#endif\n#if V\ny\n#endif\n"},
        {"#define V 1\n#undef V\n#if V\nx\n#endif\n",
         "#define V 1\n#undef V\n#if V\nx\n#endif\n"},
        {"#define F(a) a\n#if F(1)\nx\n#endif\n",
         "#define F(a) a\n#if F(1)\nx\n#endif\n"},
        {"#define F(a) a\n#ifdef F\nx\n#endif\n",
         "#define F(a) a\n#ifdef F\nx\n#endif\n"},
        {"#define S S\n#if S\nx\n#endif\n", "#define S S\n#if S\nx\n#endif\n"},
        {"#define D defined(A)\n#if D\nx\n#endif\n",
         "#define D defined(A)\n#if D\nx\n#endif\n"},
        {"#if T\nx\n#endif\n#undef T\n", "#undef T\n"},
        /* The device's own names: its compiler's to decide. */
        {"#ifdef cl_khr_fp16\nx\n#endif\n", "#ifdef cl_khr_fp16\nx\n#endif\n"},
        {"#if __OPENCL_VERSION__ >= 120\nx\n#endif\n",
         "#if __OPENCL_VERSION__ >= 120\nx\n#endif\n"},
        {"#if defined(FP_FAST_FMAF)\nx\n#endif\n",
         "#if defined(FP_FAST_FMAF)\nx\n#endif\n"},
    };
    static struct plan p, q;
    memset(&p, 0, sizeof p);
    memset(&q, 0, sizeof q);
    static const char *const shared[] = {"A", "B", "N"};
    static const long values[] = {1, 0, 4};
    for (int i = 0; i < 3; i++) {
        p.define[p.n_define++] = int_fact(shared[i], values[i]);
        q.define[q.n_define++] = int_fact(shared[2 - i], values[2 - i]);
    }
    p.define[p.n_define++] = int_fact("W", 2);
    q.define[q.n_define++] = int_fact("W", 6);
    p.define[p.n_define] = int_fact("F", 0);
    p.define[p.n_define++].kind = DEFINE_FLOAT;
    q.define[q.n_define] = int_fact("F", 0);
    q.define[q.n_define++].kind = DEFINE_FLOAT;
    p.define[p.n_define++] = int_fact("U", 7);
    const struct plan *plans[2] = {&p, &q};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf out;
        buf_init(&out);
        buf_puts(&out, "<");
        cl_resolve(cases[i].text, strlen(cases[i].text), plans, NULL, 2,
                   NULL, &out);
        TU_CHECK(strcmp(buf_str(&out) + 1, cases[i].want) == 0 &&
                     buf_str(&out)[0] == '<',
                 "case %zu:\n%s\nresolved to:\n%s\nnot:\n%s", i,
                 cases[i].text, buf_str(&out), cases[i].want);
        buf_free(&out);
    }
}

/* Template boundaries move with the text: one in a branch left out, one
 * after it, one at the end, offsets from where the output began. */
static void test_resolve_cuts(void)
{
    static const char text[] = "a\n#if B\nb\n#endif\nc\n#if A\nd\n#endif\n";
    struct render_cuts cuts;
    memset(&cuts, 0, sizeof cuts);
    cuts.n = 4;
    cuts.cut[0].at = (size_t)(strstr(text, "b\n") - text);
    cuts.cut[1].at = (size_t)(strstr(text, "c\n") - text);
    cuts.cut[2].at = (size_t)(strstr(text, "d\n") - text);
    cuts.cut[3].at = sizeof text - 1;
    static struct plan p;
    memset(&p, 0, sizeof p);
    p.define[p.n_define++] = int_fact("A", 1);
    p.define[p.n_define++] = int_fact("B", 0);
    const struct plan *plans[1] = {&p};
    struct buf out;
    buf_init(&out);
    buf_puts(&out, "head\n");
    cl_resolve(text, sizeof text - 1, plans, NULL, 1, &cuts, &out);
    TU_CHECK(strcmp(buf_str(&out), "head\na\nc\nd\n") == 0, "%s",
             buf_str(&out));
    TU_CHECK(cuts.cut[0].at == 7 && cuts.cut[1].at == 7 &&
                 cuts.cut[2].at == 9 && cuts.cut[3].at == 11,
             "cuts at %zu %zu %zu %zu", cuts.cut[0].at, cuts.cut[1].at,
             cuts.cut[2].at, cuts.cut[3].at);
    buf_free(&out);
}

/* A template's conditional is decided by the plans whose texts hold the
 * template: W 2 in the first plan's, 6 in the second's, whose text has
 * no t.cl. */
static void test_resolve_voters(void)
{
    static const char text[] = "#if W == 2\na\n#endif\n"
                               "#if W == 2\nb\n#endif\n"
                               "c\n";
    struct render_cuts with, without;
    memset(&with, 0, sizeof with);
    memset(&without, 0, sizeof without);
    with.n = 2;
    with.cut[0].at = (size_t)(strstr(text, "\n#if") - text) + 1;
    with.cut[0].name = "t.cl";
    with.cut[1].at = (size_t)(strstr(text, "c\n") - text);
    without.n = 1;
    without.cut[0].name = "u.cl";
    static struct plan p, q;
    memset(&p, 0, sizeof p);
    memset(&q, 0, sizeof q);
    p.define[p.n_define++] = int_fact("W", 2);
    q.define[q.n_define++] = int_fact("W", 6);
    const struct plan *plans[2] = {&p, &q};
    const struct render_cuts *plan_cuts[2] = {&with, &without};
    struct buf out;
    buf_init(&out);
    cl_resolve(text, sizeof text - 1, plans, plan_cuts, 2, &with, &out);
    TU_CHECK(strcmp(buf_str(&out), "#if W == 2\na\n#endif\nb\nc\n") == 0,
             "%s", buf_str(&out));
    buf_free(&out);
}

/* The C preprocessor's tokens of TEXT, blanks made single spaces (NULL
 * when cpp fails). */
static char *preprocessed(const char *dir, const char *text)
{
    char *in = tu_path(dir, "in.cl"), *out = tu_path(dir, "out.i");
    FILE *f = fopen(in, "w");
    char *tokens = NULL;
    if (f != NULL && fputs(text, f) >= 0 && fclose(f) == 0 &&
        tu_run("cpp -P -undef -nostdinc -x c '%s' -o '%s' 2>/dev/null", in,
               out) == 0) {
        char *raw = tu_read(out, NULL);
        if (raw != NULL) {
            size_t n = 0;
            for (const char *p = raw; *p != '\0'; p++) {
                int blank = *p == ' ' || *p == '\t' || *p == '\n';
                if (!blank) {
                    raw[n++] = *p;
                } else if (n > 0 && raw[n - 1] != ' ') {
                    raw[n++] = ' ';
                }
            }
            raw[n] = '\0';
            tokens = raw;
        }
    }
    free(in);
    free(out);
    return tokens;
}

/* NAMES (N of them) holds NAME (LEN bytes); if not, and ADD, it is
 * added (up to MAX). */
static int name_in(char (*names)[32], int *n, int max, const char *name,
                   size_t len, int add)
{
    for (int i = 0; i < *n; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) {
            return 1;
        }
    }
    if (add && *n < max && len < 32) {
        memcpy(names[*n], name, len);
        names[(*n)++][len] = '\0';
    }
    return 0;
}

#define MAX_NAMES 2048

/* The names the kernel templates define (DEFINED) and those their #if,
 * #elif, #ifdef and #ifndef lines test (TESTED). */
static void template_names(char (*defined)[32], int *n_defined,
                           char (*tested)[32], int *n_tested)
{
    for (const struct template_file *f = template_files; f->name != NULL;
         f++) {
        size_t len = strlen(f->name);
        if (len < 3 || strcmp(f->name + len - 3, ".cl") != 0) {
            continue; /* the stubs' C templates */
        }
        for (const char *line = f->text; *line != '\0';) {
            const char *end = strchr(line, '\n');
            end = end != NULL ? end : line + strlen(line);
            const char *p = line + strspn(line, " \t");
            if (*p == '#') {
                p += 1 + strspn(p + 1, " \t");
                size_t kw = strspn(p, "abcdefghijklmnopqrstuvwxyz");
                int define = kw == 6 && strncmp(p, "define", 6) == 0;
                int test = (kw == 2 && strncmp(p, "if", 2) == 0) ||
                           (kw == 4 && strncmp(p, "elif", 4) == 0) ||
                           (kw == 5 && strncmp(p, "ifdef", 5) == 0) ||
                           (kw == 6 && strncmp(p, "ifndef", 6) == 0);
                for (p += kw; p < end && (define || test);) {
                    if (p[0] == '/' && p[1] == '*') {
                        break; /* the line's comment */
                    }
                    if (!(isalpha((unsigned char)*p) || *p == '_')) {
                        p++;
                        continue;
                    }
                    size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "abcdefghijklmnopqrstuvwxyz"
                                         "0123456789_");
                    if (define) {
                        name_in(defined, n_defined, MAX_NAMES, p, n, 1);
                        break;
                    }
                    if (!(n == 7 && strncmp(p, "defined", 7) == 0)) {
                        name_in(tested, n_tested, MAX_NAMES, p, n, 1);
                    }
                    p += n;
                }
            }
            line = *end != '\0' ? end + 1 : end;
        }
    }
}

#define MAX_SEEN 4096

/* FNV-1a of the N bytes at S. */
static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    }
    return h;
}

/* Every variant `specl gen` emits for the kernels of the spec files,
 * resolved as gen resolves it, with the plans of all the variants of its
 * NAME.c: after its own plan's prelude, the C preprocessor makes the
 * same tokens of it as of the text as rendered. */
static void test_resolve_equivalent(void)
{
    static const char *const files[] = {
        "tests/golden/golden.yaml",
        "tests/stubs.yaml",
        "specs/seeds.yaml",
        "specs/llama2-7b-train.yaml",
        "specs/llama2-7b-layer-train.yaml",
        "specs/llama2-7b-train-bf16.yaml",
        "tests/good/lora_tf32.yaml",
        "tests/good/lora_backward_x_once.yaml",
        "bench/specs/decode_odd.yaml",
        "bench/specs/layer.yaml",
        "bench/specs/attention.yaml",
        "bench/specs/attention_backward.yaml"};
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    int checked = 0, shorter = 0, n_planned = 0, n_seen = 0, repeated = 0;
    static char planned[MAX_NAMES][32];
    static uint64_t seen[MAX_SEEN];
    /* Each file as specl gen emits it, then for compute capability 9.0
     * alone (--target sm90a: the warpgroup kernels). */
    for (size_t f = 0; f < 2 * (sizeof files / sizeof files[0]); f++) {
        struct spec_set s;
        struct diags d = {.out = stderr};
        spec_set_init(&s);
        CU_ASSERT_EQUAL_FATAL(spec_read_file(&s, files[f / 2], &d), 0);
        if (f % 2 == 1) {
            CU_ASSERT_EQUAL_FATAL(spec_set_target(&s, TARGET_SM90A, &d), 0);
        }
        for (int k = 0; k < s.n_kernel; k++) {
            const struct variant_set *vs = tu_gen_variants(&s.kernel[k]);
            /* As gen resolves them: each variant's text with the plans
             * of every variant of its NAME.c. */
            static struct plan plan[SPECL_MAX_VARIANTS];
            const struct plan *plans[SPECL_MAX_VARIANTS];
            static struct render_cuts cuts[SPECL_MAX_VARIANTS];
            const struct render_cuts *plan_cuts[SPECL_MAX_VARIANTS];
            struct buf texts[SPECL_MAX_VARIANTS];
            for (int v = 0; v < vs->n; v++) {
                char err[256];
                memset(&plan[v], 0, sizeof plan[v]);
                vs->v[v].ks.op->plan(&vs->v[v].ks, &plan[v]);
                plans[v] = &plan[v];
                plan_cuts[v] = &cuts[v];
                buf_init(&texts[v]);
                TU_CHECK(cl_kernels(&vs->v[v].ks, &plan[v], NULL, &texts[v],
                                    &cuts[v], err, sizeof err) == 0,
                         "%s (%s): %s", s.kernel[k].name, files[f / 2], err);
            }
            for (int v = 0; v < vs->n; v++) {
                const struct plan *p = &plan[v];
                struct buf prelude, resolved, text = texts[v];
                buf_init(&prelude);
                buf_init(&resolved);
                cl_prelude(p, &prelude);
                buf_puts(&resolved, buf_str(&prelude));
                for (int i = 0; i < p->n_define; i++) {
                    name_in(planned, &n_planned, MAX_NAMES,
                            p->define[i].name, strlen(p->define[i].name), 1);
                }
                cl_resolve(buf_str(&text), text.len, plans, plan_cuts, vs->n,
                           &cuts[v], &resolved);
                buf_puts(&prelude, buf_str(&text));
                /* The same source resolved the same again (kernels
                 * alike in several files) is not preprocessed again. */
                uint64_t h =
                    text_hash(buf_str(&prelude), prelude.len) * 31u +
                    text_hash(buf_str(&resolved), resolved.len);
                int again = 0;
                for (int i = 0; i < n_seen && !again; i++) {
                    again = seen[i] == h;
                }
                if (again || n_seen == MAX_SEEN) {
                    repeated += again;
                    buf_free(&prelude);
                    buf_free(&text);
                    buf_free(&resolved);
                    continue;
                }
                seen[n_seen++] = h;
                char *a = preprocessed(dir, buf_str(&prelude));
                char *b = preprocessed(dir, buf_str(&resolved));
                TU_CHECK(a != NULL && b != NULL && strcmp(a, b) == 0,
                         "%s (%s) variant %d: the resolved text "
                         "preprocesses to other tokens", s.kernel[k].name,
                         files[f / 2], v);
                if (a != NULL && b != NULL && strcmp(a, b) != 0) {
                    tu_report_diff("tokens", a, b);
                }
                checked++;
                shorter += resolved.len < prelude.len;
                free(a);
                free(b);
                buf_free(&prelude);
                buf_free(&text);
                buf_free(&resolved);
            }
        }
        spec_set_free(&s);
    }
    TU_CHECK(checked > 40 && shorter * 2 > checked && n_seen < MAX_SEEN,
             "%d variants checked (%d repeated), %d of them shorter "
             "resolved", checked, repeated, shorter);
    /* A name a template tests is undefined where nothing defines it; so
     * every such name must be a template's, a plan's or the device's
     * own (cl_device_name), or the test of a device's macro would be
     * resolved away. */
    static char defined[MAX_NAMES][32], tested[MAX_NAMES][32];
    int n_defined = 0, n_tested = 0;
    template_names(defined, &n_defined, tested, &n_tested);
    for (int i = 0; i < n_tested; i++) {
        size_t len = strlen(tested[i]);
        int ok = cl_device_name(tested[i], len) ||
                 name_in(defined, &n_defined, MAX_NAMES, tested[i], len, 0) ||
                 name_in(planned, &n_planned, MAX_NAMES, tested[i], len, 0);
        TU_CHECK(ok, "the templates test %s, which neither a template, a "
                 "plan of the spec files nor the device defines",
                 tested[i]);
    }
    TU_CHECK(n_tested > 200 && n_defined > 200, "%d names tested, %d "
             "defined by the templates", n_tested, n_defined);
    CU_ASSERT_EQUAL(tu_rmtree(dir), 0);
    free(dir);
}

int add_resolve_tests(CU_pSuite s)
{
    if (CU_add_test(s, "resolved conditionals: each directive and operator",
                    test_resolve_cases) == NULL ||
        CU_add_test(s, "resolved conditionals: template boundaries moved",
                    test_resolve_cuts) == NULL ||
        CU_add_test(s, "resolved conditionals: a template's own voters",
                    test_resolve_voters) == NULL ||
        CU_add_test(s, "resolved conditionals: every spec kernel "
                    "preprocesses the same",
                    test_resolve_equivalent) == NULL) {
        return -1;
    }
    return 0;
}
