/* lab.c - times candidate kernel designs (bench/lab/lab.cl) on one device
 * before they go into the templates: the X*A pre-pass, the LoRA delta as
 * pre-pass + expand, and split-K decode. Each variant is checked against
 * a float64 reference first. Usage: lab [P:D] [xa|delta|decode|all] */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_util.h"

static cl_context ctx;
static cl_command_queue queue;
static cl_device_id dev;
static char *source;

static void open_device(const char *sel)
{
    int p = 0, d = 0;
    if (sel != NULL) {
        sscanf(sel, "%d:%d", &p, &d);
    }
    cl_platform_id ps[8];
    cl_uint np;
    CHECK(clGetPlatformIDs(8, ps, &np));
    cl_device_id ds[8];
    cl_uint nd;
    CHECK(clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 8, ds, &nd));
    dev = ds[d];
    char name[256];
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL));
    printf("device: %s\n", name);
    cl_int err;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    queue = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
}

static cl_program build(const char *opts)
{
    cl_int err;
    const char *src = source;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    char full[1024];
    snprintf(full, sizeof full, "-cl-mad-enable %s%s %s", opts,
             getenv("LAB_NV") ? " -cl-nv-verbose" : "",
             getenv("LAB_OPTS") ? getenv("LAB_OPTS") : "");
    cl_int built = clBuildProgram(p, 1, &dev, full, NULL, NULL);
    if (built == CL_SUCCESS && getenv("LAB_NV")) {
        char log[20000] = "";
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log,
                              NULL);
        for (char *l = strtok(log, "\n"); l != NULL; l = strtok(NULL, "\n")) {
            if (strstr(l, "Compiling entry") || strstr(l, "registers")) {
                printf("    | %s\n", l);
            }
        }
    }
    if (built != CL_SUCCESS) {
        char log[20000];
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log,
                              NULL);
        fprintf(stderr, "build failed (%s):\n%s\n", opts, log);
        return NULL;
    }
    return p;
}

static cl_kernel kernel(cl_program p, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    CHECK(err);
    return k;
}

static cl_mem buffer(size_t floats, const float *init)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, floats * 4, NULL, &err);
    CHECK(err);
    if (init != NULL) {
        CHECK(clEnqueueWriteBuffer(queue, m, CL_TRUE, 0, floats * 4, init, 0,
                                   NULL, NULL));
    }
    return m;
}

static void poison(cl_mem m, size_t floats)
{
    const float nan = NAN;
    CHECK(clEnqueueFillBuffer(queue, m, &nan, 4, 0, floats * 4, 0, NULL,
                              NULL));
}

static float *randoms(size_t n, unsigned seed)
{
    float *v = malloc(n * sizeof *v);
    unsigned s = seed;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = (float)((s >> 8) / 8388608.0 - 1.0);
    }
    return v;
}

#define ARG(k, i, v) CHECK(clSetKernelArg((k), (i), sizeof(v), &(v)))

static void launch(cl_kernel k, size_t g0, size_t g1, size_t l0, size_t l1,
                   cl_event *ev)
{
    size_t g[2] = {g0, g1}, l[2] = {l0, l1};
    CHECK(clEnqueueNDRangeKernel(queue, k, 2, NULL, g, l0 ? l : NULL, 0,
                                 NULL, ev));
}

static double span_us(cl_event *ev, int n)
{
    cl_ulong t0, t1;
    CHECK(clWaitForEvents(n, ev));
    CHECK(clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_START,
                                  sizeof t0, &t0, NULL));
    CHECK(clGetEventProfilingInfo(ev[n - 1], CL_PROFILING_COMMAND_END,
                                  sizeof t1, &t1, NULL));
    for (int i = 0; i < n; i++) {
        clReleaseEvent(ev[i]);
    }
    return (double)(t1 - t0) / 1e3;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* relative L2 error of got against ref; NaN anywhere fails */
