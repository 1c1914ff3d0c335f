/* storage_f16.cl - the storage type of every kernel's buffers: IEEE
 * half through vload_half/vstore_half, no cl_khr_fp16 needed (DTYPE_F16).
 * The generator includes one storage_DTYPE.cl per kernel source.
 *
 * Arithmetic is float32 whatever the storage. Index arguments count
 * elements. load2/store2, load4/store4 and load8/store8 need an index
 * that is a multiple of 2, 4 or 8 and a buffer aligned to 16 bytes
 * (clCreateBuffer's are); load4v is load4. load8/store8 move 16
 * bytes as one uint4, which a GPU does in one access (the half-width row
 * ops reach memory speed only so). */
typedef half storage_t;

inline float load1(const __global storage_t *p, size_t i)
{
    return vload_half(i, p);
}
inline void store1(__global storage_t *p, size_t i, float v)
{
    vstore_half_rte(v, i, p);
}
/* load2/4/8 and store2/4/8 each make one access of 4, 8 or 16 bytes,
 * converted in private memory: vload_halfN promises the compiler only
 * 2-byte alignment, so it may move the halves one by one. unpack4/8 take
 * the halves as load4_bits/load8_bits bring them: a kernel may hold a
 * vector in half the registers from its load to its use. */
inline float4 unpack4(uint2 u)
{
    return vload_half4(0, (const half *)&u);
}
inline uint2 load4_bits(const __global storage_t *p, size_t i)
{
    return ((const __global uint2 *)p)[i / 4];
}
inline float4 load4(const __global storage_t *p, size_t i)
{
    return unpack4(load4_bits(p, i));
}
inline void store4(__global storage_t *p, size_t i, float4 v)
{
    uint2 u;
    vstore_half4_rte(v, 0, (half *)&u);
    ((__global uint2 *)p)[i / 4] = u;
}
inline float2 load2(const __global storage_t *p, size_t i)
{
    const uint u = ((const __global uint *)p)[i / 2];
    return vload_half2(0, (const half *)&u);
}
inline void store2(__global storage_t *p, size_t i, float2 v)
{
    uint u;
    vstore_half2_rte(v, 0, (half *)&u);
    ((__global uint *)p)[i / 2] = u;
}
inline float8 unpack8(uint4 u)
{
    return vload_half8(0, (const half *)&u);
}
inline uint4 load8_bits(const __global storage_t *p, size_t i)
{
    return ((const __global uint4 *)p)[i / 8];
}
inline float8 load8(const __global storage_t *p, size_t i)
{
    return unpack8(load8_bits(p, i));
}
inline void store8(__global storage_t *p, size_t i, float8 v)
{
    uint4 u;
    vstore_half8_rte(v, 0, (half *)&u);
    ((__global uint4 *)p)[i / 8] = u;
}
#define load4v load4
