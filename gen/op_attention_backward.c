/* op_attention_backward.c - the backward of attention (op_attention.c):
 * dq, dk and dv from q, k, v, the forward's o and lse, and do (dO, the
 * gradient of o), FlashAttention-2's scheme on every device (SIMT):
 *
 *   attention_backward_dot  Di = rowsum(dO_i * O_i) per query row and
 *                           head, into scratch;
 *   attention_backward_dkv  a work-group per block_k keys of one (batch,
 *                           kv head), a work-item a key, over the query
 *                           rows of every head of its group that see them
 *                           (tile_q rows at a time in local memory):
 *                           P = exp(s - lse), dP = dO.v, dS = P (dP - D)
 *                           (times 1 - tanh^2 where softcapped),
 *                           dv += P dO, dk += scale dS q;
 *   attention_backward_dq   a work-group per block_q query rows, a
 *                           work-item a row, over the key tiles (tile_k
 *                           keys in local memory) its rows see:
 *                           dq += scale dS k.
 *
 * On CPUs (cpu_rows) the last two are attention_backward_dkv_rows and
 * attention_backward_dq_rows: a work-item per cpu_rows keys or query
 * rows, the other side read straight from memory 8 at a time, no local
 * memory (templates/attention_dots.cl).
 *
 * With engine: mma (f16, bf16 on NVIDIA tensor cores) the last two are
 * attention_backward_dkv_mma and attention_backward_dq_mma: the same
 * sums on m16n8k16 products, a warp per 16 keys (dk, dv) or query rows
 * (dq), score tiles of mma_tile columns, P and dS rounded to the storage
 * type as they enter the products. With engine: wgmma (compute
 * capability 9.0, heads of 64, 80, 96, 128 and 256) they are
 * attention_backward_dkv_wgmma (at mma_k 64) and
 * attention_backward_dq_wgmma: a warpgroup of 64 keys or query rows a
 * work-group (two sharing them at 256, each half the head's columns),
 * tiles of 64, on the forward's warpgroup tiles.
 *
 * Each output element is one work-item's sum in a fixed order: no
 * atomics, dq, dk, dv the same bits run to run. Rows and key tiles that
 * a causal or windowed mask hides from a whole block are skipped. */
#include "attention_fields.h"
#include "attention_reference.h"
#include "gemm_mma.h"
#include "parallel.h"
#include "op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct param_def knobs[] = {
    {"engine", VALUE_CHOICE, 0, ATTN_SIMT, 0, 0, attn_engine_choices,
     "dk, dv and dq: simt (every device), mma (f16, bf16: m16n8k16 on "
     "NVIDIA compute capability 8.0+) or wgmma (dq, and dk and dv at "
     "mma_k 64, on warpgroups: compute capability 9.0, head_dim 64, 80, "
     "96, 128 or 256)"},
    {"mma_q", VALUE_INT, 0, 64, 16, 256, NULL,
     "engine mma: dq's query rows per work-group, 16 a warp (engine "
     "wgmma: 64, a warpgroup)"},
    {"mma_k", VALUE_INT, 0, 64, 16, 256, NULL,
     "engine mma: dk's and dv's keys per work-group, 16 a warp"},
    {"mma_tile", VALUE_INT, 0, 64, 16, 256, NULL,
     "engine mma: columns of a score tile (dq's keys, dk's and dv's query "
     "rows, a step)"},
    {"block_q", VALUE_INT, 0, 64, 1, 1024, NULL,
     "attention_backward_dq: query rows (work-items) per work-group"},
    {"block_k", VALUE_INT, 0, 64, 1, 1024, NULL,
     "attention_backward_dkv: keys (work-items) per work-group"},
    {"tile_q", VALUE_INT, 0, 16, 1, 256, NULL,
     "attention_backward_dkv: query rows staged in local memory at once"},
    {"tile_k", VALUE_INT, 0, 16, 1, 256, NULL,
     "attention_backward_dq: keys staged in local memory at once"},
    {"cpu_rows", VALUE_INT, 0, 0, 0, 64, NULL,
     "CPUs: dq's query rows and dk's and dv's keys a work-item takes, the "
     "others read straight from memory 8 at a time; 0: the work-group "
     "kernels (as on GPUs)"},
};

static const char *const sizes[] = {"batch", "seq_q", "seq_kv", NULL};
enum { SZ_BATCH, SZ_SEQ_Q, SZ_SEQ_KV };
#define BATCH SIZE_BIT(SZ_BATCH)
#define SEQ_Q SIZE_BIT(SZ_SEQ_Q)
#define SEQ_KV SIZE_BIT(SZ_SEQ_KV)

