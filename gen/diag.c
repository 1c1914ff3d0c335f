/* diag.c - diagnostics printed like a compiler's. */
#include "diag.h"

#include <stdarg.h>

/* Prints "FILE:LINE:COL: KIND: " (as much of it as is known). */
static void diag_place(FILE *out, const char *file, struct mark at,
                       const char *kind)
{
    if (file != NULL && at.line > 0) {
        fprintf(out, "%s:%d:%d: %s: ", file, at.line, at.col, kind);
    } else if (file != NULL) {
        fprintf(out, "%s: %s: ", file, kind);
    } else {
        fprintf(out, "specl: %s: ", kind);
    }
}

void diag_error(struct diags *d, const char *file, struct mark at,
                const char *fmt, ...)
{
    va_list ap;
    if (d->count++ == 0) {
        va_start(ap, fmt);
        vsnprintf(d->first, sizeof d->first, fmt, ap);
        va_end(ap);
        d->first_at = at;
    }
    if (d->out != NULL) {
        diag_place(d->out, file, at, "error");
        va_start(ap, fmt);
        vfprintf(d->out, fmt, ap);
        va_end(ap);
        fputc('\n', d->out);
    }
    if (d->then != NULL) {
        d->then(d, file, at, d->then_ctx);
    }
}

void diag_note(struct diags *d, const char *file, struct mark at,
               const char *fmt, ...)
{
    va_list ap;
    if (d->out == NULL) {
        return;
    }
    diag_place(d->out, file, at, "note");
    va_start(ap, fmt);
    vfprintf(d->out, fmt, ap);
    va_end(ap);
    fputc('\n', d->out);
}