static double rel_err(const float *got, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(got[i])) {
            return INFINITY;
        }
        num += (got[i] - ref[i]) * (got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static void read(cl_mem m, float *host, size_t floats)
{
    CHECK(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, floats * 4, host, 0,
                              NULL, NULL));
}

#define SETS 4
static int REPS_ = 30;
#define REPS_MAX 30
#define REPS REPS_

/* ---- copy bandwidth ---- */
static double copy_gbs(void)
{
    const size_t n = (size_t)64 << 20 >> 2;
    cl_mem a = buffer(n, NULL), b = buffer(n, NULL);
    poison(a, n);
    cl_program p = build("");
    cl_kernel k = kernel(p, "copy4");
    ARG(k, 0, a);
    ARG(k, 1, b);
    double t[REPS_MAX];
    for (int r = -3; r < REPS; r++) {
        cl_event ev;
        launch(k, n / 4, 1, 256, 1, &ev);
        double us = span_us(&ev, 1);
        if (r >= 0) {
            t[r] = us;
        }
    }
    double us = median(t, REPS);
    clReleaseKernel(k);
    double gbs = 2.0 * n * 4 / us / 1e3;
    printf("copy 64 MiB: %.1f us, %.0f GB/s\n", us, gbs);
    cl_kernel kf = kernel(p, "fill4");
    const float one = 1.0f;
    ARG(kf, 0, b);
    ARG(kf, 1, one);
    for (int r = -3; r < REPS; r++) {
        cl_event ev;
        launch(kf, n / 4, 1, 256, 1, &ev);
        double u = span_us(&ev, 1);
        if (r >= 0) {
            t[r] = u;
        }
    }
    double fus = median(t, REPS);
    printf("write-only 64 MiB: %.1f us, %.0f GB/s\n", fus, n * 4 / fus / 1e3);
    clReleaseKernel(kf);
    for (int per = 4; per <= 64; per *= 4) {
        cl_kernel ks = kernel(p, "sum4");
        ARG(ks, 0, a);
        ARG(ks, 1, b);
        ARG(ks, 2, per);
        for (int r = -3; r < REPS; r++) {
            cl_event ev;
            launch(ks, n / 4 / per, 1, 256, 1, &ev);
            double u = span_us(&ev, 1);
            if (r >= 0) {
                t[r] = u;
            }
        }
        double rus = median(t, REPS);
        printf("read-only 64 MiB (%d float4 per item): %.1f us, %.0f GB/s\n",
               per, rus, n * 4 / rus / 1e3);
        clReleaseKernel(ks);
    }
    clReleaseProgram(p);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    return gbs;
}

/* ---- X*A pre-pass and the delta ---- */
struct xa_variant {
    int xk, xt, xw, kc, xp, xu;
};

static const struct xa_variant xa_variants[] = {
    {8, 32, 4, 256, 1, 0},  {8, 32, 4, 256, 2, 0}, {8, 32, 4, 256, 2, 1},
    {8, 32, 2, 256, 2, 0},  {8, 64, 2, 256, 2, 0}, {8, 16, 4, 256, 2, 0},
    {16, 16, 4, 256, 2, 0}, {8, 32, 4, 512, 2, 0}, {8, 32, 4, 512, 1, 0},
};

struct expand_variant {
    int ec, er;
};
static const struct expand_variant ex_variants[] = {
    {256, 64}, {256, 128}, {128, 64}, {128, 128}, {64, 128}, {256, 256},
};

static void xa_opts(char *o, size_t n, const struct xa_variant *v, int k,
                    int nn, int r)
{
    snprintf(o, n,
             "-DK=%d -DN=%d -DR=%d -DXK=%d -DXT=%d -DXW=%d -DKC=%d "
             "-DXP=%d -DXU=%d",
             k, nn, r, v->xk, v->xt, v->xw, v->kc, v->xp, v->xu);
}

