/* main.c - the specl command line: the subcommands gen, plan, check,
 * list, devices and db merge, and the dispatch to bench and tune. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "emit.h"
#include "files.h"
#include "import.h"
#include "knobs.h"
#include "outdir.h"
#include "runtime.h"
#include "spec.h"
#include "tune.h"
#include "tunedb.h"
#include "variant.h"

#define EXIT_INVALID CLI_EXIT_INVALID
#define EXIT_USAGE CLI_EXIT_USAGE

int specl_bench_main(int argc, char **argv);

static const char usage_text[] =
    "usage: specl COMMAND [OPTION]... [ARG]...\n"
    "\n"
    "Reads YAML op specs and emits, per kernel NAME, NAME.cl (OpenCL C),\n"
    "NAME.h and NAME.c (a host stub that needs nothing of specl at run\n"
    "time).\n"
    "\n"
    "Commands:\n"
    "  gen       emit the kernels and host stubs of spec files\n"
    "  plan      what gen decides per kernel: knobs, #defines, buffers,\n"
    "            launches\n"
    "  check     validate spec files; write nothing\n"
    "  import    a spec of a model's kernels from its config.json\n"
    "  list      the ops, with their fields and knobs\n"
    "  devices   the OpenCL devices, numbered as --device takes them\n"
    "  bench     time the emitted kernels against naive ones and CLBlast\n"
    "  tune      search kernels' knobs on a device into a tuning database\n"
    "  db merge  merge tuning databases\n"
    "\n"
    "'specl COMMAND --help' (or 'specl help COMMAND') gives a command's\n"
    "options. Options may come before or after the operands; '--' ends\n"
    "them. A spec file '-' is standard input.\n"
    "\n"
    "Options:\n"
    "  -h, --help     this text\n"
    "      --version  the version\n"
    "\n"
    "Exit status: 0 success, 1 invalid input or environment (a spec, a\n"
    "file, the device), 2 usage error.\n";

static const char gen_usage[] =
    "usage: specl gen [OPTION]... SPEC.yaml...\n"
    "\n"
    "Emits NAME.cl, NAME.h and NAME.c for every kernel of the spec files\n"
    "into DIR: all of them, or none when one fails. A spec file '-' is\n"
    "standard input.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR      where to write (default: out)\n"
    "      --target cpu|gpu|tensor|sm90a  one variant per kernel: the\n"
    "                        op defaults for that kind of device (tensor:\n"
    "                        NVIDIA, compute capability 8.0+; sm90a: 9.0,\n"
    "                        where lora runs wgmma), and the\n"
    "                        database's entry with --db; without it, a\n"
    "                        variant per kind and per database device,\n"
    "                        NAME_create picking one at run time\n"
    "      --db FILE         the tuning database's entries as variants\n"
    "      --db-device NAME  only that device's entries (its name as\n"
    "                        stored, or its slug)\n"
    "      --list-outputs    print the files it would write, one a line;\n"
    "                        write nothing\n"
    "      --depfile FILE    also write FILE, a make rule: the outputs on\n"
    "                        the spec files and the database\n"
    "      --alias           a kernel that differs from an earlier one only\n"
    "                        in its name gets NAME.h alone, which gives the\n"
    "                        earlier one's API its names (compile the\n"
    "                        earlier one's NAME.c)\n"
    "  -q, --quiet           no notes (which database entry each kernel\n"
    "                        got) and no summary line; errors still print\n"
    "  -h, --help            this text\n";

static const char plan_usage[] =
    "usage: specl plan [OPTION]... SPEC.yaml...\n"
    "\n"
    "What gen decides per kernel and variant (knobs, #defines, buffers,\n"
    "launches): to stdout, or with -o one NAME.plan per kernel into DIR.\n"
    "A spec file '-' is standard input.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR      write DIR/NAME.plan (default: stdout)\n"
    "      --target cpu|gpu|tensor|sm90a  the one variant for that kind\n"
    "                        of device\n"
    "      --db FILE         the tuning database's entries as variants\n"
    "      --db-device NAME  only that device's entries\n"
    "      --kernel NAME     only that kernel\n"
    "      --list-outputs    with -o: print the files it would write; write\n"
    "                        nothing\n"
    "      --depfile FILE    with -o: also write FILE, a make rule of the\n"
    "                        outputs on the inputs\n"
    "  -q, --quiet           no notes and no summary line\n"
    "  -h, --help            this text\n";

static const char check_usage[] =
    "usage: specl check [OPTION]... SPEC.yaml...\n"
    "\n"
    "Reads and validates the spec files; writes nothing. A spec file '-'\n"
    "is standard input.\n"
    "\n"
    "Options:\n"
    "      --target cpu|gpu|tensor|sm90a  check the knobs the op\n"
    "                        defaults choose for that kind of device\n"
    "                        (default: gpu)\n"
    "  -h, --help            this text\n";

static const char list_usage[] =
    "usage: specl list\n"
    "\n"
    "Prints every op: its fields, and its knobs with the values the op's\n"
    "defaults choose for an example kernel.\n";

static const char devices_usage[] =
    "usage: specl devices\n"
    "\n"
    "Lists the OpenCL devices as 'N  P:D  name (platform)': bench and tune\n"
    "take N or P:D as --device (or in $SPECL_DEVICE).\n";

static const char db_usage[] =
    "usage: specl db merge [OPTION]... DB.yaml... -o OUT.yaml\n"
    "\n"
    "Merges tuning databases into OUT.yaml: entries of the same device,\n"
    "driver, op, dtype, shape and rows combine their measured configs and\n"
    "keep the faster best. Nothing is written when an input does not load.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE  the merged database (required)\n"
    "  -h, --help         this text\n";

enum { MODE_CHECK, MODE_GEN, MODE_PLAN };

/* The files a run of gen (or plan -o) writes for SET into DIR, in the
 * order it writes them. */
