/* grid_sync.cl - a barrier across work-groups that all run at once (the
 * stub takes a path that needs one only while its work-groups fit the
 * device's compute units, one each), on two words of the handle's sync
 * buffer (zeroed at create): arrivals, then a generation. The last
 * work-group to arrive resets the arrivals to 0 and then moves the
 * generation on, which the others wait for: every launch leaves the
 * arrivals as it found them, whatever the generation, so no launch needs
 * them cleared. Calls of one handle must not overlap on the device.
 * Its fences: grid_fence.cl. */
#include "grid_fence.cl"

/* The generation of COUNTERS (arrivals, generation) as this launch found
 * it, read by item LID 0 (the others get 0). It moves only once every
 * work-group of the launch has arrived, so a kernel reads it first thing
 * and its latency hides behind the work before the barrier. */
inline uint grid_generation(volatile __global uint *counters, uint lid)
{
    return lid == 0 ? counters[1] : 0u;
}

/* Waits until GROUPS work-groups have arrived at COUNTERS, GENERATION as
 * grid_generation read it. Every item of the group calls it; item LID 0
 * arrives for the group, so what the others are to see must be written
 * (and fenced) before the group's items meet at a barrier ahead of the
 * call, or published by item 0. Every item returns after all have
 * arrived. The waiting groups poll with plain loads: atomics there would
 * queue the last arrival's behind them. */
inline void grid_arrive_wait(volatile __global uint *counters, uint groups,
                             uint lid, uint generation)
{
    if (lid == 0) {
        /* The group's writes, and the generation's read, before its
         * arrival. */
        grid_fence();
        if (atomic_inc(&counters[0]) == groups - 1) {
            atomic_xchg(&counters[0], 0u);
            grid_fence();
            atomic_inc(&counters[1]);
        } else {
            while (counters[1] == generation) {
            }
        }
        grid_fence();
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

/* grid_arrive_wait with the generation read on arrival. */
inline void grid_wait(volatile __global uint *counters, uint groups, uint lid)
{
    grid_arrive_wait(counters, groups, lid, grid_generation(counters, lid));
}
