/* op.h - what an op family provides: its keys, checks and launch plan. */
#ifndef SPECL_OP_H
#define SPECL_OP_H

#include <stddef.h>

#include "caps.h"
#include "diag.h"

enum value_kind {
    VALUE_INT,    /* a whole number within [min, max] */
    VALUE_FLOAT,  /* a real number within [min, max] */
    VALUE_BOOL,   /* true or false */
    VALUE_CHOICE  /* one of `choices`; stored as its index */
};

/* One key an op accepts: a field of the kernel, or a knob under `tile:`. */
struct param_def {
    const char *key;            /* "group.key": the key of a mapping
                                   `group: {key: ...}` of the kernel */
    enum value_kind kind;
    int required;               /* must be given (fields only) */
    double def;                 /* default; bools 0/1, choices an index */
    double min, max;            /* inclusive bounds for ints and floats */
    const char *const *choices; /* VALUE_CHOICE: NULL-terminated names */
    const char *help;           /* one line for `specl list` */
};

#define SPECL_MAX_PARAMS 40
#define SPECL_NAME_MAX 64

/* A parameter as read from a spec, or its default. */
struct param_value {
    int set;          /* given in the spec */
    double num;       /* int, float, bool (0/1), or choice index */
    struct mark mark; /* of the value; of the kernel when not set */
};

enum dtype { DTYPE_F32, DTYPE_F16, DTYPE_BF16 };

struct op_def;

/* One kernel of a spec file, after reading and defaulting. */
struct kernel_spec {
    const char *file;                         /* spec path, for messages */
    char name[SPECL_NAME_MAX];                /* C identifier */
    struct mark mark;                         /* the kernel's mapping */
    const struct op_def *op;
    enum dtype dtype;
    enum target target;                       /* what the defaults aim at */
    int tile_auto;                            /* `tile: auto` */
    char tile_note[256];                      /* where the knobs came from,
                                                 for the emitted header */
    struct param_value field[SPECL_MAX_PARAMS]; /* as op->fields */
    struct param_value knob[SPECL_MAX_PARAMS];  /* as op->knobs */
    int shape_only;   /* read from a tuning entry's shape, which holds no
                         float fields: checks of what those are skip */
    long measure_rows; /* > 0: measured at these rows alone (the tuner):
                          its plan (plan_of) keeps only the paths they may
                          take, so that its program builds no other */
};

/* A `#define NAME VALUE` line with a short comment saying what it is:
 * the plan holds the number; the emitter writes it (a float as a literal
 * that reads back to the same float32). */
enum define_kind { DEFINE_INT, DEFINE_FLOAT };
struct define {
    char name[32];
    enum define_kind kind;
    long i;           /* DEFINE_INT */
    double f;         /* DEFINE_FLOAT */
    char comment[64];
};

/* D's value as the emitted source writes it ("4096", "2.0f"). */
void define_text(const struct define *d, char *buf, size_t size);

/* The runtime sizes of a call are the op's `sizes`, in order (rows ops:
 * "rows" alone). Masks of them say what a count is a product of: bit I
 * stands for size I. */
#define SPECL_MAX_SIZES 4
#define SIZE_BIT(i) (1u << (i))
#define SIZE_FIRST SIZE_BIT(0)

/* The product of the sizes of SIZES that MASK names (1 for none); 0 when
 * it passes SIZE_MAX. */
size_t sizes_product(unsigned mask, const size_t *sizes);

/* One clEnqueueNDRangeKernel of the emitted stub. Dimension d has
 * groups[d] * ceil(P / per_group[d]) work-groups of local[d] work-items,
 * P the product of the sizes grid[d] names (1 for none: groups[d]
 * groups); per_group 0 counts as 1. */
struct launch {
    const char *kernel;       /* __kernel function name in the .cl */
    int dims;                 /* 1 or 2 */
    size_t local[2];
    size_t groups[2];
    unsigned grid[2];         /* SIZE_BIT mask */
    size_t per_group[2];
    int slices;               /* the value of a "slices" argument */
    const char *args[14];     /* NULL-terminated: a size name of the op
                                 ("rows"), a buffer name of op->buffers,
                                 "scratch", or "slices" */
    /* NULL-terminated names of nullable buffers (plan_buffer_nullable):
     * the launch runs only when the call gives one of them (not NULL);
     * none named: always. Every path has a launch that always runs. */
    const char *if_given[3];
};

