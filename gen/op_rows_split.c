/* op_rows_split.c - the split path of the row ops over long rows
 * (softmax, cross_entropy, rmsnorm, layernorm, add_rmsnorm): its
 * geometry, defaults and plan.
 *
 * One work-group per row (the row ops' geometry) leaves most of a GPU
 * idle when rows are few and long (a vocabulary at decode: one to a few
 * rows of 150k columns). Up to `split_max` rows the split path cuts each
 * row into `split` chunks, a work-group each, in two launches: the first
 * writes each chunk's partial results (a softmax's max and sum of
 * exponentials, a norm's sums) to scratch, the second merges a row's in
 * a fixed order and writes the chunk's outputs, reading it again while
 * it is recent (in a GPU's cache), so that memory sees about one read
 * and one write of x. */
#include "op_rows.h"

#include <string.h>

/* GPUs: the chunks of one row spread over about a wave, one work-group
 * per compute unit (device_wave_units of the target's facts), each item
 * of a split work-group taking at least SPLIT_ITEM_BYTES of the chunk
 * (two 16-byte vectors: bytes, not the plan's vectors, which a tuned or
 * an odd width's one-element vector makes narrow); rows split into fewer
 * than SPLIT_GPU_MIN chunks (under 128 KiB of float32 at 256 items) gain
 * too little to pay for a second launch: one work-group a row ran 2.4x
 * and 3.3x faster at 64 rows of 16001 floats and of 1024 read a float at
 * a time, which counting vectors split 16 ways (bench/RESULTS.md, "The
 * split path counts bytes"). Up to as many rows as a wave has units, one
 * work-group per row would leave part of that wave idle. */
#define SPLIT_ITEM_BYTES 32
#define SPLIT_GPU_MIN 16
/* CPUs (one work-item per work-group; PoCL runs each work-group on one
 * core): chunks of at least SPLIT_CPU_CHUNK bytes, up to
 * SPLIT_CPU_GROUPS per row, where a row makes SPLIT_CPU_MIN of them or
 * more. The row path's first work-group takes up to `rows` rows (16) on
 * one core, but reads each row twice from the cache where the split path,
 * once the rows outgrow the cache, reads its chunks again from memory:
 * the split path runs up to half of `rows` (bench/RESULTS.md, "Long-row
 * softmax"). */
#define SPLIT_CPU_CHUNK 65536
#define SPLIT_CPU_GROUPS 64
#define SPLIT_CPU_MIN 4

static long knob(const struct kernel_spec *ks, int i)
{
    return (long)ks->knob[i].num;
}

static long pow2_at_most(long n)
{
    long p = 1;
    while (p * 2 <= n) {
        p *= 2;
    }
    return p;
}

/* Vectors per row: the row's length is the op's first field. */
static long row_vectors(const struct kernel_spec *ks)
{
    return (long)ks->field[0].num / knob(ks, ROWS_KNOB_VEC);
}

long rows_split_items(const struct kernel_spec *ks)
{
    long most = dtype_size(ks->dtype) == 2 ? ROWS_GROUP_HALVES
                                           : ROWS_GROUP_ITEMS;
    long wg = knob(ks, ROWS_KNOB_WG);
    return wg < most ? wg : most;
}

long rows_split_chunk_vectors(const struct kernel_spec *ks)
{
    long split = knob(ks, ROWS_KNOB_SPLIT);
    return (row_vectors(ks) + split - 1) / split;
}

long rows_split_groups(const struct kernel_spec *ks)
{
    long chunk = rows_split_chunk_vectors(ks);
    return (row_vectors(ks) + chunk - 1) / chunk;
}

int rows_has_split(const struct kernel_spec *ks)
{
    return knob(ks, ROWS_KNOB_SPLIT) > 1 && knob(ks, ROWS_KNOB_SPLIT_MAX) > 0;
}

/* The chunks the shape makes for the target, a power of two (0: too few
 * to split). */
static long shape_split(const struct kernel_spec *ks)
{
    long bytes = row_vectors(ks) * knob(ks, ROWS_KNOB_VEC) *
                 (long)dtype_size(ks->dtype);
    if (ks->target == TARGET_CPU) {
        long n = bytes / SPLIT_CPU_CHUNK;
        n = pow2_at_most(n < SPLIT_CPU_GROUPS ? (n > 0 ? n : 1)
                                              : SPLIT_CPU_GROUPS);
        return n >= SPLIT_CPU_MIN ? n : 0;
    }
    long groups = device_wave_units(target_facts(ks->target));
    long n = bytes / (rows_split_items(ks) * SPLIT_ITEM_BYTES);
    n = pow2_at_most(n < groups ? (n > 0 ? n : 1) : groups);
    return n >= SPLIT_GPU_MIN ? n : 0;
}

