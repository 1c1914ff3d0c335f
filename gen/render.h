/* render.h - template renderer: named holes and inlined includes. */
#ifndef SPECL_RENDER_H
#define SPECL_RENDER_H

#include <stddef.h>

#include "buf.h"

/* A template compiled into the binary (see tools/embed.c). */
struct template_file {
    const char *name; /* base name under templates/ */
    const char *text;
};

/* NULL-terminated table generated from templates/. */
extern const struct template_file template_files[];

/* The text of template NAME, or NULL. */
const char *template_text(const char *name);

/* A hole `@name@` and the text that fills it. */
struct hole {
    const char *name;
    const char *value;
};

/* Appends TEXT to OUT with every `@name@` replaced by its value in HOLES
 * (a NULL-terminated array; may be NULL for none) and every line
 * `#include "X"` naming a template replaced by that template, rendered
 * the same way (each included at most once; X may hold holes too, as in
 * `#include "storage_@dtype@.cl"`). Lines `@if name@`, `@else@` and
 * `@endif@` (alone on their line; nested up to RENDER_MAX_DEPTH) keep
 * the lines between them only when hole NAME is neither "" nor "0" (after
 * @else@: only when it is); they leave no line themselves. Returns 0 on
 * success; on an unknown hole, a missing include or unbalanced sections
 * returns -1 with a message in ERR. */
int render(struct buf *out, const char *text, const struct hole *holes,
           char *err, size_t errsize);

/* Sections open at once, at most. */
#define RENDER_MAX_DEPTH 8

/* Templates one render inlines, at most (stub_names.h counts on it). */
#define RENDER_MAX_INCLUDES 32

/* Where the text of one template begins or resumes in a rendered text:
 * at byte AT of what render_cut appended, the text of template NAME
 * (NULL: TEXT itself). */
struct render_cut {
    size_t at;
    const char *name;
};

/* The template boundaries of one render: two per inlined template. */
struct render_cuts {
    struct render_cut cut[2 * RENDER_MAX_INCLUDES];
    int n;
};

/* render, and into CUTS where each inlined template begins and where the
 * text that included it resumes (in order), so that the texts of shared
 * templates can be told apart from their includers'. */
int render_cut(struct buf *out, const char *text, const struct hole *holes,
               struct render_cuts *cuts, char *err, size_t errsize);

#endif
