/* softmax_coop.c - times the softmax_coop kernel of an emitted variant's
 * source (variant_source.c prints it) at a few rows, against a copy of
 * the same bytes and an empty kernel of the same grid, after checking it
 * against float64. Each EDIT ("old=>new") replaces text of the source
 * first: what a part of the kernel costs, by leaving it out.
 *
 *   cc -O2 -o sclab bench/lab/softmax_coop.c -lOpenCL -lm
 *   sclab NAME-v2.cl ROWS [EDIT]...
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>

#include "lab_util.h"

#define REPS 51

static cl_context ctx;
static cl_command_queue q;
static cl_device_id dev;

static double time_kernel(cl_kernel k, const size_t *g, const size_t *l)
{
    return lab_time_kernel(q, k, 2, g, l, 5, REPS);
}

static long define_of(const char *src, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "#define %s ", name);
    const char *at = strstr(src, key);
    if (at == NULL) {
        fprintf(stderr, "sclab: no %s in the source\n", name);
        exit(2);
    }
    return strtol(at + strlen(key), NULL, 10);
}

/* SRC with every OLD replaced by NEW (a new string); exits where SRC
 * holds no OLD. */
static char *replace(const char *src, const char *old, const char *new)
{
    if (strstr(src, old) == NULL) {
        fprintf(stderr, "sclab: '%s' not in the source\n", old);
        exit(2);
    }
    return lab_replace_all(src, old, new);
}

