/* test_attention_backward.c - attention_backward on the device against
 * its naive kernels and float64, o and lse made the forward's of each
 * case's q, k and v (attention's float64 reference), so that every
 * probability is one of a softmax: odd heads and head dims (D = 5, 80,
 * 128, 256, 1), MHA, GQA and MQA, causal with seq_q below and above
 * seq_kv (queries that see no key: lse -inf, dq exactly 0), a window, a
 * softcap, batch > 1, every dtype, the GPU and CPU defaults and small
 * tiles; dq, dk, dv the same bits run to run; the stub's refusals.
 * Joins the numeric suite. */
#include <CUnit/CUnit.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numeric_util.h"
#include "suites.h"
#include "testutil.h"

enum { BUF_Q, BUF_K, BUF_V, BUF_O, BUF_DO, BUF_LSE, BUF_DQ, BUF_DK, BUF_DV,
       N_BUF };

struct abw_case {
    const char *dtype;
    const char *fields; /* flow-mapping entries after op and dtype */
    enum target target;
    size_t sizes[6][3]; /* (batch, seq_q, seq_kv), a 0 batch ends them */
};

/* C's o and lse as the forward computes them from its q, k and v (the
 * fields of attention and attention_backward are the same keys), o
 * rounded to the storage dtype. */
static void forward_fill(struct vcase *c)
{
    const struct op_def *fwd = op_find("attention");
    const float *in[5] = {c->host[BUF_Q], c->host[BUF_K], c->host[BUF_V],
                          NULL, NULL};
    double *o = malloc(c->count[BUF_O] * sizeof *o);
    double *lse = malloc(c->count[BUF_LSE] * sizeof *lse);
    double *out[5] = {NULL, NULL, NULL, o, lse};
    CU_ASSERT_FATAL(fwd != NULL && o != NULL && lse != NULL);
    CU_ASSERT_FATAL(fwd->reference(c->ks, in, c->sizes, out) == 0);
    for (size_t i = 0; i < c->count[BUF_O]; i++) {
        c->host[BUF_O][i] = round_to_dtype((float)o[i], c->ks->dtype);
    }
    for (size_t i = 0; i < c->count[BUF_LSE]; i++) {
        c->host[BUF_LSE][i] = (float)lse[i];
    }
    free(o);
    free(lse);
}

static int abw_build(struct nu_kernel *k, const struct abw_case *c)
{
    struct diags d = {.out = stderr};
    if (!nu_spec_ok(k, "kernels:\n  - {name: t_abw, op: attention_backward, "
                    "dtype: %s, %s}\n", c->dtype, c->fields)) {
        return 0;
    }
    k->fill = forward_fill;
    CU_ASSERT(spec_set_target(&k->set, c->target, &d) == 0);
    snprintf(k->yaml + strlen(k->yaml), sizeof k->yaml - strlen(k->yaml),
             "# op defaults for %s\n",
             c->target == TARGET_CPU ? "CPUs (--target cpu)" : "GPUs");
    return nu_build(k);
}

static void run_case(const struct abw_case *c)
{
    struct nu_kernel k;
    if (abw_build(&k, c)) {
        for (int i = 0; i < 6 && c->sizes[i][0] != 0; i++) {
            nu_run_sizes(&k, c->sizes[i], nu_unit());
        }
    }
    nu_kernel_free(&k);
}