/* Sets L's dimension D to GROUPS fixed work-groups. */
void launch_fixed(struct launch *l, int d, size_t groups);
/* Sets L's dimension D to one work-group per PER_GROUP of the sizes MASK
 * names (their product), times GROUPS. */
void launch_over(struct launch *l, int d, size_t groups, unsigned mask,
                 size_t per_group);
/* Sets L's arguments to ARGS (NULL-terminated: size names, buffer names,
 * "scratch"). */
void launch_args(struct launch *l, const char *const *args);

#define SPECL_MAX_LAUNCHES 7
#define SPECL_MAX_PATHS 12
#define SPECL_MAX_VARIANTS 8 /* of one NAME.c (variant.h) */

/* A sequence of launches used while the first runtime size (rows) is at
 * most max_rows (0: any). Paths are tried in order; the last must have
 * max_rows 0. Its launches share scratch_per * P + scratch_fixed floats
 * of device scratch, P the product of the sizes scratch_sizes names (both
 * counts 0: none): each path its own, so that few rows never pay for the
 * copies or partial sums of a path they do not run. */
struct path {
    long max_rows;
    const char *why;          /* shown in the emitted stub's comment */
    int n_launch;
    struct launch launch[SPECL_MAX_LAUNCHES];
    long scratch_per;
    unsigned scratch_sizes;   /* SIZE_BIT mask */
    long scratch_fixed;
    /* As a launch's if_given, for the scratch: the stub makes (and checks
     * the size of a caller's) only when the call gives one of these; else
     * the launches get NULL for "scratch". None named: whenever counted. */
    const char *scratch_if_given[3];
    /* Work-groups per row that must all run at once (0: no such need):
     * the launches wait on one another across work-groups (a grid-wide
     * barrier), so the stub takes the path only while rows * coop_groups
     * is at most the device's compute units, each holding one of them;
     * else the next path that covers the rows. */
    long coop_groups;
    /* With coop_groups: the most work-groups per row (0: coop_groups). The
     * stub doubles the work-groups of the launch that takes the sync
     * buffer while they stay at most this and rows times them fit the
     * compute units: few rows spread over more of the device. */
    long coop_most;
    /* Work-groups in all that must run at once whatever the rows (0: no
     * such need): the launch ends in a grid-wide barrier of all of them,
     * so the stub takes the path only while they are at most the
     * device's compute units, one each; else the next path. Such a path
     * may have max_rows 0 and still not be the last. */
    long coop_total;
    /* Counters in the handle's sync buffer (0: none): sync_per * P words,
     * P the product of the sizes sync_sizes names, which the kernels
     * leave at zero. The stub takes the path only while they fit the
     * plan's sync_words; else the next path, which must cover the same
     * rows (a path with sync_per is never the last). */
    long sync_per;
    unsigned sync_sizes;   /* SIZE_BIT mask */
    /* Work-groups the path launches per product of the sizes units_sizes
     * names (0: no such bound), and how many of them a compute unit is
     * to take: the stub takes the path only while units_groups * P is at
     * most the device's compute units times units_fill; else the next
     * path, which must cover the same rows (a path with units_groups is
     * never the last). Few work at run time then takes a path of more
     * work-groups each. */
    long units_groups;
    unsigned units_sizes;  /* SIZE_BIT mask */
    long units_fill;
    /* With units_groups: the least the runtime size units_least_size may
     * be (0: any), else the next path: more work-groups pay only while
     * each of them has work enough. */
    long units_least;
    int units_least_size;
};

/* What the kernels do with a buffer of the host API. */
enum buffer_role {
    BUFFER_IN,    /* read only */
    BUFFER_OUT,   /* written whole; its contents before the call unused */
    BUFFER_INOUT  /* read, then written (accumulate: Y += ...) */
};

/* What an element of a buffer is: the kernel's storage dtype, or a type
 * of its own whatever the dtype. */
