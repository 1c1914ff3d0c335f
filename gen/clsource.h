/* clsource.h - a plan's kernel source and the hash of the code it emits:
 * below the emitter, which adds the header comment and the stub, and the
 * variants, which compare kernels by what they emit. */
#ifndef SPECL_CLSOURCE_H
#define SPECL_CLSOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "op.h"
#include "render.h"

/* Appends one `#define PREFIXNAME VALUE` line per define of DEFS (N of
 * them), each define's comment after it, the comments aligned; where
 * that would take a line past COLS columns (0: no limit), each comment
 * on a line of its own above its define instead. */
void define_lines(const struct define *defs, int n, const char *prefix,
                  size_t cols, struct buf *out);

/* Appends the #define prelude of PLAN: the values the kernels are built
 * with. */
void cl_prelude(const struct plan *plan, struct buf *out);

/* Appends the kernels after the prelude: TEMPLATE_FILE rendered, or when
 * it is NULL the template of each kernel of KS's op that PLAN launches
 * (their shared parts, included by each, once); into CUTS, unless NULL,
 * where each template's text begins and resumes. Returns 0, or -1 with a
 * message in ERR. */
int cl_kernels(const struct kernel_spec *ks, const struct plan *plan,
               const char *template_file, struct buf *out,
               struct render_cuts *cuts, char *err, size_t errsize);

/* Appends the kernel source of KS after its header comment to OUT: the
 * #define prelude of PLAN (KS's plan), then TEMPLATE_FILE rendered, or
 * when it is NULL the template of each kernel of KS's op that the plan
 * launches. Returns 0, or -1 with a message in ERR (an internal template
 * problem). */
int cl_body(const struct kernel_spec *ks, const struct plan *plan,
            const char *template_file, struct buf *out, char *err,
            size_t errsize);

/* A hash of the code KS emits, apart from the header comments (which list
 * its knobs): the kernel source with its prelude, and the plan's launches,
 * buffers and constants. Configs of one kernel with equal hashes emit the
 * same kernels, launched the same way (`specl tune` times one of them).
 * Returns 0, or -1 with a message in ERR. */
int kernel_code_hash(const struct kernel_spec *ks, uint64_t *hash,
                     char *err, size_t errsize);

/* The hash of the code KS runs at ROWS (ROWS <= 0: kernel_code_hash): the
 * kernels of the paths that may run at those rows (the first that covers
 * them, and the next after one the device may refuse), the prelude's
 * values their text names, their launches and the plan's buffers.
 * Configs with equal hashes at ROWS run the same code there, whatever
 * they do at other rows (the tuner times one of them). Returns 0, or -1
 * with a message in ERR. */
int kernel_code_hash_at(const struct kernel_spec *ks, long rows,
                        uint64_t *hash, char *err, size_t errsize);

/* The same for KS's naive stub (emit_naive): equal for kernels of one op,
 * shape and dtype, whatever their knobs. */
int naive_code_hash(const struct kernel_spec *ks, uint64_t *hash, char *err,
                    size_t errsize);

#endif
