/* attention_mma_common.cl - attention on tensor cores (f16, bf16), what
 * attention_mma (prefill) and attention_mma_part (the split path) share:
 * a work-group attends a block of query rows of one (batch, kv head),
 * rows ordered as attention_common.cl orders them, a warp per 16 of them,
 * over a range of keys.
 *
 * Per tile of MMA_K keys, FlashAttention-2 style: S = Q K^T on m16n8k16
 * products (each warp's Q fragments held in registers for the whole
 * walk), the online softmax on S where the products leave it (a thread
 * holds two rows' scores: rows g and g + 8 of its warp's 16, g = lane / 4,
 * the row's other scores in the three lanes beside it), then O += P V with
 * P rounded to the storage type straight from those registers. K and V
 * tiles go to local memory by cp.async, each copy started a step ahead:
 * the next K while the products of P V run, the next V while those of
 * Q K^T do (the copies and products: attention_mma_tiles.cl).
 *
 * The block's rows (BQ, a multiple of 16) and its work-items (2 * BQ) are
 * arguments the kernels pass as constants. */
#include "attention_common.cl"

#if !defined(MMA_K) || MMA_K % 16 != 0
#error "attention_mma_common.cl: MMA_K a multiple of 16"
#endif

#define MMA_NT (MMA_K / 8)                     /* n8 tiles of keys */
#include "attention_mma_tiles.cl"

inline float am_quad_max(float v)
{
    float o;
    asm volatile("shfl.sync.bfly.b32 %0, %1, 1, 0x1f, 0xffffffff;"
                 : "=f"(o) : "f"(v));
    v = fmax(v, o);
    asm volatile("shfl.sync.bfly.b32 %0, %1, 2, 0x1f, 0xffffffff;"
                 : "=f"(o) : "f"(v));
    return fmax(v, o);
}

inline float am_quad_sum(float v)
{
    float o;
    asm volatile("shfl.sync.bfly.b32 %0, %1, 1, 0x1f, 0xffffffff;"
                 : "=f"(o) : "f"(v));
    v += o;
    asm volatile("shfl.sync.bfly.b32 %0, %1, 2, 0x1f, 0xffffffff;"
                 : "=f"(o) : "f"(v));
    return v + o;
}

/* What a thread walks the keys of a block of BQ rows at row R0 with: the
 * keys some row of the block sees, [lo, hi); the positions of its first
 * and last rows; those of the thread's two rows (ra = r0 + 16 warp + g
 * and ra + 8) and whether each is a row at all. */
struct am_walk {
    long lo, hi, pos_lo, pos_hi, pos0, pos1;
    int valid0, valid1;
};

/* The walk of the thread whose first row is RA over the keys of [FROM,
 * TO); M, L and ACC (the online softmax's maxima, sums and outputs) set
 * for a row that has seen nothing. */
inline struct am_walk am_walk_start(int seq_q, int seq_kv, long r0, uint bq,
                                    long from, long to, long ra, float m[2],
                                    float l[2], float acc[MMA_DT][4])
{
    struct am_walk w;
    const long rows = (long)GROUP * seq_q, off = (long)seq_kv - seq_q;
    attn_key_range(seq_q, seq_kv, r0, bq, from, to, &w.lo, &w.hi);
    const long r_end = min(r0 + (long)bq, rows);
    w.pos_lo = r0 / GROUP + off;
    w.pos_hi = (r_end - 1) / GROUP + off;
    w.pos0 = ra / GROUP + off;
    w.pos1 = (ra + 8) / GROUP + off;
    w.valid0 = ra < rows;
    w.valid1 = ra + 8 < rows;
    m[0] = m[1] = -INFINITY;
    l[0] = l[1] = 0.0f;
#pragma unroll
    for (int d = 0; d < MMA_DT; d++) {
        acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
    }
    return w;
}

/* Scores of NT n8 tiles of keys from J0 (NT a constant at every call) to
 * base 2 (the softcap's tanh where capped), -INFINITY for the keys a row
 * does not see: key j0 + 8n + 2t + e of the thread's rows (W). Masked
 * only where some key of the tile is hidden from some row of the block:
 * past the range, after a row (causal), before its window. */
