/* lora_reference.c - checking and measuring lora_forward: its float64
 * reference, naive plan, costs, bench shape and BLAS peer. */
#include "lora_internal.h"
#include "parallel.h"

#include <stdlib.h>

/* ---- checking and measuring ------------------------------------------ */

/* The buffers in plan order (lora_plan). */
enum { BUF_X, BUF_W, BUF_A, BUF_B, BUF_Y };

/* One row of lora_reference's: T = scale * X*A into its row of T, then
 * Y = (Y +) X*W + T*B straight into its row of the float64 output. */
struct lora_ref_job {
    const struct lora *c;
    double scale;
    const float *x, *w, *a, *b, *y0;
    double *t, *y;
};

static void lora_reference_row(void *ctx, size_t m)
{
    const struct lora_ref_job *j = ctx;
    const struct lora *c = j->c;
    size_t K = (size_t)c->K, N = (size_t)c->N, R = (size_t)c->R;
    const float *xm = j->x + m * K;
    double *t = j->t + m * R, *row = j->y + m * N;
    lora_reference_t(xm, j->a, K, R, j->scale, c->layout, t);
    for (size_t n = 0; n < N; n++) {
        row[n] = c->accumulate ? j->y0[m * N + n] : 0.0;
    }
    /* Each output's terms in the order of k, whichever loop runs
     * inside: the one that walks W's rows where they lie. */
    for (size_t k = 0; c->base && c->layout == LAYOUT_IN_OUT && k < K; k++) {
        double xv = xm[k];
        for (size_t n = 0; n < N; n++) {
            row[n] += xv * j->w[k * N + n];
        }
    }
    for (size_t n = 0; c->base && c->layout == LAYOUT_OUT_IN && n < N; n++) {
        const float *wn = j->w + n * K;
        double sum = row[n];
        for (size_t k = 0; k < K; k++) {
            sum += (double)xm[k] * wn[k];
        }
        row[n] = sum;
    }
    for (size_t r = 0; r < R; r++) {
        for (size_t n = 0; n < N; n++) {
            row[n] += t[r] * j->b[lora_at(c->layout, r, n, R, N)];
        }
    }
}

/* Row by row, the rows spread over the host's cores (each output summed
 * in the same order whatever the threads). */
int lora_reference(const struct kernel_spec *ks,
                   const float *const *in, const size_t *sizes,
                   double *const *out)
{
    size_t rows = sizes[0];
    struct lora c;
    lora_read(ks, &c);
    struct lora_ref_job job = {
        .c = &c,
        .scale = emitted_float(spec_lora_scale(ks)),
        .x = in[BUF_X],
        .w = c.base ? in[BUF_W] : NULL,
        .a = in[BUF_A],
        .b = in[BUF_B],
        .y0 = in[BUF_Y],
        .t = calloc(rows * (size_t)c.R + 1, sizeof(double)),
        .y = out[BUF_Y],
    };
    if (job.t == NULL) {
        return -1;
    }
    parallel_for(rows, lora_reference_row, &job);
    free(job.t);
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
