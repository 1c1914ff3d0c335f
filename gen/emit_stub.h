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
    H_ARG_LISTS, H_SIZE_ARG0, H_SIZE_UNUSED, H_RANGES, H_RANGE_DOC,
    /* The sections' conditions: "1" when the stub needs the section. */
    H_USES_SYNC, H_USES_SYNC_SIZED, H_USES_COOP, H_USES_UNITS,
    H_USES_UNITS_SIZED, H_USES_SCRATCH,
    H_USES_SLICES, H_USES_IF_GIVEN, H_USES_UNUSED, H_USES_NULLABLE,
    H_USES_MAY_ALIAS, H_USES_CAPS, H_USES_NEEDS, H_USES_NAMES,
    H_USES_DEVICE_TEXT, H_USES_RANGES, N_HOLES
};

/* The parts of the stub's runtime that only some stubs need (the
 * sections of templates/stub.c.in), each carried when a variant of the
 * stub needs it: a NAME.c holds only the code its plans run. */
struct stub_sections {
    int sync;        /* grid-wide barriers' counters: a sync buffer */
    int coop;        /* paths that need all their work-groups at once */
    int sync_sized;  /* paths whose counters grow with the sizes */
    int units;       /* the device's compute units (coop, units_sized) */
    int units_sized; /* paths bounded by work-groups a compute unit */
    int scratch;     /* paths whose launches share scratch */
    int slices;      /* launches that pass their slices */
    int if_given;    /* launches or scratch for some outputs alone */
    int unused;      /* buffers the spec leaves unused */
    int nullable;    /* outputs the caller may leave out (NULL) */
    int may_alias;   /* an output allowed in place of another buffer */
    int names;       /* matches that name a device (tuned variants) */
    int ranges;      /* rows ranges of devices tuned at several row
                        counts (variant_range) */
    unsigned asked;  /* capabilities the variants need or are meant for */
    unsigned needed; /* capabilities the variants' sources need */
};

/* The sections the stub of the N variants EV needs. */
void stub_sections(const struct emit_variant *ev, int n,
                   struct stub_sections *s);

/* The index of P's buffer NAME, or -1. */
int buffer_index(const struct plan *p, const char *name);

/* Fills the remaining holes B of the stub of the N variants EV (MAX_KERNELS
 * kernels at most in one) and renders NAME.h and NAME.c into E. Returns
 * 0, or -1 with a message in ERR. */
int render_stub(const char *name, const struct emit_variant *ev, int n,
                const struct stub_sections *sec, int max_kernels,
                struct buf *b, struct emitted *e, char *err, size_t errsize);

#endif
