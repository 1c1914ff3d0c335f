/* bench.c - `specl bench`: the emitted kernels side by side with the naive
 * kernels and CLBlast on one device, against the device's own ceilings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clblast_c.h>

#include "buf.h"
#include "render.h"
#include "runtime.h"
#include "spec.h"
#include "verify.h"

#define MAX_REPS 1000

struct bench_opts {
    const char *device;
    long rows;          /* 0: per op default */
    int reps;           /* timed runs per variant */
    int csv, json, quick;
    int no_naive;
    const char *kernel; /* only this kernel; NULL: all */
};

/* The device's measured ceilings. */
struct ceilings {
    double copy_gbs;    /* read + write bytes per second / 1e9 */
    double gflops;      /* fp32 multiply-add rate */
};

/* One measured variant. */
struct result {
    const char *variant;
    int ok;             /* ran and verified */
    double err;         /* relative L2 error against float64 */
    double us;          /* median event time */
    double wall_us;     /* median host time per call, enqueue to finish */
    char note[96];
};

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

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* An enqueue of one variant: fills EVENTS, returns a status. */
typedef cl_int (*enqueue_fn)(void *ctx, int set, cl_event *events,
                             int *n_events);

/* Times FN: warm-up, then up to REPS runs (fewer when one run is slow, so
 * that a variant takes about BUDGET_US); median event and wall time. */
#define BUDGET_US 2e6
static cl_int time_variant(const struct rt *rt, enqueue_fn fn, void *ctx,
                           int n_sets, int reps, struct result *r)
{
    double ev_us[MAX_REPS], wall[MAX_REPS];
    cl_event events[4];
    int n;
    cl_int err;
    for (int i = 0; i < 3; i++) {
        double t0 = now_us();
        err = fn(ctx, i % n_sets, events, &n);
        if (err == CL_SUCCESS) {
            err = clFinish(rt->queue);
        }
        for (int e = 0; e < n; e++) {
            clReleaseEvent(events[e]);
        }
        if (err != CL_SUCCESS) {
            return err;
        }
        double one = now_us() - t0;
        if (one * reps > BUDGET_US) {
            reps = one * 3 > BUDGET_US ? 3 : (int)(BUDGET_US / one);
        }
        if (one > 1e5) {
            break; /* slow enough that warm-up is done */
        }
    }
    for (int i = 0; i < reps; i++) {
        double t0 = now_us();
        err = fn(ctx, i % n_sets, events, &n);
        if (err == CL_SUCCESS) {
            err = clFinish(rt->queue);
        }
        wall[i] = now_us() - t0;
        if (err != CL_SUCCESS) {
            return err;
        }
        ev_us[i] = rt_events_ns(events, n) / 1e3;
        for (int e = 0; e < n; e++) {
            clReleaseEvent(events[e]);
        }
    }
    r->us = median(ev_us, reps);
    r->wall_us = median(wall, reps);
    return CL_SUCCESS;
}

/* ---- ceilings ------------------------------------------------------- */

