/* test_attention.c - attention on the device against its naive kernel
 * and float64: odd heads and head dims (H=3/Hkv=1 D=5, H=4/Hkv=2 D=80,
 * D=128, D=256, D=1), MHA, GQA and MQA, causal with seq_q below and above
 * seq_kv (rows that see no key: o = 0 and lse = -inf exactly), a window,
 * a softcap, scores up to +-80, batch > 1, both paths (decode: seq_q up
 * to decode_rows, keys split over work-groups) with seq_kv from 1 to a
 * few thousand, the GPU and CPU defaults and small tiles, every dtype;
 * lse NULL. Joins the numeric suite.
 *
 * Bounds: o as the op's error_bound; lse, float32 in every dtype, to
 * 1e-5 (numeric_util.c holds float32 outputs to the f32 bound). */
#include <CUnit/CUnit.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"

enum { BUF_Q, BUF_K, BUF_V, BUF_O, BUF_LSE };

struct attn_case {
    const char *dtype;
    const char *fields; /* flow-mapping entries after op and dtype */
    enum target target;
    size_t sizes[8][3]; /* (batch, seq_q, seq_kv), a 0 batch ends them */
};

static int attn_build(struct nu_kernel *k, const struct attn_case *c)
{
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(k, "kernels:\n  - {name: t_attn, op: attention, "
                    "dtype: %s, %s}\n", c->dtype, c->fields)) {
        return 0;
    }
    CU_ASSERT(spec_set_target(&k->set, c->target, &d) == 0);
    snprintf(k->yaml + strlen(k->yaml), sizeof k->yaml - strlen(k->yaml),
             "# op defaults for %s\n",
             c->target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
    return nu_build(k);
}

static void run_case(const struct attn_case *c)
{
    struct nu_kernel k;
    if (attn_build(&k, c)) {
        for (int i = 0; i < 8 && c->sizes[i][0] != 0; i++) {
            nu_run_sizes(&k, c->sizes[i], nu_unit());
        }
    }
    nu_kernel_free(&k);
}

/* A sample that keeps the default run short on PoCL (each kernel built
 * costs a second or so): a shape per option, the GPU and CPU defaults. */
