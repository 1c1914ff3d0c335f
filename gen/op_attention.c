/* op_attention.c - fused scaled-dot-product attention, the forward:
 * o = softmax(scale * q k^T (softcapped, masked)) v per query row and head,
 * and lse, the natural log of each row's sum of exponentials.
 *
 * Rows of a work-group: the query rows of one (batch, kv head), the
 * query heads of the kv head's group inner (row r is query r / GROUP of
 * head kv_head * GROUP + r % GROUP), so that every row of a block reads
 * the same keys and values (GQA, MQA) and a causal block spans few
 * positions. templates/attention_common.cl walks the key tiles of a block
 * (FlashAttention-2: online softmax, tiles hidden from every row of the
 * block skipped). Prefill: a work-group per block of rows
 * (templates/attention.cl); on CPUs a work-item per cpu_rows positions of
 * one head, no local memory (templates/attention_rows.cl). Decode
 * (seq_q up to decode_rows; paths choose by seq_q): the keys split over
 * `split` work-groups per block, each
 * writing its partial (max, sum, o) to scratch, and on GPUs the last of
 * a block's to finish merges them (templates/attention_merge_last.cl: one
 * launch, the blocks' counters in the handle's sync buffer), so that a few
 * query rows over a long cache still fill the device; on CPUs and past
 * the counters' room, templates/attention_combine.cl merges them in a
 * second launch (both by templates/attention_merge.cl). With
 * engine: mma (f16, bf16 on NVIDIA tensor cores) the prefill path is
 * templates/attention_mma.cl:
 * Q K^T and P V as m16n8k16 products, a warp per 16 rows, its own block
 * sizes (mma_q, mma_k); its split path is templates/attention_mma_part.cl
 * (split_q rows a work-group), merged the same ways. With engine:
 * wgmma (compute capability 9.0, head dims 64, 80, 96, 128 and 256) the
 * prefill path is templates/attention_wgmma.cl: the same walk on
 * warpgroup products (a warpgroup per 64 rows), the split path
 * attention_mma_part's; with
 * wg_tma, templates/attention_wgmma_tma.cl: its tiles loaded by the
 * tensor memory accelerator, no work-group barrier a tile, the
 * warpgroups starting their products in turn. */
#include "gemm_mma.h"
#include "parallel.h"
#include "attention_fields.h"
#include "attention_reference.h"
#include "op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct param_def knobs[] = {
    {"engine", VALUE_CHOICE, 0, ATTN_SIMT, 0, 0, attn_engine_choices,
     "prefill: simt (every device), mma (f16, bf16: m16n8k16 on NVIDIA "
     "tensor cores, compute capability 8.0+) or wgmma (f16, bf16 at "
     "head_dim 64, 80, 96, 128 or 256: warpgroup products, compute "
     "capability 9.0)"},
    {"mma_q", VALUE_INT, 0, 64, 16, 256, NULL,
     "engines mma, wgmma: query rows per work-group, 16 a warp (mma), 64 "
     "a warpgroup (wgmma)"},
    {"mma_k", VALUE_INT, 0, 64, 16, 256, NULL,
     "engine mma, and the split path of engine wgmma: keys per tile (a "
     "multiple of 16)"},
    {"wg_k", VALUE_INT, 0, 128, 64, 128, NULL,
     "engine wgmma: keys per tile of the prefill path (64 or 128)"},
    {"wg_tma", VALUE_BOOL, 0, 1, 0, 1, NULL,
     "engine wgmma: the prefill path's tiles loaded by the tensor memory "
     "accelerator, the warpgroups taking turns (else cp.async and a "
     "work-group barrier a tile)"},
    {"split_q", VALUE_INT, 0, 16, 16, 256, NULL,
     "engine mma: query rows per work-group on the split path, 16 a warp"},
    {"block_q", VALUE_INT, 0, 32, 1, 256, NULL,
     "query rows per work-group (rows of one kv head's query heads)"},
    {"block_k", VALUE_INT, 0, 16, 1, 256, NULL,
     "keys per tile (staged in local memory, but on CPUs' paths)"},
    {"items", VALUE_INT, 0, 128, 1, 1024, NULL,
     "work-items per work-group, a multiple of block_q (items / block_q "
     "per query row)"},
    {"cpu_rows", VALUE_INT, 0, 0, 0, 64, NULL,
     "CPUs: query positions of one head a work-item takes on the prefill "
     "path, its keys read straight from k and v; 0: work-groups of "
     "block_q rows sharing tiles in local memory (as on GPUs)"},
    {"decode_rows", VALUE_INT, 0, 4, 0, 1024, NULL,
     "seq_q at most this takes the split path (keys over work-groups); "
     "0: never"},
    {"split", VALUE_INT, 0, 16, 1, 1024, NULL,
     "work-groups the keys of a block split over on the split path, at "
     "least"},
    {"split_most", VALUE_INT, 0, 64, 1, 1024, NULL,
     "the split path's most splits: the stub takes this many, or half or "
     "a quarter of it, while the call's work-groups are at most 8 a "
     "compute unit (CPUs: 2 work-items a core) and take split_keys keys "
     "each; else split"},
    {"split_keys", VALUE_INT, 0, 128, 1, 65536, NULL,
     "the fewest keys a work-group takes where the split path splits "
     "them more than `split` ways"},
};

static const char *const sizes[] = {"batch", "seq_q", "seq_kv", NULL};
enum { SZ_BATCH, SZ_SEQ_Q, SZ_SEQ_KV };
#define BATCH SIZE_BIT(SZ_BATCH)
#define SEQ_Q SIZE_BIT(SZ_SEQ_Q)
#define SEQ_KV SIZE_BIT(SZ_SEQ_KV)

