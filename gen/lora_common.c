/* lora_common.c - checks, buffers and measures both LoRA ops share. */
#include "lora_common.h"

#include <stdio.h>

int lora_check_rank(const struct kernel_spec *ks, long K, long N, long R,
                    struct diags *d)
{
    if (R > K) {
        diag_error(d, ks->file, spec_field_mark(ks, "rank"),
                   "rank must be <= in_features (got %ld > %ld)", R, K);
        return 0;
    }
    if (R > N) {
        diag_error(d, ks->file, spec_field_mark(ks, "rank"),
                   "rank must be <= out_features (got %ld > %ld)", R, N);
        return 0;
    }
    return 1;
}

void lora_check_alpha_scale(const struct kernel_spec *ks, struct diags *d)
{
    if (spec_field_set(ks, "alpha") && spec_field_set(ks, "scale")) {
        diag_error(d, ks->file, spec_field_mark(ks, "scale"),
                   "give alpha or scale, not both (scale = alpha / rank)");
    }
}

/* A warp's local reads then touch 64 bytes of the one tile and 128 of the
 * other per step (broadcast within). */
void lora_warp_n_default(struct kernel_spec *ks, long m, long n, long wm,
                         long wn)
{
    if (spec_knob_set(ks, "warp_n")) {
        return;
    }
    long thn = n / wn, thm = m / wm;
    int ok = ks->target != TARGET_CPU && n % wn == 0 && m % wm == 0 &&
             thn % 8 == 0 && thm % 4 == 0;
    spec_knob_default(ks, "warp_n", ok ? 8 : 0);
}

/* A knob that changes no code then leaves the emitted source as it is,
 * and `specl tune`, which merges configs by that source, times it once. */
long lora_warp_layout(long warp_n, long n, long wn)
{
    return warp_n == n / wn ? 0 : warp_n;
}

/* One GEMM_ #define of G, its comment naming G's kernel. */
static void gemm_define(struct plan *p, const struct gemm_simt *g,
                        const char *name, const char *what, long v)
{
    char comment[64];
    snprintf(comment, sizeof comment, "%s: %s", g->kernel, what);
    plan_int(p, name, comment, v);
}

void lora_plan_gemm_simt(struct plan *p, const struct gemm_simt *g)
{
    gemm_define(p, g, "GEMM_TILE_M", "output rows per work-group", g->m);
    gemm_define(p, g, "GEMM_TILE_N", "output columns per work-group", g->n);
    gemm_define(p, g, "GEMM_TILE_K", "reduction step in local memory",
                g->k);
    gemm_define(p, g, "GEMM_WORK_M", "output rows per work-item", g->wm);
    gemm_define(p, g, "GEMM_WORK_N", "output columns per work-item", g->wn);
    gemm_define(p, g, "GEMM_PAD", "floats appended to local-memory rows",
                g->pad);
    gemm_define(p, g, "GEMM_WARP_N",
                "work-items along N per warp; 0: row-major",
                lora_warp_layout(g->warp_n, g->n, g->wn));
    gemm_define(p, g, "GEMM_K", "the reduction before the rank",
                g->reduce);
    gemm_define(p, g, "GEMM_N", "columns of the output", g->cols);
    gemm_define(p, g, "GEMM_RANK", "the rank: the reduction's last stretch",
                g->rank);
    gemm_define(p, g, "GEMM_RANK_PARTS",
                "partial sums in an A-side rank element", g->rank_parts);
    gemm_define(p, g, "GEMM_VEC", "elements per global load, at most",
                g->vec);
    gemm_define(p, g, "GEMM_STAGE_A", "1: A side loaded over GEMM_K",
                g->stage_a);
    gemm_define(p, g, "GEMM_STAGE_B", "1: B side loaded over GEMM_K",
                g->stage_b);
    gemm_define(p, g, "GEMM_OUT_ADD", "1: output += the product",
                g->out_add);
    gemm_define(p, g, "GEMM_OUT_FIXED", "1: every output store GEMM_SW wide",
                g->out_fixed);
}

const char *const lora_engine_choices[] = {"simt", "mma", "wgmma", NULL};

const char *const lora_layout_choices[] = {"in_out", "out_in", NULL};

void lora_plan_layout(struct plan *p, int layout)
{
    if (layout == LAYOUT_OUT_IN) {
        plan_int(p, "WEIGHT_OUT_IN", "1: w [N][K], a [r][K], b [N][r] "
                 "(weight_layout: out_in)", 1);
    }
}

void lora_plan_adapter_buffers(struct plan *p, long K, long N, long R,
                               int layout)
{
    int out_in = layout == LAYOUT_OUT_IN;
    plan_buffer(p, "a", 0, K * R, 0);
    plan_buffer_doc(p, out_in ? "[rank][in_features]" : "[in_features][rank]",
                    out_in ? "PEFT's lora_A.weight as it is"
                           : "PEFT's lora_A.weight is [rank][in_features]: "
                             "pass its transpose");
    plan_buffer(p, "b", 0, R * N, 0);
    plan_buffer_doc(p, out_in ? "[out_features][rank]" : "[rank][out_features]",
                    out_in ? "PEFT's lora_B.weight as it is"
                           : "PEFT's lora_B.weight is [out_features][rank]: "
                             "pass its transpose");
}

void lora_reference_t(const float *x_row, const float *a, size_t K,
                      size_t R, double scale, int layout, double *t)
{
    for (size_t j = 0; j < R; j++) {
        double acc = 0;
        for (size_t k = 0; k < K; k++) {
            acc += (double)x_row[k] * a[lora_at(layout, k, j, K, R)];
        }
        t[j] = scale * acc;
    }
}

void lora_peer_t(struct gemm_chain *g, size_t rows, size_t K, size_t R,
                 double scale, int layout)
{
    g->gemm[g->n_gemm++] = (struct gemm){
        rows, R, K, scale, 0, "x", "a", "temp", 0, layout == LAYOUT_OUT_IN};
}

void lora_shape_line(char *buf, size_t size, size_t rows, long K, long N,
                     long R, const char *note, int accumulate)
{
    snprintf(buf, size, "M=%zu K=%ld N=%ld r=%ld%s%s", rows, K, N, R, note,
             accumulate ? " +=" : "");
}

double lora_error_bound(const struct kernel_spec *ks)
{
    return storage_error_bound(ks->dtype, 1e-4);
}

void lora_bench_sizes(const struct kernel_spec *ks, size_t *sizes)
{
    (void)ks;
    sizes[0] = 512;
}
