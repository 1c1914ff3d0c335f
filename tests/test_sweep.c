/* test_sweep.c - shapes, ranks, options and tile configs of every op,
 * checked on the OpenCL device against the naive kernel and the float64
 * reference (numeric_util.c). The default run picks a covering set that
 * stays quick on a 2-core CPU; --full (make test-full) takes the cross
 * products, more tiles and more rows. Tile configs that validation rejects
 * are skipped and counted, as a tuner would. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "numeric_util.h"
#include "suites.h"

static const char *const dtypes[] = {"f32", "f16", "bf16"};
static const char *const row_ops[] = {"softmax", "rmsnorm", "layernorm"};

static const long ranks[] = {1, 4, 8, 16, 32, 64, 128};
#define N_RANKS 7
static const long features[] = {1, 3, 1000, 4095, 11008};
#define N_FEATURES 5

/* Multiply-adds of the naive kernel (and the float64 reference) per row
 * of a case; rows are cut to keep a case within the budget below. */
#define DEFAULT_MACS 2.5e8
#define FULL_MACS 3e9

#define MAX_WANT 12

/* Runs K over the distinct row counts >= 1 of WANT (N of them) whose cost
 * (MACS_PER_ROW each) keeps a case within the budget; 1 row always. */
static void run_within(struct nu_kernel *k, const long *want, int n_want,
                       double macs_per_row)
{
    size_t rows[MAX_WANT];
    int n = 0;
    double budget = test_full ? FULL_MACS : DEFAULT_MACS;
    for (int i = 0; i < n_want && i < MAX_WANT; i++) {
        if (want[i] == 1 || (double)want[i] * macs_per_row <= budget) {
            n = nu_rows_add(rows, n, want[i]);
        }
    }
    nu_run_rows(k, rows, n, nu_unit());
}

/* ---- lora_forward: shapes and ranks ------------------------------------ */

struct lora_case {
    long K, N, R;
    int base, accumulate;
    const char *tile; /* flow entries of `tile:`, "" for the defaults */
};

static double lora_macs(const struct lora_case *c)
{
    return (c->base ? (double)c->K * (double)c->N : 0) +
           (double)c->R * (double)(c->K + c->N);
}

/* Builds the lora kernel of C in dtype DT and runs it over rows around its
 * decode threshold and tile. A spec that validation rejects fails the test
 * if EXPECT_VALID, else it is counted as skipped. Returns 1 when the spec
 * validated. Every other call takes weight_layout: out_in (w, a, b as
 * PyTorch and PEFT keep them), so that each sweep covers both layouts at
 * no extra cost. */
static int sweep_lora(const struct lora_case *c, const char *dt,
                      int expect_valid)
{
    static unsigned calls;
    const char *tile = c->tile;
    struct nu_kernel k;
    char text[512];
    int ok;
    snprintf(text, sizeof text,
             "kernels:\n  - {name: sweep_lora, op: lora_forward, dtype: %s, "
             "in_features: %ld, out_features: %ld, rank: %ld, alpha: %ld, "
             "base: %s, accumulate: %s%s%s%s%s}\n",
             dt, c->K, c->N, c->R, 2 * c->R, c->base ? "true" : "false",
             c->accumulate ? "true" : "false",
             calls++ % 2 ? ", weight_layout: out_in" : "",
             *tile ? ", tile: {" : "", tile, *tile ? "}" : "");
    ok = expect_valid ? nu_spec_ok(&k, "%s", text) : nu_spec(&k, "%s", text);
    if (!ok) {
        if (!expect_valid) {
            /* The first message says why: shown, to spot a tile that
             * should have been valid. */
            nu_stats.skipped++;
            fprintf(stderr, "\n  skipped {%s}: %.*s", tile,
                    (int)strcspn(k.errors, "\n"), k.errors);
        }
        nu_kernel_free(&k);
        return 0;
    }
    if (nu_build(&k)) {
        long m = nu_knob(&k, "m");
        long dec = nu_small_path_rows(&k);
        long want[] = {1, 3, dec - 1, dec, dec + 1, m - 1, m + 1, 2 * m + 5,
                       test_full ? 300 : 0};
        run_within(&k, want, (int)(sizeof want / sizeof want[0]),
                   lora_macs(c));
    }
    nu_kernel_free(&k);
    return 1;
}

/* Every rank, every K and N of the list, base and accumulate in all four
 * combinations, default tiles (one uneven decode threshold); --full: the
 * cross product of K, N and the options, ranks cycled. */
