/* attention_backward_dot.cl - D = rowsum(dO * O) per query row and head
 * into scratch [batch][seq_q][HEADS], a work-item a row.
 *
 * A row's elements lie together, so a work-item reading its own row
 * would have the work-items of a warp touch DOT_ITEMS rows at once. The
 * work-group instead copies DOT_CHUNK columns of its DOT_ITEMS rows of O
 * and dO into local memory, neighbouring work-items reading neighbouring
 * elements (whole vectors where the head's width allows), and each
 * work-item then sums its row's part there. Between the barriers every
 * work-item runs the same code, past the last row too (on zeros): PoCL
 * 3.1 ran a last, partly filled work-group only in part when its
 * work-items past the last row skipped the copy and the sum there.
 *
 * Launch: local (DOT_ITEMS); at least batch * seq_q * HEADS work-items
 * (the rest only copy). */
#include "attention_backward_common.cl"

#define DOT_CHUNK 32 /* columns a copy; a multiple of 8 */
/* Elements a load: 8 (16 bytes of bf16) where every row's chunks hold
 * whole vectors. */
#if HEAD_DIM % 8 == 0
#define DOT_VEC 8
#else
#define DOT_VEC 1
#endif

__kernel __attribute__((reqd_work_group_size(DOT_ITEMS, 1, 1)))
void attention_backward_dot(const int batch, const int seq_q,
                            const __global storage_t *o,
                            const __global storage_t *do_,
                            __global float *scratch)
{
    /* a column of padding: each work-item reads its own bank */
    __local float o_part[DOT_ITEMS][DOT_CHUNK + 1];
    __local float do_part[DOT_ITEMS][DOT_CHUNK + 1];
    const size_t rows = (size_t)batch * seq_q * HEADS;
    const size_t row0 = get_group_id(0) * (size_t)DOT_ITEMS;
    const uint tid = get_local_id(0);
    const uint nrows = (uint)min((size_t)DOT_ITEMS, rows - min(rows, row0));
    /* Summed as abw_dot sums dP = dO.v: where o is v (a single key),
     * dP - D is exactly 0. */
    float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
    for (int c0 = 0; c0 < HEAD_DIM; c0 += DOT_CHUNK) {
        const int n = min(DOT_CHUNK, HEAD_DIM - c0);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint e = tid; e < DOT_ITEMS * DOT_CHUNK / DOT_VEC;
             e += DOT_ITEMS) {
            const uint r = e / (DOT_CHUNK / DOT_VEC);
            const uint c = e % (DOT_CHUNK / DOT_VEC) * DOT_VEC;
            const int in = r < nrows && (int)c < n;
            const size_t at = in ? (row0 + r) * HEAD_DIM + c0 + c : 0;
#if DOT_VEC == 8
            vstore8(in ? load8(o, at) : (float8)0.0f, 0, &o_part[r][c]);
            vstore8(in ? load8(do_, at) : (float8)0.0f, 0, &do_part[r][c]);
#else
            o_part[r][c] = in ? load1(o, at) : 0.0f;
            do_part[r][c] = in ? load1(do_, at) : 0.0f;
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        __local const float *a = o_part[tid], *b = do_part[tid];
        int d = 0;
        for (; d + 4 <= n; d += 4) {
            d0 += a[d] * b[d];
            d1 += a[d + 1] * b[d + 1];
            d2 += a[d + 2] * b[d + 2];
            d3 += a[d + 3] * b[d + 3];
        }
        for (; d < n; d++) {
            d0 += a[d] * b[d];
        }
    }
    if (tid < nrows) {
        scratch[row0 + tid] = (d0 + d1) + (d2 + d3);
    }
}