enum { BUF_Q, BUF_K, BUF_V, BUF_O, BUF_DO, BUF_LSE, BUF_DQ, BUF_DK, BUF_DV };

/* engine: wgmma's tiles: attention_backward_dq_wgmma's keys a tile (its
 * S and dP take WG_KEYS / 2 registers each beside dq's head_dim / 2)
 * and attention_backward_dkv_wgmma's query rows a step; both kernels a
 * warpgroup a work-group, of 64 rows or keys (mma_q, mma_k). */
#define WG_KEYS 64
#define WG_ROWS 64
/* attention_backward_dq_wgmma holds its q and dO rows in registers, as
 * wgmma's A operand, where that leaves its work-groups a compute unit as
 * they are: at a head of 128 (two either way; local memory then feeds
 * each score product one operand, not two), not at 64 (three, two with
 * the rows held). bench/RESULTS.md has the times of both. */
#define WG_ROWS_HELD_HEAD 128
/* Local memory a spec may ask for, as attention's. */
#define ABW_MAX_LOCAL 32768
/* Work-items of attention_backward_dot a work-group on a GPU. */
#define DOT_GPU_ITEMS 64

static long field(const struct kernel_spec *ks, const char *key)
{
    return (long)spec_field(ks, key);
}

static long knob(const struct kernel_spec *ks, const char *key)
{
    return (long)spec_knob(ks, key);
}

static int engine(const struct kernel_spec *ks)
{
    return (int)knob(ks, "engine");
}

/* Bytes of local memory of attention_backward_dkv_mma (the block's keys
 * and values, two steps of q and dO rows, rows of the head padded to 16
 * plus 8 elements; lse and D of two steps) and of
 * attention_backward_dq_mma (two tiles of keys and values, or the
 * block's q and dO rows staged first). */
static long mma_row_bytes(long d)
{
    return ((d + 15) / 16 * 16 + 8) * 2;
}

static long dkv_mma_local(long bk, long tile, long d)
{
    return (2 * bk + 4 * tile) * mma_row_bytes(d) + 16 * tile;
}

static long dq_mma_local(long bq, long tile, long d)
{
    long rows = 2 * bq > 4 * tile ? 2 * bq : 4 * tile;
    return rows * mma_row_bytes(d);
}






/* Bytes of local memory of attention_backward_dkv (q and dO rows of
 * D | 1 floats, lse and D of each) and of attention_backward_dq (key
 * and value rows). */
static long dkv_local(long tq, long d)
{
    return (2 * tq * (d | 1) + 2 * tq) * 4;
}

static long dq_local(long tk, long d)
{
    return 2 * tk * (d | 1) * 4;
}

/* The warpgroups that share a work-group's keys (dk, dv) or rows (dq) on
 * warpgroups, each computing the scores whole and its part of the
 * outputs' columns: past a head of 128 a warpgroup's registers hold only
 * half of them. */
static int wg_halves(long d)
{
    return d > 128 ? 2 : 1;
}

/* Tensor cores where the target offers them, for f16 and bf16 at head
 * dims of 16-byte rows: 4 warps a work-group, score tiles of 64 columns
 * (32 past a head of 128, for local memory). Past a head of 128 a warp's
 * dk and dv of 16 keys (head_dim registers a thread) spill, and still
 * run some 150 times faster than the float kernels, whose tiles local
 * memory shrinks there to 8 rows (bench/RESULTS.md, "attention at head
 * dims 80, 96 and 256"). Where the target offers wgmma too, at the
 * heads of attn_wgmma_head, warpgroups (bench/RESULTS.md,
 * "attention_backward on warpgroups"). */
static void engine_defaults(struct kernel_spec *ks)
{
    long d = attn_head_dim(ks);
    if (target_offers(ks->target, CAP_MMA_SYNC_BF16_F16) &&
        ks->dtype != DTYPE_F32 && d % 8 == 0) {
        int wgmma = target_offers(ks->target, CAP_WGMMA) && attn_wgmma_head(d);
        spec_knob_default(ks, "engine", wgmma ? ATTN_WGMMA : ATTN_MMA);
    }
    spec_knob_default(ks, "mma_q", 64);
    spec_knob_default(ks, "mma_k", 64);
    spec_knob_default(ks, "mma_tile", d > 128 ? 32 : 64);
}

