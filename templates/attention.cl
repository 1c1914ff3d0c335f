/* attention.cl - the prefill path: a work-group per block of BLOCK_Q rows
 * of one (batch, kv head) (attention_common.cl), over every key tile its
 * rows see; writes o and lse.
 *
 * Launch: local (ITEMS, 1); groups: dimension 0 at least the blocks of
 * GROUP * seq_q rows (the rest return), dimension 1 batch * KV_HEADS. */
#include "attention_common.cl"

__kernel __attribute__((reqd_work_group_size(ITEMS, 1, 1)))
void attention(const int seq_q, const int seq_kv,
               const __global storage_t *q, const __global storage_t *k,
               const __global storage_t *v, __global storage_t *o,
               __global float *lse)
{
    __local float qs[BLOCK_Q * ATTN_STRIDE];
    __local float kvs[BLOCK_K * ATTN_STRIDE];
    __local float ss[BLOCK_Q * BLOCK_K];
    __local float ps[BLOCK_Q * BLOCK_K];
    const long block = get_group_id(0);
    if (block >= attn_blocks(seq_q)) {
        return;
    }
    const long b = get_group_id(1) / KV_HEADS;
    const int hk = (int)(get_group_id(1) % KV_HEADS);
    const long r0 = block * BLOCK_Q;
    float m, l, acc[ROW_DIMS];
    attn_block(q, k, v, seq_q, seq_kv, b, hk, r0, 0, seq_kv, qs, kvs, ss, ps,
               &m, &l, acc);
    const int lid = get_local_id(0);
    const int c = lid % ROW_ITEMS;
    const long r = r0 + lid / ROW_ITEMS;
    if (r >= (long)GROUP * seq_q) {
        return;
    }
    const long i = r / GROUP;
    const int h = hk * GROUP + (int)(r % GROUP);
    const size_t at = ((size_t)(b * seq_q + i) * HEADS + h) * HEAD_DIM;
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    for (int t = 0; t < ROW_DIMS; t++) {
        int d = c + t * ROW_ITEMS;
        if (d < HEAD_DIM) {
            store1(o, at + d, acc[t] * inv);
        }
    }
    if (c == 0 && lse != 0) {
        lse[((size_t)b * HEADS + h) * seq_q + i] = attn_lse(m, l);
    }
}