static void output_paths(const struct spec_set *set, const char *dir,
                         int mode, const int *alias_of, struct buf *paths)
{
    static const char *const gen_exts[] = {"cl", "h", "c", NULL};
    static const char *const plan_exts[] = {"plan", NULL};
    const char *const *exts = mode == MODE_PLAN ? plan_exts : gen_exts;
    size_t dir_len = strlen(dir);
    while (dir_len > 1 && dir[dir_len - 1] == '/') {
        dir_len--; /* out/ names out/a.cl, not out//a.cl */
    }
    for (int i = 0; i < set->n_kernel; i++) {
        for (int e = 0; exts[e] != NULL; e++) {
            if (alias_of[i] >= 0 && strcmp(exts[e], "h") != 0) {
                continue; /* an alias: its NAME.h alone */
            }
            buf_printf(paths, "%.*s/%s.%s\n", (int)dir_len, dir,
                       set->kernel[i].name, exts[e]);
        }
    }
}

/* Whether make takes C in a rule's file name only escaped with '\':
 * a blank or '#' anywhere, ':' (else a rule of its own), and '%' in a
 * target (else a pattern rule). */
static int make_special(char c, int target)
{
    return c == ' ' || c == '\t' || c == '#' || c == ':' ||
           (c == '%' && target);
}

/* Appends PATH to OUT as GNU make reads a file name of a rule back, as
 * gcc -MD writes it: '\' before a blank, '#', ':' and a target's '%',
 * and '$' as "$$". A backslash stands as it is but before such a
 * character, where make halves a run of them: there each is doubled. */
static void depfile_path(struct buf *out, const char *path, size_t len,
                         int target)
{
    size_t backslashes = 0; /* in a row, just before path[i] */
    for (size_t i = 0; i < len; i++) {
        char c = path[i];
        if (make_special(c, target)) {
            for (size_t b = 0; b < backslashes; b++) {
                buf_printf(out, "\\");
            }
            buf_printf(out, "\\%c", c);
        } else if (c == '$') {
            buf_printf(out, "$$");
        } else {
            buf_printf(out, "%c", c);
        }
        backslashes = c == '\\' ? backslashes + 1 : 0;
    }
}

/* Whether make can read PATH back from a depfile: not with a newline,
 * nor as a prerequisite (not TARGET) that ends in '\', which make keeps
 * doubled at the end of a line. Says why not on stderr. */
static int depfile_readable(const char *path, size_t len, int target)
{
    const char *why = memchr(path, '\n', len) != NULL ? "a newline in it"
                      : !target && len > 0 && path[len - 1] == '\\'
                          ? "it ends in '\\'"
                          : NULL;
    if (why != NULL) {
        fprintf(stderr,
                "specl: error: --depfile: make cannot read the path "
                "'%.*s' back (%s)\n",
                (int)len, path, why);
    }
    return why == NULL;
}

/* Whether make can read back every path of a depfile of outputs in DIR
 * and of INPUTS: checked before anything is written. */
