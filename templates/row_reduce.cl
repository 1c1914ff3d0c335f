/* row_reduce.cl - row geometry, vector access and the work-group sum shared
 * by the row ops (softmax.cl, rmsnorm.cl, layernorm.cl; include it after
 * storage_DTYPE.cl).
 *
 * A work-group of WG_SIZE x ROWS_PER_GROUP work-items handles
 * ROWS_PER_GROUP rows. The WG_SIZE items of a row split it into NVEC
 * vectors of VEC elements, item i taking vectors i, i + WG_SIZE, ... so that
 * neighbouring items touch neighbouring memory. With ROW_IN_REGISTERS each
 * item keeps its SLOTS vectors in a private array and x is read once;
 * otherwise the row is streamed: x is read again for each pass.
 *
 * Macros (knobs; the generator defines every one):
 *   FEATURES          elements per row
 *   VEC               elements per global access: 1, 2, 4, 8 or 16; divides
 *                     FEATURES
 *   WG_SIZE           work-items per row, a power of two
 *   ROWS_PER_GROUP    rows per work-group
 *   ROW_IN_REGISTERS  1: each item holds its part of the row; 0: streamed
 * Derived:
 *   NVEC              vectors per row
 *   SLOTS             vectors per item, the last one maybe past the row end
 *   SUM_BLOCK         streamed rows: vectors per item summed apart
 *                     before they join a compensated total (long sums, below)
 */
/* Every value comes from the plan (gen/op_rows.c), which keeps specl's
 * knob defaults in one place. */
#if !defined(FEATURES) || !defined(VEC) || !defined(WG_SIZE) ||            \
    !defined(ROWS_PER_GROUP) || !defined(ROW_IN_REGISTERS) ||             \
    !defined(NVEC) || !defined(SLOTS)
#error "row_reduce.cl: a macro of the row ops' plan is missing"
#endif

#if !ROW_IN_REGISTERS && !defined(SUM_BLOCK)
#error "row_reduce.cl: a streamed row needs SUM_BLOCK from the plan"
#endif

#if NVEC * VEC != FEATURES || SLOTS * WG_SIZE < NVEC
#error "inconsistent row geometry: VEC must divide FEATURES"
#endif
#if (WG_SIZE & (WG_SIZE - 1)) != 0
#error "WG_SIZE must be a power of two"
#endif

/* Whether slot k (vector j of the row) holds data: only the last slot can
 * overhang, and only when the items do not split the row evenly. */
#if NVEC % WG_SIZE == 0
#define SLOT_IN_ROW(k, j) ((void)(j), 1)
#else
#define SLOT_IN_ROW(k, j) ((k) + 1 < SLOTS || (j) < NVEC)
#endif

/* max() is undefined for infinities and fmax() spends instructions on NaN
 * (which reaches the output through exp() anyway): a plain compare keeps
 * -inf (masked) inputs right and is one instruction, vectors included. */
#define MAX2(a, b) ((a) > (b) ? (a) : (b))

/* floatv: VEC floats, loaded and stored at element index i (a multiple of
 * VEC) through the storage type. VEC 8 is one 16-byte access for f16 and
 * bf16 on GPUs; VEC 8 and 16 in float32 are for CPUs, where one work-item
 * per row with wide vectors runs best. */
#if VEC == 16
typedef float16 floatv;
#if defined(DTYPE_BF16) && !defined(BF16_CVT_PTX)
/* bf16 without the PTX conversion (CPUs): the 16 halves widened by one
 * conversion and a shift, which PoCL keeps in vector registers (load8
 * shuffles words apart); stores go through store8. */
inline floatv loadv(const __global storage_t *p, size_t i)
{
    return as_float16(convert_uint16(vload16(0, p + i)) << 16);
}
#else
inline floatv loadv(const __global storage_t *p, size_t i)
{
    return (float16)(load8(p, i), load8(p, i + 8));
}
#endif
inline void storev(__global storage_t *p, size_t i, floatv v)
{
    store8(p, i, v.lo);
    store8(p, i + 8, v.hi);
}
inline float hsum(floatv v)
{
    const float8 a = v.lo + v.hi;
    const float4 b = a.lo + a.hi;
    return (b.x + b.y) + (b.z + b.w);
}
inline float hmax(floatv v)
{
    const float8 a = MAX2(v.lo, v.hi);
    const float4 b = MAX2(a.lo, a.hi);
    return MAX2(MAX2(b.x, b.y), MAX2(b.z, b.w));
}