enum elem_type {
    ELEM_STORAGE,
    ELEM_F32,
    ELEM_I32
};

/* A buffer of the host API: per * P + fixed elements, P the product of
 * the runtime sizes SIZES names. */
struct plan_buffer {
    const char *name;
    long per;
    unsigned sizes;           /* SIZE_BIT mask */
    long fixed;
    enum elem_type elem;
    int optional;             /* may be NULL (unused by this spec) */
    int nullable;             /* an output the caller may pass as NULL at
                                 run time, not wanting it: the launches
                                 and scratch that serve only such outputs
                                 are skipped (if_given), and the kernels
                                 that take it see a NULL pointer */
    enum buffer_role role;
    const char *shape;        /* for NAME.h: the row-major array it holds
                                 in the op's terms, "[rows][features]" */
    const char *note;         /* for NAME.h: how to fill it from what
                                 users have at hand (NULL: nothing) */
    const char *may_alias;    /* an output whose kernels work in place:
                                 the buffer it may be (the same memory
                                 from the same byte); NULL: it may share
                                 memory with no other buffer of the call */
};

/* Elements of PB at SIZES (SIZE_MAX when that passes SIZE_MAX), and the
 * bytes of one for storage dtype DT. */
size_t buffer_count(const struct plan_buffer *pb, const size_t *sizes);
size_t buffer_elem_size(const struct plan_buffer *pb, enum dtype dt);

#define SPECL_MAX_DEFINES 64
#define SPECL_MAX_BUFFERS 12
#define SPECL_MAX_TABLES 4
#define SPECL_MAX_TABLE_VALUES 1024 /* of all tables of a plan */

/* A table of float32 constants the plan computes (rope's frequencies),
 * in the .cl prelude as `__constant float NAME[N] = {...};`: values
 * value[at .. at + n) of its plan's table_value. */
struct plan_table {
    char name[32];
    char comment[64];
    int n, at;
};

/* Everything the emitter needs to know about one kernel. */
struct plan {
    int n_define;             /* the .cl prelude */
    struct define define[SPECL_MAX_DEFINES];
    int n_table;              /* the .cl prelude's tables, after it */
    struct plan_table table[SPECL_MAX_TABLES];
    float table_value[SPECL_MAX_TABLE_VALUES];
    int n_constant;           /* the public #defines of NAME.h */
    struct define constant[SPECL_MAX_DEFINES];
    int n_buffer;             /* in host API order */
    struct plan_buffer buffer[SPECL_MAX_BUFFERS];
    int n_path;
    struct path path[SPECL_MAX_PATHS];
    unsigned needs;           /* the capabilities (CAP_*) a device must
                                 offer to build the kernels (caps.h) */
    long sync_words;          /* 32-bit words of the handle's own "sync"
                                 buffer (0: none), zeroed at create: the
                                 counters and partials of grid-wide
                                 barriers, which the kernels leave as they
                                 found the counters */
};

/* Whether some path of P launches the __kernel KERNEL. */
int plan_launches(const struct plan *p, const char *kernel);

/* Keeps of P's paths those that may run at ROWS: the first that covers
 * them and, after one the device or the other sizes may refuse
 * (coop_groups, coop_total, sync_per, units_groups), the next that does,
 * up to one that is not so; the last kept then covers any rows. */
void plan_keep_rows(struct plan *p, long rows);

/* KS's plan into P, which it clears first (the op's plan, then
 * plan_keep_rows at KS's measure_rows where set). */
void plan_of(const struct kernel_spec *ks, struct plan *p);

/* One knob's candidate values for `specl tune`: VALUES lists them
 * separated by spaces ("64 128", or choice names). Constraints between
 * knobs are the op's validate(); device limits are checked when built. */
struct tune_axis {
    const char *knob;
    const char *values;
};

/* Which kernels of an op's launch sequence some of its tune_space knobs
 * shape: NAME ("dX") and KNOBS, separated by spaces ("m n k"). */
struct tune_part {
    const char *name;
    const char *knobs;
};

