/* ops.c - the op registry and helpers shared by op families. */
#include "op.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct op_def op_lora_forward;
extern const struct op_def op_lora_backward;
extern const struct op_def op_softmax;
extern const struct op_def op_rmsnorm;
extern const struct op_def op_layernorm;
extern const struct op_def op_swiglu;
extern const struct op_def op_add_rmsnorm;
extern const struct op_def op_swiglu_backward;
extern const struct op_def op_rope;
extern const struct op_def op_rmsnorm_backward;
extern const struct op_def op_layernorm_backward;
extern const struct op_def op_cross_entropy;
extern const struct op_def op_attention;
extern const struct op_def op_attention_backward;

const struct op_def *const op_registry[] = {
    &op_lora_forward,
    &op_lora_backward,
    &op_softmax,
    &op_rmsnorm,
    &op_layernorm,
    &op_add_rmsnorm,
    &op_swiglu,
    &op_swiglu_backward,
    &op_rope,
    &op_rmsnorm_backward,
    &op_layernorm_backward,
    &op_cross_entropy,
    &op_attention,
    &op_attention_backward,
    NULL,
};

/* Ops a program adds to the registry (op_add): the test suites' own. */
static const struct op_def *added_ops[4];

void op_add(const struct op_def *op)
{
    for (size_t i = 0; i < sizeof added_ops / sizeof *added_ops; i++) {
        if (added_ops[i] == NULL || added_ops[i] == op) {
            added_ops[i] = op;
            return;
        }
    }
    assert(!"op_add: too many ops added");
}

const struct op_def *op_find(const char *name)
{
    for (int i = 0; op_registry[i] != NULL; i++) {
        if (strcmp(op_registry[i]->name, name) == 0) {
            return op_registry[i];
        }
    }
    for (size_t i = 0; i < sizeof added_ops / sizeof *added_ops; i++) {
        if (added_ops[i] != NULL && strcmp(added_ops[i]->name, name) == 0) {
            return added_ops[i];
        }
    }
    return NULL;
}

static const char *const rows_only[] = {"rows", NULL};

int op_n_sizes(const struct op_def *op)
{
    const char *const *names = op->sizes != NULL ? op->sizes : rows_only;
    int n = 0;
    while (names[n] != NULL) {
        n++;
    }
    assert(n >= 1 && n <= SPECL_MAX_SIZES);
    return n;
}

const char *op_size_name(const struct op_def *op, int i)
{
    assert(i >= 0 && i < op_n_sizes(op));
    return op->sizes != NULL ? op->sizes[i] : rows_only[i];
}

void sizes_text(const struct op_def *op, unsigned mask, const char *sep,
                char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < op_n_sizes(op) && len < size; i++) {
        if (mask & SIZE_BIT(i)) {
            int n = snprintf(buf + len, size - len, "%s%s", len ? sep : "",
                             op_size_name(op, i));
            len += n > 0 ? (size_t)n : 0;
        }
    }
    if (buf[0] == '\0') {
        snprintf(buf, size, "1");
    }
}

int op_size_index(const struct op_def *op, const char *name)
{
    for (int i = 0; i < op_n_sizes(op); i++) {
        if (strcmp(op_size_name(op, i), name) == 0) {
            return i;
        }
    }
    return -1;
}

size_t sizes_product(unsigned mask, const size_t *sizes)
{
    size_t p = 1;
    for (int i = 0; i < SPECL_MAX_SIZES; i++) {
        if (mask & SIZE_BIT(i)) {
            if (sizes[i] != 0 && p > SIZE_MAX / sizes[i]) {
                return 0;
            }
            p *= sizes[i];
        }
    }
    return p;
}

size_t buffer_count(const struct plan_buffer *pb, const size_t *sizes)
{
    size_t p = sizes_product(pb->sizes, sizes);
    size_t per = (size_t)pb->per, fixed = (size_t)pb->fixed;
    if ((p == 0 && pb->sizes != 0 && per != 0) ||
        (per != 0 && p > (SIZE_MAX - fixed) / per)) {
        return SIZE_MAX;
    }
    return per * p + fixed;
}

