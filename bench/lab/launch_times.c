/* launch_times.c - the time of each kernel launch of an emitted NAME.c,
 * from OpenCL profiling events: the stub's public API returns only the
 * last launch's event, so this builds the stub with its
 * clEnqueueNDRangeKernel wrapped to keep every launch's. Built per stub:
 *
 *   cc -O2 -DSTUB=NAME -I OUTDIR -DSTUB_C='"OUTDIR/NAME.c"' \
 *      -o lt bench/lab/launch_times.c -lOpenCL
 *   lt [ROWS [REPS [VARIANT [SIZE2 SIZE3 ...]]]]
 *
 * Every buffer is 256 MiB (LT_MIB MiB where set) of small values of
 * either sign (as bf16 or f16 halves, or floats of them), the first
 * runtime size ROWS (4096), the
 * others SIZE2, SIZE3, ... in NAME.h's order (1 where not given;
 * VARIANT -1: the one the stub picks); REPS calls after three to warm
 * up (30); LT_NULL=I,J,... passes buffers I, J, ... as NULL. Prints, per
 * launch in order, the median and least time and the median gap since
 * the end of the launch before. One set of buffers: a warmer cache than
 * specl bench's rotated sets. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define LAUNCHES_MOST 64
#define REPS_MOST 1000

static cl_event launch_events[LAUNCHES_MOST];
static int n_launch_events;

/* clEnqueueNDRangeKernel keeping the launch's event. */
static cl_int launch_kept(cl_command_queue q, cl_kernel k, cl_uint dims,
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
    if (n_launch_events < LAUNCHES_MOST) {
        clRetainEvent(e);
        launch_events[n_launch_events++] = e;
    }
    if (done != NULL) {
        *done = e;
    } else {
        clReleaseEvent(e);
    }
    return CL_SUCCESS;
}

#define clEnqueueNDRangeKernel launch_kept
#include STUB_C
#undef clEnqueueNDRangeKernel

#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)
#define API(name) PASTE(STUB, name)

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "lt: %s: OpenCL error %d\n", what, err);
    exit(1);
}

int main(int argc, char **argv)
{
    const size_t rows = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    const int reps = argc > 2 ? atoi(argv[2]) : 30;
    const int variant = argc > 3 ? atoi(argv[3]) : -1;
    if (rows == 0 || reps < 1 || reps > REPS_MOST) {
        fprintf(stderr, "lt: rows >= 1, reps 1 to %d\n", REPS_MOST);
        return 2;
    }
    cl_platform_id platform;
    cl_device_id dev;
    cl_int err = clGetPlatformIDs(1, &platform, NULL);
    if (err == CL_SUCCESS) {
        err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    }
    if (err != CL_SUCCESS) {
        die("no device", err);
    }
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        die("clCreateContext", err);
    }
    cl_command_queue q =
        clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
        die("clCreateCommandQueue", err);
    }
    struct STUB *k = NULL;
    err = variant < 0 ? API(_create)(ctx, dev, &k)
                      : API(_create_variant)(ctx, dev, variant, &k);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "%s\n", k != NULL ? API(_build_log)(k) : "");
        die("create", err);
    }
    printf("variant %d\n", API(_variant)(k));

    const char *mib = getenv("LT_MIB");
    const size_t bytes = (size_t)(mib != NULL ? atoi(mib) : 256) << 20;
    unsigned short *fill = malloc(bytes);
    if (fill == NULL) {
        fprintf(stderr, "lt: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < bytes / 2; i++) {
        /* about 1 to 1.8 in magnitude, a sign every eighth pair */
        fill[i] = (unsigned short)(0x3c00u + (i * 2654435761u >> 7) % 200u +
                                   ((i >> 3) & 1u ? 0x8000u : 0u));
    }
    cl_mem buffers[API(_N_BUFFERS)];
    for (int i = 0; i < API(_N_BUFFERS); i++) {
        buffers[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE |
                                             CL_MEM_COPY_HOST_PTR,
                                    bytes, fill, &err);
        if (err != CL_SUCCESS) {
            die("clCreateBuffer", err);
        }
    }
    free(fill);
    /* LT_NULL: buffer indices (in NAME.h's order) passed as NULL, for
     * outputs a call may leave out. */
    for (const char *p = getenv("LT_NULL"); p != NULL && *p != '\0';) {
        char *end;
        long i = strtol(p, &end, 10);
        if (end == p || i < 0 || i >= API(_N_BUFFERS)) {
            fprintf(stderr, "lt: LT_NULL: no buffer '%s'\n", p);
            return 2;
        }
        if (buffers[i] != NULL) {
            clReleaseMemObject(buffers[i]);
            buffers[i] = NULL;
        }
        p = *end == ',' ? end + 1 : end;
    }
    size_t sizes[API(_N_SIZES)];
    for (int i = 0; i < API(_N_SIZES); i++) {
        sizes[i] = 1;
    }
    sizes[0] = rows;
    for (int i = 1; i < API(_N_SIZES) && 3 + i < argc; i++) {
        sizes[i] = (size_t)atol(argv[3 + i]);
        if (sizes[i] == 0) {
            fprintf(stderr, "lt: size %d must be >= 1\n", i + 1);
            return 2;
        }
    }
    const size_t scratch_bytes = API(_scratch_bytes_array)(sizes);
    cl_mem scratch = NULL;
    if (scratch_bytes != 0) {
        scratch = clCreateBuffer(ctx, CL_MEM_READ_WRITE, scratch_bytes, NULL,
                                 &err);
        if (err != CL_SUCCESS) {
            die("scratch", err);
        }
    }

    static double took[LAUNCHES_MOST][REPS_MOST];
    static double gap[LAUNCHES_MOST][REPS_MOST];
    int launches = 0;
    for (int r = -3; r < reps; r++) {
        n_launch_events = 0;
        err = API(_enqueue_array)(k, q, sizes, buffers, scratch, 0, NULL,
                                  NULL);
        if (err == CL_SUCCESS) {
            err = clFinish(q);
        }
        if (err != CL_SUCCESS) {
            die("enqueue", err);
        }
        launches = n_launch_events;
        cl_ulong last_end = 0;
        for (int i = 0; i < n_launch_events; i++) {
            cl_ulong start = 0, end = 0;
            clGetEventProfilingInfo(launch_events[i],
                                    CL_PROFILING_COMMAND_START,
                                    sizeof start, &start, NULL);
            clGetEventProfilingInfo(launch_events[i], CL_PROFILING_COMMAND_END,
                                    sizeof end, &end, NULL);
            if (r >= 0) {
                took[i][r] = (double)(end - start) / 1e3;
                gap[i][r] = i > 0 ? (double)(start - last_end) / 1e3 : 0.0;
            }
            last_end = end;
            clReleaseEvent(launch_events[i]);
        }
    }
    double total = 0.0;
    for (int i = 0; i < launches; i++) {
        qsort(took[i], (size_t)reps, sizeof took[i][0], by_value);
        qsort(gap[i], (size_t)reps, sizeof gap[i][0], by_value);
        printf("launch %d: %8.2f us (least %.2f), gap before %.2f\n", i,
               took[i][reps / 2], took[i][0], gap[i][reps / 2]);
        total += took[i][reps / 2] + gap[i][reps / 2];
    }
    printf("sum %.2f us\n", total);

    if (scratch != NULL) {
        clReleaseMemObject(scratch);
    }
    for (int i = 0; i < API(_N_BUFFERS); i++) {
        if (buffers[i] != NULL) {
            clReleaseMemObject(buffers[i]);
        }
    }
    API(_destroy)(k);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
