/* ceilings.cl - what the device can do at best: the floor of every
 * benchmark is counted against copy4 and fma_peak; read4 and write4 are the
 * one-way stream rates that explain a kernel missing its floor. */

/* Copies n4 float4 values, one per work-item: bytes moved = 2 * 16 * n4. */
__kernel void copy4(__global const float4 *src, __global float4 *dst,
                    int n4)
{
    int i = get_global_id(0);
    if (i < n4) {
        dst[i] = src[i];
    }
}

/* Reads READ_PER_ITEM float4 values per work-item (measure.c defines it):
 * each group owns a block of local size * READ_PER_ITEM values and at step
 * j its items read neighbouring values (coalesced); the fixed, unrolled
 * count keeps that many loads in flight and lets PoCL vectorise across
 * items. One float, the sum, is stored so that the loads are kept: bytes
 * moved = 16 * READ_PER_ITEM * global size (the stores are not counted). */
__kernel void read4(__global const float4 *src, __global float *dst)
{
    int l = get_local_id(0), ls = get_local_size(0);
    int base = get_group_id(0) * ls * READ_PER_ITEM;
    float4 s = (float4)(0.0f);
#pragma unroll
    for (int j = 0; j < READ_PER_ITEM; j++) {
        s += src[base + j * ls + l];
    }
    dst[get_global_id(0)] = s.x + s.y + s.z + s.w;
}

/* Writes n4 float4 values computed from their index, one per work-item as
 * copy4 does, reading nothing: bytes moved = 16 * n4. */
__kernel void write4(__global float4 *dst, int n4)
{
    int i = get_global_id(0);
    if (i < n4) {
        float f = (float)i;
        dst[i] = (float4)(f, f + 1.0f, f + 2.0f, f + 3.0f);
    }
}

/* 8 independent float16 multiply-add chains, FMA_ITERS rounds: 2 * 16 * 8 *
 * FMA_ITERS flops per work-item. Wide vectors reach a CPU's SIMD units
 * (implementations vectorise little across work-items around a loop); a
 * GPU splits them into scalar chains. The sum is stored so that nothing is
 * optimised away. */
#define FMA_ITERS 256
__kernel void fma_peak(__global float *out, float a, float b)
{
    float16 v0 = (float16)(get_global_id(0)), v1 = v0 + 1.0f,
            v2 = v0 + 2.0f, v3 = v0 + 3.0f, v4 = v0 + 4.0f, v5 = v0 + 5.0f,
            v6 = v0 + 6.0f, v7 = v0 + 7.0f;
    for (int i = 0; i < FMA_ITERS; i++) {
        v0 = mad(v0, a, b); v1 = mad(v1, a, b); v2 = mad(v2, a, b);
        v3 = mad(v3, a, b); v4 = mad(v4, a, b); v5 = mad(v5, a, b);
        v6 = mad(v6, a, b); v7 = mad(v7, a, b);
    }
    float16 s = v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;
    out[get_global_id(0)] = s.s0 + s.s1 + s.s2 + s.s3 + s.s4 + s.s5 + s.s6 +
                            s.s7 + s.s8 + s.s9 + s.sa + s.sb + s.sc + s.sd +
                            s.se + s.sf;
}
