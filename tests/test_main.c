/* test_main.c - runs every CUnit suite; exits non-zero on any failure.
 * usage: specl_tests [--full] [--wide] [--only TEXT] [--part K/N]
 * [SUITE...] (no SUITE: all of them; the wide suite is there only with
 * --wide; --only: just the tests whose name holds TEXT; --part: tests K,
 * K + N, K + 2N, ... of those, counted from 0 across the suites, so that
 * N processes share a run); specl_tests --list names the suites */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_gather.h"
#include "suites.h"

int test_full = 0;
int test_wide = 0;

static const struct {
    const char *name;
    int (*add)(void);
} suites[] = {
    {"spec", add_spec_suite},       {"emit", add_emit_suite},
    {"syntax", add_syntax_suite},   {"numeric", add_numeric_suite},
    {"sweep", add_sweep_suite},     {"stub", add_stub_suite},
    {"tune", add_tune_suite},       {"cli", add_cli_suite},
    {"caps", add_caps_suite},       {"import", add_import_suite},
    {"wide", add_wide_suite},
    {NULL, NULL},
};

static int wanted(const char *name, int argc, char **argv)
{
    int any = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            i += strcmp(argv[i], "--only") == 0 ||
                 strcmp(argv[i], "--part") == 0;
            continue;
        }
        any = 1;
        if (strcmp(argv[i], name) == 0) {
            return 1;
        }
    }
    return !any;
}

/* Leaves active only the tests whose name holds TEXT; returns how many. */
static int keep_only(const char *text)
{
    int kept = 0;
    CU_set_fail_on_inactive(CU_FALSE);
    for (CU_pSuite s = CU_get_registry()->pSuite; s != NULL; s = s->pNext) {
        for (CU_pTest t = s->pTest; t != NULL; t = t->pNext) {
            int keep = strstr(t->pName, text) != NULL;
            CU_set_test_active(t, keep ? CU_TRUE : CU_FALSE);
            kept += keep;
        }
    }
    return kept;
}

/* The suites compile an emitted NAME.c (and its naive twin) for each
 * kernel they build: at -O0 that takes half the time of -O2, and the
 * host code's speed is not what they measure. The stub suite's stubs and
 * test-vendor's are built at -O2, as users build them. SPECL_STUB_CFLAGS
 * comes after the tools' -O2, so -O0 wins; what it held is kept. */
static int stub_cflags_o0(void)
{
    const char *had = getenv("SPECL_STUB_CFLAGS");
    char flags[1024];
    int n = snprintf(flags, sizeof flags, "-O0 %s", had != NULL ? had : "");
    if (n < 0 || (size_t)n >= sizeof flags) {
        fprintf(stderr, "specl_tests: SPECL_STUB_CFLAGS is too long\n");
        return -1;
    }
    return setenv("SPECL_STUB_CFLAGS", flags, 1);
}

/* Of the active tests, leaves active every N-th from the K-th; returns
 * how many. */
static int keep_part(unsigned k, unsigned n)
{
    int kept = 0;
    unsigned i = 0;
    CU_set_fail_on_inactive(CU_FALSE);
    for (CU_pSuite s = CU_get_registry()->pSuite; s != NULL; s = s->pNext) {
        for (CU_pTest t = s->pTest; t != NULL; t = t->pNext) {
            if (t->fActive) {
                int keep = i++ % n == k;
                CU_set_test_active(t, keep ? CU_TRUE : CU_FALSE);
                kept += keep;
            }
        }
    }
    return kept;
}

/* K/N of --part into *K, *N; 0 when it is not two numbers, K < N. */
static int read_part(const char *text, unsigned *k, unsigned *n)
{
    char end;
    return sscanf(text, "%u/%u%c", k, n, &end) == 2 && *k < *n;
}

static int known_suite(const char *name)
{
    for (int i = 0; suites[i].name != NULL; i++) {
        if (strcmp(suites[i].name, name) == 0) {
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    unsigned part_k = 0, part_n = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0) {
            if (i + 1 == argc) {
                fprintf(stderr, "specl_tests: --only needs a test name\n");
                return 2;
            }
            only = argv[++i];
        } else if (strcmp(argv[i], "--part") == 0) {
            if (i + 1 == argc || !read_part(argv[i + 1], &part_k, &part_n)) {
                fprintf(stderr, "specl_tests: --part needs K/N, K < N "
                        "(got '%s')\n", i + 1 < argc ? argv[i + 1] : "");
                return 2;
            }
            i++;
        } else if (strcmp(argv[i], "--full") == 0) {
            test_full = 1;
        } else if (strcmp(argv[i], "--wide") == 0) {
            test_wide = 1;
        } else if (strcmp(argv[i], "--list") == 0) {
            /* The suites a run without names runs, one a line. */
            for (int k = 0; suites[k].name != NULL; k++) {
                if (strcmp(suites[k].name, "wide") != 0) {
                    printf("%s\n", suites[k].name);
                }
            }
            return 0;
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0 || strcmp(argv[i], "--part") == 0) {
            i++;
            continue;
        }
        /* Named alone it would run nothing, silently. */
        if (!test_wide && strcmp(argv[i], "wide") == 0) {
            fprintf(stderr, "specl_tests: the wide suite runs only with "
                    "--wide\n");
        }
        if (argv[i][0] != '-' && !known_suite(argv[i])) {
            fprintf(stderr, "specl_tests: no suite '%s'\n", argv[i]);
            return 2;
        }
    }
    if (stub_cflags_o0() != 0) {
        return 2;
    }
    op_add(&op_test_gather);
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "specl_tests: %s\n", CU_get_error_msg());
        return 2;
    }
    for (int i = 0; suites[i].name != NULL; i++) {
        if (wanted(suites[i].name, argc, argv) && suites[i].add() != 0) {
            fprintf(stderr, "specl_tests: cannot add suite %s: %s\n",
                    suites[i].name, CU_get_error_msg());
            CU_cleanup_registry();
            return 2;
        }
    }
    if (only != NULL && keep_only(only) == 0) {
        fprintf(stderr, "specl_tests: no test named '%s'\n", only);
        CU_cleanup_registry();
        return 2;
    }
    if (part_n > 1) {
        keep_part(part_k, part_n);
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() +
                      CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