static cl_int measure_ceilings(const struct rt *rt, struct ceilings *c)
{
    cl_int err;
    struct buf src;
    char msg[128];
    buf_init(&src);
    render(&src, template_text("ceilings.cl"), NULL, msg, sizeof msg);
    cl_program prog = rt_build(rt, buf_str(&src), "-cl-std=CL1.2", &err,
                               NULL);
    buf_free(&src);
    if (prog == NULL) {
        return err;
    }
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(rt->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
                    sizeof max_alloc, &max_alloc, NULL);
    size_t bytes = (size_t)256 << 20;
    while (bytes > max_alloc / 2) {
        bytes /= 2;
    }
    cl_mem a = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem b = err ? NULL
                   : clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, bytes, NULL,
                                    &err);
    cl_kernel copy = err ? NULL : clCreateKernel(prog, "copy4", &err);
    cl_kernel fma = err ? NULL : clCreateKernel(prog, "fma_peak", &err);
    if (err == CL_SUCCESS) {
        float zero = 0;
        err = clEnqueueFillBuffer(rt->queue, a, &zero, sizeof zero, 0, bytes,
                                  0, NULL, NULL);
    }
    cl_int n4 = (cl_int)(bytes / 16);
    size_t global = (size_t)n4, local = 256;
    while (local > rt->max_wg) {
        local /= 2;
    }
    double best_copy = 1e30, best_fma = 1e30;
    for (int i = 0; i < 12 && err == CL_SUCCESS; i++) {
        cl_event ev;
        clSetKernelArg(copy, 0, sizeof a, &a);
        clSetKernelArg(copy, 1, sizeof b, &b);
        clSetKernelArg(copy, 2, sizeof n4, &n4);
        err = clEnqueueNDRangeKernel(rt->queue, copy, 1, NULL, &global,
                                     &local, 0, NULL, &ev);
        if (err == CL_SUCCESS) {
            clWaitForEvents(1, &ev);
            double ns = rt_events_ns(&ev, 1);
            best_copy = i > 1 && ns < best_copy ? ns : best_copy;
            clReleaseEvent(ev);
        }
    }
    size_t fglobal = (size_t)rt->units * 8192;
    cl_mem out = err ? NULL
                     : clCreateBuffer(rt->ctx, CL_MEM_WRITE_ONLY,
                                      fglobal * sizeof(float), NULL, &err);
    for (int i = 0; i < 8 && err == CL_SUCCESS; i++) {
        cl_event ev;
        float fa = 0.999f, fb = 0.001f;
        clSetKernelArg(fma, 0, sizeof out, &out);
        clSetKernelArg(fma, 1, sizeof fa, &fa);
        clSetKernelArg(fma, 2, sizeof fb, &fb);
        err = clEnqueueNDRangeKernel(rt->queue, fma, 1, NULL, &fglobal,
                                     &local, 0, NULL, &ev);
        if (err == CL_SUCCESS) {
            clWaitForEvents(1, &ev);
            double ns = rt_events_ns(&ev, 1);
            best_fma = i > 1 && ns < best_fma ? ns : best_fma;
            clReleaseEvent(ev);
        }
    }
    c->copy_gbs = 2.0 * (double)bytes / best_copy;
    c->gflops = 2.0 * 4 * 8 * 512 * (double)fglobal / best_fma;
    if (out) clReleaseMemObject(out);
    if (copy) clReleaseKernel(copy);
    if (fma) clReleaseKernel(fma);
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    clReleaseProgram(prog);
    return err;
}

/* ---- one kernel ------------------------------------------------------ */

/* A case with several sets of device buffers, rotated between runs so that
 * a cache large enough for one set does not flatter the figures. */
struct bench_case {
    const struct rt *rt;
    struct vcase vc;
    struct vbuffers sets[8];
    int n_sets;
    struct rt_op op;
    struct naive *naive;
    cl_mem t[8];                /* CLBlast's X*A */
};

static cl_int run_specl(void *p, int set, cl_event *events, int *n)
{
    struct bench_case *bc = p;
    return rt_op_enqueue(bc->rt, &bc->op, bc->vc.rows, bc->sets[set].mem,
                         events, n);
}

static cl_int run_naive(void *p, int set, cl_event *events, int *n)
{
    struct bench_case *bc = p;
    return naive_enqueue(bc->rt, bc->naive, &bc->vc, &bc->sets[set], events,
                         n);
}

