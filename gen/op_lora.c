/* op_lora.c - lora_forward: Y (+)= X*W + scale*(X*A)*B, tiled for any M. */
#include "lora_knobs.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_MAX (long)INT_MAX /* what the kernels' int offsets reach */

/* Local memory a tensor-core work-group may ask for: the most one
 * work-group of compute capability 9.0 gets (227 KiB); a device with less
 * fails to build the variant, and the stub passes over it. */
#define MMA_LOCAL_MAX 232448L

/* The names of the choices of the knobs xa and engine (lora_knobs.h). */
static const char *const xa_choices[] = {"prepass", "inline", NULL};
static const char *const engine_choices[] = {"simt", "mma", "wgmma", NULL};

#define FIELD_DEF(member, type, def) def,
static const struct param_def lora_fields[] = {LORA_FIELDS(FIELD_DEF)};
#undef FIELD_DEF

#define KNOB_DEF(name, type, kind, def, min, max, choices, help)             \
    {#name, kind, 0, def, min, max, choices, help},
static const struct param_def lora_knobs[] = {LORA_KNOBS(KNOB_DEF)};
#undef KNOB_DEF

/* The index of each field and knob in its table. */
#define FIELD_INDEX(member, ...) LORA_FIELD_##member,
#define KNOB_INDEX(name, ...) LORA_KNOB_##name,
enum { LORA_FIELDS(FIELD_INDEX) LORA_N_FIELDS };
enum { LORA_KNOBS(KNOB_INDEX) LORA_N_KNOBS };
#undef FIELD_INDEX
#undef KNOB_INDEX

_Static_assert(LORA_N_KNOBS <= SPECL_MAX_PARAMS &&
                   LORA_N_FIELDS <= SPECL_MAX_PARAMS,
               "lora_forward has more keys than a kernel_spec holds");

/* Every value of a lora_forward spec, as numbers. */
#define PARAM_MEMBER(member, type, ...) type member;
struct lora {
    LORA_FIELDS(PARAM_MEMBER)
    LORA_KNOBS(PARAM_MEMBER)
    int cpu;  /* the variant is for CPUs */
    int half; /* f16 or bf16 storage */
};
#undef PARAM_MEMBER

/* Field I of KS, a bool as 0 or 1. */
static double field_value(const struct kernel_spec *ks, int i)
{
    double v = ks->field[i].num;
    return lora_fields[i].kind == VALUE_BOOL ? v != 0 : v;
}

static void lora_read(const struct kernel_spec *ks, struct lora *c)
{
#define READ_FIELD(member, type, ...)                                        \
    c->member = (type)field_value(ks, LORA_FIELD_##member);
#define READ_KNOB(name, type, ...)                                           \
    c->name = (type)ks->knob[LORA_KNOB_##name].num;
    LORA_FIELDS(READ_FIELD)
    LORA_KNOBS(READ_KNOB)
#undef READ_FIELD
#undef READ_KNOB
    c->cpu = ks->target == TARGET_CPU;
    c->half = ks->dtype != DTYPE_F32;
}

static long gcd(long a, long b)
{
    while (b != 0) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The multiple of STEP nearest below TARGET, but at least STEP. */
static long round_to(long target, long step)
{
    long r = target / step * step;
    return r < step ? step : r;
}

/* The largest of 8, 4, 2, 1 that is <= TARGET and divides TILE. */
static long pick_work(long tile, long target)
{
    long w = 8;
    while (w > 1 && (w > target || tile % w != 0)) {
        w /= 2;
    }
    return w;
}

/* The template's derived sizes (main_tiles.cl, "Derived sizes"). */
static long rank_step(const struct lora *c)
{
    return min_l(c->R, c->k);
}

static long main_threads(const struct lora *c)
{
    return (c->m / c->wm) * (c->n / c->wn);
}

/* Local memory of lora_main without and with inline X*A, in bytes. */
static long main_local(const struct lora *c, int xa)
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
static long xa_rows_per_item(const struct lora *c)
{
    long w = 8;
    while (w > 1 && (c->xa_m % w != 0 || w * c->R > 64)) {
        w /= 2;
    }
    return w;
}

static long xa_threads(const struct lora *c)
{
    return c->xa_k * (c->xa_m / xa_rows_per_item(c));
}

/* The reduction of lora_xa, in floats. */
static long xa_reduction(const struct lora *c)
{
    return (c->xa_m / xa_rows_per_item(c)) * c->R * (c->xa_k + 1);
}

/* Local memory of lora_xa in bytes (the template's XA_LOCAL): xa_chunk
 * rows of A, VEC rows then XA_APAD floats of padding, sharing memory with
 * the reduction. */
static long xa_staged_a(const struct lora *c)
{
    long apad = c->R % 4 == 0 ? 4 : 1;
    return ceil_div(c->xa_chunk, c->vec) * (c->vec * c->R + apad);
}

static long xa_local(const struct lora *c)
{
    long a = xa_staged_a(c), red = xa_reduction(c);
    return 4 * (a > red ? a : red);
}

/* Partial sums of T that lora_xa writes per row before lora_main and
 * lora_expand (the template's XA_SPLIT). */
static long xa_split(const struct lora *c)
{
    return ceil_div(c->K, c->xa_chunk);
}

/* Local memory of lora_xa_mma in bytes (the template's XM_LOCAL): its
 * stretch of K in whole 16-byte chunks, rounded up to steps of 32, for
 * each of the rank's columns rounded up to 8, plus 32 halves per column
 * when that puts the columns 64 bytes apart modulo 128. */
static long xa_mma_local(const struct lora *c)
{
    long per = ceil_div(c->K / 8, xa_split(c)) * 8;
    long steps = ceil_div(per, 32);
    long lda = steps * 32 + (steps % 2 == 0 ? 32 : 0);
    return 2 * ceil_div(c->R, 8) * 8 * lda;
}

/* lora_expand: rows of Y per work-group, as many as local memory holds
 * T for, at most 64 (EXPAND_ROWS). */
static long expand_rows(const struct lora *c)
{
    long fit = LOCAL_MAX / (4 * c->R);
    return fit > 64 ? 64 : fit;
}

/* lora_expand's columns per work-item (EXPAND_VEC). GPUs: vec, or 8
 * halves (16-byte stores) while B's 8-wide rows fit in registers (rank 16
 * and below, 155 registers; H100, bf16 llama-q delta about 3 us faster
 * at 4096 rows, 4-8 at 17 and 100). CPUs:
 * 16 or 8 where they divide N. PoCL runs a work-item's loop over the rows
 * as it is, so only the item's own vectors become SIMD: 4 wide left
 * AVX-512 mostly idle (M=128 K=N=2048 rank 8: 80 us against 520 at 4). */
static long expand_vec(const struct lora *c)
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
static long row_threads(const struct lora *c, long width)
{
    return min_l(256, pow2_ceil(ceil_div(c->N, width)));
}

/* lora_expand's work-items (EXPAND_N). On GPUs as many columns per
 * work-group as at vec, in fewer, wider items: as many work-groups at few
 * rows (at 17 and 100 rows, half the groups made the bf16 llama-q delta
 * 8-11% slower). */
static long expand_threads(const struct lora *c)
{
    if (c->cpu) {
        return row_threads(c, expand_vec(c));
    }
    long t = row_threads(c, c->vec) * c->vec / expand_vec(c);
    return t < 1 ? 1 : t;
}

/* lora_decode's columns per work-item: 4 wherever N allows, gathered in
 * vec-wide pieces at vec 1 or 2 (see lora_decode.cl). */
static long decode_vec(const struct lora *c)
{
    return c->N >= 4 ? 4 : c->vec;
}

/* The most rows lora_decode takes; 0 when it never runs. */
static long decode_upto(const struct lora *c)
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

static long decode_local(const struct lora *c)
{
    return 4 * (decode_red(c) + c->decode_rows * c->R);
}

/* lora_delta's path exists (base: false): rows above decode_max up to
 * delta_max, in one launch. */
static int uses_delta(const struct lora *c)
{
    return !c->base && c->delta_rows > 0 && c->delta_max > decode_upto(c);
}

/* Rows up to which lora_delta cuts N into delta_split slices: while the
 * rows alone make at most 64 work-groups; 0 where it never does. */
#define DELTA_SPLIT_GROUPS 64
static long delta_split_upto(const struct lora *c)
{
    if (!uses_delta(c) || c->delta_split < 2) {
        return 0;
    }
    long upto = c->delta_rows * DELTA_SPLIT_GROUPS / c->delta_split;
    upto = upto > c->delta_max ? c->delta_max : upto;
    return upto > decode_upto(c) ? upto : 0;
}

/* lora_delta's local memory in bytes (the template's count): the partial
 * sums of T per work-item, their sums per lane (up to 32, a float of
 * padding each), and T. */
static long delta_local(const struct lora *c)
{
    long t = c->delta_rows * c->R;
    long lanes = c->delta_threads % 32 == 0 ? 32 : c->delta_threads;
    return 4 * t * (c->delta_threads + lanes + 2);
}

/* lora_xa runs before lora_main or lora_expand. */
static int uses_xa(const struct lora *c)
{
    return c->xa == XA_PREPASS;
}

/* Tensor cores: lora_xa_mma for T, then lora_mma (or without W
 * lora_expand). */
static int uses_mma(const struct lora *c)
{
    return c->engine != ENGINE_SIMT;
}

/* lora_mma, the GEMM over [X | T] on tensor cores, runs. (Without W, T*B
 * on tensor cores after lora_xa_mma took 116 us at llama-q in bf16 on the
 * H100, lora_expand 29.) */
static int uses_lora_mma(const struct lora *c)
{
    return uses_mma(c) && c->base;
}

/* On warpgroups (compute capability 9.0) lora_wgmma takes lora_mma's
 * place over all of K, and lora_wgmma_split takes the rows past the split
 * path's up to wg_split_max. */
static int uses_wgmma(const struct lora *c)
{
    return c->engine == ENGINE_WGMMA && c->base;
}

/* Rows above decode_max up to decode_mma_max run lora_decode_mma, then
 * lora_decode_sum (tensor cores, with W). */
static int uses_decode_mma(const struct lora *c)
{
    return uses_lora_mma(c) && c->decode_mma_max > decode_upto(c);
}

/* Rows above decode_max up to decode_split_max run lora_decode_split,
 * then lora_decode_sum (without tensor cores, with W). */
static int uses_decode_split(const struct lora *c)
{
    return !uses_mma(c) && c->base && c->decode_split_max > decode_upto(c);
}

/* Work-groups per slice of K of lora_decode_mma or lora_decode_split:
 * one per strip of decode_cols columns of W, one more for A. */
static long decode_strips(const struct lora *c)
{
    return ceil_div(c->N, c->decode_cols) + 1;
}

/* lora_decode_split's rows per work-group. */
static long dsplit_rows(const struct lora *c)
{
    return c->decode_split_max;
}

/* lora_decode_split's local memory: its slice of K of its rows of X
 * (rounded up to 4), floats. */
static long dsplit_local(const struct lora *c)
{
    return ceil_div(c->K, c->decode_slices) * ceil_div(dsplit_rows(c), 4) *
           4 * 4;
}

/* The most rows lora_decode, lora_decode_mma or lora_decode_split take;
 * 0 when none runs. */
static long few_upto(const struct lora *c)
{
    return uses_decode_mma(c)     ? c->decode_mma_max
           : uses_decode_split(c) ? c->decode_split_max
                                  : decode_upto(c);
}

/* The knob whose rows few_upto gives. */
static const char *few_knob(const struct lora *c)
{
    return uses_decode_mma(c)     ? "decode_mma_max"
           : uses_decode_split(c) ? "decode_split_max"
                                  : "decode_max";
}

/* lora_decode_mma's rows per work-group: one m16 tile up to 16 rows, two
 * above. */
static long dmma_rows(const struct lora *c)
{
    return c->decode_mma_max <= 16 ? 16 : 32;
}

/* lora_decode_mma's strip of A in columns: the rank rounded up to a power
 * of two of at least 16 (the swizzle of its 16-byte chunks needs one). */
static long dmma_rank_cols(const struct lora *c)
{
    return pow2_ceil(c->R < 16 ? 16 : c->R);
}

/* lora_decode_mma's widest strip in columns: W's or A's. */
static long dmma_width(const struct lora *c)
{
    long rank_cols = dmma_rank_cols(c);
    return c->decode_cols > rank_cols ? c->decode_cols : rank_cols;
}

/* lora_decode_mma's steps in flight per warp: as many as 32 KiB holds for
 * the work-group, 2 to 4 (bf16 on the H100, K = N = 4096 at 8 rows: 64
 * columns by 8 warps by 2 steps and 64 by 4 by 4, both 32 KiB, were the
 * fastest of 2 to 4 steps; 48 KiB gave nothing more). */
static long dmma_stages(const struct lora *c)
{
    long per_step = c->decode_warps * 16 * dmma_width(c) * 2;
    long stages = (32L << 10) / per_step;
    return stages < 2 ? 2 : stages > 4 ? 4 : stages;
}

/* lora_decode_mma's local memory: the warps' stages, reused for their
 * sums of one m16 tile (floats). */
static long dmma_local(const struct lora *c)
{
    long stages = c->decode_warps * dmma_stages(c) * 16 * dmma_width(c) * 2;
    long sums = 4 * c->decode_warps * (dmma_width(c) / 8) * 4 * 32;
    return stages > sums ? stages : sums;
}

/* lora_main runs (with X*W, or X*A inline), else lora_expand. */
static int uses_main(const struct lora *c)
{
    return !uses_mma(c) && (c->base || c->xa == XA_INLINE);
}

/* base: false after lora_xa or lora_xa_mma: lora_expand, not lora_main. */
static int uses_expand(const struct lora *c)
{
    return !c->base && uses_xa(c);
}

/* The split path runs: lora_xa, lora_main (on tensor cores lora_mma) over
 * split_k slices of K, then lora_combine, for rows above decode_max up to
 * split_max. */
static int uses_split(const struct lora *c)
{
    return (uses_main(c) || uses_lora_mma(c)) && uses_xa(c) &&
           c->split_k > 1 && c->split_max > few_upto(c);
}

static long mma_wave(const struct lora *c);

/* Work-groups in one wave of a large GPU for lora_main's 64 x 128 tiles:
 * 128 compute units at 3 work-groups each (the H100 has 132; 167
 * registers a work-item allow 3 groups of 128). */
#define SPLIT_WAVE 384
#define SPLIT_BANDS 4

/* The split path's bands of rows: slices[i] slices of K up to upto[i]
 * rows, i < the count returned (0: no split path): split_k slices at
 * the fewest rows, halved each time the tiles of a band's rows times its
 * slices would pass a wave (SPLIT_WAVE work-groups; on tensor cores
 * mma_wave), the last band (2 slices, or the SPLIT_BANDS-th) up to
 * split_max. On the H100, f32, K = N = 4096, 4 slices
 * took 129 and 180 us at 128 and 192 rows (2 slices: 137, 231), 2 slices
 * 232 and 328 at 256 and 384 (4 slices: 281, 334), the tiles unsplit 311
 * to 403; bf16 on tensor cores, 8 slices 46-58 us at 64-128 rows, 4
 * slices 67 and 76 at 192 and 256 (8: 72, 81) (bench/RESULTS.md). */
static int split_bands(const struct lora *c, long slices[SPLIT_BANDS],
                       long upto[SPLIT_BANDS])
{
    int n = 0;
    long lo = few_upto(c);
    long wave = uses_lora_mma(c) ? mma_wave(c) : SPLIT_WAVE;
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

/* lora_wgmma's work-groups in one wave: one per compute unit (193 KiB of
 * local memory at the default tiles; the H100 has 132 units). */
#define WG_WAVE 128
#define SPLIT_MMA_MIN_STEPS 8

/* lora_wgmma_split's slices at ROW_TILES rows of tiles: as many as bring
 * them to WG_WAVE work-groups, each slice at least SPLIT_MMA_MIN_STEPS
 * steps of K, at least 2. */
static long wg_split_slices(const struct lora *c, long row_tiles)
{
    long groups = row_tiles * ceil_div(c->N, c->n);
    long s = pow2_floor(WG_WAVE / groups < 2 ? 2 : WG_WAVE / groups);
    long most = ceil_div(c->K, c->k) / SPLIT_MMA_MIN_STEPS;
    s = most < s ? pow2_floor(most < 2 ? 2 : most) : s;
    return s < 2 ? 2 : s;
}

/* The rows the split path (or the few-row paths before it) takes. */
static long split_upto(const struct lora *c)
{
    return uses_split(c) ? c->split_max : few_upto(c);
}

/* lora_wgmma_split's bands of rows, as split_bands: from the split path's
 * rows up to wg_split_max, each row of lora_wgmma's tiles at
 * wg_split_slices, bands of equal slices merged (the last takes the rest
 * past SPLIT_BANDS). Returns their count, 0 where it does not run. */
static int wg_split_bands(const struct lora *c, long slices[SPLIT_BANDS],
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
        if (WG_WAVE / (t * ceil_div(c->N, c->n)) < 2) {
            upto[n - 1] = c->wg_split_max; /* the rows after: the same */
            break;
        }
    }
    return n;
}

/* lora_wgmma_split runs. */
static int uses_wg_split(const struct lora *c)
{
    long s[SPLIT_BANDS], upto[SPLIT_BANDS];
    return wg_split_bands(c, s, upto) > 0;
}

/* The most slices of the split path and lora_wgmma_split (1: neither). */
static long split_slices_most(const struct lora *c)
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
static long split_widest(const struct lora *c, long *slices, long *rows)
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
static int uses_padded(const struct lora *c)
{
    return uses_main(c) && c->pad_rows > 0;
}

static int pads_x(const struct lora *c)
{
    return uses_padded(c) && c->K % 4 != 0;
}

static int pads_w(const struct lora *c)
{
    return uses_padded(c) && c->N % 4 != 0;
}

/* Both copies: X's rows and W's columns run on to a whole K step
 * (padded.cl, PADS_K). */
static int pads_k(const struct lora *c)
{
    return pads_x(c) && pads_w(c) && c->K % c->k != 0;
}

/* The length of the rows of X's copy, and the rows of W's. */
static long x_padded(const struct lora *c)
{
    return pads_k(c) ? ceil_div(c->K, c->k) * c->k : ceil_div(c->K, 4) * 4;
}

static long w_rows_padded(const struct lora *c)
{
    return pads_k(c) ? x_padded(c) : c->K;
}

/* lora_mma's work-items (a warp per wm x wn) and local memory in bytes. */
static long mma_threads(const struct lora *c)
{
    return 32 * (c->m / c->wm) * (c->n / c->wn);
}

static long mma_local(const struct lora *c)
{
    return 2 * c->stages * (c->m * c->k + c->k * c->n);
}

/* lora_wgmma's work-items (a warpgroup per 64 rows) and local memory. */
static long wgmma_threads(const struct lora *c)
{
    return 2 * c->wg_m;
}

static long wgmma_local(const struct lora *c)
{
    return 2 * c->wg_stages * (c->wg_m * c->k + c->k * c->n);
}

/* The scratch PA's launches share, in floats (rows * per_row + fixed):
 * T's partial sums from lora_xa (rows x xa_split * r), rounded up to 4
 * where more follows; then the split path's partial sums of Y (slices x
 * rows x N, split_k.cl), or W's and B's padded copies and X's
 * (padded.cl); or lora_decode_mma's or lora_decode_split's partial sums
 * of X*W and X*A (decode_slices x rows x (N + r),
 * lora_decode_part.cl). */
static void path_scratch(const struct lora *c, struct path *pa)
{
    long per_row = 0, fixed = 0, t_per_row = 0;
    for (int i = 0; i < pa->n_launch; i++) {
        const struct launch *l = &pa->launch[i];
        if (strcmp(l->kernel, "lora_xa") == 0 ||
            strcmp(l->kernel, "lora_xa_mma") == 0) {
            t_per_row = c->R * xa_split(c);
        } else if (strcmp(l->kernel, "lora_combine") == 0) {
            per_row += l->slices * c->N;
        } else if (strcmp(l->kernel, "lora_pad_w") == 0) {
            fixed += (w_rows_padded(c) + c->R) * (ceil_div(c->N, 4) * 4);
        } else if (strcmp(l->kernel, "lora_pad_x") == 0) {
            per_row += x_padded(c);
        } else if (strcmp(l->kernel, "lora_decode_sum") == 0) {
            per_row += c->decode_slices * (c->N + c->R);
        }
    }
    if (t_per_row != 0 && (per_row != 0 || fixed != 0)) {
        fixed += 3;
    }
    pa->scratch_per_row = t_per_row + per_row;
    pa->scratch_fixed = fixed;
}

/* The SIMT engine's small tiles (32 x 32) on GPUs, and the small layers
 * that keep X*A inline on CPUs (simt_tile_defaults). */
static int simt_small_tiles(const struct lora *c)
{
    return !c->cpu && c->N <= 2048 && c->K * c->N < (1L << 20);
}

static int simt_cpu_small(const struct lora *c)
{
    return c->cpu && c->base && c->K * c->N < (1L << 20);
}

/* lora_main's tiles (the SIMT engine): n, m, wn, wm, k. */
static void simt_tile_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    /* 64 x 128 x 16 with 8 x 8 per work-item for large layers: the best
     * tuned H100 configuration of every llama2-7b projection (1-2% ahead
     * of 128 x 64; 128 work-items, one barrier per 16 K). A spec that
     * sets n = 64 gets 128 x 64. Work-items keep 8 x 8 where the tile
     * allows: fewer, fuller work-items also suit CPUs. Small layers
     * (K*N under 2^20, N <= 2048) get 32 x 32 tiles of 4 x 4 per
     * work-item: at a few hundred rows large tiles leave most compute
     * units idle, and K is too short to split (H100, K = N = 512: 23.9 /
     * 33.0 us at 256 / 1024 rows against 34.5 / 39.7 for 64 x 128, though
     * 100.7 against 74.5 at 4096). Larger layers take the large tiles at
     * any N, and their few rows the split path (split_defaults): on the
     * H100, K = N = 2048 at 256 / 1024 / 4096 rows 79.4 / 212.0 / 760.6
     * us against 111.8 / 375.5 / 1433.1 for 32 x 32, K = 4096 N = 1024
     * 83.0 / 283.1 / 873.5 against 235.4 / 452.8 / 1691.5. */
    /* CPUs (PoCL): a CPU wants few, large work-groups whatever the
     * shape: 128 x 128 x 16 with 8 x 4 per work-item (its local memory
     * leaves no padding) and X*A as a pre-pass; layers under 2^20 weights
     * (cpu_small) and the delta without W keep 128 x 64 with X*A inline
     * (the delta as measured before). On 2 cores, through the stubs at
     * 128 rows (bench/RESULTS.md, "CPU tiles"): K = N = 1024 2.6-4.3 ms
     * and 2048 9.4-13.8 against 4.0-5.8 and 15.8-20.6 for 128 x 64 with
     * X*A inline; llama-q at 512 rows 159-206 ms against 191-218. At K =
     * N = 512 inline stays ahead (1.05-1.11 ms; the pre-pass 0.68-1.26,
     * bimodal, 128 x 128 inline 1.08-1.24). */
    int cpu = c.cpu, small_tiles = simt_small_tiles(&c);
    long cpu_n = simt_cpu_small(&c) || !c.base ? 64 : 128;
    long tn = min_l(small_tiles ? 32 : cpu ? cpu_n : 128, pow2_ceil(c.N));
    long step_n =
        spec_knob_set(ks, "wn") ? c.wn * c.vec / gcd(c.wn, c.vec) : c.vec;
    spec_knob_default(ks, "n", round_to(tn, step_n));
    lora_read(ks, &c);
    long tm = cpu           ? 128
              : small_tiles ? 32
              : c.n >= 128  ? 64
              : c.n >= 64   ? 128
                            : 64;
    spec_knob_default(ks, "m",
                      spec_knob_set(ks, "wm") ? round_to(tm, c.wm) : tm);
    lora_read(ks, &c);
    spec_knob_default(ks, "wn",
                 pick_work(c.n, cpu ? 4
                                    : c.n >= 64 ? 8
                                    : c.n >= 16 ? 4 : c.n / 4));
    spec_knob_default(ks, "wm", pick_work(c.m, small_tiles ? 4 : 8));
    lora_read(ks, &c);
    long tk = c.K < 16 ? pow2_ceil(c.K) : 16;
    spec_knob_default(ks, "k", tk < c.vec ? c.vec : round_to(tk, c.vec));
}

/* lora_main's padding, warp layout and X*A placement (the SIMT engine),
 * after its tiles. */
static void simt_defaults(struct kernel_spec *ks)
{
    struct lora c;
    simt_tile_defaults(ks);
    lora_read(ks, &c);

    /* Padding keeps float4 alignment; dropped if it alone overflows. */
    spec_knob_default(ks, "pad", 4);
    lora_read(ks, &c);
    if (main_local(&c, XA_PREPASS) > LOCAL_MAX) {
        spec_knob_default(ks, "pad", 0);
        lora_read(ks, &c);
    }
    /* A spec asking for inline X*A gets a K step that leaves it room. */
    while (spec_knob_set(ks, "xa") && c.xa == XA_INLINE &&
           !spec_knob_set(ks, "k") && main_local(&c, XA_INLINE) > LOCAL_MAX &&
           c.k / 2 >= c.vec && (c.k / 2) % c.vec == 0) {
        spec_knob_default(ks, "k", c.k / 2);
        lora_read(ks, &c);
    }
    /* Warps of 4 x 8 work-items: a warp's local reads then touch 64 bytes
     * of the X tile and 128 of the W tile per step (broadcast within). */
    lora_warp_n_default(ks, c.m, c.n, c.wm, c.wn);
    lora_read(ks, &c);

    /* Inline X*A recomputes T in every column block of Y (r / n more
     * work): free with one block, worth a launch and the scratch buffer
     * for small layers on their small tiles, whose few rows make the
     * launch gap and the prepass's own pass over X count. With the large
     * tiles the prepass wins (H100, K = N = 2048, 64 x 128: 771 against
     * 884 us at 4096 rows, 216 against 250 at 1024), on CPUs too but for
     * their smallest layers (above), and the split path needs it. */
    int one_block = ceil_div(c.N, c.n) == 1;
    int small = c.base && c.K * c.N <= (1L << 22);
    int fits = main_local(&c, XA_INLINE) <= LOCAL_MAX;
    int split = c.split_k > 1; /* its slices need all of T first */
    int inline_xa = one_block || (small && (simt_small_tiles(&c) ||
                                            simt_cpu_small(&c)));
    spec_knob_default(ks, "xa",
                      inline_xa && fits && !split ? XA_INLINE : XA_PREPASS);
}

/* lora_wgmma's tiles: 256 x 128 of Y per work-group (four warpgroups of
 * 64 x 128), K in steps of 64 in 4 stages (192 KiB of local memory): X*W
 * alone at 4096^3 in bf16 on the H100 (bench/lab/sm90a_gemm.c) 296.6 us,
 * against 301.4 for 128 x 256, 317.2 for 128 x 128 in 3 stages and
 * 328.5 for K steps of 32. lora_mma's tiles (mma_defaults) stay for the
 * split path. */
static void wgmma_defaults(struct kernel_spec *ks)
{
    spec_knob_default(ks, "wg_m", 256);
    spec_knob_default(ks, "wg_stages", 4);
}

/* lora_mma's tiles: 128 x 128 of Y per work-group in 4 warps of 64 x 64,
 * K in steps of 64, 2 stages: 64 KiB of local memory, which every device
 * of compute capability 8.0 and later grants (99 KiB or more). bf16
 * llama-q on the H100 through the stub: 454 us, against 513 for 128 x
 * 128 x 32 in 3 stages (48 KiB), 477 in 3 stages of 64, 497-500 for 128
 * x 256 x 64 (147-196 KiB) and 698 for the former 8 warps of 32 x 64
 * (130 registers: one work-group per compute unit). T comes from
 * lora_xa. */
static void mma_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    /* Narrow layers: the tile no wider than N, a warp's 16 at least. */
    spec_knob_default(ks, "m", 128);
    spec_knob_default(ks, "n", min_l(128, pow2_ceil(c.N < 16 ? 16 : c.N)));
    spec_knob_default(ks, "k", min_l(64, pow2_ceil(c.K < 16 ? 16 : c.K)));
    lora_read(ks, &c);
    spec_knob_default(ks, "wm", min_l(64, c.m));
    spec_knob_default(ks, "wn", min_l(64, c.n));
    spec_knob_default(ks, "stages", 2);
    spec_knob_default(ks, "xa", XA_PREPASS);
    if (c.engine == ENGINE_WGMMA) {
        wgmma_defaults(ks);
    }
}

/* The split path on GPUs. Few rows make few tiles, and a work-group alone
 * on its compute unit waits out each K step's loads: at 32 to 128 rows,
 * K = N = 4096, the tiled path took 322-328 us whatever the rows. Cut
 * into slices of K, the tiles' chains run side by side. The time follows
 * how much of K each compute unit runs: on the H100 (K = N = 4096; 32
 * tiles a row of tiles) 8 slices took 79 us at 64 rows, 4 slices 129 and
 * 180 at 128 and 192, 2 slices 232 and 328 at 256 and 384, the tiles
 * unsplit 311-408 at 128 to 448 rows, and each fell behind once its work-
 * groups passed one wave (4 slices at 256 rows: 281). So the SIMT split
 * path starts at as many slices as one row of tiles can take within
 * SPLIT_WAVE work-groups and halves them as the rows grow (split_bands),
 * up to the rows whose tiles fill a wave in 2 slices; each slice at least
 * SPLIT_MIN_STEPS steps of K. On 64 x 128 tiles short slices pay (H100,
 * K = N = 2048 at 128 rows: 8 slices of 16 steps 53.9 us, 4 slices 58.2,
 * lora_decode 74.3; K = N = 1024 at 256 rows, 4 slices: 37.7 against
 * 45.1 on 32 x 32 tiles unsplit). The tensor cores' split path starts
 * from mma_split_default's count and halves it the same way. */
#define SPLIT_GROUPS 256
#define SPLIT_MIN_STEPS 16

/* Few rows on tensor cores: lora_decode_mma in strips of 64 columns by 8
 * warps, with as many slices of K as bring the strips (and A's) to about
 * DMMA_GROUPS work-groups, each warp at least DMMA_MIN_STEPS steps of 16
 * values of K. bf16 on the H100, K = N = 4096 at 8 rows, without A's
 * strip: 32 columns over all of K 28.4 us; 64 or 128 columns by 4 to 8
 * slices 19.4-21 us, against a read of W's bytes alone at 17.7. One
 * block of up to 32 rows: the rows cost little, a second block W again.
 * lora_decode (one launch) keeps the rows where it was faster: 4 at N <=
 * 4096, 1 above (bf16 llama2-7b at 1-4 rows: q 21.6-24.2 us against
 * 22.0-24.5, down 42.8 against 43.5 at one row), and its block of 8 rows
 * where W is under DMMA_SMALL_W (K = N = 1024: 15.7 against 24.5 us at 8
 * rows; 4096 x 1024, 8 MiB: 27.7 against 26.2). */
#define DMMA_GROUPS 256
#define DMMA_MIN_STEPS 2
#define DMMA_SMALL_W (8L << 20)
static void decode_mma_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    int asked = spec_knob_set(ks, "decode_mma_max");
    if (!uses_lora_mma(&c) ||
        (!asked && (ks->target == TARGET_CPU || c.R % 8 != 0 || c.R > 64 ||
                    c.decode_rows == 0 || spec_knob_set(ks, "decode_max")))) {
        return;
    }
    long groups = decode_strips(&c);
    long steps = ceil_div(c.K, 16);
    long slices = pow2_ceil(DMMA_GROUPS / groups < 1 ? 1
                                                     : DMMA_GROUPS / groups);
    while (slices > 1 && steps / (slices * c.decode_warps) < DMMA_MIN_STEPS) {
        slices /= 2;
    }
    spec_knob_default(ks, "decode_slices", slices);
    long w_bytes = c.K * c.N * (long)dtype_size(ks->dtype);
    long keep = w_bytes < DMMA_SMALL_W ? c.decode_rows : c.N > 4096 ? 1 : 4;
    if (asked && keep >= c.decode_mma_max) {
        keep = c.decode_mma_max - 1;
    }
    spec_knob_default(ks, "decode_max", keep);
    spec_knob_default(ks, "decode_mma_max", 32);
}

/* Few rows of f32 layers past 16 MiB of W on GPUs (where lora_decode
 * would take 32 rows in two blocks of 16): lora_decode_split from 9 rows
 * (5 where N > 4096, 3 where N > 4096 is also odd) to 32, in slices of K
 * as short as the slice of X's 32 rows in 32 KiB of local memory allows
 * (256 values of K; below), strips of 128 columns (256 where N > 4096). f32
 * rank 16 on the H100, lora_decode -> lora_decode_split: K = N = 4096 at
 * 16 / 32 rows 60.0 -> 50.4 / 107.8 -> 76.7 us (8 rows: 38.7 against
 * 44.3); K = 4099, N = 11001 (181 MB of W) at 8 / 16 / 32 rows 117.4 ->
 * 94.5 / 169.3 -> 114.8 / 329.6 -> 183.8 (2 rows: 88.9 against 89.0);
 * K = 4096, N = 11008 at 16 rows 153.5 -> 114.1, at 8 93-95 either way.
 * At 4 rows lora_decode took 79.9 us at N = 11008 against 85.6 for the
 * split at 8, but 105.1 at N = 11001 (vec 1) against 94.6; at 2 rows
 * 88.9 against 89.0 there. Half storage on such GPUs keeps lora_decode
 * (not measured). */
static void decode_split_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    if (uses_mma(&c) || !c.base || spec_knob_set(ks, "decode_split_max") ||
        spec_knob_set(ks, "decode_max") || ks->target == TARGET_CPU ||
        ks->dtype != DTYPE_F32 || c.decode_rows == 0 || c.R > 1024 ||
        c.K * c.N * 4 <= (16L << 20)) {
        return;
    }
    long cols = c.N > 4096 ? 256 : 128;
    spec_knob_default(ks, "decode_cols", cols < c.R ? pow2_ceil(c.R) : cols);
    /* As many slices as K has 256 values where they and the strips make
     * 512 work-groups or more: fewer partial sums to write and add than
     * at the next power of two (f32 rank 16 on the H100, through the
     * stubs, against it: K = 4099, N = 11001 at 8 / 16 / 32 rows 93.9-97.2
     * -> 89.0-91.6, 112.9-119.7 -> 106.1-110.8, 186.5-189.1 -> 167.7-169.8
     * us; K = 11008, N = 4096 at 16 rows 132.5-135.2 -> 127.9-131.2; K =
     * 4097, N = 4095 at 16 rows 58.0-61.1 -> 55.2-57.9). Fewer
     * work-groups keep the power of two (not measured). */
    lora_read(ks, &c); /* decode_cols as chosen above */
    long slices = ceil_div(c.K, 256);
    spec_knob_default(ks, "decode_slices", slices * decode_strips(&c) >= 512
                                               ? slices
                                               : pow2_ceil(slices));
    spec_knob_default(ks, "decode_split_max", 32);
    spec_knob_default(ks, "decode_max", c.N <= 4096 ? 8 : c.vec == 4 ? 4 : 2);
    /* Where those 2 rows gather W in 4-byte loads (K or N odd), blocks of
     * 4 rows: the kernel's registers follow its largest block (254 at
     * 16 rows, one work-group per compute unit), not the rows it runs:
     * K = 4099, N = 11001, rank 16 / 5, 1 row 83.7-83.9 / 84.6-85.0 ->
     * 78.8-78.9 / 79.3-79.7 us, 2 rows 88.6-88.8 / 88.0-88.5 -> 83.1-84.2
     * / 80.8-81.1. At K = 4096, N = 11008 (16-byte loads) they were
     * slower: 73.0-73.5 -> 76.6-76.8 us at 1 row, 80.5-81.0 -> 111.2 at 4
     * (bench/RESULTS.md). */
    if (c.N > 4096 && c.vec != 4 && !spec_knob_set(ks, "decode_n") &&
        !spec_knob_set(ks, "decode_k")) {
        spec_knob_default(ks, "decode_rows", 4);
    }
}