enum { BUF_Q, BUF_K, BUF_V, BUF_O, BUF_LSE };

/* The split path's work-groups a compute unit: where the call's blocks
 * of rows split `split` ways leave the device's units idle, the stub
 * takes a path of twice the splits while the work-groups stay at most
 * this many a unit (bench/RESULTS.md, "attention's decode step: more
 * splits where the work is few"). */
#define SPLIT_FILL_PER_UNIT 8
/* The same on CPUs (attention_part_rows): a core's work-items, enough
 * that the cores end together. */
#define SPLIT_FILL_PER_CORE 2
/* Floats of a work-item's outputs on CPUs' split path (32 KiB, as many
 * again for its q): its rows stay in the core's caches beside a tile
 * of keys. */
#define PART_ROWS_FLOATS 8192
/* ... and the most query heads of a kv head sharing each key's loads. */
#define PART_ROWS_HEADS 8
/* CPUs' prefill path: query positions a work-item (attention_rows). */
#define CPU_ROWS_Q 4
/* Local memory a spec may ask for, as the row ops (op_rows.c). */
#define ATTN_MAX_LOCAL 32768
/* engine mma: the local memory every device of compute capability 8.0
 * and later grants a work-group (gemm_mma.h). */
#define ATTN_MMA_LOCAL MMA_LOCAL_MAX
/* log2(e): scores in base 2. */
#define LOG2_E 1.4426950408889634
/* The words of the handle's sync buffer: the split path's counters, one
 * per block of rows of a (batch, kv head); past them the merge takes a
 * launch of its own. 8192 cover a decode step of 1024 sequences at 8 kv
 * heads. */
#define ATTN_SYNC_WORDS 8192
/* The combine kernel's work-items on a GPU (one on a CPU). */
#define COMBINE_GPU_ITEMS 64

static long field(const struct kernel_spec *ks, const char *key)
{
    return (long)spec_field(ks, key);
}

static long knob(const struct kernel_spec *ks, const char *key)
{
    return (long)spec_knob(ks, key);
}

/* Floats of local memory of a block: q (block_q rows), a tile of keys or
 * values (block_k rows), rows of D | 1 floats (odd: apart in banks);
 * scores and probabilities (block_q x block_k). */
static long local_floats(long bq, long bk, long d)
{
    return (bq + bk) * (d | 1) + 2 * bq * bk;
}

static int engine(const struct kernel_spec *ks)
{
    return (int)knob(ks, "engine");
}

/* Bytes of local memory of attention_mma: rows of the head padded to 16,
 * plus 8 elements; the K and V tiles, the Q rows staged over them. */
static long mma_local(long mq, long mk, long d)
{
    long row = ((d + 15) / 16 * 16 + 8) * 2;
    return (mq > 2 * mk ? mq : 2 * mk) * row;
}

/* Bytes of local memory of attention_mma_part: the K and V tiles, the Q
 * rows beside them (copied at once); or, if more, what the merge of
 * SPLIT_MOST records of each of its rows takes (attention_merge.cl). */
static long split_local(long sq, long mk, long d, long split_most)
{
    long row = ((d + 15) / 16 * 16 + 8) * 2;
    long tiles = (2 * mk + sq) * row, merge = 4 * sq * (2 * split_most + 1);
    return tiles > merge ? tiles : merge;
}

/* The most local memory the prefill's tiles on warpgroups may take (Q's
 * rows, two K and two V tiles, rows of whole blocks of 64 elements): the
 * most they have run with, at heads of 128 and 256 (bench/RESULTS.md). */
#define WGMMA_MAX_LOCAL (192L << 10)
static long wgmma_local(long mq, long wk, long d)
{
    return (mq + 4 * wk) * ((d + 63) / 64 * 64) * 2;
}

/* Tensor cores where the target offers them, for f16 and bf16 at head
 * dims of 16-byte rows: 4 warps of 16 rows, tiles of 64 keys (32 past a
 * head of 128, which holds a warp's outputs in 128 registers); on
 * compute capability 9.0 at the heads of attn_wgmma_head, warpgroups:
 * two of 64 rows each, over tiles of 64 keys at heads of 64 and 256 and
 * 128 at the others (bench/RESULTS.md, "attention on warpgroups"),
 * loaded by the tensor memory accelerator past a head of 64 ("attention
 * and its backward at heads of 80, 96 and 256 on warpgroups"), and the
 * split path, then mma_k's only user, over tiles of 16 keys ("The
 * decode step in one launch"). */
static void engine_defaults(struct kernel_spec *ks)
{
    long d = attn_head_dim(ks);
    int wgmma = 0;
    if (target_offers(ks->target, CAP_MMA_SYNC_BF16_F16) &&
        ks->dtype != DTYPE_F32 && d % 8 == 0) {
        wgmma = target_offers(ks->target, CAP_WGMMA) && attn_wgmma_head(d);
        spec_knob_default(ks, "engine", wgmma ? ATTN_WGMMA : ATTN_MMA);
    }
    wgmma = engine(ks) == ATTN_WGMMA;
    spec_knob_default(ks, "mma_q", wgmma ? 128 : 64);
    spec_knob_default(ks, "mma_k", wgmma ? 16 : d > 128 ? 32 : 64);
    spec_knob_default(ks, "wg_k", d == 80 || d == 96 || d == 128 ? 128 : 64);
    spec_knob_default(ks, "wg_tma", attn_wgmma_head(d) && d != 64);
    spec_knob_default(ks, "split_q", 16);
}

/* CPUs' split path (attention_part_rows): the most kv heads, a divisor
 * of kv_heads, whose query rows a work-item holds in PART_ROWS_FLOATS
 * floats (the rows' outputs, and q's the same again), 0 when not one
 * kv head's fits (attention_part then). */
