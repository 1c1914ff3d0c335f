/* storage_bf16.cl - the storage type of every kernel's buffers:
 * bfloat16, the top 16 bits of a float, through shifts (DTYPE_BF16).
 * The generator includes one storage_DTYPE.cl per kernel source.
 *
 * Arithmetic is float32 whatever the storage. Index arguments count
 * elements. load2/store2, load4/store4 and load8/store8 need an index
 * that is a multiple of 2, 4 or 8 and a buffer aligned to 16 bytes
 * (clCreateBuffer's are); load4v is load4. load8/store8 move 16
 * bytes as one uint4, which a GPU does in one access (the half-width row
 * ops reach memory speed only so). */
typedef ushort storage_t;

/* bf16_pair(a, b): a in the low half, b in the high half. Rounded to
 * nearest even; NaN stays a quiet NaN. BF16_CVT_PTX (NVIDIA, compute
 * capability 8.0+): one instruction a pair, where the shifts below take
 * about ten. */
#if defined(BF16_CVT_PTX)
inline uint bf16_pair(float a, float b)
{
    uint u;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(b), "f"(a));
    return u;
}
inline ushort bf16_from_float(float v)
{
    return (ushort)bf16_pair(v, 0.0f);
}
#else
inline ushort bf16_from_float(float v)
{
    uint u = as_uint(v);
    if (isnan(v)) {
        return (ushort)((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}
inline uint bf16_pair(float a, float b)
{
    return (uint)bf16_from_float(a) | ((uint)bf16_from_float(b) << 16);
}
#endif
inline float load1(const __global storage_t *p, size_t i)
{
    return as_float((uint)p[i] << 16);
}
inline void store1(__global storage_t *p, size_t i, float v)
{
    p[i] = bf16_from_float(v);
}
/* Element 2k is the low half of word k (OpenCL devices are little-endian
 * where it matters here: the host writes the buffers in its own order).
 * load2/4/8 and store2/4/8 each make one access of 4, 8 or 16 bytes:
 * vload4 and vstore4 promise the compiler only 2-byte alignment, so it
 * may move the halves one by one. */
/* Four elements as stored (2 words) to floats: a kernel may hold a
 * vector in half the registers from its load to its use. */
inline float4 unpack4(uint2 u)
{
    return as_float4((uint4)(u.x << 16, u.x & 0xffff0000u, u.y << 16,
                             u.y & 0xffff0000u));
}
inline uint2 load4_bits(const __global storage_t *p, size_t i)
{
    return ((const __global uint2 *)p)[i / 4];
}
inline float4 load4(const __global storage_t *p, size_t i)
{
    return unpack4(load4_bits(p, i));
}
inline float2 load2(const __global storage_t *p, size_t i)
{
    const uint u = ((const __global uint *)p)[i / 2];
    return as_float2((uint2)(u << 16, u & 0xffff0000u));
}
/* Eight elements as stored (4 words) to floats: a kernel may hold a
 * vector in half the registers from its load to its use. */
inline float8 unpack8(uint4 u)
{
    const uint4 lo = u << 16;
    const uint4 hi = u & 0xffff0000u;
    return as_float8(shuffle2(lo, hi, (uint8)(0, 4, 1, 5, 2, 6, 3, 7)));
}
inline uint4 load8_bits(const __global storage_t *p, size_t i)
{
    return ((const __global uint4 *)p)[i / 8];
}
inline float8 load8(const __global storage_t *p, size_t i)
{
    return unpack8(load8_bits(p, i));
}
#if defined(BF16_CVT_PTX)
inline void store2(__global storage_t *p, size_t i, float2 v)
{
    ((__global uint *)p)[i / 2] = bf16_pair(v.s0, v.s1);
}
inline void store4(__global storage_t *p, size_t i, float4 v)
{
    ((__global uint2 *)p)[i / 4] =
        (uint2)(bf16_pair(v.s0, v.s1), bf16_pair(v.s2, v.s3));
}
/* Eight floats rounded to bf16, as stored (unpack8's inverse). */
inline uint4 pack8(float8 v)
{
    return (uint4)(bf16_pair(v.s0, v.s1), bf16_pair(v.s2, v.s3),
                   bf16_pair(v.s4, v.s5), bf16_pair(v.s6, v.s7));
}
#else
/* The rounding of bf16_from_float on whole vectors, NaN by select rather
 * than a branch, so that a CPU compiler keeps the lanes together (a
 * branch per element leaves it scalar code); then the halves packed in
 * pairs, even elements low. */
inline uint2 bf16_round2(float2 v)
{
    const uint2 u = as_uint2(v);
    return select((u + 0x7fffu + ((u >> 16) & 1u)) >> 16, (u >> 16) | 0x40u,
                  as_uint2(isnan(v)));
}
inline uint4 bf16_round4(float4 v)
{
    const uint4 u = as_uint4(v);
    return select((u + 0x7fffu + ((u >> 16) & 1u)) >> 16, (u >> 16) | 0x40u,
                  as_uint4(isnan(v)));
}
inline uint8 bf16_round8(float8 v)
{
    const uint8 u = as_uint8(v);
    return select((u + 0x7fffu + ((u >> 16) & 1u)) >> 16, (u >> 16) | 0x40u,
                  as_uint8(isnan(v)));
}
inline void store2(__global storage_t *p, size_t i, float2 v)
{
    const uint2 r = bf16_round2(v);
    ((__global uint *)p)[i / 2] = r.s0 | (r.s1 << 16);
}
inline void store4(__global storage_t *p, size_t i, float4 v)
{
    const uint4 r = bf16_round4(v);
    ((__global uint2 *)p)[i / 4] = r.even | (r.odd << 16);
}
inline uint4 pack8(float8 v)
{
    const uint8 r = bf16_round8(v);
    return r.even | (r.odd << 16);
}
#endif
inline void store8(__global storage_t *p, size_t i, float8 v)
{
    ((__global uint4 *)p)[i / 8] = pack8(v);
}
#define load4v load4
