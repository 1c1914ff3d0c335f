/* attention_backward_dq.cl - dq: a work-group per BLOCK_Q query rows of
 * one (batch, kv head) (rows ordered as attention's forward), a
 * work-item a row, over the keys some row of the block sees, TILE_K keys
 * and values at a time staged in local memory. A row's sum runs over the
 * keys in order: the same bits run to run; a row that sees no key (lse
 * -inf) gets 0.
 *
 * Launch: local (BLOCK_Q, 1); groups: dimension 0 at least the blocks of
 * GROUP * seq_q rows (the rest return), dimension 1 batch * KV_HEADS. */
#include "attention_backward_common.cl"

/* Keys [J0, J0 + TILE_K) of K and V into KS and VS, zeros past seq_kv. */
inline void abw_load_keys(const __global storage_t *k,
                          const __global storage_t *v, __local float *ks,
                          __local float *vs, int seq_kv, long b, int hk,
                          long j0, int lid)
{
    for (int e = lid; e < TILE_K * HEAD_DIM; e += BLOCK_Q) {
        long j = j0 + e / HEAD_DIM;
        int d = e % HEAD_DIM, at = (e / HEAD_DIM) * ABW_STRIDE + d;
        size_t g = ((size_t)(b * seq_kv + j) * KV_HEADS + hk) * HEAD_DIM + d;
        ks[at] = j < seq_kv ? load1(k, g) : 0.0f;
        vs[at] = j < seq_kv ? load1(v, g) : 0.0f;
    }
}

__kernel __attribute__((reqd_work_group_size(BLOCK_Q, 1, 1)))
void attention_backward_dq(const int seq_q, const int seq_kv,
                           const __global storage_t *q,
                           const __global storage_t *k,
                           const __global storage_t *v,
                           const __global storage_t *do_,
                           const __global float *lse,
                           const __global float *scratch,
                           __global storage_t *dq)
{
    __local float ks[TILE_K * ABW_STRIDE];
    __local float vs[TILE_K * ABW_STRIDE];
    const int lid = get_local_id(0);
    const long rows = (long)GROUP * seq_q;
    const long r0 = (long)get_group_id(0) * BLOCK_Q;
    const long b = get_group_id(1) / KV_HEADS;
    const int hk = (int)(get_group_id(1) % KV_HEADS);
    if (r0 >= rows) {
        return;
    }
    const long r = r0 + lid, off = (long)seq_kv - seq_q;
    const size_t at = abw_row_at(b, hk, r < rows ? r : 0, seq_q);
    const float l = r < rows ? abw_lse(lse, b, hk, r, seq_q) : -INFINITY;
    const float dd = r < rows ? abw_d(scratch, b, hk, r, seq_q) : 0.0f;
    const int valid = r < rows && !isinf(l);
    const long pos = r / GROUP + off;
    float qr[HEAD_DIM], dr[HEAD_DIM], acc[HEAD_DIM];
    for (int d = 0; d < HEAD_DIM; d++) {
        qr[d] = valid ? load1(q, at + d) : 0.0f;
        dr[d] = valid ? load1(do_, at + d) : 0.0f;
        acc[d] = 0.0f;
    }
    /* The keys some row of the block sees: [lo, hi). */
    long lo, hi;
    abw_keys_seen(r0, min((long)BLOCK_Q, rows - r0), seq_q, seq_kv, &lo,
                  &hi);
    for (long j0 = lo; j0 < hi; j0 += TILE_K) {
        barrier(CLK_LOCAL_MEM_FENCE);
        abw_load_keys(k, v, ks, vs, seq_kv, b, hk, j0, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        int nk = (int)min((long)TILE_K, hi - j0);
        for (int jj = 0; valid && jj < nk; jj++) {
            if (!abw_sees(pos, j0 + jj)) {
                continue;
            }
            __local const float *kr = ks + jj * ABW_STRIDE;
            float der;
            float p = abw_prob(abw_dot(qr, kr), l, &der);
            float dsc = p * (abw_dot(dr, vs + jj * ABW_STRIDE) - dd) * der;
            for (int d = 0; d < HEAD_DIM; d++) {
                acc[d] += dsc * kr[d];
            }
        }
    }
    if (r >= rows) {
        return;
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        store1(dq, at + d, ATTN_SCALE * acc[d]);
    }
}
