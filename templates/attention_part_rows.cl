/* attention_part_rows.cl - the split path's first launch on CPUs: a
 * work-item per query position, split and APR_KV kv heads of a batch,
 * the query heads of those kv heads all in its hands, reading the keys
 * and values of its chunk straight from k and v (their APR_KV heads lie
 * side by side there: one stretch a key). No local memory and no
 * barriers: on a CPU a work-group's items run one after the other
 * between barriers, and the staging that feeds a GPU's work-items costs
 * more there than the keys' arithmetic. One position sees a range of
 * keys whole (causal, window), so a chunk needs no mask, only its ends.
 * Records as attention_part.cl's, for attention_combine.
 *
 * Scratch: attention_common.cl (ATTN_REC). A chunk past the keys writes
 * m = -INFINITY, l = 0 and zeros.
 * Launch: local (1, 1); groups: dimension 0 slices * seq_q (split
 * fastest), dimension 1 batch * KV_HEADS / APR_KV. */
#include "attention_common.cl"

#if !defined(APR_KV) || KV_HEADS % APR_KV != 0
#error "attention_part_rows.cl: APR_KV, a divisor of KV_HEADS"
#endif

/* The query rows of a work-item. */
#define APR_ROWS (APR_KV * GROUP)
/* Whether a row's dimensions go 8 at a time (load8: element indices
 * multiples of 8). */
#define APR_V8 (HEAD_DIM % 8 == 0)

/* S[jj] = Q (HEAD_DIM floats) . key jj of the tile of NK keys at element
 * AT of K (keys STEP elements apart), jj < BLOCK_K: the keys' sums side
 * by side, BLOCK_K chains of multiply-adds rather than one; keys past NK
 * repeat the last. */
inline void apr_scores(const float *q, const __global storage_t *k,
                       size_t at, size_t step, int nk, float *s)
{
#if APR_V8
    float8 sum[BLOCK_K];
    const __global storage_t *key[BLOCK_K];
#pragma unroll
    for (int jj = 0; jj < BLOCK_K; jj++) {
        sum[jj] = 0.0f;
        key[jj] = k + at + min(jj, nk - 1) * step;
    }
    for (int d = 0; d < HEAD_DIM; d += 8) {
        const float8 q8 = vload8(0, q + d);
#pragma unroll
        for (int jj = 0; jj < BLOCK_K; jj++) {
            sum[jj] = fma(q8, load8(key[jj], d), sum[jj]);
        }
    }
#pragma unroll
    for (int jj = 0; jj < BLOCK_K; jj++) {
        const float4 s4 = sum[jj].lo + sum[jj].hi;
        s[jj] = (s4.x + s4.y) + (s4.z + s4.w);
    }
#else
    for (int jj = 0; jj < BLOCK_K; jj++) {
        s[jj] = 0.0f;
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        for (int jj = 0; jj < BLOCK_K; jj++) {
            s[jj] += q[d] * load1(k, at + min(jj, nk - 1) * step + d);
        }
    }
#endif
}

/* ACC (HEAD_DIM floats) = ALPHA ACC + the NK values of the tile at
 * element AT of V (STEP elements apart), weighted by P. */
inline void apr_accumulate(float *acc, float alpha, const float *p,
                           const __global storage_t *v, size_t at,
                           size_t step, int nk)
{
#if APR_V8
    const __global storage_t *val = v + at;
    for (int d = 0; d < HEAD_DIM; d += 8) {
        float8 a = vload8(0, acc + d) * alpha;
        for (int jj = 0; jj < nk; jj++) {
            a = fma(p[jj], load8(val + jj * step, d), a);
        }
        vstore8(a, 0, acc + d);
    }
#else
    for (int d = 0; d < HEAD_DIM; d++) {
        float a = acc[d] * alpha;
        for (int jj = 0; jj < nk; jj++) {
            a += p[jj] * load1(v, at + jj * step + d);
        }
        acc[d] = a;
    }
#endif
}

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void attention_part_rows(const int slices, const int seq_q, const int seq_kv,
                         const __global storage_t *q,
                         const __global storage_t *k,
                         const __global storage_t *v,
                         __global float *scratch)
{
    const int split = (int)(get_group_id(0) % slices);
    const long i = get_group_id(0) / slices;
    if (i >= seq_q) {
        return;
    }
    const long b = get_group_id(1) / (KV_HEADS / APR_KV);
    const int hk0 = (int)(get_group_id(1) % (KV_HEADS / APR_KV)) * APR_KV;
    /* The chunk's keys this position (rows i * GROUP on) sees. */
    const long chunk = ((long)seq_kv + slices - 1) / slices;
    const long from = split * chunk;
    long lo, hi;
    attn_key_range(seq_q, seq_kv, i * GROUP, GROUP, from,
                   min(from + chunk, (long)seq_kv), &lo, &hi);
    /* Rows r = the query heads hk0 * GROUP + r, side by side in q. */
    const size_t row0 =
        ((size_t)(b * seq_q + i) * HEADS + hk0 * GROUP) * HEAD_DIM;
    float qr[APR_ROWS][HEAD_DIM], acc[APR_ROWS][HEAD_DIM];
    float m[APR_ROWS], l[APR_ROWS];
    for (int r = 0; r < APR_ROWS; r++) {
        for (int d = 0; d < HEAD_DIM; d++) {
            qr[r][d] = load1(q, row0 + r * HEAD_DIM + d) * Q_MUL;
            acc[r][d] = 0.0f;
        }
        m[r] = -INFINITY;
        l[r] = 0.0f;
    }
    const size_t step = (size_t)KV_HEADS * HEAD_DIM;
    for (long j0 = lo; j0 < hi; j0 += BLOCK_K) {
        const int nk = (int)min((long)BLOCK_K, hi - j0);
        const size_t at0 =
            ((size_t)(b * seq_kv + j0) * KV_HEADS + hk0) * HEAD_DIM;
        for (int r = 0; r < APR_ROWS; r++) {
            const size_t at = at0 + (size_t)(r / GROUP) * HEAD_DIM;
            float s[BLOCK_K], p[BLOCK_K];
            apr_scores(qr[r], k, at, step, nk, s);
            float mt = m[r];
            for (int jj = 0; jj < nk; jj++) {
#if CAPPED
                float slope;
                s[jj] = SOFTCAP * attn_tanh(s[jj] * INV_SOFTCAP, &slope) *
                        ATTN_LOG2E;
#endif
                mt = fmax(mt, s[jj]);
            }
            if (mt == -INFINITY) {
                continue; /* scores of -inf only (infinite inputs) */
            }
            float sum = 0.0f;
            for (int jj = 0; jj < nk; jj++) {
                p[jj] = attn_exp2(s[jj] - mt);
                sum += p[jj];
            }
            const float alpha = attn_exp2(m[r] - mt);
            l[r] = l[r] * alpha + sum;
            apr_accumulate(acc[r], alpha, p, v, at, step, nk);
            m[r] = mt;
        }
    }
    for (int r = 0; r < APR_ROWS; r++) {
        const size_t row = (size_t)(b * seq_q + i) * HEADS + hk0 * GROUP + r;
        __global float *rec = scratch + (row * slices + split) * ATTN_REC;
        for (int d = 0; d < HEAD_DIM; d++) {
            rec[d] = acc[r][d];
        }
        rec[HEAD_DIM] = m[r];
        rec[HEAD_DIM + 1] = l[r];
    }
}
