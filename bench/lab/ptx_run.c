/* ptx_run: launches one kernel of an emitted kernel file's PTX through
 * the CUDA driver API, so that Nsight Compute, which sees no OpenCL
 * launch, can profile the machine code NVIDIA's OpenCL compiler made of
 * it; also times it by CUDA events.
 *
 *   DIR/ptx_info NAME-v2.cl > k.ptx    (bench/lab/variant_source.c)
 *   sh bench/lab/ptx_tools.sh DIR   (DIR/ptx_info, DIR/ptx_run)
 *   DIR/ptx_run k.ptx KERNEL GX GY BX BY REPS ARG...
 *   ncu --clock-control none -k KERNEL -s 1 -c 1 DIR/ptx_run ...
 *
 * GX, GY: work-groups along dimensions 0 and 1 (OpenCL's global size
 * over its local size), BX, BY: the local size. Each ARG is one kernel
 * argument, in order:
 *   i:V        an int of value V
 *   f32:N      N floats, uniform in [-1, 1)
 *   bf16:N     N bf16 values, uniform in [-1, 1)
 *   f16:N      N halves, uniform in [-1, 1)
 *   lab:N:V    N int32 labels in [0, V)
 *   z:B        B bytes of zeros (scratch, sync words)
 *   null       a NULL buffer
 * Prints the median time of REPS launches after one to warm up (µs).
 * Inputs come from a fixed seed: the same arguments, the same values.
 * PTX_RUN_DUMP=A:FILE writes argument A's buffer (counted from 0) to
 * FILE after the launches, to compare two kernels' outputs.
 *
 * NVIDIA's OpenCL PTX reads from the driver's %envreg registers what a
 * CUDA launch does not set as OpenCL's does (bench/lab/envreg_probe.cl
 * shows which): %envreg0-2 the offset of the launch's first group (a
 * grid split into several launches), %envreg3-5 the global offset,
 * %envreg6-8 the groups of the whole grid (get_num_groups). Here each
 * read becomes its value for one launch of GX x GY groups without
 * offsets: 0, and GX, GY, 1 for the groups. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_util.h"

#define MAX_ARGS 32

static void check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        const char *s = NULL;
        cuGetErrorString(r, &s);
        fprintf(stderr, "ptx_run: %s: %s\n", what, s != NULL ? s : "?");
        exit(1);
    }
}

/* PTX with every %envregN operand replaced by its value for a launch of
 * GX x GY groups without offsets (the comment above); their count in
 * *N. */
