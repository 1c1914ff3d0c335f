/* import.c - `specl import CONFIG.json`: the spec of a model's kernels
 * from its Hugging Face config.json (import_config.c reads it,
 * import_spec.c writes the spec). The spec is read back through the spec
 * reader before it is written: what import writes, check accepts. */
#include "import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "files.h"
#include "spec.h"

#define DEFAULT_RANK 16
#define DEFAULT_ALPHA 32

static const char import_usage[] =
    "usage: specl import [OPTION]... CONFIG.json\n"
    "\n"
    "Writes the spec of a model's kernels from its Hugging Face\n"
    "config.json (model_type llama, mistral, qwen2, qwen3, phi3, gemma2\n"
    "or gemma3_text): a lora_forward kernel per shape among the targets,\n"
    "the norms, rope, the MLP's activation, and attention and the loss\n"
    "where this specl has them (else comments with their values). To\n"
    "stdout, or FILE.\n"
    "Nothing is written when the config has a problem.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE  write the spec to FILE (default: stdout)\n"
    "      --rank R       LoRA rank (default 16)\n"
    "      --alpha A      LoRA alpha, scale = alpha / rank (default 32)\n"
    "      --targets LIST the projections with an adapter, of q, k, v, o,\n"
    "                     gate, up, down, or all (default: q,k,v,o)\n"
    "      --dtype D      storage: f32, f16 or bf16 (default bf16: what\n"
    "                     these models are served and tuned in)\n"
    "      --train        also the backward ops (lora_backward, the\n"
    "                     norms', swiglu's, rope inverse)\n"
    "      --prefix P     kernel names' prefix (default: model_type)\n"
    "  -h, --help         this text\n";

enum { OPT_RANK = 256, OPT_ALPHA, OPT_TARGETS, OPT_DTYPE, OPT_TRAIN,
       OPT_PREFIX };

static const struct cli_option import_options_table[] = {
    {"output", 'o', 1},   {"rank", OPT_RANK, 1},
    {"alpha", OPT_ALPHA, 1}, {"targets", OPT_TARGETS, 1},
    {"dtype", OPT_DTYPE, 1}, {"train", OPT_TRAIN, 0},
    {"prefix", OPT_PREFIX, 1}, {NULL, 0, 0},
};

/* The --targets list TEXT as TARGET_BIT mask; 0 after a usage error. */
static unsigned parse_targets(const char *cmd, const char *text)
{
    static const char *const names[N_TARGET_PROJ] = {"q", "k", "v", "o",
                                                     "gate", "up", "down"};
    unsigned mask = 0;
    for (const char *p = text; *p != '\0';) {
        size_t n = strcspn(p, ",");
        int found = n == 3 && strncmp(p, "all", 3) == 0;
        mask |= found ? (1u << N_TARGET_PROJ) - 1 : 0;
        for (int t = 0; t < N_TARGET_PROJ && !found; t++) {
            if (strlen(names[t]) == n && strncmp(p, names[t], n) == 0) {
                mask |= TARGET_BIT(t);
                found = 1;
            }
        }
        if (!found) {
            cli_usage_error(cmd, "--targets: unknown projection '%.*s' "
                            "(expected q, k, v, o, gate, up, down or all)",
                            (int)n, p);
            return 0;
        }
        p += n + (p[n] == ',');
    }
    if (mask == 0) {
        cli_usage_error(cmd, "--targets names no projection");
    }
    return mask;
}

/* Reads C's options into O and *OUT_PATH: -1 to go on, else the exit
 * status. */
