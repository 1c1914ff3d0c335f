/* op_rope.c - rotary position embedding: in each head of each row, the
 * first rotary_dim elements turn in pairs by position * freq_i, freq_i =
 * theta^(-2i / rotary_dim) (scaled as linear or Llama 3.1 scaling says);
 * the rest pass through. inverse turns the other way (the backward). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

enum { STYLE_HALF, STYLE_INTERLEAVED };
static const char *const style_choices[] = {"half", "interleaved", NULL};
enum { SCALING_NONE, SCALING_LINEAR, SCALING_LLAMA3 };
static const char *const scaling_choices[] = {"none", "linear", "llama3",
                                              NULL};

static const struct param_def fields[] = {
    {"heads", VALUE_INT, 1, 0, 1, 4096, NULL,
     "attention heads per row (H); rows are given at run time"},
    {"head_dim", VALUE_INT, 1, 0, 2, 1024, NULL,
     "elements per head (D); even"},
    {"rotary_dim", VALUE_INT, 0, 0, 2, 1024, NULL,
     "leading elements of each head that turn; even, <= head_dim "
     "(default head_dim)"},
    {"theta", VALUE_FLOAT, 0, 10000, 0, 3.4e38, NULL,
     "base of the frequencies; > 0 (default 10000)"},
    {"style", VALUE_CHOICE, 0, STYLE_HALF, 0, 0, style_choices,
     "half: pairs (i, i + rotary_dim/2) (default); interleaved: (2i, 2i+1)"},
    {"scaling.type", VALUE_CHOICE, 0, SCALING_NONE, 0, 0, scaling_choices,
     "none (default), linear or llama3"},
    {"scaling.factor", VALUE_FLOAT, 0, 0, 0, 3.4e38, NULL,
     "linear, llama3: frequencies divided by it; > 0"},
    {"scaling.low_freq_factor", VALUE_FLOAT, 0, 0, 0, 3.4e38, NULL,
     "llama3: wavelengths past original_max_position / it are scaled"},
    {"scaling.high_freq_factor", VALUE_FLOAT, 0, 0, 0, 3.4e38, NULL,
     "llama3: wavelengths under original_max_position / it are kept"},
    {"scaling.original_max_position", VALUE_FLOAT, 0, 0, 1, 16777216,
     NULL, "llama3: the context length before scaling; a whole number"},
    {"inverse", VALUE_BOOL, 0, 0, 0, 0, NULL,
     "true: turn by -angle (the backward pass)"},
};

enum { KNOB_WG, KNOB_VEC, KNOB_SLOTS, KNOB_HEADS, KNOB_ROWS, N_KNOBS };
static const struct param_def knobs[N_KNOBS] = {
    [KNOB_WG] = {"wg", VALUE_INT, 0, 128, 1, 1024, NULL,
                 "work-items of a group along a row's heads"},
    [KNOB_VEC] = {"vec", VALUE_INT, 0, 4, 1, 8, NULL,
                  "pairs a work-item turns at once: 1, 2, 4 or 8, dividing "
                  "rotary_dim / 2"},
    [KNOB_SLOTS] = {"slots", VALUE_INT, 0, 1, 1, 1024, NULL,
                    "slots of a head (vec pairs, or the elements past "
                    "rotary_dim) each work-item walks"},
    [KNOB_HEADS] = {"heads", VALUE_INT, 0, 1, 1, 4096, NULL,
                    "heads each work-item turns with one cos and sin; "
                    "divides heads"},
    [KNOB_ROWS] = {"rows", VALUE_INT, 0, 1, 1, 4096, NULL,
                   "rows each work-item walks"},
};

/* Memory-bound: the width of the loads and the heads sharing a cos and
 * sin first. */
static const struct tune_axis tune_space[] = {
    {"vec", "1 2 4 8"},
    {"heads", "1 2 4 8 16 32 64"},
    {"slots", "1 2 4 8 16 32"},
    {"wg", "16 32 64 128 256 512"},
    {"rows", "1 2 4 8 16"},
    {NULL, NULL},
};

static const char *const kernels[] = {"rope", NULL};

static long field_int(const struct kernel_spec *ks, const char *key)
{
    return (long)spec_field(ks, key);
}

static long knob(const struct kernel_spec *ks, int i)
{
    return (long)ks->knob[i].num;
}

