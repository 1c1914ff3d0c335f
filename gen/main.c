/* main.c - the specl command line: gen, plan, check, list, bench. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "knobs.h"
#include "runtime.h"
#include "tune.h"
#include "tunedb.h"
#include "spec.h"
#include "variant.h"

#define EXIT_INVALID 1 /* a spec or an environment problem */
#define EXIT_USAGE 2   /* the command line itself */

int specl_bench_main(int argc, char **argv);

static void usage(FILE *f)
{
    fputs("usage: specl gen SPEC.yaml... [-o DIR]   emit kernels (default "
          "DIR: out)\n"
          "       specl plan SPEC.yaml... [-o DIR]  what gen decides per kernel "
          "(knobs,\n"
          "                                         #defines, buffers, "
          "launches): stdout or DIR/NAME.plan\n"
          "       specl gen|plan ... -o DIR --list-outputs  the files it "
          "would write, one\n"
          "                                         per line; writes "
          "nothing\n"
          "       specl gen|plan ... -o DIR --depfile FILE  also write a "
          "make rule of\n"
          "                                         outputs and inputs\n"
          "       specl check SPEC.yaml...          validate only\n"
          "       specl gen|plan|check ... --target cpu|gpu  defaults for "
          "that "
          "kind of device\n"
          "                                         (gpu; bench and tune "
          "use the device's)\n"
          "       specl list                        ops, fields and knobs\n"
          "       specl bench SPEC.yaml... [--device N|P:D] [--rows M] "
          "[--kernel NAME] [--db FILE]\n"
          "                   [--reps N] [--quick] [--no-naive] "
          "[--csv|--json]\n"
          "       specl tune SPEC.yaml... [--device N] [--strategy "
          "exhaustive|random|local]\n"
          "                  [--budget SECONDS|--max-evals N] [--rows M] "
          "[--db FILE]\n"
          "                  [--plot FILE.svg] [--kernel NAME]\n"
          "       specl db merge A.yaml B.yaml... -o C.yaml\n"
          "       specl gen|plan ... --db FILE [--db-device NAME]  knobs "
          "from "
          "tuning\n"
          "       specl devices                     list OpenCL devices\n"
          "       specl --help | --version\n"
          "\n"
          "Reads YAML op specs and emits, per kernel NAME, NAME.cl (OpenCL "
          "C),\nNAME.h and NAME.c (host stub). Exit status: 0 success, 1 "
          "invalid\ninput, 2 usage error.\n",
          f);
}

/* Reads every spec file named in ARGV (skipping options consumed by the
 * caller, marked NULL); returns the number of errors. */
static int read_specs(struct spec_set *set, int argc, char **argv,
                      int *n_files)
{
    struct diags d = {.out = stderr};
    *n_files = 0;
    for (int i = 0; i < argc; i++) {
        if (argv[i] != NULL) {
            spec_read_file(set, argv[i], &d);
            (*n_files)++;
        }
    }
    return d.count;
}

enum { MODE_CHECK, MODE_GEN, MODE_PLAN };

/* The files a run of gen (or plan -o) writes for SET into DIR, in the
 * order it writes them. */
static void output_paths(const struct spec_set *set, const char *dir,
                         int mode, struct buf *paths)
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
            buf_printf(paths, "%.*s/%s.%s\n", (int)dir_len, dir,
                       set->kernel[i].name, exts[e]);
        }
    }
}

/* Appends PATH to OUT escaped for a make rule: spaces, '#' and '$'. */
static void depfile_path(struct buf *out, const char *path, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = path[i];
        if (c == ' ' || c == '#' || c == '\\') {
            buf_printf(out, "\\%c", c);
        } else if (c == '$') {
            buf_printf(out, "$$");
        } else {
            buf_printf(out, "%c", c);
        }
    }
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
        depfile_path(&rule, p, (size_t)(nl - p));
        buf_printf(&rule, nl[1] != '\0' ? " \\\n" : ":");
        p = nl + 1;
    }
    for (int i = 0; i < n_inputs; i++) {
        buf_printf(&rule, " \\\n  ");
        depfile_path(&rule, inputs[i], strlen(inputs[i]));
    }
    buf_printf(&rule, "\n");
    char tmp[4096];
    int rc = 0;
    if (snprintf(tmp, sizeof tmp, "%s.tmp", file) >= (int)sizeof tmp) {
        fprintf(stderr, "specl: error: %s: depfile path too long\n", file);
        rc = EXIT_INVALID;
    } else {
        FILE *f = fopen(tmp, "w");
        int bad = f == NULL || fwrite(buf_str(&rule), 1, rule.len, f) !=
                                   rule.len;
        bad |= f != NULL && fclose(f) != 0;
        if (bad || rename(tmp, file) != 0) {
            fprintf(stderr, "specl: error: %s: cannot write the depfile: "
                    "%s\n", file, strerror(errno));
            remove(tmp);
            rc = EXIT_INVALID;
        }
    }
    buf_free(&rule);
    return rc;
}

