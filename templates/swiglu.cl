/* swiglu.cl - the gated MLP's activation: y = act(gate) * up, element by
 * element (gated_act.cl).
 *
 * Storage: storage_DTYPE.cl. Macros: FEATURES; VEC, elements a work-item
 * loads at once (divides FEATURES); ROWS_PER_GROUP, the rows each
 * work-item walks; ROW_TAIL, 1 where work-items reach past a row;
 * ACTIVATION; EXP_POLY (gated_act.cl). Launch: dimension 0 holds a row's
 * FEATURES / VEC vectors, dimension 1 a group per ROWS_PER_GROUP rows. */

#include "storage_@dtype@.cl"
#include "gated_act.cl"

#if !defined(FEATURES) || !defined(ROWS_PER_GROUP) || !defined(ROW_TAIL)
#error "swiglu.cl: the plan defines FEATURES, ROWS_PER_GROUP and ROW_TAIL"
#endif
#if FEATURES % VEC != 0
#error "swiglu.cl: VEC divides FEATURES"
#endif

__kernel void swiglu(int rows, __global const storage_t *restrict gate,
                     __global const storage_t *restrict up,
                     __global storage_t *restrict y)
{
    size_t j = get_global_id(0) * VEC;
#if ROW_TAIL
    if (j >= FEATURES) {
        return;
    }
#endif
#if ROWS_PER_GROUP == 1
    /* A row a work-item and no loop: PoCL vectorizes across the
     * work-items of a group only so. */
    size_t at = get_global_id(1) * FEATURES + j;
    storev(y, at, act(loadv(gate, at)) * loadv(up, at));
#else
    int first = (int)get_group_id(1) * ROWS_PER_GROUP;
    int last = min(first + ROWS_PER_GROUP, rows);
    for (int r = first; r < last; r++) {
        size_t at = (size_t)r * FEATURES + j;
        storev(y, at, act(loadv(gate, at)) * loadv(up, at));
    }
#endif
}
