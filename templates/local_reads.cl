/* local_reads.cl - LDS_N(n)(d, p): copies N floats (1, 2 or 4) from local
 * memory at P, N-aligned, to the private array D in one access: the
 * register-tiled GEMMs' reads of their local tiles (main_tiles.cl,
 * lora_bwd_dx.cl). */
#define LDS_1(d, p) ((d)[0] = (p)[0])
#define LDS_2(d, p)                                                      \
    do {                                                                 \
        const float2 v_ = *(const __local float2 *)(p);                  \
        (d)[0] = v_.s0;                                                  \
        (d)[1] = v_.s1;                                                  \
    } while (0)
#define LDS_4(d, p)                                                      \
    do {                                                                 \
        const float4 v_ = *(const __local float4 *)(p);                  \
        (d)[0] = v_.s0;                                                  \
        (d)[1] = v_.s1;                                                  \
        (d)[2] = v_.s2;                                                  \
        (d)[3] = v_.s3;                                                  \
    } while (0)
#define LDS_CAT(n) LDS_##n
#define LDS_N(n) LDS_CAT(n)
