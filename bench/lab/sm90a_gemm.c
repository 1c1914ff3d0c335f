/* sm90a_gemm.c - lab: times bench/lab/sm90a_gemm.cl, a bf16 GEMM on wgmma
 * (PTX retargeted to sm_90a as sm90a_probe.c does), and checks 4096 of its
 * outputs exactly (small integers). Run from the project root on the
 * device: sm90a_gemm M N K WGS WG_N TK STAGES REPS [DIR for the PTX];
 * env MW (wgmma groups left in flight, 0 or 1), WN (warpgroups along N),
 * OPTS (more -D options). A quick lab program, not project code. Build:
 * cc -O2 -o sm90a_gemm bench/lab/sm90a_gemm.c -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_util.h"
#define CK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%d: %s -> %d\n", __LINE__, #x, e_); exit(1); } } while (0)
static void log_of(cl_program p, cl_device_id d) { size_t n; clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &n); char *l = malloc(n + 1); clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, n, l, NULL); l[n] = 0; printf("log: %s\n", l); free(l); }
int main(int argc, char **argv)
{
    if (argc < 9) { fprintf(stderr, "usage\n"); return 2; }
    int MW = getenv("MW") ? atoi(getenv("MW")) : 0, WN = getenv("WN") ? atoi(getenv("WN")) : 1;
    int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]), WGS = atoi(argv[4]), WGN = atoi(argv[5]), TK = atoi(argv[6]), ST = atoi(argv[7]), reps = atoi(argv[8]);
    const char *dir = argc > 9 ? argv[9] : NULL;
    cl_platform_id pl; CK(clGetPlatformIDs(1, &pl, NULL));
    cl_device_id d; CK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_GPU, 1, &d, NULL));
    cl_int e; cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e); CK(e);
    cl_command_queue q = clCreateCommandQueue(ctx, d, CL_QUEUE_PROFILING_ENABLE, &e); CK(e);
    char *src = slurp("bench/lab/sm90a_gemm.cl");
    cl_program p = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &e); CK(e);
    char opts[512]; snprintf(opts, sizeof opts, "-I bench/lab -D K=%d -D N=%d -D WGS=%d -D WG_N=%d -D TK=%d -D STAGES=%d -D WAIT=%d -D MMA_WAIT=%d -D WGS_N=%d %s", K, N, WGS, WGN, TK, ST, ST - 2 - MW, MW, WN, getenv("OPTS") ? getenv("OPTS") : "");
    e = clBuildProgram(p, 1, &d, opts, NULL, NULL);
    if (e) { log_of(p, d); return 1; }
    size_t bs; CK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bs, &bs, NULL));
    unsigned char *bin = malloc(bs + 1), *bins[1] = {bin};
    CK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL)); bin[bs] = 0;
    char *a = lab_replace_all((char *)bin, "// @", "");
    char *ptx = lab_replace_all(a, ".target sm_90", ".target sm_90a");
    if (dir) { char fn[256]; snprintf(fn, sizeof fn, "%s/wg-%d-%d-%d-%d.ptx", dir, WGS, WGN, TK, ST); FILE *f = fopen(fn, "w"); fputs(ptx, f); fclose(f); }
    size_t len = strlen(ptx) + 1; const unsigned char *pb[1] = {(const unsigned char *)ptx}; cl_int bst;
    cl_program p2 = clCreateProgramWithBinary(ctx, 1, &d, &len, pb, &bst, &e); CK(e);
    e = clBuildProgram(p2, 1, &d, "-cl-nv-verbose", NULL, NULL);
    log_of(p2, d);
    if (e) return 1;
    cl_kernel k = clCreateKernel(p2, "wg_gemm", &e); CK(e);
    unsigned short *X = malloc((size_t)M * K * 2), *W = malloc((size_t)K * N * 2);
    float *Y = malloc((size_t)M * N * 4);
    srand(7);
    for (size_t i = 0; i < (size_t)M * K; i++) X[i] = tobf((float)(rand() % 5 - 2));
    for (size_t i = 0; i < (size_t)K * N; i++) W[i] = tobf((float)(rand() % 5 - 2));
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)M * K * 2, X, &e); CK(e);
    cl_mem bw = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)K * N * 2, W, &e); CK(e);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)M * N * 4, NULL, &e); CK(e);
    CK(clSetKernelArg(k, 0, sizeof bx, &bx)); CK(clSetKernelArg(k, 1, sizeof bw, &bw)); CK(clSetKernelArg(k, 2, sizeof by, &by));
    size_t g[2] = {(size_t)N / (WGN * WN) * 128 * WGS * WN, (size_t)M / (64 * WGS)}, l[2] = {128 * (size_t)WGS * WN, 1};
    CK(clEnqueueNDRangeKernel(q, k, 2, NULL, g, l, 0, NULL, NULL));
    CK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, (size_t)M * N * 4, Y, 0, NULL, NULL));
    int bad = 0;
    for (int s = 0; s < 4096; s++) {
        int r = s < 2048 ? (s * 7919) % M : (s % 2 ? 5 : M - 3), c = s < 2048 ? (s * 104729) % N : (s * 13) % N;
        float want = 0;
        for (int kk = 0; kk < K; kk++) { unsigned ux = (unsigned)X[(size_t)r * K + kk] << 16, uw = (unsigned)W[(size_t)kk * N + c] << 16; float fx, fw; memcpy(&fx, &ux, 4); memcpy(&fw, &uw, 4); want += fx * fw; }
        if (Y[(size_t)r * N + c] != want) { if (bad < 5) printf("bad at %d,%d: %g want %g\n", r, c, Y[(size_t)r * N + c], want); bad++; }
    }
    printf("check: %d of 4096 wrong\n", bad);
    cl_event ev[64]; if (reps > 64) reps = 64;
    for (int i = 0; i < reps; i++) CK(clEnqueueNDRangeKernel(q, k, 2, NULL, g, l, 0, NULL, &ev[i]));
    CK(clFinish(q));
    double best = 1e30, sum = 0;
    for (int i = 0; i < reps; i++) { cl_ulong t0, t1; clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_START, 8, &t0, NULL); clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_END, 8, &t1, NULL); double us = (t1 - t0) / 1e3; if (us < best) best = us; sum += us; }
    printf("WN %d %s MW %d WGS %d WG_N %d TK %d STAGES %d: M %d N %d K %d best %.1f us mean %.1f us, %.0f TFLOP/s (best)\n", WN, getenv("OPTS") ? getenv("OPTS") : "", MW, WGS, WGN, TK, ST, M, N, K, best, sum / reps, 2.0 * M * N * K / best / 1e6);
    return bad != 0;
}
