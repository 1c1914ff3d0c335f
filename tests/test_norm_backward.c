/* test_norm_backward.c - rmsnorm_backward and layernorm_backward on the
 * device against their naive kernels and float64: every dtype, odd and
 * long rows, 1 to 1000 rows (many blocks of partial sums), tiles whose
 * last block leaves row slots empty, accumulate, the GPU and CPU defaults,
 * dgamma (and dbeta) NULL, the same bits on every run, and rows that
 * stress the statistics. Joins the numeric suite.
 *
 * Bounds: dx is held to the op's error_bound (1e-4 in f32, the storage
 * rounding in f16 and bf16). dgamma and dbeta are float32 in every dtype:
 * their inputs are exact storage values and their sums float32, so no
 * storage rounding enters them, and numeric_util.c holds float32 outputs
 * to the op's float32 bound, 1e-4, whatever the dtype (a sum of 1000
 * rows in float32 is off by some 1e-6). */
#include <CUnit/Basic.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"

enum { BUF_X, BUF_GAMMA, BUF_DY, BUF_DX, BUF_DGAMMA, BUF_DBETA };

/* What a kernel of the table is checked for besides its rows. */
enum { EXTREMES = 1, NULLS = 2, BITS = 4, TINY = 8, FAR = 16 };

struct nb_case {
    const char *op, *dtype;
    int features;
    const char *more; /* more flow-mapping entries, "" for none */
    enum target target;
    int checks;
};

/* Builds C into K; 1 when built. */
static int nb_build(struct nu_kernel *k, const struct nb_case *c)
{
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(k, "kernels:\n  - {name: t_norm_bwd, op: %s, dtype: %s, "
                    "features: %d%s}\n", c->op, c->dtype, c->features,
                    c->more)) {
        return 0;
    }
    CU_ASSERT(spec_set_target(&k->set, c->target, &d) == 0);
    snprintf(k->yaml + strlen(k->yaml), sizeof k->yaml - strlen(k->yaml),
             "# op defaults for %s\n",
             c->target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
    return nu_build(k);
}

/* Rows of every value: constant (layernorm's variance 0), mean 1e4 over
 * a spread of 1, 1e-30 (squares under float32's), 1e18 and 1e30 (sums of
 * squares past FLT_MAX: rescaled as the forward does). Float64 alone
 * judges the last three: the naive kernel's plain sums fail there. */
static void run_extremes(struct nu_kernel *k)
{
    static const struct vdist plain[] = {{3, 0}, {1e4, 1}};
    static const struct vdist hard[] = {{0, 1e-30}, {0, 1e18}, {0, 1e30}};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        nu_run(k, 9, plain[i]);
    }
    k->reference_only = 1;
    for (size_t i = 0; i < sizeof hard / sizeof hard[0]; i++) {
        nu_run(k, 9, hard[i]);
    }
    k->reference_only = 0;
}

/* Runs K on C's buffers B as given but for the buffers of NULLS (bits:
 * 1 << buffer) passed as NULL, with a scratch of its own filled with a
 * pattern; reads the outputs into GOT. Returns whether the call ran and
 * the scratch was left as it was (when every optional output is NULL:
 * no partial sums). */
