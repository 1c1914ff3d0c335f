/* attention_backward_dkv_rows.cl - dk and dv on CPUs: a work-item per
 * DOTS_N keys of one (batch, kv head), over the query rows of every head
 * of the group that see some of them, DOTS_T rows of q and dO at a time
 * read straight from memory (attention_dots.cl). Each key's
 * sums run over the rows in order: the same bits run to run.
 *
 * Launch: local (1, 1); groups: dimension 0 at least ceil(seq_kv /
 * DOTS_N) (the rest return), dimension 1 batch * KV_HEADS. */
#include "attention_backward_common.cl"
#include "attention_dots.cl"

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void attention_backward_dkv_rows(const int seq_q, const int seq_kv,
                                 const __global storage_t *q,
                                 const __global storage_t *k,
                                 const __global storage_t *v,
                                 const __global storage_t *do_,
                                 const __global float *lse,
                                 const __global float *scratch,
                                 __global storage_t *dk,
                                 __global storage_t *dv)
{
    const long j0 = (long)get_group_id(0) * DOTS_N;
    const long b = get_group_id(1) / KV_HEADS;
    const int hk = (int)(get_group_id(1) % KV_HEADS);
    if (j0 >= seq_kv) {
        return;
    }
    const int nk = (int)min((long)DOTS_N, seq_kv - j0);
    const long off = (long)seq_kv - seq_q;
    float kr[DOTS_N][HEAD_DIM], vr[DOTS_N][HEAD_DIM];
    float dka[DOTS_N][HEAD_DIM], dva[DOTS_N][HEAD_DIM], keep[DOTS_N];
    for (int n = 0; n < DOTS_N; n++) {
        const size_t at = ((size_t)(b * seq_kv + j0 + min(n, nk - 1)) *
                               KV_HEADS + hk) * HEAD_DIM;
        for (int d = 0; d < HEAD_DIM; d++) {
            kr[n][d] = load1(k, at + d);
            vr[n][d] = load1(v, at + d);
            dka[n][d] = 0.0f;
            dva[n][d] = 0.0f;
        }
        keep[n] = 1.0f;
    }
    long rlo, rhi;
    abw_rows_seeing(j0, nk, seq_q, seq_kv, &rlo, &rhi);
    for (long r0 = rlo; r0 < rhi; r0 += DOTS_T) {
        const int nt = (int)min((long)DOTS_T, rhi - r0);
        const __global storage_t *qp[DOTS_T], *dop[DOTS_T];
        float lt[DOTS_T], dt[DOTS_T];
        for (int t = 0; t < DOTS_T; t++) {
            const long r = r0 + min(t, nt - 1);
            const size_t at = abw_row_at(b, hk, r, seq_q);
            qp[t] = q + at;
            dop[t] = do_ + at;
            lt[t] = abw_lse(lse, b, hk, r, seq_q);
            dt[t] = abw_d(scratch, b, hk, r, seq_q);
        }
        float s[DOTS_N][DOTS_T], dp[DOTS_N][DOTS_T];
        float p[DOTS_N][DOTS_T], ds[DOTS_N][DOTS_T];
        dots_of(DOTS_N, kr, qp, s);
        dots_of(DOTS_N, vr, dop, dp);
        for (int n = 0; n < DOTS_N; n++) {
            for (int t = 0; t < DOTS_T; t++) {
                const long pos = (r0 + t) / GROUP + off;
                p[n][t] = 0.0f;
                ds[n][t] = 0.0f;
                /* a query that sees no key (lse -inf) is skipped */
                if (n < nk && t < nt && isfinite(lt[t]) &&
                    abw_sees(pos, j0 + n)) {
                    float der;
                    p[n][t] = abw_prob(s[n][t], lt[t], &der);
                    ds[n][t] = p[n][t] * (dp[n][t] - dt[t]) * der;
                }
            }
        }
        dots_accumulate(DOTS_N, dva, keep, p, dop, nt);
        dots_accumulate(DOTS_N, dka, keep, ds, qp, nt);
    }
    for (int n = 0; n < nk; n++) {
        const size_t at = ((size_t)(b * seq_kv + j0 + n) * KV_HEADS + hk) *
                          HEAD_DIM;
        for (int d = 0; d < HEAD_DIM; d++) {
            store1(dk, at + d, ATTN_SCALE * dka[n][d]);
            store1(dv, at + d, dva[n][d]);
        }
    }
}
