/* sm90a_layout.c - lab: one wgmma.mma_async m64n8k16 (bf16, f32
 * accumulators) through PTX retargeted to sm_90a (see sm90a_probe.c), on
 * real data: K-major A (64 x 16) and B (8 x 16) of small integers, staged
 * from global into shared memory in the no-swizzle layout of core
 * matrices (8 rows x 16 bytes): element (row, k) of an operand at
 * (row / 8) * SBO + (k / 8) * LBO + (row % 8) * 16 + (k % 8) * 2 bytes,
 * B 2048 bytes after A, one work-group of 128 (a warpgroup) per copy.
 * Each work-item's four accumulators are rows 16 * warp + lane / 4 (+ 8
 * for the last two), columns 2 * (lane % 4) (+ 1 for the odd ones),
 * compared exactly with the host's product. On the H100 (driver
 * 580.159.04): LBO 128 / SBO 256 and LBO 1024 / SBO 128 give all 512 of
 * the first warpgroup's accumulators exact; LBO 256 / SBO 128 (the roles
 * swapped) 182. So LBO steps along K, SBO along rows. A quick lab
 * program, not project code. Build: cc -O2 -o sm90a_layout
 * bench/lab/sm90a_layout.c -lOpenCL; run it on the device. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%d: %s -> %d\n", __LINE__, #x, e_); exit(1); } } while (0)
static const char *source = "__kernel void probe(__global float *out) { out[get_global_id(0)] = 1.0f; }";
static char *replace(const char *s, const char *a, const char *b)
{
    const char *at = strstr(s, a);
    if (!at) { fprintf(stderr, "no '%s'\n", a); exit(1); }
    char *r = malloc(strlen(s) + strlen(b) + 1);
    memcpy(r, s, at - s); strcpy(r + (at - s), b); strcat(r, at + strlen(a));
    return r;
}
static unsigned short bf16(float v) { unsigned int u; memcpy(&u, &v, 4); return (unsigned short)(u >> 16); }
static char body[4096];
static int run(cl_context ctx, cl_device_id d, cl_command_queue q, const char *base, long lbo, long sbo, int verbose, int bsame)
{
    snprintf(body, sizeof body,
    "\t{\n\t.reg .b32 %%q<12>;\n\t.reg .b64 %%d<8>;\n\t.reg .f32 %%f<4>;\n\t.reg .pred %%zp;\n"
    "\tmov.u32 %%q0, wg_tile;\n"
    "\tshl.b32 %%q1, %%r4, 4;\n"
    "\tadd.u32 %%q2, %%q0, %%q1;\n"
    "\tcvt.u64.u32 %%d3, %%q1;\n"
    "\tadd.s64 %%d4, %%rd1, %%d3;\n"
    "\tadd.s64 %%d4, %%d4, 8192;\n"
    "\tld.global.v4.b32 {%%q5, %%q6, %%q7, %%q8}, [%%d4];\n"
    "\tst.shared.v4.b32 [%%q2], {%%q5, %%q6, %%q7, %%q8};\n"
    "\tld.global.v4.b32 {%%q5, %%q6, %%q7, %%q8}, [%%d4+2048];\n"
    "\tst.shared.v4.b32 [%%q2+2048], {%%q5, %%q6, %%q7, %%q8};\n"
    "\tfence.proxy.async.shared::cta;\n"
    "\tbar.sync 0;\n"
    "\tshr.u32 %%q4, %%q0, 4;\n"
    "\tand.b32 %%q4, %%q4, 16383;\n"
    "\tcvt.u64.u32 %%d0, %%q4;\n"
    "\tor.b64 %%d0, %%d0, %ld;\n"
    "\tor.b64 %%d0, %%d0, %ld;\n"
    "\tadd.s64 %%d5, %%d0, %ld;\n"   /* B at +2048 bytes: +128 in units of 16 */
    "\tsetp.ne.b32 %%zp, 0, 0;\n"
    "\tmov.f32 %%f0, 0f00000000;\n\tmov.f32 %%f1, 0f00000000;\n\tmov.f32 %%f2, 0f00000000;\n\tmov.f32 %%f3, 0f00000000;\n"
    "\twgmma.fence.sync.aligned;\n"
    "\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%%f0, %%f1, %%f2, %%f3}, %%d0, %%d5, %%zp, 1, 1, 0, 0;\n"
    "\twgmma.commit_group.sync.aligned;\n"
    "\twgmma.wait_group.sync.aligned 0;\n"
    "\tshl.b64 %%d1, %%rd6, 4;\n"
    "\tadd.s64 %%d2, %%rd1, %%d1;\n"
    "\tadd.s64 %%d2, %%d2, 1024;\n"
    "\tst.global.v4.f32 [%%d2], {%%f0, %%f1, %%f2, %%f3};\n"
    "\t}\n\tret;", (lbo / 16) << 16, (sbo / 16) << 32, bsame ? 0L : 128L);
    char *c = replace(base, "\tret;", body);
    size_t len = strlen(c) + 1; const unsigned char *pb[1] = {(const unsigned char *)c}; cl_int st, e;
    cl_program p2 = clCreateProgramWithBinary(ctx, 1, &d, &len, pb, &st, &e); CK(e);
    e = clBuildProgram(p2, 1, &d, "", NULL, NULL);
    if (e) { size_t ln; clGetProgramBuildInfo(p2, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &ln);
        char *log = malloc(ln + 1); clGetProgramBuildInfo(p2, d, CL_PROGRAM_BUILD_LOG, ln, log, NULL); log[ln] = 0;
        printf("build %d\n%s\n", e, log); return -1; }
    cl_kernel k = clCreateKernel(p2, "probe", &e); CK(e);
    /* A[m][k], B[n][k]: small integers */
    float A[64][16], B[8][16];
    for (int m = 0; m < 64; m++) for (int kk = 0; kk < 16; kk++) A[m][kk] = (float)((m * 5 + kk * 3) % 9 - 4);
    for (int n = 0; n < 8; n++) for (int kk = 0; kk < 16; kk++) B[n][kk] = (float)((n * 7 + kk * 2) % 5 - 2);
    static unsigned char buf[8192 + 8192];
    memset(buf, 0, sizeof buf);
    unsigned short *tile = (unsigned short *)(buf + 8192);
    /* core matrix (group g along M/N, h along K): 8 rows x 8 elements, row r at +16 r bytes */
    for (int m = 0; m < 64; m++) for (int kk = 0; kk < 16; kk++) {
        long off = (m / 8) * sbo + (kk / 8) * lbo + (m % 8) * 16 + (kk % 8) * 2;
        tile[off / 2] = bf16(A[m][kk]);
    }
    for (int n = 0; n < 8; n++) for (int kk = 0; kk < 16; kk++) {
        long off = 2048 + (n / 8) * sbo + (kk / 8) * lbo + (n % 8) * 16 + (kk % 8) * 2;
        tile[off / 2] = bf16(B[n][kk]);
    }
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof buf, buf, &e); CK(e);
    CK(clSetKernelArg(k, 0, sizeof m, &m));
    size_t g = 256, l = 128; CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    CK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof buf, buf, 0, NULL, NULL));
    float *out = (float *)buf;

    if (bsame) { printf("  bsame: out[256..259] = %g %g %g %g\n", out[256], out[257], out[258], out[259]); }
    int right = 0, per[4] = {0}, rowbad[64] = {0};
    for (int t = 0; t < 128; t++) {
        int w = t / 32, lane = t % 32;
        for (int i = 0; i < 4; i++) {
            int row = 16 * w + lane / 4 + (i >= 2 ? 8 : 0), col = (lane % 4) * 2 + (i & 1);
            float want = 0; for (int kk = 0; kk < 16; kk++) want += A[row][kk] * B[col][kk];
            float got = out[256 + 4 * t + i];
            right += got == want; per[w] += got == want; rowbad[row] += got != want;
            if (verbose && t < 2) printf("  t%d i%d row %d col %d: got %g want %g\n", t, i, row, col, got, want);
        }
    }
    printf("  per warp right: %d %d %d %d; wrong rows:", per[0], per[1], per[2], per[3]);
    for (int r = 0; r < 64; r++) if (rowbad[r]) printf(" %d", r);
    printf("\n");
    clReleaseMemObject(m); clReleaseKernel(k); clReleaseProgram(p2);
    return right;
}
int main(void)
{
    cl_platform_id p; CK(clGetPlatformIDs(1, &p, NULL));
    cl_device_id d; CK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_int e; cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e); CK(e);
    cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &e); CK(e);
    cl_program pr = clCreateProgramWithSource(ctx, 1, &source, NULL, &e); CK(e);
    CK(clBuildProgram(pr, 1, &d, "", NULL, NULL));
    size_t bs; CK(clGetProgramInfo(pr, CL_PROGRAM_BINARY_SIZES, sizeof bs, &bs, NULL));
    unsigned char *bin = malloc(bs + 1); unsigned char *bins[1] = {bin};
    CK(clGetProgramInfo(pr, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL)); bin[bs] = 0;
    char *a = replace((char *)bin, ".target sm_90,", ".target sm_90a,");
    char *b = replace(a, ".address_size 64\n", ".address_size 64\n.shared .align 128 .b8 wg_tile[4096];\n");
    long cfg[][2] = {{128, 256}, {256, 128}, {1024, 128}};
    for (int i = 0; i < 3; i++) {
        int r = run(ctx, d, q, b, cfg[i][0], cfg[i][1], i < 1, 0);
        printf("LBO %ld SBO %ld: %d of 512 accumulators right\n", cfg[i][0], cfg[i][1], r);
    }
    run(ctx, d, q, b, 128, 256, 0, 1);
    return 0;
}
