/* adapter_chunks.c - lora_backward's adapter gradients over slices of
 * the rows, one public call each, against one call over every row: does
 * the second read of a slice's X and dY (lora_bwd_grad after lora_bwd_tg)
 * come from L2 when the slice fits it? Two stubs of one shape, AD (dA,
 * dB written) and ADA (added into): bench/lab/adapter-chunks.yaml.
 *
 *   specl gen bench/lab/adapter-chunks.yaml -o OUT
 *   for s in ad ada; do cc -O2 -c -I OUT \
 *       -DclEnqueueNDRangeKernel=launch_kept OUT/$s.c -o $s.o; done
 *   cc -O2 -I OUT -o ac bench/lab/adapter_chunks.c ad.o ada.o -lOpenCL
 *   ac [ROWS [REPS]]
 *
 * Prints, per slice height, the median time from the first launch's
 * start to the last one's end (each slice a buffer of its own), and how far its dA and dB lie from the
 * one call's (relative to the largest magnitude). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ad.h"
#include "ada.h"
#include "lab_util.h"

#define EVENTS_MOST 256
static cl_event events[EVENTS_MOST];
static int n_events;

cl_int launch_kept(cl_command_queue q, cl_kernel k, cl_uint dims,
                   const size_t *offset, const size_t *global,
                   const size_t *local, cl_uint n_wait,
                   const cl_event *wait, cl_event *done);
cl_int launch_kept(cl_command_queue q, cl_kernel k, cl_uint dims,
                   const size_t *offset, const size_t *global,
                   const size_t *local, cl_uint n_wait,
                   const cl_event *wait, cl_event *done)
{
    cl_event e;
    cl_int err = clEnqueueNDRangeKernel(q, k, dims, offset, global, local,
                                        n_wait, wait, &e);
    if (err != CL_SUCCESS) {
        return err;
    }
    if (n_events < EVENTS_MOST) {
        clRetainEvent(e);
        events[n_events++] = e;
    }
    if (done != NULL) {
        *done = e;
    } else {
        clReleaseEvent(e);
    }
    return CL_SUCCESS;
}

/* ROWS rows of BUF (WIDTH floats each) as buffers of H rows each. */
static cl_mem *slices(cl_context ctx, cl_command_queue q, cl_mem buf,
                      size_t rows, size_t width, size_t h)
{
    size_t n = (rows + h - 1) / h;
    cl_mem *s = calloc(n, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        size_t m = i * h, c = rows - m < h ? rows - m : h;
        cl_int err;
        s[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, c * width * 4, NULL,
                              &err);
        CHECK(err);
        CHECK(clEnqueueCopyBuffer(q, buf, s[i], m * width * 4, 0,
                                  c * width * 4, 0, NULL, NULL));
    }
    CHECK(clFinish(q));
    return s;
}