/* One SGEMM of a BLAS peer: c = alpha * op(a) * op(b) + beta * c,
 * row-major and dense, op(a) m x k, op(b) k x n, c m x n; op transposes
 * when trans_a (trans_b) is set, a then being stored k x m (b n x k).
 * Operands name plan buffers, or "temp" and "temp2": the chain's float
 * temporaries. */
struct gemm {
    size_t m, n, k;
    double alpha, beta;
    const char *a, *b, *c;
    int trans_a, trans_b;
};

#define SPECL_MAX_GEMMS 6

/* What a BLAS library runs for the op on float32 storage. */
struct gemm_chain {
    size_t temp_per_row;      /* floats per row of "temp"; 0: none */
    size_t temp2_per_row;     /* of "temp2" */
    int n_gemm;
    struct gemm gemm[SPECL_MAX_GEMMS];
};

/* The CPU defaults' knobs for calls of few rows, where the knobs that
 * serve many rows lose: a NAME.c whose spec leaves every knob to the
 * defaults runs KNOBS for calls of up to MAX_ROWS rows on every CPU, and
 * the CPU defaults past them (variants_build). KNOBS are set as a
 * spec's `tile:` would set them, the other knobs are the CPU defaults'
 * choice; only for the shapes APPLIES accepts (NULL: every shape), and
 * where the knobs validate and emit other code than the CPU defaults. */
struct cpu_few_rows {
    long max_rows;
    const char *knobs; /* as knobs_text writes them: "m=32 n=128" */
    int (*applies)(const struct kernel_spec *ks);
};

/* An op family. Adding an op: one gen/op_X.c defining one of these, and one
 * row in op_registry (ops.c); docs/adding-an-op.md walks through it. */
struct op_def {
    const char *name;          /* the spec's `op:` */
    const char *summary;
    /* The runtime sizes of NAME_enqueue, NULL-terminated, in order; at
     * most SPECL_MAX_SIZES. NULL: "rows" alone. The first is the one
     * paths choose by (max_rows), unless path_size names another. */
    const char *const *sizes;
    /* The index of the runtime size that paths choose by (max_rows): 0,
     * the first, unless an op's paths are for fewer of another size
     * (attention's decode path: seq_q, its second). */
    int path_size;
    /* Every __kernel of the op, NULL-terminated, in the order they go
     * into the emitted source; kernel K is the template templates/K.cl.
     * The emitted source holds the ones its plan launches. */
    const char *const *kernels;
    /* Fields of a typical kernel ("features=4096"): `specl list` shows the
     * knob values the op's defaults choose for it. */
    const char *example;
    const struct param_def *fields;
    int n_fields;
    const struct param_def *knobs;
    int n_knobs;
    /* Optional: picks shape-aware values for knobs the spec left unset
     * (their `set` is 0); knobs that were set must be left alone. */
    void (*defaults)(struct kernel_spec *ks);
    /* Checks across keys (rank <= in_features, tile consistency...);
     * reports each problem through d at the offending value's mark. */
    void (*validate)(const struct kernel_spec *ks, struct diags *d);
    /* Fills p for a spec that validated. */
    void (*plan)(const struct kernel_spec *ks, struct plan *p);
    /* Search space of `specl tune`, ordered by importance (the first two
     * are the axes of its plot); NULL-terminated. */
    const struct tune_axis *tune_space;
    /* Optional, NULL-terminated: tune_space's knobs by the kernels they
     * shape, each knob in one part, where they shape different kernels of
     * the op's launch sequence (lora_backward's dX, T and G, dA and dB):
     * as the sequence's time is the sum of its kernels', the local search
     * changes one part's knobs at a time (tune.c). tune_space's axes
     * that no part names form one more part; a space of tune_space_rows
     * is one part. */
    const struct tune_part *tune_parts;
    /* Optional: the search space of `specl tune` at ROWS rows where the
     * op's defaults run a path there whose knobs tune_space leaves out
     * (lora_forward's lora_decode at few rows); NULL: tune_space. */
    const struct tune_axis *(*tune_space_rows)(const struct kernel_spec *ks,
                                               long rows);
    /* Optional, NULL-terminated: knobs that only shape the paths for few
     * rows: a tuning entry leaves them to the defaults (the entry's values
     * are those of the generator that wrote it), but for what entry_rows
     * takes from it. Where they are not in tune_space (lora_forward's),
     * the tuner searches only those tune_space_rows gives at the rows it
     * measures. */
    const char *const *few_rows_knobs;
    /* Optional: KS holds a tuning entry's knobs, timed at ROWS rows, with
     * the few_rows_knobs of the spec (or the defaults); ENTRY the entry's
     * own. Sets those of them that the entry's rows did time, or bounds
     * them by what those rows showed (softmax's split path: which side of
     * ROWS its crossover lies). */
    void (*entry_rows)(struct kernel_spec *ks,
                       const struct kernel_spec *entry, long rows);
    /* Optional: the CPU defaults' knobs for few rows, and up to which
     * rows they run (struct cpu_few_rows). */
    const struct cpu_few_rows *cpu_few_rows;

