/* lora_sizes.c - lora_forward's kernels as its defaults, checks and plan
 * count them: the sizes the templates derive from the knobs (work-items,
 * local memory, rows per work-group), and which kernels and paths a
 * spec's values run. */
#include "lora_internal.h"

#include <limits.h>

/* The template's derived sizes (main_tiles.cl, "Derived sizes"). */
static long rank_step(const struct lora *c)
{
    return min_l(c->R, c->k);
}

long main_threads(const struct lora *c)
{
    return (c->m / c->wm) * (c->n / c->wn);
}

/* Local memory of lora_main without and with inline X*A, in bytes. */
long main_local(const struct lora *c, int xa)
{
    long lda = c->m + c->pad, ldb = c->n + c->pad;
    long rk = rank_step(c);
    long as = (c->base || xa == XA_INLINE) ? 2 * c->k * lda : rk * lda;
    long bs = c->base ? 2 * c->k * ldb : rk * ldb;
    long floats = as + bs;
    if (xa == XA_INLINE) {
        long rank_ceil = ceil_div(c->R, rk) * rk;
        long tn = c->n / c->wn;
        if (tn < 1) {
            return LONG_MAX; /* no valid layout: validate() says why */
        }
        long al_w = ceil_div(rank_ceil, tn) * tn;
        floats += 2 * c->k * al_w + rank_ceil * lda;
    }
    return 4 * floats;
}

/* Rows per work-item of lora_xa (XA_W): as many as divide xa_m with at
 * most 64 accumulators, so that each A value staged in local memory serves
 * several rows. */
long xa_rows_per_item(const struct lora *c)
{
    long w = 8;
    while (w > 1 && (c->xa_m % w != 0 || w * c->R > 64)) {
        w /= 2;
    }
    return w;
}

long xa_threads(const struct lora *c)
{
    return c->xa_k * (c->xa_m / xa_rows_per_item(c));
}

/* The reduction of lora_xa, in floats. */
long xa_reduction(const struct lora *c)
{
    return (c->xa_m / xa_rows_per_item(c)) * c->R * (c->xa_k + 1);
}

/* Local memory of lora_xa in bytes (the template's XA_LOCAL): xa_chunk
 * rows of A, VEC rows then XA_APAD floats of padding, sharing memory with
 * the reduction. */
long xa_staged_a(const struct lora *c)
{
    long apad = c->R % 4 == 0 ? 4 : 1;
    return ceil_div(c->xa_chunk, c->vec) * (c->vec * c->R + apad);
}

long xa_local(const struct lora *c)
{
    long a = xa_staged_a(c), red = xa_reduction(c);
    return 4 * (a > red ? a : red);
}

/* Partial sums of T that lora_xa writes per row before lora_main and
 * lora_expand (the template's XA_SPLIT). */
long xa_split(const struct lora *c)
{
    return ceil_div(c->K, c->xa_chunk);
}

/* Local memory of lora_xa_mma in bytes (the template's XM_LOCAL): its
 * stretch of K in whole 16-byte chunks, rounded up to steps of 32, for
 * each of the rank's columns rounded up to 8, plus 32 halves per column
 * when that puts the columns 64 bytes apart modulo 128. */
long xa_mma_local(const struct lora *c)
{
    long per = ceil_div(c->K / 8, xa_split(c)) * 8;
    long steps = ceil_div(per, 32);
    long lda = steps * 32 + (steps % 2 == 0 ? 32 : 0);
    return 2 * ceil_div(c->R, 8) * 8 * lda;
}

/* lora_expand: rows of Y per work-group, as many as local memory holds
 * T for, at most 64 (EXPAND_ROWS). */
long expand_rows(const struct lora *c)
{
    long fit = LOCAL_MAX / (4 * c->R);
    return fit > 64 ? 64 : fit;
}

/* lora_expand's columns per work-item (EXPAND_VEC). GPUs: vec, or 8
 * halves (16-byte stores) while B's 8-wide rows fit in registers (rank 16
 * and below). CPUs: 16 or 8 where they divide N. PoCL runs a work-item's
 * loop over the rows as it is, so only the item's own vectors become
 * SIMD: 4 wide leaves wide vector units mostly idle (bench/RESULTS.md,
 * "The deltas on CPUs"). */