/* One pass over ROWS rows in slices of H: the time, dA and dB read back. */
static double run(cl_context ctx, cl_command_queue q, struct ad *k,
                  struct ada *ka, size_t rows, size_t h, cl_mem x, cl_mem a,
                  cl_mem b, cl_mem dy, cl_mem da, cl_mem db, float *out,
                  int reps)
{
    const size_t K = ad_IN_FEATURES, N = ad_OUT_FEATURES;
    size_t n = (rows + h - 1) / h;
    cl_mem *xs = h < rows ? slices(ctx, q, x, rows, K, h) : &x;
    cl_mem *ys = h < rows ? slices(ctx, q, dy, rows, N, h) : &dy;
    size_t sb = ad_scratch_bytes(rows), sba = ada_scratch_bytes(rows);
    cl_int err;
    cl_mem scratch = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
                                    sb > sba ? sb : sba, NULL, &err);
    CHECK(err);
    double t[64];
    for (int r = -2; r < reps; r++) {
        n_events = 0;
        for (size_t i = 0; i < n; i++) {
            size_t m = i * h, c = rows - m < h ? rows - m : h;
            CHECK(i == 0 ? ad_enqueue_scratch(k, q, c, xs[i], NULL, a, b,
                                              ys[i], NULL, da, db, scratch,
                                              0, NULL, NULL)
                         : ada_enqueue_scratch(ka, q, c, xs[i], NULL, a, b,
                                               ys[i], NULL, da, db, scratch,
                                               0, NULL, NULL));
        }
        CHECK(clFinish(q));
        cl_ulong s = 0, e = 0;
        clGetEventProfilingInfo(events[0], CL_PROFILING_COMMAND_START,
                                sizeof s, &s, NULL);
        clGetEventProfilingInfo(events[n_events - 1],
                                CL_PROFILING_COMMAND_END, sizeof e, &e,
                                NULL);
        for (int i = 0; i < n_events; i++) {
            clReleaseEvent(events[i]);
        }
        if (r >= 0) {
            t[r] = (double)(e - s) / 1e3;
        }
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    size_t r16 = 16;
    CHECK(clEnqueueReadBuffer(q, da, CL_TRUE, 0, K * r16 * 4, out, 0,
                              NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, db, CL_TRUE, 0, N * r16 * 4,
                              out + K * r16, 0, NULL, NULL));
    for (size_t i = 0; h < rows && i < n; i++) {
        clReleaseMemObject(xs[i]);
        clReleaseMemObject(ys[i]);
    }
    clReleaseMemObject(scratch);
    if (h < rows) {
        free(xs);
        free(ys);
    }
    return t[reps / 2];
}

int main(int argc, char **argv)
{
    const size_t rows = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    const int reps = argc > 2 ? atoi(argv[2]) : 20;
    const size_t K = ad_IN_FEATURES, N = ad_OUT_FEATURES, R = 16;
    cl_platform_id platform;
    cl_device_id dev;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q =
        clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    struct ad *k;
    struct ada *ka;
    CHECK(ad_create(ctx, dev, &k));
    CHECK(ada_create(ctx, dev, &ka));
    size_t nx = rows * K, ny = rows * N, most = nx > ny ? nx : ny;
    float *host = malloc(most * 4);
    unsigned s = 12345;
    cl_mem buf[4];
    size_t count[4] = {nx, K * R, R * N, ny};
    for (int i = 0; i < 4; i++) {
        for (size_t j = 0; j < count[i]; j++) {
            s = s * 1664525u + 1013904223u;
            host[j] = (float)((int)(s >> 9) % 2001 - 1000) / 1000.0f;
        }
        buf[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                count[i] * 4, host, &err);
        CHECK(err);
    }
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_WRITE, K * R * 4, NULL, &err);
    CHECK(err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_WRITE, R * N * 4, NULL, &err);
    CHECK(err);
    float *one = malloc((K + N) * R * 4), *got = malloc((K + N) * R * 4);
    double t1 = run(ctx, q, k, ka, rows, rows, buf[0], buf[1], buf[2], buf[3],
                    da, db, one, reps);
    double big = 0;
    for (size_t i = 0; i < (K + N) * R; i++) {
        big = fmax(big, fabs(one[i]));
    }
    printf("rows %zu, one call: %.2f us\n", rows, t1);
    static const size_t heights[] = {2048, 1024, 768, 512, 256, 128};
    for (size_t i = 0; i < sizeof heights / sizeof heights[0]; i++) {
        if (heights[i] >= rows) {
            continue;
        }
        double t = run(ctx, q, k, ka, rows, heights[i], buf[0], buf[1], buf[2],
                       buf[3], da, db, got, reps);
        double diff = 0;
        for (size_t j = 0; j < (K + N) * R; j++) {
            diff = fmax(diff, fabs((double)got[j] - one[j]));
        }
        printf("slices of %4zu rows: %8.2f us (%.3fx), dA dB off by %.1e\n",
               heights[i], t, t1 / t, diff / big);
    }
    return 0;
}
