/* test_syntax.c - syntax checks without a device: every kernel of
 * specs/, tests/good/ and tests/golden/golden.yaml is emitted into a
 * temporary directory; libclang parses each .cl as OpenCL C 1.2 and each
 * .c as C99 against the OpenCL headers with zero diagnostics (warnings
 * count), every name a .c defines carries its kernel's prefix, the system
 * compilers build each .c with strict warnings as C99 and as C++, and
 * several .c compiled as one translation unit (a unity build) link.
 *
 * libclang (LLVM 14) is loaded with dlopen(RTLD_LOCAL), not linked: PoCL
 * runs its own LLVM (15 on Debian 12), and with both in the global symbol
 * scope PoCL's compiler crashes in the device suites of the same binary. */
#include <clang-c/Index.h>
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clsource.h"
#include "emit.h"
#include "spec.h"
#include "suites.h"
#include "testutil.h"

#define MAX_SPECS 64

static char *dir;                /* the emitted files */
static struct spec_set kernels;  /* what was emitted there */
static int golden_from;          /* kernels[golden_from..]: golden.yaml's,
                                    emitted with their naive stubs */
static char *spec_paths[MAX_SPECS]; /* the set points at these */
static int n_spec_paths;
static CXIndex index_;

#ifndef SPECL_LIBCLANG
#define SPECL_LIBCLANG "/usr/lib/llvm-14/lib/libclang.so.1"
#endif

/* The libclang functions used here, looked up in the dlopen'd library. */
static struct {
    void *lib;
    CXIndex (*createIndex)(int, int);
    void (*disposeIndex)(CXIndex);
    enum CXErrorCode (*parseTranslationUnit2)(
        CXIndex, const char *, const char *const *, int,
        struct CXUnsavedFile *, unsigned, unsigned, CXTranslationUnit *);
    unsigned (*getNumDiagnostics)(CXTranslationUnit);
    CXDiagnostic (*getDiagnostic)(CXTranslationUnit, unsigned);
    enum CXDiagnosticSeverity (*getDiagnosticSeverity)(CXDiagnostic);
    CXString (*formatDiagnostic)(CXDiagnostic, unsigned);
    unsigned (*defaultDiagnosticDisplayOptions)(void);
    const char *(*getCString)(CXString);
    void (*disposeString)(CXString);
    void (*disposeDiagnostic)(CXDiagnostic);
    void (*disposeTranslationUnit)(CXTranslationUnit);
    CXCursor (*getTranslationUnitCursor)(CXTranslationUnit);
    unsigned (*visitChildren)(CXCursor, CXCursorVisitor, CXClientData);
    enum CXCursorKind (*getCursorKind)(CXCursor);
    CXString (*getCursorSpelling)(CXCursor);
    int (*Cursor_getNumArguments)(CXCursor);
    CXCursor (*Cursor_getArgument)(CXCursor, unsigned);
    CXSourceLocation (*getCursorLocation)(CXCursor);
    int (*Location_isFromMainFile)(CXSourceLocation);
} lc;

/* Stores the address of SYMBOL in *FN (a function pointer); 0 on success. */
static int lookup(void *fn, size_t size, const char *symbol)
{
    void *p = dlsym(lc.lib, symbol);
    if (p == NULL || size != sizeof p) {
        fprintf(stderr, "libclang: no %s\n", symbol);
        return 1;
    }
    memcpy(fn, &p, size);
    return 0;
}

#define LOOKUP(field) lookup(&lc.field, sizeof lc.field, "clang_" #field)

/* Loads libclang ($SPECL_LIBCLANG, else the one the Makefile names);
 * 0 on success. */