/* rotary_dim, head_dim when not given. */
static long rotary_dim(const struct kernel_spec *ks)
{
    return spec_field_set(ks, "rotary_dim") ? field_int(ks, "rotary_dim")
                                            : field_int(ks, "head_dim");
}

static int interleaved(const struct kernel_spec *ks)
{
    return (int)spec_field(ks, "style") == STYLE_INTERLEAVED;
}

/* Whether VEC pairs a work-item fit KS: they divide the pairs, and their
 * loads (VEC elements at a time, 2 * VEC interleaved) fall on multiples of
 * their width in every head. */
static int vec_fits(const struct kernel_spec *ks, long vec)
{
    long width = interleaved(ks) ? 2 * vec : vec;
    return (rotary_dim(ks) / 2) % vec == 0 &&
           field_int(ks, "head_dim") % width == 0;
}

/* Elements a work-item copies at once past rotary_dim: the widest of 8,
 * 4, 2 that divides rotary_dim and head_dim, so loads stay aligned. */
static long pass_vec(const struct kernel_spec *ks)
{
    long w = 8;
    while (w > 1 && (rotary_dim(ks) % w || field_int(ks, "head_dim") % w)) {
        w /= 2;
    }
    return w;
}

/* The largest power of two at most MOST that divides N. */
static long pow2_divisor(long n, long most)
{
    long d = 1;
    while (d * 2 <= most && n % (d * 2) == 0) {
        d *= 2;
    }
    return d;
}

/* A head's slots for VEC: VEC pairs each, then PASS_VEC elements each
 * past rotary_dim. */
static long head_slots(const struct kernel_spec *ks, long vec)
{
    return rotary_dim(ks) / 2 / vec +
           (field_int(ks, "head_dim") - rotary_dim(ks)) / pass_vec(ks);
}

/* Work-items of a row: its slots by SLOTS a work-item, times its head
 * groups of HEADS. */
static long row_items(const struct kernel_spec *ks, long vec, long slots,
                      long heads)
{
    return (head_slots(ks, vec) + slots - 1) / slots *
           (field_int(ks, "heads") / heads);
}

/* GPUs: 16-byte loads, a slot of 4 heads sharing a cos and sin a
 * work-item, 128 a group. CPUs: 32-byte loads, all of a row a
 * work-item (cos and sin once a row), 8 rows. */
static void defaults(struct kernel_spec *ks)
{
    int cpu = ks->target == TARGET_CPU;
    long vec = cpu ? 8 : (long)(16 / dtype_size(ks->dtype));
    while (vec > 1 && !vec_fits(ks, vec)) {
        vec /= 2;
    }
    long heads = field_int(ks, "heads");
    spec_knob_default(ks, "vec", (double)vec);
    vec = knob(ks, KNOB_VEC);
    spec_knob_default(ks, "slots", cpu ? (double)head_slots(ks, vec) : 1);
    spec_knob_default(ks, "heads", (double)pow2_divisor(heads, cpu ? heads
                                                                   : 4));
    long per_item = knob(ks, KNOB_HEADS), slots = knob(ks, KNOB_SLOTS);
    long items = heads % per_item == 0 && head_slots(ks, vec) > 0
                     ? row_items(ks, vec, slots, per_item)
                     : 1;
    long wg = 1, most = cpu ? 1 : 128;
    while (wg < items && wg < most) {
        wg *= 2;
    }
    spec_knob_default(ks, "wg", (double)wg);
    spec_knob_default(ks, "rows", cpu ? 8 : 1);
}

/* ---- checks ----------------------------------------------------------- */

static void check_shape(const struct kernel_spec *ks, struct diags *d)
{
    long dim = field_int(ks, "head_dim");
    if (dim % 2 != 0) {
        diag_error(d, ks->file, spec_field_mark(ks, "head_dim"),
                   "head_dim must be even (got %ld)", dim);
    }
    if (spec_field_set(ks, "rotary_dim")) {
        long rd = field_int(ks, "rotary_dim");
        if (rd % 2 != 0) {
            diag_error(d, ks->file, spec_field_mark(ks, "rotary_dim"),
                       "rotary_dim must be even (got %ld)", rd);
        } else if (rd > dim) {
            diag_error(d, ks->file, spec_field_mark(ks, "rotary_dim"),
                       "rotary_dim must be <= head_dim (got %ld, head_dim "
                       "%ld)",
                       rd, dim);
        }
    }
    double theta = spec_field(ks, "theta");
    if (!(theta > 0)) {
        diag_error(d, ks->file, spec_field_mark(ks, "theta"),
                   "theta must be > 0 (got %g)", theta);
    }
}