inline void am_scale_mask(float s[][4], const int nt,
                          const struct am_walk *w, long j0, uint t)
{
    const long j1 = j0 + 8 * nt;
    int mask = j1 > w->hi;
#if CAUSAL
    mask |= j1 - 1 > w->pos_lo;
#endif
#if WINDOW > 0
    mask |= w->pos_hi - j0 >= WINDOW;
#endif
#pragma unroll
    for (int n = 0; n < nt; n++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float x = s[n][e] * Q_MUL;
#if CAPPED
            float slope;
            x = SOFTCAP * attn_tanh(x * INV_SOFTCAP, &slope) * ATTN_LOG2E;
#endif
            if (mask) {
                long j = j0 + 8 * n + 2 * t + (e & 1);
                long pos = e < 2 ? w->pos0 : w->pos1;
                int see = (e < 2 ? w->valid0 : w->valid1) && j < w->hi;
                (void)pos;
#if CAUSAL
                see = see && j <= pos;
#endif
#if WINDOW > 0
                see = see && pos - j < WINDOW;
#endif
                x = see ? x : -INFINITY;
            }
            s[n][e] = x;
        }
    }
}

/* The online softmax of one tile of NT n8 tiles of keys (a constant at
 * every call) for the thread's rows: new maxima M, sums L (this thread's
 * columns; the quad's summed at the end), S turned into probabilities,
 * ALPHA what the outputs so far are to be scaled by. */
inline void am_probabilities(float s[][4], const int nt, float m[2],
                             float l[2], float alpha[2])
{
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int n = 0; n < nt; n++) {
        mx[0] = fmax(mx[0], fmax(s[n][0], s[n][1]));
        mx[1] = fmax(mx[1], fmax(s[n][2], s[n][3]));
    }
    float base[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        mx[h] = am_quad_max(mx[h]);
        /* No key seen yet: exponentials against 0 (all of them 0). */
        base[h] = mx[h] == -INFINITY ? 0.0f : mx[h];
        alpha[h] = am_exp2(m[h] - base[h]);
        m[h] = mx[h];
        l[h] *= alpha[h];
    }
#pragma unroll
    for (int n = 0; n < nt; n++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            s[n][e] = am_exp2(s[n][e] - base[e / 2]);
            l[e / 2] += s[n][e];
        }
    }
}

/* O scaled by ALPHA, row by row (am_probabilities). */
inline void am_rescale(float o[MMA_DT][4], const float alpha[2])
{
#pragma unroll
    for (int d = 0; d < MMA_DT; d++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            o[d][e] *= alpha[e / 2];
        }
    }
}

/* The scores S of NT n8 tiles of keys from J0 (a constant at every
 * call) masked and scaled (am_scale_mask) and turned into probabilities
 * (am_probabilities). */
inline void am_tile_probabilities(float s[][4], const int nt,
                                  const struct am_walk *w, long j0, uint t,
                                  float m[2], float l[2], float alpha[2])
{
    am_scale_mask(s, nt, w, j0, t);
    am_probabilities(s, nt, m, l, alpha);
}

/* Local memory of a block of BQ rows: the K and V tiles, the block's Q
 * rows staged over them first (MMA_ROOM), or after them (MMA_ROOM_APART:
 * the split path, whose few tiles a work-group should not wait out Q's
 * copy before the first K and V copies start). */
#define MMA_KV_ROOM (MMA_K * MMA_LD)
#define MMA_ROOM(bq) ((bq) > 2 * MMA_K ? (bq) * MMA_LD : 2 * MMA_KV_ROOM)
#define MMA_ROOM_APART(bq) (2 * MMA_KV_ROOM + (bq) * MMA_LD)

/* Attends the block of BQ rows at row R0 of batch B's kv head HK over
 * the keys of [from, to) its rows see; leaves for this thread's rows RA
 * and RA + 8 their max (base 2) M, sum L and unnormalised outputs ACC
 * (columns 8d + 2t, + 1 of each n8 tile d: t = lane % 4). ROOM holds
 * MMA_ROOM(BQ), or with Q_APART (a constant at every call)
 * MMA_ROOM_APART(BQ), and then the first K and V copies start with Q's.
 * Every work-item of the group calls it (barriers). */
