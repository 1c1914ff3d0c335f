/* attention_reference.h - what the float64 references of attention and
 * attention_backward share: a tile of rows held (query rows, or keys)
 * while the rows they meet stream past, so that each streamed row is
 * read once a tile, not once a row, and the tile's dots with it run
 * side by side. Each dot sums in element order, in double, as a plain
 * loop over one pair of rows would. */
#ifndef SPECL_ATTENTION_REFERENCE_H
#define SPECL_ATTENTION_REFERENCE_H

#include <stddef.h>

#include "op.h"

/* Rows a tile holds, and the longest row (head_dim's limit). */
#define ATTN_REF_ROWS 32
#define ATTN_REF_MAX_D 256

/* What both references take of a kernel: the scale and softcap as its
 * kernels hold them (floats), and its head's length. */
struct attn_ref_math {
    double scale, cap;
    size_t d;
};
void attn_ref_math_of(const struct kernel_spec *ks, struct attn_ref_math *m);

/* The score of a (query, key) pair from their dot DOT: scaled, then
 * softcapped (cap tanh(s / cap)); *SLOPE, when not NULL, the score's
 * derivative by the scaled dot (1 - tanh^2; 1 without a cap). */
double attn_ref_score(const struct attn_ref_math *m, double dot,
                      double *slope);

/* A tile of ATTN_REF_ROWS query rows of one (batch, head), the last
 * fewer, and where its rows and its kv head's keys lie. */
struct attn_ref_tile {
    size_t n;                  /* its rows */
    size_t at[ATTN_REF_ROWS];  /* row r of q, o and dO from this element */
    size_t lse_at;             /* row r's lse at lse_at + r */
    size_t kv_at, kstride;     /* key j of k and v from kv_at + j * kstride */
    long lo[ATTN_REF_ROWS], hi[ATTN_REF_ROWS]; /* the keys row r sees */
    long first, end;           /* the keys some row sees */
};

/* The query tiles of each (batch, head) at SIZES (batch, seq_q,
 * seq_kv). */
size_t attn_ref_tiles(const size_t *sizes);

/* Tile ITEM of KS at SIZES into T: item (b * heads + h) * tiles + tile,
 * tiles = attn_ref_tiles(SIZES). */
void attn_ref_tile_at(const struct kernel_spec *ks, const size_t *sizes,
                      size_t item, struct attn_ref_tile *t);

/* N rows of D elements (N <= ATTN_REF_ROWS), row r at SRC + AT[r], as
 * the columns of HELD (D x ATTN_REF_ROWS); the columns past N zero. */
void attn_ref_hold(const float *src, const size_t *at, size_t n, size_t d,
                   float *held);

/* DOTS[r] = the dot of column r of HELD with ROW (D elements), for
 * every column. */
void attn_ref_dots(const float *held, const float *row, size_t d,
                   double *dots);

/* Y[e] += A * X[e] for the N elements of Y (not overlapping X). */
void attn_ref_axpy(double *restrict y, double a, const float *restrict x,
                   size_t n);

/* The dot of rows A and B of N elements. */
double attn_ref_dot(const float *a, const float *b, size_t n);

#endif
