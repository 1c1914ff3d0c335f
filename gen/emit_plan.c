/* emit_plan.c - what the generator decided for a kernel, as the short
 * text `specl plan` writes (NAME.plan): one decision a line, from the
 * plans emit_kernel renders; the golden files pin it. */
#include "emit.h"
#include "emit_variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One "NAME VALUE comment" line at fixed columns, so that a changed value
 * changes its own line only. */
static void decision_define(const struct define *d, struct buf *out)
{
    char value[48];
    define_text(d, value, sizeof value);
    buf_printf(out, "  %-18s %-7s%s%s\n", d->name, value,
               d->comment[0] ? " " : "", d->comment);
}

/* "{8, 32}"; work-groups over runtime sizes read "{2, ceil(rows/32)}",
 * "{1, rows}" or "{4 x ceil(batch*seq/16)}". */
static void decision_dims(const struct op_def *op, const struct launch *l,
                          int groups, struct buf *out)
{
    buf_puts(out, "{");
    for (int d = 0; d < l->dims; d++) {
        buf_puts(out, d ? ", " : "");
        if (!groups) {
            buf_printf(out, "%zu", l->local[d]);
            continue;
        }
        if (l->grid[d] == 0) {
            buf_printf(out, "%zu", l->groups[d]);
            continue;
        }
        char over[96];
        sizes_text(op, l->grid[d], "*", over, sizeof over);
        if (l->groups[d] != 1) {
            buf_printf(out, "%zu x ", l->groups[d]);
        }
        if (l->per_group[d] > 1) {
            buf_printf(out, "ceil(%s/%zu)", over, l->per_group[d]);
        } else {
            buf_puts(out, over);
        }
    }
    buf_puts(out, "}");
}

/* "rows x 4096", "batch x seq x 64 + 16", "8": what PB holds. */
static void buffer_count_text(const struct op_def *op,
                              const struct plan_buffer *pb, struct buf *out)
{
    if (pb->per != 0) {
        char over[96];
        sizes_text(op, pb->sizes, " x ", over, sizeof over);
        buf_printf(out, "%s x %ld", over, pb->per);
    }
    if (pb->fixed != 0 || pb->per == 0) {
        buf_printf(out, "%s%ld", pb->per != 0 ? " + " : "", pb->fixed);
    }
}

/* "  while its WHAT, PER x sizes, LIMIT (else the next path)": a path's
 * bound on a count that grows with the runtime sizes. */
static void bound_text(const struct kernel_spec *ks, const char *what,
                       long per, unsigned sizes, const char *limit,
                       struct buf *out)
{
    struct plan_buffer count = {.per = per, .sizes = sizes};
    buf_printf(out, "  while its %s, ", what);
    buffer_count_text(ks->op, &count, out);
    buf_printf(out, ", %s (else the next path)\n", limit);
}

/* " (when the call gives dgamma or dbeta)" for the if_given names NAMES
 * (NULL-terminated); nothing for none. */
static void given_text(const char *const *names, struct buf *out)
{
    for (int i = 0; i < 3 && names[i] != NULL; i++) {
        buf_printf(out, "%s%s", i ? " or " : " (when the call gives ",
                   names[i]);
    }
    if (names[0] != NULL) {
        buf_puts(out, ")");
    }
}

/* What variant V's plan (EV) decided: the prelude, (variant 0) the
 * constants and buffers, the scratch, the kernels with their work-group
 * sizes (the ones create checks) and every path's launches. */
