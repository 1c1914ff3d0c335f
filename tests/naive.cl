/* naive.cl - obviously correct reference kernels: one work-item per output
 * element (lora) or per row (row ops), straightforward loops, arithmetic in
 * float32. The generated kernels are checked against these on the same
 * device. The sizes are macros an op's naive plan defines in a prelude
 * (gen/op_*.c, the naive hook); the defaults below only stand in for the
 * other ops' sizes, whose kernels share this file. rows is the only
 * argument besides the buffers. Work-groups may reach past the last row or column: those
 * work-items return at once. */
#include "storage_@dtype@.cl"

/* lora_forward */
#ifndef IN_FEATURES
#define IN_FEATURES 1   /* K: columns of X, rows of W and A */
#endif
#ifndef OUT_FEATURES
#define OUT_FEATURES 1  /* N: columns of W, B and Y */
#endif
#ifndef RANK
#define RANK 1          /* r: columns of A, rows of B */
#endif
#ifndef HAS_BASE
#define HAS_BASE 1      /* 1: Y includes X*W */
#endif
#ifndef ACCUMULATE
#define ACCUMULATE 0    /* 1: Y += result */
#endif
#ifndef INPUT_GRAD
#define INPUT_GRAD 1    /* lora_backward: 1: dX is computed */
#endif
#ifndef WEIGHT_OUT_IN
#define WEIGHT_OUT_IN 0 /* 1: w [N][K], a [r][K], b [N][r] (and da, db) */
#endif
/* The offsets of w[k][n], a[k][j], b[j][n] (in_out's indices) in the
 * layout. */
#if WEIGHT_OUT_IN
#define W_AT(k, n) ((size_t)(n) * IN_FEATURES + (k))
#define A_AT(k, j) ((size_t)(j) * IN_FEATURES + (k))
#define B_AT(j, n) ((size_t)(n) * RANK + (j))
#else
#define W_AT(k, n) ((size_t)(k) * OUT_FEATURES + (n))
#define A_AT(k, j) ((size_t)(k) * RANK + (j))
#define B_AT(j, n) ((size_t)(j) * OUT_FEATURES + (n))
#endif
/* lora_forward: factor of (X*A)*B; softmax: applied to x first */
#ifndef SCALE
#define SCALE 1.0f
#endif
/* row ops */
#ifndef FEATURES
#define FEATURES 1      /* elements per row */
#endif
#ifndef EPS
#define EPS 1e-5f       /* rmsnorm, layernorm: added under the root */
#endif
#ifndef ACTIVATION
#define ACTIVATION 0    /* swiglu: 0 silu, 1 gelu_tanh, 2 gelu (erf) */
#endif
#ifndef TABLE_ROWS
#define TABLE_ROWS 1    /* test_gather: rows of the table */
#endif
/* cross_entropy */
#ifndef CE_IGNORE_INDEX
#define CE_IGNORE_INDEX (-100) /* the label of rows that do not count */
#endif
#ifndef CE_SOFTCAP
#define CE_SOFTCAP 0.0f /* 0: none */
#endif
#ifndef CE_SMOOTHING
#define CE_SMOOTHING 0.0f /* label smoothing */
#endif
#ifndef CE_REDUCTION
#define CE_REDUCTION 0 /* 0 mean, 1 sum, 2 none */
#endif
#ifndef CE_GRAD
#define CE_GRAD 1 /* 1: dlogits written */
#endif
/* attention (HEADS and HEAD_DIM as rope's) */
#ifndef KV_HEADS
#define KV_HEADS 1      /* key and value heads */
#endif
#ifndef ATTN_CAUSAL
#define ATTN_CAUSAL 0   /* key j seen by query i at j <= i + seq_kv - seq_q */
#endif
#ifndef ATTN_WINDOW
#define ATTN_WINDOW 0   /* and at i + seq_kv - seq_q - j < ATTN_WINDOW */
#endif
#ifndef ATTN_SCALE
#define ATTN_SCALE 1.0f /* times q.k */
#endif
#ifndef ATTN_SOFTCAP
#define ATTN_SOFTCAP 0.0f /* 0: none */
#endif
/* rope (naive_rope computes in double) */
#if defined(ROPE_THETA_BITS) && !defined(cl_khr_fp64)
#error "naive_rope: the device has no double (cl_khr_fp64)"
#endif
#ifndef HEADS
#define HEADS 1         /* heads per row */
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 2      /* elements per head */
#endif
#ifndef ROT_DIM
#define ROT_DIM 2       /* leading elements of a head that turn */
#endif
#ifndef ROPE_STYLE
#define ROPE_STYLE 0    /* 0 pairs (i, i + ROT_DIM/2), 1 pairs (2i, 2i+1) */
#endif
#ifndef ROPE_INVERSE
#define ROPE_INVERSE 0  /* 1: by -angle */
#endif
#ifndef ROPE_SCALING
#define ROPE_SCALING 0  /* 0 none, 1 linear, 2 llama3 */
#endif
/* theta and the scaling's values as the bits of doubles (as_double) */
#ifndef ROPE_THETA_BITS
#define ROPE_THETA_BITS 4666723172467343360 /* 10000.0 */
#define ROPE_FACTOR_BITS 0
#define ROPE_LOW_BITS 0
#define ROPE_HIGH_BITS 0
#define ROPE_ORIGINAL 0
#endif

