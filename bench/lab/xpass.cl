/* xpass.cl (lab) - lora_backward's float32 adapter gradients with X read
 * once: T = X·A and dA = Xᵀ·G from the same staged tile of X, on NVIDIA
 * tensor cores (mma.sync m16n8k8 tf32, three products hi·hi + hi·lo +
 * lo·hi for float32's accuracy, as skinny.cl does). With G = dY·Bᵀ
 * before it and dB = Tᵀ·dY after it, the adapter's gradients would read
 * X once and dY twice, where lora_bwd_tg and lora_bwd_grad read each
 * twice.
 *
 * A work-group takes KB (128) columns of X and RB rows; its WARPS warps
 * take 16-row chunks of them in turn, each chunk copied by cp.async into
 * the warp's ring of STAGES chunks. For each chunk a warp computes the
 * chunk's T over the work-group's columns (a partial sum over the blocks
 * of columns: TP[block][row][j]) and adds Xᵀ·G of the chunk into its
 * running dAᵀ of the columns; at the end the warps' dAᵀ are added in
 * warp order into the row block's partial sums, DAP[block][j][col].
 *
 * A is given as P (RANK x K, row-major), dA as dAᵀ (RANK x K); G is
 * ROWS x RANK. Defines: K (a multiple of KB), WARPS, RB (a multiple of
 * 16 x WARPS), STAGES (2 or more), PENDING_GROUPS (STAGES - 2), PARTS
 * (0: the copies alone, 1: T alone, 2: dA alone, 3: both), P_LOCAL (1: A's
 * fragments read from local memory), SPLIT (1: one tf32 product, hi·hi,
 * not float32's accuracy: the cost of the other two), TSETS (1, 2 or 4:
 * independent sums of T's products, added at the end of a chunk). */
#define RANK 16
#define KB 128
#ifndef TSETS
#define TSETS 1
#endif
#define RS (KB + 16) /* floats a staged row: 16 mod 32 banks */
#define CHUNK (16 * RS)
#define WARP_RING (STAGES * CHUNK)
#define STR_(x) #x
#define STR(x) STR_(x)
#define PENDING STR(PENDING_GROUPS)

inline void mma_tf32(float d[4], uint a0, uint a1, uint a2, uint a3,
                     uint b0, uint b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

inline uint hi_of(float x)
{
    return as_uint(x) & 0xffffe000u;
}
inline uint lo_of(float x)
{
    return as_uint(x - as_float(as_uint(x) & 0xffffe000u));
}

inline void mma3(float d[4], float a0, float a1, float a2, float a3,
                 float b0, float b1)
{
#if SPLIT != 1
    mma_tf32(d, lo_of(a0), lo_of(a1), lo_of(a2), lo_of(a3), hi_of(b0),
             hi_of(b1));
    mma_tf32(d, hi_of(a0), hi_of(a1), hi_of(a2), hi_of(a3), lo_of(b0),
             lo_of(b1));
#endif
    mma_tf32(d, hi_of(a0), hi_of(a1), hi_of(a2), hi_of(a3), hi_of(b0),
             hi_of(b1));
}

inline void cp16(__local float *dst, const __global float *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"l"(dst),
                 "l"(src)
                 : "memory");
}

/* Starts the copy of the 16 rows from ROW0 (clamped to the last of
 * ROWS), columns COL0 .. + KB, into CHUNK_AT. */
