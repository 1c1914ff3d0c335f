/* skinny.c (lab) - times bench/lab/skinny.cl's float32 products with a
 * rank-16 matrix (lora_backward's T = X·A and G = dY·Bᵀ at ROWS x K,
 * both in one launch) on NVIDIA tensor cores, each config checked
 * against float64 first, beside a kernel that only reads X and dY.
 * Usage: skinny CL_FILE [WARPS MT SPLIT U STEP STAGES]... (default 8 1
 * 3 1 0 0); STEP 32 or 64 times skinny_cp (cp.async stages) too, and
 * STEP 0 the loads alone in two patterns (read_tiles). */
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
#define REPS 30

/* Relative L2 error of GOT (n floats) against REF. */
static double rel_l2(const float *got, const double *ref, size_t n)
{
    double e = 0, r = 0;
    for (size_t i = 0; i < n; i++) {
        double d = got[i] - ref[i];
        e += d * d;
        r += ref[i] * ref[i];
    }
    return sqrt(e / r);
}

/* OUT (ROWS x RANK) = IN (ROWS x K) times P (RANK x K) transposed, in
 * double. */
static void reference(const float *in, const float *p, double *out)
{
    for (int r = 0; r < ROWS; r++) {
        for (int j = 0; j < RANK; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) {
                s += (double)in[(size_t)r * K + k] * p[(size_t)j * K + k];
            }
            out[r * RANK + j] = s;
        }
    }
}

/* What each config's run shares: the queue, the buffers, the float64
 * references and room for an output read back. */
struct lab {
    cl_command_queue q;
    cl_mem x, a, y, b, t, g;
    double *ref_t, *ref_g;
    float *got;
};

/* Kernel NAME of P over G in groups of L: T and G poisoned, computed,
 * checked against float64, then timed; one line of figures. */
