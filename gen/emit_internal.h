/* emit_internal.h - what the parts of the emitter share; only emit*.c
 * include it. From the bottom up: emit_text.c formats comments and C
 * strings, emit_stub.c the host API of NAME.h and NAME.c and renders
 * their templates, emit_variants.c a kernel's variants (sources, tables,
 * device matches), emit_plan.c the decisions `specl plan` prints, emit.c
 * the files. */
#ifndef SPECL_EMIT_INTERNAL_H
#define SPECL_EMIT_INTERNAL_H

#include <stddef.h>

#include "emit.h"

/* One variant as the emitter renders it. */
struct emit_variant {
    const struct kernel_spec *ks;
    struct plan plan;
    const char *template_file; /* NULL: the op's kernels */
    const char *label;
    int n_match;
    const struct variant_match *match;
};

/* The holes of the stub templates; strings live in B (one buf each). */
enum stub_hole {
    H_HEADER, H_NAME, H_GUARD, H_CONSTANTS, H_OP, H_MATH, H_BUFFER_DOC,
    H_PARAMS, H_DEF_PARAMS, H_SOURCES, H_BUFFER_INDEXES, H_BUFFER_UNDEFS,
    H_ELEMENT_BYTES, H_BUFFER_SHAPES, H_VARIANT_TABLES, H_VARIANTS,
    H_MAX_KERNELS, H_MATCHES, H_VARIANT_DOC,
    H_N_VARIANTS, H_BUFFER_ARGS, H_SM90A, H_SM90A_REBUILD, H_ALIAS_DOC,
    H_N_BUFFERS, H_N_SIZES, H_SIZE_NAMES,
    N_HOLES
};

/* ---- text (emit_text.c) ------------------------------------------------- */

/* Appends TEXT (a spec path, a device name, a note) to OUT so that it
 * stays one line of the C or OpenCL C comment OUT ends inside. */
void comment_text(struct buf *out, const char *text);

/* The devices of a variant's matches, for comments ("any device",
 * "CPUs", "NVIDIA H100 80GB HBM3 (driver 580.65.06)"). */
void match_text(const struct variant_match *m, int n, struct buf *out);

/* The comment every emitted file NAME.EXT opens with, for the N variants
 * EV. */
void header_comment(const struct emit_variant *ev, int n, const char *name,
                    const char *ext, struct buf *out);

/* Appends the N bytes at S as the body of a C string literal. */
void c_escape(struct buf *out, const char *s, size_t n);

/* Appends CL as lines of a C array of string literals. */
void source_lines(const struct buf *cl, struct buf *out);

/* SRC upper-cased into DST (SIZE bytes). */
void upper_name(char *dst, const char *src, size_t size);

/* Appends TEXT to OUT as lines of a C comment that fit 79 columns,
 * breaking at spaces: FIRST opens the first line, INDENT the others. */
void comment_wrap(struct buf *out, const char *first, const char *indent,
                  const char *text);

/* ---- the stub's host API (emit_stub.c) ---------------------------------- */

/* The index of P's buffer NAME, or -1. */
int buffer_index(const struct plan *p, const char *name);

/* Fills the remaining holes B of the stub of the N variants EV (MAX_KERNELS
 * kernels at most in one; SM90A: one runs wgmma) and renders NAME.h and
 * NAME.c into E. Returns 0, or -1 with a message in ERR. */
int render_stub(const char *name, const struct emit_variant *ev, int n,
                int max_kernels, int sm90a, struct buf *b, struct emitted *e,
                char *err, size_t errsize);

/* ---- variants (emit_variants.c) ----------------------------------------- */

/* The kernels of P in the stub's order (first launch first), with the
 * work-items of a group each is launched with; returns how many. */
int plan_kernels(const struct plan *p, const char **names, size_t *threads);

/* VS as the emitter renders it (caller frees); NULL when out of memory. */
struct emit_variant *plan_variants(const struct variant_set *vs);

#endif
