/* spec.h - reads YAML op spec files into validated kernel specs. */
#ifndef SPECL_SPEC_H
#define SPECL_SPEC_H

#include <stddef.h>

#include "diag.h"
#include <stdint.h>

#include "op.h"
#include "spec_names.h"

struct spec_names;

/* The kernels of one or more spec files, read in order. */
struct spec_set {
    int n_kernel;
    int cap;
    struct kernel_spec *kernel; /* owned; free with spec_set_free */
    struct spec_names *names;   /* index of the kernels' names (owned;
                                   rebuilt when it does not cover them) */
};

void spec_set_init(struct spec_set *s);
void spec_set_free(struct spec_set *s);

/* What messages call the spec read from standard input. */
#define SPEC_STDIN_NAME "<stdin>"

/* Reads the spec file at PATH ("-": standard input, to its end; named
 * SPEC_STDIN_NAME) and appends its kernels to S. Every problem
 * is reported through D (all of them, in file order); returns the number of
 * errors found in this file. Kernel names must be unique across S, also
 * ignoring case, and must not clash: kernels P and P_S are refused when
 * P_S, or a symbol P_S emits, is one of P's (P_create, P_RANK, P_naive;
 * see host_api in spec.c). Time and memory are linear in the file's size.
 * PATH must outlive S (kernels point at it for messages). */
int spec_read_file(struct spec_set *s, const char *path, struct diags *d);

/* The same for a spec held in memory; PATH names it in messages. */
int spec_read_buffer(struct spec_set *s, const char *path,
                     const unsigned char *data, size_t len, struct diags *d);

/* Re-derives the knobs each kernel of S leaves out for devices of kind
 * TARGET (the op defaults; a spec's own knobs stay) and checks the result
 * through D; returns the number of errors. Reading assumes TARGET_GPU. */
int spec_set_target(struct spec_set *s, enum target target, struct diags *d);

/* True when kernels A and B differ in nothing but their names: the same
 * op, dtype and target, and every field and knob the same (given or
 * chosen), so that they emit the same code. */
int spec_kernels_alike(const struct kernel_spec *a,
                       const struct kernel_spec *b);

/* A hash of what spec_kernels_alike compares: equal for kernels alike,
 * so that finding them takes a sort, not a comparison of every pair. */
uint64_t spec_kernel_key(const struct kernel_spec *ks);

/* True if NAME is a valid C identifier and not a C keyword. */
int spec_is_identifier(const char *name);

#endif
