/* variant.h - the knob sets one kernel's NAME.c carries, and which devices
 * NAME_create gives each of them to.
 *
 * A program that runs on whichever device is present needs the kernel
 * built for that device: `specl gen` puts the GPU defaults, the CPU
 * defaults and every tuning-database entry for the kernel's shape into
 * one NAME.c, and NAME_create picks among them (templates/stub.c.in). */
#ifndef SPECL_VARIANT_H
#define SPECL_VARIANT_H

#include <stdint.h>
#include <stdio.h>

#include "buf.h"
#include "op.h"

struct tunedb;

#define SPECL_DEVICE_NAME_MAX 256
#define SPECL_DRIVER_MAX 128

/* Devices a variant is meant for: one named as CL_DEVICE_NAME reads (and
 * measured with driver CL_DRIVER_VERSION), or, with an empty device,
 * every CPU (cpu set) or every device that offers the capabilities CAPS
 * (caps.h; 0: every device), as a target's defaults are meant for
 * (target_devices). */
struct variant_match {
    char device[SPECL_DEVICE_NAME_MAX];
    char driver[SPECL_DRIVER_MAX];
    int cpu;
    unsigned caps;
};

/* One knob set: KS with its knobs resolved, why it is there, and the
 * devices NAME_create gives it to first. */
struct variant {
    struct kernel_spec ks;
    uint64_t code_hash; /* kernel_code_hash of ks (variants_build) */
    char label[640];
    int n_match;
    struct variant_match match[SPECL_MAX_VARIANTS + 2];
};

/* Calls of up to MAX_ROWS rows (the first runtime size; 0: any more)
 * on the device DEVICE (as CL_DEVICE_NAME reads; empty: every CPU) run
 * variant VARIANT. A device's ranges are in ascending order, its last of
 * max_rows 0, and extend the variant of its last: a handle that runs
 * another takes none. A device tuned at several row counts (`specl tune
 * --rows 1,8,32`) has a range per row count, or per run of row counts
 * whose bests emit the same code; every CPU has those of the CPU
 * defaults for few rows (op_def's cpu_few_rows) and past them, where a
 * CPU has none of its own. */
struct variant_range {
    char device[SPECL_DEVICE_NAME_MAX];
    long max_rows;
    int variant;
    char tuned[96];   /* the row counts it was tuned at: "8, 32"; empty
                         for every CPU's */
};

#define SPECL_MAX_RANGES 32 /* of one NAME.c, every device's */

struct variant_set {
    int n;
    struct variant v[SPECL_MAX_VARIANTS];
    int n_range;
    struct variant_range range[SPECL_MAX_RANGES];
};

/* KS alone, for every device: what `--target`, `bench` of one config and
 * `tune` emit. */
void variants_one(const struct kernel_spec *ks, struct variant_set *vs);

/* The variants `specl gen` emits for KS (knobs resolved as read): the op
 * defaults for GPUs (the variant every device falls back to), those for
 * CPUs, those of each target of capabilities (tensor cores, wgmma) where
 * they differ from the variants before, then
 * DB's entry for KS's shape from each device it holds (DEVICE: that
 * device only; DB may be NULL). Variants that emit the same
 * code are one variant with the devices of both. Knobs the spec gives stay
 * in every variant; a kernel that gives them all has one variant. Where
 * the device's exact entries (its driver's) are at several row counts,
 * the one of the most rows is its variant as above, and each row count
 * gets its best as a variant too, with the rows ranges that run them
 * (VS's range; ladder_ranges). Last, where the spec gives no knob, the
 * CPU defaults for few rows (op_def's cpu_few_rows), with every CPU's
 * rows ranges that run them. Writes a line per entry used or skipped,
 * and why, and why there is no variant for few rows where the op has
 * them, to NOTES (may be NULL). */
void variants_build(const struct kernel_spec *ks, const struct tunedb *db,
                    const char *device, struct variant_set *vs,
                    struct buf *notes);

/* KS with its op's CPU defaults for few rows (op_def's cpu_few_rows) for
 * TARGET_CPU, as the defaults choose them (no knob marked the spec's),
 * into OUT: 1. 0 where the op has none for KS's shape, or where they do
 * not validate; then WHY (SIZE bytes) says which, or is empty. */
int cpu_few_rows_spec(const struct kernel_spec *ks, struct kernel_spec *out,
                      char *why, size_t size);

/* KS as its NAME.c runs it at ROWS rows on a CPU without a tuning
 * database: where KS is for the CPU target, gives no knob and ROWS is up
 * to its op's CPU rows for few rows, those defaults (in ROOM); else KS. */
const struct kernel_spec *cpu_defaults_at(const struct kernel_spec *ks,
                                          long rows,
                                          struct kernel_spec *room);

/* The ranges of the N row counts ROWS (ascending) of one device's
 * ladder: into MAX_ROWS[i], the most rows row count I serves (0 for the
 * last: any more). A row count serves the rows nearer to it than to its
 * neighbours in log scale, up to floor(sqrt(ROWS[i] * ROWS[i + 1])). */
void ladder_ranges(const long *rows, int n, long *max_rows);

/* "rows A to B" (or "rows A and more") of VS's range R into OUT: its
 * first row, the one after the range before of its device (or of every
 * CPU). */
void range_rows_text(const struct variant_set *vs, int r, char *out,
                     size_t size);

/* Prints each line of NOTES to OUT as "specl: note: LINE". */
void variants_print_notes(const struct buf *notes, FILE *out);

#endif