static void test_abw_shapes(void)
{
    static const struct abw_case cases[] = {
        /* MQA of 3 heads, D = 5, causal, scores to +-20: seq_q above and
         * below seq_kv, batch > 1 */
        {"f32", "heads: 3, kv_heads: 1, head_dim: 5, causal: true, scale: "
         "4", TARGET_GPU, {{1, 1, 1}, {2, 7, 7}, {1, 5, 33}, {2, 40, 17},
                           {3, 9, 4}, {0}}},
        /* the CPU plan's exponentials (a polynomial on the exponent
         * bits) over scores to +-80: (s - lse) in base 2 past -127, the
         * polynomial's clamp */
        {"f32", "heads: 3, kv_heads: 1, head_dim: 5, causal: true, scale: "
         "16", TARGET_CPU, {{2, 7, 7}, {1, 5, 33}, {2, 40, 17}, {0}}},
        /* the CPU plan over 4096 keys without a mask (dq a sum over
         * them) */
        {"f32", "heads: 2, kv_heads: 1, head_dim: 64", TARGET_CPU,
         {{1, 16, 4096}, {0}}},
        /* H=4 over 2, D = 80, causal with a window */
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 80, causal: true, "
         "window: 16", TARGET_CPU, {{1, 37, 50}, {2, 50, 37}, {1, 2, 90},
                                    {0}}},
        /* D = 128 with a softcap (scores to +-20: tanh bends) */
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
        /* D = 1 */
        {"f16", "heads: 3, head_dim: 1, causal: true", TARGET_GPU,
         {{2, 5, 9}, {1, 2, 40}, {0}}},
        /* GQA with small tiles that divide nothing: a block's rows and a
         * tile's keys end short, windows cut tiles */
        {"f32", "heads: 6, kv_heads: 2, head_dim: 12, causal: true, "
         "window: 7, softcap: 5, tile: {block_q: 8, block_k: 4, tile_q: "
         "3, tile_k: 5}", TARGET_GPU, {{2, 33, 47}, {1, 47, 33}, {0}}},
        {"bf16", "heads: 8, kv_heads: 2, head_dim: 64", TARGET_GPU,
         {{1, 70, 130}, {0}}},
        /* CPUs' work-item kernels (attention_backward_dq_rows, _dkv_rows)
         * at cpu_rows that divide nothing: a work-item's rows and keys
         * end short, span positions and heads, windows cut tiles; heads
         * of 12 (a lane at a time) and 16 (8 lanes) */
        {"f32", "heads: 6, kv_heads: 2, head_dim: 12, causal: true, "
         "window: 7, softcap: 5, tile: {cpu_rows: 3}", TARGET_CPU,
         {{2, 33, 47}, {1, 47, 33}, {0}}},
        {"f32", "heads: 6, kv_heads: 2, head_dim: 16, causal: true, "
         "window: 7, scale: 2, tile: {cpu_rows: 5}", TARGET_CPU,
         {{2, 33, 47}, {1, 47, 33}, {1, 1, 9}, {0}}},
        {"bf16", "heads: 8, kv_heads: 2, head_dim: 64, tile: {cpu_rows: "
         "8}", TARGET_CPU, {{1, 70, 130}, {0}}},
        /* ... and without them (cpu_rows 0): the work-group kernels on
         * the CPU plan's exponentials */
        {"f32", "heads: 6, kv_heads: 2, head_dim: 12, causal: true, "
         "window: 7, softcap: 5, tile: {cpu_rows: 0}", TARGET_CPU,
         {{1, 47, 33}, {0}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i]);
    }
}

/* The small-tile kernel of the exactness and misuse checks. */
#define TINY_HEADS 4
#define TINY_KV 2
#define TINY_DIM 16
#define TINY_YAML                                                         \
    "kernels:\n  - {name: t_abw, op: attention_backward, heads: 4, "     \
    "kv_heads: 2, head_dim: 16, causal: true, tile: {block_q: 8, "       \
    "block_k: 4, tile_q: 4, tile_k: 4}}\n"

/* The same shape on tensor cores, bf16. */
#define TINY_MMA_YAML                                                     \
    "kernels:\n  - {name: t_abw, op: attention_backward, dtype: bf16, "  \
    "heads: 4, kv_heads: 2, head_dim: 16, causal: true, tile: {engine: " \
    "mma, mma_q: 16, mma_k: 16, mma_tile: 16}}\n"

