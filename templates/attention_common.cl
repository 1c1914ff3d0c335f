/* attention_common.cl - what the attention kernels share: a work-group
 * attends one block of BLOCK_Q query rows of one (batch, kv head) over a
 * range of keys, FlashAttention-2 style.
 *
 * Row r of a (batch, kv head) is query r / GROUP of query head
 * kv_head * GROUP + r % GROUP: every row of a block reads the same keys
 * and values, and a block spans few query positions, so that a causal or
 * windowed block skips the key tiles no row of it sees (never loaded).
 * Each tile of BLOCK_K keys is staged in local memory (keys, then values
 * in the same room); ROW_ITEMS work-items share a row: the row's scores
 * and probabilities go through local memory, its outputs are theirs
 * (dimension c, c + ROW_ITEMS, ...). Online softmax in base 2: q is
 * scaled by Q_MUL (scale * log2(e), or scale before a softcap's tanh and
 * log2(e) after), a row keeps its running max m and sum l, and a tile
 * whose probabilities are taken against a new max rescales what came
 * before by exp2(m_old - m_new). A row that has seen no key keeps
 * m = -INFINITY and l = 0: its output is 0 and its lse -INFINITY.
 *
 * Needs the #defines HEADS, KV_HEADS, HEAD_DIM, CAUSAL, WINDOW, CAPPED,
 * SOFTCAP, INV_SOFTCAP, Q_MUL, BLOCK_Q, BLOCK_K, ITEMS, SPLIT_MOST,
 * COMBINE_ITEMS and EXP_POLY (attention_exp2.cl); buffers q
 * [batch][seq_q][HEADS][HEAD_DIM], k and v [batch][seq_kv][KV_HEADS]
 * [HEAD_DIM], o like q, lse [batch][HEADS][seq_q] (float, may be
 * NULL). */
#include "storage_@dtype@.cl"
#include "attention_exp2.cl"

#if !defined(HEADS) || !defined(KV_HEADS) || !defined(HEAD_DIM) ||         \
    !defined(CAUSAL) || !defined(WINDOW) || !defined(CAPPED) ||            \
    !defined(SOFTCAP) || !defined(INV_SOFTCAP) || !defined(Q_MUL) ||       \
    !defined(BLOCK_Q) || !defined(BLOCK_K) || !defined(ITEMS) ||           \
    !defined(SPLIT_MOST) || !defined(COMBINE_ITEMS) || !defined(EXP_POLY)
#error "attention_common.cl: the plan's #defines are missing"
#endif

#define GROUP (HEADS / KV_HEADS)
#define ROW_ITEMS (ITEMS / BLOCK_Q)
#if ROW_ITEMS * BLOCK_Q != ITEMS || GROUP * KV_HEADS != HEADS
#error "attention_common.cl: ITEMS must be a multiple of BLOCK_Q, HEADS of KV_HEADS"
#endif
/* Output dimensions per work-item. */
#define ROW_DIMS ((HEAD_DIM + ROW_ITEMS - 1) / ROW_ITEMS)
/* Floats from one row of q, keys or values to the next in local memory:
 * odd, so that work-items reading along different rows hit different
 * banks. */
#define ATTN_STRIDE (HEAD_DIM | 1)
#define ATTN_LOG2E 1.44269504088896341f
#define ATTN_LN2 0.693147180559945309f

/* The split path's scratch: per query row (b, i, h), in o's order, the
 * launch's splits records of ATTN_REC floats (whole 16-byte words): the row's
 * unnormalised outputs, then its max (base 2) and sum at HEAD_DIM and
 * HEAD_DIM + 1. */
#define ATTN_REC ((HEAD_DIM + 5) / 4 * 4)

/* Row (b, i, h) of o, in its order, for row R of a (batch B, kv head
 * HK)'s rows (attention_common.cl's order: i = R / GROUP, the head's
 * place in the group R % GROUP). */
inline size_t attn_row(int seq_q, long b, int hk, long r)
{
    return (size_t)(b * seq_q + r / GROUP) * HEADS + hk * GROUP +
           (int)(r % GROUP);
}

/* Which work of the split path this work-group does: its split (of
 * SPLITS, the launch's: the spec's `split`, or up to SPLIT_MOST where
 * the blocks are few) of block `block` of batch b's kv head hk; a block past the rows'
 * for a group past the work. In launch order the (batch, kv head)s of
 * one split of a block come together, so that the kv heads' tiles of
 * the same keys, which lie side by side in k and v, are read at about
 * the same time. Launch: dimension 0 SPLITS times the blocks (or more),
 * dimension 1 batch * KV_HEADS. */
