/* test_emit.c - emitted text: golden files (tests/golden, refreshed on
 * purpose by `make golden-update`), header comments and symbol prefixes,
 * the .cl embedded in the .c, determinism of `specl gen` over every spec
 * in specs/, and atomic writes (no temporary files, nothing written for a
 * bad spec). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
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

static void test_golden(void)
{
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec(&s, GOLDEN_SPEC), 0);
    CU_ASSERT(s.n_kernel >= 5);
    int stale = 0;
    for (int k = 0; k < s.n_kernel; k++) {
        struct emitted e;
        char err[256] = "";
        int rc = emit_kernel(&s.kernel[k], &e, err, sizeof err);
        TU_CHECK(rc == 0, "%s: %s", s.kernel[k].name, err);
        if (rc != 0) {
            continue;
        }
        for (int i = 0; i < 3; i++) {
            char path[256];
            snprintf(path, sizeof path, GOLDEN_DIR "/%s.%s", e.name, exts[i]);
            size_t len = 0;
            char *want = tu_read(path, &len);
            const struct buf *got = emitted_file(&e, i);
            int same = want != NULL && len == got->len &&
                       memcmp(want, buf_str(got), len) == 0;
            TU_CHECK(same, "%s differs from what specl emits now%s", path,
                     want == NULL ? " (missing)" : "");
            if (!same) {
                stale = 1;
                if (want != NULL) {
                    tu_report_diff(path, want, buf_str(got));
                }
            }
            free(want);
        }
        emitted_free(&e);
    }
    if (stale) {
        fputs("\n    golden files are stale: if the change is intended, run "
              "`make golden-update` and review the diff\n",
              stderr);
    }
    /* Nothing in tests/golden but golden.yaml and its kernels' files. */
    char **names;
    int n = tu_list(GOLDEN_DIR, NULL, &names);
    TU_CHECK(n == 1 + 3 * s.n_kernel, GOLDEN_DIR " holds %d files, expected "
             "%d (golden.yaml and 3 per kernel)", n, 1 + 3 * s.n_kernel);
    if (n >= 0) {
        tu_free_list(names, n);
    }
    spec_set_free(&s);
}

/* The command line emits the same bytes as emit_kernel. */
static void test_golden_cli(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    int rc = tu_run("%s gen " GOLDEN_SPEC " -o '%s' >/dev/null", TU_SPECL,
                    tmp);
    CU_ASSERT_EQUAL(rc, 0);
    char **names;
    int n = tu_list(tmp, NULL, &names);
    CU_ASSERT(n >= 15);
    for (int i = 0; i < n; i++) {
        char *got_path = tu_path(tmp, names[i]);
        char *want_path = tu_path(GOLDEN_DIR, names[i]);
        size_t got_len = 0, want_len = 0;
        char *got = tu_read(got_path, &got_len);
        char *want = tu_read(want_path, &want_len);
        TU_CHECK(got != NULL && want != NULL && got_len == want_len &&
                     memcmp(got, want, got_len) == 0,
                 "specl gen: %s differs from %s", got_path, want_path);
        free(got);
        free(want);
        free(got_path);
        free(want_path);
    }
    if (n >= 0) {
        tu_free_list(names, n);
    }
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

/* The OpenCL source embedded in an emitted .c, as one string (caller
 * frees); NULL if the table is not found. */
static char *embedded_source(const char *c)
{
    const char *start = strstr(c, "specl_source[] = {\n");
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
        const char *q1 = strchr(line, '"');
        const char *q2 = eol - 2; /* the line ends in `",` */
        if (q1 != NULL && q1 < q2 && q2[0] == '"' && q2[1] == ',') {
            o += unescape(q1 + 1, (size_t)(q2 - q1 - 1), out + o);
        }
        line = eol + 1;
    }
    if (out != NULL) {
        out[o] = '\0';
    }
    return out;
}

static void test_emitted_shape(void)
{
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_spec(&s, GOLDEN_SPEC), 0);
    for (int k = 0; k < s.n_kernel; k++) {
        const struct kernel_spec *ks = &s.kernel[k];
        struct emitted e;
        char err[256] = "";
        CU_ASSERT_EQUAL_FATAL(emit_kernel(ks, &e, err, sizeof err), 0);
        for (int i = 0; i < 3; i++) {
            char head[512];
            snprintf(head, sizeof head,
                     "/* %s.%s - generated by specl %s from %s; do not "
                     "edit.\n",
                     ks->name, exts[i], SPECL_VERSION, GOLDEN_SPEC);
            const char *text = buf_str(emitted_file(&e, i));
            TU_CHECK(strncmp(text, head, strlen(head)) == 0,
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
        char *src = embedded_source(buf_str(&e.c));
        TU_CHECK(src != NULL && strcmp(src, buf_str(&e.cl)) == 0,
                 "%s.c: the embedded source is not %s.cl", ks->name,
                 ks->name);
        if (src != NULL && strcmp(src, buf_str(&e.cl)) != 0) {
            tu_report_diff("embedded source", buf_str(&e.cl), src);
        }
        free(src);
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
        CU_ASSERT_EQUAL_FATAL(emit_kernel(&s.kernel[k], &a, err, sizeof err),
                              0);
        CU_ASSERT_EQUAL_FATAL(emit_kernel(&s.kernel[k], &b, err, sizeof err),
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
 * the header says so; a spec's own knobs stay; a bad target is a usage
 * error that writes nothing. */
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

int add_emit_suite(void)
{
    CU_pSuite s = CU_add_suite("emit", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "golden files (emit_kernel)", test_golden) == NULL ||
        CU_add_test(s, "golden files (specl gen)", test_golden_cli) == NULL ||
        CU_add_test(s, "header, prefixes, embedded source",
                    test_emitted_shape) == NULL ||
        CU_add_test(s, "deterministic in process",
                    test_in_process_determinism) == NULL ||
        CU_add_test(s, "deterministic specl gen specs/*.yaml",
                    test_determinism) == NULL ||
        CU_add_test(s, "atomic, nothing half-written",
                    test_nothing_half_written) == NULL ||
        CU_add_test(s, "gen --target cpu", test_target_cpu) == NULL) {
        return -1;
    }
    return 0;
}
