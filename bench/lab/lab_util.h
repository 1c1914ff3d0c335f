/* lab_util.h - what the lab programs of bench/lab share: a checked
 * OpenCL call, a file read whole, bf16 to and from float, a comparison
 * of doubles for qsort, a kernel's median time, a string with every one
 * of a substring replaced, and a program built with its registers
 * printed. Include after <CL/cl.h>. */
#ifndef SPECL_LAB_UTIL_H
#define SPECL_LAB_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CALL's status, or the file, line and call on stderr and exit 1. */
#define CHECK(call)                                                      \
    do {                                                                 \
        cl_int e_ = (call);                                              \
        if (e_ != CL_SUCCESS) {                                          \
            fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__,     \
                    #call, e_);                                          \
            exit(1);                                                     \
        }                                                                \
    } while (0)

/* The file at PATH, NUL-terminated (exit 1 where it cannot be read). */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s == NULL || fread(s, 1, (size_t)n, f) != (size_t)n) {
        exit(1);
    }
    s[n] = 0;
    fclose(f);
    return s;
}

static inline float bf(unsigned short h)
{
    unsigned u = (unsigned)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* F rounded to the nearest bf16, ties to even. */
static inline unsigned short tobf(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (unsigned short)(u >> 16);
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median µs (profiling events, start to end) of REPS runs of kernel
 * K on Q over DIMS dimensions of G items in groups of L, after WARM runs
 * untimed. Q must profile. */
static inline double lab_time_kernel(cl_command_queue q, cl_kernel k,
                                     cl_uint dims, const size_t *g,
                                     const size_t *l, int warm, int reps)
{
    double *t = malloc((size_t)reps * sizeof *t);
    if (t == NULL) {
        exit(1);
    }
    for (int r = -warm; r < reps; r++) {
        cl_event e;
        CHECK(clEnqueueNDRangeKernel(q, k, dims, NULL, g, l, 0, NULL, &e));
        CHECK(clFinish(q));
        cl_ulong a, b;
        CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START,
                                      sizeof a, &a, NULL));
        CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof b,
                                      &b, NULL));
        if (r >= 0) {
            t[r] = (double)(b - a) / 1e3;
        }
        CHECK(clReleaseEvent(e));
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    const double median = t[reps / 2];
    free(t);
    return median;
}

/* S with every A replaced by B (a new string). */
static inline char *lab_replace_all(const char *s, const char *a,
                                    const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n = 0;
    for (const char *p = strstr(s, a); p; p = strstr(p + la, a)) {
        n++;
    }
    char *r = malloc(strlen(s) + n * (lb + 1) + 1), *o = r;
    if (r == NULL) {
        exit(1);
    }
    const char *p = s, *q;
    while ((q = strstr(p, a)) != NULL) {
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, b, lb);
        o += lb;
        p = q + la;
    }
    strcpy(o, p);
    return r;
}

/* SRC built for DEV with OPTS (its build log on stderr and exit 1 where
 * it fails); the log's register and spill lines printed (ptxas, with
 * -cl-nv-verbose). */
static inline cl_program lab_build(cl_context ctx, cl_device_id dev,
                                   const char *src, const char *opts)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    static char log[1 << 16];
    cl_int st = clBuildProgram(p, 1, &dev, opts, NULL, NULL);
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log,
                          NULL);
    if (st != CL_SUCCESS) {
        fprintf(stderr, "%s\n", log);
        exit(1);
    }
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "Used") || strstr(line, "spill")) {
            printf("  %s\n", line);
        }
    }
    return p;
}

#endif
