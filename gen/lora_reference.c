/* lora_reference.c - checking and measuring lora_forward: its float64
 * reference, naive plan, costs, bench shape and BLAS peer. */
#include "lora_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- checking and measuring ------------------------------------------ */

/* The buffers in plan order (lora_plan). */
enum { BUF_X, BUF_W, BUF_A, BUF_B, BUF_Y };

/* Row by row: T = scale * X*A, then Y = (Y +) X*W + T*B. */
int lora_reference(const struct kernel_spec *ks,
                   const float *const *in, const size_t *sizes,
                   double *const *out)
{
    size_t rows = sizes[0];
    double *y = out[BUF_Y];
    struct lora c;
    lora_read(ks, &c);
    size_t K = (size_t)c.K, N = (size_t)c.N, R = (size_t)c.R;
    double scale = emitted_float(spec_lora_scale(ks));
    const float *x = in[BUF_X], *w = c.base ? in[BUF_W] : NULL;
    const float *a = in[BUF_A], *b = in[BUF_B], *y0 = in[BUF_Y];
    double *t = calloc(R ? R : 1, sizeof *t);
    double *row = calloc(N, sizeof *row);
    if (t == NULL || row == NULL) {
        free(t);
        free(row);
        return -1;
    }
    for (size_t m = 0; m < rows; m++) {
        const float *xm = x + m * K;
        lora_reference_t(xm, a, K, R, scale, c.layout, t);
        for (size_t n = 0; n < N; n++) {
            row[n] = c.accumulate ? y0[m * N + n] : 0.0;
        }
        for (size_t k = 0; c.base && k < K; k++) {
            double xv = xm[k];
            for (size_t n = 0; n < N; n++) {
                row[n] += xv * w[lora_at(c.layout, k, n, K, N)];
            }
        }
        for (size_t j = 0; j < R; j++) {
            for (size_t n = 0; n < N; n++) {
                row[n] += t[j] * b[lora_at(c.layout, j, n, R, N)];
            }
        }
        memcpy(y + m * N, row, N * sizeof *row);
    }
    free(t);
    free(row);
    return 0;
}

/* naive_xa: T = scale * X*A into the scratch, one work-item per element;
 * then naive_lora: Y (+)= X*W + T*B, one work-item per element. */
void lora_naive(const struct kernel_spec *ks, struct plan *p)
{
    struct lora c;
    lora_read(ks, &c);
    lora_plan_shape(ks, &c, p);
    plan_dtype(p, ks->dtype);
    p->path[0].scratch_per = c.R;
    p->path[0].scratch_sizes = SIZE_FIRST;
    const char *const xa_args[] = {"rows", "x", "a", "scratch", NULL};
    /* w is unread without the base (and may be NULL): x stands in. */
    const char *const lora_args[] = {"rows", "x", c.base ? "w" : "x",
                                     "scratch", "b", "y", NULL};
    naive_launch(p, "naive_xa", c.R, xa_args);
    naive_launch(p, "naive_lora", c.N, lora_args);
}

/* Every buffer once (y twice to accumulate); the three products. */
void lora_costs(const struct kernel_spec *ks, const size_t *sizes,
                double *bytes, double *flops)
{
    size_t rows = sizes[0];
    struct lora c;
    lora_read(ks, &c);
    double M = (double)rows;
    double K = (double)c.K, N = (double)c.N, R = (double)c.R;
    *bytes = plan_io_bytes(ks, sizes);
    if (c.accumulate) {
        *bytes += (double)(rows * (size_t)c.N) * (double)dtype_size(ks->dtype);
    }
    double base = c.base ? 2 * M * K * N : 0;
    *flops = base + 2 * M * K * R + 2 * M * R * N;
}

void lora_shape_text(const struct kernel_spec *ks, const size_t *sizes,
                     char *buf, size_t size)
{
    size_t rows = sizes[0];
    struct lora c;
    lora_read(ks, &c);
    lora_shape_line(buf, size, rows, c.K, c.N, c.R, c.base ? "" : " delta",
                    c.accumulate);
}

/* What one would write without specl: Y = X*W (added to Y to accumulate),
 * T = scale*X*A, Y += T*B. */
void lora_blas_peer(const struct kernel_spec *ks, size_t rows,
                    struct gemm_chain *g)
{
    struct lora c;
    lora_read(ks, &c);
    size_t K = (size_t)c.K, N = (size_t)c.N, R = (size_t)c.R;
    double beta = c.accumulate ? 1 : 0;
    int out_in = c.layout == LAYOUT_OUT_IN;
    g->temp_per_row = R;
    g->n_gemm = 0;
    if (c.base) {
        g->gemm[g->n_gemm++] = (struct gemm){rows, N, K, 1, beta,
                                             "x", "w", "y", 0, out_in};
        beta = 1;
    }
    lora_peer_t(g, rows, K, R, emitted_float(spec_lora_scale(ks)), c.layout);
    g->gemm[g->n_gemm++] = (struct gemm){rows, N, R, 1, beta,
                                         "temp", "b", "y", 0, out_in};
}