void am_block(const __global storage_t *q, const __global storage_t *k,
              const __global storage_t *v, int seq_q, int seq_kv, long b,
              int hk, long r0, long from, long to, __local ushort *room,
              const uint bq, const int q_apart, float m[2], float l[2],
              float acc[MMA_DT][4], long *ra_out)
{
    __local ushort *ks = room, *vs = room + MMA_KV_ROOM;
    __local ushort *qs = q_apart ? room + 2 * MMA_KV_ROOM : room;
    const uint items = 2 * bq;
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const uint g = lane / 4, t = lane % 4;

    const long ra = r0 + warp * 16 + g;
    const struct am_walk w = am_walk_start(seq_q, seq_kv, r0, bq, from, to,
                                           ra, m, l, acc);
    const long lo = w.lo, hi = w.hi;
    const int nk = (int)min((long)MMA_K, hi - lo);
    *ra_out = ra;

    uint qa[MMA_KT][4];
    am_load_q(qs, q, seq_q, b, hk, r0, tid, items, bq);
    if (q_apart && lo < hi) {
        am_load_kv(ks, k, b, hk, lo, nk, seq_kv, tid, items, MMA_K);
        am_load_kv(vs, v, b, hk, lo, nk, seq_kv, tid, items, MMA_K);
        asm volatile("cp.async.wait_group 2;" ::: "memory");
    } else {
        asm volatile("cp.async.wait_group 0;" ::: "memory");
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    am_afrags(qs, lane, warp, qa);
    if (!q_apart) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lo < hi) {
            am_load_kv(ks, k, b, hk, lo, nk, seq_kv, tid, items, MMA_K);
            am_load_kv(vs, v, b, hk, lo, nk, seq_kv, tid, items, MMA_K);
        }
    }
    for (long j0 = lo; j0 < hi; j0 += MMA_K) {
        const long j1 = j0 + MMA_K;
        const int nk1 = (int)min((long)MMA_K, hi - j1);
        float s[MMA_NT][4];
        /* K's copy done (V's may still run) */
        asm volatile("cp.async.wait_group 1;" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        am_scores(ks, qa, lane, s);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (j1 < hi) {
            am_load_kv(ks, k, b, hk, j1, nk1, seq_kv, tid, items, MMA_K);
        }
        float alpha[2];
        am_tile_probabilities(s, MMA_NT, &w, j0, t, m, l, alpha);
        am_rescale(acc, alpha);
        /* V's copy done (the next K's may still run) */
        if (j1 < hi) {
            asm volatile("cp.async.wait_group 1;" ::: "memory");
        } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        am_accumulate(vs, s, lane, acc);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (j1 < hi) {
            am_load_kv(vs, v, b, hk, j1, nk1, seq_kv, tid, items, MMA_K);
        }
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        l[h] = am_quad_sum(l[h]);
    }
}

/* Writes this thread's two rows RA and RA + 8 (of batch B's kv head HK)
 * as am_block left them: o normalised by the sum L (0 for a row that saw
 * no key), and by the quad's first thread, lse. */
inline void am_store(__global storage_t *o, __global float *lse, int seq_q,
                     long b, int hk, long ra, const float m[2],
                     const float l[2], const float acc[MMA_DT][4])
{
    const long rows = (long)GROUP * seq_q;
    const uint t = get_local_id(0) % 4;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const long r = ra + 8 * h;
        if (r >= rows) {
            continue;
        }
        const long i = r / GROUP;
        const int head = hk * GROUP + (int)(r % GROUP);
        const size_t at = ((size_t)(b * seq_q + i) * HEADS + head) * HEAD_DIM;
        const float inv = l[h] > 0.0f ? 1.0f / l[h] : 0.0f;
#pragma unroll
        for (int d = 0; d < MMA_DT; d++) {
            const int col = 8 * d + 2 * t;
            if (col < HEAD_DIM) {
                store1(o, at + col, acc[d][2 * h] * inv);
                store1(o, at + col + 1, acc[d][2 * h + 1] * inv);
            }
        }
        if (t == 0 && lse != 0) {
            lse[((size_t)b * HEADS + head) * seq_q + i] = attn_lse(m[h], l[h]);
        }
    }
}
