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
#include "tune_plot.h"
#include "tune_space.h"
#include "tunedb.h"
#include "verify.h"

/* ---- tuning one kernel ------------------------------------------------ */

enum tune_strategy {
    TUNE_EXHAUSTIVE, /* every candidate, in space order */
    TUNE_RANDOM,     /* candidates in random order */
    TUNE_LOCAL       /* from the op defaults: each knob changed alone,
                        then configs further out, cheapest first by
                        what their values cost alone, around each new
                        best; where the op's knobs shape different
                        kernels (op_def.tune_parts), one part's knobs at
                        a time, the parts in turn */
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
    /* For tests: when not NULL, every time measured is replaced by what
     * this returns for the config's KNOBS at ROWS, so that a test can
     * make the search's figures lucky and the re-timing's not. RUN: -1 for a
     * config's median in the search (and the defaults' before it), else
     * the run's number in the re-timing after it. */
    double (*fake_us)(const char *knobs, long rows, int run, void *ctx);
    void *fake_ctx;
};

/* Sets O to what `specl tune` uses without options: local search, 20
 * reps, seed 1, no limits, no plot, no callbacks. */
void tune_options_init(struct tune_options *o);

/* What tuning one kernel did. */

struct tune_result {
    long rows;          /* rows measured */
    long n_configs;     /* configs of the space */
    char own_values[TUNE_TEXT]; /* "key=value ..." of the kernel's own
                                   values its space took beside the op's
                                   lists (tune_space_add_home); "" */
    char idle[256];     /* knobs of the op's space left out, shaping no
                           code at these rows (struct tune_space's); "" */
    long n_valid;       /* configs that validate */
    long n_cand;        /* distinct code among them: the candidates */
    char parts[TUNE_TEXT]; /* the local search's parts, one searched at a
                              time, with their candidates around the
                              defaults (tune_space_parts_text); "" for
                              one part */
    struct tune_reasons why; /* the rejected configs, by kind */
    long max_evals;     /* evaluations the search may make (<= n_cand) */
    long evaluated;     /* candidates evaluated: built and timed now, or
                           found in the database */
    long built;         /* of those not from the database: built */
    long verified;      /* ... and matched float64 */
    long timed;         /* ... and timed */
    long from_db;       /* taken from the entry's records */
    /* Seconds the candidates built now spent: NAME.c emitted and
     * compiled, programs built, outputs checked, runs timed. */
    double compile_s, build_s, check_s, timing_s;
    long stale;         /* of those timed now: recorded before, but for
                           other code (or code not recorded) */
    long best;          /* config index of the fastest, -1 when none ran
                           correctly */
    char best_knobs[TUNE_TEXT]; /* its knob text; "" when none */
    double best_us;     /* its median time: re-timed (below) when
                           retimed, else the search's */
    double best_gbs;    /* the op's fewest bytes over that time */
    double best_gflops;
    double default_us;  /* the op defaults (KS itself): their median
                           re-timed (below) when retimed, else timed in
                           the same run before the search; -1 when it
                           failed */
    /* After a search that was not stopped and timed something new: the
     * op defaults, the search's
     * best and the entry's earlier best (when its record measured the
     * code its knobs emit now) re-timed back to back, RETIMED runs each
     * (the tune's reps), one of each in turn on the same buffers. The
     * fastest median is the best (the defaults win a tie, then the
     * earlier best): kept_defaults or kept_earlier when it is not the
     * search's. The spreads are the 10th and 90th percentiles of those
     * runs. */
    int retimed;
    double search_best_us;  /* the search's best's own median, which
                               picking the fastest of many flatters */
    double best_spread[2], default_spread[2];
    int kept_defaults;
    int kept_earlier;
    int best_is_default; /* the search's best is the op defaults' config */
    char stopped[32];   /* why the search ended before its last candidate
                           ("time budget", "max evals", "interrupted");
                           "" when it evaluated them all */
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
 * evaluated config (its time, or why it failed). Unless stopped or it
 * timed nothing new, the search's best, the op defaults and the entry's
 * earlier best are then
 * re-timed back to back (R's retimed) and the fastest median becomes the
 * entry's best, with that median as its time, its spread and the
 * defaults' median and spread. A stopped run keeps the old rule: the
 * entry's best becomes the run's unless the entry holds a faster or as
 * fast record of the code its knobs emit now, or the run timed nothing
 * new. The entry's default_us, version and search coverage (searched,
 * candidates, stopped) are updated. A config whose
 * build or run failed after *O->STOP was set is not recorded: the stop
 * may have cut it short (Ctrl-C reaches the compiler too). Fills R. Returns
 * 0 when some config ran correctly and the plot (if any) was written,
 * else 1: R->searched says whether the search ran, and R->error why not
 * (or why the plot failed). Saving DB is the caller's. */
int tune_kernel(const struct rt *rt, struct naive_stubs *naive,
                const struct kernel_spec *ks, const struct tune_options *o,
                struct tunedb *db, struct tune_result *r);

/* Where a ladder's neighbouring row counts give way to each other:
 * between rows LO and HI, whose bests are the knobs texts BELOW and
 * ABOVE (which emit different code), probes at a geometric grid of rows
 * between them (neighbours at most a quarter apart, up to
 * TUNE_MAX_PROBES; from LO up while BELOW is the fastest, then from HI
 * down while ABOVE is) time both bests and the defaults back to back
 * (each built and checked first; configs of the same code at those rows
 * timed once). X->UPTO: the most rows to which BELOW was the fastest of the
 * three at every probe from LO (LO where the first probe had it not);
 * X->FROM: the fewest rows from which ABOVE was at every probe up to HI
 * (HI where the last had it not); the rows between run the defaults,
 * which won there, or a probe between had another best. Returns 0, or
 * -1 with X->ERROR where a probe failed or O->STOP was set. */
#define TUNE_MAX_PROBES 16
#define TUNE_CROSS_CONFIGS 3 /* below's best, above's, the defaults */
enum tune_winner { TUNE_BELOW, TUNE_ABOVE, TUNE_DEFAULTS };
struct tune_probe {
    long rows;
    double below_us, above_us, defaults_us;
    int codes;              /* distinct codes timed (1 to 3) */
    enum tune_winner winner;
};
struct tune_crossover {
    long upto, from;
    int n;
    struct tune_probe probe[TUNE_MAX_PROBES];
    char error[256];
};
int tune_crossover(const struct rt *rt, struct naive_stubs *naive,
                   const struct kernel_spec *ks, const struct tune_options *o,
                   const char *below, const char *above, long lo, long hi,
                   struct tune_crossover *x);

/* KS's entry at ROWS on RT's device (and driver) in DB, or NULL. */
struct tune_entry *tune_find_entry(struct tunedb *db, const struct rt *rt,
                                   const struct kernel_spec *ks, long rows);

/* Seconds on a monotonic clock, for elapsed times. */
double tune_clock_s(void);

/* ---- specl tune --------------------------------------------------------- */

/* The most row counts of one `specl tune --rows` ladder. */
#define TUNE_MAX_LADDER 16

/* Reads TEXT, a row count or a comma-separated list of them ("1,8,32"),
 * into ROWS (room for TUNE_MAX_LADDER), ascending and without repeats:
 * returns how many, or -1 with what is wrong in WHY (an empty item, one
 * that is not a whole number, one outside [1, TUNE_MAX_ROWS], more than
 * TUNE_MAX_LADDER). */
int tune_rows_parse(const char *text, long *rows, char *why,
                    size_t why_size);

/* `specl tune ARGS...` (ARGV without the program and command names):
 * prints as the command does and returns its exit status. */
int specl_tune_main(int argc, char **argv);

#endif
