/* lora_backward_reference.c - lora_backward's checking and measuring:
 * the float64 reference, the naive kernels' plan, the costs, the shape
 * line and the BLAS peer (op_lora_backward.c's op_def names them). */
#include "lora_backward.h"
#include "parallel.h"

#include <stdlib.h>

/* The buffers in plan order (bwd_plan). */
enum { BUF_X, BUF_W, BUF_A, BUF_B, BUF_DY, BUF_DX, BUF_DA, BUF_DB };

/* What bwd_reference's loops share: the inputs, and T and G (rows x r,
 * float64) once their pass has filled them. */
struct bwd_ref_job {
    const struct bwd *c;
    size_t rows;
    double scale;
    const float *const *in;
    double *const *out;
    double *t, *g;
};

/* Row M of T = scale*X*A and G = scale*dY*B^T. */
static void bwd_ref_tg(void *ctx, size_t m)
{
    const struct bwd_ref_job *j = ctx;
    size_t K = (size_t)j->c->K, N = (size_t)j->c->N, R = (size_t)j->c->R;
    int lay = j->c->layout;
    const float *dy = j->in[BUF_DY], *b = j->in[BUF_B];
    lora_reference_t(j->in[BUF_X] + m * K, j->in[BUF_A], K, R, j->scale,
                     lay, j->t + m * R);
    for (size_t r = 0; r < R; r++) {
        double dyb = 0;
        for (size_t n = 0; n < N; n++) {
            dyb += (double)dy[m * N + n] * b[lora_at(lay, r, n, R, N)];
        }
        j->g[m * R + r] = j->scale * dyb;
    }
}

/* Output COL's r sums over the rows: dA's row COL (X^T*G) for BUF_DA,
 * dB's column COL (T^T*dY) for BUF_DB. */
static void bwd_ref_sums(const struct bwd_ref_job *j, int buf, size_t col)
{
    size_t K = (size_t)j->c->K, N = (size_t)j->c->N, R = (size_t)j->c->R;
    int da = buf == BUF_DA, lay = j->c->layout;
    size_t width = da ? K : N;
    const float *src = j->in[da ? BUF_X : BUF_DY];
    const double *factor = da ? j->g : j->t;
    for (size_t r = 0; r < R; r++) {
        size_t at =
            da ? lora_at(lay, col, r, K, R) : lora_at(lay, r, col, R, N);
        double sum = j->c->accumulate ? j->in[buf][at] : 0;
        for (size_t m = 0; m < j->rows; m++) {
            sum += factor[m * R + r] * src[m * width + col];
        }
        j->out[buf][at] = sum;
    }
}

static void bwd_ref_da(void *ctx, size_t k)
{
    bwd_ref_sums(ctx, BUF_DA, k);
}

static void bwd_ref_db(void *ctx, size_t n)
{
    bwd_ref_sums(ctx, BUF_DB, n);
}

/* Row M of dX = dY*W^T (with the base) + G*A^T. */
static void bwd_ref_dx(void *ctx, size_t m)
{
    const struct bwd_ref_job *j = ctx;
    size_t K = (size_t)j->c->K, N = (size_t)j->c->N, R = (size_t)j->c->R;
    int lay = j->c->layout;
    const float *dy = j->in[BUF_DY], *w = j->in[BUF_W], *a = j->in[BUF_A];
    double *dx = j->out[BUF_DX] + m * K;
    int with_w = bwd_uses_w(j->c);
    /* Each output's terms in the order of n, whichever loop runs inside:
     * the one that walks W's rows where they lie. */
    for (size_t k = 0; k < K; k++) {
        double sum = 0;
        for (size_t n = 0; with_w && lay == LAYOUT_IN_OUT && n < N; n++) {
            sum += (double)dy[m * N + n] * w[k * N + n];
        }
        dx[k] = sum;
    }
    for (size_t n = 0; with_w && lay == LAYOUT_OUT_IN && n < N; n++) {
        double dyn = dy[m * N + n];
        for (size_t k = 0; k < K; k++) {
            dx[k] += dyn * w[n * K + k];
        }
    }
    for (size_t k = 0; k < K; k++) {
        double sum = dx[k];
        for (size_t r = 0; r < R; r++) {
            sum += j->g[m * R + r] * a[lora_at(lay, k, r, K, R)];
        }
        dx[k] = sum;
    }
}

/* T = scale*X*A and G = scale*dY*B^T row by row, then the sums over rows
 * of dA and dB and each row of dX, as the definitions read: each pass
 * spread over the host's cores, each output summed in the same order
 * whatever the threads. */
int bwd_reference(const struct kernel_spec *ks,
                         const float *const *in, const size_t *sizes,
                         double *const *out)
{
    size_t rows = sizes[0];
    struct bwd c;
    bwd_read(ks, &c);
    size_t R = (size_t)c.R;
    struct bwd_ref_job job = {
        .c = &c,
        .rows = rows,
        .scale = emitted_float(spec_lora_scale(ks)),
        .in = in,
        .out = out,
        .t = calloc(rows * R + 1, sizeof(double)),
        .g = calloc(rows * R + 1, sizeof(double)),
    };
    if (job.t == NULL || job.g == NULL) {
        free(job.t);
        free(job.g);
        return -1;
    }
    parallel_for(rows, bwd_ref_tg, &job);
    if (out[BUF_DA] != NULL) {
        parallel_for((size_t)c.K, bwd_ref_da, &job);
    }
    if (out[BUF_DB] != NULL) {
        parallel_for((size_t)c.N, bwd_ref_db, &job);
    }
    if (out[BUF_DX] != NULL) {
        parallel_for(rows, bwd_ref_dx, &job);
    }
    free(job.t);
    free(job.g);
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

