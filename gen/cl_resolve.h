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
 * and #else whose condition is settled resolved: the branches that
 * cannot be taken and the directives that chose them left out, a
 * group's first undecided #elif written as its #if. The N_FACT integer
 * #defines FACT settle what they name; a name that none of the N_PLANS
 * PLANS' preludes defines, TEXT never defines and the device's compiler
 * does not (OpenCL C's own names, extensions', vendors') is undefined,
 * as the preprocessor takes it; an object-like macro TEXT defines where
 * every enclosing conditional is resolved stands for its body's value.
 * Anything else (a function-like macro, one defined under a conditional
 * left to the compiler or undefined again, a plan's value that is no
 * fact) stays for the compiler. The output preprocesses to the same tokens as TEXT after a
 * plan's prelude. CUTS (NULL: none), byte offsets into TEXT, become
 * offsets into OUT. */
void cl_resolve(const char *text, size_t n, const struct define *fact,
                int n_fact, const struct plan *const *plans, int n_plans,
                struct render_cuts *cuts, struct buf *out);

/* Whether NAME (LEN bytes) is a name the device's compiler may define
 * itself (OpenCL C's own macros, extensions', vendors'): one no plan
 * decides. */
int cl_device_name(const char *name, size_t len);

/* Into FACT (room for SPECL_MAX_DEFINES), the integer #defines that
 * every one of the N plans gives the same value; returns their count. */
int cl_shared_facts(const struct plan *const *plans, int n,
                    struct define *fact);

#endif
