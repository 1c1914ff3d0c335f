/* mma.c - times bench/lab/mma.cl, a tensor-core GEMM candidate, on one
 * NVIDIA device: Y = X*W with bf16 (or f16) inputs, f32 accumulation.
 * Each configuration is checked against float64 on sampled outputs first.
 * usage: mma P:D M N K [f16] [yhalf] CONFIG...
 *   CONFIG = BM,BN,BK,WM,WN,STAGES   e.g. 128,128,32,64,32,3 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_util.h"

static float bits_to_float(unsigned short h, int f16)
{
    if (!f16) {
        unsigned u = (unsigned)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24)
                     : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

static unsigned short random_bits(unsigned *s, int f16)
{
    *s = *s * 1664525u + 1013904223u;
    float v = (float)((*s >> 8) / 8388608.0 - 1.0);
    if (f16) {
        /* |v| < 1: exponent 14 and below; 10 bits of mantissa */
        int e;
        float fr = frexpf(fabsf(v), &e);
        if (v == 0 || e < -13) {
            return 0;
        }
        unsigned m = (unsigned)(fr * 2048.0f) & 1023;
        return (unsigned short)((v < 0 ? 0x8000 : 0) | ((e + 14) << 10) | m);
    }
    unsigned u;
    memcpy(&u, &v, 4);
    return (unsigned short)(u >> 16);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: mma P:D M N K [f16] [yhalf] CONFIG...\n");
        return 2;
    }
    int p = 0, d = 0;
    sscanf(argv[1], "%d:%d", &p, &d);
    long M = atol(argv[2]), N = atol(argv[3]), K = atol(argv[4]);
    int a = 5, f16 = 0, yhalf = 0;
    for (; a < argc && argv[a][0] >= 'a' && argv[a][0] <= 'z'; a++) {
        f16 |= strcmp(argv[a], "f16") == 0;
        yhalf |= strcmp(argv[a], "yhalf") == 0;
    }
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

    unsigned short *x = malloc((size_t)M * K * 2), *w = malloc((size_t)K * N * 2);
    unsigned seed = 12345;
    for (long i = 0; i < M * K; i++) x[i] = random_bits(&seed, f16);
    for (long i = 0; i < K * N; i++) w[i] = random_bits(&seed, f16);
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               (size_t)M * K * 2, x, &err);
    CHECK(err);
    cl_mem bw = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               (size_t)K * N * 2, w, &err);
    CHECK(err);
    size_t ybytes = (size_t)M * N * (yhalf ? 2 : 4);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ybytes, NULL, &err);
    CHECK(err);
    void *y = malloc(ybytes);

    FILE *f = fopen("bench/lab/mma.cl", "rb");
    if (f == NULL) { perror("bench/lab/mma.cl"); return 1; }
    static char src[1 << 16];
    size_t n = fread(src, 1, sizeof src - 1, f);
    src[n] = 0;
    fclose(f);

    printf("M=%ld N=%ld K=%ld %s, Y %s\n", M, N, K, f16 ? "f16" : "bf16",
           yhalf ? "half" : "f32");
    for (; a < argc; a++) {
        int bm, bn, bk, wm, wn, st;
        if (sscanf(argv[a], "%d,%d,%d,%d,%d,%d", &bm, &bn, &bk, &wm, &wn,
                   &st) != 6) {
            fprintf(stderr, "bad config %s\n", argv[a]);
            return 2;
        }
        char opts[512];
        snprintf(opts, sizeof opts,
                 "-cl-std=CL1.2 -cl-nv-verbose -DM=%ld -DN=%ld -DK=%ld -DBM=%d "
                 "-DBN=%d -DBK=%d -DWM=%d -DWN=%d -DSTAGES=%d -DPENDING=%d%s%s %s",
                 M, N, K, bm, bn, bk, wm, wn, st, st - 2,
                 f16 ? " -DHALF_F16" : "", yhalf ? " -DY_HALF" : "",
                 getenv("MMA_OPTS") ? getenv("MMA_OPTS") : "");
        const char *s = src;
        cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
        CHECK(err);
        cl_int built = clBuildProgram(prog, 1, &dev, opts, NULL, NULL);
        static char log[1 << 16];
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log,
                              log, NULL);
        if (built != CL_SUCCESS) {
            printf("%s: build failed\n%s\n", argv[a], log);
            continue;
        }
        char *regs = strstr(log, "Used ");
        char info[160] = "";
        if (regs != NULL) {
            snprintf(info, sizeof info, "%.*s", (int)strcspn(regs, "\n"), regs);
        }
        char *spill = strstr(log, "spill");
        cl_kernel k = clCreateKernel(prog, "mma_gemm", &err);
        CHECK(err);
        CHECK(clSetKernelArg(k, 0, sizeof bx, &bx));
        CHECK(clSetKernelArg(k, 1, sizeof bw, &bw));
        CHECK(clSetKernelArg(k, 2, sizeof by, &by));
        int threads = 32 * (bm / wm) * (bn / wn);
        size_t local[2] = {(size_t)threads, 1};
        size_t global[2] = {(size_t)(N / bn) * threads, (size_t)(M / bm)};
        unsigned char ff = 0xff;
        CHECK(clEnqueueFillBuffer(q, by, &ff, 1, 0, ybytes, 0, NULL, NULL));
        err = clEnqueueNDRangeKernel(q, k, 2, NULL, global, local, 0, NULL,
                                     NULL);
        if (err != CL_SUCCESS) {
            printf("%s: launch failed %d\n", argv[a], err);
            continue;
        }
        CHECK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, ybytes, y, 0, NULL,
                                  NULL));
        double worst = 0;
        unsigned s2 = 777;
        for (int i = 0; i < 512; i++) {
            s2 = s2 * 1664525u + 1013904223u;
            long r = (long)(s2 % (unsigned)M);
            s2 = s2 * 1664525u + 1013904223u;
            long c = (long)(s2 % (unsigned)N);
            if (i == 0) { r = 0; c = 0; }
            if (i == 1) { r = M - 1; c = N - 1; }
            double ref = 0, mag = 0;
            for (long kk = 0; kk < K; kk++) {
                double t = (double)bits_to_float(x[r * K + kk], f16) *
                           bits_to_float(w[kk * N + c], f16);
                ref += t;
                mag += fabs(t);
            }
            double got = yhalf ? bits_to_float(((unsigned short *)y)[r * N + c], f16)
                               : ((float *)y)[r * N + c];
            /* f32 accumulation over K, plus the rounding of a half Y */
            double e = fabs(got - ref) /
                       (mag * 1e-5 + fabs(ref) * (yhalf ? 1.0 / 256 : 0) +
                        1e-30);
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
        }
        double best = 1e30;
        for (int rep = 0; rep < 12; rep++) {
            cl_event ev;
            CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, local, 0,
                                         NULL, &ev));
            CHECK(clWaitForEvents(1, &ev));
            cl_ulong t0, t1;
            CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START,
                                          sizeof t0, &t0, NULL));
            CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END,
                                          sizeof t1, &t1, NULL));
            clReleaseEvent(ev);
            double us = (t1 - t0) / 1e3;
            if (rep >= 2 && us < best) best = us;
        }
        printf("%-20s %8.1f us %6.1f TFLOP/s  err %.2e %s  %s%s\n", argv[a],
               best, 2.0 * M * N * K / best / 1e6, worst,
               worst <= 1 ? "ok" : "WRONG", info,
               spill ? "" : "");
        if (getenv("MMA_LOG")) printf("%s\n", log);
        if (getenv("MMA_PTX")) {
            size_t size = 0;
            CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size,
                                   &size, NULL));
            unsigned char *bin = malloc(size);
            CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin,
                                   NULL));
            char path[600];
            snprintf(path, sizeof path, "%s/config%d.ptx", getenv("MMA_PTX"), a);
            FILE *pf = fopen(path, "wb");
            if (pf) { fwrite(bin, 1, size, pf); fclose(pf); }
            free(bin);
        }
        clReleaseKernel(k);
        clReleaseProgram(prog);
    }
    return 0;
}