/* Runs K on C's buffers B, reads the outputs into GOT. */
static void run_stub(struct nu_kernel *k, const struct vcase *c,
                     const struct vbuffers *b, float *got)
{
    int canary_ok = 0;
    CU_ASSERT(vbuffers_reset_output(nu_rt(), c, b) == CL_SUCCESS);
    cl_int err = stub_enqueue(&k->stub, nu_rt()->queue, c->sizes, b->mem, 0,
                              NULL, NULL);
    TU_CHECK(err == CL_SUCCESS, "enqueue: %s", rt_status(err));
    CU_ASSERT(clFinish(nu_rt()->queue) == CL_SUCCESS);
    CU_ASSERT(vbuffers_read_output(nu_rt(), c, b, got, &canary_ok) ==
              CL_SUCCESS);
    CU_ASSERT(canary_ok);
}

/* Causal at seq_q > seq_kv: the first seq_q - seq_kv queries see no key
 * (lse -inf), their dq rows exactly +0; two runs give the same bits; every
 * output within BOUND of float64 (the f32 bound for float kernels). */
static void check_exact(struct nu_kernel *k, const size_t *sizes,
                        double bound)
{
    struct vcase c;
    struct vbuffers b;
    CU_ASSERT_FATAL(vcase_init_sizes(&c, k->ks, sizes, 7, nu_unit()) == 0);
    forward_fill(&c);
    CU_ASSERT_FATAL(vbuffers_create(nu_rt(), &c, &b) == CL_SUCCESS);
    float *got = malloc(c.out_count * sizeof *got);
    float *again = malloc(c.out_count * sizeof *again);
    double *ref = vcase_reference(&c);
    CU_ASSERT_FATAL(got != NULL && again != NULL && ref != NULL);
    run_stub(k, &c, &b, got);
    run_stub(k, &c, &b, again);
    size_t sq = sizes[1], skv = sizes[2], d = TINY_DIM;
    const float *dq = got + c.out_at[BUF_DQ];
    int zero = 1;
    for (size_t bb = 0; bb < sizes[0]; bb++) {
        for (size_t i = 0; sq > skv && i < sq - skv; i++) {
            for (size_t e = 0; e < TINY_HEADS * d; e++) {
                float x = dq[(bb * sq + i) * TINY_HEADS * d + e];
                zero &= x == 0.0f && !signbit(x);
            }
        }
    }
    TU_CHECK(zero, "sizes %zu %zu %zu: a query that sees no key got a dq "
             "other than 0", sizes[0], sq, skv);
    TU_CHECK(memcmp(got, again, c.out_count * sizeof *got) == 0,
             "sizes %zu %zu %zu: two runs differ", sizes[0], sq, skv);
    for (int i = BUF_DQ; i <= BUF_DV; i++) {
        double err = rel_l2(got + c.out_at[i], ref + c.out_at[i],
                            c.count[i]);
        TU_CHECK(err <= bound, "%s error %g", c.plan.buffer[i].name, err);
    }
    free(got);
    free(again);
    free(ref);
    vbuffers_free(&b);
    vcase_free(&c);
}

static cl_mem device_buffer(size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(nu_rt()->ctx, CL_MEM_READ_WRITE, bytes, NULL,
                              &err);
    return err == CL_SUCCESS ? m : NULL;
}

/* Each size 1 to INT_MAX, each buffer as large as its sizes say, none
 * NULL (lse is required), dq not q. */
