/* tunedb_internal.h - what the parts of the tuning database share; only
 * tunedb*.c include it. tunedb.c holds the entries and merges them,
 * tunedb_check.c checks an entry's values, tunedb_load.c reads a file,
 * tunedb_save.c writes one, tunedb_pick.c finds the knobs for a kernel. */
#ifndef SPECL_TUNEDB_INTERNAL_H
#define SPECL_TUNEDB_INTERNAL_H

#include <stddef.h>

#include "tunedb.h"

/* P grown to hold NEED elements of SIZE bytes (*CAP doubled from 8 until
 * it does); *CAP set. Out of memory ends the run. */
void *tunedb_grow(void *p, int *cap, int need, size_t size);

/* SRC's record copied into E (replacing one with the same knobs). */
void tune_entry_copy_record(struct tune_entry *e,
                            const struct tune_record *src);

/* ---- an entry's values, as the loader checks them (tunedb_check.c) ------ */

/* Whether TEXT reads as knobs of OP (knobs_parse: any of its knobs, each
 * with a value within its limits); else the reason in WHY. */
int tunedb_knobs_fit(const struct op_def *op, const char *text, char *why,
                     size_t size);

/* Whether TEXT is a shape of OP as tune_shape_text writes it (every int
 * and bool field once, in the op's order, values within their limits)
 * that a spec could give, with the knobs OP's defaults choose for DTYPE
 * and TARGET: entries are found by their shape's text. Else the reason in
 * WHY. */
int tunedb_shape_fits(const struct op_def *op, enum dtype dtype,
                      enum target target, const char *text, char *why,
                      size_t size);

/* Whether TEXT is a code hash as the tuner writes it: 16 hex digits. */
int tunedb_code_hash_text(const char *text);

/* Whether STATUS is one the tuner writes for a config timed in US (-1:
 * it did not run). Else what is wrong in WHY. */
int tunedb_status_fits(const char *status, double us, char *why,
                       size_t size);

/* Bounds of the counts an entry keeps: re-timed runs (as tune --reps),
 * configs of a space. */
#define TUNEDB_MAX_REPS 1000
#define TUNEDB_MAX_CONFIGS 10000000L

/* Whether an entry's search keys agree: SEARCHED <= CANDIDATES, COMPLETE
 * "true" exactly when it searched them all, and STOPPED ("" when not
 * given) one of the tuner's reasons exactly when it did not. Else what
 * is wrong in WHY. */
int tunedb_search_fits(long searched, long candidates, const char *complete,
                       const char *stopped, char *why, size_t size);

/* Whether TEXT names a dtype (f32, f16, bf16); its value in *DTYPE. */
int tunedb_dtype_from_text(const char *text, enum dtype *dtype);

/* The names of every op, for a message. */
void tunedb_known_ops(char *out, size_t size);

#endif
