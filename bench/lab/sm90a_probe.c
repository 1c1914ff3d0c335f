/* sm90a_probe.c - can OpenCL reach sm_90a (wgmma) on an NVIDIA Hopper?
 * NVIDIA's OpenCL compiler writes PTX for `.target sm_90`, where ptxas
 * rejects wgmma ("not supported on .target 'sm_90'"), and ignores
 * -cl-nv-arch. But a program's binary on NVIDIA is that PTX text, and
 * clCreateProgramWithBinary takes PTX back: this probe builds a plain
 * kernel, rewrites its PTX to `.target sm_90a` with wgmma's fence, commit
 * and wait added, loads it as a binary, runs it on two warpgroups and
 * checks the stores. usage: sm90a_probe [P:D]
 * Build: cc -O2 -o sm90a_probe bench/lab/sm90a_probe.c -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                      \
    do {                                                                 \
        cl_int e_ = (call);                                              \
        if (e_ != CL_SUCCESS) {                                          \
            fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__,     \
                    #call, e_);                                          \
            exit(1);                                                     \
        }                                                                \
    } while (0)

#define ITEMS 256 /* two warpgroups of 128: wgmma's .sync.aligned */

static const char *source =
    "__kernel void probe(__global float *out)\n"
    "{ out[get_global_id(0)] = 1.0f; }\n";

/* S with the first A replaced by B (malloc'd), or NULL without A. */
static char *replace(const char *s, const char *a, const char *b)
{
    const char *at = strstr(s, a);
    if (at == NULL) {
        return NULL;
    }
    char *r = malloc(strlen(s) - strlen(a) + strlen(b) + 1);
    if (r == NULL) {
        exit(1);
    }
    memcpy(r, s, (size_t)(at - s));
    strcpy(r + (at - s), b);
    strcat(r, at + strlen(a));
    return r;
}

static void print_log(cl_program pr, cl_device_id dev)
{
    size_t n = 0;
    CHECK(clGetProgramBuildInfo(pr, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n));
    char *log = malloc(n + 1);
    if (log == NULL) {
        exit(1);
    }
    CHECK(clGetProgramBuildInfo(pr, dev, CL_PROGRAM_BUILD_LOG, n, log,
                                NULL));
    log[n] = 0;
    printf("%s\n", log);
    free(log);
}

int main(int argc, char **argv)
{
    int pi = 0, di = 0;
    if (argc > 1) {
        sscanf(argv[1], "%d:%d", &pi, &di);
    }
    cl_platform_id ps[8];
    cl_uint np;
    CHECK(clGetPlatformIDs(8, ps, &np));
    cl_device_id ds[8];
    cl_uint nd;
    CHECK(clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 8, ds, &nd));
    cl_device_id dev = ds[di];
    cl_int e;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(e);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    CHECK(e);

    cl_program plain = clCreateProgramWithSource(ctx, 1, &source, NULL, &e);
    CHECK(e);
    CHECK(clBuildProgram(plain, 1, &dev, "", NULL, NULL));
    size_t size;
    CHECK(clGetProgramInfo(plain, CL_PROGRAM_BINARY_SIZES, sizeof size,
                           &size, NULL));
    unsigned char *ptx = malloc(size + 1);
    if (ptx == NULL) {
        exit(1);
    }
    unsigned char *bins[1] = {ptx};
    CHECK(clGetProgramInfo(plain, CL_PROGRAM_BINARIES, sizeof bins, bins,
                           NULL));
    ptx[size] = 0;
    char *retargeted = replace((char *)ptx, ".target sm_90,", ".target sm_90a,");
    char *patched = retargeted == NULL
                        ? NULL
                        : replace(retargeted, "\tret;",
                                  "\twgmma.fence.sync.aligned;\n"
                                  "\twgmma.commit_group.sync.aligned;\n"
                                  "\twgmma.wait_group.sync.aligned 0;\n"
                                  "\tret;");
    if (patched == NULL) {
        printf("no `.target sm_90,` PTX here: not a Hopper NVIDIA device\n");
        return 1;
    }

    size_t len = strlen(patched) + 1;
    const unsigned char *pbins[1] = {(const unsigned char *)patched};
    cl_int status;
    cl_program pr =
        clCreateProgramWithBinary(ctx, 1, &dev, &len, pbins, &status, &e);
    CHECK(e);
    e = clBuildProgram(pr, 1, &dev, "", NULL, NULL);
    printf("sm_90a PTX with wgmma fence/commit/wait: build %d\n", e);
    print_log(pr, dev);
    if (e != CL_SUCCESS) {
        return 1;
    }
    cl_kernel k = clCreateKernel(pr, "probe", &e);
    CHECK(e);
    float host[ITEMS] = {0};
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                sizeof host, host, &e);
    CHECK(e);
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    size_t global = ITEMS, local = 128;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL,
                                 NULL));
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof host, host, 0,
                              NULL, NULL));
    int ok = 0;
    for (int i = 0; i < ITEMS; i++) {
        ok += host[i] == 1.0f;
    }
    printf("ran: %d of %d stores\n", ok, ITEMS);
    free(patched);
    free(retargeted);
    free(ptx);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(pr);
    clReleaseProgram(plain);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return ok == ITEMS ? 0 : 1;
}
