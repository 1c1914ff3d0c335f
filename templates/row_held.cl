/* row_held.cl - a row's vectors held in registers from their load to
 * their uses, in the fewest registers: as stored where that takes fewer
 * (bf16 in vectors of 4 or 8: the packed words, half the registers of
 * floats; a shift or a mask an element where used), else as floats.
 * Fewer registers an item leave room for more work-groups on a compute
 * unit. Include after row_reduce.cl (floatv, VEC, SLOTS). */

/* rowv: one such vector; ROWV_PACKED whether it is the stored words. */
#if defined(DTYPE_BF16) && VEC == 4
#define ROWV_PACKED 1
typedef uint2 rowv;
inline rowv load_rowv(const __global storage_t *p, size_t i)
{
    return load4_bits(p, i);
}
inline floatv rowv_floats(rowv h)
{
    return unpack4(h);
}
#elif defined(DTYPE_BF16) && VEC == 8
#define ROWV_PACKED 1
typedef uint4 rowv;
inline rowv load_rowv(const __global storage_t *p, size_t i)
{
    return load8_bits(p, i);
}
inline floatv rowv_floats(rowv h)
{
    return unpack8(h);
}
#else
#define ROWV_PACKED 0
typedef floatv rowv;
inline rowv load_rowv(const __global storage_t *p, size_t i)
{
    return loadv(p, i);
}
inline floatv rowv_floats(rowv h)
{
    return h;
}
#endif

/* This item's SLOTS vectors of the row at P, as rowv. */
inline void load_row_held(rowv out[SLOTS], const __global storage_t *p,
                          uint lid)
{
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            out[k] = load_rowv(p, j * VEC);
        }
    }
}
