/* tune_space.h - a kernel's search space for the tuner and the constraint
 * filter over it (tune_space.c). */
#ifndef SPECL_TUNE_SPACE_H
#define SPECL_TUNE_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"

#define TUNE_MAX_AXES 16
#define TUNE_MAX_VALUES 16 /* an op's list for one axis */
/* an axis's values: the op's and the kernel's own (tune_space_add_home) */
#define TUNE_AXIS_ROOM (TUNE_MAX_VALUES + 1)
#define TUNE_MAX_CONFIGS 2097152 /* a space the filter searches */
/* a space as declared, before the filter leaves out the axes that shape
 * no code at its rows (struct tune_space's idle) */
#define TUNE_MAX_DECLARED (1L << 40)
#define TUNE_MAX_KINDS 8

/* ---- the search space ------------------------------------------------- */

/* The knob values a kernel's search runs over: the axes of its op's
 * tune_space, each with its values in the order the op lists them (and
 * the kernel's own, tune_space_add_home: room for one more than an op
 * lists). Config i picks one value per axis, the last axis varying
 * fastest. */
struct tune_space {
    int n_axis;
    int knob[TUNE_MAX_AXES];           /* index in op->knobs */
    int n_value[TUNE_MAX_AXES];
    double value[TUNE_MAX_AXES][TUNE_AXIS_ROOM];
    long n_config;                     /* product of n_value */
    unsigned own;                      /* bit a: axis a holds a value
                                          tune_space_add_home added */
    /* The op's tune_parts with an axis here, in the op's order, then one
     * of the axes no part names, if any: axis a is in part part[a]. */
    int n_part;
    int part[TUNE_MAX_AXES];
    const char *part_name[TUNE_MAX_AXES]; /* the op's; NULL: the rest */
    /* The filter's spaces: the knobs of the op's list left out because
     * they shape no code at the rows for the kernel (none of their other
     * values, the kernel's own elsewhere, emits other code), separated
     * by spaces; "" when none. */
    char idle[256];
};

/* Builds OP's space as declared into SP, every axis of its tune_space.
 * Returns 0, or -1 with the reason in ERR (no tune_space, a bad knob or
 * value or part, more than TUNE_MAX_DECLARED configs). */
int tune_space_build(const struct op_def *op, struct tune_space *sp,
                     char *err, size_t errsize);

/* Config INDEX of SP for KS: KS with the axes' knobs set to the config's
 * values and every other knob KS left out chosen again by the op's
 * defaults, resolved quietly with knobs_resolve. Returns 1 when it
 * validates, else 0 with the first reason (struct diags' first) in WHY
 * (when not NULL; "" when valid). */
int tune_space_config(const struct kernel_spec *ks,
                      const struct tune_space *sp, long index,
                      struct kernel_spec *out, char *why, size_t size);

/* The config of SP holding KS's own knobs (its op defaults, for a spec
 * with none of its own), or -1 when one of them lies outside SP. */
long tune_space_home(const struct tune_space *sp,
                     const struct kernel_spec *ks);

/* Adds to each axis of SP that lacks it KS's own value of its knob, in
 * value order, so that KS's knobs (the op defaults, some worked out from
 * the shape, such as lora_backward's grad_rows; or the spec's own) are a
 * config of SP: the search starts from them and its best is timed
 * against them. Returns 0, or -1 with the reason in ERR when SP would
 * grow past TUNE_MAX_DECLARED. The filter's spaces hold it. */
int tune_space_add_home(struct tune_space *sp, const struct kernel_spec *ks,
                        char *err, size_t errsize);

/* "NAME (knob knob ...), ..." of SP's parts, or "" for one part; with
 * COUNTS (one a part), "NAME (knob knob ...: COUNT), ...". */
void tune_space_parts_text(const struct op_def *op,
                           const struct tune_space *sp, const long *counts,
                           char *out, size_t size);

/* The value index of each axis of config INDEX of SP into IDX. */
void tune_space_decode(const struct tune_space *sp, long index, int *idx);

