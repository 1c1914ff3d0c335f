/* lora_backward_reference.c - lora_backward's checking and measuring:
 * the float64 reference, the naive kernels' plan, the costs, the shape
 * line and the BLAS peer (op_lora_backward.c's op_def names them). */
#include "lora_backward.h"

#include <stdlib.h>

/* The buffers in plan order (bwd_plan). */
enum { BUF_X, BUF_W, BUF_A, BUF_B, BUF_DY, BUF_DX, BUF_DA, BUF_DB };

/* T = scale*X*A and G = scale*dY*B^T row by row, then the sums over rows
 * of dA and dB and each row of dX, as the definitions read. */
int bwd_reference(const struct kernel_spec *ks,
                         const float *const *in, const size_t *sizes,
                         double *const *out)
{
    size_t rows = sizes[0];
    struct bwd c;
    bwd_read(ks, &c);
    size_t K = (size_t)c.K, N = (size_t)c.N, R = (size_t)c.R;
    double scale = emitted_float(spec_lora_scale(ks));
    const float *x = in[BUF_X], *w = in[BUF_W], *a = in[BUF_A];
    const float *b = in[BUF_B], *dy = in[BUF_DY];
    double *dx = out[BUF_DX], *da = out[BUF_DA], *db = out[BUF_DB];
    double *t = calloc(rows * R + 1, sizeof *t);
    double *g = calloc(rows * R + 1, sizeof *g);
    if (t == NULL || g == NULL) {
        free(t);
        free(g);
        return -1;
    }
    int lay = c.layout;
    for (size_t m = 0; m < rows; m++) {
        lora_reference_t(x + m * K, a, K, R, scale, lay, t + m * R);
        for (size_t j = 0; j < R; j++) {
            double dyb = 0;
            for (size_t n = 0; n < N; n++) {
                dyb += (double)dy[m * N + n] * b[lora_at(lay, j, n, R, N)];
            }
            g[m * R + j] = scale * dyb;
        }
    }
    for (size_t k = 0; da != NULL && k < K; k++) {
        for (size_t j = 0; j < R; j++) {
            size_t at = lora_at(lay, k, j, K, R);
            double sum = c.accumulate ? in[BUF_DA][at] : 0;
            for (size_t m = 0; m < rows; m++) {
                sum += (double)x[m * K + k] * g[m * R + j];
            }
            da[at] = sum;
        }
    }
    for (size_t j = 0; db != NULL && j < R; j++) {
        for (size_t n = 0; n < N; n++) {
            size_t at = lora_at(lay, j, n, R, N);
            double sum = c.accumulate ? in[BUF_DB][at] : 0;
            for (size_t m = 0; m < rows; m++) {
                sum += t[m * R + j] * dy[m * N + n];
            }
            db[at] = sum;
        }
    }
    for (size_t m = 0; dx != NULL && m < rows; m++) {
        for (size_t k = 0; k < K; k++) {
            double sum = 0;
            for (size_t n = 0; bwd_uses_w(&c) && n < N; n++) {
                sum += (double)dy[m * N + n] * w[lora_at(lay, k, n, K, N)];
            }
            for (size_t j = 0; j < R; j++) {
                sum += g[m * R + j] * a[lora_at(lay, k, j, K, R)];
            }
            dx[m * K + k] = sum;
        }
    }
    free(t);
    free(g);
    return 0;
}

/* naive_bwd_tg: G and scale*T into the scratch, one work-item per element;
 * then dA, dB and dX, one work-item per element. */