static void time_products(const struct lab *lab, cl_program p,
                          const char *name, const size_t g[2],
                          const size_t l[2])
{
    const size_t n = (size_t)ROWS * K, out_bytes = (size_t)ROWS * RANK * 4;
    const int rows = ROWS;
    const float nan = NAN;
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    CHECK(err);
    const cl_mem args[] = {lab->x, lab->a, lab->y, lab->b, lab->t, lab->g};
    CHECK(clSetKernelArg(k, 0, sizeof rows, &rows));
    for (cl_uint i = 0; i < 6; i++) {
        CHECK(clSetKernelArg(k, i + 1, sizeof args[i], &args[i]));
    }
    CHECK(clEnqueueFillBuffer(lab->q, lab->t, &nan, 4, 0, out_bytes, 0,
                              NULL, NULL));
    CHECK(clEnqueueFillBuffer(lab->q, lab->g, &nan, 4, 0, out_bytes, 0,
                              NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(lab->q, k, 2, NULL, g, l, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(lab->q, lab->t, CL_TRUE, 0, out_bytes,
                              lab->got, 0, NULL, NULL));
    double et = rel_l2(lab->got, lab->ref_t, (size_t)ROWS * RANK);
    CHECK(clEnqueueReadBuffer(lab->q, lab->g, CL_TRUE, 0, out_bytes,
                              lab->got, 0, NULL, NULL));
    double eg = rel_l2(lab->got, lab->ref_g, (size_t)ROWS * RANK);
    double us = lab_time_kernel(lab->q, k, 2, g, l, 3, REPS);
    double flops = 2.0 * 2 * ROWS * K * RANK;
    printf("  %s, T and G: %.2f us (%.0f GB/s of X and dY, %.1f TFLOP/s); "
           "rel L2 T %.2e, G %.2e%s\n", name, us, 2 * n * 4 / us / 1e3,
           flops / us / 1e6, et, eg,
           et < 1e-5 && eg < 1e-5 ? "" : " (past float32's 1e-5)");
    CHECK(clReleaseKernel(k));
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argc - 2) % 6 != 0) {
        fprintf(stderr, "usage: %s CL_FILE [WARPS MT SPLIT U STEP STAGES]...\n",
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

    size_t n = (size_t)ROWS * K, np = (size_t)RANK * K;
    float *hx = malloc(n * 4), *hy = malloc(n * 4), *ha = malloc(np * 4),
          *hb = malloc(np * 4), *got = malloc((size_t)ROWS * RANK * 4);
    double *rt = malloc((size_t)ROWS * RANK * 8),
           *rg = malloc((size_t)ROWS * RANK * 8);
    srand(11);
    for (size_t i = 0; i < n; i++) {
        hx[i] = (float)rand() / RAND_MAX * 2 - 1;
        hy[i] = (float)rand() / RAND_MAX * 2 - 1;
    }
    for (size_t i = 0; i < np; i++) {
        ha[i] = (float)rand() / RAND_MAX * 2 - 1;
        hb[i] = (float)rand() / RAND_MAX * 2 - 1;
    }
    reference(hx, ha, rt);
    reference(hy, hb, rg);
    const cl_mem_flags in = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    cl_mem bx = clCreateBuffer(ctx, in, n * 4, hx, &err);
    CHECK(err);
    cl_mem by = clCreateBuffer(ctx, in, n * 4, hy, &err);
    CHECK(err);
    cl_mem ba = clCreateBuffer(ctx, in, np * 4, ha, &err);
    CHECK(err);
    cl_mem bb = clCreateBuffer(ctx, in, np * 4, hb, &err);
    CHECK(err);
    size_t out_bytes = (size_t)ROWS * RANK * 4;
    cl_mem bt = clCreateBuffer(ctx, CL_MEM_READ_WRITE, out_bytes, NULL, &err);
    CHECK(err);
    cl_mem bg = clCreateBuffer(ctx, CL_MEM_READ_WRITE, out_bytes, NULL, &err);
    CHECK(err);
    int rows = ROWS;
    const struct lab lab = {q, bx, ba, by, bb, bt, bg, rt, rg, got};

    /* the floor: X and dY read once */
    {
        cl_program p = lab_build(ctx, dev, src,
                             "-cl-std=CL1.2 -DK=4096 -DWARPS=8 -DMT=1 "
                             "-DSPLIT=1 -DU=1");
        cl_kernel k = clCreateKernel(p, "read_rows", &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, 0, sizeof rows, &rows));
        CHECK(clSetKernelArg(k, 1, sizeof bx, &bx));
        CHECK(clSetKernelArg(k, 2, sizeof by, &by));
        CHECK(clSetKernelArg(k, 3, sizeof bt, &bt));
        size_t g[2] = {132 * 8 * 256, 1}, l[2] = {256, 1};
        double one = lab_time_kernel(q, k, 2, g, l, 3, REPS);
        g[1] = 2;
        double both = lab_time_kernel(q, k, 2, g, l, 3, REPS);
        printf("read X: %.2f us (%.0f GB/s); X and dY: %.2f us (%.0f GB/s)\n",
               one, n * 4 / one / 1e3, both, 2 * n * 4 / both / 1e3);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
    for (int a = 2; a == 2 || a < argc; a += 6) {
        int warps = 8, mt = 1, split = 3, u = 1, step = 0, stages = 0;
        if (a < argc) {
            warps = atoi(argv[a]);
            mt = atoi(argv[a + 1]);
            split = atoi(argv[a + 2]);
            u = atoi(argv[a + 3]);
            step = atoi(argv[a + 4]);
            stages = atoi(argv[a + 5]);
        }
        char opts[256];
        snprintf(opts, sizeof opts,
                 "-cl-std=CL1.2 -cl-nv-verbose -DK=%d -DWARPS=%d -DMT=%d "
                 "-DSPLIT=%d -DU=%d %s%d -DSTAGES=%d -DPENDING_GROUPS=%d %s",
                 K, warps, mt, split, u, step ? "-DSTEP=" : "-DNO_STEP=",
                 step, stages, stages - 2,
                 getenv("LAB_OPTS") ? getenv("LAB_OPTS") : "");
        printf("warps %d, mt %d, split %d, u %d, step %d, stages %d:\n", warps,
               mt, split, u, step, stages);
        cl_program p = lab_build(ctx, dev, src, opts);
        size_t groups = (ROWS + 16 * mt - 1) / (16 * mt);
        size_t g[2] = {groups * 32 * warps, 2}, l[2] = {32 * (size_t)warps, 1};
        time_products(&lab, p, "skinny_tc", g, l);
        if (step) {
            time_products(&lab, p, "skinny_cp", g, l);
        }
        cl_kernel kr = clCreateKernel(p, "read_tiles", &err);
        CHECK(err);
        for (int pattern = 0; pattern < 2 && !step; pattern++) {
            CHECK(clSetKernelArg(kr, 0, sizeof rows, &rows));
            CHECK(clSetKernelArg(kr, 1, sizeof pattern, &pattern));
            CHECK(clSetKernelArg(kr, 2, sizeof bx, &bx));
            CHECK(clSetKernelArg(kr, 3, sizeof by, &by));
            CHECK(clSetKernelArg(kr, 4, sizeof bt, &bt));
            double r_us = lab_time_kernel(q, kr, 2, g, l, 3, REPS);
            printf("  its loads alone, pattern %d: %.2f us (%.0f GB/s)\n",
                   pattern, r_us, 2 * n * 4 / r_us / 1e3);
        }
        clReleaseKernel(kr);
        clReleaseProgram(p);
    }
    return 0;
}
