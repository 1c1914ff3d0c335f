/* tf32x3.c - times bench/lab/tf32x3.cl, a float32 GEMM on tf32 tensor
 * cores (three products a product, or one), on one NVIDIA device; each
 * configuration checked first against float64 on 512 sampled outputs
 * (relative L2 over them, and the worst error over the sum of |a*b|).
 * usage: tf32x3 P:D M N K nk|kn CONFIG...
 *   CONFIG = BM,BN,BK,WM,WN,STAGES,PRODUCTS   e.g. 128,128,32,64,32,3,3 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>

#include "lab_util.h"

static float next_float(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) / 8388608.0 - 1.0);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: tf32x3 P:D M N K nk|kn CONFIG...\n");
        return 2;
    }
    int p = 0, d = 0;
    sscanf(argv[1], "%d:%d", &p, &d);
    long M = atol(argv[2]), N = atol(argv[3]), K = atol(argv[4]);
    int nk = strcmp(argv[5], "nk") == 0;
    cl_platform_id ps[8];
    cl_uint np;
    CHECK(clGetPlatformIDs(8, ps, &np));
    cl_device_id ds[8];
    cl_uint nd;
    CHECK(clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 8, ds, &nd));
    cl_device_id dev = ds[d];
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q =
        clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);

    float *a = malloc((size_t)M * K * 4), *b = malloc((size_t)K * N * 4);
    float *c = malloc((size_t)M * N * 4);
    unsigned seed = 12345;
    for (long i = 0; i < M * K; i++)
        a[i] = next_float(&seed);
    for (long i = 0; i < K * N; i++)
        b[i] = next_float(&seed);
    cl_mem ba = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               (size_t)M * K * 4, a, &err);
    CHECK(err);
    cl_mem bb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               (size_t)K * N * 4, b, &err);
    CHECK(err);
    cl_mem bc =
        clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)M * N * 4, NULL, &err);
    CHECK(err);
    char *src = slurp("bench/lab/tf32x3.cl");

    printf("M=%ld N=%ld K=%ld B %s\n", M, N, K, nk ? "N x K" : "K x N");
    for (int ai = 6; ai < argc; ai++) {
        int bm, bn, bk, wm, wn, st, pr;
        if (sscanf(argv[ai], "%d,%d,%d,%d,%d,%d,%d", &bm, &bn, &bk, &wm, &wn,
                   &st, &pr) != 7) {
            fprintf(stderr, "bad config %s\n", argv[ai]);
            return 2;
        }
        char opts[512];
        snprintf(opts, sizeof opts,
                 "-cl-std=CL1.2 -cl-nv-verbose -DM=%ld -DN=%ld -DK=%ld "
                 "-DBM=%d -DBN=%d -DBK=%d -DWM=%d -DWN=%d -DSTAGES=%d "
                 "-DPRODUCTS=%d -DB_NK=%d",
                 M, N, K, bm, bn, bk, wm, wn, st, pr, nk);
        printf("%s\n", argv[ai]);
        cl_program prog = lab_build(ctx, dev, src, opts);
        cl_kernel k = clCreateKernel(prog, "tf32_gemm", &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, 0, sizeof ba, &ba));
        CHECK(clSetKernelArg(k, 1, sizeof bb, &bb));
        CHECK(clSetKernelArg(k, 2, sizeof bc, &bc));
        size_t threads = 32 * (size_t)(bm / wm) * (size_t)(bn / wn);
        size_t local[2] = {threads, 1};
        size_t global[2] = {(size_t)(N / bn) * threads, (size_t)(M / bm)};
        unsigned char ff = 0xff;
        CHECK(clEnqueueFillBuffer(q, bc, &ff, 1, 0, (size_t)M * N * 4, 0,
                                  NULL, NULL));
        CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, local, 0, NULL,
                                     NULL));
        CHECK(clEnqueueReadBuffer(q, bc, CL_TRUE, 0, (size_t)M * N * 4, c, 0,
                                  NULL, NULL));
        double worst = 0, e2 = 0, r2 = 0, f2 = 0;
        unsigned s2 = 777;
        for (int i = 0; i < 512; i++) {
            s2 = s2 * 1664525u + 1013904223u;
            long r = (long)(s2 % (unsigned)M);
            s2 = s2 * 1664525u + 1013904223u;
            long col = (long)(s2 % (unsigned)N);
            double ref = 0, mag = 0;
            float f = 0; /* a float32 loop's sum, for scale */
            for (long kk = 0; kk < K; kk++) {
                double bv = nk ? b[col * K + kk] : b[kk * N + col];
                f = fmaf(a[r * K + kk], (float)bv, f);
                ref += (double)a[r * K + kk] * bv;
                mag += fabs((double)a[r * K + kk] * bv);
            }
            double got = c[r * N + col], e = fabs(got - ref) / mag;
            e2 += (got - ref) * (got - ref);
            f2 += (f - ref) * (f - ref);
            r2 += ref * ref;
            if (!(e <= worst))
                worst = isnan(e) ? INFINITY : e;
        }
        double us = lab_time_kernel(q, k, 2, global, local, 2, 10);
        printf("  %8.1f us %6.1f TFLOP/s  rel L2 %.2e (a float32 loop's "
               "%.2e)  worst/|a||b| %.2e\n",
               us, 2.0 * M * N * K / us / 1e6, sqrt(e2 / r2), sqrt(f2 / r2),
               worst);
        clReleaseKernel(k);
        clReleaseProgram(prog);
    }
    free(src);
    free(a);
    free(b);
    free(c);
    clReleaseMemObject(ba);
    clReleaseMemObject(bb);
    clReleaseMemObject(bc);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
