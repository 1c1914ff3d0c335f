/* lora_backward_xpass.c - x_once: T and dA from one read of X
 * (lora_bwd_xpass, then lora_bwd_xsum's sums of its partials): its
 * checks, its #defines, the scratch it takes and its two launches. */
#include "lora_backward.h"

/* lora_bwd_xpass's columns of X per work-group and warps (as measured in
 * bench/lab/xpass.cl: 4 warps, each 16-row chunk staged in 2 steps), and
 * lora_bwd_xsum's work-items; the plan gives the templates all three. */
#define XP_COLS 128L
#define XP_WARPS 4L
#define XSUM_THREADS 256L

/* x_once is off by default: it gained 1.16x at llama-down's shape (X
 * 2.7x dY's bytes) on an H200 and lost 1.45x at llama-q's with 1024
 * rows (bench/RESULTS.md, "lora_backward float32's adapter: X read once
 * through NAME.c"); `specl tune` tries it per device and shape. */
int bwd_xpass(const struct bwd *c)
{
    return c->x_once != 0;
}

void bwd_xpass_check(const struct kernel_spec *ks, const struct bwd *c,
                     struct diags *d)
{
    if (!bwd_xpass(c)) {
        return;
    }
    struct mark at = spec_knob_mark(ks, "x_once");
    if (c->dtype != DTYPE_F32) {
        diag_error(d, ks->file, at,
                   "x_once runs float32 on tf32 tensor cores (got %s): f16 "
                   "and bf16 take engine: mma",
                   dtype_name(c->dtype));
    } else if (c->R > 16) {
        diag_error(d, ks->file, at,
                   "x_once needs rank <= 16 (got %ld): lora_bwd_xpass holds "
                   "dA's sums of 128 columns by the rank in registers",
                   c->R);
    } else if (c->K % 4 != 0) {
        diag_error(d, ks->file, at,
                   "x_once needs in_features a multiple of 4 (got %ld): it "
                   "copies X's rows 16 bytes at a time",
                   c->K);
    } else if (c->xpass_rows % (16 * XP_WARPS) != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "xpass_rows"),
                   "xpass_rows must be a multiple of %ld (got %ld): 16 rows "
                   "a chunk, one for each of %ld warps",
                   16 * XP_WARPS, c->xpass_rows, XP_WARPS);
    }
}

static long xpass_blocks(const struct bwd *c)
{
    return ceil_div(c->K, XP_COLS);
}

static long xsum_rows(const struct bwd *c)
{
    return XSUM_THREADS / c->R;
}

void bwd_xpass_plan(const struct bwd *c, struct plan *p)
{
    plan_int(p, "X_ONCE", "T and dA from one read of X (lora_bwd_xpass)",
             bwd_xpass(c));
    if (!bwd_xpass(c)) {
        return;
    }
    plan_int(p, "XP_ROWS", "lora_bwd_xpass: rows per work-group",
             c->xpass_rows);
    plan_int(p, "XP_COLS", "lora_bwd_xpass: columns per work-group",
             XP_COLS);
    plan_int(p, "XP_WARPS", "lora_bwd_xpass: warps per work-group",
             XP_WARPS);
    plan_int(p, "XP_BLOCKS", "lora_bwd_xpass: blocks of XP_COLS columns",
             xpass_blocks(c));
    plan_int(p, "XP_TILES_N", "lora_bwd_xpass: blocks of 8 of the rank",
             ceil_div(c->R, 8));
    plan_int(p, "XSUM_THREADS", "lora_bwd_xsum: work-items per work-group",
             XSUM_THREADS);
    plan_int(p, "XSUM_ROWS", "lora_bwd_xsum: rows of T per work-group",
             xsum_rows(c));
    p->needs |= CAP_MMA_SYNC_BF16_F16 | CAP_CP_ASYNC;
}

/* Floats of the scratch past G and T for ROWS rows: T's partials per
 * block of columns and dA's per slice of xpass_rows rows; per row and
 * fixed, as the plan counts them. */
void bwd_xpass_scratch(const struct bwd *c, long *per_row, long *fixed)
{
    *per_row = xpass_blocks(c) * c->R + ceil_div(c->K * c->R, c->xpass_rows);
    *fixed = c->K * c->R;
}

void bwd_xpass_launches(const struct bwd *c, struct path *pa)
{
    struct launch *l = &pa->launch[pa->n_launch++];
    static const char *const xpass_args[] = {"rows", "x", "a", "scratch",
                                             NULL};
    l->kernel = "lora_bwd_xpass";
    l->dims = 2;
    l->local[0] = (size_t)(32 * XP_WARPS);
    l->local[1] = 1;
    launch_fixed(l, 0, (size_t)xpass_blocks(c));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)c->xpass_rows);
    launch_args(l, xpass_args);

    l = &pa->launch[pa->n_launch++];
    static const char *const xsum_args[] = {"rows", "da", "scratch", NULL};
    l->kernel = "lora_bwd_xsum";
    l->dims = 1;
    l->local[0] = (size_t)XSUM_THREADS;
    launch_over(l, 0, 1, SIZE_FIRST, (size_t)xsum_rows(c));
    launch_args(l, xsum_args);
}