#elif VEC == 8
typedef float8 floatv;
inline floatv loadv(const __global storage_t *p, size_t i)
{
    return load8(p, i);
}
inline void storev(__global storage_t *p, size_t i, floatv v)
{
    store8(p, i, v);
}
inline float hsum(floatv v)
{
    const float4 b = v.lo + v.hi;
    return (b.x + b.y) + (b.z + b.w);
}
inline float hmax(floatv v)
{
    const float4 b = MAX2(v.lo, v.hi);
    return MAX2(MAX2(b.x, b.y), MAX2(b.z, b.w));
}

#elif VEC == 4
typedef float4 floatv;
inline floatv loadv(const __global storage_t *p, size_t i)
{
    return load4(p, i);
}
inline void storev(__global storage_t *p, size_t i, floatv v)
{
    store4(p, i, v);
}
inline float hsum(floatv v) { return (v.x + v.y) + (v.z + v.w); }
inline float hmax(floatv v) { return MAX2(MAX2(v.x, v.y), MAX2(v.z, v.w)); }

#elif VEC == 2
typedef float2 floatv;
inline floatv loadv(const __global storage_t *p, size_t i)
{
    return load2(p, i);
}
inline void storev(__global storage_t *p, size_t i, floatv v)
{
    store2(p, i, v);
}
inline float hsum(floatv v) { return v.x + v.y; }
inline float hmax(floatv v) { return MAX2(v.x, v.y); }

#elif VEC == 1
typedef float floatv;
inline floatv loadv(const __global storage_t *p, size_t i)
{
    return load1(p, i);
}
inline void storev(__global storage_t *p, size_t i, floatv v)
{
    store1(p, i, v);
}
inline float hsum(floatv v) { return v; }
inline float hmax(floatv v) { return v; }

#else
#error "VEC must be 1, 2, 4, 8 or 16"
#endif

/* Long sums. An item that streams a long row (all of it on CPUs, where
 * WG_SIZE is 1) must not add thousands of terms into one float per lane:
 * the rounding errors of a float32 running sum grow with its length
 * (4e-5 relative for the 50257 exponentials of a softmax row; all of a
 * variance that cancels). So streamed loops walk the item's vectors in
 * blocks of SUM_BLOCK (j0 = lid, lid + BLOCK_STRIDE, ..., each block up
 * to block_end(j0) in steps of WG_SIZE), sum each block into a fresh
 * accumulator and add that into a compensated total: csum_add keeps in
 * *err what rounding took from *sum (Neumaier's variant of Kahan's sum,
 * which stays right when a block outweighs the total). The error is that
 * of a sum of SUM_BLOCK terms whatever the row's length, for a few
 * operations per block. Kernels that stream rows only now and then (a
 * rescaled pass) have them too where the plan defines SUM_BLOCK. */
#if defined(SUM_BLOCK)
#define BLOCK_STRIDE (SUM_BLOCK * WG_SIZE)

inline uint block_end(uint j0)
{
    return min(j0 + BLOCK_STRIDE, (uint)NVEC);
}
#endif

inline void csum_add(floatv *sum, floatv *err, floatv b)
{
    const floatv t = *sum + b;
    *err += fabs(*sum) >= fabs(b) ? (*sum - t) + b : (b - t) + *sum;
    *sum = t;
}

/* csum_add for one float (VEC 1 aside, floatv is a vector). */
inline void csum_add1(float *sum, float *err, float b)
{
    const float t = *sum + b;
    *err += fabs(*sum) >= fabs(b) ? (*sum - t) + b : (b - t) + *sum;
    *sum = t;
}

/* Element offset of this item's row. In a last group that overhangs the
 * rows, the extra items work on the last row (they must still reach every
 * barrier) and row_live() tells them not to store. */
inline size_t row_base(int rows)
{
#if ROWS_PER_GROUP > 1
    return (size_t)min((int)get_global_id(1), rows - 1) * FEATURES;
#else
    (void)rows;
    return (size_t)get_global_id(1) * FEATURES;
#endif
}

/* Row parameters (gamma, beta: FEATURES values each). When a work-item's
 * share is small and the row sits in registers, it loads its share with
 * the row (load_param), so that it travels during the reductions; then
 * PARAM_AT(reg, p, k, j) is slot k of REG, else vector j of P, loaded
 * where it is used. */
#if ROW_IN_REGISTERS && SLOTS * VEC <= 16
#define PARAMS_EARLY 1
#define PARAM_AT(reg, p, k, j) ((reg)[k])
#else
#define PARAMS_EARLY 0
#define PARAM_AT(reg, p, k, j) loadv((p), (size_t)(j) * VEC)
#endif

inline void load_param(floatv out[SLOTS], const __global storage_t *p,
                       uint lid)
{
#pragma unroll
    for (uint k = 0; k < SLOTS; k++) {
        const uint j = lid + k * WG_SIZE;
        if (SLOT_IN_ROW(k, j)) {
            out[k] = loadv(p, j * VEC);
        }
    }
}