/* The split path on tensor cores: lora_mma_split's slices bring the
 * tiles of one row of tiles to about a wave of work-groups, each slice
 * at least SPLIT_MMA_MIN_STEPS steps of K. bf16 on the H100, K = N =
 * 4096 (32 tiles along N), 16 / 32 / 64 / 128 / 256 rows: 8 slices 41.7
 * / 42.1 / 46.5 / 60.8 / 92.6 us against 52.6 / 94.4 / 103.0 / 120.1 /
 * 123.9 (lora_decode to 32 rows, then one wave of tiles); 4 slices 46 /
 * 47 / 51 / 63 / 78; at 512 rows lora_mma alone wins (126.8 against
 * 118.6-163.0 for 2-8 slices). So the path runs while its work-groups
 * stay within two waves (mma_wave). Returns the slices, or 0 where
 * the path does not run (the spec's split_k decides where given). */
/* Work-groups of lora_mma in one wave: SPLIT_GROUPS, half as many where
 * each takes more than half of a compute unit's MMA_CU_LOCAL (one per
 * unit: the tuned 128 x 256 x 64 tiles in 4 stages, 196 KiB). */
#define MMA_CU_LOCAL (228L << 10)
static long mma_wave(const struct lora *c)
{
    return mma_local(c) > MMA_CU_LOCAL / 2 ? SPLIT_GROUPS / 2 : SPLIT_GROUPS;
}

