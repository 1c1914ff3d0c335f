/* lora_backward_tg.c - lora_bwd_tg's sizes as its template derives them,
 * its defaults (a tile that fits local memory; the ring of X and dY where
 * the device copies by cp.async) and the ring's checks. */
#include "lora_backward.h"

/* lora_bwd_tg's rows per work-item with RL work-items along the rank:
 * 4, 2 or 1, the most that divide tg_rows and keep <= 32 sums. */
static long tg_rows_of(const struct bwd *c, long rl)
{
    long rj = c->R / rl;
    if (c->tg_rows % 4 == 0 && 4 * rj <= 32) {
        return 4;
    }
    return c->tg_rows % 2 == 0 && 2 * rj <= 32 ? 2 : 1;
}

/* lora_bwd_tg's work-items along the rank: the most of 8, 4, 2 that
 * leave each at least 8 of its columns, four at a time, and divide the
 * work-group with the row groups they give; else 1. */
static long tg_rank_lanes(const struct bwd *c)
{
    for (long rl = 8; rl > 1; rl /= 2) {
        if (c->R % (4 * rl) == 0 && c->R / rl >= 8 &&
            c->tg_threads % (rl * (c->tg_rows / tg_rows_of(c, rl))) == 0) {
            return rl;
        }
    }
    return 1;
}

/* lora_bwd_tg's rows per work-item. */
long bwd_tg_rows_per_item(const struct bwd *c)
{
    return tg_rows_of(c, tg_rank_lanes(c));
}

/* lora_bwd_tg's work-items across the rows (row groups times work-items
 * along the rank): tg_threads must be a multiple. */
long bwd_tg_items_m(const struct bwd *c)
{
    return c->tg_rows / bwd_tg_rows_per_item(c) * tg_rank_lanes(c);
}

/* Two chunks of rows of A (B^T), each the most whole steps within 2048
 * floats with their padding (one step at least), or the sums meeting at
 * the end: every column of the rank at once where they fit in LOCAL_MAX,
 * else rounds of as many as the chunks' room holds. */
long bwd_tg_local(const struct bwd *c)
{
    long rl = tg_rank_lanes(c);
    long tm = c->tg_rows / bwd_tg_rows_per_item(c);
    long tk = c->tg_threads / (tm * rl);
    long span = tk * c->vec, kn = max_l(c->K, c->N), vr = c->vec * c->R;
    long group = c->R % 4 == 0 ? vr + (4 * rl - vr % 32 + 32) % 32
                 : vr % 2 == 0 ? vr + 1 : vr;
    long fit = tk * group >= 2048 ? 1 : 2048 / (tk * group);
    long chunk = min_l(ceil_div(kn, span), fit) * span;
    long staged = 2 * (chunk / c->vec) * group;
    long per_col = tm * (tk + 1), cols = c->R;
    if (per_col * c->R * 4 > LOCAL_MAX) {
        cols = min_l(c->R, max_l(1, max_l(staged, 2048) / per_col));
    }
    return max_l(staged, per_col * cols);
}

/* lora_bwd_tg's ring of steps of X (dY), in floats: tg_stages steps of
 * tg_rows rows of the span a step covers. */
long bwd_tg_ring(const struct bwd *c)
{
    long rl = tg_rank_lanes(c);
    long tm = c->tg_rows / bwd_tg_rows_per_item(c);
    return c->tg_stages * c->tg_rows * (c->tg_threads / (tm * rl)) * c->vec;
}

/* Whether lora_bwd_tg's X (dY) can go by cp.async: float32 rows in
 * 16-byte pieces (on a device that copies so: the plan's needs). */
static int tg_copyable(const struct bwd *c)
{
    return c->dtype == DTYPE_F32 && c->vec == 4;
}

/* lora_bwd_tg's work-items divide into its row groups and rank lanes,
 * and it fits the limits. */
static int tg_fits(const struct bwd *c)
{
    return c->tg_threads % bwd_tg_items_m(c) == 0 &&
           c->tg_threads <= THREADS_MAX && 4 * bwd_tg_local(c) <= LOCAL_MAX &&
           4 * (bwd_tg_local(c) + bwd_tg_ring(c)) <= c->dev->local_per_group;
}

/* The most rows per lora_bwd_tg work-group the defaults take: with
 * tg_threads 128 that is one work-item along K, the fewest rows of A
 * staged at once (the tuner's tg_rows reach it too). */
#define TG_ROWS_MOST 128L

