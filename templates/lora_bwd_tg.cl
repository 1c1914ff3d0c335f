/* lora_bwd_tg.cl - G = SCALE*dY*B^T and SCALE*T = SCALE*X*A into the
 * float scratch, the first kernel of lora_backward (see
 * lora_bwd_common.cl). Reads X and dY once each.
 *
 * Plan: TG_ROWS rows per work-group, TG_THREADS work-items (1-D), VEC
 * (1, 2 or 4, divides K and N) the width of the loads of X and dY.
 *
 * Each work-item sums TG_W rows times TG_RJ of the RANK columns (the
 * rank is split over TG_RL work-items, four columns at a time, to keep
 * TG_W * TG_RJ <= 32 sums in registers), over its share of K (then N):
 * it steps VEC-wide at k = (step * TG_TK + tk) * VEC. Work-item lid is
 *   rl = lid % TG_RL, then tk's low part (TG_KW values), then the row
 *   group tm (TG_TM), then tk's high part,
 * so a warp holds few k (each A value it reads from local memory serves
 * the warp's rows: few distinct addresses per load) and reads whole
 * 16-byte pieces of TG_KW * VEC contiguous elements of each of its rows.
 * A (then B^T) goes through local memory one chunk of TG_CHUNK rows at a
 * time, double-buffered: the next chunk's loads are in registers while
 * the current one is used (one barrier a chunk), and the next step's X
 * (dY) loads are always in flight. With TG_XSTAGES (float32, VEC 4, a
 * device with cp.async) X (dY) goes through local memory too, a ring of
 * TG_XSTAGES steps of TG_ROWS x TG_SPAN copied TG_XSTAGES - 1 steps
 * ahead, so that more of it is in flight than registers could hold. The
 * TG_TK partial sums of each output meet in local memory at the end,
 * TG_RCOLS columns of the rank a round.
 *
 * Local memory, in floats (the plan computes the same TG_LOCAL):
 *   TG_RL     = the largest of 8, 4, 2, 1 with RANK % (4 * TG_RL) == 0,
 *               RANK / TG_RL >= 8 and TG_THREADS % (TG_RL * TG_TM) == 0
 *               (1 always qualifies)
 *   TG_RJ     = RANK / TG_RL
 *   TG_W      = 4, 2 or 1: the largest dividing TG_ROWS with
 *               TG_W * TG_RJ <= 32 (else 1)
 *   TG_TM     = TG_ROWS / TG_W
 *   TG_TK     = TG_THREADS / (TG_RL * TG_TM)
 *   TG_SPAN   = TG_TK * VEC
 *   TG_AGROUP = VEC * RANK + pad: RANK % 4 == 0: pad makes TG_AGROUP
 *               = 4 * TG_RL (mod 32); else pad 1 if VEC * RANK is even
 *   TG_CSTEPS = min(CEIL_DIV(max(K, N), TG_SPAN),
 *                   max(1, 2048 / (TG_TK * TG_AGROUP)))
 *   TG_CHUNK  = TG_CSTEPS * TG_SPAN
 *   TG_RCOLS  = RANK where TG_TM * RANK * (TG_TK + 1) <= 8192 (32 KiB);
 *               else min(RANK, max(1, max(2 * TG_CHUNK / VEC *
 *               TG_AGROUP, 2048) / (TG_TM * (TG_TK + 1))))
 *   TG_LOCAL  = max(2 * TG_CHUNK / VEC * TG_AGROUP,
 *                   TG_TM * TG_RCOLS * (TG_TK + 1))
 *   then the ring: TG_XSTAGES * TG_ROWS * TG_SPAN */
#include "lora_bwd_common.cl"

#if TG_PARTS != 1
#error "lora_bwd_tg.cl: G and T whole (TG_PARTS 1)"
#endif

#if !defined(TG_ROWS) || !defined(TG_THREADS) || !defined(VEC) ||       \
    !defined(TG_XSTAGES) || !defined(X_ONCE)
