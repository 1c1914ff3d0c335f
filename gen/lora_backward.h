/* lora_backward.h - what lora_backward's files share: its fields and
 * knobs (each written once), struct bwd with their values, and the hooks
 * lora_backward_reference.c gives op_lora_backward.c's op_def. */
#ifndef SPECL_LORA_BACKWARD_H
#define SPECL_LORA_BACKWARD_H

#include <stddef.h>

#include "lora_common.h"

/* The fields and the knobs under `tile:`, each written once, in the
 * order `specl list` shows them: the tables below, the members of struct
 * bwd and bwd_read() come from these lists. A field is X(MEMBER, TYPE,
 * DEF): DEF the struct param_def whose value MEMBER holds as TYPE (a bool
 * as 0 or 1); a knob X(NAME, KIND, DEFAULT, MIN, MAX, HELP), its value
 * held as a long by the member NAME (engine, the one choice, as its
 * index in lora_engine_choices). */
#define BWD_FIELDS(X)                                                        \
    X(K, long, LORA_SIZE_FIELD("in_features",                                \
                               "K: columns of X and dX, rows of W, A and "   \
                               "dA"))                                        \
    X(N, long, LORA_SIZE_FIELD("out_features",                               \
                               "N: columns of W, B, dB and dY"))             \
    X(R, long, LORA_SIZE_FIELD("rank", "r: columns of A, rows of B; at most "\
                                       "min(K, N) and 4064"))                \
    X(alpha, double, LORA_ALPHA_FIELD)                                       \
    X(scale, double, LORA_SCALE_FIELD("factor of (X*A)*B in the forward; "   \
                                      "default 1, or alpha / rank"))         \
    X(input_grad, int,                                                       \
      LORA_BOOL_FIELD("input_grad", 1, "compute dX (false for the first "    \
                                       "layer: dA and dB only)"))            \
    X(base, int,                                                             \
      LORA_BOOL_FIELD("base", 1, "dX includes dY*W^T; false: dX is the "     \
                                 "adapter's part alone (no W)"))             \
    X(accumulate, int,                                                       \
      LORA_BOOL_FIELD("accumulate", 0, "add into dA and dB (gradient "       \
                                       "accumulation) instead of "           \
                                       "overwriting"))                       \
    X(layout, int, LORA_LAYOUT_FIELD)