static int run_with_nulls(struct nu_kernel *k, const struct vcase *c,
                          const struct vbuffers *b, unsigned nulls,
                          float *got)
{
    const struct rt *rt = nu_rt();
    size_t bytes = k->stub.fn_scratch_bytes(c->sizes);
    cl_int err = CL_SUCCESS;
    cl_mem scratch = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, bytes, NULL,
                                    &err);
    CU_ASSERT_FATAL(err == CL_SUCCESS);
    unsigned char *before = malloc(bytes), *after = malloc(bytes);
    CU_ASSERT_FATAL(before != NULL && after != NULL);
    for (size_t i = 0; i < bytes; i++) {
        before[i] = (unsigned char)(i * 7 + 1);
    }
    CU_ASSERT(clEnqueueWriteBuffer(rt->queue, scratch, CL_TRUE, 0, bytes,
                                   before, 0, NULL, NULL) == CL_SUCCESS);
    cl_mem mem[SPECL_MAX_BUFFERS];
    memcpy(mem, b->mem, sizeof mem);
    for (int i = 0; i < c->plan.n_buffer; i++) {
        if (nulls & (1u << i)) {
            mem[i] = NULL;
        }
    }
    int canary_ok = 0;
    err = stub_enqueue_scratch(&k->stub, rt->queue, c->sizes, mem, scratch, 0,
                               NULL, NULL);
    TU_CHECK(err == CL_SUCCESS, "NULL outputs (0x%x): %s", nulls,
             rt_status(err));
    CU_ASSERT(clFinish(rt->queue) == CL_SUCCESS);
    CU_ASSERT(vbuffers_read_output(rt, c, b, got, &canary_ok) == CL_SUCCESS);
    CU_ASSERT(canary_ok);
    CU_ASSERT(clEnqueueReadBuffer(rt->queue, scratch, CL_TRUE, 0, bytes,
                                  after, 0, NULL, NULL) == CL_SUCCESS);
    int same = memcmp(before, after, bytes) == 0;
    free(before);
    free(after);
    clReleaseMemObject(scratch);
    return err == CL_SUCCESS && same;
}

/* dgamma NULL (and for layernorm dbeta NULL, and both): dx and the
 * outputs given as float64 says, the outputs not given left as they were
 * (NaN), and with no output but dx nothing written to the scratch: no
 * partial sums were made. */
static void check_nulls(struct nu_kernel *k)
{
    int centred = strcmp(k->ks->op->name, "layernorm_backward") == 0;
    const unsigned sets[] = {1u << BUF_DGAMMA, 1u << BUF_DBETA,
                             (1u << BUF_DGAMMA) | (1u << BUF_DBETA)};
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_FATAL(vcase_init(&c, k->ks, 300, 31, nu_unit()) == 0);
    CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
    double *ref = vcase_reference(&c);
    float *got = malloc(c.out_count * sizeof *got);
    struct kernel_spec f32 = *k->ks;
    f32.dtype = DTYPE_F32;
    double f32_bound = error_bound(&f32);
    CU_ASSERT_FATAL(ref != NULL && got != NULL);
    for (int s = centred ? 0 : 2; s < 3; s++) {
        unsigned nulls = sets[s] & ((1u << c.plan.n_buffer) - 1);
        CU_ASSERT(vbuffers_reset_output(nu_rt(), &c, &b) == CL_SUCCESS);
        int untouched = run_with_nulls(k, &c, &b, nulls, got);
        int all_null = s == 2;
        TU_CHECK(untouched || !all_null,
                 "%s: dx alone wrote the scratch", k->ks->name);
        for (int o = 0; o < c.n_out; o++) {
            int i = c.outs[o];
            const float *g = got + c.out_at[i];
            if (nulls & (1u << i)) {
                /* As vbuffers_reset_output left it: NaN, or (accumulate)
                 * the case's initial values. */
                int inout = c.plan.buffer[i].role == BUFFER_INOUT;
                int untouched_out = 1;
                for (size_t e = 0; e < c.count[i]; e++) {
                    untouched_out &= inout ? g[e] == c.host[i][e]
                                           : g[e] != g[e];
                }
                TU_CHECK(untouched_out, "%s: %s NULL, yet its buffer was "
                         "written", k->ks->name, c.plan.buffer[i].name);
                continue;
            }
            double err = rel_l2(g, ref + c.out_at[i], c.count[i]);
            double bound = i == BUF_DX ? error_bound(k->ks) : f32_bound;
            TU_CHECK(err <= bound, "%s: nulls 0x%x: %s error %g > %g",
                     k->ks->name, nulls, c.plan.buffer[i].name, err, bound);
        }
    }
    free(ref);
    free(got);
    vbuffers_free(&b);
    vcase_free(&c);
}

/* Two runs on the same inputs: the same bits in every output (dgamma and
 * dbeta are sums over 1000 rows, in blocks). */