/* t[m][j] = SCALE * sum_k x[m][k] * a[k][j]; one work-item per (j, m). */
__kernel void naive_xa(int rows, __global const storage_t *x,
                       __global const storage_t *a, __global float *t)
{
    int j = get_global_id(0);
    int m = get_global_id(1);
    if (j >= RANK || m >= rows) {
        return;
    }
    float acc = 0.0f;
    for (int k = 0; k < IN_FEATURES; k++) {
        acc += load1(x, (size_t)m * IN_FEATURES + k) *
               load1(a, A_AT(k, j));
    }
    t[(size_t)m * RANK + j] = SCALE * acc;
}

/* y[m][n] (+)= sum_k x[m][k] w[k][n] + sum_j t[m][j] b[j][n]; one
 * work-item per (n, m). */
__kernel void naive_lora(int rows, __global const storage_t *x,
                         __global const storage_t *w,
                         __global const float *t,
                         __global const storage_t *b,
                         __global storage_t *y)
{
    int n = get_global_id(0);
    int m = get_global_id(1);
    if (n >= OUT_FEATURES || m >= rows) {
        return;
    }
    float acc = 0.0f;
    if (HAS_BASE) {
        for (int k = 0; k < IN_FEATURES; k++) {
            acc += load1(x, (size_t)m * IN_FEATURES + k) *
                   load1(w, W_AT(k, n));
        }
    }
    for (int j = 0; j < RANK; j++) {
        acc += t[(size_t)m * RANK + j] *
               load1(b, B_AT(j, n));
    }
    size_t at = (size_t)m * OUT_FEATURES + n;
    if (ACCUMULATE) {
        acc += load1(y, at);
    }
    store1(y, at, acc);
}

/* One work-item per row, as the three below. */
__kernel void naive_softmax(int rows, __global const storage_t *x,
                            __global storage_t *y)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * FEATURES;
    float mx = -INFINITY;
    for (int i = 0; i < FEATURES; i++) {
        mx = fmax(mx, SCALE * load1(x, base + i));
    }
    float sum = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        sum += exp(SCALE * load1(x, base + i) - mx);
    }
    for (int i = 0; i < FEATURES; i++) {
        store1(y, base + i, exp(SCALE * load1(x, base + i) - mx) / sum);
    }
}

__kernel void naive_rmsnorm(int rows, __global const storage_t *x,
                            __global const storage_t *gamma,
                            __global storage_t *y)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * FEATURES;
    float ss = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        float v = load1(x, base + i);
        ss += v * v;
    }
    float inv = 1.0f / sqrt(ss / FEATURES + EPS);
    for (int i = 0; i < FEATURES; i++) {
        store1(y, base + i, load1(x, base + i) * inv * load1(gamma, i));
    }
}