static int depfile_paths_readable(const char *dir, const char *const *inputs,
                                  int n_inputs)
{
    int ok = depfile_readable(dir, strlen(dir), 1);
    for (int i = 0; i < n_inputs; i++) {
        ok &= depfile_readable(inputs[i], strlen(inputs[i]), 0);
    }
    return ok;
}

/* Writes FILE, a make rule naming the files in PATHS (one per line) as
 * outputs of the N_INPUTS INPUTS, through a temporary file so that a
 * reader never sees half of it. Returns 0 or EXIT_INVALID. */
static int write_depfile(const char *file, const struct buf *paths,
                         const char *const *inputs, int n_inputs)
{
    struct buf rule;
    buf_init(&rule);
    const char *p = buf_str(paths);
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        depfile_path(&rule, p, (size_t)(nl - p), 1);
        buf_printf(&rule, nl[1] != '\0' ? " \\\n" : ":");
        p = nl + 1;
    }
    for (int i = 0; i < n_inputs; i++) {
        buf_printf(&rule, " \\\n  ");
        depfile_path(&rule, inputs[i], strlen(inputs[i]), 0);
    }
    buf_printf(&rule, "\n");
    char err[4400];
    int rc = 0;
    if (write_file_atomic(file, buf_str(&rule), rule.len, err, sizeof err) <
        0) {
        fprintf(stderr, "specl: error: cannot write the depfile: %s\n", err);
        rc = EXIT_INVALID;
    }
    buf_free(&rule);
    return rc;
}

/* Writes the files of the N kernels of OUT into DIR, all of them or none
 * (outdir.h): each kernel's .cl, .h and .c, or with PLANS its .plan
 * (held in the .cl buffer). Returns 0 or EXIT_INVALID. */
static int write_run(const char *dir, const struct emitted *out, int n,
                     int plans)
{
    struct outdir o;
    char err[1024];
    if (outdir_begin(&o, dir, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s; nothing written\n", err);
        return EXIT_INVALID;
    }
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        char name[EMIT_NAME_MAX + 8];
        snprintf(name, sizeof name, "%s.plan", out[i].name);
        bad = plans ? outdir_add(&o, name, buf_str(&out[i].cl),
                                 out[i].cl.len, err, sizeof err)
                    : emit_stage_kernel(&o, &out[i], err, sizeof err);
    }
    if (bad) {
        outdir_discard(&o);
    } else {
        bad = outdir_commit(&o, err, sizeof err);
    }
    if (bad == -2) {
        fprintf(stderr, "specl: error: %s\n", err);
    } else if (bad) {
        fprintf(stderr, "specl: error: %s; nothing written: the files in "
                "%s are as they were\n", err, dir);
    }
    return bad ? EXIT_INVALID : 0;
}

enum {
    OPT_TARGET = 256,
    OPT_DB,
    OPT_DB_DEVICE,
    OPT_LIST_OUTPUTS,
    OPT_DEPFILE,
    OPT_KERNEL,
    OPT_ALIAS
};

static const struct cli_option gen_options[] = {
    {"output", 'o', 1},
    {"target", OPT_TARGET, 1},
    {"db", OPT_DB, 1},
    {"db-device", OPT_DB_DEVICE, 1},
    {"list-outputs", OPT_LIST_OUTPUTS, 0},
    {"depfile", OPT_DEPFILE, 1},
    {"alias", OPT_ALIAS, 0},
    {"quiet", 'q', 0},
    {NULL, 0, 0},
};

/* plan's: gen's and --kernel, as bench and tune take it. */
static const struct cli_option plan_options[] = {
    {"output", 'o', 1},
    {"target", OPT_TARGET, 1},
    {"db", OPT_DB, 1},
    {"db-device", OPT_DB_DEVICE, 1},
    {"kernel", OPT_KERNEL, 1},
    {"list-outputs", OPT_LIST_OUTPUTS, 0},
    {"depfile", OPT_DEPFILE, 1},
    {"quiet", 'q', 0},
    {NULL, 0, 0},
};

static const struct cli_option check_options[] = {
    {"target", OPT_TARGET, 1},
    {NULL, 0, 0},
};

/* `specl check`, `specl gen` and `specl plan` (MODE). */
/* The options of check, gen and plan. */
struct gen_args {
    const char *dir;
    const char *db_path, *db_device;
    const char *depfile;
    const char *kernel; /* plan --kernel: only that kernel; NULL: all */
    int list_outputs;
    int alias; /* gen --alias: kernels alike but for names share one */
    int quiet; /* no notes, no summary line */
    enum target target;
    int target_given;
};