long expand_vec(const struct lora *c)
{
    if (!c->cpu) {
        return c->half && c->R <= 16 && c->N % 8 == 0 ? 8 : c->vec;
    }
    for (long v = 16; v > c->vec; v /= 2) {
        if (c->N % v == 0) {
            return v;
        }
    }
    return c->vec;
}

/* Work-items of the kernels that walk rows of Y, WIDTH columns each:
 * lora_combine (COMBINE_N) and lora_expand (expand_threads). */
long row_threads(const struct lora *c, long width)
{
    return min_l(256, pow2_ceil(ceil_div(c->N, width)));
}

/* lora_expand's work-items (EXPAND_N). On GPUs as many columns per
 * work-group as at vec, in fewer, wider items: as many work-groups at few
 * rows, where half as many left compute units idle. */
long expand_threads(const struct lora *c)
{
    if (c->cpu) {
        return row_threads(c, expand_vec(c));
    }
    long t = row_threads(c, c->vec) * c->vec / expand_vec(c);
    return t < 1 ? 1 : t;
}

/* lora_decode's columns per work-item: 4 wherever N allows, gathered in
 * vec-wide pieces at vec 1 or 2 (see lora_decode.cl). */
long decode_vec(const struct lora *c)
{
    return c->N >= 4 ? 4 : c->vec;
}

/* The most rows lora_decode takes; 0 when it never runs. */
long decode_upto(const struct lora *c)
{
    return c->decode_rows > 0 ? c->decode_max : 0;
}

/* Rows of partial sums that fit 4096 floats of lora_decode's reduction
 * buffer, PER_ROW floats each; at least 1, at most decode_rows. */
static long decode_fit(const struct lora *c, long per_row)
{
    long fit = 4096 / per_row;
    return fit < 1 ? 1 : fit > c->decode_rows ? c->decode_rows : fit;
}

/* The template's DEC_RED_SIZE: partial sums of Y, or of T (RANK rounded
 * up to decode_n columns), whichever take more. */
static long decode_red(const struct lora *c)
{
    long per_row = c->decode_k * c->decode_n * decode_vec(c);
    long red = decode_fit(c, per_row) * per_row;
    long t_row = c->decode_k * ceil_div(c->R, c->decode_n) * c->decode_n;
    long tred = decode_fit(c, t_row) * t_row;
    return tred > red ? tred : red;
}

long decode_local(const struct lora *c)
{
    return 4 * (decode_red(c) + c->decode_rows * c->R);
}

/* lora_delta's path exists (base: false): rows above decode_max up to
 * delta_max, in one launch. */
int uses_delta(const struct lora *c)
{
    return !c->base && c->delta_rows > 0 && c->delta_max > decode_upto(c);
}

/* Rows up to which lora_delta cuts N into delta_split slices: while the
 * rows alone make at most a work-group for every other compute unit,
 * where the slices fill the rest; 0 where it never does. */
long delta_split_upto(const struct lora *c)
{
    if (!uses_delta(c) || c->delta_split < 2) {
        return 0;
    }
    long groups = device_wave_units(c->dev) / 2;
    long upto = c->delta_rows * groups / c->delta_split;
    upto = upto > c->delta_max ? c->delta_max : upto;
    return upto > decode_upto(c) ? upto : 0;
}

/* lora_delta's local memory in bytes (the template's count): the partial
 * sums of T per work-item, their sums per lane (up to 32, a float of
 * padding each), and T. */
long delta_local(const struct lora *c)
{
    long t = c->delta_rows * c->R;
    long lanes = c->delta_threads % 32 == 0 ? 32 : c->delta_threads;
    return 4 * t * (c->delta_threads + lanes + 2);
}

/* lora_xa runs before lora_main or lora_expand. */
int uses_xa(const struct lora *c)
{
    return c->xa == XA_PREPASS;
}

/* Tensor cores: lora_xa_mma for T, then lora_mma (or without W
 * lora_expand). */
int uses_mma(const struct lora *c)
{
    return c->engine != ENGINE_SIMT;
}