/* CPUs' float kernels: dq's rows and dk's and dv's keys a work-item
 * (attention_backward_dq_rows, attention_backward_dkv_rows). */
#define CPU_ROWS 4
/* ... and the keys or rows they meet at a time: 8, a vector's lanes. */
#define CPU_TILE 8

/* GPUs: 64 work-items a group, tiles of 32 rows (fewer where the head
 * is wide); CPUs (PoCL runs a group as loops over its items): 16 items,
 * tiles of 16. */
static void defaults(struct kernel_spec *ks)
{
    long d = attn_head_dim(ks);
    int cpu = ks->target == TARGET_CPU;
    long t = cpu ? 16 : 32;
    spec_knob_default(ks, "block_q", cpu ? 16 : 64);
    spec_knob_default(ks, "block_k", cpu ? 16 : 64);
    while (t > 1 && dkv_local(t, d) > ABW_MAX_LOCAL) {
        t /= 2;
    }
    spec_knob_default(ks, "tile_q", (double)t);
    spec_knob_default(ks, "tile_k", (double)t);
    spec_knob_default(ks, "cpu_rows", cpu ? CPU_ROWS : 0);
    engine_defaults(ks);
}

static void validate_wgmma(const struct kernel_spec *ks, struct diags *d)
{
    long hd = attn_head_dim(ks);
    if (!attn_wgmma_head(hd)) {
        diag_error(d, ks->file, spec_knob_mark(ks, "engine"),
                   "engine: wgmma needs head_dim 64, 80, 96, 128 or 256 "
                   "(got %ld); engine: mma takes any multiple of 8",
                   hd);
    }
    if (knob(ks, "mma_q") != WG_ROWS) {
        diag_error(d, ks->file, spec_knob_mark(ks, "mma_q"),
                   "engine: wgmma takes tile mma_q %d, a warpgroup's rows "
                   "(got %ld); engine: mma takes other multiples of 16",
                   WG_ROWS, knob(ks, "mma_q"));
    }
}

static void validate_mma(const struct kernel_spec *ks, struct diags *d)
{
    long hd = attn_head_dim(ks), mq = knob(ks, "mma_q");
    long mk = knob(ks, "mma_k"), tile = knob(ks, "mma_tile");
    const char *names[] = {"mma_q", "mma_k", "mma_tile"};
    const long values[] = {mq, mk, tile};
    int wgmma = engine(ks) == ATTN_WGMMA;
    if (engine(ks) == ATTN_SIMT ||
        !gemm_mma_check_dtype(ks, wgmma ? "wgmma" : "mma", 0, d)) {
        return;
    }
    if (wgmma) {
        validate_wgmma(ks, d);
    }
    if (hd % 8 != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "engine"),
                   "engine: mma needs head_dim a multiple of 8 (got %ld): "
                   "rows of 16 bytes",
                   hd);
    }
    for (int i = 0; i < 3; i++) {
        if (values[i] % 16 != 0) {
            diag_error(d, ks->file, spec_knob_mark(ks, names[i]),
                       "tile %s (%ld) must be a multiple of 16 (%s)",
                       names[i], values[i],
                       i < 2 ? "a warp's rows" : "k16 steps");
        }
    }
    if (dkv_mma_local(mk, tile, hd) > MMA_LOCAL_MAX) {
        diag_error(d, ks->file, knob_blame(ks, "mma_k", "mma_tile"),
                   "tile mma_k (%ld) and mma_tile (%ld) need %ld bytes of "
                   "local memory at head_dim %ld (at most %ld)",
                   mk, tile, dkv_mma_local(mk, tile, hd), hd, MMA_LOCAL_MAX);
    }
    if (dq_mma_local(mq, tile, hd) > MMA_LOCAL_MAX) {
        diag_error(d, ks->file, knob_blame(ks, "mma_q", "mma_tile"),
                   "tile mma_q (%ld) and mma_tile (%ld) need %ld bytes of "
                   "local memory at head_dim %ld (at most %ld)",
                   mq, tile, dq_mma_local(mq, tile, hd), hd, MMA_LOCAL_MAX);
    }
}

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    long hd = attn_head_dim(ks);
    long tq = knob(ks, "tile_q"), tk = knob(ks, "tile_k");
    attn_check_fields(ks, d);
    if (dkv_local(tq, hd) > ABW_MAX_LOCAL) {
        diag_error(d, ks->file, spec_knob_mark(ks, "tile_q"),
                   "tile tile_q (%ld) needs %ld bytes of local memory at "
                   "head_dim %ld (at most %d)",
                   tq, dkv_local(tq, hd), hd, ABW_MAX_LOCAL);
    }
    if (dq_local(tk, hd) > ABW_MAX_LOCAL) {
        diag_error(d, ks->file, spec_knob_mark(ks, "tile_k"),
                   "tile tile_k (%ld) needs %ld bytes of local memory at "
                   "head_dim %ld (at most %d)",
                   tk, dq_local(tk, hd), hd, ABW_MAX_LOCAL);
    }
    validate_mma(ks, d);
}