static void test_attn_shapes(void)
{
    static const struct attn_case cases[] = {
        /* GQA of 3 heads over 1 (MQA), D = 5, causal, scores up to +-80
         * (scale 16): seq_q above and below seq_kv, batch > 1 */
        {"f32", "heads: 3, kv_heads: 1, head_dim: 5, causal: true, scale: "
         "16", TARGET_GPU, {{1, 1, 1}, {2, 7, 7}, {1, 5, 33}, {2, 40, 17},
                            {3, 9, 4}, {0}}},
        /* the same on the CPU plan, whose exponentials are a polynomial
         * on the exponent bits: differences of scores past -127 in base
         * 2 (the polynomial's clamp), on the prefill and split paths */
        {"f32", "heads: 3, kv_heads: 1, head_dim: 5, causal: true, scale: "
         "16", TARGET_CPU, {{2, 7, 7}, {1, 5, 33}, {2, 40, 17}, {2, 1, 33},
                            {1, 4, 50}, {0}}},
        /* the CPU plan over 4096 and 8192 keys without a mask: each
         * output a weighted sum of values of both signs that cancel, so
         * that its exponentials' error shows (a lesser polynomial
         * failed here) */
        {"f32", "heads: 2, kv_heads: 1, head_dim: 64", TARGET_CPU,
         {{1, 16, 4096}, {1, 8, 8192}, {0}}},
        /* H=4 over 2, D = 80, causal with a window */
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 80, causal: true, "
         "window: 16", TARGET_CPU, {{1, 37, 50}, {2, 50, 37}, {1, 2, 90},
                                    {0}}},
        /* D = 128 with a softcap (scores to +-20: tanh bends); the split
         * path at seq_q 3 */
        {"f16", "heads: 2, head_dim: 128, scale: 1, softcap: 30",
         TARGET_GPU, {{1, 3, 200}, {1, 20, 64}, {0}}},
        /* the CPU plan's softcap (tanh_poly.cl): scores to +-20 with
         * a cap of 30, and to +-80 with 20, past tanh's bend */
        {"f32", "heads: 2, head_dim: 128, scale: 1, softcap: 30",
         TARGET_CPU, {{1, 3, 200}, {1, 20, 64}, {0}}},
        {"f32", "heads: 3, kv_heads: 1, head_dim: 5, causal: true, scale: "
         "16, softcap: 20", TARGET_CPU, {{2, 7, 7}, {1, 5, 33}, {0}}},
        /* D = 256, MQA, causal */
        {"f32", "heads: 2, kv_heads: 1, head_dim: 256, causal: true",
         TARGET_CPU, {{1, 1, 300}, {1, 9, 9}, {1, 12, 5}, {0}}},
        /* the split path in one launch at odd heads (records padded to
         * whole 16-byte words, the merge's vector loads reading past the
         * outputs) and at one split (every work-group the last) */
        {"f32", "heads: 3, kv_heads: 1, head_dim: 5, causal: true, "
         "tile: {split: 2}", TARGET_GPU, {{2, 1, 7}, {1, 4, 33}, {0}}},
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 7, tile: {split: 3}",
         TARGET_GPU, {{3, 2, 40}, {1, 1, 2}, {0}}},
        /* CPUs: the split path in two launches (above, in one, their
         * device computed wrong records at head dims below 8) */
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 7, tile: {split: 3}",
         TARGET_CPU, {{3, 2, 40}, {1, 1, 2}, {0}}},
        {"f32", "heads: 4, kv_heads: 2, head_dim: 16, tile: {split: 1}",
         TARGET_GPU, {{2, 1, 50}, {1, 4, 9}, {0}}},
        /* CPUs' split path (attention_part_rows, a work-item per query
         * position, split and kv heads): GQA at a head of 128 in bf16,
         * batch > 1, chunks past the keys, queries that see no key; a
         * window and a softcap at a head of 24; query rows past a
         * work-item's floats (attention_part) */
        {"bf16", "heads: 8, kv_heads: 2, head_dim: 128, causal: true",
         TARGET_CPU, {{2, 1, 1000}, {1, 3, 77}, {1, 4, 2}, {0}}},
        {"f32", "heads: 6, kv_heads: 3, head_dim: 24, causal: true, "
         "window: 5, softcap: 20, scale: 1", TARGET_CPU,
         {{2, 2, 60}, {1, 1, 3}, {0}}},
        {"f16", "heads: 48, kv_heads: 1, head_dim: 200", TARGET_CPU,
         {{1, 1, 50}, {0}}},
        /* groups past 8 heads: 6 and 8 of a kv head's query heads at a
         * time share its keys' loads */
        {"f32", "heads: 24, kv_heads: 2, head_dim: 16, causal: true",
         TARGET_CPU, {{1, 1, 300}, {2, 3, 40}, {0}}},
        {"bf16", "heads: 16, kv_heads: 1, head_dim: 32, window: 9, causal: "
         "true", TARGET_CPU, {{1, 2, 100}, {0}}},
        /* ... over more splits where its work-items are few: 4 while
         * batch x seq_q x 4 fit 2 a compute unit and seq_kv >= 8, 2,
         * then 1 (on 2 units: 4, 2 and 1 split at batch 1, 2 and 3;
         * 7 keys: 2) */
        {"f32", "heads: 4, kv_heads: 2, head_dim: 16, causal: true, "
         "tile: {split: 1, split_most: 4, split_keys: 2}", TARGET_CPU,
         {{1, 1, 100}, {2, 1, 100}, {3, 1, 100}, {1, 1, 7}, {1, 2, 9},
          {0}}},
        /* CPUs' prefill path (attention_rows, a work-item per cpu_rows
         * positions of a head): positions past the last in a work-item,
         * tiles of keys other than 8 (a score a key, not 8 lanes), a
         * window, seq_q above and below seq_kv */
        {"f32", "heads: 3, kv_heads: 1, head_dim: 16, causal: true, "
         "window: 6, scale: 16, tile: {cpu_rows: 3, block_k: 5}", TARGET_CPU,
         {{2, 7, 7}, {1, 10, 33}, {1, 40, 17}, {0}}},
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 32, causal: true, "
         "tile: {cpu_rows: 8}", TARGET_CPU, {{1, 13, 29}, {2, 9, 9}, {0}}},
        /* ... and without it (cpu_rows 0): the work-group kernel on the
         * CPU plan's exponentials */
        {"f32", "heads: 3, kv_heads: 1, head_dim: 16, causal: true, "
         "window: 6, scale: 16, tile: {cpu_rows: 0}", TARGET_CPU,
         {{1, 10, 33}, {1, 40, 17}, {0}}},
        /* D = 1: a score per key, q.k a product */
        {"f16", "heads: 3, head_dim: 1, causal: true", TARGET_GPU,
         {{2, 5, 9}, {1, 2, 40}, {0}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i]);
    }
}

