/* lora_bwd_tg_mma.cl - lora_bwd_tg on NVIDIA tensor cores (f16, bf16;
 * compute capability 8.0+): SCALE*T = SCALE*X*A and G = SCALE*dY*B^T, as
 * TG_PARTS partial sums per row over stretches of the reduction (see
 * lora_bwd_common.cl), the first kernel of lora_backward. Reads X and dY
 * once each.
 *
 * Work-group (p * TG_PARTS + s, b) takes TM_M rows from b * TM_M of X
 * against A over K (p = 0: T) or of dY against B^T over N (p = 1: G), and
 * part s of that reduction, cut again into TM_SPLIT stretches, one for
 * each group of TM_M / 16 warps: a warp per 16 rows, every rank column,
 * in m16n8k16 products. Each group stages its stretch's rows of the
 * weight in local memory of its own, TM_CHUNK at a time, transposed (a
 * row per rank column: A's [k][j] or B's [j][n] as the layout has them);
 * each warp streams its rows of X (dY) from global memory straight into
 * registers, 8 values a work-item and step of 32, TM_BATCH steps' loads
 * in flight at once. The 32 values of a step go to the products in an
 * order of their own: work-item (g, q) (g = lane / 4, q = lane % 4) holds
 * values 8q .. 8q + 7 of rows g and g + 8 as its fragment columns, and
 * the weight's fragments follow that order, so no shuffles are needed.
 * At the end the groups add their sums in group order through local
 * memory, and the first stores the part.
 *
 * Needs K and N multiples of 8 (16-byte loads; the plan checks it).
 * Local size (2 * TM_M * TM_SPLIT, 1). */
#include "lora_bwd_common.cl"
#include "mma_ptx.cl"

#if !defined(TM_M) || !defined(TM_CHUNK) || !defined(TG_PARTS) ||       \
    !defined(TM_SPLIT)
#error "lora_bwd_tg_mma.cl: the plan defines TM_M, TM_CHUNK, TG_PARTS, TM_SPLIT"
#endif
#if DTYPE_F32 || IN_FEATURES % 8 != 0 || OUT_FEATURES % 8 != 0 ||       \
    TM_M % 16 != 0 || TM_CHUNK % 32 != 0
#error "lora_bwd_tg_mma.cl: f16 or bf16, K and N multiples of 8"
#endif

#define TM_GROUP (2 * TM_M)          /* work-items of a stretch */
#define TM_THREADS (TM_GROUP * TM_SPLIT)
#define TM_TILES_N CEIL_DIV(RANK, 8) /* n8 tiles of the rank */
#define TM_STEPS (TM_CHUNK / 32)     /* steps of 32 per chunk */
#define TM_BATCH (TM_STEPS < 8 ? TM_STEPS : 8)
/* Halves per staged row: the chunk, plus 32 when that makes the stride a
 * multiple of 128 bytes, so that the 8 rows a phase of 16-byte loads
 * reads miss each other's banks. */
#define TM_LDA (TM_CHUNK + (TM_STEPS % 2 == 0 ? 32 : 0))
#define TM_LOCAL (TM_TILES_N * 8 * TM_LDA) /* halves of a group's */
#if !defined(TM_LOCAL_BYTES) || TM_SPLIT * TM_LOCAL * 2 != TM_LOCAL_BYTES
#error "lora_bwd_tg_mma.cl: local memory differs from the plan's count"
#endif
/* The groups past the first hand their sums over where the weight was
 * staged: TM_GROUP x TM_TILES_N x 4 floats each. */
#if (TM_SPLIT - 1) * TM_GROUP * TM_TILES_N * 4 * 4 > TM_SPLIT * TM_LOCAL * 2
#error "lora_bwd_tg_mma.cl: the groups' sums must fit the staging memory"
#endif
/* Whether A's rows run along the reduction (out_in: A is r x K); B's
 * (B^T's columns) then do not. */
#if defined(WEIGHT_OUT_IN) && WEIGHT_OUT_IN
#define TM_A_ALONG_K 1
#else
#define TM_A_ALONG_K 0
#endif