static long mma_split_default(const struct kernel_spec *ks,
                              const struct lora *c)
{
    if (!uses_lora_mma(c) || !uses_xa(c) || ks->target == TARGET_CPU) {
        return 0;
    }
    if (spec_knob_set(ks, "split_k")) {
        return c->split_k > 1 ? c->split_k : 0;
    }
    long split = pow2_floor(mma_wave(c) / ceil_div(c->N, c->n));
    long most = ceil_div(c->K, c->k) / SPLIT_MMA_MIN_STEPS;
    split = split < most ? split : pow2_floor(most < 1 ? 1 : most);
    return split > 1 ? split : 0;
}

/* lora_wgmma_split from the split path's rows while 2 slices of each row
 * of lora_wgmma's tiles fit in a wave (WG_WAVE), wg_split_slices each.
 * bf16 on the H100 through the stub, against lora_mma_split then lora_mma
 * (bench/RESULTS.md): llama-q at 256 / 320 / 384 / 512 rows 57.4 / 69.9
 * / 72.9 / 75.6 us against 64.8 / 85.0 / 85.0 / 84.1, llama-down 87.7 /
 * 128.9 / 131.1 / 134.5 against 99.9 / 187.2 / 182.0 / 183.6; at 768 rows
 * (3 rows of tiles: 192 work-groups in 2 slices) q 121.9 against 91.7;
 * llama-up (86 tiles a row) 1.05-1.45x slower at 256 to 1024 rows in 2
 * slices; at 64 rows, under half of one row of tiles, q 39.6 against
 * 37.4 and down 69.7 against 60.6 on lora_mma_split's 128-row tiles. */
static void wg_split_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    if (!uses_wgmma(&c) || !uses_xa(&c) ||
        ceil_div(c.K, c.k) / SPLIT_MMA_MIN_STEPS < 2) {
        return;
    }
    long t = WG_WAVE / (2 * ceil_div(c.N, c.n)); /* rows of tiles */
    long most = t * c.wg_m;
    spec_knob_default(ks, "wg_split_max", most > split_upto(&c) ? most : 0);
}

static void split_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    long decode = few_upto(&c);
    long col_tiles = ceil_div(c.N, c.n);
    long mma_split = mma_split_default(ks, &c);
    if (mma_split > 1) {
        spec_knob_default(ks, "split_k", mma_split);
        long row_tiles = 2 * mma_wave(&c) / (col_tiles * mma_split);
        /* ... and while lora_mma's tiles alone fill at most 2/5 of a
         * wave: the split won where they filled 0.25-0.34 of one (bf16 on
         * the H100, llama-q at 256 rows, -up at 128, -down at 256, on
         * either tile) and lost at 0.5-0.67 (llama-up at 256 rows: 174.0
         * against 167.8 us, 175-178 against 153.5 on the tuned tiles;
         * llama-q at 512 on those: 171.2 against 145.5). */
        long alone = 2 * mma_wave(&c) / (5 * col_tiles);
        row_tiles = row_tiles < alone ? row_tiles : alone;
        long most = (row_tiles < 1 ? 1 : row_tiles) * c.m;
        /* On warpgroups up to half of lora_wgmma's first row of tiles,
         * then lora_wgmma_split (wg_split_defaults). */
        most = uses_wgmma(&c) && most > c.wg_m / 2 ? c.wg_m / 2 : most;
        spec_knob_default(ks, "split_max", most > decode ? most : decode + c.m);
        return;
    }
    /* the rows whose tiles make at most one wave in 2 slices */
    long two = SPLIT_WAVE / (2 * col_tiles) * c.m;
    if (!spec_knob_set(ks, "split_k") && ks->target != TARGET_CPU &&
        uses_main(&c) && uses_xa(&c) && c.base && two > decode) {
        long most = ceil_div(c.K, c.k) / SPLIT_MIN_STEPS;
        long split = pow2_floor(SPLIT_WAVE / col_tiles);
        spec_knob_default(ks, "split_k",
                          most < 2 ? 1 : split < most ? split
                                                      : pow2_floor(most));
        lora_read(ks, &c);
    }
    /* A spec's split_k runs for at least one tile of rows past decode. */
    if (c.split_k > 1) {
        spec_knob_default(ks, "split_max", two > decode ? two : decode + c.m);
    }
}

/* lora_main on copies padded to multiples of 4 elements where K or N is
 * none (padded.cl), whose loads are then 4 wide, not 1 or 2; on GPUs from
 * the first rows lora_main takes. On the H100 at 4096 rows through
 * the stub: K = 4096, N = 4001 3084 us against 3810 unpadded (N = 4096:
 * 3001), K = 4001, N = 4096 3071 against 3772, K = N = 4001 3061 against
 * 3786, K = N = 4002 3054 against 3450; K = 4096, N = 4001 at 257, 300,
 * 384 and 512 rows (one wave of tiles; the copy of W, 47 us, costs the
 * same at any rows) 451, 453, 461 and 466 us against 503, 504, 507 and
 * 516 (bench/RESULTS.md). CPUs from 64 rows (PoCL, 2 cores, K = 1001, N =
 * 1024: 3.6-3.8 ms against 8.0-8.1 at 64 rows, 5.7-7.5 against
 * 11.6-17.6 at 256, 11.4-12.0 against 20.4-29.3 at 512; but 5.7-5.8
 * against 5.1 at 32 rows). */
static void pad_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    if (spec_knob_set(ks, "pad_rows") || !uses_main(&c) || !c.base ||
        !uses_xa(&c) || (c.K % 4 == 0 && c.N % 4 == 0) || c.k % 4 != 0 ||
        c.n % 4 != 0) {
        return;
    }
    spec_knob_default(ks, "pad_rows", ks->target == TARGET_CPU ? 64 : 1);
}

/* lora_delta can run: base: false, T of rank up to 32 (delta_rows x
 * rank values in each work-item's registers), unless the spec turned it
 * off. */
static int delta_fits(const struct kernel_spec *ks, const struct lora *c)
{
    return !c->base && c->R <= 32 &&
           !(spec_knob_set(ks, "delta_rows") && c->delta_rows == 0);
}

/* Bytes of A and B that lora_delta's work-groups may read from cache in
 * all: each reads both whole (per slice of N, B's slice), so past this
 * lora_xa + lora_expand, which read them once per stretch of rows, win
 * (H100: K=N=4096 rank 16 f32, 26.9 against 31.9 us at 256 rows, 50.7
 * against 34.4 at 1024; K=N=2048 rank 8 even at 2048 rows). */
#define DELTA_CACHE_BYTES (64L << 20)
#define DELTA_ROWS_MAX 4096L /* the most rows measured (K=N=512 rank 8:
                              * 21.4 us against 23.8) */

/* lora_delta's knobs, for base: false between lora_decode and lora_xa +
 * lora_expand. H100 (bench/RESULTS.md): 2 rows per work-group of 256 at
 * rank 8 (M=128 K=N=2048: 9.5 us against 11.5-12.1 for 1 or 4 rows), 2
 * of 128 at rank 16 (M=128 K=N=4096: 23.1 against 27.9 for 1 of 256);
 * PoCL: 4 rows per 16 work-items (M=128 K=N=2048 rank 8: 143 us against
 * 254 for 2 of 256), since its work-items run one after another. N in 4
 * slices on GPUs where N >= 2048 (K=N=2048 at 4 and 32 rows: 8.3 and 8.6
 * us against 9.7 and 9.6). */