#error "lora_bwd_tg.cl: the plan must define TG_ROWS, TG_THREADS, VEC, \
TG_XSTAGES, X_ONCE"
#endif
#if TG_XSTAGES != 0 && (!defined(DTYPE_F32) || VEC != 4 || TG_XSTAGES < 2 || \
                        TG_XPENDING != TG_XSTAGES - 2)
#error "lora_bwd_tg.cl: TG_XSTAGES copies float32 rows 16 bytes a copy, \
TG_XPENDING = TG_XSTAGES - 2 in flight"
#endif

/* ---- Derived sizes ---- */

/* Rows per work-item and work-items along the rows with RL rank lanes. */
#define TG_W_OF(rl)                                                      \
    (TG_ROWS % 4 == 0 && 4 * (RANK / (rl)) <= 32                         \
         ? 4                                                             \
         : TG_ROWS % 2 == 0 && 2 * (RANK / (rl)) <= 32 ? 2 : 1)
#define TG_RL_OK(rl)                                                     \
    (RANK % (4 * (rl)) == 0 && RANK / (rl) >= 8 &&                       \
     TG_THREADS % ((rl) * (TG_ROWS / TG_W_OF(rl))) == 0)
#if TG_RL_OK(8)
#define TG_RL 8
#elif TG_RL_OK(4)
#define TG_RL 4
#elif TG_RL_OK(2)
#define TG_RL 2
#else
#define TG_RL 1
#endif
#define TG_RJ (RANK / TG_RL)       /* columns of the rank per work-item */
#define TG_W TG_W_OF(TG_RL)        /* rows per work-item */
#define TG_TM (TG_ROWS / TG_W)     /* row groups */
#if TG_THREADS % (TG_TM * TG_RL) != 0
#error "lora_bwd_tg.cl: TG_ROWS / TG_W must divide TG_THREADS"
#endif
#define TG_TK (TG_THREADS / (TG_TM * TG_RL)) /* work-items along K (N) */
#if TG_TK % 4 == 0
#define TG_KW 4
#elif TG_TK % 2 == 0
#define TG_KW 2
#else
#define TG_KW 1
#endif
#define TG_SPAN (TG_TK * VEC) /* columns one step covers */

#define TG_KN_MAX (IN_FEATURES > OUT_FEATURES ? IN_FEATURES : OUT_FEATURES)

/* Staged A and B^T: each VEC rows take TG_AGROUP floats. Along the rank
 * they are read as float4 where RANK divides by 4: a warp's TG_KW
 * groups then start 4 * TG_RL banks apart, and its TG_RL rank lanes
 * fill the banks between. */
#if RANK % 4 == 0
#define TG_AV 4
#define TG_AGROUP (VEC * RANK + (4 * TG_RL - VEC * RANK % 32 + 32) % 32)
#elif VEC * RANK % 2 == 0
#define TG_AV 1
#define TG_AGROUP (VEC * RANK + 1)
#else
#define TG_AV 1
#define TG_AGROUP (VEC * RANK)
#endif
/* A chunk is the most whole steps whose staged rows take at most 2048
 * floats, padding included (one step at least), and no more than the
 * longest product; two of them are staged at once. */
#define TG_STEP_FLOATS (TG_TK * TG_AGROUP) /* one step's rows, staged */
#define TG_FIT (TG_STEP_FLOATS >= 2048 ? 1 : 2048 / TG_STEP_FLOATS)
#define TG_CSTEPS                                                        \
    (CEIL_DIV(TG_KN_MAX, TG_SPAN) < TG_FIT ? CEIL_DIV(TG_KN_MAX, TG_SPAN) \
                                           : TG_FIT)