size_t buffer_elem_size(const struct plan_buffer *pb, enum dtype dt)
{
    return pb->elem == ELEM_STORAGE ? dtype_size(dt) : 4;
}

void launch_fixed(struct launch *l, int d, size_t groups)
{
    l->groups[d] = groups;
    l->grid[d] = 0;
    l->per_group[d] = 1;
}

void launch_over(struct launch *l, int d, size_t groups, unsigned mask,
                 size_t per_group)
{
    l->groups[d] = groups;
    l->grid[d] = mask;
    l->per_group[d] = per_group;
}

void launch_args(struct launch *l, const char *const *args)
{
    int a = 0;
    for (; args[a] != NULL; a++) {
        assert(a + 1 < (int)(sizeof l->args / sizeof l->args[0]));
        l->args[a] = args[a];
    }
    l->args[a] = NULL;
}

static int param_index(const struct param_def *defs, int n, const char *key)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(defs[i].key, key) == 0) {
            return i;
        }
    }
    return -1;
}

int op_field_index(const struct op_def *op, const char *key)
{
    return param_index(op->fields, op->n_fields, key);
}

int op_knob_index(const struct op_def *op, const char *key)
{
    return param_index(op->knobs, op->n_knobs, key);
}

int op_field_group(const struct op_def *op, const char *group)
{
    size_t n = strlen(group);
    for (int i = 0; i < op->n_fields; i++) {
        if (strncmp(op->fields[i].key, group, n) == 0 &&
            op->fields[i].key[n] == '.') {
            return 1;
        }
    }
    return 0;
}

static int must_field(const struct kernel_spec *ks, const char *key)
{
    int i = op_field_index(ks->op, key);
    if (i < 0) {
        fprintf(stderr, "specl: internal error: op %s has no field %s\n",
                ks->op->name, key);
        abort();
    }
    return i;
}

static int must_knob(const struct kernel_spec *ks, const char *key)
{
    int i = op_knob_index(ks->op, key);
    if (i < 0) {
        fprintf(stderr, "specl: internal error: op %s has no knob %s\n",
                ks->op->name, key);
        abort();
    }
    return i;
}

double spec_field(const struct kernel_spec *ks, const char *key)
{
    return ks->field[must_field(ks, key)].num;
}

double spec_knob(const struct kernel_spec *ks, const char *key)
{
    return ks->knob[must_knob(ks, key)].num;
}

struct mark spec_field_mark(const struct kernel_spec *ks, const char *key)
{
    return ks->field[must_field(ks, key)].mark;
}

struct mark spec_knob_mark(const struct kernel_spec *ks, const char *key)
{
    return ks->knob[must_knob(ks, key)].mark;
}

static struct define *add_define(struct define *defs, int *n,
                                 const char *name, const char *comment)
{
    assert(*n < SPECL_MAX_DEFINES);
    assert(strlen(name) < sizeof defs->name);
    /* the emitted comment is whole, never cut */
    assert(comment == NULL || strlen(comment) < sizeof defs->comment);
    struct define *d = &defs[(*n)++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->comment, sizeof d->comment, "%s", comment ? comment : "");
    return d;
}

void plan_int(struct plan *p, const char *name, const char *comment, long v)
{
    add_define(p->define, &p->n_define, name, comment)->i = v;
}

void plan_flag(struct plan *p, const char *name, const char *on_text,
               const char *off_text, int on, unsigned caps)
{
    plan_int(p, name, on ? on_text : off_text, on != 0);
    if (on) {
        p->needs |= caps;
    }
}

const struct define *plan_find_define(const struct plan *p,
                                      const char *name)
{
    for (int i = 0; i < p->n_define; i++) {
        if (strcmp(p->define[i].name, name) == 0) {
            return &p->define[i];
        }
    }
    return NULL;
}