static int buffer_named(const struct vcase *c, const char *name)
{
    for (int i = 0; i < c->plan.n_buffer; i++) {
        if (strcmp(c->plan.buffer[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

static double plan_number(const struct plan *p, const char *name)
{
    for (int i = 0; i < p->n_constant; i++) {
        if (strcmp(p->constant[i].name, name) == 0) {
            return strtod(p->constant[i].value, NULL);
        }
    }
    return 0;
}

/* CLBlast: Y = X*W (beta 0, or 1 to accumulate), T = scale*X*A,
 * Y += T*B: what a user would write without specl. */
static cl_int run_clblast(void *p, int set, cl_event *events, int *n)
{
    struct bench_case *bc = p;
    const struct vcase *c = &bc->vc;
    cl_command_queue q = bc->rt->queue;
    size_t M = c->rows;
    size_t K = (size_t)plan_number(&c->plan, "IN_FEATURES");
    size_t N = (size_t)plan_number(&c->plan, "OUT_FEATURES");
    size_t R = (size_t)plan_number(&c->plan, "RANK");
    float scale = (float)plan_number(&c->plan, "SCALE");
    int base = spec_field(c->ks, "base") != 0;
    float beta = spec_field(c->ks, "accumulate") != 0 ? 1.0f : 0.0f;
    const cl_mem *m = bc->sets[set].mem;
    cl_mem x = m[buffer_named(c, "x")], y = m[buffer_named(c, "y")];
    cl_mem a = m[buffer_named(c, "a")], b = m[buffer_named(c, "b")];
    CLBlastStatusCode s = CLBlastSuccess;
    *n = 0;
    if (base) {
        cl_mem w = m[buffer_named(c, "w")];
        s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo,
                         CLBlastTransposeNo, M, N, K, 1.0f, x, 0, K, w, 0, N,
                         beta, y, 0, N, &q, &events[(*n)++]);
        beta = 1.0f;
    }
    if (s == CLBlastSuccess) {
        s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo,
                         CLBlastTransposeNo, M, R, K, scale, x, 0, K, a, 0, R,
                         0.0f, bc->t[set], 0, R, &q, &events[(*n)++]);
    }
    if (s == CLBlastSuccess) {
        s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo,
                         CLBlastTransposeNo, M, N, R, 1.0f, bc->t[set], 0, R,
                         b, 0, N, beta, y, 0, N, &q, &events[(*n)++]);
    }
    if (s != CLBlastSuccess) {
        (*n)--;
        for (int e = 0; e < *n; e++) {
            clReleaseEvent(events[e]);
        }
        *n = 0;
        return s < 0 ? (cl_int)s : CL_INVALID_OPERATION;
    }
    return CL_SUCCESS;
}

/* Rows of the output checked against float64 (all of them for small
 * cases; a spread sample for large ones, where the reference would take
 * minutes). */
static double check_output(const struct vcase *c, const float *got,
                           const double *ref_rows, const size_t *rows_idx,
                           size_t n_rows)
{
    size_t per_row = c->count[c->out] / c->rows;
    double worst = 0;
    float *picked = malloc(n_rows * per_row * sizeof *picked);
    if (picked == NULL) {
        return INFINITY;
    }
    for (size_t i = 0; i < n_rows; i++) {
        memcpy(picked + i * per_row, got + rows_idx[i] * per_row,
               per_row * sizeof *picked);
    }
    for (size_t i = 0; i < c->count[c->out]; i++) {
        if (isnan(got[i])) {
            free(picked);
            return INFINITY;
        }
    }
    worst = rel_l2(picked, ref_rows, n_rows * per_row);
    free(picked);
    return worst;
}

/* The float64 reference for the sampled rows only. */
static double *sampled_reference(const struct vcase *c, size_t *rows_idx,
                                 size_t *n_rows)
{
    size_t sample = c->rows <= 64 ? c->rows : 64;
    struct vcase sub = *c;
    size_t per_row[SPECL_MAX_BUFFERS];
    double *ref;
    for (size_t i = 0; i < sample; i++) {
        rows_idx[i] = sample == c->rows ? i : i * (c->rows - 1) / (sample - 1);
    }
    *n_rows = sample;
    /* A case of just the sampled rows: per-row buffers gathered. */
    for (int b = 0; b < c->plan.n_buffer; b++) {
        per_row[b] = (size_t)c->plan.buffer[b].per_row;
        if (per_row[b] == 0 || c->host[b] == NULL) {
            continue;
        }
        sub.host[b] = malloc(sample * per_row[b] * sizeof(float));
        if (sub.host[b] == NULL) {
            return NULL;
        }
        for (size_t i = 0; i < sample; i++) {
            memcpy(sub.host[b] + i * per_row[b],
                   c->host[b] + rows_idx[i] * per_row[b],
                   per_row[b] * sizeof(float));
        }
        sub.count[b] = sample * per_row[b];
    }
    sub.rows = sample;
    ref = vcase_reference(&sub);
    for (int b = 0; b < c->plan.n_buffer; b++) {
        if (per_row[b] != 0 && c->host[b] != NULL) {
            free(sub.host[b]);
        }
    }
    return ref;
}

/* Runs variant FN once on set 0 with a poisoned output and checks it. */
static void verify_variant(struct bench_case *bc, enqueue_fn fn,
                           const double *ref, const size_t *rows_idx,
                           size_t n_rows, float *got, struct result *r)
{
    cl_event events[4];
    int n = 0, canary_ok = 1;
    cl_int err = vbuffers_reset_output(bc->rt, &bc->vc, &bc->sets[0]);
    if (err == CL_SUCCESS) {
        err = fn(bc, 0, events, &n);
    }
    if (err == CL_SUCCESS) {
        err = clFinish(bc->rt->queue);
    }
    for (int e = 0; e < n; e++) {
        clReleaseEvent(events[e]);
    }
    if (err == CL_SUCCESS) {
        err = vbuffers_read_output(bc->rt, &bc->vc, &bc->sets[0], got,
                                   &canary_ok);
    }
    if (err != CL_SUCCESS) {
        snprintf(r->note, sizeof r->note, "%s",
                 canary_ok ? rt_status(err) : "wrote past its output");
        return;
    }
    r->err = check_output(&bc->vc, got, ref, rows_idx, n_rows);
    r->ok = r->err <= error_bound(bc->vc.ks);
    if (!r->ok) {
        snprintf(r->note, sizeof r->note, "WRONG: error %.3g > %.3g",
                 r->err, error_bound(bc->vc.ks));
    }
}

static double case_bytes(const struct vcase *c)
{
    double bytes = 0;
    for (int b = 0; b < c->plan.n_buffer; b++) {
        if (c->host[b] != NULL) {
            bytes += (double)c->count[b];
        }
    }
    if (strcmp(c->ks->op->name, "lora_forward") == 0 &&
        spec_field(c->ks, "accumulate") != 0) {
        bytes += (double)c->count[c->out]; /* y is read too */
    }
    return bytes * (double)dtype_size(c->ks->dtype);
}

static double case_flops(const struct vcase *c)
{
    double M = (double)c->rows;
    if (strcmp(c->ks->op->name, "lora_forward") == 0) {
        double K = plan_number(&c->plan, "IN_FEATURES");
        double N = plan_number(&c->plan, "OUT_FEATURES");
        double R = plan_number(&c->plan, "RANK");
        double base = spec_field(c->ks, "base") != 0 ? 2 * M * K * N : 0;
        return base + 2 * M * K * R + 2 * M * R * N;
    }
    return 5.0 * (double)c->count[c->out];
}

static long default_rows(const struct kernel_spec *ks)
{
    if (strcmp(ks->op->name, "lora_forward") == 0) {
        return 512;
    }
    long d = (long)spec_field(ks, "features");
    long rows = (16L << 20) / d;
    return rows < 1 ? 1 : rows;
}

static void shape_text(const struct vcase *c, char *s, size_t size)
{
    if (strcmp(c->ks->op->name, "lora_forward") == 0) {
        snprintf(s, size, "M=%zu K=%.0f N=%.0f r=%.0f%s%s", c->rows,
                 plan_number(&c->plan, "IN_FEATURES"),
                 plan_number(&c->plan, "OUT_FEATURES"),
                 plan_number(&c->plan, "RANK"),
                 spec_field(c->ks, "base") != 0 ? "" : " delta",
                 spec_field(c->ks, "accumulate") != 0 ? " +=" : "");
    } else {
        snprintf(s, size, "%zux%.0f", c->rows, spec_field(c->ks, "features"));
    }
}

static void print_row(const struct bench_opts *o, const struct rt *rt,
                      const struct vcase *c, const struct result *r,
                      const struct result *naive, const struct result *blas,
                      double floor_us, double bytes, double flops,
                      int *first)
{
    char shape[96];
    shape_text(c, shape, sizeof shape);
    double gbs = r->ok ? bytes / (r->us * 1e3) : 0;
    double gfl = r->ok ? flops / (r->us * 1e3) : 0;
    double pct = r->ok ? 100.0 * floor_us / r->us : 0;
    double vs_naive = naive && naive->ok && r->ok ? naive->us / r->us : 0;
    double vs_blas = blas && blas->ok && r->ok ? blas->us / r->us : 0;
    if (o->json) {
        printf("%s{\"kernel\":\"%s\",\"op\":\"%s\",\"shape\":\"%s\","
               "\"device\":\"%s\",\"variant\":\"%s\",\"ok\":%s,"
               "\"error\":%.3g,\"us\":%.2f,\"wall_us\":%.2f,\"gbs\":%.1f,"
               "\"gflops\":%.1f,\"pct_floor\":%.1f,\"vs_naive\":%.2f,"
               "\"vs_clblast\":%.2f,\"note\":\"%s\"}",
               *first ? "[\n" : ",\n", c->ks->name, c->ks->op->name, shape,
               rt->name, r->variant, r->ok ? "true" : "false",
               isfinite(r->err) ? r->err : -1, r->us, r->wall_us, gbs, gfl,
               pct, vs_naive, vs_blas, r->note);
    } else if (o->csv) {
        if (*first) {
            printf("kernel,op,shape,variant,ok,error,us,wall_us,gbs,gflops,"
                   "pct_floor,vs_naive,vs_clblast,note\n");
        }
        printf("%s,%s,%s,%s,%d,%.3g,%.2f,%.2f,%.1f,%.1f,%.1f,%.2f,%.2f,%s\n",
               c->ks->name, c->ks->op->name, shape, r->variant, r->ok, r->err,
               r->us, r->wall_us, gbs, gfl, pct, vs_naive, vs_blas, r->note);
    } else if (r->ok) {
        char naive_col[16] = "-", blas_col[16] = "-";
        if (vs_naive > 0) {
            snprintf(naive_col, sizeof naive_col, "%.2fx", vs_naive);
        }
        if (vs_blas > 0) {
            snprintf(blas_col, sizeof blas_col, "%.2fx", vs_blas);
        }
        printf("  %-8s %10.1f %10.1f %9.1f %9.1f %6.1f%% %9s %8s %9.2g\n",
               r->variant, r->us, r->wall_us, gbs, gfl, pct, naive_col,
               blas_col, r->err);
    } else {
        printf("  %-8s %s\n", r->variant, r->note[0] ? r->note : "skipped");
    }
    *first = 0;
}

static int bench_kernel(const struct bench_opts *o, const struct rt *rt,
                        const struct ceilings *ceil, struct naive *naive,
                        const struct kernel_spec *ks, int *first)
{
    struct bench_case bc;
    char *log = NULL;
    int failed = 0;
    memset(&bc, 0, sizeof bc);
    bc.rt = rt;
    bc.naive = naive;
    size_t rows = (size_t)(o->rows > 0 ? o->rows : default_rows(ks));
    struct vdist dist = {0.0, 1.0};
    if (vcase_init(&bc.vc, ks, rows, 20261122, dist) < 0) {
        fprintf(stderr, "specl: bench: out of memory for %s\n", ks->name);
        return 1;
    }
    double bytes = case_bytes(&bc.vc), flops = case_flops(&bc.vc);
    /* Enough sets to spill a 64 MiB cache, at most 8 and 1 GiB. */
    bc.n_sets = 1;
    while (bc.n_sets < 8 && bytes * bc.n_sets < 64.0 * (1 << 20) &&
           bytes * (bc.n_sets + 1) < 1024.0 * (1 << 20)) {
        bc.n_sets++;
    }
    if (o->quick) {
        bc.n_sets = 1;
    }
    cl_int err = CL_SUCCESS;
    for (int s = 0; s < bc.n_sets && err == CL_SUCCESS; s++) {
        err = vbuffers_create(rt, &bc.vc, &bc.sets[s]);
        if (err != CL_SUCCESS) {
            bc.n_sets = s;
        }
    }
    if (bc.n_sets == 0) {
        fprintf(stderr, "specl: bench: %s: cannot allocate buffers: %s\n",
                ks->name, rt_status(err));
        vcase_free(&bc.vc);
        return 1;
    }
    size_t rows_idx[64], n_rows = 0;
    double *ref = sampled_reference(&bc.vc, rows_idx, &n_rows);
    float *got = malloc(bc.vc.count[bc.vc.out] * sizeof *got);
    struct result res[3];
    memset(res, 0, sizeof res);
    res[0].variant = "specl";
    res[1].variant = "naive";
    res[2].variant = "clblast";

    double t_bytes = bytes / (ceil->copy_gbs * 1e3);
    double t_flops = flops / (ceil->gflops * 1e3);
    double floor_us = t_bytes > t_flops ? t_bytes : t_flops;
    if (!o->csv && !o->json) {
        char shape[96];
        shape_text(&bc.vc, shape, sizeof shape);
        printf("\n%s  %s %s %s\n", ks->name, ks->op->name, shape,
               dtype_name(ks->dtype));
        printf("  floor %.1f us, %s-bound: %.1f MB at %.0f GB/s = %.1f us; "
               "%.2f GFLOP at %.0f GFLOP/s = %.1f us\n",
               floor_us, t_bytes > t_flops ? "memory" : "compute", bytes / 1e6,
               ceil->copy_gbs, t_bytes, flops / 1e9, ceil->gflops, t_flops);
        printf("  %-8s %10s %10s %9s %9s %7s %9s %8s %9s\n", "variant",
               "time_us", "wall_us", "GB/s", "GFLOP/s", "%floor", "vs_naive",
               "vs_blas", "error");
    }
    if (ref == NULL || got == NULL) {
        fprintf(stderr, "specl: bench: out of memory for %s\n", ks->name);
        failed = 1;
        goto done;
    }
    err = rt_op_create(rt, ks, &bc.op, &log);
    if (err != CL_SUCCESS) {
        snprintf(res[0].note, sizeof res[0].note, "build failed: %s",
                 rt_status(err));
        fprintf(stderr, "%s: build log:\n%s\n", ks->name, log ? log : "");
        failed = 1;
    } else {
        verify_variant(&bc, run_specl, ref, rows_idx, n_rows, got, &res[0]);
        if (res[0].ok) {
            time_variant(rt, run_specl, &bc, bc.n_sets, o->reps, &res[0]);
        } else {
            failed = 1;
        }
    }
    if (!o->no_naive) {
        verify_variant(&bc, run_naive, ref, rows_idx, n_rows, got, &res[1]);
        if (res[1].ok) {
            time_variant(rt, run_naive, &bc, bc.n_sets, o->reps, &res[1]);
        }
    } else {
        snprintf(res[1].note, sizeof res[1].note, "skipped (--no-naive)");
    }
    int lora = strcmp(ks->op->name, "lora_forward") == 0;
    if (lora && ks->dtype == DTYPE_F32) {
        size_t R = (size_t)plan_number(&bc.vc.plan, "RANK");
        for (int s = 0; s < bc.n_sets && err == CL_SUCCESS; s++) {
            bc.t[s] = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE,
                                     rows * R * sizeof(float), NULL, &err);
        }
        verify_variant(&bc, run_clblast, ref, rows_idx, n_rows, got, &res[2]);
        if (res[2].ok) {
            time_variant(rt, run_clblast, &bc, bc.n_sets, o->reps, &res[2]);
        }
    } else {
        snprintf(res[2].note, sizeof res[2].note, "%s",
                 lora ? "no half-width sgemm" : "no such primitive in CLBlast");
    }
    for (int i = 0; i < 3; i++) {
        print_row(o, rt, &bc.vc, &res[i], &res[1], &res[2], floor_us, bytes,
                  flops, first);
    }
done:
    free(log);
    free(ref);
    free(got);
    for (int s = 0; s < 8; s++) {
        if (bc.t[s] != NULL) {
            clReleaseMemObject(bc.t[s]);
        }
    }
    for (int s = 0; s < bc.n_sets; s++) {
        vbuffers_free(&bc.sets[s]);
    }
    if (bc.op.program != NULL) {
        rt_op_destroy(&bc.op);
    }
    vcase_free(&bc.vc);
    return failed;
}

int specl_bench_main(int argc, char **argv);

int specl_bench_main(int argc, char **argv)
{
    struct bench_opts o = {NULL, 0, 50, 0, 0, 0, 0, NULL};
    struct spec_set set;
    struct diags d = {0, stderr};
    int n_files = 0;
    spec_set_init(&set);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if ((strcmp(a, "--device") == 0 || strcmp(a, "--rows") == 0 ||
             strcmp(a, "--reps") == 0 || strcmp(a, "--kernel") == 0) &&
            val == NULL) {
            fprintf(stderr, "specl: error: %s needs a value\n", a);
            spec_set_free(&set);
            return 2;
        }
        if (strcmp(a, "--device") == 0) {
            o.device = val;
            i++;
        } else if (strcmp(a, "--kernel") == 0) {
            o.kernel = val;
            i++;
        } else if (strcmp(a, "--rows") == 0 || strcmp(a, "--reps") == 0) {
            char *end;
            long v = strtol(val, &end, 10);
            if (*end != '\0' || v < 1 || v > (a[2] == 'r' && a[3] == 'e'
                                                  ? MAX_REPS
                                                  : 1L << 24)) {
                fprintf(stderr, "specl: error: bad %s '%s'\n", a, val);
                spec_set_free(&set);
                return 2;
            }
            if (a[3] == 'e') {
                o.reps = (int)v;
            } else {
                o.rows = v;
            }
            i++;
        } else if (strcmp(a, "--csv") == 0) {
            o.csv = 1;
        } else if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
            o.reps = 10;
        } else if (strcmp(a, "--no-naive") == 0) {
            o.no_naive = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "specl: error: unknown bench option '%s'\n", a);
            spec_set_free(&set);
            return 2;
        } else {
            spec_read_file(&set, a, &d);
            n_files++;
        }
    }
    if (n_files == 0) {
        fputs("specl: error: bench needs spec files\n", stderr);
        spec_set_free(&set);
        return 2;
    }
    if (d.count) {
        spec_set_free(&set);
        return 1;
    }
    struct rt rt;
    char err[256];
    if (rt_open(&rt, o.device, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s\n", err);
        spec_set_free(&set);
        return 1;
    }
    struct ceilings ceil;
    cl_int st = measure_ceilings(&rt, &ceil);
    if (st != CL_SUCCESS) {
        fprintf(stderr, "specl: error: cannot measure the device: %s\n",
                rt_status(st));
        rt_close(&rt);
        spec_set_free(&set);
        return 1;
    }
    if (!o.csv && !o.json) {
        printf("device: %s (%s, driver %s), %u units\n", rt.name,
               rt.platform_name, rt.driver, rt.units);
        printf("ceilings: copy %.0f GB/s, fp32 %.0f GFLOP/s (measured "
               "now); times are medians of %d runs\n",
               ceil.copy_gbs, ceil.gflops, o.reps);
    }
    struct naive naive;
    naive_init(&naive);
    int failed = 0, first = 1;
    int matched = 0;
    for (int k = 0; k < set.n_kernel; k++) {
        if (o.kernel != NULL && strcmp(o.kernel, set.kernel[k].name) != 0) {
            continue;
        }
        matched++;
        failed |= bench_kernel(&o, &rt, &ceil, &naive, &set.kernel[k],
                               &first);
    }
    if (o.json) {
        printf("%s]\n", first ? "[" : "");
    }
    if (matched == 0) {
        fprintf(stderr, "specl: error: no kernel named '%s'\n", o.kernel);
        failed = 1;
    }
    naive_free(&naive);
    rt_close(&rt);
    spec_set_free(&set);
    return failed;
}
