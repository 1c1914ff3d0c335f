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
     * tuned configuration of every llama2-7b projection (128 work-items,
     * one barrier per 16 K). A spec that sets n = 64 gets 128 x 64.
     * Work-items keep 8 x 8 where the tile allows: fewer, fuller
     * work-items also suit CPUs. Small layers (K*N under 2^20, N <= 2048)
     * get 32 x 32 tiles of 4 x 4 per work-item: at a few hundred rows
     * large tiles leave most compute units idle, and K is too short to
     * split. Larger layers take the large tiles at any N, and their few
     * rows the split path (split_defaults; bench/RESULTS.md, "Layers up
     * to 16 MiB of W on GPUs"). */
    /* CPUs (PoCL): a CPU wants few, large work-groups whatever the
     * shape: 128 x 128 x 16 with 8 x 4 per work-item (its local memory
     * leaves no padding) and X*A as a pre-pass; layers under 2^20 weights
     * (cpu_small) and the delta without W keep 128 x 64 with X*A inline,
     * where the pre-pass's extra pass over X costs more than it saves
     * (bench/RESULTS.md, "CPU tiles"). */
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
     * tiles the prepass wins, on CPUs too but for their smallest layers
     * (above), and the split path needs it. */
    int one_block = ceil_div(c.N, c.n) == 1;
    int small = c.base && c.K * c.N <= (1L << 22);
    int fits = main_local(&c, XA_INLINE) <= LOCAL_MAX;
    int split = c.split_k > 1; /* its slices need all of T first */
    int inline_xa = one_block || (small && (simt_small_tiles(&c) ||
                                            simt_cpu_small(&c)));
    spec_knob_default(ks, "xa",
                      inline_xa && fits && !split ? XA_INLINE : XA_PREPASS);
}

/* lora_wgmma's tiles: 128 x 256 of Y per work-group (a warpgroup that
 * copies and two of 64 x 256 that multiply), K in steps of 64 in 4
 * stages (192 KiB of local memory): the fastest tried for X*W alone
 * (bench/lab/ws_gemm.c; bench/RESULTS.md, "lora_wgmma with a copying
 * warpgroup"). 256 x 128 makes 640 work-items, whose registers spill.
 * lora_mma's tiles (mma_defaults) stay for the split path. */
static void wgmma_defaults(struct kernel_spec *ks)
{
    spec_knob_default(ks, "wg_m", 128);
    spec_knob_default(ks, "wg_n", 256);
    spec_knob_default(ks, "wg_stages", 4);
}

/* lora_mma's tiles: 128 x 128 of Y per work-group in 4 warps of 64 x 64,
 * K in steps of 64, 2 stages: 64 KiB of local memory, which every device
 * of compute capability 8.0 and later grants (99 KiB or more). Fewer or
 * shallower stages wait on loads; wider tiles or more warps per tile
 * cost occupancy (bench/RESULTS.md, "Half precision on tensor cores").
 * T comes from lora_xa. */
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
    /* float32 on tf32: a K step's sums apart beside the accumulators
     * (mma_tiles.cl) take the registers of 64 x 64 */
    spec_knob_default(ks, "wn", min_l(c.half ? 64 : 32, c.n));
    spec_knob_default(ks, "stages", 2);
    spec_knob_default(ks, "xa", XA_PREPASS);
    if (c.engine == ENGINE_WGMMA) {
        wgmma_defaults(ks);
    }
}

/* The split path on GPUs. Few rows make few tiles, and a work-group alone
 * on its compute unit waits out each K step's loads whatever the rows.
 * Cut into slices of K, the tiles' chains run side by side; the time
 * follows how much of K each compute unit runs, and each slice count
 * falls behind once its work-groups pass one wave. So the SIMT split
 * path starts at as many slices as one row of tiles can take within a
 * wave (split_wave) and halves them as the rows grow (split_bands), up
 * to the rows whose tiles fill a wave in 2 slices; each slice at least
 * SPLIT_MIN_STEPS steps of K, below which the partial sums cost more
 * than the slices save (bench/RESULTS.md, "Split K" and "The split
 * path's slices halved as the rows grow"). The tensor cores' split path
 * starts from mma_split_default's count and halves it the same way. */
#define SPLIT_MIN_STEPS 16

/* The tensor cores' tiles of m x n make fewer than TILES_FEW work-groups
 * over ROWS rows: too few to keep a device busy, so that lora_decode, a
 * work-group per block of rows and strip of N, takes those rows in one
 * launch as it does without tensor cores (bench/RESULTS.md, "The seeds'
 * small shapes in bf16"). */
