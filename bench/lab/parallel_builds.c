/* parallel_builds.c - whether a device's OpenCL compiler builds several
 * programs at once: an emitted NAME.c's NAME_create (which builds its
 * program) called N times one after another, then N times at once on N
 * threads, each its own handle in one context. Built per stub:
 *
 *   cc -O2 -DSTUB=NAME -I OUTDIR -DSTUB_C='"OUTDIR/NAME.c"' \
 *      -o pb bench/lab/parallel_builds.c -lOpenCL -pthread
 *   pb [N [PLATFORM [DEVICE]]]
 *
 * Prints each serial build's seconds, the serial total, and the wall time
 * of the N builds at once. The driver may cache a program's binary by
 * its source: the first build is printed apart, and each later build
 * is of the same source, so a cache shows as builds far faster than the
 * first. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include STUB_C

#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)
#define API(name) PASTE(STUB, name)

#define THREADS_MOST 64

static cl_context ctx;
static cl_device_id dev;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct job {
    struct STUB *handle;
    cl_int status;
    double seconds;
};

static void *create_one(void *arg)
{
    struct job *j = arg;
    double t0 = now_s();
    j->status = API(_create)(ctx, dev, &j->handle);
    j->seconds = now_s() - t0;
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    int pi = argc > 2 ? atoi(argv[2]) : 0, di = argc > 3 ? atoi(argv[3]) : 0;
    cl_platform_id plats[8];
    cl_device_id devs[8];
    cl_uint np = 0, nd = 0;
    cl_int err;
    if (n < 1 || n > THREADS_MOST ||
        clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || pi >= (int)np ||
        clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, 8, devs, &nd) !=
            CL_SUCCESS ||
        di >= (int)nd) {
        fprintf(stderr, "usage: pb [N (1-%d) [PLATFORM [DEVICE]]]\n",
                THREADS_MOST);
        return 2;
    }
    dev = devs[di];
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "clCreateContext: %d\n", err);
        return 1;
    }
    struct job first = {0}, jobs[THREADS_MOST] = {{0}};
    create_one(&first);
    printf("first build: %.3f s (status %d)\n", first.seconds,
           first.status);
    double serial = 0;
    for (int i = 0; i < n; i++) {
        create_one(&jobs[i]);
        serial += jobs[i].seconds;
        printf("serial build %d: %.3f s (status %d)\n", i, jobs[i].seconds,
               jobs[i].status);
        API(_destroy)(jobs[i].handle);
    }
    pthread_t tid[THREADS_MOST];
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        pthread_create(&tid[i], NULL, create_one, &jobs[i]);
    }
    int failed = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(tid[i], NULL);
        failed += jobs[i].status != CL_SUCCESS;
        API(_destroy)(jobs[i].handle);
    }
    double wall = now_s() - t0;
    printf("%d builds: %.3f s one after another, %.3f s at once on %d "
           "threads (%.2fx; %d failed)\n",
           n, serial, wall, n, serial / wall, failed);
    API(_destroy)(first.handle);
    clReleaseContext(ctx);
    return failed != 0;
}
