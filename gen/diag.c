/* diag.c - diagnostics printed like a compiler's. */
#include "diag.h"

#include <stdarg.h>

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
    if (d->out == NULL) {
        return;
    }
    if (file != NULL && at.line > 0) {
        fprintf(d->out, "%s:%d:%d: error: ", file, at.line, at.col);
    } else if (file != NULL) {
        fprintf(d->out, "%s: error: ", file);
    } else {
        fprintf(d->out, "specl: error: ");
    }
    va_start(ap, fmt);
    vfprintf(d->out, fmt, ap);
    va_end(ap);
    fputc('\n', d->out);
}
