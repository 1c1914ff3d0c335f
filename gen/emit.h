/* emit.h - turns a validated kernel spec into its .cl, .h and .c text. */
#ifndef SPECL_EMIT_H
#define SPECL_EMIT_H

#include <stdint.h>

#include "buf.h"
#include "op.h"
#include "stub_names.h"
#include "variant.h"
#include "version.h"


/* The three emitted files of one kernel, in memory. */
struct emitted {
    char name[EMIT_NAME_MAX];
    struct buf cl; /* NAME.cl */
    struct buf h;  /* NAME.h */
    struct buf c;  /* NAME.c */
    int header_only; /* an alias (emit_alias): NAME.h alone */
};

void emitted_free(struct emitted *e);

/* NAME.h alone into E (initialised here) for kernel KS, which differs from
 * kernel OF only in its name (spec_kernels_alike): OF's header included
 * and each name of OF's API (OF, OF_...) in OF_H, OF's NAME.h, defined
 * under KS's name. */
void emit_alias(const struct kernel_spec *ks, const char *of,
                const struct buf *of_h, struct emitted *e);

/* Renders the kernel source of KS (header comment, #define prelude and
 * template) into OUT; PLAN must be KS's plan. Returns 0, or -1 with a
 * message in ERR (an internal template problem). */
int emit_cl(const struct kernel_spec *ks, const struct plan *plan,
            struct buf *out, char *err, size_t errsize);

/* Plans and renders all three files of the kernel of VS (its variants:
 * one, or several that NAME_create picks from per device) into E
 * (initialised here). NAME.cl is variant 0's source. Returns 0, or -1
 * with a message in ERR. */
int emit_kernel(const struct variant_set *vs, struct emitted *e, char *err,
                size_t errsize);

/* Renders the three files of a stub NAME for KS into E (initialised here):
 * PLAN's prelude in front of TEMPLATE_FILE, and PLAN's buffers, constants
 * and launches in templates/stub.{h,c}.in, as the one variant of NAME.
 * Returns 0, or -1 with a message in ERR. */
int emit_stub(const struct kernel_spec *ks, const char *name,
              const struct plan *plan, const char *template_file,
              struct emitted *e, char *err, size_t errsize);

/* The naive version of KS (naive_plan over tests/naive.cl) as the stub
 * NAME_naive, with the host API of NAME: what the checks compare NAME
 * with. Returns 0, or -1 with a message in ERR. */
int emit_naive(const struct kernel_spec *ks, struct emitted *e, char *err,
               size_t errsize);

struct outdir;

/* Stages E's NAME.cl, NAME.h and NAME.c into O (outdir_add). */
int emit_stage_kernel(struct outdir *o, const struct emitted *e, char *err,
                      size_t errsize);

/* Writes E's files into DIR (created if missing), all three or none, as
 * one run of outdir.h's. Returns 0, or -1 with a message in ERR. */
int emit_write(const char *dir, const struct emitted *e, char *err,
               size_t errsize);

/* Renders what the generator decided for the kernel of VS into OUT: the
 * header comment, then per variant the #define prelude of its source, the
 * constants of NAME.h and the buffer shapes (once), scratch, kernels with
 * their work-group sizes, and every path's launches (local size, groups,
 * arguments). Short, one decision a line, from the same plans emit_kernel
 * renders: the golden files pin this. Returns 0, or -1 with a message in
 * ERR. */
int emit_decisions(const struct variant_set *vs, struct buf *out, char *err,
                   size_t errsize);

/* Writes TEXT as DIR/NAME.plan (DIR created if missing), as one run of
 * outdir.h's. */
int emit_write_decisions(const char *dir, const char *name,
                         const struct buf *text, char *err, size_t errsize);

#endif
