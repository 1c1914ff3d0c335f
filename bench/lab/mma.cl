/* mma.cl - a candidate tensor-core GEMM for NVIDIA (sm_80+), Y = X*W in
 * bf16 or f16 storage with f32 accumulation, through inline PTX:
 * cp.async stages tiles of X and W in local memory, ldmatrix loads the
 * fragments (.trans for W, stored k-major), mma.sync m16n8k16 multiplies.
 *
 * Macros: M, N, K (multiples of the block tile here), BM, BN, BK (block
 * tile), WM, WN (warp tile), STAGES (cp.async pipeline depth), HALF_F16
 * (f16 instead of bf16), Y_HALF (store Y in the storage type, else f32),
 * PENDING (STAGES - 2: the groups still in flight when a tile is used).
 * The copies: CA (through L1), PREFETCH (L2 hint), FAST_COPY (a base
 * address per work-item). Taking the loop apart (results wrong, timings
 * only): NO_LOAD (no copies in the loop), PEAK (fragments loaded once),
 * NO_MMA, LOAD_ONLY, SAME_TILE (every work-group reads the same tiles);
 * SINGLE_FRAG loads each slice's fragments right before its products.
 */
#define WARPS_M (BM / WM)
#define WARPS_N (BN / WN)
#define THREADS (32 * WARPS_M * WARPS_N)
#define MT (WM / 16) /* m16 tiles per warp */
#define NT (WN / 8)  /* n8 tiles per warp */
#define X_CHUNKS (BK / 8) /* 16-byte chunks per row of the X tile */
#define W_CHUNKS (BN / 8) /* 16-byte chunks per row of the W tile */
#define STR_(x) #x
#define STR(x) STR_(x)

#ifdef HALF_F16
#define MMA_TYPE "f16"
#else
#define MMA_TYPE "bf16"
#endif

/* XOR swizzle of 16-byte chunk C in row R of a tile with CPR chunks per
 * row: the 8 rows that one ldmatrix phase reads land on 8 distinct bank
 * groups (a 128-byte line holds 8 chunks). */
inline uint swizzle(uint r, uint c, uint cpr)
{
    return cpr >= 8 ? c ^ (r % 8) : c ^ ((r / (8 / cpr)) % cpr);
}

/* Lab: CA copies through L1 (.ca), else L2 only (.cg); PREFETCH adds the
 * L2::128B prefetch hint. */
#ifdef CA
#define CP_CACHE "ca"
#else
#define CP_CACHE "cg"
#endif
#ifdef PREFETCH
#define CP_HINT ".L2::128B"
#else
#define CP_HINT ""
#endif
inline void copy_async(__local ushort *dst, __global const ushort *src)
{
    asm volatile("cp.async." CP_CACHE ".shared.global" CP_HINT
                 " [%0], [%1], 16;" ::"l"(dst),
                 "l"(src)
                 : "memory");
}