int plan_set_int(struct plan *p, const char *name, const char *comment,
                 long v)
{
    for (int i = 0; i < p->n_define; i++) {
        struct define *d = &p->define[i];
        if (strcmp(d->name, name) == 0) {
            assert(strlen(comment) < sizeof d->comment);
            snprintf(d->comment, sizeof d->comment, "%s", comment);
            d->kind = DEFINE_INT;
            d->i = v;
            return 1;
        }
    }
    return 0;
}

void plan_float(struct plan *p, const char *name, const char *comment,
                double v)
{
    struct define *d = add_define(p->define, &p->n_define, name, comment);
    d->kind = DEFINE_FLOAT;
    d->f = v;
}

void plan_table(struct plan *p, const char *name, const char *comment,
                const float *v, int n)
{
    int at = p->n_table ? p->table[p->n_table - 1].at +
                              p->table[p->n_table - 1].n
                        : 0;
    assert(p->n_table < SPECL_MAX_TABLES);
    assert(n > 0 && at + n <= SPECL_MAX_TABLE_VALUES);
    assert(strlen(name) < sizeof p->table->name);
    assert(strlen(comment) < sizeof p->table->comment);
    struct plan_table *t = &p->table[p->n_table++];
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->comment, sizeof t->comment, "%s", comment);
    t->n = n;
    t->at = at;
    memcpy(p->table_value + at, v, (size_t)n * sizeof *v);
}

void plan_public_int(struct plan *p, const char *name, const char *comment,
                     long v)
{
    add_define(p->constant, &p->n_constant, name, comment)->i = v;
}

void plan_public_float(struct plan *p, const char *name,
                       const char *comment, double v)
{
    struct define *d = add_define(p->constant, &p->n_constant, name, comment);
    d->kind = DEFINE_FLOAT;
    d->f = v;
}

