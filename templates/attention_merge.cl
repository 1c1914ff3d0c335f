/* attention_merge.cl - the split path's merge of the records a row's
 * key chunks left in scratch (attention_common.cl, ATTN_REC) into
 * o and lse: by attention_combine in a launch of its own, or by the last
 * work-group of a block in the first launch (attention_merge_last.cl). */

/* Records read at once by a work-item merging outputs: the group's
 * loads in flight, not one record's round trip after another. */
#define MERGE_BATCH 16

/* Merges the SPLITS records of each of the NROWS rows from row R0 of
 * batch B's kv head HK into o and lse: each record's sum and outputs
 * scaled by exp2(m_s - max), added in split order, the outputs divided
 * by the sum. W: NROWS * (2 * SPLIT_MOST + 1) floats of local memory;
 * every work-item of the group calls it (barriers). */
void attn_merge(__global storage_t *o, __global float *lse,
                const __global float *scratch, int seq_q, long b, int hk,
                long r0, int nrows, int splits, __local float *w, uint lid,
                uint items)
{
    __local float *sums = w + nrows * SPLIT_MOST;
    __local float *inv = sums + nrows * SPLIT_MOST;
    /* The records' maxima and sums, then each row's scale of each. */
    for (uint p = lid; p < (uint)(nrows * splits); p += items) {
        const uint i = p / splits, s = p % splits;
        const size_t row = attn_row(seq_q, b, hk, r0 + i);
        const __global float *rec =
            scratch + (row * splits + s) * ATTN_REC + HEAD_DIM;
        w[i * SPLIT_MOST + s] = rec[0];
        sums[i * SPLIT_MOST + s] = rec[1];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < (uint)nrows; i += items) {
        const size_t row = attn_row(seq_q, b, hk, r0 + i);
        __local float *e = w + i * SPLIT_MOST;
        float mx = -INFINITY;
        for (int s = 0; s < splits; s++) {
            mx = fmax(mx, e[s]);
        }
        const float base = mx == -INFINITY ? 0.0f : mx;
        float l = 0.0f;
        for (int s = 0; s < splits; s++) {
            e[s] = exp2(e[s] - base);
            l += sums[i * SPLIT_MOST + s] * e[s];
        }
        inv[i] = l > 0.0f ? 1.0f / l : 0.0f;
        if (lse != 0) {
            const size_t h = row % HEADS, bi = row / HEADS;
            lse[(bi / seq_q * HEADS + h) * seq_q + bi % seq_q] =
                attn_lse(mx, l);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* The outputs, four columns a work-item at a time. */
    const uint quads = (HEAD_DIM + 3) / 4;
    for (uint u = lid; u < (uint)nrows * quads; u += items) {
        const uint i = u / quads, c = 4 * (u % quads);
        const size_t row = attn_row(seq_q, b, hk, r0 + i);
        const __global float4 *rec =
            (const __global float4 *)(scratch + row * splits * ATTN_REC + c);
        __local const float *e = w + i * SPLIT_MOST;
        float4 a = 0.0f;
        int s = 0;
        for (; s + MERGE_BATCH <= splits; s += MERGE_BATCH) {
            float4 x[MERGE_BATCH];
#pragma unroll
            for (int j = 0; j < MERGE_BATCH; j++) {
                x[j] = rec[(s + j) * (ATTN_REC / 4)];
            }
#pragma unroll
            for (int j = 0; j < MERGE_BATCH; j++) {
                a += x[j] * e[s + j];
            }
        }
        for (; s < splits; s++) {
            a += rec[s * (ATTN_REC / 4)] * e[s];
        }
        a *= inv[i];
        const float out[4] = {a.x, a.y, a.z, a.w};
        for (uint j = 0; j < 4 && c + j < HEAD_DIM; j++) {
            store1(o, row * HEAD_DIM + c + j, out[j]);
        }
    }
}
