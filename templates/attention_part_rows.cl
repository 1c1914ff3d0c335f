/* attention_part_rows.cl - the split path's first launch on CPUs: a
 * work-item per query position, split and APR_KV kv heads of a batch,
 * the query heads of those kv heads all in its hands, reading the keys
 * and values of its chunk straight from k and v (their APR_KV heads lie
 * side by side there: one stretch a key). No local memory and no
 * barriers: on a CPU a work-group's items run one after the other
 * between barriers, and the staging that feeds a GPU's work-items costs
 * more there than the keys' arithmetic. One position sees a range of
 * keys whole (causal, window), so a chunk needs no mask, only its ends.
 * The query heads of one kv head share each key's and value's loads
 * (attention_dots.cl). Records as attention_part.cl's, for
 * attention_combine.
 *
 * Scratch: attention_common.cl (ATTN_REC). A chunk past the keys writes
 * m = -INFINITY, l = 0 and zeros.
 * Launch: local (1, 1); groups: dimension 0 slices * seq_q (split
 * fastest), dimension 1 batch * KV_HEADS / APR_KV. */
#include "attention_common.cl"
#include "attention_dots.cl"

#if !defined(APR_KV) || KV_HEADS % APR_KV != 0
#error "attention_part_rows.cl: APR_KV, a divisor of KV_HEADS"
#endif

/* The query rows of a work-item. */
#define APR_ROWS (APR_KV * GROUP)
#if !defined(APR_HEADS) || GROUP % APR_HEADS != 0 || APR_HEADS > DOTS_N || \
    DOTS_T != BLOCK_K
#error "attention_part_rows.cl: APR_HEADS, a divisor of GROUP, at most DOTS_N"
#endif

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
        for (int h = 0; h < APR_KV; h++) {
            /* kv head hk0 + h: APR_HEADS of its query heads at a time
             * share each key's and value's loads */
            const __global storage_t *kp[BLOCK_K], *vp[BLOCK_K];
            for (int jj = 0; jj < BLOCK_K; jj++) {
                /* keys past nk repeat the last */
                const size_t at = at0 + (size_t)h * HEAD_DIM +
                                  (size_t)min(jj, nk - 1) * step;
                kp[jj] = k + at;
                vp[jj] = v + at;
            }
            for (int r0 = h * GROUP; r0 < (h + 1) * GROUP; r0 += APR_HEADS) {
                float s[APR_HEADS][BLOCK_K], p[APR_HEADS][BLOCK_K];
                float alpha[APR_HEADS];
                dots_of(APR_HEADS, qr + r0, kp, s);
                for (int g = 0; g < APR_HEADS; g++) {
                    for (int jj = 0; jj < BLOCK_K; jj++) {
#if CAPPED
                        float slope;
                        s[g][jj] = SOFTCAP *
                                   attn_tanh(s[g][jj] * INV_SOFTCAP, &slope) *
                                   ATTN_LOG2E;
#endif
                        s[g][jj] = jj < nk ? s[g][jj] : -INFINITY;
                    }
                    alpha[g] = dots_online_row(s[g], p[g], &m[r0 + g],
                                               &l[r0 + g]);
                }
                dots_accumulate(APR_HEADS, acc + r0, alpha, p, vp, nk);
            }
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