static long part_rows_kv(const struct kernel_spec *ks)
{
    long kv = attn_kv_heads(ks), per = attn_heads(ks) / kv *
                                       attn_head_dim(ks);
    for (long n = kv; n >= 1; n--) {
        if (kv % n == 0 && n * per <= PART_ROWS_FLOATS) {
            return n;
        }
    }
    return 0;
}

/* attention_part_rows: the query heads of a kv head that share each
 * key's loads at once, the most that divide the group up to
 * PART_ROWS_HEADS (their scores stay in the vector registers). */
static long part_rows_heads(const struct kernel_spec *ks)
{
    long group = attn_heads(ks) / attn_kv_heads(ks), n = PART_ROWS_HEADS;
    while (group % n != 0) {
        n--;
    }
    return n;
}

/* GPUs: blocks of 32 rows (16 past D 128), four work-items a row, so
 * that a row's outputs are a quarter of D each, and the widest key tile
 * that fits; the split path's keys over 16 work-groups a block
 * (bench/RESULTS.md, "attention's decode step: a split's kv heads side
 * by side"). CPUs: one
 * work-item a row (PoCL runs a group as loops over its items, each
 * item's dimensions a vector), blocks of 64 rows (32 past D 64, 16 past
 * 128), tiles of 8 keys: with GPU-like tiles PoCL ran no faster than the
 * naive kernel. Their prefill takes CPU_ROWS_Q positions a work-item
 * instead (attention_rows), whose tile of 8 keys gives a row's scores
 * as one vector. */
static void defaults(struct kernel_spec *ks)
{
    long d = attn_head_dim(ks);
    int cpu = ks->target == TARGET_CPU;
    engine_defaults(ks);
    long bq = cpu ? (d > 128 ? 16 : d > 64 ? 32 : 64) : (d > 128 ? 16 : 32);
    spec_knob_default(ks, "block_q", (double)bq);
    bq = knob(ks, "block_q");
    spec_knob_default(ks, "items", (double)(cpu ? bq : bq * 4));
    long bk = cpu ? 8 : 64;
    while (bk > 1 && local_floats(bq, bk, d) * 4 > ATTN_MAX_LOCAL) {
        bk /= 2;
    }
    spec_knob_default(ks, "block_k", (double)bk);
    spec_knob_default(ks, "cpu_rows", cpu ? CPU_ROWS_Q : 0);
    spec_knob_default(ks, "split", cpu ? 4 : 16);
    /* More splits where the work is few: up to 64 on tensor cores and
     * on CPUs' attention_part_rows (which merges in a second launch);
     * on the GPU float kernel as many as its merge finds room for in
     * q's rows (merge_fits); `split` on CPUs' attention_part. */
    long split = knob(ks, "split");
    long room = ((d | 1) - 1) / 2;
    long most = cpu                      ? (part_rows_kv(ks) > 0 ? 64 : split)
                : engine(ks) != ATTN_SIMT ? 64
                : room < 64              ? room
                                         : 64;
    spec_knob_default(ks, "split_most", split > most ? split : most);
}

/* engine: wgmma's tiles: warpgroups of 64 rows, keys of 64 or 128, the
 * heads of attn_wgmma_head, in the local memory they have run with (the
 * prefill path; the split path's are checked as mma's). */
static void validate_wgmma(const struct kernel_spec *ks, struct diags *d)
{
    long mq = knob(ks, "mma_q"), wk = knob(ks, "wg_k"), hd = attn_head_dim(ks);
    if (!attn_wgmma_head(hd)) {
        diag_error(d, ks->file, spec_knob_mark(ks, "engine"),
                   "engine: wgmma needs head_dim 64, 80, 96, 128 or 256 "
                   "(got %ld); "
                   "engine: mma takes any multiple of 8",
                   hd);
        return;
    }
    if (mq % 64 != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "mma_q"),
                   "engine: wgmma needs tile mma_q a multiple of 64 (a "
                   "warpgroup's rows; got %ld)",
                   mq);
    }
    if (wk != 64 && wk != 128) {
        diag_error(d, ks->file, spec_knob_mark(ks, "wg_k"),
                   "engine: wgmma needs tile wg_k 64 or 128 (got %ld)", wk);
        return;
    }
    long bytes = wgmma_local(mq, wk, hd);
    if (bytes > WGMMA_MAX_LOCAL) {
        diag_error(d, ks->file, spec_knob_mark(ks, "mma_q"),
                   "engine: wgmma's tiles mma_q %ld and wg_k %ld take %ld "
                   "bytes of local memory at head_dim %ld (at most %ld)",
                   mq, wk, bytes, hd, WGMMA_MAX_LOCAL);
    }
}

