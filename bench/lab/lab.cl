/* lab.cl - kernel designs tried out by bench/lab/lab.c before they go into
 * the templates. f32 only; K and N multiples of 4. */

#ifndef K
#define K 4096
#endif
#ifndef N
#define N 4096
#endif
#ifndef R
#define R 16
#endif
#ifndef SCALE
#define SCALE 2.0f
#endif

/* ---- xa_split: partial T = X*A over one K chunk per work-group ----
 * Work-item (tk, tm) streams float4s of K (tk, tk + XK, ...) of the XW
 * rows tm, tm + XT, ...; the A chunk is staged once (A_LOCAL) or read
 * through the cache. */
#ifndef XK
#define XK 16
#endif
#ifndef XT
#define XT 16
#endif
#ifndef XW
#define XW 4
#endif
#ifndef KC
#define KC 512
#endif
#ifndef A_LOCAL
#define A_LOCAL 1
#endif
#ifndef XU
#define XU 2
#endif
#ifndef XP
#define XP 0
#endif
#define STEPS (KC / (XK * 4))
#define RB (XT * XW)
#define A4 (4 * R + 4) /* floats per 4 rows of A in local memory */
#define A_AT(kk, j) (((kk) >> 2) * A4 + ((kk) & 3) * R + (j))
#define A_SIZE (KC / 4 * A4)
#define RED_SIZE (XT * R * (XK + 1))
#if A_LOCAL && A_SIZE > RED_SIZE
#define LM_SIZE A_SIZE
#else
#define LM_SIZE RED_SIZE
#endif