/* Reads C's options into A. Returns -1 to go on, else the exit status. */
static int parse_gen_args(struct cli *c, int mode, struct gen_args *a)
{
    static const char *const targets[] = {"cpu", "gpu", "tensor", "sm90a",
                                          NULL};
    memset(a, 0, sizeof *a);
    a->target = TARGET_GPU;
    int key;
    while ((key = cli_next(c)) != CLI_END) {
        switch (key) {
        case CLI_HELP:
            return 0;
        case CLI_ERROR:
            return EXIT_USAGE;
        case 'o':
            a->dir = c->value;
            break;
        case OPT_TARGET:
            if (cli_choice(c, targets) < 0) {
                return EXIT_USAGE;
            }
            target_from_name(c->value, &a->target);
            a->target_given = 1;
            break;
        case OPT_DB:
            a->db_path = c->value;
            break;
        case OPT_DB_DEVICE:
            a->db_device = c->value;
            break;
        case OPT_LIST_OUTPUTS:
            a->list_outputs = 1;
            break;
        case OPT_DEPFILE:
            a->depfile = c->value;
            break;
        case OPT_KERNEL:
            a->kernel = c->value;
            break;
        case OPT_ALIAS:
            a->alias = 1;
            break;
        case 'q':
            a->quiet = 1;
            break;
        }
    }
    if (mode == MODE_GEN && a->dir == NULL) {
        a->dir = "out";
    }
    if ((a->depfile != NULL || a->list_outputs) && a->dir == NULL) {
        return cli_usage_error(c->cmd,
                               "plan writes to stdout without -o; "
                               "--depfile and --list-outputs need -o DIR");
    }
    return -1;
}

/* Loads A's database into DB and, with --db-device, finds that device
 * (*DEVICE); with --target, applies the entries to SET's kernels and says
 * where each kernel's knobs came from. Returns the number of errors. */
static int load_gen_db(const struct gen_args *a, struct tunedb *db,
                       struct spec_set *set, const char **device)
{
    struct diags d = {.out = stderr};
    int errors = tunedb_load(db, a->db_path, 0, &d);
    char held[1024];
    if (!errors && a->db_device != NULL &&
        (*device = tunedb_device(db, a->db_device, held, sizeof held)) ==
            NULL) {
        diag_error(&d, a->db_path, (struct mark){0, 0},
                   "--db-device '%s' names no device of this database "
                   "(it holds: %s)",
                   a->db_device, held[0] ? held : "no entry");
        errors++;
    }
    if (!errors && a->target_given) {
        tunedb_apply(db->n ? db : NULL, set, *device);
        /* Where each kernel's knobs came from, entry or not. */
        for (int i = 0; i < set->n_kernel && !a->quiet; i++) {
            const struct kernel_spec *ks = &set->kernel[i];
            fprintf(stderr, "specl: note: %s: %s\n", ks->name,
                    ks->tile_note[0] ? ks->tile_note
                                     : "knobs as the spec gives them");
        }
    }
    return errors;
}

/* The variants of each kernel of SET (an array the caller frees, NULL
 * when out of memory): with --target, its knobs for that kind of device
 * alone; else every kind's, and the database's. */
static struct variant_set *gen_variants(const struct gen_args *a,
                                        const struct spec_set *set,
                                        const struct tunedb *db,
                                        const char *device)
{
    struct variant_set *vs = calloc((size_t)set->n_kernel + 1, sizeof *vs);
    for (int i = 0; i < set->n_kernel && vs != NULL; i++) {
        if (a->target_given) {
            variants_one(&set->kernel[i], &vs[i]);
            continue;
        }
        struct buf notes;
        buf_init(&notes);
        variants_build(&set->kernel[i], a->db_path != NULL ? db : NULL,
                       device, &vs[i], &notes);
        /* Which database entry each kernel got, or why none. */
        if (a->db_path != NULL && !a->quiet) {
            variants_print_notes(&notes, stderr);
        }
        buf_free(&notes);
    }
    return vs;
}

/* Renders every kernel of SET (its variants VS) into OUT before anything
 * is written: the three files, or with MODE_PLAN the plan's text in the
 * .cl buffer. Returns 0 or EXIT_INVALID (said on stderr). */
