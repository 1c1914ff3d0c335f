/* lora_common.h - what the LoRA ops (lora_forward, op_lora.c, and
 * lora_backward, op_lora_backward.c) share: their kernels' limits, integer
 * helpers, the fields of a LoRA layer and their checks, buffers and
 * measures. */
#ifndef SPECL_LORA_COMMON_H
#define SPECL_LORA_COMMON_H

#include <float.h>
#include <stddef.h>

#include "op.h"

#define LOCAL_MAX 32768L  /* bytes of local memory a kernel may use */
#define THREADS_MAX 1024L /* work-items per work-group */

static inline long ceil_div(long a, long b)
{
    return (a + b - 1) / b;
}

static inline long min_l(long a, long b)
{
    return a < b ? a : b;
}

static inline long max_l(long a, long b)
{
    return a > b ? a : b;
}

/* The least power of two >= V (1 for V <= 1). */
static inline long pow2_ceil(long v)
{
    long p = 1;
    while (p < v) {
        p *= 2;
    }
    return p;
}

/* The greatest power of two <= V (1 for V <= 1). */
static inline long pow2_floor(long v)
{
    long p = 1;
    while (p * 2 <= v) {
        p *= 2;
    }
    return p;
}

/* Fields of a LoRA layer (struct param_def initializers): K, N or the rank
 * (KEY), required; alpha; scale (default 1); a bool KEY defaulting to DEF. */
#define LORA_SIZE_FIELD(key, help)                                           \
    {key, VALUE_INT, 1, 0, 1, 16777216, NULL, help}
#define LORA_ALPHA_FIELD                                                     \
    {"alpha", VALUE_FLOAT, 0, 0, -FLT_MAX, FLT_MAX, NULL,                    \
     "LoRA alpha: scale = alpha / rank (as in PEFT)"}
#define LORA_SCALE_FIELD(help)                                               \
    {"scale", VALUE_FLOAT, 0, 1, -FLT_MAX, FLT_MAX, NULL, help}
#define LORA_BOOL_FIELD(key, def, help)                                      \
    {key, VALUE_BOOL, 0, def, 0, 1, NULL, help}

/* weight_layout: how W, A and B (and dA, dB) lie in memory. in_out: W is
 * K x N, A K x r, B r x N; out_in: PyTorch's and PEFT's, nn.Linear.weight
 * N x K, lora_A.weight r x K, lora_B.weight N x r. */
enum { LAYOUT_IN_OUT, LAYOUT_OUT_IN };
extern const char *const lora_layout_choices[];
#define LORA_LAYOUT_FIELD                                                    \
    {"weight_layout", VALUE_CHOICE, 0, LAYOUT_IN_OUT, 0, 0,                  \
     lora_layout_choices,                                                    \
     "in_out: w [in][out], a [in][rank], b [rank][out]; out_in: "           \
     "PyTorch's and PEFT's, w [out][in], a [rank][in], b [out][rank]"}

/* The knob engine of both ops: what runs their GEMM with W. simt: float
 * multiply-adds; mma: tensor cores (mma.sync, NVIDIA compute capability
 * 8.0+, f16/bf16); wgmma: warpgroups (compute capability 9.0). */
enum { ENGINE_SIMT, ENGINE_MMA, ENGINE_WGMMA };
extern const char *const lora_engine_choices[];

/* The #define WEIGHT_OUT_IN of P's prelude, with out_in only (in_out, the
 * default, leaves the emitted source as it was). */
void lora_plan_layout(struct plan *p, int layout);

/* Reports a rank above in_features (K) or out_features (N) at the rank's
 * mark, the first of the two only; returns 0 when it did. */
int lora_check_rank(const struct kernel_spec *ks, long K, long N, long R,
                    struct diags *d);

/* Reports a spec that gives both alpha and scale. */
void lora_check_alpha_scale(const struct kernel_spec *ks, struct diags *d);

/* The default of the knob warp_n for a tile of M x N with WM x WN per
 * work-item: warps of 4 x 8 work-items on GPUs where the tile's
 * work-items form whole ones, else 0 (row-major). */
void lora_warp_n_default(struct kernel_spec *ks, long m, long n, long wm,
                         long wn);

/* WARP_N as the plan emits it: the layout it gives, a warp as wide as a
 * row of N / WN work-items being row-major (0). */
long lora_warp_layout(long warp_n, long n, long wn);

/* A register-tiled GEMM of templates/gemm_simt.cl as its plan sets it
 * up: the tiles of KERNEL (lora_main, lora_bwd_dx) and what it
 * multiplies, the #defines GEMM_* of the same names. */
struct gemm_simt {
    const char *kernel;        /* for the #defines' comments */
    long m, n, k, wm, wn, pad; /* the knobs: GEMM_TILE_M, ..., GEMM_PAD */
    long warp_n;               /* the knob (GEMM_WARP_N: lora_warp_layout) */
    long reduce;               /* GEMM_K: the reduction before r */
    long cols;                 /* GEMM_N: the output's columns */
    long rank;                 /* GEMM_RANK: r, the reduction's last part */
    long rank_parts;           /* GEMM_RANK_PARTS: partial sums a T element */
    long vec;                  /* GEMM_VEC: the widest global load */
    int stage_a, stage_b;      /* GEMM_STAGE_A, _B: the sides over GEMM_K */
    int out_add;               /* GEMM_OUT_ADD: output += the product */
    int out_fixed;             /* GEMM_OUT_FIXED: stores all as wide */
};

/* Adds G's #defines to P's prelude: every one gemm_simt.cl reads. */
void lora_plan_gemm_simt(struct plan *p, const struct gemm_simt *g);

/* Adds the buffers a and b to P, in LAYOUT, with how to fill them from
 * PEFT's weights. */
void lora_plan_adapter_buffers(struct plan *p, long K, long N, long R,
                               int layout);

/* The offset of element (I, J) of an I_N x J_N matrix of a LoRA layer (W
 * K x N, A K x r, B r x N, as in_out has them) in LAYOUT. */
static inline size_t lora_at(int layout, size_t i, size_t j, size_t i_n,
                             size_t j_n)
{
    return layout == LAYOUT_OUT_IN ? j * i_n + i : i * j_n + j;
}

/* T = SCALE * X_ROW*A for one row of X (K values) into T (R values), in
 * float64, as the references compute it (A in LAYOUT). */
void lora_reference_t(const float *x_row, const float *a, size_t K,
                      size_t R, double scale, int layout, double *t);

/* Appends to G the SGEMM of a BLAS peer that computes T = SCALE * X*A
 * into "temp" for ROWS rows (A in LAYOUT). */
void lora_peer_t(struct gemm_chain *g, size_t rows, size_t K, size_t R,
                 double scale, int layout);

/* "M=ROWS K=K N=N r=R", then NOTE, then " +=" to ACCUMULATE: the shape
 * in one line of bench output. */
void lora_shape_line(char *buf, size_t size, size_t rows, long K, long N,
                     long R, const char *note, int accumulate);

/* The op_def hooks of both ops: the float32 bound 1e-4; rows of a batch
 * (of prompts, or of tokens in training), 512. */
double lora_error_bound(const struct kernel_spec *ks);
void lora_bench_sizes(const struct kernel_spec *ks, size_t *sizes);

#endif
