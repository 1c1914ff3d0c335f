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

/* "{8, 32}"; groups of 0 (one per rows_per_group rows) read
 * "{2, ceil(rows/32)}", or "{1, rows}". */
static void decision_dims(const struct launch *l, const size_t *v,
                          int groups, struct buf *out)
{
    buf_puts(out, "{");
    for (int d = 0; d < l->dims; d++) {
        if (groups && v[d] == 0 && l->rows_per_group == 1) {
            buf_printf(out, "%srows", d ? ", " : "");
        } else if (groups && v[d] == 0) {
            buf_printf(out, "%sceil(rows/%zu)", d ? ", " : "",
                       l->rows_per_group);
        } else {
            buf_printf(out, "%s%zu", d ? ", " : "", v[d]);
        }
    }
    buf_puts(out, "}");
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
    if (api) {
        buf_printf(out, "\n%s.h, constants (prefixed %s_):\n", ks->name,
                   ks->name);
        for (int i = 0; i < plan->n_constant; i++) {
            decision_define(&plan->constant[i], out);
        }
        struct define counts[] = {
            {.name = "N_VARIANTS", .kind = DEFINE_INT, .i = n,
             .comment = "knob sets in the .c"},
            {.name = "N_SIZES", .kind = DEFINE_INT, .i = 1,
             .comment = "runtime sizes: rows"},
            {.name = "N_BUFFERS", .kind = DEFINE_INT, .i = plan->n_buffer,
             .comment = "buffers of the host API"}};
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            decision_define(&counts[i], out);
        }
        buf_printf(out, "\nbuffers, in argument order (%s, %zu bytes an "
                   "element):\n", dtype_name(ks->dtype),
                   dtype_size(ks->dtype));
        for (int i = 0; i < plan->n_buffer; i++) {
            const struct plan_buffer *pb = &plan->buffer[i];
            buf_printf(out, "  %-6s ", pb->name);
            if (pb->per_row != 0) {
                buf_printf(out, "rows x %ld", pb->per_row);
            }
            if (pb->fixed != 0 || pb->per_row == 0) {
                buf_printf(out, "%s%ld", pb->per_row != 0 ? " + " : "",
                           pb->fixed);
            }
            buf_puts(out, pb->optional ? " (optional: unused by this spec)\n"
                                       : "\n");
        }
    }
    const char *names[SPECL_MAX_PATHS * SPECL_MAX_LAUNCHES];
    size_t threads[SPECL_MAX_PATHS * SPECL_MAX_LAUNCHES];
    int n_names = plan_kernels(plan, names, threads);
    buf_puts(out, "\nkernels, work-items per group:\n");
    for (int i = 0; i < n_names; i++) {
        buf_printf(out, "  %-18s %zu\n", names[i], threads[i]);
    }
    for (int pi = 0; pi < plan->n_path; pi++) {
        const struct path *path = &plan->path[pi];
        buf_printf(out, "\npath %d (", pi);
        if (path->max_rows != 0) {
            buf_printf(out, "rows <= %ld", path->max_rows);
        } else {
            buf_puts(out, pi ? "other rows" : "any rows");
        }
        buf_printf(out, "): %s\n", path->why);
        if (path->scratch_fixed != 0) {
            buf_printf(out, "  scratch: rows x %ld + %ld floats\n",
                       path->scratch_per_row, path->scratch_fixed);
        } else if (path->scratch_per_row != 0) {
            buf_printf(out, "  scratch: rows x %ld floats\n",
                       path->scratch_per_row);
        }
        for (int li = 0; li < path->n_launch; li++) {
            const struct launch *l = &path->launch[li];
            int zero = 0;
            buf_printf(out, "  %s  local ", l->kernel);
            decision_dims(l, l->local, 0, out);
            buf_puts(out, "  groups ");
            decision_dims(l, l->groups, 1, out);
            for (int d = 0; d < l->dims; d++) {
                zero |= l->groups[d] == 0;
            }
            if (!zero) {
                buf_printf(out, "  rows_per_group %zu", l->rows_per_group);
            }
            buf_puts(out, "  args (");
            for (int a = 0; l->args[a] != NULL; a++) {
                buf_printf(out, "%s%s", a ? ", " : "", l->args[a]);
                if (strcmp(l->args[a], "slices") == 0) {
                    buf_printf(out, " %d", l->slices);
                }
            }
            buf_puts(out, ")\n");
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
    free(ev);
    return 0;
}