static int render_run(const struct spec_set *set,
                      const struct variant_set *vs, int mode,
                      const int *alias_of, struct emitted *out)
{
    char err[512];
    for (int i = 0; i < set->n_kernel; i++) {
        const struct kernel_spec *ks = &set->kernel[i];
        if (alias_of[i] >= 0) {
            int of = alias_of[i];
            emit_alias(ks, set->kernel[of].name, &out[of].h, &out[i]);
            continue;
        }
        int bad = mode == MODE_PLAN
                      ? emit_decisions(&vs[i], &out[i].cl, err, sizeof err)
                      : emit_kernel(&vs[i], &out[i], err, sizeof err);
        snprintf(out[i].name, sizeof out[i].name, "%s", ks->name);
        if (bad < 0) {
            fprintf(stderr, "%s:%d:%d: error: %s: %s\n", ks->file,
                    ks->mark.line, ks->mark.col, ks->name, err);
            return EXIT_INVALID;
        }
    }
    return 0;
}

/* The inputs a depfile names: the spec files, then the database; not
 * standard input, which make cannot watch. NULL-terminated; caller
 * frees (NULL when out of memory). */
static const char **depfile_inputs(const struct cli *c, const char *db_path)
{
    const char **inputs = calloc((size_t)c->n_operands + 2, sizeof *inputs);
    int n = 0;
    for (int i = 0; inputs != NULL && i < c->n_operands; i++) {
        if (strcmp(c->operands[i], "-") != 0) {
            inputs[n++] = c->operands[i];
        }
    }
    if (inputs != NULL && db_path != NULL) {
        inputs[n++] = db_path;
    }
    return inputs;
}

/* Renders and writes (or prints) the kernels of SET, as checked and
 * defaulted. Returns the exit status. */
/* ALIAS_OF[i] = -1 for each of SET's kernels: none is an alias. */
static void fill_unaliased(const struct spec_set *set, int *alias_of)
{
    for (int i = 0; i < set->n_kernel; i++) {
        alias_of[i] = -1;
    }
}

/* A kernel's spec_kernel_key and index, to sort by. */
struct keyed {
    uint64_t key;
    int i;
};

static int keyed_order(const void *pa, const void *pb)
{
    const struct keyed *a = pa, *b = pb;
    if (a->key != b->key) {
        return a->key < b->key ? -1 : 1;
    }
    return (a->i > b->i) - (a->i < b->i);
}

/* ALIAS_OF[i] (all -1 on entry): the first earlier kernel of SET alike
 * kernel i (spec_kernels_alike), or -1. Sorted by key, each run of equal keys
 * compares its members only with the run's kernels that are no alias.
 * Returns the number of aliases, -1 when out of memory. */
static int find_aliases(const struct spec_set *set, int *alias_of)
{
    int n = set->n_kernel, aliases = 0;
    struct keyed *k = calloc((size_t)n + 1, sizeof *k);
    int *firsts = calloc((size_t)n + 1, sizeof *firsts);
    if (k == NULL || firsts == NULL) {
        free(k);
        free(firsts);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        k[i] = (struct keyed){spec_kernel_key(&set->kernel[i]), i};
    }
    qsort(k, (size_t)n, sizeof *k, keyed_order);
    int n_firsts = 0;
    for (int r = 0; r < n; r++) {
        n_firsts = r > 0 && k[r].key == k[r - 1].key ? n_firsts : 0;
        const struct kernel_spec *ks = &set->kernel[k[r].i];
        for (int f = 0; f < n_firsts && alias_of[k[r].i] < 0; f++) {
            if (spec_kernels_alike(&set->kernel[firsts[f]], ks)) {
                alias_of[k[r].i] = firsts[f];
                aliases++;
            }
        }
        if (alias_of[k[r].i] < 0) {
            firsts[n_firsts++] = k[r].i;
        }
    }
    free(k);
    free(firsts);
    return aliases;
}

