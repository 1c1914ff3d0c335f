/* attention_backward_dkv.cl - dk and dv: a work-group per BLOCK_K keys of
 * one (batch, kv head), a work-item a key, over the query rows of every
 * head of the group that see some key of the block, TILE_Q rows at a time
 * staged in local memory (q, dO, lse, D). Each key's sums run over the
 * rows in order: the same bits run to run.
 *
 * Launch: local (BLOCK_K, 1); groups: dimension 0 ceil(seq_kv /
 * BLOCK_K), dimension 1 batch * KV_HEADS. */
#include "attention_backward_common.cl"

/* Rows [R0, R0 + TILE_Q) (of RHI) into QS, DOS, LS and DS; past RHI or at
 * an lse of -inf (a query that sees no key), lse NaN: skipped. */
inline void abw_load_rows(const __global storage_t *q,
                          const __global storage_t *do_,
                          const __global float *lse,
                          const __global float *scratch, __local float *qs,
                          __local float *dos, __local float *ls,
                          __local float *ds, int seq_q, long b, int hk,
                          long r0, long rhi, int lid)
{
    for (int e = lid; e < TILE_Q * HEAD_DIM; e += BLOCK_K) {
        long r = r0 + e / HEAD_DIM;
        int d = e % HEAD_DIM, at = (e / HEAD_DIM) * ABW_STRIDE + d;
        int in = r < rhi;
        size_t g = in ? abw_row_at(b, hk, r, seq_q) + d : 0;
        qs[at] = in ? load1(q, g) : 0.0f;
        dos[at] = in ? load1(do_, g) : 0.0f;
    }
    for (int rr = lid; rr < TILE_Q; rr += BLOCK_K) {
        long r = r0 + rr;
        float l = r < rhi ? abw_lse(lse, b, hk, r, seq_q) : NAN;
        ls[rr] = isinf(l) ? NAN : l;
        ds[rr] = r < rhi ? abw_d(scratch, b, hk, r, seq_q) : 0.0f;
    }
}

__kernel __attribute__((reqd_work_group_size(BLOCK_K, 1, 1)))
void attention_backward_dkv(const int seq_q, const int seq_kv,
                            const __global storage_t *q,
                            const __global storage_t *k,
                            const __global storage_t *v,
                            const __global storage_t *do_,
                            const __global float *lse,
                            const __global float *scratch,
                            __global storage_t *dk, __global storage_t *dv)
{
    __local float qs[TILE_Q * ABW_STRIDE];
    __local float dos[TILE_Q * ABW_STRIDE];
    __local float ls[TILE_Q], ds[TILE_Q];
    const int lid = get_local_id(0);
    const long j0 = (long)get_group_id(0) * BLOCK_K;
    const long b = get_group_id(1) / KV_HEADS;
    const int hk = (int)(get_group_id(1) % KV_HEADS);
    if (j0 >= seq_kv) {
        return;
    }
    const long j = j0 + lid, off = (long)seq_kv - seq_q;
    const int valid = j < seq_kv;
    const size_t ka = ((size_t)(b * seq_kv + (valid ? j : 0)) * KV_HEADS +
                       hk) * HEAD_DIM;
    float kr[HEAD_DIM], vr[HEAD_DIM], dka[HEAD_DIM], dva[HEAD_DIM];
    for (int d = 0; d < HEAD_DIM; d++) {
        kr[d] = valid ? load1(k, ka + d) : 0.0f;
        vr[d] = valid ? load1(v, ka + d) : 0.0f;
        dka[d] = 0.0f;
        dva[d] = 0.0f;
    }
    long rlo, rhi;
    abw_rows_seeing(j0, (int)min((long)BLOCK_K, seq_kv - j0), seq_q, seq_kv,
                    &rlo, &rhi);
    for (long r0 = rlo; r0 < rhi; r0 += TILE_Q) {
        barrier(CLK_LOCAL_MEM_FENCE);
        abw_load_rows(q, do_, lse, scratch, qs, dos, ls, ds, seq_q, b, hk, r0,
                      rhi, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        int nr = (int)min((long)TILE_Q, rhi - r0);
        for (int rr = 0; valid && rr < nr; rr++) {
            long pos = (r0 + rr) / GROUP + off;
            if (!abw_sees(pos, j) || isnan(ls[rr])) {
                continue;
            }
            __local const float *qr = qs + rr * ABW_STRIDE;
            __local const float *dr = dos + rr * ABW_STRIDE;
            float der;
            float p = abw_prob(abw_dot(kr, qr), ls[rr], &der);
            float dsc = p * (abw_dot(vr, dr) - ds[rr]) * der;
            for (int d = 0; d < HEAD_DIM; d++) {
                dva[d] += p * dr[d];
                dka[d] += dsc * qr[d];
            }
        }
    }
    if (!valid) {
        return;
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        store1(dk, ka + d, ATTN_SCALE * dka[d]);
        store1(dv, ka + d, dva[d]);
    }
}
