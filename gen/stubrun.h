/* stubrun.h - runs an emitted NAME.c through its public API: the stub is
 * compiled to a shared object and loaded, so that `specl bench`, `specl
 * tune` and the test suites launch exactly the code users vendor. */
#ifndef SPECL_STUBRUN_H
#define SPECL_STUBRUN_H

#include "runtime.h"
#include "variant.h"

/* A loaded NAME.c with a handle from NAME_create on one device. */
struct stub {
    int variant;       /* the variant NAME_create built */
    struct plan plan;  /* that variant's */
    int n_plans;       /* every variant's plan, by index (the rows ranges
                          of a device tuned at several row counts run
                          others than VARIANT) */
    struct plan *plans;
    void *dl;          /* the shared object */
    void *handle;      /* the stub's NAME * */
    /* NAME_enqueue_array, NAME_scratch_bytes_array, NAME_path_index */
    cl_int (*fn_enqueue)(const void *k, cl_command_queue q,
                         const size_t *sizes, const cl_mem *buffers,
                         cl_mem scratch, cl_uint n_wait, const cl_event *wait,
                         cl_event *done);
    size_t (*fn_scratch_bytes)(const size_t *sizes);
    int (*fn_path_index)(const void *k, const size_t *sizes);
    /* NAME_variant_at, which only a stub of rows ranges has; else NULL */
    int (*fn_variant_at)(const void *k, const size_t *sizes);
    void (*fn_destroy)(void *k);
    double compile_s;  /* stub_load's seconds emitting and compiling
                          NAME.c, and in NAME_create (the program's
                          build) */
    double create_s;
    cl_mem scratch;    /* caller-owned scratch, grown on demand */
    size_t scratch_size;
    cl_context ctx;
};

/* Emits the NAME.c and NAME.h of the kernel of VS (emit_kernel) into a
 * fresh temporary directory, compiles them to a shared object with
 * $SPECL_CC (else $CC, else cc) and $SPECL_STUB_CFLAGS, loads it and calls
 * NAME_create for RT's device (VARIANT < 0: the stub picks the variant;
 * else NAME_create_variant with that one).
 * The directory is removed before returning. Returns CL_SUCCESS; or an
 * OpenCL error (NAME_create's, or CL_INVALID_PROGRAM when the stub cannot
 * be emitted, compiled or loaded) with a message (the compiler's output or
 * NAME_build_log) in *LOG when LOG is not NULL (caller frees). */
cl_int stub_load(struct stub *s, const struct rt *rt,
                 const struct variant_set *vs, int variant, char **log);

/* As stub_load for KS's naive kernels: the stub NAME_naive of emit_naive,
 * which takes the buffers of NAME in the same order. */
cl_int stub_load_naive(struct stub *s, const struct rt *rt,
                       const struct kernel_spec *ks, char **log);

/* The variant S runs at the runtime sizes SIZES: its rows range's on a
 * device tuned at several row counts (NAME_variant_at), else the one
 * NAME_create built; -1 for sizes an enqueue would refuse. */
int stub_variant_at(const struct stub *s, const size_t *sizes);

/* The launches S runs at the runtime sizes SIZES (the path of the
 * variant stub_variant_at gives, as NAME_path_index picks it); NULL for
 * sizes an enqueue would refuse. */
const struct path *stub_path(const struct stub *s, const size_t *sizes);

/* NAME_enqueue_array(handle, Q, SIZES, BUFFERS, scratch, N_WAIT, WAIT,
 * DONE) with a scratch buffer S owns (created or grown for SIZES when the
 * stub needs one). SIZES and BUFFERS are in the op's and plan's order. */
cl_int stub_enqueue(struct stub *s, cl_command_queue q, const size_t *sizes,
                    const cl_mem *buffers, cl_uint n_wait,
                    const cl_event *wait, cl_event *done);

/* NAME_enqueue_array as the user calls it, SCRATCH given (or NULL). */
cl_int stub_enqueue_scratch(const struct stub *s, cl_command_queue q,
                            const size_t *sizes, const cl_mem *buffers,
                            cl_mem scratch, cl_uint n_wait,
                            const cl_event *wait, cl_event *done);

/* Destroys the handle, releases the scratch and unloads; S may be unset
 * (all zero). */
void stub_unload(struct stub *s);

#endif
