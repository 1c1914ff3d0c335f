/* op_rows.h - what the row ops (softmax, rmsnorm, layernorm) share: their
 * knobs, shape-aware defaults, checks and launch plan. */
#ifndef SPECL_OP_ROWS_H
#define SPECL_OP_ROWS_H

#include "op.h"

/* The fields every row op starts with, and the norms' eps. */
#define ROWS_FEATURES_FIELD                                                  \
    {"features", VALUE_INT, 1, 0, 1, 16777216, NULL,                         \
     "elements per row (D); rows (M) are given at run time"}
#define ROWS_EPS_FIELD                                                       \
    {"eps", VALUE_FLOAT, 0, 1e-5, 0, 1, NULL,                                \
     "added under the square root; > 0 (default 1e-5)"}

/* The knobs under `tile:` of every row op, in this order. */
enum { ROWS_KNOB_WG, ROWS_KNOB_ROWS, ROWS_KNOB_VEC, ROWS_KNOB_MODE,
       ROWS_N_KNOBS };
extern const struct param_def rows_knobs[ROWS_N_KNOBS];

/* The most floats one work-item keeps in registers (mode: registers). */
#define ROWS_REG_FLOATS 64

/* Fills the knobs the spec left unset from the shape (see op_rows.c). */
void rows_defaults(struct kernel_spec *ks);

/* Checks the knobs against each other and the shape. LOCAL_FLOATS is how
 * many floats of local memory the template takes per work-item. */
void rows_validate(const struct kernel_spec *ks, struct diags *d,
                   int local_floats);

/* Reports an eps that is not > 0 (as a float) at its mark. */
void rows_validate_eps(const struct kernel_spec *ks, struct diags *d);

/* Starts P: the dtype, FEATURES and the geometry defines. */
void rows_plan_begin(const struct kernel_spec *ks, struct plan *p);

/* Adds a float field KEY as define and public constant NAME. */
void rows_plan_float(const struct kernel_spec *ks, struct plan *p,
                     const char *key, const char *name, const char *comment);

/* Ends P: buffers x, PARAMS (NULL-terminated; FEATURES elements each) and
 * y, and the one launch of KERNEL over them. */
void rows_plan_end(const struct kernel_spec *ks, struct plan *p,
                   const char *kernel, const char *const *params);

/* What `specl tune` searches for a row op. */
extern const struct tune_axis rows_tune_space[];

#endif
