/* cli.c - the option parser, the usage errors and the value checks that
 * every subcommand shares. */
#define _GNU_SOURCE /* getopt_long */
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* getopt_long's tables for the command line being parsed: at most
 * CLI_MAX_OPTIONS options plus --help. */
#define CLI_MAX_OPTIONS 32
static struct option long_options[CLI_MAX_OPTIONS + 2];
static char short_options[2 * CLI_MAX_OPTIONS + 4];
static char option_name[80];

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "specl%s%s: error: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'specl%s%s --help'.\n", cmd ? " " : "",
            cmd ? cmd : "");
    return CLI_EXIT_USAGE;
}

static void build_tables(const struct cli *c)
{
    int n = 0;
    size_t s = 0;
    short_options[s++] = ':'; /* a missing value returns ':' */
    for (const struct cli_option *o = c->options;
         o != NULL && o->name != NULL && n < CLI_MAX_OPTIONS; o++, n++) {
        long_options[n] = (struct option){
            o->name, o->takes_value ? required_argument : no_argument, NULL,
            o->key};
        if (o->key < 256) {
            short_options[s++] = (char)o->key;
            if (o->takes_value) {
                short_options[s++] = ':';
            }
        }
    }
    long_options[n++] = (struct option){"help", no_argument, NULL, 'h'};
    long_options[n] = (struct option){NULL, 0, NULL, 0};
    short_options[s++] = 'h';
    short_options[s] = '\0';
}

/* Why getopt_long refused ARG, a long option: unknown, ambiguous, or
 * given a value it does not take. */
static void bad_long_option(const struct cli *c, const char *arg)
{
    const char *name = arg + 2;
    size_t len = strcspn(name, "=");
    int matches = 0;
    char list[256] = "";
    size_t used = 0;
    for (const struct option *o = long_options; o->name != NULL; o++) {
        if (strncmp(o->name, name, len) != 0) {
            continue;
        }
        if (strlen(o->name) == len) {
            cli_usage_error(c->cmd, "option '--%s' takes no value", o->name);
            return;
        }
        matches++;
        if (used < sizeof list) {
            used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s",
                                     used ? ", " : "", o->name);
        }
    }
    if (matches > 1) {
        cli_usage_error(c->cmd, "option '--%.*s' is ambiguous (%s)", (int)len,
                        name, list);
    } else {
        cli_usage_error(c->cmd, "unknown option '--%.*s'", (int)len, name);
    }
}

int cli_next(struct cli *c)
{
    if (c->name == NULL && c->operands == NULL) {
        build_tables(c);
        opterr = 0; /* its messages are reported here, in our form */
        optind = 0; /* glibc: start afresh, permuting */
        c->name = "";
    }
    int index = -1;
    int key =
        getopt_long(c->argc, c->argv, short_options, long_options, &index);
    const char *arg =
        optind > 0 && optind <= c->argc ? c->argv[optind - 1] : "";
    c->value = NULL;
    switch (key) {
    case -1:
        c->operands = c->argv + optind;
        c->n_operands = c->argc - optind;
        return CLI_END;
    case 'h':
        fputs(c->usage, stdout);
        return CLI_HELP;
    case ':':
        if (strncmp(arg, "--", 2) == 0) {
            cli_usage_error(c->cmd, "option '%.*s' needs a value",
                            (int)strcspn(arg, "="), arg);
        } else {
            cli_usage_error(c->cmd, "option '-%c' needs a value", optopt);
        }
        return CLI_ERROR;
    case '?':
        if (strncmp(arg, "--", 2) == 0) {
            bad_long_option(c, arg);
            return CLI_ERROR;
        }
        cli_usage_error(c->cmd, "unknown option '-%c'", optopt);
        return CLI_ERROR;
    default:
        break;
    }
    if (index >= 0) {
        snprintf(option_name, sizeof option_name, "--%s",
                 long_options[index].name);
    } else {
        /* a short option: named by its long name, as the usage does */
        for (const struct option *o = long_options; o->name != NULL; o++) {
            if (o->val == key) {
                snprintf(option_name, sizeof option_name, "--%s", o->name);
            }
        }
    }
    c->name = option_name;
    c->value = optarg;
    return key;
}