/* The prefill path on tensor cores (attention_mma: the device suites on
 * NVIDIA compute capability 8.0+; elsewhere each case must validate):
 * heads of 8 to 256 (80, 40 and 8 padded to k16 steps), GQA, MQA, causal
 * with seq_q below, at and above seq_kv (rows that see no key), a window
 * narrower than a tile, a softcap, scores to +-80, 16 to 128 rows a
 * work-group and 16 to 128 keys a tile, last tiles and blocks short,
 * batch > 1, both half dtypes; the split path at seq_q 1 to 8 over 2 to
 * 32768 keys, 16 to 48 rows a work-group, in one launch
 * (attention_mma_part_merged) and, past the sync buffer's 8192 counters
 * (one a query row here), in two (attention_mma_part, then
 * attention_combine). */
static void test_attn_mma(void)
{
    static const struct attn_case cases[] = {
        {"bf16", "heads: 8, kv_heads: 2, head_dim: 128, causal: true, "
         "tile: {engine: mma}", TARGET_GPU,
         {{1, 130, 130}, {2, 37, 300}, {1, 70, 20}, {1, 5, 1000}, {0}}},
        {"f16", "heads: 4, kv_heads: 2, head_dim: 80, causal: true, "
         "window: 13, tile: {engine: mma, mma_q: 32, mma_k: 16}",
         TARGET_GPU, {{1, 100, 100}, {2, 33, 90}, {0}}},
        {"bf16", "heads: 2, head_dim: 256, softcap: 50, scale: 0.5, "
         "tile: {engine: mma}", TARGET_GPU, {{1, 65, 200}, {2, 9, 33}, {0}}},
        {"f16", "heads: 6, kv_heads: 1, head_dim: 64, scale: 1, "
         "tile: {engine: mma, mma_q: 128, mma_k: 128}", TARGET_GPU,
         {{1, 150, 260}, {3, 7, 5}, {0}}},
        {"bf16", "heads: 3, head_dim: 8, causal: true, scale: 16, "
         "tile: {engine: mma, mma_q: 16, mma_k: 32}", TARGET_GPU,
         {{1, 40, 40}, {2, 50, 17}, {0}}},
        {"f16", "heads: 4, kv_heads: 4, head_dim: 40, tile: {engine: mma}",
         TARGET_GPU, {{1, 64, 64}, {1, 3, 77}, {0}}},
        {"bf16", "heads: 6, kv_heads: 3, head_dim: 96, causal: true",
         TARGET_TENSOR, {{1, 300, 300}, {0}}},
        /* the split path (attention_mma_part): seq_q up to decode_rows,
         * chunks past the keys, a chunk's last tile short, 1 to 3 warps
         * of rows, queries that see no key */
        {"bf16", "heads: 8, kv_heads: 2, head_dim: 128, causal: true, "
         "tile: {engine: mma}", TARGET_GPU,
         {{2, 1, 4100}, {1, 3, 1000}, {3, 2, 7}, {1, 4, 70}, {1, 4, 2},
          {1, 1, 32768}, {0}}},
        {"f16", "heads: 6, kv_heads: 1, head_dim: 64, softcap: 20, "
         "tile: {engine: mma, split_q: 48, split: 5, decode_rows: 8, "
         "mma_k: 32}", TARGET_GPU, {{1, 8, 333}, {2, 1, 64}, {0}}},
        {"f16", "heads: 2, kv_heads: 1, head_dim: 16, causal: true, "
         "tile: {engine: mma}", TARGET_GPU,
         {{8192, 1, 40}, {8193, 1, 40}, {4097, 2, 3}, {0}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (caps_lacking(CAP_MMA_SYNC_BF16_F16, nu_rt()->caps.have) == 0) {
            run_case(&cases[i]);
            continue;
        }
        struct nu_kernel k;
        CU_ASSERT(nu_spec_ok(&k, "kernels:\n  - {name: t_attn, op: "
                             "attention, dtype: %s, %s}\n", cases[i].dtype,
                             cases[i].fields));
        nu_kernel_free(&k);
    }
}

/* The prefill path on warpgroups (attention_wgmma: the device suites on
 * NVIDIA compute capability 9.0; elsewhere each case must validate):
 * heads of 64, 80, 96, 128 and 256, GQA, MQA, causal with seq_q below,
 * at and above seq_kv (rows that see no key), a window narrower than a
 * tile, a softcap, scores to +-80, one to four warpgroups a work-group
 * and 64 or 128 keys a tile (the split path's tiles apart), last tiles
 * and blocks short, batch > 1, both half dtypes, the defaults of
 * compute capability 9.0; tiles loaded by the tensor memory accelerator
 * (wg_tma, the default past a head of 64: attention_wgmma_tma) and by
 * cp.async at every head. */
static void test_attn_wgmma(void)
{
    static const struct attn_case cases[] = {
        {"bf16", "heads: 8, kv_heads: 2, head_dim: 128, causal: true, "
         "tile: {engine: wgmma}", TARGET_GPU,
         {{1, 130, 130}, {2, 37, 300}, {1, 70, 20}, {1, 5, 1000}, {0}}},
        {"f16", "heads: 4, kv_heads: 2, head_dim: 64, causal: true, "
         "window: 13, tile: {engine: wgmma, mma_q: 64, wg_k: 128}",
         TARGET_GPU, {{1, 100, 100}, {2, 33, 90}, {0}}},
        {"bf16", "heads: 2, head_dim: 128, softcap: 50, scale: 0.5, "
         "tile: {engine: wgmma, mma_q: 192, wg_k: 128}", TARGET_GPU,
         {{1, 65, 200}, {2, 9, 33}, {0}}},
        {"f16", "heads: 6, kv_heads: 1, head_dim: 64, scale: 1, "
         "tile: {engine: wgmma, mma_q: 256}", TARGET_GPU,
         {{1, 150, 260}, {3, 7, 5}, {0}}},
        /* tiles of 64 keys on the prefill path, 32 on the split path
         * (seq_q up to 4) in the same program */
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 128, causal: true, "
         "tile: {engine: wgmma, wg_k: 64, mma_k: 32}", TARGET_GPU,
         {{1, 4, 300}, {2, 1, 77}, {1, 129, 129}, {0}}},
        {"bf16", "heads: 3, head_dim: 128, causal: true, scale: 16, "
         "tile: {engine: wgmma, mma_q: 64}", TARGET_GPU,
         {{1, 300, 300}, {2, 50, 17}, {0}}},
        {"bf16", "heads: 6, kv_heads: 3, head_dim: 128, causal: true",
         TARGET_SM90A, {{1, 300, 300}, {1, 2, 700}, {0}}},
        {"f16", "heads: 4, kv_heads: 1, head_dim: 64, causal: true, "
         "tile: {engine: wgmma, wg_tma: true}", TARGET_GPU,
         {{2, 70, 200}, {1, 129, 129}, {0}}},
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 128, causal: true, "
         "window: 100, tile: {engine: wgmma, wg_tma: false}", TARGET_GPU,
         {{1, 300, 300}, {2, 9, 33}, {0}}},
        {"f16", "heads: 4, kv_heads: 2, head_dim: 128, causal: true, "
         "window: 100, tile: {engine: wgmma}", TARGET_GPU,
         {{1, 300, 300}, {2, 9, 33}, {0}}},
        /* heads of 80 and 96 (a second block of 64 part empty) and 256 */
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 80, causal: true, "
         "tile: {engine: wgmma, wg_tma: false}", TARGET_GPU,
         {{1, 130, 130}, {2, 37, 300}, {1, 5, 1000}, {0}}},
        {"f16", "heads: 3, kv_heads: 1, head_dim: 96, causal: true, "
         "window: 13, "
         "tile: {engine: wgmma, mma_q: 128, wg_k: 128}", TARGET_GPU,
         {{1, 200, 200}, {2, 9, 33}, {0}}},
        {"bf16", "heads: 2, head_dim: 80, softcap: 30, "
         "tile: {engine: wgmma, mma_q: 64, wg_k: 64, wg_tma: false}",
         TARGET_GPU,
         {{1, 65, 200}, {0}}},
        {"bf16", "heads: 2, head_dim: 256, causal: true, softcap: 30, "
         "tile: {engine: wgmma}", TARGET_GPU,
         {{1, 150, 260}, {2, 7, 5}, {0}}},
        {"f16", "heads: 4, kv_heads: 2, head_dim: 256, causal: true, "
         "tile: {engine: wgmma, mma_q: 64, wg_tma: false}", TARGET_GPU,
         {{1, 129, 129}, {2, 30, 70}, {0}}},
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 96, causal: true",
         TARGET_SM90A, {{1, 300, 300}, {1, 2, 700}, {0}}},
        /* the second block of 80 and 96 by the accelerator: a whole box,
         * the next head's elements in it (zeros past the last head) */
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 80, causal: true, "
         "tile: {engine: wgmma}", TARGET_GPU,
         {{1, 130, 130}, {2, 37, 300}, {1, 5, 1000}, {0}}},
        {"f16", "heads: 3, kv_heads: 3, head_dim: 96, window: 50, "
         "causal: true, tile: {engine: wgmma, mma_q: 192, wg_k: 64}",
         TARGET_GPU, {{1, 200, 200}, {2, 9, 33}, {0}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (caps_lacking(CAP_WGMMA, nu_rt()->caps.have) == 0) {
            run_case(&cases[i]);
            continue;
        }
        struct nu_kernel k;
        CU_ASSERT(nu_spec_ok(&k, "kernels:\n  - {name: t_attn, op: "
                             "attention, dtype: %s, %s}\n", cases[i].dtype,
                             cases[i].fields));
        nu_kernel_free(&k);
    }
}