int plan_launches(const struct plan *p, const char *kernel)
{
    for (int i = 0; i < p->n_path; i++) {
        for (int l = 0; l < p->path[i].n_launch; l++) {
            if (strcmp(p->path[i].launch[l].kernel, kernel) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

/* Whether the stub takes path PA only on a condition of the device or of
 * the other sizes, passing to the next path otherwise. */
static int path_conditional(const struct path *pa)
{
    return pa->coop_groups != 0 || pa->coop_total != 0 ||
           pa->sync_per != 0 || pa->units_groups != 0;
}

void plan_keep_rows(struct plan *p, long rows)
{
    int kept = 0;
    for (int i = 0; i < p->n_path; i++) {
        if (p->path[i].max_rows == 0 || rows <= p->path[i].max_rows) {
            p->path[kept++] = p->path[i];
            if (!path_conditional(&p->path[i])) {
                break;
            }
        }
    }
    if (kept > 0) {
        p->path[kept - 1].max_rows = 0;
    }
    for (int i = kept; i < p->n_path; i++) {
        memset(&p->path[i], 0, sizeof p->path[i]);
    }
    p->n_path = kept;
}

void plan_of(const struct kernel_spec *ks, struct plan *p)
{
    memset(p, 0, sizeof *p);
    ks->op->plan(ks, p);
    if (ks->measure_rows > 0) {
        plan_keep_rows(p, ks->measure_rows);
    }
}

void define_text(const struct define *d, char *buf, size_t size)
{
    if (d->kind == DEFINE_FLOAT) {
        format_float(buf, size, d->f);
    } else {
        snprintf(buf, size, "%ld", d->i);
    }
}

int spec_field_set(const struct kernel_spec *ks, const char *key)
{
    int i = op_field_index(ks->op, key);
    assert(i >= 0);
    return ks->field[i].set;
}

int spec_knob_set(const struct kernel_spec *ks, const char *key)
{
    int i = op_knob_index(ks->op, key);
    assert(i >= 0);
    return ks->knob[i].set;
}

void spec_knob_default(struct kernel_spec *ks, const char *key, double v)
{
    int i = op_knob_index(ks->op, key);
    assert(i >= 0);
    if (!ks->knob[i].set) {
        ks->knob[i].num = v;
    }
}

void check_warp_n(const struct kernel_spec *ks, const char *kernel,
                  long warp_n, long m, long wm, long n, long wn,
                  struct diags *d)
{
    long thn = n / wn, thm = m / wm;
    struct mark at = spec_knob_mark(ks, "warp_n");
    if (warp_n == 0) {
        return;
    }
    if (32 % warp_n != 0) {
        diag_error(d, ks->file, at, "warp_n (%ld) must divide 32", warp_n);
    } else if (thn * thm % 32 != 0) {
        diag_error(d, ks->file, at,
                   "warp_n needs a %s work-group of a multiple of 32 "
                   "work-items (got %ld); use warp_n: 0",
                   kernel, thn * thm);
    } else if (thn % warp_n != 0) {
        diag_error(d, ks->file, at,
                   "warp_n (%ld) must divide the work-items along N (tile n "
                   "%ld / wn %ld = %ld)",
                   warp_n, n, wn, thn);
    } else if (thm % (32 / warp_n) != 0) {
        diag_error(d, ks->file, at,
                   "32 / warp_n (%ld) must divide the work-items along M "
                   "(tile m %ld / wm %ld = %ld)",
                   32 / warp_n, m, wm, thm);
    }
}

double spec_lora_scale(const struct kernel_spec *ks)
{
    if (spec_field_set(ks, "alpha")) {
        return spec_field(ks, "alpha") / spec_field(ks, "rank");
    }
    return spec_field_set(ks, "scale") ? spec_field(ks, "scale") : 1.0;
}

double emitted_float(double f)
{
    char text[48];
    format_float(text, sizeof text, f);
    return strtod(text, NULL);
}

void plan_buffer(struct plan *p, const char *name, long per_row, long fixed,
                 int optional)
{
    assert(p->n_buffer < SPECL_MAX_BUFFERS);
    struct plan_buffer *b = &p->buffer[p->n_buffer++];
    b->name = name;
    b->per = per_row;
    b->sizes = per_row != 0 ? SIZE_FIRST : 0;
    b->fixed = fixed;
    b->elem = ELEM_STORAGE;
    b->optional = optional;
    b->nullable = 0;
    b->role = BUFFER_IN;
    b->shape = NULL;
    b->note = NULL;
    b->may_alias = NULL;
}

void plan_buffer_over(struct plan *p, unsigned mask, long per)
{
    assert(p->n_buffer > 0);
    p->buffer[p->n_buffer - 1].sizes = mask;
    p->buffer[p->n_buffer - 1].per = per;
}

void plan_buffer_nullable(struct plan *p)
{
    assert(p->n_buffer > 0);
    p->buffer[p->n_buffer - 1].nullable = 1;
}

void plan_buffer_elem(struct plan *p, enum elem_type elem)
{
    assert(p->n_buffer > 0);
    p->buffer[p->n_buffer - 1].elem = elem;
}

void plan_buffer_role(struct plan *p, enum buffer_role role)
{
    assert(p->n_buffer > 0);
    p->buffer[p->n_buffer - 1].role = role;
}

void plan_buffer_may_alias(struct plan *p, const char *input)
{
    assert(p->n_buffer > 0);
    p->buffer[p->n_buffer - 1].may_alias = input;
}

void plan_buffer_doc(struct plan *p, const char *shape, const char *note)
{
    assert(p->n_buffer > 0);
    p->buffer[p->n_buffer - 1].shape = shape;
    p->buffer[p->n_buffer - 1].note = note;
}

void plan_dtype(struct plan *p, enum dtype dt)
{
    static const char *const macro[] = {"DTYPE_F32", "DTYPE_F16",
                                        "DTYPE_BF16"};
    plan_int(p, macro[dt], "storage type of every buffer", 1);
}

void plan_storage(struct plan *p, const struct kernel_spec *ks)
{
    plan_dtype(p, ks->dtype);
    if (ks->dtype == DTYPE_BF16 && target_offers(ks->target, CAP_CVT_BF16)) {
        plan_int(p, "BF16_CVT_PTX", "float to bf16 by PTX cvt, a pair at once",
                 1);
        p->needs |= CAP_CVT_BF16;
    }
}

void naive_plan(const struct kernel_spec *ks, struct plan *p)
{
    memset(p, 0, sizeof *p);
    ks->op->plan(ks, p);
    /* The kernel's buffers and constants stay; what runs is the op's. */
    p->n_define = 0;
    memset(p->define, 0, sizeof p->define);
    p->n_table = 0;
    memset(p->path, 0, sizeof p->path);
    p->n_path = 1;
    p->path[0].max_rows = 0;
    p->path[0].why = "naive kernels (tests/naive.cl)";
    ks->op->naive(ks, p);
}

void naive_launch(struct plan *p, const char *kernel, long columns,
                  const char *const *args)
{
    struct path *path = &p->path[p->n_path - 1];
    assert(path->n_launch < SPECL_MAX_LAUNCHES);
    struct launch *l = &path->launch[path->n_launch++];
    int a = 0;
    memset(l, 0, sizeof *l);
    l->kernel = kernel;
    if (columns == 0) {
        l->dims = 1;
        l->local[0] = 64;
        launch_over(l, 0, 1, SIZE_FIRST, 64);
    } else {
        l->dims = 2;
        l->local[0] = 16;
        l->local[1] = 16;
        launch_fixed(l, 0, (size_t)((columns + 15) / 16));
        launch_over(l, 1, 1, SIZE_FIRST, 16);
    }
    for (; args[a] != NULL; a++) {
        assert(a + 1 < (int)(sizeof l->args / sizeof l->args[0]));
        l->args[a] = args[a];
    }
    l->args[a] = NULL;
}

void naive_launch_fixed(struct plan *p, const char *kernel, long count,
                        const char *const *args)
{
    naive_launch(p, kernel, 0, args);
    struct launch *l = &p->path[p->n_path - 1].launch[
        p->path[p->n_path - 1].n_launch - 1];
    launch_fixed(l, 0, (size_t)((count + 63) / 64));
}

double plan_io_bytes(const struct kernel_spec *ks, const size_t *sizes)
{
    struct plan p;
    double bytes = 0;
    memset(&p, 0, sizeof p);
    ks->op->plan(ks, &p);
    for (int i = 0; i < p.n_buffer; i++) {
        if (!p.buffer[i].optional) {
            bytes += (double)buffer_count(&p.buffer[i], sizes) *
                        (double)buffer_elem_size(&p.buffer[i], ks->dtype);
        }
    }
    return bytes;
}

double storage_error_bound(enum dtype dt, double f32)
{
    switch (dt) {
    case DTYPE_F16:
        return 2e-3; /* output rounding alone is up to 2^-11 per element */
    case DTYPE_BF16:
        return 1e-2; /* 2^-8 */
    default:
        return f32;
    }
}

size_t dtype_size(enum dtype dt)
{
    return dt == DTYPE_F32 ? 4 : 2;
}

const char *dtype_name(enum dtype dt)
{
    static const char *const names[] = {"f32", "f16", "bf16"};
    return names[dt];
}

void format_float(char *buf, size_t size, double f)
{
    /* Shortest %g that reads back to the same float. */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, f);
        if ((float)strtod(buf, NULL) == (float)f) {
            break;
        }
    }
    if (strpbrk(buf, ".eEn") == NULL) {
        strncat(buf, ".0", size - strlen(buf) - 1);
    }
    strncat(buf, "f", size - strlen(buf) - 1);
}

int param_stand_in(const struct param_def *def)
{
    return !def->required && def->kind == VALUE_INT && def->def < def->min;
}

void param_format(const struct param_def *def, double num, char *buf,
                  size_t size)
{
    switch (def->kind) {
    case VALUE_INT:
        snprintf(buf, size, "%.0f", num);
        break;
    case VALUE_FLOAT:
        snprintf(buf, size, "%.9g", num);
        break;
    case VALUE_BOOL:
        snprintf(buf, size, "%s", num != 0 ? "true" : "false");
        break;
    case VALUE_CHOICE:
        snprintf(buf, size, "%s", def->choices[(int)num]);
        break;
    }
}
