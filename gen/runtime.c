/* runtime.c - the OpenCL layer: devices, programs and events. */
#include <stdio.h>

#include "runtime.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>


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

/* What rt_open and rt_list_devices say where the OpenCL loader finds no
 * platform: on a machine without a driver, the usual first problem. */
static void no_platform(char *err, size_t errsize)
{
    snprintf(err, errsize,
             "no OpenCL platform found (is an OpenCL driver/ICD installed? "
             "e.g. apt install pocl-opencl-icd)");
}

int rt_list_devices(FILE *out, char *err, size_t errsize)
{
    cl_platform_id *ps = NULL;
    cl_uint np = 0;
    int index = 0;
    cl_int st = platforms(&ps, &np);
    if (st != CL_SUCCESS) {
        free(ps);
        no_platform(err, errsize);
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
    if (index == 0) {
        snprintf(err, errsize,
                 "no OpenCL device found (%u platform%s, no device)", np,
                 np == 1 ? "" : "s");
        return -1;
    }
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
        no_platform(err, errsize);
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
        st = caps_query(rt->device, &rt->caps);
    }
    if (st != CL_SUCCESS) {
        snprintf(err, errsize, "clGetDeviceInfo: %s", rt_status(st));
        return -1;
    }
    rt->target = caps_target(&rt->caps);
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

/* PTX with every RT_SM90A_MARK deleted and the target sm_90 renamed
 * sm_90a; NULL when out of memory or PTX names no sm_90 target. */
static char *sm90a_ptx(const char *ptx)
{
    static const char target[] = ".target sm_90";
    size_t mark = strlen(RT_SM90A_MARK), len = strlen(ptx);
    const char *at = strstr(ptx, target);
    if (at == NULL || (at[sizeof target - 1] != ',' &&
                       at[sizeof target - 1] != '\n')) {
        return NULL;
    }
    char *out = malloc(len + 2), *o = out;
    if (out == NULL) {
        return NULL;
    }
    for (const char *p = ptx; *p != '\0';) {
        if (p == at + sizeof target - 1) {
            *o++ = 'a';
        }
        if (strncmp(p, RT_SM90A_MARK, mark) == 0) {
            p += mark;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* PROG built from source with wgmma behind RT_SM90A_MARK, rebuilt from
 * its PTX for sm_90a (the device's compute capability is 9.0). */
static cl_program rebuild_sm90a(const struct rt *rt, cl_program prog,
                                cl_int *status)
{
    size_t size = 0;
    *status = clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size,
                               &size, NULL);
    unsigned char *binary = *status == CL_SUCCESS ? malloc(size + 1) : NULL;
    if (binary == NULL) {
        *status = *status == CL_SUCCESS ? CL_OUT_OF_HOST_MEMORY : *status;
        return NULL;
    }
    *status = clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof binary,
                               &binary, NULL);
    binary[size] = '\0';
    char *ptx = *status == CL_SUCCESS ? sm90a_ptx((char *)binary) : NULL;
    free(binary);
    if (ptx == NULL) {
        *status = *status == CL_SUCCESS ? CL_BUILD_PROGRAM_FAILURE : *status;
        return NULL;
    }
    size_t len = strlen(ptx) + 1;
    const unsigned char *bytes = (const unsigned char *)ptx;
    cl_program sm90a = clCreateProgramWithBinary(
        rt->ctx, 1, &rt->device, &len, &bytes, NULL, status);
    free(ptx);
    if (*status != CL_SUCCESS) {
        return NULL;
    }
    *status = clBuildProgram(sm90a, 1, &rt->device, NULL, NULL, NULL);
    return sm90a;
}

void rt_capture_begin(struct rt_capture *c)
{
    fflush(stderr);
    c->saved_fd = -1;
    c->file = tmpfile();
    if (c->file == NULL) {
        return; /* the messages go where they went */
    }
    c->saved_fd = dup(STDERR_FILENO);
    if (c->saved_fd < 0 || dup2(fileno(c->file), STDERR_FILENO) < 0) {
        if (c->saved_fd >= 0) {
            close(c->saved_fd);
        }
        c->saved_fd = -1;
        fclose(c->file);
        c->file = NULL;
    }
}

char *rt_capture_end(struct rt_capture *c)
{
    if (c->saved_fd < 0) {
        return strdup("");
    }
    fflush(stderr);
    dup2(c->saved_fd, STDERR_FILENO);
    close(c->saved_fd);
    c->saved_fd = -1;
    long size = fseek(c->file, 0, SEEK_END) == 0 ? ftell(c->file) : -1;
    char *text = malloc(size > 0 ? (size_t)size + 1 : 1);
    size_t got = 0;
    if (text != NULL && size > 0 && fseek(c->file, 0, SEEK_SET) == 0) {
        got = fread(text, 1, (size_t)size, c->file);
    }
    if (text != NULL) {
        text[got] = '\0';
    }
    fclose(c->file);
    c->file = NULL;
    return text;
}

void rt_compiler_note(const struct rt *rt, const char *what,
                      const char *text)
{
    if (!rt->show_compiler || text == NULL || text[0] == '\0') {
        return;
    }
    size_t len = strlen(text);
    fprintf(stderr, "specl: note: %s: the OpenCL compiler's messages:\n%s%s",
            what, text, text[len - 1] == '\n' ? "" : "\n");
}

/* TEXT appended to *LOG (either may be NULL or empty). */
static void append_log(char **log, const char *text)
{
    if (log == NULL || text == NULL || text[0] == '\0') {
        return;
    }
    size_t had = *log != NULL ? strlen(*log) : 0;
    char *joined = malloc(had + strlen(text) + 2);
    if (joined == NULL) {
        return;
    }
    snprintf(joined, had + strlen(text) + 2, "%s%s%s", had ? *log : "",
             had && (*log)[had - 1] != '\n' ? "\n" : "", text);
    free(*log);
    *log = joined;
}

cl_program rt_build(const struct rt *rt, const char *source,
                    const char *options, cl_int *status, char **log)
{
    if (log != NULL) {
        *log = NULL;
    }
    int wgmma = strstr(source, RT_SM90A_MARK) != NULL;
    if (wgmma && caps_lacking(CAP_WGMMA, rt->caps.have) != 0) {
        *status = CL_BUILD_PROGRAM_FAILURE;
        if (log != NULL) {
            *log = strdup("wgmma needs an NVIDIA device of compute "
                          "capability 9.0 (sm_90a)");
        }
        return NULL;
    }
    cl_program prog = clCreateProgramWithSource(rt->ctx, 1, &source, NULL,
                                                status);
    if (*status != CL_SUCCESS) {
        return NULL;
    }
    struct rt_capture capture;
    rt_capture_begin(&capture);
    *status = clBuildProgram(prog, 1, &rt->device, options, NULL, NULL);
    char *said = rt_capture_end(&capture);
    if (*status == CL_SUCCESS && wgmma) {
        cl_program sm90a = rebuild_sm90a(rt, prog, status);
        if (sm90a != NULL) {
            clReleaseProgram(prog);
            prog = sm90a;
        }
    }
    if (*status == CL_SUCCESS) {
        rt_compiler_note(rt, "specl's measuring kernels", said);
        free(said);
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
        append_log(log, said);
    }
    free(said);
    clReleaseProgram(prog);
    return NULL;
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
