/* skinny.cl (lab) - float32 products with a rank-16 matrix read along K,
 * as lora_backward's T = X·A (A r x K) and G = dY·Bᵀ (Bᵀ r x N) are:
 * OUT = IN·Pᵀ, IN rows x K, P RANK x K, both row-major. The second grid
 * dimension picks the product (0: X and A into T, 1: Y and B into G), as
 * lora_bwd_tg does.
 *
 * skinny_tc: on NVIDIA tensor cores (mma.sync m16n8k8 tf32), float32 to
 * about float32's accuracy by three products: each value x split into
 * hi (x's top 11 bits of mantissa: the bits tf32 keeps) and lo = x - hi
 * (exact), and hi·hi + hi·lo + lo·hi summed in float (lo·lo, under 2^-20
 * of the product, left out); SPLIT 1 takes hi·hi alone (tf32: the speed
 * without the extra products, not float32's accuracy). A work-group of
 * WARPS warps takes MT x 16 rows; warp w the w-th slice of K, in steps
 * of 32 values of K, whose 8-value mma blocks take each lane's 4
 * consecutive values (a float4) of two 16-value halves: any order of K is
 * a sum's order, as long as IN and P take the same. The warps' sums meet
 * in local memory, added in warp order.
 *
 * read_rows: both inputs read once and summed (the floor of a kernel that
 * reads them).
 *
 * Defines: K (a multiple of 32 x WARPS x U), WARPS, MT, SPLIT (1 or 3),
 * U (steps loaded before their products). */
#define RANK 16
#define SLICE (K / WARPS)

