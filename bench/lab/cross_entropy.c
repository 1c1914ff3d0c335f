/* cross_entropy.c - times the lab kernels of cross_entropy.cl (bf16,
 * mean loss and dlogits) against a copy of the same bytes, after
 * checking each against a float64 reference on a sample of rows.
 *
 *   cc -O2 -o xlab bench/lab/cross_entropy.c -lOpenCL -lm
 *   xlab CL_FILE ROWS V [stream W U | split W U G | regs W S G |
 *                        local W U G | emitted NAME.cl W]...
 *
 * emitted: the cross_entropy kernel of an emitted bf16 NAME.cl (mean,
 * dlogits; vocab V, wg W, one row a group) alone, the count in scratch
 * as its first launch would leave it. LAB_OPTS: build options added to
 * every program's.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_util.h"

#define REPS 15

static cl_context ctx;
static cl_command_queue q;
static cl_device_id dev;

/* Median µs of REPS runs of kernel K over DIMS dimensions of G items in
 * groups of L. */
static double time_kernel(cl_kernel k, cl_uint dims, const size_t *g,
                          const size_t *l)
{
    return lab_time_kernel(q, k, dims, g, l, 3, REPS);
}

static cl_program build(const char *src, const char *opts)
{
    cl_int err;
    cl_program p =
        clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &err);
    CHECK(err);
    static char log[1 << 16];
    cl_int b = clBuildProgram(p, 1, &dev, opts, NULL, NULL);
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    if (b != CL_SUCCESS) {
        fprintf(stderr, "%s\n%s\n", opts, log);
        exit(1);
    }
    for (char *line = strtok(log, "\n"); line != NULL;
         line = strtok(NULL, "\n")) {
        if (strstr(line, "registers") || strstr(line, "spill stores") ||
            strstr(line, "entry function")) {
            printf("  %s\n", line);
        }
    }
    return p;
}

/* The worst error of dlogits DX (bf16) against float64 on a sample of
 * rows, in units of bf16's rounding of each value, and of the losses. */
static void check_rows(const unsigned short *hx, const int *hl,
                       const unsigned short *hdx, const float *loss,
                       size_t loss_step, int rows, int V, float g,
                       double *worst, double *worst_loss)
{
    *worst = 0;
    *worst_loss = 0;
    for (int r = 0; r < rows; r += rows > 64 ? rows / 61 : 1) {
        const unsigned short *xr = hx + (size_t)r * V;
        double m = -1e300, s = 0;
        for (int j = 0; j < V; j++) {
            m = fmax(m, bf(xr[j]));
        }
        for (int j = 0; j < V; j++) {
            s += exp(bf(xr[j]) - m);
        }
        const double l = m + log(s) - bf(xr[hl[r]]);
        *worst_loss = fmax(*worst_loss,
                           fabs(l - loss[(size_t)r * loss_step]) / fabs(l));
        for (int j = 0; j < V; j++) {
            const double d = (exp(bf(xr[j]) - m) / s - (j == hl[r])) * g;
            const double e = fabs(bf(hdx[(size_t)r * V + j]) - d) /
                             (fabs(d) * 0x1p-8 + 1e-30);
            *worst = fmax(*worst, e);
        }
    }
}

