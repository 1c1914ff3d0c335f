/* runtime.c - the OpenCL layer: devices, programs and plan launches. */
#include <stdio.h>

#include "runtime.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "emit.h"

const char *rt_status(cl_int s)
{
    switch (s) {
#define S(x) case x: return #x;
    S(CL_SUCCESS) S(CL_DEVICE_NOT_FOUND) S(CL_BUILD_PROGRAM_FAILURE)
    S(CL_OUT_OF_RESOURCES) S(CL_OUT_OF_HOST_MEMORY)
    S(CL_MEM_OBJECT_ALLOCATION_FAILURE) S(CL_INVALID_VALUE)
    S(CL_INVALID_DEVICE) S(CL_INVALID_CONTEXT) S(CL_INVALID_COMMAND_QUEUE)
    S(CL_INVALID_MEM_OBJECT) S(CL_INVALID_PROGRAM)
    S(CL_INVALID_PROGRAM_EXECUTABLE) S(CL_INVALID_KERNEL_NAME)
    S(CL_INVALID_KERNEL) S(CL_INVALID_ARG_INDEX) S(CL_INVALID_ARG_VALUE)
    S(CL_INVALID_ARG_SIZE) S(CL_INVALID_KERNEL_ARGS)
    S(CL_INVALID_WORK_DIMENSION) S(CL_INVALID_WORK_GROUP_SIZE)
    S(CL_INVALID_WORK_ITEM_SIZE) S(CL_INVALID_GLOBAL_WORK_SIZE)
    S(CL_INVALID_EVENT_WAIT_LIST) S(CL_INVALID_EVENT)
    S(CL_INVALID_BUFFER_SIZE) S(CL_INVALID_BUILD_OPTIONS)
    S(CL_PROFILING_INFO_NOT_AVAILABLE) S(CL_INVALID_PLATFORM)
    S(CL_INVALID_OPERATION)
#undef S
    default:
        return "CL error";
    }
}

static cl_int platforms(cl_platform_id **out, cl_uint *n)
{
    cl_int err = clGetPlatformIDs(0, NULL, n);
    if (err != CL_SUCCESS || *n == 0) {
        return err != CL_SUCCESS ? err : CL_DEVICE_NOT_FOUND;
    }
    *out = calloc(*n, sizeof **out);
    if (*out == NULL) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    return clGetPlatformIDs(*n, *out, NULL);
}

static cl_int devices(cl_platform_id p, cl_device_id **out, cl_uint *n)
{
    cl_int err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, NULL, n);
    if (err != CL_SUCCESS || *n == 0) {
        *n = 0;
        *out = NULL;
        return CL_SUCCESS;
    }
    *out = calloc(*n, sizeof **out);
    if (*out == NULL) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    return clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, *n, *out, NULL);
}