static void delta_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    if (!delta_fits(ks, &c)) {
        return;
    }
    long rows = 1;
    if (c.cpu) {
        while (rows * 2 * c.R <= 32) {
            rows *= 2;
        }
    } else {
        while (rows * 2 * c.R <= 16 || (rows < 2 && rows * 2 * c.R <= 32)) {
            rows *= 2;
        }
    }
    spec_knob_default(ks, "delta_rows", rows);
    spec_knob_default(ks, "delta_threads", c.cpu ? 16 : 256);
    lora_read(ks, &c);
    while (!spec_knob_set(ks, "delta_threads") && c.delta_threads > 16 &&
           delta_local(&c) > LOCAL_MAX) {
        spec_knob_default(ks, "delta_threads", c.delta_threads / 2);
        lora_read(ks, &c);
    }
    long split = 1;
    while (!c.cpu && split < 4 && split * 2 * 512 <= c.N) {
        split *= 2;
    }
    spec_knob_default(ks, "delta_split", split);
    long per_group = (c.K + c.N) * c.R * (long)dtype_size(ks->dtype);
    long upto = c.delta_rows;
    while (upto < DELTA_ROWS_MAX &&
           upto * 2 / c.delta_rows * per_group <= DELTA_CACHE_BYTES) {
        upto *= 2;
    }
    spec_knob_default(ks, "delta_max", upto);
    lora_read(ks, &c);
    if (!spec_knob_set(ks, "delta_rows") && !spec_knob_set(ks, "delta_max") &&
        c.delta_max <= decode_upto(&c)) {
        spec_knob_default(ks, "delta_rows", 0); /* lora_decode covers them */
    }
}

/* The widest global vector that divides K, N and any given tile. */
static void vec_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    long vec = 4;
    while (vec > 1 && (c.K % vec != 0 || c.N % vec != 0 ||
                       (spec_knob_set(ks, "n") && c.n % vec != 0) ||
                       (spec_knob_set(ks, "k") && c.k % vec != 0))) {
        vec /= 2;
    }
    spec_knob_default(ks, "vec", vec);
}

/* The engine, then its tiles. Tensor cores where they can run X*A and the
 * GEMM with W; on compute capability 9.0 that GEMM on warpgroups where
 * N's tiles take them (wgmma_defaults). */
static void engine_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    if ((ks->target == TARGET_TENSOR || ks->target == TARGET_SM90A) &&
        ks->dtype != DTYPE_F32 && c.K % 8 == 0 && (c.N % 8 == 0 || !c.base)) {
        int wgmma = ks->target == TARGET_SM90A && c.base && c.N >= 64;
        spec_knob_default(ks, "engine", wgmma ? ENGINE_WGMMA : ENGINE_MMA);
        lora_read(ks, &c);
    }
    if (c.engine != ENGINE_SIMT) {
        mma_defaults(ks);
    } else {
        simt_defaults(ks);
    }
}

/* lora_decode's blocks of rows and its work-items along N and K. */
static void decode_shape_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    /* f16 and bf16 on GPUs: blocks of 8 rows by 64 work-items along K,
     * whose fewer registers keep more of W's 8-byte loads in flight (bf16
     * llama2-7b projections on the H100: 10-16% faster than 16 by 32 at 1
     * to 8 rows; up to 22% slower at 16 to 32, where two to four blocks
     * each read W: bench/RESULTS.md). */
    int half_gpu = c.half && !c.cpu;
    /* CPUs: blocks of 8 rows, one work-item along K (its rows need no
     * reduction across items): PoCL, K = N = 2048 rank 8, 1 / 8 / 16
     * rows: 2.9 / 4.9 / 10.3 ms against 4.5 / 7.4 / 20.1 for 16 by 32,
     * and against CLBlast's 7.0 / 6.6 / 9.3 (bench/RESULTS.md). */
    spec_knob_default(ks, "decode_rows", half_gpu || c.cpu ? 8 : 16);
    /* 8 work-items along N, 4 columns each (by 32 or 64 along K on GPUs):
     * many work-groups and many loads in flight, for streaming W at
     * memory speed. */
    /* At least 2: with one work-item along N, PoCL computes wrong sums
     * (work-groups of 1 x 4 and up; 2 x 4 is right). */
    long lanes_n = pow2_ceil(ceil_div(c.N, decode_vec(&c)));
    spec_knob_default(ks, "decode_n", min_l(8, lanes_n < 2 ? 2 : lanes_n));
    /* 32 along K with or without W: without, T's reduction over K is the
     * work (at 128 rows, M=K=N=512, rank 8: 12.1 us against 17.9 with 8
     * work-items, the rank, on the H100). */
    spec_knob_default(ks, "decode_k",
                      c.cpu ? 1
                            : min_l(half_gpu ? 64 : 32,
                                    pow2_ceil(ceil_div(c.K, decode_vec(&c)))));
}

/* lora_xa's (or lora_xa_mma's) rows and work-items per work-group, and
 * the stretches of K it splits over work-groups. */
static void xa_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    /* lora_xa: 32 lanes of rows (up to 4 rows each: 128 rows at rank 16)
     * by 8 work-items along K. Many rows per work-group, so that each row
     * of A staged in local memory serves many rows of X; K is split over
     * work-groups in equal stretches of at most what local memory holds of
     * A, staged once per work-group (the fastest of the geometries
     * measured on the H100, bench/lab). */
    long w = 4;
    while (w > 1 && w * c.R > 64) {
        w /= 2;
    }
    /* lora_xa_mma: 64 rows a work-group (below: its stretches are long). */
    spec_knob_default(ks, "xa_m", uses_mma(&c) ? 64 : 32 * w);
    /* CPUs: one work-item along K, whose rows need no reduction across
     * items (PoCL, M=128 K=N=2048 rank 8: 302 against 401 us for 8). */
    spec_knob_default(ks, "xa_k",
                      c.cpu ? 1 : min_l(8, pow2_ceil(ceil_div(c.K, c.vec))));
    lora_read(ks, &c);
    long step = c.xa_k * c.vec;
    if (spec_knob_set(ks, "xa_chunk")) {
        return;
    }
    /* 256 rows of A (16 KiB at rank 16): K = 4096 makes 16 stretches, 512
     * work-groups at 4096 rows, about two full waves on the H100; 480 (the
     * most 32 KiB holds) made 9 and a second wave of a few work-groups,
     * 1.5x slower. */
    long chunk = min_l(256, ceil_div(c.K, step) * step);
    /* lora_xa_mma: all of K, cut below to what local memory holds. Each
     * work-group of lora_mma (and lora_expand) sums the partial sums of T
     * of every stretch: on the H100 in bf16, 5 stretches of K = 4096 (992
     * rows of A at rank 16, 64 rows a work-group) against 16 of 256 (128
     * rows) took llama-q 439 -> 417 us at 4096 rows, 62 -> 53 at 128;
     * llama-up 1117 -> 1060; llama-down (43 stretches before) 1036 -> 992,
     * 102 -> 81 at 128 rows. */
    if (uses_mma(&c)) {
        chunk = ceil_div(c.K, 32) * 32;
    }
    spec_knob_default(ks, "xa_chunk", chunk < step ? step : chunk);
}

/* lora_xa's and lora_xa_mma's local memory within LOCAL_MAX, through the
 * knobs the spec left out. */
static void xa_fit_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    long step = c.xa_k * c.vec; /* as xa_defaults' */
    /* lora_xa_mma stages the stretch whole: fewer rows of A at once where
     * the rank is wide, or K long. */
    while (uses_mma(&c) && !spec_knob_set(ks, "xa_chunk") &&
           c.xa_chunk > 32 && xa_mma_local(&c) > LOCAL_MAX) {
        spec_knob_default(ks, "xa_chunk", c.xa_chunk - 32);
        lora_read(ks, &c);
    }
    while (!uses_mma(&c) && xa_local(&c) > LOCAL_MAX) {
        if (!spec_knob_set(ks, "xa_chunk") && c.xa_chunk > c.vec &&
            4 * xa_staged_a(&c) > LOCAL_MAX) {
            spec_knob_default(ks, "xa_chunk",
                         c.xa_chunk > step ? c.xa_chunk - step : c.vec);
        } else if (!spec_knob_set(ks, "xa_k") && c.xa_k > 1) {
            spec_knob_default(ks, "xa_k", c.xa_k / 2);
        } else if (!spec_knob_set(ks, "xa_m") && c.xa_m > 1) {
            spec_knob_default(ks, "xa_m", c.xa_m / 2);
        } else {
            break; /* validate() says what does not fit */
        }
        lora_read(ks, &c);
    }
}

/* lora_decode only where its local memory fits, unless the spec set its
 * shape (then validate() says what does not fit). */
static void decode_fit_defaults(struct kernel_spec *ks)
{
    struct lora c;
    if (spec_knob_set(ks, "decode_rows") || spec_knob_set(ks, "decode_n") ||
        spec_knob_set(ks, "decode_k")) {
        return;
    }
    lora_read(ks, &c);
    while (c.decode_rows > 0 && decode_local(&c) > LOCAL_MAX) {
        c.decode_rows /= 2;
    }
    spec_knob_default(ks, "decode_rows", c.decode_rows);
}

/* The rows lora_decode takes by default, beyond decode_rows, a work-group
 * per decode_rows rows, where one launch beats the tiled path (H100,
 * bench/RESULTS.md). With W, each block of rows reads W again: up to 128
 * rows while W stays in a 50 MB cache (M=128, rank 8, K=N=512: 13.1 us
 * against 23.3; 1024: 29.5 against 47.7), to 64 rows at 16 MiB, where the
 * split path takes over (K=N=2048: 43.5 against 52.4 us at 64 rows, 75.0
 * against 52.0 at 128; K=4096 N=1024 53.1 / 80.6 at 64, 94.4 / 81.8 at
 * 128), up to 32 rows above (K=4096 N=11008 rank 16: 300 us against 346
 * at 32 rows, but 1067 against 406 at 128). Without W, where every
 * work-group recomputes its rows of T, up to about 2^27 / (K*N) rows
 * (K=N=512: 512 rows, 23.4 us; 2048: 32 rows, 21.0 against 24.3 us). */
static long decode_reach(const struct kernel_spec *ks, const struct lora *c)
{
    long w_bytes = c->K * c->N * (long)dtype_size(ks->dtype);
    long upto = w_bytes <= (8L << 20) ? 128 : w_bytes <= (16L << 20) ? 64 : 32;
    if (c->cpu) {
        /* Two blocks (PoCL, K = N = 2048 at 16 rows: 10.3 ms against 22.4
         * for the tiled path); past that, unmeasured. */
        upto = 2 * c->decode_rows;
    }
    /* With tensor cores, their path costs about one wave of tiles at up
     * to 128 rows whatever the rows, and each block of lora_decode about
     * W's bytes at 1.1 TB/s (bf16 on the H100): blocks pay while fewer
     * than about 3.5 * 4096 / N per wave of 128 tiles, rounded. K = 4096:
     * to 32 rows at N = 4096 (tensor path 107-109 us, lora_decode 93.9 at
     * 32 rows), to 8 at N = 11008 (tensor path 107.5-108.9 us at 12 to 32
     * rows, lora_decode 116-254). Where lora_decode_mma runs,
     * decode_mma_defaults sets decode_max again, below. */
    if (mma_split_default(ks, c) > 1 && c->decode_rows > 0) {
        /* The tensor cores' split path (split_defaults) beats a second
         * block: bf16 K = N = 4096 at 16 rows 41.7 us against 52.6, and
         * K = 11008 already at 8 rows, 60.6 against 79.2; one block wins
         * at 8 rows of K = 4096 (31.8 against 37.7). */
        upto = c->decode_rows;
    } else if (uses_mma(c) && c->base && !c->cpu && c->decode_rows > 0) {
        const long reach_n = 7 * 4096 / 2; /* 3.5 blocks at N = 4096 */
        long waves = ceil_div(ceil_div(c->N, c->n), 128);
        long blocks = (reach_n * waves + c->N / 2) / c->N; /* rounded */
        long most = (blocks < 1 ? 1 : blocks) * c->decode_rows;
        upto = most < upto ? most : upto;
    }
    if (!c->base && !c->cpu) {
        upto = 1;
        while (upto * 2 <= (1L << 27) / (c->K * c->N) && upto < 4096) {
            upto *= 2;
        }
    }
    return upto;
}

static void decode_max_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    long upto = decode_reach(ks, &c);
    spec_knob_default(ks, "decode_max",
                 c.decode_rows > 0 && upto > c.decode_rows ? upto
                                                           : c.decode_rows);
    /* Where lora_delta runs (base: false), lora_decode keeps up to 2 rows
     * on GPUs, and only where K*N >= 2^22 (H100, f32, K=N=4096 rank 16:
     * 14.1-14.9 and 15.4 us at 1 and 2 rows against 15.9 and 16.4 for
     * lora_delta, in 16-row blocks, which beat 1- and 2-row blocks;
     * K=N=512: 7.1 against 6.8 at one row); on CPUs none (PoCL, K=N=2048:
     * 2593 us at one row against 16.7). */
    if (delta_fits(ks, &c) && !spec_knob_set(ks, "decode_rows") &&
        !spec_knob_set(ks, "decode_max")) {
        int none = c.cpu || c.K * c.N < (1L << 22);
        if (none) {
            spec_knob_default(ks, "decode_rows", 0);
        }
        spec_knob_default(ks, "decode_max", none ? 0 : 2);
    }
}

/* Shape-aware values for the knobs a spec left out, in dependency order:
 * each choice respects the ones (given or chosen) before it. */
static void lora_defaults(struct kernel_spec *ks)
{
    vec_defaults(ks);
    engine_defaults(ks);
    decode_shape_defaults(ks);
    xa_defaults(ks);
    xa_fit_defaults(ks);
    decode_fit_defaults(ks);
    decode_max_defaults(ks);
    decode_mma_defaults(ks);
    decode_split_defaults(ks);
    split_defaults(ks);
    wg_split_defaults(ks);
    delta_defaults(ks);
    pad_defaults(ks);
}

/* The mark of the first of KEYS the spec gave, else of the first key (the
 * kernel's own mark when unset). */
static struct mark blame(const struct kernel_spec *ks, const char *k1,
                         const char *k2)
{
    if (!spec_knob_set(ks, k1) && k2 != NULL && spec_knob_set(ks, k2)) {
        return spec_knob_mark(ks, k2);
    }
    return spec_knob_mark(ks, k1);
}

/* Returns 0 if the shape itself is wrong (the limits would only cascade). */
static int check_shape(const struct kernel_spec *ks, const struct lora *c,
                       struct diags *d)
{
    int ok = lora_check_rank(ks, c->K, c->N, c->R, d);
    lora_check_alpha_scale(ks, d);
    return ok;
}

/* Divisibility and size checks of the main tiles; returns 0 if a check
 * failed that the later checks depend on. */