static int parse_import_args(struct cli *c, struct import_options *o,
                             const char **out_path)
{
    static const char *const dtypes[] = {"f32", "f16", "bf16", NULL};
    int key;
    double alpha;
    while ((key = cli_next(c)) != CLI_END) {
        switch (key) {
        case CLI_HELP:
            return 0;
        case CLI_ERROR:
            return CLI_EXIT_USAGE;
        case 'o':
            *out_path = c->value;
            break;
        case OPT_RANK:
            if (cli_long(c, 1, 16777216, &o->rank) < 0) {
                return CLI_EXIT_USAGE;
            }
            break;
        case OPT_ALPHA:
            if (cli_double(c, -3.4e38, 3.4e38, &alpha) < 0) {
                return CLI_EXIT_USAGE;
            }
            o->alpha = alpha;
            break;
        case OPT_TARGETS:
            o->targets = parse_targets(c->cmd, c->value);
            if (o->targets == 0) {
                return CLI_EXIT_USAGE;
            }
            break;
        case OPT_DTYPE: {
            int d = cli_choice(c, dtypes);
            if (d < 0) {
                return CLI_EXIT_USAGE;
            }
            o->dtype = (enum dtype)d;
            break;
        }
        case OPT_TRAIN:
            o->train = 1;
            break;
        case OPT_PREFIX:
            o->prefix = c->value;
            break;
        }
    }
    if (c->n_operands != 1) {
        return cli_usage_error(c->cmd, c->n_operands == 0
                                           ? "no config.json given"
                                           : "one config.json at a time");
    }
    /* The longest suffix is "_gate_up_proj_backward" (22 characters). */
    if (o->prefix != NULL &&
        (!spec_is_identifier(o->prefix) || strlen(o->prefix) > 40)) {
        return cli_usage_error(c->cmd, "--prefix must be a C identifier of "
                               "at most 40 characters (got '%s')",
                               o->prefix);
    }
    return -1;
}

/* Reads TEXT, the spec written for PATH, back through the spec reader:
 * 0 when it checks; else says so on stderr with the reader's messages. */
static int read_back(const char *path, const struct buf *text)
{
    struct spec_set set;
    struct diags d = {.out = stderr};
    spec_set_init(&set);
    int errors = spec_read_buffer(&set, path,
                                  (const unsigned char *)buf_str(text),
                                  text->len, &d);
    spec_set_free(&set);
    if (errors) {
        fprintf(stderr, "specl import: internal error: the spec written "
                "from the config does not check (above); nothing written\n");
    }
    return errors ? -1 : 0;
}

/* Writes TEXT to PATH atomically, or to stdout (PATH NULL). */
static int write_spec(const char *path, const struct buf *text, int written,
                      int left_out, const struct buf *left_why)
{
    char err[1024];
    if (path == NULL) {
        fputs(buf_str(text), stdout);
        return 0;
    }
    if (write_file_atomic(path, buf_str(text), text->len, err, sizeof err) <
        0) {
        fprintf(stderr, "specl: error: %s; nothing written\n", err);
        return CLI_EXIT_INVALID;
    }
    printf("wrote %s: %d kernel%s", path, written, written == 1 ? "" : "s");
    if (left_out) {
        printf(", %d left as %s: %s", left_out,
               left_out == 1 ? "a comment" : "comments", buf_str(left_why));
    }
    printf("\n");
    return 0;
}

int specl_import_main(int argc, char **argv)
{
    struct cli c = {.cmd = argv[0],
                    .usage = import_usage,
                    .options = import_options_table,
                    .argc = argc,
                    .argv = argv};
    struct import_options o = {.rank = DEFAULT_RANK,
                               .alpha = DEFAULT_ALPHA,
                               .dtype = DTYPE_BF16,
                               .targets = TARGET_BIT(T_Q) | TARGET_BIT(T_K) |
                                          TARGET_BIT(T_V) | TARGET_BIT(T_O)};
    const char *out_path = NULL;
    int rc = parse_import_args(&c, &o, &out_path);
    if (rc >= 0) {
        return rc;
    }
    o.config_path = c.operands[0];
    struct model m;
    struct diags d = {.out = stderr};
    int errors = import_read_config(o.config_path, &m, &d);
    if (errors) {
        fprintf(stderr, "specl: %d error%s; nothing written\n", errors,
                errors == 1 ? "" : "s");
        return CLI_EXIT_INVALID;
    }
    struct buf text, left_why;
    int written = 0, left_out = 0;
    buf_init(&text);
    buf_init(&left_why);
    if (import_write_spec(&m, &o, &text, &written, &left_out, &left_why) <
        0) {
        fputs("specl: 1 error; nothing written\n", stderr);
        rc = CLI_EXIT_INVALID;
    } else if (read_back(out_path ? out_path : "<stdout>", &text) < 0) {
        rc = CLI_EXIT_INVALID;
    } else {
        rc = write_spec(out_path, &text, written, left_out, &left_why);
    }
    buf_free(&text);
    buf_free(&left_why);
    return rc;
}
