/* lora_backward_values.c - lora_backward's keys and their values as
 * numbers (bwd_read), and what every part of the op asks of them: whether
 * dX needs W or runs on tensor cores, whether a work-group fits the
 * limits. */
#include "lora_backward.h"

#define FIELD_DEF(member, type, def) def,
const struct param_def bwd_fields[] = {BWD_FIELDS(FIELD_DEF)};
#undef FIELD_DEF

#define KNOB_DEF(name, kind, def, min, max, help)                            \
    {#name, kind, 0, def, min, max,                                          \
     (kind) == VALUE_CHOICE ? lora_engine_choices : NULL, help},
const struct param_def bwd_knobs[] = {BWD_KNOBS(KNOB_DEF)};
#undef KNOB_DEF

_Static_assert(BWD_N_KNOBS <= SPECL_MAX_PARAMS &&
                   BWD_N_FIELDS <= SPECL_MAX_PARAMS,
               "lora_backward has more keys than a kernel_spec holds");

void bwd_read(const struct kernel_spec *ks, struct bwd *c)
{
#define READ_FIELD(member, type, ...)                                        \
    c->member = bwd_fields[BWD_FIELD_##member].kind == VALUE_BOOL            \
                    ? ks->field[BWD_FIELD_##member].num != 0                 \
                    : (type)ks->field[BWD_FIELD_##member].num;
#define READ_KNOB(name, ...) c->name = (long)ks->knob[BWD_KNOB_##name].num;
    BWD_FIELDS(READ_FIELD)
    BWD_KNOBS(READ_KNOB)
#undef READ_FIELD
#undef READ_KNOB
    c->dev = target_facts(ks->target);
    c->dtype = ks->dtype;
    c->target = ks->target;
}

/* dX needs W only with both the input gradient and the base. */
int bwd_uses_w(const struct bwd *c)
{
    return c->input_grad && c->base;
}

/* dX's GEMM with W runs on tensor cores. */
int bwd_dx_tensor(const struct bwd *c)
{
    return bwd_uses_w(c) && c->engine != ENGINE_SIMT;
}

void bwd_check_group(const struct kernel_spec *ks, const char *key,
                     const char *kernel, long threads, long local_floats,
                     struct diags *d)
{
    if (threads > THREADS_MAX) {
        diag_error(d, ks->file, spec_knob_mark(ks, key),
                   "%s work-group of %ld work-items exceeds %ld", kernel,
                   threads, THREADS_MAX);
    }
    if (local_floats * 4 > LOCAL_MAX) {
        diag_error(d, ks->file, spec_knob_mark(ks, key),
                   "%s needs %ld bytes of local memory, more than %ld",
                   kernel, local_floats * 4, LOCAL_MAX);
    }
}
