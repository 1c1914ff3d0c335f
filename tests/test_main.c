/* test_main.c - runs every CUnit suite; exits non-zero on any failure.
 * usage: specl_tests [--full] [--wide] [--only TEXT] [--part K/N]
 * [--claim DIR] [SUITE...] (no SUITE: all of them; the wide suite is
 * there only with --wide; --only: just the tests whose name holds TEXT;
 * --part: tests K, K + N, K + 2N, ... of those, counted from 0 across
 * the suites, so that N processes share a run; --claim: each of those
 * run by the first of the processes given DIR to claim it, so that they
 * share a run by the tests' times); specl_tests --list names the
 * suites */
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op_gather.h"
#include "suites.h"

int test_full = 0;
int test_wide = 0;

/* Each suite, and whether its tests stand alone: --claim shares such a
 * suite's tests one by one between processes, any other suite whole (a
 * test of tune resumes what the one before it tuned). tune, the longest
 * suite claimed whole (minutes on PoCL), comes first, so that the other
 * processes share the rest while one runs it. */
static const struct {
    const char *name;
    int (*add)(void);
    int alone;
} suites[] = {
    {"tune", add_tune_suite, 0},       {"spec", add_spec_suite, 0},
    {"emit", add_emit_suite, 0},       {"syntax", add_syntax_suite, 0},
    {"numeric", add_numeric_suite, 1}, {"sweep", add_sweep_suite, 0},
    {"stub", add_stub_suite, 0},       {"cli", add_cli_suite, 0},
    {"caps", add_caps_suite, 0},       {"import", add_import_suite, 0},
    {"wide", add_wide_suite, 0},
    {NULL, NULL, 0},
};