#define TILES_FEW 8
static int tiles_few(const struct lora *c, long rows)
{
    return uses_mma(c) && c->base &&
           ceil_div(c->N, c->n) * ceil_div(rows, c->m) < TILES_FEW;
}

/* Few rows on tensor cores: lora_decode_mma in strips of 64 columns by 8
 * warps, with as many slices of K as bring the strips to about
 * DMMA_GROUPS_PER_UNIT work-groups a compute unit at one block of 32
 * rows, enough loads in flight to stream W near a read of its bytes
 * alone; each warp at least DMMA_MIN_STEPS steps of 16 values of K (the
 * slices halve as the blocks double: dmma_bands). One block of up to 32
 * rows where W passes the cache: a second block reads W again from
 * memory; where it fits, DMMA_CACHED_BLOCKS blocks, the later ones
 * reading W from the cache. lora_decode (one launch) keeps the rows
 * where it is as fast: 4 at N <= 4096, 1 above, and its block of 8 rows
 * where W fits in a quarter of the cache (decode_reach; bench/RESULTS.md,
 * "Few rows on tensor cores: lora_decode_mma" and "lora_decode_mma in one
 * launch"). */
#define DMMA_GROUPS_PER_UNIT 2
#define DMMA_MIN_STEPS 2
#define DMMA_CACHED_BLOCKS 4
static void decode_mma_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    int asked = spec_knob_set(ks, "decode_mma_max");
    if (!uses_lora_mma(&c) || !c.half || (asked && c.decode_mma_max == 0) ||
        (!asked && (ks->target == TARGET_CPU || c.R % 8 != 0 || c.R > 64 ||
                    c.decode_rows == 0 || spec_knob_set(ks, "decode_max") ||
                    tiles_few(&c, c.decode_max)))) {
        return;
    }
    long groups = ceil_div(c.N, c.decode_cols); /* strips of W */
    long steps = ceil_div(c.K, 16);
    long most = DMMA_GROUPS_PER_UNIT * device_wave_units(c.dev);
    long slices = pow2_ceil(most / groups < 1 ? 1 : most / groups);
    while (slices > 1 && steps / (slices * c.decode_warps) < DMMA_MIN_STEPS) {
        slices /= 2;
    }
    spec_knob_default(ks, "decode_slices", slices);
    long w_bytes = c.K * c.N * (long)dtype_size(ks->dtype);
    long keep = w_bytes < device_cache_share(c.dev, 4) ? c.decode_rows
                : c.N > 4096                                ? 1
                                                            : 4;
    if (asked && keep >= c.decode_mma_max) {
        keep = c.decode_mma_max - 1;
    }
    spec_knob_default(ks, "decode_max", keep);
    spec_knob_default(ks, "decode_mma_max",
                      w_bytes <= device_cache_share(c.dev, 1)
                          ? DMMA_CACHED_BLOCKS * 32
                          : 32);
}

/* Few rows of f32 layers whose W passes half of the cache on GPUs (where
 * lora_decode would take 32 rows in two blocks of 16, each reading W
 * from memory): lora_decode_split from 9 rows (5 where N > 4096, 3 where
 * N > 4096 is also odd) to 32, in slices of K as short as the slice of
 * X's 32 rows in 32 KiB of local memory allows (256 values of K; below),
 * strips of 128 columns (256 where N > 4096). Below those rows one
 * launch of lora_decode reads W as fast (bench/RESULTS.md, "Few rows
 * over slices of K without tensor cores"). Half storage on such GPUs
 * keeps lora_decode (not measured). */
