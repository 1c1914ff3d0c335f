/* storage_bf16.cl - the storage type of every kernel's buffers:
 * bfloat16, the top 16 bits of a float, through shifts (DTYPE_BF16).
 * The generator includes one storage_DTYPE.cl per kernel source.
 *
 * Arithmetic is float32 whatever the storage. Index arguments count
 * elements. load2/store2, load4/store4 and load8/store8 need an index
 * that is a multiple of 2, 4 or 8 and a buffer aligned to 16 bytes
 * (clCreateBuffer's are); load4v takes any index. load8/store8 move 16
 * bytes as one uint4, which a GPU does in one access (the half-width row
 * ops reach memory speed only so). */
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
inline float2 load2(const __global storage_t *p, size_t i)
{
    return as_float2(convert_uint2(vload2(i / 2, p)) << 16);
}
inline void store2(__global storage_t *p, size_t i, float2 v)
{
    vstore2((ushort2)(bf16_from_float(v.x), bf16_from_float(v.y)), i / 2, p);
}
/* Element 2k is the low half of word k (OpenCL devices are little-endian
 * where it matters here: the host writes the buffers in its own order). */
inline float8 load8(const __global storage_t *p, size_t i)
{
    const uint4 u = ((const __global uint4 *)p)[i / 8];
    const uint4 lo = u << 16;
    const uint4 hi = u & 0xffff0000u;
    return as_float8((uint8)(lo.x, hi.x, lo.y, hi.y, lo.z, hi.z, lo.w, hi.w));
}
inline uint bf16_pair(float a, float b)
{
    return (uint)bf16_from_float(a) | ((uint)bf16_from_float(b) << 16);
}
inline void store8(__global storage_t *p, size_t i, float8 v)
{
    const uint4 u = (uint4)(bf16_pair(v.s0, v.s1), bf16_pair(v.s2, v.s3),
                            bf16_pair(v.s4, v.s5), bf16_pair(v.s6, v.s7));
    ((__global uint4 *)p)[i / 8] = u;
}
#define load4v load4
