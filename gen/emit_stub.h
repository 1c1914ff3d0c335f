/* emit_stub.h - the stub's host API: NAME.h and NAME.c rendered from
 * their templates (emit_stub.c). */
#ifndef SPECL_EMIT_STUB_H
#define SPECL_EMIT_STUB_H

#include <stddef.h>

#include "buf.h"
#include "emit_text.h"

struct emitted; /* emit.h */

/* The holes of the stub templates; strings live in B (one buf each). */
enum stub_hole {
    H_HEADER, H_NAME, H_GUARD, H_CONSTANTS, H_OP, H_MATH, H_BUFFER_DOC,
    H_PARAMS, H_DEF_PARAMS, H_SOURCES, H_BUFFER_INDEXES, H_BUFFER_UNDEFS,
    H_BUFFER_SHAPES, H_VARIANT_TABLES, H_VARIANTS,
    H_MAX_KERNELS, H_MATCHES, H_VARIANT_DOC,
    H_N_VARIANTS, H_BUFFER_ARGS, H_SM90A, H_SM90A_REBUILD, H_CAPS,
    H_ALIAS_DOC,
    H_N_BUFFERS, H_N_SIZES, H_SIZE_NAMES, H_SIZE_PARAMS, H_SIZE_DEF_PARAMS,
    H_SIZE_ARGS, H_SIZE_ARG_DEFS, H_SIZE_ARG_UNDEFS, H_OVER, H_SIZE_ZERO,
    H_SCRATCH_UPTO, H_SIZES_UPPER, H_PATH_SIZE, H_HANDLE, H_QUEUE,
    H_MAX_ARGS, N_HOLES
};

/* The index of P's buffer NAME, or -1. */
int buffer_index(const struct plan *p, const char *name);

/* Fills the remaining holes B of the stub of the N variants EV (MAX_KERNELS
 * kernels at most in one) and renders NAME.h and NAME.c into E. Returns
 * 0, or -1 with a message in ERR. */
int render_stub(const char *name, const struct emit_variant *ev, int n,
                int max_kernels, struct buf *b, struct emitted *e,
                char *err, size_t errsize);

#endif