int rt_list_devices(FILE *out)
{
    cl_platform_id *ps = NULL;
    cl_uint np = 0;
    int index = 0;
    if (platforms(&ps, &np) != CL_SUCCESS) {
        free(ps);
        return -1;
    }
    for (cl_uint p = 0; p < np; p++) {
        cl_device_id *ds = NULL;
        cl_uint nd = 0;
        char pname[128] = "";
        clGetPlatformInfo(ps[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        if (devices(ps[p], &ds, &nd) == CL_SUCCESS) {
            for (cl_uint d = 0; d < nd; d++) {
                char name[256] = "";
                clGetDeviceInfo(ds[d], CL_DEVICE_NAME, sizeof name, name,
                                NULL);
                fprintf(out, "%d  %u:%u  %s (%s)\n", index++, p, d, name,
                        pname);
            }
        }
        free(ds);
    }
    free(ps);
    return 0;
}

/* Finds the device SELECTOR names (see rt_open). */
static int pick(const char *selector, cl_platform_id *pp, cl_device_id *pd,
                char *err, size_t errsize)
{
    cl_platform_id *ps = NULL;
    cl_uint np = 0;
    long want_p = -1, want_d = 0, want_n = -1;
    if (selector != NULL && *selector != '\0') {
        char *end;
        long a = strtol(selector, &end, 10);
        if (*end == ':') {
            want_p = a;
            want_d = strtol(end + 1, &end, 10);
        } else {
            want_n = a;
        }
        if (*end != '\0' || a < 0 || want_d < 0) {
            snprintf(err, errsize,
                     "bad device '%s' (expected N or PLATFORM:DEVICE)",
                     selector);
            return -1;
        }
    } else {
        want_p = 0;
    }
    cl_int st = platforms(&ps, &np);
    if (st != CL_SUCCESS) {
        free(ps);
        snprintf(err, errsize, "no OpenCL platform (%s); is an ICD such as "
                 "pocl-opencl-icd installed?", rt_status(st));
        return -1;
    }
    long index = 0;
    int found = 0;
    for (cl_uint p = 0; p < np && !found; p++) {
        cl_device_id *ds = NULL;
        cl_uint nd = 0;
        if (devices(ps[p], &ds, &nd) != CL_SUCCESS) {
            free(ds);
            continue;
        }
        for (cl_uint d = 0; d < nd && !found; d++, index++) {
            if ((want_n >= 0 && index == want_n) ||
                (want_p == (long)p && want_d == (long)d)) {
                *pp = ps[p];
                *pd = ds[d];
                found = 1;
            }
        }
        free(ds);
    }
    free(ps);
    if (!found) {
        snprintf(err, errsize, "no OpenCL device '%s' (see `clinfo -l`)",
                 selector ? selector : "0:0");
        return -1;
    }
    return 0;
}

int rt_open(struct rt *rt, const char *selector, char *err, size_t errsize)
{
    cl_int st;
    memset(rt, 0, sizeof *rt);
    if (selector == NULL) {
        selector = getenv("SPECL_DEVICE");
    }
    if (pick(selector, &rt->platform, &rt->device, err, errsize) < 0) {
        return -1;
    }
    cl_device_type type = 0;
    st = clGetDeviceInfo(rt->device, CL_DEVICE_NAME, sizeof rt->name,
                         rt->name, NULL);
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(rt->device, CL_DRIVER_VERSION,
                             sizeof rt->driver, rt->driver, NULL);
    }
    if (st == CL_SUCCESS) {
        st = clGetPlatformInfo(rt->platform, CL_PLATFORM_NAME,
                               sizeof rt->platform_name, rt->platform_name,
                               NULL);
    }
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(rt->device, CL_DEVICE_LOCAL_MEM_SIZE,
                             sizeof rt->local_mem, &rt->local_mem, NULL);
    }
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(rt->device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                             sizeof rt->max_wg, &rt->max_wg, NULL);
    }
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(rt->device, CL_DEVICE_MAX_COMPUTE_UNITS,
                             sizeof rt->units, &rt->units, NULL);
    }
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(rt->device, CL_DEVICE_TYPE, sizeof type, &type,
                             NULL);
    }
    if (st != CL_SUCCESS) {
        snprintf(err, errsize, "clGetDeviceInfo: %s", rt_status(st));
        return -1;
    }
    rt->target = (type & CL_DEVICE_TYPE_CPU) ? TARGET_CPU : TARGET_GPU;
    rt->ctx = clCreateContext(NULL, 1, &rt->device, NULL, NULL, &st);
    if (st != CL_SUCCESS) {
        snprintf(err, errsize, "clCreateContext: %s", rt_status(st));
        return -1;
    }
    rt->queue = clCreateCommandQueue(rt->ctx, rt->device,
                                     CL_QUEUE_PROFILING_ENABLE, &st);
    if (st != CL_SUCCESS) {
        clReleaseContext(rt->ctx);
        rt->ctx = NULL;
        snprintf(err, errsize, "clCreateCommandQueue: %s", rt_status(st));
        return -1;
    }
    return 0;
}

void rt_close(struct rt *rt)
{
    if (rt->queue != NULL) {
        clReleaseCommandQueue(rt->queue);
    }
    if (rt->ctx != NULL) {
        clReleaseContext(rt->ctx);
    }
    memset(rt, 0, sizeof *rt);
}

static char *dup_str(const char *s)
{
    char *p = malloc(strlen(s) + 1);
    if (p != NULL) {
        strcpy(p, s);
    }
    return p;
}

cl_program rt_build(const struct rt *rt, const char *source,
                    const char *options, cl_int *status, char **log)
{
    if (log != NULL) {
        *log = NULL;
    }
    cl_program prog = clCreateProgramWithSource(rt->ctx, 1, &source, NULL,
                                                status);
    if (*status != CL_SUCCESS) {
        return NULL;
    }
    *status = clBuildProgram(prog, 1, &rt->device, options, NULL, NULL);
    if (*status == CL_SUCCESS) {
        return prog;
    }
    if (log != NULL) {
        size_t size = 0;
        clGetProgramBuildInfo(prog, rt->device, CL_PROGRAM_BUILD_LOG, 0,
                              NULL, &size);
        *log = calloc(size + 1, 1);
        if (*log != NULL) {
            clGetProgramBuildInfo(prog, rt->device, CL_PROGRAM_BUILD_LOG,
                                  size, *log, NULL);
        }
    }
    clReleaseProgram(prog);
    return NULL;
}