static int gen_run(const struct cli *c, const struct gen_args *a, int mode,
                   const struct spec_set *set, const struct tunedb *db,
                   const char *device)
{
    const char **inputs = depfile_inputs(c, a->db_path);
    int n_inputs = 0;
    while (inputs != NULL && inputs[n_inputs] != NULL) {
        n_inputs++;
    }
    if (inputs == NULL) {
        fputs("specl: out of memory\n", stderr);
        return EXIT_INVALID;
    }
    if (a->depfile != NULL &&
        !depfile_paths_readable(a->dir, inputs, n_inputs)) {
        free(inputs);
        return EXIT_INVALID;
    }
    /* With --alias, each kernel alike an earlier one but for its name
     * (spec_kernels_alike) is that one's alias; -1: emitted in full. */
    int *alias_of = calloc((size_t)set->n_kernel + 1, sizeof *alias_of);
    if (alias_of == NULL) {
        fputs("specl: out of memory\n", stderr);
        free(inputs);
        return EXIT_INVALID;
    }
    fill_unaliased(set, alias_of);
    int aliases =
        a->alias && mode == MODE_GEN ? find_aliases(set, alias_of) : 0;
    if (aliases < 0) {
        fputs("specl: out of memory\n", stderr);
        free(alias_of);
        free(inputs);
        return EXIT_INVALID;
    }
    struct buf paths;
    buf_init(&paths);
    output_paths(set, a->dir != NULL ? a->dir : "", mode, alias_of, &paths);
    if (a->list_outputs) {
        /* What a build system needs to know before gen runs: no
         * rendering, nothing written. */
        fputs(buf_str(&paths), stdout);
        buf_free(&paths);
        free(alias_of);
        free(inputs);
        return 0;
    }
    struct variant_set *vs = gen_variants(a, set, db, device);
    struct emitted *out = calloc((size_t)set->n_kernel + 1, sizeof *out);
    int rc = 0;
    if (out == NULL || vs == NULL) {
        fputs("specl: out of memory\n", stderr);
        rc = EXIT_INVALID;
    } else {
        rc = render_run(set, vs, mode, alias_of, out);
    }
    if (rc == 0 && mode == MODE_PLAN && a->dir == NULL) {
        for (int i = 0; i < set->n_kernel; i++) {
            fputs(i ? "\n" : "", stdout);
            fputs(buf_str(&out[i].cl), stdout);
        }
    } else if (rc == 0) {
        rc = write_run(a->dir, out, set->n_kernel, mode == MODE_PLAN);
        if (rc == 0 && a->depfile != NULL) {
            rc = write_depfile(a->depfile, &paths, inputs, n_inputs);
        }
        if (rc == 0 && !a->quiet && aliases > 0) {
            printf("wrote %d kernels (%d of them aliases: NAME.h alone) "
                   "to %s\n", set->n_kernel, aliases, a->dir);
        } else if (rc == 0 && !a->quiet) {
            printf("wrote %d %s%s to %s\n", set->n_kernel,
                   mode == MODE_PLAN ? "plan" : "kernel",
                   set->n_kernel == 1 ? "" : "s", a->dir);
        }
    }
    for (int i = 0; out != NULL && i < set->n_kernel; i++) {
        emitted_free(&out[i]);
    }
    free(out);
    free(vs);
    free(alias_of);
    buf_free(&paths);
    free(inputs);
    return rc;
}

/* SET's kernel NAME alone, as a set ONE that borrows SET's kernel (not
 * to be freed); NULL after saying SET has no such kernel, naming those
 * it has. */
static struct spec_set *only_kernel(struct spec_set *set, const char *name,
                                    struct spec_set *one)
{
    int k = cli_find_kernel(set, name);
    if (k < 0) {
        return NULL;
    }
    *one = (struct spec_set){.n_kernel = 1, .cap = 1,
                             .kernel = &set->kernel[k]};
    return one;
}

static int cmd_check_or_gen(int argc, char **argv, int mode)
{
    struct cli c = {.cmd = argv[0], .argc = argc, .argv = argv};
    c.usage = mode == MODE_GEN    ? gen_usage
              : mode == MODE_PLAN ? plan_usage
                                  : check_usage;
    c.options = mode == MODE_CHECK  ? check_options
                : mode == MODE_PLAN ? plan_options
                                    : gen_options;
    struct gen_args a;
    int rc = parse_gen_args(&c, mode, &a);
    if (rc >= 0) {
        return rc;
    }
    struct spec_set set;
    spec_set_init(&set);
    struct diags reading = {.out = stderr};
    int errors = cli_read_specs(&c, &set, &reading);
    struct spec_set one, *run = &set;
    if (errors == 0 && a.kernel != NULL) {
        run = only_kernel(&set, a.kernel, &one);
    }
    if (errors < 0 || run == NULL) {
        spec_set_free(&set);
        return errors < 0 ? EXIT_USAGE : EXIT_INVALID;
    }
    if (!errors && a.target != TARGET_GPU) {
        struct diags d = {.out = stderr};
        errors += spec_set_target(run, a.target, &d);
    }
    struct tunedb db;
    const char *device = NULL;
    tunedb_init(&db);
    if (a.db_path != NULL) {
        errors += load_gen_db(&a, &db, run, &device);
    }
    if (errors) {
        fprintf(stderr, "specl: %d error%s; nothing written\n", errors,
                errors == 1 ? "" : "s");
        rc = EXIT_INVALID;
    } else if (mode == MODE_CHECK) {
        /* Reading validates everything; rendering is gen's and plan's. */
        printf("checked %d kernel%s\n", run->n_kernel,
               run->n_kernel == 1 ? "" : "s");
        rc = 0;
    } else {
        rc = gen_run(&c, &a, mode, run, &db, device);
    }
    tunedb_free(&db);
    spec_set_free(&set);
    return rc;
}

