/* test_tma_maps.c - the tensor maps templates/tma_ptx.cl writes, word
 * for word against the CUDA driver's cuTensorMapEncodeTiled for the same
 * fields (its words as bench/lab/tensor_map.cu printed them on an H200:
 * bench/logs/h200-tma/maps.txt, bench/logs/h200-attn-tma/maps3d.txt).
 * The maps are written by OpenCL C, so the suite's device (PoCL in CI)
 * runs tma_map_2d and tma_map_3d with their PTX fences left out: a
 * wrong word here would otherwise show only as wrong tiles on a GPU of
 * compute capability 9.0. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numeric_util.h"
#include "render.h"
#include "suites.h"
#include "testutil.h"

/* A map's words 1 to 9 (word 0 is the address, 0x7f0000000000 in every
 * probe; words 10 to 15 are zeros). */
struct map_case {
    const char *name; /* "2d ..." or "3d ...": tma_map_2d or tma_map_3d */
    const char *args; /* the sizes, strides and box after the address */
    cl_ulong words[9];
};

static const struct map_case bf16_cases[] = {
    {"2d base", "4096, 4096, 8192, 64, 128",
     {0x20000066510ULL, 0, 0, 0xfff00000fffULL, 0, 0x3f00000000000000ULL,
      0x7fULL, 0x4000ULL, 0x400ULL}},
    {"2d d0 4095", "4095, 4096, 8192, 64, 128",
     {0x20000066510ULL, 0, 0, 0xfff00000ffeULL, 0, 0x3f00000000000000ULL,
      0x7fULL, 0x4000ULL, 0x400ULL}},
    {"2d d0 2^20", "1UL << 20, 4096, 1UL << 21, 64, 128",
     {0x2000000066510ULL, 0, 0, 0xfff000fffffULL, 0, 0x3f00000000000000ULL,
      0x7fULL, 0x4000ULL, 0x400ULL}},
    {"2d d1 1000", "4096, 1000, 8192, 64, 128",
     {0x20000066510ULL, 0, 0, 0x3e700000fffULL, 0, 0x3f00000000000000ULL,
      0x7fULL, 0x4000ULL, 0x400ULL}},
    {"2d row 8208", "4096, 4096, 8208, 64, 128",
     {0x20100066510ULL, 0, 0, 0xfff00000fffULL, 0, 0x3f00000000000000ULL,
      0x7fULL, 0x4000ULL, 0x400ULL}},
    {"2d row 2^33", "4096, 4096, 1UL << 33, 64, 128",
     {0x2000000000066510ULL, 0, 0, 0xfff00000fffULL, 0, 0x3f00000000000000ULL,
      0x7fULL, 0x4000ULL, 0x400ULL}},
    {"2d box0 32", "4096, 4096, 8192, 32, 128",
     {0x20000066510ULL, 0, 0, 0xfff00000fffULL, 0, 0x1f00000000000000ULL,
      0x7fULL, 0x2000ULL, 0x400ULL}},
    {"2d box1 1", "4096, 4096, 8192, 64, 1",
     {0x20000066510ULL, 0, 0, 0xfff00000fffULL, 0, 0x3f00000000000000ULL, 0,
      0x80ULL, 0x400ULL}},
    {"2d box1 256", "4096, 4096, 8192, 64, 256",
     {0x20000066510ULL, 0, 0, 0xfff00000fffULL, 0, 0x3f00000000000000ULL,
      0xffULL, 0x8000ULL, 0x400ULL}},
    {"3d base", "1024, 4096, 4, 2048, 2048UL * 4096, 64, 128",
     {0x8000066520ULL, 0x80000ULL, 0, 0xfff000003ffULL, 0x3ULL,
      0x3f00000000000000ULL, 0x7fULL, 0x4000ULL, 0x400ULL}},
    {"3d d0 512", "512, 4096, 4, 2048, 2048UL * 4096, 64, 128",
     {0x8000066520ULL, 0x80000ULL, 0, 0xfff000001ffULL, 0x3ULL,
      0x3f00000000000000ULL, 0x7fULL, 0x4000ULL, 0x400ULL}},
    {"3d d1 1000", "1024, 1000, 4, 2048, 2048UL * 4096, 64, 128",
     {0x8000066520ULL, 0x80000ULL, 0, 0x3e7000003ffULL, 0x3ULL,
      0x3f00000000000000ULL, 0x7fULL, 0x4000ULL, 0x400ULL}},
    {"3d d2 7", "1024, 4096, 7, 2048, 2048UL * 4096, 64, 128",
     {0x8000066520ULL, 0x80000ULL, 0, 0xfff000003ffULL, 0x6ULL,
      0x3f00000000000000ULL, 0x7fULL, 0x4000ULL, 0x400ULL}},
    {"3d s1 4096", "1024, 4096, 4, 4096, 4096UL * 4096, 64, 128",
     {0x10000066520ULL, 0x100000ULL, 0, 0xfff000003ffULL, 0x3ULL,
      0x3f00000000000000ULL, 0x7fULL, 0x4000ULL, 0x400ULL}},
    {"3d s2 2^36+2^35", "1024, 4096, 4, 2048, 3UL << 35, 64, 128",
     {0x8000066520ULL, 0x80000000ULL, 0x1000000000ULL, 0xfff000003ffULL,
      0x3ULL, 0x3f00000000000000ULL, 0x7fULL, 0x4000ULL, 0x400ULL}},
    {"3d s2 2^39+2^4", "1024, 4096, 4, 2048, (1UL << 39) + 16, 64, 128",
     {0x8000066520ULL, 0x1ULL, 0x8000000000ULL, 0xfff000003ffULL, 0x3ULL,
      0x3f00000000000000ULL, 0x7fULL, 0x4000ULL, 0x400ULL}},
    {"3d s1 2^36", "1024, 4, 4, 1UL << 36, 1UL << 38, 64, 128",
     {0x66520ULL, 0, 0x4100000000ULL, 0x3000003ffULL, 0x3ULL,
      0x3f00000000000000ULL, 0x7fULL, 0x4000ULL, 0x400ULL}},
    {"3d box1 64", "1024, 4096, 4, 2048, 2048UL * 4096, 64, 64",
     {0x8000066520ULL, 0x80000ULL, 0, 0xfff000003ffULL, 0x3ULL,
      0x3f00000000000000ULL, 0x3fULL, 0x2000ULL, 0x400ULL}},
    {"3d box0 32", "1024, 4096, 4, 2048, 2048UL * 4096, 32, 128",
     {0x8000066520ULL, 0x80000ULL, 0, 0xfff000003ffULL, 0x3ULL,
      0x1f00000000000000ULL, 0x7fULL, 0x2000ULL, 0x400ULL}},
};