__kernel void naive_layernorm(int rows, __global const storage_t *x,
                              __global const storage_t *gamma,
                              __global const storage_t *beta,
                              __global storage_t *y)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * FEATURES;
    /* Two passes over x - x[0]: the same variance, but float sums at the
     * scale of the spread, not of the mean (mean 1e4, spread 1e-2 would
     * otherwise lose every digit of the variance). */
    float shift = load1(x, base);
    float sum = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        sum += load1(x, base + i) - shift;
    }
    float mean = sum / FEATURES;
    float var = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        float c = load1(x, base + i) - shift - mean;
        var += c * c;
    }
    float inv = 1.0f / sqrt(var / FEATURES + EPS);
    for (int i = 0; i < FEATURES; i++) {
        store1(y, base + i, (load1(x, base + i) - shift - mean) * inv *
                                load1(gamma, i) + load1(beta, i));
    }
}

/* lora_backward */

/* With G = SCALE * dY*B^T and T = X*A, t holds row m of G at
 * t[m * 2 * RANK] and row m of SCALE*T right after it (rows x 2 * RANK). */

/* t[m][c] = G[m][c] for c < RANK, SCALE*T[m][c - RANK] after; one
 * work-item per (c, m). */
__kernel void naive_bwd_tg(int rows, __global const storage_t *x,
                           __global const storage_t *a,
                           __global const storage_t *b,
                           __global const storage_t *dy, __global float *t)
{
    int c = get_global_id(0);
    int m = get_global_id(1);
    if (c >= 2 * RANK || m >= rows) {
        return;
    }
    float acc = 0.0f;
    if (c < RANK) {
        for (int n = 0; n < OUT_FEATURES; n++) {
            acc += load1(dy, (size_t)m * OUT_FEATURES + n) *
                   load1(b, B_AT(c, n));
        }
    } else {
        for (int k = 0; k < IN_FEATURES; k++) {
            acc += load1(x, (size_t)m * IN_FEATURES + k) *
                   load1(a, A_AT(k, c - RANK));
        }
    }
    t[(size_t)m * 2 * RANK + c] = SCALE * acc;
}

/* dx[m][k] = sum_n dy[m][n] w[k][n] (HAS_BASE) + sum_j G[m][j] a[k][j];
 * one work-item per (k, m). Without HAS_BASE, w is not read. */
__kernel void naive_bwd_dx(int rows, __global const storage_t *dy,
                           __global const storage_t *w,
                           __global const storage_t *a,
                           __global const float *t, __global storage_t *dx)
{
    int k = get_global_id(0);
    int m = get_global_id(1);
    if (k >= IN_FEATURES || m >= rows) {
        return;
    }
    float acc = 0.0f;
    if (HAS_BASE) {
        for (int n = 0; n < OUT_FEATURES; n++) {
            acc += load1(dy, (size_t)m * OUT_FEATURES + n) *
                   load1(w, W_AT(k, n));
        }
    }
    for (int j = 0; j < RANK; j++) {
        acc += t[(size_t)m * 2 * RANK + j] * load1(a, A_AT(k, j));
    }
    store1(dx, (size_t)m * IN_FEATURES + k, acc);
}

/* da[k][j] (+)= sum_m x[m][k] G[m][j]; one work-item per element. */
__kernel void naive_bwd_da(int rows, __global const storage_t *x,
                           __global const float *t, __global storage_t *da)
{
    int e = get_global_id(0);
    if (e >= IN_FEATURES * RANK) {
        return;
    }
    int k = e / RANK;
    int j = e % RANK;
    float acc = 0.0f;
    for (int m = 0; m < rows; m++) {
        acc += load1(x, (size_t)m * IN_FEATURES + k) *
               t[(size_t)m * 2 * RANK + j];
    }
    if (ACCUMULATE) {
        acc += load1(da, A_AT(k, j));
    }
    store1(da, A_AT(k, j), acc);
}

/* db[j][n] (+)= sum_m SCALE*T[m][j] dy[m][n]; one work-item per
 * element. */
__kernel void naive_bwd_db(int rows, __global const storage_t *dy,
                           __global const float *t, __global storage_t *db)
{
    int e = get_global_id(0);
    if (e >= RANK * OUT_FEATURES) {
        return;
    }
    int j = e / OUT_FEATURES;
    int n = e % OUT_FEATURES;
    float acc = 0.0f;
    for (int m = 0; m < rows; m++) {
        acc += t[(size_t)m * 2 * RANK + RANK + j] *
               load1(dy, (size_t)m * OUT_FEATURES + n);
    }
    if (ACCUMULATE) {
        acc += load1(db, B_AT(j, n));
    }
    store1(db, B_AT(j, n), acc);
}