#define TG_CHUNK (TG_CSTEPS * TG_SPAN)
#define TG_BUF (TG_CHUNK / VEC * TG_AGROUP) /* floats of one buffer */
/* Row KK (< TG_CHUNK), column J of a staged chunk. */
#define TG_AT(kk, j) ((kk) / VEC * TG_AGROUP + (kk) % VEC * RANK + (j))
/* The sums meet TG_RCOLS columns of the rank a round: all of them where
 * they fit the 32 KiB a plan may use (one round, as few barriers as
 * can be); else as many as the staging buffers (2048 floats at least)
 * hold, so that a wide rank needs no more local memory than its
 * staging. */
#define TG_RED_COL (TG_TM * (TG_TK + 1)) /* floats per column of the rank */
#if TG_RED_COL * RANK <= 8192
#define TG_RCOLS RANK
#else
#define TG_RED_ROOM (2 * TG_BUF > 2048 ? 2 * TG_BUF : 2048)
#define TG_RED_FIT (TG_RED_ROOM / TG_RED_COL > 1 ? TG_RED_ROOM / TG_RED_COL : 1)
#define TG_RCOLS (TG_RED_FIT < RANK ? TG_RED_FIT : RANK)
#endif
#define TG_RSIZE (TG_RED_COL * TG_RCOLS)
#define TG_LOCAL (2 * TG_BUF > TG_RSIZE ? 2 * TG_BUF : TG_RSIZE)
#define TG_RING (TG_XSTAGES * TG_ROWS * TG_SPAN) /* floats of X's ring */
#if !defined(TG_LOCAL_BYTES) || (TG_LOCAL + TG_RING) * 4 != TG_LOCAL_BYTES
#error "lora_bwd_tg.cl: local memory differs from the plan's count"
#endif

/* ---- Vectors of VEC elements ---- */

#if VEC == 4
typedef float4 tg_vec_t;
#define TG_VEC_AT(v, c)                                                  \
    ((c) == 0 ? (v).s0 : (c) == 1 ? (v).s1 : (c) == 2 ? (v).s2 : (v).s3)
#define tg_loadv load4v /* fewer registers than load4 (storage_f32.cl) */
#elif VEC == 2
typedef float2 tg_vec_t;
#define TG_VEC_AT(v, c) ((c) == 0 ? (v).s0 : (v).s1)
#define tg_loadv load2
#elif VEC == 1
typedef float tg_vec_t;
#define TG_VEC_AT(v, c) (v)
#define tg_loadv load1
#else
#error "lora_bwd_tg.cl: VEC must be 1, 2 or 4"
#endif

/* ---- Staging, double-buffered through registers ---- */

/* A chunk is loaded in units: with RANK % 4 == 0, a float4 along the
 * rank of A, or a 4 x 4 block of B (four rows of B, four columns: four
 * rows of B^T, transposed on the way) where VEC is 4; else one element.
 * Unit u of TG_UNITS, work-item lid takes u = lid + p * TG_THREADS. */
#if TG_AV == 4
#define TG_UNITS_A (TG_CHUNK * (RANK / 4))
#else
#define TG_UNITS_A (TG_CHUNK * RANK)
#endif
#if TG_AV == 4 && VEC == 4
#define TG_BLOCKS 1 /* B^T in 4 x 4 blocks */
#define TG_UNITS_B (TG_CHUNK / 4 * (RANK / 4))
#else
#define TG_BLOCKS 0
#define TG_UNITS_B (TG_CHUNK * RANK)
#endif
#define TG_PF_A CEIL_DIV(TG_UNITS_A, TG_THREADS)
#define TG_PF_B CEIL_DIV(TG_UNITS_B, TG_THREADS)

/* Registers of one chunk in flight: A's units, or B's. */
typedef struct {
#if TG_AV == 4
    float4 a[TG_PF_A];
#else
    float a[TG_PF_A];
#endif
#if TG_BLOCKS
    float4 b[TG_PF_B][4];
#else
    float b[TG_PF_B];
#endif
} tg_pf_t;

/* Global -> registers: the chunk of rows K0 .. of A or B^T, LEN x RANK:
 * TRANSPOSED 0 where its rows lie contiguous (A in_out, K x r; B out_in,
 * N x r), TRANSPOSED 1 where they are the columns of a RANK x LEN matrix
 * (B in_out, r x N; A out_in, r x K); rows past LEN left out. */
