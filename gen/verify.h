/* verify.h - random inputs, float64 references, naive kernels and error
 * measures: what the tests, the benchmark and the tuner check with. */
#ifndef SPECL_VERIFY_H
#define SPECL_VERIFY_H

#include <stdint.h>

#include "op.h"
#include "runtime.h"
#include "stubrun.h"

/* Host copies of one case's buffers (in plan order), as float values that
 * the storage dtype represents exactly, plus room for the outputs. Arrays
 * of "all outputs" hold each output's values in plan order, output i at
 * out_at[i]. */
struct vcase {
    const struct kernel_spec *ks;
    struct plan plan;
    size_t sizes[SPECL_MAX_SIZES];    /* the runtime sizes, op order */
    size_t rows;                      /* sizes[0] */
    unsigned long seed;
    int out;                          /* the last output buffer */
    int n_out;                        /* outputs, in plan order */
    int outs[SPECL_MAX_BUFFERS];
    size_t out_count;                 /* elements of all outputs */
    size_t out_at[SPECL_MAX_BUFFERS];
    size_t count[SPECL_MAX_BUFFERS];  /* elements */
    float *host[SPECL_MAX_BUFFERS];   /* NULL for unused buffers */
};

/* How inputs are drawn: uniform in [offset - spread, offset + spread]. */
struct vdist {
    double offset;
    double spread;
};

/* Fills C for KS at the runtime sizes SIZES from SEED (x drawn from DIST,
 * the other inputs from [-1, 1] or the op's input_range). Returns 0, -1
 * when out of memory or a buffer would pass SIZE_MAX elements. */
int vcase_init_sizes(struct vcase *c, const struct kernel_spec *ks,
                     const size_t *sizes, unsigned long seed,
                     struct vdist dist);
/* vcase_init_sizes at ROWS rows (the first size), the op's bench sizes
 * for the others. */
int vcase_init(struct vcase *c, const struct kernel_spec *ks, size_t rows,
               unsigned long seed, struct vdist dist);
void vcase_free(struct vcase *c);

/* The float64 reference of C's outputs (out_count doubles, caller frees;
 * the op's reference); NULL when out of memory. */
double *vcase_reference(const struct vcase *c);
/* The op's reference of the outputs i whose OUT[i] is not NULL. Returns
 * 0, or -1 when out of memory. */
int vcase_reference_into(const struct vcase *c, double *const *out);

/* The worst of ||got - ref|| / ||ref|| over C's outputs, GOT and REF
 * holding all outputs; its buffer index in *WORST when not NULL. */
double vcase_error(const struct vcase *c, const float *got,
                   const double *ref, int *worst);

/* Device buffers for a case: inputs uploaded in the storage dtype, each
 * output poisoned with NaN (or holding its initial contents, BUFFER_INOUT)
 * and followed by a canary region. */
struct vbuffers {
    cl_mem mem[SPECL_MAX_BUFFERS];
    size_t canary;                    /* canary elements after outputs */
};

cl_int vbuffers_create(const struct rt *rt, const struct vcase *c,
                       struct vbuffers *b);
/* Re-uploads the outputs' initial contents (poison, or the host copy when
 * the kernels read it: BUFFER_INOUT) and the canaries. */
cl_int vbuffers_reset_output(const struct rt *rt, const struct vcase *c,
                             const struct vbuffers *b);
/* Reads all outputs back as floats into OUT (out_count values); returns
 * CL_SUCCESS, or CL_INVALID_VALUE with *CANARY_OK 0 if a canary changed. */
cl_int vbuffers_read_output(const struct rt *rt, const struct vcase *c,
                            const struct vbuffers *b, float *out,
                            int *canary_ok);
void vbuffers_free(struct vbuffers *b);

/* The naive kernels of the kernels checked on one device: each kernel's
 * naive stub (stub_load_naive), kept for the kernels after it whose naive
 * code is the same (one op, shape and dtype, whatever the knobs). */
#define NAIVE_KEEP 8

struct naive_stubs {
    struct naive_stub_entry {
        uint64_t hash;        /* naive_code_hash */
        unsigned long used;   /* when last asked for */
        struct stub stub;     /* loaded when stub.dl is not NULL */
    } entry[NAIVE_KEEP];
    unsigned long clock;
};

void naive_init(struct naive_stubs *n);
void naive_free(struct naive_stubs *n);

/* KS's naive stub on RT's device (the same RT every call for one N): one
 * loaded before when its code is the same, else loaded now in place of
 * the one asked for least recently. Returns NULL with an OpenCL error in
 * *ERR when it cannot be emitted, compiled, loaded or built, and then a
 * message in *LOG when LOG is not NULL (caller frees). The stub stays
 * loaded until NAIVE_KEEP others have been asked for since, or
 * naive_free. */
struct stub *naive_stub(struct naive_stubs *n, const struct rt *rt,
                        const struct kernel_spec *ks, cl_int *err,
                        char **log);

/* ||got - ref|| / ||ref||; +inf when GOT holds a NaN or an infinity that
 * REF does not hold there too (one both hold counts as exact). */
double rel_l2(const float *got, const double *ref, size_t n);

/* The largest relative L2 error accepted for KS (the op's error_bound). */
double error_bound(const struct kernel_spec *ks);

#endif
