/* numeric_util.h - what the numeric and sweep suites share: one device per
 * suite, kernels read from YAML text, and checked runs of a generated
 * kernel against the naive kernel and the float64 reference. */
#ifndef SPECL_TESTS_NUMERIC_UTIL_H
#define SPECL_TESTS_NUMERIC_UTIL_H

#include <stddef.h>

#include "runtime.h"
#include "spec.h"
#include "stubrun.h"
#include "verify.h"

/* One kernel under test: its YAML, its spec after defaults and validation,
 * and (once built) its emitted stub, loaded. */
struct nu_kernel {
    char yaml[1024];          /* the spec text, printed on any failure */
    char errors[1024];        /* validation messages when rejected */
    struct spec_set set;
    const struct kernel_spec *ks; /* set.kernel[0]; NULL when rejected */
    struct stub stub;
    int built;
    /* Set before nu_run: the float64 reference alone judges, for inputs
     * that the naive kernel's plain float32 arithmetic cannot take (a
     * softmax scale times 3e38 overflows there, not in the kernel). */
    int reference_only;
    /* Set before nu_run: x also rises by this much along each row
     * (0: does not), e.g. a softmax row whose max grows all along. */
    double x_ramp;
    /* Set before nu_run: the input buffer of this name (NULL: none) is
     * drawn times scale_by, plus shift_by, e.g. layernorm's beta made
     * tiny (an int32 buffer's rounded down: rope's positions moved). */
    const char *scale_input;
    double scale_by;
    double shift_by;
    /* Set before nu_run: rewrites inputs of a case after they are drawn
     * (NULL: none), e.g. attention_backward's o and lse made the
     * forward's of its q, k and v. */
    void (*fill)(struct vcase *c);
    /* Set by nu_run: the generated kernel's error and the bound it was
     * judged by, of the output nearest its bound. */
    double last_error, last_bound;
};

/* Counts of one suite, printed by nu_close. */
struct nu_stats {
    long kernels;   /* kernels built */
    long cases;     /* (kernel, rows, inputs) runs checked */
    long failed;    /* runs that failed a check */
    long skipped;   /* specs that validation rejected (expected in sweeps) */
};

extern struct nu_stats nu_stats;

/* For a suite's init and cleanup: opens the OpenCL device ($SPECL_DEVICE
 * or the first) and the naive kernels, and resets the counts (returns 0,
 * or -1 without a device); closes them and prints the counts under NAME.
 * The base seed is $SPECL_TEST_SEED, else a fixed one, so a run repeats;
 * $SPECL_TEST_VERBOSE=1 prints a line per build and run with its time. */
int nu_open(const char *name);
int nu_close(void);
/* The open device. */
const struct rt *nu_rt(void);

/* Reads the one kernel of the YAML text (printf FMT) into K. Returns 1
 * when it validated, 0 when the reader rejected it (messages in
 * K->errors). K must be released with nu_kernel_free either way. */
int nu_spec(struct nu_kernel *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* As nu_spec, for a spec that must validate: a rejection fails the test
 * (messages printed). Returns 1 when it validated. */
int nu_spec_ok(struct nu_kernel *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Adopts kernel I of SET (moved out of it) into K, e.g. from a spec file. */
void nu_adopt(struct nu_kernel *k, const struct spec_set *set, int i,
              const char *what);

/* Plans, renders and builds K on the device; a failure fails the test
 * (build log printed). Returns 1 when built. */
int nu_build(struct nu_kernel *k);
void nu_kernel_free(struct nu_kernel *k);

/* The compute units of the device nu_open opened: the work-groups that
 * surely run at once (the one-launch split paths' bound). */
unsigned nu_compute_units(void);

/* K's spec retargeted to TARGET (its defaults redone for that device
 * kind; a failure fails the test) and planned into P: plan checks that
 * need no device of that kind. */
void nu_plan_for(struct nu_kernel *k, enum target target, struct plan *p);

/* A knob of K's spec after defaults (long), e.g. the rows of a tile. */
long nu_knob(const struct nu_kernel *k, const char *key);
/* The largest row count of the plan's first path when there are several
 * (the decode threshold of lora); 0 when there is one path. */
long nu_small_path_rows(const struct nu_kernel *k);
/* The largest row counts of every path of K's plan but the last (which
 * takes any rows) into OUT (at most MAX); returns how many. */
int nu_path_limits(const struct nu_kernel *k, long *out, int max);

/* Runs built kernel K over ROWS rows, inputs from a fresh seed and DIST:
 * the generated kernel and the naive one against the float64 reference,
 * and against each other. Any NaN, a changed canary, an OpenCL error or
 * an error over the bound fails the test, with the seed, YAML and the
 * worst rows printed. Returns 1 when every check passed. The bound of
 * each output is error_bound, or in f16 and bf16, where the float64
 * result rounded to the storage type is itself off by more (outputs among
 * the subnormals), that rounding's error plus twice the f32 bound. */
int nu_run(struct nu_kernel *k, size_t rows, struct vdist dist);

/* nu_run at the runtime sizes SIZES (op order). */
int nu_run_sizes(struct nu_kernel *k, const size_t *sizes, struct vdist dist);
/* nu_run_sizes with inputs from SEED, as a failure prints it: a case
 * replayed whatever the base seed and the cases before it. */
int nu_run_seed(struct nu_kernel *k, const size_t *sizes, unsigned long seed,
                struct vdist dist);

/* Loads KS's naive stub (stub_load_naive) and checks it alone against
 * the float64 reference over each of N row counts (rows[i]), with the
 * room the naive kernels get in nu_run. Fails the test on a build error,
 * an OpenCL error, a changed canary or too large an error; returns how
 * many row counts passed. */
int nu_check_naive(const struct kernel_spec *ks, const size_t *rows, int n);

/* As nu_run over each of N row counts; returns how many passed. */
int nu_run_rows(struct nu_kernel *k, const size_t *rows, int n,
                struct vdist dist);

/* Fills OUT (room for 8) with the sorted distinct positive counts of
 * 1, tile-1, tile, tile+1 and LARGE; returns how many. */
int nu_tile_rows(long tile, long large, size_t *out);

/* Adds V to the sorted distinct list OUT of N (>= 1 only); returns N. */
int nu_rows_add(size_t *out, int n, long v);

/* The relative L2 error of GOT against REF (N values) over the places
 * where both are finite; NaN unless GOT is NaN exactly where REF is, and
 * the same infinity where REF has one (an input's NaN or -inf carried to
 * the outputs that float64 carries it to). The runs above judge by it. */
double nu_rel_l2_nans(const float *got, const double *ref, size_t n);

/* The integer value of P's define NAME; -1 where it has none. */
long nu_define(const struct plan *p, const char *name);

/* The usual input distribution: uniform in [-1, 1]. */
struct vdist nu_unit(void);

#endif