inline void tg_fetch_chunk(tg_pf_t *pf, const __global storage_t *m,
                           const int transposed, const int k0,
                           const int len, const int lid)
{
    if (!transposed) {
#pragma unroll
        for (int p = 0; p < TG_PF_A; p++) {
            const int u = lid + p * TG_THREADS;
#if TG_AV == 4
            const int kk = u / (RANK / 4);
            if (u < TG_UNITS_A && k0 + kk < len) {
                pf->a[p] = load4(m, (size_t)(k0 + kk) * RANK +
                                        u % (RANK / 4) * 4);
            }
#else
            const int kk = u / RANK;
            if (u < TG_UNITS_A && k0 + kk < len) {
                pf->a[p] = load1(m, (size_t)(k0 + kk) * RANK + u % RANK);
            }
#endif
        }
    } else {
#pragma unroll
        for (int p = 0; p < TG_PF_B; p++) {
            const int u = lid + p * TG_THREADS;
#if TG_BLOCKS
            /* consecutive units: consecutive columns of B */
            const int nn = u % (TG_CHUNK / 4) * 4;
            const int j = u / (TG_CHUNK / 4) * 4;
            if (u < TG_UNITS_B && k0 + nn < len) {
                const size_t at = (size_t)j * len + k0 + nn;
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    pf->b[p][r] = load4(m, at + (size_t)r * len);
                }
            }
#else
            const int nn = u % TG_CHUNK;
            const int j = u / TG_CHUNK;
            if (u < TG_UNITS_B && k0 + nn < len) {
                pf->b[p] = load1(m, (size_t)j * len + k0 + nn);
            }
#endif
        }
    }
}

/* Registers -> local: the chunk TG_FETCH_CHUNK loaded, into MS. */
inline void tg_store_chunk(__local float *ms, const tg_pf_t *pf,
                           const int transposed, const int k0,
                           const int len, const int lid)
{
    if (!transposed) {
#pragma unroll
        for (int p = 0; p < TG_PF_A; p++) {
            const int u = lid + p * TG_THREADS;
#if TG_AV == 4
            const int kk = u / (RANK / 4);
            if (u < TG_UNITS_A && k0 + kk < len) {
                vstore4(pf->a[p], 0, ms + TG_AT(kk, u % (RANK / 4) * 4));
            }
#else
            const int kk = u / RANK;
            if (u < TG_UNITS_A && k0 + kk < len) {
                ms[TG_AT(kk, u % RANK)] = pf->a[p];
            }
#endif
        }
    } else {
#pragma unroll
        for (int p = 0; p < TG_PF_B; p++) {
            const int u = lid + p * TG_THREADS;
#if TG_BLOCKS
            const int nn = u % (TG_CHUNK / 4) * 4;
            const int j = u / (TG_CHUNK / 4) * 4;
            if (u < TG_UNITS_B && k0 + nn < len) {
                const float4 r0 = pf->b[p][0], r1 = pf->b[p][1];
                const float4 r2 = pf->b[p][2], r3 = pf->b[p][3];
                vstore4((float4)(r0.s0, r1.s0, r2.s0, r3.s0), 0,
                        ms + TG_AT(nn, j));
                vstore4((float4)(r0.s1, r1.s1, r2.s1, r3.s1), 0,
                        ms + TG_AT(nn + 1, j));
                vstore4((float4)(r0.s2, r1.s2, r2.s2, r3.s2), 0,
                        ms + TG_AT(nn + 2, j));
                vstore4((float4)(r0.s3, r1.s3, r2.s3, r3.s3), 0,
                        ms + TG_AT(nn + 3, j));
            }
#else
            const int nn = u % TG_CHUNK;
            const int j = u / TG_CHUNK;
            if (u < TG_UNITS_B && k0 + nn < len) {
                ms[TG_AT(nn, j)] = pf->b[p];
            }
#endif
        }
    }
}

