/* cl_resolve.h - the conditionals of a rendered kernel text that the
 * plan's integer #defines decide, resolved before the text is emitted,
 * so that NAME.cl and NAME.c hold only the code their plans can run. */
#ifndef SPECL_CL_RESOLVE_H
#define SPECL_CL_RESOLVE_H

#include <stddef.h>

#include "buf.h"
#include "op.h"
#include "render.h"

/* Appends TEXT (N bytes) to OUT with every #if, #ifdef, #ifndef, #elif
 * and #else whose condition the N_FACT integer #defines FACT settle
 * resolved: the branches that cannot be taken and the directives that
 * chose them left out, a group's first undecided #elif written as its
 * #if. A condition that names anything else (a macro the text defines,
 * the device's predefined ones) is left to the compiler, as is a name
 * of FACT that TEXT itself defines or undefines. The output preprocesses
 * to the same tokens as TEXT after FACT's #defines. CUTS (NULL: none),
 * byte offsets into TEXT, become offsets into what was appended. */
void cl_resolve(const char *text, size_t n, const struct define *fact,
                int n_fact, struct render_cuts *cuts, struct buf *out);

/* Into FACT (room for SPECL_MAX_DEFINES), the integer #defines that
 * every one of the N plans gives the same value; returns their count. */
int cl_shared_facts(const struct plan *const *plans, int n,
                    struct define *fact);

#endif