static void check_bits(struct nu_kernel *k)
{
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_FATAL(vcase_init(&c, k->ks, 1000, 77, nu_unit()) == 0);
    CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
    float *run[2];
    for (int r = 0; r < 2; r++) {
        int canary_ok = 0;
        run[r] = malloc(c.out_count * sizeof *run[r]);
        CU_ASSERT_FATAL(run[r] != NULL);
        CU_ASSERT(vbuffers_reset_output(nu_rt(), &c, &b) == CL_SUCCESS);
        CU_ASSERT(stub_enqueue(&k->stub, nu_rt()->queue, c.sizes, b.mem, 0,
                               NULL, NULL) == CL_SUCCESS);
        CU_ASSERT(clFinish(nu_rt()->queue) == CL_SUCCESS);
        CU_ASSERT(vbuffers_read_output(nu_rt(), &c, &b, run[r],
                                       &canary_ok) == CL_SUCCESS);
        CU_ASSERT(canary_ok);
    }
    TU_CHECK(memcmp(run[0], run[1], c.out_count * sizeof *run[0]) == 0,
             "%s: two runs gave different bits", k->ks->name);
    free(run[0]);
    free(run[1]);
    vbuffers_free(&b);
    vcase_free(&c);
}

/* For kernels of eps 2^-126, so that squares among the subnormals (rows
 * of 1e-21, 1e-19) count: the forward sums such rows again at a
 * power-of-two scale, and the backward must too; rows of 1e30; and
 * constant rows (of 3, of 1e30), whose variance of 0 sums again too and
 * whose dx is 1 / sqrt(eps) times g - mean(g). Float64 judges. */
static void run_tiny(struct nu_kernel *k)
{
    static const struct vdist dists[] = {{0, 1e-21}, {0, 1e-19}, {0, 1e30},
                                         {3, 0},    {1e30, 0}};
    k->reference_only = 1;
    for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++) {
        nu_run(k, 9, dists[d]);
    }
    k->reference_only = 0;
}

/* Every other row's first element 40 to 55, the rest in [-1, 1]: that
 * row's mean lies far more than 8 deviations from its first element, so
 * layernorm's rows held where the slots run apart take the second pass
 * about the mean, the others one pass about the first element. */
static void far_first(struct vcase *c)
{
    size_t features = (size_t)spec_field(c->ks, "features");
    for (size_t r = 0; r < c->rows; r += 2) {
        c->host[0][r * features] = (float)(40 + r % 16);
    }
}

static void run_far(struct nu_kernel *k)
{
    static const size_t rows[] = {1, 9, 300};
    k->fill = far_first;
    nu_run_rows(k, rows, 3, nu_unit());
    k->fill = NULL;
}

/* The checks CHECKS names (EXTREMES, NULLS, BITS, TINY, FAR) on K. */
static void run_checks(struct nu_kernel *k, int checks)
{
    if (checks & FAR) {
        run_far(k);
    }
    if (checks & EXTREMES) {
        run_extremes(k);
    }
    if (checks & NULLS) {
        check_nulls(k);
    }
    if (checks & BITS) {
        check_bits(k);
    }
    if (checks & TINY) {
        run_tiny(k);
    }
}

/* Both ops, each in f32 and one of f16 and bf16 (every dtype with
 * --full), widths of 896, 4097 (no vector divides it) and 11008, the GPU
 * and the CPU defaults and two tiles whose last block of 7 rows leaves row
 * slots empty (4 rows a group in blocks of 5, in registers; streamed, 2
 * rows a group in blocks of 3), those two with eps 2^-126, rmsnorm's rows
 * held as stored in f16 and bf16 vectors of 4 and 8 (the last slot part
 * full at 2600), over 1 to 1000 rows: 1000 makes 125 blocks of partial
 * sums at the GPU defaults, 63 at the CPU's. One build each serves every
 * check. */