    /* What checks and measures the op (verify.c, measure.c, bench.c).
     * Host buffers are in plan order; the outputs are the buffers whose
     * role is BUFFER_OUT or BUFFER_INOUT. */

    /* Writes the float64 reference of the outputs at the runtime sizes
     * SIZES (op order): OUT[i], when not NULL, receives output buffer i's
     * values (buffer_count doubles); the checks ask for some outputs only
     * (for an output over the first size alone, the rows of sampled
     * values of it; the others whole). IN[i] holds plan buffer i as
     * floats (int32 buffers their integers, exact below 2^24; NULL for a
     * buffer the spec leaves unused; an output's entry holds its initial
     * contents). Returns 0, or -1 when out of memory. */
    int (*reference)(const struct kernel_spec *ks, const float *const *in,
                     const size_t *sizes, double *const *out);
    /* Optional: as reference, for ops whose rows depend on one another
     * (cross_entropy's mean divides every row's gradient by the count of
     * rows that count): the outputs over the first size alone at rows
     * ROWS_IDX[0 .. N_ROWS) of the case (OUT[i] then holds N_ROWS rows),
     * the others whole. The checks of sampled rows call it on the whole
     * case instead of reference on a case of the sampled rows alone. */
    int (*reference_rows)(const struct kernel_spec *ks,
                          const float *const *in, const size_t *sizes,
                          const size_t *rows_idx, size_t n_rows,
                          double *const *out);
    /* Fills P with the naive kernel(s) of tests/naive.cl that compute the
     * same: their #define prelude (every size and value a constant, and
     * the dtype) and launches (naive_launch), and the scratch they share
     * in path[0]. P comes with the kernel's buffers and constants and one
     * empty path (naive_plan). */
    void (*naive)(const struct kernel_spec *ks, struct plan *p);
    /* Optional: narrows or moves the range [*LO, *HI] (preset to [-1, 1])
     * that random values of input BUFFER are drawn from (an int32
     * buffer's: the whole numbers in it); x always follows the caller's
     * distribution and is not asked about. */
    void (*input_range)(const struct kernel_spec *ks, const char *buffer,
                        double *lo, double *hi);
    /* The fewest bytes a kernel must move and the flops it must do at
     * SIZES: the floor `specl bench` measures against. */
    void (*costs)(const struct kernel_spec *ks, const size_t *sizes,
                  double *bytes, double *flops);
    /* The largest relative L2 error against the reference accepted. */
    double (*error_bound)(const struct kernel_spec *ks);
    /* Whether its flops are matrix products, which tensor cores run at
     * f16 and bf16 (ops with a blas_peer are): bench's floor then counts
     * them at the capability table's tensor-core rate. */
    int matmul;
    /* The sizes `bench` and `tune` measure at when none are asked for:
     * fills SIZES[0 .. op_n_sizes - 1]. */
    void (*bench_sizes)(const struct kernel_spec *ks, size_t *sizes);
    /* The shape at SIZES in one line of bench output. */
    void (*shape_text)(const struct kernel_spec *ks, const size_t *sizes,
                       char *buf, size_t size);
    /* Optional: the SGEMMs a user would run through CLBlast instead (the
     * `clblast` variant of `specl bench`: SGEMM for f32 storage, HGEMM for
     * f16 where the device has cl_khr_fp16). */
    void (*blas_peer)(const struct kernel_spec *ks, size_t rows,
                      struct gemm_chain *g);
};