static void buffer_qshape(struct plan *p, const char *name, long per,
                          unsigned over, const char *shape)
{
    plan_buffer(p, name, 0, 0, 0);
    plan_buffer_over(p, over, per);
    plan_buffer_doc(p, shape, NULL);
}

static void plan_buffers(const struct kernel_spec *ks, struct plan *p)
{
    long h = attn_heads(ks), hkv = attn_kv_heads(ks), d = attn_head_dim(ks);
    const char *qs = "[batch][seq_q][heads][head_dim]";
    const char *kvs = "[batch][seq_kv][kv_heads][head_dim]";
    buffer_qshape(p, "q", h * d, BATCH | SEQ_Q, qs);
    buffer_qshape(p, "k", hkv * d, BATCH | SEQ_KV, kvs);
    buffer_qshape(p, "v", hkv * d, BATCH | SEQ_KV, kvs);
    buffer_qshape(p, "o", h * d, BATCH | SEQ_Q, qs);
    plan_buffer(p, "do_", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_Q, h * d);
    plan_buffer_doc(p, qs, "dO, the gradient of o");
    plan_buffer(p, "lse", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_Q, h);
    plan_buffer_elem(p, ELEM_F32);
    plan_buffer_doc(p, "[batch][heads][seq_q]",
                    "as the forward wrote it (-inf: a query that sees no "
                    "key)");
    plan_buffer(p, "dq", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_Q, h * d);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_doc(p, qs, "0 for a query that sees no key");
    plan_buffer(p, "dk", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_KV, hkv * d);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_doc(p, kvs, "summed over the query heads of its group");
    plan_buffer(p, "dv", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_KV, hkv * d);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_doc(p, kvs, "summed over the query heads of its group");
    plan_public_int(p, "HEADS", "query heads", h);
    plan_public_int(p, "KV_HEADS", "key and value heads", hkv);
    plan_public_int(p, "HEAD_DIM", "elements per head", d);
}