void bwd_naive(const struct kernel_spec *ks, struct plan *p)
{
    struct bwd c;
    bwd_read(ks, &c);
    bwd_plan_shape(ks, &c, p);
    plan_dtype(p, ks->dtype);
    p->path[0].scratch_per = 2 * c.R;
    p->path[0].scratch_sizes = SIZE_FIRST;
    const char *const tg_args[] = {"rows", "x", "a", "b", "dy", "scratch",
                                   NULL};
    const char *const da_args[] = {"rows", "x", "scratch", "da", NULL};
    const char *const db_args[] = {"rows", "dy", "scratch", "db", NULL};
    /* w is unread without the base (and may be NULL): a stands in. */
    const char *const dx_args[] = {"rows", "dy", bwd_uses_w(&c) ? "w" : "a",
                                   "a", "scratch", "dx", NULL};
    naive_launch(p, "naive_bwd_tg", 2 * c.R, tg_args);
    naive_launch_fixed(p, "naive_bwd_da", c.K * c.R, da_args);
    naive_launch_fixed(p, "naive_bwd_db", c.R * c.N, db_args);
    if (c.input_grad) {
        naive_launch(p, "naive_bwd_dx", c.K, dx_args);
    }
}

/* Every buffer once (dA and dB twice to accumulate); the six products. */
void bwd_costs(const struct kernel_spec *ks, const size_t *sizes,
                      double *bytes, double *flops)
{
    size_t rows = sizes[0];
    struct bwd c;
    bwd_read(ks, &c);
    double M = (double)rows;
    double K = (double)c.K, N = (double)c.N, R = (double)c.R;
    *bytes = plan_io_bytes(ks, sizes);
    if (c.accumulate) {
        *bytes += (K + N) * R * (double)dtype_size(ks->dtype);
    }
    /* T, G, dA, dB: 2MKr + 2MNr + 2MKr + 2MNr */
    *flops = 4 * M * R * (K + N);
    if (c.input_grad) {
        *flops += 2 * M * K * R + (bwd_uses_w(&c) ? 2 * M * N * K : 0);
    }
}

void bwd_shape_text(const struct kernel_spec *ks,
                           const size_t *sizes, char *buf, size_t size)
{
    size_t rows = sizes[0];
    struct bwd c;
    bwd_read(ks, &c);
    lora_shape_line(buf, size, rows, c.K, c.N, c.R,
                    !c.input_grad ? " adapter only" : c.base ? "" : " no base",
                    c.accumulate);
}

/* What one would write without specl: T = scale*X*A, G = scale*dY*B^T,
 * dB = T^T*dY, dA = X^T*G, dX = dY*W^T + G*A^T. */
void bwd_blas_peer(const struct kernel_spec *ks, size_t rows,
                          struct gemm_chain *g)
{
    struct bwd c;
    bwd_read(ks, &c);
    size_t K = (size_t)c.K, N = (size_t)c.N, R = (size_t)c.R;
    double scale = emitted_float(spec_lora_scale(ks));
    double beta = c.accumulate ? 1 : 0;
    int in_out = c.layout == LAYOUT_IN_OUT;
    g->temp_per_row = R;
    g->temp2_per_row = R;
    g->n_gemm = 0;
    lora_peer_t(g, rows, K, R, scale, c.layout);
    g->gemm[g->n_gemm++] =
        (struct gemm){rows, R, N, scale, 0, "dy", "b", "temp2", 0, in_out};
    /* out_in: dB^T = dY^T*T and dA^T = G^T*X */
    g->gemm[g->n_gemm++] =
        in_out ? (struct gemm){R, N, rows, 1, beta, "temp", "dy", "db", 1, 0}
               : (struct gemm){N, R, rows, 1, beta, "dy", "temp", "db", 1, 0};
    g->gemm[g->n_gemm++] =
        in_out ? (struct gemm){K, R, rows, 1, beta, "x", "temp2", "da", 1, 0}
               : (struct gemm){R, K, rows, 1, beta, "temp2", "x", "da", 1, 0};
    if (c.input_grad) {
        double dx_beta = 0;
        if (bwd_uses_w(&c)) {
            g->gemm[g->n_gemm++] =
                (struct gemm){rows, K, N, 1, 0, "dy", "w", "dx", 0, in_out};
            dx_beta = 1;
        }
        g->gemm[g->n_gemm++] = (struct gemm){rows, K, R, 1, dx_beta, "temp2",
                                             "a", "dx", 0, in_out};
    }
}