static int load_libclang(void)
{
    const char *path = getenv("SPECL_LIBCLANG");
    if (path == NULL || path[0] == '\0') {
        path = SPECL_LIBCLANG;
    }
    lc.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lc.lib == NULL) {
        fprintf(stderr, "syntax suite: cannot load libclang: %s\n",
                dlerror());
        return 1;
    }
    return LOOKUP(createIndex) | LOOKUP(disposeIndex) |
           LOOKUP(parseTranslationUnit2) | LOOKUP(getNumDiagnostics) |
           LOOKUP(getDiagnostic) | LOOKUP(getDiagnosticSeverity) |
           LOOKUP(formatDiagnostic) |
           LOOKUP(defaultDiagnosticDisplayOptions) | LOOKUP(getCString) |
           LOOKUP(disposeString) | LOOKUP(disposeDiagnostic) |
           LOOKUP(disposeTranslationUnit) | LOOKUP(getTranslationUnitCursor) |
           LOOKUP(visitChildren) | LOOKUP(getCursorKind) |
           LOOKUP(getCursorSpelling) | LOOKUP(Cursor_getNumArguments) |
           LOOKUP(Cursor_getArgument) | LOOKUP(getCursorLocation) |
           LOOKUP(Location_isFromMainFile);
}

static const char *const cl_args[] = {"-x", "cl", "-cl-std=CL1.2", "-Xclang",
                                      "-finclude-default-header"};

static int read_dir_specs(const char *d_name, struct diags *d)
{
    char **names;
    int n = tu_list(d_name, ".yaml", &names);
    for (int i = 0; i < n && n_spec_paths < MAX_SPECS; i++) {
        char *path = tu_path(d_name, names[i]);
        spec_paths[n_spec_paths++] = path; /* outlives the set */
        spec_read_file(&kernels, path, d);
    }
    if (n >= 0) {
        tu_free_list(names, n);
    }
    return n;
}

/* The emitted stubs: every kernel's (stem I < n_kernel), then the naive
 * stubs of golden.yaml's kernels. */
static int n_stems(void)
{
    return 2 * kernels.n_kernel - golden_from;
}

/* The kernel of stem I; *NAIVE: whether the stem is its naive stub. */
static const struct kernel_spec *stem_kernel(int i, int *naive)
{
    *naive = i >= kernels.n_kernel;
    return &kernels.kernel[*naive ? i - kernels.n_kernel + golden_from : i];
}

/* Writes DIR/STEM.EXT of stem I into PATH. */
static void stem_path(int i, const char *ext, char *path, size_t size)
{
    int naive;
    const struct kernel_spec *ks = stem_kernel(i, &naive);
    snprintf(path, size, "%s/%s%s.%s", dir, ks->name,
             naive ? EMIT_NAIVE_SUFFIX : "", ext);
}

static int setup(void)
{
    struct diags d = {.out = stderr};
    spec_set_init(&kernels);
    dir = tu_tempdir();
    if (dir == NULL || read_dir_specs("specs", &d) <= 0 ||
        read_dir_specs("tests/good", &d) <= 0) {
        return 1;
    }
    golden_from = kernels.n_kernel;
    spec_read_file(&kernels, "tests/golden/golden.yaml", &d);
    if (d.count != 0 || kernels.n_kernel == 0) {
        return 1;
    }
    for (int i = 0; i < n_stems(); i++) {
        int naive;
        const struct kernel_spec *ks = stem_kernel(i, &naive);
        struct emitted e;
        char err[256];
        int rc = naive ? emit_naive(ks, &e, err, sizeof err)
                       : emit_kernel(tu_gen_variants(ks), &e, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, "%s: %s\n", ks->name, err);
            return 1;
        }
        rc = emit_write(dir, &e, err, sizeof err);
        emitted_free(&e);
        if (rc != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    }
    if (load_libclang() != 0) {
        return 1;
    }
    index_ = lc.createIndex(0, 0);
    return index_ == NULL;
}

