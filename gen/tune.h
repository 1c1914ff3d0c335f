/* tune.h - the configs `specl tune` times (the command is tune.c's
 * specl_tune_main). */
#ifndef SPECL_TUNE_H
#define SPECL_TUNE_H

#include "op.h"

/* The candidates of KS's search: the configs of its op's tuning space
 * (every other knob KS left out chosen again by the op's defaults) that
 * validate, one for each distinct code they emit (emit_code_hash; the op
 * defaults' config stands for its equals, any other the first in space
 * order). Returns how many; *TEXTS (caller frees) holds their knob texts
 * (knobs_text) TUNE_TEXT characters apart, in space order, and
 * *N_VALID the number of valid configs. -1 if the op has no usable space
 * or memory runs out. */
long tune_candidates(const struct kernel_spec *ks, char **texts,
                     long *n_valid);

#endif
