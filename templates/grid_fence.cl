/* grid_fence.cl - a fence that orders a work-item's global writes before
 * its later ones as every other work-group sees them: for work-groups
 * that hand results to one another in one launch (grid_sync.cl's
 * barrier, lora_decode_mma's last work-group of a strip).
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