/* Runs K at SIZES with the buffers of C, lse given unless NO_LSE; reads
 * the outputs into GOT. */
static void run_stub(struct nu_kernel *k, const struct vcase *c,
                     const struct vbuffers *b, int no_lse, float *got)
{
    cl_mem mem[SPECL_MAX_BUFFERS];
    int canary_ok = 0;
    memcpy(mem, b->mem, sizeof mem);
    if (no_lse) {
        mem[BUF_LSE] = NULL;
    }
    CU_ASSERT(vbuffers_reset_output(nu_rt(), c, b) == CL_SUCCESS);
    cl_int err = stub_enqueue(&k->stub, nu_rt()->queue, c->sizes, mem, 0,
                              NULL, NULL);
    TU_CHECK(err == CL_SUCCESS, "enqueue: %s", rt_status(err));
    CU_ASSERT(clFinish(nu_rt()->queue) == CL_SUCCESS);
    CU_ASSERT(vbuffers_read_output(nu_rt(), c, b, got, &canary_ok) ==
              CL_SUCCESS);
    CU_ASSERT(canary_ok);
}

/* The small-tile kernel of test_attn_decode: 4 rows of 2 work-items, 4
 * keys a tile, 3 splits up to seq_q 2. */
#define TINY_HEADS 4
#define TINY_DIM 16
#define TINY_YAML                                                            \
    "kernels:\n  - {name: t_attn, op: attention, heads: 4, kv_heads: 2, "   \
    "head_dim: 16, causal: true, tile: {block_q: 4, block_k: 4, items: 8, " \
    "split: 3, split_most: 5, split_keys: 7, decode_rows: 2}}\n"

