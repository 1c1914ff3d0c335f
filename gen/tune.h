/* tune.h - the tuner as a library: a kernel's search space, the constraint
 * filter with its reasons, the candidates it leaves (one per distinct
 * emitted code), and the tuning of one kernel on an opened device into a
 * tuning-database entry. `specl tune` (specl_tune_main) is argument
 * parsing and printing around tune_kernel. */
#ifndef SPECL_TUNE_H
#define SPECL_TUNE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "op.h"
#include "runtime.h"
#include "tunedb.h"
#include "verify.h"

#define TUNE_MAX_AXES 12
#define TUNE_MAX_VALUES 16
#define TUNE_MAX_CONFIGS 200000
#define TUNE_MAX_KINDS 8

/* ---- the search space ------------------------------------------------- */

/* The knob values a kernel's search runs over: the axes of its op's
 * tune_space, each with its values in the order the op lists them.
 * Config i picks one value per axis, the last axis varying fastest. */
struct tune_space {
    int n_axis;
    int knob[TUNE_MAX_AXES];           /* index in op->knobs */
    int n_value[TUNE_MAX_AXES];
    double value[TUNE_MAX_AXES][TUNE_MAX_VALUES];
    long n_config;                     /* product of n_value */
};

/* Builds OP's space into SP. Returns 0, or -1 with the reason in ERR (no
 * tune_space, a bad knob or value, more than TUNE_MAX_CONFIGS configs). */
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

/* The value index of each axis of config INDEX of SP into IDX. */
void tune_space_decode(const struct tune_space *sp, long index, int *idx);

/* The config of SP whose axes hold the value indices IDX. */
long tune_space_encode(const struct tune_space *sp, const int *idx);

/* ---- the constraint filter -------------------------------------------- */

/* Why configs were rejected: their first reasons, numbers blanked
 * (tune_reason_kind), and how many configs had each. The first
 * TUNE_MAX_KINDS kinds are kept, in the order they were first met;
 * configs of further kinds are not counted. */
struct tune_reasons {
    int n_kinds;
    char kind[TUNE_MAX_KINDS][128];
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
    uint64_t *code;     /* per valid config: kernel_code_hash of its code */
    long *cand;         /* the candidates' config indices, ascending */
    struct tune_reasons why; /* the rejected configs, by kind */
};

/* Runs the filter over KS's space into F. Among configs of equal code the
 * home config is the candidate, else the first in space order. Returns 0,
 * or -1 with the reason in ERR (F then holds nothing to free). */
int tune_filter_run(const struct kernel_spec *ks, struct tune_filter *f,
                    char *err, size_t errsize);
void tune_filter_free(struct tune_filter *f);

/* The candidates of KS's search (tune_filter_run's). Returns how many;
 * *TEXTS (caller frees) holds their knob texts (knobs_text) TUNE_TEXT
 * characters apart, in space order, and *N_VALID the number of valid
 * configs. -1 if the op has no usable space or memory runs out. */
long tune_candidates(const struct kernel_spec *ks, char **texts,
                     long *n_valid);

/* ---- tuning one kernel ------------------------------------------------ */

enum tune_strategy {
    TUNE_EXHAUSTIVE, /* every candidate, in space order */
    TUNE_RANDOM,     /* candidates in random order */
    TUNE_LOCAL       /* random points, then hill climbing one knob step at
                        a time from the best of them and the defaults */
};

struct tune_result;

struct tune_options {
    enum tune_strategy strategy;
    long max_evals;     /* 0: every candidate for TUNE_EXHAUSTIVE, else a
                           quarter of them (rounded up) */
    double budget_s;    /* seconds of searching; 0: no limit */
    long rows;          /* rows measured; 0: measure_default_rows */
    int reps;           /* timed runs of each config (1..MAX_REPS) */
    unsigned long seed; /* of the inputs and of the search's order */
    const char *plot;   /* an SVG of the search written there, or NULL */
    /* When not NULL, the search stops once *STOP is set (by a signal
     * handler, say); what was measured is kept. */
    const volatile sig_atomic_t *stop;
    /* When not NULL: ON_START once the filter has run and the entry is
     * found, before anything is timed; ON_PROGRESS after each evaluation
     * and once more at the end (FINAL set). ELAPSED_S: seconds since the
     * search began. */
    void (*on_start)(const struct tune_result *r, void *ctx);
    void (*on_progress)(const struct tune_result *r, double elapsed_s,
                        int final, void *ctx);
    /* When not NULL: after each config newly measured and recorded in
     * r->entry (its time, or why it failed), before the next is built. A
     * caller saves the database there, so that a run killed later keeps
     * what it measured (specl tune does). */
    void (*on_record)(const struct tune_result *r, void *ctx);
    void *ctx;
};