static void test_norm_bwd_kernels(void)
{
    static const struct nb_case quick[] = {
        {"rmsnorm_backward", "f32", 896, "", TARGET_GPU,
         EXTREMES | NULLS | BITS},
        {"layernorm_backward", "f32", 4097, "", TARGET_CPU,
         EXTREMES | NULLS | BITS | FAR},
        {"rmsnorm_backward", "bf16", 11008, ", accumulate: true", TARGET_GPU,
         0},
        {"layernorm_backward", "f16", 896, ", accumulate: true", TARGET_GPU,
         NULLS | BITS},
        {"rmsnorm_backward", "f32", 1000, ", eps: 1.1754943508222875e-38, "
         "tile: {wg: 32, rows: 4, blocks: 5}", TARGET_GPU, TINY},
        {"layernorm_backward", "f32", 1000, ", eps: 1.1754943508222875e-38, "
         "tile: {wg: 4, rows: 2, vec: 2, mode: streaming, blocks: 3}",
         TARGET_GPU, TINY | BITS},
        {"rmsnorm_backward", "bf16", 2600, ", tile: {wg: 64, rows: 2, vec: 8, "
         "mode: registers, blocks: 5}", TARGET_GPU, EXTREMES | NULLS | BITS},
        {"rmsnorm_backward", "f16", 896, ", accumulate: true, tile: {wg: 32, "
         "rows: 4, vec: 4, mode: registers, blocks: 5}", TARGET_GPU, BITS},
    };
    static const size_t rows[] = {1, 2, 7, 1000};
    static const size_t full_rows[] = {1, 2, 3, 7, 33, 1000};
    for (size_t i = 0; i < sizeof quick / sizeof quick[0]; i++) {
        struct nu_kernel k;
        if (nb_build(&k, &quick[i])) {
            if (test_full) {
                nu_run_rows(&k, full_rows, 6, nu_unit());
            } else {
                nu_run_rows(&k, rows, 4, nu_unit());
            }
            run_checks(&k, quick[i].checks);
        }
        nu_kernel_free(&k);
    }
}

/* Whether K runs the one-launch path at ROWS. */
static int runs_fused(struct nu_kernel *k, size_t rows)
{
    size_t sizes[1] = {rows};
    const struct path *pa = stub_path(&k->stub, sizes);
    return pa != NULL && pa->n_launch == 1 && pa->coop_total != 0;
}

/* The one-launch path (NVIDIA: the target's PTX): row slots that run
 * apart on barriers of their own, then dgamma (and dbeta) summed after a
 * barrier across the launch. Its plan everywhere; on a device with the
 * PTX: rows 1 to 1000 (groups with no rows still meet the barrier), 8 row
 * slots a group, a width no vector divides, accumulate, NULL outputs,
 * the same bits, extreme and tiny rows (the scaled pass on a slot's
 * barriers), layernorm's rows in one pass and in two (first elements far
 * from the mean), its next rows copied to local memory (f16 and bf16,
 * a width that leaves the last vectors of a row to some items), and
 * blocks past the device's compute units, which take the two
 * launches. */