/* The #defines of the shape and mask, the kernels' and the naive ones'. */
static void plan_shape(const struct kernel_spec *ks, struct plan *p)
{
    double cap = spec_field(ks, "softcap");
    plan_storage(p, ks);
    plan_int(p, "HEADS", "query heads", attn_heads(ks));
    plan_int(p, "KV_HEADS", "key and value heads", attn_kv_heads(ks));
    plan_int(p, "HEAD_DIM", "elements per head", attn_head_dim(ks));
    plan_int(p, "ATTN_CAUSAL", "key j visible to query i at j <= i + "
             "seq_kv - seq_q", attn_causal(ks));
    plan_int(p, "ATTN_WINDOW", "and at i + seq_kv - seq_q - j < WINDOW "
             "(0: none)", field(ks, "window"));
    plan_float(p, "ATTN_SCALE", "times q.k", attn_scale(ks));
    plan_float(p, "ATTN_SOFTCAP", "the softcap (0: none)", cap);
    plan_int(p, "ATTN_CAPPED", "scores softcapped", cap > 0);
    plan_int(p, "EXP_POLY", "exponentials as a polynomial on the exponent "
             "bits (CPUs)", ks->target == TARGET_CPU);
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const dot_args[] = {"batch", "seq_q", "o", "do_",
                                           "scratch", NULL};
    static const char *const dkv_args[] = {"seq_q", "seq_kv", "q", "k", "v",
                                           "do_", "lse", "scratch", "dk",
                                           "dv", NULL};
    static const char *const dq_args[] = {"seq_q", "seq_kv", "q", "k", "v",
                                          "do_", "lse", "scratch", "dq",
                                          NULL};
    size_t dot_items = ks->target == TARGET_CPU ? 1 : DOT_GPU_ITEMS;
    size_t group = (size_t)(attn_heads(ks) / attn_kv_heads(ks));
    int mma = engine(ks) != ATTN_SIMT, wgmma = engine(ks) == ATTN_WGMMA;
    size_t bq = (size_t)knob(ks, mma ? "mma_q" : "block_q");
    size_t bk = (size_t)knob(ks, mma ? "mma_k" : "block_k");
    int halves = wg_halves(attn_head_dim(ks));
    int dkv_wgmma = wgmma && bk == WG_ROWS;
    /* a step's rows one head's consecutive rows: a box of a map, which
     * holds 64 elements of a head */
    int dkv_tma = dkv_wgmma && group == 1 && attn_head_dim(ks) % 64 == 0;
    plan_shape(ks, p);
    plan_int(p, "BLOCK_Q", "attention_backward_dq: rows a work-group",
             knob(ks, "block_q"));
    plan_int(p, "BLOCK_K", "attention_backward_dkv: keys a work-group",
             knob(ks, "block_k"));
    plan_int(p, "TILE_Q", "query rows in local memory", knob(ks, "tile_q"));
    plan_int(p, "TILE_K", "keys in local memory", knob(ks, "tile_k"));
    plan_int(p, "DOT_ITEMS", "attention_backward_dot: work-items a group",
             (long)dot_items);
    /* CPUs' float kernels: a work-item's rows (dq) or keys (dk, dv) */
    size_t rows = !mma && ks->target == TARGET_CPU
                      ? (size_t)knob(ks, "cpu_rows")
                      : 0;
    if (rows > 0) {
        plan_int(p, "DOTS_N", "attention_backward_dq_rows, _dkv_rows: rows "
                 "or keys a work-item", (long)rows);
        plan_int(p, "DOTS_T", "attention_backward_dq_rows, _dkv_rows: the "
                 "others a step", CPU_TILE);
    }
    if (mma) {
        plan_int(p, "MMA_BQ", "attention_backward_dq_mma: query rows a "
                 "work-group", (long)bq);
        plan_int(p, "MMA_BK", "attention_backward_dkv_mma: keys a "
                 "work-group", (long)bk);
        plan_int(p, "MMA_T", "columns of a score tile", knob(ks, "mma_tile"));
        p->needs |= CAP_MMA_SYNC_BF16_F16;
    }
    if (wgmma) {
        plan_int(p, "MMA_Q", "wgmma: rows or keys a work-group", WG_ROWS);
        plan_int(p, "WG_KEYS", "wgmma: dq's keys a tile, dk's rows a step",
                 WG_KEYS);
        plan_int(p, "DQ_ROWS_HELD", "wgmma: dq's q and dO rows in registers",
                 attn_head_dim(ks) == WG_ROWS_HELD_HEAD);
        plan_int(p, "DKV_TMA", "wgmma: dk's q and dO rows by the tensor "
                 "memory accelerator", dkv_tma);
        plan_int(p, "WG_HALVES", "wgmma: warpgroups sharing dk's keys, "
                 "dq's rows", halves);
        plan_int(p, "AW_O_COLS", "wgmma: columns of a warpgroup's dk, dv, "
                 "dq", attn_head_dim(ks) / halves);
        if (dkv_tma) {
            plan_int(p, "ATM_MAP_SLOTS", "slots of tensor maps in the "
                     "scratch", WGMMA_MAP_SLOTS);
        }
        p->needs |= CAP_WGMMA;
    }
    plan_buffers(ks, p);
    struct path *pa = &p->path[p->n_path++];
    pa->why = dkv_wgmma && halves > 1
                  ? "D = rowsum(dO * O); on warpgroups, dk and dv a "
                    "work-group per mma_k keys of a kv head, dq a "
                    "work-group per mma_q rows, two warpgroups each half "
                    "the head's columns"
            : dkv_wgmma
                  ? "D = rowsum(dO * O); on warpgroups, dk and dv a "
                    "work-group per mma_k keys of a kv head, dq a "
                    "work-group per mma_q rows"
            : wgmma ? "D = rowsum(dO * O); on tensor cores, dk and dv a "
                      "work-group per mma_k keys of a kv head, dq on "
                      "warpgroups a work-group per mma_q rows"
            : mma ? "D = rowsum(dO * O); on tensor cores, dk and dv a "
                    "work-group per mma_k keys of a kv head, dq a "
                    "work-group per mma_q rows"
            : rows ? "D = rowsum(dO * O); dk and dv a work-item per "
                     "cpu_rows keys of a kv head, dq a work-item per "
                     "cpu_rows rows, the others read straight from memory"
                  : "D = rowsum(dO * O); dk and dv a work-group per block_k "
                    "keys of a kv head; dq a work-group per block_q rows";
    struct launch *l = &pa->launch[pa->n_launch++];
    l->kernel = "attention_backward_dot";
    l->dims = 1;
    l->local[0] = dot_items;
    l->local[1] = 1;
    launch_over(l, 0, (size_t)attn_heads(ks), BATCH | SEQ_Q, dot_items);
    launch_args(l, dot_args);
    l = &pa->launch[pa->n_launch++];
    l->kernel = rows        ? "attention_backward_dkv_rows"
                : dkv_wgmma ? "attention_backward_dkv_wgmma"
                : mma       ? "attention_backward_dkv_mma"
                            : "attention_backward_dkv";
    l->dims = 2;
    l->local[0] = rows        ? 1
                  : dkv_wgmma ? 2 * bk * (size_t)halves
                  : mma       ? 2 * bk
                              : bk;
    l->local[1] = 1;
    launch_over(l, 0, 1, SEQ_KV, rows ? rows : bk);
    launch_over(l, 1, (size_t)attn_kv_heads(ks), BATCH, 1);
    launch_args(l, dkv_args);
    l = &pa->launch[pa->n_launch++];
    l->kernel = rows    ? "attention_backward_dq_rows"
                : wgmma ? "attention_backward_dq_wgmma"
                : mma   ? "attention_backward_dq_mma"
                        : "attention_backward_dq";
    l->dims = 2;
    l->local[0] = rows    ? 1
                  : wgmma ? 2 * bq * (size_t)halves
                  : mma   ? 2 * bq
                          : bq;
    l->local[1] = 1;
    launch_over(l, 0, group, SEQ_Q, rows ? rows : bq);
    launch_over(l, 1, (size_t)attn_kv_heads(ks), BATCH, 1);
    launch_args(l, dq_args);
    pa->scratch_per = attn_heads(ks);
    pa->scratch_sizes = BATCH | SEQ_Q;
    /* D, then (DKV_TMA) slots of tensor maps, 64 floats each, 128-byte
     * aligned */
    pa->scratch_fixed = dkv_tma ? WGMMA_MAP_SLOTS * 64 + 32 : 0;
}

