/* ws_gemm.c - lab: times bench/lab/ws_gemm.cl (a bf16 GEMM on wgmma whose
 * warps split into a copying warpgroup and multiplying ones, meeting on
 * mbarriers) and checks 4096 of its outputs exactly (small integers).
 * usage: ws_gemm M N K CW WG_N STAGES REPS; env OPTS (more -D options:
 * SIGNAL, TMA, PERSIST, GROUP_M, REGS_COPY, REGS_MMA; see ws_gemm.cl),
 * MAXNREG (a register cap written into the PTX entry, which setmaxnreg
 * needs), PTX (a file to keep the PTX in), SRC (a file to build alone
 * for its log, arguments ignored). Run from the project root on
 * the device. OPTS with -DTMA=1: the stages load by the tensor memory
 * accelerator, from the tensor maps in MAP_X and MAP_W (bench/lab/
 * tensor_map.cu makes them; the address is set here). Build: cc -O2 -o
 * ws_gemm bench/lab/ws_gemm.c -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "lab_util.h"

/* MAPS: the tensor map in the environment variable NAME (16 words in hex,
 * as bench/lab/tensor_map.cu prints them for this shape), its word 0,
 * the address, set to AT. */
static void map_from_env(unsigned char *maps, const char *name, unsigned long long at)
{
    const char *s = getenv(name);
    unsigned long long w[16];
    if (s == NULL) {
        printf("TMA wants %s\n", name);
        exit(1);
    }
    for (int i = 0; i < 16; i++) {
        char *end;
        w[i] = strtoull(s, &end, 16);
        if (end == s) {
            printf("%s: 16 hex words\n", name);
            exit(1);
        }
        s = end;
    }
    w[0] = at;
    memcpy(maps, w, sizeof w);
}

static void print_log(cl_program p, cl_device_id d)
{
    size_t n;
    clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
    char *l = malloc(n + 1);
    clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, n, l, NULL);
    l[n] = 0;
    printf("log: %s\n", l);
    free(l);
}

/* Times REPS (at most 64) launches of K over GLOBAL and LOCAL: their
 * microseconds into T, sorted. */
static void time_launches(cl_command_queue q, cl_kernel k, const size_t *global, const size_t *local, int reps,
                          double *t)
{
    cl_event ev[64];
    for (int i = 0; i < reps; i++)
        CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, local, 0, NULL, &ev[i]));
    CHECK(clFinish(q));
    for (int i = 0; i < reps; i++) {
        cl_ulong t0, t1;
        clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_START, 8, &t0, NULL);
        clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_END, 8, &t1, NULL);
        t[i] = (double)(t1 - t0) / 1e3;
        clReleaseEvent(ev[i]);
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
}

