/* lora_xa_mma.cl - T = SCALE * X*A on NVIDIA tensor cores, before
 * lora_mma or lora_expand: the tensor-core counterpart of lora_xa.cl, for
 * f16 and bf16 storage. It writes the same XA_SPLIT partial sums of T per
 * row (see lora_common.cl), so the kernels after it read them as they
 * read lora_xa's.
 *
 * Inline PTX, which only NVIDIA's OpenCL compiler accepts: the plan
 * launches it only in the variant for compute capability 8.0 and later.
 *
 * A work-group takes XA_M rows and one of XA_SPLIT stretches of K, in
 * warps of 16 rows. The stretch of A is staged once, transposed (a row of
 * local memory per column of A; out_in's A, r x K, as it lies), and
 * shared by the warps; each warp
 * streams its rows of X from global memory straight into registers, 8
 * values of K per row, work-item and step of 32, XM_BATCH steps' loads in
 * flight at once.
 *
 * The 32 values of K in a step go to the products in an order of their
 * own: work-item (g, q) of a warp (g = lane / 4, q = lane % 4) holds K
 * values 8q .. 8q + 7 of rows g and g + 8 and passes them as its fragment
 * columns, and A's fragments follow the same order (the same 8 values of
 * K, of column g of A), so each product still pairs every X[row][k] with
 * its A[k][col]: one 16-byte load of X per row and one of A per n8 tile,
 * two m16n8k16 products per step (fragment columns {2q, 2q + 1, 2q + 8,
 * 2q + 9} each), and no shuffles.
 *
 * Local size (2 * XA_M, 1): 32 work-items per 16 rows. Needs K a multiple
 * of 8 (whole chunks of 8; the plan checks it). */
#include "lora_common.cl"

#if !defined(XA_M) || !defined(XA_CHUNK)
#error "lora_xa_mma.cl: the plan must define XA_M and XA_CHUNK"
#endif
#if DTYPE_F32
#error "lora_xa_mma.cl: tensor cores take f16 or bf16 storage"
#endif
#if IN_FEATURES % 8 != 0 || XA_M % 16 != 0
#error "lora_xa_mma.cl: K a multiple of 8, XA_M of 16"
#endif

#define XM_THREADS (2 * XA_M)
#define XM_TILES_N CEIL_DIV(RANK, 8) /* n8 tiles across T's columns */
/* K per work-group, whole chunks of 8; at most XA_CHUNK. */
#define XM_PER (CEIL_DIV(IN_FEATURES / 8, XA_SPLIT) * 8)
#define XM_STEPS CEIL_DIV(XM_PER, 32)

/* Halves per staged row of A: the steps, plus 32 when that makes the
 * stride a multiple of 128 bytes, so that the 8 rows a phase of 16-byte
 * loads reads start 64 bytes apart modulo 128 and miss each other's
 * banks. XM_BATCH: steps whose X loads are issued together, up to 8 (64
 * registers), so that a work-item's loads wait out one latency, not one
 * per step. */
#define XM_LDA (XM_STEPS * 32 + (XM_STEPS % 2 == 0 ? 32 : 0))
#define XM_BATCH (XM_STEPS < 8 ? XM_STEPS : 8)
#define XM_LOCAL (XM_TILES_N * 8 * XM_LDA)
#if !defined(XA_MMA_LOCAL_BYTES) || XM_LOCAL * 2 != XA_MMA_LOCAL_BYTES
#error "lora_xa_mma.cl: local memory differs from the plan's count"
#endif

#ifdef DTYPE_F16
#define XM_SHAPE "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#else
#define XM_SHAPE "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#endif