static void test_lora_shapes(void)
{
    static const struct lora_case cases[] = {
        {1, 1, 1, 1, 0, ""},
        {1, 11008, 1, 1, 1, ""},
        {3, 3, 1, 0, 1, ""},
        {3, 4095, 1, 1, 0, ""},
        {11008, 3, 1, 1, 1, ""},
        {4095, 1, 1, 0, 0, ""},
        {1000, 1000, 4, 1, 1, "decode_rows: 5"},
        {4095, 1000, 8, 1, 0, ""},
        {1000, 4095, 16, 0, 1, ""},
        {11008, 1000, 32, 1, 0, ""},
        {4095, 4095, 64, 0, 0, ""},
        {1000, 11008, 64, 0, 1, ""},
        {11008, 11008, 16, 0, 0, ""},
        {1000, 3, 1, 0, 1, ""},
    };
    if (!test_full) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            /* Half-width storage for two cases (compiles are slower). */
            sweep_lora(&cases[i], dtypes[i == 5 ? 1 : i == 11 ? 2 : 0], 1);
        }
        return;
    }
    int n = 0;
    for (int ki = 0; ki < N_FEATURES; ki++) {
        for (int ni = 0; ni < N_FEATURES; ni++) {
            for (int opt = 0; opt < 4; opt++, n++) {
                struct lora_case c = {features[ki], features[ni], 1,
                                      opt & 1, opt >> 1, ""};
                /* The largest rank of the list that fits, cycled down. */
                for (int r = N_RANKS - 1 - n % N_RANKS; r >= 0; r--) {
                    if (ranks[r] <= c.K && ranks[r] <= c.N) {
                        c.R = ranks[r];
                        break;
                    }
                }
                sweep_lora(&c, dtypes[n % 3], 1);
            }
        }
    }
}

/* Ranks with W at a middle shape: the largest (test_lora_shapes has the
 * others), all of them with --full, and without W. */
static void test_lora_ranks(void)
{
    for (int r = test_full ? 0 : N_RANKS - 1; r < N_RANKS; r++) {
        struct lora_case c = {520, 264, ranks[r], 1, r % 2,
                              r % 2 ? "xa: inline" : ""};
        sweep_lora(&c, "f32", 1);
        /* Without W (lora_xa, then lora_expand, which reads B through
         * the cache above rank 32). */
        struct lora_case d = {1000, 4095, ranks[r], 0, 1, "xa: prepass"};
        sweep_lora(&d, dtypes[r % 3], 1);
        if (test_full) {
            /* Inline X*A may not fit local memory at large ranks. */
            d.tile = "xa: inline";
            sweep_lora(&d, dtypes[(r + 1) % 3], 0);
        }
    }
}

/* ---- lora_forward: tile configs --------------------------------------- */

/* Hand-picked tiles: the GPU SGEMM shape, small and odd ones, vec 1 and 2,
 * the decode, X*A and warp knobs, and some that validation should reject
 * (too many work-items or too much local memory, k not a multiple of
 * vec). Even entries run with W, odd ones without (tile_shape). */
static const char *const lora_tiles[] = {
    "m: 128, n: 128, k: 8, wm: 8, wn: 8, decode_rows: 2",
    "m: 64, n: 64, k: 16, wm: 4, wn: 4, pad: 0",
    "m: 32, n: 128, k: 4, wm: 2, wn: 8, xa: inline, decode_rows: 1",
    "m: 8, n: 8, k: 8, wm: 1, wn: 1, vec: 1, decode_rows: 0",
    "m: 48, n: 24, k: 12, wm: 3, wn: 3, pad: 1, xa: inline, decode_rows: 2",
    ("m: 16, n: 32, k: 8, wm: 4, wn: 2, vec: 2, decode_rows: 8, "
     "decode_n: 16, decode_k: 8, xa_m: 4, xa_k: 16"),
    "decode_rows: 3, decode_n: 2, decode_k: 1, xa_m: 1, xa_k: 1",
    "m: 64, n: 32, wm: 4, wn: 4, warp_n: 4",
    "warp_n: 0, xa: inline",
    "xa_chunk: 12, xa_m: 8, xa_k: 2",
    "xa: prepass, xa_chunk: 7, vec: 1, xa_m: 3, xa_k: 3",
    "m: 128, n: 128, k: 64, wm: 8, wn: 8",
    "m: 64, n: 256, k: 8, wm: 2, wn: 2",
    "k: 2, vec: 4",
    "decode_n: 64, decode_k: 64",
};
#define N_LORA_TILES (int)(sizeof lora_tiles / sizeof lora_tiles[0])

/* Two shapes with partial tiles: with W, and without W accumulating. */
static struct lora_case tile_shape(int i, const char *tile)
{
    struct lora_case c = {520, 264, 16, 1, 0, tile};
    if (i % 2) {
        c.K = 200;
        c.N = 100;
        c.R = 8;
        c.base = 0;
        c.accumulate = 1;
    }
    return c;
}