static void validate_mma(const struct kernel_spec *ks, struct diags *d)
{
    long mq = knob(ks, "mma_q"), mk = knob(ks, "mma_k"), hd = attn_head_dim(ks);
    long sq = knob(ks, "split_q");
    int wgmma = engine(ks) == ATTN_WGMMA;
    if (engine(ks) == ATTN_SIMT) {
        return;
    }
    if (!gemm_mma_check_dtype(ks, wgmma ? "wgmma" : "mma", 0, d)) {
        return;
    }
    if (wgmma) {
        validate_wgmma(ks, d);
        /* below: the split path's tiles (split_q rows over mma_k keys) */
        mq = sq;
    }
    if (hd % 8 != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "engine"),
                   "engine: mma needs head_dim a multiple of 8 (got %ld): "
                   "rows of 16 bytes",
                   hd);
    }
    if (!wgmma && mq % 16 != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "mma_q"),
                   "tile mma_q (%ld) must be a multiple of 16 (a warp's rows)",
                   mq);
    }
    if (sq % 16 != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "split_q"),
                   "tile split_q (%ld) must be a multiple of 16 (a warp's "
                   "rows)",
                   sq);
    }
    if (mk % 16 != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "mma_k"),
                   "tile mma_k (%ld) must be a multiple of 16 (k16 steps)",
                   mk);
    }
    long bytes = mma_local(mq, mk, hd);
    long split_bytes = split_local(sq, mk, hd, 1);
    bytes = bytes > split_bytes ? bytes : split_bytes;
    if (bytes > ATTN_MMA_LOCAL) {
        diag_error(d, ks->file, knob_blame(ks, "mma_k", "mma_q"),
                   "tile mma_q (%ld) or split_q (%ld) and mma_k (%ld) need "
                   "%ld bytes of local memory at head_dim %ld (at most %ld)",
                   mq, sq, mk, bytes, hd, ATTN_MMA_LOCAL);
        return;
    }
    long most = knob(ks, "split_most");
    if (split_local(sq, mk, hd, most) > ATTN_MMA_LOCAL) {
        diag_error(d, ks->file, knob_blame(ks, "split_most", "split_q"),
                   "tile split_most (%ld) needs %ld bytes of local memory "
                   "for the split path's merge of split_q (%ld) rows (at "
                   "most %ld)",
                   most, split_local(sq, mk, hd, most), sq, ATTN_MMA_LOCAL);
    }
}

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    long bq = knob(ks, "block_q"), bk = knob(ks, "block_k");
    long items = knob(ks, "items");
    attn_check_fields(ks, d);
    if (items % bq != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "items"),
                   "tile items (%ld) must be a multiple of block_q (%ld)",
                   items, bq);
    }
    long bytes = local_floats(bq, bk, attn_head_dim(ks)) * 4;
    if (bytes > ATTN_MAX_LOCAL) {
        diag_error(d, ks->file, spec_knob_mark(ks, "block_k"),
                   "tile block_q (%ld) and block_k (%ld) need %ld bytes of "
                   "local memory at head_dim %ld (at most %d)",
                   bq, bk, bytes, attn_head_dim(ks), ATTN_MAX_LOCAL);
    }
    if (knob(ks, "split_most") < knob(ks, "split")) {
        diag_error(d, ks->file, knob_blame(ks, "split_most", "split"),
                   "tile split_most (%ld) must be at least split (%ld)",
                   knob(ks, "split_most"), knob(ks, "split"));
    }
    validate_mma(ks, d);
}

static void plan_buffers(const struct kernel_spec *ks, struct plan *p)
{
    long h = attn_heads(ks), hkv = attn_kv_heads(ks), d = attn_head_dim(ks);
    plan_buffer(p, "q", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_Q, h * d);
    plan_buffer_doc(p, "[batch][seq_q][heads][head_dim]", NULL);
    plan_buffer(p, "k", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_KV, hkv * d);
    plan_buffer_doc(p, "[batch][seq_kv][kv_heads][head_dim]", NULL);
    plan_buffer(p, "v", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_KV, hkv * d);
    plan_buffer_doc(p, "[batch][seq_kv][kv_heads][head_dim]", NULL);
    plan_buffer(p, "o", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_Q, h * d);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_doc(p, "[batch][seq_q][heads][head_dim]",
                    "0 for a query that sees no key");
    plan_buffer(p, "lse", 0, 0, 0);
    plan_buffer_over(p, BATCH | SEQ_Q, h);
    plan_buffer_elem(p, ELEM_F32);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_nullable(p);
    plan_buffer_doc(p, "[batch][heads][seq_q]",
                    "ln of each row's sum of exp(score), -inf for a query "
                    "that sees no key; may be NULL");
    plan_public_int(p, "HEADS", "query heads", h);
    plan_public_int(p, "KV_HEADS", "key and value heads", hkv);
    plan_public_int(p, "HEAD_DIM", "elements per head", d);
}

/* The split path's rows a work-group and work-items. */
static long split_rows(const struct kernel_spec *ks)
{
    return knob(ks, engine(ks) != ATTN_SIMT ? "split_q" : "block_q");
}

static long split_items(const struct kernel_spec *ks)
{
    return engine(ks) != ATTN_SIMT ? 2 * knob(ks, "split_q")
                                   : knob(ks, "items");
}

