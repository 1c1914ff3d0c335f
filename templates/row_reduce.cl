/* row_reduce.cl - row geometry, vector access and the work-group sum shared
 * by the row ops (softmax.cl, rmsnorm.cl, layernorm.cl; include it after
 * specl_common.cl).
 *
 * A work-group of WG_SIZE x ROWS_PER_GROUP work-items handles
 * ROWS_PER_GROUP rows. The WG_SIZE items of a row split it into NVEC
 * vectors of VEC elements, item i taking vectors i, i + WG_SIZE, ... so that
 * neighbouring items touch neighbouring memory. With ROW_IN_REGISTERS each
 * item keeps its SLOTS vectors in a private array and x is read once;
 * otherwise the row is streamed and x is read twice.
 *
 * Macros (knobs; the generator defines every one):
 *   FEATURES          elements per row
 *   VEC               elements per global access: 1, 2 or 4; divides FEATURES
 *   WG_SIZE           work-items per row
 *   ROWS_PER_GROUP    rows per work-group
 *   ROW_IN_REGISTERS  1: each item holds its part of the row; 0: streamed
 * Derived:
 *   NVEC              vectors per row
 *   SLOTS             vectors per item, the last one maybe past the row end
 */
#ifndef FEATURES
#define FEATURES 4096
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef WG_SIZE
#define WG_SIZE 256
#endif
#ifndef ROWS_PER_GROUP
#define ROWS_PER_GROUP 1
#endif
#ifndef ROW_IN_REGISTERS
#define ROW_IN_REGISTERS 1
#endif

#ifndef NVEC
#define NVEC (FEATURES / VEC)
#endif
#ifndef SLOTS
#define SLOTS ((NVEC + WG_SIZE - 1) / WG_SIZE)
#endif

#if NVEC * VEC != FEATURES || SLOTS * WG_SIZE < NVEC
#error "inconsistent row geometry: VEC must divide FEATURES"
#endif

/* Whether slot k (vector j of the row) holds data: only the last slot can
 * overhang, and only when the items do not split the row evenly. */
#if NVEC % WG_SIZE == 0
#define SLOT_IN_ROW(k, j) 1
#else
#define SLOT_IN_ROW(k, j) ((k) + 1 < SLOTS || (j) < NVEC)
#endif

/* floatv: VEC floats, loaded and stored at element index i (a multiple of
 * VEC) through the storage type. */
#if VEC == 4
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
inline float hmax(floatv v) { return fmax(fmax(v.x, v.y), fmax(v.z, v.w)); }

#elif VEC == 2
typedef float2 floatv;
#if defined(DTYPE_F32)
inline floatv loadv(const __global storage_t *p, size_t i)
{
    return ((const __global float2 *)p)[i / 2];
}
inline void storev(__global storage_t *p, size_t i, floatv v)
{
    ((__global float2 *)p)[i / 2] = v;
}
#elif defined(DTYPE_F16)
inline floatv loadv(const __global storage_t *p, size_t i)
{
    return vload_half2(i / 2, p);
}
inline void storev(__global storage_t *p, size_t i, floatv v)
{
    vstore_half2_rte(v, i / 2, p);
}
#else
inline floatv loadv(const __global storage_t *p, size_t i)
{
    return as_float2(convert_uint2(vload2(i / 2, p)) << 16);
}
inline void storev(__global storage_t *p, size_t i, floatv v)
{
    vstore2((ushort2)(bf16_from_float(v.x), bf16_from_float(v.y)), i / 2, p);
}
#endif
inline float hsum(floatv v) { return v.x + v.y; }
inline float hmax(floatv v) { return fmax(v.x, v.y); }

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
#error "VEC must be 1, 2 or 4"
#endif

/* Element offset of this item's row. In a last group that overhangs the
 * rows, the extra items work on the last row (they must still reach every
 * barrier) and row_live() tells them not to store. */
inline size_t row_base(int rows)
{
#if ROWS_PER_GROUP > 1
    return (size_t)min((int)get_global_id(1), rows - 1) * FEATURES;
#else
    return (size_t)get_global_id(1) * FEATURES;
#endif
}

inline bool row_live(int rows)
{
#if ROWS_PER_GROUP > 1
    return (int)get_global_id(1) < rows;
#else
    return true;
#endif
}

/* Reductions over the WG_SIZE partials of a row in local memory take a few
 * wide steps instead of many halvings, to save barriers: each step leaves
 * red_next(n) of n partials, item i folding in every red_next(n)-th one. */
#define REDUCE_FANIN 8

inline uint red_next(uint n)
{
    return n > 2 * REDUCE_FANIN ? n / REDUCE_FANIN : 1;
}

/* The sum of v over the items of this row, returned to each of them. part
 * is the row's WG_SIZE floats of local memory; it is left holding the
 * result, so a second reduction in the same kernel needs other memory. */
inline float row_sum(__local float *part, uint lid, float v)
{
    part[lid] = v;
    for (uint n = WG_SIZE; n > 1; n = red_next(n)) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint step = red_next(n);
        if (lid < step) {
            float s = part[lid];
            for (uint k = lid + step; k < n; k += step) {
                s += part[k];
            }
            part[lid] = s;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return part[0];
}
