/* test_stub.c - the host-stub contract, through the stubs emitted for
 * tests/stubs.yaml (built by tests.mk into build/tests/stubs) on the
 * default OpenCL device: argument checks that enqueue nothing, optional w,
 * outputs the caller may pass as NULL (dgamma, dbeta), wait lists and the done event (also on an out-of-order queue), a queue,
 * buffers, scratch and events of another context refused, create's NULL
 * context and device, the context a handle holds, results against the
 * float64 reference, every CPU's rows range (a variant per range of
 * rows, one that fails to build passed over), a failed build with its
 * log, and the vendoring example (examples/vendor) built and run on its
 * own. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "spec.h"
#include "stub_broken.h"
#include "stub_fallback.h"
#include "stub_in_place.h"
#include "stub_layernorm.h"
#include "stub_lora.h"
#include "stub_lora_backward.h"
#include "stub_lora_backward_out_in.h"
#include "stub_lora_out_in.h"
#include "stub_lora_rows.h"
#include "stub_lora_delta.h"
#include "stub_lora_split.h"
#include "stub_lora_tc.h"
#include "stub_rmsnorm.h"
#include "stub_rope.h"
#include "stub_rows_broken.h"
#include "stub_top_broken.h"
#include "stub_swiglu_backward.h"
#include "stub_add_rmsnorm.h"
#include "stub_layernorm_backward.h"
#include "stub_rmsnorm_backward.h"
#include "stub_cross_entropy.h"
#include "stub_attention.h"
#include "stub_softmax.h"
#include "stub_softmax_coop.h"
#include "stub_xent_shared.h"
#include "suites.h"
#include "testutil.h"
#include "verify.h"

#define STUB_SPEC "tests/stubs.yaml"
#define SEED 20240611UL /* every case's seed is SEED + rows */
#define CHECK_ROWS 5    /* rows of the argument-check cases */

/* ---- one calling convention for every stub ----------------------------- */

typedef cl_int (*enqueue_fn)(const void *k, cl_command_queue q, size_t rows,
                             const cl_mem *b, cl_uint n_wait,
                             const cl_event *wait, cl_event *done);
typedef cl_int (*enqueue_scratch_fn)(const void *k, cl_command_queue q,
                                     size_t rows, const cl_mem *b,
                                     cl_mem scratch, cl_uint n_wait,
                                     const cl_event *wait, cl_event *done);

struct stub_api {
    const char *name; /* kernel name in tests/stubs.yaml */
    cl_int (*create)(cl_context ctx, cl_device_id dev, void **out);
    cl_int (*create_variant)(cl_context ctx, cl_device_id dev, int v,
                             void **out);
    int (*variant)(const void *k);
    int n_variants;
    enqueue_fn enqueue;
    enqueue_scratch_fn enqueue_scratch;
    size_t (*scratch_bytes)(size_t rows);
    cl_int (*enqueue_array)(const void *k, cl_command_queue q,
                            const size_t *sizes, const cl_mem *b,
                            cl_mem scratch, cl_uint n_wait,
                            const cl_event *wait, cl_event *done);
    size_t (*scratch_bytes_array)(const size_t *sizes);
    int (*path_index)(const void *k, const size_t *sizes);
    int n_sizes, n_buffers;
    const char *(*build_log)(const void *k);
    void (*destroy)(void *k);
};

#define ADAPT(N)                                                             \
    static cl_int N##_create_(cl_context ctx, cl_device_id dev, void **out)  \
    {                                                                        \
        N *k = NULL;                                                         \
        cl_int err = N##_create(ctx, dev, &k);                               \
        *out = k;                                                            \
        return err;                                                          \
    }                                                                        \
    static cl_int N##_create_variant_(cl_context ctx, cl_device_id dev,     \
                                      int v, void **out)                    \
    {                                                                        \
        N *k = NULL;                                                         \
        cl_int err = N##_create_variant(ctx, dev, v, &k);                    \
        *out = k;                                                            \
        return err;                                                          \
    }                                                                        \
    static int N##_variant_(const void *k)                                   \
    {                                                                        \
        return N##_variant((const N *)k);                                    \
    }                                                                        \
    static const char *N##_log_(const void *k)                               \
    {                                                                        \
        return N##_build_log((const N *)k);                                  \
    }                                                                        \
    static void N##_destroy_(void *k)                                        \
    {                                                                        \
        N##_destroy((N *)k);                                                 \
    }                                                                        \
    static cl_int N##_enqueue_array_(                                        \
        const void *k, cl_command_queue q, const size_t *sizes,              \
        const cl_mem *b, cl_mem scratch, cl_uint n_wait,                     \
        const cl_event *wait, cl_event *done)                                \
    {                                                                        \
        return N##_enqueue_array((const N *)k, q, sizes, b, scratch, n_wait, \
                                 wait, done);                                \
    }                                                                        \
    static int N##_path_index_(const void *k, const size_t *sizes)           \
    {                                                                        \
        return N##_path_index((const N *)k, sizes);                          \
    }

#define ADAPT_ENQUEUE(N, ...)                                                \
    static cl_int N##_enqueue_(const void *k, cl_command_queue q,            \
                               size_t rows, const cl_mem *b, cl_uint n_wait, \
                               const cl_event *wait, cl_event *done)         \
    {                                                                        \
        return N##_enqueue((const N *)k, q, rows, __VA_ARGS__, n_wait, wait, \
                           done);                                            \
    }                                                                        \
    static cl_int N##_enqueue_scratch_(                                      \
        const void *k, cl_command_queue q, size_t rows, const cl_mem *b,     \
        cl_mem scratch, cl_uint n_wait, const cl_event *wait, cl_event *done) \
    {                                                                        \
        return N##_enqueue_scratch((const N *)k, q, rows, __VA_ARGS__,       \
                                   scratch, n_wait, wait, done);             \
    }

#define STUB(N)                                                              \
    {#N,                  N##_create_,          N##_create_variant_,         \
     N##_variant_,        N##_N_VARIANTS,       N##_enqueue_,                \
     N##_enqueue_scratch_, N##_scratch_bytes,   N##_enqueue_array_,          \
     N##_scratch_bytes_array, N##_path_index_,  N##_N_SIZES,                 \
     N##_N_BUFFERS,       N##_log_,             N##_destroy_}

ADAPT(stub_lora)
ADAPT(stub_lora_rows)
ADAPT(stub_lora_delta)
ADAPT(stub_lora_tc)
ADAPT(stub_softmax)
ADAPT(stub_rmsnorm)
ADAPT(stub_layernorm)
ADAPT(stub_lora_backward)
ADAPT(stub_lora_out_in)
ADAPT(stub_lora_backward_out_in)
ADAPT(stub_swiglu_backward)
ADAPT(stub_add_rmsnorm)
ADAPT(stub_rope)
ADAPT(stub_rmsnorm_backward)
ADAPT(stub_layernorm_backward)
ADAPT(stub_cross_entropy)
ADAPT(stub_xent_shared)
ADAPT_ENQUEUE(stub_lora, b[0], b[1], b[2], b[3], b[4])
ADAPT_ENQUEUE(stub_lora_rows, b[0], b[1], b[2], b[3], b[4])
ADAPT_ENQUEUE(stub_lora_delta, b[0], b[1], b[2], b[3], b[4])
ADAPT_ENQUEUE(stub_lora_tc, b[0], b[1], b[2], b[3], b[4])
ADAPT_ENQUEUE(stub_softmax, b[0], b[1])
ADAPT_ENQUEUE(stub_rmsnorm, b[0], b[1], b[2])
ADAPT_ENQUEUE(stub_layernorm, b[0], b[1], b[2], b[3])
ADAPT_ENQUEUE(stub_lora_backward, b[0], b[1], b[2], b[3], b[4], b[5], b[6],
              b[7])
ADAPT_ENQUEUE(stub_lora_out_in, b[0], b[1], b[2], b[3], b[4])
ADAPT_ENQUEUE(stub_lora_backward_out_in, b[0], b[1], b[2], b[3], b[4], b[5],
              b[6], b[7])
ADAPT_ENQUEUE(stub_swiglu_backward, b[0], b[1], b[2], b[3], b[4])
ADAPT_ENQUEUE(stub_add_rmsnorm, b[0], b[1], b[2], b[3], b[4])
ADAPT_ENQUEUE(stub_rope, b[0], b[1], b[2])
ADAPT_ENQUEUE(stub_rmsnorm_backward, b[0], b[1], b[2], b[3], b[4])
ADAPT_ENQUEUE(stub_layernorm_backward, b[0], b[1], b[2], b[3], b[4], b[5])
ADAPT_ENQUEUE(stub_cross_entropy, b[0], b[1], b[2], b[3])
ADAPT_ENQUEUE(stub_xent_shared, b[0], b[1], b[2], b[3])
/* stub_attention: the rows are the batch; seq_q and seq_kv as its
 * bench_sizes gives them (op_attention.c: heads * head_dim, at least 16),
 * which the cases of vcase_init hold. */
#define ATTN_SEQ 16
ADAPT(stub_attention)
static cl_int stub_attention_enqueue_(const void *k, cl_command_queue q,
                                      size_t rows, const cl_mem *b,
                                      cl_uint n_wait, const cl_event *wait,
                                      cl_event *done)
{
    return stub_attention_enqueue((const stub_attention *)k, q, rows,
                                  ATTN_SEQ, ATTN_SEQ, b[0], b[1], b[2], b[3],
                                  b[4], n_wait, wait, done);
}
static cl_int stub_attention_enqueue_scratch_(
    const void *k, cl_command_queue q, size_t rows, const cl_mem *b,
    cl_mem scratch, cl_uint n_wait, const cl_event *wait, cl_event *done)
{
    return stub_attention_enqueue_scratch((const stub_attention *)k, q, rows,
                                          ATTN_SEQ, ATTN_SEQ, b[0], b[1],
                                          b[2], b[3], b[4], scratch, n_wait,
                                          wait, done);
}
static size_t stub_attention_scratch_bytes_(size_t rows)
{
    return stub_attention_scratch_bytes(rows, ATTN_SEQ, ATTN_SEQ);
}

static const struct stub_api stubs[] = {
    STUB(stub_lora),    STUB(stub_lora_delta), STUB(stub_softmax),
    STUB(stub_rmsnorm), STUB(stub_layernorm),  STUB(stub_lora_tc),
    STUB(stub_lora_backward), STUB(stub_swiglu_backward),
    STUB(stub_add_rmsnorm), STUB(stub_rope), STUB(stub_rmsnorm_backward),
    STUB(stub_layernorm_backward), STUB(stub_cross_entropy),
    STUB(stub_lora_out_in), STUB(stub_lora_backward_out_in),
    {"stub_attention", stub_attention_create_, stub_attention_create_variant_,
     stub_attention_variant_, stub_attention_N_VARIANTS,
     stub_attention_enqueue_, stub_attention_enqueue_scratch_,
     stub_attention_scratch_bytes_, stub_attention_enqueue_array_,
     stub_attention_scratch_bytes_array, stub_attention_path_index_,
     stub_attention_N_SIZES, stub_attention_N_BUFFERS, stub_attention_log_,
     stub_attention_destroy_},
    STUB(stub_lora_rows), STUB(stub_xent_shared),
};
#define N_STUBS ((int)(sizeof stubs / sizeof stubs[0]))

/* ---- suite state ------------------------------------------------------- */

static struct rt rt;
static int rt_ok;
static struct spec_set specs;
static const struct kernel_spec *spec_of[N_STUBS];
static void *handle[N_STUBS];

static int setup(void)
{
    char err[256];
    struct diags d = {.out = stderr};
    spec_set_init(&specs);
    if (spec_read_file(&specs, STUB_SPEC, &d) != 0) {
        return 1;
    }
    for (int i = 0; i < N_STUBS; i++) {
        for (int k = 0; k < specs.n_kernel; k++) {
            if (strcmp(specs.kernel[k].name, stubs[i].name) == 0) {
                spec_of[i] = &specs.kernel[k];
            }
        }
        if (spec_of[i] == NULL) {
            fprintf(stderr, "%s: no kernel %s\n", STUB_SPEC, stubs[i].name);
            return 1;
        }
    }
    if (rt_open(&rt, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "stub suite: no OpenCL device: %s\n", err);
        return 1;
    }
    rt_ok = 1;
    for (int i = 0; i < N_STUBS; i++) {
        cl_int e = stubs[i].create(rt.ctx, rt.device, &handle[i]);
        if (e != CL_SUCCESS) {
            fprintf(stderr, "%s_create: %s\n%s\n", stubs[i].name,
                    rt_status(e),
                    handle[i] ? stubs[i].build_log(handle[i]) : "");
            return 1;
        }
    }
    return 0;
}

static int cleanup(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        stubs[i].destroy(handle[i]);
        handle[i] = NULL;
    }
    if (rt_ok) {
        rt_close(&rt);
        rt_ok = 0;
    }
    spec_set_free(&specs);
    return 0;
}

