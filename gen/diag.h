/* diag.h - diagnostics: errors collected with file, line and column. */
#ifndef SPECL_DIAG_H
#define SPECL_DIAG_H

#include <stdio.h>

/* A position in a source file; line and column count from 1 (0: unknown). */
struct mark {
    int line;
    int col;
};

#define DIAG_MESSAGE_MAX 200

/* Collects errors; printed as `file:line:col: error: message` in order.
 * The first one is also kept as data, for callers that check quietly
 * (the tuner's filter): its message without position, and its mark. */
struct diags {
    int count;          /* errors reported so far */
    FILE *out;          /* where messages go; NULL to stay silent */
    char first[DIAG_MESSAGE_MAX]; /* the first error's message; "" before one */
    struct mark first_at;
    /* Optional: called after each error is counted and printed, with its
     * place, so that a reader can follow it with notes (diag_note) that
     * say more about where it comes from. */
    void (*then)(struct diags *d, const char *file, struct mark at,
                 void *ctx);
    void *then_ctx;
};

/* Reports one error at FILE:AT and counts it. FILE may be NULL (no position). */
void diag_error(struct diags *d, const char *file, struct mark at,
                const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Prints a note that explains the error before it, as a compiler's
 * `file:line:col: note: ...`; notes are not counted. */
void diag_note(struct diags *d, const char *file, struct mark at,
               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
