/* test_softmax_split.c - softmax's split path (each row cut into chunks,
 * a work-group each: softmax_part, then softmax_combine) on the device
 * against the naive kernel and float64: widths from 1 to a vocabulary,
 * every dtype, negative scales, the GPU and CPU defaults, rows on both
 * sides of split_max (both paths run); which rows take which path,
 * through the stub; and the defaults the split knobs take. The row
 * path's hard inputs run on the split path in test_numeric.c. Joins the
 * numeric suite. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "knobs.h"
#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"
#include "tunedb.h"

struct split_case {
    const char *dtype;
    const char *fields; /* features, scale */
    const char *tile;   /* split knobs (and others); "" for the defaults */
    enum target target;
    struct vdist x;
};

/* The first kernel of the path the stub runs at ROWS ("" when it names
 * none; checks NAME_path_index answers). */
static const char *path_kernel(const struct nu_kernel *k, size_t rows)
{
    size_t sizes[SPECL_MAX_SIZES] = {rows};
    const struct path *pa = stub_path(&k->stub, sizes);
    int index = k->stub.fn_path_index(k->stub.handle, sizes);
    CU_ASSERT(pa != NULL && index >= 0);
    return pa != NULL && index >= 0 ? pa->launch[0].kernel : "";
}

/* Whether the stub runs the split path at ROWS (its first launch is
 * softmax_part). */
static int runs_split(const struct nu_kernel *k, size_t rows)
{
    return strcmp(path_kernel(k, rows), "softmax_part") == 0;
}

/* Whether it runs the one-launch split path (softmax_coop). */
static int runs_coop(const struct nu_kernel *k, size_t rows)
{
    return strcmp(path_kernel(k, rows), "softmax_coop") == 0;
}

/* Builds C and runs it at 1, 2 and 7 rows and on both sides of its
 * split_max: rows up to split_max take the split path, the rest one
 * work-group per row. */
static void run_split_case(const struct split_case *c)
{
    struct nu_kernel k;
    struct diags d = {.out = stderr};
    /* The split path itself: no one-launch path before it (which the
     * GPU defaults have, for a device that holds its work-groups). */
    if (!nu_spec_ok(&k, "kernels:\n  - {name: t_split, op: softmax, dtype: "
                    "%s, %s, tile: {coop_max: 0%s%s}}\n", c->dtype,
                    c->fields, *c->tile ? ", " : "", c->tile)) {
        nu_kernel_free(&k);
        return;
    }
    CU_ASSERT(spec_set_target(&k.set, c->target, &d) == 0);
    snprintf(k.yaml + strlen(k.yaml), sizeof k.yaml - strlen(k.yaml),
             "# op defaults for %s\n",
             c->target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
    long most = nu_knob(&k, "split_max");
    TU_CHECK(most > 0 && nu_knob(&k, "split") > 1,
             "no split path (split %ld, split_max %ld):\n%s",
             nu_knob(&k, "split"), most, k.yaml);
    if (most > 0 && nu_build(&k)) {
        size_t rows[8] = {1};
        int n = 1;
        n = nu_rows_add(rows, n, 2);
        n = nu_rows_add(rows, n, 7);
        n = nu_rows_add(rows, n, most);
        n = nu_rows_add(rows, n, most + 1);
        for (int i = 0; i < n; i++) {
            int split = runs_split(&k, rows[i]);
            TU_CHECK(split == (rows[i] <= (size_t)most),
                     "%zu rows %s the split path (split_max %ld):\n%s",
                     rows[i], split ? "take" : "do not take", most, k.yaml);
            nu_run(&k, rows[i], c->x);
        }
    }
    nu_kernel_free(&k);
}

#define SPLIT_AT_7 "split: 4, split_max: 7"

/* Widths 1 (one chunk: a row smaller than any), 7 (odd, chunks of 2 and
 * a last of 1), 4097 (vec 1, a short last chunk), 32000, 50257 (odd) and
 * a vocabulary of 151936 (the shape's own chunks); f32 throughout with
 * the GPU defaults (work-groups of 256 items), the others in f16 and
 * bf16 and on the CPU defaults (one item per work-group); scales of
 * either sign, inputs up to +-1e4. --full: every width in every dtype,
 * with both defaults. */
static void test_split_widths(void)
{
    static const char *const widths[][2] = {
        {"features: 1, scale: -1.5", SPLIT_AT_7},
        {"features: 7, scale: -0.5", SPLIT_AT_7},
        {"features: 4097, scale: 0.7", "split: 8, split_max: 7"},
        {"features: 32000, scale: -1.0", "split: 16, split_max: 7"},
        {"features: 50257, scale: -0.7", "split_max: 7"},
        {"features: 151936", "split_max: 7"},
    };
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    struct vdist wide = {0.0, 1e4};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        for (int dt = 0; dt < 3; dt++) {
            for (int t = 0; t < 2; t++) {
                /* default run: f32 on GPUs; f16 on CPUs at 7 and 50257,
                 * bf16 on GPUs at 4097 and 151936 and on CPUs at 32000 */
                int sampled = (dt == 0 && t == 0) ||
                              (dt == 1 && t == 1 && (w == 1 || w == 4)) ||
                              (dt == 2 && t == 0 && (w == 2 || w == 5)) ||
                              (dt == 2 && t == 1 && w == 3);
                if (!sampled && !test_full) {
                    continue;
                }
                struct split_case c = {dtypes[dt], widths[w][0],
                                       widths[w][1],
                                       t ? TARGET_CPU : TARGET_GPU,
                                       w % 2 ? wide : nu_unit()};
                run_split_case(&c);
            }
        }
    }
}

