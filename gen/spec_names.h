/* spec_names.h - the names a kernel may not have (spec_names.c). */
#ifndef SPECL_SPEC_NAMES_H
#define SPECL_SPEC_NAMES_H

#include <stddef.h>

/* Whether identifier NAME is refused as a kernel name: a keyword of C or
 * C++, a macro compilers predefine, a name the headers of the emitted code
 * declare, or a prefix OpenCL, C or specl keep. If so, writes why into
 * WHY, as a sentence about 'NAME', and returns 1. */
int spec_name_reserved(const char *name, char *why, size_t size);

/* The I-th name of spec_name_reserved's tables (for tests); NULL after the
 * last. */
const char *spec_reserved_table_name(int i);

#endif