static int check_tiles(const struct kernel_spec *ks, const struct lora *c,
                       struct diags *d)
{
    const char *file = ks->file;
    int ok = 1;
    if (c->vec != 1 && c->vec != 2 && c->vec != 4) {
        diag_error(d, file, spec_knob_mark(ks, "vec"),
                   "vec must be 1, 2 or 4 (got %ld)", c->vec);
        return 0;
    }
    if (c->K % c->vec != 0) {
        diag_error(d, file, spec_knob_mark(ks, "vec"),
                   "vec (%ld) must divide in_features (%ld)", c->vec, c->K);
        ok = 0;
    } else if (c->N % c->vec != 0) {
        diag_error(d, file, spec_knob_mark(ks, "vec"),
                   "vec (%ld) must divide out_features (%ld)", c->vec, c->N);
        ok = 0;
    }
    if (c->engine == ENGINE_SIMT && (c->wm > 16 || c->wn > 16)) {
        diag_error(d, file, spec_knob_mark(ks, c->wm > 16 ? "wm" : "wn"),
                   "tile %s must be <= 16 (got %ld): a work-item's rows and "
                   "columns of Y (engine: mma takes a warp's, up to 128)",
                   c->wm > 16 ? "wm" : "wn", c->wm > 16 ? c->wm : c->wn);
        return 0;
    }
    if (c->m % c->wm != 0) {
        diag_error(d, file, blame(ks, "wm", "m"),
                   "tile m (%ld) must be a multiple of wm (%ld)", c->m,
                   c->wm);
        ok = 0;
    }
    if (c->n % c->wn != 0) {
        diag_error(d, file, blame(ks, "wn", "n"),
                   "tile n (%ld) must be a multiple of wn (%ld)", c->n,
                   c->wn);
        ok = 0;
    }
    if (c->n % c->vec != 0) {
        diag_error(d, file, blame(ks, "n", "vec"),
                   "tile n (%ld) must be a multiple of vec (%ld)", c->n,
                   c->vec);
        ok = 0;
    }
    if (c->k % c->vec != 0) {
        diag_error(d, file, blame(ks, "k", "vec"),
                   "tile k (%ld) must be a multiple of vec (%ld)", c->k,
                   c->vec);
        ok = 0;
    }
    long most_n = pow2_ceil(c->N), most_k = pow2_ceil(c->K);
    if (c->engine != ENGINE_SIMT) {
        most_n = most_n < 16 ? 16 : most_n; /* an mma tile is 16 wide */
        most_k = most_k < 16 ? 16 : most_k;
    }
    if (c->n > most_n) {
        diag_error(d, file, spec_knob_mark(ks, "n"),
                   "tile n (%ld) exceeds out_features (%ld); use at most %ld",
                   c->n, c->N, most_n);
        ok = 0;
    }
    if (c->k > most_k) {
        diag_error(d, file, spec_knob_mark(ks, "k"),
                   "tile k (%ld) exceeds in_features (%ld); use at most %ld",
                   c->k, c->K, most_k);
        ok = 0;
    }
    return ok;
}

/* lora_main's work-group and local memory (the SIMT engine). */
static void check_main(const struct kernel_spec *ks, const struct lora *c,
                       struct diags *d)
{
    const char *file = ks->file;
    long threads = main_threads(c);
    long bytes = main_local(c, XA_PREPASS);
    if (threads > THREADS_MAX) {
        diag_error(d, file, blame(ks, "m", "n"),
                   "lora_main work-group of %ld work-items (tile m %ld / wm "
                   "%ld x tile n %ld / wn %ld) exceeds %ld",
                   threads, c->m, c->wm, c->n, c->wn, THREADS_MAX);
    }
    if (bytes > LOCAL_MAX) {
        diag_error(d, file, blame(ks, "k", "m"),
                   "lora_main needs %ld bytes of local memory (tiles m %ld, "
                   "n %ld, k %ld, pad %ld), more than %ld",
                   bytes, c->m, c->n, c->k, c->pad, LOCAL_MAX);
    } else if (c->xa == XA_INLINE &&
               (bytes = main_local(c, XA_INLINE)) > LOCAL_MAX) {
        diag_error(d, file, spec_knob_mark(ks, "xa"),
                   "xa: inline needs %ld bytes of local memory in lora_main "
                   "(rank %ld), more than %ld; use xa: prepass",
                   bytes, c->R, LOCAL_MAX);
    }
}

/* lora_decode_mma's knobs: what the tensor cores and local memory take. */
static void check_decode_mma(const struct kernel_spec *ks,
                             const struct lora *c, struct diags *d)
{
    const char *file = ks->file;
    struct mark at = spec_knob_mark(ks, "decode_mma_max");
    long steps = ceil_div(c->K, 16), bytes = dmma_local(c);
    if (c->R % 8 != 0) {
        diag_error(d, file, at,
                   "lora_decode_mma needs a rank that is a multiple of 8 "
                   "(got %ld); use decode_mma_max: 0",
                   c->R);
        return;
    }
    if (c->decode_mma_max <= decode_upto(c)) {
        diag_error(d, file, blame(ks, "decode_mma_max", "decode_max"),
                   "decode_mma_max (%ld) must exceed decode_max (%ld) for "
                   "lora_decode_mma to run",
                   c->decode_mma_max, decode_upto(c));
    }
    if (c->decode_slices > steps) {
        diag_error(d, file, spec_knob_mark(ks, "decode_slices"),
                   "decode_slices (%ld) exceeds in_features' %ld steps of 16",
                   c->decode_slices, steps);
    }
    if (c->decode_cols != pow2_ceil(c->decode_cols)) {
        diag_error(d, file, spec_knob_mark(ks, "decode_cols"),
                   "decode_cols (%ld) must be a power of two",
                   c->decode_cols);
    }
    if (bytes > MMA_LOCAL_MAX) {
        diag_error(d, file, blame(ks, "decode_cols", "decode_warps"),
                   "lora_decode_mma needs %ld bytes of local memory "
                   "(decode_warps %ld x %ld steps of 16 x %ld columns), "
                   "more than %ld",
                   bytes, c->decode_warps, dmma_stages(c), dmma_width(c),
                   MMA_LOCAL_MAX);
    }
}

/* lora_decode_split's knobs: it takes W, and a work-item per column of A
 * as well as of W's strips. */
static void check_decode_split(const struct kernel_spec *ks,
                               const struct lora *c, struct diags *d)
{
    const char *file = ks->file;
    if (!c->base) {
        diag_error(d, file, spec_knob_mark(ks, "decode_split_max"),
                   "decode_split_max (%ld) needs base: true "
                   "(lora_decode_split streams W)",
                   c->decode_split_max);
        return;
    }
    if (uses_mma(c)) {
        return; /* lora_decode_mma's place; the knob is not used */
    }
    if (c->decode_split_max <= decode_upto(c)) {
        diag_error(d, file, blame(ks, "decode_split_max", "decode_max"),
                   "decode_split_max (%ld) must exceed decode_max (%ld) for "
                   "lora_decode_split to run",
                   c->decode_split_max, decode_upto(c));
    }
    if (c->decode_cols < c->R) {
        diag_error(d, file, blame(ks, "decode_cols", "rank"),
                   "lora_decode_split gives each column of A a work-item: "
                   "decode_cols (%ld) must be at least the rank (%ld)",
                   c->decode_cols, c->R);
    }
    if (c->decode_slices > c->K) {
        diag_error(d, file, spec_knob_mark(ks, "decode_slices"),
                   "decode_slices (%ld) exceeds in_features (%ld)",
                   c->decode_slices, c->K);
    } else if (dsplit_local(c) > LOCAL_MAX) {
        diag_error(d, file, blame(ks, "decode_slices", "decode_split_max"),
                   "lora_decode_split keeps its slice of X in local memory: "
                   "%ld bytes (in_features %ld / decode_slices %ld x "
                   "decode_split_max %ld floats), more than %ld",
                   dsplit_local(c), c->K, c->decode_slices,
                   c->decode_split_max, LOCAL_MAX);
    }
}

/* Work-group sizes and local memory of each kernel the plan launches
 * (lora_mma's are check_mma's). */
static void check_limits(const struct kernel_spec *ks, const struct lora *c,
                         struct diags *d)
{
    const char *file = ks->file;
    long bytes;
    if (!uses_mma(c)) {
        check_main(ks, c, d);
    }
    if (c->decode_mma_max > 0 && uses_lora_mma(c)) {
        check_decode_mma(ks, c, d);
    }
    if (c->decode_split_max > 0) {
        check_decode_split(ks, c, d);
    }
    if (c->decode_rows > 0) {
        if (c->decode_n * c->decode_k > THREADS_MAX) {
            diag_error(d, file, blame(ks, "decode_n", "decode_k"),
                       "lora_decode work-group of %ld work-items (decode_n "
                       "%ld x decode_k %ld) exceeds %ld",
                       c->decode_n * c->decode_k, c->decode_n, c->decode_k,
                       THREADS_MAX);
        }
        bytes = decode_local(c);
        if (bytes > LOCAL_MAX) {
            diag_error(d, file, blame(ks, "decode_n", "decode_k"),
                       "lora_decode needs %ld bytes of local memory "
                       "(decode_n %ld x decode_k %ld x %ld columns or "
                       "decode_k %ld x rank %ld partial sums, and "
                       "decode_rows %ld x rank %ld), more than %ld",
                       bytes, c->decode_n, c->decode_k, decode_vec(c),
                       c->decode_k,
                       c->R, c->decode_rows, c->R, LOCAL_MAX);
        }
    }
    if (uses_xa(c) && xa_split(c) * c->R > INDEX_MAX) {
        diag_error(d, file,
                   spec_knob_set(ks, "xa_chunk")
                       ? spec_knob_mark(ks, "xa_chunk")
                       : spec_field_mark(ks, "rank"),
                   "T's partial sums take %ld floats a row (in_features %ld "
                   "/ xa_chunk %ld = %ld stretches x rank %ld), more than "
                   "the %ld the kernels index",
                   xa_split(c) * c->R, c->K, c->xa_chunk, xa_split(c), c->R,
                   INDEX_MAX);
    }
    if (uses_xa(c) && !uses_mma(c)) {
        long xw = xa_rows_per_item(c), xt = xa_threads(c);
        struct mark at = spec_knob_set(ks, "xa_chunk")
                             ? spec_knob_mark(ks, "xa_chunk")
                             : blame(ks, "xa_k", "xa_m");
        if (xt > THREADS_MAX) {
            diag_error(d, file, blame(ks, "xa_k", "xa_m"),
                       "lora_xa work-group of %ld work-items (xa_k %ld x xa_m "
                       "%ld / %ld rows each) exceeds %ld",
                       xt, c->xa_k, c->xa_m, xw, THREADS_MAX);
        }
        if (c->xa_chunk % c->vec != 0) {
            diag_error(d, file, blame(ks, "xa_chunk", "vec"),
                       "xa_chunk (%ld) must be a multiple of vec (%ld)",
                       c->xa_chunk, c->vec);
        } else if ((bytes = 4 * xa_staged_a(c)) > LOCAL_MAX) {
            diag_error(d, file, at,
                       "lora_xa needs %ld bytes of local memory for xa_chunk "
                       "%ld rows of A at rank %ld, more than %ld",
                       bytes, c->xa_chunk, c->R, LOCAL_MAX);
        } else if ((bytes = 4 * xa_reduction(c)) > LOCAL_MAX) {
            diag_error(d, file, blame(ks, "xa_k", "xa_m"),
                       "lora_xa needs %ld bytes of local memory to sum the "
                       "partials of xa_m %ld rows over xa_k %ld work-items "
                       "(rank %ld), more than %ld",
                       bytes, c->xa_m, c->xa_k, c->R, LOCAL_MAX);
        }
    }
    if (uses_expand(c) && expand_rows(c) < 1) {
        diag_error(d, file, spec_field_mark(ks, "rank"),
                   "rank %ld is too large for lora_expand: one row of T "
                   "needs %ld bytes of local memory, more than %ld",
                   c->R, 4 * c->R, LOCAL_MAX);
    }
    if (!uses_mma(c)) {
        check_warp_n(ks, "lora_main", c->warp_n, c->m, c->wm, c->n, c->wn,
                     d);
    }
}

/* What lora_mma needs of the storage, the shape and its tiles. */
static void check_mma(const struct kernel_spec *ks, const struct lora *c,
                      struct diags *d)
{
    const char *file = ks->file;
    struct mark at = spec_knob_mark(ks, "engine");
    const char *engine = engine_choices[c->engine];
    if (ks->dtype == DTYPE_F32) {
        diag_error(d, file, at,
                   "engine: %s needs dtype f16 or bf16 (tensor cores "
                   "multiply half-width values)",
                   engine);
        return;
    }
    if (c->K % 8 != 0 || (c->base && c->N % 8 != 0)) {
        diag_error(d, file, at,
                   c->base ? "engine: %s needs in_features and out_features "
                             "multiples of 8 (got %ld, %ld): it copies "
                             "16-byte rows"
                           : "engine: %s needs in_features a multiple of 8 "
                             "(got %ld): it loads 16-byte rows of X",
                   engine, c->K, c->N);
    }
    if (c->xa != XA_PREPASS) {
        diag_error(d, file, spec_knob_mark(ks, "xa"),
                   "engine: %s takes T from lora_xa_mma: use xa: prepass",
                   engine);
    }
    if (c->xa_m % 16 != 0 || 2 * c->xa_m > THREADS_MAX) {
        diag_error(d, file, blame(ks, "xa_m", "engine"),
                   "engine: %s needs xa_m a multiple of 16, at most %ld "
                   "(lora_xa_mma runs a warp per 16 rows; got %ld)",
                   engine, THREADS_MAX / 2, c->xa_m);
    }
    if (xa_mma_local(c) > LOCAL_MAX) {
        diag_error(d, file, blame(ks, "xa_chunk", "engine"),
                   "lora_xa_mma needs %ld bytes of local memory for xa_chunk "
                   "%ld rows of A at rank %ld, more than %ld",
                   xa_mma_local(c), c->xa_chunk, c->R, LOCAL_MAX);
    }
    if (!uses_lora_mma(c)) {
        return; /* the tiles below are lora_mma's */
    }
    if (c->k % 16 != 0) {
        diag_error(d, file, blame(ks, "k", "engine"),
                   "engine: mma needs tile k a multiple of 16 (got %ld)",
                   c->k);
    } else if (c->k != pow2_ceil(c->k) || c->n != pow2_ceil(c->n)) {
        /* mma_swizzle permutes chunks within a power of two */
        diag_error(d, file, blame(ks, c->k != pow2_ceil(c->k) ? "k" : "n",
                                  "engine"),
                   "engine: mma needs tiles k and n that are powers of two "
                   "(got %ld, %ld): the 16-byte chunks of their rows are "
                   "swizzled by XOR",
                   c->k, c->n);
    }
    if (c->wm % 16 != 0 || c->wn % 16 != 0) {
        diag_error(d, file, blame(ks, c->wm % 16 ? "wm" : "wn", "engine"),
                   "engine: mma needs wm and wn (a warp's rows and columns "
                   "of Y) multiples of 16 (got %ld, %ld)",
                   c->wm, c->wn);
    }
    long threads = mma_threads(c);
    if (threads > THREADS_MAX) {
        diag_error(d, file, blame(ks, "m", "n"),
                   "lora_mma work-group of %ld work-items (32 per warp of "
                   "wm %ld x wn %ld in tile m %ld x n %ld) exceeds %ld",
                   threads, c->wm, c->wn, c->m, c->n, THREADS_MAX);
    }
    long bytes = mma_local(c);
    if (bytes > MMA_LOCAL_MAX) {
        diag_error(d, file, blame(ks, "stages", "k"),
                   "lora_mma needs %ld bytes of local memory (stages %ld x "
                   "(m %ld + n %ld) x k %ld halves), more than %ld",
                   bytes, c->stages, c->m, c->n, c->k, MMA_LOCAL_MAX);
    }
}