static const struct cli_option db_options[] = {
    {"output", 'o', 1},
    {NULL, 0, 0},
};

/* `specl db merge A.yaml B.yaml... -o C.yaml` (ARGV[0]: "merge") */
static int cmd_db_merge(int argc, char **argv)
{
    struct cli c = {.cmd = "db merge",
                    .usage = db_usage,
                    .options = db_options,
                    .argc = argc,
                    .argv = argv};
    const char *out = NULL;
    int key;
    while ((key = cli_next(&c)) != CLI_END) {
        switch (key) {
        case CLI_HELP:
            return 0;
        case CLI_ERROR:
            return EXIT_USAGE;
        case 'o':
            out = c.value;
            break;
        }
    }
    if (c.n_operands == 0) {
        return cli_usage_error(c.cmd, "no databases to merge given");
    }
    if (out == NULL) {
        return cli_usage_error(c.cmd, "no output given: -o FILE");
    }
    struct tunedb db;
    struct diags d = {.out = stderr};
    tunedb_init(&db);
    for (int i = 0; i < c.n_operands; i++) {
        struct tunedb one;
        tunedb_init(&one);
        tunedb_load(&one, c.operands[i], 0, &d);
        tunedb_merge(&db, &one);
        tunedb_free(&one);
    }
    char err[512];
    int rc = 0;
    if (d.count) {
        fputs("specl: db merge: nothing written\n", stderr);
        rc = EXIT_INVALID;
    } else if (tunedb_save(&db, out, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s\n", err);
        rc = EXIT_INVALID;
    } else {
        printf("merged %d file%s: %d entries in %s\n", c.n_operands,
               c.n_operands == 1 ? "" : "s", db.n, out);
    }
    tunedb_free(&db);
    return rc;
}

/* `specl db COMMAND ...`: merge is the one command. */
static int cmd_db(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "merge") == 0) {
        return cmd_db_merge(argc - 1, argv + 1);
    }
    if (argc >= 2 &&
        (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(db_usage, stdout);
        return 0;
    }
    if (argc < 2) {
        return cli_usage_error("db", "no db command given (merge)");
    }
    return cli_usage_error("db", "unknown db command '%s' (merge is the one)",
                           argv[1]);
}

/* One key of `specl list`: kind, limits and default. For knobs, GPU and
 * CPU are what the op's defaults choose for its example kernel (the one
 * source of knob values: knobs_resolve). */
static void list_param(const struct param_def *p, const char *what,
                       const double *gpu, const double *cpu)
{
    char def[64], lo[32], hi[32];
    printf("    %-5s %-14s ", what, p->key);
    switch (p->kind) {
    case VALUE_INT:
    case VALUE_FLOAT:
        param_format(p, p->min, lo, sizeof lo);
        param_format(p, p->max, hi, sizeof hi);
        printf("%-6s [%s, %s]", p->kind == VALUE_INT ? "int" : "float", lo,
               hi);
        break;
    case VALUE_BOOL:
        printf("bool  ");
        break;
    case VALUE_CHOICE:
        printf("one of");
        for (int c = 0; p->choices[c] != NULL; c++) {
            printf("%s%s", c ? "|" : " ", p->choices[c]);
        }
        break;
    }
    if (gpu != NULL && cpu != NULL) {
        param_format(p, *gpu, def, sizeof def);
        printf(", example: %s", def);
        if (*cpu != *gpu) {
            param_format(p, *cpu, def, sizeof def);
            printf(" (CPU %s)", def);
        }
    } else if (p->required) {
        printf(", required");
    } else if ((p->kind == VALUE_FLOAT && p->def == 0) ||
               param_stand_in(p)) {
        printf(", optional");
    } else {
        param_format(p, p->def, def, sizeof def);
        printf(", default %s", def);
    }
    printf("\n          %s\n", p->help);
}