/* Writes the files of the N kernels of OUT into DIR, all of them or none
 * (emit_output): each kernel's .cl, .h and .c, or with PLANS its .plan
 * (held in the .cl buffer). Returns 0 or EXIT_INVALID. */
static int write_run(const char *dir, const struct emitted *out, int n,
                     int plans)
{
    struct emit_output o;
    char err[1024];
    if (emit_output_begin(&o, dir, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s; nothing written\n", err);
        return EXIT_INVALID;
    }
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        char name[EMIT_NAME_MAX + 8];
        snprintf(name, sizeof name, "%s.plan", out[i].name);
        bad = plans ? emit_output_add(&o, name, buf_str(&out[i].cl),
                                      out[i].cl.len, err, sizeof err)
                    : emit_output_add_kernel(&o, &out[i], err, sizeof err);
    }
    if (bad) {
        emit_output_discard(&o);
    } else {
        bad = emit_output_commit(&o, err, sizeof err);
    }
    if (bad == -2) {
        fprintf(stderr, "specl: error: %s\n", err);
    } else if (bad) {
        fprintf(stderr, "specl: error: %s; nothing written: the files in "
                "%s are as they were\n", err, dir);
    }
    return bad ? EXIT_INVALID : 0;
}

/* `specl check`, `specl gen` and `specl plan` (MODE). */
static int cmd_check_or_gen(int argc, char **argv, int mode)
{
    const char *dir = NULL;
    const char *db_path = NULL, *db_device = NULL;
    const char *depfile = NULL;
    int list_outputs = 0;
    enum target target = TARGET_GPU;
    int target_given = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--list-outputs") == 0 && mode != MODE_CHECK) {
            list_outputs = 1;
            argv[i] = NULL;
        } else if (strcmp(argv[i], "--depfile") == 0 && mode != MODE_CHECK) {
            if (i + 1 >= argc) {
                fputs("specl: error: --depfile needs a file\n", stderr);
                return EXIT_USAGE;
            }
            depfile = argv[i + 1];
            argv[i] = argv[i + 1] = NULL;
            i++;
        } else if ((strcmp(argv[i], "--db") == 0 ||
             strcmp(argv[i], "--db-device") == 0) && mode != MODE_CHECK) {
            if (i + 1 >= argc) {
                fprintf(stderr, "specl: error: %s needs a value\n", argv[i]);
                return EXIT_USAGE;
            }
            if (argv[i][4] == '\0') {
                db_path = argv[i + 1];
            } else {
                db_device = argv[i + 1];
            }
            argv[i] = argv[i + 1] = NULL;
            i++;
        } else if (strcmp(argv[i], "--target") == 0) {
            if (i + 1 >= argc || (strcmp(argv[i + 1], "cpu") != 0 &&
                                  strcmp(argv[i + 1], "gpu") != 0)) {
                fputs("specl: error: --target needs cpu or gpu\n", stderr);
                return EXIT_USAGE;
            }
            target = strcmp(argv[i + 1], "cpu") == 0 ? TARGET_CPU
                                                      : TARGET_GPU;
            target_given = 1;
            argv[i] = argv[i + 1] = NULL;
            i++;
        } else if (strcmp(argv[i], "-o") == 0) {
            if (i + 1 >= argc) {
                fputs("specl: error: -o needs a directory\n", stderr);
                return EXIT_USAGE;
            }
            dir = argv[i + 1];
            argv[i] = argv[i + 1] = NULL;
            i++;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "specl: error: unknown option '%s'\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (mode == MODE_CHECK && dir != NULL) {
        fputs("specl: error: check writes nothing; -o is for gen\n", stderr);
        return EXIT_USAGE;
    }
    if (mode == MODE_GEN && dir == NULL) {
        dir = "out";
    }
    if ((depfile != NULL || list_outputs) && dir == NULL) {
        fputs("specl: error: plan writes to stdout without -o; "
              "--depfile and --list-outputs need -o DIR\n", stderr);
        return EXIT_USAGE;
    }
    struct spec_set set;
    spec_set_init(&set);
    int n_files;
    int errors = read_specs(&set, argc, argv, &n_files);
    if (n_files == 0) {
        fputs("specl: error: no spec files given\n", stderr);
        spec_set_free(&set);
        return EXIT_USAGE;
    }
    if (!errors && target != TARGET_GPU) {
        struct diags d = {.out = stderr};
        errors += spec_set_target(&set, target, &d);
    }
    struct tunedb db;
    const char *device = NULL;
    tunedb_init(&db);
    if (db_path != NULL) {
        struct diags d = {.out = stderr};
        errors += tunedb_load(&db, db_path, 0, &d);
        char held[1024];
        if (!errors && db_device != NULL &&
            (device = tunedb_device(&db, db_device, held, sizeof held)) ==
                NULL) {
            diag_error(&d, db_path, (struct mark){0, 0},
                       "--db-device '%s' names no device of this database "
                       "(it holds: %s)",
                       db_device, held[0] ? held : "no entry");
            errors++;
        }
        if (!errors && target_given) {
            tunedb_apply(db.n ? &db : NULL, &set, device);
            /* Where each kernel's knobs came from, entry or not. */
            for (int i = 0; i < set.n_kernel; i++) {
                const struct kernel_spec *ks = &set.kernel[i];
                fprintf(stderr, "specl: note: %s: %s\n", ks->name,
                        ks->tile_note[0] ? ks->tile_note
                                         : "knobs as the spec gives them");
            }
        }
    }
    if (errors) {
        tunedb_free(&db);
        fprintf(stderr, "specl: %d error%s; nothing written\n", errors,
                errors == 1 ? "" : "s");
        spec_set_free(&set);
        return EXIT_INVALID;
    }
    if (mode == MODE_CHECK) {
        /* Reading validates everything; rendering is gen's and plan's. */
        printf("checked %d kernel%s\n", set.n_kernel,
               set.n_kernel == 1 ? "" : "s");
        tunedb_free(&db);
        spec_set_free(&set);
        return 0;
    }
    /* The inputs a depfile names: the spec files, then the database. */
    const char **inputs = calloc((size_t)argc + 2, sizeof *inputs);
    int n_inputs = 0;
    for (int i = 0; inputs != NULL && i < argc; i++) {
        if (argv[i] != NULL) {
            inputs[n_inputs++] = argv[i];
        }
    }
    if (inputs != NULL && db_path != NULL) {
        inputs[n_inputs++] = db_path;
    }
    if (inputs == NULL) {
        fputs("specl: out of memory\n", stderr);
        tunedb_free(&db);
        spec_set_free(&set);
        return EXIT_INVALID;
    }
    struct buf paths;
    buf_init(&paths);
    output_paths(&set, dir != NULL ? dir : "", mode, &paths);
    if (list_outputs) {
        /* What a build system needs to know before gen runs: no
         * rendering, nothing written. */
        fputs(buf_str(&paths), stdout);
        buf_free(&paths);
        tunedb_free(&db);
        spec_set_free(&set);
        free(inputs);
        return 0;
    }
    /* The variants of each kernel: with --target, its knobs for that
     * kind of device alone; else every kind's, and the database's. */
    struct variant_set *vs = calloc((size_t)set.n_kernel + 1, sizeof *vs);
    for (int i = 0; i < set.n_kernel && vs != NULL; i++) {
        if (target_given) {
            variants_one(&set.kernel[i], &vs[i]);
            continue;
        }
        struct buf notes;
        buf_init(&notes);
        variants_build(&set.kernel[i], db_path != NULL ? &db : NULL, device,
                       &vs[i], &notes);
        /* Which database entry each kernel got, or why none. */
        if (db_path != NULL) {
            variants_print_notes(&notes, stderr);
        }
        buf_free(&notes);
    }
    tunedb_free(&db);
    /* Render everything before writing anything. */
    struct emitted *out = calloc((size_t)set.n_kernel + 1, sizeof *out);
    int rc = 0;
    char err[512];
    for (int i = 0; i < set.n_kernel && rc == 0 && out != NULL && vs != NULL;
         i++) {
        /* A plan's text goes in the .cl buffer: one file per kernel. */
        int bad = mode == MODE_PLAN
                      ? emit_decisions(&vs[i], &out[i].cl, err, sizeof err)
                      : emit_kernel(&vs[i], &out[i], err, sizeof err);
        snprintf(out[i].name, sizeof out[i].name, "%s", set.kernel[i].name);
        if (bad < 0) {
            fprintf(stderr, "%s:%d:%d: error: %s: %s\n", set.kernel[i].file,
                    set.kernel[i].mark.line, set.kernel[i].mark.col,
                    set.kernel[i].name, err);
            rc = EXIT_INVALID;
        }
    }
    if (out == NULL || vs == NULL) {
        fputs("specl: out of memory\n", stderr);
        rc = EXIT_INVALID;
    }
    if (rc == 0 && mode == MODE_PLAN && dir == NULL) {
        for (int i = 0; i < set.n_kernel; i++) {
            fputs(i ? "\n" : "", stdout);
            fputs(buf_str(&out[i].cl), stdout);
        }
    } else if (rc == 0 && mode != MODE_CHECK) {
        rc = write_run(dir, out, set.n_kernel, mode == MODE_PLAN);
        if (rc == 0 && depfile != NULL) {
            rc = write_depfile(depfile, &paths, inputs, n_inputs);
        }
    }
    if (rc == 0 && (mode != MODE_PLAN || dir != NULL)) {
        printf("%s %d %s%s%s%s\n", mode != MODE_CHECK ? "wrote" : "checked",
               set.n_kernel, mode == MODE_PLAN ? "plan" : "kernel",
               set.n_kernel == 1 ? "" : "s", mode != MODE_CHECK ? " to " : "",
               mode != MODE_CHECK ? dir : "");
    }
    for (int i = 0; out != NULL && i < set.n_kernel; i++) {
        emitted_free(&out[i]);
    }
    free(out);
    free(vs);
    buf_free(&paths);
    free(inputs);
    spec_set_free(&set);
    return rc;
}

