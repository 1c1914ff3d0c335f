/* emit_stub.c - the host stub NAME.h and NAME.c: the holes of
 * templates/stub.{h,c}.in that describe the host API (buffers, their
 * shapes, aliasing, constants) and the rendering of both files. */
#include "emit.h"
#include "emit_stub.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "c_layout.h"
#include "clsource.h"
#include "emit_caps.h"
#include "render.h"

static const char *const hole_names[N_HOLES] = {
    "HEADER", "NAME", "GUARD", "CONSTANTS", "OP", "MATH", "BUFFER_DOC",
    "PARAMS", "DEF_PARAMS", "SOURCES", "BUFFER_INDEXES", "BUFFER_UNDEFS",
    "BUFFER_SHAPES", "VARIANT_TABLES", "VARIANTS",
    "MAX_KERNELS", "MATCHES", "VARIANT_DOC",
    "N_VARIANTS", "BUFFER_ARGS", "SM90A", "SM90A_REBUILD", "CAPS",
    "ALIAS_DOC",
    "N_BUFFERS", "N_SIZES", "SIZE_NAMES", "SIZE_PARAMS", "SIZE_DEF_PARAMS",
    "SIZE_ARGS", "SIZE_ARG_DEFS", "SIZE_ARG_UNDEFS", "OVER", "SIZE_ZERO",
    "SCRATCH_UPTO", "SIZES_UPPER", "PATH_SIZE", "HANDLE", "QUEUE",
    "ARG_LISTS", "SIZE_ARG0", "SIZE_UNUSED", "RANGES", "RANGE_DOC",
    "USES_SYNC", "USES_SYNC_SIZED", "USES_COOP", "USES_UNITS",
    "USES_UNITS_SIZED", "USES_SCRATCH",
    "USES_SLICES", "USES_IF_GIVEN", "USES_UNUSED", "USES_NULLABLE",
    "USES_MAY_ALIAS", "USES_CAPS", "USES_NEEDS", "USES_NAMES",
    "USES_DEVICE_TEXT", "USES_RANGES"};

void stub_sections(const struct emit_variant *ev, int n,
                   struct stub_sections *s)
{
    memset(s, 0, sizeof *s);
    s->asked = stub_caps_asked(ev, n, &s->needed);
    /* Variants share their buffers (same_api): variant 0's say it. */
    const struct plan *first = &ev[0].plan;
    for (int i = 0; i < first->n_buffer; i++) {
        s->unused |= first->buffer[i].optional;
        s->nullable |= first->buffer[i].nullable;
        s->may_alias |= first->buffer[i].may_alias != NULL;
    }
    for (int v = 0; v < n; v++) {
        const struct plan *p = &ev[v].plan;
        for (int m = 0; m < ev[v].n_match; m++) {
            s->names |= ev[v].match[m].device[0] != '\0';
        }
        s->sync |= p->sync_words > 0;
        for (int pa = 0; pa < p->n_path; pa++) {
            const struct path *path = &p->path[pa];
            s->coop |= path->coop_groups != 0 || path->coop_total != 0;
            s->sync_sized |= path->sync_per != 0;
            s->units_sized |= path->units_groups != 0;
            s->scratch |= path->scratch_per != 0 || path->scratch_fixed != 0;
            s->if_given |= path->scratch_if_given[0] != NULL;
            for (int l = 0; l < path->n_launch; l++) {
                const struct launch *la = &path->launch[l];
                s->if_given |= la->if_given[0] != NULL;
                for (int a = 0; la->args[a] != NULL; a++) {
                    s->slices |= strcmp(la->args[a], "slices") == 0;
                }
            }
        }
    }
}