/* ---- checking and measuring ------------------------------------------ */


struct reference_job {
    const struct kernel_spec *ks;
    const float *const *in;
    const size_t *sz;
    double *const *out;
    struct attn_ref_math m;
    size_t heads, kv_heads, k_tiles;
};

/* P and dS of a (query, key) pair from its dots q.k (SDOT) and dO.v
 * (PDOT), the query's LSE and D (DI). */
static void pair_grads(const struct reference_job *job, double sdot,
                       double pdot, double lse, double di, double *pr,
                       double *ds)
{
    double der;
    double s = attn_ref_score(&job->m, sdot, &der);
    *pr = exp(s - lse);
    *ds = *pr * (pdot - di) * der * job->m.scale;
}

/* dq of a tile of query rows (attn_ref_tile_at's ITEM), the keys
 * streaming past them in order. */
static void reference_dq(void *ctx, size_t item)
{
    const struct reference_job *job = ctx;
    const float *const *in = job->in;
    struct attn_ref_tile t;
    double lse[ATTN_REF_ROWS], di[ATTN_REF_ROWS];
    double sdot[ATTN_REF_ROWS], pdot[ATTN_REF_ROWS];
    float q_t[ATTN_REF_MAX_D * ATTN_REF_ROWS];
    float do_t[ATTN_REF_MAX_D * ATTN_REF_ROWS];
    size_t d = job->m.d;
    attn_ref_tile_at(job->ks, job->sz, item, &t);
    for (size_t r = 0; r < t.n; r++) {
        lse[r] = in[BUF_LSE][t.lse_at + r];
        di[r] = attn_ref_dot(in[BUF_DO] + t.at[r], in[BUF_O] + t.at[r], d);
        if (isinf(lse[r])) {
            t.hi[r] = t.lo[r]; /* a query that sees no key */
        }
    }
    attn_ref_hold(in[BUF_Q], t.at, t.n, d, q_t);
    attn_ref_hold(in[BUF_DO], t.at, t.n, d, do_t);
    for (long j = t.first; j < t.end; j++) {
        const float *k = in[BUF_K] + t.kv_at + (size_t)j * t.kstride;
        const float *v = in[BUF_V] + t.kv_at + (size_t)j * t.kstride;
        attn_ref_dots(q_t, k, d, sdot);
        attn_ref_dots(do_t, v, d, pdot);
        for (size_t r = 0; r < t.n; r++) {
            if (j < t.lo[r] || j >= t.hi[r]) {
                continue;
            }
            double pr, ds;
            pair_grads(job, sdot[r], pdot[r], lse[r], di[r], &pr, &ds);
            attn_ref_axpy(job->out[BUF_DQ] + t.at[r], ds, k, d);
        }
    }
}

