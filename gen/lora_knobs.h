/* lora_knobs.h - lora_forward's fields and knobs, each written once: the
 * lists below make op_lora.c's tables of them (struct param_def), the
 * members of struct lora that hold their values, and lora_read(), which
 * fills those. A new knob is one line here, then its default, checks and
 * use. */
#ifndef SPECL_LORA_KNOBS_H
#define SPECL_LORA_KNOBS_H

#include "lora_common.h"

/* The choices of the knob xa, as its value holds them (the names are
 * op_lora.c's xa_choices); engine's are lora_common.h's. */
enum { XA_PREPASS, XA_INLINE };

/* The fields, in the order `specl list` shows them: X(MEMBER, TYPE, DEF),
 * DEF the struct param_def of the field whose value struct lora's MEMBER
 * holds as TYPE (a bool as 0 or 1). */
#define LORA_FIELDS(X)                                                       \
    X(K, long, LORA_SIZE_FIELD("in_features",                                \
                               "K: columns of X, rows of W and A"))          \
    X(N, long, LORA_SIZE_FIELD("out_features", "N: columns of W, B and Y"))  \
    X(R, long, LORA_SIZE_FIELD("rank", "r: columns of A, rows of B; "        \
                                       "at most min(K, N)"))                 \
    X(alpha, double, LORA_ALPHA_FIELD)                                       \
    X(scale, double,                                                         \
      LORA_SCALE_FIELD("factor of (X*A)*B; default 1, or alpha / rank"))     \
    X(base, int,                                                             \
      LORA_BOOL_FIELD("base", 1, "include X*W; false: Y is the adapter "     \
                                 "term alone (no W)"))                       \
    X(accumulate, int,                                                       \
      LORA_BOOL_FIELD("accumulate", 0,                                       \
                      "add into Y instead of overwriting it"))               \
    X(layout, int, LORA_LAYOUT_FIELD)

/* The knobs under `tile:`, in the order `specl list` shows them:
 * X(NAME, TYPE, KIND, DEFAULT, MIN, MAX, CHOICES, HELP), the knob NAME
 * as struct param_def has it, its value held as TYPE by struct lora's
 * member NAME. */