/* The weight's reduction rows K0 .. K0 + TM_CHUNK (zero past END and
 * RANK) into AT, a row per rank column: from W_ (A or B) whose rows run
 * along the reduction (ALONG: r x width, 16 bytes at a time) or across it
 * (width x r: 16 bytes, 8 rank columns of one row, at a time where the
 * rank is a multiple of 8, each work-item's loads issued before its
 * stores; else a value at a time), by the TM_GROUP work-items of a group
 * (TID, its item). */
inline void tm_stage(__local ushort *at, const __global storage_t *w_,
                     int along, uint width, uint k0, uint end, uint tid)
{
    const __global ushort *bits = (const __global ushort *)w_;
    if (along) {
        for (uint i = tid; i < TM_TILES_N * 8 * (TM_CHUNK / 8);
             i += TM_GROUP) {
            const uint j = i / (TM_CHUNK / 8), c = i % (TM_CHUNK / 8);
            const uint k = k0 + c * 8;
            *(__local uint4 *)(at + j * TM_LDA + c * 8) =
                j < RANK && k < end
                    ? *(const __global uint4 *)(bits + (size_t)j * width + k)
                    : (uint4)0;
        }
    } else {
#if RANK % 8 == 0
        /* The chunk's rows in 16-byte pieces, TM_CHUNK * RANK / 8 of
         * them: whole rounds of the work-group's items. */
#define TM_PIECES (TM_CHUNK * (RANK / 8))
#if TM_PIECES % TM_GROUP != 0
#error "lora_bwd_tg_mma.cl: the chunk's pieces must share out evenly"
#endif
        uint4 v[TM_PIECES / TM_GROUP];
#pragma unroll
        for (uint i = 0; i < TM_PIECES / TM_GROUP; i++) {
            const uint p = tid + i * TM_GROUP;
            const uint k = k0 + p / (RANK / 8);
            v[i] = k < end ? *(const __global uint4 *)(
                                 bits + (size_t)k * RANK + p % (RANK / 8) * 8)
                           : (uint4)0;
        }
#pragma unroll
        for (uint i = 0; i < TM_PIECES / TM_GROUP; i++) {
            const uint p = tid + i * TM_GROUP;
            const uint kk = p / (RANK / 8), j = p % (RANK / 8) * 8;
            const uint w[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
            for (uint e = 0; e < 4; e++) {
                at[(j + 2 * e) * TM_LDA + kk] = (ushort)w[e];
                at[(j + 2 * e + 1) * TM_LDA + kk] = (ushort)(w[e] >> 16);
            }
        }
#undef TM_PIECES
#else
        for (uint i = tid; i < TM_CHUNK * TM_TILES_N * 8; i += TM_GROUP) {
            const uint kk = i / (TM_TILES_N * 8), j = i % (TM_TILES_N * 8);
            const uint k = k0 + kk;
            at[j * TM_LDA + kk] =
                j < RANK && k < end ? bits[(size_t)k * RANK + j] : 0;
        }
#endif
    }
}

/* Rows g and g + 8 of the warp at values 8q .. 8q + 7 of steps S0 .. S0 +
 * TM_BATCH - 1 from K0 (zero past END). */
inline void tm_fetch(uint4 xv[TM_BATCH][2], const __global storage_t *xr[2],
                     uint k0, uint s0, uint q, uint end)
{
#pragma unroll
    for (int b = 0; b < TM_BATCH; b++) {
        const uint k = k0 + (s0 + b) * 32 + q * 8;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            xv[b][h] = k < end ? *(const __global uint4 *)(xr[h] + k)
                               : (uint4)0;
        }
    }
}