/* NULL-terminated table of every op. */
extern const struct op_def *const op_registry[];

/* The op named NAME, or NULL. */
const struct op_def *op_find(const char *name);

/* Adds OP to the ops op_find finds (a program's own, as the tests'
 * fixture op); adding one again does nothing. At most 4. */
void op_add(const struct op_def *op);

/* How many runtime sizes OP has, and the name of size I ("rows"). */
int op_n_sizes(const struct op_def *op);
const char *op_size_name(const struct op_def *op, int i);
/* The names of the sizes of OP that MASK names, joined by SEP ("rows",
 * "batch x seq" for SEP " x "); "1" for none. */
void sizes_text(const struct op_def *op, unsigned mask, const char *sep,
                char *buf, size_t size);
/* The index of OP's runtime size NAME, or -1. */
int op_size_index(const struct op_def *op, const char *name);

/* Index of KEY in the op's fields or knobs; -1 if absent. */
int op_field_index(const struct op_def *op, const char *key);
int op_knob_index(const struct op_def *op, const char *key);
/* Whether GROUP names a mapping of OP's fields: some field's key is
 * "GROUP.something". */
int op_field_group(const struct op_def *op, const char *group);

/* A field's or knob's value by key; the key must exist (checked). */
double spec_field(const struct kernel_spec *ks, const char *key);
double spec_knob(const struct kernel_spec *ks, const char *key);
struct mark spec_field_mark(const struct kernel_spec *ks, const char *key);
struct mark spec_knob_mark(const struct kernel_spec *ks, const char *key);

/* Whether the spec gave field (knob) KEY; the key must exist (checked). */
int spec_field_set(const struct kernel_spec *ks, const char *key);
int spec_knob_set(const struct kernel_spec *ks, const char *key);
/* For defaults hooks: sets knob KEY to V unless the spec gave it. */
void spec_knob_default(struct kernel_spec *ks, const char *key, double v);

/* For kernels whose work-items form warps of 32 laid out by the knob
 * warp_n: checks WARP_N against KERNEL's work-group of (M / WM) x
 * (N / WN) work-items, reporting at warp_n's mark; 0 (row-major) always
 * fits. */
void check_warp_n(const struct kernel_spec *ks, const char *kernel,
                  long warp_n, long m, long wm, long n, long wn,
                  struct diags *d);

/* The LoRA scale of a spec with the fields alpha, scale and rank (both
 * lora ops): alpha / rank when alpha is given, else scale (default 1). */
double spec_lora_scale(const struct kernel_spec *ks);

/* F as the kernels hold it: the float literal format_float writes, read
 * back (what references compare against). */
double emitted_float(double f);

/* Helpers for plans: a #define of the .cl prelude, or a public constant
 * of NAME.h (emitted as NAME_<name>). */
void plan_int(struct plan *p, const char *name, const char *comment, long v);
/* The define NAME, 1 with comment ON_TEXT where ON (and then the
 * capabilities CAPS among P's needs: its code needs them to build), else
 * 0 with OFF_TEXT. */
void plan_flag(struct plan *p, const char *name, const char *on_text,
               const char *off_text, int on, unsigned caps);
/* The define NAME of P's prelude, or NULL where it has none. */
const struct define *plan_find_define(const struct plan *p,
                                      const char *name);
/* Gives the define NAME of P's prelude, where it is, COMMENT and value
 * V; whether it was there. */
int plan_set_int(struct plan *p, const char *name, const char *comment,
                 long v);
void plan_float(struct plan *p, const char *name, const char *comment,
                double v);
/* A __constant float table NAME of the .cl prelude holding V[0 .. N). */
void plan_table(struct plan *p, const char *name, const char *comment,
                const float *v, int n);
void plan_public_int(struct plan *p, const char *name, const char *comment,
                     long v);
void plan_public_float(struct plan *p, const char *name,
                       const char *comment, double v);
/* Appends buffer NAME of PER_ROW elements per row (the first runtime
 * size) plus FIXED, of the storage dtype. */
