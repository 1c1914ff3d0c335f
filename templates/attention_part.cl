/* attention_part.cl - the split path's first launch: SPLIT work-groups
 * per block of rows (attention_common.cl), each over its chunk of the
 * keys (a multiple of BLOCK_K), write each row's partial max (base 2),
 * sum and unnormalised outputs to scratch, for attention_combine: a few
 * query rows over a long cache still fill the device.
 *
 * Scratch: per query row (b, i, h), in o's order, SPLIT records of
 * HEAD_DIM + 2 floats: m, l, then the outputs. A chunk past the keys
 * writes m = -INFINITY, l = 0 and zeros.
 * Launch: local (ITEMS, 1); groups: dimension 0 SPLIT times at least the
 * blocks (split s of block n is group n * SPLIT + s), dimension 1
 * batch * KV_HEADS. */
#include "attention_common.cl"

__kernel __attribute__((reqd_work_group_size(ITEMS, 1, 1)))
void attention_part(const int seq_q, const int seq_kv,
                    const __global storage_t *q, const __global storage_t *k,
                    const __global storage_t *v, __global float *scratch)
{
    __local float qs[BLOCK_Q * ATTN_STRIDE];
    __local float kvs[BLOCK_K * ATTN_STRIDE];
    __local float ss[BLOCK_Q * BLOCK_K];
    __local float ps[BLOCK_Q * BLOCK_K];
    const long block = get_group_id(0) / SPLIT;
    const int split = (int)(get_group_id(0) % SPLIT);
    if (block >= attn_blocks(seq_q)) {
        return;
    }
    const long b = get_group_id(1) / KV_HEADS;
    const int hk = (int)(get_group_id(1) % KV_HEADS);
    const long r0 = block * BLOCK_Q;
    const long chunk = (((long)seq_kv + SPLIT - 1) / SPLIT + BLOCK_K - 1) /
                       BLOCK_K * BLOCK_K;
    const long from = split * chunk;
    float m, l, acc[ROW_DIMS];
    attn_block(q, k, v, seq_q, seq_kv, b, hk, r0, from,
               min(from + chunk, (long)seq_kv), qs, kvs, ss, ps, &m, &l, acc);
    const int lid = get_local_id(0);
    const int c = lid % ROW_ITEMS;
    const long r = r0 + lid / ROW_ITEMS;
    if (r >= (long)GROUP * seq_q) {
        return;
    }
    const int h = hk * GROUP + (int)(r % GROUP);
    const size_t row = (size_t)(b * seq_q + r / GROUP) * HEADS + h;
    __global float *rec = scratch + (row * SPLIT + split) * (HEAD_DIM + 2);
    for (int t = 0; t < ROW_DIMS; t++) {
        int d = c + t * ROW_ITEMS;
        if (d < HEAD_DIM) {
            rec[2 + d] = acc[t];
        }
    }
    if (c == 0) {
        rec[0] = m;
        rec[1] = l;
    }
}
