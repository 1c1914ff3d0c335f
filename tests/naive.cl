/* naive.cl - obviously correct reference kernels: one work-item per output
 * element (lora) or per row (row ops), sizes passed at run time. The
 * generated kernels are checked against these on the same device. */
#include "storage_@dtype@.cl"

/* t[m][j] = scale * sum_k x[m][k] * a[k][j]; one work-item per (j, m). */
__kernel void naive_xa(int rows, int k_dim, int rank, float scale,
                       __global const storage_t *x,
                       __global const storage_t *a, __global float *t)
{
    int j = get_global_id(0);
    int m = get_global_id(1);
    if (j >= rank || m >= rows) {
        return;
    }
    float acc = 0.0f;
    for (int k = 0; k < k_dim; k++) {
        acc += load1(x, (size_t)m * k_dim + k) * load1(a, (size_t)k * rank + j);
    }
    t[(size_t)m * rank + j] = scale * acc;
}

/* y[m][n] (+)= sum_k x[m][k] w[k][n] + sum_j t[m][j] b[j][n]. */
__kernel void naive_lora(int rows, int k_dim, int n_dim, int rank,
                         int has_base, int accumulate,
                         __global const storage_t *x,
                         __global const storage_t *w,
                         __global const float *t,
                         __global const storage_t *b,
                         __global storage_t *y)
{
    int n = get_global_id(0);
    int m = get_global_id(1);
    if (n >= n_dim || m >= rows) {
        return;
    }
    float acc = 0.0f;
    if (has_base) {
        for (int k = 0; k < k_dim; k++) {
            acc += load1(x, (size_t)m * k_dim + k) *
                   load1(w, (size_t)k * n_dim + n);
        }
    }
    for (int j = 0; j < rank; j++) {
        acc += t[(size_t)m * rank + j] * load1(b, (size_t)j * n_dim + n);
    }
    size_t at = (size_t)m * n_dim + n;
    if (accumulate) {
        acc += load1(y, at);
    }
    store1(y, at, acc);
}

__kernel void naive_softmax(int rows, int d, float scale,
                            __global const storage_t *x,
                            __global storage_t *y)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * d;
    float mx = -INFINITY;
    for (int i = 0; i < d; i++) {
        mx = fmax(mx, scale * load1(x, base + i));
    }
    float sum = 0.0f;
    for (int i = 0; i < d; i++) {
        sum += exp(scale * load1(x, base + i) - mx);
    }
    for (int i = 0; i < d; i++) {
        store1(y, base + i, exp(scale * load1(x, base + i) - mx) / sum);
    }
}

__kernel void naive_rmsnorm(int rows, int d, float eps,
                            __global const storage_t *x,
                            __global const storage_t *gamma,
                            __global storage_t *y)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * d;
    float ss = 0.0f;
    for (int i = 0; i < d; i++) {
        float v = load1(x, base + i);
        ss += v * v;
    }
    float inv = 1.0f / sqrt(ss / d + eps);
    for (int i = 0; i < d; i++) {
        store1(y, base + i, load1(x, base + i) * inv * load1(gamma, i));
    }
}

__kernel void naive_layernorm(int rows, int d, float eps,
                              __global const storage_t *x,
                              __global const storage_t *gamma,
                              __global const storage_t *beta,
                              __global storage_t *y)
{
    int m = get_global_id(0);
    if (m >= rows) {
        return;
    }
    size_t base = (size_t)m * d;
    /* Two passes over x - x[0]: the same variance, but float sums at the
     * scale of the spread, not of the mean (mean 1e4, spread 1e-2 would
     * otherwise lose every digit of the variance). */
    float shift = load1(x, base);
    float sum = 0.0f;
    for (int i = 0; i < d; i++) {
        sum += load1(x, base + i) - shift;
    }
    float mean = sum / d;
    float var = 0.0f;
    for (int i = 0; i < d; i++) {
        float c = load1(x, base + i) - shift - mean;
        var += c * c;
    }
    float inv = 1.0f / sqrt(var / d + eps);
    for (int i = 0; i < d; i++) {
        store1(y, base + i, (load1(x, base + i) - shift - mean) * inv *
                                load1(gamma, i) + load1(beta, i));
    }
}