void rows_split_defaults(struct kernel_spec *ks)
{
    rows_defaults(ks);
    long n = shape_split(ks);
    int rows_asked = spec_knob_set(ks, "split_max") &&
                     knob(ks, ROWS_KNOB_SPLIT_MAX) > 0;
    spec_knob_default(ks, "split", n > 1 ? (double)n : rows_asked ? 2 : 1);
    long rows = ks->target == TARGET_CPU
                    ? (knob(ks, ROWS_KNOB_ROWS) + 1) / 2
                    : device_wave_units(target_facts(ks->target));
    spec_knob_default(ks, "split_max",
                      knob(ks, ROWS_KNOB_SPLIT) > 1 ? (double)rows : 0.0);
}

void rows_split_entry_rows(struct kernel_spec *ks,
                           const struct kernel_spec *entry, long rows)
{
    int split_ran = rows_has_split(entry) &&
                    rows <= knob(entry, ROWS_KNOB_SPLIT_MAX);
    if (split_ran) {
        ks->knob[ROWS_KNOB_SPLIT] = entry->knob[ROWS_KNOB_SPLIT];
    }
    struct kernel_spec chosen = *ks;
    ks->op->defaults(&chosen);
    long most = knob(&chosen, ROWS_KNOB_SPLIT_MAX);
    if (split_ran ? most < rows : most >= rows) {
        ks->knob[ROWS_KNOB_SPLIT_MAX].num = (double)(split_ran ? rows
                                                               : rows - 1);
        ks->knob[ROWS_KNOB_SPLIT_MAX].set = 1;
    }
}

struct path *rows_plan_split(const struct kernel_spec *ks, struct plan *p,
                             const char *const kernels[2],
                             const char *const *const args[2])
{
    long groups = rows_split_groups(ks), items = rows_split_items(ks);
    if (plan_find_define(p, "SUM_BLOCK") == NULL) {
        plan_int(p, "SUM_BLOCK", "vectors summed apart (split path)",
                 ROWS_SUM_BLOCK);
    }
    plan_int(p, "SPLIT_GROUPS", "split path: work-groups (chunks) per row",
             groups);
    plan_int(p, "SPLIT_VECS", "split path: vectors per chunk",
             rows_split_chunk_vectors(ks));
    plan_int(p, "SPLIT_WG", "split path: work-items per work-group", items);
    struct path *pa = &p->path[p->n_path++];
    pa->max_rows = knob(ks, ROWS_KNOB_SPLIT_MAX);
    for (int k = 0; k < 2; k++) {
        struct launch *l = &pa->launch[pa->n_launch++];
        l->kernel = kernels[k];
        l->dims = 2;
        l->local[0] = (size_t)items;
        l->local[1] = 1;
        launch_fixed(l, 0, (size_t)groups);
        launch_over(l, 1, 1, SIZE_FIRST, 1);
        int a = 0;
        for (; args[k][a] != NULL; a++) {
            l->args[a] = args[k][a];
        }
        l->args[a] = NULL;
    }
    return pa;
}

/* The one-launch split path. At decode a vocabulary's softmax is a few
 * microseconds of memory traffic, about what a launch and the gap
 * between two launches cost: the split path's second launch more than
 * doubles it. Here the chunks of a row wait for one another within one
 * launch (a grid-wide barrier per row, its counters in the handle's sync
 * buffer), which needs every work-group of the launch running at once:
 * the stub takes the path only while rows x chunks fit the device's
 * compute units. Each chunk stays in registers from its load to its
 * store where it fits (x read once), else it is read again after the
 * barrier, recently (from a GPU's cache).
 *
 * NVIDIA GPUs (the targets that offer shfl.sync): up to COOP_GPU_ROWS
 * rows, in chunks that fill about a wave (a work-group per compute unit
 * of device_wave_units, as the split path's). There a compute unit is a
 * multiprocessor, which holds any work-group the kernel can run; other
 * GPUs' defaults leave the path out, as a compute unit means less on some
 * (Intel's report execution units, several of which a work-group of 256
 * items spans). A spec may
 * still ask for it anywhere. COOP_MOST_GROUPS bounds what a spec may ask
 * (its sync words grow with it). */
