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
 * Q K^T do. Rows of local memory are MMA_LD elements, 16 bytes past the
 * padded head, so that the 8 rows an ldmatrix phase reads fall in 8
 * distinct bank groups.
 *
 * The block's rows (BQ, a multiple of 16) and its work-items (2 * BQ) are
 * arguments the kernels pass as constants. */
#include "attention_common.cl"
#include "mma_ptx.cl"

#if !defined(MMA_K) || HEAD_DIM % 8 != 0 || MMA_K % 16 != 0
#error "attention_mma_common.cl: MMA_K a multiple of 16, HEAD_DIM of 8"
#endif

#define MMA_DP ((HEAD_DIM + 15) / 16 * 16)     /* head padded to k16 steps */
#define MMA_LD (MMA_DP + 8)                    /* elements a row, local */
#define MMA_CHUNKS (HEAD_DIM / 8)              /* 16-byte chunks a row */
#define MMA_KT (MMA_DP / 16)                   /* k16 steps of Q K^T */
#define MMA_NT (MMA_K / 8)                     /* n8 tiles of keys */
#define MMA_DT (MMA_DP / 8)                    /* n8 tiles of the output */

#ifdef DTYPE_F16
#define MMA_CVT2 "cvt.rn.f16x2.f32 %0, %1, %2;"
#else
#define MMA_CVT2 "cvt.rn.bf16x2.f32 %0, %1, %2;"
#endif