/* Scaling field KEY ("factor"): reports it missing where TYPE needs it
 * (NEED), or given where TYPE takes none, or not > 0. Returns 1 when it
 * is given and > 0. */
static int check_scaling_key(const struct kernel_spec *ks, const char *key,
                             int need, struct diags *d)
{
    char full[64];
    snprintf(full, sizeof full, "scaling.%s", key);
    int type = (int)spec_field(ks, "scaling.type");
    int given = spec_field_set(ks, full);
    double v = spec_field(ks, full);
    if (!need && given) {
        diag_error(d, ks->file, spec_field_mark(ks, full),
                   "scaling %s does not apply to type %s%s", key,
                   scaling_choices[type],
                   type == SCALING_LINEAR ? " (llama3 only)" : "");
        return 0;
    }
    if (need && !given) {
        diag_error(d, ks->file, spec_field_mark(ks, full),
                   "scaling of type %s needs '%s'", scaling_choices[type],
                   key);
        return 0;
    }
    if (need && !(v > 0)) {
        diag_error(d, ks->file, spec_field_mark(ks, full),
                   "scaling %s must be > 0 (got %g)", key, v);
        return 0;
    }
    return need;
}

static void check_scaling(const struct kernel_spec *ks, struct diags *d)
{
    if (ks->shape_only) {
        return; /* a tuning entry's shape: the scaling's numbers not in it */
    }
    int type = (int)spec_field(ks, "scaling.type");
    int llama3 = type == SCALING_LLAMA3;
    int any = 0;
    for (int i = 0; i < ks->op->n_fields; i++) {
        any |= strncmp(ks->op->fields[i].key, "scaling.", 8) == 0 &&
               ks->field[i].set;
    }
    if (any && !spec_field_set(ks, "scaling.type")) {
        diag_error(d, ks->file, spec_field_mark(ks, "scaling.type"),
                   "scaling needs a type (none, linear or llama3)");
        return;
    }
    check_scaling_key(ks, "factor", type != SCALING_NONE, d);
    int low = check_scaling_key(ks, "low_freq_factor", llama3, d);
    int high = check_scaling_key(ks, "high_freq_factor", llama3, d);
    if (check_scaling_key(ks, "original_max_position", llama3, d)) {
        double n = spec_field(ks, "scaling.original_max_position");
        if (n != floor(n)) {
            diag_error(d, ks->file,
                       spec_field_mark(ks, "scaling.original_max_position"),
                       "scaling original_max_position must be a whole "
                       "number (got %g)",
                       n);
        }
    }
    double lo = spec_field(ks, "scaling.low_freq_factor");
    double hi = spec_field(ks, "scaling.high_freq_factor");
    if (low && high && !(lo < hi)) {
        diag_error(d, ks->file, spec_field_mark(ks, "scaling.low_freq_factor"),
                   "scaling low_freq_factor must be < high_freq_factor (got "
                   "%g, high_freq_factor %g)",
                   lo, hi);
    }
}

static void check_knobs(const struct kernel_spec *ks, struct diags *d)
{
    long vec = knob(ks, KNOB_VEC), heads = knob(ks, KNOB_HEADS);
    if (vec != 1 && vec != 2 && vec != 4 && vec != 8) {
        diag_error(d, ks->file, spec_knob_mark(ks, "vec"),
                   "vec must be 1, 2, 4 or 8 (got %ld)", vec);
    } else if ((rotary_dim(ks) / 2) % vec != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "vec"),
                   "vec must divide rotary_dim / 2 (got vec %ld, %ld pairs)",
                   vec, rotary_dim(ks) / 2);
    } else if (!vec_fits(ks, vec)) {
        diag_error(d, ks->file, spec_knob_mark(ks, "vec"),
                   "%s must divide head_dim%s, for aligned loads (got vec "
                   "%ld, head_dim %ld)",
                   interleaved(ks) ? "2 * vec" : "vec",
                   interleaved(ks) ? " with style interleaved" : "", vec,
                   field_int(ks, "head_dim"));
    } else if (knob(ks, KNOB_SLOTS) > head_slots(ks, vec)) {
        long pass = field_int(ks, "head_dim") - rotary_dim(ks);
        diag_error(d, ks->file, spec_knob_mark(ks, "slots"),
                   "tile slots must be <= the %ld slots of a head (%ld pairs "
                   "by vec %ld, %ld elements past rotary_dim by %ld) (got "
                   "%ld)",
                   head_slots(ks, vec), rotary_dim(ks) / 2, vec, pass,
                   pass_vec(ks), knob(ks, KNOB_SLOTS));
    }
    if (field_int(ks, "heads") % heads != 0) {
        diag_error(d, ks->file, spec_knob_mark(ks, "heads"),
                   "tile heads must divide heads (got %ld, heads %ld)",
                   heads, field_int(ks, "heads"));
    }
}

