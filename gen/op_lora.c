/* op_lora.c - lora_forward: Y (+)= X*W + scale*(X*A)*B, tiled for any M.
 * The op's definition: its fields and knobs (listed in lora_knobs.h),
 * their reader and their checks. Its defaults are lora_defaults.c's, its
 * plan lora_paths.c's, both from the kernels' sizes of lora_sizes.c; its
 * reference and measures are lora_reference.c's. */
#include "lora_internal.h"

#include <limits.h>

#define INDEX_MAX (long)INT_MAX /* what the kernels' int offsets reach */

/* The names of the choices of the knob xa (lora_knobs.h). */
static const char *const xa_choices[] = {"prepass", "inline", NULL};

#define FIELD_DEF(member, type, def) def,
static const struct param_def lora_fields[] = {LORA_FIELDS(FIELD_DEF)};
#undef FIELD_DEF

#define KNOB_DEF(name, type, kind, def, min, max, choices, help)             \
    {#name, kind, 0, def, min, max, choices, help},
static const struct param_def lora_knobs[] = {LORA_KNOBS(KNOB_DEF)};
#undef KNOB_DEF

/* The index of each field and knob in its table. */
#define FIELD_INDEX(member, ...) LORA_FIELD_##member,
#define KNOB_INDEX(name, ...) LORA_KNOB_##name,
enum { LORA_FIELDS(FIELD_INDEX) LORA_N_FIELDS };
enum { LORA_KNOBS(KNOB_INDEX) LORA_N_KNOBS };
#undef FIELD_INDEX
#undef KNOB_INDEX

_Static_assert(LORA_N_KNOBS <= SPECL_MAX_PARAMS &&
                   LORA_N_FIELDS <= SPECL_MAX_PARAMS,
               "lora_forward has more keys than a kernel_spec holds");

/* Field I of KS, a bool as 0 or 1. */
static double field_value(const struct kernel_spec *ks, int i)
{
    double v = ks->field[i].num;
    return lora_fields[i].kind == VALUE_BOOL ? v != 0 : v;
}

void lora_read(const struct kernel_spec *ks, struct lora *c)
{
#define READ_FIELD(member, type, ...)                                        \
    c->member = (type)field_value(ks, LORA_FIELD_##member);
#define READ_KNOB(name, type, ...)                                           \
    c->name = (type)ks->knob[LORA_KNOB_##name].num;
    LORA_FIELDS(READ_FIELD)
    LORA_KNOBS(READ_KNOB)
#undef READ_FIELD
#undef READ_KNOB
    c->cpu = ks->target == TARGET_CPU;
    c->half = ks->dtype != DTYPE_F32;
    c->dev = target_facts(ks->target);
}

/* Returns 0 if the shape itself is wrong (the limits would only cascade). */
static int check_shape(const struct kernel_spec *ks, const struct lora *c,
                       struct diags *d)
{
    int ok = lora_check_rank(ks, c->K, c->N, c->R, d);
    lora_check_alpha_scale(ks, d);
    return ok;
}

/* Divisibility and size checks of the main tiles; returns 0 if a check
 * failed that the later checks depend on. */
static int check_tiles(const struct kernel_spec *ks, const struct lora *c,
                       struct diags *d)
{
    const char *file = ks->file;
    int ok = 1;
    if (c->vec != 1 && c->vec != 2 && c->vec != 4) {
        diag_error(d, file, spec_knob_mark(ks, "vec"),
                   "vec must be 1, 2 or 4 (got %ld)", c->vec);
        return 0;
    }
    if (c->K % c->vec != 0) {
        diag_error(d, file, spec_knob_mark(ks, "vec"),
                   "vec (%ld) must divide in_features (%ld)", c->vec, c->K);
        ok = 0;
    } else if (c->N % c->vec != 0) {
        diag_error(d, file, spec_knob_mark(ks, "vec"),
                   "vec (%ld) must divide out_features (%ld)", c->vec, c->N);
        ok = 0;
    }
    if (c->engine == ENGINE_SIMT && (c->wm > 16 || c->wn > 16)) {
        diag_error(d, file, spec_knob_mark(ks, c->wm > 16 ? "wm" : "wn"),
                   "tile %s must be <= 16 (got %ld): a work-item's rows and "
                   "columns of Y (engine: mma takes a warp's, up to 128)",
                   c->wm > 16 ? "wm" : "wn", c->wm > 16 ? c->wm : c->wn);
        return 0;
    }
    if (c->m % c->wm != 0) {
        diag_error(d, file, knob_blame(ks, "wm", "m"),
                   "tile m (%ld) must be a multiple of wm (%ld)", c->m,
                   c->wm);
        ok = 0;
    }
    if (c->n % c->wn != 0) {
        diag_error(d, file, knob_blame(ks, "wn", "n"),
                   "tile n (%ld) must be a multiple of wn (%ld)", c->n,
                   c->wn);
        ok = 0;
    }
    if (c->n % c->vec != 0) {
        diag_error(d, file, knob_blame(ks, "n", "vec"),
                   "tile n (%ld) must be a multiple of vec (%ld)", c->n,
                   c->vec);
        ok = 0;
    }
    if (c->k % c->vec != 0) {
        diag_error(d, file, knob_blame(ks, "k", "vec"),
                   "tile k (%ld) must be a multiple of vec (%ld)", c->k,
                   c->vec);
        ok = 0;
    }
    long most_n = pow2_ceil(c->N), most_k = pow2_ceil(c->K);
    if (c->engine != ENGINE_SIMT) {
        most_n = most_n < 16 ? 16 : most_n; /* an mma tile is 16 wide */
        most_k = most_k < 16 ? 16 : most_k;
    }
    if (c->n > most_n) {
        diag_error(d, file, spec_knob_mark(ks, "n"),
                   "tile n (%ld) exceeds out_features (%ld); use at most %ld",
                   c->n, c->N, most_n);
        ok = 0;
    }
    if (c->k > most_k) {
        diag_error(d, file, spec_knob_mark(ks, "k"),
                   "tile k (%ld) exceeds in_features (%ld); use at most %ld",
                   c->k, c->K, most_k);
        ok = 0;
    }
    return ok;
}

/* lora_main's work-group and local memory (the SIMT engine). */
static void check_main(const struct kernel_spec *ks, const struct lora *c,
                       struct diags *d)
{
    const char *file = ks->file;
    long threads = main_threads(c);
    long bytes = main_local(c, XA_PREPASS);
    if (threads > THREADS_MAX) {
        diag_error(d, file, knob_blame(ks, "m", "n"),
                   "lora_main work-group of %ld work-items (tile m %ld / wm "
                   "%ld x tile n %ld / wn %ld) exceeds %ld",
                   threads, c->m, c->wm, c->n, c->wn, THREADS_MAX);
    }
    if (bytes > LOCAL_MAX) {
        diag_error(d, file, knob_blame(ks, "k", "m"),
                   "lora_main needs %ld bytes of local memory (tiles m %ld, "
                   "n %ld, k %ld, pad %ld), more than %ld",
                   bytes, c->m, c->n, c->k, c->pad, LOCAL_MAX);
    } else if (c->xa == XA_INLINE &&
               (bytes = main_local(c, XA_INLINE)) > LOCAL_MAX) {
        diag_error(d, file, spec_knob_mark(ks, "xa"),
                   "xa: inline needs %ld bytes of local memory in lora_main "
                   "(rank %ld), more than %ld; use xa: prepass",
                   bytes, c->R, LOCAL_MAX);
    }
}

/* Most bytes of partial sums a path over slices of K (the split path,
 * lora_decode_mma) may ask of the scratch. */
#define SPLIT_SCRATCH_MAX (256L << 20)

/* lora_decode_mma's knobs: what the tensor cores and local memory take. */
static void check_decode_mma(const struct kernel_spec *ks,
                             const struct lora *c, struct diags *d)
{
    const char *file = ks->file;
    struct mark at = spec_knob_mark(ks, "decode_mma_max");
    long steps = ceil_div(c->K, 16), bytes = dmma_local(c);
    if (c->R % 8 != 0) {
        diag_error(d, file, at,
                   "lora_decode_mma needs a rank that is a multiple of 8 "
                   "(got %ld); use decode_mma_max: 0",
                   c->R);
        return;
    }
    if (c->decode_mma_max <= decode_upto(c)) {
        diag_error(d, file, knob_blame(ks, "decode_mma_max", "decode_max"),
                   "decode_mma_max (%ld) must exceed decode_max (%ld) for "
                   "lora_decode_mma to run",
                   c->decode_mma_max, decode_upto(c));
    }
    if (c->decode_slices > steps) {
        diag_error(d, file, spec_knob_mark(ks, "decode_slices"),
                   "decode_slices (%ld) exceeds in_features' %ld steps of 16",
                   c->decode_slices, steps);
    }
    if (c->decode_cols != pow2_ceil(c->decode_cols)) {
        diag_error(d, file, spec_knob_mark(ks, "decode_cols"),
                   "decode_cols (%ld) must be a power of two",
                   c->decode_cols);
    }
    if (bytes > MMA_LOCAL_MAX) {
        diag_error(d, file, knob_blame(ks, "decode_cols", "decode_warps"),
                   "lora_decode_mma needs %ld bytes of local memory "
                   "(decode_warps %ld x %ld steps of 16 x %ld columns: "
                   "decode_cols and A's %ld), more than %ld",
                   bytes, c->decode_warps, dmma_stages(c), dmma_width(c),
                   dmma_rank_cols(c), MMA_LOCAL_MAX);
    }
    /* the slices' partial sums of X*W, and of X*A per strip */
    double most = 4.0 * (double)dmma_scratch_most(c);
    if (c->decode_slices <= steps && c->decode_mma_max > decode_upto(c) &&
        most > SPLIT_SCRATCH_MAX) {
        diag_error(d, file, at,
                   "decode_mma_max (%ld) asks %.1f MiB of scratch for "
                   "lora_decode_mma's partial sums (slices x rows x (%ld "
                   "columns + %ld strips x rank %ld) floats), more than "
                   "%ld MiB",
                   c->decode_mma_max, most / (1 << 20), c->N,
                   decode_strips(c), c->R, SPLIT_SCRATCH_MAX >> 20);
    }
}

/* lora_decode_split's knobs: it takes W, and a work-item per column of A
 * as well as of W's strips. */
static void check_decode_split(const struct kernel_spec *ks,
                               const struct lora *c, struct diags *d)
{
    const char *file = ks->file;
    if (!c->base) {
        diag_error(d, file, spec_knob_mark(ks, "decode_split_max"),
                   "decode_split_max (%ld) needs base: true "
                   "(lora_decode_split streams W)",
                   c->decode_split_max);
        return;
    }
    if (xa_on_mma(c)) {
        return; /* lora_decode_mma's place; the knob is not used */
    }
    if (c->decode_split_max <= decode_upto(c)) {
        diag_error(d, file, knob_blame(ks, "decode_split_max", "decode_max"),
                   "decode_split_max (%ld) must exceed decode_max (%ld) for "
                   "lora_decode_split to run",
                   c->decode_split_max, decode_upto(c));
    }
    if (c->decode_cols < c->R) {
        diag_error(d, file, knob_blame(ks, "decode_cols", "rank"),
                   "lora_decode_split gives each column of A a work-item: "
                   "decode_cols (%ld) must be at least the rank (%ld)",
                   c->decode_cols, c->R);
    }
    if (c->decode_slices > c->K) {
        diag_error(d, file, spec_knob_mark(ks, "decode_slices"),
                   "decode_slices (%ld) exceeds in_features (%ld)",
                   c->decode_slices, c->K);
    } else if (dsplit_local(c) > LOCAL_MAX) {
        diag_error(d, file, knob_blame(ks, "decode_slices", "decode_split_max"),
                   "lora_decode_split keeps its slice of X in local memory: "
                   "%ld bytes (in_features %ld / decode_slices %ld x "
                   "decode_split_max %ld floats), more than %ld",
                   dsplit_local(c), c->K, c->decode_slices,
                   c->decode_split_max, LOCAL_MAX);
    }
}

/* Work-group sizes and local memory of each kernel the plan launches
 * (lora_mma's are check_mma's). */
static void check_limits(const struct kernel_spec *ks, const struct lora *c,
                         struct diags *d)
{
    const char *file = ks->file;
    long bytes;
    if (!uses_mma(c)) {
        check_main(ks, c, d);
    }
    if (c->decode_mma_max > 0 && xa_on_mma(c) && c->base) {
        check_decode_mma(ks, c, d);
    }
    if (c->decode_split_max > 0) {
        check_decode_split(ks, c, d);
    }
    if (c->decode_rows > 0) {
        if (c->decode_n * c->decode_k > THREADS_MAX) {
            diag_error(d, file, knob_blame(ks, "decode_n", "decode_k"),
                       "lora_decode work-group of %ld work-items (decode_n "
                       "%ld x decode_k %ld) exceeds %ld",
                       c->decode_n * c->decode_k, c->decode_n, c->decode_k,
                       THREADS_MAX);
        }
        bytes = decode_local(c);
        if (bytes > LOCAL_MAX) {
            diag_error(d, file, knob_blame(ks, "decode_n", "decode_k"),
                       "lora_decode needs %ld bytes of local memory "
                       "(decode_n %ld x decode_k %ld x %ld columns or "
                       "decode_k %ld x rank %ld partial sums, and "
                       "decode_rows %ld x rank %ld), more than %ld",
                       bytes, c->decode_n, c->decode_k, decode_vec(c),
                       c->decode_k,
                       c->R, c->decode_rows, c->R, LOCAL_MAX);
        }
    }
    if (uses_xa(c) && xa_split(c) * c->R > INDEX_MAX) {
        diag_error(d, file,
                   spec_knob_set(ks, "xa_chunk")
                       ? spec_knob_mark(ks, "xa_chunk")
                       : spec_field_mark(ks, "rank"),
                   "T's partial sums take %ld floats a row (in_features %ld "
                   "/ xa_chunk %ld = %ld stretches x rank %ld), more than "
                   "the %ld the kernels index",
                   xa_split(c) * c->R, c->K, c->xa_chunk, xa_split(c), c->R,
                   INDEX_MAX);
    }
    if (uses_xa(c) && !xa_on_mma(c)) {
        long xw = xa_rows_per_item(c), xt = xa_threads(c);
        struct mark at = spec_knob_set(ks, "xa_chunk")
                             ? spec_knob_mark(ks, "xa_chunk")
                             : knob_blame(ks, "xa_k", "xa_m");
        if (xt > THREADS_MAX) {
            diag_error(d, file, knob_blame(ks, "xa_k", "xa_m"),
                       "lora_xa work-group of %ld work-items (xa_k %ld x xa_m "
                       "%ld / %ld rows each) exceeds %ld",
                       xt, c->xa_k, c->xa_m, xw, THREADS_MAX);
        }
        if (c->xa_chunk % c->vec != 0) {
            diag_error(d, file, knob_blame(ks, "xa_chunk", "vec"),
                       "xa_chunk (%ld) must be a multiple of vec (%ld)",
                       c->xa_chunk, c->vec);
        } else if ((bytes = 4 * xa_staged_a(c)) > LOCAL_MAX) {
            diag_error(d, file, at,
                       "lora_xa needs %ld bytes of local memory for xa_chunk "
                       "%ld rows of A at rank %ld, more than %ld",
                       bytes, c->xa_chunk, c->R, LOCAL_MAX);
        } else if ((bytes = 4 * xa_reduction(c)) > LOCAL_MAX) {
            diag_error(d, file, knob_blame(ks, "xa_k", "xa_m"),
                       "lora_xa needs %ld bytes of local memory to sum the "
                       "partials of xa_m %ld rows over xa_k %ld work-items "
                       "(rank %ld), more than %ld",
                       bytes, c->xa_m, c->xa_k, c->R, LOCAL_MAX);
        }
    }
    if (uses_expand(c) && expand_rows(c) < 1) {
        diag_error(d, file, spec_field_mark(ks, "rank"),
                   "rank %ld is too large for lora_expand: one row of T "
                   "needs %ld bytes of local memory, more than %ld",
                   c->R, 4 * c->R, LOCAL_MAX);
    }
    if (!uses_mma(c)) {
        check_warp_n(ks, "lora_main", c->warp_n, c->m, c->wm, c->n, c->wn,
                     d);
    }
}

/* What lora_mma needs of the storage, the shape and its tiles. */
static void check_mma(const struct kernel_spec *ks, const struct lora *c,
                      struct diags *d)
{
    const char *file = ks->file;
    struct mark at = spec_knob_mark(ks, "engine");
    const char *engine = lora_engine_choices[c->engine];
    if (!gemm_mma_check_dtype(ks, engine, 1, d)) {
        return;
    }
    if (!c->half && !c->base) {
        diag_error(d, file, at,
                   "engine: mma with dtype f32 runs the GEMM with W on tf32 "
                   "units, and base: false leaves none: use engine: simt");
        return;
    }
    long chunk = c->half ? 8 : 4;
    if (c->K % chunk != 0 || (c->base && c->N % chunk != 0)) {
        diag_error(d, file, at,
                   c->base ? "engine: %s needs in_features and out_features "
                             "multiples of %ld (got %ld, %ld): it copies "
                             "16-byte rows"
                           : "engine: %s needs in_features a multiple of %ld "
                             "(got %ld): it loads 16-byte rows of X",
                   engine, chunk, c->K, c->N);
    }
    if (c->xa != XA_PREPASS) {
        diag_error(d, file, spec_knob_mark(ks, "xa"),
                   c->half ? "engine: %s takes T from lora_xa_mma: use xa: "
                             "prepass"
                           : "engine: %s takes T from lora_xa: use xa: "
                             "prepass",
                   engine);
    }
    if (!c->half) {
        /* T from lora_xa, whose checks are check_limits' */
    } else if (c->xa_m % 16 != 0 || 2 * c->xa_m > THREADS_MAX) {
        diag_error(d, file, knob_blame(ks, "xa_m", "engine"),
                   "engine: %s needs xa_m a multiple of 16, at most %ld "
                   "(lora_xa_mma runs a warp per 16 rows; got %ld)",
                   engine, THREADS_MAX / 2, c->xa_m);
    }
    if (c->half && xa_mma_local(c) > LOCAL_MAX) {
        diag_error(d, file, knob_blame(ks, "xa_chunk", "engine"),
                   "lora_xa_mma needs %ld bytes of local memory for xa_chunk "
                   "%ld rows of A at rank %ld, more than %ld",
                   xa_mma_local(c), c->xa_chunk, c->R, LOCAL_MAX);
    }
    if (uses_lora_mma(c)) {
        struct gemm_mma g;
        lora_gemm_mma(c, &g);
        gemm_mma_check(ks, &g, d);
    }
}

/* What lora_wgmma needs of its tiles (wgmma_ptx.cl, wgmma_tiles.cl). */
static void check_wgmma(const struct kernel_spec *ks, const struct lora *c,
                        struct diags *d)
{
    const char *file = ks->file;
    if (!c->base) {
        diag_error(d, file, spec_knob_mark(ks, "engine"),
                   "engine: wgmma runs the GEMM with W: use engine: mma "
                   "with base: false");
        return;
    }
    struct gemm_mma g;
    lora_gemm_mma(c, &g);
    gemm_wgmma_check(ks, &g, d);
}

/* lora_delta: base: false, T in registers, its work-group and local
 * memory. */
static void check_delta(const struct kernel_spec *ks, const struct lora *c,
                        struct diags *d)
{
    const char *file = ks->file;
    if (c->delta_rows == 0) {
        return;
    }
    struct mark at = spec_knob_mark(ks, "delta_rows");
    if (c->base) {
        diag_error(d, file, at,
                   "delta_rows (%ld) needs base: false (lora_delta writes "
                   "the adapter term alone)",
                   c->delta_rows);
        return;
    }
    if (c->delta_max == 0) {
        return; /* lora_delta never runs */
    }
    if (c->delta_rows * c->R > 64) {
        diag_error(d, file, knob_blame(ks, "delta_rows", "delta_max"),
                   "lora_delta keeps delta_rows x rank values of T per "
                   "work-item in registers: at most 64 (got %ld x %ld)",
                   c->delta_rows, c->R);
        return;
    }
    if (c->delta_max <= decode_upto(c)) {
        diag_error(d, file, knob_blame(ks, "delta_max", "delta_rows"),
                   "delta_max (%ld) must exceed decode_max (%ld) for "
                   "lora_delta to run",
                   c->delta_max, decode_upto(c));
    }
    if (c->delta_split > c->N / c->vec) {
        diag_error(d, file, knob_blame(ks, "delta_split", "vec"),
                   "delta_split (%ld) exceeds the %ld pieces of vec %ld "
                   "columns in out_features",
                   c->delta_split, c->N / c->vec, c->vec);
    }
    if (c->delta_threads > THREADS_MAX) {
        diag_error(d, file, spec_knob_mark(ks, "delta_threads"),
                   "lora_delta work-group of %ld work-items exceeds %ld",
                   c->delta_threads, THREADS_MAX);
    } else if (delta_local(c) > LOCAL_MAX) {
        diag_error(d, file, knob_blame(ks, "delta_threads", "delta_rows"),
                   "lora_delta needs %ld bytes of local memory to sum "
                   "delta_rows %ld x rank %ld values over delta_threads %ld "
                   "work-items, more than %ld",
                   delta_local(c), c->delta_rows, c->R, c->delta_threads,
                   LOCAL_MAX);
    }
}

/* What the split path needs: lora_main with T from lora_xa, slices of at
 * least one K step, and rows to run for. */
static void check_split(const struct kernel_spec *ks, const struct lora *c,
                        struct diags *d)
{
    const char *file = ks->file;
    struct mark at = spec_knob_mark(ks, "split_k");
    long decode = few_upto(c);
    if (c->split_k <= 1 || c->split_max == 0) {
        return; /* no split path */
    }
    if (!c->base || c->xa != XA_PREPASS) {
        diag_error(d, file, at, "split_k (%ld) needs %s", c->split_k,
                   !c->base ? "base: true (it cuts X*W's K into slices)"
                            : "xa: prepass (each slice adds all of "
                              "T from lora_xa)");
        return;
    }
    if (c->split_k > ceil_div(c->K, c->k)) {
        diag_error(d, file, knob_blame(ks, "split_k", "k"),
                   "split_k (%ld) exceeds the %ld K steps of tile k %ld",
                   c->split_k, ceil_div(c->K, c->k), c->k);
    } else if (c->split_k * ceil_div(c->K, c->k) > INDEX_MAX) {
        /* lora_main finds a slice's steps as slice * steps / slices */
        diag_error(d, file, knob_blame(ks, "k", "split_k"),
                   "split_k (%ld) x the %ld K steps of tile k %ld is more "
                   "than the %ld the kernels index; raise k",
                   c->split_k, ceil_div(c->K, c->k), c->k, INDEX_MAX);
    }
    if (c->split_max <= decode) {
        diag_error(d, file, knob_blame(ks, "split_max", "split_k"),
                   "split_max (%ld) must exceed %s (%ld) for the split path "
                   "to run",
                   c->split_max, few_knob(c), decode);
    } else {
        long slices = 0, rows = 0, most = split_widest(c, &slices, &rows);
        const char *few = few_knob(c);
        if (4 * most * c->N > SPLIT_SCRATCH_MAX &&
            !spec_knob_set(ks, "split_max") && spec_knob_set(ks, few)) {
            /* The split path's rows start past the spec's own few-row
             * path: its rows are what takes the scratch. */
            diag_error(d, file, spec_knob_mark(ks, few),
                       "%s (%ld) puts the split path's rows above it: "
                       "their partial sums would take %.1f MiB of scratch "
                       "(%ld slices x %ld rows x %ld columns of floats), "
                       "more than %ld MiB; lower %s, or set split_k: 1",
                       few, decode, (double)(4 * most * c->N) / (1 << 20),
                       slices, rows, c->N, SPLIT_SCRATCH_MAX >> 20, few);
        } else if (4 * most * c->N > SPLIT_SCRATCH_MAX) {
            diag_error(d, file, knob_blame(ks, "split_max", "split_k"),
                       "the split path's partial sums take %.1f MiB of "
                       "scratch (%ld slices x %ld rows x %ld columns of "
                       "floats), more than %ld MiB",
                       (double)(4 * most * c->N) / (1 << 20), slices, rows,
                       c->N, SPLIT_SCRATCH_MAX >> 20);
        }
    }
}

static void check_padded(const struct kernel_spec *ks, const struct lora *c,
                         struct diags *d)
{
    struct mark at = spec_knob_mark(ks, "pad_rows");
    if (c->pad_rows == 0) {
        return;
    }
    if (!c->base || c->xa != XA_PREPASS || c->engine != ENGINE_SIMT) {
        diag_error(d, ks->file, at,
                   "pad_rows (%ld) needs base: true, xa: prepass and "
                   "engine: simt (it pads lora_main's operands)",
                   c->pad_rows);
    } else if (c->K % 4 == 0 && c->N % 4 == 0) {
        diag_error(d, ks->file, at,
                   "pad_rows (%ld) has nothing to pad: in_features (%ld) "
                   "and out_features (%ld) are multiples of 4",
                   c->pad_rows, c->K, c->N);
    } else if (c->k % 4 != 0 || c->n % 4 != 0) {
        diag_error(d, ks->file, knob_blame(ks, "pad_rows", "k"),
                   "pad_rows (%ld) needs tile k and n multiples of 4 "
                   "(got k %ld, n %ld)",
                   c->pad_rows, c->k, c->n);
    }
}

/* What lora_wgmma_split needs: T from lora_xa_mma, rows past the split
 * path's, two K steps, and its partial sums within SPLIT_SCRATCH_MAX.
 * Other engines leave wg_split_max unused, as wg_m (a spec's knobs serve
 * each device's variant). */
static void check_wg_split(const struct kernel_spec *ks, const struct lora *c,
                           struct diags *d)
{
    const char *file = ks->file;
    struct mark at = spec_knob_mark(ks, "wg_split_max");
    long s[SPLIT_BANDS], upto[SPLIT_BANDS];
    if (c->wg_split_max == 0 || !uses_wgmma(c)) {
        return;
    }
    if (c->xa != XA_PREPASS) {
        diag_error(d, file, knob_blame(ks, "wg_split_max", "xa"),
                   "wg_split_max (%ld) needs xa: prepass (each slice adds "
                   "all of T from lora_xa_mma)", c->wg_split_max);
        return;
    }
    if (c->wg_split_max <= split_upto(c)) {
        diag_error(d, file, knob_blame(ks, "wg_split_max", "split_max"),
                   "wg_split_max (%ld) must exceed the rows of the paths "
                   "before it (%ld) for lora_wgmma_split to run",
                   c->wg_split_max, split_upto(c));
        return;
    }
    if (ceil_div(c->K, c->k) < 2) {
        diag_error(d, file, knob_blame(ks, "wg_split_max", "k"),
                   "lora_wgmma_split needs 2 K steps or more to split (K %ld, "
                   "tile k %ld)", c->K, c->k);
        return;
    }
    for (int i = 0, n = wg_split_bands(c, s, upto); i < n; i++) {
        if (4 * s[i] * upto[i] * c->N > SPLIT_SCRATCH_MAX) {
            diag_error(d, file, at,
                       "lora_wgmma_split's partial sums take %.1f MiB of "
                       "scratch (%ld slices x %ld rows x %ld columns of "
                       "floats), more than %ld MiB",
                       (double)(4 * s[i] * upto[i] * c->N) / (1 << 20), s[i],
                       upto[i], c->N, SPLIT_SCRATCH_MAX >> 20);
            return;
        }
    }
}

static void lora_validate(const struct kernel_spec *ks, struct diags *d)
{
    struct lora c;
    lora_read(ks, &c);
    int shape_ok = check_shape(ks, &c, d);
    if (check_tiles(ks, &c, d) && shape_ok) {
        if (c.engine != ENGINE_SIMT) {
            check_mma(ks, &c, d);
        }
        if (c.engine == ENGINE_WGMMA) {
            check_wgmma(ks, &c, d);
        }
        check_limits(ks, &c, d);
        check_split(ks, &c, d);
        check_wg_split(ks, &c, d);
        check_delta(ks, &c, d);
        check_padded(ks, &c, d);
    }
}

/* What `specl tune` searches, most important first (the first two are the
 * axes of its plot); the constraints between them are validate()'s. */
static const struct tune_axis lora_tune_space[] = {
    {"m", "32 64 128"},
    {"n", "32 64 128 256"},
    {"k", "8 16 32 64"},
    {"wm", "4 8 32 64"},
    {"wn", "4 8 32 64"},
    {"warp_n", "0 8"},
    {"xa", "prepass inline"},
    /* tensor cores: f16 and bf16 with K and N multiples of 8 (validate()
     * rejects mma elsewhere, and wm, wn past 16 for simt; the tuner
     * wgmma off compute capability 9.0); lora_mma's stages, lora_wgmma's
     * tile (the filter leaves out the knobs of the engines a kernel does
     * not run) */
    {"engine", "simt mma wgmma"},
    {"stages", "2 3 4"},
    {"wg_m", "64 128 192 256"},
    {"wg_n", "64 128 256"},
    {"wg_stages", "3 4 5 6"},
    {NULL, NULL},
};

/* At the rows the defaults give to lora_decode its shape, which
 * lora_tune_space leaves out, is what runs: there `specl tune` searches
 * that instead (the tiles do not run at those rows). */
static const struct tune_axis lora_decode_space[] = {
    {"decode_rows", "4 8 16 32"},
    {"decode_n", "2 4 8 16 32"},
    {"decode_k", "1 8 16 32 64"},
    {NULL, NULL},
};

/* The same for lora_decode_mma (tensor cores, past lora_decode's rows):
 * its slices of K at one block of rows, strips and warps. */
static const struct tune_axis lora_decode_mma_space[] = {
    {"decode_slices", "1 2 4 8 16 32"},
    {"decode_cols", "32 64 128 256"},
    {"decode_warps", "4 8 16"},
    {NULL, NULL},
};

/* The few-rows space whose path C runs at ROWS rows, or NULL. */
static const struct tune_axis *few_rows_space(const struct lora *c,
                                              long rows)
{
    if (c->decode_rows > 0 && rows <= c->decode_max) {
        return lora_decode_space;
    }
    if (uses_decode_mma(c) && rows > decode_upto(c) &&
        rows <= c->decode_mma_max) {
        return lora_decode_mma_space;
    }
    return NULL;
}

static const struct tune_axis *lora_tune_space_rows(
    const struct kernel_spec *ks, long rows)
{
    struct lora c;
    lora_read(ks, &c);
    return few_rows_space(&c, rows);
}

/* An entry timed at ROWS rows that lora_decode or lora_decode_mma took
 * keeps that path's shape. */
static void lora_entry_rows(struct kernel_spec *ks,
                            const struct kernel_spec *entry, long rows)
{
    struct lora e;
    lora_read(entry, &e);
    const struct tune_axis *space = few_rows_space(&e, rows);
    for (const struct tune_axis *ax = space; ax != NULL && ax->knob; ax++) {
        int k = op_knob_index(ks->op, ax->knob);
        ks->knob[k] = entry->knob[k];
        ks->knob[k].set = 1;
    }
}

/* The paths below the rows `specl tune` measures (lora_decode,
 * lora_decode_mma, lora_delta, the split path, lora_mma's tiles before
 * lora_wgmma's). */
static const char *const lora_few_rows_knobs[] = {
    "decode_rows", "decode_max",    "decode_n",    "decode_k",
    "decode_mma_max", "decode_split_max", "decode_slices", "decode_cols",
    "decode_warps",
    "split_k",     "split_max",     "wg_split_max", "mma_max", "delta_rows",
    "delta_max",   "delta_split",   "delta_threads", NULL};

/* Each is templates/NAME.cl; their shared part is lora_common.cl. */
static const char *const lora_kernels[] = {
    "lora_main",   "lora_main_split", "lora_xa",      "lora_expand",
    "lora_decode", "lora_mma",        "lora_mma_split", "lora_xa_mma",
    "lora_combine", "lora_delta",     "lora_decode_mma", "lora_decode_sum",
    "lora_decode_split", "lora_main_padded", "lora_pad_x", "lora_pad_w",
    "lora_wgmma", "lora_wgmma_split", NULL};

const struct op_def op_lora_forward = {
    .name = "lora_forward",
    .summary = "Y (+)= X*W + scale*(X*A)*B: LoRA linear layer, rows at run "
               "time",
    .kernels = lora_kernels,
    .example = "in_features=4096 out_features=4096 rank=16",
    .fields = lora_fields,
    .n_fields = LORA_N_FIELDS,
    .knobs = lora_knobs,
    .n_knobs = LORA_N_KNOBS,
    .defaults = lora_defaults,
    .validate = lora_validate,
    .plan = lora_plan,
    .tune_space = lora_tune_space,
    .tune_space_rows = lora_tune_space_rows,
    .few_rows_knobs = lora_few_rows_knobs,
    .entry_rows = lora_entry_rows,
    .cpu_few_rows = &lora_cpu_few_rows,
    .reference = lora_reference,
    .naive = lora_naive,
    .costs = lora_costs,
    .error_bound = lora_error_bound,
    .bench_sizes = lora_bench_sizes,
    .shape_text = lora_shape_text,
    .blas_peer = lora_blas_peer,
};