#define LORA_KNOBS(X)                                                        \
    X(m, long, VALUE_INT, 128, 1, 1024, NULL, "rows of Y per work-group")    \
    X(n, long, VALUE_INT, 64, 1, 1024, NULL, "columns of Y per work-group")  \
    X(k, long, VALUE_INT, 16, 1, 256, NULL,                                  \
      "K elements staged through local memory per step")                     \
    X(wm, long, VALUE_INT, 8, 1, 128, NULL,                                  \
      "rows of Y per work-item (at most 16), per warp with engine: mma")     \
    X(wn, long, VALUE_INT, 8, 1, 128, NULL,                                  \
      "columns of Y per work-item (at most 16), per warp with engine: mma")  \
    X(vec, long, VALUE_INT, 4, 1, 4, NULL,                                   \
      "elements per global load and store: 1, 2 or 4")                       \
    X(pad, long, VALUE_INT, 4, 0, 16, NULL,                                  \
      "floats of padding per local-memory row (bank conflicts)")             \
    X(xa, int, VALUE_CHOICE, XA_PREPASS, 0, 0, xa_choices,                   \
      "X*A: prepass (lora_xa into scratch) or inline (in lora_main)")        \
    X(warp_n, long, VALUE_INT, 8, 0, 32, NULL,                               \
      "lora_main: work-items along N per warp of 32; 0: row-major")          \
    X(decode_rows, long, VALUE_INT, 16, 0, 64, NULL,                         \
      "lora_decode: rows per work-group; 0: lora_decode never runs")         \
    X(decode_max, long, VALUE_INT, 16, 0, 16777216, NULL,                    \
      "rows at or below which lora_decode runs (decode_rows per "            \
      "work-group), in one launch")                                          \
    X(decode_n, long, VALUE_INT, 8, 2, 1024, NULL,                           \
      "lora_decode: work-items along N, 4 columns each (N under 4: vec)")    \
    X(decode_k, long, VALUE_INT, 32, 1, 1024, NULL,                          \
      "lora_decode: work-items splitting the reduction")                     \
    X(decode_mma_max, long, VALUE_INT, 0, 0, 16777216, NULL,                 \
      "rows at or below which lora_decode_mma runs (above decode_max; "      \
      "engine: mma with W): X*W and X*A over slices of K on tensor cores, "  \
      "up to 32 rows per work-group, summed with T*B in the same launch; "   \
      "0: never (ignored by other engines)")                                 \
    X(decode_split_max, long, VALUE_INT, 0, 0, 32, NULL,                     \
      "rows at or below which lora_decode_split runs (above decode_max; "    \
      "engine: simt with W): X*W and X*A over slices of K, a work-item "     \
      "per column, summed with T*B by lora_decode_sum; 0: never")            \
    X(decode_slices, long, VALUE_INT, 1, 1, 1024, NULL,                      \
      "lora_decode_mma, lora_decode_split: slices of K, a work-group per "   \
      "slice and strip of decode_cols columns (lora_decode_mma: at one "     \
      "block of rows, halved as the blocks double)")                         \
    X(decode_cols, long, VALUE_INT, 64, 16, 1024, NULL,                      \
      "columns of W per work-group: lora_decode_mma's (a power of two), "    \
      "or lora_decode_split's (a work-item each, at least the rank)")        \
    X(decode_warps, long, VALUE_INT, 8, 1, 32, NULL,                         \
      "lora_decode_mma: warps per work-group, each taking every "            \
      "decode_warps-th step of 16 values of K")                              \
    X(xa_m, long, VALUE_INT, 16, 1, 1024, NULL,                              \
      "lora_xa: rows of X per work-group")                                   \
    X(xa_k, long, VALUE_INT, 64, 1, 1024, NULL,                              \
      "lora_xa: work-items splitting K")                                     \
    X(xa_chunk, long, VALUE_INT, 256, 1, 16777216, NULL,                     \
      "lora_xa: rows of A staged in local memory at once (a multiple of "    \
      "vec); K is split over work-groups in stretches of this size")         \
    X(engine, int, VALUE_CHOICE, ENGINE_SIMT, 0, 0, lora_engine_choices,     \
      "simt: float multiply-adds (lora_xa, lora_main); mma: tensor cores "   \
      "for X*A (lora_xa_mma) and the GEMM with W (lora_mma, wm x wn per "    \
      "warp; NVIDIA, compute capability 8.0+; f32: the GEMM with W alone, "  \
      "on tf32, three products a product); wgmma: as mma, f16/bf16, "        \
      "the GEMM with W over all of K on warpgroups (lora_wgmma; NVIDIA, "    \
      "compute capability 9.0)")                                             \
    X(stages, long, VALUE_INT, 2, 2, 8, NULL,                                \
      "lora_mma: K steps in flight in local memory (cp.async pipeline)")     \
    X(wg_m, long, VALUE_INT, 128, 64, 512, NULL,                             \
      "lora_wgmma: rows of Y per work-group, a warpgroup of 128 "            \
      "work-items per 64 and one more that copies (K step: k)")              \
    X(wg_n, long, VALUE_INT, 256, 64, 256, NULL,                             \
      "lora_wgmma: columns of Y per work-group: 64, 128 or 256")             \
    X(wg_stages, long, VALUE_INT, 4, 3, 6, NULL,                             \
      "lora_wgmma: K steps in local memory, two more than it copies ahead")  \
    X(wg_split_max, long, VALUE_INT, 0, 0, 16777216, NULL,                   \
      "rows at or below which lora_wgmma_split runs (above split_max): "     \
      "lora_wgmma's tiles over slices of K, as many as bring them to a "     \
      "wave, at least 2, summed by lora_combine; 0: never")                  \
    X(mma_max, long, VALUE_INT, 0, 0, 16777216, NULL,                        \
      "engine: wgmma: rows at or below which lora_mma's tiles run instead "  \
      "of lora_wgmma's (past the paths before them); 0: never")              \
    X(split_k, long, VALUE_INT, 1, 1, 1024, NULL,                            \
      "lora_main (lora_mma) at few rows: K cut into this many slices, a "    \
      "work-group each, summed by lora_combine (lora_main halves them as "   \
      "the rows' tiles grow past a wave); 1: no split path")                 \
    X(split_max, long, VALUE_INT, 0, 0, 16777216, NULL,                      \
      "rows at or below which the split path runs (above decode_max); "    \
      "0: never")                                                            \
    X(pad_rows, long, VALUE_INT, 0, 0, 16777216, NULL,                       \
      "rows from which lora_main reads 4 elements wide from copies of X "    \
      "(in_features no multiple of 4) and of W and B (out_features no "      \
      "multiple of 4) with rows padded to multiples of 4, made each call "   \
      "in the scratch by lora_pad_x and lora_pad_w; 0: never")               \
    X(delta_rows, long, VALUE_INT, 0, 0, 32, NULL,                           \
      "lora_delta (base: false): rows per work-group, T computed on chip; "  \
      "0: lora_delta never runs")                                            \
    X(delta_max, long, VALUE_INT, 0, 0, 16777216, NULL,                      \
      "rows at or below which lora_delta runs (above decode_max), in one "   \
      "launch; 0: never")                                                    \
    X(delta_split, long, VALUE_INT, 1, 1, 64, NULL,                          \
      "lora_delta at its fewest rows (up to 64 work-groups of "              \
      "delta_rows): N cut into this many slices, a work-group each, each "   \
      "computing its rows' T; 1: none")                                      \
    X(delta_threads, long, VALUE_INT, 256, 1, 1024, NULL,                    \
      "lora_delta: work-items per work-group")

#endif