/* ---- helpers ----------------------------------------------------------- */

/* A case of stub I over ROWS rows with device buffers; 0 on success. */
static int make_case(int i, size_t rows, struct vcase *c, struct vbuffers *b)
{
    struct vdist dist = {0.0, 1.0};
    if (vcase_init(c, spec_of[i], rows, SEED + rows, dist) != 0) {
        return -1;
    }
    cl_int err = vbuffers_create(&rt, c, b);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "\n    %s: vbuffers_create: %s\n", stubs[i].name,
                rt_status(err));
        vcase_free(c);
        return -1;
    }
    return 0;
}

static void free_case(struct vcase *c, struct vbuffers *b)
{
    vbuffers_free(b);
    vcase_free(c);
}

/* The bytes of BUF, read through Q, a queue of its context (caller
 * frees); NULL on failure. */
static unsigned char *snapshot_on(cl_command_queue q, cl_mem buf,
                                  size_t *size)
{
    *size = 0;
    if (clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof *size, size, NULL) !=
        CL_SUCCESS) {
        return NULL;
    }
    unsigned char *p = malloc(*size);
    if (p != NULL && clEnqueueReadBuffer(q, buf, CL_TRUE, 0, *size, p, 0,
                                         NULL, NULL) != CL_SUCCESS) {
        free(p);
        p = NULL;
    }
    return p;
}

static unsigned char *snapshot(cl_mem buf, size_t *size)
{
    return snapshot_on(rt.queue, buf, size);
}

/* Compares stub I's output for case C with the float64 reference. */
static void check_result(int i, const struct vcase *c,
                         const struct vbuffers *b, const char *how)
{
    float *got = malloc((c->out_count + 1) * sizeof *got);
    double *ref = vcase_reference(c);
    int canary_ok = 0;
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
    cl_int err = vbuffers_read_output(&rt, c, b, got, &canary_ok);
    TU_CHECK(err == CL_SUCCESS && canary_ok,
             "%s (%s, rows %zu, seed %lu): read %s, canary %s",
             stubs[i].name, how, c->rows, c->seed, rt_status(err),
             canary_ok ? "intact" : "overwritten");
    double e = vcase_error(c, got, ref, NULL);
    double bound = error_bound(c->ks);
    TU_CHECK(e < bound,
             "%s (%s, rows %zu, seed %lu): relative L2 error %.3g >= %.3g",
             stubs[i].name, how, c->rows, c->seed, e, bound);
    free(got);
    free(ref);
}

/* Calls stub I through handle K on queue Q with buffers BUFS (by
 * NAME_enqueue when SCRATCH is NULL, else by NAME_enqueue_scratch with
 * *SCRATCH), expecting WANT and nothing enqueued: the buffer WATCH (read
 * through WATCH_Q, a queue of its context) is unchanged after clFinish
 * and DONE untouched. */
static void expect_refused_call(int i, const void *k, cl_command_queue q,
                                size_t rows, const cl_mem *bufs,
                                const cl_mem *scratch, cl_uint n_wait,
                                const cl_event *wait, cl_mem watch,
                                cl_command_queue watch_q, cl_int want,
                                const char *what)
{
    static int sentinel;
    cl_event done = (cl_event)(void *)&sentinel;
    size_t n0 = 0, n1 = 0;
    unsigned char *before = snapshot_on(watch_q, watch, &n0);
    cl_int err = scratch == NULL
                     ? stubs[i].enqueue(k, q, rows, bufs, n_wait, wait, &done)
                     : stubs[i].enqueue_scratch(k, q, rows, bufs, *scratch,
                                                n_wait, wait, &done);
    TU_CHECK(err == want, "%s, %s: returned %s, expected %s", stubs[i].name,
             what, rt_status(err), rt_status(want));
    TU_CHECK(done == (cl_event)(void *)&sentinel,
             "%s, %s: done was set on failure", stubs[i].name, what);
    clFinish(q);
    clFinish(watch_q);
    unsigned char *after = snapshot_on(watch_q, watch, &n1);
    TU_CHECK(before != NULL && after != NULL && n0 == n1 &&
                 memcmp(before, after, n0) == 0,
             "%s, %s: the output changed: something was enqueued",
             stubs[i].name, what);
    if (err == CL_SUCCESS && done != (cl_event)(void *)&sentinel) {
        clReleaseEvent(done);
    }
    free(before);
    free(after);
}

/* expect_refused_call through NAME_enqueue on the suite's handle. */
static void expect_refused_on(int i, cl_command_queue q, size_t rows,
                              const cl_mem *bufs, cl_uint n_wait,
                              const cl_event *wait, cl_mem watch,
                              cl_command_queue watch_q, cl_int want,
                              const char *what)
{
    expect_refused_call(i, handle[i], q, rows, bufs, NULL, n_wait, wait,
                        watch, watch_q, want, what);
}

/* expect_refused_on, on the suite's queue. */
static void expect_refused(int i, size_t rows, const cl_mem *bufs,
                           cl_uint n_wait, const cl_event *wait, cl_mem watch,
                           cl_int want, const char *what)
{
    expect_refused_on(i, rt.queue, rows, bufs, n_wait, wait, watch,
                      rt.queue, want, what);
}

/* ---- tests ------------------------------------------------------------- */

static void test_results(void)
{
    /* 1 and 5 take lora's decode path, 37 the tiled one (partial groups). */
    static const size_t rows[] = {1, 5, 37};
    for (int i = 0; i < N_STUBS; i++) {
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            struct vcase c;
            struct vbuffers b;
            if (make_case(i, rows[r], &c, &b) != 0) {
                CU_FAIL("cannot make a case");
                continue;
            }
            cl_event done = NULL;
            cl_int err = stubs[i].enqueue(handle[i], rt.queue, rows[r], b.mem,
                                          0, NULL, &done);
            TU_CHECK(err == CL_SUCCESS && done != NULL,
                     "%s rows %zu: enqueue %s", stubs[i].name, rows[r],
                     rt_status(err));
            if (done != NULL) {
                cl_int st = -1;
                CU_ASSERT_EQUAL(clWaitForEvents(1, &done), CL_SUCCESS);
                clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS,
                               sizeof st, &st, NULL);
                TU_CHECK(st == CL_COMPLETE, "%s: done status %d after wait",
                         stubs[i].name, (int)st);
                clReleaseEvent(done);
            }
            check_result(i, &c, &b, "done event");
            /* Without done, on an in-order queue, clFinish is enough. */
            CU_ASSERT_EQUAL(vbuffers_reset_output(&rt, &c, &b), CL_SUCCESS);
            err = stubs[i].enqueue(handle[i], rt.queue, rows[r], b.mem, 0,
                                   NULL, NULL);
            CU_ASSERT_EQUAL(err, CL_SUCCESS);
            clFinish(rt.queue);
            check_result(i, &c, &b, "no done event");
            free_case(&c, &b);
        }
    }
}

/* Threads sharing one built program, each through its own NAME_clone and
 * queue, many calls each on inputs of their own: every result matches
 * float64 (kernel arguments set on a shared handle would race). */
#define THREADS 4
#define CALLS 12

struct thread_run {
    int stub;               /* index in stubs[] */
    const void *parent;     /* the handle to clone */
    const struct vbuffers *b;
    size_t rows;
    cl_int err;
};

static cl_int clone_of(int i, const void *parent, void **out)
{
    if (i == 0) {
        return stub_lora_clone(parent, (stub_lora **)out);
    }
    return stub_rmsnorm_clone(parent, (stub_rmsnorm **)out);
}

static void *thread_main(void *arg)
{
    struct thread_run *t = arg;
    void *mine = NULL;
    cl_command_queue q = clCreateCommandQueue(rt.ctx, rt.device, 0, &t->err);
    if (t->err == CL_SUCCESS) {
        t->err = clone_of(t->stub, t->parent, &mine);
    }
    for (int n = 0; n < CALLS && t->err == CL_SUCCESS; n++) {
        t->err = stubs[t->stub].enqueue(mine, q, t->rows, t->b->mem, 0, NULL,
                                        NULL);
    }
    if (t->err == CL_SUCCESS) {
        t->err = clFinish(q);
    }
    if (mine != NULL) {
        stubs[t->stub].destroy(mine);
    }
    if (q != NULL) {
        clReleaseCommandQueue(q);
    }
    return NULL;
}

static void test_threads(void)
{
    static const int which[] = {0, 3}; /* stub_lora, stub_rmsnorm */
    for (size_t w = 0; w < sizeof which / sizeof which[0]; w++) {
        int i = which[w];
        struct vcase c[THREADS];
        struct vbuffers b[THREADS];
        struct thread_run run[THREADS];
        pthread_t tid[THREADS];
        int made = 0;
        for (; made < THREADS; made++) {
            /* different rows and inputs per thread: 37, 38, ... */
            if (make_case(i, 37 + (size_t)made, &c[made], &b[made]) != 0) {
                break;
            }
            run[made] = (struct thread_run){i, handle[i], &b[made],
                                            37 + (size_t)made, CL_SUCCESS};
        }
        CU_ASSERT_EQUAL(made, THREADS);
        int started = 0;
        for (; started < made; started++) {
            if (pthread_create(&tid[started], NULL, thread_main,
                               &run[started]) != 0) {
                break;
            }
        }
        CU_ASSERT_EQUAL(started, made);
        for (int t = 0; t < started; t++) {
            pthread_join(tid[t], NULL);
            TU_CHECK(run[t].err == CL_SUCCESS, "%s thread %d: %s",
                     stubs[i].name, t, rt_status(run[t].err));
            check_result(i, &c[t], &b[t], "own clone per thread");
        }
        for (int t = 0; t < made; t++) {
            free_case(&c[t], &b[t]);
        }
    }
    /* A clone of a failed build is refused; NULL arguments too. */
    stub_broken *broken = NULL;
    stub_broken *copy = NULL;
    cl_int err = stub_broken_create(rt.ctx, rt.device, &broken);
    CU_ASSERT_NOT_EQUAL(err, CL_SUCCESS);
    CU_ASSERT_EQUAL(stub_broken_clone(broken, &copy),
                    CL_INVALID_PROGRAM_EXECUTABLE);
    CU_ASSERT_PTR_NULL(copy);
    CU_ASSERT_EQUAL(stub_broken_clone(NULL, &copy), CL_INVALID_VALUE);
    CU_ASSERT_EQUAL(stub_softmax_clone(handle[2], NULL), CL_INVALID_VALUE);
    stub_broken_destroy(broken);
}

/* NAME_scratch_bytes(rows) serves every call of up to ROWS rows: it
 * never shrinks as rows grow, though each path counts its own scratch,
 * and stub_lora_split's last split band (to 1024 rows) needs more than
 * its tiled path past it; a buffer sized for 1025 rows runs 1024. */