inline void mma_tf32(float d[4], uint a0, uint a1, uint a2, uint a3,
                     uint b0, uint b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* x's tf32 part (its low 13 bits of mantissa cleared) and the rest. */
inline uint hi_of(float x)
{
    return as_uint(x) & 0xffffe000u;
}
inline uint lo_of(float x)
{
    return as_uint(x - as_float(as_uint(x) & 0xffffe000u));
}

/* D += the 16 x 8 block of A (a0..a3, float) times the 8 x 8 of B
 * (b0, b1): three tf32 products, the small ones first. */
inline void mma3(float d[4], float a0, float a1, float a2, float a3,
                 float b0, float b1)
{
#if SPLIT == 3
    mma_tf32(d, lo_of(a0), lo_of(a1), lo_of(a2), lo_of(a3), hi_of(b0),
             hi_of(b1));
    mma_tf32(d, hi_of(a0), hi_of(a1), hi_of(a2), hi_of(a3), lo_of(b0),
             lo_of(b1));
#endif
    mma_tf32(d, hi_of(a0), hi_of(a1), hi_of(a2), hi_of(a3), hi_of(b0),
             hi_of(b1));
}

__kernel __attribute__((reqd_work_group_size(32 * WARPS, 1, 1))) void
skinny_tc(const int rows, const __global float *restrict x,
          const __global float *restrict a, const __global float *restrict y,
          const __global float *restrict b, __global float *restrict t,
          __global float *restrict g)
{
    __local float red[WARPS][MT][2][4][32];
    const __global float *in = get_group_id(1) ? y : x;
    const __global float *p = get_group_id(1) ? b : a;
    __global float *out = get_group_id(1) ? g : t;
    const uint lane = get_local_id(0) % 32, warp = get_local_id(0) / 32;
    const uint gr = lane / 4, tq = lane % 4;
    const uint row0 = get_group_id(0) * MT * 16;
    float acc[MT][2][4];
    for (int i = 0; i < MT; i++)
        for (int n = 0; n < 2; n++)
            for (int e = 0; e < 4; e++)
                acc[i][n][e] = 0.0f;
    /* this lane's rows (clamped: rows past the end read the last row and
     * are never stored) and P's rows gr and gr + 8 */
    const __global float *xr[MT][2];
    for (int i = 0; i < MT; i++)
        for (int h = 0; h < 2; h++) {
            uint r = row0 + 16 * i + gr + 8 * h;
            xr[i][h] = in + (size_t)min(r, (uint)rows - 1) * K;
        }
    const __global float *pr0 = p + (size_t)gr * K;
    const __global float *pr1 = p + (size_t)(gr + 8) * K;
    for (uint k0 = warp * SLICE; k0 < (warp + 1) * SLICE; k0 += 32 * U) {
        /* U steps' loads in flight before their products */
        float4 xv[U][MT][2][2], pv[U][2][2];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint k = k0 + 32 * u + 4 * tq;
            for (int i = 0; i < MT; i++)
                for (int h = 0; h < 2; h++) {
                    xv[u][i][h][0] = vload4(0, xr[i][h] + k);
                    xv[u][i][h][1] = vload4(0, xr[i][h] + k + 16);
                }
            pv[u][0][0] = vload4(0, pr0 + k);
            pv[u][0][1] = vload4(0, pr0 + k + 16);
            pv[u][1][0] = vload4(0, pr1 + k);
            pv[u][1][1] = vload4(0, pr1 + k + 16);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int s = 0; s < 4; s++) {
                for (int i = 0; i < MT; i++) {
                    /* rows gr and gr + 8, slots tq and tq + 4 */
                    float a0 = ((float *)&xv[u][i][0][0])[s];
                    float a1 = ((float *)&xv[u][i][1][0])[s];
                    float a2 = ((float *)&xv[u][i][0][1])[s];
                    float a3 = ((float *)&xv[u][i][1][1])[s];
                    for (int n = 0; n < 2; n++)
                        mma3(acc[i][n], a0, a1, a2, a3,
                             ((float *)&pv[u][n][0])[s],
                             ((float *)&pv[u][n][1])[s]);
                }
            }
    }
    for (int i = 0; i < MT; i++)
        for (int n = 0; n < 2; n++)
            for (int e = 0; e < 4; e++)
                red[warp][i][n][e][lane] = acc[i][n][e];
    barrier(CLK_LOCAL_MEM_FENCE);
    /* each element of the tile: row 16 i + l / 4 (+ 8 for e >= 2),
     * column 8 n + 2 (l % 4) (+ 1 for odd e) */
    for (uint o = get_local_id(0); o < MT * 2 * 4 * 32; o += 32 * WARPS) {
        uint l = o % 32, e = o / 32 % 4, n = o / 128 % 2, i = o / 256;
        float sum = 0.0f;
        for (int w = 0; w < WARPS; w++)
            sum += red[w][i][n][e][l];
        uint r = row0 + 16 * i + l / 4 + (e >= 2 ? 8 : 0);
        uint c = 8 * n + 2 * (l % 4) + (e & 1);
        if (r < (uint)rows)
            out[(size_t)r * RANK + c] = sum;
    }
}

/* Each work-item sums 4 floats of every 4 x global size of X or Y. */
__kernel void read_rows(const int rows, const __global float4 *restrict x,
                        const __global float4 *restrict y,
                        __global float *restrict sums)
{
    const __global float4 *in = get_group_id(1) ? y : x;
    size_t n = (size_t)rows * K / 4;
    float4 s = 0.0f;
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
        s += in[i];
    if (s.x + s.y + s.z + s.w == 1234.5f)
        sums[get_global_id(0)] = s.x;
}

/* X and dY read as skinny_tc reads them (PATTERN 0: a lane's float4s of
 * rows gr and gr + 8, 64 bytes of a row a load), or each row's 32 x U
 * values of a step as one stretch of 128 x U bytes across the warp
 * (PATTERN 1), summed: the loads' speed without the products. */
