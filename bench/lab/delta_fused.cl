/* Lab (not part of specl): the bf16 delta (base: false) in one launch,
 * two ways, against lora_xa_mma then lora_expand (bench/logs/
 * delta-fused-lab-h100.txt). Appended to an emitted tensor-core delta,
 * whose helpers it uses (xm_load, xm_load_local, xm_multiply, load4/8,
 * store4/8):
 *   specl gen --target tensor -o D bench/specs/half.yaml
 *   cat D/bf16_q_delta_mma.cl bench/lab/delta_fused.cl > fz.cl
 * and built by the lab timer with -DFZ_SPLIT=, -DFZ_WARPS=, -DFZ_EXV=
 * (and -DFZ_NOEXP: the first kernel without its expansion). Assumes K a
 * multiple of 32 * FZ_SPLIT, N of FZ_EXV * FZ_SPLIT, r = 16, and rows a
 * multiple of 16.
 *
 * Both: a work-group takes 16 rows and one of FZ_SPLIT stretches of K;
 * its warps take every FZ_WARPS-th step of 32 values of K of the stretch
 * (X straight into registers, A staged transposed as lora_xa_mma does),
 * their sums meet in local memory and go to the scratch as a partial T.
 *   lora_delta_fused: the last work-group of the row block to finish (an
 *     atomic count behind GPU-scope fences) sums the partials and writes
 *     all of the block's Y = T*B.
 *   lora_delta_ticket: work-groups take their (row block, stretch) from
 *     an atomic ticket, so that a row block's groups start in order;
 *     each waits for its block's count, then writes its stretch's
 *     share of the block's columns of Y. */
#ifndef FZ_WARPS
#define FZ_WARPS 8
#endif
#ifndef FZ_SPLIT
#define FZ_SPLIT 4
#endif
#ifndef FZ_EXV
#define FZ_EXV 8
#endif
#define FZ_THREADS (32 * FZ_WARPS)
#define FZ_TILES_N CEIL_DIV(RANK, 8)
#define FZ_PER (CEIL_DIV(IN_FEATURES / 8, FZ_SPLIT) * 8)
#define FZ_STEPS CEIL_DIV(FZ_PER, 32)
#define FZ_WSTEPS CEIL_DIV(FZ_STEPS, FZ_WARPS) /* steps per warp */
#define FZ_LDA (FZ_STEPS * 32 + (FZ_STEPS % 2 == 0 ? 32 : 0))
#define FZ_LOCAL (FZ_TILES_N * 8 * FZ_LDA)

inline void fz_stage(__local ushort *at, const __global storage_t *a,
                     uint kbeg, uint n, uint tid)
{
    for (uint i = tid; i < FZ_STEPS * 32 * (RANK / 8); i += FZ_THREADS) {
        const uint k = i / (RANK / 8), c = i % (RANK / 8);
        const __global storage_t *p = a + (size_t)(kbeg + k) * RANK + c * 8;
        const uint4 w4 = k < n ? xm_load(p) : (uint4)0;
        const uint w[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
        for (int e = 0; e < 8; e++) {
            at[(c * 8 + e) * FZ_LDA + k] =
                (ushort)(w[e / 2] >> (16 * (e % 2)));
        }
    }
}

/* Phase 1 of both: this group's partial T (16 rows, stretch SPLIT of K)
 * to the scratch, [row][split][col]. AT: A's stage, then the warps' sums. */
inline void fz_partial(const int rows, const __global storage_t *x,
                       const __global storage_t *a, __global float *scratch,
                       __local ushort *at, const uint split, const int row0)
{
    const uint tid = get_local_id(0), lane = tid % 32, warp = tid / 32;
    const uint g = lane / 4, q = lane % 4;
    const uint kbeg = min(split * FZ_PER, (uint)IN_FEATURES);
    const uint n = min(kbeg + FZ_PER, (uint)IN_FEATURES) - kbeg;

    const __global storage_t *xr[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = min(row0 + (int)g + 8 * h, rows - 1);
        xr[h] = x + (size_t)r * IN_FEATURES + kbeg + q * 8;
    }
    /* warp w: steps w, w + FZ_WARPS, ... of the stretch */
    uint4 xv[FZ_WSTEPS][2];
#pragma unroll
    for (int i = 0; i < FZ_WSTEPS; i++) {
        const uint s = warp + i * FZ_WARPS;
        const uint k = s * 32 + q * 8;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            xv[i][h] = s < FZ_STEPS && k < n ? xm_load(xr[h] + s * 32)
                                             : (uint4)0;
        }
    }
    fz_stage(at, a, kbeg, n, tid);
    barrier(CLK_LOCAL_MEM_FENCE);

    float acc[FZ_TILES_N][4];
#pragma unroll
    for (int j = 0; j < FZ_TILES_N; j++) {
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    }
    const __local ushort *ar = at + g * FZ_LDA + q * 8;
#pragma unroll
    for (int i = 0; i < FZ_WSTEPS; i++) {
        const uint s = warp + i * FZ_WARPS;
        if (FZ_STEPS % FZ_WARPS == 0 || s < FZ_STEPS) {
            const uint4 x0 = xv[i][0], x1 = xv[i][1];
#pragma unroll
            for (int j = 0; j < FZ_TILES_N; j++) {
                const uint4 av = xm_load_local(ar + j * 8 * FZ_LDA + s * 32);
                xm_multiply(acc[j], x0.x, x1.x, x0.y, x1.y, av.x, av.y);
                xm_multiply(acc[j], x0.z, x1.z, x0.w, x1.w, av.z, av.w);
            }
        }
    }
    /* the warps' sums meet in local memory (over A's stage) */
    barrier(CLK_LOCAL_MEM_FENCE);
    __local float *red = (__local float *)at; /* [warp][16][16] */
#pragma unroll
    for (int j = 0; j < FZ_TILES_N; j++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = g + (e / 2) * 8;
            const uint col = j * 8 + q * 2 + e % 2;
            red[(warp * 16 + r) * (FZ_TILES_N * 8) + col] = acc[j][e];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint o = tid; o < 16 * RANK; o += FZ_THREADS) {
        const uint r = o / RANK, c = o % RANK;
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < FZ_WARPS; w++) {
            s += red[(w * 16 + r) * (FZ_TILES_N * 8) + c];
        }
        scratch[((size_t)(row0 + r) * FZ_SPLIT + split) * RANK + c] = s;
    }
}