/* test_gather (tests/op_gather.c): one work-item per element of y, token
 * b * seq + s in dimension 1. */
__kernel void naive_gather(int batch, int seq, __global const int *ids,
                           __global const storage_t *table,
                           __global const float *bias,
                           __global storage_t *y)
{
    int d = get_global_id(0);
    size_t token = get_global_id(1);
    if (d >= FEATURES || token >= (size_t)batch * seq) {
        return;
    }
    int id = ids[token];
    size_t b = token / seq;
    float v = bias[b * FEATURES + d];
    if (id >= 0 && id < TABLE_ROWS) {
        v += SCALE * load1(table, (size_t)id * FEATURES + d);
    }
    store1(y, token * FEATURES + d, v);
}

/* The gated MLP's activation and its slope, as the textbooks write them. */
float naive_act(float x)
{
#if ACTIVATION == 0
    return x / (1.0f + exp(-x));
#elif ACTIVATION == 1
    float u = 0.7978845608f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanh(u));
#else
    return 0.5f * x * (1.0f + erf(x / sqrt(2.0f)));
#endif
}

float naive_act_grad(float x)
{
#if ACTIVATION == 0
    float s = 1.0f / (1.0f + exp(-x));
    return s * (1.0f + x * (1.0f - s));
#elif ACTIVATION == 1
    float u = 0.7978845608f * (x + 0.044715f * x * x * x);
    float t = tanh(u);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * 0.7978845608f *
                                   (1.0f + 3.0f * 0.044715f * x * x);
#else
    return 0.5f * (1.0f + erf(x / sqrt(2.0f))) +
           x * exp(-0.5f * x * x) / sqrt(2.0f * M_PI_F);
#endif
}

/* y = act(gate) * up; one work-item per element. */
__kernel void naive_swiglu(int rows, __global const storage_t *gate,
                           __global const storage_t *up,
                           __global storage_t *y)
{
    int j = get_global_id(0), m = get_global_id(1);
    if (j >= FEATURES || m >= rows) {
        return;
    }
    size_t at = (size_t)m * FEATURES + j;
    store1(y, at, naive_act(load1(gate, at)) * load1(up, at));
}

/* dgate = dy * up * act'(gate), dup = dy * act(gate). */
__kernel void naive_swiglu_backward(int rows, __global const storage_t *gate,
                                    __global const storage_t *up,
                                    __global const storage_t *dy,
                                    __global storage_t *dgate,
                                    __global storage_t *dup)
{
    int j = get_global_id(0), m = get_global_id(1);
    if (j >= FEATURES || m >= rows) {
        return;
    }
    size_t at = (size_t)m * FEATURES + j;
    float g = load1(gate, at), d = load1(dy, at);
    store1(dgate, at, d * load1(up, at) * naive_act_grad(g));
    store1(dup, at, d * naive_act(g));
}

/* sum = x + residual as stored, then rmsnorm of it; one work-item per
 * row. */
__kernel void naive_add_rmsnorm(int rows, __global const storage_t *x,
                                __global const storage_t *residual,
                                __global const storage_t *gamma,
                                __global storage_t *sum,
                                __global storage_t *y)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * FEATURES;
    float ss = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        store1(sum, base + i, load1(x, base + i) + load1(residual, base + i));
        float v = load1(sum, base + i);
        ss += v * v;
    }
    float inv = 1.0f / sqrt(ss / FEATURES + EPS);
    for (int i = 0; i < FEATURES; i++) {
        store1(y, base + i, load1(sum, base + i) * inv * load1(gamma, i));
    }
}