inline bool row_live(int rows)
{
#if ROWS_PER_GROUP > 1
    return (int)get_global_id(1) < rows;
#else
    (void)rows;
    return true;
#endif
}

/* Reductions over the WG_SIZE partials of a row in local memory take a few
 * wide steps instead of log2(WG_SIZE) halvings, to save barriers: a step
 * over n partials leaves step = RED_NEXT(n) of them, item i < step folding
 * partials i + step, i + 2 * step, ... into its own (neighbouring items
 * read neighbouring words). WG_SIZE is a power of two, so each step's
 * fan-in n / step is a constant and its loop unrolls. A row of one item
 * (WG_SIZE 1, as CPUs like) needs no reduction and no barrier. */
#define RED_NEXT(n) ((n) > 16 ? (n) / 8 : 1)

/* GROUP_REDUCTION(NAME, T, FOLD, ITEMS) defines T NAME(__local T *part,
 * uint lid, T v): v folded by FOLD(a, b) over ITEMS work-items (a power
 * of two) through their ITEMS words of PART, returned to each of them, in
 * the same steps whatever the timing. PART is left holding the result,
 * so a second reduction in the same kernel needs other memory (or a
 * barrier first). ROW_REDUCTION(NAME, T, FOLD) is one over the items of
 * a row (WG_SIZE); a row of one item (WG_SIZE 1, as CPUs like) needs no
 * reduction and no barrier. */
#define GROUP_REDUCTION(NAME, T, FOLD, ITEMS)                             \
    inline T NAME(__local T *part, uint lid, T v)                         \
    {                                                                     \
        part[lid] = v;                                                    \
        for (uint n = (ITEMS); n > 1; n = RED_NEXT(n)) {                  \
            barrier(CLK_LOCAL_MEM_FENCE);                                 \
            const uint step = RED_NEXT(n);                                \
            if (lid < step) {                                             \
                T acc = part[lid];                                        \
                for (uint k = 1; k < n / step; k++) {                     \
                    acc = FOLD(acc, part[lid + k * step]);                \
                }                                                         \
                part[lid] = acc;                                          \
            }                                                             \
        }                                                                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                     \
        return part[0];                                                   \
    }
#define GROUP_REDUCTION_ONE(NAME, T)                                      \
    inline T NAME(__local T *part, uint lid, T v)                         \
    {                                                                     \
        (void)part;                                                       \
        (void)lid;                                                        \
        return v;                                                         \
    }
#if WG_SIZE == 1
#define ROW_REDUCTION(NAME, T, FOLD) GROUP_REDUCTION_ONE(NAME, T)
#else
#define ROW_REDUCTION(NAME, T, FOLD) GROUP_REDUCTION(NAME, T, FOLD, WG_SIZE)
#endif

#define ADD2(a, b) ((a) + (b))

/* row_sum(part, lid, v): the sum of v over the items of this row. */
ROW_REDUCTION(row_sum, float, ADD2)

#ifdef SPLIT_GROUPS
/* The split path of the row ops whose plan has one (gen/op_rows_split.c):
 * chunk c of a row is its vectors c * SPLIT_VECS up to chunk_end(c), a
 * work-group of SPLIT_WG items each; the plan makes every chunk hold at
 * least one vector. Macros:
 *   SPLIT_GROUPS  work-groups per row (chunks), at most NVEC
 *   SPLIT_VECS    vectors per chunk; the last chunk may hold fewer
 *   SPLIT_WG      work-items per split work-group, a power of two */
#if !defined(SPLIT_VECS) || !defined(SPLIT_WG) || !defined(SUM_BLOCK)
#error "split path: SPLIT_VECS, SPLIT_WG and SUM_BLOCK are missing"
#endif
#if SPLIT_GROUPS * SPLIT_VECS < NVEC || (SPLIT_GROUPS - 1) * SPLIT_VECS >= NVEC
#error "split path: SPLIT_GROUPS chunks of SPLIT_VECS must cover NVEC"
#endif
#if (SPLIT_WG & (SPLIT_WG - 1)) != 0
#error "SPLIT_WG must be a power of two"
#endif

inline uint chunk_end(uint c)
{
    return min((c + 1) * SPLIT_VECS, (uint)NVEC);
}

/* A barrier among the items of a split work-group, and their sums and
 * maxima. */
#if SPLIT_WG > 1
#define SPLIT_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
GROUP_REDUCTION(split_sum, float, ADD2, SPLIT_WG)
GROUP_REDUCTION(split_max, float, MAX2, SPLIT_WG)
#else
#define SPLIT_BARRIER() ((void)0)
GROUP_REDUCTION_ONE(split_sum, float)
GROUP_REDUCTION_ONE(split_max, float)
#endif
#endif
