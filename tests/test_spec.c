/* test_spec.c - the spec reader: valid specs read to the expected values,
 * bad-spec fixtures (tests/bad/NAME.yaml) give exactly the messages of
 * tests/bad/NAME.err in process and through `specl gen` (exit 1, nothing
 * written), the command line's exit codes, and fuzz regressions replayed. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emit.h"
#include "knobs.h"
#include "render.h"
#include "spec.h"
#include "suites.h"
#include "testutil.h"

#define GOOD_DIR "tests/good"
#define BAD_DIR "tests/bad"
#define REGRESSION_DIR "tests/fuzz/regressions"
#define MIN_BAD_FIXTURES 40

/* ---- helpers ----------------------------------------------------------- */

static const struct kernel_spec *find_kernel(const struct spec_set *s,
                                             const char *name)
{
    for (int i = 0; i < s->n_kernel; i++) {
        if (strcmp(s->kernel[i].name, name) == 0) {
            return &s->kernel[i];
        }
    }
    return NULL;
}

/* Reads PATH (which must be valid) into S; returns the error count, with
 * any messages printed so that a failure explains itself. */
static int read_good(struct spec_set *s, const char *path)
{
    struct diags d = {.out = stderr};
    spec_set_init(s);
    return spec_read_file(s, path, &d);
}

static const struct param_value *field(const struct kernel_spec *ks,
                                       const char *key)
{
    int i = op_field_index(ks->op, key);
    return i < 0 ? NULL : &ks->field[i];
}

static const struct param_value *knob(const struct kernel_spec *ks,
                                      const char *key)
{
    int i = op_knob_index(ks->op, key);
    return i < 0 ? NULL : &ks->knob[i];
}

/* Field or knob KEY of KS was given in the spec as VALUE at LINE:COL. */
static void expect_given(const struct kernel_spec *ks,
                         const struct param_value *v, const char *key,
                         double value, int line, int col)
{
    TU_CHECK(v != NULL, "%s: no parameter %s", ks->name, key);
    if (v == NULL) {
        return;
    }
    TU_CHECK(v->set, "%s: %s should be marked as given", ks->name, key);
    TU_CHECK(v->num == value, "%s: %s is %.9g, expected %.9g", ks->name, key,
             v->num, value);
    TU_CHECK(v->mark.line == line && v->mark.col == col,
             "%s: %s at %d:%d, expected %d:%d", ks->name, key, v->mark.line,
             v->mark.col, line, col);
}

/* Field KEY of KS was left out and has VALUE (its documented default). */
static void expect_default(const struct kernel_spec *ks,
                           const struct param_value *v, const char *key,
                           double value)
{
    TU_CHECK(v != NULL, "%s: no parameter %s", ks->name, key);
    if (v == NULL) {
        return;
    }
    TU_CHECK(!v->set, "%s: %s should not be marked as given", ks->name, key);
    TU_CHECK(v->num == value, "%s: default %s is %.9g, expected %.9g",
             ks->name, key, v->num, value);
}

/* Every knob KS left out is marked so, carries the kernel's mark and lies
 * within the knob's bounds; and the kernel plans and emits. */
static void expect_sane_defaults(const struct kernel_spec *ks)
{
    for (int i = 0; i < ks->op->n_knobs; i++) {
        const struct param_def *def = &ks->op->knobs[i];
        const struct param_value *v = &ks->knob[i];
        if (v->set) {
            continue;
        }
        TU_CHECK(v->mark.line == ks->mark.line && v->mark.col == ks->mark.col,
                 "%s: default knob %s should carry the kernel's mark",
                 ks->name, def->key);
        if (def->kind == VALUE_INT || def->kind == VALUE_FLOAT) {
            TU_CHECK(v->num >= def->min && v->num <= def->max,
                     "%s: default knob %s = %g outside [%g, %g]", ks->name,
                     def->key, v->num, def->min, def->max);
        }
        if (def->kind == VALUE_INT) {
            TU_CHECK(v->num == floor(v->num), "%s: knob %s = %g not whole",
                     ks->name, def->key, v->num);
        }
    }
    struct emitted e;
    char err[256] = "";
    int rc = emit_kernel(tu_gen_variants(ks), &e, err, sizeof err);
    TU_CHECK(rc == 0, "%s: emit_kernel failed: %s", ks->name, err);
    if (rc == 0) {
        emitted_free(&e);
    }
}

/* The public constant NAME of KS's plan, as emitted text (in TEXT); ""
 * if absent. */
static const char *plan_constant_text(const struct kernel_spec *ks,
                                      const char *name, char *text,
                                      size_t size)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    ks->op->plan(ks, &p);
    text[0] = '\0';
    for (int i = 0; i < p.n_constant; i++) {
        if (strcmp(p.constant[i].name, name) == 0) {
            define_text(&p.constant[i], text, size);
        }
    }
    return text;
}

static void expect_scale(const struct kernel_spec *ks, double scale,
                         const char *text)
{
    char buf[48];
    const char *got = plan_constant_text(ks, "SCALE", buf, sizeof buf);
    TU_CHECK(strcmp(got, text) == 0, "%s: SCALE is '%s', expected '%s'",
             ks->name, got, text);
    TU_CHECK(strtod(got, NULL) == scale, "%s: SCALE %s is not %g", ks->name,
             got, scale);
}

static int same_value(const struct param_value *a,
                      const struct param_value *b)
{
    return a->set == b->set && a->num == b->num &&
           a->mark.line == b->mark.line && a->mark.col == b->mark.col;
}

static int same_kernel(const struct kernel_spec *a,
                       const struct kernel_spec *b)
{
    if (strcmp(a->name, b->name) != 0 || a->op != b->op ||
        a->dtype != b->dtype || a->tile_auto != b->tile_auto ||
        a->mark.line != b->mark.line || a->mark.col != b->mark.col) {
        return 0;
    }
    for (int i = 0; i < a->op->n_fields; i++) {
        if (!same_value(&a->field[i], &b->field[i])) {
            return 0;
        }
    }
    for (int i = 0; i < a->op->n_knobs; i++) {
        if (!same_value(&a->knob[i], &b->knob[i])) {
            return 0;
        }
    }
    return 1;
}

/* ---- valid specs ------------------------------------------------------- */

static void test_good_lora(void)
{
    struct spec_set s;
    int errors = read_good(&s, GOOD_DIR "/lora.yaml");
    CU_ASSERT_EQUAL_FATAL(errors, 0);
    CU_ASSERT_EQUAL(s.n_kernel, 3);

    const struct kernel_spec *k = find_kernel(&s, "good_lora");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_STRING_EQUAL(k->op->name, "lora_forward");
    CU_ASSERT_STRING_EQUAL(k->file, GOOD_DIR "/lora.yaml");
    CU_ASSERT_EQUAL(k->mark.line, 5);
    CU_ASSERT_EQUAL(k->mark.col, 5);
    TU_CHECK(k->dtype == DTYPE_F16, "good_lora: dtype from defaults is %s",
             dtype_name(k->dtype));
    CU_ASSERT_FALSE(k->tile_auto);
    expect_given(k, field(k, "in_features"), "in_features", 512, 7, 18);
    expect_given(k, field(k, "out_features"), "out_features", 256, 8, 19);
    expect_given(k, field(k, "rank"), "rank", 8, 9, 11);
    expect_given(k, field(k, "alpha"), "alpha", 16, 10, 12);
    TU_CHECK(!field(k, "scale")->set, "scale was not given");
    expect_default(k, field(k, "base"), "base", 1);
    expect_default(k, field(k, "accumulate"), "accumulate", 0);
    expect_scale(k, 2.0, "2.0f"); /* alpha / rank */
    expect_given(k, knob(k, "m"), "m", 64, 11, 16);
    expect_given(k, knob(k, "n"), "n", 64, 11, 23);
    expect_given(k, knob(k, "k"), "k", 16, 11, 30);
    expect_given(k, knob(k, "wm"), "wm", 4, 11, 38);
    expect_given(k, knob(k, "wn"), "wn", 4, 11, 45);
    expect_default(k, knob(k, "vec"), "vec", 4); /* widest dividing all */
    expect_sane_defaults(k);

    k = find_kernel(&s, "good_lora_delta");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    TU_CHECK(k->dtype == DTYPE_BF16, "good_lora_delta: per-kernel dtype is %s",
             dtype_name(k->dtype));
    CU_ASSERT_TRUE(k->tile_auto);
    expect_given(k, field(k, "scale"), "scale", 0.5, 18, 12);
    expect_given(k, field(k, "base"), "base", 0, 19, 11);
    expect_given(k, field(k, "accumulate"), "accumulate", 1, 20, 17);
    TU_CHECK(!field(k, "alpha")->set, "alpha was not given");
    expect_scale(k, 0.5, "0.5f");
    for (int i = 0; i < k->op->n_knobs; i++) {
        TU_CHECK(!k->knob[i].set, "tile: auto sets no knob (%s is set)",
                 k->op->knobs[i].key);
    }
    struct plan p;
    memset(&p, 0, sizeof p);
    k->op->plan(k, &p);
    TU_CHECK(p.n_buffer == 5 && strcmp(p.buffer[1].name, "w") == 0 &&
                 p.buffer[1].optional,
             "base: false makes w optional");
    expect_sane_defaults(k);

    k = find_kernel(&s, "good_lora_plain");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(k->dtype, DTYPE_F32);
    expect_default(k, field(k, "base"), "base", 1);
    expect_scale(k, 1.0, "1.0f"); /* neither alpha nor scale */
    expect_sane_defaults(k);
    spec_set_free(&s);
}