/* The row block's T, summed from its FZ_SPLIT partials (which other
 * groups wrote: volatile loads, past L1), into TL. */
inline void fz_sum_t(const __global float *scratch, __local float *tl,
                     const int row0)
{
    const volatile __global float *tp = scratch;
    for (uint o = get_local_id(0); o < 16 * RANK; o += FZ_THREADS) {
        const uint r = o / RANK, c = o % RANK;
        float s = 0.0f;
#pragma unroll
        for (int p = 0; p < FZ_SPLIT; p++) {
            s += tp[((size_t)(row0 + r) * FZ_SPLIT + p) * RANK + c];
        }
        tl[o] = SCALE * s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Y = T*B for the block's rows, columns C0 .. C0 + NCOLS, FZ_EXV a
 * work-item, with B's values for them in registers. */
inline void fz_expand(const int rows, const __global storage_t *b,
                      __global storage_t *y, const __local float *tl,
                      const int row0, const uint c0, const uint ncols)
{
    const int nr = min(rows - row0, 16);
    for (uint cv = get_local_id(0); cv < ncols / FZ_EXV; cv += FZ_THREADS) {
        const uint col = c0 + cv * FZ_EXV;
#if FZ_EXV == 8
        float8 bv[RANK];
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            bv[j] = load8(b, (size_t)j * OUT_FEATURES + col);
        }
        for (int m = 0; m < nr; m++) {
            float8 yv = (float8)0.0f;
#pragma unroll
            for (int j = 0; j < RANK; j++) {
                yv = fma((float8)tl[m * RANK + j], bv[j], yv);
            }
            store8(y, (size_t)(row0 + m) * OUT_FEATURES + col, yv);
        }
#else
        float4 bv[RANK];
#pragma unroll
        for (int j = 0; j < RANK; j++) {
            bv[j] = load4(b, (size_t)j * OUT_FEATURES + col);
        }
        for (int m = 0; m < nr; m++) {
            float4 yv = (float4)0.0f;
#pragma unroll
            for (int j = 0; j < RANK; j++) {
                yv = fma((float4)tl[m * RANK + j], bv[j], yv);
            }
            store4(y, (size_t)(row0 + m) * OUT_FEATURES + col, yv);
        }
#endif
    }
}

/* Groups (FZ_SPLIT, rows / 16); COUNTS: a zeroed int per row block. */
__kernel __attribute__((reqd_work_group_size(FZ_THREADS, 1, 1)))
void lora_delta_fused(const int rows, const __global storage_t *restrict x,
                      const __global storage_t *restrict a,
                      const __global storage_t *restrict b,
                      __global storage_t *restrict y,
                      __global float *restrict scratch,
                      __global int *restrict counts)
{
    __local ushort at[FZ_LOCAL] __attribute__((aligned(16)));
    __local float tl[16 * RANK];
    __local int last;
    const uint block = get_group_id(1);
    fz_partial(rows, x, a, scratch, at, get_group_id(0), block * 16);
    /* the last of the row block's FZ_SPLIT groups writes its Y */
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        const int seen = atomic_inc(&counts[block]);
        last = seen == FZ_SPLIT - 1;
        if (last) {
            counts[block] = 0;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!last) {
        return;
    }
#ifdef FZ_NOEXP
    return;
#endif
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    fz_sum_t(scratch, tl, block * 16);
    fz_expand(rows, b, y, tl, block * 16, 0, OUT_FEATURES);
}

/* Groups (FZ_SPLIT, rows / 16); COUNTS: FZ_NB zeroed ints, one per row
 * block, then the ticket at FZ_NB * 2. */
#ifndef FZ_NB
#define FZ_NB 256
#endif
__kernel __attribute__((reqd_work_group_size(FZ_THREADS, 1, 1)))
void lora_delta_ticket(const int rows, const __global storage_t *restrict x,
                       const __global storage_t *restrict a,
                       const __global storage_t *restrict b,
                       __global storage_t *restrict y,
                       __global float *restrict scratch,
                       __global int *restrict counts)
{
    __local ushort at[FZ_LOCAL] __attribute__((aligned(16)));
    __local float tl[16 * RANK];
    __local uint ticket;
    if (get_local_id(0) == 0) {
        ticket = atomic_inc(&counts[FZ_NB * 2]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint split = ticket % FZ_SPLIT, block = ticket / FZ_SPLIT;
    fz_partial(rows, x, a, scratch, at, split, block * 16);
    /* every group of the block waits for all of its partials; the block's
     * groups hold consecutive tickets, so all of them have started */
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        atomic_inc(&counts[block]);
        while (atomic_add(&counts[block], 0) < FZ_SPLIT) {
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    fz_sum_t(scratch, tl, block * 16);
    fz_expand(rows, b, y, tl, block * 16, split * (OUT_FEATURES / FZ_SPLIT),
              OUT_FEATURES / FZ_SPLIT);
}