#define DSPLIT_GROUPS_PER_UNIT 4
static void decode_split_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    if (xa_on_mma(&c) || !c.base || spec_knob_set(ks, "decode_split_max") ||
        spec_knob_set(ks, "decode_max") || ks->target == TARGET_CPU ||
        ks->dtype != DTYPE_F32 || c.decode_rows == 0 || c.R > 1024 ||
        c.K * c.N * 4 <= device_cache_share(c.dev, 2)) {
        return;
    }
    long cols = c.N > 4096 ? 256 : 128;
    spec_knob_default(ks, "decode_cols", cols < c.R ? pow2_ceil(c.R) : cols);
    /* As many slices as K has 256 values where they and the strips make
     * DSPLIT_GROUPS_PER_UNIT work-groups a compute unit or more: fewer
     * partial sums to write and add than at the next power of two. Fewer
     * work-groups keep the power of two (not measured). */
    lora_read(ks, &c); /* decode_cols as chosen above */
    long slices = ceil_div(c.K, 256);
    long enough = DSPLIT_GROUPS_PER_UNIT * device_wave_units(c.dev);
    spec_knob_default(ks, "decode_slices", slices * decode_strips(&c) >= enough
                                               ? slices
                                               : pow2_ceil(slices));
    spec_knob_default(ks, "decode_split_max", 32);
    spec_knob_default(ks, "decode_max", c.N <= 4096 ? 8 : c.vec == 4 ? 4 : 2);
    /* Where those 2 rows gather W in 4-byte loads (K or N odd), blocks of
     * 4 rows: the kernel's registers follow its largest block (one
     * work-group per compute unit at 16 rows), not the rows it runs. With
     * 16-byte loads the larger blocks were slower (bench/RESULTS.md,
     * "Decode of odd widths: lora_decode in blocks of 4 rows"). */
    if (c.N > 4096 && c.vec != 4 && !spec_knob_set(ks, "decode_n") &&
        !spec_knob_set(ks, "decode_k")) {
        spec_knob_default(ks, "decode_rows", 4);
    }
}

/* The split path on tensor cores: lora_mma_split's slices bring the
 * tiles of one row of tiles to about a wave of work-groups (mma_wave),
 * each slice at least SPLIT_MMA_MIN_STEPS steps of K. Past two waves the
 * tiles unsplit win (bench/RESULTS.md, "The tensor-core GEMM over slices
 * of K at few rows"), so the path runs while its work-groups stay within
 * two waves. Returns the slices, or 0 where the path does not run (the
 * spec's split_k decides where given). */
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
 * of lora_wgmma's tiles fit in a wave (wg_wave), wg_split_slices each:
 * there it beats lora_mma_split then lora_mma; past a wave, and under
 * half of one row of tiles, it loses (bench/RESULTS.md, "lora_wgmma_split"). */
static void wg_split_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    if (!uses_wgmma(&c) || !uses_xa(&c) ||
        ceil_div(c.K, c.k) / SPLIT_MMA_MIN_STEPS < 2) {
        return;
    }
    long t = wg_wave(&c) / (2 * ceil_div(c.N, c.wg_n)); /* rows of tiles */
    long most = t * c.wg_m;
    spec_knob_default(ks, "wg_split_max", most > split_upto(&c) ? most : 0);
}

/* On warpgroups, up to 1.5 x wg_m rows, lora_mma's tiles of m rows:
 * lora_wgmma's second row of tiles would run mostly empty; past it
 * lora_wgmma wins. Nor while lora_mma's tiles fit in one work-group per
 * compute unit (bench/RESULTS.md). */
