/* xpass.c (lab) - times bench/lab/xpass.cl: T = X·A and dA = Xᵀ·G from
 * one read of X (ROWS x K float32, rank 16), as partial sums per block of
 * columns (T) and of rows (dA), each config checked against float64
 * first, beside a kernel that only reads X.
 * Usage: xpass CL_FILE [WARPS RB STAGES PARTS]... (default 4 512 3 3);
 * PARTS 1 T alone, 2 dA alone, 3 both; LAB_OPTS adds build options
 * (-DP_LOCAL=1, -DU=2), and LAB_SIMT=1 times xpass_simt (float
 * multiply-adds; PARTS 3) instead. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_util.h"

#define K 4096
#define ROWS 4096
#define RANK 16
#define KB 128
#define REPS 30

/* Relative L2 error of GOT (n doubles) against REF. */
static double rel_l2(const double *got, const double *ref, size_t n)
{
    double e = 0, r = 0;
    for (size_t i = 0; i < n; i++) {
        double d = got[i] - ref[i];
        e += d * d;
        r += ref[i] * ref[i];
    }
    return sqrt(e / r);
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argc - 2) % 4 != 0) {
        fprintf(stderr, "usage: %s CL_FILE [WARPS RB STAGES PARTS]...\n",
                argv[0]);
        return 2;
    }
    const char *src = slurp(argv[1]);
    cl_platform_id pl;
    cl_device_id dev;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &pl, NULL));
    CHECK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_GPU, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q =
        clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);

    const size_t n = (size_t)ROWS * K, np = (size_t)RANK * K,
                 ng = (size_t)ROWS * RANK;
    float *hx = malloc(n * 4), *hp = malloc(np * 4), *hg = malloc(ng * 4);
    double *rt = calloc(ng, 8), *rda = calloc(np, 8);
    srand(11);
    for (size_t i = 0; i < n; i++) {
        hx[i] = (float)rand() / RAND_MAX * 2 - 1;
    }
    for (size_t i = 0; i < np; i++) {
        hp[i] = (float)rand() / RAND_MAX * 2 - 1;
    }
    for (size_t i = 0; i < ng; i++) {
        hg[i] = (float)rand() / RAND_MAX * 2 - 1;
    }
    for (size_t r = 0; r < ROWS; r++) {
        for (int j = 0; j < RANK; j++) {
            double t = 0;
            const double gv = hg[r * RANK + j];
            for (size_t k = 0; k < K; k++) {
                double xv = hx[r * K + k];
                t += xv * hp[j * K + k];
                rda[j * K + k] += gv * xv;
            }
            rt[r * RANK + j] = t;
        }
    }
    const cl_mem_flags in = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    cl_mem bx = clCreateBuffer(ctx, in, n * 4, hx, &err);
    CHECK(err);
    cl_mem bp = clCreateBuffer(ctx, in, np * 4, hp, &err);
    CHECK(err);
    cl_mem bg = clCreateBuffer(ctx, in, ng * 4, hg, &err);
    CHECK(err);
    const size_t tp_floats = (size_t)(K / KB) * ng;
    cl_mem btp = clCreateBuffer(ctx, CL_MEM_READ_WRITE, tp_floats * 4, NULL,
                                &err);
    CHECK(err);
    const size_t dap_most = (size_t)(ROWS / 64) * np;
    cl_mem bdap = clCreateBuffer(ctx, CL_MEM_READ_WRITE, dap_most * 4, NULL,
                                 &err);
    CHECK(err);
    float *got = malloc((tp_floats > dap_most ? tp_floats : dap_most) * 4);
    double *sum = malloc((ng > np ? ng : np) * 8);
    int rows = ROWS;

    {
        cl_program p = lab_build(ctx, dev, src,
                             "-cl-std=CL1.2 -DK=4096 -DWARPS=4 -DRB=512 "
                             "-DSTAGES=3 -DPENDING_GROUPS=1 -DPARTS=3");
        cl_kernel k = clCreateKernel(p, "read_x", &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, 0, sizeof rows, &rows));
        CHECK(clSetKernelArg(k, 1, sizeof bx, &bx));
        CHECK(clSetKernelArg(k, 2, sizeof btp, &btp));
        size_t g[1] = {132 * 8 * 256}, l[1] = {256};
        double us = lab_time_kernel(q, k, 1, g, l, 3, REPS);
        printf("read X: %.2f us (%.0f GB/s)\n", us, n * 4 / us / 1e3);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
    for (int a = 2; a == 2 || a < argc; a += 4) {
        int warps = 4, rb = 512, stages = 3, parts = 3;
        if (a < argc) {
            warps = atoi(argv[a]);
            rb = atoi(argv[a + 1]);
            stages = atoi(argv[a + 2]);
            parts = atoi(argv[a + 3]);
        }
        char opts[256];
        snprintf(opts, sizeof opts,
                 "-cl-std=CL1.2 -cl-nv-verbose -DK=%d -DWARPS=%d -DRB=%d "
                 "-DSTAGES=%d -DPENDING_GROUPS=%d -DPARTS=%d %s",
                 K, warps, rb, stages, stages - 2, parts,
                 getenv("LAB_OPTS") ? getenv("LAB_OPTS") : "");
        printf("warps %d, rb %d, stages %d, parts %d:\n", warps, rb, stages,
               parts);
        cl_program p = lab_build(ctx, dev, src, opts);
        const char *name = getenv("LAB_SIMT") ? "xpass_simt" : "xpass";
        cl_kernel k = clCreateKernel(p, name, &err);
        CHECK(err);
        const cl_mem args[] = {bx, bp, bg, btp, bdap};
        CHECK(clSetKernelArg(k, 0, sizeof rows, &rows));
        for (cl_uint i = 0; i < 5; i++) {
            CHECK(clSetKernelArg(k, i + 1, sizeof args[i], &args[i]));
        }
        size_t g[2] = {(size_t)(K / KB) * 32 * warps, (size_t)(ROWS / rb)},
               l[2] = {32 * (size_t)warps, 1};
        CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, g, l, 0, NULL, NULL));
        double et = -1, eda = -1;
        if (parts & 1) {
            CHECK(clEnqueueReadBuffer(q, btp, CL_TRUE, 0, tp_floats * 4, got,
                                      0, NULL, NULL));
            for (size_t i = 0; i < ng; i++) {
                sum[i] = 0;
                for (int b = 0; b < K / KB; b++) {
                    sum[i] += got[b * ng + i];
                }
            }
            et = rel_l2(sum, rt, ng);
        }
        if (parts & 2) {
            size_t blocks = ROWS / rb;
            CHECK(clEnqueueReadBuffer(q, bdap, CL_TRUE, 0, blocks * np * 4,
                                      got, 0, NULL, NULL));
            for (size_t i = 0; i < np; i++) {
                sum[i] = 0;
                for (size_t b = 0; b < blocks; b++) {
                    sum[i] += got[b * np + i];
                }
            }
            eda = rel_l2(sum, rda, np);
        }
        double us = lab_time_kernel(q, k, 2, g, l, 3, REPS);
        printf("  %s: %.2f us (%.0f GB/s of X); rel L2 T %.2e, dA "
               "%.2e (-1: not computed)\n",
               name, us, n * 4 / us / 1e3, et, eda);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
    return 0;
}