/* The config of SP whose axes hold the value indices IDX. */
long tune_space_encode(const struct tune_space *sp, const int *idx);

/* An odometer over the configs that change part PART's knobs of config
 * FROM of SP (every value of the part's axes, FROM's elsewhere):
 * tune_part_first sets IDX to the first of them and AXES (*N_AXES of
 * them) to the part's axes, and returns how many configs it walks;
 * tune_part_next steps IDX to the next (the last axis fastest). */
long tune_part_first(const struct tune_space *sp, long from, int part,
                     int *idx, int *axes, int *n_axes);
void tune_part_next(const struct tune_space *sp, int *idx, const int *axes,
                    int n_axes);

/* How many knobs configs A and B of SP differ in. */
int tune_space_apart(const struct tune_space *sp, long a, long b);

/* ---- the constraint filter -------------------------------------------- */

/* Why configs were rejected: their first reasons, numbers blanked
 * (tune_reason_kind), and how many configs had each. The first
 * TUNE_MAX_KINDS kinds are kept, in the order they were first met;
 * configs of further kinds are not counted. */
struct tune_reasons {
    int n_kinds;
    char kind[TUNE_MAX_KINDS][128];
    char example[TUNE_MAX_KINDS][128]; /* the kind's first reason, digits
                                          and all, as it is shown */
    long count[TUNE_MAX_KINDS];
};

/* WHY with every run of digits replaced by one '#': its kind. */
void tune_reason_kind(const char *why, char *out, size_t size);

/* One kernel's space after the op's checks and the merging of configs
 * that emit the same code (kernel_code_hash). */
struct tune_filter {
    struct tune_space sp;
    long home;          /* tune_space_home, or -1 */
    long n_valid;       /* configs that validate */
    long n_cand;        /* candidates: valid configs of distinct code */
    long *rep;          /* per config: -1 when it does not validate, else
                           the candidate that emits its code (itself for
                           a candidate) */
    uint64_t *code;     /* per valid config: the hash of its code
                           (kernel_code_hash_at the filter's rows) */
    long *cand;         /* the candidates' config indices, ascending */
    struct tune_reasons why; /* the rejected configs, by kind */
};

/* Runs the filter over KS's space into F. Among configs of equal code the
 * candidate is the one that differs from the home config in the fewest
 * knobs (the home config for its own code), the first in space order
 * among those. Returns 0, or -1 with the reason in ERR (F then holds
 * nothing to free). */
int tune_filter_run(const struct kernel_spec *ks, struct tune_filter *f,
                    char *err, size_t errsize);
/* The same over the space the op searches at ROWS rows (tune_space_rows;
 * ROWS 0: tune_space), configs compared by the code that runs at ROWS
 * (kernel_code_hash_at): knobs of other rows' paths make no candidates,
 * and axes that shape no code there for KS are left out (struct
 * tune_space's idle) before the space is searched; what is left may not
 * pass TUNE_MAX_CONFIGS configs. */
int tune_filter_run_at(const struct kernel_spec *ks, long rows,
                       struct tune_filter *f, char *err, size_t errsize);
void tune_filter_free(struct tune_filter *f);

/* The candidates of F other than FROM's own (F->rep[FROM]) that differ
 * from config FROM in the knobs of part PART of F's space alone (each
 * config's candidate: the one of its code), ascending, into *OUT (caller
 * frees; NULL when none). Returns how many, or -1 when memory runs out. */
long tune_part_candidates(const struct tune_filter *f, long from, int part,
                          long **out);

/* The candidates of KS's search at ROWS (tune_filter_run_at's; ROWS 0:
 * tune_filter_run's). Returns how many;
 * *TEXTS (caller frees) holds their knob texts (knobs_text) TUNE_TEXT
 * characters apart, in space order, and *N_VALID the number of valid
 * configs. -1 if the op has no usable space or memory runs out. */
long tune_candidates(const struct kernel_spec *ks, long rows, char **texts,
                     long *n_valid);

#endif
