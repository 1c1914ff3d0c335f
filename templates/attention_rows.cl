/* attention_rows.cl - the prefill path on CPUs: a work-item per ROWS_Q
 * query positions of one query head, over every key they see, read
 * straight from k and v; writes o and lse. No local memory and no
 * barriers (on a CPU a work-group's items run one after the other
 * between barriers); the rows' scores of each key tile come from one
 * load of each key and their outputs from one load of each value, so a
 * tile's loads serve ROWS_Q x BLOCK_K multiply-adds of 8 lanes.
 *
 * Launch: local (1, 1); groups: dimension 0 at least ceil(seq_q /
 * ROWS_Q) (the rest return), dimension 1 batch * HEADS. */
#include "attention_common.cl"

#if !defined(ROWS_Q) || ROWS_Q < 1
#error "attention_rows.cl: ROWS_Q, the query positions of a work-item"
#endif

#include "attention_dots.cl"
#if ROWS_Q > DOTS_N || DOTS_T != BLOCK_K
#error "attention_rows.cl: ROWS_Q rows at most DOTS_N, tiles of BLOCK_K"
#endif

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void attention_rows(const int seq_q, const int seq_kv,
                    const __global storage_t *q, const __global storage_t *k,
                    const __global storage_t *v, __global storage_t *o,
                    __global float *lse)
{
    const long i0 = (long)get_group_id(0) * ROWS_Q;
    if (i0 >= seq_q) {
        return;
    }
    const long b = get_group_id(1) / HEADS;
    const int h = (int)(get_group_id(1) % HEADS);
    const int hk = h / GROUP;
    const int nr = (int)min((long)ROWS_Q, (long)seq_q - i0);
    /* Position of row r: i0 + r + off; rows past nr see nothing. */
    const long off = (long)seq_kv - seq_q;
    float qr[ROWS_Q][HEAD_DIM], acc[ROWS_Q][HEAD_DIM];
    float m[ROWS_Q], l[ROWS_Q];
    for (int r = 0; r < ROWS_Q; r++) {
        const size_t row = ((size_t)(b * seq_q + i0 + min(r, nr - 1)) *
                                HEADS + h) * HEAD_DIM;
        for (int d = 0; d < HEAD_DIM; d++) {
            qr[r][d] = load1(q, row + d) * Q_MUL;
            acc[r][d] = 0.0f;
        }
        m[r] = -INFINITY;
        l[r] = 0.0f;
    }
    /* The keys some row sees, and those every row sees (no mask). */
    long lo, hi;
    attn_key_range(seq_q, seq_kv, i0 * GROUP, (long)nr * GROUP, 0, seq_kv,
                   &lo, &hi);
    const long all_lo = WINDOW > 0 ? i0 + nr - 1 + off - WINDOW + 1 : lo;
    const long all_hi = CAUSAL ? i0 + off + 1 : hi;
    const size_t step = (size_t)KV_HEADS * HEAD_DIM;
    for (long j0 = lo; j0 < hi; j0 += BLOCK_K) {
        const int nk = (int)min((long)BLOCK_K, hi - j0);
        const size_t at = ((size_t)(b * seq_kv + j0) * KV_HEADS + hk) *
                          HEAD_DIM;
        const __global storage_t *kp[BLOCK_K], *vp[BLOCK_K];
        for (int jj = 0; jj < BLOCK_K; jj++) {
            /* keys past nk repeat the last */
            kp[jj] = k + at + min(jj, nk - 1) * step;
            vp[jj] = v + at + min(jj, nk - 1) * step;
        }
        float s[ROWS_Q][BLOCK_K], p[ROWS_Q][BLOCK_K], alpha[ROWS_Q];
        dots_of(ROWS_Q, qr, kp, s);
        const bool whole = nk == BLOCK_K && nr == ROWS_Q && j0 >= all_lo &&
                           j0 + BLOCK_K <= all_hi;
        for (int r = 0; r < ROWS_Q; r++) {
            for (int jj = 0; jj < BLOCK_K; jj++) {
#if CAPPED
                float slope;
                s[r][jj] = SOFTCAP * attn_tanh(s[r][jj] * INV_SOFTCAP,
                                               &slope) * ATTN_LOG2E;
#endif
                if (!whole && (jj >= nk || r >= nr ||
                               !attn_sees(i0 + r + off, j0 + jj))) {
                    s[r][jj] = -INFINITY;
                }
            }
            alpha[r] = dots_online_row(s[r], p[r], &m[r], &l[r]);
        }
        dots_accumulate(ROWS_Q, acc, alpha, p, vp, nk);
    }
    for (int r = 0; r < nr; r++) {
        const long i = i0 + r;
        const size_t row = ((size_t)(b * seq_q + i) * HEADS + h) * HEAD_DIM;
        const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
        for (int d = 0; d < HEAD_DIM; d++) {
            store1(o, row + d, acc[r][d] * inv);
        }
        if (lse != 0) {
            lse[((size_t)b * HEADS + h) * seq_q + i] = attn_lse(m[r], l[r]);
        }
    }
}
