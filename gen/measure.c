/* measure.c - verifying and timing one kernel's variants on a device:
 * shared by `specl bench` and `specl tune`. */
#include "measure.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "render.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double run_events_us(const struct run_events *r)
{
    cl_ulong start = 0, end = 0;
    if (r->n == 0 ||
        clGetEventProfilingInfo(r->ev[0],
                                r->from_end ? CL_PROFILING_COMMAND_END
                                            : CL_PROFILING_COMMAND_START,
                                sizeof start, &start, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(r->ev[r->n - 1], CL_PROFILING_COMMAND_END,
                                sizeof end, &end, NULL) != CL_SUCCESS) {
        return -1;
    }
    return (double)(end - start) / 1e3;
}

void run_events_release(struct run_events *r)
{
    for (int e = 0; e < r->n; e++) {
        clReleaseEvent(r->ev[e]);
    }
    memset(r, 0, sizeof *r);
}

/* Times FN: warm-up, then up to REPS runs (fewer when one run is slow, so
 * that a variant takes about BUDGET_US); median event and wall time. */
#define BUDGET_US 2e6
cl_int time_variant(const struct rt *rt, enqueue_fn fn, void *ctx,
                           int n_sets, int reps, struct result *r)
{
    double ev_us[MAX_REPS], wall[MAX_REPS];
    struct run_events ev;
    cl_int err;
    for (int i = 0; i < 3; i++) {
        double t0 = now_us();
        memset(&ev, 0, sizeof ev);
        err = fn(ctx, i % n_sets, &ev);
        if (err == CL_SUCCESS) {
            err = clFinish(rt->queue);
        }
        double one = now_us() - t0;
        double us = err == CL_SUCCESS ? run_events_us(&ev) : 0;
        run_events_release(&ev);
        if (err != CL_SUCCESS) {
            return err;
        }
        if (one > 1e6 && !r->host_timed) {
            /* Seconds per run (naive kernels on big shapes): the verify
             * run warmed up, so this run is the one sample we can afford. */
            r->us = us;
            r->wall_us = one;
            return CL_SUCCESS;
        }
        if (one * reps > BUDGET_US) {
            reps = one * 3 > BUDGET_US ? 3 : (int)(BUDGET_US / one);
        }
        if (one > 1e5) {
            break; /* slow enough that warm-up is done */
        }
    }
    for (int i = 0; i < reps; i++) {
        double t0 = now_us();
        memset(&ev, 0, sizeof ev);
        err = fn(ctx, i % n_sets, &ev);
        if (err == CL_SUCCESS) {
            err = clFinish(rt->queue);
        }
        wall[i] = now_us() - t0;
        ev_us[i] = err == CL_SUCCESS ? run_events_us(&ev) : 0;
        run_events_release(&ev);
        if (err != CL_SUCCESS) {
            return err;
        }
    }
    if (r->host_timed) {
        /* Batches of BATCH calls back to back, host clock around each:
         * the launch gaps are hidden as they would be in a real model. */
        enum { BATCH = 10 };
        int batches = reps < 5 ? reps : 5;
        for (int i = 0; i < batches; i++) {
            double t0 = now_us();
            for (int j = 0; j < BATCH && err == CL_SUCCESS; j++) {
                memset(&ev, 0, sizeof ev);
                err = fn(ctx, (i * BATCH + j) % n_sets, &ev);
                run_events_release(&ev);
            }
            if (err == CL_SUCCESS) {
                err = clFinish(rt->queue);
            }
            if (err != CL_SUCCESS) {
                return err;
            }
            ev_us[i] = (now_us() - t0) / BATCH;
        }
        r->us = median(ev_us, batches);
        r->wall_us = median(wall, reps);
        return CL_SUCCESS;
    }
    r->us = median(ev_us, reps);
    r->wall_us = median(wall, reps);
    return CL_SUCCESS;
}

/* ---- ceilings ------------------------------------------------------- */

/* clSetKernelArg unless an earlier call failed: arguments set in a row
 * with one check. */
static cl_int set_arg(cl_kernel k, cl_uint i, size_t size, const void *v,
                      cl_int err)
{
    return err != CL_SUCCESS ? err : clSetKernelArg(k, i, size, v);
}

/* Runs K (its arguments set) RUNS times over GLOBAL work-items; *BEST_NS:
 * the best event time after the first 2 runs, which pay for first touches
 * of the pages and the kernel's first launch. */
static cl_int best_run(const struct rt *rt, cl_kernel k, size_t global,
                       size_t local, int runs, double *best_ns)
{
    *best_ns = 1e30;
    for (int i = 0; i < runs; i++) {
        cl_event ev;
        cl_int err = clEnqueueNDRangeKernel(rt->queue, k, 1, NULL, &global,
                                            &local, 0, NULL, &ev);
        if (err != CL_SUCCESS) {
            return err;
        }
        err = clWaitForEvents(1, &ev);
        double ns = err == CL_SUCCESS ? rt_events_ns(&ev, 1) : 0;
        clReleaseEvent(ev);
        if (err != CL_SUCCESS) {
            return err;
        }
        if (ns <= 0) {
            return CL_PROFILING_INFO_NOT_AVAILABLE;
        }
        if (i > 1 && ns < *best_ns) {
            *best_ns = ns;
        }
    }
    return CL_SUCCESS;
}

/* float4 values each work-item of read4 reads (defined ahead of
 * ceilings.cl): enough loads in flight per item, few enough that a GPU
 * is still filled with items. 16 was fastest on PoCL too. */
#define READ_PER_ITEM 16

/* The kernels of ceilings.cl built for RT's device, or NULL with *ERR
 * set. */
static cl_program ceilings_program(const struct rt *rt, cl_int *err)
{
    struct buf src;
    char msg[128];
    buf_init(&src);
    buf_printf(&src, "#define READ_PER_ITEM %d\n", READ_PER_ITEM);
    if (render(&src, template_text("ceilings.cl"), NULL, msg, sizeof msg) <
        0) {
        buf_free(&src);
        *err = CL_INVALID_PROGRAM;
        return NULL;
    }
    cl_program prog = rt_build(rt, buf_str(&src), "-cl-std=CL1.2", err,
                               NULL);
    buf_free(&src);
    return prog;
}

/* Work-group size of the streaming kernels: 256 items, or the most the
 * device takes when fewer. */
static size_t stream_local_size(const struct rt *rt)
{
    size_t local = 256;
    while (local > rt->caps.max_work_group) {
        local /= 2;
    }
    return local;
}

cl_int measure_ceilings(const struct rt *rt, struct ceilings *c)
{
    cl_int err;
    memset(c, 0, sizeof *c);
    cl_program prog = ceilings_program(rt, &err);
    if (prog == NULL) {
        return err;
    }
    cl_ulong max_alloc = 0;
    err = clGetDeviceInfo(rt->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
                          sizeof max_alloc, &max_alloc, NULL);
    size_t bytes = (size_t)256 << 20;
    while (bytes > max_alloc / 2 && bytes > ((size_t)1 << 20)) {
        bytes /= 2;
    }
    cl_mem a = NULL, b = NULL, out = NULL;
    cl_kernel copy = NULL, rd = NULL, wr = NULL, fma = NULL;
    if (err == CL_SUCCESS) {
        a = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    }
    if (err == CL_SUCCESS) {
        b = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    }
    if (err == CL_SUCCESS) {
        copy = clCreateKernel(prog, "copy4", &err);
    }
    if (err == CL_SUCCESS) {
        rd = clCreateKernel(prog, "read4", &err);
    }
    if (err == CL_SUCCESS) {
        wr = clCreateKernel(prog, "write4", &err);
    }
    if (err == CL_SUCCESS) {
        fma = clCreateKernel(prog, "fma_peak", &err);
    }
    if (err == CL_SUCCESS) {
        float zero = 0;
        err = clEnqueueFillBuffer(rt->queue, a, &zero, sizeof zero, 0, bytes,
                                  0, NULL, NULL);
    }
    cl_int n4 = (cl_int)(bytes / 16);
    size_t global = (size_t)n4, local = stream_local_size(rt);
    /* read4's items each read READ_PER_ITEM values of their group's block:
     * whole groups that fit in the buffer; its one float per item fits in b
     * many times over. */
    size_t rglobal = global / READ_PER_ITEM / local * local;
    double read_bytes = 16.0 * READ_PER_ITEM * (double)rglobal;
    double best_copy = 0, best_read = 0, best_write = 0, best_fma = 0;
    err = set_arg(copy, 0, sizeof a, &a, err);
    err = set_arg(copy, 1, sizeof b, &b, err);
    err = set_arg(copy, 2, sizeof n4, &n4, err);
    if (err == CL_SUCCESS) {
        err = best_run(rt, copy, global, local, 12, &best_copy);
    }
    err = set_arg(rd, 0, sizeof a, &a, err);
    err = set_arg(rd, 1, sizeof b, &b, err);
    if (err == CL_SUCCESS) {
        err = best_run(rt, rd, rglobal, local, 12, &best_read);
    }
    err = set_arg(wr, 0, sizeof b, &b, err);
    err = set_arg(wr, 1, sizeof n4, &n4, err);
    if (err == CL_SUCCESS) {
        err = best_run(rt, wr, global, local, 12, &best_write);
    }
    size_t fglobal = (size_t)rt->caps.compute_units * 8192;
    if (err == CL_SUCCESS) {
        out = clCreateBuffer(rt->ctx, CL_MEM_WRITE_ONLY,
                             fglobal * sizeof(float), NULL, &err);
    }
    float fa = 0.999f, fb = 0.001f;
    err = set_arg(fma, 0, sizeof out, &out, err);
    err = set_arg(fma, 1, sizeof fa, &fa, err);
    err = set_arg(fma, 2, sizeof fb, &fb, err);
    if (err == CL_SUCCESS) {
        err = best_run(rt, fma, fglobal, local, 8, &best_fma);
    }
    if (err == CL_SUCCESS) {
        c->copy_gbs = 2.0 * (double)bytes / best_copy;
        c->read_gbs = read_bytes / best_read;
        c->write_gbs = (double)bytes / best_write;
        c->gflops = 2.0 * 16 * 8 * 256 * (double)fglobal / best_fma;
    }
    if (out) clReleaseMemObject(out);
    if (copy) clReleaseKernel(copy);
    if (rd) clReleaseKernel(rd);
    if (wr) clReleaseKernel(wr);
    if (fma) clReleaseKernel(fma);
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    clReleaseProgram(prog);
    return err;
}

void case_floor(const struct ceilings *c, const struct device_caps *caps,
                const struct kernel_spec *ks, double bytes, double flops,
                struct case_floor *f)
{
    double tensor_gflops = caps_tensor_gflops(caps);
    int half_gemm = ks->dtype != DTYPE_F32 &&
                    (ks->op->blas_peer != NULL || ks->op->matmul);
    f->tensor = half_gemm && tensor_gflops > 0;
    f->gflops = f->tensor ? tensor_gflops : c->gflops;
    f->bytes_us = bytes / (c->copy_gbs * 1e3);
    f->flops_us = flops / (f->gflops * 1e3);
    f->memory_bound = f->bytes_us > f->flops_us;
    f->us = f->memory_bound ? f->bytes_us : f->flops_us;
}

/* ---- a copy of a case's bytes ---------------------------------------- */

/* copy4 over buffer pairs, one pair per input set of the case it stands
 * beside (run_copy's context). */
struct copy_case {
    cl_command_queue queue;
    cl_kernel copy;
    cl_mem src[MAX_SETS], dst[MAX_SETS];
    int n_sets;
    cl_int n4;
    size_t global, local;
};

/* An enqueue_fn: one copy4 on pair SET. */
static cl_int run_copy(void *p, int set, struct run_events *r)
{
    struct copy_case *cc = p;
    cl_int err = set_arg(cc->copy, 0, sizeof cc->src[set], &cc->src[set],
                         CL_SUCCESS);
    err = set_arg(cc->copy, 1, sizeof cc->dst[set], &cc->dst[set], err);
    err = set_arg(cc->copy, 2, sizeof cc->n4, &cc->n4, err);
    if (err == CL_SUCCESS) {
        err = clEnqueueNDRangeKernel(cc->queue, cc->copy, 1, NULL,
                                     &cc->global, &cc->local, 0, NULL,
                                     &r->ev[0]);
    }
    r->n = err == CL_SUCCESS;
    return err;
}

/* Whether STATUS says the device ran out of memory (some drivers allocate
 * on first use, so an enqueue may say it rather than clCreateBuffer). */
static int out_of_memory(cl_int status)
{
    return status == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
           status == CL_OUT_OF_RESOURCES || status == CL_OUT_OF_HOST_MEMORY ||
           status == CL_INVALID_BUFFER_SIZE;
}

cl_int measure_copy(const struct rt *rt, double bytes, int n_sets, int reps,
                    struct result *r, double *moved)
{
    struct copy_case cc;
    cl_int err = CL_SUCCESS;
    memset(&cc, 0, sizeof cc);
    cc.queue = rt->queue;
    cc.n_sets = n_sets < 1 ? 1 : n_sets > MAX_SETS ? MAX_SETS : n_sets;
    double n4 = floor(bytes / 2 / 16);
    if (n4 < 1) {
        n4 = 1;
    }
    *moved = 0;
    if (n4 > INT_MAX) {
        snprintf(r->note, sizeof r->note, "over %d float4 values", INT_MAX);
        return CL_SUCCESS;
    }
    cc.n4 = (cl_int)n4;
    size_t half = (size_t)cc.n4 * 16;
    *moved = 2.0 * (double)half;
    cc.local = stream_local_size(rt);
    /* copy4 skips the items past n4: whole groups. */
    cc.global = ((size_t)cc.n4 + cc.local - 1) / cc.local * cc.local;
    cl_program prog = ceilings_program(rt, &err);
    if (prog != NULL) {
        cc.copy = clCreateKernel(prog, "copy4", &err);
    }
    /* Both buffers of every pair written once, as the case's own sets
     * are, so that no run pays for first touches. */
    float zero = 0;
    for (int s = 0; s < cc.n_sets && err == CL_SUCCESS; s++) {
        cc.src[s] = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, half, NULL,
                                   &err);
        if (err == CL_SUCCESS) {
            cc.dst[s] = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, half,
                                       NULL, &err);
        }
        if (err == CL_SUCCESS) {
            err = clEnqueueFillBuffer(rt->queue, cc.src[s], &zero,
                                      sizeof zero, 0, half, 0, NULL, NULL);
        }
        if (err == CL_SUCCESS) {
            err = clEnqueueFillBuffer(rt->queue, cc.dst[s], &zero,
                                      sizeof zero, 0, half, 0, NULL, NULL);
        }
    }
    if (err == CL_SUCCESS) {
        err = clFinish(rt->queue);
    }
    if (err == CL_SUCCESS) {
        err = time_variant(rt, run_copy, &cc, cc.n_sets, reps, r);
    }
    r->ok = err == CL_SUCCESS && r->us > 0;
    if (err != CL_SUCCESS) {
        /* A queue that failed may still hold work on the buffers. */
        clFinish(rt->queue);
        if (out_of_memory(err)) {
            snprintf(r->note, sizeof r->note,
                     "no room for %d pairs of %.1f MB buffers: %s", cc.n_sets,
                     (double)half / 1e6, rt_status(err));
            err = CL_SUCCESS;
        } else {
            snprintf(r->note, sizeof r->note, "%s", rt_status(err));
        }
    } else if (!r->ok) {
        snprintf(r->note, sizeof r->note, "no event times");
    }
    for (int s = 0; s < cc.n_sets; s++) {
        if (cc.src[s] != NULL) {
            clReleaseMemObject(cc.src[s]);
        }
        if (cc.dst[s] != NULL) {
            clReleaseMemObject(cc.dst[s]);
        }
    }
    if (cc.copy != NULL) {
        clReleaseKernel(cc.copy);
    }
    if (prog != NULL) {
        clReleaseProgram(prog);
    }
    return err;
}