#define COOP_GPU_ROWS 16
#define COOP_MOST_GROUPS 4096
/* The most chunks of every row together the stub may spread to: the sync
 * words they take. */
#define COOP_SPREAD_WORDS 8192

int rows_has_coop(const struct kernel_spec *ks)
{
    return knob(ks, ROWS_KNOB_COOP_SPLIT) > 1 &&
           knob(ks, ROWS_KNOB_COOP_MAX) > 0;
}

static long ceil_div(long a, long b)
{
    return (a + b - 1) / b;
}

void rows_coop_geometry(const struct kernel_spec *ks, int registers,
                        int stream_past, struct rows_coop *g)
{
    long vectors = row_vectors(ks), vec = knob(ks, ROWS_KNOB_VEC);
    g->vecs = ceil_div(vectors, knob(ks, ROWS_KNOB_COOP_SPLIT));
    g->groups = ceil_div(vectors, g->vecs);
    long base = dtype_size(ks->dtype) == 2 ? ROWS_GROUP_HALVES
                                           : ROWS_GROUP_ITEMS;
    /* No more items than the chunk has vectors (short rows, tests). */
    while (base > 1 && base / 2 >= g->vecs) {
        base /= 2;
    }
    /* Enough items that each holds at most ROWS_REG_FLOATS of the chunk:
     * in registers where that fits in a group; a streamed chunk as many
     * (one work-group per compute unit wants its loads in flight). */
    long items = base;
    while (items < ROWS_MAX_GROUP &&
           ceil_div(g->vecs, items) * vec > ROWS_REG_FLOATS) {
        items *= 2;
    }
    g->in_registers = registers &&
                      ceil_div(g->vecs, items) * vec <= ROWS_REG_FLOATS;
    g->items = items;
    g->slots = ceil_div(g->vecs, g->items);
    /* Few rows leave compute units idle: the stub may double the chunks
     * while each item keeps a vector of its own at least (and the sync
     * words of coop_max rows stay within COOP_SPREAD_WORDS chunks). */
    long rows = knob(ks, ROWS_KNOB_COOP_MAX) > 0 ? knob(ks, ROWS_KNOB_COOP_MAX)
                                                 : 1;
    g->most = g->groups;
    while (g->most * 2 * rows <= COOP_SPREAD_WORDS &&
           vectors / (g->most * 2) >= g->items) {
        g->most *= 2;
    }
    /* Many rows: chunks halved while coop_max rows of them overfill a
     * wave, read twice where they outgrow the registers. */
    long wave = device_wave_units(target_facts(ks->target));
    g->least = g->groups;
    while (stream_past && g->least > 1 && g->least * rows > wave) {
        g->least /= 2;
    }
}

void rows_coop_defaults(struct kernel_spec *ks)
{
    int gpu = target_offers(ks->target, CAP_SHFL_SYNC) && rows_has_split(ks);
    int max_asked = spec_knob_set(ks, "coop_max") &&
                    knob(ks, ROWS_KNOB_COOP_MAX) > 0;
    int split_asked = spec_knob_set(ks, "coop_split") &&
                      knob(ks, ROWS_KNOB_COOP_SPLIT) > 1;
    long rows = max_asked ? knob(ks, ROWS_KNOB_COOP_MAX)
                : gpu     ? COOP_GPU_ROWS
                          : 1;
    long wave = device_wave_units(target_facts(ks->target));
    long chunks = ks->target != TARGET_CPU && rows < wave / 2
                      ? pow2_at_most(wave / rows)
                      : 2;
    spec_knob_default(ks, "coop_split", gpu || max_asked ? (double)chunks
                                                          : 1.0);
    int chunked = knob(ks, ROWS_KNOB_COOP_SPLIT) > 1;
    spec_knob_default(ks, "coop_max", !chunked       ? 0.0
                                      : gpu          ? COOP_GPU_ROWS
                                      : split_asked  ? 1.0
                                                     : 0.0);
}