/* acc += the m16n8k16 product of fragments A0..A3 and B0, B1. */
inline void xm_multiply(float acc[4], uint a0, uint a1, uint a2, uint a3,
                        uint b0, uint b1)
{
    asm(XM_SHAPE " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* 8 halves at P as one 16-byte access (vload4 of uint makes four). */
inline uint4 xm_load(const __global storage_t *p)
{
    return ((const __global uint4 *)p)[0];
}

inline uint4 xm_load_local(const __local ushort *p)
{
    return ((const __local uint4 *)p)[0];
}

/* Rows G and G + 8 of the warp at K values 8q .. 8q + 7 of steps S0 ..
 * S0 + XM_BATCH - 1 (zero past the stretch's N values). */
inline void xm_fetch(uint4 xv[XM_BATCH][2],
                     const __global storage_t *xr[2], uint s0, uint q,
                     uint n)
{
#pragma unroll
    for (int b = 0; b < XM_BATCH; b++) {
        const uint k = (s0 + b) * 32 + q * 8;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            xv[b][h] = k < n ? xm_load(xr[h] + (s0 + b) * 32) : (uint4)0;
        }
    }
}

/* A's rows KBEG .. KBEG + N into AT, transposed: AT[j][k] = A[kbeg + k][j],
 * zero past N and RANK. Where the rank allows 16-byte loads, a stretch
 * is XM_ST_N chunks of 8 values, XM_ST_EACH per work-item; the first
 * XM_ST_HEAD of them are loaded (xm_stage_head) before the first steps of
 * X are fetched and stored (xm_stage_put) after, so that A's latency and
 * X's overlap, and
 * xm_stage_rest loads and stores the others. */
#if WEIGHT_OUT_IN
/* out_in: A is r x K, its rows the staged rows as they lie: 16 bytes of
 * a row at a time, zeros past r and past the stretch. */
#define XM_ROW_CHUNKS (XM_STEPS * 4) /* chunks of 8 per staged row */
inline void xm_stage_rest(__local ushort *at, const __global storage_t *a,
                          uint kbeg, uint n, uint tid)
{
    for (uint i = tid; i < XM_TILES_N * 8 * XM_ROW_CHUNKS; i += XM_THREADS) {
        const uint j = i / XM_ROW_CHUNKS, c = i % XM_ROW_CHUNKS;
        *(__local uint4 *)(at + j * XM_LDA + c * 8) =
            j < RANK && c * 8 < n
                ? xm_load(a + (size_t)j * IN_FEATURES + kbeg + c * 8)
                : (uint4)0;
    }
}
#elif RANK % 8 == 0
#define XM_ST_N (XM_STEPS * 32 * (RANK / 8))
#define XM_ST_EACH CEIL_DIV(XM_ST_N, XM_THREADS)
#define XM_ST_HEAD (XM_ST_EACH < 16 ? XM_ST_EACH : 16)

/* Chunk I of the stretch: 8 values of row I / (RANK / 8) of A. */
inline uint4 xm_stage_load(const __global storage_t *a, uint kbeg, uint n,
                           uint i)
{
    const uint k = i / (RANK / 8), c = i % (RANK / 8);
    return i < XM_ST_N && k < n
               ? xm_load(a + (size_t)(kbeg + k) * RANK + c * 8)
               : (uint4)0;
}

inline void xm_stage_store(__local ushort *at, uint i, uint4 w4)
{
    const uint k = i / (RANK / 8), c = i % (RANK / 8);
    const uint w[4] = {w4.x, w4.y, w4.z, w4.w};
    if (i < XM_ST_N) {
#pragma unroll
        for (int e = 0; e < 8; e++) {
            at[(c * 8 + e) * XM_LDA + k] =
                (ushort)(w[e / 2] >> (16 * (e % 2)));
        }
    }
}

inline void xm_stage_head(uint4 head[XM_ST_HEAD],
                          const __global storage_t *a, uint kbeg, uint n,
                          uint tid)
{
#pragma unroll
    for (int r = 0; r < XM_ST_HEAD; r++) {
        head[r] = xm_stage_load(a, kbeg, n, tid + r * XM_THREADS);
    }
}

inline void xm_stage_put(__local ushort *at, const uint4 head[XM_ST_HEAD],
                         uint tid)
{
#pragma unroll
    for (int r = 0; r < XM_ST_HEAD; r++) {
        xm_stage_store(at, tid + r * XM_THREADS, head[r]);
    }
}

inline void xm_stage_rest(__local ushort *at, const __global storage_t *a,
                          uint kbeg, uint n, uint tid)
{
    for (uint r = XM_ST_HEAD; r < XM_ST_EACH; r++) {
        const uint i = tid + r * XM_THREADS;
        xm_stage_store(at, i, xm_stage_load(a, kbeg, n, i));
    }
}
#else
/* Ranks that allow no 16-byte loads: all of the stretch here, a value at
 * a time. */
inline void xm_stage_rest(__local ushort *at, const __global storage_t *a,
                          uint kbeg, uint n, uint tid)
{
    const __global ushort *ae = (const __global ushort *)a;
    for (uint i = tid; i < XM_STEPS * 32 * XM_TILES_N * 8; i += XM_THREADS) {
        const uint k = i / (XM_TILES_N * 8), j = i % (XM_TILES_N * 8);
        at[j * XM_LDA + k] =
            k < n && j < RANK ? ae[(size_t)(kbeg + k) * RANK + j] : 0;
    }
}
#endif

__kernel __attribute__((reqd_work_group_size(XM_THREADS, 1, 1)))
void lora_xa_mma(const int rows, const __global storage_t *restrict x,
                 const __global storage_t *restrict a,
                 __global float *restrict scratch)
{
    __local ushort at[XM_LOCAL] __attribute__((aligned(16)));
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const uint g = lane / 4, q = lane % 4;
    const uint split = get_group_id(0);
    const uint kbeg = min(split * XM_PER, (uint)IN_FEATURES);
    const uint n = min(kbeg + XM_PER, (uint)IN_FEATURES) - kbeg;
    const int row0 = get_group_id(1) * XA_M + warp * 16;

    /* Rows past the end repeat the last row (never stored). */
    const __global storage_t *xr[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = min(row0 + (int)g + 8 * h, rows - 1);
        xr[h] = x + (size_t)r * IN_FEATURES + kbeg + q * 8;
    }
    /* The first steps' X travel while A is staged. */
    uint4 xv[XM_BATCH][2];
#if RANK % 8 == 0 && !WEIGHT_OUT_IN
    uint4 head[XM_ST_HEAD];
    xm_stage_head(head, a, kbeg, n, tid);
    xm_fetch(xv, xr, 0, q, n);
    xm_stage_put(at, head, tid);
#else
    xm_fetch(xv, xr, 0, q, n);
#endif
    xm_stage_rest(at, a, kbeg, n, tid);
    barrier(CLK_LOCAL_MEM_FENCE);

    float acc[XM_TILES_N][4];
#pragma unroll
    for (int j = 0; j < XM_TILES_N; j++) {
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    }
    const __local ushort *ar = at + g * XM_LDA + q * 8;
    for (uint s0 = 0; s0 < XM_STEPS; s0 += XM_BATCH) {
        if (s0 > 0) {
            xm_fetch(xv, xr, s0, q, n);
        }
#pragma unroll
        for (int b = 0; b < XM_BATCH; b++) {
            const uint s = s0 + b;
            if (XM_STEPS % XM_BATCH == 0 || s < XM_STEPS) {
                const uint4 x0 = xv[b][0], x1 = xv[b][1];
#pragma unroll
                for (int j = 0; j < XM_TILES_N; j++) {
                    const uint4 av =
                        xm_load_local(ar + j * 8 * XM_LDA + s * 32);
                    xm_multiply(acc[j], x0.x, x1.x, x0.y, x1.y, av.x, av.y);
                    xm_multiply(acc[j], x0.z, x1.z, x0.w, x1.w, av.z, av.w);
                }
            }
        }
    }

    /* Accumulator e of tile j is row g (+8 for e >= 2), columns
     * 8j + 2q + e % 2. */
    __global float *restrict t = scratch;
#pragma unroll
    for (int j = 0; j < XM_TILES_N; j++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = row0 + (int)g + (e / 2) * 8;
            const uint col = j * 8 + q * 2 + e % 2;
            if (r < rows && col < RANK) {
                t[((size_t)r * XA_SPLIT + split) * RANK + col] =
                    SCALE * acc[j][e];
            }
        }
    }
}
