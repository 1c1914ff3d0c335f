/* test_cli.c - the command line as a build system drives it: the outputs
 * gen announces (--list-outputs) and the depfile it writes. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "testutil.h"

#define TWO_SPECS "specs/seeds.yaml tests/stubs.yaml"

/* --list-outputs names exactly the files gen then writes, writes nothing
 * itself, and follows -o (a trailing slash included). */
static void test_list_outputs(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *listed = tu_path(dir, "listed"), *out = tu_path(dir, "out");
    char *wrote = tu_path(dir, "wrote");
    TU_CHECK(tu_run("%s gen " TWO_SPECS " -o '%s/' --list-outputs >'%s'",
                    TU_SPECL, out, listed) == 0,
             "gen --list-outputs failed");
    char **names = NULL;
    int n_names = tu_list(out, NULL, &names);
    TU_CHECK(n_names < 0, "--list-outputs created %s", out);
    if (n_names >= 0) {
        tu_free_list(names, n_names);
    }
    TU_CHECK(tu_run("%s gen " TWO_SPECS " -o '%s' >/dev/null && "
                    "find '%s' -type f ! -name '.specl*' | sort >'%s' && "
                    "sort '%s' | cmp -s - '%s'",
                    TU_SPECL, out, out, wrote, listed, wrote) == 0,
             "the files gen wrote are not the ones --list-outputs named "
             "(%s, %s)",
             listed, wrote);
    char *text = tu_read(listed, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    /* seeds.yaml has 6 kernels, stubs.yaml 5: .cl, .h and .c each. */
    TU_CHECK(tu_count_lines(text) == 33, "%d outputs listed",
             tu_count_lines(text));
    TU_CHECK(strstr(text, "//") == NULL, "double slash in:\n%s", text);
    TU_CHECK(strncmp(text, out, strlen(out)) == 0 &&
                 strncmp(text + strlen(out), "/seed_lora_512.cl\n", 18) == 0,
             "first output is not %s/seed_lora_512.cl:\n%s", out, text);
    free(text);
    /* An invalid spec: the reader's error, no list, exit 1. */
    TU_CHECK(tu_run("%s gen tests/bad/rank_gt_features.yaml --list-outputs "
                    ">'%s' 2>/dev/null",
                    TU_SPECL, listed) == 1,
             "--list-outputs of a bad spec did not exit 1");
    text = tu_read(listed, NULL);
    TU_CHECK(text != NULL && text[0] == '\0', "listed: %s", text);
    free(text);
    TU_CHECK(tu_run("%s plan specs/seeds.yaml --list-outputs 2>/dev/null",
                    TU_SPECL) == 2,
             "plan to stdout with --list-outputs is not a usage error");
    TU_CHECK(tu_run("%s check specs/seeds.yaml --depfile x 2>/dev/null",
                    TU_SPECL) == 2,
             "check --depfile is not a usage error");
    tu_rmtree(dir);
    free(dir);
    free(listed);
    free(out);
    free(wrote);
}

/* --depfile: one make rule, every output a target, every spec and the
 * database a prerequisite, spaces escaped; make reads it. */
static void test_depfile(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *dep = tu_path(dir, "k.d");
    TU_CHECK(tu_run("cd '%s' && %s/%s gen %s/specs/seeds.yaml -o 'my out' "
                    "--db %s/tuning/nvidia-h100-80gb-hbm3.yaml --depfile k.d "
                    ">/dev/null",
                    dir, getenv("PWD"), TU_SPECL, getenv("PWD"),
                    getenv("PWD")) == 0,
             "gen --depfile failed");
    char *text = tu_read(dep, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    TU_CHECK(strncmp(text, "my\\ out/seed_lora_512.cl \\\n", 27) == 0,
             "depfile:\n%s", text);
    TU_CHECK(strstr(text, "my\\ out/seed_layernorm_1024.c:") != NULL &&
                 strstr(text, "/specs/seeds.yaml \\\n") != NULL &&
                 strstr(text, "/tuning/nvidia-h100-80gb-hbm3.yaml\n") != NULL,
             "depfile:\n%s", text);
    free(text);
    /* make reads it: the outputs are up to date until the spec changes
     * (out2 carries no space: make does not take one in a goal). */
    TU_CHECK(
        tu_run("cd '%s' && cp %s/specs/seeds.yaml s.yaml && "
               "%s/%s gen s.yaml -o out2 --depfile k2.d >/dev/null && "
               "printf 'include k2.d\\nout2/%%%%:\\n\\t@true\\n' >m.mk && "
               "make -s -q -f m.mk out2/seed_rmsnorm_1024.h && "
               "touch -d '-1 hour' out2/seed_rmsnorm_1024.h && "
               "! make -s -q -f m.mk out2/seed_rmsnorm_1024.h",
               dir, getenv("PWD"), getenv("PWD"), TU_SPECL) == 0,
        "make does not read %s/k2.d as a rule of outputs on s.yaml", dir);
    tu_rmtree(dir);
    free(dir);
    free(dep);
}

int add_cli_suite(void)
{
    CU_pSuite s = CU_add_suite("cli", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "--list-outputs names what gen writes",
                    test_list_outputs) == NULL ||
        CU_add_test(s, "--depfile is a make rule of outputs and inputs",
                    test_depfile) == NULL) {
        return -1;
    }
    return 0;
}