/* Causal at seq_q > seq_kv: the first seq_q - seq_kv queries see no key,
 * o exactly 0 and lse exactly -inf, the others as float64; with lse
 * NULL, o the same bits and lse's buffer untouched. */
static void check_unseen(struct nu_kernel *k, const size_t *sizes)
{
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_FATAL(vcase_init_sizes(&c, k->ks, sizes, 5, nu_unit()) == 0);
    CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
    float *got = malloc(c.out_count * sizeof *got);
    float *bare = malloc(c.out_count * sizeof *bare);
    double *ref = vcase_reference(&c);
    CU_ASSERT_FATAL(got != NULL && bare != NULL && ref != NULL);
    run_stub(k, &c, &b, 0, got);
    run_stub(k, &c, &b, 1, bare);
    size_t sq = sizes[1], skv = sizes[2], d = TINY_DIM, h_n = TINY_HEADS;
    const float *o = got + c.out_at[BUF_O];
    const float *lse = got + c.out_at[BUF_LSE];
    int exact = 1, untouched = 1;
    for (size_t bb = 0; bb < sizes[0]; bb++) {
        for (size_t i = 0; i < sq - skv; i++) {
            for (size_t h = 0; h < h_n; h++) {
                size_t row = (bb * sq + i) * h_n + h;
                for (size_t e = 0; e < d; e++) {
                    exact &= o[row * d + e] == 0.0f &&
                             !signbit(o[row * d + e]);
                }
                float l = lse[(bb * h_n + h) * sq + i];
                exact &= isinf(l) && l < 0;
            }
        }
    }
    for (size_t e = 0; e < c.count[BUF_LSE]; e++) {
        untouched &= isnan(bare[c.out_at[BUF_LSE] + e]);
    }
    TU_CHECK(exact, "sizes %zu %zu %zu: a query that sees no key got other "
             "than o = 0, lse = -inf", sizes[0], sq, skv);
    TU_CHECK(untouched, "lse NULL, yet its buffer was written");
    TU_CHECK(memcmp(o, bare + c.out_at[BUF_O], c.count[BUF_O] * sizeof *o) ==
                 0, "o differs with lse NULL");
    for (int i = BUF_O; i <= BUF_LSE; i++) {
        double err = rel_l2(got + c.out_at[i], ref + c.out_at[i],
                            c.count[i]);
        TU_CHECK(err <= 1e-5, "%s error %g", c.plan.buffer[i].name, err);
    }
    free(got);
    free(bare);
    free(ref);
    vbuffers_free(&b);
    vcase_free(&c);
}

