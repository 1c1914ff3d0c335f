/* runtime.h - the OpenCL layer: devices, programs and events. Generated
 * kernels run through their emitted stubs (stubrun.h). */
#ifndef SPECL_RUNTIME_H
#define SPECL_RUNTIME_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>

#include "caps.h"
#include "op.h"

/* An OpenCL device with a context and a profiling, in-order queue. */
struct rt {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    char name[256];      /* device name */
    char driver[128];    /* driver version */
    char platform_name[128];
    struct device_caps caps; /* what the device is and offers */
    enum target target;  /* which op defaults suit it (caps_target) */
    int show_compiler;   /* print the compiler's messages of a build that
                            succeeds (--verbose) */
};

/* What the process writes to stderr while a program builds: PoCL's clang
 * prints "N warnings generated." there, past the build log. rt_capture_
 * begin sends fd 2 to a temporary file; rt_capture_end restores it and
 * returns the text written meanwhile (caller frees; "" when none). */
struct rt_capture {
    int saved_fd; /* -1: not capturing */
    FILE *file;
};
void rt_capture_begin(struct rt_capture *c);
char *rt_capture_end(struct rt_capture *c);

/* The captured compiler output TEXT of a build of WHAT that succeeded:
 * on stderr under a line naming WHAT when RT shows the compiler's
 * messages; else dropped. */
void rt_compiler_note(const struct rt *rt, const char *what,
                      const char *text);

/* Opens the device SELECTOR names: "P:D" (platform P, device D), "N" (the
 * N-th device over all platforms), or NULL for $SPECL_DEVICE, else the
 * first device of the first platform. Returns 0, or -1 with ERR filled. */
int rt_open(struct rt *rt, const char *selector, char *err, size_t errsize);
void rt_close(struct rt *rt);

/* What marks the wgmma instructions of a kernel's source (wgmma_ptx.cl's
 * WG_MARK, which must read the same): they reach the PTX as comments,
 * and rt_build (and the emitted stub) delete the marks and rebuild the
 * PTX for sm_90a, on a device that offers CAP_WGMMA. */
#define RT_SM90A_MARK "trap; //@sm_90a "

/* Lists every platform's devices as "N  P:D  name (platform)". Returns
 * 0, or -1 with ERR filled when there is no platform (as rt_open says) or
 * no device. */
int rt_list_devices(FILE *out, char *err, size_t errsize);

/* A readable name for an OpenCL status ("CL_INVALID_VALUE"). */
const char *rt_status(cl_int status);

/* Builds SOURCE for RT's device. On failure returns NULL with *STATUS set
 * and the build log (or a message) in *LOG (caller frees; may be NULL). */
cl_program rt_build(const struct rt *rt, const char *source,
                    const char *options, cl_int *status, char **log);

/* Nanoseconds from the first event's start to the last one's end. */
double rt_events_ns(const cl_event *events, int n);

#endif