void plan_buffer(struct plan *p, const char *name, long per_row, long fixed,
                 int optional);
/* Makes the buffer plan_buffer added last hold PER elements per product
 * of the sizes MASK names, plus its fixed ones. */
void plan_buffer_over(struct plan *p, unsigned mask, long per);
/* Lets the caller pass the output plan_buffer added last as NULL (struct
 * plan_buffer's nullable). */
void plan_buffer_nullable(struct plan *p);
/* Makes the buffer plan_buffer added last one of ELEM elements. */
void plan_buffer_elem(struct plan *p, enum elem_type elem);
/* Marks the buffer plan_buffer added last as ROLE (they start as
 * BUFFER_IN). */
void plan_buffer_role(struct plan *p, enum buffer_role role);
/* Lets the output plan_buffer added last be buffer INPUT itself (the
 * kernels are right in place); every other overlap the stub refuses. */
void plan_buffer_may_alias(struct plan *p, const char *input);
/* Documents the buffer plan_buffer added last, for NAME.h: SHAPE and NOTE
 * (may be NULL) as struct plan_buffer's. */
void plan_buffer_doc(struct plan *p, const char *shape, const char *note);
/* Appends a define for the storage dtype (DTYPE_F32=1, ...). */
void plan_dtype(struct plan *p, enum dtype dt);
/* plan_dtype for KS's dtype; bf16 for a target that offers CAP_CVT_BF16
 * also converts in PTX, which makes the plan need it. */
void plan_storage(struct plan *p, const struct kernel_spec *ks);

/* The template of naive plans: obviously correct kernels that the
 * generated ones are checked against (tests/naive.cl). */
#define NAIVE_TEMPLATE "naive.cl"

/* KS's naive version as a plan of its own, emitted and launched like the
 * kernel's plan: the same buffers and constants, then the op's naive hook
 * (its prelude, scratch and launches over NAIVE_TEMPLATE). */
void naive_plan(const struct kernel_spec *ks, struct plan *p);

/* Helper for naive hooks: appends to P's path a launch of KERNEL with
 * ARGS (NULL-terminated, as struct launch's), one work-item per row
 * (COLUMNS 0: 64 rows per work-group) or per element of a rows x COLUMNS
 * output (16 x 16 elements per work-group). The kernel returns for
 * work-items past the end. */
void naive_launch(struct plan *p, const char *kernel, long columns,
                  const char *const *args);
/* The same for a kernel with one work-item per element of a fixed-size
 * output of COUNT elements, whatever the rows (64 per work-group). */
void naive_launch_fixed(struct plan *p, const char *kernel, long count,
                        const char *const *args);

/* Helpers for costs and error bounds: the bytes of every buffer KS uses
 * (optional ones left out) read or written once at ROWS rows; and the
 * bound F32 for float32 storage, the output rounding for half-width
 * storage (2e-3 f16, 1e-2 bf16). */
double plan_io_bytes(const struct kernel_spec *ks, const size_t *sizes);
double storage_error_bound(enum dtype dt, double f32);

/* float <-> storage conversions on the host (round to nearest even;
 * dtype.c). */
unsigned short float_to_half(float f);
float half_to_float(unsigned short h);
unsigned short float_to_bf16(float f);
float bf16_to_float(unsigned short h);
/* Rounds F to the nearest value the dtype holds. */
float round_to_dtype(float f, enum dtype dt);

/* Bytes of one element of dtype DT in memory. */
size_t dtype_size(enum dtype dt);
const char *dtype_name(enum dtype dt);

/* Whether DEF, when a spec leaves it out, stands for another field: an
 * optional int whose default is below its minimum (rope's rotary_dim:
 * head_dim). Headers, bench's columns and tuning shapes leave it out
 * then. */
int param_stand_in(const struct param_def *def);

/* Formats a parameter's value as a spec would write it ("4096", "2.5",
 * "true", "prepass"). */
void param_format(const struct param_def *def, double num, char *buf,
                  size_t size);

/* Formats F as a float literal that reads back exactly ("2.0f", "1e-05f"). */
void format_float(char *buf, size_t size, double f);

#endif
