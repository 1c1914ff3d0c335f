/* attention_reference.c - the held tiles of attention_reference.h. */
#include "attention_reference.h"

#include "attention_fields.h"

#include <math.h>

void attn_ref_math_of(const struct kernel_spec *ks, struct attn_ref_math *m)
{
    m->scale = emitted_float(attn_scale(ks));
    m->cap = emitted_float(spec_field(ks, "softcap"));
    m->d = (size_t)attn_head_dim(ks);
}

double attn_ref_score(const struct attn_ref_math *m, double dot,
                      double *slope)
{
    double s = m->scale * dot, der = 1;
    if (m->cap > 0) {
        double t = tanh(s / m->cap);
        s = m->cap * t;
        der = 1 - t * t;
    }
    if (slope != NULL) {
        *slope = der;
    }
    return s;
}

size_t attn_ref_tiles(const size_t *sizes)
{
    return (sizes[1] + ATTN_REF_ROWS - 1) / ATTN_REF_ROWS;
}

void attn_ref_tile_at(const struct kernel_spec *ks, const size_t *sizes,
                      size_t item, struct attn_ref_tile *t)
{
    size_t heads = (size_t)attn_heads(ks), hkv = (size_t)attn_kv_heads(ks);
    size_t d = (size_t)attn_head_dim(ks), sq = sizes[1], skv = sizes[2];
    size_t tiles = attn_ref_tiles(sizes);
    size_t tile = item % tiles, bh = item / tiles;
    size_t b = bh / heads, h = bh % heads, i0 = tile * ATTN_REF_ROWS;
    t->n = sq - i0 < ATTN_REF_ROWS ? sq - i0 : ATTN_REF_ROWS;
    t->lse_at = (b * heads + h) * sq + i0;
    t->kstride = hkv * d;
    t->kv_at = (b * skv * hkv + h / (heads / hkv)) * d;
    t->first = (long)skv;
    t->end = 0;
    for (size_t r = 0; r < t->n; r++) {
        t->at[r] = ((b * sq + i0 + r) * heads + h) * d;
        attn_visible_keys(ks, (long)(i0 + r + skv) - (long)sq, (long)skv,
                          &t->lo[r], &t->hi[r]);
        if (t->lo[r] < t->hi[r] && t->lo[r] < t->first) {
            t->first = t->lo[r];
        }
        t->end = t->hi[r] > t->end ? t->hi[r] : t->end;
    }
}

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