static int cmd_list(void)
{
    printf("Every kernel has: name (C identifier), op, dtype (f32|f16|bf16, "
           "default f32),\ntile (a mapping of the op's knobs, or auto). "
           "A knob a spec omits gets a value\nchosen for the kernel's shape "
           "and device class: `example` is what the\nop picks for a GPU "
           "(and a CPU, where it differs) for the example kernel\nshown. The "
           "emitted header, and `specl plan`, list the values used.\n\n");
    for (int i = 0; op_registry[i] != NULL; i++) {
        const struct op_def *op = op_registry[i];
        struct kernel_spec gpu, cpu;
        int ok = knobs_example(op, TARGET_GPU, &gpu) == 0 &&
                 knobs_example(op, TARGET_CPU, &cpu) == 0;
        printf("%s: %s\n", op->name, op->summary);
        for (int f = 0; f < op->n_fields; f++) {
            list_param(&op->fields[f], "field", NULL, NULL);
        }
        if (ok) {
            printf("    knobs for the example kernel %s:\n", op->example);
        }
        for (int k = 0; k < op->n_knobs; k++) {
            list_param(&op->knobs[k], "knob", ok ? &gpu.knob[k].num : NULL,
                       ok ? &cpu.knob[k].num : NULL);
        }
        printf("\n");
    }
    return 0;
}

static const struct cli_option no_options[] = {{NULL, 0, 0}};

/* The command line of a command that takes nothing but --help: -1 to go
 * on, else the exit status. */
static int parse_bare(int argc, char **argv, const char *usage)
{
    struct cli c = {.cmd = argv[0],
                    .usage = usage,
                    .options = no_options,
                    .argc = argc,
                    .argv = argv};
    int key = cli_next(&c);
    if (key != CLI_END) {
        return key == CLI_HELP ? 0 : EXIT_USAGE;
    }
    if (c.n_operands > 0) {
        return cli_usage_error(c.cmd, "%s takes no arguments (got '%s')",
                               c.cmd, c.operands[0]);
    }
    return -1;
}

static int cmd_devices(void)
{
    char err[512];
    if (rt_list_devices(stdout, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s\n", err);
        return EXIT_INVALID;
    }
    return 0;
}

/* Runs the command ARGV[0] with its arguments. */
static int dispatch(int argc, char **argv)
{
    const char *cmd = argv[0];
    int rc;
    if (strcmp(cmd, "gen") == 0) {
        return cmd_check_or_gen(argc, argv, MODE_GEN);
    }
    if (strcmp(cmd, "plan") == 0) {
        return cmd_check_or_gen(argc, argv, MODE_PLAN);
    }
    if (strcmp(cmd, "check") == 0) {
        return cmd_check_or_gen(argc, argv, MODE_CHECK);
    }
    if (strcmp(cmd, "list") == 0) {
        rc = parse_bare(argc, argv, list_usage);
        return rc >= 0 ? rc : cmd_list();
    }
    if (strcmp(cmd, "devices") == 0) {
        rc = parse_bare(argc, argv, devices_usage);
        return rc >= 0 ? rc : cmd_devices();
    }
    if (strcmp(cmd, "import") == 0) {
        return specl_import_main(argc, argv);
    }
    if (strcmp(cmd, "tune") == 0) {
        return specl_tune_main(argc, argv);
    }
    if (strcmp(cmd, "db") == 0) {
        return cmd_db(argc, argv);
    }
    if (strcmp(cmd, "bench") == 0) {
        return specl_bench_main(argc, argv);
    }
    if (cmd[0] == '-') {
        return cli_usage_error(NULL, "unknown option '%s'", cmd);
    }
    return cli_usage_error(NULL, "unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc == 2) {
            fputs(usage_text, stdout);
            return 0;
        }
        /* `specl help gen` is `specl gen --help`. */
        char help[] = "--help";
        char *args[] = {argv[2], help, NULL};
        return dispatch(2, args);
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("specl %s\n", SPECL_VERSION);
        return 0;
    }
    return dispatch(argc - 1, argv + 1);
}