/* What lora_wgmma needs of its tiles (wgmma_ptx.cl, lora_wgmma_tiles.cl). */
static void check_wgmma(const struct kernel_spec *ks, const struct lora *c,
                        struct diags *d)
{
    const char *file = ks->file;
    if (!c->base) {
        diag_error(d, file, spec_knob_mark(ks, "engine"),
                   "engine: wgmma runs the GEMM with W: use engine: mma "
                   "with base: false");
        return;
    }
    if (c->n != 64 && c->n != 128 && c->n != 256) {
        diag_error(d, file, blame(ks, "n", "engine"),
                   "engine: wgmma needs tile n of 64, 128 or 256 (got %ld): "
                   "a warpgroup's product is 64 rows by n, its W tile "
                   "blocks of 64 columns",
                   c->n);
    }
    if (c->k != 16 && c->k != 32 && c->k != 64) {
        diag_error(d, file, blame(ks, "k", "engine"),
                   "engine: wgmma needs tile k of 16, 32 or 64 (got %ld): "
                   "X's tile rows are one swizzle line of 32, 64 or 128 "
                   "bytes",
                   c->k);
    }
    if (c->wg_m % 64 != 0) {
        diag_error(d, file, spec_knob_mark(ks, "wg_m"),
                   "wg_m must be a multiple of 64, a warpgroup's rows "
                   "(got %ld)",
                   c->wg_m);
    }
    if (wgmma_threads(c) > THREADS_MAX) {
        diag_error(d, file, spec_knob_mark(ks, "wg_m"),
                   "lora_wgmma work-group of %ld work-items (128 per 64 "
                   "rows of wg_m %ld) exceeds %ld",
                   wgmma_threads(c), c->wg_m, THREADS_MAX);
    }
    long bytes = wgmma_local(c);
    if (bytes > MMA_LOCAL_MAX) {
        diag_error(d, file, blame(ks, "wg_stages", "wg_m"),
                   "lora_wgmma needs %ld bytes of local memory (wg_stages "
                   "%ld x (wg_m %ld + n %ld) x k %ld halves), more than %ld",
                   bytes, c->wg_stages, c->wg_m, c->n, c->k, MMA_LOCAL_MAX);
    }
}

/* lora_delta: base: false, T in registers, its work-group and local
 * memory. */
static void check_delta(const struct kernel_spec *ks, const struct lora *c,
                        struct diags *d)
{
    const char *file = ks->file;
    if (c->delta_rows == 0) {
        return;
    }
    struct mark at = spec_knob_mark(ks, "delta_rows");
    if (c->base) {
        diag_error(d, file, at,
                   "delta_rows (%ld) needs base: false (lora_delta writes "
                   "the adapter term alone)",
                   c->delta_rows);
        return;
    }
    if (c->delta_rows * c->R > 64) {
        diag_error(d, file, blame(ks, "delta_rows", "delta_max"),
                   "lora_delta keeps delta_rows x rank values of T per "
                   "work-item in registers: at most 64 (got %ld x %ld)",
                   c->delta_rows, c->R);
        return;
    }
    if (c->delta_max <= decode_upto(c)) {
        diag_error(d, file, blame(ks, "delta_max", "delta_rows"),
                   "delta_max (%ld) must exceed decode_max (%ld) for "
                   "lora_delta to run",
                   c->delta_max, decode_upto(c));
    }
    if (c->delta_split > c->N / c->vec) {
        diag_error(d, file, blame(ks, "delta_split", "vec"),
                   "delta_split (%ld) exceeds the %ld pieces of vec %ld "
                   "columns in out_features",
                   c->delta_split, c->N / c->vec, c->vec);
    }
    if (c->delta_threads > THREADS_MAX) {
        diag_error(d, file, spec_knob_mark(ks, "delta_threads"),
                   "lora_delta work-group of %ld work-items exceeds %ld",
                   c->delta_threads, THREADS_MAX);
    } else if (delta_local(c) > LOCAL_MAX) {
        diag_error(d, file, blame(ks, "delta_threads", "delta_rows"),
                   "lora_delta needs %ld bytes of local memory to sum "
                   "delta_rows %ld x rank %ld values over delta_threads %ld "
                   "work-items, more than %ld",
                   delta_local(c), c->delta_rows, c->R, c->delta_threads,
                   LOCAL_MAX);
    }
}

/* Most bytes of partial sums the split path may ask of the scratch. */
#define SPLIT_SCRATCH_MAX (256L << 20)

/* What the split path needs: lora_main with T from lora_xa, slices of at
 * least one K step, and rows to run for. */
static void check_split(const struct kernel_spec *ks, const struct lora *c,
                        struct diags *d)
{
    const char *file = ks->file;
    struct mark at = spec_knob_mark(ks, "split_k");
    long decode = few_upto(c);
    if (c->split_k <= 1) {
        return;
    }
    if (!c->base || c->xa != XA_PREPASS) {
        diag_error(d, file, at, "split_k (%ld) needs %s", c->split_k,
                   !c->base ? "base: true (it cuts X*W's K into slices)"
                            : "xa: prepass (each slice adds all of "
                              "T from lora_xa)");
        return;
    }
    if (c->split_k > ceil_div(c->K, c->k)) {
        diag_error(d, file, blame(ks, "split_k", "k"),
                   "split_k (%ld) exceeds the %ld K steps of tile k %ld",
                   c->split_k, ceil_div(c->K, c->k), c->k);
    } else if (c->split_k * ceil_div(c->K, c->k) > INDEX_MAX) {
        /* lora_main finds a slice's steps as slice * steps / slices */
        diag_error(d, file, blame(ks, "k", "split_k"),
                   "split_k (%ld) x the %ld K steps of tile k %ld is more "
                   "than the %ld the kernels index; raise k",
                   c->split_k, ceil_div(c->K, c->k), c->k, INDEX_MAX);
    }
    if (c->split_max <= decode) {
        diag_error(d, file, blame(ks, "split_max", "split_k"),
                   "split_max (%ld) must exceed %s (%ld) for the split path "
                   "to run",
                   c->split_max, few_knob(c), decode);
    } else {
        long slices = 0, rows = 0, most = split_widest(c, &slices, &rows);
        const char *few = few_knob(c);
        if (4 * most * c->N > SPLIT_SCRATCH_MAX &&
            !spec_knob_set(ks, "split_max") && spec_knob_set(ks, few)) {
            /* The split path's rows start past the spec's own few-row
             * path: its rows are what takes the scratch. */
            diag_error(d, file, spec_knob_mark(ks, few),
                       "%s (%ld) puts the split path's rows above it: "
                       "their partial sums would take %.1f MiB of scratch "
                       "(%ld slices x %ld rows x %ld columns of floats), "
                       "more than %ld MiB; lower %s, or set split_k: 1",
                       few, decode, (double)(4 * most * c->N) / (1 << 20),
                       slices, rows, c->N, SPLIT_SCRATCH_MAX >> 20, few);
        } else if (4 * most * c->N > SPLIT_SCRATCH_MAX) {
            diag_error(d, file, blame(ks, "split_max", "split_k"),
                       "the split path's partial sums take %.1f MiB of "
                       "scratch (%ld slices x %ld rows x %ld columns of "
                       "floats), more than %ld MiB",
                       (double)(4 * most * c->N) / (1 << 20), slices, rows,
                       c->N, SPLIT_SCRATCH_MAX >> 20);
        }
    }
}

static void check_padded(const struct kernel_spec *ks, const struct lora *c,
                         struct diags *d)
{
    struct mark at = spec_knob_mark(ks, "pad_rows");
    if (c->pad_rows == 0) {
        return;
    }
    if (!c->base || c->xa != XA_PREPASS || c->engine != ENGINE_SIMT) {
        diag_error(d, ks->file, at,
                   "pad_rows (%ld) needs base: true, xa: prepass and "
                   "engine: simt (it pads lora_main's operands)",
                   c->pad_rows);
    } else if (c->K % 4 == 0 && c->N % 4 == 0) {
        diag_error(d, ks->file, at,
                   "pad_rows (%ld) has nothing to pad: in_features (%ld) "
                   "and out_features (%ld) are multiples of 4",
                   c->pad_rows, c->K, c->N);
    } else if (c->k % 4 != 0 || c->n % 4 != 0) {
        diag_error(d, ks->file, blame(ks, "pad_rows", "k"),
                   "pad_rows (%ld) needs tile k and n multiples of 4 "
                   "(got k %ld, n %ld)",
                   c->pad_rows, c->k, c->n);
    }
}

/* What lora_wgmma_split needs: T from lora_xa_mma, rows past the split
 * path's, two K steps, and its partial sums within SPLIT_SCRATCH_MAX.
 * Other engines leave wg_split_max unused, as wg_m (a spec's knobs serve
 * each device's variant). */
static void check_wg_split(const struct kernel_spec *ks, const struct lora *c,
                           struct diags *d)
{
    const char *file = ks->file;
    struct mark at = spec_knob_mark(ks, "wg_split_max");
    long s[SPLIT_BANDS], upto[SPLIT_BANDS];
    if (c->wg_split_max == 0 || !uses_wgmma(c)) {
        return;
    }
    if (c->xa != XA_PREPASS) {
        diag_error(d, file, blame(ks, "wg_split_max", "xa"),
                   "wg_split_max (%ld) needs xa: prepass (each slice adds "
                   "all of T from lora_xa_mma)", c->wg_split_max);
        return;
    }
    if (c->wg_split_max <= split_upto(c)) {
        diag_error(d, file, blame(ks, "wg_split_max", "split_max"),
                   "wg_split_max (%ld) must exceed the rows of the paths "
                   "before it (%ld) for lora_wgmma_split to run",
                   c->wg_split_max, split_upto(c));
        return;
    }
    if (ceil_div(c->K, c->k) < 2) {
        diag_error(d, file, blame(ks, "wg_split_max", "k"),
                   "lora_wgmma_split needs 2 K steps or more to split (K %ld, "
                   "tile k %ld)", c->K, c->k);
        return;
    }
    for (int i = 0, n = wg_split_bands(c, s, upto); i < n; i++) {
        if (4 * s[i] * upto[i] * c->N > SPLIT_SCRATCH_MAX) {
            diag_error(d, file, at,
                       "lora_wgmma_split's partial sums take %.1f MiB of "
                       "scratch (%ld slices x %ld rows x %ld columns of "
                       "floats), more than %ld MiB",
                       (double)(4 * s[i] * upto[i] * c->N) / (1 << 20), s[i],
                       upto[i], c->N, SPLIT_SCRATCH_MAX >> 20);
            return;
        }
    }
}

static void lora_validate(const struct kernel_spec *ks, struct diags *d)
{
    struct lora c;
    lora_read(ks, &c);
    int shape_ok = check_shape(ks, &c, d);
    if (check_tiles(ks, &c, d) && shape_ok) {
        if (c.engine != ENGINE_SIMT) {
            check_mma(ks, &c, d);
        }
        if (c.engine == ENGINE_WGMMA) {
            check_wgmma(ks, &c, d);
        }
        check_limits(ks, &c, d);
        check_split(ks, &c, d);
        check_wg_split(ks, &c, d);
        check_delta(ks, &c, d);
        check_padded(ks, &c, d);
    }
}

/* lora_pad_x's and lora_pad_w's work-items per group: a row's padded
 * length in 4s, the longer of the two, up to 256. */
static long pad_threads(const struct lora *c)
{
    long most = ceil_div(x_padded(c) > c->N ? x_padded(c) : c->N, 4);
    return most < 256 ? pow2_ceil(most) : 256;
}

/* The shape and its scale, as lora_plan and the naive plan define them. */
static void plan_shape(const struct kernel_spec *ks, const struct lora *c,
                       struct plan *p)
{
    plan_int(p, "IN_FEATURES", "K: columns of X, rows of W and A", c->K);
    plan_int(p, "OUT_FEATURES", "N: columns of W, B and Y", c->N);
    plan_int(p, "RANK", "r: columns of A, rows of B", c->R);
    plan_float(p, "SCALE", "factor of (X*A)*B", spec_lora_scale(ks));
    plan_int(p, "HAS_BASE", "1: Y includes X*W", c->base);
    plan_int(p, "ACCUMULATE", "1: Y += result", c->accumulate);
}

/* The tiles of lora_main, lora_mma and lora_wgmma, and VEC. Each knob
 * only where its kernel runs: a knob that changes no code then leaves the
 * emitted source as it is, and `specl tune`, which merges configs by that
 * source, times it once. */
static void plan_tile_defines(const struct lora *c, struct plan *p)
{
    int runs_main = uses_main(c);
    if (runs_main || uses_lora_mma(c)) {
        plan_int(p, "TILE_M", "rows of Y per work-group", c->m);
        plan_int(p, "TILE_N", "columns of Y per work-group", c->n);
        plan_int(p, "TILE_K", "K elements per local-memory stage", c->k);
    }
    if (runs_main) {
        plan_int(p, "WORK_M", "rows of Y per work-item", c->wm);
        plan_int(p, "WORK_N", "columns of Y per work-item", c->wn);
    }
    if (uses_wgmma(c)) {
        plan_int(p, "WG_M", "lora_wgmma: rows of Y per work-group",
                 c->wg_m);
        plan_int(p, "WG_STAGES", "lora_wgmma: K steps staged in local "
                 "memory", c->wg_stages);
    }
    if (uses_lora_mma(c)) {
        plan_int(p, "MMA_WARP_M", "rows of Y per warp", c->wm);
        plan_int(p, "MMA_WARP_N", "columns of Y per warp", c->wn);
        plan_int(p, "MMA_STAGES", "K steps staged in local memory",
                 c->stages);
        plan_int(p, "MMA_PENDING", "copies in flight while a step is used",
                 c->stages - 2);
    }
    plan_int(p, "VEC", "elements per global load or store", c->vec);
    if (runs_main) {
        plan_int(p, "PAD", "floats appended to each local-memory row", c->pad);
    }
}

/* lora_xa's and lora_expand's geometry. */
static void plan_xa_defines(const struct lora *c, struct plan *p)
{
    plan_int(p, "XA_M", "lora_xa: rows per work-group", c->xa_m);
    plan_int(p, "XA_K", "lora_xa: work-items along K", c->xa_k);
    plan_int(p, "XA_W", "lora_xa: rows per work-item", xa_rows_per_item(c));
    plan_int(p, "XA_CHUNK", "lora_xa: rows of A staged at once", c->xa_chunk);
    plan_int(p, "EXPAND_N", "lora_expand: work-items along N",
             expand_threads(c));
    plan_int(p, "EXPAND_VEC", "lora_expand: columns per work-item",
             expand_vec(c));
    plan_int(p, "EXPAND_ROWS", "lora_expand: rows per work-group",
             expand_rows(c) < 1 ? 1 : expand_rows(c));
}

/* The split paths' slices and lora_combine; then lora_main's WARP_N, as
 * the layout it gives (lora_warp_layout). */
