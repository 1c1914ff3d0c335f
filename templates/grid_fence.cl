/* grid_fence.cl - a fence that orders a work-item's global writes before
 * its later ones as every other work-group sees them, and grid_last on
 * it: for work-groups that hand results to one another in one launch
 * (grid_sync.cl's barrier; the last work-group of a strip, which adds
 * the others' partial sums).
 *
 * GRID_MEMBAR_PTX 1: the fence as PTX membar.gl (NVIDIA: device scope,
 * certainly); else OpenCL's mem_fence. */
#ifndef GRID_MEMBAR_PTX
#error "grid_fence.cl: the plan must define GRID_MEMBAR_PTX"
#endif

inline void grid_fence(void)
{
#if GRID_MEMBAR_PTX
    asm volatile("membar.gl;" ::: "memory");
#else
    mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
}

/* Whether this work-group is the last of COUNT to count itself done on
 * DONE (which it then sets back to 0, ready for the next launch); every
 * work-item of the group gets the same answer. LID is the item's local
 * id, LAST a word of local memory. Call it from every item, after the
 * group's global writes that the last group reads. */
inline int grid_last(volatile __global uint *done, const uint count,
                     const uint lid, __local uint *last)
{
    /* Every item's writes stored before the group counts itself done. */
    grid_fence();
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {
        *last = atomic_inc(done) == count - 1;
        if (*last)
            atomic_xchg(done, 0u);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!*last)
        return 0;
    /* The other groups' writes, stored before they counted themselves. */
    grid_fence();
    return 1;
}