static const char *extra =
    "\n__kernel void lab_copy(const __global uint4 *a, __global uint4 *b,"
    " const uint n) { if (get_global_id(0) < n) b[get_global_id(0)] ="
    " a[get_global_id(0)]; }\n"
    "__kernel void lab_empty(__global uint *a) { if (get_global_id(0) =="
    " 0xffffffffu) a[0] = 1; }\n"
    "__kernel __attribute__((reqd_work_group_size(COOP_WG, 1, 1)))"
    " void lab_merge(__global float *out) { __local float pm[COOP_WG];"
    " __local float ps[COOP_WG]; const uint lid = get_local_id(0);"
    " float m = (float)(lid % 7), s = 1.0f;"
    " merge_pairs(pm, ps, lid, COOP_WG, &m, &s);"
    " out[2 * lid] = m; out[2 * lid + 1] = s; }\n";

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sclab CL_FILE ROWS [OLD=>NEW]...\n");
        return 2;
    }
    char *src = slurp(argv[1]);
    const int rows = atoi(argv[2]);
    for (int a = 3; a < argc; a++) {
        char *sep = strstr(argv[a], "=>");
        if (sep == NULL) {
            fprintf(stderr, "sclab: an edit is OLD=>NEW\n");
            return 2;
        }
        *sep = 0;
        char *next = replace(src, argv[a], sep + 2);
        free(src);
        src = next;
    }
    const long features = define_of(src, "FEATURES");
    const long groups = define_of(src, "COOP_GROUPS");
    const long wg = define_of(src, "COOP_WG");
    const long row_words = define_of(src, "COOP_ROW_WORDS");
    const long most = define_of(src, "COOP_ROWS");
    const int half = strstr(src, "#define DTYPE_BF16 1") != NULL;
    const size_t esize = half ? 2 : 4, n = (size_t)rows * features;
    if (rows > most) {
        fprintf(stderr, "sclab: COOP_ROWS is %ld\n", most);
        return 2;
    }

    cl_platform_id pl;
    CHECK(clGetPlatformIDs(1, &pl, NULL));
    CHECK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    cl_int err;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    char *full = malloc(strlen(src) + strlen(extra) + 1);
    strcpy(full, src);
    strcat(full, extra);
    cl_program p = clCreateProgramWithSource(ctx, 1, (const char **)&full,
                                             NULL, &err);
    CHECK(err);
    if (clBuildProgram(p, 1, &dev, "-cl-std=CL1.2", NULL, NULL) !=
        CL_SUCCESS) {
        static char log[1 << 16];
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log,
                              NULL);
        fprintf(stderr, "%s\n", log);
        return 1;
    }

    if (getenv("LAB_MERGE") != NULL) {
        /* merge_pairs alone: (lid % 7, 1) over the group's items */
        cl_mem bo = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 8 * wg, NULL,
                                   &err);
        CHECK(err);
        cl_kernel km = clCreateKernel(p, "lab_merge", &err);
        CHECK(err);
        CHECK(clSetKernelArg(km, 0, sizeof bo, &bo));
        const size_t gm[2] = {(size_t)wg, 1}, lm[2] = {(size_t)wg, 1};
        CHECK(clEnqueueNDRangeKernel(q, km, 2, NULL, gm, lm, 0, NULL, NULL));
        float *ho = malloc(8 * wg);
        CHECK(clEnqueueReadBuffer(q, bo, CL_TRUE, 0, 8 * wg, ho, 0, NULL,
                                  NULL));
        double want = 0;
        for (long i = 0; i < wg; i++) {
            want += exp((double)(i % 7) - 6);
        }
        printf("merge over %ld items: want (6, %.6f); item 0 (%g, %g), "
               "item 33 (%g, %g), item %ld (%g, %g)\n", wg, want, ho[0],
               ho[1], ho[66], ho[67], wg - 1, ho[2 * wg - 2], ho[2 * wg - 1]);
        return 0;
    }
    float *hx = malloc(n * sizeof(float)), *hy = malloc(n * sizeof(float));
    unsigned short *hb = malloc(n * 2);
    srand(7);
    for (size_t i = 0; i < n; i++) {
        hx[i] = (float)rand() / RAND_MAX * 16 - 8;
        if (half) {
            union { float f; unsigned u; } c = {hx[i]};
            hb[i] = (unsigned short)(c.u >> 16);
            c.u = (unsigned)hb[i] << 16;
            hx[i] = c.f;
        }
    }
    const cl_mem_flags in = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    cl_mem bx = clCreateBuffer(ctx, in, n * esize, half ? (void *)hb
                                                        : (void *)hx, &err);
    CHECK(err);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * esize, NULL, &err);
    CHECK(err);
    /* enough for either layout: counters and 32-bit words, or 64-bit ones */
    const size_t words = (size_t)most * (2 + row_words) * 2;
    cl_mem bs = clCreateBuffer(ctx, CL_MEM_READ_WRITE, words * 4, NULL, &err);
    CHECK(err);
    const cl_uint zero = 0;
    CHECK(clEnqueueFillBuffer(q, bs, &zero, 4, 0, words * 4, 0, NULL, NULL));

    cl_kernel k = clCreateKernel(p, "softmax_coop", &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof bx, &bx));
    CHECK(clSetKernelArg(k, 1, sizeof by, &by));
    CHECK(clSetKernelArg(k, 2, sizeof bs, &bs));
    const size_t g[2] = {(size_t)(groups * wg), (size_t)rows};
    const size_t l[2] = {(size_t)wg, 1};
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, g, l, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, n * esize,
                              half ? (void *)hb : (void *)hy, 0, NULL, NULL));
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        const float *xr = hx + (size_t)r * features;
        double m = -1e300, s = 0;
        for (long j = 0; j < features; j++) {
            m = fmax(m, xr[j]);
        }
        for (long j = 0; j < features; j++) {
            s += exp(xr[j] - m);
        }
        for (long j = 0; j < features; j++) {
            const double want = exp(xr[j] - m) / s;
            float got = hy[(size_t)r * features + j];
            if (half) {
                union { unsigned u; float f; } c = {
                    (unsigned)hb[(size_t)r * features + j] << 16};
                got = c.f;
            }
            worst = fmax(worst, fabs(got - want) / want);
        }
    }
    const double us = time_kernel(k, g, l);

    cl_kernel kc = clCreateKernel(p, "lab_copy", &err);
    CHECK(err);
    CHECK(clSetKernelArg(kc, 0, sizeof bx, &bx));
    CHECK(clSetKernelArg(kc, 1, sizeof by, &by));
    const cl_uint vectors = (cl_uint)(n * esize / 16);
    CHECK(clSetKernelArg(kc, 2, sizeof vectors, &vectors));
    const size_t gc[2] = {(vectors + 255) / 256 * 256, 1}, lc[2] = {256, 1};
    const double copy_us = time_kernel(kc, gc, lc);
    cl_kernel ke = clCreateKernel(p, "lab_empty", &err);
    CHECK(err);
    CHECK(clSetKernelArg(ke, 0, sizeof bs, &bs));
    const double empty_us = time_kernel(ke, g, l);

    printf("%s rows %d groups %ld x %ld items: %.2f us (copy %.2f, "
           "empty %.2f; %.0f%% of copy), worst rel error %.1e%s\n",
           half ? "bf16" : "f32", rows, groups, wg, us, copy_us, empty_us,
           100 * copy_us / us, worst,
           worst < (half ? 1e-2 : 1e-5) ? "" : " WRONG");
    CHECK(clReleaseKernel(k));
    CHECK(clReleaseKernel(kc));
    CHECK(clReleaseKernel(ke));
    CHECK(clReleaseProgram(p));
    CHECK(clReleaseMemObject(bx));
    CHECK(clReleaseMemObject(by));
    CHECK(clReleaseMemObject(bs));
    CHECK(clReleaseCommandQueue(q));
    CHECK(clReleaseContext(ctx));
    free(src);
    free(full);
    free(hx);
    free(hy);
    free(hb);
    return 0;
}
