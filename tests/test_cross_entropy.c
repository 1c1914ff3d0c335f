/* test_cross_entropy.c - cross_entropy on the device against its naive
 * kernels and float64: vocabularies of Llama 2 and 3, GPT-2, Qwen, Gemma
 * and odd sizes, every dtype, each reduction, label smoothing, softcap,
 * grad false, the GPU and CPU defaults and small tiles, rows on both
 * sides of the split path's split_max, logits up to +-80 and rows that
 * rise or fall from -80 to +80 (a running max left behind); ignored rows,
 * every row ignored (a NaN mean), labels outside the vocabulary and NaN
 * logits (NaN rows), logits masked to -inf; dlogits in place of logits;
 * the same bits on every run. Joins the numeric suite.
 *
 * Bounds: dlogits as the op's error_bound; the loss, float32 in every
 * dtype, to 1e-5 (numeric_util.c holds float32 outputs to the f32
 * bound). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"

enum { BUF_LOGITS, BUF_LABELS, BUF_LOSS, BUF_DLOGITS };

/* What a kernel of the table is checked for besides its rows. */
enum { LABELS = 1, IN_PLACE = 2, BITS = 4 };

struct ce_case {
    const char *dtype;
    long vocab;
    const char *more; /* more flow-mapping entries, "" for none */
    enum target target;
    size_t rows[4];   /* 0-terminated */
    int checks;
};

/* Logits drawn from [-4, 4] times this: up to +-80. */
#define LOGIT_SCALE 20.0

static int ce_build(struct nu_kernel *k, const struct ce_case *c)
{
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(k, "kernels:\n  - {name: t_xent, op: cross_entropy, "
                    "dtype: %s, vocab: %ld%s}\n", c->dtype, c->vocab,
                    c->more)) {
        return 0;
    }
    CU_ASSERT(spec_set_target(&k->set, c->target, &d) == 0);
    snprintf(k->yaml + strlen(k->yaml), sizeof k->yaml - strlen(k->yaml),
             "# op defaults for %s\n",
             c->target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
    k->scale_input = "logits";
    k->scale_by = LOGIT_SCALE;
    return nu_build(k);
}

/* ---- runs with labels of every kind ------------------------------------ */

/* Label patterns: some rows ignored, every row, one label past the
 * vocabulary and one negative (not ignore_index); RAMPS, random labels
 * over rows of logits that rise or fall across the row (set_ramps); and
 * NAN_LOGITS, random labels and a NaN logit in every other row
 * (set_nans); MASKED, every third logit -inf but the label's, a whole
 * item's share among them (set_masked). */
enum pattern { SOME_IGNORED, ALL_IGNORED, OUTSIDE, RAMPS, NAN_LOGITS,
               MASKED };

/* Rows that make a streamed row's running max move: rising from -80 to
 * +80 (the reference left behind again and again), falling, -80 but for
 * +80 at the last element, and +80 at the first then -80. */
static void set_ramps(struct vcase *c)
{
    float *x = c->host[BUF_LOGITS];
    long v = (long)c->ks->field[0].num;
    for (size_t m = 0; m < c->rows; m++) {
        for (long j = 0; j < v; j++) {
            double t = v > 1 ? (double)j / (double)(v - 1) : 1.0;
            double z;
            switch (m % 4) {
            case 0: z = -80 + 160 * t; break;
            case 1: z = 80 - 160 * t; break;
            case 2: z = j == v - 1 ? 80 : -80; break;
            default: z = j == 0 ? 80 : -80; break;
            }
            x[m * (size_t)v + (size_t)j] =
                round_to_dtype((float)z, c->ks->dtype);
        }
    }
}

/* A NaN at one place of every even row, the row's own: the max of a
 * streamed row leaves NaN out (fmax), its sum must not, so that the
 * row's loss and gradient are NaN as float64's are, and no other row's
 * (the mean's, which sums them all, is NaN too). */
static void set_nans(struct vcase *c)
{
    float *x = c->host[BUF_LOGITS];
    size_t v = (size_t)c->ks->field[0].num;
    for (size_t m = 0; m < c->rows; m += 2) {
        x[m * v + (m * 7919 + 13) % v] = NAN;
    }
}

/* -inf at every third logit of each row but its label's (a vocabulary
 * masked as constrained decoding masks it): those take no part in the
 * sums and their gradient is 0; the rest as without them. */
