/* attention_backward_dot.cl - D = rowsum(dO * O) per query row and head
 * into scratch [batch][seq_q][HEADS], a work-item a row.
 *
 * Launch: local (DOT_ITEMS); at least batch * seq_q * HEADS work-items
 * (the rest return). */
#include "attention_backward_common.cl"

__kernel __attribute__((reqd_work_group_size(DOT_ITEMS, 1, 1)))
void attention_backward_dot(const int batch, const int seq_q,
                            const __global storage_t *o,
                            const __global storage_t *do_,
                            __global float *scratch)
{
    const size_t row = get_global_id(0);
    if (row >= (size_t)batch * seq_q * HEADS) {
        return;
    }
    const size_t at = row * HEAD_DIM;
    /* Summed as abw_dot sums dP = dO.v: where o is v (a single key),
     * dP - D is exactly 0. */
    float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
    int d = 0;
    for (; d + 4 <= HEAD_DIM; d += 4) {
        d0 += load1(o, at + d) * load1(do_, at + d);
        d1 += load1(o, at + d + 1) * load1(do_, at + d + 1);
        d2 += load1(o, at + d + 2) * load1(do_, at + d + 2);
        d3 += load1(o, at + d + 3) * load1(do_, at + d + 3);
    }
    for (; d < HEAD_DIM; d++) {
        d0 += load1(o, at + d) * load1(do_, at + d);
    }
    scratch[row] = (d0 + d1) + (d2 + d3);
}
