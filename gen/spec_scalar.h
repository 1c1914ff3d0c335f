/* spec_scalar.h - scalar values of a spec: ints, floats, bools, choices,
 * dtypes (spec_scalar.c): a part of the spec reader, for spec*.c only. */
#ifndef SPECL_SPEC_SCALAR_H
#define SPECL_SPEC_SCALAR_H

#include "op.h"
#include "spec_node.h"

/* Reads V as a dtype into *OUT; returns 0 when it is none (reported). */
int parse_dtype(struct reader *r, struct ref v, enum dtype *out);

/* Parses V as the value of parameter DEF into OUT (set and mark filled).
 * WHAT names it in messages ("in_features", "tile m"). Plain scalars are
 * read by their text; a quoted or !!str one is a string, read only where a
 * string is expected; !!int, !!float and !!bool say what the text must
 * be. */
int parse_param(struct reader *r, const struct param_def *def,
                const char *what, struct ref v, struct param_value *out);

#endif
