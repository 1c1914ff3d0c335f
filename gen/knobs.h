/* knobs.h - where a kernel's knobs come from, in one place: overrides
 * (the spec's `tile:`, a tuning-database entry, a tuner candidate), then
 * the op's defaults for the device class, then the op's checks; and the
 * one text form of knob sets ("m=64 n=128 xa=prepass"). */
#ifndef SPECL_KNOBS_H
#define SPECL_KNOBS_H

#include <stddef.h>

#include "op.h"

/* Resolves KS's knobs: those marked set stay as they are; every other
 * knob gets the op's default and then the op's shape- and
 * ks->target-aware choice (op->defaults); then op->validate checks the
 * whole. Problems are reported through D (see struct diags: they may be
 * printed, or only kept as data). Returns the number of problems. */
int knobs_resolve(struct kernel_spec *ks, struct diags *d);

/* The size of a knob text (knobs_text): every knob of an op, as the
 * tuning database keeps it. */
#define TUNE_TEXT 512

/* Writes every knob of KS as "key=value" separated by spaces, values as
 * a spec writes them ("m=64 xa=prepass"). */
void knobs_text(const struct kernel_spec *ks, char *out, size_t size);

/* Reads TEXT (as knobs_text writes it; any subset of the op's knobs,
 * each once) into KS as overrides (marked set). Returns 0, or -1 with KS unchanged and
 * the reason in WHY (when not NULL). */
int knobs_parse(struct kernel_spec *ks, const char *text, char *why,
                size_t why_size);

/* A kernel of OP with its fields from OP->example (the others at their
 * defaults) and its knobs resolved for TARGET, as a spec that gives no
 * knob gets them. Returns 0, or -1 when the example does not parse or
 * validate. */
int knobs_example(const struct op_def *op, enum target target,
                  struct kernel_spec *out);

/* Reads VAL as a spec writes a value of DEF ("64", "true", "prepass")
 * into *NUM (a choice as its index); -1 when it is not one within DEF's
 * limits. */
int knobs_parse_value(const struct param_def *def, const char *val,
                      double *num);

/* The value of KEY in a "key=value key=value" TEXT, copied into VALUE;
 * returns 0, or -1 when KEY is absent. */
int knobs_text_value(const char *text, const char *key, char *value,
                     size_t size);

#endif