/* The defaults at a vocabulary: GPUs split rows of 128 KiB and more into
 * as many chunks as give each of a work-group's items two vectors, at
 * most 128, up to 128 rows; CPUs into chunks of 64 KiB or more, at most
 * 64, up to half the row path's 16 rows per work-group; shorter rows no
 * split path; plans that stream load STREAM_LOADS vectors at once. The
 * stub of the GPU defaults at 151936 takes it up to 128 rows (at 1 row
 * the one-launch split path, where the device holds its work-groups;
 * NVIDIA's four paths: two of them in one launch). */
static void test_split_defaults(void)
{
    static const struct {
        const char *dtype;
        int features;
        enum target target;
        long split, split_max, paths;
    } cases[] = {
        {"f32", 151936, TARGET_GPU, 64, 128, 2},
        {"bf16", 151936, TARGET_GPU, 64, 128, 2},
        {"f32", 32768, TARGET_GPU, 16, 128, 2},
        {"bf16", 65536, TARGET_GPU, 32, 128, 2},
        {"f32", 32000, TARGET_GPU, 1, 0, 1},
        {"bf16", 32000, TARGET_TENSOR, 1, 0, 1},
        {"f32", 4096, TARGET_GPU, 1, 0, 1},
        {"f32", 151936, TARGET_CPU, 8, 8, 2},
        {"bf16", 151936, TARGET_CPU, 4, 8, 2},
        {"f32", 32000, TARGET_CPU, 1, 0, 1},
        {"f32", 151936, TARGET_TENSOR, 64, 128, 4},
        {"bf16", 151936, TARGET_TENSOR, 64, 128, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        struct diags d = {.out = stderr};
        if (nu_spec_ok(&k, "kernels:\n  - {name: t_def, op: softmax, "
                       "dtype: %s, features: %d}\n", cases[i].dtype,
                       cases[i].features)) {
            CU_ASSERT(spec_set_target(&k.set, cases[i].target, &d) == 0);
            long limit[4];
            int paths = nu_path_limits(&k, limit, 4) + 1;
            TU_CHECK(nu_knob(&k, "split") == cases[i].split &&
                         nu_knob(&k, "split_max") == cases[i].split_max &&
                         paths == cases[i].paths &&
                         (paths == 1 ||
                          limit[paths - 2] == cases[i].split_max),
                     "%s %d, target %d: split %ld, split_max %ld, %d paths "
                     "(want %ld, %ld, %ld)",
                     cases[i].dtype, cases[i].features, (int)cases[i].target,
                     nu_knob(&k, "split"), nu_knob(&k, "split_max"), paths,
                     cases[i].split, cases[i].split_max, cases[i].paths);
            /* A plan that streams a row loads STREAM_LOADS (4) vectors
             * at once and takes its max by fmax on GPUs (STREAM_FMAX),
             * with L2 eviction priorities where the target has them
             * (STREAM_L2_HINTS: NVIDIA's, 16-byte vectors); one that
             * holds its rows has none of those defines. */
            struct plan p;
            memset(&p, 0, sizeof p);
            k.ks->op->plan(k.ks, &p);
            long loads = nu_define(&p, "STREAM_LOADS");
            long fmax_max = nu_define(&p, "STREAM_FMAX");
            long hints = nu_define(&p, "STREAM_L2_HINTS");
            int streams = plan_find_define(&p, "SUM_BLOCK") != NULL;
            TU_CHECK(streams ? loads == 4 &&
                                   fmax_max == (cases[i].target !=
                                                TARGET_CPU) &&
                                   hints == (cases[i].target ==
                                             TARGET_TENSOR)
                             : loads == -1 && fmax_max == -1 && hints == -1,
                     "%s %d, target %d: STREAM_LOADS %ld, STREAM_FMAX %ld, "
                     "STREAM_L2_HINTS %ld, SUM_BLOCK %s", cases[i].dtype,
                     cases[i].features, (int)cases[i].target, loads,
                     fmax_max, hints, streams ? "set" : "none");
            if (i == 0 && nu_build(&k)) {
                size_t rows[] = {1, 128, 129, 4096};
                for (int r = 0; r < 4; r++) {
                    CU_ASSERT_EQUAL(runs_split(&k, rows[r]) ||
                                        (r == 0 && runs_coop(&k, 1)),
                                    r < 2);
                }
            }
        }
        nu_kernel_free(&k);
    }
}

/* A tuning entry shows on which side of the rows it was timed at the
 * crossover lies: the split path ran there (its split count then the
 * entry's, split_max at least those rows) or the row path did (split_max
 * below them); what the rows did not run stays the defaults' (split 64,
 * split_max 128 for f32 151936 on GPUs), so an entry timed at 4096 rows
 * does not drop the split path at decode. */
static void test_split_entry_rows(void)
{
    static const struct {
        const char *knobs;
        long rows, split, split_max;
        int split_max_set;
    } cases[] = {
        /* the split path ran, at 1 and at 256 rows */
        {"wg=512 split=16 split_max=16", 1, 16, 128, 0},
        {"wg=512 split=8 split_max=512", 256, 8, 256, 1},
        /* the row path ran: turned off, or below the rows */
        {"wg=512 split=1 split_max=0", 64, 64, 63, 1},
        {"wg=512 split=64 split_max=16", 64, 64, 63, 1},
        /* the row path, where the defaults' split path does not reach */
        {"wg=512 split=4 split_max=16", 4096, 64, 128, 0},
        /* an entry from before the split path */
        {"wg=512 rows=1 vec=4 mode=streaming", 4096, 64, 128, 0},
        {"wg=512 rows=1 vec=4 mode=streaming", 8, 64, 128, 0},
    };
    struct nu_kernel k;
    if (!nu_spec_ok(&k, "kernels:\n  - {name: t_entry, op: softmax, "
                    "features: 151936}\n")) {
        nu_kernel_free(&k);
        return;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kernel_spec ks = *k.ks;
        struct diags quiet = {.out = NULL};
        int split = op_knob_index(ks.op, "split");
        int most = op_knob_index(ks.op, "split_max");
        int ok = tunedb_entry_knobs(&ks, cases[i].knobs, cases[i].rows) == 0 &&
                 knobs_resolve(&ks, &quiet) == 0;
        TU_CHECK(ok && ks.knob[split].num == cases[i].split &&
                     ks.knob[most].num == cases[i].split_max &&
                     ks.knob[most].set == cases[i].split_max_set &&
                     ks.knob[op_knob_index(ks.op, "wg")].num == 512,
                 "entry '%s' at %ld rows: %s split %g, split_max %g (%s); "
                 "want %ld, %ld (%s)", cases[i].knobs, cases[i].rows,
                 ok ? "" : "refused,", ks.knob[split].num,
                 ks.knob[most].num, ks.knob[most].set ? "set" : "unset",
                 cases[i].split, cases[i].split_max,
                 cases[i].split_max_set ? "set" : "unset");
    }
    nu_kernel_free(&k);
}

/* The one-launch split path, forced by its knobs (coop_split 2, up to
 * coop_max rows): at 1 row its 2 work-groups run at once on any device
 * of 2 compute units or more (PoCL's CPU device runs them on worker
 * threads). Each case runs 1 row three times on one handle, the barrier
 * counters left by each launch serving the next (were they not reset,
 * the second launch would wait forever), and past coop_max, where the
 * split path (or the row path) takes over. COOP_ROWS x 2 work-groups
 * beyond the device's units fall back too (the stub checks). */
struct coop_case {
    const char *dtype;
    const char *fields;
    const char *tile;
    enum target target;
};

static void run_coop_case(const struct coop_case *c, struct vdist x)
{
    struct nu_kernel k;
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(&k, "kernels:\n  - {name: t_coop, op: softmax, dtype: "
                    "%s, %s, tile: {%s}}\n", c->dtype, c->fields, c->tile)) {
        nu_kernel_free(&k);
        return;
    }
    CU_ASSERT(spec_set_target(&k.set, c->target, &d) == 0);
    long most = nu_knob(&k, "coop_max");
    long chunks = nu_knob(&k, "coop_split");
    TU_CHECK(most > 0 && chunks > 1, "no one-launch path (coop_split %ld, "
             "coop_max %ld):\n%s", chunks, most, k.yaml);
    if (most > 0 && nu_build(&k)) {
        unsigned units = nu_compute_units();
        /* Its work-groups per row: coop_split, or fewer where the row
         * has fewer vectors. */
        size_t groups = (size_t)k.stub.plan.path[0].coop_groups;
        CU_ASSERT(groups >= 1 && groups <= (size_t)chunks);
        size_t rows[] = {1, 1, 2, (size_t)most, (size_t)most + 1, 1};
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            int fits = rows[i] <= (size_t)most && rows[i] * groups <= units;
            int coop = runs_coop(&k, rows[i]);
            TU_CHECK(coop == fits, "%zu rows %s the one-launch path "
                     "(coop_max %ld, %zu groups a row, %u units):\n%s",
                     rows[i], coop ? "take" : "do not take", most, groups,
                     units, k.yaml);
            nu_run(&k, rows[i], x);
        }
    }
    nu_kernel_free(&k);
}