static void test_lora_tiles(void)
{
    long before = nu_stats.skipped;
    int ran = 0, tried = 0;
    for (int t = 0; t < N_LORA_TILES; t++) {
        struct lora_case c = tile_shape(t, lora_tiles[t]);
        tried++;
        /* Half-width storage on the small tiles only: big register tiles
         * take long to compile. */
        ran += sweep_lora(&c, dtypes[t < 3 ? 0 : t % 3], 0);
    }
    if (test_full) {
        static const long ms[] = {16, 32, 64, 128};
        static const long ns[] = {16, 64, 128};
        static const long ks[] = {4, 8, 16};
        static const long ws[][2] = {{1, 4}, {4, 4}, {8, 8}, {2, 8}};
        char tile[160];
        int n = 0;
        for (int a = 0; a < 4; a++) {
            for (int b = 0; b < 3; b++) {
                for (int k = 0; k < 3; k++) {
                    for (int w = 0; w < 4; w++, n++) {
                        snprintf(tile, sizeof tile,
                                 "m: %ld, n: %ld, k: %ld, wm: %ld, wn: %ld, "
                                 "xa: %s, decode_rows: %d",
                                 ms[a], ns[b], ks[k], ws[w][0], ws[w][1],
                                 n % 2 ? "inline" : "prepass", n % 3 * 4);
                        struct lora_case c = tile_shape(n, tile);
                        tried++;
                        ran += sweep_lora(&c, dtypes[n % 3], 0);
                    }
                }
            }
        }
        static const long dn[] = {2, 4, 8, 32};
        static const long dk[] = {1, 8, 32, 128};
        for (int a = 0; a < 4; a++) {
            for (int b = 0; b < 4; b++, n++) {
                snprintf(tile, sizeof tile,
                         "decode_rows: %d, decode_n: %ld, decode_k: %ld, "
                         "xa_m: %ld, xa_k: %ld",
                         1 + n % 3 * 5, dn[a], dk[b], dn[b], dn[a]);
                struct lora_case c = tile_shape(n, tile);
                tried++;
                ran += sweep_lora(&c, dtypes[n % 3], 0);
            }
        }
    }
    fprintf(stderr, "\n  lora tiles: %d of %d configs ran, %ld rejected by "
            "validation ", ran, tried, nu_stats.skipped - before);
    CU_ASSERT(ran >= 6);
    CU_ASSERT(ran < tried); /* the invalid ones must be rejected */
}

/* ---- row ops ----------------------------------------------------------- */

static const long row_features[] = {1, 7, 1024, 4097, 32000};
#define N_ROW_FEATURES 5

static const char *const row_tiles[] = {
    "",
    "wg: 64, rows: 4, vec: 1, mode: streaming",
    "wg: 1024, rows: 1, mode: registers",
    "wg: 16, rows: 16, mode: registers",
    "wg: 256, rows: 2, vec: 2",
    "wg: 1, rows: 1, mode: streaming",
    "wg: 512, rows: 4",
};
#define N_ROW_TILES (int)(sizeof row_tiles / sizeof row_tiles[0])

/* Builds one row op (dtype DT) over D features with TILE; runs it over
 * rows around its tile. Returns 1 when the spec validated. */
static int sweep_row(const char *op, long d, const char *dt, const char *tile)
{
    struct nu_kernel k;
    if (!nu_spec(&k, "kernels:\n  - {name: sweep_%s, op: %s, dtype: %s, "
                 "features: %ld%s%s%s}\n", op, op, dt, d,
                 *tile ? ", tile: {" : "", tile, *tile ? "}" : "")) {
        nu_stats.skipped++;
        nu_kernel_free(&k);
        return 0;
    }
    if (nu_build(&k)) {
        long t = nu_knob(&k, "rows");
        long want[] = {1, 2, t - 1, t + 1, 3 * t + 2, 37,
                       test_full ? 1000 : 0};
        /* A row op is a few passes over D elements: budget by elements. */
        run_within(&k, want, (int)(sizeof want / sizeof want[0]),
                   (double)d * (test_full ? 1 : 40));
    }
    nu_kernel_free(&k);
    return 1;
}

static void test_rows(void)
{
    int ran = 0, tried = 0;
    for (int o = 0; o < 3; o++) {
        for (int f = 0; f < N_ROW_FEATURES; f++) {
            for (int t = 0; t < N_ROW_TILES; t++) {
                for (int d = 0; d < 3; d++) {
                    /* Default: half the tiles of each (op, D), one
                     * dtype each, cycled; --full: every one. */
                    if (!test_full && ((o + f + t) % 2 != 0 ||
                                       d != (o + f + t) / 2 % 3)) {
                        continue;
                    }
                    tried++;
                    ran += sweep_row(row_ops[o], row_features[f], dtypes[d],
                                     row_tiles[t]);
                }
            }
        }
    }
    fprintf(stderr, "\n  row ops: %d of %d configs ran ", ran, tried);
    CU_ASSERT(ran > tried / 2);
}

static int suite_init(void)
{
    return nu_open("sweep");
}

static int suite_cleanup(void)
{
    return nu_close();
}

int add_sweep_suite(void)
{
    CU_pSuite s = CU_add_suite("sweep", suite_init, suite_cleanup);
    if (s == NULL ||
        CU_add_test(s, "lora: K, N, ranks, base, accumulate",
                    test_lora_shapes) == NULL ||
        CU_add_test(s, "lora: every rank", test_lora_ranks) == NULL ||
        CU_add_test(s, "lora: tile configs", test_lora_tiles) == NULL ||
        CU_add_test(s, "row ops: features x tiles x rows", test_rows) ==
            NULL) {
        return -1;
    }
    return 0;
}