static void run_xa(int delta, double copy)
{
    const int M = getenv("LAB_SMALL") ? 300 : 4096, K = 4096, N = 4096, R = 16;
    const float scale = 2.0f;
    float *xh = randoms((size_t)M * K, 1), *ah = randoms((size_t)K * R, 2);
    float *bh = randoms((size_t)R * N, 3);
    for (size_t i = 0; i < (size_t)K * R; i++) {
        ah[i] *= 0.05f;
    }
    double *tref = calloc((size_t)M * R, sizeof *tref);
    for (int m = 0; m < M; m++) {
        for (int k = 0; k < K; k++) {
            const double xv = xh[(size_t)m * K + k];
            for (int j = 0; j < R; j++) {
                tref[m * R + j] += xv * ah[(size_t)k * R + j];
            }
        }
    }
    double *yref = NULL;
    if (delta) {
        yref = malloc((size_t)M * N * sizeof *yref);
        for (int m = 0; m < M; m++) {
            for (int n = 0; n < N; n++) {
                double s = 0;
                for (int j = 0; j < R; j++) {
                    s += tref[m * R + j] * bh[(size_t)j * N + n];
                }
                yref[(size_t)m * N + n] = scale * s;
            }
        }
    }
    cl_mem x[SETS];
    for (int i = 0; i < SETS; i++) {
        x[i] = buffer((size_t)M * K, xh);
    }
    cl_mem a = buffer((size_t)K * R, ah), b = buffer((size_t)R * N, bh);
    cl_mem tp = buffer((size_t)64 * M * R, NULL);
    cl_mem y = buffer((size_t)M * N, NULL);
    float *th = malloc((size_t)64 * M * R * sizeof *th);
    float *yh = delta ? malloc((size_t)M * N * sizeof *yh) : NULL;
    double bytes = (double)M * K * 4 + (delta ? (double)M * N * 4 : 0);
    printf("\n%s M=%d K=%d N=%d r=%d: floor %.1f us at copy speed\n",
           delta ? "delta (xa_split + expand)" : "xa_split", M, K, N, R,
           bytes / copy / 1e3);
    int nx = (int)(sizeof xa_variants / sizeof xa_variants[0]);
    int ne = delta ? (int)(sizeof ex_variants / sizeof ex_variants[0]) : 1;
    for (int vi = getenv("LAB_VARIANT") ? atoi(getenv("LAB_VARIANT")) : 0;
         vi < nx; vi++) {
        for (int ei = 0; ei < ne; ei++) {
            const struct xa_variant *v = &xa_variants[vi];
            /* delta: every expand variant with the first two xa ones, else
             * only the first expand variant. */
            if (delta && ei > 0) {
                continue;
            }
            char opts[512];
            xa_opts(opts, sizeof opts, v, K, N, R);
            if (delta) {
                size_t l = strlen(opts);
                snprintf(opts + l, sizeof opts - l, " -DEC=%d -DER=%d",
                         ex_variants[ei].ec, ex_variants[ei].er);
            }
            cl_program p = build(opts);
            if (p == NULL) {
                continue;
            }
            const char *kname = getenv("LAB_KERNEL");
            cl_kernel kx = kernel(p, kname ? kname : "xa_split");
            cl_kernel ke = kname ? kx : kernel(p, "expand");
            const int ns = (K + v->kc - 1) / v->kc;
            const int rb = v->xt * v->xw;
            ARG(kx, 0, M);
            ARG(kx, 2, a);
            ARG(kx, 3, tp);
            if (ke != kx) {
                ARG(ke, 0, M);
                ARG(ke, 1, ns);
                ARG(ke, 2, tp);
                ARG(ke, 3, b);
                ARG(ke, 4, y);
            }
            const int ec = ex_variants[ei].ec, er = ex_variants[ei].er;
            double t[REPS_MAX];
            double err = 0;
            for (int r = -3; r < REPS; r++) {
                ARG(kx, 1, x[(r + 3) % SETS]);
                if (r == -3) {
                    poison(tp, (size_t)ns * M * R);
                    poison(y, (size_t)M * N);
                }
                cl_event ev[2];
                launch(kx, (size_t)ns * v->xk,
                       (size_t)(M + rb - 1) / rb * v->xt, v->xk, v->xt,
                       &ev[0]);
                if (delta) {
                    launch(ke, (size_t)((N / 4 + ec - 1) / ec) * ec,
                           (size_t)(M + er - 1) / er, ec, 1, &ev[1]);
                }
                double us = span_us(ev, delta ? 2 : 1);
                if (r == -3) {
                    if (delta) {
                        read(y, yh, (size_t)M * N);
                        err = rel_err(yh, yref, (size_t)M * N);
                    } else {
                        read(tp, th, (size_t)ns * M * R);
                        for (int s = 1; s < ns; s++) {
                            for (size_t i = 0; i < (size_t)M * R; i++) {
                                th[i] += th[(size_t)s * M * R + i];
                            }
                        }
                        err = rel_err(th, tref, (size_t)M * R);
                    }
                }
                if (r >= 0) {
                    t[r] = us;
                }
            }
            double us = median(t, REPS);
            printf("  xk=%-3d xt=%-3d xw=%d kc=%-5d xp=%d xu=%d",
                   v->xk, v->xt, v->xw, v->kc, v->xp, v->xu);
            if (delta) {
                printf(" ec=%-3d er=%-3d", ec, er);
            }
            printf("  %8.1f us %6.0f GB/s %5.1f%% of copy  err %.1e%s\n",
                   us, bytes / us / 1e3, 100.0 * bytes / us / 1e3 / copy,
                   err, err < 1e-5 ? "" : "  WRONG");
            clReleaseKernel(kx);
            if (ke != kx) {
                clReleaseKernel(ke);
            }
            clReleaseProgram(p);
            if (kname) {
                break;
            }
        }
        if (getenv("LAB_KERNEL")) {
            break;
        }
    }
    for (int i = 0; i < SETS; i++) {
        clReleaseMemObject(x[i]);
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(tp);
    clReleaseMemObject(y);
    free(xh);
    free(ah);
    free(bh);
    free(tref);
    free(yref);
    free(th);
    free(yh);
}

/* ---- decode: split-K over work-groups, then a combine kernel ---- */
struct decode_variant {
    int dn, dk, ds, du;
};
static const struct decode_variant dec_variants[] = {
    {8, 32, 1, 2},  {8, 32, 2, 2},  {8, 32, 4, 2}, {8, 32, 8, 2},
    {16, 16, 4, 2}, {16, 16, 8, 2}, {8, 16, 8, 2}, {8, 32, 4, 4},
    {32, 8, 8, 2},  {16, 32, 4, 2}, {8, 64, 4, 2}, {16, 16, 16, 2},
};

static void run_decode(double copy)
{
    const int M = 8, K = 4096, N = 4096, R = 16;
    const float scale = 2.0f;
    float *xh = randoms((size_t)M * K, 4), *wh = randoms((size_t)K * N, 5);
    float *ah = randoms((size_t)K * R, 6), *bh = randoms((size_t)R * N, 7);
    double *tref = calloc((size_t)M * R, sizeof *tref);
    double *yref = calloc((size_t)M * N, sizeof *yref);
    for (int m = 0; m < M; m++) {
        for (int k = 0; k < K; k++) {
            const double xv = xh[(size_t)m * K + k];
            for (int j = 0; j < R; j++) {
                tref[m * R + j] += xv * ah[(size_t)k * R + j];
            }
            for (int n = 0; n < N; n++) {
                yref[(size_t)m * N + n] += xv * wh[(size_t)k * N + n];
            }
        }
        for (int n = 0; n < N; n++) {
            double s = 0;
            for (int j = 0; j < R; j++) {
                s += tref[m * R + j] * bh[(size_t)j * N + n];
            }
            yref[(size_t)m * N + n] += scale * s;
        }
    }
    cl_mem w[SETS];
    for (int i = 0; i < SETS; i++) {
        w[i] = buffer((size_t)K * N, wh);
    }
    cl_mem x = buffer((size_t)M * K, xh), a = buffer((size_t)K * R, ah);
    cl_mem b = buffer((size_t)R * N, bh), y = buffer((size_t)M * N, NULL);
    cl_mem yp = buffer((size_t)32 * M * N, NULL);
    cl_mem tp = buffer((size_t)32 * M * R, NULL);
    float *yh = malloc((size_t)M * N * sizeof *yh);
    double bytes = (double)K * N * 4;
    printf("\ndecode M=%d K=%d N=%d r=%d: floor %.1f us at copy speed\n", M,
           K, N, R, bytes / copy / 1e3);
    const char *ext = getenv("LAB_KERNEL");
    if (ext != NULL) {
        /* an emitted lora_decode: LAB_DN x LAB_DK work-items */
        int dn = atoi(getenv("LAB_DN") ? getenv("LAB_DN") : "8");
        int dk = atoi(getenv("LAB_DK") ? getenv("LAB_DK") : "32");
        cl_program p = build("");
        if (p == NULL) {
            exit(1);
        }
        cl_kernel kd = kernel(p, ext);
        ARG(kd, 0, M);
        ARG(kd, 1, x);
        ARG(kd, 3, a);
        ARG(kd, 4, b);
        ARG(kd, 5, y);
        double t[REPS_MAX], err = 0;
        for (int r = -3; r < REPS; r++) {
            ARG(kd, 2, w[(r + 3) % SETS]);
            if (r == -3) {
                poison(y, (size_t)M * N);
            }
            cl_event ev;
            launch(kd, (size_t)N / (4 * dn) * dn, (size_t)dk, dn, dk, &ev);
            double us = span_us(&ev, 1);
            if (r == -3) {
                read(y, yh, (size_t)M * N);
                err = rel_err(yh, yref, (size_t)M * N);
            }
            if (r >= 0) {
                t[r] = us;
            }
        }
        double us = median(t, REPS);
        printf("  %s dn=%d dk=%d: %7.1f us (%5.0f GB/s) err %.1e%s\n", ext,
               dn, dk, us, bytes / us / 1e3, err,
               err < 1e-5 ? "" : "  WRONG");
        clReleaseKernel(kd);
        clReleaseProgram(p);
    }
    for (size_t vi = 0; ext == NULL &&
                        vi < sizeof dec_variants / sizeof dec_variants[0];
         vi++) {
        const struct decode_variant *v = &dec_variants[vi];
        char opts[256];
        snprintf(opts, sizeof opts,
                 "-DK=%d -DN=%d -DR=%d -DDN=%d -DDK=%d -DDR=%d -DDU=%d", K,
                 N, R, v->dn, v->dk, M, v->du);
        cl_program p = build(opts);
        if (p == NULL) {
            continue;
        }
        cl_kernel ks = kernel(p, "dsplit"), kc = kernel(p, "dcombine");
        ARG(ks, 0, x);
        ARG(ks, 2, a);
        ARG(ks, 3, yp);
        ARG(ks, 4, tp);
        ARG(kc, 0, v->ds);
        ARG(kc, 1, yp);
        ARG(kc, 2, tp);
        ARG(kc, 3, b);
        ARG(kc, 4, y);
        double t[REPS_MAX], t1[REPS_MAX], err = 0;
        for (int r = -3; r < REPS; r++) {
            ARG(ks, 1, w[(r + 3) % SETS]);
            if (r == -3) {
                poison(y, (size_t)M * N);
            }
            cl_event ev[2];
            launch(ks, (size_t)N / (4 * v->dn) * v->dn, (size_t)v->ds * v->dk,
                   v->dn, v->dk, &ev[0]);
            launch(kc, (size_t)N / 4, 1, 256, 1, &ev[1]);
            CHECK(clWaitForEvents(2, ev));
            cl_ulong s0, e0;
            CHECK(clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_START,
                                          sizeof s0, &s0, NULL));
            CHECK(clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_END,
                                          sizeof e0, &e0, NULL));
            double us = span_us(ev, 2);
            if (r == -3) {
                read(y, yh, (size_t)M * N);
                err = rel_err(yh, yref, (size_t)M * N);
            }
            if (r >= 0) {
                t[r] = us;
                t1[r] = (double)(e0 - s0) / 1e3;
            }
        }
        double us = median(t, REPS), us1 = median(t1, REPS);
        printf("  dn=%-3d dk=%-3d ds=%-3d du=%d  %7.1f us (split %6.1f us, "
               "%5.0f GB/s)  %5.1f%% of copy  err %.1e%s\n",
               v->dn, v->dk, v->ds, v->du, us, us1, bytes / us1 / 1e3,
               100.0 * bytes / us / 1e3 / copy, err,
               err < 1e-5 ? "" : "  WRONG");
        clReleaseKernel(ks);
        clReleaseKernel(kc);
        clReleaseProgram(p);
    }
    for (int i = 0; i < SETS; i++) {
        clReleaseMemObject(w[i]);
    }
    clReleaseMemObject(x);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(y);
    clReleaseMemObject(yp);
    clReleaseMemObject(tp);
    free(xh);
    free(wh);
    free(ah);
    free(bh);
    free(tref);
    free(yref);
    free(yh);
}