/* lora_bwd_tg stages TG_TK x VEC rows of A (B^T) of the whole rank at a
 * time: at tg_rows 8, tg_threads 128 and vec 4 past some 60 columns of
 * the rank they overflow local memory. Then more rows per work-group
 * (fewer work-items along K), up to TG_ROWS_MOST, then narrower loads,
 * of those the spec leaves to the defaults: the first that fits. */
static void tg_fit_defaults(struct kernel_spec *ks)
{
    struct bwd c;
    bwd_read(ks, &c);
    if (tg_fits(&c)) {
        return;
    }
    /* a ring (tg_stages) copies 4 floats a copy: its loads stay */
    int vec_free = !spec_knob_set(ks, "vec") && c.tg_stages == 0;
    int rows_free = !spec_knob_set(ks, "tg_rows");
    for (long vec = c.vec; vec >= 1; vec = vec_free ? vec / 2 : 0) {
        for (long rows = c.tg_rows; rows <= max_l(c.tg_rows, TG_ROWS_MOST);
             rows = rows_free ? rows * 2 : TG_ROWS_MOST + c.tg_rows) {
            struct bwd t = c;
            t.vec = vec;
            t.tg_rows = rows;
            if (tg_fits(&t)) {
                spec_knob_default(ks, "vec", vec);
                spec_knob_default(ks, "tg_rows", rows);
                return;
            }
        }
    }
}

/* lora_bwd_tg's ring where the device copies by cp.async: TG_STAGES
 * steps (2 would hold no more ahead than the registers do; at the
 * smaller tile 4 gained 2-3% over 3 and 6 nothing, and 4 do not fit the
 * larger). With the ring a work-group of
 * TG_RING_THREADS items over TG_RING_ROWS rows first: it stages A and
 * B^T once for twice the rows, and its ring keeps enough of X in flight
 * where without one it fell behind the smaller group (bench/RESULTS.md,
 * "lora_backward float32: X and dY by cp.async"); else the tile as it
 * is. Knobs the spec sets stay. */
#define TG_STAGES 3L
#define TG_RING_THREADS 256L
#define TG_RING_ROWS 16L

static void tg_stage_defaults(struct kernel_spec *ks)
{
    struct bwd c;
    bwd_read(ks, &c);
    if (spec_knob_set(ks, "tg_stages") || !tg_copyable(&c) ||
        !target_offers(c.target, CAP_CP_ASYNC)) {
        spec_knob_default(ks, "tg_stages", c.tg_stages);
        return;
    }
    for (int wide = 1; wide >= 0; wide--) {
        struct bwd t = c;
        if (wide && !spec_knob_set(ks, "tg_threads")) {
            t.tg_threads = TG_RING_THREADS;
        }
        if (wide && !spec_knob_set(ks, "tg_rows")) {
            t.tg_rows = TG_RING_ROWS;
        }
        t.tg_stages = TG_STAGES;
        if (tg_fits(&t)) {
            spec_knob_default(ks, "tg_threads", t.tg_threads);
            spec_knob_default(ks, "tg_rows", t.tg_rows);
            spec_knob_default(ks, "tg_stages", t.tg_stages);
            return;
        }
    }
    spec_knob_default(ks, "tg_stages", 0);
}

void bwd_tg_check_stages(const struct kernel_spec *ks, const struct bwd *c,
                         struct diags *d)
{
    if (c->tg_stages == 0) {
        return;
    }
    long bytes = 4 * (bwd_tg_local(c) + bwd_tg_ring(c));
    if (!tg_copyable(c)) {
        diag_error(d, ks->file, spec_knob_mark(ks, "tg_stages"),
                   "tg_stages copies float32 rows 4 elements a copy (vec 4) "
                   "by cp.async; here %s, vec %ld: use 0",
                   dtype_name(c->dtype), c->vec);
    } else if (c->tg_stages < 2) {
        diag_error(d, ks->file, spec_knob_mark(ks, "tg_stages"),
                   "tg_stages must be 0 or 2 to 8 (got %ld)", c->tg_stages);
    } else if (bytes > c->dev->local_per_group) {
        diag_error(d, ks->file, spec_knob_mark(ks, "tg_stages"),
                   "lora_bwd_tg needs %ld bytes of local memory with "
                   "tg_stages %ld, more than the %ld of a work-group",
                   bytes, c->tg_stages, c->dev->local_per_group);
    }
}

void bwd_tg_defaults(struct kernel_spec *ks)
{
    tg_fit_defaults(ks);
    tg_stage_defaults(ks);
}
