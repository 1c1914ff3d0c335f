/* lora_backward_fused.c - lora_bwd_fused, lora_backward's one launch at
 * few rows (templates/lora_bwd_fused.cl): its tile, defaults, checks,
 * #defines, paths and tuning space. */
#include "gemm_mma.h"
#include "lora_backward.h"

#include <string.h>

/* The widest rank lora_bwd_fused keeps a row's sums of in registers
 * (FUSED_PART_VEC columns of X or dY, each with every rank column). */
#define FUSED_RANK_MOST 64L

/* The layers its defaults take: the narrow ones (K, N <= 2048), dX's
 * narrow tiles (dx_defaults). On wider ones each column of W^T's tile is
 * a short piece of a row of W. */
#define FUSED_NARROW 2048L

/* The most steps of k its work-groups' stretches take by default: at
 * 2048 x 2048 one block over two slices (64 steps) beat the launch
 * sequence and two blocks over one (128) lost to it (bench/RESULTS.md,
 * "lora_backward in one launch"). */
#define FUSED_STEPS_MOST 64L

/* Its tile of dX where dX's own GEMM is on tensor cores (and its knobs
 * are that GEMM's): 32 x 64 of 2 x 4 per work-item, steps of 32, the
 * fastest of the float tiles tried at the seeds' shape (bench/RESULTS.md,
 * "lora_backward in one launch"). */
#define FUSED_TENSOR_M 32L
#define FUSED_TENSOR_N 64L
#define FUSED_TENSOR_K 32L
#define FUSED_TENSOR_WM 2L
#define FUSED_TENSOR_WN 4L

int bwd_fused(const struct bwd *c)
{
    return c->fused_max > 0;
}

/* lora_bwd_fused's local memory in floats with the tile of G, as the
 * template declares it. */
static long fused_local_of(const struct bwd *c, const struct gemm_simt *g)
{
    long lda = g->m + g->pad, ldb = g->n + g->pad;
    long rank_k = min_l(c->R, g->k);
    long bs = !c->input_grad ? 1 : c->base ? 2 * g->k * ldb : rank_k * ldb;
    return 2 * g->k * lda + bs + 2 * c->R * g->k +
           ceil_div(c->R, rank_k) * rank_k * lda + 1;
}

/* lora_bwd_fused's GEMM (gemm_simt.cl): lora_bwd_dx's, whose tile is
 * the knobs m x n with engine: simt (the two kernels then share the
 * GEMM_ #defines), and with tensor cores FUSED_TENSOR_*'s, in steps of
 * 16 where the rank makes steps of 32 overflow local memory. */
static void fused_gemm(const struct bwd *c, struct gemm_simt *g)
{
    int simt = !bwd_dx_tensor(c);
    *g = (struct gemm_simt){
        .kernel = simt && c->input_grad ? "lora_bwd_dx" : "lora_bwd_fused",
        .m = simt ? c->m : FUSED_TENSOR_M,
        .n = simt ? c->n : FUSED_TENSOR_N,
        .k = simt ? c->k : FUSED_TENSOR_K,
        .wm = simt ? c->wm : FUSED_TENSOR_WM,
        .wn = simt ? c->wn : FUSED_TENSOR_WN,
        .pad = simt ? c->pad : 4, .warp_n = simt ? c->warp_n : 8,
        .reduce = c->N, .cols = c->K, .rank = c->R, .rank_parts = 1,
        .vec = c->vec, .stage_a = bwd_uses_w(c), .stage_b = bwd_uses_w(c),
        .out_add = 0, .out_fixed = 1};
    if (!simt && 4 * fused_local_of(c, g) > LOCAL_MAX) {
        g->k = FUSED_TENSOR_K / 2;
    }
}

/* Columns of X or dY per work-item in dA's and dB's parts: the widest
 * that divides VEC and keeps its sums, times the rank, within 64. */
static long fused_part_vec(const struct bwd *c)
{
    long v = c->vec;
    while (v > 1 && v * c->R > FUSED_RANK_MOST) {
        v /= 2;
    }
    return v;
}

/* Its local memory in floats. */
static long fused_local(const struct bwd *c)
{
    struct gemm_simt g;
    fused_gemm(c, &g);
    return fused_local_of(c, &g);
}

/* The most slices its reductions take: one step of k each, in both. */
static long fused_steps(const struct bwd *c)
{
    struct gemm_simt g;
    fused_gemm(c, &g);
    return ceil_div(min_l(c->K, c->N), g.k);
}

/* Its work-groups along a block of rows: dX's tiles, then dA's part and
 * dB's. */
static long fused_dx_tiles(const struct bwd *c)
{
    struct gemm_simt g;
    fused_gemm(c, &g);
    return c->input_grad ? ceil_div(c->K, g.n) : 0;
}

