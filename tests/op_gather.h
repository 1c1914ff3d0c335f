/* op_gather.h - test_gather, the op the test suites add to the registry
 * (op_gather.c). */
#ifndef SPECL_TEST_OP_GATHER_H
#define SPECL_TEST_OP_GATHER_H

#include "op.h"

extern const struct op_def op_test_gather;

#endif
