/* test_layout.c - the emitted C laid out again once the stub templates'
 * holes are filled (gen/c_layout.c): each rule on small texts, a long
 * name's lines (the same tokens), and every NAME.c and NAME.h of the
 * specs of specs/ (within 80 columns, laid out already). The stub suite
 * builds every emitted stub. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_layout.h"
#include "suites.h"
#include "testutil.h"

/* TEXT laid out is WANT. */
static void check_layout(const char *text, const char *want)
{
    struct buf t;
    buf_init(&t);
    buf_puts(&t, text);
    c_layout(&t);
    TU_CHECK(strcmp(buf_str(&t), want) == 0,
             "laid out:\n%s--- got:\n%s--- wanted:\n%s", text, buf_str(&t),
             want);
    buf_free(&t);
}

static void test_layout_cases(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        /* A parameter list realigned under a longer name's parenthesis;
         * the rest of the line, a comment and a directive as they were. */
        {"int a_longer_name_f(int a, int b,\n"
         "                int c); /* (a, b) */\n"
         "#define X(a, b) \\\n    ((a) + (b))\n",
         "int a_longer_name_f(int a, int b,\n"
         "                    int c); /* (a, b) */\n"
         "#define X(a, b) \\\n    ((a) + (b))\n"},
        /* A string continued under itself, an operand 4 columns in: as
         * they were, the opener not having moved. */
        {"    f(x, \"a \"\n      \"b\");\n"
         "    if (a ||\n        g(b) !=\n            c) {\n    }\n",
         "    f(x, \"a \"\n      \"b\");\n"
         "    if (a ||\n        g(b) !=\n            c) {\n    }\n"},
        /* Past 80 columns: broken after the last ", " that fits, under
         * the parenthesis; a string's commas are no place to break. */
        {"    result = some_function_name(first_argument, second_argument, "
         "\"x, y, z\", 700);\n",
         "    result = some_function_name(first_argument, second_argument, "
         "\"x, y, z\",\n                                700);\n"},
        /* A comment that ends a long line moves above it. */
        {"    int variant; /* index in the variants of this kernel; -1 "
         "when none could be used */\n",
         "    /* index in the variants of this kernel; -1 when none could "
         "be used */\n    int variant;\n"},
        /* A directive's comment that takes it past 80 columns moves
         * above it; in a continued macro it stays. */
        {"#define a_kernel_name_of_more_than_forty_characters_ARG_SYNC "
         "(-1) /* the handle's */\n"
         "#define a_kernel_name_of_more_than_forty_characters_F(a) \\\n"
         "    a_kernel_name_of_more_than_forty_characters_G(a) /* its "
         "first argument, a */\n",
         "/* the handle's */\n"
         "#define a_kernel_name_of_more_than_forty_characters_ARG_SYNC "
         "(-1)\n"
         "#define a_kernel_name_of_more_than_forty_characters_F(a) \\\n"
         "    a_kernel_name_of_more_than_forty_characters_G(a) /* its "
         "first argument, a */\n"},
        /* A long comment line breaks between words, under its label's
         * text. */
        {"/* x.c\n * fields: in_features=4096 out_features=4096 rank=16 "
         "alpha=32 base=true* accumulate=false*\n */\n",
         "/* x.c\n * fields: in_features=4096 out_features=4096 rank=16 "
         "alpha=32 base=true*\n *         accumulate=false*\n */\n"},
        /* Prose flows into the next line of its paragraph; a labelled
         * line's rest does not. */
        {"/* Returns the error of the first variant tried when none of "
         "them can be built, and\n * the log.\n *   2: op defaults for "
         "NVIDIA tensor cores; for NVIDIA tensor cores (capability 8.0+)\n"
         " *      wg=64\n */\n",
         "/* Returns the error of the first variant tried when none of them "
         "can be built,\n * and the log.\n *   2: op defaults for NVIDIA "
         "tensor cores; for NVIDIA tensor cores (capability\n *      8.0+)\n"
         " *      wg=64\n */\n"},
        /* An initialiser whose brace stands too far right: its elements
         * on the lines below, 4 columns in. */
        {"static const char *const some_rather_long_kernel_names0[] = "
         "{\"lora_decode\", \"lora_xa\", \"lora_main\"};\n",
         "static const char *const some_rather_long_kernel_names0[] = {\n"
         "    \"lora_decode\", \"lora_xa\", \"lora_main\"};\n"},
        /* A declaration with no comma to break at: its declarator below
         * its type; an assignment's value below its "= ". */
        {"static const struct a_rather_long_kernel_name_variant_def "
         "a_rather_long_kernel_name_variants[3];\n"
         "    const struct some_kernel_path *path = "
         "some_kernel_variants[k->variant].paths;\n",
         "static const struct a_rather_long_kernel_name_variant_def\n"
         "    a_rather_long_kernel_name_variants[3];\n"
         "    const struct some_kernel_path *path =\n"
         "        some_kernel_variants[k->variant].paths;\n"},
        /* What a break left on a line of its own takes the element
         * that closes the parenthesis, where it fits. */
        {"static int a_kernel_name_fits(int v, const struct "
         "a_kernel_name_limits *lim, char *why,\n"
         "                   size_t why_size)\n",
         "static int a_kernel_name_fits(int v, const struct "
         "a_kernel_name_limits *lim,\n"
         "                              char *why, size_t why_size)\n"},
        /* No final newline: none added. */
        {"int f(int a,\n  int b);", "int f(int a, int b);"},
        /* A parenthesis' elements packed onto the lines before where
         * they fit; an initialiser's rows and a comment's line kept. */
        {"void g(int a,\n       int b,\n       int c)\n{\n}\n",
         "void g(int a, int b, int c)\n{\n}\n"},
        {"static const int t[] = {\n    1,\n    2};\n",
         "static const int t[] = {\n    1,\n    2};\n"},
        {"void h(int a, /* the first */\n       int b);\n",
         "void h(int a, /* the first */\n       int b);\n"},
        {"x = call(aaaaaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbb,\n"
         "         cccccccccccccccc,\n         dddddddddddddddddddd);\n",
         "x = call(aaaaaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbb,\n"
         "         cccccccccccccccc, dddddddddddddddddddd);\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_layout(cases[i].text, cases[i].want);
    }
}

