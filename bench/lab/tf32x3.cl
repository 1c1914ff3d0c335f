/* tf32x3.cl - a float32 GEMM on tf32 tensor cores, C = A * B, A M x K
 * and C M x N row-major; B K x N (k-major) or, with B_NK, N x K (its
 * rows the product's columns, as PyTorch's weights and W^T of a K x N W
 * lie). Each float v enters as hi (its tf32 part: the low 13 bits of
 * its mantissa cleared) and lo = v - hi; with PRODUCTS 3 each product is
 * lo*hi + hi*lo + hi*hi (float32's accuracy), with 1 hi*hi alone (tf32's).
 *
 * A work-group computes BM x BN of C with (BM / WM) x (BN / WN) warps,
 * each WM x WN in m16n8k8 products; the K steps of BK go into local
 * memory by cp.async STAGES - 1 steps ahead, 16-byte chunks XOR-swizzled.
 * Fragments: A's and an n-major B's by ldmatrix (a lane's 32-bit word of
 * an 8 x 8 b16 matrix is the tf32 fragment's element); a k-major B's by
 * 32-bit loads, its chunks swizzled so a warp's 32 loads hit 32 banks.
 * M, N, K multiples of the tiles (the lab's shapes). */

#define WARPS_N (BN / WN)
#define THREADS (32 * (BM / WM) * WARPS_N)
#define TM (WM / 16)
#define TN (WN / 8)
#define A_CH (BK / 4)
#if B_NK
#define B_CH (BK / 4)
#define B_ROWS BN
#else
#define B_CH (BN / 4)
#define B_ROWS BK
#endif
#define A_STAGE (BM * BK)
#define B_STAGE (BK * BN)

inline uint swz(uint r, uint c, uint cpr)
{
    return cpr >= 8 ? c ^ (r % 8) : c ^ ((r / (8 / cpr)) % cpr);
}

/* k-major B: rows t = 0..3 of a fragment load land 2 chunks apart. */
inline uint swz_kn(uint r, uint c)
{
    return c ^ ((r % 4) * 2);
}

inline void cp16(__local float *dst, const __global float *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"l"(dst),
                 "l"(src)
                 : "memory");
}

