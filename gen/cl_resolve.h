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
 * group's first undecided #elif written as its #if. A condition is
 * settled where it has the same value after the prelude of each of the
 * N_PLANS PLANS (at most SPECL_MAX_VARIANTS) whose text holds it (so
 * that a template's text the plans' variants share stays one text): the
 * text of plan p holds the templates PLAN_CUTS[p] names (PLAN_CUTS NULL:
 * every plan holds every line); the lines of a template are those CUTS
 * says it begins or resumes at. Each plan's value is the one the
 * preprocessor would give: the prelude's integer #defines by their
 * values until the text defines or undefines the name again; a name
 * that the prelude does not define, TEXT never defines and the device's
 * compiler does not (OpenCL C's own names, extensions', vendors')
 * undefined; an object-like macro TEXT defines where every enclosing
 * conditional is resolved by its body's value. Anything else (a
 * function-like macro, one defined under a conditional left to the
 * compiler or undefined again) stays for the compiler.
 * After any of the plans' preludes the output preprocesses to the same
 * tokens as TEXT. CUTS (NULL: none), byte offsets into TEXT, become
 * offsets into OUT. */
void cl_resolve(const char *text, size_t n, const struct plan *const *plans,
                const struct render_cuts *const *plan_cuts, int n_plans,
                struct render_cuts *cuts, struct buf *out);

/* Whether NAME (LEN bytes) is a name the device's compiler may define
 * itself (OpenCL C's own macros, extensions', vendors'): one no plan
 * decides. */
int cl_device_name(const char *name, size_t len);

#endif