struct attn_split_at {
    long block, b;
    int split, hk;
};

inline struct attn_split_at attn_split_group(int splits)
{
    const long heads = get_num_groups(1);
    const long order =
        get_group_id(0) + (long)get_num_groups(0) * get_group_id(1);
    struct attn_split_at at;
    at.block = order / heads / splits;
    at.split = (int)(order / heads % splits);
    at.b = order % heads / KV_HEADS;
    at.hk = (int)(order % heads % KV_HEADS);
    return at;
}

/* Blocks of rows of one (batch, kv head). */
inline long attn_blocks(int seq_q)
{
    return ((long)GROUP * seq_q + BLOCK_Q - 1) / BLOCK_Q;
}

/* Keys [*lo, *hi) of [from, to) that some row of the block of BLOCK
 * rows at row R0 sees: tiles outside are skipped. */
inline void attn_key_range(int seq_q, int seq_kv, long r0, long block,
                           long from, long to, long *lo, long *hi)
{
    long r_end = min(r0 + block, (long)GROUP * seq_q);
    long off = (long)seq_kv - seq_q;
    long pos_lo = r0 / GROUP + off, pos_hi = (r_end - 1) / GROUP + off;
    (void)pos_lo;
    (void)pos_hi;
#if CAUSAL
    to = min(to, pos_hi + 1);
#endif
#if WINDOW > 0
    from = max(from, pos_lo - WINDOW + 1);
#endif
    *lo = from;
    *hi = to;
}

/* Tile [j0, j0 + nk) of batch B's kv head HK of SRC (k or v) into DST,
 * zeros past nk. */
inline void attn_load_tile(const __global storage_t *src, __local float *dst,
                           long b, int hk, long j0, int nk, int seq_kv,
                           int lid)
{
    for (int e = lid; e < BLOCK_K * HEAD_DIM; e += ITEMS) {
        int jj = e / HEAD_DIM, d = e % HEAD_DIM;
        size_t at = ((size_t)(b * seq_kv + j0 + jj) * KV_HEADS + hk) *
                        HEAD_DIM + d;
        dst[jj * ATTN_STRIDE + d] = jj < nk ? load1(src, at) : 0.0f;
    }
}

/* Block q of batch B's kv head HK at row R0, scaled by Q_MUL, into QS
 * (zeros for rows past the end). */
inline void attn_load_q(const __global storage_t *q, __local float *qs,
                        int seq_q, long b, int hk, long r0, int lid)
{
    long rows = (long)GROUP * seq_q;
    for (int e = lid; e < BLOCK_Q * HEAD_DIM; e += ITEMS) {
        long r = r0 + e / HEAD_DIM;
        int d = e % HEAD_DIM;
        float x = 0.0f;
        if (r < rows) {
            int h = hk * GROUP + (int)(r % GROUP);
            x = load1(q, ((size_t)(b * seq_q + r / GROUP) * HEADS + h) *
                             HEAD_DIM + d) * Q_MUL;
        }
        qs[(e / HEAD_DIM) * ATTN_STRIDE + d] = x;
    }
}

/* Whether the query at position POS sees key J. */
inline bool attn_sees(long pos, long j)
{
    bool see = true;
    (void)pos;
    (void)j;
#if CAUSAL
    see = see && j <= pos;
#endif
#if WINDOW > 0
    see = see && pos - j < WINDOW;
#endif
    return see;
}

/* This work-item's scores of the tile at J0 (NK keys) into SS: -INFINITY
 * for keys its row does not see. */
inline void attn_scores(__local const float *qs, __local const float *kvs,
                        __local float *ss, int rl, int c, int valid,
                        long pos, long j0, int nk)
{
    __local const float *qr = qs + rl * ATTN_STRIDE;
    for (int jj = c; jj < BLOCK_K; jj += ROW_ITEMS) {
        __local const float *kr = kvs + jj * ATTN_STRIDE;
        /* Four sums apart: four chains of multiply-adds, not one. */
        float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
        int d = 0;
        for (; d + 4 <= HEAD_DIM; d += 4) {
            d0 += qr[d] * kr[d];
            d1 += qr[d + 1] * kr[d + 1];
            d2 += qr[d + 2] * kr[d + 2];
            d3 += qr[d + 3] * kr[d + 3];
        }
        for (; d < HEAD_DIM; d++) {
            d0 += qr[d] * kr[d];
        }
        float dot = (d0 + d1) + (d2 + d3);
#if CAPPED
        float slope;
        dot = SOFTCAP * attn_tanh(dot * INV_SOFTCAP, &slope) * ATTN_LOG2E;
#endif
        int see = valid && jj < nk && attn_sees(pos, j0 + jj);
        ss[rl * BLOCK_K + jj] = see ? dot : -INFINITY;
    }
}