/* LO and HI rounded to the storage type, LO in the low half. */
inline uint am_pack(float lo, float hi)
{
    uint r;
    asm("" MMA_CVT2 : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

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

/* Starts the copies of keys (or values) [j0, j0 + nk) of batch B's kv
 * head HK into DST, zeros past nk and past the head. */
inline void am_load_kv(__local ushort *dst, const __global storage_t *src,
                       long b, int hk, long j0, int nk, int seq_kv,
                       uint tid, const uint items)
{
    const __global storage_t *at =
        src + ((size_t)(b * seq_kv + j0) * KV_HEADS + hk) * HEAD_DIM;
    for (uint i = tid; i < MMA_K * (MMA_DP / 8); i += items) {
        uint jj = i / (MMA_DP / 8), c = i % (MMA_DP / 8);
        uint ok = jj < (uint)nk && c < MMA_CHUNKS;
        mma_copy16(dst + jj * MMA_LD + c * 8,
                   ok ? at + (size_t)jj * KV_HEADS * HEAD_DIM + c * 8 : src,
                   ok ? 16 : 0);
    }
    mma_commit();
}

/* Starts the copies of the block's query rows from R0 into DST, zeros
 * past the rows and past the head. */
inline void am_load_q(__local ushort *dst, const __global storage_t *q,
                      int seq_q, long b, int hk, long r0, uint tid,
                      const uint bq)
{
    const long rows = (long)GROUP * seq_q;
    for (uint i = tid; i < bq * (MMA_DP / 8); i += 2 * bq) {
        uint rr = i / (MMA_DP / 8), c = i % (MMA_DP / 8);
        long r = r0 + rr;
        uint ok = r < rows && c < MMA_CHUNKS;
        size_t at = ((size_t)(b * seq_q + r / GROUP) * HEADS + hk * GROUP +
                     (int)(r % GROUP)) * HEAD_DIM + c * 8;
        mma_copy16(dst + rr * MMA_LD + c * 8, ok ? q + at : q, ok ? 16 : 0);
    }
    mma_commit();
}

/* The scores of a tile: S = Q K^T for the warp's 16 rows and the tile's
 * MMA_K keys from KS. */
inline void am_scores(__local ushort *ks, const uint qa[MMA_KT][4],
                      uint lane, float s[MMA_NT][4])
{
    /* K's rows are the product's columns (n-major: mma_x4): lane l gives
     * key (l % 8) + (l / 16) * 8 of a pair of n8 tiles, chunk (l / 8) % 2
     * of the 16-deep step. */
    const uint bn = (lane % 8) + (lane >> 4) * 8, bc = (lane >> 3) & 1;
#pragma unroll
    for (int n = 0; n < MMA_NT; n++) {
        s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
    }
#pragma unroll
    for (int kk = 0; kk < MMA_KT; kk++) {
#pragma unroll
        for (int j = 0; j < MMA_NT / 2; j++) {
            uint b0, b1, b2, b3;
            mma_x4(ks + (j * 16 + bn) * MMA_LD + kk * 16 + bc * 8, &b0, &b1,
                   &b2, &b3);
            mma_product(s[2 * j], qa[kk], b0, b1);
            mma_product(s[2 * j + 1], qa[kk], b2, b3);
        }
    }
}

/* Scores to base 2 (the softcap's tanh where capped), -INFINITY for the
 * keys a row does not see: key j0 + 8n + 2t + e of rows ROW and ROW + 8
 * (positions POS0 and POS1); MASK 0 where the tile is visible whole. */
inline void am_scale_mask(float s[MMA_NT][4], int mask, long j0, uint t,
                          long pos0, long pos1, long hi, int valid0,
                          int valid1)
{
#pragma unroll
    for (int n = 0; n < MMA_NT; n++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float x = s[n][e] * Q_MUL;
#if CAPPED
            x = SOFTCAP * tanh(x * INV_SOFTCAP) * ATTN_LOG2E;
#endif
            if (mask) {
                long j = j0 + 8 * n + 2 * t + (e & 1);
                long pos = e < 2 ? pos0 : pos1;
                int see = (e < 2 ? valid0 : valid1) && j < hi;
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

/* O += P V for the tile's values in VS; P, the probabilities of S's
 * registers, rounded to the storage type: the C fragments of two n8
 * tiles of keys are the A fragment of their k16 step. */
inline void am_accumulate(__local ushort *vs, const float p[MMA_NT][4],
                          uint lane, float o[MMA_DT][4])
{
    /* V is k-major (a row per key): ldmatrix .trans, lane l gives key
     * (l % 8) + ((l / 8) % 2) * 8 of the step, chunk l / 16 of a pair of
     * n8 tiles of the head. */
    const uint row = (lane % 8) + ((lane >> 3) & 1) * 8, chunk = lane >> 4;
#pragma unroll
    for (int kk = 0; kk < MMA_K / 16; kk++) {
        uint a[4];
        a[0] = am_pack(p[2 * kk][0], p[2 * kk][1]);
        a[1] = am_pack(p[2 * kk][2], p[2 * kk][3]);
        a[2] = am_pack(p[2 * kk + 1][0], p[2 * kk + 1][1]);
        a[3] = am_pack(p[2 * kk + 1][2], p[2 * kk + 1][3]);
#pragma unroll
        for (int j = 0; j < MMA_DT / 2; j++) {
            uint b0, b1, b2, b3;
            mma_trans_x4(vs + (kk * 16 + row) * MMA_LD + j * 16 + chunk * 8,
                         &b0, &b1, &b2, &b3);
            mma_product(o[2 * j], a, b0, b1);
            mma_product(o[2 * j + 1], a, b2, b3);
        }
    }
}

/* The online softmax of one tile for the thread's rows: new maxima M,
 * sums L (this thread's columns; the quad's summed at the end), O
 * rescaled, S turned into probabilities. */
inline void am_softmax(float s[MMA_NT][4], float m[2], float l[2],
                       float o[MMA_DT][4])
{
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int n = 0; n < MMA_NT; n++) {
        mx[0] = fmax(mx[0], fmax(s[n][0], s[n][1]));
        mx[1] = fmax(mx[1], fmax(s[n][2], s[n][3]));
    }
    float alpha[2], base[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        mx[h] = am_quad_max(mx[h]);
        /* No key seen yet: exponentials against 0 (all of them 0). */
        base[h] = mx[h] == -INFINITY ? 0.0f : mx[h];
        alpha[h] = native_exp2(m[h] - base[h]);
        m[h] = mx[h];
        l[h] *= alpha[h];
    }
#pragma unroll
    for (int n = 0; n < MMA_NT; n++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            s[n][e] = native_exp2(s[n][e] - base[e / 2]);
            l[e / 2] += s[n][e];
        }
    }
#pragma unroll
    for (int d = 0; d < MMA_DT; d++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            o[d][e] *= alpha[e / 2];
        }
    }
}

/* Local memory of a block of BQ rows: the K and V tiles, the block's Q
 * rows staged over them first. */
#define MMA_KV_ROOM (MMA_K * MMA_LD)
#define MMA_ROOM(bq) ((bq) > 2 * MMA_K ? (bq) * MMA_LD : 2 * MMA_KV_ROOM)

/* Attends the block of BQ rows at row R0 of batch B's kv head HK over
 * the keys of [from, to) its rows see; leaves for this thread's rows RA
 * and RA + 8 their max (base 2) M, sum L and unnormalised outputs ACC
 * (columns 8d + 2t, + 1 of each n8 tile d: t = lane % 4). Every
 * work-item of the group calls it (barriers). */
void am_block(const __global storage_t *q, const __global storage_t *k,
              const __global storage_t *v, int seq_q, int seq_kv, long b,
              int hk, long r0, long from, long to, __local ushort *room,
              const uint bq, float m[2], float l[2], float acc[MMA_DT][4],
              long *ra_out)
{
    __local ushort *ks = room, *vs = room + MMA_KV_ROOM;
    const long rows = (long)GROUP * seq_q;
    const uint items = 2 * bq;
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const uint g = lane / 4, t = lane % 4;
    const long off = (long)seq_kv - seq_q;

    uint qa[MMA_KT][4];
    am_load_q(room, q, seq_q, b, hk, r0, tid, bq);
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    barrier(CLK_LOCAL_MEM_FENCE);
    {
        /* A fragments, row-major: lane l gives row (l % 8) +
         * ((l / 8) % 2) * 8, chunk l / 16 of each k16 step */
        uint row = warp * 16 + (lane % 8) + ((lane >> 3) & 1) * 8;
        __local ushort *p = room + row * MMA_LD + (lane >> 4) * 8;
#pragma unroll
        for (int kk = 0; kk < MMA_KT; kk++) {
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                         "{%0,%1,%2,%3}, [%4];"
                         : "=r"(qa[kk][0]), "=r"(qa[kk][1]), "=r"(qa[kk][2]),
                           "=r"(qa[kk][3])
                         : "l"(p + kk * 16));
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* The keys some row of the block sees; positions of its first and
     * last rows, and of this thread's two. */
    long lo, hi;
    attn_key_range(seq_q, seq_kv, r0, bq, from, to, &lo, &hi);
    const long r_end = min(r0 + (long)bq, rows);
    const long pos_lo = r0 / GROUP + off, pos_hi = (r_end - 1) / GROUP + off;
    const long ra = r0 + warp * 16 + g, rb = ra + 8;
    const long pos0 = ra / GROUP + off, pos1 = rb / GROUP + off;
    const int valid0 = ra < rows, valid1 = rb < rows;
    (void)pos_lo;
    (void)pos_hi;
    *ra_out = ra;

    m[0] = m[1] = -INFINITY;
    l[0] = l[1] = 0.0f;
#pragma unroll
    for (int d = 0; d < MMA_DT; d++) {
        acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
    }
    if (lo < hi) {
        int nk = (int)min((long)MMA_K, hi - lo);
        am_load_kv(ks, k, b, hk, lo, nk, seq_kv, tid, items);
        am_load_kv(vs, v, b, hk, lo, nk, seq_kv, tid, items);
    }
    for (long j0 = lo; j0 < hi; j0 += MMA_K) {
        const long j1 = j0 + MMA_K;
        const int nk1 = (int)min((long)MMA_K, hi - j1);
        /* Whether some key of the tile is hidden from some row of the
         * block: past the range, after a row (causal), before its
         * window. */
        int mask = j1 > hi;
#if CAUSAL
        mask |= j1 - 1 > pos_lo;
#endif
#if WINDOW > 0
        mask |= pos_hi - j0 >= WINDOW;
#endif
        float s[MMA_NT][4];
        /* K's copy done (V's may still run) */
        asm volatile("cp.async.wait_group 1;" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        am_scores(ks, qa, lane, s);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (j1 < hi) {
            am_load_kv(ks, k, b, hk, j1, nk1, seq_kv, tid, items);
        }
        am_scale_mask(s, mask, j0, t, pos0, pos1, hi, valid0, valid1);
        am_softmax(s, m, l, acc);
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
            am_load_kv(vs, v, b, hk, j1, nk1, seq_kv, tid, items);
        }
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        l[h] = am_quad_sum(l[h]);
    }
}