static int cleanup(void)
{
    spec_set_free(&kernels);
    for (int i = 0; i < n_spec_paths; i++) {
        free(spec_paths[i]);
    }
    n_spec_paths = 0;
    if (index_ != NULL) {
        lc.disposeIndex(index_);
        index_ = NULL;
    }
    /* libclang stays loaded: LLVM does not support being unloaded. */
    int rc = dir != NULL ? tu_rmtree(dir) : 0;
    free(dir);
    return rc != 0;
}

/* Parses PATH (or, with TEXT, an unsaved file of that name) with ARGS
 * and OPTIONS (CXTranslationUnit_*), then, when VISIT is not NULL, visits
 * the children of the unit's cursor with it and DATA; returns the number
 * of warnings and errors, each printed to stderr. */
static int parse(const char *path, const char *text, const char *const *args,
                 int n_args, unsigned options, CXCursorVisitor visit,
                 void *data)
{
    struct CXUnsavedFile unsaved = {path, text,
                                    text ? (unsigned long)strlen(text) : 0};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = lc.parseTranslationUnit2(
        index_, path, args, n_args, text ? &unsaved : NULL, text ? 1 : 0,
        options, &tu);
    if (ec != CXError_Success || tu == NULL) {
        fprintf(stderr, "\n    libclang cannot parse %s (error %d)\n", path,
                (int)ec);
        return 1;
    }
    int bad = 0;
    unsigned n = lc.getNumDiagnostics(tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic diag = lc.getDiagnostic(tu, i);
        if (lc.getDiagnosticSeverity(diag) >= CXDiagnostic_Warning) {
            CXString s = lc.formatDiagnostic(
                diag, lc.defaultDiagnosticDisplayOptions());
            fprintf(stderr, "\n    %s", lc.getCString(s));
            lc.disposeString(s);
            bad++;
        }
        lc.disposeDiagnostic(diag);
    }
    if (visit != NULL) {
        lc.visitChildren(lc.getTranslationUnitCursor(tu), visit, data);
    }
    lc.disposeTranslationUnit(tu);
    return bad;
}

/* libclang really checks: an undeclared function is an error, a builtin
 * is known, so a clean parse below means something. */