static void validate(const struct kernel_spec *ks, struct diags *d)
{
    int errors = d->count;
    check_shape(ks, d);
    check_scaling(ks, d);
    if (d->count == errors) {
        check_knobs(ks, d);
    }
}

/* ---- frequencies ------------------------------------------------------ */

#define TWO_PI_L 6.283185307179586476925286766559005768L

/* freq_i in radians per position: theta^(-2i / rotary_dim), then scaled
 * as Llama 3.1 (Hugging Face's _compute_llama3_parameters) does, in long
 * double. */
static long double rope_freq(const struct kernel_spec *ks, long i)
{
    long double f = powl((long double)spec_field(ks, "theta"),
                         -2.0L * (long double)i /
                             (long double)rotary_dim(ks));
    long double factor = spec_field(ks, "scaling.factor");
    switch ((int)spec_field(ks, "scaling.type")) {
    case SCALING_LINEAR:
        return f / factor;
    case SCALING_LLAMA3: {
        long double lo = spec_field(ks, "scaling.low_freq_factor");
        long double hi = spec_field(ks, "scaling.high_freq_factor");
        long double old = spec_field(ks, "scaling.original_max_position");
        long double wavelen = TWO_PI_L / f;
        if (wavelen < old / hi) {
            return f;
        }
        if (wavelen > old / lo) {
            return f / factor;
        }
        long double smooth = (old / wavelen - lo) / (hi - lo);
        return (1 - smooth) * f / factor + smooth * f;
    }
    default:
        return f;
    }
}

/* ---- plan ------------------------------------------------------------- */

/* The #defines the kernel and the naive kernel share. */
static void plan_common(const struct kernel_spec *ks, struct plan *p)
{
    plan_int(p, "HEADS", "heads per row", field_int(ks, "heads"));
    plan_int(p, "HEAD_DIM", "elements per head", field_int(ks, "head_dim"));
    plan_int(p, "ROT_DIM", "leading elements of a head that turn",
             rotary_dim(ks));
    plan_int(p, "ROPE_STYLE",
             interleaved(ks) ? "ROPE_INTERLEAVED: pairs (2i, 2i+1)"
                             : "ROPE_HALF: pairs (i, i + ROT_DIM/2)",
             interleaved(ks) ? 1 : 0);
    plan_int(p, "ROPE_INVERSE", "1: turns by -angle (backward)",
             (long)spec_field(ks, "inverse"));
}

/* freq_i / 2pi, turns per position, as hi + lo floats (2^-48 of it):
 * position * turns is then formed to 2^-25 of a turn. */
static void plan_turns(const struct kernel_spec *ks, struct plan *p)
{
    float hi[512], lo[512];
    long pairs = rotary_dim(ks) / 2;
    for (long i = 0; i < pairs; i++) {
        long double t = rope_freq(ks, i) / TWO_PI_L;
        hi[i] = (float)t;
        lo[i] = (float)(t - hi[i]);
    }
    plan_table(p, "ROPE_TURNS_HI", "freq_i / 2pi, turns per position: high",
               hi, (int)pairs);
    plan_table(p, "ROPE_TURNS_LO", "freq_i / 2pi: the float after hi", lo,
               (int)pairs);
}