/* rope, in double: freq_i = theta^(-2i / ROT_DIM), scaled as Llama 3.1
 * does, and cos and sin of position * freq_i (an angle rounded to float
 * is off by 1e-3 rad at position 65535). One work-item per (head, row),
 * each pair read before it is written. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

double naive_rope_freq(int i)
{
    double f = pow(as_double((long)ROPE_THETA_BITS), -2.0 * i / ROT_DIM);
    double factor = as_double((long)ROPE_FACTOR_BITS);
    if (ROPE_SCALING == 1) {
        return f / factor;
    }
    if (ROPE_SCALING == 2) {
        double lo = as_double((long)ROPE_LOW_BITS);
        double hi = as_double((long)ROPE_HIGH_BITS);
        double wavelen = 2 * M_PI / f;
        if (wavelen < ROPE_ORIGINAL / hi) {
            return f;
        }
        if (wavelen > ROPE_ORIGINAL / lo) {
            return f / factor;
        }
        double smooth = (ROPE_ORIGINAL / wavelen - lo) / (hi - lo);
        return (1 - smooth) * f / factor + smooth * f;
    }
    return f;
}

__kernel void naive_rope(int rows, __global const storage_t *x,
                         __global const int *positions,
                         __global storage_t *y)
{
    int h = get_global_id(0), m = get_global_id(1);
    if (h >= HEADS || m >= rows) {
        return;
    }
    size_t base = ((size_t)m * HEADS + h) * HEAD_DIM;
    for (int i = 0; i < ROT_DIM / 2; i++) {
        double angle = positions[m] * naive_rope_freq(i);
        float c = (float)cos(angle), s = (float)sin(angle);
        if (ROPE_INVERSE) {
            s = -s;
        }
        int ia = ROPE_STYLE ? 2 * i : i;
        int ib = ROPE_STYLE ? 2 * i + 1 : i + ROT_DIM / 2;
        float a = load1(x, base + ia), b = load1(x, base + ib);
        store1(y, base + ia, a * c - b * s);
        store1(y, base + ib, a * s + b * c);
    }
    for (int d = ROT_DIM; d < HEAD_DIM; d++) {
        store1(y, base + d, load1(x, base + d));
    }
}
#endif
/* rmsnorm_backward, layernorm_backward: with xhat the forward's normalised
 * x, r its 1 / sqrt(mean square or variance + EPS) and g = gamma * dy,
 * dx = r * (g - mean(g) - xhat * mean(g * xhat)) (rmsnorm: no mean(g)),
 * dgamma (+)= sum over rows of dy * xhat, dbeta (+)= sum of dy. The row
 * kernels leave in scratch (rows x 3) each row's shift x[0] and the mean
 * of x - shift (layernorm, as naive_layernorm; 0 for rmsnorm) and r for
 * the column kernels: xhat = (x - shift - mean) * r. */

/* xhat of element AT of row M, from the row's entries in SCRATCH. */
float naive_norm_xhat(__global const storage_t *x, size_t at, int m,
                      __global const float *scratch)
{
    return (load1(x, at) - scratch[3 * m] - scratch[3 * m + 1]) *
           scratch[3 * m + 2];
}

/* dx of row M, whose statistics are in SCRATCH. */
void naive_norm_dx(int m, int centred, __global const storage_t *x,
                   __global const storage_t *gamma,
                   __global const storage_t *dy, __global storage_t *dx,
                   __global const float *scratch)
{
    size_t base = (size_t)m * FEATURES;
    float sg = 0.0f, sgx = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        float g = load1(gamma, i) * load1(dy, base + i);
        sg += g;
        sgx += g * naive_norm_xhat(x, base + i, m, scratch);
    }
    float mg = centred ? sg / FEATURES : 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        float g = load1(gamma, i) * load1(dy, base + i);
        float xhat = naive_norm_xhat(x, base + i, m, scratch);
        store1(dx, base + i,
               scratch[3 * m + 2] * (g - mg - xhat * sgx / FEATURES));
    }
}

__kernel void naive_rmsnorm_backward(int rows, __global const storage_t *x,
                                     __global const storage_t *gamma,
                                     __global const storage_t *dy,
                                     __global storage_t *dx,
                                     __global float *scratch)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * FEATURES;
    float ss = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        float v = load1(x, base + i);
        ss += v * v;
    }
    scratch[3 * m] = 0.0f;
    scratch[3 * m + 1] = 0.0f;
    scratch[3 * m + 2] = 1.0f / sqrt(ss / FEATURES + EPS);
    naive_norm_dx(m, 0, x, gamma, dy, dx, scratch);
}