/* A buffer of BYTES on the open device (NULL when that fails). */
static cl_mem device_buffer(size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(nu_rt()->ctx, CL_MEM_READ_WRITE, bytes, NULL,
                              &err);
    return err == CL_SUCCESS ? m : NULL;
}

/* Each size must be 1 to INT_MAX, each buffer as large as its own sizes
 * say (k and v by seq_kv, q and o by seq_q, lse float32), o may not be
 * q; lse may be NULL, no other buffer; NAME.h names the handle and the
 * queue apart from q and k. */
static void check_misuse(struct nu_kernel *k)
{
    enum { B = 2, SQ = 3, SKV = 5, H = TINY_HEADS, D = TINY_DIM };
    size_t need[5] = {4 * B * SQ * H * D, 4 * B * SKV * 2 * D,
                      4 * B * SKV * 2 * D, 4 * B * SQ * H * D, 4 * B * H * SQ};
    cl_mem full[5], mem[5];
    for (int i = 0; i < 5; i++) {
        full[i] = device_buffer(need[i]);
        CU_ASSERT_FATAL(full[i] != NULL);
    }
    cl_command_queue q = nu_rt()->queue;
    struct {
        size_t sizes[3];
        cl_int want;
    } calls[] = {{{B, SQ, SKV}, CL_SUCCESS},
                 {{B, 1, 1}, CL_SUCCESS},
                 {{0, SQ, SKV}, CL_INVALID_VALUE},
                 {{B, 0, SKV}, CL_INVALID_VALUE},
                 {{B, SQ, 0}, CL_INVALID_VALUE},
                 {{B, SQ, (size_t)INT_MAX + 1}, CL_INVALID_VALUE},
                 {{B + 1, SQ, SKV}, CL_INVALID_BUFFER_SIZE},
                 {{B, SQ + 1, SKV}, CL_INVALID_BUFFER_SIZE},
                 {{B, SQ, SKV + 1}, CL_INVALID_BUFFER_SIZE}};
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        cl_int got = stub_enqueue_scratch(&k->stub, q, calls[c].sizes, full,
                                          NULL, 0, NULL, NULL);
        TU_CHECK(got == calls[c].want, "sizes %zu %zu %zu: %s, not %s",
                 calls[c].sizes[0], calls[c].sizes[1], calls[c].sizes[2],
                 rt_status(got), rt_status(calls[c].want));
    }
    size_t sizes[3] = {B, SQ, SKV};
    for (int short_one = 0; short_one < 5; short_one++) {
        memcpy(mem, full, sizeof mem);
        mem[short_one] = device_buffer(need[short_one] - 4);
        CU_ASSERT_FATAL(mem[short_one] != NULL);
        cl_int got = stub_enqueue_scratch(&k->stub, q, sizes, mem, NULL, 0,
                                          NULL, NULL);
        TU_CHECK(got == CL_INVALID_BUFFER_SIZE, "buffer %d short: %s",
                 short_one, rt_status(got));
        clReleaseMemObject(mem[short_one]);
    }
    for (int i = 0; i < 5; i++) {
        memcpy(mem, full, sizeof mem);
        mem[i] = NULL;
        cl_int got = stub_enqueue_scratch(&k->stub, q, sizes, mem, NULL, 0,
                                          NULL, NULL);
        TU_CHECK(got == (i == BUF_LSE ? CL_SUCCESS : CL_INVALID_MEM_OBJECT),
                 "buffer %d NULL: %s", i, rt_status(got));
    }
    memcpy(mem, full, sizeof mem);
    mem[BUF_O] = mem[BUF_Q];
    CU_ASSERT_EQUAL(stub_enqueue_scratch(&k->stub, q, sizes, mem, NULL, 0,
                                         NULL, NULL),
                    CL_INVALID_VALUE);
    clFinish(q);
    for (int i = 0; i < 5; i++) {
        clReleaseMemObject(full[i]);
    }
    struct emitted e;
    char err[256];
    CU_ASSERT_FATAL(emit_kernel(tu_gen_variants(k->ks), &e, err,
                                sizeof err) == 0);
    char *flat = tu_flat(buf_str(&e.h));
    TU_CHECK(flat != NULL &&
                 strstr(flat, "cl_int t_attn_enqueue(const struct t_attn "
                              "*handle, cl_command_queue queue, size_t "
                              "batch, size_t seq_q, size_t seq_kv, cl_mem "
                              "q, cl_mem k,") != NULL,
             "t_attn.h: enqueue's parameters");
    free(flat);
    emitted_free(&e);
}

