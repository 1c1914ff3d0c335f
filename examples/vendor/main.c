/* main.c - vendoring example: a program that uses one specl kernel through
 * its two emitted files alone (vendor_rmsnorm.c and vendor_rmsnorm.h,
 * copied into a project like any other source) and the OpenCL library.
 *
 * Build (from this directory; `make run` does the same):
 *   ../../build/specl gen spec.yaml -o out
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iout -o vendor_demo \
 *      main.c out/vendor_rmsnorm.c -lOpenCL -lm
 *   ./vendor_demo
 *
 * Runs rmsnorm over ROWS rows on the first OpenCL device, checks every
 * value against a plain C loop, prints OK and exits 0; exits 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vendor_rmsnorm.h"

#define ROWS 33
#define D vendor_rmsnorm_FEATURES

static int fail(const char *what, cl_int err)
{
    fprintf(stderr, "vendor_demo: %s failed (%d)\n", what, (int)err);
    return 1;
}

/* y = x / sqrt(mean(x^2) + eps) * gamma, row by row, in double. */
static void reference(const float *x, const float *gamma, double *y)
{
    for (int r = 0; r < ROWS; r++) {
        double ss = 0;
        for (int i = 0; i < D; i++) {
            ss += (double)x[r * D + i] * x[r * D + i];
        }
        double inv = 1.0 / sqrt(ss / D + vendor_rmsnorm_EPS);
        for (int i = 0; i < D; i++) {
            y[r * D + i] = x[r * D + i] * inv * gamma[i];
        }
    }
}

static int run(cl_context ctx, cl_device_id dev, cl_command_queue q,
               const float *x, const float *gamma, float *y)
{
    cl_int err;
    vendor_rmsnorm *k = NULL;
    cl_mem bx, bg, by;
    err = vendor_rmsnorm_create(ctx, dev, &k);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "%s\n", vendor_rmsnorm_build_log(k));
        vendor_rmsnorm_destroy(k);
        return fail("vendor_rmsnorm_create", err);
    }
    bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        sizeof(float) * ROWS * D, (void *)x, &err);
    bg = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        sizeof(float) * D, (void *)gamma, &err);
    by = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof(float) * ROWS * D,
                        NULL, &err);
    err = vendor_rmsnorm_enqueue(k, q, ROWS, bx, bg, by, 0, NULL, NULL);
    if (err == CL_SUCCESS) {
        err = clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof(float) * ROWS * D,
                                  y, 0, NULL, NULL);
    }
    clReleaseMemObject(bx);
    clReleaseMemObject(bg);
    clReleaseMemObject(by);
    vendor_rmsnorm_destroy(k);
    return err == CL_SUCCESS ? 0 : fail("vendor_rmsnorm_enqueue", err);
}

int main(void)
{
    static float x[ROWS * D], gamma[D], y[ROWS * D];
    static double want[ROWS * D];
    cl_platform_id platform;
    cl_device_id dev;
    cl_int err;
    unsigned seed = 12345;
    for (int i = 0; i < ROWS * D; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
    }
    for (int i = 0; i < D; i++) {
        gamma[i] = 0.5f + (float)i / D;
    }
    reference(x, gamma, want);

    err = clGetPlatformIDs(1, &platform, NULL);
    if (err != CL_SUCCESS) {
        return fail("clGetPlatformIDs", err);
    }
    err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &dev, NULL);
    if (err != CL_SUCCESS) {
        return fail("clGetDeviceIDs", err);
    }
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        return fail("clCreateContext", err);
    }
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    if (err != CL_SUCCESS) {
        clReleaseContext(ctx);
        return fail("clCreateCommandQueue", err);
    }
    int rc = run(ctx, dev, q, x, gamma, y);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    if (rc != 0) {
        return 1;
    }
    double worst = 0;
    for (int i = 0; i < ROWS * D; i++) {
        double e = fabs(y[i] - want[i]) / (fabs(want[i]) + 1e-6);
        worst = e > worst || e != e ? e : worst;
    }
    if (!(worst < 1e-4)) {
        fprintf(stderr, "vendor_demo: MISMATCH (worst relative error %g)\n",
                worst);
        return 1;
    }
    printf("OK: %d rows of rmsnorm over %d features (worst relative error "
           "%.2g)\n",
           ROWS, D, worst);
    return 0;
}