__kernel __attribute__((reqd_work_group_size(32 * WARPS, 1, 1))) void
read_tiles(const int rows, const int pattern, const __global float *x,
           const __global float *y, __global float *sums)
{
    const __global float *in = get_group_id(1) ? y : x;
    const uint lane = get_local_id(0) % 32, warp = get_local_id(0) / 32;
    const uint gr = lane / 4, tq = lane % 4;
    const uint row0 = get_group_id(0) * MT * 16;
    float4 s = 0.0f;
    for (uint k0 = warp * SLICE; k0 < (warp + 1) * SLICE; k0 += 32 * U) {
        if (pattern == 0) {
#pragma unroll
            for (int u = 0; u < U; u++)
                for (int i = 0; i < MT; i++)
                    for (int h = 0; h < 2; h++) {
                        uint r = min(row0 + 16 * i + gr + 8 * h,
                                     (uint)rows - 1);
                        uint k = k0 + 32 * u + 4 * tq;
                        s += vload4(0, in + (size_t)r * K + k);
                        s += vload4(0, in + (size_t)r * K + k + 16);
                    }
        } else {
            for (int i = 0; i < MT * 16; i++) {
                uint r = min(row0 + i, (uint)rows - 1);
                for (uint k = k0 + 4 * lane; k < k0 + 32 * U; k += 128)
                    s += vload4(0, in + (size_t)r * K + k);
            }
        }
    }
    if (s.x + s.y + s.z + s.w == 1234.5f)
        sums[get_global_id(0)] = s.x;
}

/* skinny_cp: skinny_tc with X and dY staged by cp.async: each warp copies
 * its 16 MT rows' next STEP values of K into its own ring of STAGES steps
 * in local memory, each row 16 x STEP / 4 contiguous bytes (a stretch
 * across the lanes, not a float4 of 8 rows a load), STAGES - 1 steps
 * ahead of its products, and reads the fragments from there; P's float4s
 * from global memory one step ahead. Rows are padded to RS floats so that
 * the fragments' reads of rows gr and gr + 1 meet no bank twice. The
 * ring is the warps' sums afterwards. Defines also STEP (32 or 64) and
 * STAGES (2 or more), PENDING_GROUPS = STAGES - 2, and FRESH (1: each
 * step's products summed apart from the running sums). */
#ifdef STEP
#define RS (STEP + 16)
#define STAGE_FLOATS (16 * MT * RS)
#define WARP_RING (STAGES * STAGE_FLOATS)
#define STR_(x) #x
#define STR(x) STR_(x)
#define PENDING STR(PENDING_GROUPS) /* STAGES - 2, as the host defines */

inline void cp16(__local float *dst, const __global float *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"l"(dst),
                 "l"(src)
                 : "memory");
}

/* Starts the copies of STEP values of K from K0 of the rows from ROW0
 * (ROWS of them in all, the rest clamped to the last) into STAGE. */