/* The #defines of templates/attention_common.cl. */
static void plan_defines(const struct kernel_spec *ks, struct plan *p)
{
    double cap = spec_field(ks, "softcap");
    plan_storage(p, ks);
    plan_int(p, "HEADS", "query heads", attn_heads(ks));
    plan_int(p, "KV_HEADS", "key and value heads", attn_kv_heads(ks));
    plan_int(p, "HEAD_DIM", "elements per head", attn_head_dim(ks));
    plan_int(p, "CAUSAL", "key j visible to query i at j <= i + "
             "seq_kv - seq_q", attn_causal(ks));
    plan_int(p, "WINDOW", "and at i + seq_kv - seq_q - j < WINDOW (0: "
             "none)", field(ks, "window"));
    plan_int(p, "CAPPED", "scores softcapped", cap > 0);
    plan_float(p, "SOFTCAP", "the softcap (0: none)", cap);
    plan_float(p, "INV_SOFTCAP", "1 / softcap", cap > 0 ? 1.0 / cap : 0);
    /* Scores in base 2: exp2 of q.k times Q_MUL (times LOG2E after the
     * softcap's tanh when capped). */
    plan_float(p, "Q_MUL", cap > 0 ? "q times scale" : "q times scale * "
               "log2(e)", cap > 0 ? attn_scale(ks) : attn_scale(ks) * LOG2_E);
    plan_int(p, "BLOCK_Q", "query rows per work-group", knob(ks, "block_q"));
    plan_int(p, "BLOCK_K", "keys per tile", knob(ks, "block_k"));
    plan_int(p, "ITEMS", "work-items per work-group", knob(ks, "items"));
    plan_int(p, "SPLIT_MOST", "the split path's most splits (the merge's "
             "local memory)", knob(ks, "split_most"));
    plan_int(p, "COMBINE_ITEMS", "work-items of attention_combine",
             ks->target == TARGET_CPU ? 1 : COMBINE_GPU_ITEMS);
    plan_int(p, "EXP_POLY", "exponentials as a polynomial on the exponent "
             "bits (CPUs)", ks->target == TARGET_CPU);
    if (engine(ks) != ATTN_SIMT) {
        plan_int(p, "MMA_Q", "the prefill path: query rows per work-group",
                 knob(ks, "mma_q"));
        plan_int(p, "MMA_K", "attention_mma, attention_mma_part: keys per "
                 "tile", knob(ks, "mma_k"));
        plan_int(p, "SPLIT_Q", "attention_mma_part: query rows per "
                 "work-group", knob(ks, "split_q"));
    }
    if (engine(ks) == ATTN_WGMMA) {
        plan_int(p, "WG_KEYS", "attention_wgmma: keys per tile",
                 knob(ks, "wg_k"));
        if (knob(ks, "wg_tma")) {
            plan_int(p, "ATM_MAP_SLOTS", "attention_wgmma_tma: slots of "
                     "tensor maps in the scratch", WGMMA_MAP_SLOTS);
        }
    }
}

/* A launch of KERNEL over the blocks of rows of every (batch, kv head):
 * dimension 0 TIMES * GROUP * ceil(seq_q / block_q) groups (at least the
 * ceil(GROUP * seq_q / block_q) blocks; the kernel returns for the rest),
 * dimension 1 one per (batch, kv head). */
static struct launch *launch_blocks(const struct kernel_spec *ks,
                                    struct path *pa, const char *kernel,
                                    size_t times, size_t rows, size_t items,
                                    const char *const *args)
{
    struct launch *l = &pa->launch[pa->n_launch++];
    size_t group = (size_t)(attn_heads(ks) / attn_kv_heads(ks));
    l->kernel = kernel;
    l->dims = 2;
    l->local[0] = items;
    l->local[1] = 1;
    launch_over(l, 0, times * group, SEQ_Q, rows);
    launch_over(l, 1, (size_t)attn_kv_heads(ks), BATCH, 1);
    launch_args(l, args);
    return l;
}

/* Whether the part kernel's local memory holds the merge's maxima, sums
 * and scales: a block's rows times 2 split + 1 floats, in q's rows
 * (SIMT) or the tiles' room (tensor cores). */
static int merge_fits(const struct kernel_spec *ks)
{
    long rows = split_rows(ks), split = knob(ks, "split_most");
    long d = attn_head_dim(ks);
    long room = engine(ks) != ATTN_SIMT
                    ? split_local(rows, knob(ks, "mma_k"), d, split) / 4
                    : rows * (d | 1);
    return rows * (2 * split + 1) <= room;
}

/* Scratch of the split path: per query row and split, a record of its
 * D unnormalised outputs, max and sum in whole 16-byte words. */
static void split_scratch(const struct kernel_spec *ks, struct path *pa,
                          long splits)
{
    long rec = (attn_head_dim(ks) + 5) / 4 * 4;
    pa->scratch_per = attn_heads(ks) * splits * rec;
    pa->scratch_sizes = BATCH | SEQ_Q;
}

/* A split path's launch of KERNEL: launch_blocks' SPLITS times (its
 * "slices" argument), dimension 0 then as few past the blocks as the
 * launch's dimensions can say: SPLITS * ceil(seq_q / (ROWS / GROUP))
 * where GROUP divides ROWS (each block exactly), SPLITS * GROUP / ROWS *
 * seq_q where ROWS divides GROUP, else launch_blocks' SPLITS * GROUP *
 * ceil(seq_q / ROWS). */
static void launch_splits(const struct kernel_spec *ks, struct path *pa,
                          const char *kernel, long splits, long rows,
                          const char *const *args)
{
    struct launch *l = launch_blocks(ks, pa, kernel, (size_t)splits,
                                     (size_t)rows,
                                     (size_t)split_items(ks), args);
    long group = attn_heads(ks) / attn_kv_heads(ks);
    l->slices = (int)splits;
    if (rows % group == 0) {
        launch_over(l, 0, (size_t)splits, SEQ_Q, (size_t)(rows / group));
    } else if (group % rows == 0) {
        launch_over(l, 0, (size_t)(splits * (group / rows)), SEQ_Q, 1);
    }
}

/* The split counts of the split path's paths into COUNTS: MOST, half
 * and a quarter of it while more than `split`, then `split`; how many. */
static int split_counts(const struct kernel_spec *ks, long most,
                        long counts[4])
{
    long split = knob(ks, "split");
    int n = 0;
    for (long splits = most; splits > split && n < 3; splits /= 2) {
        counts[n++] = splits;
    }
    counts[n++] = split;
    return n;
}

/* A new split path of P, the I-th of N (split_counts), for seq_q up to
 * decode_rows: FIRST says why the first of several, LAST why the last. */
static struct path *split_path(const struct kernel_spec *ks, struct plan *p,
                               int i, int n, const char *first,
                               const char *last)
{
    struct path *pa = &p->path[p->n_path++];
    pa->max_rows = knob(ks, "decode_rows");
    pa->why = i == n - 1 ? last
              : i == 0   ? first
              : i == 1   ? "the same, over half as many"
                         : "the same, over a quarter as many";
    return pa;
}