cl_int rt_op_create(const struct rt *rt, const struct kernel_spec *ks,
                    struct rt_op *op, char **log)
{
    char err[256];
    struct buf src;
    cl_int st;
    memset(op, 0, sizeof *op);
    if (log != NULL) {
        *log = NULL;
    }
    ks->op->plan(ks, &op->plan);
    buf_init(&src);
    if (emit_cl(ks, &op->plan, &src, err, sizeof err) < 0) {
        buf_free(&src);
        if (log != NULL) {
            *log = dup_str(err);
        }
        return CL_INVALID_PROGRAM;
    }
    op->program = rt_build(rt, buf_str(&src), "-cl-std=CL1.2", &st, log);
    buf_free(&src);
    if (op->program == NULL) {
        return st;
    }
    for (int p = 0; p < op->plan.n_path; p++) {
        for (int l = 0; l < op->plan.path[p].n_launch; l++) {
            const char *name = op->plan.path[p].launch[l].kernel;
            int known = 0;
            for (int k = 0; k < op->n_kernel; k++) {
                known |= strcmp(op->kernel_name[k], name) == 0;
            }
            if (known) {
                continue;
            }
            op->kernel_name[op->n_kernel] = name;
            op->kernel[op->n_kernel] = clCreateKernel(op->program, name, &st);
            if (st != CL_SUCCESS) {
                if (log != NULL) {
                    *log = dup_str(name);
                }
                rt_op_destroy(op);
                return st;
            }
            op->n_kernel++;
        }
    }
    return CL_SUCCESS;
}

void rt_op_destroy(struct rt_op *op)
{
    for (int k = 0; k < op->n_kernel; k++) {
        clReleaseKernel(op->kernel[k]);
    }
    if (op->program != NULL) {
        clReleaseProgram(op->program);
    }
    if (op->scratch != NULL) {
        clReleaseMemObject(op->scratch);
    }
    memset(op, 0, sizeof *op);
}

static cl_kernel find_kernel(const struct rt_op *op, const char *name)
{
    for (int k = 0; k < op->n_kernel; k++) {
        if (strcmp(op->kernel_name[k], name) == 0) {
            return op->kernel[k];
        }
    }
    return NULL;
}

static cl_int set_args(const struct rt_op *op, cl_kernel kernel,
                       const struct launch *l, cl_int rows,
                       const cl_mem *buffers)
{
    for (cl_uint a = 0; l->args[a] != NULL; a++) {
        const char *arg = l->args[a];
        cl_int st = CL_INVALID_ARG_VALUE;
        if (strcmp(arg, "rows") == 0) {
            st = clSetKernelArg(kernel, a, sizeof rows, &rows);
        } else if (strcmp(arg, "scratch") == 0) {
            st = clSetKernelArg(kernel, a, sizeof(cl_mem), &op->scratch);
        } else {
            for (int b = 0; b < op->plan.n_buffer; b++) {
                if (strcmp(op->plan.buffer[b].name, arg) == 0) {
                    st = clSetKernelArg(kernel, a, sizeof(cl_mem),
                                        &buffers[b]);
                }
            }
        }
        if (st != CL_SUCCESS) {
            return st;
        }
    }
    return CL_SUCCESS;
}

cl_int rt_op_enqueue(const struct rt *rt, struct rt_op *op, size_t rows,
                     const cl_mem *buffers, cl_event *events, int *n_events)
{
    const struct plan *p = &op->plan;
    const struct path *path = &p->path[0];
    cl_int st;
    *n_events = 0;
    while (path->max_rows != 0 && (long)rows > path->max_rows) {
        path++;
    }
    if (p->scratch_per_row > 0 && op->scratch_rows < rows) {
        if (op->scratch != NULL) {
            clReleaseMemObject(op->scratch);
        }
        op->scratch = clCreateBuffer(
            rt->ctx, CL_MEM_READ_WRITE,
            rows * (size_t)p->scratch_per_row * sizeof(float), NULL, &st);
        if (st != CL_SUCCESS) {
            op->scratch = NULL;
            op->scratch_rows = 0;
            return st;
        }
        op->scratch_rows = rows;
    }
    for (int i = 0; i < path->n_launch; i++) {
        const struct launch *l = &path->launch[i];
        cl_kernel kernel = find_kernel(op, l->kernel);
        size_t global[2], local[2];
        st = set_args(op, kernel, l, (cl_int)rows, buffers);
        if (st != CL_SUCCESS) {
            return st;
        }
        for (int d = 0; d < l->dims; d++) {
            size_t groups = l->groups[d];
            if (groups == 0) {
                groups = (rows + l->rows_per_group - 1) / l->rows_per_group;
            }
            global[d] = groups * l->local[d];
            local[d] = l->local[d];
        }
        st = clEnqueueNDRangeKernel(rt->queue, kernel, (cl_uint)l->dims,
                                    NULL, global, local, 0, NULL,
                                    &events[*n_events]);
        if (st != CL_SUCCESS) {
            return st;
        }
        (*n_events)++;
    }
    return CL_SUCCESS;
}

double rt_events_ns(const cl_event *events, int n)
{
    cl_ulong start = 0, end = 0;
    if (n == 0 ||
        clGetEventProfilingInfo(events[0], CL_PROFILING_COMMAND_START,
                                sizeof start, &start, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(events[n - 1], CL_PROFILING_COMMAND_END,
                                sizeof end, &end, NULL) != CL_SUCCESS) {
        return -1;
    }
    return (double)(end - start);
}