static void check_misuse(struct nu_kernel *k)
{
    enum { B = 2, SQ = 3, SKV = 5, H = TINY_HEADS, D = TINY_DIM };
    const size_t qb = 4 * B * SQ * H * D, kb = 4 * B * SKV * TINY_KV * D;
    const size_t need[N_BUF] = {qb, kb, kb, qb, qb, 4 * B * H * SQ, qb, kb,
                                kb};
    cl_mem full[N_BUF], mem[N_BUF];
    for (int i = 0; i < N_BUF; i++) {
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
    for (int i = 0; i < N_BUF; i++) {
        memcpy(mem, full, sizeof mem);
        mem[i] = device_buffer(need[i] - 4);
        CU_ASSERT_FATAL(mem[i] != NULL);
        cl_int got = stub_enqueue_scratch(&k->stub, q, sizes, mem, NULL, 0,
                                          NULL, NULL);
        TU_CHECK(got == CL_INVALID_BUFFER_SIZE, "buffer %d short: %s", i,
                 rt_status(got));
        clReleaseMemObject(mem[i]);
        memcpy(mem, full, sizeof mem);
        mem[i] = NULL;
        got = stub_enqueue_scratch(&k->stub, q, sizes, mem, NULL, 0, NULL,
                                   NULL);
        TU_CHECK(got == CL_INVALID_MEM_OBJECT, "buffer %d NULL: %s", i,
                 rt_status(got));
    }
    memcpy(mem, full, sizeof mem);
    mem[BUF_DQ] = mem[BUF_Q];
    CU_ASSERT_EQUAL(stub_enqueue_scratch(&k->stub, q, sizes, mem, NULL, 0,
                                         NULL, NULL),
                    CL_INVALID_VALUE);
    clFinish(q);
    for (int i = 0; i < N_BUF; i++) {
        clReleaseMemObject(full[i]);
    }
}

static void test_abw_exact(void)
{
    static const size_t sizes[][3] = {{2, 9, 4}, {1, 19, 6}, {1, 5, 30}};
    struct nu_kernel k;
    if (nu_spec_ok(&k, TINY_YAML) && nu_build(&k)) {
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            check_exact(&k, sizes[i], 1e-4);
        }
        check_misuse(&k);
    }
    nu_kernel_free(&k);
}

/* On tensor cores (attention_backward_dkv_mma, _dq_mma: the device
 * suites on NVIDIA compute capability 8.0+; elsewhere each case must
 * validate): heads of 8 to 256 (80, 40 and 8 padded to k16 steps; 200
 * and 256 at the defaults), GQA, MQA, causal with seq_q below, at and
 * above seq_kv (queries that see no
 * key), a window narrower than a tile, a softcap, scores to +-80, 16 to
 * 128 rows or keys a work-group and 16 to 64 columns a score tile, last
 * tiles and blocks short, batch > 1, both half dtypes; dq 0 where no key
 * is seen and the same bits twice. */
static void test_abw_mma(void)
{
    static const struct abw_case cases[] = {
        {"bf16", "heads: 8, kv_heads: 2, head_dim: 128, causal: true, "
         "tile: {engine: mma}", TARGET_GPU,
         {{1, 130, 130}, {2, 37, 300}, {1, 70, 20}, {1, 5, 1000}, {0}}},
        {"f16", "heads: 4, kv_heads: 2, head_dim: 80, causal: true, "
         "window: 13, tile: {engine: mma, mma_q: 32, mma_k: 16, mma_tile: "
         "16}", TARGET_GPU, {{1, 100, 100}, {2, 33, 90}, {0}}},
        {"bf16", "heads: 2, head_dim: 64, softcap: 50, scale: 0.5, tile: "
         "{engine: mma, mma_q: 128, mma_k: 128, mma_tile: 64}", TARGET_GPU,
         {{1, 65, 200}, {2, 9, 33}, {0}}},
        {"f16", "heads: 6, kv_heads: 1, head_dim: 64, scale: 1, "
         "tile: {engine: mma, mma_q: 16, mma_k: 32}", TARGET_GPU,
         {{1, 150, 260}, {3, 7, 5}, {0}}},
        {"bf16", "heads: 3, head_dim: 8, causal: true, scale: 16, "
         "tile: {engine: mma, mma_tile: 32}", TARGET_GPU,
         {{1, 40, 40}, {2, 50, 17}, {0}}},
        {"f16", "heads: 4, kv_heads: 4, head_dim: 40, tile: {engine: mma}",
         TARGET_GPU, {{1, 64, 64}, {1, 3, 77}, {0}}},
        {"bf16", "heads: 6, kv_heads: 3, head_dim: 96, causal: true",
         TARGET_TENSOR, {{1, 300, 300}, {0}}},
        {"bf16", "heads: 2, kv_heads: 1, head_dim: 256, causal: true, "
         "tile: {engine: mma, mma_k: 32}", TARGET_GPU, {{1, 40, 70}, {0}}},
        {"f16", "heads: 4, kv_heads: 2, head_dim: 256, causal: true",
         TARGET_TENSOR, {{1, 130, 200}, {2, 70, 33}, {0}}},
        {"bf16", "heads: 3, head_dim: 200, softcap: 30", TARGET_TENSOR,
         {{1, 90, 90}, {0}}},
    };
    static const size_t exact[][3] = {{2, 9, 4}, {1, 19, 6}, {1, 5, 30}};
    int tensor = caps_lacking(CAP_MMA_SYNC_BF16_F16, nu_rt()->caps.have) == 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (tensor) {
            run_case(&cases[i]);
            continue;
        }
        struct nu_kernel k;
        CU_ASSERT(nu_spec_ok(&k, "kernels:\n  - {name: t_abw, op: "
                             "attention_backward, dtype: %s, %s}\n",
                             cases[i].dtype, cases[i].fields));
        nu_kernel_free(&k);
    }
    struct nu_kernel k;
    if (tensor && nu_spec_ok(&k, TINY_MMA_YAML) && nu_build(&k)) {
        for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
            check_exact(&k, exact[i], 1e-2);
        }
    }
    if (tensor) {
        nu_kernel_free(&k);
    }
}