__kernel __attribute__((reqd_work_group_size(TM_THREADS, 1, 1))) void
lora_bwd_tg_mma(const int rows, const __global storage_t *restrict x,
                const __global storage_t *restrict a,
                const __global storage_t *restrict b,
                const __global storage_t *restrict dy,
                __global float *restrict scratch)
{
    __local ushort local_mem[TM_SPLIT * TM_LOCAL]
        __attribute__((aligned(16)));
    const uint group = get_local_id(0) / TM_GROUP;
    const uint tid = get_local_id(0) % TM_GROUP, lane = tid % 32,
               warp = tid / 32;
    const uint g = lane / 4, q = lane % 4;
    __local ushort *at = local_mem + group * TM_LOCAL;
    const int for_t = get_group_id(0) < TG_PARTS;
    const uint split = get_group_id(0) % TG_PARTS;
    const uint width = for_t ? IN_FEATURES : OUT_FEATURES;
    const int along = for_t ? TM_A_ALONG_K : !TM_A_ALONG_K;
    /* Part `split` of the reduction, whole 8s, TG_PARTS of them; this
     * group's stretch of it, TM_SPLIT of those, every group walking the
     * same number of chunks (past its end, of zeros) between the
     * work-group's barriers. */
    const uint per = CEIL_DIV(width / 8, TG_PARTS) * 8;
    const uint pbeg = min(split * per, width);
    const uint pend = min(pbeg + per, width);
    const uint sub = CEIL_DIV((pend - pbeg) / 8, TM_SPLIT) * 8;
    const uint kbeg = min(pbeg + group * sub, pend);
    const uint end = min(kbeg + sub, pend);
    const int row0 = get_group_id(1) * TM_M + warp * 16;
    const __global storage_t *src = for_t ? x : dy;

    /* Rows past the end repeat the last row (never stored). */
    const __global storage_t *xr[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = min(row0 + (int)g + 8 * h, rows - 1);
        xr[h] = src + (size_t)r * width;
    }

    float acc[TM_TILES_N][4];
#pragma unroll
    for (int j = 0; j < TM_TILES_N; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;

    const __local ushort *ar = at + g * TM_LDA + q * 8;
    uint4 xv[TM_BATCH][2];
    for (uint c = 0; c < CEIL_DIV(sub, TM_CHUNK); c++) {
        const uint k0 = kbeg + c * TM_CHUNK;
        /* The chunk's first steps of X travel while it is staged. */
        tm_fetch(xv, xr, k0, 0, q, end);
        barrier(CLK_LOCAL_MEM_FENCE); /* the last chunk's products */
        tm_stage(at, for_t ? a : b, along, width, k0, end, tid);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s0 = 0; s0 < TM_STEPS; s0 += TM_BATCH) {
            if (s0 > 0)
                tm_fetch(xv, xr, k0, s0, q, end);
#pragma unroll
            for (int bt = 0; bt < TM_BATCH; bt++) {
                const uint s = s0 + bt;
                if (TM_STEPS % TM_BATCH != 0 && s >= TM_STEPS)
                    break;
                const uint4 x0 = xv[bt][0], x1 = xv[bt][1];
#pragma unroll
                for (int j = 0; j < TM_TILES_N; j++) {
                    const uint4 av =
                        *(const __local uint4 *)(ar + j * 8 * TM_LDA + s * 32);
                    const uint fa[4] = {x0.x, x1.x, x0.y, x1.y};
                    const uint fb[4] = {x0.z, x1.z, x0.w, x1.w};
                    mma_product(acc[j], fa, av.x, av.y);
                    mma_product(acc[j], fb, av.z, av.w);
                }
            }
        }
    }

#if TM_SPLIT > 1
    /* The groups' sums, added in group order by the first: group H's
     * accumulator (J, E) of this item at TM_HANDED(H, J, E). */
#define TM_HANDED(h, j, e)                                                   \
    handed[((((h) - 1) * TM_TILES_N + (j)) * 4 + (e)) * TM_GROUP + tid]
    __local float *handed = (__local float *)local_mem;
    barrier(CLK_LOCAL_MEM_FENCE); /* the last chunk's products */
    if (group > 0) {
#pragma unroll
        for (int j = 0; j < TM_TILES_N; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                TM_HANDED(group, j, e) = acc[j][e];
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (group > 0) {
        return;
    }
    for (uint h = 1; h < TM_SPLIT; h++) {
#pragma unroll
        for (int j = 0; j < TM_TILES_N; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                acc[j][e] += TM_HANDED(h, j, e);
            }
        }
    }
#undef TM_HANDED
#endif

    /* Accumulator e of tile j: row g (+8 for e >= 2), rank column 8j +
     * 2q + e % 2; part `split` of the row's TG_PARTS. */
    __global float *out =
        for_t ? SCRATCH_T(scratch, rows) : SCRATCH_G(scratch, rows);
#pragma unroll
    for (int j = 0; j < TM_TILES_N; j++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = row0 + (int)g + (e / 2) * 8;
            const uint col = j * 8 + q * 2 + e % 2;
            if (r < rows && col < RANK)
                out[((size_t)r * TG_PARTS + split) * RANK + col] =
                    SCALE * acc[j][e];
        }
    }
}
