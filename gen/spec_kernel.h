/* spec_kernel.h - one kernel of a spec file, read and checked
 * (spec_kernel.c): a part of the spec reader, for spec*.c only. */
#ifndef SPECL_SPEC_KERNEL_H
#define SPECL_SPEC_KERNEL_H

#include "spec_node.h"

/* Reads kernel N of the kernels: sequence into *OUT, reporting every
 * problem through R; returns 1 when it is valid, else 0. */
int spec_read_kernel(struct reader *r, struct ref n, struct kernel_spec *out);

#endif
