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

/* The distinct pieces a NAME.c's variants are made of (stub_names.h),
 * and the most of one variant's source: its parameters, and a piece
 * before, between and after its templates' cuts. */
#define EMIT_MAX_TEXTS STUB_MAX_TEXTS
#define EMIT_MAX_PIECES (2 * RENDER_MAX_INCLUDES + 2)

/* Room for where a piece comes from: a template's name, or "the
 * parameters of variant V". */
#define EMIT_FROM_MAX 48

struct emit_texts {
    struct buf text[EMIT_MAX_TEXTS]; /* the distinct pieces */
    char from[EMIT_MAX_TEXTS][EMIT_FROM_MAX];
    int n;
    /* Each variant's source: pieces, in order. */
    int piece[SPECL_MAX_VARIANTS][EMIT_MAX_PIECES];
    int n_piece[SPECL_MAX_VARIANTS];
    /* Set by emit_texts_write: the stored text (NAME_textN) piece I
     * begins, -1 for a piece that only ever follows the one before it
     * in the same text, and where that text's pieces end. */
    int stored[EMIT_MAX_TEXTS];
    int last[EMIT_MAX_TEXTS];
};

void emit_texts_init(struct emit_texts *t);
void emit_texts_free(struct emit_texts *t);

/* Adds variant V of stub NAME's source, PRELUDE then KERNELS cut at
 * CUTS (where each template's text begins and resumes), to T as a list
 * of pieces, each less its comments and blanks, the new ones commented
 * with FIRST or the template they come from. Returns 0, or -1 with a
 * message in ERR. */
int emit_texts_add(struct emit_texts *t, const char *name, int v,
                   const struct buf *prelude,
                   const char *first, const struct buf *kernels,
                   const struct render_cuts *cuts, char *err,
                   size_t errsize);

/* Appends to DEFS the arrays NAME_textN of the N_VARIANTS variants
 * added: pieces that always come one after the other are one text. */
void emit_texts_write(const char *name, struct emit_texts *t, int n_variants,
                      struct buf *defs);

/* Appends to LIST (a C array initialiser, open) variant V's texts, after
 * emit_texts_write. */
void emit_texts_list(const char *name, const struct emit_texts *t, int v,
                     struct buf *list);

#endif
