/* sm90a_probe.c - can OpenCL reach sm_90a (wgmma) on an NVIDIA Hopper?
 * NVIDIA's OpenCL compiler writes PTX for `.target sm_90`, where ptxas
 * rejects wgmma ("not supported on .target 'sm_90'"), and ignores
 * -cl-nv-arch. But a program's binary on NVIDIA is that PTX text, and
 * clCreateProgramWithBinary takes PTX back: this probe builds a plain
 * kernel, rewrites its PTX to `.target sm_90a` and adds, before its
 * return, one wgmma.mma_async m64n8k16 (bf16, f32 accumulators) on
 * all-ones tiles in shared memory (so any layout sums to K = 16: this
 * checks that the instruction runs, not the descriptors' layouts), loads
 * it as a binary, runs it on two warpgroups and checks the plain stores
 * and the accumulators. usage: sm90a_probe [P:D]
 * Build: cc -O2 -o sm90a_probe bench/lab/sm90a_probe.c -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_util.h"

#define ITEMS 256 /* two warpgroups of 128: wgmma's .sync.aligned */

/* Goes where the plain kernel's PTX returns; its registers are the
 * kernel's own (%r4 the work-item's local id, %rd1 OUT, %rd6 its global
 * id), as NVIDIA's compiler names them for this source. Each work-item
 * fills 16 bytes of the tile with bf16 ones, then the warpgroup multiplies
 * a 64 x 16 tile by a 16 x 8 one, both read through one descriptor (start
 * address >> 4 in bits 0-13; leading and stride byte offsets 128 and 256,
 * >> 4, in bits 16-29 and 32-45; no swizzle), and stores its four
 * accumulators at OUT + ITEMS + 4 * global id. */
static const char *wgmma_tail =
    "\t{\n"
    "\t.reg .b32 %q<5>;\n"
    "\t.reg .b64 %d<3>;\n"
    "\t.reg .f32 %f<4>;\n"
    "\t.reg .pred %zp;\n"
    "\tmov.u32 %q0, wg_tile;\n"
    "\tshl.b32 %q1, %r4, 4;\n"
    "\tadd.u32 %q2, %q0, %q1;\n"
    "\tmov.b32 %q3, 1065369472;\n" /* 0x3F803F80: two bf16 ones */
    "\tst.shared.v4.b32 [%q2], {%q3, %q3, %q3, %q3};\n"
    "\tfence.proxy.async.shared::cta;\n"
    "\tbar.sync 0;\n"
    "\tshr.u32 %q4, %q0, 4;\n"
    "\tand.b32 %q4, %q4, 16383;\n"
    "\tcvt.u64.u32 %d0, %q4;\n"
    "\tor.b64 %d0, %d0, 524288;\n"      /* 8 << 16 */
    "\tor.b64 %d0, %d0, 68719476736;\n" /* 16 << 32 */
    "\tsetp.ne.b32 %zp, 0, 0;\n"        /* scale-d false: D = A*B */
    "\tmov.f32 %f0, 0f00000000;\n"
    "\tmov.f32 %f1, 0f00000000;\n"
    "\tmov.f32 %f2, 0f00000000;\n"
    "\tmov.f32 %f3, 0f00000000;\n"
    "\twgmma.fence.sync.aligned;\n"
    "\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 "
    "{%f0, %f1, %f2, %f3}, %d0, %d0, %zp, 1, 1, 0, 0;\n"
    "\twgmma.commit_group.sync.aligned;\n"
    "\twgmma.wait_group.sync.aligned 0;\n"
    "\tshl.b64 %d1, %rd6, 4;\n"
    "\tadd.s64 %d2, %rd1, %d1;\n"
    "\tadd.s64 %d2, %d2, 1024;\n" /* ITEMS floats */
    "\tst.global.v4.f32 [%d2], {%f0, %f1, %f2, %f3};\n"
    "\t}\n"
    "\tret;";

static const char *source =
    "__kernel void probe(__global float *out)\n"
    "{ out[get_global_id(0)] = 1.0f; }\n";