static void plan_split_defines(const struct lora *c, struct plan *p)
{
    int runs_main = uses_main(c);
    if (runs_main || uses_lora_mma(c)) {
        plan_int(p, "SPLIT_K",
                 runs_main ? "K slices of the split path's lora_main; 1: "
                             "no split path"
                 : uses_wgmma(c) ? "most K slices of lora_mma_split, "
                                   "lora_wgmma_split; 1: none"
                                 : "K slices of the split path's lora_mma; "
                                   "1: no split path",
                 split_slices_most(c));
    }
    if (uses_split(c) || uses_wg_split(c)) {
        plan_int(p, "COMBINE_N", "lora_combine: work-items along N",
                 row_threads(c, c->vec));
    }
    if (runs_main) {
        plan_int(p, "WARP_N",
                 "lora_main: work-items along N per warp; 0: row-major",
                 lora_warp_layout(c->warp_n, c->n, c->wn));
    }
}

/* lora_decode's geometry, and lora_decode_mma's, lora_decode_split's and
 * lora_decode_sum's where they run. */
static void plan_decode_defines(const struct lora *c, struct plan *p)
{
    plan_int(p, "DECODE_ROWS", "rows lora_decode handles at most",
             c->decode_rows);
    plan_int(p, "DECODE_N", "lora_decode: work-items along N", c->decode_n);
    plan_int(p, "DECODE_K", "lora_decode: work-items along the reduction",
             c->decode_k);
    plan_int(p, "DECODE_VEC", "lora_decode: columns per work-item",
             decode_vec(c));
    if (uses_decode_mma(c)) {
        plan_int(p, "DMMA_ROWS", "lora_decode_mma: rows per work-group",
                 dmma_rows(c));
        plan_int(p, "DMMA_COLS", "lora_decode_mma: columns of W per "
                 "work-group", c->decode_cols);
        plan_int(p, "DMMA_RANK_COLS", "lora_decode_mma: columns of A's "
                 "strip (rank rounded up)", dmma_rank_cols(c));
        plan_int(p, "DMMA_WARPS", "lora_decode_mma: warps per work-group",
                 c->decode_warps);
        plan_int(p, "DMMA_STAGES", "lora_decode_mma: K steps staged per warp",
                 dmma_stages(c));
        plan_int(p, "DMMA_PENDING", "copies in flight while a step is used",
                 dmma_stages(c) - 2);
    }
    if (uses_decode_split(c)) {
        plan_int(p, "DSPLIT_ROWS", "lora_decode_split: rows per work-group",
                 dsplit_rows(c));
        plan_int(p, "DSPLIT_COLS", "lora_decode_split: columns (work-items) "
                 "per work-group", c->decode_cols);
    }
    if (uses_decode_mma(c) || uses_decode_split(c)) {
        plan_int(p, "DSUM_SLICES", "slices of K summed by lora_decode_sum",
                 c->decode_slices);
        plan_int(p, "DSUM_N", "lora_decode_sum: work-items along N",
                 row_threads(c, c->vec));
    }
}

/* lora_pad_x's and lora_pad_w's, and lora_delta's, where they run. */
static void plan_pad_delta_defines(const struct lora *c, struct plan *p)
{
    if (pads_x(c) || pads_w(c)) {
        plan_int(p, "PAD_THREADS", "lora_pad_x, lora_pad_w: work-items "
                 "per work-group", pad_threads(c));
    }
    if (uses_delta(c)) {
        plan_int(p, "DELTA_ROWS", "lora_delta: rows per work-group",
                 c->delta_rows);
        plan_int(p, "DELTA_THREADS", "lora_delta: work-items per work-group",
                 c->delta_threads);
    }
}

/* The .cl prelude's #defines (the local memory the kernels take follows
 * the launches: plan_local_bytes) and NAME.h's constants. */
static void plan_prelude(const struct kernel_spec *ks, const struct lora *c,
                         struct plan *p)
{
    plan_shape(ks, c, p);
    plan_int(p, "XA_INLINE", "1: lora_main computes X*A itself",
             c->xa == XA_INLINE);
    plan_tile_defines(c, p);
    plan_xa_defines(c, p);
    plan_split_defines(c, p);
    plan_decode_defines(c, p);
    plan_pad_delta_defines(c, p);
    plan_storage(p, ks);

    plan_public_int(p, "IN_FEATURES", "K: columns of x, rows of w and a",
                    c->K);
    plan_public_int(p, "OUT_FEATURES", "N: columns of w, b and y", c->N);
    plan_public_int(p, "RANK", "r: columns of a, rows of b", c->R);
    plan_public_float(p, "SCALE", "factor of (x*a)*b", spec_lora_scale(ks));
}

/* lora_xa, or on tensor cores lora_xa_mma (a warp per 16 rows), with
 * XA_SPLIT work-groups along K: as many partial sums of T. */
static void launch_xa(const struct lora *c, struct launch *l)
{
    static const char *const args[] = {"rows", "x", "a", "scratch", NULL};
    l->dims = 2;
    if (uses_mma(c)) {
        l->kernel = "lora_xa_mma";
        l->local[0] = (size_t)(2 * c->xa_m);
        l->local[1] = 1;
    } else {
        l->kernel = "lora_xa";
        l->local[0] = (size_t)c->xa_k;
        l->local[1] = (size_t)(c->xa_m / xa_rows_per_item(c));
    }
    l->groups[0] = (size_t)xa_split(c);
    l->groups[1] = 0;
    l->rows_per_group = (size_t)c->xa_m;
    lora_copy_args(l, args);
}

/* lora_expand and lora_combine: THREADS work-items along N, WIDTH columns
 * each, ROWS rows per work-group. */
static void launch_rows(const struct lora *c, struct launch *l,
                        const char *kernel, long threads, long width,
                        long rows, const char *const *args)
{
    l->kernel = kernel;
    l->dims = 2;
    l->local[0] = (size_t)threads;
    l->local[1] = 1;
    l->groups[0] = (size_t)ceil_div(c->N, threads * width);
    l->groups[1] = 0;
    l->rows_per_group = (size_t)rows;
    lora_copy_args(l, args);
}

static void launch_expand(const struct lora *c, struct launch *l)
{
    static const char *const args[] = {"rows", "b", "y", "scratch", NULL};
    launch_rows(c, l, "lora_expand", expand_threads(c), expand_vec(c),
                expand_rows(c), args);
}

/* lora_main, or with SLICES > 1 lora_main_split over that many slices of
 * K: a work-group per slice and tile; lora_main_padded (SLICES 1, the
 * scratch holding the copies). */
static void launch_main(const struct lora *c, struct launch *l, long slices,
                        int padded)
{
    int n = 0;
    l->kernel = padded        ? "lora_main_padded"
                : slices > 1 ? "lora_main_split"
                             : "lora_main";
    l->dims = 2;
    l->local[0] = (size_t)(c->n / c->wn);
    l->local[1] = (size_t)(c->m / c->wm);
    l->groups[0] = (size_t)(ceil_div(c->N, c->n) * slices);
    l->groups[1] = 0;
    l->rows_per_group = (size_t)c->m;
    l->args[n++] = "rows";
    l->args[n++] = "x"; /* lora_main runs with base or inline X*A */
    if (c->base) {
        l->args[n++] = "w";
    }
    if (c->xa == XA_INLINE) {
        l->args[n++] = "a";
    }
    l->args[n++] = "b";
    l->args[n++] = "y";
    if (c->xa == XA_PREPASS) {
        l->args[n++] = "scratch";
    }
    l->args[n] = NULL;
}

/* lora_pad_x: a work-item per 4 elements of a row of X's copy, a row of
 * work-groups per row; lora_pad_w: the same over W's rows (K, or to a
 * whole K step) and B's R. */
static void launch_pad(const struct lora *c, struct launch *l, int x)
{
    static const char *const x_args[] = {"rows", "x", "scratch", NULL};
    static const char *const w_args[] = {"rows", "w", "b", "scratch", NULL};
    long threads = pad_threads(c);
    l->kernel = x ? "lora_pad_x" : "lora_pad_w";
    l->dims = 2;
    l->local[0] = (size_t)threads;
    l->local[1] = 1;
    l->groups[0] =
        (size_t)ceil_div(ceil_div(x ? x_padded(c) : c->N, 4), threads);
    l->groups[1] = x ? 0 : (size_t)(w_rows_padded(c) + c->R);
    l->rows_per_group = 1;
    lora_copy_args(l, x ? x_args : w_args);
}

/* lora_combine: the sum of SLICES slices' partial sums. */
static void launch_combine(const struct lora *c, struct launch *l,
                           long slices)
{
    static const char *const args[] = {"rows", "slices", "y", "scratch",
                                       NULL};
    launch_rows(c, l, "lora_combine", row_threads(c, c->vec), c->vec, 1,
                args);
    l->slices = (int)slices;
}

/* lora_mma (with WGMMA lora_wgmma), or with SLICES > 1 lora_mma_split
 * (lora_wgmma_split) over that many slices of K: a work-group per slice
 * and tile. */
static void launch_mma(const struct lora *c, struct launch *l, long slices,
                       int wgmma)
{
    int n = 0;
    l->kernel = slices > 1 ? (wgmma ? "lora_wgmma_split" : "lora_mma_split")
                : wgmma    ? "lora_wgmma"
                           : "lora_mma";
    l->dims = 2;
    l->local[0] = (size_t)(wgmma ? wgmma_threads(c) : mma_threads(c));
    l->local[1] = 1;
    l->groups[0] = (size_t)(ceil_div(c->N, c->n) * slices);
    l->groups[1] = 0;
    l->rows_per_group = (size_t)(wgmma ? c->wg_m : c->m);
    l->args[n++] = "rows";
    l->args[n++] = "x";
    l->args[n++] = "w";
    l->args[n++] = "b";
    l->args[n++] = "y";
    l->args[n++] = "scratch";
    l->args[n] = NULL;
}

static void launch_decode(const struct lora *c, struct launch *l)
{
    int n = 0;
    l->kernel = "lora_decode";
    l->dims = 2;
    l->local[0] = (size_t)c->decode_n;
    l->local[1] = (size_t)c->decode_k;
    l->groups[0] = (size_t)ceil_div(c->N, c->decode_n * decode_vec(c));
    l->groups[1] = 0;
    l->rows_per_group = (size_t)c->decode_rows;
    l->args[n++] = "rows";
    l->args[n++] = "x";
    if (c->base) {
        l->args[n++] = "w";
    }
    l->args[n++] = "a";
    l->args[n++] = "b";
    l->args[n++] = "y";
    l->args[n] = NULL;
}

/* lora_decode_mma or lora_decode_split: a work-group per slice of K and
 * strip of W (one more for A's), per dmma_rows or dsplit_rows rows. */
static void launch_decode_parts(const struct lora *c, struct launch *l)
{
    static const char *const args[] = {"rows", "x", "w", "a", "scratch",
                                       NULL};
    int mma = uses_decode_mma(c);
    l->kernel = mma ? "lora_decode_mma" : "lora_decode_split";
    l->dims = 2;
    l->local[0] = (size_t)(mma ? 32 * c->decode_warps : c->decode_cols);
    l->local[1] = 1;
    l->groups[0] =
        (size_t)(decode_strips(c) * c->decode_slices);
    l->groups[1] = 0;
    l->rows_per_group = (size_t)(mma ? dmma_rows(c) : dsplit_rows(c));
    lora_copy_args(l, args);
}

static void launch_decode_sum(const struct lora *c, struct launch *l)
{
    static const char *const args[] = {"rows", "b", "y", "scratch", NULL};
    launch_rows(c, l, "lora_decode_sum", row_threads(c, c->vec), c->vec, 1,
                args);
}

/* A path of P up to MAX_ROWS: lora_delta over SLICES work-groups along
 * N. */
static void add_delta_path(const struct lora *c, struct plan *p,
                           long max_rows, long slices, const char *why)
{
    static const char *const args[] = {"rows", "x", "a", "b", "y", NULL};
    struct path *dp = &p->path[p->n_path++];
    dp->max_rows = max_rows;
    dp->why = why;
    dp->n_launch = 1;
    struct launch *l = &dp->launch[0];
    l->kernel = "lora_delta";
    l->dims = 2;
    l->local[0] = (size_t)c->delta_threads;
    l->local[1] = 1;
    l->groups[0] = (size_t)slices;
    l->groups[1] = 0;
    l->rows_per_group = (size_t)c->delta_rows;
    lora_copy_args(l, args);
}

/* The local memory of each kernel P launches, as the checks above count
 * it: the templates #error when their arrays take another size, so the
 * limits checked here are the ones the kernels meet. */
static void plan_local_bytes(const struct lora *c, struct plan *p)
{
    static const char *const kernel[] = {"lora_main", "lora_xa",
                                         "lora_expand", "lora_decode",
                                         "lora_mma", "lora_xa_mma",
                                         "lora_delta", "lora_decode_mma",
                                         "lora_decode_split", "lora_wgmma"};
    /* lora_combine uses none. */
    static const char *const name[] = {"MAIN_LOCAL_BYTES", "XA_LOCAL_BYTES",
                                       "EXPAND_LOCAL_BYTES",
                                       "DECODE_LOCAL_BYTES",
                                       "MMA_LOCAL_BYTES",
                                       "XA_MMA_LOCAL_BYTES",
                                       "DELTA_LOCAL_BYTES",
                                       "DMMA_LOCAL_BYTES",
                                       "DSPLIT_LOCAL_BYTES",
                                       "WG_LOCAL_BYTES"};
    long bytes[] = {main_local(c, c->xa), xa_local(c),
                    4 * expand_rows(c) * c->R, decode_local(c), mma_local(c),
                    xa_mma_local(c), delta_local(c), dmma_local(c),
                    dsplit_local(c), wgmma_local(c)};
    for (size_t k = 0; k < sizeof kernel / sizeof kernel[0]; k++) {
        /* lora_main_split and lora_main_padded share main_tiles.cl */
        int main_tiles = k == 0 && (plan_launches(p, "lora_main_split") ||
                                    plan_launches(p, "lora_main_padded"));
        if (plan_launches(p, kernel[k]) || main_tiles) {
            plan_int(p, name[k], "local memory the plan counted", bytes[k]);
        }
    }
}

/* The most rows the paths of P so far take. */
static long rows_before(const struct plan *p)
{
    long most = 0;
    for (int i = 0; i < p->n_path; i++) {
        most = p->path[i].max_rows > most ? p->path[i].max_rows : most;
    }
    return most;
}

/* A new path of P, empty, up to MAX_ROWS (0: any rows). */
static struct path *add_path(struct plan *p, long max_rows, const char *why)
{
    struct path *pa = &p->path[p->n_path++];
    pa->max_rows = max_rows;
    pa->n_launch = 0;
    pa->why = why;
    return pa;
}

/* The next launch of PA. */
static struct launch *add_launch(struct path *pa)
{
    return &pa->launch[pa->n_launch++];
}

/* The buffers of the host API, in order: x, w, a, b, y. */
static void plan_buffers(const struct lora *c, struct plan *p)
{
    plan_buffer(p, "x", c->K, 0, 0);
    plan_buffer_doc(p, "[rows][in_features]", NULL);
    plan_buffer(p, "w", 0, c->K * c->N, !c->base);
    plan_buffer_doc(p, "[in_features][out_features]",
                    "PyTorch and PEFT keep the base layer's weight as "
                    "[out_features][in_features]: pass its transpose "
                    "(transposed once, when the weights are loaded)");
    lora_plan_adapter_buffers(p, c->K, c->N, c->R);
    plan_buffer(p, "y", c->N, 0, 0);
    plan_buffer_role(p, c->accumulate ? BUFFER_INOUT : BUFFER_OUT);
    plan_buffer_doc(p, "[rows][out_features]", NULL);
}