/* `specl db merge A.yaml B.yaml... -o C.yaml` */
static int cmd_db(int argc, char **argv)
{
    const char *out = NULL;
    struct tunedb db;
    struct diags d = {.out = stderr};
    int n_in = 0;
    if (argc < 1 || strcmp(argv[0], "merge") != 0) {
        fputs("specl: error: usage: specl db merge A.yaml B.yaml... -o "
              "C.yaml\n", stderr);
        return EXIT_USAGE;
    }
    tunedb_init(&db);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "specl: error: unknown db option '%s'\n",
                    argv[i]);
            tunedb_free(&db);
            return EXIT_USAGE;
        } else {
            struct tunedb one;
            tunedb_init(&one);
            tunedb_load(&one, argv[i], 0, &d);
            tunedb_merge(&db, &one);
            tunedb_free(&one);
            n_in++;
        }
    }
    if (out == NULL || n_in == 0) {
        fputs("specl: error: db merge needs input files and -o FILE\n",
              stderr);
        tunedb_free(&db);
        return EXIT_USAGE;
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
        printf("merged %d file%s: %d entries in %s\n", n_in,
               n_in == 1 ? "" : "s", db.n, out);
    }
    tunedb_free(&db);
    return rc;
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
    } else if (p->kind == VALUE_FLOAT && p->def == 0) {
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("specl %s\n", SPECL_VERSION);
        return 0;
    }
    if (strcmp(cmd, "gen") == 0) {
        return cmd_check_or_gen(argc - 2, argv + 2, MODE_GEN);
    }
    if (strcmp(cmd, "plan") == 0) {
        return cmd_check_or_gen(argc - 2, argv + 2, MODE_PLAN);
    }
    if (strcmp(cmd, "check") == 0) {
        return cmd_check_or_gen(argc - 2, argv + 2, MODE_CHECK);
    }
    if (strcmp(cmd, "list") == 0) {
        if (argc != 2) {
            fputs("specl: error: list takes no arguments\n", stderr);
            return EXIT_USAGE;
        }
        return cmd_list();
    }
    if (strcmp(cmd, "devices") == 0) {
        return rt_list_devices(stdout) == 0 ? 0 : EXIT_INVALID;
    }
    if (strcmp(cmd, "tune") == 0) {
        return specl_tune_main(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "db") == 0) {
        return cmd_db(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "bench") == 0) {
        return specl_bench_main(argc - 2, argv + 2);
    }
    fprintf(stderr, "specl: error: unknown command '%s'\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
}