/* Bounds PA, a split path of SPLITS but the last, to GROUPS work-groups
 * per query row position at most FILL a compute unit, and to seq_kv of
 * split_keys keys a split or more. */
static void bound_splits(const struct kernel_spec *ks, struct path *pa,
                         long splits, long groups, long fill)
{
    pa->units_groups = groups;
    pa->units_sizes = BATCH | SEQ_Q;
    pa->units_fill = fill;
    pa->units_least = splits * knob(ks, "split_keys");
    pa->units_least_size = SZ_SEQ_KV;
}

/* The split path in one launch: the part kernel's last work-group of
 * each block merges its rows; a counter per block, at most
 * ceil(GROUP / rows) per query row of each kv head. Over split_most,
 * half and a quarter of it while its work-groups fit
 * SPLIT_FILL_PER_UNIT a compute unit, then `split`. */
static void plan_merged(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const args[] = {"slices", "seq_q", "seq_kv", "q",
                                       "k", "v", "o", "lse", "scratch",
                                       "sync", NULL};
    long group = attn_heads(ks) / attn_kv_heads(ks), rows = split_rows(ks);
    long counts[4];
    int n = split_counts(ks, knob(ks, "split_most"), counts);
    for (int i = 0; i < n; i++) {
        struct path *pa = split_path(
            ks, p, i, n,
            "seq_q <= decode_rows, few blocks (8 work-groups a compute "
            "unit at most) and many keys: the keys of each block over "
            "split_most work-groups, the last of them to finish merging "
            "their partial softmaxes",
            "seq_q <= decode_rows: the keys of each block over `split` "
            "work-groups, the last of them to finish merging their "
            "partial softmaxes");
        launch_splits(ks, pa,
                      engine(ks) != ATTN_SIMT ? "attention_mma_part_merged"
                                              : "attention_part_merged",
                      counts[i], rows, args);
        split_scratch(ks, pa, counts[i]);
        pa->sync_per = attn_kv_heads(ks) * ((group + rows - 1) / rows);
        pa->sync_sizes = BATCH | SEQ_Q;
        if (i < n - 1) {
            bound_splits(ks, pa, counts[i], counts[i] * pa->sync_per,
                         SPLIT_FILL_PER_UNIT);
        }
    }
    p->sync_words = ATTN_SYNC_WORDS;
}

/* The split path in two launches: a part kernel per chunk of keys
 * (attention_part_rows on CPUs, where part_rows_kv finds room;
 * attention_part or attention_mma_part per block and split elsewhere),
 * then attention_combine per query row and head. */