/* X*A on tensor cores (lora_xa_mma), and lora_decode_mma: f16 and bf16.
 * Float32's engine: mma is the GEMM with W alone, on tf32 units; T comes
 * from lora_xa and few rows take the float kernels' paths. */
int xa_on_mma(const struct lora *c)
{
    return uses_mma(c) && c->half;
}

/* lora_mma, the GEMM over [X | T] on tensor cores, runs. (Without W,
 * lora_expand takes T*B: on tensor cores after lora_xa_mma it was
 * slower.) */
int uses_lora_mma(const struct lora *c)
{
    return uses_mma(c) && c->base;
}

/* On warpgroups (compute capability 9.0) lora_wgmma takes lora_mma's
 * place over all of K, and lora_wgmma_split takes the rows past the split
 * path's up to wg_split_max. */
int uses_wgmma(const struct lora *c)
{
    return c->engine == ENGINE_WGMMA && c->base;
}

/* Rows above decode_max up to decode_mma_max run lora_decode_mma, in one
 * launch (tensor cores, with W). */
int uses_decode_mma(const struct lora *c)
{
    return xa_on_mma(c) && c->base && c->decode_mma_max > decode_upto(c);
}

/* Rows above decode_max up to decode_split_max run lora_decode_split,
 * then lora_decode_sum (without tensor cores, with W). */
int uses_decode_split(const struct lora *c)
{
    return !xa_on_mma(c) && c->base && c->decode_split_max > decode_upto(c);
}

/* Work-groups per slice of K of lora_decode_mma or lora_decode_split:
 * one per strip of decode_cols columns of W; lora_decode_split one more
 * for A (lora_decode_mma streams A's slice beside each strip). */
long decode_strips(const struct lora *c)
{
    return ceil_div(c->N, c->decode_cols) + (uses_decode_mma(c) ? 0 : 1);
}

/* lora_decode_split's rows per work-group. */
long dsplit_rows(const struct lora *c)
{
    return c->decode_split_max;
}

/* lora_decode_split's local memory: its slice of K of its rows of X
 * (rounded up to 4), floats. */
long dsplit_local(const struct lora *c)
{
    return ceil_div(c->K, c->decode_slices) * ceil_div(dsplit_rows(c), 4) *
           4 * 4;
}

/* The most rows lora_decode, lora_decode_mma or lora_decode_split take;
 * 0 when none runs. */
long few_upto(const struct lora *c)
{
    return uses_decode_mma(c)     ? c->decode_mma_max
           : uses_decode_split(c) ? c->decode_split_max
                                  : decode_upto(c);
}

/* The knob whose rows few_upto gives. */
const char *few_knob(const struct lora *c)
{
    return uses_decode_mma(c)     ? "decode_mma_max"
           : uses_decode_split(c) ? "decode_split_max"
                                  : "decode_max";
}

/* lora_decode_mma's rows per work-group: one m16 tile up to 16 rows, two
 * above. */
long dmma_rows(const struct lora *c)
{
    return c->decode_mma_max <= 16 ? 16 : 32;
}

/* lora_decode_mma's bands of rows: decode_slices slices of K up to one
 * block of dmma_rows rows, half as many (at least one) each time the
 * blocks double, so that the work-groups stay about as many as the rows
 * grow; the last band takes the rows to decode_mma_max. Returns the
 * count, each band's most rows into UPTO and slices into SLICES. */
int dmma_bands(const struct lora *c, long slices[SPLIT_BANDS],
               long upto[SPLIT_BANDS])
{
    int n = 0;
    long lo = decode_upto(c), s = c->decode_slices;
    if (!uses_decode_mma(c)) {
        return 0;
    }
    for (long rows = dmma_rows(c); lo < c->decode_mma_max; rows *= 2) {
        int last = s == 1 || n + 1 == SPLIT_BANDS;
        long to = last || rows > c->decode_mma_max ? c->decode_mma_max : rows;
        if (to > lo) {
            slices[n] = s;
            upto[n] = to;
            n++;
            lo = to;
        }
        s = s / 2 < 1 ? 1 : s / 2;
    }
    return n;
}