static void set_masked(struct vcase *c)
{
    float *x = c->host[BUF_LOGITS];
    const float *labels = c->host[BUF_LABELS];
    size_t v = (size_t)c->ks->field[0].num;
    for (size_t m = 0; m < c->rows; m++) {
        for (size_t j = m % 3; j < v; j += 3) {
            if ((float)j != labels[m]) {
                x[m * v + j] = -INFINITY;
            }
        }
    }
}

static void set_labels(struct vcase *c, enum pattern p, double ignore)
{
    float *labels = c->host[BUF_LABELS];
    long v = (long)c->ks->field[0].num;
    for (size_t m = 0; m < c->rows; m++) {
        if (p == ALL_IGNORED || (p == SOME_IGNORED && m % 3 == 1)) {
            labels[m] = (float)ignore;
        }
    }
    if (p == OUTSIDE) {
        labels[0] = (float)v;
        if (c->rows > 2) {
            labels[2] = -1;
        }
    }
}

/* Runs K once on C's buffers B, in place (dlogits is the logits buffer,
 * then copied to dlogits' own for reading) or not; reads the outputs
 * into GOT. */
static void run_once(struct nu_kernel *k, struct vcase *c,
                     struct vbuffers *b, int in_place, float *got)
{
    const struct rt *rt = nu_rt();
    cl_mem mem[SPECL_MAX_BUFFERS];
    int canary_ok = 0;
    memcpy(mem, b->mem, sizeof mem);
    CU_ASSERT_FATAL(vbuffers_reset_output(rt, c, b) == CL_SUCCESS);
    if (in_place) {
        mem[BUF_DLOGITS] = mem[BUF_LOGITS];
    }
    cl_int err = stub_enqueue(&k->stub, rt->queue, c->sizes, mem, 0, NULL,
                              NULL);
    TU_CHECK(err == CL_SUCCESS, "%s: enqueue: %s", k->ks->name,
             rt_status(err));
    if (in_place) {
        size_t bytes = c->count[BUF_LOGITS] * dtype_size(c->ks->dtype);
        CU_ASSERT(clEnqueueCopyBuffer(rt->queue, b->mem[BUF_LOGITS],
                                      b->mem[BUF_DLOGITS], 0, 0, bytes, 0,
                                      NULL, NULL) == CL_SUCCESS);
    }
    CU_ASSERT(clFinish(rt->queue) == CL_SUCCESS);
    CU_ASSERT(vbuffers_read_output(rt, c, b, got, &canary_ok) ==
              CL_SUCCESS);
    CU_ASSERT(canary_ok);
}

/* K at ROWS rows with labels of pattern P (or the random ones, P < 0),
 * in place or not: NaN exactly where float64 has it, the rest within
 * the bounds. */
static void run_labels(struct nu_kernel *k, size_t rows, int p, int in_place)
{
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_FATAL(vcase_init(&c, k->ks, rows, 1000 + rows, nu_unit()) ==
                    0);
    for (size_t i = 0; i < c.count[BUF_LOGITS]; i++) {
        c.host[BUF_LOGITS][i] = round_to_dtype(
            (float)(c.host[BUF_LOGITS][i] * LOGIT_SCALE), c.ks->dtype);
    }
    if (p == RAMPS) {
        set_ramps(&c);
    } else if (p == NAN_LOGITS) {
        set_nans(&c);
    } else if (p == MASKED) {
        set_masked(&c);
    } else if (p >= 0) {
        set_labels(&c, (enum pattern)p, spec_field(c.ks, "ignore_index"));
    }
    CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
    double *ref = vcase_reference(&c);
    float *got = malloc((c.out_count + 1) * sizeof *got);
    CU_ASSERT_FATAL(ref != NULL && got != NULL);
    run_once(k, &c, &b, in_place, got);
    for (int o = 0; o < c.n_out; o++) {
        int i = c.outs[o];
        double bound = i == BUF_LOSS ? 1e-5 : error_bound(c.ks);
        double err = nu_rel_l2_nans(got + c.out_at[i], ref + c.out_at[i],
                                    c.count[i]);
        int ok = err <= bound;
        TU_CHECK(ok, "%s, %zu rows, labels %d%s: %s error %g > %g or NaN "
                 "elsewhere than float64's\n%s", k->ks->name, rows, p,
                 in_place ? ", in place" : "", c.plan.buffer[i].name, err,
                 bound, k->yaml);
    }
    if (p == ALL_IGNORED && spec_field(c.ks, "reduction") == 0) {
        TU_CHECK(isnan(got[c.out_at[BUF_LOSS]]), "%s: the mean over no row "
                 "is %g, not NaN", k->ks->name, got[c.out_at[BUF_LOSS]]);
    }
    free(ref);
    free(got);
    vbuffers_free(&b);
    vcase_free(&c);
}