static void plan_buffers(const struct kernel_spec *ks, struct plan *p)
{
    long per_row = field_int(ks, "heads") * field_int(ks, "head_dim");
    plan_buffer(p, "x", per_row, 0, 0);
    plan_buffer_doc(p, "[rows][heads][head_dim]", NULL);
    plan_buffer(p, "positions", 1, 0, 0);
    plan_buffer_elem(p, ELEM_I32);
    plan_buffer_doc(p, "[rows]",
                    "Each row's position, >= 0 (exact below 2^24)");
    plan_buffer(p, "y", per_row, 0, 0);
    plan_buffer_role(p, BUFFER_OUT);
    plan_buffer_may_alias(p, "x");
    plan_buffer_doc(p, "[rows][heads][head_dim]", NULL);
    plan_public_int(p, "HEADS", "heads per row", field_int(ks, "heads"));
    plan_public_int(p, "HEAD_DIM", "elements per head",
                    field_int(ks, "head_dim"));
    plan_public_int(p, "ROTARY_DIM", "leading elements of a head that turn",
                    rotary_dim(ks));
}

static void plan(const struct kernel_spec *ks, struct plan *p)
{
    long vec = knob(ks, KNOB_VEC), heads = knob(ks, KNOB_HEADS);
    long wg = knob(ks, KNOB_WG), rows = knob(ks, KNOB_ROWS);
    plan_storage(p, ks);
    plan_common(ks, p);
    plan_int(p, "VEC", "pairs a work-item turns at once", vec);
    plan_int(p, "PASS_VEC", "elements copied at once past ROT_DIM",
             pass_vec(ks));
    plan_int(p, "SLOTS_PER_ITEM", "slots of a head a work-item walks",
             knob(ks, KNOB_SLOTS));
    plan_int(p, "HEADS_PER_ITEM", "heads sharing a work-item's cos, sin",
             heads);
    plan_int(p, "ROWS_PER_GROUP", "rows each work-item walks", rows);
    /* Half-width rows move few bytes for each angle: there cospi and
     * sinpi's arithmetic shows, the hardware's approximations do not
     * (bench/RESULTS.md, "rope bf16: the angles' sine and cosine in
     * hardware"). Their error, near 2^-21, is far below a half's. */
    int approx = ks->dtype != DTYPE_F32 &&
                 target_offers(ks->target, CAP_APPROX_TRIG);
    plan_flag(p, "ROPE_APPROX_TRIG", "cos and sin by native_cos and "
              "native_sin", "cos and sin by cospi and sinpi", approx,
              CAP_APPROX_TRIG);
    plan_turns(ks, p);
    plan_buffers(ks, p);
    struct path *pa = &p->path[p->n_path++];
    pa->why = "VEC pairs of HEADS_PER_ITEM heads a work-item";
    struct launch *l = &pa->launch[pa->n_launch++];
    l->kernel = "rope";
    l->dims = 2;
    l->local[0] = (size_t)wg;
    l->local[1] = 1;
    long items = row_items(ks, vec, knob(ks, KNOB_SLOTS), heads);
    launch_fixed(l, 0, (size_t)((items + wg - 1) / wg));
    launch_over(l, 1, 1, SIZE_FIRST, (size_t)rows);
    static const char *const args[] = {"rows", "x", "positions", "y", NULL};
    memcpy(l->args, args, sizeof args);
}

/* ---- checking and measuring ------------------------------------------ */

/* Float64 (long double) ground truth: the angle position * freq_i and
 * its cos and sin in long double (glibc reduces modulo 2pi exactly). */
static int reference(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sizes, double *const *out)
{
    long heads = field_int(ks, "heads"), dim = field_int(ks, "head_dim");
    long pairs = rotary_dim(ks) / 2;
    int inv = spec_field(ks, "inverse") != 0, il = interleaved(ks);
    if (out[2] == NULL) {
        return 0;
    }
    long double *freq = malloc((size_t)pairs * sizeof *freq);
    long double *cs = malloc((size_t)pairs * 2 * sizeof *cs);
    if (freq == NULL || cs == NULL) {
        free(freq);
        free(cs);
        return -1;
    }
    for (long i = 0; i < pairs; i++) {
        freq[i] = rope_freq(ks, i);
    }
    for (size_t r = 0; r < sizes[0]; r++) {
        for (long i = 0; i < pairs; i++) {
            long double angle = (long double)in[1][r] * freq[i];
            cs[2 * i] = cosl(angle);
            cs[2 * i + 1] = inv ? -sinl(angle) : sinl(angle);
        }
        for (long h = 0; h < heads; h++) {
            size_t at = (r * (size_t)heads + (size_t)h) * (size_t)dim;
            const float *x = in[0] + at;
            double *y = out[2] + at;
            for (long e = 2 * pairs; e < dim; e++) {
                y[e] = x[e];
            }
            for (long i = 0; i < pairs; i++) {
                long ia = il ? 2 * i : i, ib = il ? 2 * i + 1 : i + pairs;
                long double c = cs[2 * i], s = cs[2 * i + 1];
                y[ia] = (double)(x[ia] * c - x[ib] * s);
                y[ib] = (double)(x[ia] * s + x[ib] * c);
            }
        }
    }
    free(freq);
    free(cs);
    return 0;
}