static void test_parser_sanity(void)
{
    int n_args = (int)(sizeof cl_args / sizeof cl_args[0]);
    int bad = parse("sanity_bad.cl",
                    "kernel void f(global float *x) { x[0] = "
                    "no_such_builtin(x[1]); }\n",
                    cl_args, n_args, CXTranslationUnit_None, NULL, NULL);
    CU_ASSERT(bad >= 1);
    if (bad >= 1) {
        fputs("\n    (the diagnostic above is expected)", stderr);
    }
    bad = parse("sanity_good.cl",
                "kernel void f(global float *x) { x[get_global_id(0)] = "
                "native_exp(x[0]) + vload_half(0, (global const half *)x); "
                "}\n",
                cl_args, n_args, CXTranslationUnit_None, NULL, NULL);
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_cl(void)
{
    int n_args = (int)(sizeof cl_args / sizeof cl_args[0]);
    for (int i = 0; i < n_stems(); i++) {
        /* a kernel whose first variant needs a vendor's instructions (a
         * knob that asks for them) holds their inline asm:
         * test_nvptx compiles it */
        int naive;
        const struct kernel_spec *ks = stem_kernel(i, &naive);
        struct plan plan;
        memset(&plan, 0, sizeof plan);
        if (!naive) {
            ks->op->plan(ks, &plan);
        }
        if (plan.needs != 0u) {
            continue;
        }
        char path[4200];
        stem_path(i, "cl", path, sizeof path);
        int bad = parse(path, NULL, cl_args, n_args, CXTranslationUnit_None,
                        NULL, NULL);
        TU_CHECK(bad == 0, "%s: %d diagnostics as OpenCL C 1.2", path, bad);
    }
}

/* The launch tables of one plan, checked against the kernels' parameter
 * lists as libclang reads them from the emitted .cl. */
struct arg_check {
    const struct kernel_spec *ks;
    const struct plan *plan;
    int seen;               /* launched kernels found in the source */
};

/* Whether KERNEL's parameters are, in order, the names in ARGS ("rows", a
 * buffer of the host API, "scratch"): the stub sets them by position. */
static void check_params(const struct arg_check *c, CXCursor fn,
                         const struct launch *l)
{
    int n = lc.Cursor_getNumArguments(fn), want = 0;
    while (l->args[want] != NULL) {
        want++;
    }
    TU_CHECK(n == want, "%s: %s takes %d parameters, its launch sets %d",
             c->ks->name, l->kernel, n, want);
    for (int i = 0; i < n && i < want; i++) {
        CXString name = lc.getCursorSpelling(lc.Cursor_getArgument(fn, i));
        const char *got = lc.getCString(name);
        TU_CHECK(strcmp(got, l->args[i]) == 0,
                 "%s: parameter %d of %s is '%s', its launch passes '%s'",
                 c->ks->name, i, l->kernel, got, l->args[i]);
        lc.disposeString(name);
    }
}

static enum CXChildVisitResult visit_kernel(CXCursor cursor, CXCursor parent,
                                            CXClientData data)
{
    struct arg_check *c = data;
    (void)parent;
    if (lc.getCursorKind(cursor) != CXCursor_FunctionDecl) {
        return CXChildVisit_Continue;
    }
    CXString name = lc.getCursorSpelling(cursor);
    const char *fn = lc.getCString(name);
    int found = 0;
    for (int p = 0; p < c->plan->n_path; p++) {
        for (int i = 0; i < c->plan->path[p].n_launch; i++) {
            const struct launch *l = &c->plan->path[p].launch[i];
            if (strcmp(l->kernel, fn) == 0) {
                check_params(c, cursor, l);
                found = 1;
            }
        }
    }
    c->seen += found;
    for (const char *const *k = c->ks->op->kernels; !found && *k; k++) {
        TU_CHECK(strcmp(*k, fn) != 0, "%s.cl holds %s, which its plan "
                 "does not launch", c->ks->name, fn);
    }
    lc.disposeString(name);
    return CXChildVisit_Continue;
}

/* Every launch of every plan names a kernel of its .cl with exactly the
 * parameters it sets, and the .cl holds no kernel the plan does not
 * launch. */
static void test_launch_args(void)
{
    int n_args = (int)(sizeof cl_args / sizeof cl_args[0]);
    for (int k = 0; k < kernels.n_kernel; k++) {
        const struct kernel_spec *ks = &kernels.kernel[k];
        struct plan plan;
        char path[4200];
        memset(&plan, 0, sizeof plan);
        ks->op->plan(ks, &plan);
        snprintf(path, sizeof path, "%s/%s.cl", dir, ks->name);
        CXTranslationUnit tu = NULL;
        enum CXErrorCode ec = lc.parseTranslationUnit2(
            index_, path, cl_args, n_args, NULL, 0, CXTranslationUnit_None,
            &tu);
        TU_CHECK(ec == CXError_Success && tu != NULL, "%s: cannot parse",
                 path);
        if (tu == NULL) {
            continue;
        }
        struct arg_check c = {ks, &plan, 0};
        lc.visitChildren(lc.getTranslationUnitCursor(tu), visit_kernel, &c);
        int launched = 0;
        for (const char *const *kn = ks->op->kernels; *kn != NULL; kn++) {
            launched += plan_launches(&plan, *kn);
        }
        TU_CHECK(c.seen == launched, "%s.cl: %d of the %d kernels its plan "
                 "launches found", ks->name, c.seen, launched);
        lc.disposeTranslationUnit(tu);
    }
}

/* The warnings every emitted .c and .h must build without, as C99 and
 * as C++ (-Wpedantic is C99's or C++'s by -std). */
#define STRICT_WARNINGS                                                       \
    "-Wall -Wextra -Wpedantic -Wshadow -Wcast-qual -Wconversion -Werror"

/* The names a .c defines, checked as libclang reads them. */
struct name_check {
    const char *name;   /* the stem: NAME of NAME.c */
    const char *header; /* NAME.h's text */
    int defined;        /* names seen */
};

/* Whether SUFFIX is one that stub_suffix lists. */
static int stub_suffix_listed(const char *suffix)
{
    char listed[64];
    for (int i = 0; stub_suffix(i, listed, sizeof listed); i++) {
        if (strcmp(listed, suffix) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Whether WORD is in TEXT as a whole identifier. */
static int has_identifier(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p != NULL;
         p = strstr(p + 1, word)) {
        char before = p > text ? p[-1] : ' ', after = p[n];
        if (!(isalnum((unsigned char)before) || before == '_') &&
            !(isalnum((unsigned char)after) || after == '_')) {
            return 1;
        }
    }
    return 0;
}

/* Every name NAME.c itself defines (a macro, type, table or function)
 * is NAME or begins with NAME_, so that several kernels' files compile
 * as one unit; those NAME.h does not declare end in a suffix that
 * stub_suffix lists (the spec reader refuses the kernel names that
 * would clash with them). */
static enum CXChildVisitResult visit_name(CXCursor cursor, CXCursor parent,
                                          CXClientData data)
{
    struct name_check *c = data;
    enum CXCursorKind kind = lc.getCursorKind(cursor);
    (void)parent;
    if (!lc.Location_isFromMainFile(lc.getCursorLocation(cursor)) ||
        kind == CXCursor_InclusionDirective ||
        kind == CXCursor_MacroExpansion) {
        return CXChildVisit_Continue;
    }
    CXString spelling = lc.getCursorSpelling(cursor);
    const char *got = lc.getCString(spelling);
    size_t n = strlen(c->name);
    /* An unnamed struct has no name, or (newer libclang) a description. */
    if (got[0] != '\0' && strchr(got, ' ') == NULL) {
        int own = strcmp(got, c->name) == 0;
        int prefixed = own || (strncmp(got, c->name, n) == 0 && got[n] == '_');
        TU_CHECK(prefixed, "%s.c defines '%s', without the prefix %s_",
                 c->name, got, c->name);
        TU_CHECK(!prefixed || own || kind == CXCursor_MacroDefinition ||
                     stub_suffix_listed(got + n + 1) ||
                     has_identifier(c->header, got),
                 "%s.c defines '%s', neither in %s.h nor a suffix "
                 "stub_suffix lists",
                 c->name, got, c->name);
        c->defined++;
    }
    lc.disposeString(spelling);
    return CXChildVisit_Continue;
}

static void test_c(void)
{
    char include[4200];
    snprintf(include, sizeof include, "-I%s", dir);
    const char *const args[] = {
        "-x",      "c",        "-std=c99",    "-pedantic",    "-Wall",
        "-Wextra", "-Wshadow", "-Wcast-qual", "-Wconversion", include};
    for (int i = 0; i < n_stems(); i++) {
        char path[4200];
        stem_path(i, "h", path, sizeof path);
        char *header = tu_read(path, NULL);
        stem_path(i, "c", path, sizeof path);
        const char *base = strrchr(path, '/') + 1;
        char name[EMIT_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(strlen(base) - 2), base);
        struct name_check c = {name, header != NULL ? header : "", 0};
        int bad = parse(path, NULL, args, (int)(sizeof args / sizeof args[0]),
                        CXTranslationUnit_DetailedPreprocessingRecord,
                        visit_name, &c);
        TU_CHECK(bad == 0, "%s: %d diagnostics as C99", path, bad);
        TU_CHECK(c.defined > 0, "%s: no names found", path);
        free(header);
    }
}

/* Whether the shell finds a C++ compiler `c++`; says so, once, when
 * not. */
static int have_cxx(void)
{
    static int found = -1;
    if (found < 0) {
        found = tu_run("command -v c++ >/dev/null 2>&1") == 0;
        if (!found) {
            fputs("\n    no c++ in PATH: the stubs are not compiled as C++ ",
                  stderr);
        }
    }
    return found;
}

/* The stubs build with the system compilers with every warning above an
 * error: each .c (its .h first) as C99 with cc and, at the same time, as
 * C++17 with c++ (a C++ project may compile them as its own sources). */
static void test_cc(void)
{
    int cxx = have_cxx();
    int rc = tu_run("cd '%s' || exit 1; rm -f cxx.rc; "
                    "{ %s echo $? >cxx.rc; } & "
                    "cc -std=c99 " STRICT_WARNINGS " -c *.c; c=$?; wait; "
                    "exit $c",
                    dir,
                    cxx ? "c++ -x c++ -std=c++17 " STRICT_WARNINGS
                          " -fsyntax-only *.c;"
                        : "true;");
    TU_CHECK(rc == 0, "cc -std=c99 " STRICT_WARNINGS " failed on the stubs "
             "in %s (exit %d)", dir, rc);
    char *path = tu_path(dir, "cxx.rc");
    char *status = tu_read(path, NULL);
    TU_CHECK(status != NULL && atoi(status) == 0,
             "c++ -x c++ -std=c++17 " STRICT_WARNINGS " failed on the stubs "
             "in %s (exit %s)", dir, status != NULL ? status : "unknown");
    free(status);
    free(path);
}

/* A unity build (CMake's UNITY_BUILD, say): the .c of golden.yaml's
 * kernels (two of lora_forward, every other op) and their naive stubs,
 * and one of specs/, #included one after the other into one translation
 * unit with a main that uses each, compiled with the same warnings as C99
 * and as C++11 and linked. */
static void test_unity_build(void)
{
    char *unity = tu_path(dir, "unity");
    char *path = tu_path(unity, "unity.c");
    CU_ASSERT_EQUAL_FATAL(tu_run("mkdir -p '%s'", unity), 0);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int n = 0;
    for (int i = 0; i < n_stems(); i++) {
        if (i > 0 && i < golden_from) {
            continue;
        }
        char c[4200];
        stem_path(i, "c", c, sizeof c);
        fprintf(f, "#include \"%s\"\n", strrchr(c, '/') + 1);
        n++;
    }
    fputs("\nint main(void)\n{\n    int n = 0;\n", f);
    for (int i = 0; i < n_stems(); i++) {
        if (i > 0 && i < golden_from) {
            continue;
        }
        int naive;
        const struct kernel_spec *ks = stem_kernel(i, &naive);
        const char *suffix = naive ? EMIT_NAIVE_SUFFIX : "";
        fprintf(f, "    n += %s%s_N_VARIANTS + %s%s_variant(NULL);\n"
                   "    %s%s_destroy(NULL);\n",
                ks->name, suffix, ks->name, suffix, ks->name, suffix);
    }
    fputs("    return n > 0 ? 0 : 1;\n}\n", f);
    CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
    CU_ASSERT(n >= 6);
    int rc = tu_run("cd '%s' && cc -std=c99 " STRICT_WARNINGS " -I.. "
                    "-o unity-c unity.c -lOpenCL",
                    unity);
    TU_CHECK(rc == 0, "%s: %d stubs in one unit do not build as C99 "
             "(exit %d)", path, n, rc);
    if (have_cxx()) {
        rc = tu_run("cd '%s' && c++ -x c++ -std=c++11 " STRICT_WARNINGS
                    " -I.. -o unity-cxx unity.c -lOpenCL",
                    unity);
        TU_CHECK(rc == 0, "%s: %d stubs in one unit do not build as C++11 "
                 "(exit %d)", path, n, rc);
    }
    free(path);
    free(unity);
}

/* The clang that compiles OpenCL C for NVIDIA's PTX (clang-14 or
 * clang), or NULL. */
static const char *nvptx_clang(void)
{
    static const char *const names[] = {"clang-14", "clang"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (tu_run("%s -print-targets 2>/dev/null | grep -q nvptx64",
                   names[i]) == 0) {
            return names[i];
        }
    }
    return NULL;
}

/* Every variant of the specs' and tests/good's kernels that needs
 * capabilities of NVIDIA's devices (PTX instructions: shuffles, bf16
 * rounding, mma.sync, wgmma, grid barriers) compiles as OpenCL C 1.2
 * through clang's NVPTX backend (nvptx64-nvidia-nvcl) at -O0: its #if
 * branches, inline asm and operands, which no device runs here. asm and
 * inline are spelled as clang's OpenCL mode takes them; cl_khr_fp16 on,
 * as clang declares the core vload_half family only with it for NVPTX. */
static void test_nvptx(void)
{
    const char *clang = nvptx_clang();
    if (clang == NULL) {
        printf("\n    (no clang with the NVPTX target: not checked) ");
        return;
    }
    int compiled = 0;
    for (int k = 0; k < golden_from; k++) {
        const struct variant_set *vs = tu_gen_variants(&kernels.kernel[k]);
        for (int v = 0; v < vs->n; v++) {
            const struct kernel_spec *ks = &vs->v[v].ks;
            struct plan plan;
            memset(&plan, 0, sizeof plan);
            ks->op->plan(ks, &plan);
            if (plan.needs == 0u) {
                continue;
            }
            struct buf src;
            char err[256] = "", path[4200], log[4300];
            buf_init(&src);
            int rc = cl_body(ks, &plan, NULL, &src, err, sizeof err);
            TU_CHECK(rc == 0, "%s variant %d: %s", ks->name, v, err);
            snprintf(path, sizeof path, "%s/%s-nvptx-%d.cl", dir, ks->name,
                     v);
            snprintf(log, sizeof log, "%s.log", path);
            FILE *f = rc == 0 ? fopen(path, "w") : NULL;
            if (f != NULL) {
                fputs(buf_str(&src), f);
                rc = fclose(f);
                rc = rc != 0 ? rc
                             : tu_run("%s -x cl -cl-std=CL1.2 -O0 -target "
                                      "nvptx64-nvidia-nvcl -Xclang "
                                      "-finclude-default-header -Xclang "
                                      "-cl-ext=+cl_khr_fp16 "
                                      "-Dasm=__asm__ '-Dinline=static "
                                      "inline' -S -o /dev/null '%s' "
                                      "2>'%s'",
                                      clang, path, log);
                char *said = rc != 0 ? tu_read(log, NULL) : NULL;
                TU_CHECK(rc == 0, "%s variant %d (%s) does not compile for "
                         "NVPTX:\n%.2000s", ks->name, v, vs->v[v].label,
                         said != NULL ? said : "");
                free(said);
                compiled++;
            }
            buf_free(&src);
        }
    }
    TU_CHECK(compiled > 0, "no variant needs NVIDIA's instructions");
}

int add_syntax_suite(void)
{
    CU_pSuite s = CU_add_suite("syntax", setup, cleanup);
    if (s == NULL ||
        CU_add_test(s, "libclang reports errors", test_parser_sanity) ==
            NULL ||
        CU_add_test(s, "every .cl parses as OpenCL C 1.2", test_cl) == NULL ||
        CU_add_test(s, "NVIDIA variants compile for NVPTX (clang)",
                    test_nvptx) == NULL ||
        CU_add_test(s, "kernel parameters match the launch tables",
                    test_launch_args) == NULL ||
        CU_add_test(s, "every .c parses as C99, its names prefixed",
                    test_c) == NULL ||
        CU_add_test(s, "every .c builds strictly as C99 and C++17",
                    test_cc) == NULL ||
        CU_add_test(s, "several .c as one unit (unity build) link",
                    test_unity_build) == NULL) {
        return -1;
    }
    return 0;
}