inline void load_step(__local float *as, __local float *bs,
                      const __global float *a, const __global float *b,
                      uint row0, uint col0, uint k0, uint tid)
{
#pragma unroll
    for (uint i = tid; i < BM * A_CH; i += THREADS) {
        uint r = i / A_CH, c = i % A_CH;
        cp16(as + r * BK + swz(r, c, A_CH) * 4,
             a + (size_t)(row0 + r) * K + k0 + c * 4);
    }
#pragma unroll
    for (uint i = tid; i < B_ROWS * B_CH; i += THREADS) {
        uint r = i / B_CH, c = i % B_CH;
#if B_NK
        cp16(bs + r * BK + swz(r, c, B_CH) * 4,
             b + (size_t)(col0 + r) * K + k0 + c * 4);
#else
        cp16(bs + r * BN + swz_kn(r, c) * 4,
             b + (size_t)(k0 + r) * N + col0 + c * 4);
#endif
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

inline void mma8(float d[4], uint a0, uint a1, uint a2, uint a3, uint b0,
                 uint b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

inline void ldm4(__local float *p, uint *r0, uint *r1, uint *r2, uint *r3)
{
    uint x0, x1, x2, x3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                 "{%0,%1,%2,%3}, [%4];"
                 : "=r"(x0), "=r"(x1), "=r"(x2), "=r"(x3)
                 : "l"(p));
    *r0 = x0;
    *r1 = x1;
    *r2 = x2;
    *r3 = x3;
}

#define HI(v) ((v) & 0xffffe000u)
#define LO(v) (as_uint(as_float(v) - as_float(HI(v))))

inline void step(__local float *as, __local float *bs, uint warp_m,
                 uint warp_n, uint lane, float acc[TM][TN][4])
{
#if PRODUCTS == 5
    /* the step's products summed apart, then added in float */
    float st[TM][TN][4];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                st[i][j][e] = 0.0f;
#endif
#pragma unroll
    for (uint kk = 0; kk < BK; kk += 8) {
        uint a[TM][4], b[TN][2];
        uint row = (lane % 8) + ((lane >> 3) & 1) * 8, ch = lane >> 4;
#pragma unroll
        for (int i = 0; i < TM; i++) {
            uint r = warp_m * WM + i * 16 + row, c = kk / 4 + ch;
            ldm4(as + r * BK + swz(r, c, A_CH) * 4, &a[i][0], &a[i][1],
                 &a[i][2], &a[i][3]);
        }
#if B_NK
        uint bn = (lane % 8) + (lane >> 4) * 8, bc = (lane >> 3) & 1;
#pragma unroll
        for (int j = 0; j < TN / 2; j++) {
            uint r = warp_n * WN + j * 16 + bn, c = kk / 4 + bc;
            ldm4(bs + r * BK + swz(r, c, B_CH) * 4, &b[2 * j][0],
                 &b[2 * j][1], &b[2 * j + 1][0], &b[2 * j + 1][1]);
        }
#else
        uint g = lane / 4, t = lane % 4;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            uint n = warp_n * WN + j * 8 + g;
            uint r0 = kk + t, r1 = kk + t + 4;
            b[j][0] = as_uint(bs[r0 * BN + swz_kn(r0, n / 4) * 4 + n % 4]);
            b[j][1] = as_uint(bs[r1 * BN + swz_kn(r1, n / 4) * 4 + n % 4]);
        }
#endif
#pragma unroll
        for (int i = 0; i < TM; i++) {
#pragma unroll
            for (int j = 0; j < TN; j++) {
#if PRODUCTS == 4
                /* the slice's products summed apart, then added in
                 * float: the tensor cores' sums truncate, and over a
                 * long K that loss accumulates */
                float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#elif PRODUCTS == 5
#define d st[i][j]
#else
#define d acc[i][j]
#endif
#if PRODUCTS >= 3
                mma8(d, LO(a[i][0]), LO(a[i][1]), LO(a[i][2]),
                     LO(a[i][3]), HI(b[j][0]), HI(b[j][1]));
                mma8(d, HI(a[i][0]), HI(a[i][1]), HI(a[i][2]),
                     HI(a[i][3]), LO(b[j][0]), LO(b[j][1]));
#endif
                mma8(d, HI(a[i][0]), HI(a[i][1]), HI(a[i][2]),
                     HI(a[i][3]), HI(b[j][0]), HI(b[j][1]));
#if PRODUCTS == 4
                for (int e = 0; e < 4; e++)
                    acc[i][j][e] += d[e];
#else
#undef d
#endif
            }
        }
    }
#if PRODUCTS == 5
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] += st[i][j][e];
#endif
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1))) void
tf32_gemm(const __global float *restrict a, const __global float *restrict b,
          __global float *restrict c)
{
    __local float as[STAGES * A_STAGE] __attribute__((aligned(128)));
    __local float bs[STAGES * B_STAGE] __attribute__((aligned(128)));
    uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    uint warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    uint row0 = get_group_id(1) * BM, col0 = get_group_id(0) * BN;
    float acc[TM][TN][4];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;
    const uint steps = K / BK;
    for (uint s = 0; s < STAGES - 1; s++)
        load_step(as + s * A_STAGE, bs + s * B_STAGE, a, b, row0, col0,
                  s * BK, tid);
    for (uint kt = 0; kt < steps; kt++) {
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        uint next = kt + STAGES - 1, at = next % STAGES;
        if (next < steps)
            load_step(as + at * A_STAGE, bs + at * B_STAGE, a, b, row0, col0,
                      next * BK, tid);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
        at = kt % STAGES;
        step(as + at * A_STAGE, bs + at * B_STAGE, warp_m, warp_n, lane, acc);
    }
    uint g = lane / 4, t2 = (lane % 4) * 2;
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                uint r = row0 + warp_m * WM + i * 16 + g + h * 8;
                uint cc = col0 + warp_n * WN + j * 8 + t2;
                vstore2((float2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]), 0,
                        c + (size_t)r * N + cc);
            }
}