static void plan_split(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const part_args[] = {"slices", "seq_q", "seq_kv",
                                            "q", "k", "v", "scratch", NULL};
    static const char *const combine_args[] = {"slices", "seq_q", "o",
                                               "lse", "scratch", NULL};
    long rows_kv = ks->target == TARGET_CPU ? part_rows_kv(ks) : 0;
    if (rows_kv > 0) {
        plan_int(p, "APR_KV", "attention_part_rows: kv heads a work-item",
                 rows_kv);
        plan_int(p, "APR_HEADS", "attention_part_rows: query heads sharing "
                 "a key's loads", part_rows_heads(ks));
    }
    /* attention_part_rows: over split_most, half and a quarter of it
     * while its work-items fit SPLIT_FILL_PER_CORE a compute unit, then
     * `split`; the other part kernels over `split`. */
    long counts[4];
    int n = split_counts(ks, rows_kv > 0 ? knob(ks, "split_most")
                                         : knob(ks, "split"),
                         counts);
    for (int i = 0; i < n; i++) {
        long splits = counts[i];
        struct path *pa = split_path(
            ks, p, i, n,
            "seq_q <= decode_rows, few work-items (2 a compute unit at "
            "most) and many keys: the keys over split_most work-items, "
            "then their partial softmaxes merged",
            "seq_q <= decode_rows: the keys of each block over `split` "
            "work-groups, then their partial softmaxes merged");
        if (rows_kv > 0) {
            long items = attn_kv_heads(ks) / rows_kv;
            struct launch *l = &pa->launch[pa->n_launch++];
            l->kernel = "attention_part_rows";
            l->dims = 2;
            l->local[0] = 1;
            l->local[1] = 1;
            l->slices = (int)splits;
            launch_over(l, 0, (size_t)splits, SEQ_Q, 1);
            launch_over(l, 1, (size_t)items, BATCH, 1);
            launch_args(l, part_args);
            if (i < n - 1) {
                bound_splits(ks, pa, splits, splits * items,
                             SPLIT_FILL_PER_CORE);
            }
        } else {
            launch_splits(ks, pa,
                          engine(ks) != ATTN_SIMT ? "attention_mma_part"
                                                  : "attention_part",
                          splits, split_rows(ks), part_args);
        }
        struct launch *l = &pa->launch[pa->n_launch++];
        l->slices = (int)splits;
        l->kernel = "attention_combine";
        l->dims = 2;
        l->local[0] = ks->target == TARGET_CPU ? 1 : COMBINE_GPU_ITEMS;
        l->local[1] = 1;
        launch_fixed(l, 0, 1);
        launch_over(l, 1, (size_t)attn_heads(ks), BATCH | SEQ_Q, 1);
        launch_args(l, combine_args);
        split_scratch(ks, pa, splits);
    }
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const args[] = {"seq_q", "seq_kv", "q", "k", "v",
                                       "o", "lse", NULL};
    plan_defines(ks, p);
    plan_buffers(ks, p);
    if (engine(ks) != ATTN_SIMT) {
        p->needs |= CAP_MMA_SYNC_BF16_F16 |
                    (engine(ks) == ATTN_WGMMA ? CAP_WGMMA : 0);
    }
    /* CPUs keep the two launches: PoCL 3.1's CPU device computed wrong
     * records at head dims below 8 when a barrier followed their stores
     * (bench/RESULTS.md, "The decode step in one launch"), and a launch
     * there costs little beside the work. */
    int merged = knob(ks, "decode_rows") > 0 &&
                 ks->target != TARGET_CPU && merge_fits(ks);
    if (merged) {
        plan_int(p, "GRID_MEMBAR_PTX",
                 "the merge's fences as PTX membar.gl",
                 target_offers(ks->target, CAP_SHFL_SYNC));
        plan_merged(ks, p);
    }
    /* CPUs' kernels share attention_dots.cl: the most vectors a
     * work-item of either holds (attention_rows' positions, a kv head's
     * query heads in attention_part_rows) and the keys a tile. */
    long cpu_rows = ks->target == TARGET_CPU && engine(ks) == ATTN_SIMT
                        ? knob(ks, "cpu_rows")
                        : 0;
    long dots = ks->target == TARGET_CPU && knob(ks, "decode_rows") > 0 &&
                        part_rows_kv(ks) > 0
                    ? part_rows_heads(ks)
                    : 0;
    dots = cpu_rows > dots ? cpu_rows : dots;
    if (dots > 0) {
        plan_int(p, "DOTS_N", "attention_dots.cl: the most vectors a "
                 "work-item holds", dots);
        plan_int(p, "DOTS_T", "attention_dots.cl: keys a tile",
                 knob(ks, "block_k"));
    }
    if (knob(ks, "decode_rows") > 0) {
        plan_split(ks, p);
    }
    struct path *pa = &p->path[p->n_path++];
    if (engine(ks) != ATTN_SIMT) {
        static const char *const tma_args[] = {"seq_q", "seq_kv", "q", "k",
                                               "v", "o", "lse", "scratch",
                                               NULL};
        int wgmma = engine(ks) == ATTN_WGMMA;
        int tma = wgmma && knob(ks, "wg_tma");
        pa->why = tma     ? "a work-group per mma_q query rows of one kv "
                            "head's heads, over the key tiles they see, on "
                            "warpgroup tensor cores, the tiles loaded by "
                            "the tensor memory accelerator"
                  : wgmma ? "a work-group per mma_q query rows of one kv "
                            "head's heads, over the key tiles they see, on "
                            "warpgroup tensor cores"
                          : "a work-group per mma_q query rows of one kv "
                            "head's heads, over the key tiles they see, on "
                            "tensor cores";
        launch_blocks(ks, pa,
                      tma     ? "attention_wgmma_tma"
                      : wgmma ? "attention_wgmma"
                              : "attention_mma",
                      1, (size_t)knob(ks, "mma_q"),
                      2 * (size_t)knob(ks, "mma_q"), tma ? tma_args : args);
        /* the tensor maps of K and V: 256 bytes a slot */
        pa->scratch_fixed = tma ? WGMMA_MAP_SLOTS * 64 : 0;
        return;
    }
    if (cpu_rows > 0) {
        plan_int(p, "ROWS_Q", "attention_rows: query positions a "
                 "work-item", cpu_rows);
        pa->why = "a work-item per cpu_rows query positions of one head, "
                  "over the keys they see";
        struct launch *l = &pa->launch[pa->n_launch++];
        l->kernel = "attention_rows";
        l->dims = 2;
        l->local[0] = 1;
        l->local[1] = 1;
        launch_over(l, 0, 1, SEQ_Q, (size_t)cpu_rows);
        launch_over(l, 1, (size_t)attn_heads(ks), BATCH, 1);
        launch_args(l, args);
        return;
    }
    pa->why = "a work-group per block_q query rows of one kv head's "
              "heads, over the key tiles they see";
    launch_blocks(ks, pa, "attention", 1, (size_t)knob(ks, "block_q"),
                  (size_t)knob(ks, "items"), args);
}

/* ---- checking and measuring ------------------------------------------ */

struct reference_job {
    const struct kernel_spec *ks;
    const float *const *in;
    const size_t *sz;
    double *const *out;
    struct attn_ref_math m;
    _Atomic int failed;
};

/* o and lse of a tile of query rows (attn_ref_tile_at's ITEM). The keys
 * stream past the rows twice: their scores and each row's max, then o =
 * sum exp(s - max) v / sum, in key order (what a row alone in two passes
 * computes). */
