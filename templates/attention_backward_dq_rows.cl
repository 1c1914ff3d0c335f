/* attention_backward_dq_rows.cl - dq on CPUs: a work-item per DOTS_N
 * query rows of one (batch, kv head) (rows ordered as attention's
 * forward), over the keys some of them sees, DOTS_T keys and values at a
 * time read straight from k and v (attention_dots.cl). A row's
 * sum runs over the keys in order: the same bits run to run; a row that
 * sees no key (lse -inf) gets 0.
 *
 * Launch: local (1, 1); groups: dimension 0 at least ceil(GROUP * seq_q /
 * DOTS_N) (the rest return), dimension 1 batch * KV_HEADS. */
#include "attention_backward_common.cl"
#include "attention_dots.cl"

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void attention_backward_dq_rows(const int seq_q, const int seq_kv,
                                const __global storage_t *q,
                                const __global storage_t *k,
                                const __global storage_t *v,
                                const __global storage_t *do_,
                                const __global float *lse,
                                const __global float *scratch,
                                __global storage_t *dq)
{
    const long rows = (long)GROUP * seq_q;
    const long r0 = (long)get_group_id(0) * DOTS_N;
    const long b = get_group_id(1) / KV_HEADS;
    const int hk = (int)(get_group_id(1) % KV_HEADS);
    if (r0 >= rows) {
        return;
    }
    const int nr = (int)min((long)DOTS_N, rows - r0);
    const long off = (long)seq_kv - seq_q;
    float qr[DOTS_N][HEAD_DIM], dr[DOTS_N][HEAD_DIM], acc[DOTS_N][HEAD_DIM];
    float l[DOTS_N], dd[DOTS_N], keep[DOTS_N];
    for (int n = 0; n < DOTS_N; n++) {
        const long r = r0 + min(n, nr - 1);
        const size_t at = abw_row_at(b, hk, r, seq_q);
        l[n] = n < nr ? abw_lse(lse, b, hk, r, seq_q) : -INFINITY;
        dd[n] = abw_d(scratch, b, hk, r, seq_q);
        keep[n] = 1.0f;
        for (int d = 0; d < HEAD_DIM; d++) {
            qr[n][d] = load1(q, at + d);
            dr[n][d] = load1(do_, at + d);
            acc[n][d] = 0.0f;
        }
    }
    long lo, hi;
    abw_keys_seen(r0, nr, seq_q, seq_kv, &lo, &hi);
    for (long j0 = lo; j0 < hi; j0 += DOTS_T) {
        const int nt = (int)min((long)DOTS_T, hi - j0);
        const __global storage_t *kp[DOTS_T], *vp[DOTS_T];
        for (int t = 0; t < DOTS_T; t++) {
            const size_t at = ((size_t)(b * seq_kv + j0 + min(t, nt - 1)) *
                                   KV_HEADS + hk) * HEAD_DIM;
            kp[t] = k + at;
            vp[t] = v + at;
        }
        float s[DOTS_N][DOTS_T], dp[DOTS_N][DOTS_T], ds[DOTS_N][DOTS_T];
        dots_of(DOTS_N, qr, kp, s);
        dots_of(DOTS_N, dr, vp, dp);
        for (int n = 0; n < DOTS_N; n++) {
            const long pos = (r0 + n) / GROUP + off;
            for (int t = 0; t < DOTS_T; t++) {
                ds[n][t] = 0.0f;
                if (t < nt && !isinf(l[n]) && abw_sees(pos, j0 + t)) {
                    float der;
                    const float p = abw_prob(s[n][t], l[n], &der);
                    ds[n][t] = p * (dp[n][t] - dd[n]) * der;
                }
            }
        }
        dots_accumulate(DOTS_N, acc, keep, ds, kp, nt);
    }
    for (int n = 0; n < nr; n++) {
        const size_t at = abw_row_at(b, hk, r0 + n, seq_q);
        for (int d = 0; d < HEAD_DIM; d++) {
            store1(dq, at + d, ATTN_SCALE * acc[n][d]);
        }
    }
}