__kernel void naive_layernorm_backward(int rows, __global const storage_t *x,
                                       __global const storage_t *gamma,
                                       __global const storage_t *dy,
                                       __global storage_t *dx,
                                       __global float *scratch)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * FEATURES;
    float shift = load1(x, base);
    float sum = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        sum += load1(x, base + i) - shift;
    }
    float mean = sum / FEATURES;
    float var = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        float c = load1(x, base + i) - shift - mean;
        var += c * c;
    }
    scratch[3 * m] = shift;
    scratch[3 * m + 1] = mean;
    scratch[3 * m + 2] = 1.0f / sqrt(var / FEATURES + EPS);
    naive_norm_dx(m, 1, x, gamma, dy, dx, scratch);
}

/* dgamma[j] (+)= sum over rows of dy * xhat; one work-item per column. */
__kernel void naive_norm_dgamma(int rows, __global const storage_t *x,
                                __global const storage_t *dy,
                                __global float *dgamma,
                                __global const float *scratch)
{
    int j = get_global_id(0);
    if (j >= FEATURES) {
        return;
    }
    float acc = 0.0f;
    for (int m = 0; m < rows; m++) {
        size_t at = (size_t)m * FEATURES + j;
        acc += load1(dy, at) * naive_norm_xhat(x, at, m, scratch);
    }
    dgamma[j] = ACCUMULATE ? dgamma[j] + acc : acc;
}

/* dbeta[j] (+)= sum over rows of dy; one work-item per column. */
__kernel void naive_norm_dbeta(int rows, __global const storage_t *dy,
                               __global float *dbeta)
{
    int j = get_global_id(0);
    if (j >= FEATURES) {
        return;
    }
    float acc = 0.0f;
    for (int m = 0; m < rows; m++) {
        acc += load1(dy, (size_t)m * FEATURES + j);
    }
    dbeta[j] = ACCUMULATE ? dbeta[j] + acc : acc;
}

/* cross_entropy: scratch[0] = the rows whose label is not
 * CE_IGNORE_INDEX; one work-item. */
__kernel void naive_cross_entropy_count(int rows,
                                        __global const int *labels,
                                        __global float *scratch)
{
    if (get_global_id(0) != 0) {
        return;
    }
    int n = 0;
    for (int m = 0; m < rows; m++) {
        n += labels[m] != CE_IGNORE_INDEX;
    }
    scratch[0] = (float)n;
}

inline float naive_ce_z(__global const storage_t *x, size_t i)
{
    float v = load1(x, i);
    return CE_SOFTCAP > 0.0f ? CE_SOFTCAP * tanh(v / CE_SOFTCAP) : v;
}

/* Row m's loss (into loss[m] for reduction none, else scratch[1 + m])
 * and gradient: 0 and zeros where ignored, NaN for a label outside the
 * vocabulary. One work-item per row. */
__kernel void naive_cross_entropy(int rows, __global const storage_t *logits,
                                  __global const int *labels,
                                  __global float *loss,
#if CE_GRAD
                                  __global storage_t *dlogits,
#endif
                                  __global float *scratch)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * FEATURES;
    int y = labels[m];
    bool ignored = y == CE_IGNORE_INDEX;
    bool valid = y >= 0 && y < FEATURES;
    float mx = -INFINITY, sum = 0.0f, zsum = 0.0f;
    for (int i = 0; i < FEATURES; i++) {
        mx = fmax(mx, naive_ce_z(logits, base + i));
        zsum += naive_ce_z(logits, base + i);
    }
    for (int i = 0; i < FEATURES; i++) {
        sum += exp(naive_ce_z(logits, base + i) - mx);
    }
    float zy = valid ? naive_ce_z(logits, base + y) : 0.0f;
    float l = ignored ? 0.0f
              : valid ? mx + log(sum) - (1.0f - CE_SMOOTHING) * zy -
                            CE_SMOOTHING / FEATURES * zsum
                      : NAN;
    float g = CE_REDUCTION == 0 ? 1.0f / scratch[0] : 1.0f;
    if (CE_REDUCTION == 2) {
        loss[m] = l;
    } else {
        scratch[1 + m] = l;
    }