/* The floats of scratch per row lora_decode_mma asks over SLICES slices
 * of K: their partial sums of X*W, and of X*A per strip. */
long dmma_scratch_per_row(const struct lora *c, long slices)
{
    return slices * (c->N + decode_strips(c) * c->R);
}

/* The most floats of scratch lora_decode_mma's bands ask, each at its
 * most rows. */
long dmma_scratch_most(const struct lora *c)
{
    long slices[SPLIT_BANDS], upto[SPLIT_BANDS], most = 0;
    int n = dmma_bands(c, slices, upto);
    for (int i = 0; i < n; i++) {
        long floats = upto[i] * dmma_scratch_per_row(c, slices[i]);
        most = floats > most ? floats : most;
    }
    return most;
}

/* lora_decode_mma's strip of A in columns: the rank rounded up to a power
 * of two of at least 16 (the swizzle of its 16-byte chunks needs one). */
long dmma_rank_cols(const struct lora *c)
{
    return pow2_ceil(c->R < 16 ? 16 : c->R);
}

/* lora_decode_mma's columns a step stages: W's strip, then A's. */
long dmma_width(const struct lora *c)
{
    return c->decode_cols + dmma_rank_cols(c);
}

/* lora_decode_mma's steps in flight per warp: as many as 32 KiB holds for
 * the work-group, 2 to 4; more local memory gave nothing more
 * (bench/RESULTS.md, "Few rows on tensor cores: lora_decode_mma"). */
long dmma_stages(const struct lora *c)
{
    long per_step = c->decode_warps * 16 * dmma_width(c) * 2;
    long stages = (32L << 10) / per_step;
    return stages < 2 ? 2 : stages > 4 ? 4 : stages;
}

/* lora_decode_mma's local memory: the warps' stages, reused for their
 * sums of one m16 tile (floats), then for the last group's T (floats). */
long dmma_local(const struct lora *c)
{
    long stages = c->decode_warps * dmma_stages(c) * 16 * dmma_width(c) * 2;
    long sums = 4 * c->decode_warps * (dmma_width(c) / 8) * 4 * 32;
    long t = 4 * dmma_rows(c) * c->R;
    long most = stages > sums ? stages : sums;
    return most > t ? most : t;
}

/* lora_main runs (with X*W, or X*A inline), else lora_expand. */
int uses_main(const struct lora *c)
{
    return !uses_mma(c) && (c->base || c->xa == XA_INLINE);
}

/* base: false after lora_xa or lora_xa_mma: lora_expand, not lora_main. */
int uses_expand(const struct lora *c)
{
    return !c->base && uses_xa(c);
}

/* The split path runs: lora_xa, lora_main (on tensor cores lora_mma) over
 * split_k slices of K, then lora_combine, for rows above decode_max up to
 * split_max. */
int uses_split(const struct lora *c)
{
    return (uses_main(c) || uses_lora_mma(c)) && uses_xa(c) &&
           c->split_k > 1 && c->split_max > few_upto(c);
}

/* The split path's bands of rows: slices[i] slices of K up to upto[i]
 * rows, i < the count returned (0: no split path): split_k slices at
 * the fewest rows, halved each time the tiles of a band's rows times its
 * slices would pass a wave (split_wave work-groups; on tensor cores
 * mma_wave), the last band (2 slices, or the SPLIT_BANDS-th) up to
 * split_max: each slice count falls behind once its work-groups pass a
 * wave (bench/RESULTS.md, "The split path's slices halved as the rows
 * grow"). */
int split_bands(const struct lora *c, long slices[SPLIT_BANDS],
                long upto[SPLIT_BANDS])
{
    int n = 0;
    long lo = few_upto(c);
    long wave = uses_lora_mma(c) ? mma_wave(c) : split_wave(c);
    if (!uses_split(c)) {
        return 0;
    }
    for (long s = c->split_k; s >= 2 && lo < c->split_max; s /= 2) {
        long rows = c->split_max;
        int last = s / 2 < 2 || n + 1 == SPLIT_BANDS;
        if (!last) {
            long fit = wave / (s * ceil_div(c->N, c->n)) * c->m;
            rows = fit < rows ? fit : rows;
        }
        if (rows > lo) {
            slices[n] = s;
            upto[n] = rows;
            n++;
            lo = rows;
        }
        if (last) {
            break;
        }
    }
    return n;
}