/* On warpgroups (attention_backward_dq_wgmma, _dkv_wgmma: the device
 * suites on NVIDIA compute capability 9.0; elsewhere each case must
 * validate): heads of 64, 80, 96, 128 and 256, GQA, MQA, causal with seq_q
 * below, at and above seq_kv (queries that see no key), windows
 * narrower and wider than a tile, a softcap, dk and dv on warpgroups or
 * (past 64 keys a work-group) on m16n8k16 products, last tiles and
 * blocks short, batch > 1, both half dtypes, the defaults of compute
 * capability 9.0; dq 0 where no key is seen and the same bits twice. */
static void test_abw_wgmma(void)
{
    static const struct abw_case cases[] = {
        {"bf16", "heads: 8, kv_heads: 2, head_dim: 128, causal: true, "
         "tile: {engine: wgmma}", TARGET_GPU,
         {{1, 130, 130}, {2, 37, 300}, {1, 70, 20}, {1, 5, 1000}, {0}}},
        /* dk and dv on m16n8k16 products past 64 keys a work-group */
        {"f16", "heads: 4, kv_heads: 2, head_dim: 64, causal: true, "
         "window: 13, tile: {engine: wgmma, mma_k: 16, mma_tile: 16}",
         TARGET_GPU, {{1, 100, 100}, {2, 33, 90}, {0}}},
        {"bf16", "heads: 2, head_dim: 128, softcap: 50, scale: 0.5, tile: "
         "{engine: wgmma, mma_k: 128}", TARGET_GPU,
         {{1, 65, 200}, {2, 9, 33}, {0}}},
        {"f16", "heads: 6, kv_heads: 1, head_dim: 64, scale: 1, "
         "causal: true, window: 100, tile: {engine: wgmma}", TARGET_GPU,
         {{1, 150, 260}, {3, 7, 5}, {0}}},
        {"bf16", "heads: 6, kv_heads: 3, head_dim: 128, causal: true",
         TARGET_SM90A, {{1, 300, 300}, {1, 2, 700}, {0}}},
        /* one head a kv head: dk's rows by the tensor memory accelerator */
        {"bf16", "heads: 3, head_dim: 128, causal: true, tile: "
         "{engine: wgmma}", TARGET_GPU,
         {{2, 200, 130}, {1, 64, 64}, {1, 1, 300}, {3, 70, 260}, {0}}},
        {"f16", "heads: 2, head_dim: 64, causal: true, window: 40, "
         "softcap: 20, tile: {engine: wgmma}", TARGET_GPU,
         {{1, 150, 150}, {2, 9, 100}, {0}}},
        /* heads of 80 and 96: a second block of 64 part empty, dk's rows
         * copied by cp.async at one head a kv head too */
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 80, causal: true, "
         "tile: {engine: wgmma}", TARGET_GPU,
         {{1, 130, 130}, {2, 37, 300}, {1, 5, 1000}, {0}}},
        {"f16", "heads: 3, head_dim: 96, causal: true, window: 40, "
         "softcap: 20, tile: {engine: wgmma}", TARGET_GPU,
         {{1, 150, 150}, {2, 9, 100}, {0}}},
        {"f16", "heads: 2, head_dim: 80, scale: 0.5, tile: {engine: wgmma, "
         "mma_k: 128}", TARGET_GPU, {{1, 65, 200}, {0}}},
        {"bf16", "heads: 4, kv_heads: 2, head_dim: 96, causal: true",
         TARGET_SM90A, {{1, 300, 300}, {1, 2, 700}, {0}}},
        /* a head of 256: two warpgroups share dk's keys and dq's rows,
         * each half the columns; dk's rows by the accelerator at one
         * head a kv head, by cp.async under GQA */
        {"bf16", "heads: 2, head_dim: 256, causal: true, tile: "
         "{engine: wgmma}", TARGET_GPU,
         {{2, 200, 130}, {1, 64, 64}, {1, 1, 300}, {0}}},
        {"f16", "heads: 4, kv_heads: 2, head_dim: 256, causal: true, "
         "window: 40, softcap: 20", TARGET_SM90A,
         {{1, 150, 150}, {2, 9, 100}, {0}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (caps_lacking(CAP_WGMMA, nu_rt()->caps.have) == 0) {
            run_case(&cases[i]);
            continue;
        }
        struct nu_kernel k;
        CU_ASSERT(nu_spec_ok(&k, "kernels:\n  - {name: t_abw, op: "
                             "attention_backward, dtype: %s, %s}\n",
                             cases[i].dtype, cases[i].fields));
        nu_kernel_free(&k);
    }
}

/* Every dtype x device type on each option (--full). */
static void test_abw_grid(void)
{
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    static const char *const fields[] = {
        "heads: 8, kv_heads: 2, head_dim: 64",
        "heads: 8, kv_heads: 2, head_dim: 128, causal: true",
        "heads: 6, kv_heads: 3, head_dim: 96, causal: true, window: 100",
        "heads: 4, kv_heads: 4, head_dim: 256, softcap: 50",
        "heads: 2, head_dim: 255, causal: true",
        "heads: 5, kv_heads: 1, head_dim: 1, causal: true, window: 3"};
    if (!test_full) {
        return;
    }
    for (int f = 0; f < 6; f++) {
        for (int d = 0; d < 3; d++) {
            for (int t = 0; t < 2; t++) {
                struct abw_case c = {dtypes[d], fields[f],
                                     t ? TARGET_CPU : TARGET_GPU,
                                     {{2, 3, 257}, {2, 130, 130},
                                      {1, 200, 77}, {0}}};
                run_case(&c);
            }
        }
    }
}

int add_attention_backward_numeric_tests(CU_pSuite s)
{
    return CU_add_test(s, "attention_backward: odd heads and dims, GQA, "
                       "MQA, causal, window, softcap, dtypes, GPU and CPU "
                       "defaults, small tiles",
                       test_abw_shapes) == NULL ||
                   CU_add_test(s, "attention_backward: queries that see no "
                               "key (dq 0), the same bits twice, misuse",
                               test_abw_exact) == NULL ||
                   CU_add_test(s, "attention_backward on tensor cores "
                               "(engine: mma)", test_abw_mma) == NULL ||
                   CU_add_test(s, "attention_backward on warpgroups "
                               "(engine: wgmma)", test_abw_wgmma) == NULL ||
                   CU_add_test(s, "attention_backward: every dtype, device "
                               "type and option (--full)",
                               test_abw_grid) == NULL
               ? -1
               : 0;
}
