/* test_prune.c - the definitions no variant of a NAME.c uses, left out of
 * its kernel texts (gen/cl_prune.c), and the #define prelude cut to the
 * names a text uses: small texts of one and of two variants. Every
 * spec's kernels, pruned, still build: test_syntax.c and the stub
 * suites. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_prune.h"
#include "suites.h"
#include "testutil.h"

/* TEXT pruned alone is WANT. */
static void check_one(const char *text, const char *want)
{
    struct buf t;
    buf_init(&t);
    buf_puts(&t, text);
    cl_prune(&t, NULL, 1);
    TU_CHECK(strcmp(buf_str(&t), want) == 0,
             "pruned:\n%s\n--- got:\n%s--- wanted:\n%s", text, buf_str(&t),
             want);
    buf_free(&t);
}

/* Each text alone, and what is left of it. */
static void test_prune_cases(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        /* An unused function goes with the comment above it and one of
         * the blank lines around it; the used one and the kernel stay. */
        {"/* Dead. */\ninline int dead(int a)\n{\n    return a;\n}\n\n"
         "inline int used(int a) { return a + 1; }\n"
         "__kernel void k(__global int *p) { p[0] = used(1); }\n",
         "inline int used(int a) { return a + 1; }\n"
         "__kernel void k(__global int *p) { p[0] = used(1); }\n"},
        /* What only a dead function uses goes after it; a name in a
         * comment is no use. */
        {"inline int g(void) { return 2; }\n"
         "inline int f(void) { return g(); }\n"
         "/* f() and g() are not called. */\n"
         "__kernel void k(void) {}\n",
         "/* f() and g() are not called. */\n"
         "__kernel void k(void) {}\n"},
        /* Macros: continued lines go whole; a name an #if reads, or a
         * macro uses, stays. */
        {"#define DEAD(x) \\\n    ((x) + \\\n     1)\n#define FLAG 1\n"
         "#define TWICE(x) (2 * (x))\n#define FOUR TWICE(2)\n"
         "#if FLAG\n__kernel void k(__global int *p) { p[0] = FOUR; }\n"
         "#endif\n",
         "#define FLAG 1\n#define TWICE(x) (2 * (x))\n#define FOUR TWICE(2)\n"
         "#if FLAG\n__kernel void k(__global int *p) { p[0] = FOUR; }\n"
         "#endif\n"},
        /* A name a ## may paste together stays; one it cannot, goes. */
        {"#define LDS_4 4\n#define LDS_CAT(n) LDS_##n\n#define XY_4 4\n"
         "__kernel void k(__global int *p) { p[0] = LDS_CAT(4); }\n",
         "#define LDS_4 4\n#define LDS_CAT(n) LDS_##n\n"
         "__kernel void k(__global int *p) { p[0] = LDS_CAT(4); }\n"},
        /* A function with a conditional inside stays (its braces may
         * differ by branch); braces in quoted text and comments do not
         * count; a declaration is no definition. */
        {"inline int c(void)\n{\n#if A\n    return 1;\n#else\n"
         "    return 2;\n#endif\n}\n"
         "inline void s(void) { asm volatile(\"{ .reg .b32 r; \" :: ); }\n"
         "inline void d(void); /* { */\n"
         "__kernel void k(void) {}\n",
         "inline int c(void)\n{\n#if A\n    return 1;\n#else\n"
         "    return 2;\n#endif\n}\n"
         "inline void d(void); /* { */\n"
         "__kernel void k(void) {}\n"},
        /* Braces a conditional's branches open alike count once, so the
         * definitions after that kernel are still found. */
        {"__kernel void k(int x)\n{\n#if A\n    if (x) {\n#else\n"
         "    if (!x) {\n#endif\n    }\n}\ninline void late(void) {}\n",
         "__kernel void k(int x)\n{\n#if A\n    if (x) {\n#else\n"
         "    if (!x) {\n#endif\n    }\n}\n"},
        /* A definition inside a function is none of the outer level's;
         * a name used stays though defined twice. */
        {"__kernel void k(void)\n{\n#define INNER 1\n}\n"
         "#if A\n#define TWO 1\n#else\n#define TWO 2\n#endif\n"
         "__kernel void j(__global int *p) { p[0] = TWO; }\n",
         "__kernel void k(void)\n{\n#define INNER 1\n}\n"
         "#if A\n#define TWO 1\n#else\n#define TWO 2\n#endif\n"
         "__kernel void j(__global int *p) { p[0] = TWO; }\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_one(cases[i].text, cases[i].want);
    }
}

