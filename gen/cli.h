/* cli.h - what the subcommands of the command line share: one option
 * parser (getopt_long: --name=value and --name value, options before or
 * after the operands, -- ends them, -h and --help), one way of reporting a
 * bad command line, checks of option values, and the reading of the spec
 * files it names ('-': standard input). */
#ifndef SPECL_CLI_H
#define SPECL_CLI_H

#include <stdio.h>

#include "buf.h"
#include "diag.h"
#include "spec.h"

#define CLI_EXIT_INVALID 1 /* a spec or an environment problem */
#define CLI_EXIT_USAGE 2   /* the command line itself */

/* One option of a subcommand. */
struct cli_option {
    const char *name; /* the long name, without "--"; NULL ends a table */
    int key;          /* what cli_next returns for it: a letter is also the
                         short option -KEY; else a value >= 256 */
    int takes_value;
};

/* A subcommand's command line, parsed by cli_next: set CMD, USAGE,
 * OPTIONS, ARGC and ARGV (a designated initializer leaves the rest 0). */
struct cli {
    const char *cmd;   /* "gen", "db merge": the messages
                          say "specl CMD" */
    const char *usage; /* what --help prints */
    const struct cli_option *options;
    int argc;
    char **argv; /* argv[0]: the subcommand */
    /* Set by cli_next. */
    const char *name;  /* the option just returned, as "--rows" */
    const char *value; /* and its value (NULL when it takes none) */
    char **operands;   /* what is not an option, once cli_next returned
                          CLI_END */
    int n_operands;
};

enum {
    CLI_END = -1,  /* no option left: the operands are set */
    CLI_HELP = -2, /* -h or --help: the usage went to stdout; exit 0 */
    CLI_ERROR = -3 /* a bad option was reported (cli_usage_error) */
};

/* The next option of C: its key (C->name and C->value say what was
 * given), or one of CLI_END, CLI_HELP, CLI_ERROR. The first call starts
 * the parse; one command line is parsed at a time. */
int cli_next(struct cli *c);

/* Reports a bad command line on stderr as "specl CMD: error: MESSAGE"
 * and "Try 'specl CMD --help'." (CMD NULL: "specl: error: ..." and
 * "Try 'specl --help'."). Returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* C's current value as a whole number in [LO, HI] into *OUT, or as a
 * number in [LO, HI] (cli_double); or -1, reported (cli_usage_error). */
int cli_long(const struct cli *c, long lo, long hi, long *out);
int cli_double(const struct cli *c, double lo, double hi, double *out);

/* The index of C's current value in CHOICES (NULL-terminated); or -1,
 * reported ("--target must be cpu or gpu (got x)"). */
int cli_choice(const struct cli *c, const char *const *choices);

/* Whether C's current value has the form of a device selector (rt_open):
 * N or P:D; -1 (reported) when not. Whether such a device exists is
 * rt_open's to say. */
int cli_device(const struct cli *c);

/* Reads the spec files among C's operands into SET, reporting through
 * D; '-' is standard input (named <stdin> in messages). Returns -1 after
 * reporting a usage error (no spec file, or '-' twice) before reading
 * anything, else the number of errors found in the specs. */
int cli_read_specs(const struct cli *c, struct spec_set *set, struct diags *d);

/* Whether F is a terminal (progress is shown on one, not in a file). */
int cli_is_terminal(FILE *f);

/* Whether SET has a kernel called NAME: its index, or -1 after saying on
 * stderr that it has none, listing the kernels it has. */
int cli_find_kernel(const struct spec_set *set, const char *name);

/* Appends S to B as one CSV field (RFC 4180): quoted when it holds a
 * comma, a quote or a line break, its quotes doubled. */
void cli_csv_field(struct buf *b, const char *s);

/* Appends S to B as a JSON string: quotes, backslashes and control
 * characters escaped (S is taken as UTF-8 and passed through). */
void cli_json_string(struct buf *b, const char *s);

/* Appends S to B as one CSV field (RFC 4180): quoted when it holds a
 * comma, a quote or a line break, its quotes doubled. */
void cli_csv_field(struct buf *b, const char *s);

/* Appends S to B as a JSON string: quotes, backslashes and control
 * characters escaped (S is taken as UTF-8 and passed through). */
void cli_json_string(struct buf *b, const char *s);

#endif
