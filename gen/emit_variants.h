/* emit_variants.h - a kernel's variants as the emitter renders them:
 * sources, tables, device matches (emit_variants.c). */
#ifndef SPECL_EMIT_VARIANTS_H
#define SPECL_EMIT_VARIANTS_H

#include <stddef.h>

#include "emit_text.h"

/* The kernels of P in the stub's order (first launch first), with the
 * work-items of a group each is launched with; returns how many. */
int plan_kernels(const struct plan *p, const char **names, size_t *threads);

/* VS as the emitter renders it (caller frees); NULL when out of memory. */
struct emit_variant *plan_variants(const struct variant_set *vs);

#endif