/* The index of P's buffer NAME, or -1. */
int buffer_index(const struct plan *p, const char *name)
{
    for (int i = 0; i < p->n_buffer; i++) {
        if (strcmp(p->buffer[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* What an element of DT is on the host, for NAME.h. */
static const char *element_doc(enum dtype dt)
{
    switch (dt) {
    case DTYPE_F16:
        return "f16 elements: IEEE 754 half-precision bit patterns, 2 bytes "
               "each (cl_half, or uint16_t on the host)";
    case DTYPE_BF16:
        return "bf16 elements: bfloat16 bit patterns, 2 bytes each, the "
               "upper half of a float's bits (cl_ushort, or uint16_t on the "
               "host)";
    default:
        return "f32 elements: float (cl_float), 4 bytes each";
    }
}

/* Whether "_" NAME is a parameter or variable of the stub's enqueue
 * functions (templates/stub.c.in) that a buffer's parameter would
 * clash with. */
static int stub_param_taken(const char *name)
{
    static const char *const taken[] = {"k", "q", "sizes", "buffers",
                                        "scratch", "n_wait", "wait",
                                        "done", NULL};
    for (int i = 0; taken[i] != NULL; i++) {
        if (strcmp(taken[i], name) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The index of the buffer PB may be (may_alias), -1 for none. */
static int alias_index(const struct plan *p, const struct plan_buffer *pb)
{
    if (pb->may_alias == NULL) {
        return -1;
    }
    int i = buffer_index(p, pb->may_alias);
    /* An op's table names a buffer of its own, and an output. */
    assert(i >= 0 && &p->buffer[i] != pb && pb->role != BUFFER_IN);
    return i;
}

/* Appends the names of the buffers of P that the kernels write, unused
 * ones left out, as "y", "dx or da", "dx, da or db". */
static void written_names(const struct plan *p, struct buf *out)
{
    int n = 0, total = 0;
    for (int i = 0; i < p->n_buffer; i++) {
        total += !p->buffer[i].optional && p->buffer[i].role != BUFFER_IN;
    }
    for (int i = 0; i < p->n_buffer; i++) {
        if (p->buffer[i].optional || p->buffer[i].role == BUFFER_IN) {
            continue;
        }
        n++;
        buf_printf(out, "%s%s", n == 1 ? "" : n == total ? " or " : ", ",
                   p->buffer[i].name);
    }
}

/* What NAME.h says of buffers that share memory (stub NAME): that the
 * stub refuses an output overlapping another buffer, save the pairs the
 * op allows in place (may_alias). */
static void alias_doc(const char *name, const struct plan *p, struct buf *out)
{
    struct buf doc;
    buf_init(&doc);
    buf_puts(&doc, "CL_INVALID_VALUE as well when ");
    written_names(p, &doc);
    buf_puts(&doc, " (which the kernels write) shares memory with another "
             "buffer or the scratch: the same cl_mem, or sub-buffers of one "
             "buffer whose bytes in use overlap.");
    int allowed = 0;
    for (int i = 0; i < p->n_buffer; i++) {
        int a = alias_index(p, &p->buffer[i]);
        if (a >= 0) {
            buf_printf(&doc, " %s may be %s, in place (the same cl_mem, or a "
                       "sub-buffer of the same buffer at the same offset).",
                       p->buffer[i].name, p->buffer[a].name);
            allowed++;
        }
    }
    buf_printf(&doc, allowed ? " No other output of %s may alias another "
                               "buffer."
                             : " No output of %s may alias another buffer.",
               name);
    comment_wrap(out, " * ", " * ", buf_str(&doc));
    buf_free(&doc);
}

/* The buffers' holes: their indexes and shapes in NAME.c, their
 * parameters, and what NAME.h says of each (stub NAME). */
static void stub_buffers(const char *name, const struct kernel_spec *ks,
                         const struct plan *p,
                         const struct stub_sections *sec, struct buf *b)
{
    struct buf doc;
    buf_init(&doc);
    buf_printf(&doc, "Buffers, in argument order, hold dense row-major "
               "arrays of %s. [n][m] is element [i][j] at index i * m + j",
               element_doc(ks->dtype));
    /* The last size of the first shape, as a constant of the header: the
     * example of how sizes and constants go together. */
    const char *shape = p->n_buffer > 0 ? p->buffer[0].shape : NULL;
    const char *last = shape != NULL ? strrchr(shape, '[') : NULL;
    char size[32] = "", constant[32] = "";
    if (last != NULL && sscanf(last, "[%31[a-z_]]", size) == 1) {
        upper_name(constant, size, sizeof constant);
    }
    for (int i = 0; i < p->n_constant; i++) {
        if (strcmp(p->constant[i].name, constant) == 0) {
            buf_printf(&doc, "; the sizes other than rows are the constants "
                       "above (%s: %s_%s)", size, name, constant);
            break;
        }
    }
    buf_puts(&doc, ":");
    comment_wrap(&b[H_BUFFER_DOC], " * ", " * ", buf_str(&doc));
    for (int i = 0; i < p->n_buffer; i++) {
        const struct plan_buffer *pb = &p->buffer[i];
        char up[32], first[32];
        upper_name(up, pb->name, sizeof up);
        buf_printf(&b[H_BUFFER_INDEXES], "#define %s_BUF_%s %d\n", name, up,
                   i);
        buf_printf(&b[H_BUFFER_UNDEFS], "#undef %s_BUF_%s\n", name, up);
        /* The columns of buffer_shapes that the stub has (stub.c.in). */
        struct buf *row = &b[H_BUFFER_SHAPES];
        buf_printf(row, "    {%ld, %uu, %ld, %zu, ", pb->per, pb->sizes,
                   pb->fixed, buffer_elem_size(pb, ks->dtype));
        if (sec->unused) {
            buf_printf(row, "%d, ", pb->optional);
        }
        if (sec->nullable) {
            buf_printf(row, "%d, ", pb->nullable);
        }
        buf_printf(row, "%d", pb->role != BUFFER_IN);
        if (sec->may_alias) {
            buf_printf(row, ", %d", alias_index(p, pb));
        }
        buf_printf(row, "}, /* %s */\n", pb->name);
        /* In NAME.c's definitions, with an underscore as every parameter
         * (stub.c.in says why), and a suffix where that is a name of the
         * stub's own (attention's q and k: the queue and the kernel). */
        const char *suffix = stub_param_taken(pb->name) ? "_buf" : "";
        buf_printf(&b[H_BUFFER_ARGS], "%s_%s%s", i ? ", " : "", pb->name,
                   suffix);
        buf_printf(&b[H_PARAMS], "                    cl_mem %s,\n",
                   pb->name);
        buf_printf(&b[H_DEF_PARAMS], "                    cl_mem _%s%s,\n",
                   pb->name, suffix);

        buf_free(&doc);
        buf_init(&doc);
        if (pb->shape != NULL) {
            buf_printf(&doc, "%s, ", pb->shape);
        }
        if (pb->per != 0) {
            char over[96];
            sizes_text(ks->op, pb->sizes, " x ", over, sizeof over);
            buf_printf(&doc, "%s x %ld", over, pb->per);
        }
        if (pb->fixed != 0 || pb->per == 0) {
            buf_printf(&doc, "%s%ld", pb->per != 0 ? " + " : "", pb->fixed);
        }
        buf_printf(&doc, " elements%s", pb->elem == ELEM_I32   ? " of int32 "
                                        "(cl_int)"
                                        : pb->elem == ELEM_F32 ? " of float "
                                        "(cl_float)"
                                                               : "");
        if (pb->optional) {
            buf_puts(&doc, " (unused by this spec; may be NULL)");
        } else if (pb->note != NULL) {
            buf_printf(&doc, ". %s.", pb->note);
        }
        if (pb->nullable) {
            buf_printf(&doc, "%s May be NULL when not wanted: then nothing "
                       "computes it.", pb->note != NULL ? "" : ".");
        }
        snprintf(first, sizeof first, " *   %-6s ", pb->name);
        comment_wrap(&b[H_BUFFER_DOC], first, " *          ", buf_str(&doc));
    }
    buf_free(&doc);
    alias_doc(name, p, &b[H_ALIAS_DOC]);
    b[H_BUFFER_INDEXES].data[--b[H_BUFFER_INDEXES].len] = '\0';
    buf_printf(&b[H_N_BUFFERS], "%d", p->n_buffer);

    /* The prototypes' last buffer line must not end in a newline twice. */
    for (int h = H_PARAMS; h <= H_DEF_PARAMS; h++) {
        if (b[h].len > 0) {
            b[h].data[--b[h].len] = '\0';
        }
    }
}

/* The runtime sizes' holes: NAME_enqueue's size parameters, their
 * argument codes in the launch tables, and what NAME.h says of them. */
static void stub_sizes(const char *name, const struct op_def *op,
                       struct buf *b)
{
    int n = op_n_sizes(op);
    for (int i = 0; i < n; i++) {
        const char *s = op_size_name(op, i);
        char up[32];
        upper_name(up, s, sizeof up);
        const char *sep = i == 0 ? "" : ", ";
        buf_printf(&b[H_SIZE_NAMES], "%s%s", sep, s);
        buf_printf(&b[H_SIZE_PARAMS], "%ssize_t %s", sep, s);
        buf_printf(&b[H_SIZE_DEF_PARAMS], "%ssize_t _%s", sep, s);
        buf_printf(&b[H_SIZE_ARGS], "%s_%s", sep, s);
        buf_printf(&b[H_SIZE_ARG_DEFS], "%s#define %s_ARG_%s (%d)", i ? "\n"
                   : "", name, up, -5 - i);
        buf_printf(&b[H_SIZE_ARG_UNDEFS], "#undef %s_ARG_%s\n", name, up);
        buf_printf(&b[H_SIZE_UNUSED], "    (void)_%s;\n", s);
        if (i == 0) {
            buf_printf(&b[H_SIZE_ARG0], "%s_ARG_%s", name, up);
        }
        buf_printf(&b[H_SIZES_UPPER], "%s%s", i == 0 ? "" : i + 1 == n
                   ? " and " : ", ", up);
    }
    buf_printf(&b[H_N_SIZES], "%d", n);
    buf_printf(&b[H_PATH_SIZE], "%d", op->path_size);
    if (n == 1 && strcmp(op_size_name(op, 0), "rows") == 0) {
        buf_puts(&b[H_OVER], "over ROWS rows");
        buf_puts(&b[H_SIZE_ZERO], "rows == 0 (or too many)");
        buf_puts(&b[H_SCRATCH_UPTO], "in a call of up to ROWS rows: enough "
                 "for\n * every variant and for any rows from 1 to ROWS");
        return;
    }
    char upper[96];
    snprintf(upper, sizeof upper, "%s", buf_str(&b[H_SIZES_UPPER]));
    buf_printf(&b[H_OVER], "at the runtime sizes %s", upper);
    buf_puts(&b[H_SIZE_ZERO], "a size of 0 (or over INT_MAX)");
    char first[32];
    upper_name(first, op_size_name(op, op->path_size), sizeof first);
    buf_printf(&b[H_SCRATCH_UPTO], "in a call at those sizes, or with\n"
               " * fewer %s: enough for every variant", first);
}

/* Fills the remaining holes B of the stub of the N variants EV (MAX_KERNELS
 * kernels at most in one) and renders NAME.h and NAME.c into E. Returns
 * 0, or -1 with a message in ERR. */
int render_stub(const char *name, const struct emit_variant *ev, int n,
                const struct stub_sections *sec, int max_kernels,
                struct buf *b, struct emitted *e, char *err, size_t errsize)
{
    const struct kernel_spec *ks = ev[0].ks;
    const struct plan *plan = &ev[0].plan;
    struct hole holes[N_HOLES + 1];
    char guard[EMIT_NAME_MAX + 16];
    char up[EMIT_NAME_MAX];
    upper_name(up, name, sizeof up);
    snprintf(guard, sizeof guard, "SPECL_%s_H", up);
    buf_puts(&b[H_NAME], name);
    buf_puts(&b[H_GUARD], guard);
    buf_puts(&b[H_OP], ks->op->name);
    /* NAME.h's names of the handle and queue, unless a buffer has them
     * (attention's k and q). */
    int named = buffer_index(plan, "k") >= 0 || buffer_index(plan, "q") >= 0;
    buf_puts(&b[H_HANDLE], named ? "handle" : "k");
    buf_puts(&b[H_QUEUE], named ? "queue" : "q");
    buf_puts(&b[H_MATH], ks->op->summary);
    buf_printf(&b[H_MAX_KERNELS], "%d", max_kernels);
    buf_printf(&b[H_N_VARIANTS], "%d", n);
    char prefix[EMIT_NAME_MAX + 1];
    snprintf(prefix, sizeof prefix, "%s_", name);
    define_lines(plan->constant, plan->n_constant, prefix, C_LAYOUT_COLS,
                 &b[H_CONSTANTS]);
    stub_buffers(name, ks, plan, sec, b);
    stub_sizes(name, ks->op, b);
    stub_caps_code(name, sec->asked, sec->needed, &b[H_CAPS]);
    const struct {
        enum stub_hole hole;
        int uses;
    } uses[] = {
        {H_USES_SYNC, sec->sync},
        {H_USES_SYNC_SIZED, sec->sync_sized},
        {H_USES_COOP, sec->coop},
        {H_USES_UNITS, sec->coop || sec->units_sized},
        {H_USES_UNITS_SIZED, sec->units_sized},
        {H_USES_SCRATCH, sec->scratch},
        {H_USES_SLICES, sec->slices},
        {H_USES_IF_GIVEN, sec->if_given},
        {H_USES_UNUSED, sec->unused},
        {H_USES_NULLABLE, sec->nullable},
        {H_USES_MAY_ALIAS, sec->may_alias},
        {H_USES_CAPS, sec->asked != 0},
        {H_USES_NEEDS, sec->needed != 0},
        {H_USES_NAMES, sec->names},
        /* the device's name, or its extensions for the capabilities */
        {H_USES_DEVICE_TEXT, sec->names || sec->asked != 0},
        {H_USES_RANGES, sec->ranges},
    };
    for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
        buf_puts(&b[uses[i].hole], uses[i].uses ? "1" : "");
    }
    /* Table rows, and the tables that end in a blank line, end the line
     * their hole stands on. */
    const int rows[] = {H_BUFFER_SHAPES, H_VARIANTS, H_MATCHES, H_SOURCES,
                        H_VARIANT_TABLES};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct buf *t = &b[rows[i]];
        if (t->len > 0 && t->data[t->len - 1] == '\n') {
            t->data[--t->len] = '\0';
        }
    }
    for (int i = 0; i < N_HOLES; i++) {
        holes[i].name = hole_names[i];
        holes[i].value = buf_str(&b[i]);
    }
    holes[N_HOLES].name = NULL;
    holes[N_HOLES].value = NULL;
    /* A variant on wgmma: its program rebuilt for sm_90a after the build
     * (stub_sm90a.c.in); none, none of that code. */
    if (sec->needed & CAP_WGMMA) {
        buf_puts(&b[H_SM90A], "\n");
        if (render(&b[H_SM90A], template_text("stub_sm90a.c.in"), holes, err,
                   errsize) < 0) {
            return -1;
        }
        buf_printf(&b[H_SM90A_REBUILD],
                   "    if (_err == CL_SUCCESS && "
                   "(_var->needs & 0x%xu) != 0u) {\n"
                   "        _err = %s_rebuild_sm90a(_k, _ctx, _dev);\n"
                   "    }\n",
                   (unsigned)CAP_WGMMA, name);
        holes[H_SM90A].value = buf_str(&b[H_SM90A]);
        holes[H_SM90A_REBUILD].value = buf_str(&b[H_SM90A_REBUILD]);
    }

    const char *h = template_text("stub.h.in");
    const char *c = template_text("stub.c.in");
    if (h == NULL || c == NULL) {
        snprintf(err, errsize, "stub templates missing");
        return -1;
    }
    header_comment(ev, n, name, "h", &b[H_HEADER]);
    holes[H_HEADER].value = buf_str(&b[H_HEADER]);
    if (render(&e->h, h, holes, err, errsize) < 0) {
        return -1;
    }
    buf_free(&b[H_HEADER]);
    header_comment(ev, n, name, "c", &b[H_HEADER]);
    holes[H_HEADER].value = buf_str(&b[H_HEADER]);
    if (render(&e->c, c, holes, err, errsize) < 0) {
        return -1;
    }
    /* The templates are laid out for a name as long as "@NAME@". */
    c_layout(&e->h);
    c_layout(&e->c);
    return 0;
}