static void test_norm_bwd_fused(void)
{
    static const struct nb_case cases[] = {
        {"rmsnorm_backward", "bf16", 4096, "", TARGET_TENSOR,
         EXTREMES | NULLS | BITS},
        {"layernorm_backward", "f16", 896, ", accumulate: true",
         TARGET_TENSOR, NULLS | BITS | FAR},
        {"layernorm_backward", "f32", 4097, "", TARGET_TENSOR,
         EXTREMES | NULLS | FAR},
        {"rmsnorm_backward", "f32", 1000, ", eps: 1.1754943508222875e-38, "
         "tile: {wg: 32, rows: 4, blocks: 5}", TARGET_TENSOR, TINY | BITS},
        {"layernorm_backward", "bf16", 2560, ", tile: {blocks: 4096}",
         TARGET_TENSOR, BITS | FAR},
        {"rmsnorm_backward", "f16", 2560, ", accumulate: true",
         TARGET_TENSOR, NULLS | BITS},
        {"layernorm_backward", "bf16", 4096, "", TARGET_TENSOR,
         EXTREMES | BITS | FAR},
        {"layernorm_backward", "bf16", 2600, ", accumulate: true",
         TARGET_TENSOR, NULLS | BITS},
    };
    static const size_t rows[] = {1, 2, 7, 300, 1000};
    int device = caps_lacking(CAP_SHFL_SYNC, nu_rt()->caps.have) == 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        if (!nu_spec_ok(&k, "kernels:\n  - {name: t_norm_fused, op: %s, "
                        "dtype: %s, features: %d%s}\n", cases[i].op,
                        cases[i].dtype, cases[i].features, cases[i].more)) {
            nu_kernel_free(&k);
            continue;
        }
        struct plan p;
        nu_plan_for(&k, TARGET_TENSOR, &p);
        long blocks = nu_knob(&k, "blocks");
        TU_CHECK(p.n_path == 2 && p.path[0].coop_total == blocks &&
                     p.path[0].n_launch == 1 && p.path[1].n_launch == 2 &&
                     p.sync_words == 2,
                 "no one-launch path first (%d paths):\n%s", p.n_path,
                 k.yaml);
        if (!device || !nu_build(&k)) {
            nu_kernel_free(&k);
            continue;
        }
        int fits = (unsigned long)blocks <= nu_compute_units();
        TU_CHECK(runs_fused(&k, 1000) == fits,
                 "%ld blocks on %u compute units %s the one-launch path:\n%s",
                 blocks, nu_compute_units(),
                 fits ? "do not take" : "take", k.yaml);
        nu_run_rows(&k, rows, sizeof rows / sizeof rows[0], nu_unit());
        run_checks(&k, cases[i].checks);
        nu_kernel_free(&k);
    }
}

/* Rows of the NVIDIA target that are not whole warps (wg 16), or more
 * slots than bar.sync has ids (16), keep the barriers of the whole group
 * and the two launches: no ROW_SHFL, no one-launch path. */
static void test_norm_bwd_no_slots(void)
{
    static const char *const tiles[] = {"wg: 16, rows: 4", "wg: 32, rows: 16"};
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        struct nu_kernel k;
        if (!nu_spec_ok(&k, "kernels:\n  - {name: t_norm_slots, op: "
                        "rmsnorm_backward, features: 1024, tile: {%s}}\n",
                        tiles[i])) {
            nu_kernel_free(&k);
            continue;
        }
        struct plan p;
        nu_plan_for(&k, TARGET_TENSOR, &p);
        int shfl = -1;
        for (int c = 0; c < p.n_define; c++) {
            if (strcmp(p.define[c].name, "ROW_SHFL") == 0) {
                shfl = (int)p.define[c].i;
            }
        }
        TU_CHECK(shfl == 0 && p.n_path == 1 && p.path[0].coop_total == 0 &&
                     p.sync_words == 0,
                 "{%s}: ROW_SHFL %d, %d paths, sync %ld:\n%s", tiles[i],
                 shfl, p.n_path, p.sync_words, k.yaml);
        nu_kernel_free(&k);
    }
}

/* Which rows in registers hold x and dy as stored, load the next row
 * ahead (into registers, or into local memory by cp.async) and hold
 * gamma: rmsnorm's f16 and bf16 vectors of 4 and 8 as stored with the
 * next row ahead, on NVIDIA too; layernorm's where the slots run apart
 * (NVIDIA) as stored with the next row copied, while the slots' rows fit
 * 48 KiB (f32's do not: one row); elsewhere the next row loads and gamma
 * is held. */