static void plan_decisions(const struct emit_variant *ev, int v, int n,
                           struct buf *out)
{
    const struct kernel_spec *ks = ev->ks;
    const struct plan *plan = &ev->plan;
    int api = v == 0;
    if (v == 0) {
        buf_printf(out, "\n%s.cl, #define prelude:\n", ks->name);
    } else {
        buf_printf(out, "\n#define prelude of variant %d (in %s.c):\n", v,
                   ks->name);
    }
    for (int i = 0; i < plan->n_define; i++) {
        decision_define(&plan->define[i], out);
    }
    for (int i = 0; i < plan->n_table; i++) {
        char count[16];
        snprintf(count, sizeof count, "[%d]", plan->table[i].n);
        buf_printf(out, "  %-18s %-7s %s\n", plan->table[i].name, count,
                   plan->table[i].comment);
    }
    if (api) {
        buf_printf(out, "\n%s.h, constants (prefixed %s_):\n", ks->name,
                   ks->name);
        for (int i = 0; i < plan->n_constant; i++) {
            decision_define(&plan->constant[i], out);
        }
        struct define counts[] = {
            {.name = "N_VARIANTS", .kind = DEFINE_INT, .i = n,
             .comment = "knob sets in the .c"},
            {.name = "N_SIZES", .kind = DEFINE_INT,
             .i = op_n_sizes(ks->op), .comment = "runtime sizes: "},
            {.name = "N_BUFFERS", .kind = DEFINE_INT, .i = plan->n_buffer,
             .comment = "buffers of the host API"}};
        char names[48];
        sizes_text(ks->op, (1u << op_n_sizes(ks->op)) - 1, ", ", names,
                   sizeof names);
        snprintf(counts[1].comment, sizeof counts[1].comment,
                 "runtime sizes: %s", names);
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            decision_define(&counts[i], out);
        }
        buf_printf(out, "\nbuffers, in argument order (%s, %zu bytes an "
                   "element):\n", dtype_name(ks->dtype),
                   dtype_size(ks->dtype));
        for (int i = 0; i < plan->n_buffer; i++) {
            const struct plan_buffer *pb = &plan->buffer[i];
            buf_printf(out, "  %-6s ", pb->name);
            buffer_count_text(ks->op, pb, out);
            if (pb->elem != ELEM_STORAGE) {
                buf_puts(out, pb->elem == ELEM_I32 ? " (int32)" : " (float32)");
            }
            buf_puts(out, pb->optional   ? " (optional: unused by this spec)\n"
                          : pb->nullable ? " (may be NULL: not wanted)\n"
                                         : "\n");
        }
    }
    const char *names[SPECL_MAX_PATHS * SPECL_MAX_LAUNCHES];
    size_t threads[SPECL_MAX_PATHS * SPECL_MAX_LAUNCHES];
    int n_names = plan_kernels(plan, names, threads);
    int width = 18; /* the column fits the longest name */
    for (int i = 0; i < n_names; i++) {
        int len = (int)strlen(names[i]);
        width = len > width ? len : width;
    }
    buf_puts(out, "\nkernels, work-items per group:\n");
    for (int i = 0; i < n_names; i++) {
        buf_printf(out, "  %-*s %zu\n", width, names[i], threads[i]);
    }
    if (plan->sync_words != 0) {
        buf_printf(out, "\nsync: %ld words of the handle's own, zeroed at "
                   "create\n", plan->sync_words);
    }
    for (int pi = 0; pi < plan->n_path; pi++) {
        const struct path *path = &plan->path[pi];
        /* The size paths choose by: rows, or attention's seq_q. */
        const char *by = op_size_name(ks->op, ks->op->path_size);
        buf_printf(out, "\npath %d (", pi);
        if (path->max_rows != 0) {
            buf_printf(out, "%s <= %ld", by, path->max_rows);
        } else {
            /* After a path for any rows that needs a large enough device
             * (coop_total), this one takes them on a smaller one. */
            int other = pi > 0 && plan->path[pi - 1].max_rows != 0;
            buf_printf(out, "%s %s", other ? "other" : "any", by);
        }
        buf_printf(out, "): %s\n", path->why);
        if (path->scratch_per != 0 || path->scratch_fixed != 0) {
            struct plan_buffer scratch = {.per = path->scratch_per,
                                          .sizes = path->scratch_sizes,
                                          .fixed = path->scratch_fixed};
            buf_puts(out, "  scratch: ");
            buffer_count_text(ks->op, &scratch, out);
            buf_puts(out, " floats");
            given_text(path->scratch_if_given, out);
            buf_puts(out, "\n");
        }
        if (path->coop_groups != 0) {
            buf_printf(out, "  while %s x %ld <= the device's compute "
                       "units (else the next path)\n", by,
                       path->coop_groups);
        }
        if (path->coop_most > path->coop_groups) {
            buf_printf(out, "  each row's work-groups doubled up to %ld "
                       "while %s x them fit the compute units\n",
                       path->coop_most, by);
        }
        if (path->coop_total != 0) {
            buf_printf(out, "  while %ld <= the device's compute units "
                       "(else the next path)\n", path->coop_total);
        }
        char limit[64];
        if (path->sync_per != 0) {
            snprintf(limit, sizeof limit, "fit the %ld sync words",
                     plan->sync_words);
            bound_text(ks, "counters", path->sync_per, path->sync_sizes,
                       limit, out);
        }
        if (path->units_groups != 0) {
            snprintf(limit, sizeof limit, "are at most %ld a compute unit",
                     path->units_fill);
            bound_text(ks, "work-groups", path->units_groups,
                       path->units_sizes, limit, out);
        }
        if (path->units_least != 0) {
            buf_printf(out, "  while %s >= %ld (else the next path)\n",
                       op_size_name(ks->op, path->units_least_size),
                       path->units_least);
        }
        for (int li = 0; li < path->n_launch; li++) {
            const struct launch *l = &path->launch[li];
            buf_printf(out, "  %s  local ", l->kernel);
            decision_dims(ks->op, l, 0, out);
            buf_puts(out, "  groups ");
            decision_dims(ks->op, l, 1, out);
            buf_puts(out, "  args (");
            for (int a = 0; l->args[a] != NULL; a++) {
                buf_printf(out, "%s%s", a ? ", " : "", l->args[a]);
                if (strcmp(l->args[a], "slices") == 0) {
                    buf_printf(out, " %d", l->slices);
                }
            }
            buf_puts(out, ")");
            given_text(l->if_given, out);
            buf_puts(out, "\n");
        }
    }
}

int emit_decisions(const struct variant_set *vs, struct buf *out, char *err,
                   size_t errsize)
{
    /* The emitted files, built and dropped: a plan the stub cannot
     * express fails here as it does in emit_kernel. */
    struct emitted e;
    if (emit_kernel(vs, &e, err, errsize) < 0) {
        return -1;
    }
    emitted_free(&e);
    struct emit_variant *ev = plan_variants(vs);
    if (ev == NULL) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    header_comment(ev, vs->n, vs->v[0].ks.name, "plan", out);
    for (int v = 0; v < vs->n; v++) {
        if (vs->n > 1) {
            buf_printf(out, "\n== variant %d: ", v);
            comment_text(out, ev[v].label);
            buf_puts(out, "; for ");
            match_text(ev[v].match, ev[v].n_match, out);
            buf_puts(out, "\n");
        }
        plan_decisions(&ev[v], v, vs->n, out);
    }
    /* A device tuned at several row counts, and every CPU: which variant
     * runs when. */
    if (vs->n_range > 0) {
        buf_puts(out, "\n== rows ranges (the first runtime size):\n");
    }
    for (int r = 0; r < vs->n_range; r++) {
        buf_puts(out, "  ");
        range_text(vs, r, out);
        buf_puts(out, "\n");
    }
    free(ev);
    return 0;
}
