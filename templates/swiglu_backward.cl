/* swiglu_backward.cl - the gated MLP's activation backward: from
 * y = act(gate) * up and dy, dgate = dy * up * act'(gate) and
 * dup = dy * act(gate), element by element (gated_act.cl).
 *
 * Storage: storage_DTYPE.cl. Macros and launch as swiglu.cl's. */

#include "storage_@dtype@.cl"
#include "gated_act.cl"

#if !defined(FEATURES) || !defined(ROWS_PER_GROUP) || !defined(ROW_TAIL)
#error "swiglu_backward.cl: the plan defines FEATURES, ROWS_PER_GROUP and ROW_TAIL"
#endif
#if FEATURES % VEC != 0
#error "swiglu_backward.cl: VEC divides FEATURES"
#endif

__kernel void swiglu_backward(int rows, __global const storage_t *restrict gate,
                              __global const storage_t *restrict up,
                              __global const storage_t *restrict dy,
                              __global storage_t *restrict dgate,
                              __global storage_t *restrict dup)
{
    size_t j = get_global_id(0) * VEC;
#if ROW_TAIL
    if (j >= FEATURES) {
        return;
    }
#endif
#if ROWS_PER_GROUP == 1
    /* A row a work-item and no loop, as swiglu.cl. */
    size_t at = get_global_id(1) * FEATURES + j;
    floatv d = loadv(dy, at), grad;
    floatv a = act_and_grad(loadv(gate, at), &grad);
    storev(dgate, at, d * loadv(up, at) * grad);
    storev(dup, at, d * a);
#else
    int first = (int)get_group_id(1) * ROWS_PER_GROUP;
    int last = min(first + ROWS_PER_GROUP, rows);
    for (int r = first; r < last; r++) {
        size_t at = (size_t)r * FEATURES + j;
        floatv d = loadv(dy, at), grad;
        floatv a = act_and_grad(loadv(gate, at), &grad);
        storev(dgate, at, d * loadv(up, at) * grad);
        storev(dup, at, d * a);
    }
#endif
}