/* lora_wgmma_split's slices at ROW_TILES rows of tiles: as many as bring
 * them to wg_wave work-groups, each slice at least SPLIT_MMA_MIN_STEPS
 * steps of K, at least 2. */
static long wg_split_slices(const struct lora *c, long row_tiles)
{
    long groups = row_tiles * ceil_div(c->N, c->wg_n);
    long s = pow2_floor(wg_wave(c) / groups < 2 ? 2 : wg_wave(c) / groups);
    long most = ceil_div(c->K, c->k) / SPLIT_MMA_MIN_STEPS;
    s = most < s ? pow2_floor(most < 2 ? 2 : most) : s;
    return s < 2 ? 2 : s;
}

/* The rows the split path (or the few-row paths before it) takes. */
long split_upto(const struct lora *c)
{
    return uses_split(c) ? c->split_max : few_upto(c);
}

/* lora_wgmma_split's bands of rows, as split_bands: from the split path's
 * rows up to wg_split_max, each row of lora_wgmma's tiles at
 * wg_split_slices, bands of equal slices merged (the last takes the rest
 * past SPLIT_BANDS). Returns their count, 0 where it does not run. */
int wg_split_bands(const struct lora *c, long slices[SPLIT_BANDS],
                   long upto[SPLIT_BANDS])
{
    int n = 0;
    long lo = split_upto(c);
    if (!uses_wgmma(c) || !uses_xa(c) || c->wg_split_max <= lo) {
        return 0;
    }
    for (long t = lo / c->wg_m + 1; (t - 1) * c->wg_m < c->wg_split_max;
         t++) {
        long s = wg_split_slices(c, t);
        long rows = t * c->wg_m < c->wg_split_max ? t * c->wg_m
                                                   : c->wg_split_max;
        if (n > 0 && (slices[n - 1] == s || n == SPLIT_BANDS)) {
            upto[n - 1] = rows;
        } else {
            slices[n] = s;
            upto[n] = rows;
            n++;
        }
        if (wg_wave(c) / (t * ceil_div(c->N, c->wg_n)) < 2) {
            upto[n - 1] = c->wg_split_max; /* the rows after: the same */
            break;
        }
    }
    return n;
}

/* lora_wgmma_split runs. */
int uses_wg_split(const struct lora *c)
{
    long s[SPLIT_BANDS], upto[SPLIT_BANDS];
    return wg_split_bands(c, s, upto) > 0;
}

/* The most slices of the split path and lora_wgmma_split (1: neither). */
long split_slices_most(const struct lora *c)
{
    long s[SPLIT_BANDS], upto[SPLIT_BANDS];
    long most = uses_split(c) ? c->split_k : 1;
    for (int i = 0, n = wg_split_bands(c, s, upto); i < n; i++) {
        most = s[i] > most ? s[i] : most;
    }
    return most;
}

/* The band whose partial sums take the most scratch: its slices x rows
 * (0 without a split path), its slices and rows in *SLICES and *ROWS. */
long split_widest(const struct lora *c, long *slices, long *rows)
{
    long s[SPLIT_BANDS], upto[SPLIT_BANDS], most = 0;
    for (int i = 0, n = split_bands(c, s, upto); i < n; i++) {
        if (s[i] * upto[i] > most) {
            most = s[i] * upto[i];
            *slices = s[i];
            *rows = upto[i];
        }
    }
    return most;
}

/* From pad_rows rows: lora_pad_x (K no multiple of 4) and lora_pad_w (N
 * no multiple of 4), then lora_main_padded reads their copies 4 wide. */
int uses_padded(const struct lora *c)
{
    return uses_main(c) && c->pad_rows > 0;
}

int pads_x(const struct lora *c)
{
    return uses_padded(c) && c->K % 4 != 0;
}

/* W's rows are N long (in_out) or K long (out_in): a copy where they are
 * no multiple of 4 (padded.cl). */