__kernel __attribute__((reqd_work_group_size(XK, XT, 1)))
void xa_split(const int rows, const __global float *restrict x,
              const __global float *restrict a,
              __global float *restrict tpart)
{
    __local float lm[LM_SIZE] __attribute__((aligned(16)));
    const int tk = get_local_id(0);
    const int tm = get_local_id(1);
    const int lid = tm * XK + tk;
    const int split = get_group_id(0);
    const int k0 = split * KC;
    const int row0 = get_group_id(1) * RB;
    float acc[XW][R];
    const __global float *xr[XW];
#pragma unroll
    for (int i = 0; i < XW; i++) {
        xr[i] = x + (size_t)min(row0 + i * XT + tm, rows - 1) * K + k0;
#pragma unroll
        for (int j = 0; j < R; j++) {
            acc[i][j] = 0.0f;
        }
    }
    const int n = min(KC, K - k0);
#if XP
    /* first step's X in flight while A is staged */
    float4 xn[XW];
#pragma unroll
    for (int i = 0; i < XW; i++) {
        xn[i] = tk * 4 < n ? vload4(0, xr[i] + tk * 4) : (float4)0.0f;
    }
#endif
#if XP == 2
    /* and the second step's */
    float4 xm[XW];
#pragma unroll
    for (int i = 0; i < XW; i++) {
        xm[i] = (XK + tk) * 4 < n ? vload4(0, xr[i] + (XK + tk) * 4)
                                  : (float4)0.0f;
    }
#endif
    for (int v = lid; v < n * R / 4; v += XK * XT) {
        const int kk = v * 4 / R;
        vstore4(vload4(v, a + (size_t)k0 * R), 0, lm + A_AT(kk, v * 4 % R));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#if XU > 0
#pragma unroll XU
#endif
    for (int s = 0; s < STEPS; s++) {
        const int kk = (s * XK + tk) * 4;
#if XP == 2
        float4 xc[XW];
#pragma unroll
        for (int i = 0; i < XW; i++) {
            xc[i] = xn[i];
            xn[i] = xm[i];
        }
        const int kn = kk + 2 * XK * 4;
        if (s + 2 < STEPS && kn < n) {
#pragma unroll
            for (int i = 0; i < XW; i++) {
                xm[i] = vload4(0, xr[i] + kn);
            }
        }
#elif XP
        float4 xc[XW];
#pragma unroll
        for (int i = 0; i < XW; i++) {
            xc[i] = xn[i];
        }
        const int kn = kk + XK * 4;
        if (s + 1 < STEPS && kn < n) {
#pragma unroll
            for (int i = 0; i < XW; i++) {
                xn[i] = vload4(0, xr[i] + kn);
            }
        }
#endif
        if (kk < n) {
            float xv[XW][4];
#pragma unroll
            for (int i = 0; i < XW; i++) {
#if XP
                float4 v = xc[i];
#else
                float4 v = vload4(0, xr[i] + kk);
#endif
                xv[i][0] = v.s0;
                xv[i][1] = v.s1;
                xv[i][2] = v.s2;
                xv[i][3] = v.s3;
            }
#pragma unroll
            for (int c = 0; c < 4; c++) {
#pragma unroll
                for (int j = 0; j < R; j += 4) {
                    const float4 av = vload4(0, lm + A_AT(kk + c, j));
#pragma unroll
                    for (int i = 0; i < XW; i++) {
                        acc[i][j] = fma(xv[i][c], av.s0, acc[i][j]);
                        acc[i][j + 1] = fma(xv[i][c], av.s1, acc[i][j + 1]);
                        acc[i][j + 2] = fma(xv[i][c], av.s2, acc[i][j + 2]);
                        acc[i][j + 3] = fma(xv[i][c], av.s3, acc[i][j + 3]);
                    }
                }
            }
        }
    }
#pragma unroll
    for (int i = 0; i < XW; i++) {
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int j = 0; j < R; j++) {
            lm[(tm * R + j) * (XK + 1) + tk] = acc[i][j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int o = lid; o < XT * R; o += XK * XT) {
            float sum = 0.0f;
#pragma unroll
            for (int p = 0; p < XK; p++) {
                sum += lm[o * (XK + 1) + p];
            }
            const int row = row0 + i * XT + o / R;
            if (row < rows) {
                tpart[((size_t)split * rows + row) * R + o % R] = sum;
            }
        }
    }
}

/* ---- expand: Y = SCALE * (sum of the T partials) * B ----
 * EC work-items, a float4 of columns each, ER rows per work-group; each
 * work-item keeps its R x 4 block of B in registers. */
#ifndef EC
#define EC 256
#endif
#ifndef ER
#define ER 32
#endif
__kernel __attribute__((reqd_work_group_size(EC, 1, 1)))
void expand(const int rows, const int nsplit,
            const __global float *restrict tpart,
            const __global float *restrict b, __global float *restrict y)
{
    __local float tl[ER * R];
    const int lid = get_local_id(0);
    const int row0 = get_group_id(1) * ER;
    const int col = (get_group_id(0) * EC + lid) * 4;
    for (int o = lid; o < ER * R; o += EC) {
        const int row = min(row0 + o / R, rows - 1);
        float sum = 0.0f;
        for (int s = 0; s < nsplit; s++) {
            sum += tpart[((size_t)s * rows + row) * R + o % R];
        }
        tl[o] = SCALE * sum;
    }
    float4 bv[R];
#pragma unroll
    for (int j = 0; j < R; j++) {
        bv[j] = col < N ? vload4(0, b + (size_t)j * N + col) : (float4)0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int nr = min(rows - row0, ER);
    if (col < N) {
        for (int m = 0; m < nr; m++) {
            float4 yv = (float4)0.0f;
#pragma unroll
            for (int j = 0; j < R; j++) {
                yv = fma((float4)tl[m * R + j], bv[j], yv);
            }
            vstore4(yv, 0, y + (size_t)(row0 + m) * N + col);
        }
    }
}

/* ---- dsplit + dcombine: few rows, W streamed once, K split over
 * DS work-groups per column block ----
 * dsplit work-item (tn, tk) owns columns col..col+3 and rows of W
 * k = ((s * DK + tk) * 4 + c) of its K chunk; work-groups of column block
 * 0 also accumulate the T partial (columns tn, tn + DN, ... of T). */
#ifndef DN
#define DN 8
#endif
#ifndef DK
#define DK 32
#endif
#ifndef DR
#define DR 8 /* rows (exact, for the lab) */
#endif
#ifndef DU
#define DU 2
#endif
#define DTQ ((R + DN - 1) / DN)

inline void dstream(const int with_t, float4 acc[DR], float tacc[DR][DTQ],
                    const int col, const int tn, const int tk,
                    const int kbeg, const int kend,
                    const __global float *restrict x,
                    const __global float *restrict w,
                    const __global float *restrict a)
{
#pragma unroll DU
    for (int k = kbeg + tk * 4; k < kend; k += DK * 4) {
        float4 wv[4];
#pragma unroll
        for (int c = 0; c < 4; c++) {
            wv[c] = vload4(0, w + (size_t)(k + c) * N + col);
        }
        float av[4][DTQ];
        if (with_t) {
#pragma unroll
            for (int c = 0; c < 4; c++) {
#pragma unroll
                for (int q = 0; q < DTQ; q++) {
                    const int j = tn + q * DN;
                    av[c][q] = j < R ? a[(size_t)(k + c) * R + j] : 0.0f;
                }
            }
        }
#pragma unroll
        for (int m = 0; m < DR; m++) {
            const float4 xv = vload4(0, x + (size_t)m * K + k);
            acc[m] = fma((float4)xv.s0, wv[0], acc[m]);
            acc[m] = fma((float4)xv.s1, wv[1], acc[m]);
            acc[m] = fma((float4)xv.s2, wv[2], acc[m]);
            acc[m] = fma((float4)xv.s3, wv[3], acc[m]);
            if (with_t) {
#pragma unroll
                for (int q = 0; q < DTQ; q++) {
                    tacc[m][q] = fma(xv.s0, av[0][q], tacc[m][q]);
                    tacc[m][q] = fma(xv.s1, av[1][q], tacc[m][q]);
                    tacc[m][q] = fma(xv.s2, av[2][q], tacc[m][q]);
                    tacc[m][q] = fma(xv.s3, av[3][q], tacc[m][q]);
                }
            }
        }
    }
}

/* ypart[s][m][n] and tpart[s][m][j]. */
__kernel __attribute__((reqd_work_group_size(DN, DK, 1)))
void dsplit(const __global float *restrict x,
            const __global float *restrict w,
            const __global float *restrict a,
            __global float *restrict ypart, __global float *restrict tpart)
{
    __local float red[DK * DN * 4 + 4];
    const int tn = get_local_id(0);
    const int tk = get_local_id(1);
    const int cb = get_group_id(0);
    const int s = get_group_id(1);
    const int ns = get_num_groups(1);
    const int chunk = ((K / 4 + ns - 1) / ns) * 4;
    const int kbeg = s * chunk;
    const int kend = min(kbeg + chunk, K);
    const int col = (cb * DN + tn) * 4;
    float4 acc[DR];
    float tacc[DR][DTQ];
#pragma unroll
    for (int m = 0; m < DR; m++) {
        acc[m] = (float4)0.0f;
#pragma unroll
        for (int q = 0; q < DTQ; q++) {
            tacc[m][q] = 0.0f;
        }
    }
    if (cb == 0) {
        dstream(1, acc, tacc, col, tn, tk, kbeg, kend, x, w, a);
    } else {
        dstream(0, acc, tacc, col, tn, tk, kbeg, kend, x, w, a);
    }
    for (int m = 0; m < DR; m++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        vstore4(acc[m], 0, red + (tk * DN + tn) * 4);
        barrier(CLK_LOCAL_MEM_FENCE);
        const int lid = tk * DN + tn;
        if (lid < DN * 4) {
            float sum = 0.0f;
            for (int p = 0; p < DK; p++) {
                sum += red[p * DN * 4 + lid];
            }
            ypart[((size_t)s * DR + m) * N + cb * DN * 4 + lid] = sum;
        }
    }
    if (cb == 0) {
        /* T partials: DR x R, reduce over tk. */
        for (int m = 0; m < DR; m++) {
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int q = 0; q < DTQ; q++) {
                red[(tk * DTQ + q) * DN + tn] = tacc[m][q];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const int lid = tk * DN + tn;
            if (lid < R) {
                const int q = lid / DN;
                const int n = lid % DN;
                float sum = 0.0f;
                for (int p = 0; p < DK; p++) {
                    sum += red[(p * DTQ + q) * DN + n];
                }
                tpart[((size_t)s * DR + m) * R + lid] = sum;
            }
        }
    }
}

/* Y = sum_s ypart + SCALE * (sum_s tpart) * B; a float4 of columns per
 * work-item, every row. */
__kernel void dcombine(const int ns, const __global float *restrict ypart,
                       const __global float *restrict tpart,
                       const __global float *restrict b,
                       __global float *restrict y)
{
    __local float tl[DR * R];
    const int lid = get_local_id(0);
    for (int o = lid; o < DR * R; o += get_local_size(0)) {
        float sum = 0.0f;
        for (int s = 0; s < ns; s++) {
            sum += tpart[(size_t)s * DR * R + o];
        }
        tl[o] = SCALE * sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int col = get_global_id(0) * 4;
    if (col >= N) {
        return;
    }
    float4 acc[DR];
#pragma unroll
    for (int m = 0; m < DR; m++) {
        acc[m] = (float4)0.0f;
    }
    for (int s = 0; s < ns; s++) {
#pragma unroll
        for (int m = 0; m < DR; m++) {
            acc[m] += vload4(0, ypart + ((size_t)s * DR + m) * N + col);
        }
    }
    for (int j = 0; j < R; j++) {
        const float4 bv = vload4(0, b + (size_t)j * N + col);
#pragma unroll
        for (int m = 0; m < DR; m++) {
            acc[m] = fma((float4)tl[m * R + j], bv, acc[m]);
        }
    }
#pragma unroll
    for (int m = 0; m < DR; m++) {
        vstore4(acc[m], 0, y + (size_t)m * N + col);
    }
}

__kernel void copy4(const __global float4 *restrict src,
                    __global float4 *restrict dst)
{
    dst[get_global_id(0)] = src[get_global_id(0)];
}

/* Write-only and read-only streams: the ceilings of expand and xa. */
__kernel void fill4(__global float4 *restrict dst, const float v)
{
    dst[get_global_id(0)] = (float4)(v, v + 1.0f, v + 2.0f, v + 3.0f);
}

__kernel void sum4(const __global float4 *restrict src,
                   __global float *restrict out, const int per)
{
    const size_t base = get_group_id(0) * (size_t)per * get_local_size(0);
    float4 s = (float4)0.0f;
    for (int i = 0; i < per; i++) {
        s += src[base + (size_t)i * get_local_size(0) + get_local_id(0)];
    }
    out[get_global_id(0)] = s.s0 + s.s1 + s.s2 + s.s3;
}

/* Decode's access pattern alone: work-group (cb, s) reads the column slice
 * SN * 4 wide at cb of rows s * rows/S .. of W (K x N), SN x SK work-items,
 * each 4 consecutive rows per step; one float out per work-item. */
#ifndef SN
#define SN 8
#endif
#ifndef SK
#define SK 32
#endif
__kernel __attribute__((reqd_work_group_size(SN, SK, 1)))
void slice_read(const __global float *restrict w, __global float *restrict out)
{
    const int tn = get_local_id(0), tk = get_local_id(1);
    const int col = (get_group_id(0) * SN + tn) * 4;
    const int ns = get_num_groups(1), s = get_group_id(1);
    const int per = K / ns;
    float4 acc = (float4)0.0f;
#pragma unroll 2
    for (int k = s * per + tk * 4; k < (s + 1) * per; k += SK * 4) {
        acc += vload4(0, w + (size_t)k * N + col);
        acc += vload4(0, w + (size_t)(k + 1) * N + col);
        acc += vload4(0, w + (size_t)(k + 2) * N + col);
        acc += vload4(0, w + (size_t)(k + 3) * N + col);
    }
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] =
        acc.s0 + acc.s1 + acc.s2 + acc.s3;
}
