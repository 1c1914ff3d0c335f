/* ops.c - the op registry and helpers shared by op families. */
#include "op.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct op_def op_lora_forward;
extern const struct op_def op_softmax;
extern const struct op_def op_rmsnorm;
extern const struct op_def op_layernorm;

const struct op_def *const op_registry[] = {
    &op_lora_forward,
    &op_softmax,
    &op_rmsnorm,
    &op_layernorm,
    NULL,
};

const struct op_def *op_find(const char *name)
{
    for (int i = 0; op_registry[i] != NULL; i++) {
        if (strcmp(op_registry[i]->name, name) == 0) {
            return op_registry[i];
        }
    }
    return NULL;
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

static void fill_define(struct define *d, const char *name,
                        const char *comment, const char *fmt, va_list ap)
{
    assert(strlen(name) < sizeof d->name);
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->comment, sizeof d->comment, "%s", comment ? comment : "");
    vsnprintf(d->value, sizeof d->value, fmt, ap);
}

void plan_define(struct plan *p, const char *name, const char *comment,
                 const char *fmt, ...)
{
    assert(p->n_define < SPECL_MAX_DEFINES);
    va_list ap;
    va_start(ap, fmt);
    fill_define(&p->define[p->n_define++], name, comment, fmt, ap);
    va_end(ap);
}

void plan_constant(struct plan *p, const char *name, const char *comment,
                   const char *fmt, ...)
{
    assert(p->n_constant < SPECL_MAX_DEFINES);
    va_list ap;
    va_start(ap, fmt);
    fill_define(&p->constant[p->n_constant++], name, comment, fmt, ap);
    va_end(ap);
}

void plan_buffer(struct plan *p, const char *name, long per_row, long fixed,
                 int optional)
{
    assert(p->n_buffer < SPECL_MAX_BUFFERS);
    struct plan_buffer *b = &p->buffer[p->n_buffer++];
    b->name = name;
    b->per_row = per_row;
    b->fixed = fixed;
    b->optional = optional;
}

void plan_dtype(struct plan *p, enum dtype dt)
{
    static const char *const macro[] = {"DTYPE_F32", "DTYPE_F16",
                                        "DTYPE_BF16"};
    plan_define(p, macro[dt], "storage type of every buffer", "1");
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
