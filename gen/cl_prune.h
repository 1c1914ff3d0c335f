/* cl_prune.h - the definitions of a NAME.c's kernel texts that none of
 * its variants uses, left out once the conditionals are resolved
 * (cl_resolve.h): what the plans cannot run, emitted nowhere. */
#ifndef SPECL_CL_PRUNE_H
#define SPECL_CL_PRUNE_H

#include <stddef.h>

#include "buf.h"
#include "op.h"
#include "render.h"

/* Removes from the N resolved texts of one NAME.c's variants the inline
 * functions and macros (#define at the outer level) whose names occur in
 * no text but where they are defined, with the comment just above each,
 * again until none is left: removed alike from every text that holds
 * them, so that the texts the variants share stay shared. Comments do
 * not count as uses; a name a ## may paste together is kept; a function
 * with a directive in its body other than #pragma is kept. CUTS[v]
 * (NULL: none), offsets into TEXTS[v], follow the removals. */
void cl_prune(struct buf *texts, struct render_cuts *cuts, int n);

/* PLAN's #define prelude (cl_prelude) with only the names the N bytes
 * of TEXT use (outside comments); its tables whole. */
void cl_prelude_used(const struct plan *plan, const char *text, size_t n,
                     struct buf *out);

#endif