static void test_norm_bwd_rows_held(void)
{
    static const struct {
        const char *op, *dtype, *tile;
        enum target target;
        long as_stored, ahead, gamma, async;
    } cases[] = {
        {"rmsnorm_backward", "bf16", "", TARGET_TENSOR, 1, 1, 0, 0},
        {"rmsnorm_backward", "f16", "", TARGET_TENSOR, 1, 1, 0, 0},
        {"rmsnorm_backward", "f32", "", TARGET_TENSOR, 0, 0, 0, 0},
        {"layernorm_backward", "bf16", "", TARGET_TENSOR, 1, 0, 0, 1},
        {"layernorm_backward", "f16", "", TARGET_TENSOR, 1, 0, 0, 1},
        {"layernorm_backward", "f32", "", TARGET_TENSOR, 0, 0, 0, 0},
        {"layernorm_backward", "f32", ", tile: {wg: 256, rows: 1, vec: 4}",
         TARGET_TENSOR, 0, 0, 0, 1},
        {"layernorm_backward", "bf16", ", tile: {vec: 2}", TARGET_TENSOR, 0,
         0, 0, 0},
        {"rmsnorm_backward", "bf16", ", tile: {vec: 2}", TARGET_TENSOR, 0, 0,
         0, 0},
        {"rmsnorm_backward", "bf16", ", tile: {wg: 64, rows: 2, vec: 4, "
         "mode: registers}", TARGET_GPU, 1, 1, 1, 0},
        {"layernorm_backward", "f16", ", tile: {wg: 64, rows: 2, vec: 4, "
         "mode: registers}", TARGET_GPU, 0, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct nu_kernel k;
        if (!nu_spec_ok(&k, "kernels:\n  - {name: t_norm_held, op: %s, "
                        "dtype: %s, features: 4096%s}\n", cases[i].op,
                        cases[i].dtype, cases[i].tile)) {
            nu_kernel_free(&k);
            continue;
        }
        struct plan p;
        nu_plan_for(&k, cases[i].target, &p);
        long as_stored = nu_define(&p, "ROW_AS_STORED");
        long ahead = nu_define(&p, "ROW_AHEAD");
        long gamma = nu_define(&p, "GAMMA_HELD");
        long async = nu_define(&p, "ROW_AHEAD_ASYNC");
        int needs = (p.needs & CAP_CP_ASYNC) != 0;
        TU_CHECK(as_stored == cases[i].as_stored &&
                     ahead == cases[i].ahead && gamma == cases[i].gamma &&
                     async == cases[i].async && needs == async,
                 "ROW_AS_STORED %ld, ROW_AHEAD %ld, GAMMA_HELD %ld, "
                 "ROW_AHEAD_ASYNC %ld (cp_async needed: %d); wanted %ld, "
                 "%ld, %ld, %ld:\n%s", as_stored, ahead, gamma, async, needs,
                 cases[i].as_stored, cases[i].ahead, cases[i].gamma,
                 cases[i].async, k.yaml);
        nu_kernel_free(&k);
    }
}

/* Every op x dtype x width x device type (--full only). */
static void test_norm_bwd_grid(void)
{
    static const char *const ops[] = {"rmsnorm_backward",
                                      "layernorm_backward"};
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    static const int widths[] = {896, 4097, 11008};
    static const size_t rows[] = {1, 2, 33, 1000};
    if (!test_full) {
        return;
    }
    for (int o = 0; o < 2; o++) {
        for (int d = 0; d < 3; d++) {
            for (int w = 0; w < 3; w++) {
                for (int t = 0; t < 2; t++) {
                    struct nu_kernel k;
                    struct nb_case c = {ops[o], dtypes[d], widths[w],
                                        (o + w) % 2 ? ", accumulate: true"
                                                    : "",
                                        t ? TARGET_CPU : TARGET_GPU, 0};
                    if (nb_build(&k, &c)) {
                        nu_run_rows(&k, rows, 4, nu_unit());
                    }
                    nu_kernel_free(&k);
                }
            }
        }
    }
}

int add_norm_backward_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "norm backward: dtypes, widths, tiles, rows to "
                       "1000, accumulate, NULL dgamma, same bits, extreme "
                       "rows, eps 2^-126", test_norm_bwd_kernels) == NULL ||
                   CU_add_test(s, "norm backward: one launch on NVIDIA, "
                               "row slots apart, blocks past the compute "
                               "units", test_norm_bwd_fused) == NULL ||
                   CU_add_test(s, "norm backward: rows not whole warps, or "
                               "16 slots: whole-group barriers",
                               test_norm_bwd_no_slots) == NULL ||
                   CU_add_test(s, "norm backward: rows held as stored, the "
                               "next row ahead, gamma held",
                               test_norm_bwd_rows_held) == NULL ||
                   CU_add_test(s, "norm backward: every op, dtype, width "
                               "and device type (--full)",
                               test_norm_bwd_grid) == NULL
               ? -1
               : 0;
}