/* dk and dv of ATTN_REF_ROWS keys of one (batch, kv head): item (b *
 * kv_heads + hk) * k_tiles + tile, the query rows of every head of its
 * group streaming past them, rows in order, heads in order within one. */
static void reference_dkv(void *ctx, size_t item)
{
    const struct reference_job *job = ctx;
    const float *const *in = job->in;
    size_t d = job->m.d, sq = job->sz[SZ_SEQ_Q], skv = job->sz[SZ_SEQ_KV];
    size_t tile = item % job->k_tiles, bk = item / job->k_tiles;
    size_t b = bk / job->kv_heads, hk = bk % job->kv_heads;
    size_t group = job->heads / job->kv_heads, kstride = job->kv_heads * d;
    size_t j0 = tile * ATTN_REF_ROWS;
    size_t n = skv - j0 < ATTN_REF_ROWS ? skv - j0 : ATTN_REF_ROWS;
    size_t at[ATTN_REF_ROWS];
    double sdot[ATTN_REF_ROWS], pdot[ATTN_REF_ROWS];
    float k_t[ATTN_REF_MAX_D * ATTN_REF_ROWS];
    float v_t[ATTN_REF_MAX_D * ATTN_REF_ROWS];
    for (size_t c = 0; c < n; c++) {
        at[c] = (b * skv * job->kv_heads + hk) * d + (j0 + c) * kstride;
    }
    attn_ref_hold(in[BUF_K], at, n, d, k_t);
    attn_ref_hold(in[BUF_V], at, n, d, v_t);
    for (size_t i = 0; i < sq; i++) {
        long lo, hi;
        attn_visible_keys(job->ks, (long)(i + skv) - (long)sq, (long)skv,
                          &lo, &hi);
        lo = lo > (long)j0 ? lo : (long)j0;
        hi = hi < (long)(j0 + n) ? hi : (long)(j0 + n);
        for (size_t h = hk * group; lo < hi && h < (hk + 1) * group; h++) {
            size_t qa = ((b * sq + i) * job->heads + h) * d;
            double lse = in[BUF_LSE][(b * job->heads + h) * sq + i];
            if (isinf(lse)) {
                continue; /* a query that sees no key */
            }
            const float *q = in[BUF_Q] + qa, *dout = in[BUF_DO] + qa;
            double di = attn_ref_dot(dout, in[BUF_O] + qa, d);
            attn_ref_dots(k_t, q, d, sdot);
            attn_ref_dots(v_t, dout, d, pdot);
            for (long j = lo; j < hi; j++) {
                size_t c = (size_t)j - j0;
                double pr, ds;
                pair_grads(job, sdot[c], pdot[c], lse, di, &pr, &ds);
                if (job->out[BUF_DK] != NULL) {
                    attn_ref_axpy(job->out[BUF_DK] + at[c], ds, q, d);
                }
                if (job->out[BUF_DV] != NULL) {
                    attn_ref_axpy(job->out[BUF_DV] + at[c], pr, dout, d);
                }
            }
        }
    }
}

/* dq by tiles of query rows, then dk and dv by tiles of keys, on the
 * host's cores (parallel.h): every item writes rows of its own. */
static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sz, double *const *out)
{
    size_t h = (size_t)attn_heads(ks), hkv = (size_t)attn_kv_heads(ks);
    size_t d = (size_t)attn_head_dim(ks);
    size_t nq = sz[SZ_BATCH] * sz[SZ_SEQ_Q] * h * d;
    size_t nkv = sz[SZ_BATCH] * sz[SZ_SEQ_KV] * hkv * d;
    struct reference_job job = {
        ks, in, sz, out, {0, 0, 0}, h, hkv,
        (sz[SZ_SEQ_KV] + ATTN_REF_ROWS - 1) / ATTN_REF_ROWS};
    attn_ref_math_of(ks, &job.m);
    for (int i = BUF_DQ; i <= BUF_DV; i++) {
        size_t n = i == BUF_DQ ? nq : nkv;
        for (size_t e = 0; out[i] != NULL && e < n; e++) {
            out[i][e] = 0;
        }
    }
    if (out[BUF_DQ] != NULL) {
        parallel_for(sz[SZ_BATCH] * h * attn_ref_tiles(sz), reference_dq,
                     &job);
    }
    if (out[BUF_DK] != NULL || out[BUF_DV] != NULL) {
        parallel_for(sz[SZ_BATCH] * hkv * job.k_tiles, reference_dkv, &job);
    }
    return 0;
}

