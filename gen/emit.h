/* emit.h - turns a validated kernel spec into its .cl, .h and .c text. */
#ifndef SPECL_EMIT_H
#define SPECL_EMIT_H

#include <stdint.h>

#include "buf.h"
#include "op.h"
#include "variant.h"

#define SPECL_VERSION "0.1.0"

/* The terms of use every emitted .cl, .h and .c states, one line of its
 * header comment. */
#define EMIT_LICENCE                                                          \
    "Generated output of specl; you may use, modify and distribute it "       \
    "under terms of your choice (see specl's LICENSE)."

/* The naive stub of kernel NAME is NAME_naive (emit_naive). */
#define EMIT_NAIVE_SUFFIX "_naive"
/* Room for an emitted name and its terminating NUL. */
#define EMIT_NAME_MAX (SPECL_NAME_MAX + sizeof EMIT_NAIVE_SUFFIX)

/* Every name NAME.c defines begins with NAME_, so that the files of
 * several kernels compile as one translation unit (unity builds); those
 * NAME.h does not declare are NAME_ and one of the suffixes this writes
 * into BUF, the I-th for I = 0, 1, ...: it returns 1, or 0 past the last
 * (at most EMIT_STUB_SUFFIXES). A kernel named NAME_S whose own names
 * would be among them cannot go with NAME into one unit. NAME.c's macros
 * are left out: it #undefs them at its end. */
int emit_stub_suffix(int i, char *buf, size_t size);
#define EMIT_STUB_SUFFIXES (32 + (5 + SPECL_MAX_PATHS) * SPECL_MAX_VARIANTS)

/* The three emitted files of one kernel, in memory. */
struct emitted {
    char name[EMIT_NAME_MAX];
    struct buf cl; /* NAME.cl */
    struct buf h;  /* NAME.h */
    struct buf c;  /* NAME.c */
};

void emitted_free(struct emitted *e);

/* Renders the kernel source of KS (header comment, #define prelude and
 * template) into OUT; PLAN must be KS's plan. Returns 0, or -1 with a
 * message in ERR (an internal template problem). */
int emit_cl(const struct kernel_spec *ks, const struct plan *plan,
            struct buf *out, char *err, size_t errsize);

/* A hash of the code KS emits, apart from the header comments (which list
 * its knobs): the kernel source with its prelude, and the plan's launches,
 * buffers and constants. Configs of one kernel with equal hashes emit the
 * same kernels, launched the same way (`specl tune` times one of them).
 * Returns 0, or -1 with a message in ERR. */
int emit_code_hash(const struct kernel_spec *ks, uint64_t *hash, char *err,
                   size_t errsize);

/* The same for KS's naive stub (emit_naive): equal for kernels of one op,
 * shape and dtype, whatever their knobs. */
int emit_naive_code_hash(const struct kernel_spec *ks, uint64_t *hash,
                         char *err, size_t errsize);

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

/* The files of one run on their way into an output directory DIR, all or
 * none. emit_output_add writes each into a staging directory of the run's
 * own inside DIR (DIR/.specl-tmp-XXXXXX); emit_output_commit then takes
 * DIR's lock (flock on DIR/.specl.lock, a file removed again when the run
 * is done) and renames them into place one by one, keeping a second link
 * to each file it replaces until all are in place. A run that fails
 * anywhere puts back what it replaced and removes what it staged, so DIR
 * holds either every file of the run or the files it held before; and of
 * runs that write into one DIR at once, one's files all replace the
 * other's, never some of them. A run killed before it is done may leave
 * its staging directory behind: it is safe to remove when no run is
 * writing. */
struct emit_output {
    char *dir;     /* DIR as given */
    char *staging; /* DIR/.specl-tmp-XXXXXX, while it exists */
    char **names;  /* DIR/NAME of each file added, in order */
    int n_names;
    int cap_names;
};

/* Creates DIR (and its parents) if missing and a staging directory in it.
 * Returns 0, after which O ends with emit_output_commit or
 * emit_output_discard; or -1 with a message in ERR (nothing to end). */
int emit_output_begin(struct emit_output *o, const char *dir, char *err,
                      size_t errsize);

/* Stages the LEN bytes of TEXT as DIR/NAME. Returns 0, or -1 with a
 * message in ERR (then discard O). */
int emit_output_add(struct emit_output *o, const char *name,
                    const char *text, size_t len, char *err, size_t errsize);

/* Stages E's NAME.cl, NAME.h and NAME.c, as emit_output_add. */
int emit_output_add_kernel(struct emit_output *o, const struct emitted *e,
                           char *err, size_t errsize);

/* Moves every staged file into place, under DIR's lock, and ends O.
 * Returns 0; -1 with a message in ERR when it failed and DIR holds what
 * it held before; or -2 when, moreover, some files it replaced could not
 * be put back (ERR names them and the directory that keeps them). */
int emit_output_commit(struct emit_output *o, char *err, size_t errsize);

/* Removes what O staged and ends it; DIR is left as it was. */
void emit_output_discard(struct emit_output *o);

/* Writes E's files into DIR (created if missing), all three or none, as
 * one run of emit_output. Returns 0, or -1 with a message in ERR. */
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
 * emit_output. */
int emit_write_decisions(const char *dir, const char *name,
                         const struct buf *text, char *err, size_t errsize);

/* Writes TEXT to PATH atomically (temporary file, then rename): one file,
 * with no lock; a run's several files go through emit_output. */
int write_file_atomic(const char *path, const char *text, size_t len,
                      char *err, size_t errsize);

#endif
