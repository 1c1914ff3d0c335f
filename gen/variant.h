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

struct variant_set {
    int n;
    struct variant v[SPECL_MAX_VARIANTS];
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
 * in every variant; a kernel that gives them all has one variant. Writes
 * a line per entry used or skipped, and why, to NOTES (may be NULL). */
void variants_build(const struct kernel_spec *ks, const struct tunedb *db,
                    const char *device, struct variant_set *vs,
                    struct buf *notes);

/* Prints each line of NOTES to OUT as "specl: note: LINE". */
void variants_print_notes(const struct buf *notes, FILE *out);

#endif