/* naive_attention_backward_dq: a work-item per (query, batch and head),
 * seq_q of them exactly in dimension 0; naive_attention_backward_dkv a
 * work-item per (key, batch and kv head), seq_kv of them exactly. */
static void naive(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const dq_args[] = {"batch", "seq_kv", "q", "k", "v",
                                          "o", "do_", "lse", "dq", NULL};
    static const char *const dkv_args[] = {"batch", "seq_q", "q", "k", "v",
                                           "o", "do_", "lse", "dk", "dv",
                                           NULL};
    plan_shape(ks, p);
    naive_launch(p, "naive_attention_backward_dq", 0, dq_args);
    attn_naive_grid(p, SZ_SEQ_Q, (size_t)attn_heads(ks));
    naive_launch(p, "naive_attention_backward_dkv", 0, dkv_args);
    attn_naive_grid(p, SZ_SEQ_KV, (size_t)attn_kv_heads(ks));
}


/* Every buffer once; 10 flops per (query, key, head, dim) at the least:
 * q.k and dO.v (recomputed), dv, dk and dq. */
static void costs(const struct kernel_spec *ks, const size_t *sz,
                  double *bytes, double *flops)
{
    attn_costs(ks, sz, 10.0, bytes, flops);
}

static double error_bound(const struct kernel_spec *ks)
{
    return storage_error_bound(ks->dtype, 1e-4);
}

/* As attention's, at most 1024 tokens: the backward costs 2.5x. */
static void bench_sizes(const struct kernel_spec *ks, size_t *sz)
{
    attn_bench_sizes(ks, sz, 1024);
}


/* engine mma (f16, bf16 on tensor cores: validate() rejects it
 * elsewhere) and its tiles. */
static const struct tune_axis tune_space[] = {
    {"engine", "simt mma wgmma"},
    {"mma_q", "32 64 128"},
    {"mma_k", "32 64 128"},
    {"mma_tile", "16 32 64"},
    {"block_k", "16 32 64 128"},
    {"block_q", "16 32 64 128"},
    {"tile_q", "8 16 32"},
    {"tile_k", "8 16 32"},
    {"cpu_rows", "0 2 4 8"},
    {NULL, NULL},
};

/* The kernels each knob shapes (the knobs' help says which). */
static const struct tune_part tune_parts[] = {
    {"dk, dv and dq", "engine mma_tile cpu_rows"},
    {"dk and dv", "mma_k block_k tile_q"},
    {"dq", "mma_q block_q tile_k"},
    {NULL, NULL},
};

static const char *const kernels[] = {"attention_backward_dot",
                                      "attention_backward_dkv",
                                      "attention_backward_dq",
                                      "attention_backward_dkv_mma",
                                      "attention_backward_dq_mma",
                                      "attention_backward_dq_wgmma",
                                      "attention_backward_dkv_wgmma",
                                      "attention_backward_dkv_rows",
                                      "attention_backward_dq_rows", NULL};

const struct op_def op_attention_backward = {
    .name = "attention_backward",
    .summary = "dq, dk, dv of attention from q, k, v, o, dO and lse "
               "(GQA, MQA; deterministic)",
    .sizes = sizes,
    .kernels = kernels,
    .example = "heads=32 kv_heads=8 head_dim=128 causal=true",
    .fields = attn_fields,
    .n_fields = ATTN_N_FIELDS,
    .knobs = knobs,
    .n_knobs = sizeof knobs / sizeof knobs[0],
    .defaults = defaults,
    .validate = validate,
    .plan = plan,
    .tune_space = tune_space,
    .tune_parts = tune_parts,
    .reference = reference,
    .naive = naive,
    .costs = costs,
    .matmul = 1,
    .error_bound = error_bound,
    .bench_sizes = bench_sizes,
    .shape_text = attn_shape_text,
};
