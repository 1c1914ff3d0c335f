/* row_coop.cl - the one-launch split path's geometry and its barrier
 * across the work-groups of a row (softmax_coop.cl, cross_entropy_coop.cl;
 * include it after row_reduce.cl).
 *
 * A launch cuts each row into coop_groups() chunks, a work-group of
 * COOP_WG items each, all running at once: COOP_GROUPS, or where the
 * device has compute units to spare for the call's rows, up to
 * COOP_GROUPS_MOST (the stub doubles them while rows x chunks fit the
 * units, one work-group each). Chunk c is its vectors c * coop_vecs() up
 * to coop_end(c); COOP_VECS, the longest chunk (at COOP_GROUPS), sizes
 * what an item holds (COOP_SLOTS).
 *
 * The handle's sync buffer (zeroed at create) holds, for row r of at
 * most COOP_ROWS, words 2r and 2r + 1, the row's barrier (grid_sync.cl),
 * then at 2 * COOP_ROWS + r * COOP_ROW_WORDS the words the row's
 * work-groups publish for one another (coop_words), as many as
 * COOP_GROUPS_MOST chunks need. */
#include "grid_sync.cl"

#if !defined(COOP_GROUPS) || !defined(COOP_GROUPS_MOST) ||                \
    !defined(COOP_VECS) || !defined(COOP_WG) || !defined(COOP_SLOTS) ||     \
    !defined(COOP_IN_REGISTERS) || !defined(COOP_ROWS) ||                  \
    !defined(COOP_ROW_WORDS)
#error "row_coop.cl: the plan must define the COOP_* geometry"
#endif
#if COOP_GROUPS * COOP_VECS < NVEC || (COOP_GROUPS - 1) * COOP_VECS >= NVEC
#error "row_coop.cl: COOP_GROUPS chunks of COOP_VECS must cover NVEC"
#endif
#if COOP_GROUPS_MOST < COOP_GROUPS
#error "row_coop.cl: COOP_GROUPS_MOST must be at least COOP_GROUPS"
#endif
#if (COOP_WG & (COOP_WG - 1)) != 0 || COOP_SLOTS * COOP_WG < COOP_VECS
#error "row_coop.cl: COOP_WG must be a power of two, COOP_SLOTS each"
#endif

/* The chunks of each row in this launch. */
inline uint coop_groups(void)
{
    return (uint)get_num_groups(0);
}

/* The vectors of a chunk (the last may have fewer). */
inline uint coop_vecs(void)
{
    return (NVEC + coop_groups() - 1) / coop_groups();
}

inline uint coop_end(uint c)
{
    return min((c + 1) * coop_vecs(), (uint)NVEC);
}

/* The words row ROW's work-groups publish for one another. */
inline volatile __global uint *coop_words(volatile __global uint *sync,
                                          uint row)
{
    return sync + 2 * COOP_ROWS + (size_t)row * COOP_ROW_WORDS;
}

/* Row ROW's barrier generation as the launch found it (grid_generation:
 * read it first thing). */
inline uint coop_generation(volatile __global uint *sync, uint row, uint lid)
{
    return grid_generation(sync + 2 * row, lid);
}

/* Waits until every work-group of row ROW has arrived here, having
 * published its words (atomic_xchg by item 0 before it comes: item 0
 * arrives for the group); GENERATION from coop_generation. Every item of
 * the group returns after that, free to read the row's words
 * (volatile). */
inline void coop_wait(volatile __global uint *sync, uint row, uint lid,
                      uint generation)
{
    grid_arrive_wait(sync + 2 * row, coop_groups(), lid, generation);
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