static char *without_envregs(const char *ptx, unsigned gx, unsigned gy,
                             int *n)
{
    static const char reg[] = "%envreg";
    /* Each register's value takes at most 10 digits where its name took
     * 8 characters or more. */
    char *out = malloc(2 * strlen(ptx) + 1), *o = out;
    *n = 0;
    for (const char *p = ptx; *p != '\0';) {
        if (strncmp(p, reg, sizeof reg - 1) == 0) {
            p += sizeof reg - 1;
            int r = 0;
            while (*p >= '0' && *p <= '9') {
                r = 10 * r + (*p++ - '0');
            }
            unsigned v = r == 6 ? gx : r == 7 ? gy : r == 8 ? 1u : 0u;
            o += sprintf(o, "%u", v);
            ++*n;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

static uint32_t rng = 12345u;

static float uniform(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / 8388608.0f - 1.0f;
}

static uint16_t to_f16(float x)
{
    /* |x| < 1 and normal or zero: no overflow, subnormals flushed. */
    uint32_t u;
    memcpy(&u, &x, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    int e = (int)((u >> 23) & 0xff) - 127 + 15;
    if (e <= 0) {
        return (uint16_t)sign;
    }
    uint32_t m = (u & 0x7fffffu) + 0x1000u;
    if (m & 0x800000u) {
        m = 0;
        e++;
    }
    return (uint16_t)(sign | ((uint32_t)e << 10) | (m >> 13));
}

/* A device buffer of BYTES filled from HOST (NULL: zeros). */
static CUdeviceptr device_buffer(size_t bytes, const void *host)
{
    CUdeviceptr p;
    check(cuMemAlloc(&p, bytes), "cuMemAlloc");
    if (host != NULL) {
        check(cuMemcpyHtoD(p, host, bytes), "cuMemcpyHtoD");
    } else {
        check(cuMemsetD8(p, 0, bytes), "cuMemsetD8");
    }
    return p;
}

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: ptx_run FILE.ptx KERNEL GX GY BX BY REPS "
                        "ARG...\n");
        return 2;
    }
    int n_args = argc - 8;
    if (n_args > MAX_ARGS) {
        fprintf(stderr, "ptx_run: at most %d arguments\n", MAX_ARGS);
        return 2;
    }
    unsigned gx = (unsigned)atoi(argv[3]), gy = (unsigned)atoi(argv[4]);
    unsigned bx = (unsigned)atoi(argv[5]), by = (unsigned)atoi(argv[6]);
    int reps = atoi(argv[7]);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    char log[8192] = "";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof log};
    char *text = slurp(argv[1]);
    int n_env = 0;
    char *ptx = without_envregs(text, gx, gy, &n_env);
    free(text);
    printf("%s: %d reads of %%envreg set\n", argv[1], n_env);
    CUresult r = cuModuleLoadDataEx(&mod, ptx, 2, opts, vals);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "%s\n", log);
    }
    check(r, "cuModuleLoadDataEx");
    check(cuModuleGetFunction(&fn, mod, argv[2]), "cuModuleGetFunction");
    int regs = 0, shared = 0, local = 0;
    cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
    cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
    cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
    printf("%s: %d registers, %d bytes of shared memory, %d of local "
           "(spills, stack) a thread\n", argv[2], regs, shared, local);

    static CUdeviceptr ptrs[MAX_ARGS];
    static size_t bytes[MAX_ARGS];
    static int ints[MAX_ARGS];
    void *params[MAX_ARGS];
    for (int a = 0; a < n_args; a++) {
        const char *s = argv[8 + a];
        size_t n = 0;
        unsigned v = 0;
        if (strncmp(s, "i:", 2) == 0) {
            ints[a] = atoi(s + 2);
            params[a] = &ints[a];
            continue;
        }
        if (strcmp(s, "null") == 0) {
            ptrs[a] = 0;
        } else if (strncmp(s, "f32:", 4) == 0) {
            n = strtoul(s + 4, NULL, 10);
            float *h = malloc(n * 4);
            for (size_t i = 0; i < n; i++) {
                h[i] = uniform();
            }
            ptrs[a] = device_buffer(n * 4, h);
            bytes[a] = n * 4;
            free(h);
        } else if (strncmp(s, "bf16:", 5) == 0 || strncmp(s, "f16:", 4) == 0) {
            int bf = s[0] == 'b';
            n = strtoul(s + (bf ? 5 : 4), NULL, 10);
            uint16_t *h = malloc(n * 2);
            for (size_t i = 0; i < n; i++) {
                h[i] = bf ? tobf(uniform()) : to_f16(uniform());
            }
            ptrs[a] = device_buffer(n * 2, h);
            bytes[a] = n * 2;
            free(h);
        } else if (sscanf(s, "lab:%zu:%u", &n, &v) == 2 && v > 0) {
            int32_t *h = malloc(n * 4);
            for (size_t i = 0; i < n; i++) {
                h[i] = (int32_t)((uniform() + 1.0f) * 0.5f * (float)v) %
                       (int32_t)v;
            }
            ptrs[a] = device_buffer(n * 4, h);
            bytes[a] = n * 4;
            free(h);
        } else if (strncmp(s, "z:", 2) == 0) {
            bytes[a] = strtoul(s + 2, NULL, 10);
            ptrs[a] = device_buffer(bytes[a], NULL);
        } else {
            fprintf(stderr, "ptx_run: argument %d: unknown '%s'\n", a, s);
            return 2;
        }
        params[a] = &ptrs[a];
    }

    CUevent start, stop;
    check(cuEventCreate(&start, 0), "cuEventCreate");
    check(cuEventCreate(&stop, 0), "cuEventCreate");
    float *us = malloc(sizeof *us * (size_t)(reps > 0 ? reps : 1));
    for (int i = -1; i < reps; i++) {
        check(cuEventRecord(start, 0), "cuEventRecord");
        check(cuLaunchKernel(fn, gx, gy, 1, bx, by, 1, 0, 0, params, NULL),
              "cuLaunchKernel");
        check(cuEventRecord(stop, 0), "cuEventRecord");
        check(cuEventSynchronize(stop), "cuEventSynchronize");
        float ms = 0.0f;
        check(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
        if (i >= 0) {
            us[i] = ms * 1000.0f;
        }
    }
    if (reps > 0) {
        qsort(us, (size_t)reps, sizeof *us, by_value);
        printf("%s: median %.2f us over %d launches (min %.2f, max %.2f)\n",
               argv[2], us[reps / 2], reps, us[0], us[reps - 1]);
    }
    free(us);
    const char *dump = getenv("PTX_RUN_DUMP");
    int da = -1, at = 0;
    if (dump != NULL && sscanf(dump, "%d:%n", &da, &at) == 1 && da >= 0 &&
        da < n_args && bytes[da] > 0) {
        void *h = malloc(bytes[da]);
        check(cuMemcpyDtoH(h, ptrs[da], bytes[da]), "cuMemcpyDtoH");
        FILE *f = fopen(dump + at, "wb");
        if (f == NULL || fwrite(h, 1, bytes[da], f) != bytes[da]) {
            fprintf(stderr, "ptx_run: cannot write %s\n", dump + at);
            return 1;
        }
        fclose(f);
        free(h);
    }
    free(ptx);
    cuDevicePrimaryCtxRelease(dev);
    return 0;
}
