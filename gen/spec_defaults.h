/* spec_defaults.h - a spec's `defaults:` (spec_defaults.c): dtype, and
 * any field of an op, which each kernel whose op has that field takes
 * unless it gives the field itself. A part of the spec reader, for
 * spec*.c only. */
#ifndef SPECL_SPEC_DEFAULTS_H
#define SPECL_SPEC_DEFAULTS_H

#include "spec_node.h"

/* Reads the defaults: mapping N: its dtype into R->dtype, the mapping
 * into R->defaults for spec_apply_defaults. Reports a key that is
 * neither dtype nor a field of some op (listing what is), and fields
 * that exclude one another (alpha and scale) given together. */
void spec_read_defaults(struct reader *r, struct ref n);

/* Gives kernel KS (its own keys read) the defaults its op has as fields
 * and it leaves out; a group of fields (rope's scaling) goes whole, to a
 * kernel that gives none of its members. Bit I of *FROM is set for each
 * field I so given. A default whose value does not fit KS's op is
 * reported at the default, with a note naming the kernel: for the first
 * kernel of each op only (the others would repeat it). Returns 1, or 0
 * when some default did not fit. */
int spec_apply_defaults(struct reader *r, struct kernel_spec *ks,
                        unsigned long long *from);

/* While KS is checked (knobs_resolve), an error at the place of a field
 * that FROM says came from defaults (spec_apply_defaults' bits) is
 * followed by a note naming the kernel: spec_defaults_watch installs that
 * on R->d (set KS and FROM), spec_defaults_quiet puts back what R->d did
 * before. CTX must outlive the check. */
struct defaults_note {
    const struct kernel_spec *ks;
    unsigned long long from;
    void (*then)(struct diags *d, const char *file, struct mark at,
                 void *ctx);
    void *then_ctx;
};
void spec_defaults_watch(struct reader *r, struct defaults_note *ctx);
void spec_defaults_quiet(struct reader *r, const struct defaults_note *ctx);

#endif