/* Sets O to what `specl tune` uses without options: local search, 20
 * reps, seed 1, no limits, no plot, no callbacks. */
void tune_options_init(struct tune_options *o);

/* What tuning one kernel did. */
#define TUNE_CONFIRM_ROUNDS 3

struct tune_result {
    long rows;          /* rows measured */
    long n_configs;     /* configs of the space */
    long n_valid;       /* configs that validate */
    long n_cand;        /* distinct code among them: the candidates */
    struct tune_reasons why; /* the rejected configs, by kind */
    long max_evals;     /* evaluations the search may make (<= n_cand) */
    long evaluated;     /* candidates evaluated: built and timed now, or
                           found in the database */
    long built;         /* of those not from the database: built */
    long verified;      /* ... and matched float64 */
    long timed;         /* ... and timed */
    long from_db;       /* taken from the entry's records */
    long stale;         /* of those timed now: recorded before, but for
                           other code (or code not recorded) */
    long best;          /* config index of the fastest, -1 when none ran
                           correctly */
    char best_knobs[TUNE_TEXT]; /* its knob text; "" when none */
    double best_us;     /* its median time */
    double best_gbs;    /* the op's fewest bytes over that time */
    double best_gflops;
    double default_us;  /* the op defaults (KS itself), timed in the same
                           run before the search, or their median back to
                           back when confirmed (below); -1 when it failed */
    /* When the search's best is not the op defaults: both re-timed back
     * to back, TUNE_CONFIRM_ROUNDS times alternately (medians, and each
     * one's spread, min and max). The best stands only if its median is
     * the lower; else the defaults are kept as the best (kept_defaults). */
    int confirmed;
    double confirm_best_us, confirm_default_us;
    double best_spread[2], default_spread[2];
    int kept_defaults;
    int best_is_default; /* the search's best is the op defaults' config
                            (timed twice: default_us and best_us) */
    struct tune_entry *entry; /* the database entry recorded into; valid
                                 until the database changes */
    int searched;       /* the search ran: the counts above hold */
    char error[256];    /* why the search did not run, or the plot could
                           not be written; "" otherwise */
};

/* Tunes KS on RT (opened; NAIVE: naive_init'ed) with O (NULL: the
 * defaults of tune_options_init): sets up the measured case, runs the
 * filter, finds or adds DB's entry for RT's device and driver and KS's
 * op, dtype, shape and rows, times the op defaults, then searches the
 * candidates with measure_stub (build, verify against float64, time),
 * taking configs already recorded in the entry from it (when the record
 * measured the code the config emits now) and recording every other
 * evaluated config (its time, or why it failed). A best that
 * is not the op defaults is re-timed against them back to back and stands
 * only if it stays faster (else the defaults are the best). The entry's
 * best becomes the run's best unless the entry holds a faster or as fast
 * record of the code its knobs emit now, or the run timed nothing new;
 * defaults kept back to back
 * replace it. Its default_us and version are updated. A config whose
 * build or run failed after *O->STOP was set is not recorded: the stop
 * may have cut it short (Ctrl-C reaches the compiler too). Fills R. Returns
 * 0 when some config ran correctly and the plot (if any) was written,
 * else 1: R->searched says whether the search ran, and R->error why not
 * (or why the plot failed). Saving DB is the caller's. */
int tune_kernel(const struct rt *rt, struct naive_stubs *naive,
                const struct kernel_spec *ks, const struct tune_options *o,
                struct tunedb *db, struct tune_result *r);

/* Seconds on a monotonic clock, for elapsed times. */
double tune_clock_s(void);

/* ---- the plot ---------------------------------------------------------- */

/* What an SVG of one kernel's search shows: per config of SP, its time
 * (a config that emits another's code has that one's; INFINITY when not
 * timed), and the chosen config (BEST, -1 when none). */
struct tune_plot {
    const struct kernel_spec *ks;
    const struct tune_space *sp;
    const double *us;
    long best;
    const char *best_knobs;
    double best_us;
    const char *device;
};

/* Writes PL's plot as an SVG to PATH (atomically). Returns 0, or -1 with
 * a message in ERR. */
int tune_plot_write(const struct tune_plot *pl, const char *path, char *err,
                    size_t errsize);

/* ---- specl tune --------------------------------------------------------- */

/* `specl tune ARGS...` (ARGV without the program and command names):
 * prints as the command does and returns its exit status. */
int specl_tune_main(int argc, char **argv);

#endif