#if CE_GRAD
    for (int i = 0; i < FEATURES; i++) {
        float z = naive_ce_z(logits, base + i);
        float d = exp(z - mx) / sum - CE_SMOOTHING / FEATURES -
                  (i == y ? 1.0f - CE_SMOOTHING : 0.0f);
        if (CE_SOFTCAP > 0.0f) {
            /* The cap's slope 1 - tanh(u)^2 as 1 / cosh(u)^2: taken as
             * 1 - (z / cap)^2 it cancels where tanh nears 1 (a logit of
             * 17 under a cap of 3: 0.3% off). */
            float c = cosh(load1(logits, base + i) / CE_SOFTCAP);
            d /= c * c;
        }
        store1(dlogits, base + i, ignored ? 0.0f : valid ? g * d : NAN);
    }
#endif
}

/* loss[0] = the sum of the rows' losses, over the count for the mean;
 * one work-item. */
__kernel void naive_cross_entropy_reduce(int rows, __global float *loss,
                                         __global const float *scratch)
{
    if (get_global_id(0) != 0) {
        return;
    }
    float total = 0.0f;
    for (int m = 0; m < rows; m++) {
        total += scratch[1 + m];
    }
    loss[0] = CE_REDUCTION == 0 ? total / scratch[0] : total;
}

/* Whether attention's query at position POS sees key J. */
bool naive_attn_sees(long pos, int j)
{
    bool seen = true;
#if ATTN_CAUSAL
    seen = seen && j <= pos;
#endif
#if ATTN_WINDOW > 0
    seen = seen && pos - j < ATTN_WINDOW;
#endif
    return seen;
}

/* attention's score of query row Q and key row K. */
float naive_attn_score(__global const storage_t *q, size_t qa,
                       __global const storage_t *k, size_t ka)
{
    float dot = 0.0f;
    for (int d = 0; d < HEAD_DIM; d++) {
        dot += load1(q, qa + d) * load1(k, ka + d);
    }
    float s = ATTN_SCALE * dot;
    return ATTN_SOFTCAP > 0.0f ? ATTN_SOFTCAP * tanh(s / ATTN_SOFTCAP) : s;
}

/* attention: one work-item per (query i, batch b and head h), exactly
 * seq_q of them in dimension 0 and batch * HEADS in dimension 1. */
__kernel void naive_attention(int batch, int seq_kv,
                              __global const storage_t *q,
                              __global const storage_t *k,
                              __global const storage_t *v,
                              __global storage_t *o, __global float *lse)
{
    int seq_q = (int)get_global_size(0);
    int i = get_global_id(0);
    size_t bh = get_global_id(1);
    if (bh >= (size_t)batch * HEADS) {
        return;
    }
    size_t b = bh / HEADS, h = bh % HEADS;
    size_t hk = h / (HEADS / KV_HEADS);
    long pos = (long)i + seq_kv - seq_q;
    size_t qa = ((b * seq_q + i) * HEADS + h) * HEAD_DIM;
    float mx = -INFINITY, sum = 0.0f, acc[HEAD_DIM];
    for (int j = 0; j < seq_kv; j++) {
        size_t ka = ((b * seq_kv + j) * KV_HEADS + hk) * HEAD_DIM;
        if (naive_attn_sees(pos, j)) {
            mx = fmax(mx, naive_attn_score(q, qa, k, ka));
        }
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        acc[d] = 0.0f;
    }
    for (int j = 0; j < seq_kv; j++) {
        size_t ka = ((b * seq_kv + j) * KV_HEADS + hk) * HEAD_DIM;
        if (naive_attn_sees(pos, j)) {
            float e = exp(naive_attn_score(q, qa, k, ka) - mx);
            sum += e;
            for (int d = 0; d < HEAD_DIM; d++) {
                acc[d] += e * load1(v, ka + d);
            }
        }
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        store1(o, qa + d, sum > 0.0f ? acc[d] / sum : 0.0f);
    }
    if (lse != 0) {
        lse[(b * HEADS + h) * seq_q + i] = sum > 0.0f ? mx + log(sum)
                                                      : -INFINITY;
    }
}

/* attention's probability of query row QA at LSE and key row KA, and in
 * *DS its dS: P (dO.v - D) times the softcap's derivative. */
