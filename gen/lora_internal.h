/* lora_internal.h - what lora_forward's files share: struct lora, the
 * values of a spec; the sizes its kernels derive from them and which
 * kernels and paths run (lora_sizes.c); and the op's hooks, each file's
 * for op_lora.c's op_def. */
#ifndef SPECL_LORA_INTERNAL_H
#define SPECL_LORA_INTERNAL_H

#include <stddef.h>

#include "gemm_mma.h"
#include "lora_knobs.h"

/* Every value of a lora_forward spec, as numbers: a member per field and
 * knob of lora_knobs.h, named as it is there. */
#define PARAM_MEMBER(member, type, ...) type member;
struct lora {
    LORA_FIELDS(PARAM_MEMBER)
    LORA_KNOBS(PARAM_MEMBER)
    int cpu;  /* the variant is for CPUs */
    int half; /* f16 or bf16 storage */
    const struct device_facts *dev; /* the target's (caps.h) */
};
#undef PARAM_MEMBER

/* Fills C with KS's values (op_lora.c). */
void lora_read(const struct kernel_spec *ks, struct lora *c);

/* The most bands of rows of a split path (split_bands). */
#define SPLIT_BANDS 4
/* The fewest K steps of a slice on tensor cores. */
#define SPLIT_MMA_MIN_STEPS 8

/* ---- lora_sizes.c: what the templates derive from the knobs ---------- */

/* lora_main (XA: with X*A inline or not), lora_xa, lora_xa_mma and
 * lora_expand: work-items, local memory in bytes, and T's partial sums
 * (xa_split per row). */
long main_threads(const struct lora *c);
long main_local(const struct lora *c, int xa);
long xa_rows_per_item(const struct lora *c);
long xa_threads(const struct lora *c);
long xa_reduction(const struct lora *c);
long xa_staged_a(const struct lora *c);
long xa_local(const struct lora *c);
long xa_split(const struct lora *c);
long xa_mma_local(const struct lora *c);
long expand_rows(const struct lora *c);
long expand_vec(const struct lora *c);
long row_threads(const struct lora *c, long width);
long expand_threads(const struct lora *c);

/* lora_decode, lora_delta, lora_decode_mma and lora_decode_split. */
long decode_vec(const struct lora *c);
long decode_upto(const struct lora *c);
long decode_local(const struct lora *c);
long delta_split_upto(const struct lora *c);
long delta_local(const struct lora *c);
long decode_strips(const struct lora *c);
long dsplit_rows(const struct lora *c);
long dsplit_local(const struct lora *c);
long few_upto(const struct lora *c);
const char *few_knob(const struct lora *c);
long dmma_rows(const struct lora *c);
int dmma_bands(const struct lora *c, long slices[SPLIT_BANDS],
               long upto[SPLIT_BANDS]);
long dmma_scratch_per_row(const struct lora *c, long slices);
long dmma_scratch_most(const struct lora *c);
long dmma_rank_cols(const struct lora *c);
long dmma_width(const struct lora *c);
long dmma_stages(const struct lora *c);
long dmma_local(const struct lora *c);

/* Which kernels run. */
int uses_delta(const struct lora *c);
int uses_xa(const struct lora *c);
int uses_mma(const struct lora *c);
int uses_lora_mma(const struct lora *c);
int xa_on_mma(const struct lora *c);
int uses_wgmma(const struct lora *c);
int uses_decode_mma(const struct lora *c);
int uses_decode_split(const struct lora *c);
int uses_main(const struct lora *c);
int uses_expand(const struct lora *c);
int uses_split(const struct lora *c);
int uses_wg_split(const struct lora *c);
int uses_padded(const struct lora *c);
int pads_x(const struct lora *c);
int pads_w(const struct lora *c);

/* The split paths' bands of rows (slices[i] slices of K up to upto[i]
 * rows; returned: their count) and what they take. */
int split_bands(const struct lora *c, long slices[SPLIT_BANDS],
                long upto[SPLIT_BANDS]);
long split_upto(const struct lora *c);
int wg_split_bands(const struct lora *c, long slices[SPLIT_BANDS],
                   long upto[SPLIT_BANDS]);
long split_slices_most(const struct lora *c);
long split_widest(const struct lora *c, long *slices, long *rows);

/* The padded copies; lora_mma's and lora_wgmma's GEMM (gemm_mma.h), its
 * work-items and local memory. */
long x_padded(const struct lora *c);
long w_rows_padded(const struct lora *c);
void lora_gemm_mma(const struct lora *c, struct gemm_mma *g);
long mma_threads(const struct lora *c);
long mma_local(const struct lora *c);
long wgmma_threads(const struct lora *c);
long wgmma_local(const struct lora *c);
long split_wave(const struct lora *c);
long mma_wave(const struct lora *c);
long wg_wave(const struct lora *c);

/* ---- the op's hooks ---------------------------------------------------- */

/* lora_defaults.c */
void lora_defaults(struct kernel_spec *ks);
extern const struct cpu_few_rows lora_cpu_few_rows;

/* lora_paths.c; lora_plan_shape: the shape's and scale's #defines, which
 * the naive plan shares. */
void lora_plan(const struct kernel_spec *ks, struct plan *p);
void lora_plan_shape(const struct kernel_spec *ks, const struct lora *c,
                     struct plan *p);

/* lora_reference.c */
int lora_reference(const struct kernel_spec *ks, const float *const *in,
                   const size_t *sizes, double *const *out);
void lora_naive(const struct kernel_spec *ks, struct plan *p);
void lora_costs(const struct kernel_spec *ks, const size_t *sizes,
                double *bytes, double *flops);
void lora_shape_text(const struct kernel_spec *ks, const size_t *sizes,
                     char *buf, size_t size);
void lora_blas_peer(const struct kernel_spec *ks, size_t rows,
                    struct gemm_chain *g);

#endif