int main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: ws_gemm M N K CW WG_N STAGES REPS\n");
        return 2;
    }
    int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]), CW = atoi(argv[4]);
    int WGN = atoi(argv[5]), ST = atoi(argv[6]), reps = atoi(argv[7]);
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    const char *extra = getenv("OPTS") ? getenv("OPTS") : "";
    cl_platform_id pl;
    CHECK(clGetPlatformIDs(1, &pl, NULL));
    cl_device_id d;
    CHECK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_GPU, 1, &d, NULL));
    cl_int e;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    CHECK(e);
    cl_command_queue q = clCreateCommandQueue(ctx, d, CL_QUEUE_PROFILING_ENABLE, &e);
    CHECK(e);
    /* SRC=FILE: build that OpenCL C file alone (an emitted variant's
     * source) as below and print its build log, nothing more. */
    const char *only = getenv("SRC");
    char *src = slurp(only ? only : "bench/lab/ws_gemm.cl");
    cl_program p = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &e);
    CHECK(e);
    char opts[512];
    if (only)
        snprintf(opts, sizeof opts, "%s", extra);
    else
        snprintf(opts, sizeof opts, "-I bench/lab -I templates -D M=%d -D K=%d -D N=%d -D CW=%d -D WG_N=%d -D STAGES=%d %s",
                 M, K, N, CW, WGN, ST, extra);
    if (clBuildProgram(p, 1, &d, opts, NULL, NULL) != CL_SUCCESS) {
        print_log(p, d);
        return 1;
    }
    size_t bs;
    CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bs, &bs, NULL));
    unsigned char *bin = malloc(bs + 1), *bins[1] = {bin};
    CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL));
    bin[bs] = 0;
    /* the lab kernels' mark, and the emitted kernels' (wgmma_ptx.cl) */
    char *a = lab_replace_all(lab_replace_all((char *)bin, "// @", ""), "trap; //@sm_90a ", "");
    char *ptx = lab_replace_all(a, ".target sm_90", ".target sm_90a");
    const char *ver = strstr(ptx, ".version");
    printf("ptx %.13s\n", ver ? ver : "(no .version)");
    if (getenv("PTX_VERSION")) {
        char from[32], to[32];
        snprintf(from, sizeof from, "%.12s", ver);
        snprintf(to, sizeof to, ".version %s", getenv("PTX_VERSION"));
        ptx = lab_replace_all(ptx, from, to);
    }
    if (getenv("MAXNREG")) {
        char cap[64];
        snprintf(cap, sizeof cap, ".maxnreg %s\n.reqntid", getenv("MAXNREG"));
        ptx = lab_replace_all(ptx, ".reqntid", cap);
    }
    if (getenv("PTX")) {
        FILE *f = fopen(getenv("PTX"), "w");
        fputs(ptx, f);
        fclose(f);
    }
    size_t len = strlen(ptx) + 1;
    const unsigned char *pb[1] = {(const unsigned char *)ptx};
    cl_program p2 = clCreateProgramWithBinary(ctx, 1, &d, &len, pb, NULL, &e);
    CHECK(e);
    e = clBuildProgram(p2, 1, &d, "-cl-nv-verbose", NULL, NULL);
    print_log(p2, d);
    if (e || (only && M == 0))
        return e != CL_SUCCESS;
    if (only) {
        /* An emitted lora_wgmma: rows, x, w, b, y (storage), scratch
         * (T's floats, zero here), timed alone. */
        cl_kernel k = clCreateKernel(p2, "lora_wgmma", &e);
        CHECK(e);
        cl_mem m[5];
        size_t sz[5] = {(size_t)M * K * 2, (size_t)K * N * 2, (size_t)64 * N * 2, (size_t)M * N * 2,
                        (size_t)M * 64 * 4};
        for (int i = 0; i < 5; i++) {
            m[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sz[i], NULL, &e);
            CHECK(e);
            unsigned char zero = 0;
            CHECK(clEnqueueFillBuffer(q, m[i], &zero, 1, 0, sz[i], 0, NULL, NULL));
        }
        CHECK(clSetKernelArg(k, 0, sizeof M, &M));
        for (int i = 0; i < 5; i++)
            CHECK(clSetKernelArg(k, (cl_uint)i + 1, sizeof m[i], &m[i]));
        size_t th = 128 * (size_t)(CW + 1), gg[2] = {(size_t)N / WGN * th, (size_t)M / (64 * CW)}, ll[2] = {th, 1};
        double t[64];
        time_launches(q, k, gg, ll, reps, t);
        printf("%s lora_wgmma alone: median %.1f us, %.0f TFLOP/s on X*W\n", only, t[reps / 2],
               2.0 * M * N * K / t[reps / 2] / 1e6);
        return 0;
    }
    cl_kernel k = clCreateKernel(p2, "ws_gemm", &e);
    CHECK(e);
    unsigned short *X = malloc((size_t)M * K * 2), *W = malloc((size_t)K * N * 2);
    float *Y = malloc((size_t)M * N * 4);
    srand(7);
    for (size_t i = 0; i < (size_t)M * K; i++)
        X[i] = tobf((float)(rand() % 5 - 2));
    for (size_t i = 0; i < (size_t)K * N; i++)
        W[i] = tobf((float)(rand() % 5 - 2));
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)M * K * 2, X, &e);
    CHECK(e);
    cl_mem bw = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)K * N * 2, W, &e);
    CHECK(e);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)M * N * 4, NULL, &e);
    CHECK(e);
    CHECK(clSetKernelArg(k, 0, sizeof bx, &bx));
    CHECK(clSetKernelArg(k, 1, sizeof bw, &bw));
    CHECK(clSetKernelArg(k, 2, sizeof by, &by));
    /* 256 bytes of maps per work-group for TMA=3 */
    static unsigned char maps[256 * 2048] __attribute__((aligned(64)));
    if (strstr(extra, "TMA=1") || strstr(extra, "TMA=2") || strstr(extra, "TMA=3")) {
        cl_kernel ka = clCreateKernel(p2, "addresses", &e);
        CHECK(e);
        cl_mem bo = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 16, NULL, &e);
        CHECK(e);
        CHECK(clSetKernelArg(ka, 0, sizeof bo, &bo));
        CHECK(clSetKernelArg(ka, 1, sizeof bx, &bx));
        CHECK(clSetKernelArg(ka, 2, sizeof bw, &bw));
        size_t one = 1;
        CHECK(clEnqueueNDRangeKernel(q, ka, 1, NULL, &one, &one, 0, NULL, NULL));
        unsigned long long at[2];
        CHECK(clEnqueueReadBuffer(q, bo, CL_TRUE, 0, sizeof at, at, 0, NULL, NULL));
        map_from_env(maps, "MAP_X", at[0]);
        map_from_env(maps + 128, "MAP_W", at[1]);
        if (!strstr(extra, "TMA=1"))
            memset(maps, 0, sizeof maps); /* the kernel writes them */
        printf("x at %llx, w at %llx\n", at[0], at[1]);
    }
    cl_mem bm = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof maps, maps, &e);
    CHECK(e);
    CHECK(clSetKernelArg(k, 3, sizeof bm, &bm));
    size_t threads = 128 * (size_t)(CW + 1);
    size_t g[2] = {(size_t)N / WGN * threads, (size_t)M / (64 * CW)}, l[2] = {threads, 1};
    if (strstr(extra, "PERSIST=1")) {
        /* a work-group per compute unit, taking tiles in turn */
        cl_uint units;
        CHECK(clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
        g[0] = units * threads;
        g[1] = 1;
    }
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, g, l, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, (size_t)M * N * 4, Y, 0, NULL, NULL));
    if (strstr(extra, "TMA=2") || strstr(extra, "TMA=3")) {
        /* the kernel's maps against the driver's */
        unsigned long long got[32], want[32];
        CHECK(clEnqueueReadBuffer(q, bm, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
        map_from_env((unsigned char *)want, "MAP_X", got[0]);
        map_from_env((unsigned char *)want + 128, "MAP_W", got[16]);
        for (int i = 0; i < 32; i++)
            if (got[i] != want[i])
                printf("map word %d: %016llx, the driver's %016llx\n", i, got[i], want[i]);
        printf("maps compared\n");
    }
    int bad = 0;
    for (int s = 0; s < 4096; s++) {
        int r = s < 2048 ? (s * 7919) % M : (s % 2 ? 5 : M - 3);
        int c = s < 2048 ? (s * 104729) % N : (s * 13) % N;
        float want = 0;
        for (int kk = 0; kk < K; kk++)
            want += bf(X[(size_t)r * K + kk]) * bf(W[(size_t)kk * N + c]);
        if (Y[(size_t)r * N + c] != want) {
            if (bad < 5)
                printf("bad at %d,%d: %g want %g\n", r, c, Y[(size_t)r * N + c], want);
            bad++;
        }
    }
    printf("check: %d of 4096 wrong\n", bad);
    double t[64];
    time_launches(q, k, g, l, reps, t);
    double med = t[reps / 2];
    printf("ws CW %d WG_N %d STAGES %d %s MAXNREG %s: M %d N %d K %d median %.1f us best %.1f, %.0f TFLOP/s (median)\n",
           CW, WGN, ST, extra, getenv("MAXNREG") ? getenv("MAXNREG") : "-", M, N, K, med, t[0],
           2.0 * M * N * K / med / 1e6);
    return bad != 0;
}