/* Small tiles: decode (seq_q 1, 2) over seq_kv from 1 to 32768 (chunks
 * past the keys, a last tile short), the row path past decode_rows,
 * batch 3; the split path in one launch over 5 splits while its
 * work-groups (10 a query row: 5 splits of 2 kv heads' blocks) are at
 * most 8 a compute unit (batch 1 from 2 units) and take 7 keys each
 * (35 keys and more), over 3 while its
 * counters (2 a query row) fill the 8192 words of the sync buffer, and
 * in two launches past them (batch 2049 at seq_q 2); queries that see no
 * key on every path; paths chosen by seq_q, and by batch * seq_q. */
static void test_attn_decode(void)
{
    static const size_t sizes[][3] = {{1, 1, 1},    {3, 1, 2},
                                      {1, 2, 5},    {2, 1, 64},
                                      {1, 1, 1000}, {1, 2, 3000},
                                      {1, 1, 32768}, {1, 3, 3},
                                      {2, 5, 2},    {2048, 2, 3},
                                      {2049, 2, 3}, {2, 2, 7},
                                      {1, 1, 34},   {1, 1, 35}};
    static const size_t unseen[][3] = {{2, 2, 1}, {2049, 2, 1},
                                       {1, 19, 6}};
    struct nu_kernel k;
    if (nu_spec_ok(&k, TINY_YAML) && nu_build(&k)) {
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            nu_run_sizes(&k, sizes[i], nu_unit());
        }
        for (size_t i = 0; i < sizeof unseen / sizeof unseen[0]; i++) {
            check_unseen(&k, unseen[i]);
        }
        check_misuse(&k);
        size_t one[3] = {1, 1, 4096}, dec[3] = {64, 2, 4096};
        size_t few[3] = {1, 1, 34}, enough[3] = {1, 1, 35};
        size_t full[3] = {2048, 2, 1}, past[3] = {2049, 2, 1};
        size_t pre[3] = {4096, 3, 4096};
        /* the 5 splits' 10 work-groups a query row, at most 8 a unit */
        CU_ASSERT_EQUAL(k.stub.fn_path_index(k.stub.handle, one),
                        10 <= 8 * nu_compute_units() ? 0 : 1);
        CU_ASSERT_EQUAL(k.stub.fn_path_index(k.stub.handle, enough),
                        10 <= 8 * nu_compute_units() ? 0 : 1);
        /* fewer than 7 keys a work-group over 5 splits */
        CU_ASSERT_EQUAL(k.stub.fn_path_index(k.stub.handle, few), 1);
        CU_ASSERT_EQUAL(k.stub.fn_path_index(k.stub.handle, full), 1);
        CU_ASSERT_EQUAL(k.stub.fn_path_index(k.stub.handle, past), 2);
        CU_ASSERT_EQUAL(k.stub.fn_path_index(k.stub.handle, pre), 3);
        /* records of 16 outputs, max and sum in 20 floats: 5 a row
         * while the 5 splits' path may run (at most 1024 compute units
         * x 8 work-groups of its 10 a query row: 819 query rows), 3
         * past that */
        CU_ASSERT(k.stub.fn_scratch_bytes(dec) ==
                  64 * 2 * TINY_HEADS * 5 * 20 * sizeof(float));
        CU_ASSERT(k.stub.fn_scratch_bytes(past) ==
                  2049 * 2 * TINY_HEADS * 3 * 20 * sizeof(float));
    }
    nu_kernel_free(&k);
}