/* lora_bwd_fused up to the rows whose work-groups fill one wave of the
 * device's compute units (caps.c's facts), and while no work-group's
 * stretch takes more than FUSED_STEPS_MOST steps of k: there its one
 * launch replaces three or four whose gaps cost more than the work
 * between them. On tensor cores, only while dX's tiles there would make
 * fewer than 8 work-groups (the line lora_forward's few rows draw too).
 * Not on CPUs, where a launch costs little beside the work, nor where its
 * tile and the rank overflow local memory. Its slices at one block of
 * rows bring the work-groups to about a wave, as many as the reductions
 * have steps at most. */
void bwd_fused_defaults(struct kernel_spec *ks)
{
    struct bwd c;
    bwd_read(ks, &c);
    long wave = device_wave_units(target_facts(ks->target));
    long per_block = fused_dx_tiles(&c) + 2;
    int eligible = ks->target != TARGET_CPU && c.R <= FUSED_RANK_MOST &&
                   c.K <= FUSED_NARROW && c.N <= FUSED_NARROW &&
                   4 * fused_local(&c) <= LOCAL_MAX;
    spec_knob_default(ks, "fused_slices",
                      !eligible ? 1
                                : max_l(1, pow2_floor(min_l(
                                               wave / per_block,
                                               min_l(64, fused_steps(&c))))));
    bwd_read(ks, &c);
    long most = 0;
    if (eligible) {
        struct gemm_simt g;
        fused_gemm(&c, &g);
        /* the bands' blocks: the slices halve as they double */
        long longest = ceil_div(max_l(c.K, c.N), g.k), blocks = 0;
        for (long b = 1, sl = c.fused_slices; b <= wave / per_block;
             b *= 2, sl = max_l(1, sl / 2)) {
            if (ceil_div(longest, sl) > FUSED_STEPS_MOST) {
                break;
            }
            if (sl == 1) {
                /* one slice from here on: the wave's blocks */
                blocks = wave / per_block;
                break;
            }
            blocks = b;
        }
        most = blocks * g.m;
        if (bwd_dx_tensor(&c)) {
            most = min_l(most, 7 / ceil_div(c.K, c.n) * c.m);
        }
    }
    spec_knob_default(ks, "fused_max", most);
}

/* lora_bwd_fused keeps FUSED_PART_VEC columns' sums over the rank in
 * registers, and its local memory. */
void bwd_fused_check(const struct kernel_spec *ks, const struct bwd *c,
                     struct diags *d)
{
    if (c->R > FUSED_RANK_MOST) {
        diag_error(d, ks->file, spec_knob_mark(ks, "fused_max"),
                   "fused_max needs rank <= %ld (got %ld): lora_bwd_fused "
                   "keeps a row's sums over the rank in registers; use "
                   "fused_max: 0",
                   FUSED_RANK_MOST, c->R);
        return;
    }
    if (c->fused_slices > fused_steps(c)) {
        diag_error(d, ks->file, spec_knob_mark(ks, "fused_slices"),
                   "fused_slices must be <= %ld (got %ld): the steps of k "
                   "in the shorter of in_features and out_features",
                   fused_steps(c), c->fused_slices);
        return;
    }
    struct gemm_simt g;
    fused_gemm(c, &g);
    bwd_check_group(ks, "fused_max", "lora_bwd_fused",
                    (g.m / g.wm) * (g.n / g.wn), fused_local(c), d);
}

/* lora_bwd_fused's #defines; its GEMM_ ones where lora_bwd_dx's are
 * not there (the same, with engine: simt). */
void bwd_fused_plan(const struct bwd *c, struct plan *p)
{
    struct gemm_simt g;
    fused_gemm(c, &g);
    if (bwd_dx_tensor(c) || !c->input_grad) {
        lora_plan_gemm_simt(p, &g);
    }
    plan_int(p, "FUSED_DX_TILES", "lora_bwd_fused: dX's tiles a row block",
             fused_dx_tiles(c));
    plan_int(p, "FUSED_PART_VEC", "lora_bwd_fused: columns of dA's, dB's "
             "sums", fused_part_vec(c));
    plan_int(p, "FUSED_LOCAL_BYTES", "local memory the plan counted",
             4 * fused_local(c));
}

/* lora_bwd_fused's counters of partial sums done (dA's, dB's, each tile
 * of dX's, as many blocks of rows as fused_max makes) in the handle's
 * sync words. */
long bwd_fused_sync_words(const struct bwd *c)
{
    struct gemm_simt g;
    fused_gemm(c, &g);
    return 2 + fused_dx_tiles(c) * ceil_div(c->fused_max, g.m);
}

