/* attention_fields.c - attention's shared fields (attention_fields.h). */
#include "attention_fields.h"

#include <math.h>
#include <stdio.h>


void attn_naive_grid(struct plan *p, int seq, size_t heads)
{
    struct path *pa = &p->path[p->n_path - 1];
    struct launch *l = &pa->launch[pa->n_launch - 1];
    l->dims = 2;
    l->local[0] = 1;
    l->local[1] = 1;
    launch_over(l, 0, 1, SIZE_BIT(seq), 1);
    launch_over(l, 1, heads, SIZE_BIT(0), 1);
}

void attn_costs(const struct kernel_spec *ks, const size_t *sizes,
                double per, double *bytes, double *flops)
{
    *bytes = plan_io_bytes(ks, sizes);
    *flops = per * (double)sizes[0] * (double)attn_heads(ks) *
             (double)attn_head_dim(ks) *
             attn_visible_pairs(ks, (long)sizes[1], (long)sizes[2]);
}

void attn_bench_sizes(const struct kernel_spec *ks, size_t *sizes, long seq)
{
    long width = attn_heads(ks) * attn_head_dim(ks);
    long s = width >= 1024 ? seq : width < 16 ? 16 : width;
    sizes[0] = 1;
    sizes[1] = (size_t)s;
    sizes[2] = (size_t)s;
}

/* The least softcap taken: 1 / softcap must stay a float. */
#define SOFTCAP_MIN 1e-30

const char *const attn_engine_choices[] = {"simt", "mma", "wgmma", NULL};

const struct param_def attn_fields[] = {
    {"heads", VALUE_INT, 1, 0, 1, 4096, NULL, "query heads (H)"},
    /* A default below the minimum stands for heads (param_stand_in). */
    {"kv_heads", VALUE_INT, 0, 0, 1, 4096, NULL,
     "key and value heads (Hkv), dividing heads: GQA, MQA (default heads)"},
    {"head_dim", VALUE_INT, 1, 0, 1, 256, NULL, "elements per head (D)"},
    {"causal", VALUE_BOOL, 0, 0, 0, 1, NULL,
     "query i sees keys j <= i + seq_kv - seq_q (bottom-right aligned)"},
    {"scale", VALUE_FLOAT, 0, 0, -1e30, 1e30, NULL,
     "times q.k (default 1/sqrt(head_dim))"},
    {"window", VALUE_INT, 0, 0, 0, 2147483647, NULL,
     "with causal: keys at most window - 1 positions back; 0: none"},
    {"softcap", VALUE_FLOAT, 0, 0, 0, 1e30, NULL,
     "scores -> softcap * tanh(score / softcap); 0: none (default)"},
};

_Static_assert(sizeof attn_fields / sizeof attn_fields[0] == ATTN_N_FIELDS,
               "ATTN_N_FIELDS counts attn_fields");

static long field(const struct kernel_spec *ks, const char *key)
{
    return (long)spec_field(ks, key);
}

int attn_wgmma_head(long d)
{
    return d == 64 || d == 80 || d == 96 || d == 128 || d == 256;
}

long attn_heads(const struct kernel_spec *ks)
{
    return field(ks, "heads");
}

long attn_kv_heads(const struct kernel_spec *ks)
{
    return spec_field_set(ks, "kv_heads") ? field(ks, "kv_heads")
                                          : attn_heads(ks);
}

long attn_head_dim(const struct kernel_spec *ks)
{
    return field(ks, "head_dim");
}

int attn_causal(const struct kernel_spec *ks)
{
    return spec_field(ks, "causal") != 0;
}

double attn_scale(const struct kernel_spec *ks)
{
    return spec_field_set(ks, "scale")
               ? spec_field(ks, "scale")
               : 1.0 / sqrt((double)attn_head_dim(ks));
}

void attn_check_fields(const struct kernel_spec *ks, struct diags *d)
{
    long h = attn_heads(ks), hkv = attn_kv_heads(ks);
    if (h % hkv != 0) {
        diag_error(d, ks->file, spec_field_mark(ks, "kv_heads"),
                   "kv_heads (%ld) must divide heads (%ld)", hkv, h);
    }
    if (field(ks, "window") > 0 && !attn_causal(ks)) {
        diag_error(d, ks->file, spec_field_mark(ks, "window"),
                   "window (%ld) needs causal: true", field(ks, "window"));
    }
    double cap = spec_field(ks, "softcap");
    if (cap != 0 && cap < SOFTCAP_MIN) {
        diag_error(d, ks->file, spec_field_mark(ks, "softcap"),
                   "softcap (%g) must be 0 (none) or at least %g", cap,
                   SOFTCAP_MIN);
    }
    if (spec_field_set(ks, "scale") && spec_field(ks, "scale") == 0) {
        diag_error(d, ks->file, spec_field_mark(ks, "scale"),
                   "scale must not be 0 (leave it out for "
                   "1/sqrt(head_dim))");
    }
}

void attn_visible_keys(const struct kernel_spec *ks, long pos, long seq_kv,
                       long *lo, long *hi)
{
    long w = field(ks, "window");
    long first = w > 0 ? pos - w + 1 : 0;
    long end = attn_causal(ks) ? pos + 1 : seq_kv;
    *lo = first > 0 ? first : 0;
    *hi = end < seq_kv ? end : seq_kv;
    if (*hi < *lo) {
        *hi = *lo;
    }
}

double attn_visible_pairs(const struct kernel_spec *ks, long seq_q,
                          long seq_kv)
{
    double pairs = 0;
    for (long i = 0; i < seq_q; i++) {
        long lo, hi;
        attn_visible_keys(ks, i + seq_kv - seq_q, seq_kv, &lo, &hi);
        pairs += (double)(hi - lo);
    }
    return pairs;
}

void attn_shape_text(const struct kernel_spec *ks, const size_t *sizes,
                     char *buf, size_t size)
{
    snprintf(buf, size, "B=%zu Sq=%zu Skv=%zu H=%ld/%ld D=%ld%s", sizes[0],
             sizes[1], sizes[2], attn_heads(ks), attn_kv_heads(ks),
             attn_head_dim(ks), attn_causal(ks) ? " causal" : "");
}