static void test_scratch_for_fewer_rows(void)
{
    for (size_t r = 1; r < 1100; r++) {
        TU_CHECK(stub_lora_split_scratch_bytes(r + 1) >=
                         stub_lora_split_scratch_bytes(r) &&
                     stub_lora_scratch_bytes(r + 1) >=
                         stub_lora_scratch_bytes(r) &&
                     stub_lora_delta_scratch_bytes(r + 1) >=
                         stub_lora_delta_scratch_bytes(r),
                 "scratch_bytes shrinks from %zu to %zu rows", r, r + 1);
    }
    /* More rows than any buffer could serve: SIZE_MAX, not a small size */
    TU_CHECK(stub_lora_split_scratch_bytes(SIZE_MAX / 2) == SIZE_MAX &&
                 stub_softmax_scratch_bytes(SIZE_MAX / 2) == 0,
             "scratch_bytes(SIZE_MAX / 2) = %zu (stub_lora_split), %zu "
             "(stub_softmax)", stub_lora_split_scratch_bytes(SIZE_MAX / 2),
             stub_softmax_scratch_bytes(SIZE_MAX / 2));
    const size_t rows = 1024;
    size_t need = stub_lora_split_scratch_bytes(rows + 1);
    TU_CHECK(need >= rows * stub_lora_split_OUT_FEATURES * sizeof(float),
             "stub_lora_split_scratch_bytes(%zu) = %zu: no room for the "
             "split band's partial sums at %zu rows", rows + 1, need, rows);
    size_t sizes[] = {rows * stub_lora_split_IN_FEATURES,
                      stub_lora_split_IN_FEATURES * stub_lora_split_OUT_FEATURES,
                      stub_lora_split_IN_FEATURES * stub_lora_split_RANK,
                      stub_lora_split_RANK * stub_lora_split_OUT_FEATURES,
                      rows * stub_lora_split_OUT_FEATURES};
    cl_mem mem[5] = {NULL};
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < 5 && err == CL_SUCCESS; i++) {
        mem[i] = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE,
                                sizes[i] * sizeof(float), NULL, &err);
        if (err == CL_SUCCESS) {
            float zero = 0.0f;
            err = clEnqueueFillBuffer(rt.queue, mem[i], &zero, sizeof zero, 0,
                                      sizes[i] * sizeof(float), 0, NULL, NULL);
        }
    }
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    cl_mem scratch = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE, need, NULL,
                                    &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    /* both variants: the GPU one's last band and the CPU one's */
    for (int v = 0; v < 2; v++) {
        stub_lora_split *k = NULL;
        CU_ASSERT_EQUAL_FATAL(
            stub_lora_split_create_variant(rt.ctx, rt.device, v, &k),
            CL_SUCCESS);
        err = stub_lora_split_enqueue_scratch(k, rt.queue, rows, mem[0],
                                              mem[1], mem[2], mem[3], mem[4],
                                              scratch, 0, NULL, NULL);
        TU_CHECK(err == CL_SUCCESS,
                 "variant %d at %zu rows with scratch_bytes(%zu): %s", v,
                 rows, rows + 1, rt_status(err));
        CU_ASSERT_EQUAL(clFinish(rt.queue), CL_SUCCESS);
        stub_lora_split_destroy(k);
    }
    clReleaseMemObject(scratch);
    for (int i = 0; i < 5; i++) {
        clReleaseMemObject(mem[i]);
    }
}

/* NAME_enqueue_scratch: lora_delta (a lora_xa prepass past 32 rows:
 * scratch needed) with one caller-owned buffer over two calls, a buffer one float short
 * refused with nothing enqueued; softmax (no scratch) ignores it. */
static void test_caller_scratch(void)
{
    enum { DELTA = 1, SOFTMAX = 2 };
    const size_t rows = 37;
    size_t need = stub_lora_delta_scratch_bytes(rows);
    /* T, or partial sums of it: at least r floats per row */
    TU_CHECK(need >= rows * stub_lora_delta_RANK * sizeof(float) &&
                 need % (rows * sizeof(float)) == 0 &&
                 stub_lora_delta_scratch_bytes(2 * rows) == 2 * need,
             "stub_lora_delta_scratch_bytes(%zu) = %zu", rows, need);
    /* Each path counts its own: up to 32 rows one launch needs none. */
    TU_CHECK(stub_lora_delta_scratch_bytes(1) == 0 &&
                 stub_lora_delta_scratch_bytes(32) == 0 &&
                 stub_lora_delta_scratch_bytes(33) > 0,
             "stub_lora_delta_scratch_bytes(1 / 32 / 33) = %zu / %zu / %zu",
             stub_lora_delta_scratch_bytes(1),
             stub_lora_delta_scratch_bytes(32),
             stub_lora_delta_scratch_bytes(33));
    TU_CHECK(stub_softmax_scratch_bytes(rows) == 0,
             "stub_softmax_scratch_bytes(%zu) = %zu", rows,
             stub_softmax_scratch_bytes(rows));
    cl_int err;
    cl_mem scratch = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE, need, NULL,
                                    &err);
    cl_mem short_one = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE,
                                      need - sizeof(float), NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(scratch);
    CU_ASSERT_PTR_NOT_NULL_FATAL(short_one);
    /* Variant 0 (the GPU defaults) runs the prepass at these rows, on any
     * device. */
    stub_lora_delta *delta = NULL;
    CU_ASSERT_EQUAL_FATAL(
        stub_lora_delta_create_variant(rt.ctx, rt.device, 0, &delta),
        CL_SUCCESS);
    for (int call = 0; call < 2; call++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(DELTA, rows, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            break;
        }
        err = stub_lora_delta_enqueue_scratch(delta, rt.queue, rows,
                                              b.mem[0], NULL, b.mem[2],
                                              b.mem[3], b.mem[4], scratch, 0,
                                              NULL, NULL);
        TU_CHECK(err == CL_SUCCESS, "enqueue_scratch call %d: %s", call,
                 rt_status(err));
        clFinish(rt.queue);
        check_result(DELTA, &c, &b, "caller's scratch");
        if (call == 1) {
            size_t n0 = 0, n1 = 0;
            unsigned char *before = snapshot(b.mem[4], &n0);
            err = stub_lora_delta_enqueue_scratch(
                delta, rt.queue, rows, b.mem[0], NULL, b.mem[2],
                b.mem[3], b.mem[4], short_one, 0, NULL, NULL);
            TU_CHECK(err == CL_INVALID_BUFFER_SIZE,
                     "scratch one float short: %s", rt_status(err));
            clFinish(rt.queue);
            unsigned char *after = snapshot(b.mem[4], &n1);
            TU_CHECK(before != NULL && after != NULL && n0 == n1 &&
                         memcmp(before, after, n0) == 0,
                     "scratch one float short: y changed");
            free(before);
            free(after);
        }
        free_case(&c, &b);
    }
    stub_lora_delta_destroy(delta);
    struct vcase c;
    struct vbuffers b;
    if (make_case(SOFTMAX, rows, &c, &b) == 0) {
        err = stub_softmax_enqueue_scratch(handle[SOFTMAX], rt.queue, rows,
                                           b.mem[0], b.mem[1], short_one, 0,
                                           NULL, NULL);
        TU_CHECK(err == CL_SUCCESS, "softmax with a scratch: %s",
                 rt_status(err));
        clFinish(rt.queue);
        check_result(SOFTMAX, &c, &b, "scratch ignored");
        free_case(&c, &b);
    }
    clReleaseMemObject(scratch);
    clReleaseMemObject(short_one);
}

static void test_rows_zero(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(i, CHECK_ROWS, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        expect_refused(i, 0, b.mem, 0, NULL, b.mem[c.out], CL_INVALID_VALUE,
                       "rows 0");
        if (sizeof(size_t) > sizeof(int)) {
            expect_refused(i, (size_t)INT_MAX + 1, b.mem, 0, NULL,
                           b.mem[c.out], CL_INVALID_VALUE, "rows > INT_MAX");
        }
        free_case(&c, &b);
    }
}

static void test_null_buffers(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(i, CHECK_ROWS, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        for (int k = 0; k < c.plan.n_buffer; k++) {
            if (c.plan.buffer[k].optional || c.plan.buffer[k].nullable) {
                continue; /* NULL taken: test_nullable_outputs */
            }
            cl_mem bufs[SPECL_MAX_BUFFERS];
            char what[64];
            memcpy(bufs, b.mem, sizeof bufs);
            bufs[k] = NULL;
            snprintf(what, sizeof what, "%s NULL", c.plan.buffer[k].name);
            cl_mem watch = k == c.out ? b.mem[0] : b.mem[c.out];
            expect_refused(i, CHECK_ROWS, bufs, 0, NULL, watch,
                           CL_INVALID_MEM_OBJECT, what);
        }
        free_case(&c, &b);
    }
}

static void test_small_buffers(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(i, CHECK_ROWS, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        for (int k = 0; k < c.plan.n_buffer; k++) {
            if (c.plan.buffer[k].optional || c.count[k] < 2) {
                continue; /* one element short of one: no buffer */
            }
            /* One element short, filled with a pattern. */
            size_t es = buffer_elem_size(&c.plan.buffer[k], c.ks->dtype);
            size_t bytes = (c.count[k] - 1) * es;
            cl_int err;
            cl_mem small = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE, bytes,
                                          NULL, &err);
            CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
            unsigned char *fill = malloc(bytes);
            CU_ASSERT_PTR_NOT_NULL_FATAL(fill);
            memset(fill, 0xa5, bytes);
            clEnqueueWriteBuffer(rt.queue, small, CL_TRUE, 0, bytes, fill, 0,
                                 NULL, NULL);
            free(fill);
            cl_mem bufs[SPECL_MAX_BUFFERS];
            char what[64];
            memcpy(bufs, b.mem, sizeof bufs);
            bufs[k] = small;
            snprintf(what, sizeof what, "%s one element short",
                     c.plan.buffer[k].name);
            expect_refused(i, CHECK_ROWS, bufs, 0, NULL,
                           k == c.out ? small : b.mem[c.out],
                           CL_INVALID_BUFFER_SIZE, what);
            clReleaseMemObject(small);
        }
        free_case(&c, &b);
    }
}

/* The array forms: the same results as NAME_enqueue, the same checks,
 * NULL arrays refused; NAME_scratch_bytes_array as NAME_scratch_bytes;
 * NAME_path_index in range and rising with rows, -1 where an enqueue
 * would refuse. */
