/* norm_backward.c (lab) - times designs of bf16 rmsnorm_backward's row
 * pass (bench/lab/norm_backward.cl) at ROWS x D against a kernel that
 * moves the same bytes (reads x and dy, writes dx), each checked against
 * a float64 reference first. Usage: norm_backward CL_FILE [T PER PF
 * BLOCKS]...; LAB_LN=1 times layernorm_backward (dgamma and dbeta)
 * instead, LAB_OPTS adds build options. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_util.h"

#define D 4096
#define ROWS 4096
#define REPS 30

static cl_context ctx;
static cl_command_queue q;
static cl_device_id dev;

/* Median µs of REPS runs of the kernels K[0..n) with their global and
 * local sizes. */
static double time_kernels(cl_kernel *k, size_t *g, size_t *l, int n)
{
    double t[REPS];
    for (int r = -3; r < REPS; r++) {
        cl_event e0 = NULL, e1 = NULL;
        for (int i = 0; i < n; i++) {
            CHECK(clEnqueueNDRangeKernel(q, k[i], 1, NULL, &g[i],
                                         l[i] ? &l[i] : NULL, 0, NULL,
                                         i == 0 ? &e0 : i == n - 1 ? &e1
                                                                   : NULL));
        }
        CHECK(clFinish(q));
        cl_ulong a, b;
        CHECK(clGetEventProfilingInfo(e0, CL_PROFILING_COMMAND_START,
                                      sizeof a, &a, NULL));
        CHECK(clGetEventProfilingInfo(n > 1 ? e1 : e0,
                                      CL_PROFILING_COMMAND_END, sizeof b, &b,
                                      NULL));
        if (r >= 0) {
            t[r] = (double)(b - a) / 1e3;
        }
        clReleaseEvent(e0);
        if (e1 != NULL) {
            clReleaseEvent(e1);
        }
    }
    qsort(t, REPS, sizeof t[0], cmp_double);
    return t[REPS / 2];
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: norm_backward CL_FILE [T PER PF BLOCKS]...\n");
        return 2;
    }
    char *src = slurp(argv[1]);
    cl_platform_id pl;
    CHECK(clGetPlatformIDs(1, &pl, NULL));
    CHECK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_GPU, 1, &dev, NULL));
    cl_int err;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);

    size_t n = (size_t)ROWS * D;
    unsigned short *hx = malloc(n * 2), *hdy = malloc(n * 2),
                   *hdx = malloc(n * 2), hg[D];
    srand(7);
    for (size_t i = 0; i < n; i++) {
        hx[i] = tobf((float)rand() / RAND_MAX * 4 - 2);
        hdy[i] = tobf((float)rand() / RAND_MAX * 2 - 1);
    }
    for (int j = 0; j < D; j++) {
        hg[j] = tobf(0.5f + (float)rand() / RAND_MAX);
    }
    /* float64 reference */
    const int ln = getenv("LAB_LN") != NULL && atoi(getenv("LAB_LN")) != 0;
    double *rdx = malloc(n * sizeof(double)), *rdg = calloc(D, sizeof(double));
    for (int m = 0; m < ROWS; m++) {
        const unsigned short *xm = hx + (size_t)m * D, *dm = hdy + (size_t)m * D;
        double sx = 0, ss = 0, sg = 0, sgx = 0;
        for (int j = 0; j < D; j++) {
            sx += bf(xm[j]);
        }
        const double mean = ln ? sx / D : 0;
        for (int j = 0; j < D; j++) {
            ss += (bf(xm[j]) - mean) * (bf(xm[j]) - mean);
        }
        double rs = 1 / sqrt(ss / D + 1e-5);
        for (int j = 0; j < D; j++) {
            double xh = (bf(xm[j]) - mean) * rs;
            double dv = bf(dm[j]);
            sg += bf(hg[j]) * dv;
            sgx += bf(hg[j]) * dv * xh;
            rdg[j] += dv * xh;
        }
        for (int j = 0; j < D; j++) {
            double xh = (bf(xm[j]) - mean) * rs;
            double dv = bf(dm[j]);
            rdx[(size_t)m * D + j] =
                rs * (bf(hg[j]) * dv - (ln ? sg / D : 0) - xh * sgx / D);
        }
    }
    const cl_mem_flags in = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    cl_mem bx = clCreateBuffer(ctx, in, n * 2, hx, &err);
    CHECK(err);
    cl_mem bdy = clCreateBuffer(ctx, in, n * 2, hdy, &err);
    CHECK(err);
    cl_mem bg = clCreateBuffer(ctx, in, D * 2, hg, &err);
    CHECK(err);
    cl_mem bdx = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 2, NULL, &err);
    CHECK(err);
    /* partial rows: one per block, up to one a row */
    cl_mem bpart = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
                                  (size_t)ROWS * D * 8, NULL, &err);
    CHECK(err);
    cl_mem bdg = clCreateBuffer(ctx, CL_MEM_READ_WRITE, D * 8, NULL, &err);
    CHECK(err);

    double copy_us = -1;
    for (int a = 1; a == 1 || a + 4 < argc; a += 4) {
        int T = 256, PER = 2, PF = 1, blocks = 132;
        if (a + 4 < argc) {
            T = atoi(argv[a + 1]);
            PER = atoi(argv[a + 2]);
            PF = atoi(argv[a + 3]);
            blocks = atoi(argv[a + 4]);
        }
        if (T * PER * 8 != D) {
            printf("T %d PER %d: does not cover %d\n", T, PER, D);
            continue;
        }
        char opts[256];
        snprintf(opts, sizeof opts,
                 "-cl-std=CL1.2 -cl-nv-verbose -DD=%d -DT=%d -DPER=%d -DPF=%d "
                 "-DLN=%d -DEPS=1e-5f %s",
                 D, T, PER, PF, ln, getenv("LAB_OPTS") ? getenv("LAB_OPTS") : "");
        cl_program p = clCreateProgramWithSource(
            ctx, 1, (const char **)&src, NULL, &err);
        if (clBuildProgram(p, 1, &dev, opts, NULL, NULL) != CL_SUCCESS) {
            static char log[1 << 16];
            clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log,
                                  log, NULL);
            fprintf(stderr, "%s\n", log);
            return 1;
        }
        {
            /* ptxas's registers and spills of each kernel */
            static char log[1 << 16];
            clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log,
                                  log, NULL);
            for (char *line = strtok(log, "\n"); line != NULL;
                 line = strtok(NULL, "\n")) {
                if (strstr(line, "Used") || strstr(line, "spill")) {
                    printf("  %s\n", line);
                }
            }
        }
        cl_kernel k[2];
        k[0] = clCreateKernel(p, "nb_rows", &err);
        CHECK(err);
        k[1] = clCreateKernel(p, "nb_reduce", &err);
        CHECK(err);
        cl_kernel kc = clCreateKernel(p, "nb_copy", &err);
        CHECK(err);
        int rows = ROWS, per_block = (ROWS + blocks - 1) / blocks;
        int parts = (ROWS + per_block - 1) / per_block;
        CHECK(clSetKernelArg(k[0], 0, sizeof rows, &rows));
        CHECK(clSetKernelArg(k[0], 1, sizeof per_block, &per_block));
        CHECK(clSetKernelArg(k[0], 2, sizeof bx, &bx));
        CHECK(clSetKernelArg(k[0], 3, sizeof bg, &bg));
        CHECK(clSetKernelArg(k[0], 4, sizeof bdy, &bdy));
        CHECK(clSetKernelArg(k[0], 5, sizeof bdx, &bdx));
        CHECK(clSetKernelArg(k[0], 6, sizeof bpart, &bpart));
        CHECK(clSetKernelArg(k[1], 0, sizeof parts, &parts));
        CHECK(clSetKernelArg(k[1], 1, sizeof bpart, &bpart));
        CHECK(clSetKernelArg(k[1], 2, sizeof bdg, &bdg));
        CHECK(clSetKernelArg(kc, 0, sizeof bx, &bx));
        CHECK(clSetKernelArg(kc, 1, sizeof bdy, &bdy));
        CHECK(clSetKernelArg(kc, 2, sizeof bdx, &bdx));
        size_t g[2] = {(size_t)parts * T, D / 8}, l[2] = {(size_t)T, 32};
        size_t g2[2] = {D / 8 * (1 + ln), 8}, l2[2] = {32, 8};
        /* nb_reduce is 2-D: run it apart from the 1-D helper */
        CHECK(clEnqueueNDRangeKernel(q, k[0], 1, NULL, &g[0], &l[0], 0, NULL,
                                     NULL));
        CHECK(clEnqueueNDRangeKernel(q, k[1], 2, NULL, g2, l2, 0, NULL, NULL));
        CHECK(clFinish(q));
        float *dg = malloc(D * 4);
        CHECK(clEnqueueReadBuffer(q, bdx, CL_TRUE, 0, n * 2, hdx, 0, NULL,
                                  NULL));
        CHECK(clEnqueueReadBuffer(q, bdg, CL_TRUE, 0, D * 4, dg, 0, NULL,
                                  NULL));
        double e2 = 0, r2 = 0, g2e = 0, g2r = 0;
        for (size_t i = 0; i < n; i++) {
            double d = bf(hdx[i]) - rdx[i];
            e2 += d * d;
            r2 += rdx[i] * rdx[i];
        }
        for (int j = 0; j < D; j++) {
            double d = dg[j] - rdg[j];
            g2e += d * d;
            g2r += rdg[j] * rdg[j];
        }
        free(dg);
        /* timing: the row pass alone, then with the reduction */
        double t_rows = time_kernels(k, g, l, 1);
        double tr[REPS];
        for (int r = -3; r < REPS; r++) {
            cl_event e0, e1;
            CHECK(clEnqueueNDRangeKernel(q, k[0], 1, NULL, &g[0], &l[0], 0,
                                         NULL, &e0));
            CHECK(clEnqueueNDRangeKernel(q, k[1], 2, NULL, g2, l2, 0, NULL,
                                         &e1));
            CHECK(clFinish(q));
            cl_ulong s0, s1;
            CHECK(clGetEventProfilingInfo(e0, CL_PROFILING_COMMAND_START, 8,
                                          &s0, NULL));
            CHECK(clGetEventProfilingInfo(e1, CL_PROFILING_COMMAND_END, 8,
                                          &s1, NULL));
            if (r >= 0) {
                tr[r] = (double)(s1 - s0) / 1e3;
            }
            clReleaseEvent(e0);
            clReleaseEvent(e1);
        }
        qsort(tr, REPS, sizeof tr[0], cmp_double);
        /* the reduction alone, float8 and float columns */
        double t_vec8 = 0;
        cl_kernel k1 = clCreateKernel(p, "nb_reduce1", &err);
        CHECK(err);
        CHECK(clSetKernelArg(k1, 0, sizeof parts, &parts));
        CHECK(clSetKernelArg(k1, 1, sizeof bpart, &bpart));
        CHECK(clSetKernelArg(k1, 2, sizeof bdg, &bdg));
        double tl[3];
        for (int v = 0; v < 4; v++) {
            double t1[REPS];
            size_t lanes = v == 0 ? 8 : (size_t)4 << v;
            size_t g1[2] = {(v ? D : D / 8) * (1 + ln), v ? lanes : 8};
            size_t l1[2] = {32, v ? lanes : 8};
            for (int r = -3; r < REPS; r++) {
                cl_event e0;
                CHECK(clEnqueueNDRangeKernel(q, v ? k1 : k[1], 2, NULL, g1,
                                             l1, 0, NULL, &e0));
                CHECK(clFinish(q));
                cl_ulong s0, s1;
                CHECK(clGetEventProfilingInfo(e0, CL_PROFILING_COMMAND_START,
                                              8, &s0, NULL));
                CHECK(clGetEventProfilingInfo(e0, CL_PROFILING_COMMAND_END, 8,
                                              &s1, NULL));
                if (r >= 0) {
                    t1[r] = (double)(s1 - s0) / 1e3;
                }
                clReleaseEvent(e0);
            }
            qsort(t1, REPS, sizeof t1[0], cmp_double);
            if (v == 0) {
                t_vec8 = t1[REPS / 2];
            } else {
                tl[v - 1] = t1[REPS / 2];
            }
        }
        clReleaseKernel(k1);
        printf("  reduce alone: float8 columns %.1f us, float columns over "
               "8, 16, 32 lanes %.1f, %.1f, %.1f us\n",
               t_vec8, tl[0], tl[1], tl[2]);
        if (copy_us < 0) {
            size_t gc = n / 8;
            copy_us = time_kernels(&kc, &gc, (size_t[]){256}, 1);
            printf("copy of x, dy -> dx: %.1f us\n", copy_us);
        }
        printf("%s T %4d PER %d PF %d blocks %4d (per %3d): rows %.1f us, "
               "+reduce %.1f us (%.0f%% of copy); err dx %.2e dgamma %.2e\n",
               getenv("LAB_OPTS") ? getenv("LAB_OPTS") : "", T, PER, PF,
               blocks, per_block, t_rows, tr[REPS / 2],
               100 * copy_us / tr[REPS / 2], sqrt(e2 / r2), sqrt(g2e / g2r));
        fflush(stdout);
        clReleaseKernel(k[0]);
        clReleaseKernel(k[1]);
        clReleaseKernel(kc);
        clReleaseProgram(p);
    }
    cl_mem bufs[] = {bx, bdy, bg, bdx, bpart, bdg};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        clReleaseMemObject(bufs[i]);
    }
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(hx);
    free(hdy);
    free(hdx);
    free(rdx);
    free(rdg);
    free(src);
    return 0;
}