inline void stage_chunk(__local float *chunk_at, const __global float *x,
                        const uint rows, const uint row0, const uint col0,
                        const uint lane)
{
#pragma unroll
    for (uint v = lane; v < 16 * KB / 4; v += 32) {
        uint r = v / (KB / 4), c = v % (KB / 4);
        uint at = min(row0 + r, rows - 1);
        cp16(chunk_at + r * RS + 4 * c, x + (size_t)at * K + col0 + 4 * c);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

__kernel __attribute__((reqd_work_group_size(32 * WARPS, 1, 1))) void
xpass(const int rows, const __global float *restrict x,
      const __global float *restrict p, const __global float *restrict g,
      __global float *restrict tp, __global float *restrict dap)
{
    __local float ring[WARPS * WARP_RING] __attribute__((aligned(16)));
    const uint lane = get_local_id(0) % 32, warp = get_local_id(0) / 32;
    const uint gr = lane / 4, tq = lane % 4;
    const uint block = get_group_id(0), col0 = block * KB;
    const uint rb = get_group_id(1), rbeg = rb * RB;
    __local float *mine = ring + warp * WARP_RING;
    const uint chunks = RB / 16 / WARPS;

    /* A's columns of the block as the T product's B fragments: for each
     * 32 columns (sub), n-tile n, the float4s at 4 tq and 16 + 4 tq of
     * P's row 8 n + gr; element e is k-block e's value. P_LOCAL: held in
     * local memory and read at each use, not in registers. */
#if P_LOCAL
    __local float pl[RANK * RS] __attribute__((aligned(16)));
    for (uint v = get_local_id(0); v < RANK * KB / 4; v += 32 * WARPS) {
        uint j = v / (KB / 4), c = v % (KB / 4);
        vstore4(vload4(0, p + (size_t)j * K + col0 + 4 * c), 0,
                pl + j * RS + 4 * c);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#define PF(sub, n, h) vload4(0, pl + (8 * (n) + gr) * RS + 32 * (sub) + \
                                   4 * tq + 16 * (h))
#else
    float4 pf[KB / 32][2][2];
#pragma unroll
    for (int sub = 0; sub < KB / 32; sub++)
#pragma unroll
        for (int n = 0; n < 2; n++) {
            const __global float *pr =
                p + (size_t)(8 * n + gr) * K + col0 + 32 * sub + 4 * tq;
            pf[sub][n][0] = vload4(0, pr);
            pf[sub][n][1] = vload4(0, pr + 16);
        }
#define PF(sub, n, h) pf[sub][n][h]
#endif
    /* dAᵀ's running sums: m-tile mt (columns 16 mt ..), n-tile n */
    float da[KB / 16][2][4];
#pragma unroll
    for (int mt = 0; mt < KB / 16; mt++)
#pragma unroll
        for (int n = 0; n < 2; n++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                da[mt][n][e] = 0.0f;

    for (uint s = 0; s + 1 < STAGES; s++) {
        if (s < chunks)
            stage_chunk(mine + s * CHUNK, x, rows,
                        rbeg + 16 * (warp + WARPS * s), col0, lane);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (uint i = 0; i < chunks; i++) {
        const uint row0 = rbeg + 16 * (warp + WARPS * i);
        asm volatile("cp.async.wait_group " PENDING ";" ::: "memory");
        asm volatile("bar.warp.sync -1;" ::: "memory");
        const uint next = i + STAGES - 1;
        if (next < chunks)
            stage_chunk(mine + (next % STAGES) * CHUNK, x, rows,
                        rbeg + 16 * (warp + WARPS * next), col0, lane);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
        const __local float *st = mine + (i % STAGES) * CHUNK;
#if PARTS & 1
        /* T of the chunk over the block's columns */
        /* TSETS independent sums (by sub), added at the end: shorter
         * chains of dependent products */
        float t[TSETS][2][4];
#pragma unroll
        for (int u = 0; u < TSETS; u++)
#pragma unroll
            for (int n = 0; n < 2; n++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    t[u][n][e] = 0.0f;
#pragma unroll
        for (int sub = 0; sub < KB / 32; sub++) {
            float4 xv[2][2];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const __local float *rp =
                    st + (gr + 8 * h) * RS + 32 * sub + 4 * tq;
                xv[h][0] = vload4(0, rp);
                xv[h][1] = vload4(0, rp + 16);
            }
            float4 pv[2][2];
#pragma unroll
            for (int n = 0; n < 2; n++) {
                pv[n][0] = PF(sub, n, 0);
                pv[n][1] = PF(sub, n, 1);
            }
#pragma unroll
            for (int e = 0; e < 4; e++)
#pragma unroll
                for (int n = 0; n < 2; n++)
                    mma3(t[sub % TSETS][n], ((float *)&xv[0][0])[e],
                         ((float *)&xv[1][0])[e], ((float *)&xv[0][1])[e],
                         ((float *)&xv[1][1])[e], ((float *)&pv[n][0])[e],
                         ((float *)&pv[n][1])[e]);
        }
#pragma unroll
        for (int u = 1; u < TSETS; u++)
#pragma unroll
            for (int n = 0; n < 2; n++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    t[0][n][e] += t[u][n][e];
#pragma unroll
        for (int n = 0; n < 2; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                uint r = row0 + gr + (e >= 2 ? 8 : 0);
                uint j = 8 * n + 2 * tq + (e & 1);
                if (r < (uint)rows)
                    tp[((size_t)block * rows + r) * RANK + j] = t[0][n][e];
            }
#endif
#if PARTS & 2
        /* dAᵀ += the chunk's Xᵀ·G: m the column, k the row, n the rank */
#pragma unroll
        for (int ks = 0; ks < 2; ks++) {
            float gb[2][2];
#pragma unroll
            for (int n = 0; n < 2; n++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    uint r = min(row0 + 8 * ks + tq + 4 * h, (uint)rows - 1);
                    float v = g[(size_t)r * RANK + 8 * n + gr];
                    gb[n][h] = row0 + 8 * ks + tq + 4 * h < (uint)rows
                                   ? v : 0.0f;
                }
#pragma unroll
            for (int mt = 0; mt < KB / 16; mt++) {
                const __local float *cp =
                    st + (8 * ks + tq) * RS + 16 * mt + gr;
                float a0 = cp[0], a1 = cp[8], a2 = cp[4 * RS],
                      a3 = cp[4 * RS + 8];
#pragma unroll
                for (int n = 0; n < 2; n++)
                    mma3(da[mt][n], a0, a1, a2, a3, gb[n][0], gb[n][1]);
            }
        }
#endif
#if PARTS == 0
        /* the copies alone: one value of each chunk kept */
        if (st[lane] == 12345.0f)
            tp[lane] = st[lane + 32];
#endif
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#if PARTS & 2
    barrier(CLK_LOCAL_MEM_FENCE);
    __local float *red = ring; /* [warp][mt][n][e][lane] */
#pragma unroll
    for (int mt = 0; mt < KB / 16; mt++)
#pragma unroll
        for (int n = 0; n < 2; n++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                red[(((warp * (KB / 16) + mt) * 2 + n) * 4 + e) * 32 +
                    lane] = da[mt][n][e];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint o = get_local_id(0); o < KB * RANK; o += 32 * WARPS) {
        uint l = o % 32, e = o / 32 % 4, n = o / 128 % 2, mt = o / 256;
        float sum = 0.0f;
        for (uint w = 0; w < WARPS; w++)
            sum += red[w * KB * RANK + o];
        uint col = 16 * mt + l / 4 + (e >= 2 ? 8 : 0);
        uint j = 8 * n + 2 * (l % 4) + (e & 1);
        dap[((size_t)rb * RANK + j) * K + col0 + col] = sum;
    }
#endif
}

/* X read once and summed: the floor of a kernel that reads it. */
__kernel void read_x(const int rows, const __global float4 *restrict x,
                     __global float *restrict out)
{
    const size_t n = (size_t)rows * K / 4;
    float4 s = 0.0f;
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
        s += x[i];
    if (s.x + s.y + s.z + s.w == 12345.0f)
        out[0] = s.x;
}

/* ---- xpass_simt: the same two products by float multiply-adds ---------
 * A work-group of WARPS warps takes the same 128 columns and RB rows; a
 * lane holds 4 columns (A's rows of them in registers, 64 floats, and
 * their dA sums, 64) and its warp's rows in turn, every WARPS-th, loaded
 * U rows ahead. Each row's T over the 128 columns is the warp's sum of
 * the lanes' 16 values: reduced and scattered by 16 shuffles, a lane
 * pair per rank. The warps' dA sums are added in warp order at the end.
 * Defines: K, WARPS, RB (a multiple of WARPS x U), U. */
#ifndef U
#define U 1
#endif
inline float bfly(float v, const int mask)
{
    float r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                 : "=f"(r)
                 : "f"(v), "r"(mask));
    return r;
}

/* Halves the values a lane holds, N of them, with its partner across
 * bit MASK: the lane with the bit clear keeps the first half's sums. */
#define SCATTER(v, n, mask)                                                \
    do {                                                                   \
        const int up_ = (lane & (mask)) != 0;                              \
        _Pragma("unroll") for (int k = 0; k < (n) / 2; k++) {              \
            float give = up_ ? v[k] : v[k + (n) / 2];                      \
            float keep = up_ ? v[k + (n) / 2] : v[k];                      \
            v[k] = keep + bfly(give, (mask));                              \
        }                                                                  \
    } while (0)

__kernel __attribute__((reqd_work_group_size(32 * WARPS, 1, 1))) void
xpass_simt(const int rows, const __global float *restrict x,
           const __global float *restrict p,
           const __global float *restrict g, __global float *restrict tp,
           __global float *restrict dap)
{
    __local float sums[KB * RANK];
    const uint lane = get_local_id(0) % 32, warp = get_local_id(0) / 32;
    const uint block = get_group_id(0), col0 = block * KB;
    const uint rb = get_group_id(1), rbeg = rb * RB;
    const uint col = col0 + 4 * lane;
    float a[4][RANK], da[4][RANK];
#pragma unroll
    for (int j = 0; j < RANK; j++) {
        float4 pv = vload4(0, p + (size_t)j * K + col);
        a[0][j] = pv.x;
        a[1][j] = pv.y;
        a[2][j] = pv.z;
        a[3][j] = pv.w;
#pragma unroll
        for (int i = 0; i < 4; i++)
            da[i][j] = 0.0f;
    }
    const uint steps = RB / WARPS / U;
    float4 xn[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        uint r = min(rbeg + warp + WARPS * u, (uint)rows - 1);
        xn[u] = vload4(0, x + (size_t)r * K + col);
    }
    for (uint s = 0; s < steps; s++) {
        float4 xc[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            xc[u] = xn[u];
            uint r = min(rbeg + warp + WARPS * (U * (s + 1) + u),
                         (uint)rows - 1);
            if (s + 1 < steps)
                xn[u] = vload4(0, x + (size_t)r * K + col);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint r = rbeg + warp + WARPS * (U * s + u);
            const uint rr = min(r, (uint)rows - 1);
            const float xv[4] = {xc[u].x, xc[u].y, xc[u].z, xc[u].w};
            float gv[RANK];
#pragma unroll
            for (int q = 0; q < RANK / 4; q++) {
                float4 g4 = vload4(q, g + (size_t)rr * RANK);
                gv[4 * q] = g4.x;
                gv[4 * q + 1] = g4.y;
                gv[4 * q + 2] = g4.z;
                gv[4 * q + 3] = g4.w;
            }
            const float live = r < (uint)rows ? 1.0f : 0.0f;
            float t[RANK];
#pragma unroll
            for (int j = 0; j < RANK; j++) {
                t[j] = xv[0] * a[0][j];
#pragma unroll
                for (int i = 1; i < 4; i++)
                    t[j] = fma(xv[i], a[i][j], t[j]);
#pragma unroll
                for (int i = 0; i < 4; i++)
                    da[i][j] = fma(xv[i], gv[j] * live, da[i][j]);
            }
            SCATTER(t, 16, 16);
            SCATTER(t, 8, 8);
            SCATTER(t, 4, 4);
            SCATTER(t, 2, 2);
            t[0] += bfly(t[0], 1);
            /* the lane's rank: bits 4, 3, 2, 1 of lane, high to low */
            const uint j = 8 * ((lane >> 4) & 1) + 4 * ((lane >> 3) & 1) +
                           2 * ((lane >> 2) & 1) + ((lane >> 1) & 1);
            if ((lane & 1) == 0 && r < (uint)rows)
                tp[((size_t)block * rows + r) * RANK + j] = t[0];
        }
    }
    /* the warps' dA sums in warp order */
    for (uint w = 0; w < WARPS; w++) {
        if (warp == w)
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < RANK; j++) {
                    __local float *at = sums + j * KB + 4 * lane + i;
                    *at = w == 0 ? da[i][j] : *at + da[i][j];
                }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint o = get_local_id(0); o < KB * RANK; o += 32 * WARPS)
        dap[((size_t)rb * RANK + o / KB) * K + col0 + o % KB] = sums[o];
}
