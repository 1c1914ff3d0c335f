/* stub_names.h - the names every emitted NAME.h and NAME.c define, as
 * suffixes of NAME_, shared by the emitter and the spec reader. */
#ifndef SPECL_STUB_NAMES_H
#define SPECL_STUB_NAMES_H

#include <stddef.h>

#include "op.h"

/* The host API of kernel NAME, declared by NAME.h: NAME_ and each of
 * these (NULL-terminated). */
extern const char *const stub_host_api[];

/* The naive stub of kernel NAME, which specl checks NAME against, is
 * NAME_naive. */
#define EMIT_NAIVE_SUFFIX "_naive"
/* Room for an emitted name and its terminating NUL. */
#define EMIT_NAME_MAX (SPECL_NAME_MAX + sizeof EMIT_NAIVE_SUFFIX)

/* Every name NAME.c defines begins with NAME_, so that the files of
 * several kernels compile as one translation unit (unity builds); those
 * NAME.h does not declare are NAME_ and one of the suffixes this writes
 * into BUF, the I-th for I = 0, 1, ...: it returns 1, or 0 past the last
 * (at most STUB_SUFFIXES). A kernel named NAME_S whose own names would be
 * among them cannot go with NAME into one unit. NAME.c's macros
 * are left out: it #undefs them at its end. */
int stub_suffix(int i, char *buf, size_t size);
#define STUB_SUFFIXES                                                      \
    (48 + (4 + SPECL_MAX_PATHS) * SPECL_MAX_VARIANTS + STUB_MAX_TEXTS +     \
     STUB_MAX_ARG_LISTS)

/* The distinct kernel texts one NAME.c holds, at most (NAME_textN): each
 * variant's parameters and the pieces of its rendered templates, two per
 * include (render.h's RENDER_MAX_INCLUDES) and one more. */
#define STUB_MAX_TEXTS (SPECL_MAX_VARIANTS * (2 * 32 + 2))

/* The distinct argument lists of the launches of one NAME.c, at most
 * (NAME_argsN). */
#define STUB_MAX_ARG_LISTS 64

#endif
