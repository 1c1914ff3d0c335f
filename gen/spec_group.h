/* spec_group.h - a mapping of fields inside a kernel (spec_group.c): a
 * part of the spec reader, for spec*.c only. */
#ifndef SPECL_SPEC_GROUP_H
#define SPECL_SPEC_GROUP_H

#include <stddef.h>

#include "spec_node.h"

/* Appends the LEN bytes of WORD to the comma-separated LIST of SIZE. */
void spec_list_add(char *list, size_t size, const char *word, size_t len);

/* Reads V, the mapping GROUP of a kernel (rope's scaling), into the
 * fields "GROUP.key" of KS; the members it leaves out take its mark,
 * where the op's checks report them missing. */
void spec_read_field_group(struct reader *r, struct kernel_spec *ks,
                           const char *group, struct ref v);

#endif
