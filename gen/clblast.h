/* clblast.h - CLBlast, loaded at run time for the peer that `specl bench`
 * measures: building specl and generating code need no CLBlast. */
#ifndef SPECL_CLBLAST_H
#define SPECL_CLBLAST_H

#include <stddef.h>

#include <CL/cl.h>

/* CLBlastSuccess of CLBlast's status codes (clblast_c.h); its other codes
 * are OpenCL's errors and CLBlast's own, all negative. */
#define CLBLAST_SUCCESS 0

/* Loads libclblast.so.1 once per process. Returns 0 when CLBlastSgemm is
 * there (CLBlastHgemm is looked up too); else -1, with a note for the user
 * in WHY. */
int clblast_load(char *why, size_t why_size);

/* CLBlastSgemm, row-major: C = ALPHA op(A) op(B) + BETA C for an M x K
 * op(A), a K x N op(B) and an M x N C, op transposing when TRANS_A
 * (TRANS_B) is set. Returns CLBlast's status; CL_INVALID_OPERATION before
 * a successful clblast_load. */
int clblast_sgemm(int trans_a, int trans_b, size_t m, size_t n, size_t k,
                  float alpha, cl_mem a,
                  size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset,
                  size_t b_ld, float beta, cl_mem c, size_t c_offset,
                  size_t c_ld, cl_command_queue *queue, cl_event *event);

/* CLBlastHgemm, the same on half-precision (cl_half) buffers, ALPHA and
 * BETA given as the half bits; CL_INVALID_OPERATION when the library has
 * no CLBlastHgemm. CLBlast needs cl_khr_fp16 on the device (else its
 * status -2050, CLBlastNoHalfPrecision). */
int clblast_hgemm(int trans_a, int trans_b, size_t m, size_t n, size_t k,
                  unsigned short alpha, cl_mem a, size_t a_offset,
                  size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld,
                  unsigned short beta, cl_mem c, size_t c_offset, size_t c_ld,
                  cl_command_queue *queue, cl_event *event);

#endif