/* ---- an emitted lora_main at llama-q, timed; 64 outputs checked ---- */
static void run_main(void)
{
    const int M = getenv("LAB_M") ? atoi(getenv("LAB_M")) : 4096;
    const int K = 4096, N = 4096, R = 16, S = 16;
    const int tm = atoi(getenv("LAB_TM") ? getenv("LAB_TM") : "64");
    const int tn = atoi(getenv("LAB_TN") ? getenv("LAB_TN") : "128");
    const int wm = 8, wn = 8;
    float *xh = randoms((size_t)M * K, 11), *wh = randoms((size_t)K * N, 12);
    float *bh = randoms((size_t)R * N, 13), *th = randoms((size_t)M * S * R, 14);
    cl_mem x[2], w[2];
    for (int i = 0; i < 2; i++) {
        x[i] = buffer((size_t)M * K, xh);
        w[i] = buffer((size_t)K * N, wh);
    }
    cl_mem b = buffer((size_t)R * N, bh), t = buffer((size_t)M * S * R, th);
    cl_mem y = buffer((size_t)M * N, NULL);
    cl_program p = build("");
    if (p == NULL) {
        exit(1);
    }
    cl_kernel k = kernel(p, "lora_main");
    ARG(k, 0, M);
    ARG(k, 3, b);
    ARG(k, 4, y);
    ARG(k, 5, t);
    double tt[REPS_MAX];
    for (int r = -2; r < REPS; r++) {
        ARG(k, 1, x[(r + 2) % 2]);
        ARG(k, 2, w[(r + 2) % 2]);
        cl_event ev;
        launch(k, (size_t)N / tn * (tn / wn), (size_t)M / tm * (tm / wm),
               tn / wn, tm / wm, &ev);
        double us = span_us(&ev, 1);
        if (r >= 0) {
            tt[r] = us;
        }
    }
    float *yh = malloc((size_t)M * N * sizeof *yh);
    read(y, yh, (size_t)M * N);
    double worst = 0;
    unsigned seed = 7;
    for (int q = 0; q < 64; q++) {
        seed = seed * 1664525u + 1013904223u;
        int r = (int)(seed >> 8) % M, c = (int)((seed >> 4) % (unsigned)N);
        double ref = 0;
        for (int kk = 0; kk < K; kk++) {
            ref += (double)xh[(size_t)r * K + kk] * wh[(size_t)kk * N + c];
        }
        for (int j = 0; j < R; j++) {
            double tj = 0;
            for (int s2 = 0; s2 < S; s2++) {
                tj += th[((size_t)r * S + s2) * R + j];
            }
            ref += tj * bh[(size_t)j * N + c];
        }
        double e = fabs(yh[(size_t)r * N + c] - ref) / (fabs(ref) + 1);
        worst = e > worst ? e : worst;
    }
    double us = median(tt, REPS);
    printf("  lora_main M=%d %dx%d: %8.1f us %8.1f GFLOP/s  worst rel err "
           "%.1e%s\n",
           M, tm, tn, us, 2.0 * M * N * K / us / 1e3, worst,
           worst < 1e-4 ? "" : "  WRONG");
    clReleaseKernel(k);
    clReleaseProgram(p);
    for (int i = 0; i < 2; i++) {
        clReleaseMemObject(x[i]);
        clReleaseMemObject(w[i]);
    }
    clReleaseMemObject(b);
    clReleaseMemObject(t);
    clReleaseMemObject(y);
    free(xh);
    free(wh);
    free(bh);
    free(th);
    free(yh);
}

