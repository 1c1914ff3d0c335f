/* specl_common.cl - storage types shared by every kernel template.
 *
 * Arithmetic is float32 whatever the storage: f16 goes through
 * vload_half/vstore_half (no cl_khr_fp16 needed), bf16 through shifts.
 *
 * Macros (the generator defines exactly one; f32 by default):
 *   DTYPE_F32   storage is float
 *   DTYPE_F16   storage is IEEE half
 *   DTYPE_BF16  storage is bfloat16 (the top 16 bits of a float)
 *
 * Index arguments count elements. load4/store4 need an index that is a
 * multiple of 4 and a buffer aligned to 16 bytes (clCreateBuffer's are). */
#if !defined(DTYPE_F16) && !defined(DTYPE_BF16) && !defined(DTYPE_F32)
#define DTYPE_F32 1
#endif

#if defined(DTYPE_F32)
typedef float storage_t;

inline float load1(const __global storage_t *p, size_t i) { return p[i]; }
inline void store1(__global storage_t *p, size_t i, float v) { p[i] = v; }
inline float4 load4(const __global storage_t *p, size_t i)
{
    return ((const __global float4 *)p)[i / 4];
}
inline void store4(__global storage_t *p, size_t i, float4 v)
{
    ((__global float4 *)p)[i / 4] = v;
}

#elif defined(DTYPE_F16)
typedef half storage_t;

inline float load1(const __global storage_t *p, size_t i)
{
    return vload_half(i, p);
}
inline void store1(__global storage_t *p, size_t i, float v)
{
    vstore_half_rte(v, i, p);
}
inline float4 load4(const __global storage_t *p, size_t i)
{
    return vload_half4(i / 4, p);
}
inline void store4(__global storage_t *p, size_t i, float4 v)
{
    vstore_half4_rte(v, i / 4, p);
}

#elif defined(DTYPE_BF16)
typedef ushort storage_t;

/* Round to nearest even; NaN stays a quiet NaN. */
inline ushort bf16_from_float(float v)
{
    uint u = as_uint(v);
    if (isnan(v)) {
        return (ushort)((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}
inline float load1(const __global storage_t *p, size_t i)
{
    return as_float((uint)p[i] << 16);
}
inline void store1(__global storage_t *p, size_t i, float v)
{
    p[i] = bf16_from_float(v);
}
inline float4 load4(const __global storage_t *p, size_t i)
{
    uint4 u = convert_uint4(vload4(i / 4, p));
    return as_float4(u << 16);
}
inline void store4(__global storage_t *p, size_t i, float4 v)
{
    ushort4 h = (ushort4)(bf16_from_float(v.x), bf16_from_float(v.y),
                          bf16_from_float(v.z), bf16_from_float(v.w));
    vstore4(h, i / 4, p);
}
#endif