static void test_good_rows(void)
{
    struct spec_set s;
    int errors = read_good(&s, GOOD_DIR "/rows.yaml");
    CU_ASSERT_EQUAL_FATAL(errors, 0);
    CU_ASSERT_EQUAL(s.n_kernel, 4);

    const struct kernel_spec *k = find_kernel(&s, "good_softmax");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(k->dtype, DTYPE_F32); /* no defaults: f32 */
    expect_given(k, field(k, "features"), "features", 1024, 5, 15);
    expect_default(k, field(k, "scale"), "scale", 1.0);
    expect_default(k, knob(k, "vec"), "vec", 4); /* the largest dividing */
    expect_sane_defaults(k);
    CU_ASSERT(k->knob[op_knob_index(k->op, "wg")].num *
                  k->knob[op_knob_index(k->op, "rows")].num <=
              1024);

    k = find_kernel(&s, "good_softmax_scaled");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    expect_given(k, field(k, "features"), "features", 1002, 8, 15);
    expect_given(k, field(k, "scale"), "scale", -0.125, 9, 12);
    expect_given(k, knob(k, "wg"), "wg", 64, 11, 11);
    expect_given(k, knob(k, "rows"), "rows", 2, 12, 13);
    expect_given(k, knob(k, "vec"), "vec", 2, 13, 12);
    expect_given(k, knob(k, "mode"), "mode", 2, 14, 13); /* streaming */
    expect_sane_defaults(k);

    k = find_kernel(&s, "good_rmsnorm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(k->dtype, DTYPE_BF16);
    expect_default(k, field(k, "eps"), "eps", 1e-5);
    expect_sane_defaults(k);

    k = find_kernel(&s, "good_layernorm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(k->dtype, DTYPE_F16);
    CU_ASSERT_TRUE(k->tile_auto);
    expect_given(k, field(k, "eps"), "eps", 1e-6, 22, 10);
    expect_default(k, knob(k, "vec"), "vec", 8); /* 16 bytes of f16 */
    expect_sane_defaults(k);
    spec_set_free(&s);
}

static void test_good_other(void)
{
    struct spec_set s;
    CU_ASSERT_EQUAL_FATAL(read_good(&s, GOOD_DIR "/flow.yaml"), 0);
    CU_ASSERT_EQUAL(s.n_kernel, 2);
    const struct kernel_spec *k = find_kernel(&s, "flow1_");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    expect_given(k, field(k, "features"), "features", 7, 3, 55);
    expect_given(k, field(k, "eps"), "eps", 2.5e-3, 3, 63);
    expect_default(k, knob(k, "vec"), "vec", 1); /* 7 is odd */
    CU_ASSERT_PTR_NOT_NULL(find_kernel(&s, "Flow_2"));
    spec_set_free(&s);

    CU_ASSERT_EQUAL_FATAL(read_good(&s, GOOD_DIR "/names.yaml"), 0);
    CU_ASSERT_EQUAL(s.n_kernel, 13);
    CU_ASSERT_PTR_NOT_NULL(find_kernel(
        &s, "n23456789012345678901234567890123456789012345678901234567890123"));
    CU_ASSERT_PTR_NOT_NULL(find_kernel(&s, "integer"));
    CU_ASSERT_PTR_NOT_NULL(find_kernel(&s, "kernel_"));
    CU_ASSERT_PTR_NOT_NULL(find_kernel(&s, "Linux"));
    CU_ASSERT_PTR_NOT_NULL(find_kernel(&s, "pair_delta"));
    CU_ASSERT_PTR_NOT_NULL(find_kernel(&s, "ctx"));
    CU_ASSERT_PTR_NOT_NULL(find_kernel(&s, "launch"));
    spec_set_free(&s);

    CU_ASSERT_EQUAL_FATAL(read_good(&s, GOOD_DIR "/late_defaults.yaml"), 0);
    k = find_kernel(&s, "late_softmax");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    TU_CHECK(k->dtype == DTYPE_BF16, "late defaults: dtype is %s",
             dtype_name(k->dtype));
    k = find_kernel(&s, "late_rmsnorm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(k->dtype, DTYPE_F32);
    spec_set_free(&s);
}

/* Every valid spec of the repository reads; reading from memory gives the
 * same kernels as reading the file. */
static void test_good_all(void)
{
    static const char *const dirs[] = {GOOD_DIR, "specs", NULL};
    int files = 0;
    for (int di = 0; dirs[di] != NULL; di++) {
        char **names;
        int n = tu_list(dirs[di], ".yaml", &names);
        TU_CHECK(n > 0, "%s holds no spec", dirs[di]);
        for (int i = 0; i < n; i++) {
            char *path = tu_path(dirs[di], names[i]);
            struct spec_set a, b;
            int errors = read_good(&a, path);
            TU_CHECK(errors == 0, "%s: %d errors", path, errors);
            size_t len;
            char *text = tu_read(path, &len);
            CU_ASSERT_PTR_NOT_NULL(text);
            struct diags quiet = {.out = NULL};
            spec_set_init(&b);
            if (text != NULL) {
                spec_read_buffer(&b, path, (const unsigned char *)text, len,
                                 &quiet);
            }
            int same = a.n_kernel == b.n_kernel && a.n_kernel > 0;
            for (int k = 0; same && k < a.n_kernel; k++) {
                same = same_kernel(&a.kernel[k], &b.kernel[k]);
            }
            TU_CHECK(same, "%s: spec_read_buffer differs from spec_read_file",
                     path);
            for (int k = 0; k < a.n_kernel; k++) {
                expect_sane_defaults(&a.kernel[k]);
            }
            free(text);
            spec_set_free(&a);
            spec_set_free(&b);
            free(path);
            files++;
        }
        tu_free_list(names, n);
    }
    CU_ASSERT(files >= 5);
}

/* Kernel names must be unique across all files read into one set. */
static void test_duplicate_across_files(void)
{
    struct spec_set s;
    char *out = NULL;
    size_t size = 0;
    spec_set_init(&s);
    struct diags d = {.out = open_memstream(&out, &size)};
    CU_ASSERT_PTR_NOT_NULL_FATAL(d.out);
    CU_ASSERT_EQUAL(spec_read_file(&s, GOOD_DIR "/rows.yaml", &d), 0);
    CU_ASSERT_EQUAL(spec_read_file(&s, GOOD_DIR "/flow.yaml", &d), 0);
    CU_ASSERT_EQUAL(spec_read_file(&s, GOOD_DIR "/rows.yaml", &d), 4);
    fclose(d.out);
    CU_ASSERT_EQUAL(s.n_kernel, 6); /* nothing of the bad file is kept */
    const char *want =
        GOOD_DIR "/rows.yaml:3:11: error: duplicate kernel name "
                 "'good_softmax' (first defined at " GOOD_DIR
                 "/rows.yaml:3:5)\n";
    TU_CHECK(out != NULL && strncmp(out, want, strlen(want)) == 0,
             "got:\n%s", out ? out : "");
    free(out);
    spec_set_free(&s);

    /* A file that cannot be opened is one error naming it. */
    spec_set_init(&s);
    out = NULL;
    d.count = 0;
    d.out = open_memstream(&out, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d.out);
    CU_ASSERT_EQUAL(spec_read_file(&s, GOOD_DIR "/no_such.yaml", &d), 1);
    fclose(d.out);
    TU_CHECK(out != NULL &&
                 strcmp(out, GOOD_DIR "/no_such.yaml: error: cannot open: "
                             "No such file or directory\n") == 0,
             "got: %s", out ? out : "");
    free(out);
    spec_set_free(&s);
}

static void test_identifiers(void)
{
    static const char *const good[] = {"a", "_", "_9", "A_b9", "integer",
                                       "kernel_", NULL};
    static const char *const bad[] = {"", "9abc", "a-b", "a b", "int",
                                      "while", "kernel", "global",
                                      "caf\xc3\xa9", NULL};
    for (int i = 0; good[i] != NULL; i++) {
        TU_CHECK(spec_is_identifier(good[i]), "'%s' is an identifier",
                 good[i]);
    }
    for (int i = 0; bad[i] != NULL; i++) {
        TU_CHECK(!spec_is_identifier(bad[i]), "'%s' is no identifier",
                 bad[i]);
    }
    char name[SPECL_NAME_MAX + 1];
    memset(name, 'x', sizeof name);
    name[SPECL_NAME_MAX - 1] = '\0';
    CU_ASSERT_TRUE(spec_is_identifier(name)); /* 63 characters */
    name[SPECL_NAME_MAX - 1] = 'x';
    name[SPECL_NAME_MAX] = '\0';
    CU_ASSERT_FALSE(spec_is_identifier(name)); /* 64 */
}

/* ---- kernel names ------------------------------------------------------ */

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads spec TEXT into a fresh S; returns the error count, with what was
 * reported in *MESSAGES (caller frees) when MESSAGES is not NULL. */
static int read_text(struct spec_set *s, const char *text, char **messages)
{
    char *out = NULL;
    size_t size = 0;
    struct diags d = {.out = open_memstream(&out, &size)};
    spec_set_init(s);
    if (d.out == NULL) {
        return -1;
    }
    int errors = spec_read_buffer(s, "<text>", (const unsigned char *)text,
                                  strlen(text), &d);
    fclose(d.out);
    if (messages != NULL) {
        *messages = out;
    } else {
        free(out);
    }
    return errors;
}

/* A flow mapping of OP's example fields ("in_features: 4096, ...") in
 * BUF: a kernel of OP that validates. */
static const char *example_fields(const struct op_def *op, char *buf,
                                  size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *c = op->example; c != NULL && *c && n + 3 < size; c++) {
        buf[n++] = *c == '=' ? ':' : *c == ' ' ? ',' : *c;
        if (*c == '=' || *c == ' ') {
            buf[n++] = ' ';
        }
    }
    buf[n] = '\0';
    return buf;
}

/* The suffixes t of the tokens NAME_t in TEXT, appended to T (unique). */
static int symbol_suffixes_in(const char *text, const char *name,
                              char (*t)[64], int n, int max)
{
    size_t len = strlen(name);
    for (const char *p = strstr(text, name); p != NULL;
         p = strstr(p + 1, name)) {
        if ((p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
            p[len] != '_') {
            continue;
        }
        size_t k = 0;
        char suffix[64];
        for (const char *q = p + len + 1;
             (isalnum((unsigned char)*q) || *q == '_') && k + 1 < sizeof suffix;
             q++) {
            suffix[k++] = *q;
        }
        suffix[k] = '\0';
        int known = k == 0;
        for (int i = 0; i < n && !known; i++) {
            known = strcmp(t[i], suffix) == 0;
        }
        if (!known && n < max) {
            snprintf(t[n++], sizeof t[0], "%s", suffix);
        }
    }
    return n;
}

/* Two kernels whose emitted symbols collide are refused, in either order
 * and across files; the suffixes come from what the emitter writes (every
 * op's header and naive stub), so a new constant or API function is
 * covered or this test says which is not. */
static void test_name_clashes(void)
{
    struct spec_set golden, s;
    char t[256][64];
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(read_good(&golden, "tests/golden/golden.yaml"), 0);
    for (int k = 0; k < golden.n_kernel; k++) {
        const struct kernel_spec *ks = &golden.kernel[k];
        struct emitted e;
        char err[256];
        if (emit_kernel(tu_gen_variants(ks), &e, err, sizeof err) == 0) {
            n = symbol_suffixes_in(buf_str(&e.h), ks->name, t, n, 256);
            emitted_free(&e);
        }
        if (emit_naive(ks, &e, err, sizeof err) == 0) {
            n = symbol_suffixes_in(buf_str(&e.h), ks->name, t, n, 256);
            emitted_free(&e);
        }
    }
    spec_set_free(&golden);
    TU_CHECK(n >= 16, "only %d symbol suffixes found", n);
    for (int o = 0; op_registry[o] != NULL; o++) {
        char fields[256], text[1024], *msg = NULL;
        example_fields(op_registry[o], fields, sizeof fields);
        for (int i = 0; i < n; i++) {
            for (int order = 0; order < 2; order++) {
                char pline[400], tline[200];
                snprintf(pline, sizeof pline, "  - {name: p, op: %s, %s}\n",
                         op_registry[o]->name, fields);
                snprintf(tline, sizeof tline,
                         "  - {name: p_%.63s, op: softmax, features: 8}\n",
                         t[i]);
                snprintf(text, sizeof text, "kernels:\n%s%s",
                         order ? tline : pline, order ? pline : tline);
                int errors = read_text(&s, text, &msg);
                TU_CHECK(errors == 1 && strstr(msg, "clashes with kernel"),
                         "kernels p (%s) and p_%s: %d errors\n%s",
                         op_registry[o]->name, t[i], errors, msg);
                free(msg);
                spec_set_free(&s);
            }
        }
        /* A tail that is no symbol's: fine. */
        snprintf(text, sizeof text,
                 "kernels:\n  - {name: p, op: %s, %s}\n"
                 "  - {name: p_delta, op: softmax, features: 8}\n"
                 "  - {name: p_IN_x, op: softmax, features: 8}\n",
                 op_registry[o]->name, fields);
        int errors = read_text(&s, text, &msg);
        TU_CHECK(errors == 0, "p and p_delta: %s", msg);
        free(msg);
        spec_set_free(&s);
    }

    /* Across files, naming both places; a file with errors leaves no name
     * behind. */
    char *out = NULL;
    size_t size = 0;
    struct diags d = {.out = open_memstream(&out, &size)};
    static const char a[] = "kernels:\n  - {name: x, op: softmax, "
                            "features: 8}\n";
    static const char bad[] = "kernels:\n  - {name: y, op: softmax, "
                              "features: 8}\n  - {name: z, op: nope}\n";
    static const char b[] = "kernels:\n  - {name: y_create, op: softmax, "
                            "features: 8}\n  - {name: x_naive, op: softmax, "
                            "features: 8}\n";
    spec_set_init(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d.out);
    CU_ASSERT_EQUAL(spec_read_buffer(&s, "a.yaml", (const unsigned char *)a,
                                     strlen(a), &d), 0);
    CU_ASSERT_EQUAL(spec_read_buffer(&s, "bad.yaml",
                                     (const unsigned char *)bad, strlen(bad),
                                     &d), 1);
    CU_ASSERT_EQUAL(spec_read_buffer(&s, "b.yaml", (const unsigned char *)b,
                                     strlen(b), &d), 1);
    fclose(d.out);
    const char *want =
        "b.yaml:3:12: error: kernel name 'x_naive' clashes with kernel 'x' "
        "(defined at a.yaml:2:5)";
    TU_CHECK(out != NULL && strstr(out, want) != NULL &&
                 strstr(out, "y_create") == NULL,
             "got:\n%s", out ? out : "");
    CU_ASSERT_EQUAL(s.n_kernel, 1);
    free(out);
    spec_set_free(&s);

    /* A set built by hand (as numeric_util.c's nu_adopt does) is indexed
     * before the next file is read into it. */
    struct spec_set one;
    CU_ASSERT_EQUAL_FATAL(read_text(&s, a, NULL), 0);
    spec_set_init(&one);
    one.kernel = malloc(sizeof *one.kernel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one.kernel);
    one.kernel[0] = s.kernel[0];
    one.n_kernel = one.cap = 1;
    struct diags quiet = {.out = NULL};
    CU_ASSERT_EQUAL(spec_read_buffer(&one, "a.yaml",
                                     (const unsigned char *)a, strlen(a),
                                     &quiet), 1);
    spec_set_free(&one);
    spec_set_free(&s);
}

/* Where NAME may be written: not with the tables' names (sorted, as
 * bsearch needs), nor with the names the system's headers define or
 * declare. A failure lists the names spec_names.c lacks. */
static void test_reserved_names(void)
{
    static const char *const refused[] = {
        "linux", "unix", "i386", "INT8_MAX", "int_least8_t", "MB_CUR_MAX",
        "llabs", "setenv", "typeof", "constexpr", "static_assert",
        "thread_local", "alignas", "alignof", "char16_t", "char32_t",
        "concept", "requires", "char8_t", "consteval", "co_await", "cl",
        "cl_x", "CL_X", "clFinish", "specl", "specl_x", "SPECL_X", "_x",
        "__x", "_X", "int", "kernel", NULL};
    static const char *const allowed[] = {"Linux", "x", "clamp", "Specl",
                                          "integer", "kernel_", "cl2",
                                          NULL};
    char why[256];
    int n_table = 0;
    for (const char *name; (name = spec_reserved_table_name(n_table)) != NULL;
         n_table++) {
        TU_CHECK(spec_name_reserved(name, why, sizeof why),
                 "table name '%s' is not refused (tables unsorted?)", name);
    }
    CU_ASSERT(n_table > 500);
    for (int i = 0; refused[i] != NULL; i++) {
        TU_CHECK(spec_name_reserved(refused[i], why, sizeof why) &&
                     strncmp(why, "'", 1) == 0 && strstr(why, refused[i]),
                 "'%s' is not refused", refused[i]);
    }
    for (int i = 0; allowed[i] != NULL; i++) {
        TU_CHECK(!spec_name_reserved(allowed[i], why, sizeof why),
                 "'%s' is refused: %s", allowed[i], why);
    }

    /* The headers as this machine's compilers see them: C in its default
     * dialect and with _GNU_SOURCE; C++ for what NAME.h includes. */
    static const struct {
        const char *cc, *headers;
    } modes[] = {
        {"cc -std=gnu17", "CL/cl.h stddef.h limits.h stdint.h stdio.h "
                          "stdlib.h string.h"},
        {"cc -std=gnu17 -D_GNU_SOURCE", "CL/cl.h stddef.h limits.h stdint.h "
                                        "stdio.h stdlib.h string.h"},
        {"c++ -x c++", "CL/cl.h stddef.h"},
    };
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        char path[4300], *text;
        FILE *f;
        snprintf(path, sizeof path, "%s/h.c", tmp);
        f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        char headers[200];
        snprintf(headers, sizeof headers, "%s", modes[m].headers);
        for (char *h = strtok(headers, " "); h; h = strtok(NULL, " ")) {
            fprintf(f, "#include <%s>\n", h);
        }
        fclose(f);
        if (tu_run("cd '%s' && %s -E -dM h.c >macros 2>/dev/null && %s -E "
                   "h.c >pp 2>/dev/null",
                   tmp, modes[m].cc, modes[m].cc) != 0) {
            TU_CHECK(m == 2, "%s cannot preprocess the headers", modes[m].cc);
            continue; /* no C++ compiler: nothing to check */
        }
        /* Every macro, predefined or the headers'. */
        snprintf(path, sizeof path, "%s/macros", tmp);
        text = tu_read(path, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        char missing[4096] = "";
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
            char name[128];
            if (sscanf(line, "#define %127[A-Za-z0-9_]", name) == 1 &&
                !spec_name_reserved(name, why, sizeof why) &&
                strlen(missing) + strlen(name) + 2 < sizeof missing) {
                strcat(missing, " ");
                strcat(missing, name);
            }
        }
        free(text);
        TU_CHECK(missing[0] == '\0',
                 "%s: macros of the headers not refused as kernel names:%s",
                 modes[m].cc, missing);
        /* Every identifier of the preprocessed headers that is not refused
         * must compile as `typedef struct N N; struct N {...};`. */
        snprintf(path, sizeof path, "%s/pp", tmp);
        text = tu_read(path, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        size_t cap = 1024, n = 0;
        char **ids = malloc(cap * sizeof *ids);
        for (char *p = text; *p;) {
            if (*p == '#' && (p == text || p[-1] == '\n')) {
                p += strcspn(p, "\n");
            } else if (isalpha((unsigned char)*p) || *p == '_') {
                char *q = p;
                while (isalnum((unsigned char)*q) || *q == '_') {
                    q++;
                }
                char save = *q;
                *q = '\0';
                if (q - p < SPECL_NAME_MAX &&
                    !spec_name_reserved(p, why, sizeof why)) {
                    if (n == cap) {
                        ids = realloc(ids, (cap *= 2) * sizeof *ids);
                    }
                    ids[n++] = strdup(p);
                }
                *q = save;
                p = q;
            } else if (isdigit((unsigned char)*p)) {
                while (isalnum((unsigned char)*p) || *p == '_' || *p == '.') {
                    p++;
                }
            } else {
                p++;
            }
        }
        free(text);
        qsort(ids, n, sizeof *ids, compare_strings);
        snprintf(path, sizeof path, "%s/oracle.c", tmp);
        f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fprintf(f, "#include \"h.c\"\n");
        size_t lines = 0;
        char **line_name = malloc((n + 1) * sizeof *line_name);
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && strcmp(ids[i], ids[i - 1]) == 0) {
                continue;
            }
            fprintf(f, "typedef struct %s %s; struct %s { int specl_m; };\n",
                    ids[i], ids[i], ids[i]);
            line_name[lines++] = ids[i];
        }
        fclose(f);
        int rc = tu_run("cd '%s' && %s -fsyntax-only oracle.c 2>log >&2",
                        tmp, modes[m].cc);
        missing[0] = '\0';
        if (rc != 0) {
            snprintf(path, sizeof path, "%s/log", tmp);
            text = tu_read(path, NULL);
            for (char *line = text ? strtok(text, "\n") : NULL; line;
                 line = strtok(NULL, "\n")) {
                unsigned long l;
                if (sscanf(line, "oracle.c:%lu:", &l) == 1 && l >= 2 &&
                    l - 2 < lines && strstr(line, "error") &&
                    strstr(missing, line_name[l - 2]) == NULL &&
                    strlen(missing) + strlen(line_name[l - 2]) + 2 <
                        sizeof missing) {
                    strcat(missing, " ");
                    strcat(missing, line_name[l - 2]);
                }
            }
            free(text);
        }
        TU_CHECK(rc == 0, "%s: names the headers declare are not refused as "
                 "kernel names (add them to gen/spec_names.c):%s",
                 modes[m].cc, missing);
        for (size_t i = 0; i < n; i++) {
            free(ids[i]);
        }
        free(ids);
        free(line_name);
    }
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* ---- scale --------------------------------------------------------------- */

/* A spec of N kernels (every op; names with underscores, as real ones
 * have) and, when KEYS, one more kernel with N unknown keys. */
static char *many_kernels(int n, int keys, size_t *len)
{
    size_t cap = (size_t)n * 160 + 256, used = 0;
    char *text = malloc(cap);
    if (text == NULL) {
        return NULL;
    }
    used += (size_t)snprintf(text, cap, "kernels:\n");
    for (int i = 0; i < n && !keys; i++) {
        static const char *const body[] = {
            "op: softmax, features: 1024",
            "op: rmsnorm, features: 4096, eps: 1.0e-5",
            ("op: lora_forward, in_features: 4096, out_features: 4096, "
             "rank: 16, alpha: 32"),
            "op: layernorm, features: 2048"};
        used += (size_t)snprintf(text + used, cap - used,
                                 "  - {name: layer_%06d_proj, %s}\n", i,
                                 body[i % 4]);
    }
    if (keys) {
        used += (size_t)snprintf(text + used, cap - used,
                                 "  - name: k\n    op: softmax\n"
                                 "    features: 64\n");
        for (int i = 0; i < n; i++) {
            used += (size_t)snprintf(text + used, cap - used,
                                     "    key_%d: 1\n", i);
        }
    }
    *len = used;
    return text;
}

/* CPU seconds spec_read_buffer takes for TEXT (the least of five: other
 * processes on the machine cost it cache misses). */
static double read_seconds(const char *text, size_t len, int *errors)
{
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        struct spec_set s;
        struct diags quiet = {.out = NULL};
        spec_set_init(&s);
        clock_t t0 = clock();
        *errors = spec_read_buffer(&s, "<many>", (const unsigned char *)text,
                                   len, &quiet);
        double t = (double)(clock() - t0) / CLOCKS_PER_SEC;
        best = t < best ? t : best;
        spec_set_free(&s);
    }
    return best;
}

/* Reading is linear: eight times the kernels (or the keys of a mapping)
 * take about eight times as long, not sixty-four. The bound allows 24:
 * the larger set's tens of megabytes of kernels cost cache misses and
 * page faults of their own, more so on a loaded machine (four times the
 * kernels measured up to 14 times as long there). */
static void test_scale_linear(void)
{
    enum { N = 2000, K = 8 };
    for (int keys = 0; keys < 2; keys++) {
        size_t len1, lenk;
        int e1, ek;
        char *one = many_kernels(N, keys, &len1);
        char *many = many_kernels(K * N, keys, &lenk);
        CU_ASSERT_PTR_NOT_NULL_FATAL(one);
        CU_ASSERT_PTR_NOT_NULL_FATAL(many);
        double t1 = read_seconds(one, len1, &e1);
        double tk = read_seconds(many, lenk, &ek);
        TU_CHECK(keys ? e1 == N && ek == K * N : e1 == 0 && ek == 0,
                 "%d and %d errors", e1, ek);
        TU_CHECK(tk < 3 * K * t1 + 0.05,
                 "%s: %d take %.3f s, %d take %.3f s: not linear",
                 keys ? "keys of a mapping" : "kernels", N, t1, K * N, tk);
        free(one);
        free(many);
    }
}

/* `specl check` validates without rendering: 4000 lora kernels take
 * well under the seconds their emission takes. */
static void test_check_does_not_render(void)
{
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    char *path = tu_path(tmp, "many.yaml");
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("kernels:\n", f);
    for (int i = 0; i < 4000; i++) {
        fprintf(f, "  - {name: lora_%d, op: lora_forward, in_features: 4096, "
                   "out_features: 4096, rank: 16, alpha: 32}\n", i);
    }
    fclose(f);
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    int rc = tu_run("%s check '%s' >/dev/null", TU_SPECL, path);
    getrusage(RUSAGE_CHILDREN, &after);
    double cpu = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                 (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec) /
                     1e6;
    CU_ASSERT_EQUAL(rc, 0);
    TU_CHECK(cpu < 2.0, "specl check of 4000 kernels took %.2f s of CPU",
             cpu);
    free(path);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* ---- bad specs --------------------------------------------------------- */

/* The errors among MESSAGES (lines): the notes that follow some explain
 * them and are not counted. */
static int count_errors(const char *messages)
{
    int n = 0;
    for (const char *p = messages; (p = strstr(p, ": error: ")) != NULL;
         p++) {
        n++;
    }
    return n;
}

/* Reads fixture PATH in process; its messages must equal EXPECTED. */
static void check_fixture_in_process(const char *path, const char *expected)
{
    struct spec_set s;
    char *out = NULL;
    size_t size = 0;
    spec_set_init(&s);
    struct diags d = {.out = open_memstream(&out, &size)};
    CU_ASSERT_PTR_NOT_NULL_FATAL(d.out);
    int errors = spec_read_file(&s, path, &d);
    fclose(d.out);
    const char *got = out != NULL ? out : "";
    TU_CHECK(strcmp(got, expected) == 0,
             "%s: messages differ\n--- expected\n%s--- got\n%s", path,
             expected, got);
    TU_CHECK(errors > 0 && errors == d.count &&
                 errors == count_errors(expected),
             "%s: %d errors reported, %d expected", path, errors,
             count_errors(expected));
    TU_CHECK(s.n_kernel == 0, "%s: kept %d kernels of a bad file", path,
             s.n_kernel);
    free(out);
    spec_set_free(&s);
}

/* Runs `specl gen PATH -o DIR` with DIR fresh and empty: exit 1, the same
 * messages plus the summary line on stderr, and DIR still empty. */
static void check_fixture_cli(const char *tmp, const char *name,
                              const char *path, const char *expected)
{
    char *dir = tu_path(tmp, name);
    char log[4200];
    snprintf(log, sizeof log, "%s.stderr", dir);
    CU_ASSERT_EQUAL_FATAL(tu_run("mkdir '%s'", dir), 0);
    int rc = tu_run("%s gen '%s' -o '%s' >/dev/null 2>'%s'", TU_SPECL, path,
                    dir, log);
    TU_CHECK(rc == 1, "specl gen %s: exit %d, expected 1", path, rc);
    int n = count_errors(expected);
    char want[65536];
    snprintf(want, sizeof want, "%sspecl: %d error%s; nothing written\n",
             expected, n, n == 1 ? "" : "s");
    char *got = tu_read(log, NULL);
    TU_CHECK(got != NULL && strcmp(got, want) == 0,
             "specl gen %s: stderr differs\n--- expected\n%s--- got\n%s",
             path, want, got ? got : "(none)");
    char **names;
    int files = tu_list(dir, NULL, &names);
    TU_CHECK(files == 0, "specl gen %s: wrote %d file(s) (first %s)", path,
             files, files > 0 ? names[0] : "-");
    if (files >= 0) {
        tu_free_list(names, files);
    }
    free(got);
    free(dir);
}

static void test_bad_fixtures(void)
{
    char **names;
    int n = tu_list(BAD_DIR, ".yaml", &names);
    TU_CHECK(n >= MIN_BAD_FIXTURES, "only %d fixtures in " BAD_DIR, n);
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    for (int i = 0; i < n; i++) {
        char *path = tu_path(BAD_DIR, names[i]);
        char err_path[4200];
        snprintf(err_path, sizeof err_path, "%.*s.err",
                 (int)(strlen(path) - 5), path);
        char *expected = tu_read(err_path, NULL);
        TU_CHECK(expected != NULL && expected[0] != '\0',
                 "%s has no expected messages (%s)", path, err_path);
        if (expected != NULL) {
            check_fixture_in_process(path, expected);
            check_fixture_cli(tmp, names[i], path, expected);
        }
        free(expected);
        free(path);
    }
    tu_free_list(names, n);
    /* No stray .err without its spec. */
    n = tu_list(BAD_DIR, ".err", &names);
    for (int i = 0; i < n; i++) {
        char yaml[4200];
        snprintf(yaml, sizeof yaml, "%s/%.*s.yaml", BAD_DIR,
                 (int)(strlen(names[i]) - 4), names[i]);
        FILE *f = fopen(yaml, "r");
        TU_CHECK(f != NULL, "%s/%s has no spec", BAD_DIR, names[i]);
        if (f != NULL) {
            fclose(f);
        }
    }
    tu_free_list(names, n);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* ---- the command line -------------------------------------------------- */

/* Runs `specl ARGS`; returns its exit status with stdout in *OUT (caller
 * frees) when OUT is not NULL. */
static int specl(const char *tmp, const char *args, char **out)
{
    char log[4200];
    snprintf(log, sizeof log, "%s/stdout", tmp);
    int rc = tu_run("%s %s >'%s' 2>/dev/null", TU_SPECL, args, log);
    if (out != NULL) {
        *out = tu_read(log, NULL);
        if (*out == NULL) {
            *out = strdup("");
        }
    }
    return rc;
}

static void test_cli_exit_codes(void)
{
    static const struct {
        const char *args;
        int rc;
    } cases[] = {
        {"check " GOOD_DIR "/rows.yaml", 0},
        {"check " GOOD_DIR "/rows.yaml " GOOD_DIR "/lora.yaml", 0},
        {"check " BAD_DIR "/zero_size.yaml", 1},
        {"check " GOOD_DIR "/rows.yaml " BAD_DIR "/zero_size.yaml", 1},
        {"check " GOOD_DIR "/rows.yaml " GOOD_DIR "/rows.yaml", 1},
        {"check " GOOD_DIR "/no_such.yaml", 1},
        {"gen " BAD_DIR "/unknown_op.yaml -o /nonexistent/specl", 1},
        {"", 2},
        {"check", 2},
        {"gen", 2},
        {"gen -o", 2},
        {"gen " GOOD_DIR "/rows.yaml -o", 2},
        {"check --frobnicate " GOOD_DIR "/rows.yaml", 2},
        {"gen -x " GOOD_DIR "/rows.yaml", 2},
        {"check -o /tmp " GOOD_DIR "/rows.yaml", 2},
        {"frobnicate", 2},
        {"list extra", 2},
        {"--help", 0},
        {"-h", 0},
        {"--version", 0},
        {"list", 0},
    };
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = specl(tmp, cases[i].args, NULL);
        TU_CHECK(rc == cases[i].rc, "specl %s: exit %d, expected %d",
                 cases[i].args, rc, cases[i].rc);
    }
    /* gen of a valid spec writes three files per kernel into -o DIR. */
    char args[4200];
    snprintf(args, sizeof args, "gen " GOOD_DIR "/rows.yaml -o '%s/out'",
             tmp);
    CU_ASSERT_EQUAL(specl(tmp, args, NULL), 0);
    char *dir = tu_path(tmp, "out");
    char **names;
    int n = tu_list(dir, NULL, &names);
    TU_CHECK(n == 12, "gen rows.yaml wrote %d files, expected 12", n);
    if (n >= 0) {
        tu_free_list(names, n);
    }
    free(dir);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

static void test_cli_output(void)
{
    char *tmp = tu_tempdir();
    char *out;
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);

    CU_ASSERT_EQUAL(specl(tmp, "list", &out), 0);
    for (int i = 0; op_registry[i] != NULL; i++) {
        char head[128];
        snprintf(head, sizeof head, "\n%s: ", op_registry[i]->name);
        TU_CHECK(strstr(out, head) != NULL, "specl list lacks op %s",
                 op_registry[i]->name);
        for (int f = 0; f < op_registry[i]->n_fields; f++) {
            TU_CHECK(strstr(out, op_registry[i]->fields[f].key) != NULL,
                     "specl list lacks %s's field %s", op_registry[i]->name,
                     op_registry[i]->fields[f].key);
        }
        for (int f = 0; f < op_registry[i]->n_knobs; f++) {
            TU_CHECK(strstr(out, op_registry[i]->knobs[f].key) != NULL,
                     "specl list lacks %s's knob %s", op_registry[i]->name,
                     op_registry[i]->knobs[f].key);
        }
    }
    free(out);

    CU_ASSERT_EQUAL(specl(tmp, "--help", &out), 0);
    TU_CHECK(strncmp(out, "usage: specl COMMAND", 20) == 0 &&
                 strstr(out, "check") != NULL && strstr(out, "list") != NULL,
             "--help printed: %s", out);
    free(out);

    CU_ASSERT_EQUAL(specl(tmp, "--version", &out), 0);
    TU_CHECK(strcmp(out, "specl " SPECL_VERSION "\n") == 0,
             "--version printed: %s", out);
    free(out);

    CU_ASSERT_EQUAL(specl(tmp, "check " GOOD_DIR "/rows.yaml", &out), 0);
    TU_CHECK(strcmp(out, "checked 4 kernels\n") == 0, "check printed: %s",
             out);
    free(out);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

/* ---- fuzz regressions -------------------------------------------------- */

/* Reads DATA as the fuzz target does and emits what validates; returns
 * the number of errors reported. */
static int replay_one(const char *path, const char *data, size_t len)
{
    struct spec_set s;
    struct diags quiet = {.out = NULL};
    spec_set_init(&s);
    int errors = spec_read_buffer(&s, path, (const unsigned char *)data, len,
                                  &quiet);
    for (int k = 0; k < s.n_kernel; k++) {
        struct emitted e;
        char err[256];
        if (emit_kernel(tu_gen_variants(&s.kernel[k]), &e, err, sizeof err) ==
            0) {
            emitted_free(&e);
        }
    }
    spec_set_free(&s);
    return errors;
}

/* The reader and the emitter on every file of DIR (tu_replay_dir). */
static int replay_dir(const char *dir, int expect_errors)
{
    return tu_replay_dir(dir, NULL, replay_one, expect_errors,
                         "the reader or the emitter", "build/fuzz_replay");
}

static void test_fuzz_regressions(void)
{
    replay_dir(REGRESSION_DIR, -1);
    CU_ASSERT(replay_dir(BAD_DIR, 1) > 0);
    CU_ASSERT(replay_dir(GOOD_DIR, 0) > 0);
}

/* ---- op hooks ------------------------------------------------------------ */

static int has_buffer(const struct plan *p, const char *name)
{
    for (int i = 0; i < p->n_buffer; i++) {
        if (strcmp(p->buffer[i].name, name) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The stub runs the first of P's paths whose max_rows covers the rows,
 * max_rows 0 covering any: so the limits rise and only the last is 0 (a
 * 0 before it would take every row from the paths after it), but for a
 * path that needs all its work-groups at once (coop_total), which a
 * small device passes over, and after a path the stub may pass over at
 * the same rows (counters past the sync buffer, work-groups past its
 * bound a compute unit), whose next path takes the same rows. */
static void check_path_order(const struct kernel_spec *ks,
                             const struct plan *p)
{
    TU_CHECK(p->n_path >= 1 && p->path[p->n_path - 1].max_rows == 0,
             "%s: the last of %d paths does not take any rows", ks->name,
             p->n_path);
    /* A bound the stub may fail leaves a next path; the least size is
     * tested only beside the units bound, on a size the op has. */
    int n_sizes = op_n_sizes(ks->op);
    for (int i = 0; i < p->n_path; i++) {
        const struct path *pa = &p->path[i];
        TU_CHECK(pa->units_groups == 0 || i + 1 < p->n_path,
                 "%s: path %d, bounded by work-groups a unit, is the last",
                 ks->name, i);
        TU_CHECK(pa->units_least == 0 ||
                     (pa->units_groups != 0 && pa->units_least_size >= 0 &&
                      pa->units_least_size < n_sizes),
                 "%s: path %d: units_least %ld on size %d without the "
                 "units bound", ks->name, i, pa->units_least,
                 pa->units_least_size);
    }
    for (int i = 0; i + 1 < p->n_path; i++) {
        if (p->path[i].coop_total != 0) {
            continue;
        }
        const struct path *prev = i > 0 ? &p->path[i - 1] : NULL;
        int same_ok = prev != NULL &&
                      (prev->sync_per != 0 || prev->units_groups != 0) &&
                      p->path[i].max_rows == prev->max_rows;
        TU_CHECK(p->path[i].max_rows > 0 &&
                     (i == 0 || p->path[i].max_rows > prev->max_rows ||
                      same_ok),
                 "%s: path %d of %d takes rows up to %zu after %zu", ks->name,
                 i, p->n_path, p->path[i].max_rows,
                 i > 0 ? p->path[i - 1].max_rows : 0);
    }
}

/* Knobs that turn a path off (0: never) leave no path for it, and the
 * paths stay in order, on every target's defaults: lora_decode with
 * decode_max: 0 and decode_rows at its default once took every row, and
 * decode_mma_max: 0 alone once made decode_max -1 and lora_decode_mma a
 * path that the emitter refused, and split_max: 0 and delta_max: 0 were
 * refused as not above decode_max. A tile that begins with "base: false"
 * puts that field in the spec instead, at rank 16 (where lora_delta runs
 * by default). */
static void test_paths_off(void)
{
    static const char *const tiles[] = {
        "decode_max: 0",
        "decode_mma_max: 0",
        "split_max: 0",
        "base: false, delta_max: 0",
        "decode_max: 0, decode_mma_max: 0, split_k: 1",
        "decode_rows: 0, split_k: 1",
        "decode_max: 0, decode_mma_max: 0, split_k: 1, engine: wgmma, "
        "wg_split_max: 600",
        "decode_max: 0, decode_mma_max: 0, split_k: 1, engine: wgmma, "
        "wg_split_max: 0",
    };
    static const enum target targets[] = {TARGET_GPU, TARGET_TENSOR,
                                          TARGET_SM90A, TARGET_CPU};
    for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
        for (size_t g = 0; g < sizeof targets / sizeof targets[0]; g++) {
            char text[512];
            struct spec_set s;
            const char *base = "base: false, ";
            int adapter = strncmp(tiles[t], base, strlen(base)) == 0;
            snprintf(text, sizeof text,
                     "kernels:\n  - {name: t_off, op: lora_forward, dtype: "
                     "bf16, in_features: 1000, out_features: 1064, "
                     "rank: %s, tile: {%s}}\n",
                     adapter ? "16, base: false" : "40",
                     tiles[t] + (adapter ? strlen(base) : 0));
            TU_CHECK(read_text(&s, text, NULL) == 0 && s.n_kernel == 1,
                     "{%s}: the spec does not read", tiles[t]);
            char *out = NULL;
            size_t size = 0;
            struct diags d = {.out = open_memstream(&out, &size)};
            CU_ASSERT_PTR_NOT_NULL_FATAL(d.out);
            int refused = spec_set_target(&s, targets[g], &d) != 0;
            fclose(d.out);
            /* Only engine: wgmma may be refused, where the target has no
             * warpgroups. */
            TU_CHECK(!refused || strstr(tiles[t], "engine: wgmma") != NULL,
                     "{%s} on target %d: refused: %s", tiles[t],
                     (int)targets[g], out);
            free(out);
            if (refused || s.n_kernel != 1) {
                spec_set_free(&s);
                continue;
            }
            const struct kernel_spec *ks = &s.kernel[0];
            struct plan p;
            memset(&p, 0, sizeof p);
            ks->op->plan(ks, &p);
            check_path_order(ks, &p);
            int decode = plan_launches(&p, "lora_decode");
            TU_CHECK(!decode || strstr(tiles[t], "decode_max: 0") == NULL,
                     "{%s} on target %d: lora_decode runs", tiles[t],
                     (int)targets[g]);
            int split = plan_launches(&p, "lora_main_split") +
                        plan_launches(&p, "lora_mma_split");
            TU_CHECK(!split || strstr(tiles[t], "split_max: 0") == NULL,
                     "{%s} on target %d: the split path runs", tiles[t],
                     (int)targets[g]);
            int delta = plan_launches(&p, "lora_delta");
            TU_CHECK(!delta || strstr(tiles[t], "delta_max: 0") == NULL,
                     "{%s} on target %d: lora_delta runs", tiles[t],
                     (int)targets[g]);
            int dmma = plan_launches(&p, "lora_decode_mma");
            TU_CHECK(!dmma || strstr(tiles[t], "decode_mma_max: 0") == NULL,
                     "{%s} on target %d: lora_decode_mma runs", tiles[t],
                     (int)targets[g]);
            spec_set_free(&s);
        }
    }
}

/* The value that KN's help says turns its path or split off ("0:
 * never", "0: none", "1: none", "1: no ..."), or -1. */
static int knob_off_value(const struct param_def *kn)
{
    if (kn->kind != VALUE_INT) {
        return -1;
    }
    if (strstr(kn->help, "0: never") != NULL ||
        strstr(kn->help, "0: none") != NULL) {
        return kn->min <= 0 ? 0 : -1;
    }
    if (strstr(kn->help, "1: none") != NULL ||
        strstr(kn->help, "1: no ") != NULL) {
        return kn->min <= 1 ? 1 : -1;
    }
    return -1;
}

/* Every knob whose help says a value turns something off takes that
 * value alone on each op's example kernel, f32 and bf16: the spec
 * validates and every variant emits (decode_mma_max, split_max and
 * delta_max at 0 were once refused, or failed in the emitter). */
static void test_knobs_off(void)
{
    static const char *const dtypes[] = {"f32", "bf16"};
    for (int o = 0; op_registry[o] != NULL; o++) {
        const struct op_def *op = op_registry[o];
        char fields[256];
        example_fields(op, fields, sizeof fields);
        for (int k = 0; k < op->n_knobs; k++) {
            const struct param_def *kn = &op->knobs[k];
            int off = knob_off_value(kn);
            if (off < 0) {
                continue;
            }
            for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
                char text[512], *messages = NULL;
                struct spec_set s;
                snprintf(text, sizeof text,
                         "kernels:\n  - {name: t_off, op: %s, dtype: %s, "
                         "%s, tile: {%s: %d}}\n",
                         op->name, dtypes[t], fields, kn->key, off);
                int errors = read_text(&s, text, &messages);
                TU_CHECK(errors == 0 && s.n_kernel == 1,
                         "%s %s %s: %d refused: %s", op->name, dtypes[t],
                         kn->key, off, messages != NULL ? messages : "");
                free(messages);
                if (errors == 0 && s.n_kernel == 1) {
                    struct emitted e;
                    char err[256];
                    int rc = emit_kernel(tu_gen_variants(&s.kernel[0]), &e,
                                         err, sizeof err);
                    TU_CHECK(rc == 0, "%s %s %s: %d does not emit: %s",
                             op->name, dtypes[t], kn->key, off, err);
                    emitted_free(&e);
                }
                spec_set_free(&s);
            }
        }
    }
}

/* KS's naive plan has KS's buffers, names kernels of tests/naive.cl
 * (NAIVE_CL) and arguments the stub knows, and emits; its BLAS peer names
 * buffers of its plan, and its figures are sane. */
static void check_hooks(const struct kernel_spec *ks, const char *naive_cl)
{
    const struct op_def *op = ks->op;
    struct plan p, np;
    struct emitted e;
    char err[256];
    memset(&p, 0, sizeof p);
    op->plan(ks, &p);
    check_path_order(ks, &p);
    /* The stub gives a path scratch exactly when it counts some. */
    for (int i = 0; i < p.n_path; i++) {
        const struct path *pa = &p.path[i];
        int takes = 0;
        for (int l = 0; l < pa->n_launch; l++) {
            for (int a = 0; pa->launch[l].args[a] != NULL; a++) {
                takes |= strcmp(pa->launch[l].args[a], "scratch") == 0;
            }
        }
        TU_CHECK(takes == (pa->scratch_per > 0 || pa->scratch_fixed > 0),
                 "%s: path %d %s scratch but counts %ld per row + %ld",
                 ks->name, i, takes ? "takes" : "takes no",
                 pa->scratch_per, pa->scratch_fixed);
    }
    naive_plan(ks, &np);
    TU_CHECK(np.n_buffer == p.n_buffer, "%s: naive plan of %d buffers, "
             "not %d", ks->name, np.n_buffer, p.n_buffer);
    for (int i = 0; i < np.n_buffer && i < p.n_buffer; i++) {
        TU_CHECK(strcmp(np.buffer[i].name, p.buffer[i].name) == 0 &&
                     np.buffer[i].per == p.buffer[i].per &&
                     np.buffer[i].sizes == p.buffer[i].sizes &&
                     np.buffer[i].elem == p.buffer[i].elem &&
                     np.buffer[i].fixed == p.buffer[i].fixed,
                 "%s: naive buffer %d differs", ks->name, i);
    }
    TU_CHECK(np.n_path == 1 && np.path[0].max_rows == 0 &&
                 np.path[0].n_launch >= 1,
             "%s: the naive plan is not one path of launches", ks->name);
    for (int i = 0; i < np.path[0].n_launch; i++) {
        const struct launch *l = &np.path[0].launch[i];
        /* The op's first size first: rows, or attention's batch. */
        const char *first = op_size_name(op, 0);
        char head[96];
        snprintf(head, sizeof head, "__kernel void %s(int %s,", l->kernel,
                 first);
        TU_CHECK(strstr(naive_cl, head) != NULL,
                 "%s: no naive kernel %s(int %s, ...) in tests/naive.cl",
                 ks->name, l->kernel, first);
        TU_CHECK(l->dims == 1 || l->dims == 2, "%s: %s has %d dims",
                 ks->name, l->kernel, l->dims);
        TU_CHECK(l->args[0] != NULL && strcmp(l->args[0], first) == 0,
                 "%s: %s does not take %s first", ks->name, l->kernel, first);
        for (int a = 1; l->args[a] != NULL; a++) {
            int scratch = strcmp(l->args[a], "scratch") == 0;
            TU_CHECK(scratch ? np.path[0].scratch_per > 0
                             : has_buffer(&p, l->args[a]) ||
                                   op_size_index(op, l->args[a]) >= 0,
                     "%s: %s argument %d (%s) names no buffer or size of "
                     "the plan",
                     ks->name, l->kernel, a, l->args[a]);
        }
    }
    TU_CHECK(emit_naive(ks, &e, err, sizeof err) == 0,
             "%s: emit_naive: %s", ks->name, err);
    emitted_free(&e); /* also after a failure: then empty */
    if (op->blas_peer != NULL) {
        struct gemm_chain g;
        memset(&g, 0, sizeof g);
        op->blas_peer(ks, 5, &g);
        TU_CHECK(g.n_gemm >= 1, "%s: empty BLAS peer", ks->name);
        for (int i = 0; i < g.n_gemm; i++) {
            const char *operand[3] = {g.gemm[i].a, g.gemm[i].b, g.gemm[i].c};
            for (int o = 0; o < 3; o++) {
                int temp = strcmp(operand[o], "temp") == 0;
                int temp2 = strcmp(operand[o], "temp2") == 0;
                TU_CHECK(temp    ? g.temp_per_row > 0
                         : temp2 ? g.temp2_per_row > 0
                                 : has_buffer(&p, operand[o]),
                         "%s: gemm %d operand %s is no buffer", ks->name, i,
                         operand[o]);
            }
        }
    }
    double bytes = 0, flops = 0;
    size_t sizes[SPECL_MAX_SIZES] = {0};
    op->bench_sizes(ks, sizes);
    for (int i = 0; i < op_n_sizes(op); i++) {
        TU_CHECK(sizes[i] >= 1, "%s: bench size %d is %zu", ks->name, i,
                 sizes[i]);
    }
    sizes[0] = 7;
    op->costs(ks, sizes, &bytes, &flops);
    TU_CHECK(bytes > 0 && flops > 0, "%s: costs %g bytes %g flops",
             ks->name, bytes, flops);
    double bound = op->error_bound(ks);
    TU_CHECK(bound > 0 && bound <= 1e-2, "%s: error bound %g", ks->name,
             bound);
    char shape[96] = "";
    op->shape_text(ks, sizes, shape, sizeof shape);
    TU_CHECK(strstr(shape, "7") != NULL, "%s: shape text '%s' lacks the rows",
             ks->name, shape);
}

/* `specl list` shows, for each op's example kernel, the knobs a spec of
 * that shape gets from `specl gen` for a GPU and with --target cpu: the
 * list and the generator share one source of knob values. */
static void test_list_example(void)
{
    for (int i = 0; op_registry[i] != NULL; i++) {
        const struct op_def *op = op_registry[i];
        struct kernel_spec ex[2];
        struct spec_set s;
        struct diags d = {.out = stderr};
        char text[512], fields[256];
        TU_CHECK(op->example != NULL, "op %s has no example", op->name);
        if (op->example == NULL) {
            continue;
        }
        snprintf(fields, sizeof fields, "%s", op->example);
        for (char *c = fields; *c; c++) {
            *c = *c == '=' ? ':' : *c == ' ' ? ',' : *c;
        }
        /* "a:1,b:2" -> a flow mapping with spaces after the colons */
        char flow[300] = "";
        for (const char *c = fields; *c; c++) {
            size_t n = strlen(flow);
            snprintf(flow + n, sizeof flow - n, "%c%s", *c,
                     *c == ':' || *c == ',' ? " " : "");
        }
        snprintf(text, sizeof text,
                 "kernels:\n  - {name: ex, op: %s, %s}\n", op->name, flow);
        for (int t = 0; t < 2; t++) {
            enum target target = t ? TARGET_CPU : TARGET_GPU;
            CU_ASSERT_EQUAL_FATAL(knobs_example(op, target, &ex[t]), 0);
            spec_set_init(&s);
            int errors = spec_read_buffer(&s, "<example>",
                                          (const unsigned char *)text,
                                          strlen(text), &d);
            if (errors == 0 && t) {
                errors = spec_set_target(&s, TARGET_CPU, &d);
            }
            TU_CHECK(errors == 0 && s.n_kernel == 1, "%s: %s", op->name, text);
            for (int k = 0; errors == 0 && k < op->n_knobs; k++) {
                TU_CHECK(s.kernel[0].knob[k].num == ex[t].knob[k].num,
                         "%s %s: list shows %s = %g, gen picks %g", op->name,
                         t ? "cpu" : "gpu", op->knobs[k].key,
                         ex[t].knob[k].num, s.kernel[0].knob[k].num);
            }
            spec_set_free(&s);
        }
    }
}

/* The knobs lora_backward's defaults choose are valid for every rank it
 * accepts, on every kind of device: every rank up to 1024 of a 4096-wide
 * layer and of llama's up-projection, every rank of a narrow odd layer,
 * and ranks across the rest of the range on a wider one up to the
 * widest; and where they were valid before they derived from the rank,
 * they are as they were. Plans only. */
static void test_bwd_ranks(void)
{
    static const struct {
        long k, n, first, last, step;
    } shapes[] = {
        {4096, 4096, 1, 1024, 1}, {4096, 11008, 1, 1024, 1},
        {99, 37, 1, 37, 1},       {8192, 8192, 1025, 4064, 13},
        {8192, 8192, 4064, 4064, 1},
    };
    static const enum target targets[] = {TARGET_GPU, TARGET_CPU,
                                          TARGET_TENSOR};
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "kernels:\n");
    int n = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (long r = shapes[i].first; r <= shapes[i].last;
             r += shapes[i].step) {
            fprintf(f, "  - {name: b%d, op: lora_backward, in_features: %ld, "
                    "out_features: %ld, rank: %ld}\n",
                    n++, shapes[i].k, shapes[i].n, r);
        }
    }
    fclose(f);
    struct spec_set s;
    char *messages = NULL;
    int errors = read_text(&s, text, &messages);
    TU_CHECK(errors == 0 && s.n_kernel == n,
             "lora_backward at default knobs: %d errors:\n%.2000s", errors,
             messages ? messages : "");
    free(messages);
    for (size_t t = 0; errors == 0 && t < 3; t++) {
        struct diags d = {.out = stderr};
        TU_CHECK(spec_set_target(&s, targets[t], &d) == 0,
                 "target %zu: the defaults of some rank are refused", t);
    }
    /* 4096 x 4096 at ranks 16, 64 and 320 (GPUs): as before */
    static const long kept[] = {16, 64, 320};
    struct diags d = {.out = stderr};
    CU_ASSERT(errors != 0 || spec_set_target(&s, TARGET_GPU, &d) == 0);
    for (size_t i = 0; errors == 0 && i < 3; i++) {
        const struct kernel_spec *ks = &s.kernel[kept[i] - 1];
        TU_CHECK(knob(ks, "vec")->num == 4 && knob(ks, "tg_rows")->num == 8 &&
                     knob(ks, "tg_threads")->num == 128 &&
                     knob(ks, "grad_threads")->num == 128,
                 "rank %ld: vec %g, tg_rows %g, tg_threads %g, grad_threads "
                 "%g; expected 4, 8, 128, 128",
                 kept[i], knob(ks, "vec")->num, knob(ks, "tg_rows")->num,
                 knob(ks, "tg_threads")->num, knob(ks, "grad_threads")->num);
        TU_CHECK(knob(ks, "tg_stages")->num == 0,
                 "rank %ld: tg_stages %g on GPUs without cp.async", kept[i],
                 knob(ks, "tg_stages")->num);
    }
    /* NVIDIA (cp.async): X and dY by the ring, 16 rows on 256 items, 3
     * steps, where they fit (ranks 16, 64); else the tile as the fit
     * left it, with the ring (rank 100: 16 rows for local memory, 128
     * items) */
    CU_ASSERT(errors != 0 || spec_set_target(&s, TARGET_TENSOR, &d) == 0);
    static const double ring[][4] = {
        {16, 16, 256, 3}, {64, 16, 256, 3}, {100, 16, 128, 3}};
    for (size_t i = 0; errors == 0 && i < 3; i++) {
        const struct kernel_spec *ks = &s.kernel[(long)ring[i][0] - 1];
        TU_CHECK(knob(ks, "tg_rows")->num == ring[i][1] &&
                     knob(ks, "tg_threads")->num == ring[i][2] &&
                     knob(ks, "tg_stages")->num == ring[i][3],
                 "rank %g on tensor cores: tg_rows %g, tg_threads %g, "
                 "tg_stages %g; expected %g, %g, %g", ring[i][0],
                 knob(ks, "tg_rows")->num, knob(ks, "tg_threads")->num,
                 knob(ks, "tg_stages")->num, ring[i][1], ring[i][2],
                 ring[i][3]);
    }
    spec_set_free(&s);
    free(text);
}

/* The names of P's GEMM_ #defines, in order, comma-separated, in BUF. */
static const char *gemm_define_names(const struct plan *p, char *buf,
                                     size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < p->n_define && at < size; i++) {
        if (strncmp(p->define[i].name, "GEMM_", 5) == 0) {
            at += (size_t)snprintf(buf + at, size - at, "%s,",
                                   p->define[i].name);
        }
    }
    return buf;
}

/* Checks that P's #define NAME is WANT. */
static void expect_define(const char *kernel, const struct plan *p,
                          const char *name, long want)
{
    const struct define *d = plan_find_define(p, name);
    TU_CHECK(d != NULL && d->i == want, "%s: %s is %ld, expected %ld",
             kernel, name, d ? d->i : -1, want);
}

/* S := the one-kernel spec TEXT on TARGET's defaults; 1 when it read as
 * one kernel (else a failed check naming TEXT, and S freed). */
static int read_one_for(struct spec_set *s, const char *text,
                        enum target target)
{
    struct diags d = {.out = stderr};
    int ok = read_text(s, text, NULL) == 0 && s->n_kernel == 1 &&
             spec_set_target(s, target, &d) == 0 && s->n_kernel == 1;
    TU_CHECK(ok, "does not read for target %d:\n%s", (int)target, text);
    if (!ok) {
        spec_set_free(s);
    }
    return ok;
}

/* read_one_for, then the kernel's plan into P (zeroed first). */
static int plan_one_for(struct spec_set *s, const char *text,
                        enum target target, struct plan *p)
{
    if (!read_one_for(s, text, target)) {
        return 0;
    }
    memset(p, 0, sizeof *p);
    s->kernel[0].op->plan(&s->kernel[0], p);
    return 1;
}

/* The wgmma tiles take their K steps from the tensor memory accelerator
 * on compute capability 9.0 exactly where the steps are 64 deep (one
 * 128-byte swizzle line), lora_forward's and lora_backward's alike, and
 * every path that launches them counts the maps' slots in its scratch;
 * 32-deep steps keep the copies and count none. */
static void test_wgmma_tma_plan(void)
{
    static const struct {
        const char *op, *tile;
        long tma;
    } cases[] = {
        {"lora_forward", "engine: wgmma", 1},
        {"lora_forward", "engine: wgmma, k: 32, wg_stages: 6", 0},
        {"lora_forward", "engine: wgmma, wg_split_max: 1024, split_k: 4", 1},
        {"lora_backward", "engine: wgmma", 1},
        {"lora_backward", "engine: wgmma, k: 32", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        struct spec_set s;
        snprintf(text, sizeof text,
                 "kernels:\n  - {name: t_tma, op: %s, dtype: bf16, "
                 "in_features: 4096, out_features: 4096, rank: 16, "
                 "tile: {%s}}\n", cases[i].op, cases[i].tile);
        struct plan p;
        if (!plan_one_for(&s, text, TARGET_SM90A, &p)) {
            continue;
        }
        const struct define *tma = plan_find_define(&p, "WG_TMA");
        const struct define *slots = plan_find_define(&p, "WG_MAP_SLOTS");
        TU_CHECK(tma != NULL && tma->i == cases[i].tma &&
                     (slots != NULL) == (cases[i].tma != 0),
                 "%s {%s}: WG_TMA %ld, WG_MAP_SLOTS %s; want %ld",
                 cases[i].op, cases[i].tile, tma ? tma->i : -1,
                 slots ? "defined" : "not defined", cases[i].tma);
        int wgmma_paths = 0;
        for (int k = 0; k < p.n_path; k++) {
            const struct path *pa = &p.path[k];
            int wgmma = 0;
            for (int l = 0; l < pa->n_launch; l++) {
                wgmma |= strstr(pa->launch[l].kernel, "wgmma") != NULL;
            }
            wgmma_paths += wgmma;
            long maps = slots != NULL ? slots->i * 64 : 0;
            TU_CHECK(!wgmma || !cases[i].tma || pa->scratch_fixed >= maps,
                     "%s {%s}: path %d counts %ld fixed floats of scratch, "
                     "under the maps' %ld", cases[i].op, cases[i].tile, k,
                     pa->scratch_fixed, maps);
        }
        TU_CHECK(wgmma_paths > 0, "%s {%s}: no path runs the wgmma tiles",
                 cases[i].op, cases[i].tile);
        spec_set_free(&s);
    }
}

/* engine: wgmma's crossover to lora_mma's tiles is the knob mma_max: a
 * path for them up to exactly its rows, none at 0, and past them
 * lora_wgmma. */
static void test_mma_max(void)
{
    static const long rows[] = {0, 300, 5000};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[512];
        struct spec_set s;
        snprintf(text, sizeof text,
                 "kernels:\n  - {name: t_mma_max, op: lora_forward, dtype: "
                 "bf16, in_features: 4096, out_features: 4096, rank: 16, "
                 "tile: {engine: wgmma, decode_max: 0, decode_mma_max: 0, "
                 "split_k: 1, wg_split_max: 0, mma_max: %ld}}\n", rows[i]);
        struct plan p;
        if (!plan_one_for(&s, text, TARGET_SM90A, &p)) {
            continue;
        }
        long mma_upto = -1;
        for (int k = 0; k < p.n_path; k++) {
            for (int l = 0; l < p.path[k].n_launch; l++) {
                if (strcmp(p.path[k].launch[l].kernel, "lora_mma") == 0) {
                    mma_upto = (long)p.path[k].max_rows;
                }
            }
        }
        const struct path *last = &p.path[p.n_path - 1];
        TU_CHECK(rows[i] == 0 ? mma_upto == -1 : mma_upto == rows[i],
                 "mma_max %ld: lora_mma's tiles up to %ld rows", rows[i],
                 mma_upto);
        TU_CHECK(last->max_rows == 0 &&
                     strcmp(last->launch[last->n_launch - 1].kernel,
                            "lora_wgmma") == 0,
                 "mma_max %ld: the last path runs %s", rows[i],
                 last->launch[last->n_launch - 1].kernel);
        spec_set_free(&s);
    }
}

/* lora_decode's work-items along K: f16/bf16 on GPUs 32 while that leaves
 * 16 elements of K each (K up to 512), 64 past; f32 32; CPUs 1. */
static void test_decode_k_defaults(void)
{
    static const struct {
        const char *dtype;
        int k;
        enum target target;
        long want;
    } cases[] = {
        {"bf16", 512, TARGET_GPU, 32},    {"bf16", 512, TARGET_SM90A, 32},
        {"f16", 384, TARGET_TENSOR, 32},  {"bf16", 1024, TARGET_GPU, 64},
        {"bf16", 4096, TARGET_SM90A, 64}, {"f32", 512, TARGET_GPU, 32},
        {"f32", 4096, TARGET_GPU, 32},    {"bf16", 512, TARGET_CPU, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        struct spec_set s;
        snprintf(text, sizeof text,
                 "kernels:\n  - {name: t_dk, op: lora_forward, dtype: %s, "
                 "in_features: %d, out_features: 512, rank: 8}\n",
                 cases[i].dtype, cases[i].k);
        if (!read_one_for(&s, text, cases[i].target)) {
            continue;
        }
        long got = (long)spec_knob(&s.kernel[0], "decode_k");
        TU_CHECK(got == cases[i].want,
                 "%s K %d on target %d: decode_k %ld, want %ld",
                 cases[i].dtype, cases[i].k, (int)cases[i].target, got,
                 cases[i].want);
        spec_set_free(&s);
    }
}

/* attention_backward's kernels by target, dtype and head: dk, dv and dq
 * on warpgroups on compute capability 9.0 at heads of 64, 80, 96 and 128
 * in half precision (dk and dv on mma.sync past 64 keys a work-group),
 * at 256 too (two warpgroups a work-group), mma.sync at other heads of
 * 16-byte rows and on 8.0, the float kernels for f32, for rows not of
 * 16 bytes, when asked and elsewhere; wgmma needed where a kernel takes
 * it. */
static void test_attention_backward_engine_defaults(void)
{
    static const struct {
        const char *dtype;
        int head_dim;
        enum target target;
        const char *tile;
        const char *dkv, *dq;
    } cases[] = {
        {"bf16", 128, TARGET_SM90A, "{}", "attention_backward_dkv_wgmma",
         "attention_backward_dq_wgmma"},
        {"f16", 64, TARGET_SM90A, "{}", "attention_backward_dkv_wgmma",
         "attention_backward_dq_wgmma"},
        {"bf16", 128, TARGET_SM90A, "{mma_k: 128}",
         "attention_backward_dkv_mma", "attention_backward_dq_wgmma"},
        {"bf16", 96, TARGET_SM90A, "{}", "attention_backward_dkv_wgmma",
         "attention_backward_dq_wgmma"},
        {"f16", 80, TARGET_SM90A, "{}", "attention_backward_dkv_wgmma",
         "attention_backward_dq_wgmma"},
        {"bf16", 112, TARGET_SM90A, "{}", "attention_backward_dkv_mma",
         "attention_backward_dq_mma"},
        {"bf16", 256, TARGET_SM90A, "{}", "attention_backward_dkv_wgmma",
         "attention_backward_dq_wgmma"},
        {"bf16", 256, TARGET_SM90A, "{mma_k: 128}",
         "attention_backward_dkv_mma", "attention_backward_dq_wgmma"},
        {"f16", 200, TARGET_TENSOR, "{}", "attention_backward_dkv_mma",
         "attention_backward_dq_mma"},
        {"bf16", 255, TARGET_TENSOR, "{}", "attention_backward_dkv",
         "attention_backward_dq"},
        {"bf16", 256, TARGET_SM90A, "{engine: simt}",
         "attention_backward_dkv", "attention_backward_dq"},
        {"bf16", 128, TARGET_TENSOR, "{}", "attention_backward_dkv_mma",
         "attention_backward_dq_mma"},
        {"f32", 128, TARGET_SM90A, "{}", "attention_backward_dkv",
         "attention_backward_dq"},
        {"bf16", 128, TARGET_GPU, "{}", "attention_backward_dkv",
         "attention_backward_dq"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        struct spec_set s;
        snprintf(text, sizeof text,
                 "kernels:\n  - {name: t_abe, op: attention_backward, "
                 "dtype: %s, heads: 8, kv_heads: 2, head_dim: %d, causal: "
                 "true, tile: %s}\n",
                 cases[i].dtype, cases[i].head_dim, cases[i].tile);
        struct plan p;
        if (!plan_one_for(&s, text, cases[i].target, &p)) {
            continue;
        }
        const struct path *pa = &p.path[0];
        int wgmma = strstr(cases[i].dq, "wgmma") != NULL;
        TU_CHECK(p.n_path == 1 && pa->n_launch == 3 &&
                     strcmp(pa->launch[1].kernel, cases[i].dkv) == 0 &&
                     strcmp(pa->launch[2].kernel, cases[i].dq) == 0,
                 "%s D %d %s on target %d: %s then %s, want %s then %s",
                 cases[i].dtype, cases[i].head_dim, cases[i].tile,
                 (int)cases[i].target, pa->launch[1].kernel,
                 pa->launch[2].kernel, cases[i].dkv, cases[i].dq);
        TU_CHECK(((p.needs & CAP_WGMMA) != 0) == wgmma,
                 "%s D %d on target %d: needs wgmma %d", cases[i].dtype,
                 cases[i].head_dim, (int)cases[i].target, wgmma);
        spec_set_free(&s);
    }
}

/* attention_backward's scratch: D's float a query row and head, then,
 * where dk and dv load their rows by the tensor memory accelerator (on
 * warpgroups, a head a kv head), 128 slots of two tensor maps and 128
 * bytes of alignment; none where the heads share kv heads, or on other
 * engines. */
static void test_attention_backward_scratch(void)
{
    static const struct {
        int kv_heads;
        enum target target;
        long fixed;
    } cases[] = {
        {8, TARGET_SM90A, 128 * 64 + 32},
        {2, TARGET_SM90A, 0},
        {8, TARGET_TENSOR, 0},
        {8, TARGET_GPU, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        struct spec_set s;
        snprintf(text, sizeof text,
                 "kernels:\n  - {name: t_abs, op: attention_backward, "
                 "dtype: bf16, heads: 8, kv_heads: %d, head_dim: 128}\n",
                 cases[i].kv_heads);
        struct plan p;
        if (!plan_one_for(&s, text, cases[i].target, &p)) {
            continue;
        }
        const struct path *pa = &p.path[0];
        TU_CHECK(pa->scratch_per == 8 && pa->scratch_fixed == cases[i].fixed,
                 "kv_heads %d on target %d: scratch %ld a row + %ld, want "
                 "8 + %ld",
                 cases[i].kv_heads, (int)cases[i].target, pa->scratch_per,
                 pa->scratch_fixed, cases[i].fixed);
        spec_set_free(&s);
    }
}

/* attention's split path on CPUs: attention_part_rows over the most kv
 * heads a work-item whose outputs stay within 8192 floats (all of them
 * for Llama 3 8B's 32 query heads over 8 of 128; half of 8 at GQA 8 and
 * a head of 256), then combined in a second launch, over 64, 32 and 16
 * splits while their work-items are at most 2 a compute unit and keep
 * 128 keys each, then 4; attention_part over 4 where one kv head's query
 * rows pass that (48 heads of 200 over one). */
static void test_attention_cpu_split(void)
{
    static const struct {
        int heads, kv_heads, head_dim;
        const char *part;
        long kv_per_item;
    } cases[] = {
        {32, 8, 128, "attention_part_rows", 8},
        {64, 8, 256, "attention_part_rows", 4},
        {12, 12, 7, "attention_part_rows", 12},
        {48, 1, 200, "attention_part", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        struct spec_set s;
        snprintf(text, sizeof text,
                 "kernels:\n  - {name: t_acs, op: attention, heads: %d, "
                 "kv_heads: %d, head_dim: %d, causal: true}\n",
                 cases[i].heads, cases[i].kv_heads, cases[i].head_dim);
        struct plan p;
        if (!plan_one_for(&s, text, TARGET_CPU, &p)) {
            continue;
        }
        static const long splits[] = {64, 32, 16, 4};
        int rows = cases[i].kv_per_item != 0;
        int n_split = rows ? 4 : 1;
        TU_CHECK(p.n_path == n_split + 1, "%d/%d heads of %d: %d paths",
                 cases[i].heads, cases[i].kv_heads, cases[i].head_dim,
                 p.n_path);
        for (int k = 0; k < n_split && k + 1 < p.n_path; k++) {
            const struct path *pa = &p.path[k];
            long want = rows ? splits[k] : 4;
            long items = rows ? cases[i].kv_heads / cases[i].kv_per_item : 0;
            int bound = rows && k < 3;
            TU_CHECK(pa->n_launch == 2 &&
                         strcmp(pa->launch[0].kernel, cases[i].part) == 0 &&
                         strcmp(pa->launch[1].kernel,
                                "attention_combine") == 0 &&
                         pa->launch[0].slices == want &&
                         pa->launch[1].slices == want &&
                         (pa->units_groups != 0) == bound &&
                         (!bound || (pa->units_groups == want * items &&
                                     pa->units_fill == 2 &&
                                     pa->units_least == want * 128)),
                     "%d/%d heads of %d: split path %d runs %s over %d",
                     cases[i].heads, cases[i].kv_heads, cases[i].head_dim,
                     k, pa->launch[0].kernel, pa->launch[0].slices);
        }
        if (rows) {
            expect_define("t_acs", &p, "APR_KV", cases[i].kv_per_item);
            TU_CHECK(p.path[0].launch[0].local[0] == 1,
                     "attention_part_rows: %zu items a work-group",
                     p.path[0].launch[0].local[0]);
        } else {
            TU_CHECK(plan_find_define(&p, "APR_KV") == NULL,
                     "attention_part: APR_KV defined");
        }
        spec_set_free(&s);
    }
}

/* attention's prefill engine by target, dtype and head: warpgroups
 * (needing wgmma) on compute capability 9.0 at heads of 64
 * (attention_wgmma) and 80, 96, 128 and 256 (attention_wgmma_tma, its
 * tiles by the tensor memory accelerator, its maps in the scratch) in
 * half precision, mma.sync at other heads of 16-byte rows and on 8.0, the
 * float kernel for f32 and elsewhere; the split path stays on
 * attention_mma_part: in one launch over 64, 32 (each while its
 * work-groups fit 8 a compute unit: "slices" and the units bound) and 16
 * splits, then in two over 16. */
static void test_attention_engine_defaults(void)
{
    static const struct {
        const char *dtype;
        int head_dim;
        enum target target;
        const char *prefill;
    } cases[] = {
        {"bf16", 128, TARGET_SM90A, "attention_wgmma_tma"},
        {"f16", 64, TARGET_SM90A, "attention_wgmma"},
        {"bf16", 96, TARGET_SM90A, "attention_wgmma_tma"},
        {"bf16", 256, TARGET_SM90A, "attention_wgmma_tma"},
        {"bf16", 112, TARGET_SM90A, "attention_mma"},
        {"bf16", 128, TARGET_TENSOR, "attention_mma"},
        {"f32", 128, TARGET_SM90A, "attention"},
        {"bf16", 128, TARGET_GPU, "attention"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        struct spec_set s;
        snprintf(text, sizeof text,
                 "kernels:\n  - {name: t_ae, op: attention, dtype: %s, "
                 "heads: 8, kv_heads: 2, head_dim: %d, causal: true}\n",
                 cases[i].dtype, cases[i].head_dim);
        struct plan p;
        if (!plan_one_for(&s, text, cases[i].target, &p)) {
            continue;
        }
        const struct path *last = &p.path[p.n_path - 1];
        const char *got = last->launch[0].kernel;
        int wgmma = strncmp(cases[i].prefill, "attention_wgmma", 15) == 0;
        int tma = strcmp(cases[i].prefill, "attention_wgmma_tma") == 0;
        TU_CHECK((last->scratch_fixed != 0) == tma,
                 "%s D %d on target %d: the prefill's scratch %ld floats",
                 cases[i].dtype, cases[i].head_dim, (int)cases[i].target,
                 last->scratch_fixed);
        TU_CHECK(strcmp(got, cases[i].prefill) == 0,
                 "%s D %d on target %d: the prefill runs %s, want %s",
                 cases[i].dtype, cases[i].head_dim, (int)cases[i].target,
                 got, cases[i].prefill);
        TU_CHECK(((p.needs & CAP_WGMMA) != 0) == wgmma,
                 "%s D %d on target %d: needs wgmma %d", cases[i].dtype,
                 cases[i].head_dim, (int)cases[i].target, wgmma);
        if (wgmma) {
            static const long splits[] = {64, 32, 16, 16};
            int ok = p.n_path == 5;
            for (int k = 0; ok && k < 4; k++) {
                const struct path *pa = &p.path[k];
                ok = strcmp(pa->launch[0].kernel,
                            k < 3 ? "attention_mma_part_merged"
                                  : "attention_mma_part") == 0 &&
                     pa->launch[0].slices == splits[k] &&
                     (pa->units_groups != 0) == (k < 2) &&
                     (k >= 2 || (pa->units_groups == splits[k] * 2 &&
                                 pa->units_fill == 8 &&
                                 pa->units_least == splits[k] * 128 &&
                                 pa->units_least_size == 2));
            }
            TU_CHECK(ok, "%s D %d: the split paths (%d paths, the first "
                     "%s over %d)", cases[i].dtype, cases[i].head_dim,
                     p.n_path, p.path[0].launch[0].kernel,
                     p.path[0].launch[0].slices);
        }
        spec_set_free(&s);
    }
}

/* lora_main's and lora_bwd_dx's plans set gemm_simt.cl's #defines through
 * one helper: the same GEMM_ names in the same order, every one the
 * template checks for and no other, each with its kernel's value. */
static void test_gemm_simt_defines(void)
{
    static const char text[] =
        "kernels:\n"
        "  - {name: fwd, op: lora_forward, in_features: 96, out_features: "
        "40, rank: 7, accumulate: true, tile: {m: 32, n: 16, k: 8, wm: 4, "
        "wn: 2, pad: 2, xa: prepass, xa_chunk: 32, engine: simt}}\n"
        "  - {name: bwd, op: lora_backward, in_features: 96, out_features: "
        "40, rank: 7, tile: {m: 16, n: 32, k: 16, wm: 2, wn: 4, pad: 1}}\n";
    struct spec_set s;
    char *messages = NULL;
    int errors = read_text(&s, text, &messages);
    TU_CHECK(errors == 0, "%s", messages ? messages : "");
    free(messages);
    CU_ASSERT_EQUAL_FATAL(errors, 0);
    struct plan fwd, bwd;
    memset(&fwd, 0, sizeof fwd);
    memset(&bwd, 0, sizeof bwd);
    s.kernel[0].op->plan(&s.kernel[0], &fwd);
    s.kernel[1].op->plan(&s.kernel[1], &bwd);
    char fwd_names[512], bwd_names[512];
    gemm_define_names(&fwd, fwd_names, sizeof fwd_names);
    gemm_define_names(&bwd, bwd_names, sizeof bwd_names);
    TU_CHECK(fwd_names[0] != '\0' && strcmp(fwd_names, bwd_names) == 0,
             "GEMM_ #defines differ: lora_main %s, lora_bwd_dx %s",
             fwd_names, bwd_names);

    /* the template's checks name exactly these */
    const char *simt = template_text("gemm_simt.cl");
    CU_ASSERT_PTR_NOT_NULL_FATAL(simt);
    for (const char *at = strstr(simt, "defined(GEMM_"); at != NULL;
         at = strstr(at + 1, "defined(GEMM_")) {
        char name[40];
        if (sscanf(at, "defined(%39[A-Z_])", name) == 1) {
            TU_CHECK(plan_find_define(&fwd, name) != NULL,
                     "gemm_simt.cl checks %s, which the plan does not set",
                     name);
        }
    }
    for (int i = 0; i < fwd.n_define; i++) {
        char want[48];
        snprintf(want, sizeof want, "defined(%s)", fwd.define[i].name);
        TU_CHECK(strncmp(fwd.define[i].name, "GEMM_", 5) != 0 ||
                     strstr(simt, want) != NULL,
                 "the plan sets %s, which gemm_simt.cl does not check",
                 fwd.define[i].name);
    }

    /* [X | T] * [W ; B]: K, then r; T in ceil(96 / 32) partial sums */
    static const struct {
        const char *name;
        long fwd, bwd;
    } want[] = {
        {"GEMM_TILE_M", 32, 16}, {"GEMM_TILE_N", 16, 32},
        {"GEMM_TILE_K", 8, 16},  {"GEMM_WORK_M", 4, 2},
        {"GEMM_WORK_N", 2, 4},   {"GEMM_PAD", 2, 1},
        {"GEMM_K", 96, 40},      {"GEMM_N", 40, 96},
        {"GEMM_RANK", 7, 7},     {"GEMM_RANK_PARTS", 3, 1},
        {"GEMM_STAGE_A", 1, 1},  {"GEMM_STAGE_B", 1, 1},
        {"GEMM_OUT_ADD", 1, 0},  {"GEMM_OUT_FIXED", 0, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        expect_define("lora_main", &fwd, want[i].name, want[i].fwd);
        expect_define("lora_bwd_dx", &bwd, want[i].name, want[i].bwd);
    }
    spec_set_free(&s);
}

/* The gated activation's plan per device type: on CPUs the polynomial
 * exp (degree 5 for f32, 3 for results stored in 16 bits), one element a
 * work-item in bf16 and the widest vector otherwise, and no test for
 * work-items past a row where the groups tile it; GPUs keep exp and
 * 16-byte vectors. PoCL ran bf16 swiglu at 0.65x its naive kernel before
 * (bench/RESULTS.md). */
static void test_gated_cpu_plan(void)
{
    static const struct {
        const char *op, *dtype;
        int features;
        enum target target;
        long vec, exp_poly, row_tail;
    } cases[] = {
        {"swiglu", "bf16", 4096, TARGET_CPU, 1, 3, 0},
        {"swiglu_backward", "bf16", 4096, TARGET_CPU, 1, 3, 0},
        {"swiglu", "f16", 4096, TARGET_CPU, 8, 3, 0},
        {"swiglu", "f32", 4096, TARGET_CPU, 8, 5, 0},
        {"swiglu", "f32", 4865, TARGET_CPU, 1, 5, 1},
        {"swiglu", "bf16", 4096, TARGET_GPU, 8, 0, 0},
        {"swiglu_backward", "f32", 11008, TARGET_GPU, 4, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        struct spec_set s;
        struct diags d = {.out = stderr};
        snprintf(text, sizeof text, "kernels:\n  - {name: t_act, op: %s, "
                 "dtype: %s, features: %d}\n", cases[i].op, cases[i].dtype,
                 cases[i].features);
        int errors = read_text(&s, text, NULL);
        if (errors == 0) {
            errors = spec_set_target(&s, cases[i].target, &d);
        }
        TU_CHECK(errors == 0 && s.n_kernel == 1, "%s", text);
        if (errors == 0 && s.n_kernel == 1) {
            struct plan p;
            memset(&p, 0, sizeof p);
            s.kernel[0].op->plan(&s.kernel[0], &p);
            const struct define *vec = plan_find_define(&p, "VEC");
            const struct define *poly = plan_find_define(&p, "EXP_POLY");
            const struct define *tail = plan_find_define(&p, "ROW_TAIL");
            TU_CHECK(vec && vec->i == cases[i].vec && poly &&
                         poly->i == cases[i].exp_poly && tail &&
                         tail->i == cases[i].row_tail,
                     "%s %s %d on target %d: VEC %ld EXP_POLY %ld ROW_TAIL "
                     "%ld, want %ld %ld %ld", cases[i].op, cases[i].dtype,
                     cases[i].features, (int)cases[i].target,
                     vec ? vec->i : -1, poly ? poly->i : -1,
                     tail ? tail->i : -1, cases[i].vec, cases[i].exp_poly,
                     cases[i].row_tail);
        }
        spec_set_free(&s);
    }
}

/* Every op of the registry fills the hooks that verify.c, measure.c and
 * bench.c call, and has a kernel in tests/golden/golden.yaml whose hooks
 * are consistent with its plan and with tests/naive.cl. */
static void test_op_hooks(void)
{
    struct spec_set s;
    const char *naive_cl = template_text("naive.cl");
    CU_ASSERT_PTR_NOT_NULL_FATAL(naive_cl);
    CU_ASSERT_EQUAL_FATAL(read_good(&s, "tests/golden/golden.yaml"), 0);
    for (int i = 0; op_registry[i] != NULL; i++) {
        const struct op_def *op = op_registry[i];
        int golden = 0;
        TU_CHECK(op->summary && op->fields && op->validate && op->plan &&
                     op->tune_space && op->reference && op->naive &&
                     op->costs && op->error_bound && op->bench_sizes &&
                     op->shape_text,
                 "op %s lacks a required member of struct op_def", op->name);
        for (const char *const *k = op->kernels; *k != NULL; k++) {
            char name[80];
            snprintf(name, sizeof name, "%s.cl", *k);
            TU_CHECK(template_text(name) != NULL, "op %s: no template %s",
                     op->name, name);
        }
        for (int k = 0; k < s.n_kernel; k++) {
            if (s.kernel[k].op == op) {
                golden++;
                check_hooks(&s.kernel[k], naive_cl);
            }
        }
        TU_CHECK(golden > 0, "op %s has no kernel in golden.yaml", op->name);
    }
    spec_set_free(&s);
}

int add_spec_suite(void)
{
    CU_pSuite s = CU_add_suite("spec", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "good: lora_forward", test_good_lora) == NULL ||
        CU_add_test(s, "good: row ops", test_good_rows) == NULL ||
        CU_add_test(s, "good: flow, names, late defaults",
                    test_good_other) == NULL ||
        CU_add_test(s, "good: every spec, file = buffer", test_good_all) ==
            NULL ||
        CU_add_test(s, "names unique across files",
                    test_duplicate_across_files) == NULL ||
        CU_add_test(s, "identifiers", test_identifiers) == NULL ||
        CU_add_test(s, "names: reserved, and the system's headers",
                    test_reserved_names) == NULL ||
        CU_add_test(s, "names: clashing symbols", test_name_clashes) ==
            NULL ||
        CU_add_test(s, "scale: reading is linear", test_scale_linear) ==
            NULL ||
        CU_add_test(s, "scale: check does not render",
                    test_check_does_not_render) == NULL ||
        CU_add_test(s, "bad-spec fixtures", test_bad_fixtures) == NULL ||
        CU_add_test(s, "cli exit codes", test_cli_exit_codes) == NULL ||
        CU_add_test(s, "cli list, help, version", test_cli_output) == NULL ||
        CU_add_test(s, "op hooks", test_op_hooks) == NULL ||
        CU_add_test(s, "lora_backward: the defaults of every rank",
                    test_bwd_ranks) == NULL ||
        CU_add_test(s, "SIMT GEMMs: gemm_simt.cl's #defines from one helper",
                    test_gemm_simt_defines) == NULL ||
        CU_add_test(s, "wgmma tiles: the accelerator at 64-deep steps, its "
                    "maps in the scratch", test_wgmma_tma_plan) == NULL ||
        CU_add_test(s, "wgmma tiles: mma_max, the rows of lora_mma's tiles "
                    "before them", test_mma_max) == NULL ||
        CU_add_test(s, "lora_decode: work-items along K by dtype and K",
                    test_decode_k_defaults) == NULL ||
        CU_add_test(s, "attention_backward: the kernels by target, dtype "
                    "and head", test_attention_backward_engine_defaults) ==
            NULL ||
        CU_add_test(s, "attention: the prefill's engine by target, dtype "
                    "and head", test_attention_engine_defaults) == NULL ||
        CU_add_test(s, "attention: CPUs' split path",
                    test_attention_cpu_split) == NULL ||
        CU_add_test(s, "attention_backward: the scratch by target and kv "
                    "heads", test_attention_backward_scratch) == NULL ||
        CU_add_test(s, "paths turned off, paths in order", test_paths_off) ==
            NULL ||
        CU_add_test(s, "knobs take alone the value that turns them off",
                    test_knobs_off) == NULL ||
        CU_add_test(s, "list: example knobs are gen's", test_list_example) ==
            NULL ||
        CU_add_test(s, "fuzz regressions replayed", test_fuzz_regressions) ==
            NULL ||
        CU_add_test(s, "swiglu: the CPU and GPU plans",
                    test_gated_cpu_plan) == NULL ||
        add_defaults_spec_tests(s) != 0) {
        return -1;
    }
    return 0;
}
