/* attention_part.cl - the split path's first launch: `slices` work-groups
 * per block of rows (the launch's splits: the spec's `split`, or up to
 * SPLIT_MOST where the blocks are few; attention_common.cl), each over
 * its chunk of the keys (a multiple of BLOCK_K), write each row's
 * partial max (base 2), sum and unnormalised outputs to scratch: a few
 * query rows over a long cache still fill the device. attention_part leaves the records to
 * attention_combine; attention_part_merged.cl merges them in the last
 * work-group of each block.
 *
 * Scratch: attention_common.cl (ATTN_REC). A chunk past the keys writes
 * m = -INFINITY, l = 0 and zeros.
 * Launch: local (ITEMS, 1); groups: dimension 0 slices times at least the
 * blocks, dimension 1 batch * KV_HEADS, a group's split, block, batch
 * and kv head as attn_split_group orders them. */
#include "attention_common.cl"

/* Local memory of a work-group: q's rows, a tile of keys or values,
 * scores and probabilities. */
struct ap_room {
    __local float *qs, *kvs, *ss, *ps;
};

/* This work-group's records, of block BLOCK of batch B's kv head HK. */
void ap_records(int seq_q, int seq_kv, const __global storage_t *q,
                const __global storage_t *k, const __global storage_t *v,
                __global float *scratch, long block, int split, int splits,
                long b, int hk, struct ap_room room)
{
    const long r0 = block * BLOCK_Q;
    const long chunk = (((long)seq_kv + splits - 1) / splits + BLOCK_K - 1) /
                       BLOCK_K * BLOCK_K;
    const long from = split * chunk;
    float m, l, acc[ROW_DIMS];
    attn_block(q, k, v, seq_q, seq_kv, b, hk, r0, from,
               min(from + chunk, (long)seq_kv), room.qs, room.kvs, room.ss,
               room.ps, &m, &l, acc);
    const int lid = get_local_id(0);
    const int c = lid % ROW_ITEMS;
    const long r = r0 + lid / ROW_ITEMS;
    if (r >= (long)GROUP * seq_q) {
        return;
    }
    __global float *rec =
        scratch + (attn_row(seq_q, b, hk, r) * splits + split) * ATTN_REC;
    for (int t = 0; t < ROW_DIMS; t++) {
        int d = c + t * ROW_ITEMS;
        if (d < HEAD_DIM) {
            rec[d] = acc[t];
        }
    }
    if (c == 0) {
        rec[HEAD_DIM] = m;
        rec[HEAD_DIM + 1] = l;
    }
}

/* What both kernels of the split path declare first. */
#define AP_LOCAL                                   \
    __local float qs[BLOCK_Q * ATTN_STRIDE];       \
    __local float kvs[BLOCK_K * ATTN_STRIDE];      \
    __local float ss[BLOCK_Q * BLOCK_K];           \
    __local float ps[BLOCK_Q * BLOCK_K];           \
    const struct ap_room room = {qs, kvs, ss, ps}; \
    const struct attn_split_at at = attn_split_group(slices)

__kernel __attribute__((reqd_work_group_size(ITEMS, 1, 1)))
void attention_part(const int slices, const int seq_q, const int seq_kv,
                    const __global storage_t *q, const __global storage_t *k,
                    const __global storage_t *v, __global float *scratch)
{
    AP_LOCAL;
    if (at.block >= attn_blocks(seq_q)) {
        return;
    }
    ap_records(seq_q, seq_kv, q, k, v, scratch, at.block, at.split, slices,
               at.b, at.hk, room);
}