/* A row's sum L and outputs ACC, rescaled by ALPHA, plus the tile's
 * probabilities P (NK of them) and values in KVS. */
inline void attn_accumulate(__local const float *p, __local const float *kvs,
                            int c, int nk, float alpha, float *l, float *acc)
{
    float sum = 0.0f;
    for (int jj = 0; jj < nk; jj++) {
        sum += p[jj];
    }
    *l = *l * alpha + sum;
    for (int t = 0; t < ROW_DIMS; t++) {
        acc[t] *= alpha;
    }
    /* Keys outer, dimensions inner: ROW_DIMS chains of multiply-adds,
     * along a row of values. */
    for (int jj = 0; jj < nk; jj++) {
        __local const float *vr = kvs + jj * ATTN_STRIDE + c;
        for (int t = 0; t < ROW_DIMS; t++) {
            if (c + t * ROW_ITEMS < HEAD_DIM) {
                acc[t] += p[jj] * vr[t * ROW_ITEMS];
            }
        }
    }
}

/* Attends the block at row R0 of batch B's kv head HK over the keys of
 * [from, to) its rows see; leaves in *M, *L and ACC this work-item's
 * row's max (base 2), sum and unnormalised outputs (its ROW_DIMS
 * dimensions). Every work-item of the group calls it (barriers). */
void attn_block(const __global storage_t *q, const __global storage_t *k,
                const __global storage_t *v, int seq_q, int seq_kv, long b,
                int hk, long r0, long from, long to, __local float *qs,
                __local float *kvs, __local float *ss, __local float *ps,
                float *m_out, float *l_out, float *acc)
{
    const int lid = get_local_id(0);
    const int rl = lid / ROW_ITEMS, c = lid % ROW_ITEMS;
    const long r = r0 + rl;
    const int valid = r < (long)GROUP * seq_q;
    const long pos = r / GROUP + seq_kv - seq_q;
    float m = -INFINITY, l = 0.0f;
    long lo, hi;
    for (int t = 0; t < ROW_DIMS; t++) {
        acc[t] = 0.0f;
    }
    attn_load_q(q, qs, seq_q, b, hk, r0, lid);
    attn_key_range(seq_q, seq_kv, r0, BLOCK_Q, from, to, &lo, &hi);
    for (long j0 = lo; j0 < hi; j0 += BLOCK_K) {
        int nk = (int)min((long)BLOCK_K, hi - j0);
        barrier(CLK_LOCAL_MEM_FENCE);
        attn_load_tile(k, kvs, b, hk, j0, nk, seq_kv, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Rows past the end (a decode block's, mostly) compute nothing. */
        if (valid) {
            attn_scores(qs, kvs, ss, rl, c, valid, pos, j0, nk);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        attn_load_tile(v, kvs, b, hk, j0, nk, seq_kv, lid);
        float mt = m, alpha = 1.0f;
        if (valid) {
            for (int jj = 0; jj < BLOCK_K; jj++) {
                mt = fmax(mt, ss[rl * BLOCK_K + jj]);
            }
            /* No key seen yet: exponentials against 0 (all of them 0). */
            float base = mt == -INFINITY ? 0.0f : mt;
            for (int jj = c; jj < BLOCK_K; jj += ROW_ITEMS) {
                ps[rl * BLOCK_K + jj] = attn_exp2(ss[rl * BLOCK_K + jj] - base);
            }
            alpha = attn_exp2(m - base);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (valid) {
            attn_accumulate(ps + rl * BLOCK_K, kvs, c, nk, alpha, &l, acc);
            m = mt;
        }
    }
    *m_out = m;
    *l_out = l;
}

/* lse of a row from its max M (base 2) and sum L. */
inline float attn_lse(float m, float l)
{
    return l > 0.0f ? (m + log2(l)) * ATTN_LN2 : -INFINITY;
}