/* Widths 1 (one chunk: the barrier of one work-group), 7, 1001 (odd, vec
 * 1), 4097, 32000 (the chunk in registers), 50257 and 151936 (read
 * twice on the CPU defaults' vec 16; and on the GPU defaults', the
 * chunk in registers at 4 chunks), every dtype among them, scales of
 * either sign, inputs up to +-1e4 at odd widths; and chunks sized for 4
 * a row over up to 64 rows, which cut rows into 2 (a wave's worth):
 * chunks twice as long as the registers hold, read twice. */
static void test_coop_widths(void)
{
    static const struct coop_case cases[] = {
        {"f32", "features: 1, scale: -1.5", "coop_max: 1, coop_split: 2",
         TARGET_CPU},
        {"f32", "features: 7, scale: -0.5", "coop_max: 1, coop_split: 2",
         TARGET_CPU},
        {"f16", "features: 1001, scale: 0.7", "coop_max: 1, coop_split: 2",
         TARGET_CPU},
        {"bf16", "features: 4097, scale: 0.7", "coop_max: 1, coop_split: 2",
         TARGET_GPU},
        {"f32", "features: 32000, scale: -1.0", "coop_max: 1",
         TARGET_CPU},
        {"bf16", "features: 32000", "coop_split: 2", TARGET_CPU},
        {"f32", "features: 50257, scale: -0.7",
         "coop_max: 1, coop_split: 2", TARGET_GPU},
        {"f32", "features: 151936", "coop_max: 2, coop_split: 2",
         TARGET_CPU},
        {"bf16", "features: 151936", "coop_max: 1, coop_split: 2",
         TARGET_GPU},
        {"f32", "features: 151936", "coop_max: 1, coop_split: 4",
         TARGET_GPU},
        {"f32", "features: 32000, scale: -0.7",
         "coop_max: 64, coop_split: 4", TARGET_GPU},
        {"bf16", "features: 50257", "coop_max: 64, coop_split: 4",
         TARGET_GPU},
    };
    struct vdist wide = {0.0, 1e4};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_coop_case(&cases[i], i % 2 ? wide : nu_unit());
    }
}