int cli_long(const struct cli *c, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(c->value, &end, 10);
    if (end == c->value || *end != '\0' || v < lo || v > hi) {
        cli_usage_error(c->cmd,
                        "%s needs a whole number in [%ld, %ld], "
                        "got '%s'",
                        c->name, lo, hi, c->value);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_double(const struct cli *c, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(c->value, &end);
    /* !(v >= lo): NaN too */
    if (end == c->value || *end != '\0' || !(v >= lo) || v > hi) {
        cli_usage_error(c->cmd, "%s needs a number in [%g, %g], got '%s'",
                        c->name, lo, hi, c->value);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_choice(const struct cli *c, const char *const *choices)
{
    int n = 0;
    for (; choices[n] != NULL; n++) {
        if (strcmp(c->value, choices[n]) == 0) {
            return n;
        }
    }
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof list; i++) {
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                 i == 0       ? ""
                                 : i == n - 1 ? " or "
                                              : ", ",
                                 choices[i]);
    }
    cli_usage_error(c->cmd, "%s must be %s (got %s)", c->name, list, c->value);
    return -1;
}

/* Whether S starts with one or more digits; *END gets what follows. */
static int digits(const char *s, const char **end)
{
    size_t n = strspn(s, "0123456789");
    *end = s + n;
    return n > 0 && n < 10;
}

int cli_device(const struct cli *c)
{
    const char *rest;
    if (digits(c->value, &rest) &&
        (*rest == '\0' ||
         (*rest == ':' && digits(rest + 1, &rest) && *rest == '\0'))) {
        return 0;
    }
    cli_usage_error(c->cmd,
                    "%s needs N or PLATFORM:DEVICE (numbers, as "
                    "'specl devices' lists them), got '%s'",
                    c->name, c->value);
    return -1;
}

int cli_read_specs(const struct cli *c, struct spec_set *set, struct diags *d)
{
    int from_stdin = 0;
    for (int i = 0; i < c->n_operands; i++) {
        from_stdin += strcmp(c->operands[i], "-") == 0;
    }
    if (c->n_operands == 0) {
        cli_usage_error(c->cmd, "no spec files given");
        return -1;
    }
    if (from_stdin > 1) {
        cli_usage_error(c->cmd,
                        "'-' (standard input) given %d times; it "
                        "can be read once",
                        from_stdin);
        return -1;
    }
    int errors = 0;
    for (int i = 0; i < c->n_operands; i++) {
        errors += spec_read_file(set, c->operands[i], d);
    }
    return errors;
}

int cli_find_kernel(const struct spec_set *set, const char *name)
{
    for (int i = 0; i < set->n_kernel; i++) {
        if (strcmp(set->kernel[i].name, name) == 0) {
            return i;
        }
    }
    fprintf(stderr,
            "specl: error: no kernel named '%s' in the specs; they "
            "have:",
            name);
    for (int i = 0; i < set->n_kernel; i++) {
        fprintf(stderr, "%s %s", i ? "," : "", set->kernel[i].name);
    }
    fputs(set->n_kernel ? "\n" : " none\n", stderr);
    return -1;
}

int cli_is_terminal(FILE *f)
{
    return isatty(fileno(f));
}

void cli_csv_field(struct buf *b, const char *s)
{
    if (s[strcspn(s, ",\"\r\n")] == '\0') {
        buf_puts(b, s);
        return;
    }
    buf_puts(b, "\"");
    for (; *s; s++) {
        buf_add(b, s, 1);
        if (*s == '"') {
            buf_puts(b, "\"");
        }
    }
    buf_puts(b, "\"");
}

void cli_json_string(struct buf *b, const char *s)
{
    buf_puts(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            buf_printf(b, "\\%c", ch);
        } else if (ch == '\n') {
            buf_puts(b, "\\n");
        } else if (ch == '\t') {
            buf_puts(b, "\\t");
        } else if (ch < 0x20 || ch == 0x7f) {
            buf_printf(b, "\\u%04x", ch);
        } else {
            buf_add(b, s, 1);
        }
    }
    buf_puts(b, "\"");
}