/* Every pattern at 1 row and at 7 (split path where split_max >= 7) and
 * 40 rows (the row path). */
static void check_labels(struct nu_kernel *k)
{
    static const size_t rows[] = {1, 7, 40};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        for (int p = SOME_IGNORED; p <= MASKED; p++) {
            run_labels(k, rows[r], p, 0);
        }
    }
}

/* dlogits the logits buffer itself, on both paths, with ignored rows. */
static void check_in_place(struct nu_kernel *k)
{
    run_labels(k, 3, -1, 1);
    run_labels(k, 40, SOME_IGNORED, 1);
}

/* Two runs on the same inputs give the same bits: the loss (a sum over
 * the rows in a fixed order) and dlogits; at 5 and 300 rows. */
static void check_bits(struct nu_kernel *k)
{
    static const size_t rows[] = {5, 300};
    for (size_t r = 0; r < 2; r++) {
        struct vcase c;
        struct vbuffers b;
        float *run[2];
        CU_ASSERT_FATAL(vcase_init(&c, k->ks, rows[r], 77, nu_unit()) == 0);
        CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
        for (int i = 0; i < 2; i++) {
            run[i] = malloc((c.out_count + 1) * sizeof *run[i]);
            CU_ASSERT_FATAL(run[i] != NULL);
            run_once(k, &c, &b, 0, run[i]);
        }
        TU_CHECK(memcmp(run[0], run[1], c.out_count * sizeof *run[0]) == 0,
                 "%s, %zu rows: two runs gave different bits", k->ks->name,
                 rows[r]);
        free(run[0]);
        free(run[1]);
        vbuffers_free(&b);
        vcase_free(&c);
    }
}

static void run_case(const struct ce_case *c)
{
    struct nu_kernel k;
    if (ce_build(&k, c)) {
        for (int r = 0; r < 4 && c->rows[r] != 0; r++) {
            nu_run(&k, c->rows[r], nu_unit());
        }
        if (c->checks & LABELS) {
            check_labels(&k);
        }
        if (c->checks & IN_PLACE) {
            check_in_place(&k);
        }
        if (c->checks & BITS) {
            check_bits(&k);
        }
    }
    nu_kernel_free(&k);
}

/* A sample that keeps the default run short on PoCL: each vocabulary
 * once, each dtype, reduction and option, both paths, small tiles (a
 * split path of 8 chunks up to 2 or 4 rows; 4 rows a group in
 * registers, its last group short). */
static void test_xent_kernels(void)
{
    static const struct ce_case cases[] = {
        {"f32", 32000, ", tile: {wg: 64, split: 8, split_max: 4}",
         TARGET_GPU, {1, 5, 0}, LABELS | IN_PLACE | BITS},
        {"bf16", 128256, "", TARGET_CPU, {1, 3, 0}, 0},
        {"f16", 50257, ", reduction: none, label_smoothing: 0.1, softcap: "
         "30, tile: {wg: 32, rows: 2, split: 8, split_max: 2}",
         TARGET_GPU, {1, 2, 3, 0}, LABELS | IN_PLACE | BITS},
        {"f32", 3001, ", reduction: sum, grad: false", TARGET_CPU,
         {1, 7, 64, 0}, LABELS},
        {"bf16", 151936, ", label_smoothing: 0.05, ignore_index: -1, tile: "
         "{wg: 128, split: 16, split_max: 4}", TARGET_GPU, {1, 4, 5, 0},
         LABELS},
        {"f32", 256000, ", softcap: 15", TARGET_CPU, {2, 0}, 0},
        /* logits to +-4 under caps of 3 and 2: tanh well into its bend
         * (its slope down to 0.07); a softcap past any logit: z = x */
        {"f32", 4096, ", softcap: 3", TARGET_GPU, {1, 5, 0}, LABELS},
        {"bf16", 2048, ", softcap: 2, tile: {wg: 64, split: 4, split_max: "
         "2}", TARGET_GPU, {1, 2, 9, 0}, LABELS | IN_PLACE},
        {"f32", 3000, ", softcap: 1e30", TARGET_CPU, {2, 0}, 0},
        {"f32", 4000, ", reduction: sum, label_smoothing: 0.3, tile: {wg: "
         "64, rows: 4, mode: registers}", TARGET_GPU, {1, 3, 9, 0},
         LABELS | IN_PLACE | BITS},
        {"bf16", 32000, ", reduction: none", TARGET_GPU, {130, 0},
         IN_PLACE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i]);
    }
}

