/* mma_rank.cl - what the tensor-core GEMMs (mma_tiles.cl, wgmma_tiles.cl)
 * share of their rank stretch: T's rows from MMA_RANK_PARTS partial sums
 * in the scratch, split into hi + lo halves of the storage type (float32
 * staged as it is: its products are three tf32 ones already). */

#if DTYPE_F32
/* Ranks per step of the rank stretch: up to TILE_K, a multiple of 8. */
#define RANK_STEP                                                        \
    (TILE_K < CEIL_DIV(MMA_RANK, 8) * 8 ? TILE_K : CEIL_DIV(MMA_RANK, 8) * 8)
#define RANK_DEPTH RANK_STEP
#else
/* Ranks per step of the rank stretch: hi halves then lo halves fill
 * 2 * RANK_STEP of a tile row's TILE_K columns. */
#define RANK_STEP                                                        \
    (TILE_K / 2 < CEIL_DIV(MMA_RANK, 8) * 8 ? TILE_K / 2                \
                                      : CEIL_DIV(MMA_RANK, 8) * 8)
#define RANK_DEPTH (2 * RANK_STEP) /* a multiple of 16 */
#endif

/* Row R, ranks J .. J + MMA_TQ - 1 of T (the first MMA_TQ lanes) from
 * its MMA_RANK_PARTS partial sums (0 outside). Every work-group of a row
 * of tiles sums the same partials, which one rank a load would make most
 * of the rank stretch's cost: four ranks go in one 16-byte load where r
 * allows. */
#if MMA_RANK % 4 == 0
#define MMA_TQ 4
#else
#define MMA_TQ 1
#endif
inline float4 mma_t(const __global float *t, uint rows, uint r, uint j)
{
    float4 sum = (float4)0.0f;
    if (r < rows && j < MMA_RANK) {
        const __global float *p = t + (size_t)r * (MMA_RANK_PARTS * MMA_RANK) + j;
#pragma unroll
        for (int s = 0; s < MMA_RANK_PARTS; s++) {
#if MMA_TQ == 4
            sum += vload4(0, p + s * MMA_RANK);
#else
            sum.s0 += p[s * MMA_RANK];
#endif
        }
    }
    return sum;
}

/* Item I of a rank step's staging of T, for the tile's row
 * I / (RANK_STEP / MMA_TQ) and MMA_TQ ranks from J: T's sums from rank
 * RS on, rows from ROW0 (mma_t: zero past r and the rows). */
inline float4 mma_rank_t_load(const __global float *t, uint rows, uint row0,
                              uint rs, uint i)
{
    uint r = i / (RANK_STEP / MMA_TQ);
    uint j = i % (RANK_STEP / MMA_TQ) * MMA_TQ;
    return mma_t(t, rows, row0 + r, rs + j);
}

#if DTYPE_F32
/* Stores item I's SUMS into XS, an X tile of TILE_K floats a row whose
 * 16-byte chunks mma_swizzle places, in columns [0, RANK_STEP). */
inline void mma_rank_t_store(__local float *xs, uint i, float4 sums)
{
    uint r = i / (RANK_STEP / MMA_TQ);
    uint j = i % (RANK_STEP / MMA_TQ) * MMA_TQ;
    __local float *at =
        xs + r * TILE_K + mma_swizzle(r, j / 4, TILE_K / 4) * 4 + j % 4;
#if MMA_TQ == 4
    vstore4(sums, 0, at);
#else
    at[0] = sums.s0;
#endif
}
#else
/* Stores item I's SUMS into XS, an X tile of TILE_K halves a row whose
 * 16-byte chunks mma_swizzle places: hi halves in columns [0, RANK_STEP),
 * lo halves (the rest, rounded again) in [RANK_STEP, RANK_DEPTH). */
inline void mma_rank_t_store(__local ushort *xs, uint i, float4 sums)
{
    uint r = i / (RANK_STEP / MMA_TQ);
    uint j = i % (RANK_STEP / MMA_TQ) * MMA_TQ;
    float v[4];
    vstore4(sums, 0, v);
    /* RANK_STEP is a multiple of 8: the MMA_TQ ranks share a chunk */
    uint c_hi = j / 8, c_lo = (RANK_STEP + j) / 8;
    __local ushort *hi_at =
        xs + r * TILE_K + mma_swizzle(r, c_hi, TILE_K / 8) * 8 + j % 8;
    __local ushort *lo_at =
        xs + r * TILE_K + mma_swizzle(r, c_lo, TILE_K / 8) * 8 + j % 8;
#pragma unroll
    for (int e = 0; e < MMA_TQ; e++) {
        ushort hi, lo;
        mma_split(v[e], &hi, &lo);
        hi_at[e] = hi;
        lo_at[e] = lo;
    }
}
#endif