inline void load_stage(__local ushort *xs, __local ushort *ws,
                       __global const ushort *x, __global const ushort *w,
                       uint row0, uint col0, uint k0, uint tid)
{
    for (uint i = tid; i < BM * X_CHUNKS; i += THREADS) {
        uint r = i / X_CHUNKS, c = i % X_CHUNKS;
        copy_async(xs + r * BK + swizzle(r, c, X_CHUNKS) * 8,
                   x + (size_t)(row0 + r) * K + k0 + c * 8);
    }
    for (uint i = tid; i < BK * W_CHUNKS; i += THREADS) {
        uint r = i / W_CHUNKS, c = i % W_CHUNKS;
        copy_async(ws + r * BN + swizzle(r, c, W_CHUNKS) * 8,
                   w + (size_t)(k0 + r) * N + col0 + c * 8);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

#ifdef FAST_COPY
/* lab: each work-item's chunks sit at fixed strides, so the addresses are
 * a base per work-item plus compile-time offsets. */
#define X_ROW_STEP (THREADS / X_CHUNKS)
#define W_ROW_STEP (THREADS / W_CHUNKS)
inline void load_stage_fast(__local ushort *xs, __local ushort *ws,
                            __global const ushort *xp,
                            __global const ushort *wp, uint x_dst,
                            uint w_dst)
{
#pragma unroll
    for (uint j = 0; j < BM * X_CHUNKS / THREADS; j++)
        copy_async(xs + x_dst + j * X_ROW_STEP * BK, xp + (size_t)j * X_ROW_STEP * K);
#pragma unroll
    for (uint j = 0; j < BK * W_CHUNKS / THREADS; j++)
        copy_async(ws + w_dst + j * W_ROW_STEP * BN, wp + (size_t)j * W_ROW_STEP * N);
    asm volatile("cp.async.commit_group;" ::: "memory");
}
#endif

inline ushort to_half_bits(float f)
{
#ifdef HALF_F16
    ushort h;
    vstore_half_rte(f, 0, (__private half *)&h);
    return h;
#else
    uint u = as_uint(f);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (ushort)(u >> 16);
#endif
}

/* The A fragments of the warp's MT m16 tiles and the B fragments of its
 * NT n8 tiles for the 16-deep slice KK of the staged tiles. */
inline void load_fragments(__local ushort *xt, __local ushort *wt, uint kk,
                           uint warp_m, uint warp_n, uint lrow, uint lchunk,
                           uint a[MT][4], uint b[NT][2])
{
#pragma unroll
    for (int i = 0; i < MT; i++) {
        uint r = warp_m * WM + i * 16 + lrow;
        uint c = kk / 8 + lchunk;
        __local ushort *p = xt + r * BK + swizzle(r, c, X_CHUNKS) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                     "{%0,%1,%2,%3}, [%4];"
                     : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]),
                       "=r"(a[i][3])
                     : "l"(p));
    }
#pragma unroll
    for (int j = 0; j < NT / 2; j++) {
        uint r = kk + lrow;
        uint c = (warp_n * WN + j * 16) / 8 + lchunk;
        __local ushort *p = wt + r * BN + swizzle(r, c, W_CHUNKS) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
                     "{%0,%1,%2,%3}, [%4];"
                     : "=r"(b[2 * j][0]), "=r"(b[2 * j][1]),
                       "=r"(b[2 * j + 1][0]), "=r"(b[2 * j + 1][1])
                     : "l"(p));
    }
}

#ifdef MMA_VOLATILE
#define MMA_ASM asm volatile
#else
#define MMA_ASM asm
#endif

