/* attention_reference.c - the held tiles of attention_reference.h. */
#include "attention_reference.h"

void attn_ref_hold(const float *src, const size_t *at, size_t n, size_t d,
                   float *held)
{
    for (size_t e = 0; e < d; e++) {
        for (size_t r = 0; r < ATTN_REF_ROWS; r++) {
            held[e * ATTN_REF_ROWS + r] = r < n ? src[at[r] + e] : 0;
        }
    }
}

void attn_ref_dots(const float *held, const float *row, size_t d,
                   double *dots)
{
    for (int r = 0; r < ATTN_REF_ROWS; r++) {
        dots[r] = 0;
    }
    /* the columns side by side: independent sums the compiler vectorizes,
     * each still in element order */
    for (size_t e = 0; e < d; e++) {
        for (int r = 0; r < ATTN_REF_ROWS; r++) {
            dots[r] += (double)held[e * ATTN_REF_ROWS + r] * row[e];
        }
    }
}

void attn_ref_axpy(double *restrict y, double a, const float *restrict x,
                   size_t n)
{
    for (size_t e = 0; e < n; e++) {
        y[e] += a * x[e];
    }
}

double attn_ref_dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t e = 0; e < n; e++) {
        s += (double)a[e] * b[e];
    }
    return s;
}
