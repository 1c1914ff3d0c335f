/* ladder_spy.c - which program a stub of rows ranges runs (test_ladder.c).
 * Includes l_lora.c, emitted from a database of several row counts or
 * with every CPU's rows ranges, with its clEnqueueNDRangeKernel spied
 * on: for each ROWS:VARIANT argument it
 * enqueues a call of ROWS rows through the handle and through a clone,
 * and checks that l_lora_variant_at says VARIANT and that the kernels
 * launched are those of the handle built for VARIANT (the handle itself,
 * or the one it built for that range); a log:TEXT argument, that
 * l_lora_build_log holds TEXT. Exits 0 when every check passed,
 * printing one line per failure otherwise.
 *
 *   cc -std=c99 -I OUT ladder_spy.c -lOpenCL && ./a.out 2:1 3:4 ... */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cl_kernel spied; /* the last kernel launched */

static cl_int spy_enqueue(cl_command_queue q, cl_kernel kernel, cl_uint dims,
                          const size_t *offset, const size_t *global,
                          const size_t *local, cl_uint n_wait,
                          const cl_event *wait, cl_event *done)
{
    spied = kernel;
    return clEnqueueNDRangeKernel(q, kernel, dims, offset, global, local,
                                  n_wait, wait, done);
}

#define clEnqueueNDRangeKernel spy_enqueue
#include "l_lora.c"
#undef clEnqueueNDRangeKernel

/* Whether KERNEL is one of H's. */
static int kernel_of(const struct l_lora *h, cl_kernel kernel)
{
    for (size_t i = 0; i < sizeof h->kernels / sizeof h->kernels[0]; i++) {
        if (h->kernels[i] != NULL && h->kernels[i] == kernel) {
            return 1;
        }
    }
    return 0;
}

/* A call of ROWS rows through K on Q must run VARIANT; 1 when it did. */
static int check(const char *what, const struct l_lora *k,
                 cl_command_queue q, const cl_mem *buffers, size_t rows,
                 int variant)
{
    size_t sizes[l_lora_N_SIZES] = {rows};
    int at = l_lora_variant_at(k, sizes);
    const struct l_lora *h = variant == k->variant ? k
                                                   : k->by_variant[variant];
    spied = NULL;
    cl_int err = l_lora_enqueue_array(k, q, sizes, buffers, NULL, 0, NULL,
                                      NULL);
    if (err == CL_SUCCESS) {
        err = clFinish(q);
    }
    if (at != variant || h == NULL || err != CL_SUCCESS ||
        !kernel_of(h, spied)) {
        printf("%s, rows %zu: variant_at %d (expected %d), handle %s, "
               "status %d, %s\n", what, rows, at, variant,
               h != NULL ? "built" : "missing", (int)err,
               h != NULL && kernel_of(h, spied) ? "its kernels ran"
                                                : "other kernels ran");
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    cl_platform_id platform;
    cl_device_id dev;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) !=
            CL_SUCCESS) {
        printf("no OpenCL device\n");
        return 1;
    }
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        printf("clCreateContext: %d\n", (int)err);
        return 1;
    }
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    struct l_lora *k = NULL, *c = NULL;
    if (err == CL_SUCCESS) {
        err = l_lora_create(ctx, dev, &k);
    }
    if (err == CL_SUCCESS) {
        err = l_lora_clone(k, &c);
    }
    /* Every buffer large enough for the calls (at most 256 rows of up to
     * 1024 floats). */
    cl_mem buffers[l_lora_N_BUFFERS] = {NULL};
    for (int i = 0; i < l_lora_N_BUFFERS && err == CL_SUCCESS; i++) {
        buffers[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, NULL,
                                    &err);
    }
    int ok = err == CL_SUCCESS;
    if (!ok) {
        printf("setup: status %d\n%s\n", (int)err, l_lora_build_log(k));
    }
    for (int i = 1; ok && i < argc; i++) {
        if (strncmp(argv[i], "log:", 4) == 0) {
            if (strstr(l_lora_build_log(k), argv[i] + 4) == NULL) {
                printf("the build log lacks '%s':\n%s\n", argv[i] + 4,
                       l_lora_build_log(k));
                ok = 0;
            }
            continue;
        }
        unsigned long rows;
        int variant;
        if (sscanf(argv[i], "%lu:%d", &rows, &variant) != 2 || rows > 256 ||
            variant < 0 || variant >= l_lora_N_VARIANTS) {
            printf("bad argument %s\n", argv[i]);
            ok = 0;
            break;
        }
        ok &= check("handle", k, q, buffers, rows, variant);
        ok &= check("clone", c, q, buffers, rows, variant);
    }
    for (int i = 0; i < l_lora_N_BUFFERS; i++) {
        if (buffers[i] != NULL) {
            clReleaseMemObject(buffers[i]);
        }
    }
    l_lora_destroy(c);
    l_lora_destroy(k);
    if (q != NULL) {
        clReleaseCommandQueue(q);
    }
    clReleaseContext(ctx);
    return ok ? 0 : 1;
}