/* Cases that once failed, replayed with their seeds. */
static void test_xent_seeds(void)
{
    static const struct {
        struct ce_case c;
        unsigned long seed;
    } cases[] = {
        {{"f32", 256000, ", softcap: 15", TARGET_CPU, {2, 0}, 0},
         20240671722346UL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        if (ce_build(&k, &cases[i].c)) {
            size_t sizes[SPECL_MAX_SIZES] = {0};
            k.ks->op->bench_sizes(k.ks, sizes);
            sizes[0] = cases[i].c.rows[0];
            nu_run_seed(&k, sizes, cases[i].seed, nu_unit());
        }
        nu_kernel_free(&k);
    }
}

/* Every vocabulary x dtype x device type, the reductions and options in
 * turn, 1 to 130 rows, and 4096 rows of 32000 (--full only). */
static void test_xent_grid(void)
{
    static const long vocabs[] = {32000, 50257, 128256, 151936, 256000,
                                  3001};
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    static const char *const more[] = {
        "", ", reduction: sum, label_smoothing: 0.1",
        ", reduction: none, softcap: 30", ", grad: false, softcap: 50"};
    if (!test_full) {
        return;
    }
    for (int v = 0; v < 6; v++) {
        for (int d = 0; d < 3; d++) {
            for (int t = 0; t < 2; t++) {
                struct ce_case c = {dtypes[d], vocabs[v], more[(v + d) % 4],
                                    t ? TARGET_CPU : TARGET_GPU,
                                    {1, 8, 130, 0}, 0};
                if (vocabs[v] >= 150000) {
                    c.rows[2] = 0;
                }
                run_case(&c);
            }
        }
    }
    struct ce_case big = {"bf16", 32000, "", TARGET_CPU, {4096, 0}, BITS};
    run_case(&big);
}

/* What `specl bench` and `specl tune` check past 64 rows: the outputs of
 * 64 sampled rows. The mean's gradient divides by the count of every
 * row's labels, so the reference is the whole case's at those rows
 * (reference_rows), not a case of those rows alone (off by 100 / 64). */
static void test_xent_sampled(void)
{
    struct nu_kernel k;
    struct measure_case mc;
    struct naive_stubs naive;
    struct result r;
    naive_init(&naive);
    if (nu_spec_ok(&k, "kernels:\n  - {name: t_xent, op: cross_entropy, "
                   "vocab: 1000}\n")) {
        CU_ASSERT_FATAL(mcase_init(&mc, nu_rt(), &naive, k.ks, 100, 5, 0) ==
                        CL_SUCCESS);
        TU_CHECK(mc.n_rows == 64, "sampled %zu rows of 100", mc.n_rows);
        CU_ASSERT_FATAL(mcase_load_naive(&mc, NULL) == CL_SUCCESS);
        memset(&r, 0, sizeof r);
        verify_variant(&mc, run_naive, &r);
        TU_CHECK(r.ok, "the naive kernel at 100 rows: %s (error %g)",
                 r.note, r.err);
        mcase_free(&mc);
    }
    nu_kernel_free(&k);
    naive_free(&naive);
}

/* Whether K's stub launches KERNEL at ROWS. */
static int runs_kernel(const struct nu_kernel *k, size_t rows,
                       const char *kernel)
{
    size_t sizes[SPECL_MAX_SIZES] = {rows};
    const struct path *pa = stub_path(&k->stub, sizes);
    for (int l = 0; pa != NULL && l < pa->n_launch; l++) {
        if (strcmp(pa->launch[l].kernel, kernel) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Whether K's stub runs the one-launch split path at ROWS (a launch of
 * cross_entropy_coop, between the count and the sum). */
static int runs_coop(const struct nu_kernel *k, size_t rows)
{
    return runs_kernel(k, rows, "cross_entropy_coop");
}

/* The one-launch split path, forced (coop_max 1, coop_split 2: at 1 row
 * 2 work-groups that wait for each other, on any device of 2 compute
 * units or more, PoCL's CPU device among them), one launch with its
 * count and the loss's sum: each reduction, grad
 * false, smoothing and softcap; every label pattern at 1 row (a label in
 * either chunk, an ignored row, one outside), dlogits in place, launched
 * again and again on one handle; past coop_max the split or row path. */
static void test_xent_coop(void)
{
    static const struct ce_case cases[] = {
        {"f32", 32000, ", tile: {coop_max: 1, coop_split: 2}", TARGET_CPU,
         {1, 1, 2, 0}, 0},
        {"bf16", 151936, ", label_smoothing: 0.05, ignore_index: -1, tile: "
         "{coop_max: 1, coop_split: 2}", TARGET_GPU, {1, 2, 0}, 0},
        {"f16", 3001, ", reduction: none, label_smoothing: 0.1, softcap: "
         "30, tile: {coop_max: 1, coop_split: 2}", TARGET_CPU, {1, 3, 0},
         0},
        {"f32", 50257, ", reduction: sum, grad: false, tile: {coop_max: 1, "
         "coop_split: 2}", TARGET_GPU, {1, 1, 0}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        if (ce_build(&k, &cases[i])) {
            /* The count and the loss's sum in the same launch. */
            TU_CHECK(k.stub.plan.path[0].n_launch == 1,
                     "%s: the one-launch path has %d launches", k.yaml,
                     k.stub.plan.path[0].n_launch);
            size_t groups = (size_t)k.stub.plan.path[0].coop_groups;
            int fits = groups >= 1 && groups <= nu_compute_units();
            TU_CHECK(runs_coop(&k, 1) == fits && !runs_coop(&k, 2),
                     "%s: the one-launch path at 1 row %d (want %d), at 2 "
                     "rows %d", k.yaml, runs_coop(&k, 1), fits,
                     runs_coop(&k, 2));
            for (int r = 0; r < 4 && cases[i].rows[r] != 0; r++) {
                nu_run(&k, cases[i].rows[r], nu_unit());
            }
            for (int p = SOME_IGNORED; p <= OUTSIDE; p++) {
                run_labels(&k, 1, p, 0);
            }
            if (spec_field(k.ks, "grad") != 0) {
                run_labels(&k, 1, -1, 1);
            }
        }
        nu_kernel_free(&k);
    }
}

/* The one-launch path over 2 and 3 rows (coop_max 3, coop_split 2):
 * where the device's units hold rows x 2 work-groups, the rows' count and
 * losses meet in the launch (the last row to finish sums them, the
 * counter set back to 0 for the next call); elsewhere the next path. Each
 * label pattern, the mean and the sum, run again on one handle. */
static void test_xent_coop_rows(void)
{
    static const struct ce_case cases[] = {
        {"f32", 4096, ", tile: {coop_max: 3, coop_split: 2}", TARGET_CPU,
         {2, 3, 0}, 0},
        {"bf16", 8000, ", reduction: sum, ignore_index: -1, tile: "
         "{coop_max: 3, coop_split: 2}", TARGET_CPU, {3, 2, 0}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        if (ce_build(&k, &cases[i])) {
            size_t groups = (size_t)k.stub.plan.path[0].coop_groups;
            for (int r = 0; r < 4 && cases[i].rows[r] != 0; r++) {
                size_t rows = cases[i].rows[r];
                int fits = rows * groups <= nu_compute_units();
                TU_CHECK(runs_coop(&k, rows) == fits,
                         "%s: %zu rows %s the one-launch path (%zu groups "
                         "a row, %u units)", k.yaml, rows,
                         fits ? "do not take" : "take", groups,
                         nu_compute_units());
                for (int p = SOME_IGNORED; p <= OUTSIDE; p++) {
                    run_labels(&k, rows, p, 0);
                }
                run_labels(&k, rows, -1, 0);
            }
        }
        nu_kernel_free(&k);
    }
}

/* The shared path, forced (share 2: 2 work-groups a row, on any device
 * of 2 compute units or more, PoCL's CPU device among them; elsewhere the
 * row path, as past its 16384 rows): each dtype and reduction, grad
 * false, smoothing, softcap, ignore_index; every label pattern at 1, 7
 * and 40 rows, dlogits in place, the same bits twice; launched again and
 * again on one handle (the tickets and each row's counters set back to
 * 0 by each launch). */
static void test_xent_shared(void)
{
    static const struct ce_case cases[] = {
        {"f32", 3001, ", tile: {share: 2, wg: 64, split: 1}", TARGET_GPU,
         {1, 40, 600, 0}, LABELS | IN_PLACE | BITS},
        {"bf16", 8000, ", label_smoothing: 0.1, softcap: 30, ignore_index: "
         "-1, tile: {share: 2, wg: 128}", TARGET_GPU, {1, 7, 0},
         LABELS | IN_PLACE},
        {"f16", 4096, ", reduction: none, tile: {share: 2}", TARGET_GPU,
         {2, 530, 0}, LABELS | BITS},
        {"f32", 5000, ", reduction: sum, grad: false, tile: {share: 2, wg: "
         "32, split: 1}", TARGET_GPU, {3, 0}, LABELS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        if (ce_build(&k, &cases[i])) {
            int fits = nu_compute_units() >= 2;
            TU_CHECK(runs_kernel(&k, 1, "cross_entropy_shared") == fits &&
                         runs_kernel(&k, 16384, "cross_entropy_shared") ==
                             fits &&
                         !runs_kernel(&k, 16385, "cross_entropy_shared") &&
                         runs_kernel(&k, 16385, "cross_entropy"),
                     "%s: the shared path at 1, 16384 and 16385 rows %d, "
                     "%d, %d (want %d, %d, 0: %u units)", k.yaml,
                     runs_kernel(&k, 1, "cross_entropy_shared"),
                     runs_kernel(&k, 16384, "cross_entropy_shared"),
                     runs_kernel(&k, 16385, "cross_entropy_shared"), fits,
                     fits, nu_compute_units());
        }
        nu_kernel_free(&k);
        run_case(&cases[i]);
    }
    /* The defaults' share and group on NVIDIA, the last part short, where
     * a device runs 8 work-groups at once (else the row path). */
    static const struct ce_case defaults = {
        "bf16", 151936, ", ignore_index: -1, tile: {share: 8, wg: 256}",
        TARGET_GPU, {1, 9, 0}, LABELS | IN_PLACE | BITS};
    run_case(&defaults);
}

/* The plans' choices, no device: GPU bf16 and f16 rows of at least 2048
 * vectors stream in groups of 512, loading 4 vectors at once; float32
 * and short rows keep the row ops' defaults; a spec's own group wins;
 * CPUs load 16 vectors at once; shuffle merges where the target has
 * them; on NVIDIA GPUs bf16 rows of 192 KiB or more shared by 8
 * work-groups of 256 items (unless the spec shapes the rows), none
 * elsewhere. */
static void test_xent_defaults(void)
{
    static const struct {
        const char *dtype;
        long vocab;
        const char *tile; /* "" for none */
        enum target target;
        long wg, in_registers, sum_block, shfl; /* -1: any or none */
        long share;                             /* -1: no shared path */
    } cases[] = {
        {"bf16", 128256, "", TARGET_TENSOR, 256, 0, 4, 1, 8},
        {"bf16", 98304, "", TARGET_SM90A, 256, 0, 4, 1, 8},
        {"bf16", 65536, "", TARGET_SM90A, 512, 0, 4, 1, -1},
        {"bf16", 50257, "", TARGET_TENSOR, 512, 0, 4, 1, -1},
        {"bf16", 32000, "", TARGET_TENSOR, 512, 0, 4, 1, -1},
        {"f16", 50257, "", TARGET_GPU, 512, 0, 4, 0, -1},
        {"f16", 151936, "", TARGET_GPU, 512, 0, 4, 0, -1},
        {"f32", 32000, "", TARGET_TENSOR, 1024, 1, -1, 1, -1},
        {"f32", 128256, "", TARGET_TENSOR, -1, 0, -1, 1, -1},
        {"f32", 128256, ", tile: {share: 8}", TARGET_TENSOR, 256, 0, -1, 1,
         8},
        {"bf16", 8000, "", TARGET_TENSOR, -1, 1, -1, 1, -1},
        {"bf16", 128256, ", tile: {wg: 1024}", TARGET_TENSOR, 1024, 0, 4, 1,
         8},
        {"bf16", 128256, ", tile: {share: 4}", TARGET_TENSOR, 256, 0, 4, 1,
         4},
        {"bf16", 128256, ", tile: {mode: streaming}", TARGET_TENSOR, -1, 0,
         4, 1, -1},
        {"bf16", 128256, "", TARGET_CPU, 1, 0, 16, 0, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        if (!nu_spec_ok(&k, "kernels:\n  - {name: t_xent_plan, op: "
                        "cross_entropy, dtype: %s, vocab: %ld%s}\n",
                        cases[i].dtype, cases[i].vocab, cases[i].tile)) {
            nu_kernel_free(&k);
            continue;
        }
        struct plan p;
        nu_plan_for(&k, cases[i].target, &p);
        const long wg = nu_define(&p, "WG_SIZE");
        const long regs = nu_define(&p, "ROW_IN_REGISTERS");
        const long block = nu_define(&p, "SUM_BLOCK");
        const long shfl = nu_define(&p, "SHFL_PTX");
        const long share = nu_define(&p, "SHARE_GROUPS");
        TU_CHECK((cases[i].wg < 0 || wg == cases[i].wg) &&
                     regs == cases[i].in_registers &&
                     (cases[i].sum_block < 0 || block == cases[i].sum_block) &&
                     shfl == cases[i].shfl && share == cases[i].share,
                 "case %zu: WG_SIZE %ld, ROW_IN_REGISTERS %ld, SUM_BLOCK %ld, "
                 "SHFL_PTX %ld, SHARE_GROUPS %ld:\n%s", i, wg, regs, block,
                 shfl, share, k.yaml);
        nu_kernel_free(&k);
    }
}

/* The cap on every target; its exponential by polynomial on CPUs alone,
 * its reciprocal by native_recip on GPUs alone; neither without a cap. */
static void test_xent_cap_plan(void)
{
    static const enum target targets[] = {TARGET_CPU, TARGET_GPU,
                                          TARGET_TENSOR, TARGET_SM90A};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        for (int capped = 0; capped <= 1; capped++) {
            struct nu_kernel k;
            if (!nu_spec_ok(&k, "kernels:\n  - {name: t_xent_cap, op: "
                            "cross_entropy, dtype: bf16, vocab: 256000%s}\n",
                            capped ? ", softcap: 30" : "")) {
                nu_kernel_free(&k);
                continue;
            }
            struct plan p;
            nu_plan_for(&k, targets[i], &p);
            const int cpu = targets[i] == TARGET_CPU;
            const long on = nu_define(&p, "CAPPED");
            const long poly = nu_define(&p, "CAP_POLY");
            const long recip = nu_define(&p, "CAP_NATIVE_RECIP");
            TU_CHECK(on == capped && poly == (capped && cpu) &&
                         recip == (capped && !cpu),
                     "target %zu: CAPPED %ld, CAP_POLY %ld, "
                     "CAP_NATIVE_RECIP %ld:\n%s",
                     i, on, poly, recip, k.yaml);
            nu_kernel_free(&k);
        }
    }
}

int add_cross_entropy_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "cross_entropy: vocabularies, dtypes, reductions, "
                       "smoothing, softcap, both paths, ignored and "
                       "outside labels, in place, same bits",
                       test_xent_kernels) == NULL ||
                   CU_add_test(s, "cross_entropy: cases that once failed, "
                               "by their seeds", test_xent_seeds) == NULL ||
                   CU_add_test(s, "cross_entropy: the one-launch split "
                               "path, launched again on one handle",
                               test_xent_coop) == NULL ||
                   CU_add_test(s, "cross_entropy: the one-launch split "
                               "path over several rows, its loss in the "
                               "launch", test_xent_coop_rows) == NULL ||
                   CU_add_test(s, "cross_entropy: rows shared by "
                               "work-groups, launched again on one handle",
                               test_xent_shared) == NULL ||
                   CU_add_test(s, "cross_entropy: sampled rows of the mean "
                               "checked against the whole case",
                               test_xent_sampled) == NULL ||
                   CU_add_test(s, "cross_entropy: every vocabulary, dtype "
                               "and device type (--full)",
                               test_xent_grid) == NULL ||
                   CU_add_test(s, "cross_entropy: the plans' groups, blocks "
                               "and merges by dtype, length and target",
                               test_xent_defaults) == NULL ||
                   CU_add_test(s, "cross_entropy: the cap's exponential "
                               "and reciprocal by target",
                               test_xent_cap_plan) == NULL
               ? -1
               : 0;
}