/* Every dtype x device type on a GQA shape with each option (--full). */
static void test_attn_grid(void)
{
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    static const char *const fields[] = {
        "heads: 8, kv_heads: 2, head_dim: 64",
        "heads: 8, kv_heads: 2, head_dim: 128, causal: true",
        "heads: 6, kv_heads: 3, head_dim: 96, causal: true, window: 100",
        "heads: 4, kv_heads: 4, head_dim: 256, softcap: 50",
        "heads: 8, kv_heads: 1, head_dim: 64, scale: 1",
        "heads: 2, head_dim: 4, scale: 20, softcap: 50",
        "heads: 2, head_dim: 255, causal: true",
        "heads: 5, kv_heads: 1, head_dim: 1, causal: true, window: 3"};
    if (!test_full) {
        return;
    }
    for (int f = 0; f < 8; f++) {
        for (int d = 0; d < 3; d++) {
            for (int t = 0; t < 2; t++) {
                struct attn_case c = {dtypes[d], fields[f],
                                      t ? TARGET_CPU : TARGET_GPU,
                                      {{1, 1, 4000}, {2, 3, 257},
                                       {2, 130, 130}, {1, 200, 77},
                                       {1, 65, 300}, {0}}};
                run_case(&c);
            }
        }
    }
}

int add_attention_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "attention: odd heads and dims, GQA, MQA, causal, "
                       "window, softcap, scores to +-80, dtypes",
                       test_attn_shapes) == NULL ||
                   CU_add_test(s, "attention: decode over 1 to 32768 keys, "
                               "small tiles, the split path in one "
                               "launch and in two, paths by seq_q and "
                               "batch, queries that see no key, lse "
                               "NULL, misuse",
                               test_attn_decode) == NULL ||
                   CU_add_test(s, "attention: the prefill path on tensor "
                               "cores (engine: mma)", test_attn_mma) == NULL ||
                   CU_add_test(s, "attention: the prefill path on warpgroup "
                               "tensor cores (engine: wgmma)",
                               test_attn_wgmma) == NULL ||
                   CU_add_test(s, "attention: every dtype, device type and "
                               "option (--full)", test_attn_grid) == NULL
               ? -1
               : 0;
}