/* ---- decode's W access pattern alone ---- */
static void run_slices(double copy)
{
    const int K = 4096, N = 4096;
    static const int v[][3] = {{8, 32, 1},  {8, 32, 2},  {8, 32, 4},
                               {16, 16, 1}, {32, 8, 1},  {32, 8, 4},
                               {64, 4, 4},  {64, 4, 8},  {128, 2, 8},
                               {256, 1, 16}};
    float *wh = randoms((size_t)K * N, 21);
    cl_mem w[SETS];
    for (int i = 0; i < SETS; i++) {
        w[i] = buffer((size_t)K * N, wh);
    }
    cl_mem out = buffer((size_t)1 << 22, NULL);
    printf("\nW slices (K = N = 4096): read-only floor %.1f us at copy "
           "speed\n", (double)K * N * 4 / copy / 1e3);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char opts[128];
        snprintf(opts, sizeof opts, "-DK=%d -DN=%d -DSN=%d -DSK=%d", K, N,
                 v[i][0], v[i][1]);
        cl_program p = build(opts);
        if (p == NULL) {
            continue;
        }
        cl_kernel k = kernel(p, "slice_read");
        ARG(k, 1, out);
        double t[REPS_MAX];
        for (int r = -3; r < REPS; r++) {
            ARG(k, 0, w[(r + 3) % SETS]);
            cl_event ev;
            launch(k, (size_t)N / 4, (size_t)v[i][1] * v[i][2], v[i][0],
                   v[i][1], &ev);
            double us = span_us(&ev, 1);
            if (r >= 0) {
                t[r] = us;
            }
        }
        double us = median(t, REPS);
        printf("  slice %4d B, %3d x %3d items, K split %2d, %4d groups: "
               "%6.1f us %5.0f GB/s\n",
               v[i][0] * 16, v[i][0], v[i][1], v[i][2],
               N / (4 * v[i][0]) * v[i][2], us,
               (double)K * N * 4 / us / 1e3);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
    for (int i = 0; i < SETS; i++) {
        clReleaseMemObject(w[i]);
    }
    clReleaseMemObject(out);
    free(wh);
}