/* ---- one kernel ------------------------------------------------------ */

/* Enqueues the mark kernel behind GATE (when not NULL). */
/* The one-item kernel run_specl times multi-kernel plans from, built on
 * first use. */
static cl_int mark_kernel(struct measure_case *mc)
{
    static const char source[] = "__kernel void specl_mark(void) {}\n";
    cl_int err = CL_SUCCESS;
    if (mc->mark != NULL) {
        return CL_SUCCESS;
    }
    if (mc->mark_program == NULL) {
        mc->mark_program = rt_build(mc->rt, source, "-cl-std=CL1.2", &err,
                                    NULL);
    }
    if (mc->mark_program != NULL) {
        mc->mark = clCreateKernel(mc->mark_program, "specl_mark", &err);
    }
    return err;
}

/* A run of stub S on buffer set SET of BC (run_specl, run_naive). */
static cl_int run_stub(struct measure_case *bc, struct stub *s, int set,
                       struct run_events *r)
{
    const struct rt *rt = bc->rt;
    const size_t *sizes = bc->vc.sizes;
    cl_int err, gate_err;
    const struct path *path = stub_path(s, sizes);
    if (path == NULL || path->n_launch == 1) {
        err = stub_enqueue(s, rt->queue, sizes, bc->sets[set].mem, 0, NULL,
                           &r->ev[0]);
        r->n = err == CL_SUCCESS;
        return err;
    }
    err = mark_kernel(bc);
    if (err != CL_SUCCESS) {
        return err;
    }
    cl_event gate = clCreateUserEvent(rt->ctx, &err);
    if (err != CL_SUCCESS) {
        return err;
    }
    size_t one = 1;
    err = clEnqueueNDRangeKernel(rt->queue, bc->mark, 1, NULL, &one, &one, 1,
                                 &gate, &r->ev[0]);
    if (err == CL_SUCCESS) {
        r->n = 1;
        r->from_end = 1;
        /* The queue is in order: the stub's kernels follow the mark. */
        err = stub_enqueue(s, rt->queue, sizes, bc->sets[set].mem, 0, NULL,
                           &r->ev[1]);
        r->n += err == CL_SUCCESS;
    }
    gate_err = clSetUserEventStatus(gate, CL_COMPLETE);
    clReleaseEvent(gate);
    return err != CL_SUCCESS ? err : gate_err;
}

