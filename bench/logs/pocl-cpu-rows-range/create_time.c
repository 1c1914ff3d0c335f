#define _POSIX_C_SOURCE 200809L
/* create_time.c - times llama_q_proj_create and a first call at ROWS rows
 * (argv[1]; 32) on the first device; includes the llama_q_proj.c of -I. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "llama_q_proj.c"
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv)
{
    size_t rows = argc > 1 ? (size_t)atoi(argv[1]) : 32;
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &err);
    cl_mem b[5];
    size_t sz[5] = {rows * 4096 * 4, 4096 * 4096 * 4, 4096 * 16 * 4,
                    16 * 4096 * 4, rows * 4096 * 4};
    for (int i = 0; i < 5; i++) {
        b[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sz[i], NULL, &err);
    }
    double t0 = now();
    llama_q_proj *k = NULL;
    err = llama_q_proj_create(ctx, d, &k);
    double t1 = now();
    int v = llama_q_proj_variant(k);
    err |= llama_q_proj_enqueue(k, q, rows, b[0], b[1], b[2], b[3], b[4], 0,
                                NULL, NULL);
    clFinish(q);
    double t2 = now();
    printf("create %.0f ms (variant %d), first call at %zu rows %.0f ms, "
           "status %d\n", (t1 - t0) * 1e3, v, rows, (t2 - t1) * 1e3,
           (int)err);
    llama_q_proj_destroy(k);
    return 0;
}