static int wanted(const char *name, int argc, char **argv)
{
    int any = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            i += strcmp(argv[i], "--only") == 0 ||
                 strcmp(argv[i], "--part") == 0 ||
                 strcmp(argv[i], "--claim") == 0;
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

/* Leaves inactive every suite none of whose tests is active, so that its
 * setup (the syntax suite's needs libclang; the numeric suite's opens the
 * device) runs only for tests that run. */
static void skip_idle_suites(void)
{
    for (CU_pSuite s = CU_get_registry()->pSuite; s != NULL; s = s->pNext) {
        int any = 0;
        for (CU_pTest t = s->pTest; t != NULL && !any; t = t->pNext) {
            any = t->fActive;
        }
        if (!any) {
            CU_set_suite_active(s, CU_FALSE);
        }
    }
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

/* --claim DIR: the active tests, in order, each with the function that
 * runs it and the test whose claim it goes with: itself in a suite of
 * tests that stand alone, else its suite's first active test. A process
 * runs a test only when it has created DIR/INDEX of that claim first, and
 * claims its next test when it ends one: processes sharing DIR share the
 * tests by their times, which --part's fixed shares do not (with PoCL's
 * kernel cache empty, a few tests take minutes). */
struct claim_test {
    CU_pTest test;
    CU_TestFunc run;
    size_t claim; /* the index of the claim it goes with */
    int mine;     /* this process holds that claim (its first test) */
};
static struct claim_test *claims;
static size_t n_claims;
static const char *claim_dir;

/* Whether this process claims test I: 1 when it created DIR/I, 0 when
 * another process had; any other failure ends the process (a test
 * nobody runs must not pass unseen). */
static int claim(size_t i)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%zu", claim_dir, i);
    if (n < 0 || (size_t)n >= sizeof path) {
        fprintf(stderr, "specl_tests: --claim's directory name is too "
                "long\n");
        exit(2);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
        close(fd);
        return 1;
    }
    if (errno == EEXIST) {
        return 0;
    }
    fprintf(stderr, "specl_tests: cannot claim a test in %s: %s\n",
            claim_dir, strerror(errno));
    exit(2);
}

/* Leaves inactive the tests from I on that go with other processes'
 * claims, up to the first that goes with one of this process's. */
static void claim_next(size_t i)
{
    for (; i < n_claims; i++) {
        struct claim_test *c = &claims[i];
        if (c->claim == i) {
            c->mine = claim(i);
        }
        if (claims[c->claim].mine) {
            return;
        }
        CU_set_test_active(c->test, CU_FALSE);
    }
}

/* Every claimed test's function: runs the test, then claims the next.
 * (A fatal assertion leaves the test early, and its process's next
 * active test is then run unclaimed: it may run twice, in a run that
 * fails anyway.) */
static void run_claimed(void)
{
    const CU_pTest current = CU_get_current_test();
    size_t i = 0;
    while (i < n_claims && claims[i].test != current) {
        i++;
    }
    if (i == n_claims) {
        fprintf(stderr, "specl_tests: a claimed test is not listed\n");
        exit(2);
    }
    claims[i].run();
    claim_next(i + 1);
}

/* The index of suite NAME in suites[]; -1 where there is none. */
static int suite_index(const char *name)
{
    for (int i = 0; suites[i].name != NULL; i++) {
        if (strcmp(suites[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* Puts run_claimed in place of every active test's function and claims
 * the first; 0, or -1 when out of memory. */
static int claim_tests(const char *dir)
{
    size_t n = 0;
    for (CU_pSuite s = CU_get_registry()->pSuite; s != NULL; s = s->pNext) {
        for (CU_pTest t = s->pTest; t != NULL; t = t->pNext) {
            n += t->fActive != CU_FALSE;
        }
    }
    claims = calloc(n > 0 ? n : 1, sizeof *claims);
    if (claims == NULL) {
        return -1;
    }
    claim_dir = dir;
    CU_set_fail_on_inactive(CU_FALSE);
    for (CU_pSuite s = CU_get_registry()->pSuite; s != NULL; s = s->pNext) {
        const int k = suite_index(s->pName);
        const int alone = k >= 0 && suites[k].alone;
        const size_t first = n_claims;
        for (CU_pTest t = s->pTest; t != NULL; t = t->pNext) {
            if (t->fActive) {
                struct claim_test *c = &claims[n_claims];
                c->test = t;
                c->run = t->pTestFunc;
                c->claim = alone ? n_claims : first;
                t->pTestFunc = run_claimed;
                n_claims++;
            }
        }
    }
    claim_next(0);
    return 0;
}

/* K/N of --part into *K, *N; 0 when it is not two numbers, K < N. */
static int read_part(const char *text, unsigned *k, unsigned *n)
{
    char end;
    return sscanf(text, "%u/%u%c", k, n, &end) == 2 && *k < *n;
}

int main(int argc, char **argv)
{
    const char *only = NULL, *claim_in = NULL;
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
        } else if (strcmp(argv[i], "--claim") == 0) {
            if (i + 1 == argc || access(argv[i + 1], W_OK | X_OK) != 0) {
                fprintf(stderr, "specl_tests: --claim needs a directory "
                        "it may write (got '%s')\n",
                        i + 1 < argc ? argv[i + 1] : "");
                return 2;
            }
            claim_in = argv[++i];
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
        if (strcmp(argv[i], "--only") == 0 || strcmp(argv[i], "--part") == 0 ||
            strcmp(argv[i], "--claim") == 0) {
            i++;
            continue;
        }
        /* Named alone it would run nothing, silently. */
        if (!test_wide && strcmp(argv[i], "wide") == 0) {
            fprintf(stderr, "specl_tests: the wide suite runs only with "
                    "--wide\n");
        }
        if (argv[i][0] != '-' && suite_index(argv[i]) < 0) {
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
    if (only != NULL || part_n > 1) {
        skip_idle_suites();
    }
    if (claim_in != NULL && claim_tests(claim_in) != 0) {
        fprintf(stderr, "specl_tests: out of memory\n");
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() +
                      CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    free(claims);
    return failed ? 1 : 0;
}
