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
 * `#include "storage_@dtype@.cl"`). Returns 0 on success; on an
 * unknown hole or a missing include returns -1 with a message in ERR. */
int render(struct buf *out, const char *text, const struct hole *holes,
           char *err, size_t errsize);

#endif
