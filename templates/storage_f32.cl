/* storage_f32.cl - the storage type of every kernel's buffers: float
 * (DTYPE_F32).
 * The generator includes one storage_DTYPE.cl per kernel source.
 *
 * Arithmetic is float32 whatever the storage. Index arguments count
 * elements. load2/store2, load4/store4 and load8/store8 need an index
 * that is a multiple of 2, 4 or 8 and a buffer aligned to 16 bytes
 * (clCreateBuffer's are); load4v takes any index. */
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
inline float2 load2(const __global storage_t *p, size_t i)
{
    return ((const __global float2 *)p)[i / 2];
}
inline void store2(__global storage_t *p, size_t i, float2 v)
{
    ((__global float2 *)p)[i / 2] = v;
}
inline float8 load8(const __global storage_t *p, size_t i)
{
    return (float8)(load4(p, i), load4(p, i + 4));
}
inline void store8(__global storage_t *p, size_t i, float8 v)
{
    store4(p, i, v.lo);
    store4(p, i + 4, v.hi);
}
/* vload4 rather than load4's float4 pointer: ptxas gives lora_xa fewer
 * registers this way, so more of its work-groups fit a compute unit. */
inline float4 load4v(const __global storage_t *p, size_t i)
{
    return vload4(0, p + i);
}