/* f16's element type (word 1) */
static const struct map_case f16_cases[] = {
    {"2d base", "4096, 4096, 8192, 64, 128",
     {0x20000066310ULL, 0, 0, 0xfff00000fffULL, 0, 0x3f00000000000000ULL,
      0x7fULL, 0x4000ULL, 0x400ULL}},
};

#define ADDRESS 0x7f0000000000ULL

/* Builds tma_ptx.cl for DTYPE (its fences' PTX made no-ops: asm
 * statements become (void) 0) with a kernel that writes the N maps of
 * CASES into one buffer, runs it once and checks every word. */
static void check_maps(const char *dtype, const struct map_case *cases,
                       int n)
{
    const struct rt *rt = nu_rt();
    const char *tma = template_text("tma_ptx.cl");
    if (tma == NULL) {
        CU_FAIL("no template tma_ptx.cl");
        return;
    }
    size_t room = strlen(tma) + 4096 + (size_t)n * 160;
    char *src = malloc(room);
    if (src == NULL) {
        CU_FAIL("out of memory");
        return;
    }
    int at = snprintf(src, room,
                      "#define DTYPE_%s 1\n#define asm (void)\n"
                      "#define volatile(...) 0\n%s\n"
                      "__kernel void maps(__global ulong *out)\n{\n"
                      "    const __global void *at = (const __global "
                      "void *)0x%llxUL;\n",
                      dtype, tma, (unsigned long long)ADDRESS);
    for (int i = 0; i < n; i++) {
        at += snprintf(src + at, room - (size_t)at,
                       "    tma_map_%.2s(out + %d, at, %s);\n",
                       cases[i].name, 16 * i, cases[i].args);
    }
    snprintf(src + at, room - (size_t)at, "}\n");

    cl_int status;
    char *log = NULL;
    cl_program prog = rt_build(rt, src, NULL, &status, &log);
    TU_CHECK(prog != NULL, "tma_ptx.cl (%s) did not build: %s\n%s", dtype,
             rt_status(status), log != NULL ? log : "");
    free(log);
    free(src);
    if (prog == NULL) {
        return;
    }
    size_t bytes = (size_t)n * 16 * sizeof(cl_ulong), one = 1;
    cl_ulong *words = calloc((size_t)n * 16, sizeof *words);
    cl_kernel kernel = clCreateKernel(prog, "maps", &status);
    cl_mem buf = NULL;
    if (status == CL_SUCCESS) {
        buf = clCreateBuffer(rt->ctx, CL_MEM_WRITE_ONLY, bytes, NULL,
                             &status);
    }
    if (status == CL_SUCCESS) {
        status = clSetKernelArg(kernel, 0, sizeof buf, &buf);
    }
    if (status == CL_SUCCESS) {
        status = clEnqueueNDRangeKernel(rt->queue, kernel, 1, NULL, &one,
                                        &one, 0, NULL, NULL);
    }
    if (status == CL_SUCCESS && words != NULL) {
        status = clEnqueueReadBuffer(rt->queue, buf, CL_TRUE, 0, bytes,
                                     words, 0, NULL, NULL);
    }
    TU_CHECK(status == CL_SUCCESS && words != NULL,
             "tma_ptx.cl (%s): the maps kernel failed: %s", dtype,
             rt_status(status));
    for (int i = 0; status == CL_SUCCESS && words != NULL && i < n; i++) {
        const cl_ulong *w = words + 16 * i;
        TU_CHECK(w[0] == ADDRESS, "%s map %s: word 0 %016llx", dtype,
                 cases[i].name, (unsigned long long)w[0]);
        for (int j = 1; j < 16; j++) {
            cl_ulong want = j < 10 ? cases[i].words[j - 1] : 0;
            TU_CHECK(w[j] == want,
                     "%s map %s (%s): word %d %016llx, the driver's "
                     "%016llx",
                     dtype, cases[i].name, cases[i].args, j,
                     (unsigned long long)w[j], (unsigned long long)want);
        }
    }
    free(words);
    if (buf != NULL) {
        clReleaseMemObject(buf);
    }
    if (kernel != NULL) {
        clReleaseKernel(kernel);
    }
    clReleaseProgram(prog);
}

static void test_tma_map_words(void)
{
    check_maps("BF16", bf16_cases,
               (int)(sizeof bf16_cases / sizeof bf16_cases[0]));
    check_maps("F16", f16_cases,
               (int)(sizeof f16_cases / sizeof f16_cases[0]));
}

int add_tma_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "tensor maps: tma_ptx.cl's words against the "
                       "CUDA driver's",
                       test_tma_map_words) == NULL
               ? -1
               : 0;
}