/* The one-launch path's defaults: on NVIDIA GPUs (the tensor-core
 * targets) wherever the split path runs, 16 rows in 8 chunks (128
 * work-groups, about a wave), spread at fewer rows over up to as many
 * chunks as leave each work-item a vector (COOP_GROUPS_MOST, the path's
 * coop_most), and over rows of 192 KiB and more up to 32 rows, in as
 * few as 4 chunks (the path's coop_groups), then up to 64 rows
 * softmax_coop_long's path, before the split path;
 * never on CPUs nor
 * other GPUs, whatever the shape; a spec asking for it with one knob
 * gets the other (coop_max alone: 2 chunks on CPUs, a wave's worth on
 * GPUs; coop_split alone: 1 row); turning the split path off turns it
 * off too. A stub asking 8 rows (16 chunks) takes it at 1 row only where
 * 16 work-groups fit the device's units, else the split path. */
static void test_coop_defaults(void)
{
    static const struct {
        const char *dtype;
        int features;
        const char *tile;
        enum target target;
        long coop_split, coop_max, paths, most, least;
    } cases[] = {
        {"f32", 151936, "coop_max: 8", TARGET_GPU, 16, 8, 3, 128, 16},
        {"f32", 151936, "", TARGET_TENSOR, 8, 32, 4, 64, 4},
        {"bf16", 151936, "", TARGET_TENSOR, 8, 32, 4, 32, 4},
        {"bf16", 65536, "", TARGET_SM90A, 8, 16, 3, 64, 8},
        {"f32", 32768, "", TARGET_SM90A, 8, 16, 3, 32, 8},
        {"f32", 151936, "coop_max: 16", TARGET_TENSOR, 8, 16, 3, 64, 8},
        {"f32", 151936, "", TARGET_GPU, 1, 0, 2, 0, 0},
        {"f32", 32000, "", TARGET_TENSOR, 1, 0, 1, 0, 0},
        {"f32", 151936, "split_max: 0", TARGET_TENSOR, 1, 0, 1, 0, 0},
        {"f32", 151936, "", TARGET_CPU, 1, 0, 2, 0, 0},
        {"bf16", 151936, "", TARGET_CPU, 1, 0, 2, 0, 0},
        {"f32", 151936, "coop_max: 2", TARGET_CPU, 2, 2, 3, 8, 2},
        {"f32", 151936, "coop_split: 4", TARGET_CPU, 4, 1, 3, 8, 4},
        {"f32", 151936, "coop_max: 1", TARGET_GPU, 128, 1, 3, 128, 128},
        {"f32", 4096, "coop_max: 4", TARGET_GPU, 32, 4, 2, 32, 32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        struct diags d = {.out = stderr};
        if (nu_spec_ok(&k, "kernels:\n  - {name: t_cdef, op: softmax, "
                       "dtype: %s, features: %d%s%s%s}\n", cases[i].dtype,
                       cases[i].features, *cases[i].tile ? ", tile: {" : "",
                       cases[i].tile, *cases[i].tile ? "}" : "")) {
            CU_ASSERT(spec_set_target(&k.set, cases[i].target, &d) == 0);
            long limit[4];
            int paths = nu_path_limits(&k, limit, 4) + 1;
            TU_CHECK(nu_knob(&k, "coop_split") == cases[i].coop_split &&
                         nu_knob(&k, "coop_max") == cases[i].coop_max &&
                         paths == cases[i].paths &&
                         (cases[i].coop_max == 0 ||
                          limit[0] == cases[i].coop_max),
                     "%s %d {%s}, target %d: coop_split %ld, coop_max %ld, "
                     "%d paths (want %ld, %ld, %ld)", cases[i].dtype,
                     cases[i].features, cases[i].tile, (int)cases[i].target,
                     nu_knob(&k, "coop_split"), nu_knob(&k, "coop_max"),
                     paths, cases[i].coop_split, cases[i].coop_max,
                     cases[i].paths);
            struct plan p;
            memset(&p, 0, sizeof p);
            k.set.kernel[0].op->plan(&k.set.kernel[0], &p);
            TU_CHECK(p.path[0].coop_most == cases[i].most &&
                         p.path[0].coop_groups == cases[i].least,
                     "%s %d {%s}, target %d: coop_most %ld, coop_groups "
                     "%ld (want %ld, %ld)",
                     cases[i].dtype, cases[i].features, cases[i].tile,
                     (int)cases[i].target, p.path[0].coop_most,
                     p.path[0].coop_groups, cases[i].most, cases[i].least);
            if (i == 0 && nu_build(&k)) {
                int fits = 16 <= nu_compute_units();
                CU_ASSERT_EQUAL(runs_coop(&k, 1), fits);
                CU_ASSERT_EQUAL(runs_split(&k, 1), !fits);
                CU_ASSERT_EQUAL(runs_split(&k, 9), 1);
            }
        }
        nu_kernel_free(&k);
    }
}

/* The one-launch path at its most rows (NVIDIA's defaults over rows of
 * 192 KiB and more): softmax_coop_long, 2 chunks a row of 1024 items,
 * read twice, after softmax_coop's 32 rows and before the split path.
 * Its plan everywhere; on a device with the PTX: 33 and 64 rows (twice
 * on one handle: the counters left as found), 65 on the split path. */
static void test_coop_long(void)
{
    static const char *const dtypes[] = {"f32", "bf16"};
    int device = caps_lacking(CAP_SHFL_SYNC, nu_rt()->caps.have) == 0;
    for (int i = 0; i < 2; i++) {
        struct nu_kernel k;
        if (!nu_spec_ok(&k, "kernels:\n  - {name: t_long, op: softmax, "
                        "dtype: %s, features: 151936, scale: -0.7}\n",
                        dtypes[i])) {
            nu_kernel_free(&k);
            continue;
        }
        struct plan p;
        nu_plan_for(&k, TARGET_TENSOR, &p);
        const struct path *pa = &p.path[1];
        TU_CHECK(p.n_path == 4 && p.path[0].max_rows == 32 &&
                     pa->max_rows == 64 && pa->coop_groups == 2 &&
                     pa->n_launch == 1 &&
                     strcmp(pa->launch[0].kernel, "softmax_coop_long") == 0 &&
                     pa->launch[0].local[0] == 1024 &&
                     p.sync_words >= 64 * 2,
                 "no softmax_coop_long path second (%d paths):\n%s",
                 p.n_path, k.yaml);
        if (!device || !nu_build(&k)) {
            nu_kernel_free(&k);
            continue;
        }
        const size_t rows[] = {33, 64, 64, 65};
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            int fits = rows[r] <= 64 && rows[r] * 2 <= nu_compute_units();
            int taken = strcmp(path_kernel(&k, rows[r]),
                               "softmax_coop_long") == 0;
            TU_CHECK(taken == fits, "%zu rows %s softmax_coop_long (%u "
                     "units):\n%s", rows[r], taken ? "take" : "do not take",
                     nu_compute_units(), k.yaml);
            nu_run(&k, rows[r], (struct vdist){0.0, 1e4});
        }
        nu_kernel_free(&k);
    }
}

int add_softmax_split_numeric_tests(CU_pSuite s)
{
    if (CU_add_test(s, "softmax: the one-launch split path, widths 1 to "
                    "151936, launched again on one handle",
                    test_coop_widths) == NULL ||
        CU_add_test(s, "softmax: the one-launch split path's defaults",
                    test_coop_defaults) == NULL ||
        CU_add_test(s, "softmax: the one-launch split path at 33 to 64 "
                    "rows, 2 chunks of 1024 items", test_coop_long) == NULL) {
        return -1;
    }
    if (CU_add_test(s, "softmax: rows split over work-groups, widths 1 to "
                    "151936", test_split_widths) == NULL ||
        CU_add_test(s, "softmax: the split path's defaults and rows",
                    test_split_defaults) == NULL ||
        CU_add_test(s, "softmax: a tuning entry's split knobs, by its rows",
                    test_split_entry_rows) == NULL) {
        return -1;
    }
    return 0;
}