static void reference_tile(void *ctx, size_t item)
{
    struct reference_job *job = ctx;
    const float *const *in = job->in;
    struct attn_ref_tile t;
    double mx[ATTN_REF_ROWS], sum[ATTN_REF_ROWS], dots[ATTN_REF_ROWS];
    double o[ATTN_REF_ROWS][ATTN_REF_MAX_D];
    float q_t[ATTN_REF_MAX_D * ATTN_REF_ROWS];
    size_t d = job->m.d;
    attn_ref_tile_at(job->ks, job->sz, item, &t);
    size_t n = t.n;
    const long *lo = t.lo, *hi = t.hi;
    const long first = t.first, end = t.end;
    const float *keys = in[BUF_K] + t.kv_at, *values = in[BUF_V] + t.kv_at;
    for (size_t r = 0; r < n; r++) {
        mx[r] = -INFINITY;
        sum[r] = 0;
        for (size_t e = 0; e < d; e++) {
            o[r][e] = 0;
        }
    }
    size_t span = end > first ? (size_t)(end - first) : 1;
    double *s = malloc(n * span * sizeof *s);
    if (s == NULL) {
        job->failed = 1;
        return;
    }
    attn_ref_hold(in[BUF_Q], t.at, n, d, q_t);
    for (long j = first; j < end; j++) {
        attn_ref_dots(q_t, keys + (size_t)j * t.kstride, d, dots);
        for (size_t r = 0; r < n; r++) {
            if (j < lo[r] || j >= hi[r]) {
                continue;
            }
            double v = attn_ref_score(&job->m, dots[r], NULL);
            s[r * span + (size_t)(j - first)] = v;
            mx[r] = fmax(mx[r], v);
        }
    }
    for (long j = first; j < end; j++) {
        const float *v = values + (size_t)j * t.kstride;
        for (size_t r = 0; r < n; r++) {
            if (j < lo[r] || j >= hi[r]) {
                continue;
            }
            double w = exp(s[r * span + (size_t)(j - first)] - mx[r]);
            sum[r] += w;
            attn_ref_axpy(o[r], w, v, d);
        }
    }
    free(s);
    for (size_t r = 0; r < n; r++) {
        for (size_t e = 0; job->out[BUF_O] != NULL && e < d; e++) {
            job->out[BUF_O][t.at[r] + e] = sum[r] == 0 ? 0 : o[r][e] / sum[r];
        }
        if (job->out[BUF_LSE] != NULL) {
            job->out[BUF_LSE][t.lse_at + r] =
                sum[r] == 0 ? -INFINITY : mx[r] + log(sum[r]);
        }
    }
}

/* Tiles of query rows of every (batch, head) on the host's cores
 * (parallel.h). */
static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sz, double *const *out)
{
    struct reference_job job = {ks, in, sz, out, {0, 0, 0}, 0};
    attn_ref_math_of(ks, &job.m);
    parallel_for(sz[SZ_BATCH] * (size_t)attn_heads(ks) * attn_ref_tiles(sz),
                 reference_tile, &job);
    return job.failed ? -1 : 0;
}

/* naive_attention: a work-item per (query, batch and head), seq_q of
 * them exactly in dimension 0 (the kernel reads seq_q from there). */
static void naive(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const args[] = {"batch", "seq_kv", "q", "k", "v",
                                       "o", "lse", NULL};
    plan_storage(p, ks);
    plan_int(p, "HEADS", "query heads", attn_heads(ks));
    plan_int(p, "KV_HEADS", "key and value heads", attn_kv_heads(ks));
    plan_int(p, "HEAD_DIM", "elements per head", attn_head_dim(ks));
    plan_int(p, "ATTN_CAUSAL", "causal", attn_causal(ks));
    plan_int(p, "ATTN_WINDOW", "window (0: none)", field(ks, "window"));
    plan_float(p, "ATTN_SCALE", "times q.k", attn_scale(ks));
    plan_float(p, "ATTN_SOFTCAP", "0: none", spec_field(ks, "softcap"));
    naive_launch(p, "naive_attention", 0, args);
    attn_naive_grid(p, SZ_SEQ_Q, (size_t)attn_heads(ks));
}

/* q, k, v read once, o and lse written once; 4 flops per (query, key,
 * head, dim): q.k and p.v, over the pairs a mask leaves visible (about
 * half of them when causal at seq_q = seq_kv, counted exactly). */
static void costs(const struct kernel_spec *ks, const size_t *sz,
                  double *bytes, double *flops)
{
    attn_costs(ks, sz, 4.0, bytes, flops);
}

/* o: the f32 bound plus the storage's rounding; lse is float32. */
static double error_bound(const struct kernel_spec *ks)
{
    return storage_error_bound(ks->dtype, 1e-5);
}

/* 4096 tokens for a model's heads (attn_bench_sizes). */
static void bench_sizes(const struct kernel_spec *ks, size_t *sz)
{
    attn_bench_sizes(ks, sz, 4096);
}

/* engines mma and wgmma (f16, bf16 on tensor cores: validate() rejects
 * them elsewhere, the tuner wgmma off compute capability 9.0) with their
 * tiles; the float kernel's tiles. Configs that emit
 * the same code (mma's tiles under simt) count once. */
static const struct tune_axis tune_space[] = {
    {"engine", "simt mma wgmma"},
    {"mma_q", "32 64 128 192"},
    {"mma_k", "32 64 128"},
    {"wg_k", "64 128"},
    {"wg_tma", "false true"},
    {"block_q", "16 32 64"},
    {"block_k", "8 16 32 64"},
    {"items", "16 32 64 128 256"},
    {"cpu_rows", "0 2 4 8"},
    {NULL, NULL},
};

/* The split path's knobs: the tuner measures at bench's seq_q (4096,
 * the row path), so it neither searches nor times them, and an entry
 * leaves them to the defaults. */
static const char *const few_rows_knobs[] = {"decode_rows", "split",
                                             "split_most", "split_keys",
                                             "split_q", NULL};

static const char *const kernels[] = {
    "attention",          "attention_mma",
    "attention_wgmma",    "attention_wgmma_tma",
    "attention_rows",     "attention_part",        "attention_part_merged",
    "attention_part_rows",
    "attention_mma_part", "attention_mma_part_merged",
    "attention_combine",  NULL};

const struct op_def op_attention = {
    .name = "attention",
    .summary = "o = softmax(scale * q k^T, causal, window, softcap) v and "
               "lse per query row and head (GQA, MQA)",
    .sizes = sizes,
    .path_size = SZ_SEQ_Q,
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
    .few_rows_knobs = few_rows_knobs,
    .reference = reference,
    .naive = naive,
    .costs = costs,
    .matmul = 1,
    .error_bound = error_bound,
    .bench_sizes = bench_sizes,
    .shape_text = attn_shape_text,
};