cl_int run_specl(void *p, int set, struct run_events *r)
{
    struct measure_case *bc = p;
    return run_stub(bc, &bc->stub, set, r);
}

cl_int run_naive(void *p, int set, struct run_events *r)
{
    struct measure_case *bc = p;
    if (bc->naive_stub == NULL) {
        return CL_INVALID_PROGRAM_EXECUTABLE; /* mcase_load_naive first */
    }
    return run_stub(bc, bc->naive_stub, set, r);
}

/* One run of STUB on buffer set SET, finished: its event time in *US. */
static cl_int run_once(struct measure_case *mc, struct stub *stub, int set,
                       double *us)
{
    struct run_events ev;
    memset(&ev, 0, sizeof ev);
    cl_int err = run_stub(mc, stub, set, &ev);
    if (err == CL_SUCCESS) {
        err = clFinish(mc->rt->queue);
    }
    *us = err == CL_SUCCESS ? run_events_us(&ev) : 0;
    run_events_release(&ev);
    if (err == CL_SUCCESS && *us < 0) {
        err = CL_PROFILING_INFO_NOT_AVAILABLE;
    }
    return err;
}

cl_int time_interleaved(struct measure_case *mc, struct stub *stubs, int n,
                        int reps, double (*us)[MAX_REPS], int *rounds)
{
    cl_int err = CL_SUCCESS;
    double one, round_us = 0;
    *rounds = 0;
    for (int w = 0; w < 2; w++) {
        double t0 = now_us();
        for (int c = 0; c < n && err == CL_SUCCESS; c++) {
            err = run_once(mc, &stubs[c], w % mc->n_sets, &one);
        }
        round_us = now_us() - t0;
    }
    if (round_us * reps > BUDGET_US * n) {
        reps = round_us * 3 > BUDGET_US * n ? 3
                                            : (int)(BUDGET_US * n / round_us);
    }
    for (int i = 0; i < reps && err == CL_SUCCESS; i++) {
        for (int k = 0; k < n && err == CL_SUCCESS; k++) {
            int c = i % 2 ? n - 1 - k : k;
            err = run_once(mc, &stubs[c], i % mc->n_sets, &us[c][i]);
        }
        *rounds = i + 1;
    }
    return err;
}