/* S with the first A replaced by B (malloc'd), or NULL without A. */
static char *replace(const char *s, const char *a, const char *b)
{
    const char *at = strstr(s, a);
    if (at == NULL) {
        return NULL;
    }
    char *r = malloc(strlen(s) - strlen(a) + strlen(b) + 1);
    if (r == NULL) {
        exit(1);
    }
    memcpy(r, s, (size_t)(at - s));
    strcpy(r + (at - s), b);
    strcat(r, at + strlen(a));
    return r;
}

static void print_log(cl_program pr, cl_device_id dev)
{
    size_t n = 0;
    CHECK(clGetProgramBuildInfo(pr, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n));
    char *log = malloc(n + 1);
    if (log == NULL) {
        exit(1);
    }
    CHECK(clGetProgramBuildInfo(pr, dev, CL_PROGRAM_BUILD_LOG, n, log,
                                NULL));
    log[n] = 0;
    printf("%s\n", log);
    free(log);
}

int main(int argc, char **argv)
{
    int pi = 0, di = 0;
    if (argc > 1) {
        sscanf(argv[1], "%d:%d", &pi, &di);
    }
    cl_platform_id ps[8];
    cl_uint np;
    CHECK(clGetPlatformIDs(8, ps, &np));
    cl_device_id ds[8];
    cl_uint nd;
    CHECK(clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 8, ds, &nd));
    cl_device_id dev = ds[di];
    cl_int e;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK(e);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    CHECK(e);

    cl_program plain = clCreateProgramWithSource(ctx, 1, &source, NULL, &e);
    CHECK(e);
    CHECK(clBuildProgram(plain, 1, &dev, "", NULL, NULL));
    size_t size;
    CHECK(clGetProgramInfo(plain, CL_PROGRAM_BINARY_SIZES, sizeof size,
                           &size, NULL));
    unsigned char *ptx = malloc(size + 1);
    if (ptx == NULL) {
        exit(1);
    }
    unsigned char *bins[1] = {ptx};
    CHECK(clGetProgramInfo(plain, CL_PROGRAM_BINARIES, sizeof bins, bins,
                           NULL));
    ptx[size] = 0;
    char *retargeted = replace((char *)ptx, ".target sm_90,", ".target sm_90a,");
    char *with_tile =
        retargeted == NULL
            ? NULL
            : replace(retargeted, ".address_size 64\n",
                      ".address_size 64\n"
                      ".shared .align 128 .b8 wg_tile[4096];\n");
    char *patched =
        with_tile == NULL ? NULL : replace(with_tile, "\tret;", wgmma_tail);
    if (patched == NULL) {
        printf("no `.target sm_90,` PTX here: not a Hopper NVIDIA device\n");
        return 1;
    }

    size_t len = strlen(patched) + 1;
    const unsigned char *pbins[1] = {(const unsigned char *)patched};
    cl_int status;
    cl_program pr =
        clCreateProgramWithBinary(ctx, 1, &dev, &len, pbins, &status, &e);
    CHECK(e);
    e = clBuildProgram(pr, 1, &dev, "", NULL, NULL);
    printf("sm_90a PTX with wgmma.mma_async: build %d\n", e);
    print_log(pr, dev);
    if (e != CL_SUCCESS) {
        printf("%s\n", patched);
        return 1;
    }
    cl_kernel k = clCreateKernel(pr, "probe", &e);
    CHECK(e);
    static float host[ITEMS * 5];
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                sizeof host, host, &e);
    CHECK(e);
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    size_t global = ITEMS, local = 128;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL,
                                 NULL));
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof host, host, 0,
                              NULL, NULL));
    int ok = 0, sums = 0;
    for (int i = 0; i < ITEMS; i++) {
        ok += host[i] == 1.0f;
    }
    for (int i = ITEMS; i < ITEMS * 5; i++) {
        sums += host[i] == 16.0f;
    }
    printf("ran: %d of %d plain stores, %d of %d accumulators = 16\n", ok,
           ITEMS, sums, ITEMS * 4);
    free(patched);
    free(with_tile);
    free(retargeted);
    free(ptx);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(pr);
    clReleaseProgram(plain);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return ok == ITEMS && sums == ITEMS * 4 ? 0 : 1;
}