int main(int argc, char **argv)
{
    const char *sel = argc > 1 ? argv[1] : NULL;
    const char *what = argc > 2 ? argv[2] : "all";
    const char *path = getenv("LAB_CL") ? getenv("LAB_CL") : "bench/lab/lab.cl";
    if (getenv("LAB_SMALL")) {
        REPS_ = 2;
    }
    source = slurp(path);
    open_device(sel);
    char *own = slurp("bench/lab/lab.cl");
    char *ext = source;
    source = own;
    double copy = copy_gbs();
    source = ext;
    free(own);
    if (!strcmp(what, "build")) {
        /* the compiler's report for LAB_CL (with LAB_NV set) */
        cl_program p = build("");
        if (p != NULL) {
            clReleaseProgram(p);
        }
    }
    if (!strcmp(what, "slices")) {
        run_slices(copy);
    }
    if (!strcmp(what, "main")) {
        run_main();
    }
    if (!strcmp(what, "all") || !strcmp(what, "xa")) {
        run_xa(0, copy);
    }
    if (!strcmp(what, "all") || !strcmp(what, "delta")) {
        run_xa(1, copy);
    }
    if (!strcmp(what, "all") || !strcmp(what, "decode")) {
        run_decode(copy);
    }
    free(source);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    return 0;
}
