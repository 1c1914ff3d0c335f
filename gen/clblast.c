/* clblast.c - CLBlast's SGEMM, looked up in libclblast.so.1 at run time. */
#include "clblast.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define CLBLAST_LIBRARY "libclblast.so.1"

/* The values clblast_c.h gives CLBlastLayoutRowMajor, CLBlastTransposeNo
 * and CLBlastTransposeYes; C passes its enums as int. */
enum { LAYOUT_ROW_MAJOR = 101, TRANSPOSE_NO = 111, TRANSPOSE_YES = 112 };

typedef int (*sgemm_fn)(int layout, int a_transpose, int b_transpose, size_t m,
                        size_t n, size_t k, float alpha, cl_mem a,
                        size_t a_offset, size_t a_ld, cl_mem b,
                        size_t b_offset, size_t b_ld, float beta, cl_mem c,
                        size_t c_offset, size_t c_ld, cl_command_queue *queue,
                        cl_event *event);

typedef int (*hgemm_fn)(int layout, int a_transpose, int b_transpose, size_t m,
                        size_t n, size_t k, unsigned short alpha, cl_mem a,
                        size_t a_offset, size_t a_ld, cl_mem b,
                        size_t b_offset, size_t b_ld, unsigned short beta,
                        cl_mem c, size_t c_offset, size_t c_ld,
                        cl_command_queue *queue, cl_event *event);

static sgemm_fn sgemm;
static hgemm_fn hgemm;

int clblast_load(char *why, size_t why_size)
{
    /* Tried once: the library stays loaded for the process's life, since
     * CLBlast keeps compiled kernels in caches until exit. */
    static int tried;
    static char failure[160];
    if (!tried) {
        tried = 1;
        void *lib = dlopen(CLBLAST_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        void *symbol = lib != NULL ? dlsym(lib, "CLBlastSgemm") : NULL;
        if (lib == NULL) {
            snprintf(failure, sizeof failure,
                     "CLBlast peer skipped: " CLBLAST_LIBRARY
                     " not found (apt install libclblast1)");
        } else if (symbol == NULL) {
            snprintf(failure, sizeof failure,
                     "CLBlast peer skipped: " CLBLAST_LIBRARY
                     " has no CLBlastSgemm");
            dlclose(lib);
        } else {
            /* POSIX: data and function pointers agree */
            memcpy(&sgemm, &symbol, sizeof symbol);
            void *half = dlsym(lib, "CLBlastHgemm");
            if (half != NULL) {
                memcpy(&hgemm, &half, sizeof half);
            }
        }
    }
    if (sgemm == NULL) {
        snprintf(why, why_size, "%s", failure);
        return -1;
    }
    return 0;
}

int clblast_sgemm(int trans_a, int trans_b, size_t m, size_t n, size_t k,
                  float alpha, cl_mem a,
                  size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset,
                  size_t b_ld, float beta, cl_mem c, size_t c_offset,
                  size_t c_ld, cl_command_queue *queue, cl_event *event)
{
    if (sgemm == NULL) {
        return CL_INVALID_OPERATION;
    }
    return sgemm(LAYOUT_ROW_MAJOR, trans_a ? TRANSPOSE_YES : TRANSPOSE_NO,
                 trans_b ? TRANSPOSE_YES : TRANSPOSE_NO, m, n, k, alpha,
                 a, a_offset, a_ld, b, b_offset, b_ld, beta, c, c_offset, c_ld,
                 queue, event);
}

int clblast_hgemm(int trans_a, int trans_b, size_t m, size_t n, size_t k,
                  unsigned short alpha, cl_mem a, size_t a_offset,
                  size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld,
                  unsigned short beta, cl_mem c, size_t c_offset, size_t c_ld,
                  cl_command_queue *queue, cl_event *event)
{
    if (hgemm == NULL) {
        return CL_INVALID_OPERATION;
    }
    return hgemm(LAYOUT_ROW_MAJOR, trans_a ? TRANSPOSE_YES : TRANSPOSE_NO,
                 trans_b ? TRANSPOSE_YES : TRANSPOSE_NO, m, n, k, alpha, a,
                 a_offset, a_ld, b, b_offset, b_ld, beta, c, c_offset, c_ld,
                 queue, event);
}