static void mma_max_defaults(struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    if (!uses_wgmma(&c)) {
        return;
    }
    long most = c.wg_m * 3 / 2;
    long wave = c.m * (device_wave_units(c.dev) / ceil_div(c.N, c.n));
    spec_knob_default(ks, "mma_max", wave > most ? wave : most);
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
         * wave: the split won where they filled a quarter to a third of
         * one and lost from half (bench/RESULTS.md, "The tensor-core GEMM
         * over slices of K at few rows"). */
        long alone = 2 * mma_wave(&c) / (5 * col_tiles);
        /* Float32's tiles on tf32 take three products a product: the
         * split still won where they alone filled half a wave (llama-q
         * at 192 and 256 rows: 1.2-1.6x), so up to a whole wave. */
        if (!c.half) {
            alone = mma_wave(&c) / col_tiles;
        }
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
    long two = split_wave(&c) / (2 * col_tiles) * c.m;
    if (!spec_knob_set(ks, "split_k") && ks->target != TARGET_CPU &&
        uses_main(&c) && uses_xa(&c) && c.base && two > decode) {
        long most = ceil_div(c.K, c.k) / SPLIT_MIN_STEPS;
        long split = pow2_floor(split_wave(&c) / col_tiles);
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
 * the first rows lora_main takes (the copy of W costs the same at any
 * rows and pays already at one wave of tiles), on CPUs from 64 rows,
 * below which the copies cost more than the wider loads save
 * (bench/RESULTS.md, "Odd K and N"). */
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
 * lora_xa + lora_expand, which read them once per stretch of rows, win.
 * The crossover fell at about twice the cache's bytes of reads, larger
 * caches keeping more of the work-groups' reads near (bench/RESULTS.md,
 * "The rank stretch first; what the deltas' two kernels can reach"). */
static long delta_cache_reads(const struct lora *c)
{
    return 2 * device_cache_share(c->dev, 1);
}
#define DELTA_ROWS_MAX 4096L /* the most rows measured */

/* lora_delta's knobs, for base: false between lora_decode and lora_xa +
 * lora_expand. GPUs: 2 rows per work-group of 256 at rank 8, 2 of 128 at
 * rank 16, the most T that registers hold without spilling; CPUs: 4 rows
 * per 16 work-items, since PoCL runs a work-group's items one after
 * another. N in 4 slices on GPUs where N >= 2048, for more work-groups at
 * few rows (bench/RESULTS.md, "The delta in one launch"). */
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
           upto * 2 / c.delta_rows * per_group <= delta_cache_reads(&c)) {
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
 * (wgmma_defaults). Float32 with W, K and N multiples of 4, on wide
 * layers (gemm_tf32_default): the GEMM with W on their tf32 units (three
 * products a product), X*A and the few rows' paths the float kernels'. */
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
    if (c.base && gemm_tf32_default(ks, c.K, c.N)) {
        spec_knob_default(ks, "engine", ENGINE_MMA);
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
     * whose fewer registers keep more of W's 8-byte loads in flight; at
     * 16 to 32 rows two to four blocks each read W, which 16 by 32 avoids
     * (bench/RESULTS.md, "f16/bf16 decode in blocks of 8 rows"). */
    int half_gpu = c.half && !c.cpu;
    /* CPUs: blocks of 8 rows, one work-item along K (its rows need no
     * reduction across items; bench/RESULTS.md, "lora_decode on CPUs"). */
    spec_knob_default(ks, "decode_rows", half_gpu || c.cpu ? 8 : 16);
    /* 8 work-items along N, 4 columns each (by 32 or 64 along K on GPUs):
     * many work-groups and many loads in flight, for streaming W at
     * memory speed. */
    /* At least 2: with one work-item along N, PoCL computes wrong sums
     * (work-groups of 1 x 4 and up; 2 x 4 is right). */
    long lanes_n = pow2_ceil(ceil_div(c.N, decode_vec(&c)));
    spec_knob_default(ks, "decode_n", min_l(8, lanes_n < 2 ? 2 : lanes_n));
    /* 32 along K with or without W: without, T's reduction over K is the
     * work, and more work-items than the rank share it. f16/bf16: 64, but
     * down to 32 for 16 elements of K a work-item (bf16 at K = N = 512,
     * 128 rows: 11.2 us at 32 along K, 16.9 at 64; bench/RESULTS.md). */
    long per_vec = pow2_ceil(ceil_div(c.K, decode_vec(&c)));
    long half_k = min_l(64, max_l(32, pow2_ceil(ceil_div(c.K, 16))));
    spec_knob_default(ks, "decode_k",
                      c.cpu ? 1 : min_l(half_gpu ? half_k : 32, per_vec));
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
     * measured, bench/lab). */
    long w = 4;
    while (w > 1 && w * c.R > 64) {
        w /= 2;
    }
    /* lora_xa_mma: 64 rows a work-group (below: its stretches are long). */
    spec_knob_default(ks, "xa_m", xa_on_mma(&c) ? 64 : 32 * w);
    /* CPUs: one work-item along K, whose rows need no reduction across
     * items. */
    spec_knob_default(ks, "xa_k",
                      c.cpu ? 1 : min_l(8, pow2_ceil(ceil_div(c.K, c.vec))));
    lora_read(ks, &c);
    long step = c.xa_k * c.vec;
    if (spec_knob_set(ks, "xa_chunk")) {
        return;
    }
    /* 256 rows of A (16 KiB at rank 16): K = 4096 makes 16 stretches,
     * whole waves of work-groups at thousands of rows; the most 32 KiB
     * holds (480) makes uneven stretches and a last wave of a few
     * work-groups. */
    long chunk = min_l(256, ceil_div(c.K, step) * step);
    /* lora_xa_mma: all of K, cut below to what local memory holds. Each
     * work-group of lora_mma (and lora_expand) sums the partial sums of T
     * of every stretch: few long stretches leave it fewer to sum
     * (bench/RESULTS.md, "The tensor-core GEMM's rank stretch"). */
    if (xa_on_mma(&c)) {
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
    while (xa_on_mma(&c) && !spec_knob_set(ks, "xa_chunk") &&
           c.xa_chunk > 32 && xa_mma_local(&c) > LOCAL_MAX) {
        spec_knob_default(ks, "xa_chunk", c.xa_chunk - 32);
        lora_read(ks, &c);
    }
    while (!xa_on_mma(&c) && xa_local(&c) > LOCAL_MAX) {
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
 * per decode_rows rows, where one launch beats the tiled path. With W,
 * each block of rows reads W again, from the cache while W fits there:
 * up to 128 rows while W fits in a quarter of the cache, 64 in half of
 * it (where the split path takes over), 32 above, where each block reads
 * W from memory. Without W, where every work-group recomputes its rows
 * of T, up to the rows whose rows * K * N stays within
 * DECODE_WORK_PER_UNIT a compute unit (bench/RESULTS.md, "Small batches
 * in one launch" and "Layers up to 16 MiB of W on GPUs"). */
#define DECODE_WORK_PER_UNIT (1L << 20)
/* With tensor cores, lora_decode's blocks pay while they cost less than
 * the tiles' waves: a wave costs about the same at any rows up to 128, a
 * block about a read of W, so the blocks a wave outlasts fall as 1 / N;
 * at 7/8 of a wave's columns of 128-wide tiles over N (3.5 blocks per
 * wave at N = 4096 on 128 units), the memory that feeds the blocks
 * taken to grow with the units as across a GPU family (bench/RESULTS.md,
 * "f16/bf16 decode in blocks of 8 rows, reaching by N on tensor cores"). */
static long decode_blocks_per_wave(const struct lora *c)
{
    long units = device_wave_units(c->dev);
    long reach_n = 7 * units * 128 / 8;
    long waves = ceil_div(ceil_div(c->N, c->n), units);
    long blocks = (reach_n * waves + c->N / 2) / c->N; /* rounded */
    return blocks < 1 ? 1 : blocks;
}

static long decode_reach(const struct kernel_spec *ks, const struct lora *c)
{
    long w_bytes = c->K * c->N * (long)dtype_size(ks->dtype);
    long upto = w_bytes <= device_cache_share(c->dev, 4)   ? 128
                : w_bytes <= device_cache_share(c->dev, 2) ? 64
                                                           : 32;
    if (c->cpu) {
        /* Two blocks, where they beat the tiled path; past that,
         * unmeasured. */
        upto = 2 * c->decode_rows;
    }
    /* Where lora_decode_mma runs, decode_mma_defaults sets decode_max
     * again, below. */
    if (tiles_few(c, upto)) {
        /* as without tensor cores, above */
    } else if (mma_split_default(ks, c) > 1 && c->decode_rows > 0) {
        /* The tensor cores' split path (split_defaults) beats a second
         * block. */
        upto = c->decode_rows;
    } else if (uses_mma(c) && c->base && !c->cpu && c->decode_rows > 0) {
        long most = decode_blocks_per_wave(c) * c->decode_rows;
        upto = most < upto ? most : upto;
    }
    if (!c->base && !c->cpu) {
        long work = DECODE_WORK_PER_UNIT * device_wave_units(c->dev);
        upto = 1;
        while (upto * 2 <= work / (c->K * c->N) && upto < 4096) {
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
     * on GPUs, and only where K*N >= 2^22, where its blocks of 1 and 2
     * rows beat lora_delta's of 16; on CPUs none, lora_delta being far
     * ahead (bench/RESULTS.md, "lora_delta: base: false at few rows in one
     * launch"). */
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
    mma_max_defaults(ks);
    delta_defaults(ks);
    pad_defaults(ks);
}

/* CPUs at a few dozen rows: tiles of 32 x 128 rows and columns in steps
 * of 8 of K, 8 x 8 a work-item in warps of 8 along N (the best a ladder
 * tune found at 32 rows on PoCL). Against the CPU defaults' 128-row tiles
 * they ran 2.0-3.1x as fast at 32 rows and 1.2-3.1x at 64, from 256 x
 * 256 to 4096 x 4096 (f32, f16, bf16); 1.05-1.8x at 96, and at 128 they
 * lost on 5 of 8 layers (0.81-0.97x: those of 1024 x 1024 and up but the
 * f16 one), so they take calls of up to 96 rows (bench/RESULTS.md,
 * "lora_forward on CPUs at a few dozen rows" and "Every CPU's rows
 * range"). lora_decode keeps its 16 rows in either variant. Only with W:
 * without it no tile of lora_main runs. */
static int cpu_few_rows_applies(const struct kernel_spec *ks)
{
    struct lora c;
    lora_read(ks, &c);
    return c.base;
}

const struct cpu_few_rows lora_cpu_few_rows = {
    .max_rows = 96,
    .knobs = "m=32 n=128 k=8 wm=8 wn=8 warp_n=8",
    .applies = cpu_few_rows_applies,
};