inline void multiply(float acc[MT][NT][4], uint a[MT][4], uint b[NT][2])
{
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
            MMA_ASM("mma.sync.aligned.m16n8k16.row.col.f32." MMA_TYPE
                    "." MMA_TYPE ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                    "{%8,%9}, {%0,%1,%2,%3};"
                    : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]),
                      "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                    : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]),
                      "r"(b[j][0]), "r"(b[j][1]));
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1))) void
mma_gemm(__global const ushort *restrict x, __global const ushort *restrict w,
#ifdef Y_HALF
         __global ushort *restrict y
#else
         __global float *restrict y
#endif
)
{
    __local ushort xs[STAGES][BM * BK] __attribute__((aligned(16)));
    __local ushort ws[STAGES][BK * BN] __attribute__((aligned(16)));
    uint tid = get_local_id(0);
    uint lane = tid % 32, warp = tid / 32;
    uint warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
#ifdef GROUP_M
    /* Consecutive work-groups walk GROUP_M block rows before the next
     * block column: the W tiles they share stay in L2. */
    uint blocks_n = N / BN, id = get_group_id(1) * blocks_n + get_group_id(0);
    uint group = id / (GROUP_M * blocks_n), in_group = id % (GROUP_M * blocks_n);
    uint row0 = (group * GROUP_M + in_group % GROUP_M) * BM;
    uint col0 = (in_group / GROUP_M) * BN;
#else
    uint row0 = get_group_id(1) * BM, col0 = get_group_id(0) * BN;
#endif
#ifdef SAME_TILE
    row0 = 0; /* lab: every work-group reads the same tiles (L2 hits) */
    col0 = 0;
#endif

    float acc[MT][NT][4];
    for (int i = 0; i < MT; i++)
        for (int j = 0; j < NT; j++)
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;

    const uint k_tiles = K / BK;
#ifdef FAST_COPY
    uint xr = tid / X_CHUNKS, xc = tid % X_CHUNKS;
    uint wr = tid / W_CHUNKS, wc = tid % W_CHUNKS;
    __global const ushort *xp = x + (size_t)(row0 + xr) * K + xc * 8;
    __global const ushort *wp = w + (size_t)wr * N + col0 + wc * 8;
    uint x_dst = xr * BK + swizzle(xr, xc, X_CHUNKS) * 8;
    uint w_dst = wr * BN + swizzle(wr, wc, W_CHUNKS) * 8;
#define LOAD_STAGE(st, kt_)                                              \
    load_stage_fast(xs[st], ws[st], xp + (kt_) * BK,                     \
                    wp + (size_t)(kt_) * BK * N, x_dst, w_dst)
#else
#define LOAD_STAGE(st, kt_)                                              \
    load_stage(xs[st], ws[st], x, w, row0, col0, (kt_) * BK, tid)
#endif
    for (uint s = 0; s < STAGES - 1; s++) {
        if (s < k_tiles)
            LOAD_STAGE(s, s);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
    }

#ifdef PEAK
    uint pa[MT][4], pb[NT][2];
#endif
    /* ldmatrix lane roles: matrix lane/8, its row lane%8. */
    uint lrow = (lane % 8) + ((lane >> 3) & 1) * 8, lchunk = lane >> 4;

    for (uint kt = 0; kt < k_tiles; kt++) {
        asm volatile("cp.async.wait_group " STR(PENDING) ";" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        uint next = kt + STAGES - 1;
#ifdef NO_LOAD
        next = k_tiles; /* lab: the stages of the prologue, reused */
#endif
        if (next < k_tiles)
            LOAD_STAGE(next % STAGES, next);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");

        __local ushort *xt = xs[kt % STAGES], *wt = ws[kt % STAGES];
#ifdef NO_LOAD
        xt = xs[kt % (STAGES - 1)];
        wt = ws[kt % (STAGES - 1)];
#endif
#ifdef LOAD_ONLY
        continue;
#endif
#ifdef PEAK
        /* lab: products on fragments loaded once (tensor-pipe ceiling) */
        if (kt == 0)
            load_fragments(xt, wt, 0, warp_m, warp_n, lrow, lchunk, pa, pb);
        for (uint step = 0; step < BK / 16; step++)
            multiply(acc, pa, pb);
        continue;
#endif
#ifdef SINGLE_FRAG
        /* lab: fragments of a slice loaded just before its products */
#pragma unroll
        for (uint step = 0; step < BK / 16; step++) {
            uint a1[MT][4], b1[NT][2];
            load_fragments(xt, wt, step * 16, warp_m, warp_n, lrow, lchunk,
                           a1, b1);
            multiply(acc, a1, b1);
        }
        continue;
#endif
        uint a[2][MT][4], b[2][NT][2];
        load_fragments(xt, wt, 0, warp_m, warp_n, lrow, lchunk, a[0], b[0]);
#pragma unroll
        for (uint step = 0; step < BK / 16; step++) {
            if (step + 1 < BK / 16)
                load_fragments(xt, wt, (step + 1) * 16, warp_m, warp_n, lrow,
                               lchunk, a[(step + 1) % 2], b[(step + 1) % 2]);
#ifndef NO_MMA
            multiply(acc, a[step % 2], b[step % 2]);
#else
            /* lab: keep the fragments live without the products */
            for (int i = 0; i < MT; i++)
                acc[i][0][0] += as_float(a[step % 2][i][0] ^ b[step % 2][i % NT][0]);
#endif
        }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");

    uint g = lane / 4, t = lane % 4;
    for (int i = 0; i < MT; i++) {
        for (int j = 0; j < NT; j++) {
            uint r = row0 + warp_m * WM + i * 16 + g;
            uint c = col0 + warp_n * WN + j * 8 + t * 2;
#ifdef Y_HALF
            y[(size_t)r * N + c] = to_half_bits(acc[i][j][0]);
            y[(size_t)r * N + c + 1] = to_half_bits(acc[i][j][1]);
            y[(size_t)(r + 8) * N + c] = to_half_bits(acc[i][j][2]);
            y[(size_t)(r + 8) * N + c + 1] = to_half_bits(acc[i][j][3]);
#else
            vstore2((float2)(acc[i][j][0], acc[i][j][1]), 0,
                    y + (size_t)r * N + c);
            vstore2((float2)(acc[i][j][2], acc[i][j][3]), 0,
                    y + (size_t)(r + 8) * N + c);
#endif
        }
    }
}