#define BWD_KNOBS(X)                                                         \
    X(engine, VALUE_CHOICE, ENGINE_SIMT, 0, 0,                               \
      "dX's GEMM with W: simt: float multiply-adds (lora_bwd_dx); mma: "     \
      "tensor cores (lora_bwd_dx_mma, m x n per work-group, wm x wn per "    \
      "warp; NVIDIA, compute capability 8.0+; f32 on tf32, three products "  \
      "a product); wgmma: as mma, f16/bf16 "                                 \
      "on warpgroups past dx_mma_max rows (lora_bwd_dx_wgmma, wg_m x wg_n; " \
      "compute capability 9.0)")                                             \
    X(m, VALUE_INT, 64, 1, 1024, "rows of dX per work-group")                \
    X(n, VALUE_INT, 128, 1, 1024, "columns of dX per work-group")            \
    X(k, VALUE_INT, 16, 1, 256,                                              \
      "N elements staged through local memory per step of dX's GEMM")       \
    X(wm, VALUE_INT, 8, 1, 128,                                              \
      "rows of dX per work-item (at most 16), per warp with engine: mma")    \
    X(wn, VALUE_INT, 8, 1, 128,                                              \
      "columns of dX per work-item (at most 16), per warp with engine: "     \
      "mma")                                                                 \
    X(stages, VALUE_INT, 2, 2, 8,                                            \
      "lora_bwd_dx_mma: steps in flight in local memory (cp.async)")        \
    X(wg_m, VALUE_INT, 128, 64, 512,                                         \
      "lora_bwd_dx_wgmma: rows of dX per work-group, a warpgroup of 128 "    \
      "work-items per 64 and one more that copies")                          \
    X(wg_n, VALUE_INT, 256, 64, 256,                                         \
      "lora_bwd_dx_wgmma: columns of dX per work-group: 64, 128 or 256")     \
    X(wg_stages, VALUE_INT, 4, 3, 6,                                         \
      "lora_bwd_dx_wgmma: steps in local memory, two more than it copies "   \
      "ahead")                                                               \
    X(dx_mma_max, VALUE_INT, 0, 0, 16777216,                                 \
      "engine: wgmma: rows at or below which dX runs on lora_bwd_dx_mma's "  \
      "tiles, whose work-groups take fewer rows; 0: lora_bwd_dx_wgmma at "   \
      "any rows")                                                            \
    X(pad, VALUE_INT, 4, 0, 16,                                              \
      "lora_bwd_dx: floats of padding per local-memory row")                 \
    X(warp_n, VALUE_INT, 8, 0, 32,                                           \
      "lora_bwd_dx: work-items along N per warp of 32; 0: row-major")        \
    X(vec, VALUE_INT, 4, 1, 4,                                               \
      "elements per global load and store of X, dY and dX: 1, 2 or 4")      \
    X(tg_rows, VALUE_INT, 8, 1, 256,                                         \
      "lora_bwd_tg: rows of X and dY per work-group")                        \
    X(tg_threads, VALUE_INT, 128, 32, 1024,                                  \
      "lora_bwd_tg: work-items per work-group")                              \
    X(tg_stages, VALUE_INT, 0, 0, 8,                                         \
      "lora_bwd_tg: steps of X and dY in local memory, copied by cp.async "  \
      "all but one ahead (float32, vec 4; NVIDIA, compute capability "      \
      "8.0+); 0: one step ahead in registers; default from the device")     \
    X(grad_rows, VALUE_INT, 4096, 1, 16777216,                               \
      "lora_bwd_grad: rows per work-group (more rows than this: a slice of " \
      "partial sums of dA and dB per grad_rows rows); default from the "     \
      "shape")                                                               \
    X(grad_threads, VALUE_INT, 128, 32, 1024,                                \
      "lora_bwd_grad: work-items per work-group, over 32 columns of X or "   \
      "dY (grad_vec each) and their rows")                                   \
    X(grad_vec, VALUE_INT, 4, 1, 4,                                          \
      "lora_bwd_grad: columns of X or dY per work-item: 1, 2 or 4")          \
    X(reduce_threads, VALUE_INT, 256, 1, 1024,                               \
      "lora_bwd_reduce: work-items per work-group")                          \
    X(fused_max, VALUE_INT, 0, 0, 16777216,                                  \
      "rows at or below which lora_bwd_fused computes every gradient in "    \
      "one launch (dX on the tiles of m x n with engine: simt); 0: never; "  \
      "default from the shape and the device")                               \
    X(fused_slices, VALUE_INT, 1, 1, 64,                                     \
      "lora_bwd_fused: slices of N (K for T) at one block of m rows, each "  \
      "a work-group's; halved as the blocks double; default from the shape")\
    X(x_once, VALUE_INT, 0, 0, 1,                                            \
      "1: T and dA from one read of X (lora_bwd_xpass on tf32 tensor "       \
      "cores: float32, NVIDIA compute capability 8.0+, rank <= 16, "         \
      "in_features a multiple of 4): G, then T and dA, then dB; 0: T and "   \
      "G, then dA and dB, X read twice")            \
    X(xpass_rows, VALUE_INT, 512, 64, 16777216,                              \
      "lora_bwd_xpass: rows per work-group, a multiple of 64")

/* Every value of a lora_backward spec, as numbers. */
struct bwd {
#define FIELD_MEMBER(member, type, ...) type member;
#define KNOB_MEMBER(name, ...) long name;
    BWD_FIELDS(FIELD_MEMBER)
    BWD_KNOBS(KNOB_MEMBER)
#undef FIELD_MEMBER
#undef KNOB_MEMBER
    const struct device_facts *dev; /* the target's (caps.h) */
    enum dtype dtype;
    enum target target;
};

/* The index of each field and knob in its table. */
#define FIELD_INDEX(member, ...) BWD_FIELD_##member,
#define KNOB_INDEX(name, ...) BWD_KNOB_##name,
enum { BWD_FIELDS(FIELD_INDEX) BWD_N_FIELDS };
enum { BWD_KNOBS(KNOB_INDEX) BWD_N_KNOBS };
#undef FIELD_INDEX
#undef KNOB_INDEX

