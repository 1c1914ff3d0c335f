/* test_cli.c - the command line: as a build system drives it (the outputs
 * gen announces with --list-outputs, the depfile it writes), its parser
 * (--help, usage errors, option forms, '-' for standard input), the
 * checks made before any device work, and the output of bench and tune
 * (csv and json rows, progress, plots). */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "runtime.h"
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
    /* seeds.yaml has 7 kernels, stubs.yaml 20: .cl, .h and .c each. */
    TU_CHECK(tu_count_lines(text) == 81, "%d outputs listed",
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
    TU_CHECK(strstr(text, "my\\ out/seed_lora_backward_512.c:") != NULL &&
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

/* The paths of test_depfile_awkward: an output directory with a space,
 * ':', '#', '$', '%' (special in a target) and a backslash; a spec whose
 * backslashes stand before a space, '#' and ':', and alone. */
#define AWKWARD_OUT "o u:t#$%\\x"
#define AWKWARD_SPEC "s p\\ e\\#c\\:$%\\x"

/* Whether make's database (-p) in DB has the rule OUT/awk.EXT: SPEC. */
static int make_has_rule(const char *db, const char *ext)
{
    char line[256];
    snprintf(line, sizeof line, "\n%s/awk.%s: %s\n", AWKWARD_OUT, ext,
             AWKWARD_SPEC);
    return strstr(db, line) != NULL;
}

/* --depfile of awkward paths: make itself reads every output back as a
 * target of the spec, by the names gen wrote: up to date, then stale
 * once the spec is newer (a name misread: no rule for it, exit 2). A
 * path make cannot read back is refused before anything is written. */
static void test_depfile_awkward(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    /* tu_run is printf-style: the '%' in the names doubled. stamp, a
     * goal on the first output, written here as make reads it; the
     * outputs' recipe does nothing. */
    TU_CHECK(tu_run("cd '%s' && printf 'kernels: [{name: awk, op: softmax, "
                    "features: 8}]\\n' >'s p\\ e\\#c\\:$%%\\x' && "
                    "%s/%s gen 's p\\ e\\#c\\:$%%\\x' -o 'o u:t#$%%\\x' "
                    "--depfile k.d >/dev/null && "
                    "printf 'include k.d\\nstamp: "
                    "o\\\\ u\\\\:t\\\\#$$%%%%\\\\x/awk.cl\\n"
                    "%%%%.cl:\\n\\t@true\\n' >m.mk && "
                    "touch stamp && make -p -q -f m.mk stamp >db.txt",
                    dir, getenv("PWD"), TU_SPECL) == 0,
             "make does not read %s/k.d back as up to date", dir);
    char *db_path = tu_path(dir, "db.txt");
    char *db = tu_read(db_path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(db);
    TU_CHECK(make_has_rule(db, "cl") && make_has_rule(db, "h") &&
                 make_has_rule(db, "c"),
             "make read other names from %s/k.d (its database: %s)", dir,
             db_path);
    free(db);
    free(db_path);
    TU_CHECK(tu_run("cd '%s' && touch -d '-1 hour' 'o u:t#$%%\\x/awk.cl' && "
                    "make -s -q -f m.mk stamp; test $? = 1",
                    dir) == 0,
             "make does not see %s/k.d's first output as stale", dir);
    /* A spec ending in '\': make keeps it doubled at the end of a line. */
    TU_CHECK(tu_run("cd '%s' && cp 's p\\ e\\#c\\:$%%\\x' 'k\\' && "
                    "%s/%s gen 'k\\' -o o2 --depfile k2.d >/dev/null "
                    "2>err.txt; test $? = 1 && test ! -e o2 && test ! -e k2.d",
                    dir, getenv("PWD"), TU_SPECL) == 0,
             "gen of a spec ending in '\\' with --depfile did not fail "
             "before writing");
    char *err_path = tu_path(dir, "err.txt");
    char *err = tu_read(err_path, NULL);
    TU_CHECK(err != NULL &&
                 strcmp(err, "specl: error: --depfile: make cannot read the "
                             "path 'k\\' back (it ends in '\\')\n") == 0,
             "stderr: %s", err ? err : "(none)");
    free(err);
    free(err_path);
    tu_rmtree(dir);
    free(dir);
}

/* TEXT with every run of blanks and line breaks as one space: CMake
 * wraps its messages. */
static void collapse_blanks(char *text)
{
    char *out = text;
    for (const char *p = text; *p != '\0'; p++) {
        int blank = *p == ' ' || *p == '\n' || *p == '\t';
        if (!blank || (out > text && out[-1] != ' ')) {
            *out++ = blank ? ' ' : *p;
        }
    }
    *out = '\0';
}

/* Configures tests/cmake/dup for CASE into DIR/CASE; its exit status,
 * its stderr (blanks collapsed) in *ERR (caller frees). */
static int configure_dup(const char *dir, const char *which, char **err)
{
    char *pwd = getenv("PWD");
    int rc = tu_run("cmake -S tests/cmake/dup -B '%s/%s' -DCASE=%s "
                    "-DSPECL_EXECUTABLE='%s/%s' >/dev/null 2>'%s/%s.err'",
                    dir, which, which, pwd, TU_SPECL, dir, which);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.err", dir, which);
    *err = tu_read(path, NULL);
    if (*err != NULL) {
        collapse_blanks(*err);
    }
    return rc;
}

/* specl_generate() calls of one project that generate one kernel name
 * from two specs, for two targets or one, fail at configure time naming
 * both; one spec in two targets configures. */
static void test_cmake_duplicate_kernel(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *pwd = getenv("PWD"), *err = NULL, want[1024];
    int rc = configure_dup(dir, "specs", &err);
    snprintf(want, sizeof want,
             "specl_generate(second): kernel 'dup' of "
             "%s/tests/cmake/dup/b.yaml is also generated by "
             "specl_generate(first) from %s/tests/cmake/dup/a.yaml: its "
             "dup_create and the rest of dup.c would be defined twice.",
             pwd, pwd);
    TU_CHECK(rc != 0 && err != NULL && strstr(err, want) != NULL,
             "two specs of kernel dup: exit %d\n%s", rc, err ? err : "");
    free(err);
    rc = configure_dup(dir, "target", &err);
    snprintf(want, sizeof want,
             "specl_generate(first): kernel 'dup' of "
             "%s/tests/cmake/dup/b.yaml is also generated by "
             "specl_generate(first) from %s/tests/cmake/dup/a.yaml: its "
             "dup_create and the rest of dup.c would be defined twice.",
             pwd, pwd);
    TU_CHECK(rc != 0 && err != NULL && strstr(err, want) != NULL,
             "two specs of kernel dup in one target: exit %d\n%s", rc,
             err ? err : "");
    free(err);
    rc = configure_dup(dir, "targets", &err);
    TU_CHECK(rc == 0, "one spec in two targets: exit %d\n%s", rc,
             err ? err : "");
    free(err);
    tu_rmtree(dir);
    free(dir);
}

/* ---- the parser ------------------------------------------------------- */

/* Runs `PREFIX specl ARGS` (ARGS printf-style; PREFIX: environment
 * settings and a time limit) with stdout and stderr in *OUT and *ERR
 * (caller frees; NULL: discarded); returns its exit status (124: it ran
 * past the time limit). */
static int run_specl(const char *prefix, char **out, char **err,
                     const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int run_specl(const char *prefix, char **out, char **err,
                     const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *dir = tu_tempdir();
    if (dir == NULL) {
        return -1;
    }
    char *o = tu_path(dir, "out"), *e = tu_path(dir, "err");
    int rc = tu_run("%s %s %s >'%s' 2>'%s'", prefix, TU_SPECL, args, o, e);
    if (out != NULL) {
        *out = tu_read(o, NULL);
    }
    if (err != NULL) {
        *err = tu_read(e, NULL);
    }
    tu_rmtree(dir);
    free(dir);
    free(o);
    free(e);
    return rc;
}

/* Time limits: what must fail at once, and what runs kernels on PoCL. */
#define AT_ONCE "timeout 10"
#define LIMIT "timeout 300"
/* The ocl-icd loader then finds no platform. */
#define NO_PLATFORM "OCL_ICD_VENDORS=/nonexistent-dir "

static const char *const commands[] = {"gen",  "plan",     "check",
                                       "list", "devices",  "bench",
                                       "tune", "db merge", NULL};

/* --help and -h: the command's usage on stdout, nothing on stderr, exit
 * 0; `specl --help` names every command, `specl help CMD` is `specl CMD
 * --help`. */
static void test_help(void)
{
    char *out, *err, *again;
    for (int i = 0; commands[i] != NULL; i++) {
        char head[64];
        snprintf(head, sizeof head, "usage: specl %s", commands[i]);
        for (int h = 0; h < 2; h++) {
            const char *flag = h ? "-h" : "--help";
            int rc =
                run_specl(AT_ONCE, &out, &err, "%s %s", commands[i], flag);
            TU_CHECK(rc == 0 && out != NULL &&
                         strncmp(out, head, strlen(head)) == 0 &&
                         err != NULL && err[0] == '\0',
                     "specl %s %s: exit %d\n%s%s", commands[i], flag, rc,
                     out ? out : "", err ? err : "");
            free(err);
            if (h == 0) {
                TU_CHECK(run_specl(AT_ONCE, &again, NULL, "help %s",
                                   commands[i]) == 0 &&
                             again != NULL && out != NULL &&
                             strcmp(again, out) == 0,
                         "specl help %s differs from --help", commands[i]);
                free(again);
            }
            free(out);
        }
    }
    int rc = run_specl(AT_ONCE, &out, NULL, "--help");
    CU_ASSERT_EQUAL(rc, 0);
    for (int i = 0; out != NULL && commands[i] != NULL; i++) {
        char line[64];
        snprintf(line, sizeof line, "\n  %s ", commands[i]);
        TU_CHECK(strstr(out, line) != NULL, "specl --help lacks %s:\n%s",
                 commands[i], out);
    }
    TU_CHECK(out != NULL && strstr(out, "Exit status") != NULL,
             "specl --help lacks the exit statuses");
    free(out);
}

/* Bad command lines: one message, the hint, exit 2, nothing on stdout. */
static void test_usage_errors(void)
{
    static const struct {
        const char *args;
        const char *err; /* all of stderr */
    } cases[] = {
        {"gen --foo specs/seeds.yaml",
         "specl gen: error: unknown option '--foo'\n"
         "Try 'specl gen --help'.\n"},
        {"gen specs/seeds.yaml --foo=bar",
         "specl gen: error: unknown option '--foo'\n"
         "Try 'specl gen --help'.\n"},
        {"plan -x specs/seeds.yaml", "specl plan: error: unknown option '-x'\n"
                                     "Try 'specl plan --help'.\n"},
        {"check -o /tmp specs/seeds.yaml",
         "specl check: error: unknown option '-o'\n"
         "Try 'specl check --help'.\n"},
        {"gen specs/seeds.yaml -o",
         "specl gen: error: option '-o' needs a value\n"
         "Try 'specl gen --help'.\n"},
        {"gen specs/seeds.yaml --depfile",
         "specl gen: error: option '--depfile' needs a value\n"
         "Try 'specl gen --help'.\n"},
        {"gen specs/seeds.yaml --list-outputs=yes -o x",
         "specl gen: error: option '--list-outputs' takes no value\n"
         "Try 'specl gen --help'.\n"},
        {"gen specs/seeds.yaml --d x",
         "specl gen: error: option '--d' is ambiguous (--db, --db-device, "
         "--depfile)\nTry 'specl gen --help'.\n"},
        {"gen specs/seeds.yaml --target tpu",
         "specl gen: error: --target must be cpu, gpu, tensor or sm90a (got tpu)\n"
         "Try 'specl gen --help'.\n"},
        {"gen", "specl gen: error: no spec files given\n"
                "Try 'specl gen --help'.\n"},
        {"check - -",
         "specl check: error: '-' (standard input) given 2 times; it can "
         "be read once\nTry 'specl check --help'.\n"},
        {"bench --foo specs/seeds.yaml",
         "specl bench: error: unknown option '--foo'\n"
         "Try 'specl bench --help'.\n"},
        {"bench specs/seeds.yaml --csv --json",
         "specl bench: error: --csv and --json exclude each other\n"
         "Try 'specl bench --help'.\n"},
        {"tune specs/seeds.yaml --strategy=fastest",
         "specl tune: error: --strategy must be exhaustive, random or local "
         "(got fastest)\nTry 'specl tune --help'.\n"},
        {"db merge tests/tune/a.yaml --force -o x",
         "specl db merge: error: unknown option '--force'\n"
         "Try 'specl db merge --help'.\n"},
        {"db merge tests/tune/a.yaml",
         "specl db merge: error: no output given: -o FILE\n"
         "Try 'specl db merge --help'.\n"},
        {"db split", "specl db: error: unknown db command 'split' (merge is "
                     "the one)\nTry 'specl db --help'.\n"},
        {"list --all", "specl list: error: unknown option '--all'\n"
                       "Try 'specl list --help'.\n"},
        {"devices 0", "specl devices: error: devices takes no arguments "
                      "(got '0')\nTry 'specl devices --help'.\n"},
        {"frobnicate", "specl: error: unknown command 'frobnicate'\n"
                       "Try 'specl --help'.\n"},
        {"--frobnicate", "specl: error: unknown option '--frobnicate'\n"
                         "Try 'specl --help'.\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        int rc = run_specl(AT_ONCE, &out, &err, "%s", cases[i].args);
        TU_CHECK(rc == 2 && out != NULL && out[0] == '\0' && err != NULL &&
                     strcmp(err, cases[i].err) == 0,
                 "specl %s: exit %d, stderr\n%sexpected\n%s", cases[i].args,
                 rc, err ? err : "", cases[i].err);
        free(out);
        free(err);
    }
    /* No command at all: the overview, on stderr. */
    char *err;
    TU_CHECK(run_specl(AT_ONCE, NULL, &err, "%s", "") == 2 && err != NULL &&
                 strncmp(err, "usage: specl COMMAND", 20) == 0,
             "specl alone: %s", err ? err : "");
    free(err);
}

/* --name=value and --name value, -o DIR and --output DIR, options after
 * the operands, and -- before an operand that looks like an option. */
static void test_option_forms(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    /* The output directory goes between HEAD and TAIL. */
    static const struct {
        const char *head, *tail;
    } forms[] = {
        {"-o ", " " TWO_SPECS},
        {"--output ", " " TWO_SPECS},
        {"--output=", " " TWO_SPECS},
        {TWO_SPECS " -o ", ""},
        {"--target=gpu " TWO_SPECS " --output ", " --target gpu"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char args[1024];
        snprintf(args, sizeof args, "%s'%s/%c'%s", forms[i].head, dir,
                 (char)('a' + i), forms[i].tail);
        int rc = run_specl(LIMIT, NULL, NULL, "gen %s", args);
        char *listed = tu_path(dir, "listed");
        rc |= tu_run("cd '%s' && find %c -type f ! -name '.specl*' >listed",
                     dir, (char)('a' + i));
        char *text = tu_read(listed, NULL);
        TU_CHECK(rc == 0 && text != NULL && tu_count_lines(text) == 81,
                 "gen %s: exit %d, wrote\n%s", args, rc, text ? text : "");
        free(text);
        free(listed);
    }
    /* --db=FILE and --db FILE: the same notes. */
    char *a, *b;
    run_specl(LIMIT, NULL, &a,
              "plan specs/seeds.yaml --db "
              "tuning/nvidia-h100-80gb-hbm3.yaml");
    run_specl(LIMIT, NULL, &b,
              "plan --db=tuning/nvidia-h100-80gb-hbm3.yaml "
              "specs/seeds.yaml");
    TU_CHECK(a != NULL && b != NULL && strstr(a, "tuning entry") != NULL &&
                 strcmp(a, b) == 0,
             "--db FILE and --db=FILE differ:\n%s\n%s", a, b);
    free(a);
    free(b);
    /* After --, a file whose name starts with '-' is a spec file. */
    TU_CHECK(tu_run("cd '%s' && cp %s/tests/good/rows.yaml ./--odd.yaml && "
                    "%s/%s check -- --odd.yaml >out 2>&1 && "
                    "grep -qx 'checked 4 kernels' out && "
                    "! %s/%s check --odd.yaml >/dev/null 2>&1",
                    dir, getenv("PWD"), getenv("PWD"), TU_SPECL, getenv("PWD"),
                    TU_SPECL) == 0,
             "check -- --odd.yaml did not read it as a spec");
    tu_rmtree(dir);
    free(dir);
}

/* '-': the spec from standard input, named <stdin> in messages; gen,
 * plan and check read it, and the depfile leaves it out. */
static void test_stdin(void)
{
    char *out, *err;
    int rc = run_specl(LIMIT, &out, NULL, "check - <tests/good/rows.yaml");
    TU_CHECK(rc == 0 && out != NULL && strcmp(out, "checked 4 kernels\n") == 0,
             "check - : exit %d, %s", rc, out ? out : "");
    free(out);
    rc = run_specl(LIMIT, NULL, &err,
                   "check - <tests/bad/rank_gt_features.yaml");
    TU_CHECK(rc == 1 && err != NULL && strncmp(err, "<stdin>:", 8) == 0,
             "check - of a bad spec: exit %d\n%s", rc, err ? err : "");
    free(err);
    /* The same plan as from the file, but for the name of the spec. */
    char *from_file, *from_stdin;
    run_specl(LIMIT, &from_file, NULL, "plan tests/good/rows.yaml");
    run_specl(LIMIT, &from_stdin, NULL, "plan - <tests/good/rows.yaml");
    TU_CHECK(from_file != NULL && from_stdin != NULL &&
                 strstr(from_stdin, "from <stdin>") != NULL &&
                 tu_count_lines(from_file) == tu_count_lines(from_stdin),
             "plan - differs from plan FILE:\n%s", from_stdin);
    free(from_file);
    free(from_stdin);
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *dep = tu_path(dir, "k.d");
    rc = run_specl(LIMIT, NULL, NULL,
                   "gen - specs/seeds.yaml -o '%s/out' "
                   "--depfile '%s' <tests/good/rows.yaml",
                   dir, dep);
    char *text = tu_read(dep, NULL);
    TU_CHECK(rc == 0 && text != NULL && strstr(text, "good_softmax.c") &&
                 strstr(text, "specs/seeds.yaml\n") != NULL &&
                 strstr(text, "stdin") == NULL && strstr(text, " -") == NULL,
             "gen - --depfile: exit %d\n%s", rc, text ? text : "");
    free(text);
    free(dep);
    tu_rmtree(dir);
    free(dir);
}

#define NO_PLATFORM_MESSAGE                                                   \
    "specl: error: no OpenCL platform found (is an OpenCL driver/ICD "        \
    "installed? e.g. apt install pocl-opencl-icd)\n"

/* Wrong arguments fail at once, before any device work: with no OpenCL
 * platform at all they still say what is wrong with them. */
static void test_checked_first(void)
{
    static const struct {
        const char *args;
        int status;
        const char *err; /* the start of stderr */
    } cases[] = {
        {"bench specs/seeds.yaml --kernel nope", 1,
         "specl: error: no kernel named 'nope' in the specs; they have: "
         "seed_lora_512, seed_lora_1024, seed_lora_2048, seed_softmax_1024, "
         "seed_rmsnorm_1024, seed_layernorm_1024, seed_lora_backward_512\n"},
        {"tune specs/seeds.yaml --kernel=nope --db /nonexistent-dir/x.yaml", 1,
         "specl: error: no kernel named 'nope' in the specs; they have: "
         "seed_lora_512,"},
        {"plan specs/seeds.yaml --kernel nope", 1,
         "specl: error: no kernel named 'nope' in the specs; they have: "
         "seed_lora_512, seed_lora_1024, seed_lora_2048, seed_softmax_1024, "
         "seed_rmsnorm_1024, seed_layernorm_1024, seed_lora_backward_512\n"},
        {"bench - --kernel nope <tests/tune/small.yaml", 1,
         "specl: error: no kernel named 'nope' in the specs; they have: "
         "t_lora, t_softmax\n"},
        {"bench specs/seeds.yaml --rows 0", 2,
         "specl bench: error: --rows needs a whole number in [1, 16777216], "
         "got '0'\n"},
        {"bench specs/seeds.yaml --reps x", 2,
         "specl bench: error: --reps needs a whole number in [1, 1000], got "
         "'x'\n"},
        {"bench specs/seeds.yaml --device 9:", 2,
         "specl bench: error: --device needs N or PLATFORM:DEVICE"},
        {"tune specs/seeds.yaml --device=gpu", 2,
         "specl tune: error: --device needs N or PLATFORM:DEVICE"},
        {"tune specs/seeds.yaml --rows 1.5", 2,
         "specl tune: error: --rows needs a whole number"},
        {"bench tests/bad/rank_gt_features.yaml", 1,
         "tests/bad/rank_gt_features.yaml:"},
        {"tune specs/seeds.yaml --db /nonexistent-dir/x.yaml", 1,
         "specl: error: cannot write the tuning database "
         "/nonexistent-dir/x.yaml"},
        {"bench specs/seeds.yaml --db /nonexistent-dir/x.yaml", 1,
         "/nonexistent-dir/x.yaml"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        int rc = run_specl(AT_ONCE, &out, &err, "%s", cases[i].args);
        TU_CHECK(rc == cases[i].status && err != NULL &&
                     strncmp(err, cases[i].err, strlen(cases[i].err)) == 0 &&
                     out != NULL && out[0] == '\0',
                 "specl %s: exit %d, expected %d; stderr\n%s", cases[i].args,
                 rc, cases[i].status, err ? err : "");
        free(out);
        free(err);
        /* Without a platform: the same, so nothing asked for one. */
        char *err2;
        rc = run_specl(NO_PLATFORM AT_ONCE, NULL, &err2, "%s", cases[i].args);
        TU_CHECK(rc == cases[i].status && err != NULL && err2 != NULL &&
                     strstr(err2, "OpenCL") == NULL,
                 NO_PLATFORM "specl %s: exit %d\n%s", cases[i].args, rc,
                 err2 ? err2 : "");
        free(err2);
    }
}

/* plan --kernel NAME: that kernel's plan alone, the one gen's plan of
 * all of them holds; with -o, the one file listed and written. */
static void test_plan_kernel(void)
{
    char *out, *all;
    int rc = run_specl(AT_ONCE, &out, NULL,
                       "plan " TWO_SPECS " --kernel=seed_softmax_1024");
    int rc_all = run_specl(AT_ONCE, &all, NULL, "plan " TWO_SPECS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    static const char head[] = "/* seed_softmax_1024.plan - generated by ";
    const char *second =
        strstr(out + strlen(head), ".plan - generated by ");
    TU_CHECK(rc == 0 && rc_all == 0 && strncmp(out, head, strlen(head)) == 0 &&
                 second == NULL && strstr(all, out) != NULL,
             "plan --kernel seed_softmax_1024: exit %d\n%s", rc, out);
    free(out);
    free(all);
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    rc = run_specl(AT_ONCE, &out, NULL,
                   "plan " TWO_SPECS " --kernel stub_rope -o '%s' --list-outputs",
                   dir);
    char *want = tu_path(dir, "stub_rope.plan\n");
    TU_CHECK(rc == 0 && out != NULL && want != NULL && strcmp(out, want) == 0,
             "plan --kernel -o --list-outputs: exit %d\n%s", rc,
             out ? out : "");
    free(out);
    free(want);
    rc = run_specl(AT_ONCE, NULL, NULL, "plan " TWO_SPECS " --kernel stub_rope "
                   "-o '%s/p' -q", dir);
    char **names = NULL;
    char *plans = tu_path(dir, "p");
    int n = tu_list(plans, ".plan", &names);
    free(plans);
    TU_CHECK(rc == 0 && n == 1 && strcmp(names[0], "stub_rope.plan") == 0,
             "plan --kernel stub_rope -o: exit %d, %d files", rc, n);
    if (n >= 0) {
        tu_free_list(names, n);
    }
    tu_rmtree(dir);
    free(dir);
}

/* No OpenCL platform: devices, bench and tune say so in the same words
 * and exit 1. */
static void test_no_platform(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    const char *const runs[] = {
        "devices", "bench tests/tune/small.yaml --rows 8 --quick",
        "tune tests/tune/small.yaml --kernel t_softmax --rows 8 --db "};
    for (int i = 0; i < 3; i++) {
        char args[1024], *out, *err;
        /* tune's database in DIR */
        snprintf(args, sizeof args, "%s%s%s%s", runs[i], i == 2 ? "'" : "",
                 i == 2 ? dir : "", i == 2 ? "/db.yaml'" : "");
        int rc = run_specl(NO_PLATFORM AT_ONCE, &out, &err, "%s", args);
        TU_CHECK(rc == 1 && err != NULL &&
                     strcmp(err, NO_PLATFORM_MESSAGE) == 0 && out != NULL &&
                     out[0] == '\0',
                 "specl %s without a platform: exit %d\n%s%s", args, rc,
                 out ? out : "", err ? err : "");
        free(out);
        free(err);
    }
    /* With one: a device per line, numbered as --device takes it. */
    char *out;
    int rc = run_specl(LIMIT, &out, NULL, "devices");
    TU_CHECK(rc == 0 && out != NULL && strncmp(out, "0  0:0  ", 8) == 0,
             "specl devices: exit %d\n%s", rc, out ? out : "");
    free(out);
    tu_rmtree(dir);
    free(dir);
}

/* ---- bench's rows ----------------------------------------------------- */

/* The quoting of CSV fields and JSON strings. */
static void test_quoting(void)
{
    static const struct {
        const char *in, *csv, *json;
    } cases[] = {
        {"plain", "plain", "\"plain\""},
        {"", "", "\"\""},
        {"a,b", "\"a,b\"", "\"a,b\""},
        {"say \"x\"", "\"say \"\"x\"\"\"", "\"say \\\"x\\\"\""},
        {"two\nlines", "\"two\nlines\"", "\"two\\nlines\""},
        {"back\\slash\ttab\001", "back\\slash\ttab\001",
         "\"back\\\\slash\\ttab\\u0001\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf csv, json;
        buf_init(&csv);
        buf_init(&json);
        cli_csv_field(&csv, cases[i].in);
        cli_json_string(&json, cases[i].in);
        TU_CHECK(strcmp(buf_str(&csv), cases[i].csv) == 0, "csv of '%s': %s",
                 cases[i].in, buf_str(&csv));
        TU_CHECK(strcmp(buf_str(&json), cases[i].json) == 0,
                 "json of '%s': %s", cases[i].in, buf_str(&json));
        buf_free(&csv);
        buf_free(&json);
    }
}

#define BENCH_SMALL "bench tests/tune/small.yaml --rows 8 --quick"
#define CSV_HEADER                                                            \
    "kernel,op,dtype,device,rows,in_features,out_features,rank,features,"     \
    "heads,head_dim,rotary_dim,vocab,kv_heads,variant,ok,error,us,wall_us,"   \
    "gbs,"                                                                    \
    "gflops,pct_floor,floor_us,floor_gflops,floor_tensor,copy_us,vs_naive,"  \
    "vs_clblast,note,path\n"

/* Whether python3 runs here: the tests parse bench's rows with its csv
 * and json modules when it does. */
static int have_python(void)
{
    return tu_run("python3 -c 'import csv, json' >/dev/null 2>&1") == 0;
}

/* The start of the line of TEXT that holds AT. */
static const char *line_start(const char *text, const char *at)
{
    while (at > text && at[-1] != '\n') {
        at--;
    }
    return at;
}

/* --csv: the columns, a shape dimension each (empty where the op has
 * none), empty figures where they do not apply; rows as each kernel is
 * measured. */
static void test_bench_csv(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *stamped = tu_path(dir, "stamped"), *csv = tu_path(dir, "b.csv");
    /* Each line with the time it came through the pipe. */
    int rc = tu_run(LIMIT " %s " BENCH_SMALL " --csv 2>/dev/null | while IFS= read -r "
                          "line; do printf '%%s %%s\\n' \"$(date +%%s%%N)\" "
                          "\"$line\"; done >'%s' && cut -d' ' -f2- '%s' >'%s'",
                    TU_SPECL, stamped, stamped, csv);
    char *text = tu_read(csv, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    TU_CHECK(rc == 0 && strncmp(text, CSV_HEADER, strlen(CSV_HEADER)) == 0 &&
                 tu_count_lines(text) == 7,
             "bench --csv: exit %d\n%s", rc, text);
    /* lora: its dimensions, no features; softmax: the reverse, and no
     * CLBlast peer: its row has no figures of its own, its ratios none,
     * but the copy of the case's bytes (softmax is memory-bound on any
     * device: 5 flops per 8 bytes) as every row of the case has it. */
    static const char softmax_blas[] = ",8,,,,8,,,,,,clblast,0,,,,,,,";
    const char *blas_row = strstr(text, softmax_blas);
    char *after_copy = NULL, *after_floor = NULL;
    /* floor_us, floor_gflops, floor_tensor: the case's, on this row too */
    double floor_us = blas_row != NULL
                          ? strtod(blas_row + strlen(softmax_blas),
                                   &after_floor)
                          : 0;
    double floor_gflops = after_floor != NULL && *after_floor == ','
                              ? strtod(after_floor + 1, &after_floor)
                              : 0;
    int floor_fp32 = after_floor != NULL &&
                     strncmp(after_floor, ",0,", 3) == 0;
    double copy_us = floor_fp32 ? strtod(after_floor + 3, &after_copy) : 0;
    TU_CHECK(floor_us > 0 && floor_gflops > 0 && floor_fp32,
             "bench --csv: softmax's floor columns:\n%s", text);
    TU_CHECK(strstr(text, "\nt_lora,lora_forward,f32,") != NULL &&
                 strstr(text, ",8,8,32,2,,,,,,,specl,1,") != NULL &&
                 strstr(text, ",8,8,32,2,,,,,,,clblast,") != NULL &&
                 strstr(text, ",8,,,,8,,,,,,specl,1,") != NULL && copy_us > 0 &&
                 after_copy != NULL &&
                 strncmp(after_copy, ",,,no such primitive in CLBlast,\n",
                         33) == 0,
             "bench --csv:\n%s", text);
    /* ... no vs_clblast and no note; the path that ran: its only one */
    const char *softmax = strstr(text, ",8,,,,8,,,,,,specl,1,");
    TU_CHECK(softmax != NULL && strstr(softmax, ",,,0\n") != NULL &&
                 strchr(softmax, '\n') == strstr(softmax, ",,,0\n") + 4,
             "softmax's specl row has a vs_clblast or a note, or no path "
             "0:\n%s", text);
    if (have_python()) {
        TU_CHECK(tu_run("python3 -c 'import csv, sys\n"
                        "rows = list(csv.DictReader(open(sys.argv[1])))\n"
                        "assert len(rows) == 6, rows\n"
                        "for r in rows:\n"
                        "    assert len(r) == 30 and None not in r, r\n"
                        "    assert float(r[\"floor_us\"]) > 0, r\n"
                        "    assert r[\"floor_tensor\"] == \"0\", r\n"
                        "    if r[\"ok\"] == \"1\": float(r[\"us\"])\n"
                        "    else: assert r[\"us\"] == \"\", r\n"
                        "    if r[\"op\"] == \"softmax\": "
                        "assert float(r[\"copy_us\"]) > 0, r\n"
                        "' '%s'",
                        csv) == 0,
                 "python's csv module does not read %s as expected", csv);
    }
    free(text);
    /* The first kernel's rows came before the second was measured. */
    text = tu_read(stamped, NULL);
    long long first_ns = 0, last_ns = 0;
    const char *row = text != NULL ? strstr(text, " t_lora,") : NULL;
    if (row != NULL) {
        first_ns = atoll(line_start(text, row));
        last_ns = atoll(line_start(text, text + strlen(text) - 1));
    }
    TU_CHECK(first_ns > 0 && last_ns - first_ns > 100000000LL,
             "bench --csv into a pipe: the rows came %.3f s apart:\n%s",
             (double)(last_ns - first_ns) / 1e9, text ? text : "");
    free(text);
    tu_rmtree(dir);
    free(dir);
    free(stamped);
    free(csv);
}

/* --json: an array of objects of the same columns, null where csv is
 * empty (vs_naive with --no-naive). */
static void test_bench_json(void)
{
    char *out, *err;
    int rc = run_specl(LIMIT, &out, &err,
                       BENCH_SMALL " --kernel t_softmax --no-naive --json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    TU_CHECK(rc == 0 &&
                 strncmp(out,
                         "[\n{\"kernel\":\"t_softmax\",\"op\":"
                         "\"softmax\",\"dtype\":\"f32\",",
                         40) == 0 &&
                 strstr(out, ",\"rows\":8,\"in_features\":null,"
                             "\"out_features\":null,\"rank\":null,"
                             "\"features\":8,\"heads\":null,"
                             "\"head_dim\":null,\"rotary_dim\":null,"
                             "\"vocab\":null,\"kv_heads\":null,"
                             "\"variant\":\"specl\","
                             "\"ok\":true,") != NULL &&
                 strstr(out, "\"vs_naive\":null,\"vs_clblast\":null,"
                             "\"note\":\"\",\"path\":0}") != NULL &&
                 strstr(out, "\"variant\":\"naive\",\"ok\":false,"
                             "\"error\":null,\"us\":null,") != NULL &&
                 strlen(out) > 4 &&
                 strcmp(out + strlen(out) - 4, "}\n]\n") == 0,
             "bench --json: exit %d\n%s%s", rc, out, err ? err : "");
    if (have_python()) {
        char *dir = tu_tempdir();
        char *json = tu_path(dir, "b.json");
        FILE *f = fopen(json, "w");
        if (f != NULL) {
            fputs(out, f);
            fclose(f);
        }
        TU_CHECK(tu_run("python3 -c 'import json, sys\n"
                        "rows = json.load(open(sys.argv[1]))\n"
                        "assert [r[\"variant\"] for r in rows] == "
                        "[\"specl\", \"naive\", \"clblast\"], rows\n"
                        "assert all(r[\"vs_naive\"] is None for r in rows)\n"
                        "assert rows[0][\"ok\"] is True and "
                        "rows[0][\"us\"] > 0, rows[0]\n"
                        "assert rows[2][\"us\"] is None, rows[2]\n"
                        "assert all(r[\"copy_us\"] > 0 for r in rows)\n"
                        "' '%s'",
                        json) == 0,
                 "python's json module does not read as expected:\n%s", out);
        tu_rmtree(dir);
        free(dir);
        free(json);
    }
    free(out);
    free(err);
}

/* The table: after the device and ceilings lines, a header and one line
 * per kernel and variant (kernel, variant, time, rate, %floor, verified,
 * vs peer);
 * no floor breakdown and no knob listing unless --verbose. */
static void test_bench_table(void)
{
    char *out, *err;
    int rc = run_specl(LIMIT, &out, &err, BENCH_SMALL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const char *header = strstr(out, "\nkernel ");
    const char *lora = strstr(out, "\nt_lora                   specl ");
    const char *softmax = strstr(out, "\nt_softmax                specl ");
    /* Each variant that ran says it verified, and with what error. */
    int verified = 0;
    for (const char *p = out; (p = strstr(p, "%  ok ")) != NULL; p++) {
        double error = -1;
        verified += sscanf(p, "%%  ok %le", &error) == 1 && error >= 0 &&
                    error < 1e-4;
    }
    TU_CHECK(header != NULL && strstr(header, "%floor  verified    vs peer") !=
                                   NULL &&
                 verified == 5,
             "bench's table: %d variants verified\n%s", verified, out);
    TU_CHECK(rc == 0 && tu_count_lines(out) == 9 && header != NULL &&
                 strstr(header, "variant") != NULL &&
                 strstr(header, "%floor") != NULL &&
                 strstr(header, "vs peer") != NULL && lora != NULL &&
                 strstr(lora, " us ") != NULL &&
                 strstr(lora, "x clblast\n") != NULL && softmax != NULL &&
                 strstr(softmax, " GB/s ") != NULL &&
                 strstr(softmax, "x naive\n") != NULL &&
                 strstr(out, "  no such primitive in CLBlast\n") != NULL &&
                 strstr(out, "specl ran variant") == NULL &&
                 strstr(out, "\n  floor ") == NULL,
             "bench without --verbose: exit %d\n%s%s", rc, out,
             err ? err : "");
    free(out);
    free(err);
    rc = run_specl(LIMIT, &out, &err, BENCH_SMALL " -v --kernel t_lora");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    TU_CHECK(rc == 0 && strstr(out, "\n  specl ran variant ") != NULL &&
                 strstr(out, "\n  floor ") != NULL,
             "bench -v: exit %d\n%s%s", rc, out, err ? err : "");
    free(out);
    free(err);
}

/* A kernel that fails verification: exit 1, and the table says so and
 * with what error, in the row's place of its figures. Its stub (and the
 * naive one) built with launches that do nothing (a macro -include'd
 * through SPECL_STUB_CFLAGS) never write their output. */
static void test_bench_wrong(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *header = tu_path(dir, "no_launch.h");
    FILE *f = fopen(header, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("#include <CL/cl.h>\n"
          "#define clEnqueueNDRangeKernel(q, k, d, o, g, l, n, w, e) "
          "CL_SUCCESS\n",
          f);
    fclose(f);
    char *out, *err, prefix[4200];
    snprintf(prefix, sizeof prefix, "SPECL_STUB_CFLAGS='-include %s' " LIMIT,
             header);
    int rc = run_specl(prefix, &out, &err, BENCH_SMALL " --kernel t_softmax");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const char *row = strstr(out, "\nt_softmax                specl ");
    const char *dash = row != NULL ? strchr(row, '-') : NULL;
    TU_CHECK(rc == 1 && dash != NULL &&
                 strncmp(dash, "-  WRONG: error ", 16) == 0 &&
                 strstr(row, "  ok ") == NULL,
             "bench of a kernel that fails verification: exit %d\n%s%s", rc,
             out, err ? err : "");
    free(out);
    free(err);
    free(header);
    tu_rmtree(dir);
    free(dir);
}

/* --size sets a runtime size by name (attention's decode: seq_q 1), a
 * name the op lacks fails its kernel (its sizes named), N out of
 * [1, INT_MAX] or no NAME= is a usage error. */
static void test_bench_size(void)
{
    char *out, *err;
    int rc = run_specl(LIMIT, &out, &err, "bench tests/golden/golden.yaml "
                       "--kernel golden_attention --quick --no-naive -v "
                       "--size seq_q=1 --size seq_kv=100 --rows 2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    TU_CHECK(rc == 0 && strstr(out, "B=2 Sq=1 Skv=100 H=4/2 D=8") != NULL,
             "bench --size: exit %d\n%s%s", rc, out, err ? err : "");
    free(out);
    free(err);
    rc = run_specl(LIMIT, &out, &err, "bench tests/golden/golden.yaml "
                   "--kernel golden_attention --quick --size seq=3");
    TU_CHECK(rc == 1 && err != NULL &&
                 strstr(err, "golden_attention: op attention has no runtime "
                        "size 'seq' (its sizes: batch, seq_q, seq_kv)") !=
                     NULL,
             "bench --size seq=3: exit %d\n%s", rc, err ? err : "");
    free(out);
    free(err);
    static const char *const bad[] = {"seq_q=0", "seq_q=2147483648", "=4",
                                      "seq_q", "seq_q=1x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TU_CHECK(tu_run("%s bench tests/golden/golden.yaml --size %s "
                        ">/dev/null 2>&1", TU_SPECL, bad[i]) == 2,
                 "bench --size %s is not a usage error", bad[i]);
    }
}

/* The --verbose table of a memory-bound kernel: a copy of the same bytes
 * timed after the floor line, and specl's share of it after the rows. */
static void test_bench_copy(void)
{
    char *out, *err;
    int rc = run_specl(LIMIT, &out, &err,
                       BENCH_SMALL " --kernel t_softmax --no-naive --verbose");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const char *floor_line = strstr(out, "\n  floor ");
    const char *copy_line = strstr(out, "\n  copy of the same bytes: ");
    const char *specl_row = strstr(out, "\n  specl ");
    const char *share = strstr(out, "\n  specl at ");
    const char *ran = strstr(out, "\n  specl ran variant ");
    double copy_us = 0, copy_gbs = 0, pct = 0;
    if (copy_line != NULL) {
        sscanf(copy_line, "\n  copy of the same bytes: %lf us (%lf GB/s)",
               &copy_us, &copy_gbs);
    }
    if (share != NULL) {
        sscanf(share, "\n  specl at %lf%% of that copy", &pct);
    }
    TU_CHECK(rc == 0 && floor_line != NULL &&
                 strstr(floor_line, "memory-bound") != NULL &&
                 copy_line == strchr(floor_line + 1, '\n') && copy_us > 0 &&
                 copy_gbs > 0 && specl_row != NULL && share != NULL &&
                 share > specl_row && pct > 0 && ran != NULL && ran > share,
             "bench of a memory-bound kernel: exit %d\n%s%s", rc, out,
             err ? err : "");
    free(out);
    free(err);
}

/* Progress: on a terminal, which kernel runs; redirected, a line per
 * kernel as each finishes (and no terminal control codes). */
static void test_bench_progress(void)
{
    char *err;
    int rc = run_specl(LIMIT, NULL, &err, BENCH_SMALL " --csv");
    const char *first = err != NULL
                            ? strstr(err, "specl bench: kernel 1/2: t_lora done (")
                            : NULL;
    const char *second =
        err != NULL ? strstr(err, "specl bench: kernel 2/2: t_softmax done (")
                    : NULL;
    TU_CHECK(rc == 0 && first != NULL && second > first &&
                 strchr(err, '\r') == NULL && strchr(err, '\033') == NULL &&
                 tu_count_lines(err) == 2,
             "bench's progress into a file:\n%s", err ? err : "");
    free(err);
    if (tu_run("command -v script >/dev/null") != 0) {
        return; /* no way to give it a terminal here */
    }
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *typescript = tu_path(dir, "tty");
    rc = tu_run(LIMIT " script -qec \"%s " BENCH_SMALL " --csv "
                      ">'%s/csv'\" /dev/null >'%s' </dev/null",
                TU_SPECL, dir, typescript);
    char *text = tu_read(typescript, NULL);
    TU_CHECK(rc == 0 && text != NULL &&
                 strstr(text, "specl bench: kernel 1/2: t_lora ...") != NULL &&
                 strstr(text, "specl bench: kernel 2/2: t_softmax ...") !=
                     NULL,
             "bench on a terminal: exit %d\n%s", rc, text ? text : "");
    free(text);
    /* stdout on the same terminal: the progress line is cleared before
     * a row is printed, not run into it. */
    rc = tu_run(LIMIT " script -qec \"%s " BENCH_SMALL "\" /dev/null "
                      ">'%s' </dev/null",
                TU_SPECL, typescript);
    text = tu_read(typescript, NULL);
    int shown = 0, run_into = 0;
    for (const char *p = text; p != NULL && (p = strstr(p, " ...\033[K"));
         p++) {
        shown++;
        run_into |= p[7] != '\r';
    }
    TU_CHECK(rc == 0 && shown == 2 && !run_into,
             "bench, stdout and stderr on one terminal: exit %d\n%s", rc,
             text ? text : "");
    free(text);
    /* --json on the terminal: its rows end only when the next one comes,
     * so the progress line goes below the last row, not over it. */
    rc = tu_run(LIMIT " script -qec \"%s " BENCH_SMALL " --json --no-naive\" "
                      "/dev/null >'%s' </dev/null",
                TU_SPECL, typescript);
    text = tu_read(typescript, NULL);
    int over_a_row = 0;
    shown = 0;
    for (const char *p = text; p != NULL && (p = strstr(p, "\rspecl bench: "));
         p++) {
        shown++;
        over_a_row |= p > text && p[-1] != '\n';
    }
    TU_CHECK(rc == 0 && shown == 2 && !over_a_row,
             "bench --json on a terminal: exit %d\n%s", rc, text ? text : "");
    free(text);
    /* stdout into a pipe whose reader prints on the same terminal (tee):
     * the rows may come at any time, so no line redrawn in place that
     * they would land in: a whole line per finished kernel. */
    rc = tu_run(LIMIT " script -qec \"%s " BENCH_SMALL " | cat >'%s/rows'\" "
                      "/dev/null >'%s' </dev/null",
                TU_SPECL, dir, typescript);
    text = tu_read(typescript, NULL);
    TU_CHECK(rc == 0 && text != NULL && strchr(text, '\033') == NULL &&
                 strstr(text, "specl bench: kernel 1/2: t_lora done (") !=
                     NULL &&
                 strstr(text, "specl bench: kernel 2/2: t_softmax done (") !=
                     NULL,
             "bench into a pipe, stderr on a terminal: exit %d\n%s", rc,
             text ? text : "");
    free(text);
    free(typescript);
    tu_rmtree(dir);
    free(dir);
}

/* Builds SOURCE (warnings, or an error too) on RT with the test's own
 * stderr sent to a file: what reached it comes back (caller frees), the
 * build's status and log in *STATUS and *LOG. */
static char *build_quietly(struct rt *rt, const char *source,
                           cl_int *status, char **log)
{
    char *dir = tu_tempdir();
    char *path = dir != NULL ? tu_path(dir, "stderr") : NULL;
    FILE *f = path != NULL ? fopen(path, "w") : NULL;
    if (f == NULL) {
        free(path);
        free(dir);
        return NULL;
    }
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fileno(f), STDERR_FILENO);
    cl_program prog = rt_build(rt, source, NULL, status, log);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    fclose(f);
    if (prog != NULL) {
        clReleaseProgram(prog);
    }
    char *text = tu_read(path, NULL);
    tu_rmtree(dir);
    free(dir);
    free(path);
    return text;
}

/* The OpenCL compiler's chatter (PoCL's "N warnings generated.") stays
 * off stderr: in the log of a build that fails, on stderr with a line
 * naming its source only when the compiler's messages are asked for
 * (--verbose). Sources unique to the run, past PoCL's kernel cache. */
static void test_compiler_chatter(void)
{
    struct rt rt;
    char err[256];
    if (rt_open(&rt, NULL, err, sizeof err) < 0) {
        CU_FAIL("no OpenCL device");
        return;
    }
    char source[256], broken[512];
    snprintf(source, sizeof source,
             "#warning chatter %ld %ld\n__kernel void k(__global float *x) "
             "{ x[0] = 1; }\n",
             (long)getpid(), (long)time(NULL));
    snprintf(broken, sizeof broken, "%s#error broken on purpose\n", source);
    cl_int status;
    char *log = NULL;
    char *said = build_quietly(&rt, source, &status, &log);
    TU_CHECK(status == CL_SUCCESS && said != NULL && said[0] == '\0',
             "a build with a warning wrote to stderr: %s (%s)",
             said ? said : "?", rt_status(status));
    free(said);
    free(log);
    said = build_quietly(&rt, broken, &status, &log);
    TU_CHECK(status != CL_SUCCESS && said != NULL && said[0] == '\0' &&
                 log != NULL && strstr(log, "broken on purpose") != NULL &&
                 strstr(log, "generated.") != NULL,
             "a failed build: stderr '%s', log '%s'", said ? said : "?",
             log ? log : "(none)");
    free(said);
    free(log);
    rt.show_compiler = 1;
    snprintf(broken, sizeof broken, "/* shown */\n%s", source);
    said = build_quietly(&rt, broken, &status, &log);
    static const char note[] = "specl: note: specl's measuring kernels: "
                               "the OpenCL compiler's messages:\n";
    TU_CHECK(status == CL_SUCCESS && said != NULL &&
                 strncmp(said, note, strlen(note)) == 0 &&
                 strstr(said, "generated.") != NULL,
             "a build asked for its messages wrote to stderr: %s",
             said ? said : "?");
    free(said);
    free(log);
    rt_close(&rt);
}

/* --version prints the Makefile's VERSION, the one place it is set;
 * CHANGELOG.md has an entry for it. */
static void test_version(void)
{
    char *makefile = tu_read("Makefile", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(makefile);
    char version[32] = "";
    const char *line = strstr(makefile, "\nVERSION    = ");
    if (line != NULL) {
        sscanf(line, "\nVERSION    = %31s", version);
    }
    free(makefile);
    char *out;
    int rc = run_specl("", &out, NULL, "--version");
    char expected[64];
    snprintf(expected, sizeof expected, "specl %s\n", version);
    TU_CHECK(version[0] != '\0' && rc == 0 && out != NULL &&
                 strcmp(out, expected) == 0,
             "specl --version: exit %d, '%s'; the Makefile's VERSION '%s'",
             rc, out ? out : "", version);
    free(out);
    char *changelog = tu_read("CHANGELOG.md", NULL);
    char heading[64];
    snprintf(heading, sizeof heading, "\n## %s ", version);
    TU_CHECK(changelog != NULL && strstr(changelog, heading) != NULL,
             "CHANGELOG.md has no '## %s' entry", version);
    free(changelog);
}

/* gen -q / --quiet: no notes of which database entry each kernel got
 * and no summary line; the files as without it; errors still said. */
static void test_gen_quiet(void)
{
    static const char *const forms[] = {"", "-q", "--quiet"};
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    for (int i = 0; i < 3; i++) {
        char *out, *err;
        int rc = run_specl("", &out, &err,
                           "gen %s tests/tune/small.yaml --db "
                           "tuning/nvidia-h100-80gb-hbm3.yaml -o '%s/%d'",
                           forms[i], dir, i);
        char name[32];
        snprintf(name, sizeof name, "%d/t_lora.cl", i);
        char *cl = tu_path(dir, name);
        int quiet = i > 0;
        TU_CHECK(rc == 0 && out != NULL && err != NULL &&
                     (strstr(err, "specl: note: t_lora: no tuning entry "
                                  "used") == NULL) == quiet &&
                     (err[0] == '\0') == quiet &&
                     (strstr(out, "wrote 2 kernels to ") == NULL) == quiet &&
                     (out[0] == '\0') == quiet &&
                     tu_run("test -s '%s'", cl) == 0,
                 "gen %s: exit %d\n%s%s", forms[i], rc, out ? out : "",
                 err ? err : "");
        free(cl);
        free(out);
        free(err);
    }
    char *err;
    int rc = run_specl("", NULL, &err, "gen -q tests/bad/rank_gt_features.yaml "
                                       "-o '%s/bad'",
                       dir);
    TU_CHECK(rc == 1 && err != NULL && strstr(err, ": error: ") != NULL,
             "gen -q of a bad spec: exit %d\n%s", rc, err ? err : "");
    free(err);
    tu_rmtree(dir);
    free(dir);
}

/* --plot with one kernel tuned: FILE itself. */
static void test_tune_plot(void)
{
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *out;
    int rc = run_specl(LIMIT, &out, NULL,
                       "tune tests/tune/small.yaml --kernel t_softmax "
                       "--rows 8 --strategy random --max-evals 2 --reps 2 "
                       "--db '%s/db.yaml' --plot '%s/p.svg'",
                       dir, dir);
    char **names = NULL;
    int n = tu_list(dir, ".svg", &names);
    TU_CHECK(rc == 0 && n == 1 && strcmp(names[0], "p.svg") == 0 &&
                 out != NULL && strstr(out, "/p.svg\n") != NULL,
             "tune --kernel t_softmax --plot p.svg: exit %d, %d plots "
             "(%s)\n%s",
             rc, n, n > 0 ? names[0] : "", out ? out : "");
    if (n >= 0) {
        tu_free_list(names, n);
    }
    free(out);
    tu_rmtree(dir);
    free(dir);
}

/* --target tensor: the op defaults for tensor cores, one variant; the
 * half-width loras (with W in either layout, and the f16 delta) and the
 * f16 attention get engine mma, stubs.yaml's narrow f32 loras do not. */
static void test_target_tensor(void)
{
    TU_CHECK(tu_run("%s plan tests/stubs.yaml --target tensor 2>/dev/null "
                    "| grep -q '^ \\* tile: .* engine=mma\\*'",
                    TU_SPECL) == 0,
             "plan --target tensor: no kernel with engine=mma");
    TU_CHECK(tu_run("%s plan tests/stubs.yaml --target tensor 2>/dev/null "
                    "| grep -c 'engine=mma\\*' | grep -qx 4",
                    TU_SPECL) == 0,
             "plan --target tensor: engine=mma on other kernels than "
             "stub_lora_tc, stub_lora_out_in, stub_lora_delta and "
             "stub_attention");
    TU_CHECK(tu_run("%s plan tests/stubs.yaml --target tpu 2>/dev/null",
                    TU_SPECL) == 2,
             "--target tpu is not a usage error");
}

/* The header of `specl plan`'s output with the lines it wraps joined
 * again (an awk program for tu_run): a variant's knobs grep as one line.
 */
#define PLAN_HEADER_JOINED                                                 \
    "awk 'BEGIN { head = 1 } NR == 1 { printf \"%%s\", $0; next } "        \
    "head && /^ \\*      / { sub(/^ \\* +/, \" \"); printf \"%%s\", $0; "  \
    "next } /^ \\*\\// { head = 0 } { printf \"\\n%%s\", $0 } "          \
    "END { print \"\" }'"

/* --target tensor, float32: the GEMM with W on tf32 units (engine=mma)
 * for lora_forward and lora_backward's dX where the layer is wider than
 * 2048 in K or N and both are multiples of 4; float multiply-adds on
 * narrower layers, on rows no multiple of 16 bytes, without W (base:
 * false; lora_backward's input_grad: false too) and on other targets. */
static void test_target_tf32(void)
{
    static const struct {
        const char *op, *fields, *target;
        int mma;
    } cases[] = {
        {"lora_forward", "in_features: 4096, out_features: 4096", "tensor",
         1},
        {"lora_forward", "in_features: 2048, out_features: 2052", "sm90a",
         1},
        {"lora_forward", "in_features: 2048, out_features: 2048", "tensor",
         0},
        {"lora_forward", "in_features: 4098, out_features: 4096", "tensor",
         0},
        {"lora_forward", "in_features: 4096, out_features: 4096, "
         "base: false", "tensor", 0},
        {"lora_forward", "in_features: 4096, out_features: 4096", "gpu", 0},
        {"lora_backward", "in_features: 4096, out_features: 11008",
         "tensor", 1},
        {"lora_backward", "in_features: 11008, out_features: 512",
         "sm90a", 1},
        {"lora_backward", "in_features: 512, out_features: 512", "tensor",
         0},
        {"lora_backward", "in_features: 4096, out_features: 4096, "
         "input_grad: false", "tensor", 0},
        {"lora_backward", "in_features: 4096, out_features: 4096", "cpu",
         0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = tu_run("printf 'kernels:\\n  - {name: t, op: %s, %s, "
                        "rank: 16}\\n' | %s plan - --target %s 2>/dev/null "
                        "| " PLAN_HEADER_JOINED
                        " | grep -q '^ \\* tile: .* engine=mma\\*'",
                        cases[i].op, cases[i].fields, TU_SPECL,
                        cases[i].target);
        TU_CHECK((rc == 0) == cases[i].mma, "%s {%s} --target %s: %s",
                 cases[i].op, cases[i].fields, cases[i].target,
                 cases[i].mma ? "no engine=mma" : "engine=mma");
    }
}

/* The defaults that depend on the device kind, as `plan --target` shows
 * them: lora_decode in blocks of 8 rows by 64 along K for f16/bf16 on
 * GPUs (16 by 32 in f32; 8 by 1, two blocks at most, on CPUs), reaching
 * only one row of a layer as wide as llama-up on tensor cores (32 on
 * other GPUs), then on tensor cores lora_decode_mma up to 32 rows (one
 * slice of K in strips of 64 columns, A's beside each: 172 work-groups),
 * then lora_mma over 2 slices of K up to 128 rows; without tensor cores
 * the split path over 4 slices to 64 rows, 2 to 128 (lora_combine told
 * how many); in f32 on GPUs lora_decode to 4 rows, then
 * lora_decode_split to 32 (16 slices of K in strips of 256 columns, one
 * more for A: 704 work-groups); the softmax
 * merging its rows by warp shuffles on tensor-core devices only. */
static void test_target_defaults(void)
{
    static const struct {
        const char *dtype, *target, *grep;
    } cases[] = {
        {"bf16", "tensor", "decode_rows=8* decode_max=1* "
                           "decode_n=8* decode_k=64* decode_mma_max=32* "
                           "decode_split_max=0* decode_slices=1* "
                           "decode_cols=64* "
                           "decode_warps=8*"},
        {"bf16", "tensor", "path 0 (rows <= 1)"},
        {"bf16", "tensor", "path 1 (rows <= 32)"},
        {"bf16", "tensor", "lora_decode_mma  local {256, 1}  groups {172, "
                           "ceil(rows/32)}"},
        {"bf16", "tensor", "DMMA_STAGES        2 "},
        {"bf16", "tensor", "split_k=2* split_max=128*"},
        {"bf16", "tensor", "lora_mma_split  local {128, 1}  groups {172, "},
        {"bf16", "gpu", "split_k=4* split_max=128*"},
        {"bf16", "gpu", "path 1 (rows <= 64)"},
        {"f32", "gpu", "path 3 (rows <= 128)"},
        {"f32", "gpu", "args (rows, slices 2, y, scratch)"},
        {"bf16", "gpu", "decode_rows=8* decode_max=32* "
                        "decode_n=8* decode_k=64*"},
        {"f16", "gpu", "decode_rows=8* decode_max=32*"},
        {"f32", "tensor", "decode_rows=16* decode_max=4* "
                          "decode_n=8* decode_k=32* decode_mma_max=0* "
                          "decode_split_max=32* decode_slices=16* "
                          "decode_cols=256*"},
        {"f32", "gpu", "lora_decode_split  local {256, 1}  groups {704, "
                       "ceil(rows/32)}"},
        {"f32", "cpu", "decode_rows=8* decode_max=16* decode_n=8* "
                       "decode_k=1*"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TU_CHECK(tu_run("printf 'kernels:\\n  - {name: up, op: "
                        "lora_forward, dtype: %s, in_features: 4096, "
                        "out_features: 11008, rank: 16, alpha: 32}\\n' "
                        "| %s plan - --target %s 2>/dev/null "
                        "| " PLAN_HEADER_JOINED " | grep -qF '%s'",
                        cases[i].dtype, TU_SPECL, cases[i].target,
                        cases[i].grep) == 0,
                 "%s llama-up, --target %s: no '%s' in the plan",
                 cases[i].dtype, cases[i].target, cases[i].grep);
    }
    static const struct {
        const char *target, *shfl;
    } softmax[] = {{"tensor", "1"}, {"gpu", "0"}, {"cpu", "0"}};
    for (size_t i = 0; i < sizeof softmax / sizeof softmax[0]; i++) {
        TU_CHECK(tu_run("printf 'kernels:\\n  - {name: s, op: softmax, "
                        "features: 32000}\\n' | %s plan - --target %s "
                        "2>/dev/null | grep -q '^  SHFL_PTX  *%s '",
                        TU_SPECL, softmax[i].target, softmax[i].shfl) == 0,
                 "softmax --target %s: SHFL_PTX is not %s", softmax[i].target,
                 softmax[i].shfl);
    }
}

/* gen --alias: a kernel alike an earlier one but for its name (b of a;
 * d, of another dtype, and e, of another tile, are not) gets NAME.h
 * alone, as --list-outputs says; a program that calls b's API through
 * b.h and links a.c builds and creates b on the default device. Without
 * --alias every kernel is whole. */
static void test_gen_alias(void)
{
    static const char spec[] =
        "kernels:\n"
        "  - {name: a, op: lora_forward, in_features: 64, out_features: 32,"
        " rank: 4, alpha: 8}\n"
        "  - {name: b, op: lora_forward, in_features: 64, out_features: 32,"
        " rank: 4, alpha: 8}\n"
        "  - {name: d, op: lora_forward, dtype: bf16, in_features: 64,"
        " out_features: 32, rank: 4, alpha: 8}\n"
        "  - {name: e, op: lora_forward, in_features: 64, out_features: 32,"
        " rank: 4, alpha: 8, tile: {m: 32}}\n";
    static const char program[] =
        "#include \"b.h\"\n"
        "#include <stdio.h>\n"
        "int main(void)\n"
        "{\n"
        "    cl_platform_id pl;\n"
        "    cl_device_id dev;\n"
        "    cl_int err;\n"
        "    struct b *k = NULL;\n"
        "    if (clGetPlatformIDs(1, &pl, NULL) != CL_SUCCESS ||\n"
        "        clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) !=\n"
        "            CL_SUCCESS)\n"
        "        return 2;\n"
        "    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, "
        "&err);\n"
        "    err = b_create(ctx, dev, &k);\n"
        "    printf(\"%d %d %d\\n\", err, b_IN_FEATURES, b_variant(k) >= 0);\n"
        "    b_destroy(k);\n"
        "    clReleaseContext(ctx);\n"
        "    return err != CL_SUCCESS;\n"
        "}\n";
    char *dir = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *spec_path = tu_path(dir, "alias.yaml"), *out = tu_path(dir, "out");
    char *listed = tu_path(dir, "listed"), *prog = tu_path(dir, "use_b.c");
    FILE *f = fopen(spec_path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(spec, f);
    CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
    f = fopen(prog, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(program, f);
    CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
    TU_CHECK(tu_run("%s gen '%s' --alias -o '%s' --list-outputs >'%s'",
                    TU_SPECL, spec_path, out, listed) == 0,
             "gen --alias --list-outputs failed");
    TU_CHECK(tu_run("%s gen '%s' --alias -o '%s' | grep -q '1 of them "
                    "aliases' && cd '%s' && ls | sort | tr '\\n' ' ' | "
                    "grep -qx 'a.c a.cl a.h b.h d.c d.cl d.h e.c e.cl e.h '",
                    TU_SPECL, spec_path, out, out) == 0,
             "gen --alias did not write b.h alone beside whole a, d, e "
             "(%s)", out);
    TU_CHECK(tu_run("find '%s' -type f ! -name '.specl*' | sort >'%s.found'"
                    " && sort '%s' | cmp -s - '%s.found'",
                    out, listed, listed, listed) == 0,
             "--alias: --list-outputs (%s) differs from what gen wrote",
             listed);
    TU_CHECK(tu_run("cd '%s' && grep -q '^#include \"a.h\"$' b.h && "
                    "grep -q '^#define b_create a_create$' b.h && "
                    "grep -q '^#define b a$' b.h && ! grep -q 'b_naive' b.h",
                    out) == 0,
             "b.h does not name a's API after b (%s/b.h)", out);
    TU_CHECK(tu_run("${CC:-cc} -std=c99 -Wall -Wextra -Werror -I'%s' '%s' "
                    "'%s/a.c' -lOpenCL -o '%s/use_b' && '%s/use_b' | "
                    "grep -qx '0 64 1'",
                    out, prog, out, dir, dir) == 0,
             "a program of b's API does not build against a.c or run (%s)",
             dir);
    TU_CHECK(tu_run("rm -rf '%s' && %s gen '%s' -o '%s' >/dev/null && "
                    "test -f '%s/b.c' && test -f '%s/b.cl'",
                    out, TU_SPECL, spec_path, out, out, out) == 0,
             "without --alias b is not whole (%s)", out);
    free(spec_path);
    free(out);
    free(listed);
    free(prog);
    CU_ASSERT_EQUAL(tu_rmtree(dir), 0);
    free(dir);
}

int add_cli_suite(void)
{
    CU_pSuite s = CU_add_suite("cli", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "--list-outputs names what gen writes",
                    test_list_outputs) == NULL ||
        CU_add_test(s, "gen --alias: NAME.h alone for a kernel alike another",
                    test_gen_alias) == NULL ||
        CU_add_test(s, "--depfile is a make rule of outputs and inputs",
                    test_depfile) == NULL ||
        CU_add_test(s, "--depfile: make reads awkward paths back",
                    test_depfile_awkward) == NULL ||
        CU_add_test(s, "specl_generate: one kernel name, two specs",
                    test_cmake_duplicate_kernel) == NULL ||
        CU_add_test(s, "--target tensor: the tensor-core defaults",
                    test_target_tensor) == NULL ||
        CU_add_test(s, "--target tensor: float32 on tf32 where the layer "
                    "is wide", test_target_tf32) == NULL ||
        CU_add_test(s, "--target: decode blocks and reach, softmax merge",
                    test_target_defaults) == NULL ||
        CU_add_test(s, "--help and -h: the usage, exit 0", test_help) ==
            NULL ||
        CU_add_test(s, "usage errors: one form, exit 2", test_usage_errors) ==
            NULL ||
        CU_add_test(s, "option forms: =, -o/--output, order, --",
                    test_option_forms) == NULL ||
        CU_add_test(s, "'-' reads a spec from standard input", test_stdin) ==
            NULL ||
        CU_add_test(s, "arguments are checked before device work",
                    test_checked_first) == NULL ||
        CU_add_test(s, "plan --kernel: that kernel alone", test_plan_kernel) ==
            NULL ||
        CU_add_test(s, "no OpenCL platform: one message, exit 1",
                    test_no_platform) == NULL ||
        CU_add_test(s, "csv and json quoting", test_quoting) == NULL ||
        CU_add_test(s, "bench --csv: columns, empty figures, streamed",
                    test_bench_csv) == NULL ||
        CU_add_test(s, "bench: one line per variant, detail with -v",
                    test_bench_table) == NULL ||
        CU_add_test(s, "bench --size NAME=N", test_bench_size) == NULL ||
        CU_add_test(s, "bench: a kernel that fails verification, exit 1",
                    test_bench_wrong) == NULL ||
        CU_add_test(s, "bench: a copy of a memory-bound kernel's bytes",
                    test_bench_copy) == NULL ||
        CU_add_test(s, "bench --json: columns, nulls", test_bench_json) ==
            NULL ||
        CU_add_test(s, "bench: progress on a terminal, a line a kernel else",
                    test_bench_progress) == NULL ||
        CU_add_test(s, "--version: the Makefile's VERSION",
                    test_version) == NULL ||
        CU_add_test(s, "gen -q: no notes, errors still said",
                    test_gen_quiet) == NULL ||
        CU_add_test(s, "the OpenCL compiler's chatter: in the log",
                    test_compiler_chatter) == NULL ||
        CU_add_test(s, "tune --plot of one kernel: FILE itself",
                    test_tune_plot) == NULL) {
        return -1;
    }
    return 0;
}
