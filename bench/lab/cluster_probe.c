/* cluster_probe.c - can OpenCL launch thread block clusters on an NVIDIA
 * Hopper? Clusters (compute capability 9.0) would let the work-groups of
 * one long row meet at a hardware barrier and read each other's local
 * memory instead of meeting through global atomics. A CUDA kernel gets
 * them from its PTX's .reqnctapercluster (compile-time cluster size,
 * launched by a plain launch) or from a launch that names the size. This
 * probe builds bench/lab/cluster_probe.cl, takes its PTX (the program
 * binary), deletes the "trap; //@sm_90a " marks, retargets it to sm_90a,
 * puts .reqnctapercluster CLUSTER,1,1 (and with EXPLICIT 1
 * .explicitcluster) on the entry, loads it back as a binary and runs
 * GROUPS work-groups of 128, printing what each saw.
 *
 *   cc -O2 -o cluster_probe bench/lab/cluster_probe.c -lOpenCL
 *   cluster_probe [CLUSTER [GROUPS [ITERS [EXPLICIT]]]]   (2 16 1000 0)
 *
 * Run from the project root (it reads bench/lab/cluster_probe.cl). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_util.h"

#define SOURCE "bench/lab/cluster_probe.cl"
#define ITEMS 128

/* PTX with the marks deleted, the target sm_90a and the cluster's
 * directives before the entry's body. */
static char *retarget(const char *text, int cluster, int explicit_cluster)
{
    static const char mark[] = "trap; //@sm_90a ";
    char *ptx = malloc(strlen(text) + 256), *o = ptx;
    const char *entry = strstr(text, ".entry cluster_probe");
    const char *close = entry != NULL ? strchr(entry, ')') : NULL;
    const char *body = close != NULL ? strchr(close, '{') : NULL;
    if (ptx == NULL || body == NULL) {
        free(ptx);
        return NULL;
    }
    for (const char *c = text; *c != '\0';) {
        if (strncmp(c, mark, sizeof mark - 1) == 0) {
            c += sizeof mark - 1;
            continue;
        }
        if (strncmp(c, ".target sm_90", 13) == 0 && c[13] != 'a') {
            o += sprintf(o, ".target sm_90a");
            c += 13;
            continue;
        }
        if (c == body && cluster > 0) {
            o += sprintf(o, "%s.reqnctapercluster %d, 1, 1\n",
                         explicit_cluster ? ".explicitcluster\n" : "",
                         cluster);
        }
        *o++ = *c++;
    }
    *o = '\0';
    return ptx;
}

int main(int argc, char **argv)
{
    int cluster = argc > 1 ? atoi(argv[1]) : 2;
    int groups = argc > 2 ? atoi(argv[2]) : 16;
    int iters = argc > 3 ? atoi(argv[3]) : 1000;
    int explicit_cluster = argc > 4 ? atoi(argv[4]) : 0;
    static char log[1 << 16];
    cl_platform_id pl;
    cl_device_id dev;
    cl_int err, st;
    if (groups < 1 || groups > 4096) {
        printf("cluster_probe: GROUPS must be 1..4096\n");
        return 2;
    }
    char *src = slurp(SOURCE);
    CHECK(clGetPlatformIDs(1, &pl, NULL));
    CHECK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_GPU, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q =
        clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, (const char **)&src,
                                             NULL, &err);
    CHECK(err);
    err = clBuildProgram(p, 1, &dev, "-cl-std=CL1.2", NULL, NULL);
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log,
                          NULL);
    if (err != CL_SUCCESS) {
        printf("build: status %d\n%s\n", err, log);
        return 1;
    }
    size_t size = 0;
    CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size,
                           NULL));
    unsigned char *bin = malloc(size + 1);
    CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
    bin[size] = '\0';
    char *ptx = retarget((const char *)bin, cluster, explicit_cluster);
    if (ptx == NULL) {
        printf("retarget: no entry cluster_probe in the PTX\n");
        return 1;
    }
    size_t len = strlen(ptx);
    const unsigned char *pb = (const unsigned char *)ptx;
    cl_program p2 = clCreateProgramWithBinary(ctx, 1, &dev, &len, &pb, &st,
                                              &err);
    CHECK(err);
    err = clBuildProgram(p2, 1, &dev, "", NULL, NULL);
    clGetProgramBuildInfo(p2, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log,
                          NULL);
    if (err != CL_SUCCESS) {
        printf("build of the PTX: status %d\n%s\n", err, log);
        return 1;
    }
    cl_kernel k = clCreateKernel(p2, "cluster_probe", &err);
    CHECK(err);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
                                (size_t)groups * 4 * sizeof(cl_uint), NULL,
                                &err);
    CHECK(err);
    cl_mem ticks = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
                                  (size_t)groups * sizeof(cl_ulong), NULL,
                                  &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    CHECK(clSetKernelArg(k, 1, sizeof ticks, &ticks));
    CHECK(clSetKernelArg(k, 2, sizeof iters, &iters));
    size_t global = (size_t)ITEMS * (size_t)groups, local = ITEMS;
    cl_event ev;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL,
                                 &ev));
    CHECK(clFinish(q));
    cl_ulong t0, t1;
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0,
                                  &t0, NULL));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1,
                                  &t1, NULL));
    cl_uint *h = malloc((size_t)groups * 4 * sizeof *h);
    cl_ulong *t = malloc((size_t)groups * sizeof *t);
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0,
                              (size_t)groups * 4 * sizeof *h, h, 0, NULL,
                              NULL));
    CHECK(clEnqueueReadBuffer(q, ticks, CL_TRUE, 0,
                              (size_t)groups * sizeof *t, t, 0, NULL, NULL));
    printf("cluster %d%s, %d groups, %d barriers: %.2f us\n", cluster,
           explicit_cluster ? " (explicit)" : "", groups, iters,
           (double)(t1 - t0) / 1e3);
    for (int g = 0; g < groups && g < 16; g++) {
        printf("  group %d: rank %u of %u, cluster %u, the next rank's "
               "word %u, %.1f ns a barrier\n", g, h[g * 4], h[g * 4 + 1],
               h[g * 4 + 2], h[g * 4 + 3],
               iters > 0 ? (double)t[g] / iters : 0.0);
    }
    return 0;
}
