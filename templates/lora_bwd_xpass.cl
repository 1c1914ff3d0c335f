/* lora_bwd_xpass.cl - T = X*A and dA = X^T*G from one read of X, for
 * lora_backward's float32 adapter gradients on NVIDIA tensor cores
 * (mma.sync m16n8k8 on tf32, compute capability 8.0+; see
 * lora_bwd_common.cl). With G first (lora_bwd_tg, G alone) and dB after
 * (lora_bwd_grad, dY's strips alone), the gradients read X once and dY
 * twice.
 *
 * Float32 on tf32 units: each value v is split into hi (v with its low
 * 13 bits of mantissa cleared: what tf32 keeps) and lo = v - hi (exact),
 * and hi*hi + hi*lo + lo*hi is summed in float (lo*lo, under 2^-20 of
 * the product, is left out): float32's accuracy from three tf32
 * products.
 *
 * lora_bwd_xpass: work-group (b, s) takes XP_COLS columns of X from
 * b * XP_COLS and the rows s * XP_ROWS .. + XP_ROWS. Its XP_WARPS warps
 * take 16-row chunks in turn, each copied by cp.async into the warp's
 * ring of XP_STAGES chunks; from the staged chunk a warp computes the
 * chunk's T over the block's columns (its partial sum for block b) and
 * adds the chunk's X^T*G into its sums of dA's rows of those columns.
 * At the end the warps' dA sums are added in warp order: the partial sum
 * of slice s (lora_bwd_xsum adds the partials up). Local size
 * (32 * XP_WARPS). Its partials lie in the scratch as lora_bwd_common.cl
 * says (SCRATCH_XT, SCRATCH_XDA).
 *
 * The plan: XP_ROWS, XP_COLS, XP_WARPS, XP_BLOCKS (CEIL_DIV(K,
 * XP_COLS)), XP_TILES_N (CEIL_DIV(RANK, 8)); RANK <= 16, K a multiple of
 * 4. */
#include "lora_bwd_common.cl"

#if !defined(XP_TILES_N) || !defined(XP_COLS) || !defined(XP_WARPS)
#error "lora_bwd_xpass.cl: the plan must define XP_TILES_N, XP_COLS, XP_WARPS"
#endif
#if XP_COLS % 32 != 0
#error "lora_bwd_xpass.cl: XP_COLS must be a multiple of 32"
#endif

#define XP_STAGES 2
/* floats of a staged row: 16 past the columns, so that the float4 reads
 * of a chunk's rows (8 lanes at a time) meet no bank twice */
#define XP_RS (XP_COLS + 16)
#define XP_CHUNK (16 * XP_RS)

/* D += A*B for a 16 x 8 block of A (a0..a3) and an 8 x 8 of B (b0, b1),
 * their values as tf32 bits. */