float naive_attn_grad(__global const storage_t *q, size_t qa,
                      __global const storage_t *k,
                      __global const storage_t *v, size_t ka,
                      __global const storage_t *o,
                      __global const storage_t *do_, float lse, float *ds)
{
    float dot = 0.0f, dp = 0.0f, di = 0.0f;
    for (int d = 0; d < HEAD_DIM; d++) {
        dot += load1(q, qa + d) * load1(k, ka + d);
        dp += load1(do_, qa + d) * load1(v, ka + d);
        di += load1(do_, qa + d) * load1(o, qa + d);
    }
    float s = ATTN_SCALE * dot, der = 1.0f;
    if (ATTN_SOFTCAP > 0.0f) {
        float t = tanh(s / ATTN_SOFTCAP);
        s = ATTN_SOFTCAP * t;
        der = 1.0f - t * t;
    }
    float p = exp(s - lse);
    *ds = p * (dp - di) * der * ATTN_SCALE;
    return p;
}

/* attention_backward's dq: one work-item per (query i, batch b and head
 * h), exactly seq_q of them in dimension 0 and batch * HEADS in 1. */
__kernel void naive_attention_backward_dq(int batch, int seq_kv, __global const storage_t *q,
    __global const storage_t *k, __global const storage_t *v,
    __global const storage_t *o, __global const storage_t *do_,
    __global const float *lse, __global storage_t *dq)
{
    int seq_q = (int)get_global_size(0);
    int i = get_global_id(0);
    size_t bh = get_global_id(1);
    if (bh >= (size_t)batch * HEADS) {
        return;
    }
    size_t b = bh / HEADS, h = bh % HEADS;
    size_t hk = h / (HEADS / KV_HEADS);
    long pos = (long)i + seq_kv - seq_q;
    size_t qa = ((b * seq_q + i) * HEADS + h) * HEAD_DIM;
    float l = lse[(b * HEADS + h) * seq_q + i], acc[HEAD_DIM];
    for (int d = 0; d < HEAD_DIM; d++) {
        acc[d] = 0.0f;
    }
    for (int j = 0; j < seq_kv && !isinf(l); j++) {
        size_t ka = ((b * seq_kv + j) * KV_HEADS + hk) * HEAD_DIM;
        float ds;
        if (naive_attn_sees(pos, j)) {
            naive_attn_grad(q, qa, k, v, ka, o, do_, l, &ds);
            for (int d = 0; d < HEAD_DIM; d++) {
                acc[d] += ds * load1(k, ka + d);
            }
        }
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        store1(dq, qa + d, acc[d]);
    }
}

/* attention_backward's dk and dv: one work-item per (key j, batch b and
 * kv head hk), exactly seq_kv of them in dimension 0 and batch *
 * KV_HEADS in 1, over every query of every head of the group. */
__kernel void naive_attention_backward_dkv(int batch, int seq_q, __global const storage_t *q,
    __global const storage_t *k, __global const storage_t *v,
    __global const storage_t *o, __global const storage_t *do_,
    __global const float *lse, __global storage_t *dk,
    __global storage_t *dv)
{
    int seq_kv = (int)get_global_size(0);
    int j = get_global_id(0);
    size_t bh = get_global_id(1);
    if (bh >= (size_t)batch * KV_HEADS) {
        return;
    }
    size_t b = bh / KV_HEADS, hk = bh % KV_HEADS, group = HEADS / KV_HEADS;
    size_t ka = ((b * seq_kv + j) * KV_HEADS + hk) * HEAD_DIM;
    float dka[HEAD_DIM], dva[HEAD_DIM];
    for (int d = 0; d < HEAD_DIM; d++) {
        dka[d] = 0.0f;
        dva[d] = 0.0f;
    }
    for (size_t h = hk * group; h < (hk + 1) * group; h++) {
        for (int i = 0; i < seq_q; i++) {
            long pos = (long)i + seq_kv - seq_q;
            size_t qa = ((b * seq_q + i) * HEADS + h) * HEAD_DIM;
            float l = lse[(b * HEADS + h) * seq_q + i], ds;
            if (isinf(l) || !naive_attn_sees(pos, j)) {
                continue;
            }
            float p = naive_attn_grad(q, qa, k, v, ka, o, do_, l, &ds);
            for (int d = 0; d < HEAD_DIM; d++) {
                dka[d] += ds * load1(q, qa + d);
                dva[d] += p * load1(do_, qa + d);
            }
        }
    }
    for (int d = 0; d < HEAD_DIM; d++) {
        store1(dk, ka + d, dka[d]);
        store1(dv, ka + d, dva[d]);
    }
}