/* V's bits as a double, an integer literal the naive kernel reads back
 * with as_double: every field exactly as the spec gives it. */
static long double_bits(double v)
{
    long long bits;
    memcpy(&bits, &v, sizeof bits);
    return (long)bits;
}

static void naive(const struct kernel_spec *ks, struct plan *p)
{
    static const char *const args[] = {"rows", "x", "positions", "y", NULL};
    plan_dtype(p, ks->dtype);
    plan_common(ks, p);
    plan_int(p, "ROPE_SCALING", "0 none, 1 linear, 2 llama3",
             (long)spec_field(ks, "scaling.type"));
    plan_int(p, "ROPE_THETA_BITS", "theta, a double's bits",
             double_bits(spec_field(ks, "theta")));
    plan_int(p, "ROPE_FACTOR_BITS", "scaling factor, a double's bits",
             double_bits(spec_field(ks, "scaling.factor")));
    plan_int(p, "ROPE_LOW_BITS", "low_freq_factor, a double's bits",
             double_bits(spec_field(ks, "scaling.low_freq_factor")));
    plan_int(p, "ROPE_HIGH_BITS", "high_freq_factor, a double's bits",
             double_bits(spec_field(ks, "scaling.high_freq_factor")));
    plan_int(p, "ROPE_ORIGINAL", "original_max_position",
             (long)spec_field(ks, "scaling.original_max_position"));
    naive_launch(p, "naive_rope", field_int(ks, "heads"), args);
}

/* Positions up to 65535, where an angle rounded to float32 fails. */
static void input_range(const struct kernel_spec *ks, const char *buffer,
                        double *lo, double *hi)
{
    (void)ks;
    if (strcmp(buffer, "positions") == 0) {
        *lo = 0;
        *hi = 65535;
    }
}

/* Every buffer once; 6 flops a pair of a head, some 40 for each cos and
 * sin of a row. */
static void costs(const struct kernel_spec *ks, const size_t *sizes,
                  double *bytes, double *flops)
{
    double pairs = (double)(rotary_dim(ks) / 2);
    *bytes = plan_io_bytes(ks, sizes);
    *flops = (double)sizes[0] * pairs *
             (6.0 * (double)field_int(ks, "heads") + 40.0);
}

static double error_bound(const struct kernel_spec *ks)
{
    return storage_error_bound(ks->dtype, 1e-5);
}

/* 16 Mi elements' worth of rows. */
static void bench_sizes(const struct kernel_spec *ks, size_t *sizes)
{
    long rows = (16L << 20) / (field_int(ks, "heads") *
                               field_int(ks, "head_dim"));
    sizes[0] = rows < 1 ? 1 : (size_t)rows;
}

static void shape_text(const struct kernel_spec *ks, const size_t *sizes,
                       char *buf, size_t size)
{
    snprintf(buf, size, "%zux%ldx%ld rotary %ld %s%s%s", sizes[0],
             field_int(ks, "heads"), field_int(ks, "head_dim"),
             rotary_dim(ks), style_choices[interleaved(ks)],
             (int)spec_field(ks, "scaling.type") == SCALING_NONE ? "" : " ",
             (int)spec_field(ks, "scaling.type") == SCALING_NONE
                 ? ""
                 : scaling_choices[(int)spec_field(ks, "scaling.type")]);
}

const struct op_def op_rope = {
    .name = "rope",
    .summary = "rotary position embedding of [rows][heads][head_dim] by "
               "position",
    .kernels = kernels,
    .example = "heads=32 head_dim=128",
    .fields = fields,
    .n_fields = sizeof fields / sizeof fields[0],
    .knobs = knobs,
    .n_knobs = N_KNOBS,
    .defaults = defaults,
    .validate = validate,
    .plan = plan,
    .tune_space = tune_space,
    .reference = reference,
    .naive = naive,
    .input_range = input_range,
    .costs = costs,
    .error_bound = error_bound,
    .bench_sizes = bench_sizes,
    .shape_text = shape_text,
};