/* lora_bwd_fused's one launch up to MAX_ROWS rows over SLICES slices:
 * dX's tiles and the parts of dA and dB of each slice across, the
 * blocks of rows down. */
static void fused_path(const struct bwd *c, long max_rows, long slices,
                       struct path *pa)
{
    static const char *const args[] = {"rows", "slices", "x",  "w",  "a",
                                       "b",    "dy",     "dx", "da", "db",
                                       "scratch", "sync", NULL};
    const char *used[14];
    int n = 0;
    for (const char *const *a = args; *a != NULL; a++) {
        if ((strcmp(*a, "w") != 0 || bwd_uses_w(c)) &&
            (strcmp(*a, "dx") != 0 || c->input_grad)) {
            used[n++] = *a;
        }
    }
    used[n] = NULL;
    struct gemm_simt g;
    fused_gemm(c, &g);
    struct launch *l = &pa->launch[0];
    pa->n_launch = 1;
    l->kernel = "lora_bwd_fused";
    l->dims = 2;
    l->local[0] = (size_t)(g.n / g.wn);
    l->local[1] = (size_t)(g.m / g.wm);
    launch_fixed(l, 0, (size_t)((fused_dx_tiles(c) + 2) * slices));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)g.m);
    launch_args(l, used);
    l->slices = (int)slices;
    pa->max_rows = max_rows;
    pa->why = slices > 1
                  ? "every gradient in one launch over slices of the "
                    "reductions: dX's tiles with G alongside, dA's and dB's "
                    "parts by blocks of rows, each summed by its last"
                  : "every gradient in one launch: dX's tiles with G "
                    "alongside, dA's and dB's parts by blocks of rows, "
                    "summed by the last";
    /* dX's partial sums of each slice (more than one), and a slot of dA's
     * and dB's a block of rows and slice */
    long slot = (c->K + c->N) * c->R;
    pa->scratch_per = (slices > 1 && c->input_grad ? slices * c->K : 0) +
                      ceil_div(slices * slot, g.m);
    pa->scratch_sizes = SIZE_FIRST;
    pa->scratch_fixed = slices * slot;
}

/* lora_bwd_fused's paths up to fused_max: fused_slices slices at one
 * block of rows, halved as the blocks double, then one. */
void bwd_fused_paths(const struct bwd *c, struct plan *p)
{
    struct gemm_simt g;
    fused_gemm(c, &g);
    long blocks = 1, slices = c->fused_slices;
    while (slices > 1 && blocks * g.m < c->fused_max) {
        fused_path(c, blocks * g.m, slices, &p->path[p->n_path++]);
        blocks *= 2;
        slices /= 2;
    }
    fused_path(c, c->fused_max, slices, &p->path[p->n_path++]);
}

/* At the rows the defaults give to lora_bwd_fused its slices, and with
 * engine: simt its tile (dX's), are what runs: there `specl tune`
 * searches those instead of the launch sequence's knobs. */
static const struct tune_axis bwd_fused_space[] = {
    {"fused_slices", "1 2 4 8 16 32 64"},
    {NULL, NULL},
};

static const struct tune_axis bwd_fused_simt_space[] = {
    {"fused_slices", "1 2 4 8 16 32 64"},
    {"n", "32 64 128"},
    {"m", "32 64"},
    {"k", "16 32"},
    {"wm", "2 4"},
    {"wn", "2 4"},
    {NULL, NULL},
};

/* The few-rows space that runs at ROWS rows, or NULL. */
static const struct tune_axis *bwd_rows_space(const struct bwd *c, long rows)
{
    if (!bwd_fused(c) || rows > c->fused_max) {
        return NULL;
    }
    return bwd_dx_tensor(c) ? bwd_fused_space : bwd_fused_simt_space;
}

const struct tune_axis *bwd_fused_tune_space(const struct kernel_spec *ks,
                                             long rows)
{
    struct bwd c;
    bwd_read(ks, &c);
    return bwd_rows_space(&c, rows);
}

/* An entry timed at ROWS rows that lora_bwd_fused took keeps its slices
 * (its tile is dX's knobs, which an entry keeps anyway). */
void bwd_fused_entry_rows(struct kernel_spec *ks,
                          const struct kernel_spec *entry, long rows)
{
    struct bwd e;
    bwd_read(entry, &e);
    if (bwd_rows_space(&e, rows) != NULL) {
        int k = op_knob_index(ks->op, "fused_slices");
        ks->knob[k] = entry->knob[k];
        ks->knob[k].set = 1;
    }
}

/* The one launch at few rows. */
const char *const bwd_fused_knobs[] = {"fused_max", "fused_slices", NULL};