/* TEXT without comments and blanks, strings whole: its tokens. */
static char *tokens(const char *text)
{
    char *out = malloc(strlen(text) + 1);
    size_t n = 0;
    char quote = 0;
    if (out == NULL) {
        return NULL;
    }
    for (const char *p = text; *p != '\0'; p++) {
        if (quote != 0) {
            out[n++] = *p;
            if (*p == '\\' && p[1] != '\0') {
                out[n++] = *++p;
            } else if (*p == quote) {
                quote = 0;
            }
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e != NULL ? e + 1 : p + strlen(p) - 1;
        } else if (*p == '"' || *p == '\'') {
            quote = *p;
            out[n++] = *p;
        } else if (*p != ' ' && *p != '\n') {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    return out;
}

/* Every NAME.c and NAME.h specl gen writes for the specs of specs/
 * (kernel names of up to 30 characters, in the training specs): no line
 * past 80 columns (the embedded kernel texts' too), and laid out already
 * (a second layout changes nothing); every NAME.cl's header comment
 * within 80 columns but its first line, which names the file and what
 * made it. */
static void test_layout_emitted(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    int rc = tu_run("%s gen specs/*.yaml -o '%s' >/dev/null", TU_SPECL, tmp);
    TU_CHECK(rc == 0, "specl gen specs/*.yaml: exit %d", rc);
    char **names;
    int n = tu_list(tmp, NULL, &names), checked = 0, headers = 0;
    for (int i = 0; i < n; i++) {
        const size_t len = strlen(names[i]);
        int cl = len > 3 && strcmp(names[i] + len - 3, ".cl") == 0;
        if (!cl && (len < 2 || (strcmp(names[i] + len - 2, ".c") != 0 &&
                                strcmp(names[i] + len - 2, ".h") != 0))) {
            continue;
        }
        char *path = tu_path(tmp, names[i]);
        char *text = tu_read(path, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        /* NAME.cl: its header comment, after its first line */
        const char *end = cl ? strstr(text, "\n */\n") : NULL;
        const char *from = cl ? strchr(text, '\n') + 1 : text;
        int line = cl ? 2 : 1, col = 0, longest = 0, at = 0;
        for (const char *p = from; *p != '\0' && (end == NULL || p <= end);
             p++) {
            if (*p == '\n') {
                if (col > longest) {
                    longest = col;
                    at = line;
                }
                line++;
                col = 0;
            } else {
                col++;
            }
        }
        TU_CHECK(longest <= C_LAYOUT_COLS, "%s:%d: %d columns", names[i], at,
                 longest);
        if (cl) {
            headers++;
        } else {
            struct buf again;
            buf_init(&again);
            buf_puts(&again, text);
            c_layout(&again);
            TU_CHECK(strcmp(buf_str(&again), text) == 0,
                     "%s: laid out again, it changes", names[i]);
            buf_free(&again);
            checked++;
        }
        free(text);
        free(path);
    }
    TU_CHECK(checked >= 120 && headers >= 60,
             "gen wrote %d .c and .h files, %d .cl", checked, headers);
    if (n >= 0) {
        tu_free_list(names, n);
    }
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* A stub's lines for a long name, broken and realigned: the same tokens,
 * comments aside. */
static void test_layout_tokens(void)
{
    static const char text[] =
        "static cl_int a_kernel_name_of_forty_characters_create_ranges("
        "struct a_kernel_name_of_forty_characters *_k, cl_context _ctx,\n"
        "                                   cl_device_id _dev, unsigned "
        "_have, /* (a, b) */\n"
        "                                   size_t _first, size_t _n)\n"
        "{\n"
        "    if (_ctx == NULL || a_kernel_name_of_forty_characters_check("
        "_dev, \"a, (b\", 'c', _first) != 0 || _n == 0) {\n"
        "        return -1;\n"
        "    }\n"
        "}\n";
    struct buf t;
    buf_init(&t);
    buf_puts(&t, text);
    c_layout(&t);
    char *t0 = tokens(text), *t1 = tokens(buf_str(&t));
    TU_CHECK(t0 != NULL && t1 != NULL && strcmp(t0, t1) == 0,
             "tokens changed:\n%s", buf_str(&t));
    free(t0);
    free(t1);
    buf_free(&t);
}

int add_layout_tests(CU_pSuite s)
{
    if (CU_add_test(s, "c layout: each rule, alone", test_layout_cases) ==
            NULL ||
        CU_add_test(s, "c layout: a long name's lines, the same tokens",
                    test_layout_tokens) == NULL ||
        CU_add_test(s, "c layout: the stubs of specs/ within 80 columns",
                    test_layout_emitted) == NULL) {
        return -1;
    }
    return 0;
}