/* ---- Streaming ---- */

/* Global -> registers: elements K .. K + VEC of rows FIRST + i * TG_TM
 * (i < TG_W; rows past the end read the last row, never stored) of SRC,
 * rows STRIDE elements long, if K < LEN (else XV is left as it is). */
inline void tg_fetch(tg_vec_t xv[TG_W], const __global storage_t *src,
                     const int stride, const int first, const int rows,
                     const int k, const int len)
{
    if (k < len) {
#pragma unroll
        for (int i = 0; i < TG_W; i++) {
            xv[i] = tg_loadv(src, (size_t)min(first + i * TG_TM, rows - 1) *
                                      stride + k);
        }
    }
}

#if TG_XSTAGES
#define TG_STR_(x) #x
#define TG_STR(x) TG_STR_(x)
#define TG_STEPS(len) CEIL_DIV(len, TG_SPAN) /* steps of a product */
#define TG_COPIES CEIL_DIV(TG_ROWS * TG_TK, TG_THREADS)

/* Step G of the rows ROW0 .. ROW0 + TG_ROWS of SRC (rows LEN long; rows
 * past ROWS repeat the last, k past LEN are left out) into slot
 * G % TG_XSTAGES of the ring, 16 bytes a copy, as one group of copies
 * (empty past the last step, so that every step commits one). */
