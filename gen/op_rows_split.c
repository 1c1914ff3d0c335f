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
 * of a split work-group loading at least SPLIT_ITEM_VECTORS vectors of
 * the chunk at once; rows split into fewer than SPLIT_GPU_MIN chunks
 * (under 128 KiB) gain too little to pay for a second launch. Up to as
 * many rows as a wave has units, one work-group per row would leave part
 * of that wave idle. */
#define SPLIT_ITEM_VECTORS 2
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
    long vectors = row_vectors(ks);
    if (ks->target == TARGET_CPU) {
        long bytes = vectors * knob(ks, ROWS_KNOB_VEC) *
                     (long)dtype_size(ks->dtype);
        long n = bytes / SPLIT_CPU_CHUNK;
        n = pow2_at_most(n < SPLIT_CPU_GROUPS ? (n > 0 ? n : 1)
                                              : SPLIT_CPU_GROUPS);
        return n >= SPLIT_CPU_MIN ? n : 0;
    }
    long groups = device_wave_units(target_facts(ks->target));
    long n = vectors / (rows_split_items(ks) * SPLIT_ITEM_VECTORS);
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
    int streamed = 0;
    for (int i = 0; i < p->n_define; i++) {
        streamed |= strcmp(p->define[i].name, "SUM_BLOCK") == 0;
    }
    if (!streamed) {
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