int pads_w(const struct lora *c)
{
    long row = c->layout == LAYOUT_OUT_IN ? c->K : c->N;
    return uses_padded(c) && row % 4 != 0;
}

/* Both copies: X's rows and W's columns run on to a whole K step
 * (padded.cl, PADS_K). */
static int pads_k(const struct lora *c)
{
    return pads_x(c) && pads_w(c) && c->K % c->k != 0;
}

/* The length of the rows of X's copy, and the rows of W's. */
long x_padded(const struct lora *c)
{
    return pads_k(c) ? ceil_div(c->K, c->k) * c->k : ceil_div(c->K, 4) * 4;
}

long w_rows_padded(const struct lora *c)
{
    return pads_k(c) ? x_padded(c) : c->K;
}

/* lora_mma's work-items (a warp per wm x wn) and local memory in bytes. */
void lora_gemm_mma(const struct lora *c, struct gemm_mma *g)
{
    *g = (struct gemm_mma){
        .kernel = "lora_mma", .wg_kernel = "lora_wgmma", .out = "Y",
        .mma = uses_lora_mma(c), .wgmma = uses_wgmma(c), .m = c->m,
        .n = c->n, .k = c->k, .wm = c->wm, .wn = c->wn,
        .stages = c->stages, .wg_m = c->wg_m, .wg_n = c->wg_n,
        .wg_stages = c->wg_stages,
        .reduce = c->K, .cols = c->N, .rank = c->R,
        .rank_parts = xa_split(c), .w_nk = c->layout == LAYOUT_OUT_IN,
        .out_add = c->accumulate,
        .elem_bytes = c->half ? 2 : 4,
        /* the accelerator's boxes: rows of one 128-byte swizzle line */
        .tma = uses_wgmma(c) && c->k == 64};
}

long mma_threads(const struct lora *c)
{
    struct gemm_mma g;
    lora_gemm_mma(c, &g);
    return gemm_mma_threads(&g);
}

long mma_local(const struct lora *c)
{
    struct gemm_mma g;
    lora_gemm_mma(c, &g);
    return gemm_mma_local(&g);
}

long wgmma_threads(const struct lora *c)
{
    struct gemm_mma g;
    lora_gemm_mma(c, &g);
    return gemm_wgmma_threads(&g);
}

long wgmma_local(const struct lora *c)
{
    struct gemm_mma g;
    lora_gemm_mma(c, &g);
    return gemm_wgmma_local(&g);
}

/* ---- waves: the work-groups a device of the target runs at once ------ */

/* lora_main's default large tiles (64 x 128, 8 x 8 per work-item): 128
 * work-items at 167 registers each (ptxas), which set how many of its
 * work-groups share a compute unit. */
#define MAIN_ITEMS 128
#define MAIN_REGS 167
/* lora_mma's 4 warps, at most the 255 registers PTX grants a work-item. */
#define MMA_ITEMS 128
#define MMA_REGS 255
/* lora_wgmma's local memory at its default tiles (256 x 128, 4 stages). */
#define WGMMA_DEFAULT_LOCAL (193L << 10)

/* lora_main's work-groups in one wave at its large tiles. */
long split_wave(const struct lora *c)
{
    return device_wave_units(c->dev) *
           device_groups_by_registers(c->dev, MAIN_ITEMS, MAIN_REGS);
}

/* lora_mma's work-groups in one wave: as many a unit as its registers
 * and its local memory hold at the spec's tiles. */
long mma_wave(const struct lora *c)
{
    long groups = device_groups_by_registers(c->dev, MMA_ITEMS, MMA_REGS);
    long local = mma_local(c);
    long by_local = local > 0 ? c->dev->local_per_unit / local : groups;
    groups = by_local < groups ? by_local : groups;
    return device_wave_units(c->dev) * (groups < 1 ? 1 : groups);
}

/* lora_wgmma's work-groups in one wave: as many a unit as its local
 * memory holds at the default tiles. */
long wg_wave(const struct lora *c)
{
    long groups = c->dev->local_per_unit / WGMMA_DEFAULT_LOCAL;
    return device_wave_units(c->dev) * (groups < 1 ? 1 : groups);
}