inline void tg_copy_step(__local float *ring, const __global storage_t *src,
                         const int row0, const int rows, const int len,
                         const int g, const int lid)
{
    if (g < TG_STEPS(len)) {
        __local float *slot = ring + g % TG_XSTAGES * TG_ROWS * TG_SPAN;
#pragma unroll
        for (int p = 0; p < TG_COPIES; p++) {
            const int u = lid + p * TG_THREADS;
            const int r = u / TG_TK, k = g * TG_SPAN + u % TG_TK * VEC;
            if (u < TG_ROWS * TG_TK && k < len) {
                const __global storage_t *from =
                    src + (size_t)min(row0 + r, rows - 1) * len + k;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                             :
                             : "l"(slot + r * TG_SPAN + u % TG_TK * VEC),
                               "l"(from)
                             : "memory");
            }
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

/* Step G's copies, this work-item's and (after the barrier that follows)
 * every work-item's, have landed: each step commits one group. */
#define TG_STEP_LANDED()                                                 \
    asm volatile("cp.async.wait_group " TG_STR(TG_XPENDING) ";" ::: "memory")
#endif

/* acc[i][jj] = sum over k < LEN of ROW_i[k] * M[k][j] (j the work-item's
 * jj-th rank column: 4 * (rl + TG_RL * (jj / 4)) + jj % 4 with TG_AV 4),
 * this work-item's share, where M is A (LEN = K) or B^T (LEN = N),
 * TRANSPOSED as tg_fetch_chunk takes it. TG_CHUNK is a whole number of
 * steps, so the next step's columns are always TG_SPAN further on, in
 * this chunk or the next: each step loads (or copies) them before it
 * computes. ROW0 + TM is the first of the work-item's rows. */
inline void tg_product(float acc[TG_W][TG_RJ], __local float *ms,
                       __local float *ring, const __global storage_t *m,
                       const int transposed, const __global storage_t *src,
                       const int row0, const int tm, const int rows,
                       const int len, const int tk, const int rl,
                       const int lid)
{
#pragma unroll
    for (int i = 0; i < TG_W; i++) {
#pragma unroll
        for (int jj = 0; jj < TG_RJ; jj++) {
            acc[i][jj] = 0.0f;
        }
    }
#if TG_XSTAGES
    /* The last product's reads of the ring are behind tg_store's
     * barriers. */
    for (int g = 0; g < TG_XSTAGES - 1; g++) {
        tg_copy_step(ring, src, row0, rows, len, g, lid);
    }
#else
    tg_vec_t xn[TG_W];
    tg_fetch(xn, src, len, row0 + tm, rows, tk * VEC, len);
#endif
    tg_pf_t pf;
    tg_fetch_chunk(&pf, m, transposed, 0, len, lid);
    int buf = 0;
    barrier(CLK_LOCAL_MEM_FENCE); /* the last product's sums are read */
    for (int k0 = 0; k0 < len; k0 += TG_CHUNK) {
        __local float *ch = ms + buf * TG_BUF;
        /* The buffer was last read two chunks ago: a barrier since. */
        tg_store_chunk(ch, &pf, transposed, k0, len, lid);
#if TG_XSTAGES
        TG_STEP_LANDED();
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k0 + TG_CHUNK < len) {
            tg_fetch_chunk(&pf, m, transposed, k0 + TG_CHUNK, len, lid);
        }
        const int n = min(TG_CHUNK, len - k0);
        for (int step = 0; step < TG_CSTEPS; step++) {
            const int kk = (step * TG_TK + tk) * VEC;
            tg_vec_t xv[TG_W];
#if TG_XSTAGES
            const int g = k0 / TG_SPAN + step;
            if (step > 0) {
                TG_STEP_LANDED();
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            /* into the slot of step g - 1, which every work-item has
             * read: the barrier above */
            tg_copy_step(ring, src, row0, rows, len, g + TG_XSTAGES - 1,
                         lid);
            const __local float *at =
                ring + (g % TG_XSTAGES * TG_ROWS + tm) * TG_SPAN + tk * VEC;
#pragma unroll
            for (int i = 0; i < TG_W; i++) {
                xv[i] = vload4(0, at + i * TG_TM * TG_SPAN);
            }
#else
#pragma unroll
            for (int i = 0; i < TG_W; i++) {
                xv[i] = xn[i];
            }
            tg_fetch(xn, src, len, row0 + tm, rows, k0 + kk + TG_SPAN, len);
#endif
            if (kk < n) {
#pragma unroll
                for (int c = 0; c < VEC; c++) {
#if TG_AV == 4
#pragma unroll
                    for (int jj = 0; jj < TG_RJ; jj += 4) {
                        const int j = 4 * (rl + TG_RL * (jj / 4));
                        const float4 mv = vload4(0, ch + TG_AT(kk + c, j));
#pragma unroll
                        for (int i = 0; i < TG_W; i++) {
                            const float xc = TG_VEC_AT(xv[i], c);
                            acc[i][jj] = fma(xc, mv.s0, acc[i][jj]);
                            acc[i][jj + 1] = fma(xc, mv.s1, acc[i][jj + 1]);
                            acc[i][jj + 2] = fma(xc, mv.s2, acc[i][jj + 2]);
                            acc[i][jj + 3] = fma(xc, mv.s3, acc[i][jj + 3]);
                        }
                    }
#else
#pragma unroll
                    for (int jj = 0; jj < TG_RJ; jj++) {
                        const float mv = ch[TG_AT(kk + c, jj)];
#pragma unroll
                        for (int i = 0; i < TG_W; i++) {
                            acc[i][jj] =
                                fma(TG_VEC_AT(xv[i], c), mv, acc[i][jj]);
                        }
                    }
#endif
                }
            }
        }
        buf ^= 1;
    }
}

/* ---- Reduction over the TG_TK work-items of a row ---- */

/* The rank column of a work-item's jj-th sum. */
#if TG_AV == 4
#define TG_J(rl, jj) (4 * ((rl) + TG_RL * ((jj) / 4)) + (jj) % 4)
#else
#define TG_J(rl, jj) (jj)
#endif

/* Whether rank column J (less J0) is in a round of COLS columns. */
#if TG_RCOLS < RANK
#define TG_IN_ROUND(j, cols) ((j) >= 0 && (j) < (cols))
#else
#define TG_IN_ROUND(j, cols) 1
#endif

/* Row I of each work-item, columns J0 .. J0 + COLS of the rank: parks
 * acc[i] in RED (the select on a constant keeps acc in registers); after
 * it, output o < TG_TM * COLS (row row0 + I * TG_TM + o / COLS, column
 * J0 + o % COLS) is tg_sum(red, o). Rows TG_TK + 1 apart. */
inline void tg_park(__local float *red, const float acc[TG_W][TG_RJ],
                    const int i, const int j0, const int cols,
                    const int tm, const int tk, const int rl)
{
#pragma unroll
    for (int w = 0; w < TG_W; w++) {
        if (w == i) {
#pragma unroll
            for (int jj = 0; jj < TG_RJ; jj++) {
                const int j = TG_J(rl, jj) - j0;
                if (TG_IN_ROUND(j, cols)) {
                    red[(tm * cols + j) * (TG_TK + 1) + tk] = acc[w][jj];
                }
            }
        }
    }
}

inline float tg_sum(const __local float *red, const int o)
{
    float sum = 0.0f;
    for (int p = 0; p < TG_TK; p++) {
        sum += red[o * (TG_TK + 1) + p];
    }
    return sum;
}

/* OUT[row][j] = SCALE * the work-group's sums for its rows, row < ROWS.
 * The next product's first barrier guards RED. */
inline void tg_store(__global float *out, __local float *red,
                     const float acc[TG_W][TG_RJ], const int rows,
                     const int row0, const int tm, const int tk,
                     const int rl, const int lid)
{
#pragma unroll
    for (int i = 0; i < TG_W; i++) {
        for (int j0 = 0; j0 < RANK; j0 += TG_RCOLS) {
            const int cols = min(TG_RCOLS, RANK - j0);
            barrier(CLK_LOCAL_MEM_FENCE); /* the chunk or last round is read */
            tg_park(red, acc, i, j0, cols, tm, tk, rl);
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int o = lid; o < TG_TM * cols; o += TG_THREADS) {
                const int row = row0 + i * TG_TM + o / cols;
                if (row < rows) {
                    out[(size_t)row * RANK + j0 + o % cols] =
                        SCALE * tg_sum(red, o);
                }
            }
        }
    }
}

/* SCALE * T = SCALE * X*A (group 0 along the second dimension) or G =
 * SCALE * dY*B^T (group 1) for rows group * TG_ROWS .. + TG_ROWS: the two
 * products in work-groups apart, so that each walks one reduction. With
 * X_ONCE, G alone (one group along the second dimension): lora_bwd_xpass
 * computes T. */
__kernel __attribute__((reqd_work_group_size(TG_THREADS, 1, 1)))
void lora_bwd_tg(const int rows, const __global storage_t *restrict x,
                 const __global storage_t *restrict a,
                 const __global storage_t *restrict b,
                 const __global storage_t *restrict dy,
                 __global float *restrict scratch)
{
    __local float ms[TG_LOCAL] __attribute__((aligned(16)));
#if TG_XSTAGES
    __local float ring[TG_RING] __attribute__((aligned(16)));
#else
    __local float *ring = NULL;
#endif
    const int lid = get_local_id(0);
    const int rl = lid % TG_RL;
    const int q = lid / TG_RL;
    const int tm = q / TG_KW % TG_TM;
    const int tk = q / (TG_KW * TG_TM) * TG_KW + q % TG_KW;
    const int row0 = get_group_id(0) * TG_ROWS;

    float acc[TG_W][TG_RJ];
    if (!X_ONCE && get_group_id(1) == 0) {
        tg_product(acc, ms, ring, a, WEIGHT_OUT_IN, x, row0, tm, rows,
                   IN_FEATURES, tk, rl, lid);
        tg_store(SCRATCH_T(scratch, rows), ms, acc, rows, row0, tm, tk, rl,
                 lid);
    } else {
        tg_product(acc, ms, ring, b, !WEIGHT_OUT_IN, dy, row0, tm, rows,
                   OUT_FEATURES, tk, rl, lid);
        tg_store(SCRATCH_G(scratch, rows), ms, acc, rows, row0, tm, tk, rl,
                 lid);
    }
}