inline void stage_rows(__local float *stage, const __global float *in,
                       const uint rows, const uint row0, const uint k0,
                       const uint lane)
{
#pragma unroll
    for (uint q = lane; q < 16 * MT * STEP / 4; q += 32) {
        uint r = q / (STEP / 4), c = q % (STEP / 4);
        uint at = min(row0 + r, rows - 1);
        cp16(stage + r * RS + 4 * c, in + (size_t)at * K + k0 + 4 * c);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

__kernel __attribute__((reqd_work_group_size(32 * WARPS, 1, 1))) void
skinny_cp(const int rows, const __global float *restrict x,
          const __global float *restrict a, const __global float *restrict y,
          const __global float *restrict b, __global float *restrict t,
          __global float *restrict g)
{
    __local float ring[WARPS * WARP_RING] __attribute__((aligned(16)));
    const __global float *in = get_group_id(1) ? y : x;
    const __global float *p = get_group_id(1) ? b : a;
    __global float *out = get_group_id(1) ? g : t;
    const uint lane = get_local_id(0) % 32, warp = get_local_id(0) / 32;
    const uint gr = lane / 4, tq = lane % 4;
    const uint row0 = get_group_id(0) * MT * 16;
    __local float *mine = ring + warp * WARP_RING;
    const uint kw = warp * SLICE, steps = SLICE / STEP;
    float acc[MT][2][4];
    for (int i = 0; i < MT; i++)
        for (int n = 0; n < 2; n++)
            for (int e = 0; e < 4; e++)
                acc[i][n][e] = 0.0f;
    for (uint s = 0; s + 1 < STAGES; s++) {
        if (s < steps)
            stage_rows(mine + s * STAGE_FLOATS, in, rows, row0,
                       kw + s * STEP, lane);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
    }
    const __global float *pr[2] = {p + (size_t)gr * K + 4 * tq,
                                   p + (size_t)(gr + 8) * K + 4 * tq};
    float4 pc[STEP / 32][2][2], pn[STEP / 32][2][2];
#pragma unroll
    for (int sub = 0; sub < STEP / 32; sub++)
        for (int n = 0; n < 2; n++) {
            pc[sub][n][0] = vload4(0, pr[n] + kw + 32 * sub);
            pc[sub][n][1] = vload4(0, pr[n] + kw + 32 * sub + 16);
        }
    for (uint s = 0; s < steps; s++) {
        asm volatile("cp.async.wait_group " PENDING ";" ::: "memory");
        asm volatile("bar.warp.sync -1;" ::: "memory");
        uint next = s + STAGES - 1;
        if (next < steps)
            stage_rows(mine + (next % STAGES) * STAGE_FLOATS, in, rows,
                       row0, kw + next * STEP, lane);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
        uint kn = kw + (s + 1 < steps ? s + 1 : s) * STEP;
#pragma unroll
        for (int sub = 0; sub < STEP / 32; sub++)
            for (int n = 0; n < 2; n++) {
                pn[sub][n][0] = vload4(0, pr[n] + kn + 32 * sub);
                pn[sub][n][1] = vload4(0, pr[n] + kn + 32 * sub + 16);
            }
        const __local float *st = mine + (s % STAGES) * STAGE_FLOATS;
#if FRESH
        /* the step's products summed apart, then added in float: the
         * tensor cores' own sums lose bits over long chains */
        float part[MT][2][4];
        for (int i = 0; i < MT; i++)
            for (int n = 0; n < 2; n++)
                for (int e = 0; e < 4; e++)
                    part[i][n][e] = 0.0f;
#define SUMS part
#else
#define SUMS acc
#endif
#pragma unroll
        for (int sub = 0; sub < STEP / 32; sub++) {
            float4 xv[MT][2][2];
            for (int i = 0; i < MT; i++)
                for (int h = 0; h < 2; h++) {
                    const __local float *rowp =
                        st + (16 * i + gr + 8 * h) * RS + 32 * sub + 4 * tq;
                    xv[i][h][0] = vload4(0, rowp);
                    xv[i][h][1] = vload4(0, rowp + 16);
                }
#pragma unroll
            for (int e = 0; e < 4; e++)
                for (int i = 0; i < MT; i++)
                    for (int n = 0; n < 2; n++)
                        mma3(SUMS[i][n], ((float *)&xv[i][0][0])[e],
                             ((float *)&xv[i][1][0])[e],
                             ((float *)&xv[i][0][1])[e],
                             ((float *)&xv[i][1][1])[e],
                             ((float *)&pc[sub][n][0])[e],
                             ((float *)&pc[sub][n][1])[e]);
        }
#if FRESH
        for (int i = 0; i < MT; i++)
            for (int n = 0; n < 2; n++)
                for (int e = 0; e < 4; e++)
                    acc[i][n][e] += part[i][n][e];
#endif
#undef SUMS
#pragma unroll
        for (int sub = 0; sub < STEP / 32; sub++)
            for (int n = 0; n < 2; n++) {
                pc[sub][n][0] = pn[sub][n][0];
                pc[sub][n][1] = pn[sub][n][1];
            }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    barrier(CLK_LOCAL_MEM_FENCE);
    __local float *red = ring; /* [warp][i][n][e][lane] */
    for (int i = 0; i < MT; i++)
        for (int n = 0; n < 2; n++)
            for (int e = 0; e < 4; e++)
                red[(((warp * MT + i) * 2 + n) * 4 + e) * 32 + lane] =
                    acc[i][n][e];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint o = get_local_id(0); o < MT * 2 * 4 * 32; o += 32 * WARPS) {
        uint l = o % 32, e = o / 32 % 4, n = o / 128 % 2, i = o / 256;
        float sum = 0.0f;
        for (int w = 0; w < WARPS; w++)
            sum += red[w * MT * 256 + o];
        uint r = row0 + 16 * i + l / 4 + (e >= 2 ? 8 : 0);
        uint c = 8 * n + 2 * (l % 4) + (e & 1);
        if (r < (uint)rows)
            out[(size_t)r * RANK + c] = sum;
    }
}
#endif
