/* emit_texts.h - the kernel texts of one NAME.c, each stored once: a
 * variant's source is a list of them (its parameters, then the pieces of
 * its rendered templates), which its stub hands to
 * clCreateProgramWithSource as one array of lines (emit_texts.c). */
#ifndef SPECL_EMIT_TEXTS_H
#define SPECL_EMIT_TEXTS_H

#include <stddef.h>

#include "buf.h"
#include "op.h"
#include "render.h"
#include "stub_names.h"

/* The distinct texts a NAME.c holds (stub_names.h). */
#define EMIT_MAX_TEXTS STUB_MAX_TEXTS

struct emit_texts {
    struct buf text[EMIT_MAX_TEXTS];
    int n;
};

void emit_texts_init(struct emit_texts *t);
void emit_texts_free(struct emit_texts *t);

/* Appends to LIST (a C array initialiser, open) the texts of the source
 * PRELUDE then KERNELS, cut at CUTS (where each template's text begins
 * and resumes): NAME_textN for each piece, the pieces met first added to
 * T and their arrays to DEFS, each commented with FIRST or the template
 * it comes from. Returns 0, or -1 with a message in ERR. */
int emit_source_texts(const char *name, struct emit_texts *t,
                      const struct buf *prelude, const char *first,
                      const struct buf *kernels,
                      const struct render_cuts *cuts, struct buf *defs,
                      struct buf *list, char *err, size_t errsize);

#endif
