/* row_coop.cl - the one-launch split path's geometry and its barrier
 * across the work-groups of a row (softmax_coop.cl, cross_entropy_coop.cl;
 * include it after row_reduce.cl).
 *
 * Chunk c of a row is its vectors c * COOP_VECS up to coop_end(c), a
 * work-group of COOP_WG items each, COOP_GROUPS of them per row, all
 * running at once: the stub launches the path only while rows x
 * COOP_GROUPS work-groups fit the device's compute units, one each.
 *
 * The handle's sync buffer (zeroed at create) holds, for row r of at
 * most COOP_ROWS, words 2r (arrivals) and 2r + 1 (generation), then at
 * 2 * COOP_ROWS + r * COOP_ROW_WORDS the words the row's work-groups
 * publish for one another (coop_words). coop_wait: the last work-group
 * of a row to arrive resets the arrivals to 0 and then moves the
 * generation on, which the others wait for: every launch leaves the
 * arrivals as it found them, whatever the generation, so no launch needs
 * them cleared. Calls of one handle must not overlap on the device. */
#if !defined(COOP_GROUPS) || !defined(COOP_VECS) || !defined(COOP_WG) ||  \
    !defined(COOP_SLOTS) || !defined(COOP_IN_REGISTERS) ||                \
    !defined(COOP_ROWS) || !defined(COOP_ROW_WORDS) ||                   \
    !defined(COOP_MEMBAR_PTX)
#error "row_coop.cl: the plan must define the COOP_* geometry"
#endif
#if COOP_GROUPS * COOP_VECS < NVEC || (COOP_GROUPS - 1) * COOP_VECS >= NVEC
#error "row_coop.cl: COOP_GROUPS chunks of COOP_VECS must cover NVEC"
#endif
#if (COOP_WG & (COOP_WG - 1)) != 0 || COOP_SLOTS * COOP_WG < COOP_VECS
#error "row_coop.cl: COOP_WG must be a power of two, COOP_SLOTS each"
#endif

inline uint coop_end(uint c)
{
    return min((c + 1) * COOP_VECS, (uint)NVEC);
}

/* The words row ROW's work-groups publish for one another. */
inline volatile __global uint *coop_words(volatile __global uint *sync,
                                          uint row)
{
    return sync + 2 * COOP_ROWS + (size_t)row * COOP_ROW_WORDS;
}

/* Orders this work-item's global writes before its later ones, as every
 * other work-group sees them: membar.gl where PTX is at hand
 * (COOP_MEMBAR_PTX, NVIDIA: device scope, certainly), else OpenCL's
 * fence. */
inline void coop_fence(void)
{
#if COOP_MEMBAR_PTX
    asm volatile("membar.gl;" ::: "memory");
#else
    mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
}

/* Waits until every work-group of row ROW has arrived here, having
 * published its words (atomic_xchg by item 0 before it comes: item 0
 * arrives for the group). Every item of the group returns after that,
 * free to read the row's words (volatile). */
inline void coop_wait(volatile __global uint *sync, uint row, uint lid)
{
    volatile __global uint *counters = sync + 2 * row;
    if (lid == 0) {
        /* Read before arriving: it moves only once all have arrived. */
        const uint generation = atomic_add(&counters[1], 0u);
        coop_fence();
        if (atomic_inc(&counters[0]) == COOP_GROUPS - 1) {
            atomic_xchg(&counters[0], 0u);
            coop_fence();
            atomic_inc(&counters[1]);
        } else {
            while (atomic_add(&counters[1], 0u) == generation) {
            }
        }
        coop_fence();
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

/* Word I of the row's (published by atomic_xchg) as a float, and the
 * publishing of V there. */
inline float coop_get(volatile __global uint *words, uint i)
{
    return as_float(words[i]);
}

inline void coop_put(volatile __global uint *words, uint i, float v)
{
    atomic_xchg(&words[i], as_uint(v));
}