void rows_validate_coop(const struct kernel_spec *ks, struct diags *d)
{
    long split = knob(ks, ROWS_KNOB_COOP_SPLIT);
    long most = knob(ks, ROWS_KNOB_COOP_MAX);
    if (most > 0 && split == 1 && ks->knob[ROWS_KNOB_COOP_SPLIT].set) {
        diag_error(d, ks->file, ks->knob[ROWS_KNOB_COOP_MAX].mark,
                   "tile coop_max (%ld) needs coop_split 2 or more (1: no "
                   "one-launch split path)", most);
    } else if (rows_has_coop(ks) && split * most > COOP_MOST_GROUPS) {
        struct mark at = ks->knob[ROWS_KNOB_COOP_MAX].set
                             ? ks->knob[ROWS_KNOB_COOP_MAX].mark
                             : ks->knob[ROWS_KNOB_COOP_SPLIT].mark;
        diag_error(d, ks->file, at,
                   "tile coop_split (%ld) times coop_max (%ld) must be <= "
                   "%d: work-groups that must all run at once", split, most,
                   COOP_MOST_GROUPS);
    }
}

/* The one-launch path's defines: its geometry G, the ROWS its sync words
 * cover, fences and ROW_WORDS sync words per row (templates/row_coop.cl). */
static void coop_defines(const struct kernel_spec *ks, struct plan *p,
                         const struct rows_coop *g, long rows,
                         long row_words)
{
    if (plan_find_define(p, "SUM_BLOCK") == NULL) {
        plan_int(p, "SUM_BLOCK", "vectors summed apart (split paths)",
                 ROWS_SUM_BLOCK);
    }
    plan_int(p, "COOP_GROUPS", "one-launch split: work-groups per row",
             g->groups);
    plan_int(p, "COOP_GROUPS_MOST",
             "one-launch split: work-groups per row at most", g->most);
    if (g->least < g->groups) {
        plan_int(p, "COOP_GROUPS_LEAST",
                 "one-launch split: work-groups per row at least",
                 g->least);
    }
    plan_int(p, "COOP_VECS", "one-launch split: vectors per chunk at "
             "COOP_GROUPS", g->vecs);
    plan_int(p, "COOP_WG", "one-launch split: work-items per group",
             g->items);
    plan_int(p, "COOP_SLOTS", "one-launch split: vectors per work-item",
             g->slots);
    plan_int(p, "COOP_IN_REGISTERS",
             g->in_registers ? "one-launch split: chunk in registers"
                             : "one-launch split: chunk read twice",
             g->in_registers);
    plan_int(p, "COOP_ROWS", "one-launch split: rows of sync words", rows);
    rows_plan_grid_sync(ks, p);
    plan_int(p, "COOP_ROW_WORDS", "one-launch split: sync words per row",
             row_words);
}

void rows_plan_grid_sync(const struct kernel_spec *ks, struct plan *p)
{
    /* NVIDIA: the barrier's fences as membar.gl, of device scope. */
    plan_flag(p, "GRID_MEMBAR_PTX", "grid barrier: fences as PTX membar.gl",
              "grid barrier: fences as mem_fence",
              target_offers(ks->target, CAP_SHFL_SYNC), CAP_SHFL_SYNC);
}

struct path *rows_plan_coop(const struct kernel_spec *ks, struct plan *p,
                            const char *kernel, const char *const *args,
                            long per_chunk, long per_row, int registers,
                            int stream_past, long sync_rows)
{
    struct rows_coop g;
    rows_coop_geometry(ks, registers, stream_past, &g);
    long most = knob(ks, ROWS_KNOB_COOP_MAX);
    long row_words = per_chunk * g.most + per_row;
    long words_rows = sync_rows > most ? sync_rows : most;
    coop_defines(ks, p, &g, words_rows, row_words);
    /* Per row: its arrivals and generation, then its words. */
    p->sync_words = words_rows * (2 + row_words);
    return rows_plan_coop_path(p, kernel, args, most, g.least, g.most,
                               g.items);
}

struct path *rows_plan_coop_path(struct plan *p, const char *kernel,
                                 const char *const *args, long max_rows,
                                 long groups, long most, long items)
{
    struct path *pa = &p->path[p->n_path++];
    pa->max_rows = max_rows;
    pa->coop_groups = groups;
    pa->coop_most = most;
    struct launch *l = &pa->launch[pa->n_launch++];
    l->kernel = kernel;
    l->dims = 2;
    l->local[0] = (size_t)items;
    l->local[1] = 1;
    launch_fixed(l, 0, (size_t)groups);
    launch_over(l, 1, 1, SIZE_FIRST, 1);
    launch_args(l, args);
    return pa;
}