/* The keys' tables, in those orders (lora_backward_values.c). */
extern const struct param_def bwd_fields[];
extern const struct param_def bwd_knobs[];

/* Fills C with KS's values. */
void bwd_read(const struct kernel_spec *ks, struct bwd *c);

/* dX needs W: the input gradient with the base. */
int bwd_uses_w(const struct bwd *c);

/* dX's GEMM with W runs on tensor cores. */
int bwd_dx_tensor(const struct bwd *c);

/* Checks a work-group of KERNEL, THREADS work-items and LOCAL_FLOATS of
 * local memory, against the limits; errors at KEY. */
void bwd_check_group(const struct kernel_spec *ks, const char *key,
                     const char *kernel, long threads, long local_floats,
                     struct diags *d);

/* lora_backward_tg.c: lora_bwd_tg (G and SCALE*T, SIMT): its rows per
 * work-item, its work-items across the rows (tg_threads must be a
 * multiple), its local memory in floats without and with (ring) the ring
 * of X and dY; its defaults after the shape's; the ring's checks. */
long bwd_tg_rows_per_item(const struct bwd *c);
long bwd_tg_items_m(const struct bwd *c);
long bwd_tg_local(const struct bwd *c);
long bwd_tg_ring(const struct bwd *c);
void bwd_tg_defaults(struct kernel_spec *ks);
void bwd_tg_check_stages(const struct kernel_spec *ks, const struct bwd *c,
                         struct diags *d);

/* lora_backward_fused.c: lora_bwd_fused, every gradient in one launch at
 * few rows (fused_max > 0): its defaults (fused_max, fused_slices), its
 * checks, its #defines, its sync words, its paths (its bands of slices,
 * fewest rows first, from path p->n_path on), and the tuning space and
 * entry hooks of its rows. */
int bwd_fused(const struct bwd *c);
void bwd_fused_defaults(struct kernel_spec *ks);
void bwd_fused_check(const struct kernel_spec *ks, const struct bwd *c,
                     struct diags *d);
void bwd_fused_plan(const struct bwd *c, struct plan *p);
long bwd_fused_sync_words(const struct bwd *c);
void bwd_fused_paths(const struct bwd *c, struct plan *p);
const struct tune_axis *bwd_fused_tune_space(const struct kernel_spec *ks,
                                             long rows);
void bwd_fused_entry_rows(struct kernel_spec *ks,
                          const struct kernel_spec *entry, long rows);
extern const char *const bwd_fused_knobs[];

/* lora_backward_xpass.c: x_once, T and dA from one read of X
 * (lora_bwd_xpass, lora_bwd_xsum): whether the plan takes it, its
 * checks, #defines (X_ONCE wherever lora_bwd_tg runs), the scratch past
 * G and T it takes (per row, fixed) and its launches. */
int bwd_xpass(const struct bwd *c);
void bwd_xpass_check(const struct kernel_spec *ks, const struct bwd *c,
                     struct diags *d);
void bwd_xpass_plan(const struct bwd *c, struct plan *p);
void bwd_xpass_scratch(const struct bwd *c, long *per_row, long *fixed);
void bwd_xpass_launches(const struct bwd *c, struct path *pa);

/* The shape's #defines, as the plan and the naive plan have them. */
void bwd_plan_shape(const struct kernel_spec *ks, const struct bwd *c,
                    struct plan *p);

/* lora_backward_reference.c: the op's checking and measuring hooks. */
int bwd_reference(const struct kernel_spec *ks, const float *const *in,
                  const size_t *sizes, double *const *out);
void bwd_naive(const struct kernel_spec *ks, struct plan *p);
void bwd_costs(const struct kernel_spec *ks, const size_t *sizes,
               double *bytes, double *flops);
void bwd_shape_text(const struct kernel_spec *ks, const size_t *sizes,
                    char *buf, size_t size);
void bwd_blas_peer(const struct kernel_spec *ks, size_t rows,
                   struct gemm_chain *g);

#endif