static void test_array_entry(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        size_t rows = 37;
        if (make_case(i, rows, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        /* The case's sizes: rows, or attention's batch and its seq_q and
         * seq_kv (the rows first, as the calls of the table take them). */
        size_t sz[SPECL_MAX_SIZES], zero[SPECL_MAX_SIZES];
        memcpy(sz, c.sizes, sizeof sz);
        memcpy(zero, c.sizes, sizeof zero);
        zero[0] = 0;
        CU_ASSERT_EQUAL(stubs[i].n_sizes, op_n_sizes(c.ks->op));
        CU_ASSERT_EQUAL(stubs[i].n_buffers, c.plan.n_buffer);
        cl_event done = NULL;
        cl_int err = stubs[i].enqueue_array(handle[i], rt.queue, sz, b.mem,
                                            NULL, 0, NULL, &done);
        TU_CHECK(err == CL_SUCCESS && done != NULL,
                 "%s: enqueue_array %s", stubs[i].name, rt_status(err));
        if (done != NULL) {
            clWaitForEvents(1, &done);
            clReleaseEvent(done);
        }
        check_result(i, &c, &b, "enqueue_array");
        TU_CHECK(stubs[i].enqueue_array(handle[i], rt.queue, NULL, b.mem,
                                        NULL, 0, NULL, NULL) ==
                         CL_INVALID_VALUE &&
                     stubs[i].enqueue_array(handle[i], rt.queue, sz, NULL,
                                            NULL, 0, NULL, NULL) ==
                         CL_INVALID_VALUE &&
                     stubs[i].enqueue_array(handle[i], rt.queue, zero, b.mem,
                                            NULL, 0, NULL, NULL) ==
                         CL_INVALID_VALUE,
                 "%s: enqueue_array takes NULL arrays or 0 rows",
                 stubs[i].name);
        free_case(&c, &b);
        TU_CHECK(stubs[i].scratch_bytes_array(NULL) == 0,
                 "%s: scratch_bytes_array(NULL)", stubs[i].name);
        TU_CHECK(stubs[i].path_index(handle[i], NULL) == -1 &&
                     stubs[i].path_index(NULL, sz) == -1 &&
                     stubs[i].path_index(handle[i], zero) == -1,
                 "%s: path_index of a call enqueue refuses", stubs[i].name);
        int last = 0;
        for (size_t r = 1; r <= 5000; r += 1 + r / 8) {
            sz[0] = r;
            int p = stubs[i].path_index(handle[i], sz);
            TU_CHECK(p >= last && p < SPECL_MAX_PATHS,
                     "%s: path_index at %zu rows is %d (%d before)",
                     stubs[i].name, r, p, last);
            last = p >= 0 ? p : last;
            TU_CHECK(stubs[i].scratch_bytes_array(sz) ==
                         stubs[i].scratch_bytes(r),
                     "%s: scratch_bytes_array at %zu rows", stubs[i].name, r);
        }
    }
}

/* ---- buffers that share memory ----------------------------------------- */

/* Bytes of buffer K of case C that a call of C's rows uses. */
static size_t used_bytes(const struct vcase *c, int k)
{
    return c->count[k] * buffer_elem_size(&c->plan.buffer[k], c->ks->dtype);
}

/* Whether the kernels write buffer K of case C. */
static int written(const struct vcase *c, int k)
{
    return c->plan.buffer[k].role != BUFFER_IN;
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* The alignment the device asks of a sub-buffer's origin, in bytes. */
static size_t origin_align(void)
{
    cl_uint bits = 0;
    clGetDeviceInfo(rt.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits,
                    &bits, NULL);
    return bits >= 8 ? bits / 8 : 1;
}

/* The last origin of a sub-buffer within the first N bytes of its parent:
 * a sub-buffer there overlaps them. */
static size_t last_origin_within(size_t n)
{
    return (n - 1) / origin_align() * origin_align();
}

/* A buffer of at least SIZE bytes holding 0.5 in DT throughout: finite,
 * so that kernels wrongly run on it leave other bits there (NaN poison
 * read by accumulating kernels may come out the same). NULL on failure. */
static cl_mem halves(size_t size, enum dtype dt)
{
    static const float f32 = 0.5f;
    static const unsigned short f16 = 0x3800, bf16 = 0x3f00;
    const void *half = dt == DTYPE_F32   ? (const void *)&f32
                       : dt == DTYPE_F16 ? (const void *)&f16
                                         : (const void *)&bf16;
    size_t es = dtype_size(dt);
    cl_int err;
    size = round_up(size, es);
    cl_mem m = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    if (err == CL_SUCCESS) {
        err = clEnqueueFillBuffer(rt.queue, m, half, es, 0, size, 0, NULL,
                                  NULL);
    }
    if (err == CL_SUCCESS) {
        err = clFinish(rt.queue);
    }
    if (err != CL_SUCCESS && m != NULL) {
        clReleaseMemObject(m);
        m = NULL;
    }
    return m;
}

/* SIZE bytes of PARENT from ORIGIN as a buffer of their own; NULL on
 * failure. */
static cl_mem sub_buffer(cl_mem parent, size_t origin, size_t size)
{
    cl_buffer_region region = {origin, size};
    cl_int err;
    cl_mem m = clCreateSubBuffer(parent, CL_MEM_READ_WRITE,
                                 CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    return err == CL_SUCCESS ? m : NULL;
}

/* An output that is another buffer of the call, an input or another
 * output (one cl_mem sized for both), is refused with CL_INVALID_VALUE and
 * nothing enqueued: the kernels declare their buffers restrict, and
 * lora_forward with y == x came out wrong in other rows on every run. */
static void test_alias_same_buffer(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(i, CHECK_ROWS, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        for (int o = 0; o < c.n_out; o++) {
            int k = c.outs[o];
            for (int j = 0; j < c.plan.n_buffer; j++) {
                const char *may = c.plan.buffer[k].may_alias;
                if (j == k || c.plan.buffer[j].optional ||
                    c.plan.buffer[k].optional ||
                    (may != NULL &&
                     strcmp(may, c.plan.buffer[j].name) == 0)) {
                    continue; /* in place: test_alias_in_place's */
                }
                size_t nk = used_bytes(&c, k), nj = used_bytes(&c, j);
                cl_mem shared = halves(nk > nj ? nk : nj, c.ks->dtype);
                CU_ASSERT_PTR_NOT_NULL_FATAL(shared);
                cl_mem bufs[SPECL_MAX_BUFFERS];
                char what[64];
                memcpy(bufs, b.mem, sizeof bufs);
                bufs[k] = bufs[j] = shared;
                snprintf(what, sizeof what, "%s is %s",
                         c.plan.buffer[k].name, c.plan.buffer[j].name);
                expect_refused(i, CHECK_ROWS, bufs, 0, NULL, shared,
                               CL_INVALID_VALUE, what);
                clReleaseMemObject(shared);
            }
        }
        free_case(&c, &b);
    }
}

/* Within one buffer: an output whose bytes in use overlap another
 * buffer's is refused the same way, as two sub-buffers of it (the
 * output's from 0, the other's from the last origin within the output's
 * bytes), through NAME_enqueue_scratch; and as the buffer itself with
 * that sub-buffer, through NAME_enqueue. */
static void test_alias_overlapping_sub_buffers(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(i, CHECK_ROWS, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        for (int o = 0; o < c.n_out; o++) {
            int k = c.outs[o];
            for (int j = 0; j < c.plan.n_buffer; j++) {
                if (j == k || c.plan.buffer[j].optional ||
                    c.plan.buffer[k].optional) {
                    continue;
                }
                size_t nk = used_bytes(&c, k), nj = used_bytes(&c, j);
                size_t at = last_origin_within(nk);
                cl_mem parent = halves(nk > at + nj ? nk : at + nj,
                                       c.ks->dtype);
                CU_ASSERT_PTR_NOT_NULL_FATAL(parent);
                cl_mem out = sub_buffer(parent, 0, nk);
                cl_mem other = sub_buffer(parent, at, nj);
                CU_ASSERT_PTR_NOT_NULL_FATAL(out);
                CU_ASSERT_PTR_NOT_NULL_FATAL(other);
                cl_mem bufs[SPECL_MAX_BUFFERS], no_scratch = NULL;
                char what[96];
                memcpy(bufs, b.mem, sizeof bufs);
                bufs[k] = out;
                bufs[j] = other;
                snprintf(what, sizeof what, "%s overlaps %s (sub-buffers "
                         "from 0 and %zu)", c.plan.buffer[k].name,
                         c.plan.buffer[j].name, at);
                expect_refused_call(i, handle[i], rt.queue, CHECK_ROWS, bufs,
                                    &no_scratch, 0, NULL, parent, rt.queue,
                                    CL_INVALID_VALUE, what);
                bufs[k] = parent;
                snprintf(what, sizeof what, "%s is the buffer of %s's "
                         "sub-buffer", c.plan.buffer[k].name,
                         c.plan.buffer[j].name);
                expect_refused(i, CHECK_ROWS, bufs, 0, NULL, parent,
                               CL_INVALID_VALUE, what);
                clReleaseMemObject(out);
                clReleaseMemObject(other);
                clReleaseMemObject(parent);
            }
        }
        free_case(&c, &b);
    }
}

/* Rows at which buffer 0 (x) and buffer FIRST of stub I both end at an
 * origin a sub-buffer may have (where both grow with rows): the buffer
 * after either may start at the byte where it ends. */
static size_t rows_aligned(int i, int first)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    spec_of[i]->op->plan(spec_of[i], &p);
    size_t rows = 1;
    size_t x_row = (size_t)p.buffer[0].per *
                   buffer_elem_size(&p.buffer[0], spec_of[i]->dtype);
    size_t first_row = (size_t)p.buffer[first].per *
                       buffer_elem_size(&p.buffer[first], spec_of[i]->dtype);
    while (rows * x_row % origin_align() != 0 ||
           rows * first_row % origin_align() != 0) {
        rows++;
    }
    return rows;
}

/* Sub-buffers of one buffer that do not overlap are taken, and the
 * results are right: every buffer of the call, each its bytes in use,
 * carved from one parent: the first output that grows with the rows, x
 * from the byte where it ends, the other outputs from the byte where x
 * ends, the other inputs;
 * then a scratch. Through NAME_enqueue, then NAME_enqueue_scratch. */
static void test_alias_disjoint_sub_buffers(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(i, 1, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        /* The first output that grows with the rows (cross_entropy's
         * loss of the mean is one float: none could end where x starts). */
        int first = c.outs[0];
        for (int o = c.n_out - 1; o >= 0; o--) {
            first = c.plan.buffer[c.outs[o]].per > 0 ? c.outs[o] : first;
        }
        free_case(&c, &b);
        size_t rows = rows_aligned(i, first);
        if (make_case(i, rows, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        int order[SPECL_MAX_BUFFERS], n = 0;
        order[n++] = first;
        order[n++] = 0;
        for (int o = 0; o < c.n_out; o++) {
            if (c.outs[o] != first) {
                order[n++] = c.outs[o];
            }
        }
        for (int k = 1; k < c.plan.n_buffer; k++) {
            if (!written(&c, k)) {
                order[n++] = k;
            }
        }
        size_t origin[SPECL_MAX_BUFFERS] = {0}, end = 0;
        for (int m = 0; m < n; m++) {
            if (b.mem[order[m]] != NULL) {
                origin[order[m]] = end;
                end = round_up(end + used_bytes(&c, order[m]),
                               origin_align());
            }
        }
        CU_ASSERT_EQUAL(origin[0], used_bytes(&c, first));
        size_t scratch_size = stubs[i].scratch_bytes(rows);
        scratch_size = scratch_size > 0 ? scratch_size : sizeof(float);
        cl_int err;
        cl_mem parent = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE,
                                       end + scratch_size, NULL, &err);
        CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
        struct vbuffers sub = b;
        sub.canary = 0; /* the neighbours show a write past the end */
        for (int k = 0; k < c.plan.n_buffer; k++) {
            if (b.mem[k] == NULL) {
                continue;
            }
            size_t size = used_bytes(&c, k);
            CU_ASSERT_EQUAL(clEnqueueCopyBuffer(rt.queue, b.mem[k], parent, 0,
                                                origin[k], size, 0, NULL,
                                                NULL),
                            CL_SUCCESS);
            sub.mem[k] = sub_buffer(parent, origin[k], size);
            CU_ASSERT_PTR_NOT_NULL_FATAL(sub.mem[k]);
        }
        cl_mem scratch = sub_buffer(parent, end, scratch_size);
        CU_ASSERT_PTR_NOT_NULL_FATAL(scratch);
        clFinish(rt.queue);
        err = stubs[i].enqueue(handle[i], rt.queue, rows, sub.mem, 0, NULL,
                               NULL);
        TU_CHECK(err == CL_SUCCESS, "%s, disjoint sub-buffers: %s",
                 stubs[i].name, rt_status(err));
        clFinish(rt.queue);
        check_result(i, &c, &sub, "disjoint sub-buffers");
        CU_ASSERT_EQUAL(vbuffers_reset_output(&rt, &c, &sub), CL_SUCCESS);
        err = stubs[i].enqueue_scratch(handle[i], rt.queue, rows, sub.mem,
                                       scratch, 0, NULL, NULL);
        TU_CHECK(err == CL_SUCCESS, "%s, disjoint sub-buffers and scratch: "
                 "%s", stubs[i].name, rt_status(err));
        clFinish(rt.queue);
        check_result(i, &c, &sub, "disjoint sub-buffers and scratch");
        for (int k = 0; k < c.plan.n_buffer; k++) {
            if (sub.mem[k] != NULL) {
                clReleaseMemObject(sub.mem[k]);
            }
        }
        clReleaseMemObject(scratch);
        clReleaseMemObject(parent);
        free_case(&c, &b);
    }
}

/* A scratch that is one of the buffers is refused, for every buffer of
 * every stub (also where the kernels need no scratch at these rows, as
 * they would at others); and one that overlaps y within one buffer where
 * they need it (lora_delta's variant 0 at 37 rows). */
static void test_alias_scratch(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(i, CHECK_ROWS, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        size_t need = stubs[i].scratch_bytes(CHECK_ROWS);
        for (int k = 0; k < c.plan.n_buffer; k++) {
            if (c.plan.buffer[k].optional) {
                continue;
            }
            size_t nk = used_bytes(&c, k);
            cl_mem shared = halves(nk > need ? nk : need, c.ks->dtype);
            CU_ASSERT_PTR_NOT_NULL_FATAL(shared);
            cl_mem bufs[SPECL_MAX_BUFFERS];
            char what[64];
            memcpy(bufs, b.mem, sizeof bufs);
            bufs[k] = shared;
            snprintf(what, sizeof what, "scratch is %s",
                     c.plan.buffer[k].name);
            expect_refused_call(i, handle[i], rt.queue, CHECK_ROWS, bufs,
                                &shared, 0, NULL,
                                written(&c, k) ? shared : b.mem[c.out],
                                rt.queue, CL_INVALID_VALUE, what);
            clReleaseMemObject(shared);
        }
        free_case(&c, &b);
    }
    enum { DELTA = 1, Y = 4 };
    const size_t rows = 37;
    stub_lora_delta *delta = NULL;
    CU_ASSERT_EQUAL_FATAL(
        stub_lora_delta_create_variant(rt.ctx, rt.device, 0, &delta),
        CL_SUCCESS);
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_EQUAL_FATAL(make_case(DELTA, rows, &c, &b), 0);
    size_t need = stub_lora_delta_scratch_bytes(rows);
    size_t ny = used_bytes(&c, Y), at = last_origin_within(ny);
    CU_ASSERT_FATAL(need > 0);
    cl_mem parent = halves(ny > at + need ? ny : at + need, c.ks->dtype);
    CU_ASSERT_PTR_NOT_NULL_FATAL(parent);
    cl_mem y = sub_buffer(parent, 0, ny);
    cl_mem scratch = sub_buffer(parent, at, need);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(scratch);
    cl_mem bufs[SPECL_MAX_BUFFERS];
    memcpy(bufs, b.mem, sizeof bufs);
    bufs[Y] = y;
    expect_refused_call(DELTA, delta, rt.queue, rows, bufs, &scratch, 0,
                        NULL, parent, rt.queue, CL_INVALID_VALUE,
                        "variant 0, scratch overlaps y (sub-buffers)");
    clReleaseMemObject(y);
    clReleaseMemObject(scratch);
    clReleaseMemObject(parent);
    free_case(&c, &b);
    stub_lora_delta_destroy(delta);
}

/* stub_in_place at ROWS rows with X, Y and SCRATCH returns
 * CL_INVALID_VALUE and enqueues nothing: WATCH keeps its bytes. */
static void expect_in_place_refused(stub_in_place *k, size_t rows, cl_mem x,
                                    cl_mem y, cl_mem scratch, cl_mem watch,
                                    const char *what)
{
    size_t n0 = 0, n1 = 0;
    unsigned char *before = snapshot(watch, &n0);
    cl_int err = stub_in_place_enqueue_scratch(k, rt.queue, rows, x, y,
                                               scratch, 0, NULL, NULL);
    TU_CHECK(err == CL_INVALID_VALUE, "stub_in_place, %s: returned %s",
             what, rt_status(err));
    clFinish(rt.queue);
    unsigned char *after = snapshot(watch, &n1);
    TU_CHECK(before != NULL && after != NULL && n0 == n1 &&
                 memcmp(before, after, n0) == 0,
             "stub_in_place, %s: something was enqueued", what);
    free(before);
    free(after);
}

/* An op may let an output be an input, in place (may_alias in its buffer
 * table, as add_rmsnorm's sum may be residual): stub_in_place is
 * stub_softmax whose table lets y be x. y == x, and sub-buffers of one buffer from the same
 * byte, are taken; y overlapping x from another byte, and a scratch that
 * is x, are refused. */
static void test_alias_in_place(void)
{
    size_t row = stub_in_place_FEATURES * sizeof(float);
    size_t rows = CHECK_ROWS + 2 * origin_align() / row;
    size_t bytes = rows * row, at = last_origin_within(bytes);
    CU_ASSERT_FATAL(at > 0);
    stub_in_place *k = NULL;
    CU_ASSERT_EQUAL_FATAL(stub_in_place_create(rt.ctx, rt.device, &k),
                          CL_SUCCESS);
    cl_mem parent = halves(at + bytes, DTYPE_F32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(parent);
    cl_mem x = sub_buffer(parent, 0, bytes);
    cl_mem y = sub_buffer(parent, 0, bytes);
    cl_mem later = sub_buffer(parent, at, bytes);
    CU_ASSERT_FATAL(x != NULL && y != NULL && later != NULL);
    cl_int err = stub_in_place_enqueue(k, rt.queue, rows, parent, parent, 0,
                                       NULL, NULL);
    TU_CHECK(err == CL_SUCCESS, "stub_in_place, y is x: %s", rt_status(err));
    err = stub_in_place_enqueue_scratch(k, rt.queue, rows, x, y, NULL, 0,
                                        NULL, NULL);
    TU_CHECK(err == CL_SUCCESS, "stub_in_place, y and x sub-buffers from "
             "the same byte: %s", rt_status(err));
    clFinish(rt.queue);
    expect_in_place_refused(k, rows, x, later, NULL, parent,
                            "y a sub-buffer from within x's bytes");
    expect_in_place_refused(k, rows, parent, later, NULL, parent,
                            "x the buffer, y a sub-buffer within its bytes");
    expect_in_place_refused(k, rows, parent, parent, parent, parent,
                            "y is x, the scratch too");
    clReleaseMemObject(x);
    clReleaseMemObject(y);
    clReleaseMemObject(later);
    clReleaseMemObject(parent);
    stub_in_place_destroy(k);
}

/* base: false takes w == NULL (and ignores whatever w is). */
static void test_optional_w(void)
{
    int i = 1;
    CU_ASSERT_STRING_EQUAL_FATAL(stubs[i].name, "stub_lora_delta");
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_EQUAL_FATAL(make_case(i, 9, &c, &b), 0);
    CU_ASSERT_TRUE(c.plan.buffer[1].optional);
    CU_ASSERT_PTR_NULL(b.mem[1]);
    cl_int err = stubs[i].enqueue(handle[i], rt.queue, 9, b.mem, 0, NULL,
                                  NULL);
    CU_ASSERT_EQUAL(err, CL_SUCCESS);
    clFinish(rt.queue);
    check_result(i, &c, &b, "w NULL");
    free_case(&c, &b);
}

/* The index in stubs[] of NAME. */
static int stub_index(const char *name)
{
    for (int i = 0; i < N_STUBS; i++) {
        if (strcmp(stubs[i].name, name) == 0) {
            return i;
        }
    }
    CU_FAIL_FATAL("no such stub");
    return -1;
}

/* Stub I with the nullable outputs of NULLS (bits: 1 << buffer) passed
 * as NULL, through NAME_enqueue_scratch with a scratch of one float: taken
 * exactly when every nullable output is NULL (the kernels then need
 * none, and the scratch is left as it was); else refused for its size,
 * nothing enqueued. Taken, the outputs given match float64 and those not
 * given are left as they were. */
static void check_nullable(int i, unsigned nulls, unsigned all)
{
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_EQUAL_FATAL(make_case(i, 37, &c, &b), 0);
    cl_mem bufs[SPECL_MAX_BUFFERS];
    memcpy(bufs, b.mem, sizeof bufs);
    for (int k = 0; k < c.plan.n_buffer; k++) {
        if (nulls & (1u << k)) {
            bufs[k] = NULL;
        }
    }
    cl_int err;
    float one = 42.0f, back = 0.0f;
    cl_mem tiny = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE |
                                 CL_MEM_COPY_HOST_PTR, sizeof one, &one,
                                 &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    if (nulls != all) {
        expect_refused_call(i, handle[i], rt.queue, 37, bufs, &tiny, 0, NULL,
                            b.mem[c.outs[0]], rt.queue,
                            CL_INVALID_BUFFER_SIZE,
                            "a nullable output given, scratch of one float");
        err = stubs[i].enqueue(handle[i], rt.queue, 37, bufs, 0, NULL, NULL);
    } else {
        err = stubs[i].enqueue_scratch(handle[i], rt.queue, 37, bufs, tiny,
                                       0, NULL, NULL);
    }
    TU_CHECK(err == CL_SUCCESS, "%s, NULL outputs 0x%x: %s", stubs[i].name,
             nulls, rt_status(err));
    clFinish(rt.queue);
    CU_ASSERT_EQUAL(clEnqueueReadBuffer(rt.queue, tiny, CL_TRUE, 0,
                                        sizeof back, &back, 0, NULL, NULL),
                    CL_SUCCESS);
    TU_CHECK(back == one, "%s: the scratch was written", stubs[i].name);
    float *got = malloc(c.out_count * sizeof *got);
    double *ref = vcase_reference(&c);
    int canary_ok = 0;
    CU_ASSERT_FATAL(got != NULL && ref != NULL);
    CU_ASSERT_EQUAL(vbuffers_read_output(&rt, &c, &b, got, &canary_ok),
                    CL_SUCCESS);
    for (int o = 0; o < c.n_out; o++) {
        int k = c.outs[o];
        const float *g = got + c.out_at[k];
        int kept = 1;
        for (size_t e = 0; (nulls & (1u << k)) && e < c.count[k]; e++) {
            kept &= c.plan.buffer[k].role == BUFFER_INOUT
                        ? g[e] == c.host[k][e]
                        : g[e] != g[e];
        }
        double e = rel_l2(g, ref + c.out_at[k], c.count[k]);
        TU_CHECK((nulls & (1u << k)) ? kept : e < error_bound(c.ks),
                 "%s, NULL outputs 0x%x: %s %s", stubs[i].name, nulls,
                 c.plan.buffer[k].name,
                 (nulls & (1u << k)) ? "written" : "wrong");
    }
    free(got);
    free(ref);
    clReleaseMemObject(tiny);
    free_case(&c, &b);
}

/* dgamma (and dbeta) may be NULL, alone or together: dx alone then,
 * with no scratch; the other buffers stay required (test_null_buffers). */
static void test_nullable_outputs(void)
{
    enum { DGAMMA = 1u << 4, DBETA = 1u << 5 };
    int rms = stub_index("stub_rmsnorm_backward");
    int ln = stub_index("stub_layernorm_backward");
    check_nullable(rms, DGAMMA, DGAMMA);
    check_nullable(ln, DGAMMA, DGAMMA | DBETA);
    check_nullable(ln, DBETA, DGAMMA | DBETA);
    check_nullable(ln, DGAMMA | DBETA, DGAMMA | DBETA);
}

/* cross_entropy's dlogits may be logits: the call takes the logits
 * buffer twice and leaves the gradient there, as float64 says; dlogits
 * a sub-buffer from within the logits' bytes is refused. */
static void test_xent_in_place(void)
{
    enum { LOGITS, LABELS, LOSS, DLOGITS };
    int i = stub_index("stub_cross_entropy");
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_FATAL(make_case(i, 37, &c, &b) == 0);
    size_t bytes = c.count[LOGITS] * dtype_size(c.ks->dtype);
    cl_mem bufs[SPECL_MAX_BUFFERS];
    memcpy(bufs, b.mem, sizeof bufs);
    bufs[DLOGITS] = bufs[LOGITS];
    cl_int err = stubs[i].enqueue(handle[i], rt.queue, 37, bufs, 0, NULL,
                                  NULL);
    TU_CHECK(err == CL_SUCCESS, "dlogits is logits: %s", rt_status(err));
    CU_ASSERT(clEnqueueCopyBuffer(rt.queue, b.mem[LOGITS], b.mem[DLOGITS], 0,
                                  0, bytes, 0, NULL, NULL) == CL_SUCCESS);
    clFinish(rt.queue);
    check_result(i, &c, &b, "dlogits is logits");
    size_t at = last_origin_within(bytes);
    cl_mem parent = halves(at + bytes, c.ks->dtype);
    CU_ASSERT_FATAL(parent != NULL && at > 0);
    cl_mem later = sub_buffer(parent, at, bytes);
    CU_ASSERT_FATAL(later != NULL);
    bufs[LOGITS] = parent;
    bufs[DLOGITS] = later;
    expect_refused(i, 37, bufs, 0, NULL, parent, CL_INVALID_VALUE,
                   "dlogits within the logits' bytes");
    clReleaseMemObject(later);
    clReleaseMemObject(parent);
    free_case(&c, &b);
}

static void test_wait_list_checks(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(i, CHECK_ROWS, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        cl_int err;
        cl_event user = clCreateUserEvent(rt.ctx, &err);
        CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
        /* Complete, so that a wrongly enqueued kernel would run (and show)
         * instead of blocking clFinish. */
        clSetUserEventStatus(user, CL_COMPLETE);
        expect_refused(i, CHECK_ROWS, b.mem, 1, NULL, b.mem[c.out],
                       CL_INVALID_EVENT_WAIT_LIST, "n_wait 1, wait NULL");
        expect_refused(i, CHECK_ROWS, b.mem, 0, &user, b.mem[c.out],
                       CL_INVALID_EVENT_WAIT_LIST, "n_wait 0, wait set");
        clReleaseEvent(user);
        free_case(&c, &b);
    }
}

/* On an out-of-order queue, every stub waits for its wait list (a user
 * event held back), chains its own launches, and signals done last. */
static void test_out_of_order(void)
{
    cl_command_queue_properties props = 0;
    clGetDeviceInfo(rt.device, CL_DEVICE_QUEUE_PROPERTIES, sizeof props,
                    &props, NULL);
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(
        rt.ctx, rt.device, props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    static const size_t rows[] = {3, 37};
    for (int i = 0; i < N_STUBS; i++) {
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            struct vcase c;
            struct vbuffers b;
            if (make_case(i, rows[r], &c, &b) != 0) {
                CU_FAIL("cannot make a case");
                continue;
            }
            cl_event gate = clCreateUserEvent(rt.ctx, &err);
            CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
            cl_event done = NULL;
            err = stubs[i].enqueue(handle[i], q, rows[r], b.mem, 1, &gate,
                                   &done);
            TU_CHECK(err == CL_SUCCESS && done != NULL,
                     "%s rows %zu on an out-of-order queue: %s",
                     stubs[i].name, rows[r], rt_status(err));
            clFlush(q);
            struct timespec pause = {0, 2000000}; /* 2 ms to (not) run */
            nanosleep(&pause, NULL);
            cl_int st = CL_COMPLETE;
            if (done != NULL) {
                clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS,
                               sizeof st, &st, NULL);
            }
            TU_CHECK(st != CL_COMPLETE && st != CL_RUNNING,
                     "%s: ran before its wait list completed (status %d)",
                     stubs[i].name, (int)st);
            clSetUserEventStatus(gate, CL_COMPLETE);
            if (done != NULL) {
                CU_ASSERT_EQUAL(clWaitForEvents(1, &done), CL_SUCCESS);
                clReleaseEvent(done);
            }
            clReleaseEvent(gate);
            clFinish(q);
            check_result(i, &c, &b, "out-of-order queue");
            free_case(&c, &b);
        }
    }
    clReleaseCommandQueue(q);
}

/* Runs handle H of stub I over ROWS rows and checks the result. */
static void run_checked(int i, const void *h, size_t rows, const char *how)
{
    struct vcase c;
    struct vbuffers b;
    if (make_case(i, rows, &c, &b) != 0) {
        CU_FAIL("cannot make a case");
        return;
    }
    cl_int err = stubs[i].enqueue(h, rt.queue, rows, b.mem, 0, NULL, NULL);
    TU_CHECK(err == CL_SUCCESS, "%s (%s) rows %zu: enqueue %s",
             stubs[i].name, how, rows, rt_status(err));
    clFinish(rt.queue);
    check_result(i, &c, &b, how);
    free_case(&c, &b);
}

/* The variant of stub I meant for TARGET's devices as specl gen emits
 * it, or -1 where TARGET's defaults are those of a variant before. specl
 * gen emits the GPU, CPU, tensor-core and compute capability 9.0
 * defaults in that order, each only where it differs from those before:
 * the tensor cores' in stub_lora_tc and stub_lora_delta (and bf16
 * converted in PTX in the half-precision row ops), wgmma's in
 * stub_lora_tc. */
static int target_variant(int i, enum target target)
{
    const struct variant_set *vs = tu_gen_variants(spec_of[i]);
    int cpu;
    unsigned caps;
    target_devices(target, &cpu, &caps);
    for (int v = 0; v < vs->n; v++) {
        for (int m = 0; m < vs->v[v].n_match; m++) {
            const struct variant_match *vm = &vs->v[v].match[m];
            if (!vm->device[0] && vm->cpu == cpu && vm->caps == caps) {
                return v;
            }
        }
    }
    return -1;
}

/* The variant of stub I for NVIDIA tensor-core devices, or -1. */
static int tensor_variant(int i)
{
    return target_variant(i, TARGET_TENSOR);
}

/* The variant of stub I for NVIDIA devices of compute capability 9.0
 * (wgmma), or -1. */
static int sm90a_variant(int i)
{
    return target_variant(i, TARGET_SM90A);
}

/* Whether this device offers every capability TARGET's defaults may
 * use. */
static int device_offers(enum target target)
{
    return caps_lacking(target_caps(target), rt.caps.have) == 0;
}

/* What variant V of stub I needs of a device, as its plan says. */
static unsigned variant_needs(int i, int v)
{
    const struct variant_set *vs = tu_gen_variants(spec_of[i]);
    struct plan p;
    memset(&p, 0, sizeof p);
    CU_ASSERT_FATAL(v < vs->n);
    vs->v[v].ks.op->plan(&vs->v[v].ks, &p);
    return p.needs;
}

/* Whether LOG says that a variant needs each capability of LACKING: as
 * "needs NAME: what it is", several joined by "; ". */
static int log_names_lacking(const char *log, unsigned lacking)
{
    int ok = strstr(log, "needs ") != NULL;
    for (int r = 0; cap_rule(r) != NULL; r++) {
        char named[64];
        snprintf(named, sizeof named, "%s: ", cap_rule(r)->name);
        ok &= !(lacking & cap_rule(r)->bit) || strstr(log, named) != NULL;
    }
    return ok;
}

/* Every variant of every stub builds on this device when asked for by
 * index and computes the float64 result, but for one whose plan needs a
 * capability the device lacks (tensor cores, wgmma), which is refused
 * with a log that names what it lacks; indices out of range are
 * refused. */
static void test_every_variant(void)
{
    /* 400: past the rows lora_mma keeps from lora_wgmma (384) */
    static const size_t rows[] = {1, 5, 37, 130, 400};
    int many = 0;
    for (int i = 0; i < N_STUBS; i++) {
        many |= stubs[i].n_variants > 1;
        TU_CHECK(tensor_variant(i) < stubs[i].n_variants,
                 "%s: %d variants, no tensor-core one", stubs[i].name,
                 stubs[i].n_variants);
        TU_CHECK(sm90a_variant(i) < stubs[i].n_variants,
                 "%s: %d variants, no wgmma one", stubs[i].name,
                 stubs[i].n_variants);
        for (int v = 0; v < stubs[i].n_variants; v++) {
            void *h = NULL;
            char how[32];
            snprintf(how, sizeof how, "variant %d", v);
            cl_int err = stubs[i].create_variant(rt.ctx, rt.device, v, &h);
            unsigned lacking = caps_lacking(variant_needs(i, v),
                                            rt.caps.have);
            /* The tensor-core variants need what they are meant for. */
            TU_CHECK((v != tensor_variant(i) && v != sm90a_variant(i)) ||
                         variant_needs(i, v) != 0,
                     "%s: variant %d needs nothing", stubs[i].name, v);
            if (lacking != 0) {
                TU_CHECK(err == CL_BUILD_PROGRAM_FAILURE && h != NULL &&
                             log_names_lacking(stubs[i].build_log(h),
                                               lacking),
                         "%s: variant %d on %s, which lacks 0x%x: %s\n%s",
                         stubs[i].name, v, rt.name, lacking, rt_status(err),
                         h ? stubs[i].build_log(h) : "");
                stubs[i].destroy(h);
                continue;
            }
            TU_CHECK(err == CL_SUCCESS && stubs[i].variant(h) == v,
                     "%s: create_variant(%d): %s, variant %d\n%s",
                     stubs[i].name, v, rt_status(err),
                     h ? stubs[i].variant(h) : -1,
                     h ? stubs[i].build_log(h) : "");
            for (size_t r = 0; err == CL_SUCCESS && r < 5; r++) {
                run_checked(i, h, rows[r], how);
            }
            stubs[i].destroy(h);
        }
        for (int v = -1; v <= stubs[i].n_variants; v += stubs[i].n_variants
                                                        + 1) {
            void *h = &rt;
            TU_CHECK(stubs[i].create_variant(rt.ctx, rt.device, v, &h) ==
                             CL_INVALID_VALUE && h == NULL,
                     "%s: create_variant(%d) accepted", stubs[i].name, v);
        }
    }
    /* specl gen emits GPU and CPU defaults: they differ for some. */
    CU_ASSERT(many);
}

/* NAME_create picks the variant of the device's type: the CPU defaults
 * (variant 1 where they differ from the GPU ones) on a CPU, the
 * tensor-core defaults on a GPU with tensor cores (those for compute
 * capability 9.0 where they differ), variant 0 elsewhere. */
static void test_variant_choice(void)
{
    cl_device_type type = 0;
    CU_ASSERT_EQUAL_FATAL(clGetDeviceInfo(rt.device, CL_DEVICE_TYPE,
                                          sizeof type, &type, NULL),
                          CL_SUCCESS);
    int cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    for (int i = 0; i < N_STUBS; i++) {
        int want = cpu && stubs[i].n_variants > 1 ? 1 : 0;
        if (device_offers(TARGET_TENSOR) && tensor_variant(i) >= 0) {
            want = tensor_variant(i);
        }
        if (device_offers(TARGET_SM90A) && sm90a_variant(i) >= 0) {
            want = sm90a_variant(i);
        }
        TU_CHECK(stubs[i].variant(handle[i]) == want,
                 "%s: variant %d on a %s device, expected %d", stubs[i].name,
                 stubs[i].variant(handle[i]), cpu ? "CPU" : "non-CPU", want);
    }
    CU_ASSERT_EQUAL(stub_softmax_variant(NULL), -1);
}

/* stub_fallback is stub_softmax whose variant 1 (the CPU defaults) does
 * not build: create moves on to variant 0 (a device with tensor cores
 * takes their variant 2 first, as stub_softmax does), and asking for
 * variant 1 alone fails with a log that names it. */
static void test_fallback(void)
{
    stub_fallback *k = NULL;
    cl_int err = stub_fallback_create(rt.ctx, rt.device, &k);
    const int want = device_offers(TARGET_TENSOR) ? 2 : 0;
    TU_CHECK(err == CL_SUCCESS && stub_fallback_variant(k) == want,
             "stub_fallback_create: %s, variant %d\n%s", rt_status(err),
             stub_fallback_variant(k), stub_fallback_build_log(k));
    TU_CHECK(strcmp(stub_fallback_build_log(k), "") == 0,
             "a log after a variant built: %s", stub_fallback_build_log(k));
    if (err == CL_SUCCESS) {
        run_checked(2, k, 37, "fallback past variant 1");
    }
    stub_fallback_destroy(k);
    k = NULL;
    err = stub_fallback_create_variant(rt.ctx, rt.device, 1, &k);
    CU_ASSERT_EQUAL(err, CL_BUILD_PROGRAM_FAILURE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(stub_fallback_variant(k), -1);
    const char *log = stub_fallback_build_log(k);
    TU_CHECK(strstr(log, "stub_fallback variant 1 (") != NULL &&
                 strstr(log, "broken on purpose") != NULL,
             "the log does not say which variant failed and why:\n%s", log);
    stub_fallback_destroy(k);
}

/* stub_top_broken (stub_lora_rows of stub index I, whose ranges run
 * variant FEW up to UPTO rows and MOST past them) with MOST broken: on a
 * CPU the handle runs another variant, which takes MOST's rows, and the
 * range for few rows still runs FEW; elsewhere, the handle's variant
 * for every call. Each call verified against float64. */
static void test_top_broken(int i, int few, int most, size_t upto)
{
    int cpu = rt.target == TARGET_CPU;
    stub_top_broken *t = NULL;
    cl_int err = stub_top_broken_create(rt.ctx, rt.device, &t);
    int v = stub_top_broken_variant(t);
    TU_CHECK(err == CL_SUCCESS && v >= 0 && v != most &&
                 (cpu || v == stub_lora_rows_variant(handle[i])),
             "stub_top_broken_create: %s, variant %d\n%s", rt_status(err),
             v, stub_top_broken_build_log(t));
    if (err != CL_SUCCESS || v < 0) {
        stub_top_broken_destroy(t);
        return;
    }
    const size_t rows[] = {1, upto, upto + 1};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        size_t sizes[stub_top_broken_N_SIZES] = {rows[r]};
        int want = cpu && rows[r] <= upto ? few : v;
        TU_CHECK(stub_top_broken_variant_at(t, sizes) == want,
                 "stub_top_broken, rows %zu: variant %d, expected %d",
                 rows[r], stub_top_broken_variant_at(t, sizes), want);
        struct vcase vc;
        struct vbuffers vb;
        CU_ASSERT_EQUAL_FATAL(make_case(i, rows[r], &vc, &vb), 0);
        err = stub_top_broken_enqueue(t, rt.queue, rows[r], vb.mem[0],
                                      vb.mem[1], vb.mem[2], vb.mem[3],
                                      vb.mem[4], 0, NULL, NULL);
        CU_ASSERT_EQUAL(err, CL_SUCCESS);
        clFinish(rt.queue);
        check_result(i, &vc, &vb, "past a broken last range's variant");
        free_case(&vc, &vb);
    }
    stub_top_broken_destroy(t);
}

/* Every CPU's rows range: on a CPU, stub_lora_rows runs the CPU defaults
 * for few rows for calls of up to the range's rows and the CPU defaults
 * (the handle's variant) past them, through the handle and a clone, each
 * call verified against float64; elsewhere, the handle's variant for
 * every call. stub_rows_broken, whose variant for few rows does not
 * build, runs every call on its handle's variant, and on a CPU its log
 * says why; stub_top_broken, whose variant past them does not, still
 * runs few rows on theirs. */
static void test_cpu_rows_range(void)
{
    int i = stub_index("stub_lora_rows");
    const struct variant_set *vs = tu_gen_variants(spec_of[i]);
    CU_ASSERT_FATAL(vs->n_range == 2 && vs->range[0].device[0] == '\0');
    int few = vs->range[0].variant, most = vs->range[1].variant;
    size_t upto = (size_t)vs->range[0].max_rows;
    int cpu = rt.target == TARGET_CPU;
    const stub_lora_rows *k = handle[i];
    stub_lora_rows *c = NULL;
    CU_ASSERT_EQUAL_FATAL(stub_lora_rows_clone(k, &c), CL_SUCCESS);
    TU_CHECK(stub_lora_rows_variant(k) == (cpu ? most : 0),
             "stub_lora_rows: variant %d on a %s device",
             stub_lora_rows_variant(k), cpu ? "CPU" : "non-CPU");
    const size_t rows[] = {1, 16, 17, upto, upto + 1, 4 * upto};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        size_t sizes[stub_lora_rows_N_SIZES] = {rows[r]};
        int want = !cpu ? stub_lora_rows_variant(k)
                   : rows[r] <= upto ? few
                                     : most;
        TU_CHECK(stub_lora_rows_variant_at(k, sizes) == want &&
                     stub_lora_rows_variant_at(c, sizes) == want,
                 "stub_lora_rows, rows %zu: variant %d (clone %d), expected "
                 "%d", rows[r], stub_lora_rows_variant_at(k, sizes),
                 stub_lora_rows_variant_at(c, sizes), want);
        run_checked(i, k, rows[r], "its rows range's variant");
        run_checked(i, c, rows[r], "a clone, its rows range's variant");
    }
    stub_lora_rows_destroy(c);

    stub_rows_broken *b = NULL;
    cl_int err = stub_rows_broken_create(rt.ctx, rt.device, &b);
    TU_CHECK(err == CL_SUCCESS &&
                 stub_rows_broken_variant(b) == stub_lora_rows_variant(k),
             "stub_rows_broken_create: %s, variant %d\n%s", rt_status(err),
             stub_rows_broken_variant(b), stub_rows_broken_build_log(b));
    const char *log = stub_rows_broken_build_log(b);
    TU_CHECK(cpu ? strstr(log, "stub_rows_broken variant 2 (") != NULL &&
                       strstr(log, "broken on purpose") != NULL
                 : strcmp(log, "") == 0,
             "stub_rows_broken's log:\n%s", log);
    if (err == CL_SUCCESS) {
        struct vcase vc;
        struct vbuffers vb;
        size_t sizes[stub_rows_broken_N_SIZES] = {32};
        TU_CHECK(stub_rows_broken_variant_at(b, sizes) ==
                     stub_rows_broken_variant(b),
                 "stub_rows_broken, rows 32: variant %d",
                 stub_rows_broken_variant_at(b, sizes));
        CU_ASSERT_EQUAL_FATAL(make_case(i, 32, &vc, &vb), 0);
        err = stub_rows_broken_enqueue(b, rt.queue, 32, vb.mem[0], vb.mem[1],
                                       vb.mem[2], vb.mem[3], vb.mem[4], 0,
                                       NULL, NULL);
        CU_ASSERT_EQUAL(err, CL_SUCCESS);
        clFinish(rt.queue);
        check_result(i, &vc, &vb, "past a broken rows range's variant");
        free_case(&vc, &vb);
    }
    stub_rows_broken_destroy(b);
    test_top_broken(i, few, most, upto);
}

/* A source that does not build: create fails with the build error, keeps
 * a handle with the compiler's log, and enqueue refuses it. */
static void test_build_failure(void)
{
    stub_broken *k = NULL;
    cl_int err = stub_broken_create(rt.ctx, rt.device, &k);
    CU_ASSERT_EQUAL(err, CL_BUILD_PROGRAM_FAILURE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    const char *log = stub_broken_build_log(k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    TU_CHECK(strstr(log, "this source is broken on purpose") != NULL,
             "the build log lacks the #error message:\n%s", log);
    cl_int e;
    cl_mem x = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
    cl_mem y = clCreateBuffer(rt.ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
    CU_ASSERT_EQUAL(stub_broken_enqueue(k, rt.queue, 1, x, y, 0, NULL, NULL),
                    CL_INVALID_PROGRAM_EXECUTABLE);
    clReleaseMemObject(x);
    clReleaseMemObject(y);
    stub_broken_destroy(k);
}

static void test_api_edges(void)
{
    for (int i = 0; i < N_STUBS; i++) {
        TU_CHECK(strcmp(stubs[i].build_log(handle[i]), "") == 0,
                 "%s: a build log after a good build: %s", stubs[i].name,
                 stubs[i].build_log(handle[i]));
        TU_CHECK(strcmp(stubs[i].build_log(NULL), "") == 0,
                 "%s_build_log(NULL)", stubs[i].name);
        stubs[i].destroy(NULL);
    }
    CU_ASSERT_EQUAL(stub_softmax_create(rt.ctx, rt.device, NULL),
                    CL_INVALID_VALUE);
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_EQUAL_FATAL(make_case(2, CHECK_ROWS, &c, &b), 0);
    CU_ASSERT_EQUAL(stub_softmax_enqueue(NULL, rt.queue, CHECK_ROWS, b.mem[0],
                                         b.mem[1], 0, NULL, NULL),
                    CL_INVALID_VALUE);
    CU_ASSERT_EQUAL(stub_softmax_enqueue(handle[2], NULL, CHECK_ROWS,
                                         b.mem[0], b.mem[1], 0, NULL, NULL),
                    CL_INVALID_COMMAND_QUEUE);
    /* The public constants of the header are the spec's. */
    CU_ASSERT_EQUAL(stub_softmax_FEATURES, 100);
    CU_ASSERT_EQUAL(stub_lora_IN_FEATURES, 64);
    CU_ASSERT_EQUAL(stub_lora_OUT_FEATURES, 48);
    CU_ASSERT_EQUAL(stub_lora_RANK, 4);
    CU_ASSERT_DOUBLE_EQUAL(stub_lora_SCALE, 2.0, 0);
    free_case(&c, &b);
}

/* create refuses a NULL context or device (which would crash the driver)
 * and stores no handle. */
static void test_create_null_target(void)
{
    stub_softmax *k = (stub_softmax *)(void *)&rt;
    CU_ASSERT_EQUAL(stub_softmax_create(NULL, rt.device, &k),
                    CL_INVALID_CONTEXT);
    CU_ASSERT_PTR_NULL(k);
    k = (stub_softmax *)(void *)&rt;
    CU_ASSERT_EQUAL(stub_softmax_create(rt.ctx, NULL, &k), CL_INVALID_DEVICE);
    CU_ASSERT_PTR_NULL(k);
    k = (stub_softmax *)(void *)&rt;
    CU_ASSERT_EQUAL(stub_softmax_create_variant(NULL, rt.device, 0, &k),
                    CL_INVALID_CONTEXT);
    CU_ASSERT_PTR_NULL(k);
    k = (stub_softmax *)(void *)&rt;
    CU_ASSERT_EQUAL(stub_softmax_create_variant(rt.ctx, NULL, 0, &k),
                    CL_INVALID_DEVICE);
    CU_ASSERT_PTR_NULL(k);
}

/* A copy of BUF (through the suite's queue) in context CTX; NULL on
 * failure. */
static cl_mem copy_into(cl_context ctx, cl_mem buf)
{
    size_t size = 0;
    cl_int err;
    unsigned char *bytes = snapshot(buf, &size);
    cl_mem copy = bytes == NULL ? NULL
                                : clCreateBuffer(ctx, CL_MEM_READ_WRITE |
                                                          CL_MEM_COPY_HOST_PTR,
                                                 size, bytes, &err);
    free(bytes);
    return copy;
}

/* A queue, buffers, a scratch or wait events of another context than the
 * handle's are refused with CL_INVALID_CONTEXT and nothing enqueued
 * (PoCL itself takes them and runs the kernels): every buffer of every
 * stub in turn, with the same bytes in a second context on the same
 * device; a complete user event of it, alone and after one of the
 * handle's; a NULL event. */
static void test_other_context(void)
{
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &rt.device, NULL, NULL,
                                       &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    cl_command_queue other_q = clCreateCommandQueue(other, rt.device, 0,
                                                    &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    /* Complete, so that a kernel wrongly enqueued after them runs (and
     * shows) instead of blocking clFinish. */
    cl_event theirs = clCreateUserEvent(other, &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    cl_event ours = clCreateUserEvent(rt.ctx, &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    clSetUserEventStatus(theirs, CL_COMPLETE);
    clSetUserEventStatus(ours, CL_COMPLETE);
    for (int i = 0; i < N_STUBS; i++) {
        struct vcase c;
        struct vbuffers b;
        if (make_case(i, CHECK_ROWS, &c, &b) != 0) {
            CU_FAIL("cannot make a case");
            continue;
        }
        for (int k = 0; k < c.plan.n_buffer; k++) {
            if (c.plan.buffer[k].optional) {
                continue;
            }
            cl_mem bufs[SPECL_MAX_BUFFERS];
            char what[64];
            memcpy(bufs, b.mem, sizeof bufs);
            bufs[k] = copy_into(other, b.mem[k]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(bufs[k]);
            snprintf(what, sizeof what, "%s of another context",
                     c.plan.buffer[k].name);
            if (k == c.out) {
                expect_refused_on(i, rt.queue, CHECK_ROWS, bufs, 0, NULL,
                                  bufs[k], other_q, CL_INVALID_CONTEXT, what);
            } else {
                expect_refused(i, CHECK_ROWS, bufs, 0, NULL, b.mem[c.out],
                               CL_INVALID_CONTEXT, what);
            }
            clReleaseMemObject(bufs[k]);
        }
        const cl_event mixed[] = {ours, theirs};
        expect_refused(i, CHECK_ROWS, b.mem, 1, &theirs, b.mem[c.out],
                       CL_INVALID_CONTEXT, "a wait event of another context");
        expect_refused(i, CHECK_ROWS, b.mem, 2, mixed, b.mem[c.out],
                       CL_INVALID_CONTEXT, "the second wait event of another "
                       "context");
        const cl_event with_null[] = {ours, NULL};
        expect_refused(i, CHECK_ROWS, b.mem, 2, with_null, b.mem[c.out],
                       CL_INVALID_EVENT_WAIT_LIST, "a NULL wait event");
        expect_refused_on(i, other_q, CHECK_ROWS, b.mem, 0, NULL,
                          b.mem[c.out], rt.queue, CL_INVALID_CONTEXT,
                          "a queue of another context");
        free_case(&c, &b);
    }

    /* A scratch of another context: refused where the kernels need one
     * (lora_delta's variant 0 at 37 rows), and where they do not. */
    const size_t rows = 37;
    cl_mem scratch = clCreateBuffer(
        other, CL_MEM_READ_WRITE, stub_lora_delta_scratch_bytes(rows), NULL,
        &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    stub_lora_delta *delta = NULL;
    CU_ASSERT_EQUAL_FATAL(
        stub_lora_delta_create_variant(rt.ctx, rt.device, 0, &delta),
        CL_SUCCESS);
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_EQUAL_FATAL(make_case(1, rows, &c, &b), 0);
    size_t n0 = 0, n1 = 0;
    unsigned char *before = snapshot(b.mem[4], &n0);
    err = stub_lora_delta_enqueue_scratch(delta, rt.queue, rows, b.mem[0],
                                          NULL, b.mem[2], b.mem[3], b.mem[4],
                                          scratch, 0, NULL, NULL);
    TU_CHECK(err == CL_INVALID_CONTEXT, "lora_delta, scratch of another "
             "context: %s", rt_status(err));
    clFinish(rt.queue);
    clFinish(other_q);
    unsigned char *after = snapshot(b.mem[4], &n1);
    TU_CHECK(before != NULL && after != NULL && n0 == n1 &&
                 memcmp(before, after, n0) == 0,
             "lora_delta, scratch of another context: y changed");
    free(before);
    free(after);
    free_case(&c, &b);
    stub_lora_delta_destroy(delta);
    CU_ASSERT_EQUAL_FATAL(make_case(2, rows, &c, &b), 0);
    err = stub_softmax_enqueue_scratch(handle[2], rt.queue, rows, b.mem[0],
                                       b.mem[1], scratch, 0, NULL, NULL);
    TU_CHECK(err == CL_INVALID_CONTEXT, "softmax (no scratch needed), "
             "scratch of another context: %s", rt_status(err));
    free_case(&c, &b);
    clReleaseMemObject(scratch);
    clReleaseEvent(theirs);
    clReleaseEvent(ours);
    clReleaseCommandQueue(other_q);
    clReleaseContext(other);
}

/* The references a context has now (stale at once in general; exact
 * here, where this thread alone uses it). */
static cl_uint context_refs(cl_context ctx)
{
    cl_uint n = 0;
    clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

/* A handle keeps its context (so that enqueue can check against it) and
 * gives it back: create, a clone, a failed create and destroy leave the
 * context's references as they found them; a clone outlives its parent
 * and still runs. */
static void test_context_references(void)
{
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &rt.device, NULL, NULL, &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(ctx, rt.device, 0, &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    cl_uint refs = context_refs(ctx);
    stub_softmax *k = NULL, *copy = NULL;
    CU_ASSERT_EQUAL_FATAL(stub_softmax_create(ctx, rt.device, &k),
                          CL_SUCCESS);
    CU_ASSERT(context_refs(ctx) > refs);
    CU_ASSERT_EQUAL_FATAL(stub_softmax_clone(k, &copy), CL_SUCCESS);
    stub_softmax_destroy(k);
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
                              3 * stub_softmax_FEATURES * sizeof(float), NULL,
                              &err);
    cl_mem y = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
                              3 * stub_softmax_FEATURES * sizeof(float), NULL,
                              &err);
    CU_ASSERT_EQUAL(stub_softmax_enqueue(copy, q, 3, x, y, 0, NULL, NULL),
                    CL_SUCCESS);
    CU_ASSERT_EQUAL(clFinish(q), CL_SUCCESS);
    clReleaseMemObject(x);
    clReleaseMemObject(y);
    stub_softmax_destroy(copy);
    TU_CHECK(context_refs(ctx) == refs, "create, clone, destroy: %u "
             "references to the context, %u before", context_refs(ctx),
             refs);
    stub_broken *broken = NULL;
    CU_ASSERT_EQUAL(stub_broken_create(ctx, rt.device, &broken),
                    CL_BUILD_PROGRAM_FAILURE);
    stub_broken_destroy(broken);
    TU_CHECK(context_refs(ctx) == refs, "a failed create: %u references "
             "to the context, %u before", context_refs(ctx), refs);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
}

/* The relative L2 error of stub_softmax_coop's output Y (one row) against
 * the float64 softmax of X. */
static double coop_row_error(const float *x, const float *y)
{
    enum { N = stub_softmax_coop_FEATURES };
    double mx = -INFINITY, sum = 0, err = 0, norm = 0;
    for (int i = 0; i < N; i++) {
        mx = x[i] > mx ? x[i] : mx;
    }
    for (int i = 0; i < N; i++) {
        sum += exp(x[i] - mx);
    }
    for (int i = 0; i < N; i++) {
        double want = exp(x[i] - mx) / sum;
        err += (y[i] - want) * (y[i] - want);
        norm += want * want;
    }
    return err == err ? sqrt(err / norm) : INFINITY;
}

/* One row of stub_softmax_coop on handle K, over Y poisoned with NaN
 * first: its error (INFINITY when a call fails). */
static double coop_run(const stub_softmax_coop *k, cl_command_queue q,
                       cl_mem xb, cl_mem yb, const float *x)
{
    float y[stub_softmax_coop_FEATURES];
    for (int i = 0; i < stub_softmax_coop_FEATURES; i++) {
        y[i] = NAN;
    }
    cl_int err = clEnqueueWriteBuffer(q, yb, CL_TRUE, 0, sizeof y, y, 0,
                                      NULL, NULL);
    if (err == CL_SUCCESS) {
        err = stub_softmax_coop_enqueue(k, q, 1, xb, yb, 0, NULL, NULL);
    }
    if (err == CL_SUCCESS) {
        err = clEnqueueReadBuffer(q, yb, CL_TRUE, 0, sizeof y, y, 0, NULL,
                                  NULL);
    }
    return err == CL_SUCCESS ? coop_row_error(x, y) : INFINITY;
}

/* The one-launch split path (stub_softmax_coop at 1 row: 2 work-groups
 * that wait for each other) keeps its barrier counters in the handle,
 * zeroed at create and left at zero by every launch: one handle runs it
 * again and again (were the counters not reset, the second launch would
 * wait forever), its clone on counters of its own, also once the parent
 * is gone, and destroy gives their buffers back (the context's
 * references as before). A device of fewer than 2 compute units takes
 * the split path instead. */
static void test_coop_counters(void)
{
    enum { N = stub_softmax_coop_FEATURES };
    cl_int err;
    cl_uint units = 0;
    CU_ASSERT_EQUAL_FATAL(clGetDeviceInfo(rt.device,
                                          CL_DEVICE_MAX_COMPUTE_UNITS,
                                          sizeof units, &units, NULL),
                          CL_SUCCESS);
    cl_context ctx = clCreateContext(NULL, 1, &rt.device, NULL, NULL, &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(ctx, rt.device, 0, &err);
    CU_ASSERT_EQUAL_FATAL(err, CL_SUCCESS);
    cl_uint refs = context_refs(ctx);
    float x[N];
    unsigned long r = SEED;
    for (int i = 0; i < N; i++) {
        r = r * 6364136223846793005UL + 1442695040888963407UL;
        x[i] = (float)((double)(r >> 40) / (double)(1UL << 24) * 8.0 - 4.0);
    }
    cl_mem xb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               sizeof x, x, &err);
    cl_mem yb = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof x, NULL, &err);
    stub_softmax_coop *k = NULL, *copy = NULL;
    CU_ASSERT_EQUAL_FATAL(stub_softmax_coop_create(ctx, rt.device, &k),
                          CL_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(stub_softmax_coop_clone(k, &copy), CL_SUCCESS);
    size_t one = 1, two = 2;
    CU_ASSERT_EQUAL(stub_softmax_coop_path_index(k, &one), units >= 2 ? 0 : 1);
    CU_ASSERT_EQUAL(stub_softmax_coop_path_index(copy, &one),
                    units >= 2 ? 0 : 1);
    CU_ASSERT_EQUAL(stub_softmax_coop_path_index(k, &two), 1);
    for (int run = 0; run < 6; run++) {
        double e = coop_run(run % 3 == 2 ? copy : k, q, xb, yb, x);
        TU_CHECK(e <= 1e-5, "run %d (%s): error %g", run,
                 run % 3 == 2 ? "the clone" : "the handle", e);
    }
    stub_softmax_coop_destroy(k);
    for (int run = 0; run < 2; run++) {
        double e = coop_run(copy, q, xb, yb, x);
        TU_CHECK(e <= 1e-5, "the clone alone, run %d: error %g", run, e);
    }
    stub_softmax_coop_destroy(copy);
    CU_ASSERT_EQUAL(clFinish(q), CL_SUCCESS);
    clReleaseMemObject(xb);
    clReleaseMemObject(yb);
    /* PoCL gives back a finished command's references a moment after
     * clFinish: a leak holds them for good, so wait up to 5 s. */
    for (int wait = 0; wait < 500 && context_refs(ctx) != refs; wait++) {
        struct timespec pause = {0, 10000000L};
        nanosleep(&pause, NULL);
    }
    TU_CHECK(context_refs(ctx) == refs, "create, clone, destroy: %u "
             "references to the context, %u before", context_refs(ctx),
             refs);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
}

/* examples/vendor builds from its two emitted files alone and runs OK. */
static void test_vendor_example(void)
{
    char cwd[4096];
    char *tmp = tu_tempdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
    int rc = tu_run("MAKEFLAGS= MAKELEVEL= make -s -C examples/vendor "
                    "SPECL='%s/" TU_SPECL "' OUT='%s' run >'%s/log' 2>&1",
                    cwd, tmp, tmp);
    char *log_path = tu_path(tmp, "log");
    char *log = tu_read(log_path, NULL);
    TU_CHECK(rc == 0 && log != NULL && strstr(log, "OK") != NULL,
             "examples/vendor: exit %d\n%s", rc, log ? log : "");
    free(log);
    free(log_path);
    CU_ASSERT_EQUAL(tu_rmtree(tmp), 0);
    free(tmp);
}

int add_stub_suite(void)
{
    CU_pSuite s = CU_add_suite("stub", setup, cleanup);
    if (s == NULL ||
        CU_add_test(s, "results match float64", test_results) == NULL ||
        CU_add_test(s, "threads, a clone each", test_threads) == NULL ||
        CU_add_test(s, "every variant, by index", test_every_variant) ==
            NULL ||
        CU_add_test(s, "the device type picks the variant",
                    test_variant_choice) == NULL ||
        CU_add_test(s, "a variant that fails to build is passed over",
                    test_fallback) == NULL ||
        CU_add_test(s, "every CPU's rows range routes calls",
                    test_cpu_rows_range) == NULL ||
        CU_add_test(s, "scratch sized for more rows serves fewer",
                    test_scratch_for_fewer_rows) == NULL ||
        CU_add_test(s, "caller-owned scratch", test_caller_scratch) ==
            NULL ||
        CU_add_test(s, "rows 0 refused", test_rows_zero) == NULL ||
        CU_add_test(s, "NULL buffers refused", test_null_buffers) == NULL ||
        CU_add_test(s, "short buffers refused", test_small_buffers) == NULL ||
        CU_add_test(s, "an output that is another buffer refused",
                    test_alias_same_buffer) == NULL ||
        CU_add_test(s, "an output overlapping another buffer refused",
                    test_alias_overlapping_sub_buffers) == NULL ||
        CU_add_test(s, "disjoint sub-buffers of one buffer taken",
                    test_alias_disjoint_sub_buffers) == NULL ||
        CU_add_test(s, "a scratch that is a buffer refused",
                    test_alias_scratch) == NULL ||
        CU_add_test(s, "an output the op lets be an input, in place",
                    test_alias_in_place) == NULL ||
        CU_add_test(s, "base: false takes w NULL", test_optional_w) == NULL ||
        CU_add_test(s, "dgamma and dbeta NULL: dx alone, no scratch",
                    test_nullable_outputs) == NULL ||
        CU_add_test(s, "cross_entropy: dlogits may be logits",
                    test_xent_in_place) == NULL ||
        CU_add_test(s, "wait list checks", test_wait_list_checks) == NULL ||
        CU_add_test(s, "out-of-order queue, done event",
                    test_out_of_order) == NULL ||
        CU_add_test(s, "failed build and its log", test_build_failure) ==
            NULL ||
        CU_add_test(s, "NULL handles, constants", test_api_edges) == NULL ||
        CU_add_test(s, "the array forms of enqueue and scratch_bytes, "
                       "path_index",
                    test_array_entry) == NULL ||
        CU_add_test(s, "create: NULL context or device refused",
                    test_create_null_target) == NULL ||
        CU_add_test(s, "queue, buffers, scratch, events of another "
                    "context refused", test_other_context) == NULL ||
        CU_add_test(s, "a handle holds its context, and lets it go",
                    test_context_references) == NULL ||
        CU_add_test(s, "the one-launch path's counters: the handle's, "
                    "reset by every launch, a clone's its own",
                    test_coop_counters) == NULL ||
        CU_add_test(s, "examples/vendor", test_vendor_example) == NULL) {
        return -1;
    }
    return 0;
}