/* Two variants' texts: a definition one of them uses stays in both, so a
 * piece they share stays one; one neither uses goes from both; the
 * template boundaries follow. */
static void test_prune_variants(void)
{
    static const char shared[] =
        "inline int a(void) { return 1; }\n"
        "inline int b(void) { return 2; }\n"
        "inline int none(void) { return 3; }\n";
    static const char *const kernels[2] = {
        "__kernel void k(__global int *p) { p[0] = a(); }\n",
        "__kernel void k(__global int *p) { p[0] = b(); }\n"};
    static const char want_shared[] =
        "inline int a(void) { return 1; }\n"
        "inline int b(void) { return 2; }\n";
    struct buf t[2];
    struct render_cuts cuts[2];
    for (int v = 0; v < 2; v++) {
        buf_init(&t[v]);
        buf_puts(&t[v], shared);
        buf_puts(&t[v], kernels[v]);
        memset(&cuts[v], 0, sizeof cuts[v]);
        cuts[v].n = 2;
        cuts[v].cut[0] = (struct render_cut){0, "shared.cl"};
        cuts[v].cut[1] = (struct render_cut){strlen(shared), NULL};
    }
    cl_prune(t, cuts, 2);
    for (int v = 0; v < 2; v++) {
        size_t at = strlen(want_shared);
        TU_CHECK(strncmp(buf_str(&t[v]), want_shared, at) == 0 &&
                     strcmp(buf_str(&t[v]) + at, kernels[v]) == 0,
                 "variant %d:\n%s", v, buf_str(&t[v]));
        TU_CHECK(cuts[v].cut[0].at == 0 && cuts[v].cut[1].at == at,
                 "variant %d: cuts at %zu and %zu, wanted 0 and %zu", v,
                 cuts[v].cut[0].at, cuts[v].cut[1].at, at);
        buf_free(&t[v]);
    }
}

/* The prelude holds the defines the text uses, outside comments. */
static void test_prune_prelude(void)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    static const char *const names[] = {"USED", "IN_COMMENT", "UNUSED",
                                        "IN_IF"};
    for (int i = 0; i < 4; i++) {
        snprintf(p.define[i].name, sizeof p.define[i].name, "%s", names[i]);
        p.define[i].kind = DEFINE_INT;
        p.define[i].i = i;
    }
    p.n_define = 4;
    static const char text[] =
        "/* IN_COMMENT */\n#if IN_IF\n"
        "__kernel void k(__global int *p) { p[0] = USED; }\n#endif\n";
    struct buf out;
    buf_init(&out);
    cl_prelude_used(&p, text, strlen(text), &out);
    const char *o = buf_str(&out);
    TU_CHECK(strstr(o, "#define USED 0") != NULL &&
                 strstr(o, "#define IN_IF 3") != NULL &&
                 strstr(o, "IN_COMMENT") == NULL &&
                 strstr(o, "UNUSED") == NULL,
             "prelude:\n%s", o);
    buf_free(&out);
}

int add_prune_tests(CU_pSuite s)
{
    if (CU_add_test(s, "pruned definitions: each kind, alone",
                    test_prune_cases) == NULL ||
        CU_add_test(s, "pruned definitions: two variants, their cuts",
                    test_prune_variants) == NULL ||
        CU_add_test(s, "pruned definitions: the prelude's names",
                    test_prune_prelude) == NULL) {
        return -1;
    }
    return 0;
}