static void run_emitted(const char *path, int W, int rows, int V,
                        const unsigned short *hx, const int *hl, cl_mem bx,
                        cl_mem bl, cl_mem bdx, double copy_us)
{
    char *src = slurp(path);
    printf("emitted %s W %d\n", path, W);
    char opts[256];
    snprintf(opts, sizeof opts, "-cl-std=CL1.2 -cl-nv-verbose %s",
             getenv("LAB_OPTS") ? getenv("LAB_OPTS") : "");
    cl_program p = build(src, opts);
    cl_int err;
    cl_kernel k = clCreateKernel(p, "cross_entropy", &err);
    CHECK(err);
    const size_t n = (size_t)rows * V;
    float *hs = malloc(((size_t)rows + 1) * sizeof(float));
    hs[0] = (float)rows;
    cl_mem bs = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                               ((size_t)rows + 1) * 4, hs, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof rows, &rows));
    CHECK(clSetKernelArg(k, 1, sizeof bx, &bx));
    CHECK(clSetKernelArg(k, 2, sizeof bl, &bl));
    CHECK(clSetKernelArg(k, 3, sizeof bdx, &bdx));
    CHECK(clSetKernelArg(k, 4, sizeof bs, &bs));
    const size_t global[2] = {(size_t)W, (size_t)rows}, local[2] = {W, 1};
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, local, 0, NULL,
                                 NULL));
    unsigned short *hdx = malloc(n * 2);
    CHECK(clEnqueueReadBuffer(q, bdx, CL_TRUE, 0, n * 2, hdx, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, bs, CL_TRUE, 0, ((size_t)rows + 1) * 4, hs,
                              0, NULL, NULL));
    double worst, worst_loss;
    check_rows(hx, hl, hdx, hs + 1, 1, rows, V, 1.0f / (float)rows, &worst,
               &worst_loss);
    const double us = time_kernel(k, 2, global, local), bytes = 2.0 * n * 2;
    printf("  %s: %.1f us, %.0f GB/s, %.1f%% of copy (dlogits %.2f of "
           "bf16's rounding, loss %.1e)\n",
           worst <= 1.01 && worst_loss < 1e-5 ? "ok" : "WRONG", us,
           bytes / us / 1e3, 100 * copy_us / us, worst, worst_loss);
    CHECK(clReleaseMemObject(bs));
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseProgram(p));
    free(hs);
    free(hdx);
    free(src);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: xlab CL_FILE ROWS V [stream W | regs W S "
                        "G]...\n");
        return 2;
    }
    char *src = slurp(argv[1]);
    const int rows = atoi(argv[2]), V = atoi(argv[3]);
    if (rows < 1 || V < 8 || V % 8 != 0) {
        fprintf(stderr, "xlab: ROWS >= 1, V a multiple of 8\n");
        return 2;
    }
    cl_platform_id pl;
    CHECK(clGetPlatformIDs(1, &pl, NULL));
    CHECK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_GPU, 1, &dev, NULL));
    cl_int err;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);

    const size_t n = (size_t)rows * V;
    unsigned short *hx = malloc(n * 2), *hdx = malloc(n * 2);
    int *hl = malloc((size_t)rows * sizeof(int));
    float *hloss = malloc((size_t)rows * sizeof(float));
    srand(11);
    for (size_t i = 0; i < n; i++) {
        hx[i] = tobf((float)rand() / RAND_MAX * 16 - 8);
    }
    for (int r = 0; r < rows; r++) {
        hl[r] = rand() % V;
    }
    const float g = 1.0f / (float)rows;
    const cl_mem_flags in = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    cl_mem bx = clCreateBuffer(ctx, in, n * 2, hx, &err);
    CHECK(err);
    cl_mem bl = clCreateBuffer(ctx, in, (size_t)rows * 4, hl, &err);
    CHECK(err);
    cl_mem bdx = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 2, NULL, &err);
    CHECK(err);
    cl_mem bloss =
        clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)rows * 4, NULL, &err);
    CHECK(err);
    const size_t sync_words = 2 + (size_t)rows * (2 + 2 * 64);
    cl_mem bsync =
        clCreateBuffer(ctx, CL_MEM_READ_WRITE, sync_words * 4, NULL, &err);
    CHECK(err);
    const cl_uint zero = 0;
    CHECK(clEnqueueFillBuffer(q, bsync, &zero, 4, 0, sync_words * 4, 0, NULL,
                              NULL));

    char opts[256];
    snprintf(opts, sizeof opts,
             "-cl-std=CL1.2 -cl-nv-verbose -DV=%d -DW=32 -DS=1 -DG=1", V);
    cl_program pc = build(src, opts);
    cl_kernel kc = clCreateKernel(pc, "copy", &err);
    CHECK(err);
    CHECK(clSetKernelArg(kc, 0, sizeof bx, &bx));
    CHECK(clSetKernelArg(kc, 1, sizeof bdx, &bdx));
    const double copy_us =
        time_kernel(kc, 1, (size_t[]){n / 8}, (size_t[]){256});
    const double bytes = 2.0 * n * 2;
    printf("rows %d V %d copy %.1f us %.0f GB/s\n", rows, V, copy_us,
           bytes / copy_us / 1e3);
    CHECK(clReleaseKernel(kc));
    CHECK(clReleaseProgram(pc));

    for (int a = 4; a < argc;) {
        const char *kind = argv[a];
        if (strcmp(kind, "emitted") == 0 && a + 2 < argc) {
            run_emitted(argv[a + 1], atoi(argv[a + 2]), rows, V, hx, hl, bx,
                        bl, bdx, copy_us);
            a += 3;
            continue;
        }
        const int regs = strcmp(kind, "stream") != 0;
        if (regs && strcmp(kind, "regs") != 0 && strcmp(kind, "split") != 0 &&
            strcmp(kind, "local") != 0) {
            fprintf(stderr, "xlab: '%s' is not stream, split, regs or "
                    "local\n",
                    kind);
            return 2;
        }
        if (a + (regs ? 3 : 2) >= argc) {
            fprintf(stderr, "xlab: %s wants %s\n", kind,
                    regs ? "W S G" : "W U");
            return 2;
        }
        /* S: vectors an item holds (regs) or loads at once (stream) */
        const int W = atoi(argv[a + 1]);
        const int S = atoi(argv[a + 2]);
        const int G = regs ? atoi(argv[a + 3]) : 1;
        a += regs ? 4 : 3;
        if (strcmp(kind, "regs") == 0 && (size_t)W * S * G * 8 < (size_t)V) {
            printf("regs W %d S %d G %d: does not cover V\n", W, S, G);
            continue;
        }
        snprintf(opts, sizeof opts,
                 "-cl-std=CL1.2 -cl-nv-verbose -DV=%d -DW=%d -DS=%d -DU=%d "
                 "-DG=%d %s",
                 V, W, S, S, G, getenv("LAB_OPTS") ? getenv("LAB_OPTS") : "");
        printf("%s W %d S %d G %d\n", kind, W, S, G);
        cl_program p = build(src, opts);
        char kname[32];
        snprintf(kname, sizeof kname, "xent_%s", kind);
        cl_kernel k = clCreateKernel(p, kname, &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, 0, sizeof bx, &bx));
        CHECK(clSetKernelArg(k, 1, sizeof bl, &bl));
        CHECK(clSetKernelArg(k, 2, sizeof bdx, &bdx));
        CHECK(clSetKernelArg(k, 3, sizeof bloss, &bloss));
        CHECK(clSetKernelArg(k, 4, sizeof g, &g));
        const cl_uint groups = (cl_uint)rows * G;
        if (regs) {
            CHECK(clSetKernelArg(k, 5, sizeof bsync, &bsync));
            CHECK(clSetKernelArg(k, 6, sizeof groups, &groups));
        }
        const size_t gsize = (size_t)groups * W;
        /* the row words' layout follows G: zeros for each variant */
        CHECK(clEnqueueFillBuffer(q, bsync, &zero, 4, 0, sync_words * 4, 0,
                                  NULL, NULL));
        CHECK(clEnqueueFillBuffer(q, bdx, &zero, 4, 0, n * 2, 0, NULL, NULL));
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsize, (size_t[]){W}, 0,
                                     NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, bdx, CL_TRUE, 0, n * 2, hdx, 0, NULL,
                                  NULL));
        CHECK(clEnqueueReadBuffer(q, bloss, CL_TRUE, 0, (size_t)rows * 4,
                                  hloss, 0, NULL, NULL));
        double worst, worst_loss;
        check_rows(hx, hl, hdx, hloss, 1, rows, V, g, &worst, &worst_loss);
        const int ok = worst <= 1.01 && worst_loss < 1e-5;
        const double us = time_kernel(k, 1, &gsize, (size_t[]){W});
        printf("  %s: %.1f us, %.0f GB/s, %.1f%% of copy (dlogits %.2f of "
               "bf16's rounding, loss %.1e)\n",
               ok ? "ok" : "WRONG", us, bytes / us / 1e3, 100 * copy_us / us,
               worst, worst_loss);
        CHECK(clReleaseKernel(k));
        CHECK(clReleaseProgram(p));
    }
    CHECK(clReleaseMemObject(bx));
    CHECK(clReleaseMemObject(bl));
    CHECK(clReleaseMemObject(bdx));
    CHECK(clReleaseMemObject(bloss));
    CHECK(clReleaseMemObject(bsync));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    free(src);
    free(hx);
    free(hdx);
    free(hl);
    free(hloss);
    return 0;
}
