/* lora_defaults.c - lora_forward's shape-aware defaults: the values of the
 * knobs a spec leaves out, for its shape, dtype and target, each after
 * the ones it depends on (lora_defaults, at the end, lists the steps).
 * The measurements behind them are in bench/RESULTS.md. */
#include "lora_internal.h"

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
#define SPLIT_MIN_STEPS 16

/* The tensor cores' tiles of m x n make fewer than TILES_FEW work-groups
 * over ROWS rows: too few to keep a device busy, so that lora_decode, a
 * work-group per block of rows and strip of N, takes those rows in one
 * launch as it does without tensor cores (bf16, K = N = 512, 128 rows on
 * an H200: 17.3 us against 29.3 through lora_xa_mma and 4 tiles; at K = N
 * = 2048, 16 tiles, the tiles' 30.7 us against 85.5: bench/RESULTS.md). */
#define TILES_FEW 8
static int tiles_few(const struct lora *c, long rows)
{
    return uses_mma(c) && c->base &&
           ceil_div(c->N, c->n) * ceil_div(rows, c->m) < TILES_FEW;
}

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
                    c.decode_rows == 0 || spec_knob_set(ks, "decode_max") ||
                    tiles_few(&c, c.decode_max)))) {
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
        spec_knob_default(ks, "split_max",
                          most > decode ? most : decode + c.m);
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

/* The engine, then its tiles. Tensor cores, where the target offers them
 * (CAP_MMA_SYNC_BF16_F16) and they can run X*A and the GEMM with W; where
 * it offers wgmma too, that GEMM on warpgroups where N's tiles take them
 * (wgmma_defaults). */
static void engine_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    if (target_offers(ks->target, CAP_MMA_SYNC_BF16_F16) &&
        ks->dtype != DTYPE_F32 && c.K % 8 == 0 && (c.N % 8 == 0 || !c.base)) {
        int wgmma = target_offers(ks->target, CAP_WGMMA) && c.base &&
                    c.N >= 64;
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
    if (tiles_few(c, upto)) {
        /* as without tensor cores, above */
    } else if (mma_split_default(ks, c) > 1 && c->decode_rows > 0) {
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
void lora_defaults(struct kernel_spec *ks)
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