inline void xp_mma(float d[4], uint a0, uint a1, uint a2, uint a3, uint b0,
                   uint b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

inline uint xp_hi(float v)
{
    return as_uint(v) & 0xffffe000u;
}

inline uint xp_lo(float v)
{
    return as_uint(v - as_float(xp_hi(v)));
}

/* D += A*B in float32's accuracy: the three tf32 products, the small
 * ones first. */
inline void xp_mma3(float d[4], float a0, float a1, float a2, float a3,
                    float b0, float b1)
{
    xp_mma(d, xp_lo(a0), xp_lo(a1), xp_lo(a2), xp_lo(a3), xp_hi(b0),
           xp_hi(b1));
    xp_mma(d, xp_hi(a0), xp_hi(a1), xp_hi(a2), xp_hi(a3), xp_lo(b0),
           xp_lo(b1));
    xp_mma(d, xp_hi(a0), xp_hi(a1), xp_hi(a2), xp_hi(a3), xp_hi(b0),
           xp_hi(b1));
}

/* Starts the copy of X's 16 rows from ROW0 (the last row repeated past
 * ROWS), columns COL0 .. + XP_COLS (zeros past K), into CHUNK. */
inline void xp_stage(__local float *chunk, const __global float *x,
                     const int rows, const int row0, const int col0,
                     const uint lane)
{
#pragma unroll
    for (uint v = lane; v < 16 * XP_COLS / 4; v += 32) {
        const int r = v / (XP_COLS / 4), c = col0 + 4 * (v % (XP_COLS / 4));
        const int in = c < IN_FEATURES;
        const __global float *src =
            x + (size_t)min(row0 + r, rows - 1) * IN_FEATURES +
            (in ? c : 0);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"l"(
                         chunk + r * XP_RS + c - col0),
                     "l"(src), "r"(in ? 16 : 0)
                     : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

__kernel __attribute__((reqd_work_group_size(32 * XP_WARPS, 1, 1))) void
lora_bwd_xpass(const int rows, const __global float *restrict x,
               const __global float *restrict a,
               __global float *restrict scratch)
{
    __local float ring[XP_WARPS * XP_STAGES * XP_CHUNK]
        __attribute__((aligned(16)));
    const uint lane = get_local_id(0) % 32, warp = get_local_id(0) / 32;
    const uint gr = lane / 4, tq = lane % 4;
    const int block = get_group_id(0), col0 = block * XP_COLS;
    const int slice = get_group_id(1), rbeg = slice * XP_ROWS;
    const __global float *g = SCRATCH_G(scratch, rows);
    __global float *tp = SCRATCH_XT(scratch, rows);
    __local float *mine = ring + warp * XP_STAGES * XP_CHUNK;
    const int chunks = XP_ROWS / 16 / XP_WARPS;

    /* A's rows of the block's columns as the T product's B fragments:
     * for 32 columns (sub) and 8 ranks (n), the values at columns 4 tq ..
     * + 3 and 16 + 4 tq .. + 3 of rank 8 n + gr, element e of each the
     * product's k-block e (any order of the columns is a sum's order, as
     * long as X's fragments take the same). */
    float4 af[XP_COLS / 32][XP_TILES_N][2];
#pragma unroll
    for (int sub = 0; sub < XP_COLS / 32; sub++)
#pragma unroll
        for (int n = 0; n < XP_TILES_N; n++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float v[4];
                const int j = 8 * n + gr;
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int k = col0 + 32 * sub + 16 * h + 4 * tq + e;
                    v[e] = k < IN_FEATURES && j < RANK
                               ? a[A_AT(k, j)] : 0.0f;
                }
                af[sub][n][h] = (float4)(v[0], v[1], v[2], v[3]);
            }
    /* dA's sums: 16 columns (mt) by 8 ranks (n) a product block */
    float da[XP_COLS / 16][XP_TILES_N][4];
#pragma unroll
    for (int mt = 0; mt < XP_COLS / 16; mt++)
#pragma unroll
        for (int n = 0; n < XP_TILES_N; n++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                da[mt][n][e] = 0.0f;

    for (int s = 0; s + 1 < XP_STAGES; s++)
        xp_stage(mine + s * XP_CHUNK, x, rows,
                 rbeg + 16 * (warp + XP_WARPS * s), col0, lane);
    for (int i = 0; i < chunks; i++) {
        const int row0 = rbeg + 16 * (warp + XP_WARPS * i);
        /* XP_STAGES - 2 copies may stay in flight: none */
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        asm volatile("bar.warp.sync -1;" ::: "memory");
        const int next = i + XP_STAGES - 1;
        if (next < chunks)
            xp_stage(mine + next % XP_STAGES * XP_CHUNK, x, rows,
                     rbeg + 16 * (warp + XP_WARPS * next), col0, lane);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
        const __local float *st = mine + i % XP_STAGES * XP_CHUNK;

        /* T of the chunk's rows over the block's columns */
        float t[XP_TILES_N][4];
#pragma unroll
        for (int n = 0; n < XP_TILES_N; n++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                t[n][e] = 0.0f;
#pragma unroll
        for (int sub = 0; sub < XP_COLS / 32; sub++) {
            float4 xv[2][2];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const __local float *rp =
                    st + (gr + 8 * h) * XP_RS + 32 * sub + 4 * tq;
                xv[h][0] = vload4(0, rp);
                xv[h][1] = vload4(0, rp + 16);
            }
#pragma unroll
            for (int e = 0; e < 4; e++)
#pragma unroll
                for (int n = 0; n < XP_TILES_N; n++)
                    xp_mma3(t[n], ((float *)&xv[0][0])[e],
                            ((float *)&xv[1][0])[e],
                            ((float *)&xv[0][1])[e],
                            ((float *)&xv[1][1])[e],
                            ((float *)&af[sub][n][0])[e],
                            ((float *)&af[sub][n][1])[e]);
        }
#pragma unroll
        for (int n = 0; n < XP_TILES_N; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = row0 + gr + (e >= 2 ? 8 : 0);
                const int j = 8 * n + 2 * tq + (e & 1);
                if (r < rows && j < RANK)
                    tp[((size_t)block * rows + r) * RANK + j] = t[n][e];
            }

        /* dA += the chunk's X^T*G: the product's rows are X's columns,
         * its reduction the chunk's rows, two blocks of 8 */
#pragma unroll
        for (int ks = 0; ks < 2; ks++) {
            float gb[XP_TILES_N][2];
#pragma unroll
            for (int n = 0; n < XP_TILES_N; n++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int r = row0 + 8 * ks + tq + 4 * h;
                    const int j = 8 * n + gr;
                    gb[n][h] = r < rows && j < RANK
                                   ? g[(size_t)r * RANK + j] : 0.0f;
                }
#pragma unroll
            for (int mt = 0; mt < XP_COLS / 16; mt++) {
                const __local float *cp =
                    st + (8 * ks + tq) * XP_RS + 16 * mt + gr;
                const float a0 = cp[0], a1 = cp[8], a2 = cp[4 * XP_RS],
                            a3 = cp[4 * XP_RS + 8];
#pragma unroll
                for (int n = 0; n < XP_TILES_N; n++)
                    xp_mma3(da[mt][n], a0, a1, a2, a3, gb[n][0], gb[n][1]);
            }
        }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");

    /* the warps' dA sums, added in warp order through the ring */
    barrier(CLK_LOCAL_MEM_FENCE);
    const int per_warp = XP_COLS / 16 * XP_TILES_N * 4 * 32;
#pragma unroll
    for (int mt = 0; mt < XP_COLS / 16; mt++)
#pragma unroll
        for (int n = 0; n < XP_TILES_N; n++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                ring[warp * per_warp + ((mt * XP_TILES_N + n) * 4 + e) * 32 +
                     lane] = da[mt][n][e];
    barrier(CLK_LOCAL_MEM_FENCE);
    __global float *dap =
        SCRATCH_XDA(scratch, rows) + (size_t)slice * IN_FEATURES * RANK;
    for (int o = get_local_id(0); o < per_warp; o += 32 * XP_WARPS) {
        const int l = o % 32, e = o / 32 % 4, n = o / 128 % XP_TILES_N,
                  mt = o / (128 * XP_TILES_N);
        float sum = 0.0f;
        for (int w = 0; w < XP_WARPS; w++)
            sum += ring[w * per_warp + o];
        const int k = col0 + 16 * mt + l / 4 + (e >= 2 ? 8 : 0);
        const int j = 8 * n + 2 * (l % 4) + (e & 1);
        if (k < IN_FEATURES && j < RANK)
            dap[(size_t)k * RANK + j] = sum;
    }
}