/* The paths for the fewest rows: lora_decode; lora_decode_mma or
 * lora_decode_split with lora_decode_sum; lora_delta (base: false). */
static void add_few_rows_paths(const struct lora *c, struct plan *p)
{
    if (decode_upto(c) > 0) { /* decode_max: 0 runs no lora_decode */
        struct path *pa =
            add_path(p, c->decode_max,
                     "few rows, one launch: a work-group per decode_rows "
                     "rows streams W, T = scale*X*A alongside");
        launch_decode(c, add_launch(pa));
    }
    if (uses_decode_mma(c) || uses_decode_split(c)) {
        struct path *pa =
            add_path(p, few_upto(c),
                     uses_decode_mma(c)
                         ? "few rows on tensor cores: X*W and X*A over "
                           "slices of K in strips, then their sums with T*B"
                         : "few rows: X*W and X*A over slices of K, a "
                           "work-item per column, then their sums with "
                           "T*B");
        launch_decode_parts(c, add_launch(pa));
        launch_decode_sum(c, add_launch(pa));
    }
    if (delta_split_upto(c) > 0) {
        add_delta_path(c, p, delta_split_upto(c), c->delta_split,
                       "fewer rows without W, one launch: a work-group per "
                       "delta_rows rows and slice of N computes their T = "
                       "scale*X*A on chip, then its slice of Y = T*B");
    }
    if (uses_delta(c)) {
        add_delta_path(c, p, c->delta_max, 1,
                       "few rows without W, one launch: a work-group per "
                       "delta_rows rows computes their T = scale*X*A on "
                       "chip, then Y = T*B");
    }
}

/* The split path's bands (lora_main or lora_mma over slices of K), then
 * lora_wgmma_split's, each summed by lora_combine. */
static void add_split_paths(const struct lora *c, struct plan *p)
{
    long slices[SPLIT_BANDS], upto[SPLIT_BANDS];
    for (int i = 0, n = split_bands(c, slices, upto); i < n; i++) {
        struct path *sp =
            add_path(p, upto[i],
                     "few rows for the tiles: T = scale*X*A, the tiled GEMM "
                     "over slices of K, then their sum");
        launch_xa(c, add_launch(sp));
        if (uses_mma(c)) {
            launch_mma(c, add_launch(sp), slices[i], 0);
        } else {
            launch_main(c, add_launch(sp), slices[i], 0);
        }
        launch_combine(c, add_launch(sp), slices[i]);
    }
    for (int i = 0, n = wg_split_bands(c, slices, upto); i < n; i++) {
        struct path *sp =
            add_path(p, upto[i],
                     "few rows for lora_wgmma's tiles: T = scale*X*A, the "
                     "GEMM on warpgroups over slices of K, then their sum");
        launch_xa(c, add_launch(sp));
        launch_mma(c, add_launch(sp), slices[i], 1);
        launch_combine(c, add_launch(sp), slices[i]);
    }
}

/* On warpgroups, up to 1.5 x wg_m rows, lora_mma's tiles of m rows:
 * lora_wgmma's second row of tiles would run mostly empty (bf16 on the
 * H100 through the stub, lora_wgmma against lora_mma: llama-up at 257 /
 * 384 rows 160.4 / 167.3 us against 119.3 / 118.9, llama-q 90.1 / 89.9
 * against 82.6 / 84.1; past it lora_wgmma wins: up at 512 rows 167.4
 * against 185.8, q at 768 94.1 against 116.6). Nor while lora_mma's tiles
 * fit in SPLIT_GROUPS / 2 work-groups (llama-q at 512 rows: 85.4 against
 * 90.6). */
static void add_mma_tiles_path(const struct lora *c, struct plan *p)
{
    long below = p->n_path > 0 ? p->path[p->n_path - 1].max_rows : 0;
    long mma_upto = c->wg_m * 3 / 2;
    long mma_rows = c->m * (SPLIT_GROUPS / 2 / ceil_div(c->N, c->n));
    mma_upto = mma_rows > mma_upto ? mma_rows : mma_upto;
    if (uses_wgmma(c) && mma_upto > below) {
        struct path *pm =
            add_path(p, mma_upto,
                     "rows that lora_wgmma's tiles would leave part empty: "
                     "T = scale*X*A, then [X | T]*[W ; B] on lora_mma's "
                     "tiles");
        launch_xa(c, add_launch(pm));
        launch_mma(c, add_launch(pm), 1, 0);
    }
}

/* From pad_rows rows lora_main over padded copies; below them (where no
 * path before takes those rows) over X, W and B as they are. */
static void add_padded_paths(const struct lora *c, struct plan *p)
{
    if (c->pad_rows - 1 > rows_before(p)) {
        struct path *pa =
            add_path(p, c->pad_rows - 1,
                     "T = scale*X*A, then the tiled GEMM over [X | T]");
        launch_xa(c, add_launch(pa));
        launch_main(c, add_launch(pa), 1, 0);
    }
    struct path *pa =
        add_path(p, 0,
                 "T = scale*X*A, copies of X, W and B with rows padded to "
                 "multiples of 4, then the tiled GEMM over them");
    launch_xa(c, add_launch(pa));
    if (pads_w(c)) {
        launch_pad(c, add_launch(pa), 0);
    }
    if (pads_x(c)) {
        launch_pad(c, add_launch(pa), 1);
    }
    launch_main(c, add_launch(pa), 1, 1);
}

/* The path for any rows (after the padded copies' first rows, where they
 * run): on tensor cores, through lora_expand, or lora_main's tiles. */
static void add_tiled_paths(const struct lora *c, struct plan *p)
{
    struct path *pa;
    if (uses_mma(c)) {
        pa = add_path(p, 0,
                      c->base ? "T = scale*X*A, then [X | T]*[W ; B] on "
                                "tensor cores"
                              : "T = scale*X*A on tensor cores, then Y = "
                                "T*B row by row");
        launch_xa(c, add_launch(pa));
        if (c->base) {
            launch_mma(c, add_launch(pa), 1, uses_wgmma(c));
        } else {
            launch_expand(c, add_launch(pa));
        }
    } else if (uses_expand(c)) {
        pa = add_path(p, 0, "T = scale*X*A, then Y = T*B row by row");
        launch_xa(c, add_launch(pa));
        launch_expand(c, add_launch(pa));
    } else if (uses_padded(c)) {
        add_padded_paths(c, p);
    } else if (c->xa == XA_PREPASS) {
        pa = add_path(p, 0, "T = scale*X*A, then the tiled GEMM over [X | T]");
        launch_xa(c, add_launch(pa));
        launch_main(c, add_launch(pa), 1, 0);
    } else {
        pa = add_path(p, 0, "tiled GEMM, X*A computed alongside");
        launch_main(c, add_launch(pa), 1, 0);
    }
}

/* The prelude, buffers and paths of lora_plan, fewest rows first. */
static void lora_plan_launches(const struct kernel_spec *ks, struct plan *p)
{
    struct lora c;
    lora_read(ks, &c);
    plan_prelude(ks, &c, p);
    plan_buffers(&c, p);
    p->n_path = 0;
    add_few_rows_paths(&c, p);
    add_split_paths(&c, p);
    add_mma_tiles_path(&c, p);
    add_tiled_paths(&c, p);
    plan_local_bytes(&c, p);
    if (uses_mma(&c)) {
        p->needs = uses_wgmma(&c) ? NEEDS_SM90A : NEEDS_TENSOR_CORES;
    }
}

static void lora_plan(const struct kernel_spec *ks, struct plan *p)
{
    struct lora c;
    lora_plan_launches(ks, p);
    lora_read(ks, &c);
    for (int i = 0; i < p->n_path; i++) {
        path_scratch(&c, &p->path[i]);
    }
}

/* What `specl tune` searches, most important first (the first two are the
 * axes of its plot); the constraints between them are validate()'s. */
static const struct tune_axis lora_tune_space[] = {
    {"m", "32 64 128"},
    {"n", "32 64 128 256"},
    {"k", "8 16 32 64"},
    {"wm", "4 8 32 64"},
    {"wn", "4 8 32 64"},
    {"warp_n", "0 8"},
    {"xa", "prepass inline"},
    /* tensor cores: f16 and bf16 with K and N multiples of 8 (validate()
     * rejects mma elsewhere, and wm, wn past 16 for simt; the tuner
     * wgmma off compute capability 9.0). lora_wgmma's wg_m and wg_stages
     * stay at their defaults: as axes they made the space four times as
     * large, for tiles the lab had already timed (lora_wgmma_tiles.cl). */
    {"engine", "simt mma wgmma"},
    {"stages", "2 3 4"},
    {NULL, NULL},
};

/* The paths below the rows `specl tune` measures (lora_decode,
 * lora_decode_mma, lora_delta, the split path). */
static const char *const lora_few_rows_knobs[] = {
    "decode_rows", "decode_max",    "decode_n",    "decode_k",
    "decode_mma_max", "decode_split_max", "decode_slices", "decode_cols",
    "decode_warps",
    "split_k",     "split_max",     "wg_split_max", "delta_rows",
    "delta_max",   "delta_split",   "delta_threads", NULL};

/* ---- checking and measuring ------------------------------------------ */

/* The buffers in plan order (lora_plan). */
enum { BUF_X, BUF_W, BUF_A, BUF_B, BUF_Y };

/* Row by row: T = scale * X*A, then Y = (Y +) X*W + T*B. */
static int lora_reference(const struct kernel_spec *ks,
                          const float *const *in, size_t rows,
                          double *const *out)
{
    double *y = out[BUF_Y];
    struct lora c;
    lora_read(ks, &c);
    size_t K = (size_t)c.K, N = (size_t)c.N, R = (size_t)c.R;
    double scale = emitted_float(spec_lora_scale(ks));
    const float *x = in[BUF_X], *w = c.base ? in[BUF_W] : NULL;
    const float *a = in[BUF_A], *b = in[BUF_B], *y0 = in[BUF_Y];
    double *t = calloc(R ? R : 1, sizeof *t);
    double *row = calloc(N, sizeof *row);
    if (t == NULL || row == NULL) {
        free(t);
        free(row);
        return -1;
    }
    for (size_t m = 0; m < rows; m++) {
        const float *xm = x + m * K;
        lora_reference_t(xm, a, K, R, scale, t);
        for (size_t n = 0; n < N; n++) {
            row[n] = c.accumulate ? y0[m * N + n] : 0.0;
        }
        for (size_t k = 0; c.base && k < K; k++) {
            double xv = xm[k];
            const float *wk = w + k * N;
            for (size_t n = 0; n < N; n++) {
                row[n] += xv * wk[n];
            }
        }
        for (size_t j = 0; j < R; j++) {
            for (size_t n = 0; n < N; n++) {
                row[n] += t[j] * b[j * N + n];
            }
        }
        memcpy(y + m * N, row, N * sizeof *row);
    }
    free(t);
    free(row);
    return 0;
}

/* naive_xa: T = scale * X*A into the scratch, one work-item per element;
 * then naive_lora: Y (+)= X*W + T*B, one work-item per element. */
static void lora_naive(const struct kernel_spec *ks, struct plan *p)
{
    struct lora c;
    lora_read(ks, &c);
    plan_shape(ks, &c, p);
    plan_dtype(p, ks->dtype);
    p->path[0].scratch_per_row = c.R;
    const char *const xa_args[] = {"rows", "x", "a", "scratch", NULL};
    /* w is unread without the base (and may be NULL): x stands in. */
    const char *const lora_args[] = {"rows", "x", c.base ? "w" : "x",
                                     "scratch", "b", "y", NULL};
    naive_launch(p, "naive_xa", c.R, xa_args);
    naive_launch(p, "naive_lora", c.N, lora_args);
}

/* Every buffer once (y twice to accumulate); the three products. */
static void lora_costs(const struct kernel_spec *ks, size_t rows,
                       double *bytes, double *flops)
{
    struct lora c;
    lora_read(ks, &c);
    double M = (double)rows;
    double K = (double)c.K, N = (double)c.N, R = (double)c.R;
    *bytes = plan_io_bytes(ks, rows);
    if (c.accumulate) {
        *bytes += (double)(rows * (size_t)c.N) * (double)dtype_size(ks->dtype);
    }
    double base = c.base ? 2 * M * K * N : 0;
    *flops = base + 2 * M * K * R + 2 * M * R * N;
}

static void lora_shape_text(const struct kernel_spec *ks, size_t rows,
                            char *buf, size_t size)
{
    struct lora c;
    lora_read(ks, &c);
    lora_shape_line(buf, size, rows, c.K, c.N, c.R, c.base ? "" : " delta",
                    c.accumulate);
}

/* What one would write without specl: Y = X*W (added to Y to accumulate),
 * T = scale*X*A, Y += T*B. */
static void lora_blas_peer(const struct kernel_spec *ks, size_t rows,
                           struct gemm_chain *g)
{
    struct lora c;
    lora_read(ks, &c);
    size_t K = (size_t)c.K, N = (size_t)c.N, R = (size_t)c.R;
    double beta = c.accumulate ? 1 : 0;
    g->temp_per_row = R;
    g->n_gemm = 0;
    if (c.base) {
        g->gemm[g->n_gemm++] = (struct gemm){rows, N, K, 1, beta,
                                             "x", "w", "y", 0, 0};
        beta = 1;
    }
    lora_peer_t(g, rows, K, R, emitted_float(spec_lora_scale(ks)));
    g->gemm[g->n_gemm++] = (struct gemm){rows, N, R, 1, beta,
                                         "temp", "b", "y", 0, 0};
}

/* Each is templates/NAME.cl; their shared part is lora_common.cl. */
static const char *const lora_kernels[] = {
    "lora_main",   "lora_main_split", "lora_xa",      "lora_expand",
    "lora_decode", "lora_mma",        "lora_mma_split", "lora_xa_mma",
    "lora_combine", "lora_delta",     "lora_decode_mma", "lora_decode_sum",
    "lora_decode_split", "lora_main_padded", "lora_pad_x", "lora_pad_w",
    "lora_wgmma", "lora_wgmma_split", NULL};

const struct op_def op_lora_forward = {
    .name = "lora_forward",
    .summary = "Y (+)= X*W + scale*(X*A)*B: LoRA linear layer, rows at run "
               "time",
    .kernels = lora_kernels,
    .example = "in_features=4096 out_features=4096 rank=16",
    .fields = lora_fields,
    .n_fields = LORA_N_FIELDS,
    .knobs = lora_knobs,
    .n_knobs = LORA_N_KNOBS,
    .defaults = lora_defaults,
    .validate = lora_validate,
    .plan = lora_plan,
    .tune_space = lora_tune_space,
    .few_rows_knobs = lora_few_rows_knobs,
    .reference = lora_reference,
    .naive = lora_naive,
    .costs = lora_costs,
    .error_bound = lora_error_bound,
    .bench_rows = lora_bench_rows,
    .shape_text = lora_shape_text,
    .blas_peer = lora_blas_peer,
};