double percentile(const double *sorted, int n, double q)
{
    return sorted[(int)(q * (n - 1) + 0.5)];
}

cl_int mcase_load_naive(struct measure_case *mc, char **log)
{
    cl_int err;
    mc->naive_stub = naive_stub(mc->naive, mc->rt, mc->vc.ks, &err, log);
    return err;
}

int buffer_named(const struct vcase *c, const char *name)
{
    for (int i = 0; i < c->plan.n_buffer; i++) {
        if (strcmp(c->plan.buffer[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* Elements per row of buffer I when it holds rows of the first size
 * alone (no fixed part, no other size); 0 when not. */
static size_t row_length(const struct vcase *c, int i)
{
    const struct plan_buffer *pb = &c->plan.buffer[i];
    return pb->sizes == SIZE_FIRST && pb->fixed == 0 ? (size_t)pb->per : 0;
}

/* Whether a case of some of C's rows is C's buffers' rows gathered:
 * every buffer that grows with the first size holds rows of it. */
static int rows_separate(const struct vcase *c)
{
    for (int i = 0; i < c->plan.n_buffer; i++) {
        if (c->host[i] != NULL && (c->plan.buffer[i].sizes & SIZE_FIRST) &&
            row_length(c, i) == 0) {
            return 0;
        }
    }
    return 1;
}

/* Whether output I is checked on sampled rows only: per-row outputs of
 * large cases, where the reference would take minutes. Outputs of a
 * fixed size (sums over every row), and every output of an op whose
 * buffers are not rows of the first size, are checked whole. */
static int output_sampled(const struct vcase *c, int i)
{
    return row_length(c, i) > 0 && rows_separate(c);
}

/* Offsets of the outputs in an array of the checked values (SAMPLED_AT,
 * indexed by buffer) for N_ROWS sampled rows; returns its length. */
static size_t sampled_layout(const struct vcase *c, size_t n_rows,
                             size_t *sampled_at)
{
    size_t total = 0;
    for (int o = 0; o < c->n_out; o++) {
        int i = c->outs[o];
        sampled_at[i] = total;
        total += output_sampled(c, i) ? n_rows * row_length(c, i)
                                      : c->count[i];
    }
    return total;
}

/* The worst relative error of the checked values of GOT (all outputs)
 * against REF (sampled_layout's); its buffer in *WORST. */
static double check_output(const struct vcase *c, const float *got,
                           const double *ref, const size_t *rows_idx,
                           size_t n_rows, int *worst)
{
    size_t at[SPECL_MAX_BUFFERS];
    double err = 0;
    *worst = c->out;
    for (size_t i = 0; i < c->out_count; i++) {
        if (isnan(got[i])) {
            return INFINITY;
        }
    }
    sampled_layout(c, n_rows, at);
    for (int o = 0; o < c->n_out; o++) {
        int i = c->outs[o];
        const float *g = got + c->out_at[i];
        size_t per_row = row_length(c, i);
        size_t n = output_sampled(c, i) ? n_rows * per_row : c->count[i];
        float *picked = malloc((n ? n : 1) * sizeof *picked);
        if (picked == NULL) {
            return INFINITY;
        }
        if (output_sampled(c, i)) {
            for (size_t r = 0; r < n_rows; r++) {
                memcpy(picked + r * per_row, g + rows_idx[r] * per_row,
                       per_row * sizeof *picked);
            }
        } else {
            memcpy(picked, g, n * sizeof *picked);
        }
        double e = rel_l2(picked, ref + at[i], n);
        free(picked);
        if (!(e <= err)) {
            err = e;
            *worst = i;
        }
    }
    return err;
}

/* sampled_reference for ops whose rows depend on one another: their
 * reference_rows on the whole case, into REF (whose outputs SUB_OUT and
 * FULL_OUT point into), which it frees on failure. */
static double *sampled_reference_rows(const struct vcase *c,
                                      const size_t *rows_idx, size_t sample,
                                      double *ref, double *const *sub_out,
                                      double *const *full_out)
{
    const float *in[SPECL_MAX_BUFFERS] = {NULL};
    double *out[SPECL_MAX_BUFFERS] = {NULL};
    for (int i = 0; i < c->plan.n_buffer; i++) {
        in[i] = c->host[i];
        out[i] = sub_out[i] != NULL ? sub_out[i] : full_out[i];
    }
    if (c->ks->op->reference_rows(c->ks, in, c->sizes, rows_idx, sample,
                                  out) < 0) {
        free(ref);
        return NULL;
    }
    return ref;
}

/* The float64 reference of the checked values (sampled_layout's): the
 * per-row outputs of the sampled rows only, from a case of just those
 * rows; the others from the whole case. */
static double *sampled_reference(const struct vcase *c, size_t *rows_idx,
                                 size_t *n_rows)
{
    size_t sample = c->rows <= 64 ? c->rows : 64;
    struct vcase sub = *c;
    size_t per_row[SPECL_MAX_BUFFERS], at[SPECL_MAX_BUFFERS];
    double *sub_out[SPECL_MAX_BUFFERS] = {NULL};
    double *full_out[SPECL_MAX_BUFFERS] = {NULL};
    int any_sub = 0, any_full = 0, failed = 0;
    for (size_t i = 0; i < sample; i++) {
        rows_idx[i] = sample == c->rows ? i : i * (c->rows - 1) / (sample - 1);
    }
    *n_rows = sample;
    double *ref = calloc(sampled_layout(c, sample, at) + 1, sizeof *ref);
    if (ref == NULL) {
        return NULL;
    }
    for (int o = 0; o < c->n_out; o++) {
        int i = c->outs[o];
        if (output_sampled(c, i)) {
            sub_out[i] = ref + at[i];
            any_sub = 1;
        } else {
            full_out[i] = ref + at[i];
            any_full = 1;
        }
    }
    if (c->ks->op->reference_rows != NULL) {
        return sampled_reference_rows(c, rows_idx, sample, ref, sub_out,
                                      full_out);
    }
    /* A case of just the sampled rows: per-row buffers gathered. */
    for (int b = 0; b < c->plan.n_buffer; b++) {
        per_row[b] = row_length(c, b);
        sub.host[b] = c->host[b];
        if (per_row[b] == 0 || c->host[b] == NULL || !any_sub) {
            continue;
        }
        sub.host[b] = malloc(sample * per_row[b] * sizeof(float));
        if (sub.host[b] == NULL) {
            failed = 1;
            continue;
        }
        for (size_t i = 0; i < sample; i++) {
            memcpy(sub.host[b] + i * per_row[b],
                   c->host[b] + rows_idx[i] * per_row[b],
                   per_row[b] * sizeof(float));
        }
        sub.count[b] = sample * per_row[b];
    }
    sub.rows = sample;
    sub.sizes[0] = sample;
    if (!failed && any_sub && vcase_reference_into(&sub, sub_out) < 0) {
        failed = 1;
    }
    if (!failed && any_full && vcase_reference_into(c, full_out) < 0) {
        failed = 1;
    }
    for (int b = 0; b < c->plan.n_buffer; b++) {
        if (sub.host[b] != c->host[b]) {
            free(sub.host[b]);
        }
    }
    if (failed) {
        free(ref);
        return NULL;
    }
    return ref;
}

void verify_variant(struct measure_case *bc, enqueue_fn fn,
                    struct result *r)
{
    const double *ref = bc->ref;
    const size_t *rows_idx = bc->rows_idx;
    size_t n_rows = bc->n_rows;
    float *got = bc->got;
    struct run_events ev;
    int canary_ok = 1;
    memset(&ev, 0, sizeof ev);
    cl_int err = vbuffers_reset_output(bc->rt, &bc->vc, &bc->sets[0]);
    if (err == CL_SUCCESS) {
        err = fn(bc, 0, &ev);
    }
    if (err == CL_SUCCESS) {
        err = clFinish(bc->rt->queue);
    }
    run_events_release(&ev);
    if (err == CL_SUCCESS) {
        err = vbuffers_read_output(bc->rt, &bc->vc, &bc->sets[0], got,
                                   &canary_ok);
    }
    if (err != CL_SUCCESS) {
        snprintf(r->note, sizeof r->note, "%s",
                 canary_ok ? rt_status(err) : "wrote past its output");
        return;
    }
    int worst;
    r->err = check_output(&bc->vc, got, ref, rows_idx, n_rows, &worst);
    r->ok = r->err <= error_bound(bc->vc.ks);
    if (!r->ok && bc->vc.n_out > 1) {
        snprintf(r->note, sizeof r->note, "WRONG: %s error %.3g > %.3g",
                 bc->vc.plan.buffer[worst].name, r->err,
                 error_bound(bc->vc.ks));
    } else if (!r->ok) {
        snprintf(r->note, sizeof r->note, "WRONG: error %.3g > %.3g",
                 r->err, error_bound(bc->vc.ks));
    }
}

/* The op's floor figures for the case. */
enum stub_outcome measure_stub(struct measure_case *mc,
                               const struct variant_set *vs, int reps,
                               struct result *r, char **log)
{
    enum stub_outcome outcome = STUB_TIMED;
    cl_int err = stub_load(&mc->stub, mc->rt, vs, -1, log);
    r->compile_s = mc->stub.compile_s;
    r->build_s = mc->stub.create_s;
    if (err != CL_SUCCESS) {
        snprintf(r->note, sizeof r->note, "build failed: %s", rt_status(err));
        return STUB_BUILD_FAILED;
    }
    /* The variant that runs at the case's rows: a device's rows range's
     * where it was tuned at several row counts. */
    int at = stub_variant_at(&mc->stub, mc->vc.sizes);
    r->stub_variant = at >= 0 ? at : mc->stub.variant;
    const struct path *path = stub_path(&mc->stub, mc->vc.sizes);
    r->stub_path =
        path != NULL ? (int)(path - mc->stub.plans[r->stub_variant].path)
                     : -1;
    snprintf(r->path_why, sizeof r->path_why, "%s",
             path != NULL ? path->why : "");
    double t0 = now_us();
    verify_variant(mc, run_specl, r);
    r->check_s = (now_us() - t0) / 1e6;
    if (!r->ok) {
        outcome = STUB_WRONG;
    } else {
        t0 = now_us();
        err = time_variant(mc->rt, run_specl, mc, mc->n_sets, reps, r);
        r->timing_s = (now_us() - t0) / 1e6;
        if (err != CL_SUCCESS) {
            r->ok = 0;
            snprintf(r->note, sizeof r->note, "%s", rt_status(err));
            outcome = STUB_RUN_FAILED;
        }
    }
    stub_unload(&mc->stub);
    return outcome;
}

cl_int mcase_init(struct measure_case *mc, const struct rt *rt,
                  struct naive_stubs *naive, const struct kernel_spec *ks,
                  size_t rows, unsigned long seed, int rotate)
{
    size_t sizes[SPECL_MAX_SIZES] = {0};
    ks->op->bench_sizes(ks, sizes);
    sizes[0] = rows;
    return mcase_init_sizes(mc, rt, naive, ks, sizes, seed, rotate);
}

cl_int mcase_init_sizes(struct measure_case *mc, const struct rt *rt,
                        struct naive_stubs *naive,
                        const struct kernel_spec *ks, const size_t *sizes,
                        unsigned long seed, int rotate)
{
    struct vdist dist = {0.0, 1.0};
    cl_int err = CL_SUCCESS;
    memset(mc, 0, sizeof *mc);
    mc->rt = rt;
    mc->naive = naive;
    if (vcase_init_sizes(&mc->vc, ks, sizes, seed, dist) < 0) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    ks->op->costs(ks, mc->vc.sizes, &mc->bytes, &mc->flops);
    int want = 1;
    while (rotate && want < MAX_SETS &&
           mc->bytes * want < 64.0 * (1 << 20) &&
           mc->bytes * (want + 1) < 1024.0 * (1 << 20)) {
        want++;
    }
    for (int s = 0; s < want && err == CL_SUCCESS; s++) {
        err = vbuffers_create(rt, &mc->vc, &mc->sets[s]);
        if (err == CL_SUCCESS) {
            mc->n_sets++;
        }
    }
    if (mc->n_sets > 0) {
        err = CL_SUCCESS; /* fewer sets than wished for is fine */
    }
    mc->ref = err ? NULL : sampled_reference(&mc->vc, mc->rows_idx,
                                             &mc->n_rows);
    mc->got = malloc((mc->vc.out_count + 1) * sizeof *mc->got);
    if (err == CL_SUCCESS && (mc->ref == NULL || mc->got == NULL)) {
        err = CL_OUT_OF_HOST_MEMORY;
    }
    if (err != CL_SUCCESS) {
        mcase_free(mc);
    }
    return err;
}

void mcase_free(struct measure_case *mc)
{
    for (int s = 0; s < MAX_SETS; s++) {
        if (mc->t[s] != NULL) {
            clReleaseMemObject(mc->t[s]);
        }
        if (mc->t2[s] != NULL) {
            clReleaseMemObject(mc->t2[s]);
        }
        vbuffers_free(&mc->sets[s]);
    }
    stub_unload(&mc->stub);
    if (mc->mark != NULL) {
        clReleaseKernel(mc->mark);
    }
    if (mc->mark_program != NULL) {
        clReleaseProgram(mc->mark_program);
    }
    free(mc->ref);
    free(mc->got);
    vcase_free(&mc->vc);
    memset(mc, 0, sizeof *mc);
}

long measure_default_rows(const struct kernel_spec *ks)
{
    size_t sizes[SPECL_MAX_SIZES] = {0};
    ks->op->bench_sizes(ks, sizes);
    return (long)sizes[0];
}
