/* op_rows.h - what the row ops (softmax, rmsnorm, layernorm) share: their
 * knobs, shape-aware defaults, checks and launch plan. */
#ifndef SPECL_OP_ROWS_H
#define SPECL_OP_ROWS_H

#include "op.h"

/* The fields every row op starts with, and the norms' eps. */
#define ROWS_FEATURES_FIELD                                                  \
    {"features", VALUE_INT, 1, 0, 1, 16777216, NULL,                         \
     "elements per row (D); rows (M) are given at run time"}
#define ROWS_EPS_FIELD                                                       \
    {"eps", VALUE_FLOAT, 0, 1e-5, 0, 1, NULL,                                \
     "added under the square root; > 0 (default 1e-5)"}

/* The knobs under `tile:` of every row op, in this order (the first
 * ROWS_N_KNOBS of rows_knobs); then those of the split path, which only
 * ops that have one take (softmax, the norms: .n_knobs
 * ROWS_N_SPLIT_KNOBS); then those of the one-launch split path
 * (softmax: ROWS_N_COOP_KNOBS). */
enum { ROWS_KNOB_WG, ROWS_KNOB_ROWS, ROWS_KNOB_VEC, ROWS_KNOB_MODE,
       ROWS_N_KNOBS, ROWS_KNOB_SPLIT = ROWS_N_KNOBS, ROWS_KNOB_SPLIT_MAX,
       ROWS_N_SPLIT_KNOBS, ROWS_KNOB_COOP_SPLIT = ROWS_N_SPLIT_KNOBS,
       ROWS_KNOB_COOP_MAX, ROWS_N_COOP_KNOBS };
extern const struct param_def rows_knobs[ROWS_N_COOP_KNOBS];

/* Work-items per group that the default rows aims at, for short rows;
 * half-width storage, whose items hold more elements, in groups of 128
 * (bench/RESULTS.md, "Half-width row ops in 16-byte accesses"). */
#define ROWS_GROUP_ITEMS 256
#define ROWS_GROUP_HALVES 128
/* Vectors a streaming work-item sums into a fresh accumulator before
 * adding the block's sum to its compensated total (row_reduce.cl): a sum
 * of 64 float32 terms is off by a few 1e-7 relative at worst-typical, far
 * inside the 1e-5 bound, and the compensated add costs a few operations
 * per 64 vectors. */
#define ROWS_SUM_BLOCK 64

/* Their definitions, for ops that add knobs of their own after them
 * (wg with the help line of the op's defaults). */
#define ROWS_MAX_GROUP 1024
extern const char *const rows_mode_choices[];
/* The values of the mode knob, in rows_mode_choices' order. */
enum { ROWS_MODE_AUTO, ROWS_MODE_REGISTERS, ROWS_MODE_STREAMING };
#define ROWS_KNOB_WG_DEF(help)                                               \
    {"wg", VALUE_INT, 0, 256, 1, ROWS_MAX_GROUP, NULL, help}
#define ROWS_KNOB_ROWS_DEF                                                   \
    {"rows", VALUE_INT, 0, 1, 1, ROWS_MAX_GROUP, NULL,                       \
     "rows per work-group, wg * rows <= 1024 (shape: 256 / wg)"}
#define ROWS_KNOB_VEC_DEF                                                    \
    {"vec", VALUE_INT, 0, 4, 1, 16, NULL,                                    \
     "elements per access, dividing features: 1, 2, 4 (GPUs), 8 (GPUs, "    \
     "f16 and bf16), 16 (CPUs)"}
#define ROWS_KNOB_MODE_DEF                                                   \
    {"mode", VALUE_CHOICE, 0, 0, 0, 0, rows_mode_choices,                    \
     "registers (x read once), streaming (x re-read, any length) or auto"}
#define ROWS_KNOB_SPLIT_DEF                                                  \
    {"split", VALUE_INT, 0, 1, 1, 1024, NULL,                                \
     "chunks of a row, a work-group each, on the split path; 1: none "      \
     "(shape: rows from 128 KiB on GPUs, 256 KiB on CPUs)"}
#define ROWS_KNOB_SPLIT_MAX_DEF                                              \
    {"split_max", VALUE_INT, 0, 0, 0, 16777216, NULL,                        \
     "rows up to which the split path runs; 0: none (shape: 128 on GPUs, "  \
     "rows / 2 on CPUs)"}
#define ROWS_KNOB_COOP_SPLIT_DEF                                             \
    {"coop_split", VALUE_INT, 0, 1, 1, 1024, NULL,                           \
     "chunks of a row, a work-group each, on the one-launch split path; 1: " \
     "none (shape: a wave over 16 rows on NVIDIA GPUs where rows split)"}
#define ROWS_KNOB_COOP_MAX_DEF                                               \
    {"coop_max", VALUE_INT, 0, 0, 0, 1024, NULL,                             \
     "rows up to which the one-launch split path runs, while rows x "       \
     "chunks fit the compute units; 0: none (shape: 16 on NVIDIA GPUs, "     \
     "softmax's 32 over rows of 192 KiB and more; none elsewhere)"}

/* The designated initializers of every knob up to ROWS_N_COOP_KNOBS, wg
 * with the help line WG_HELP: a table for ops that add knobs after
 * them. */
#define ROWS_COOP_KNOB_DEFS(wg_help)                                         \
    [ROWS_KNOB_WG] = ROWS_KNOB_WG_DEF(wg_help),                              \
    [ROWS_KNOB_ROWS] = ROWS_KNOB_ROWS_DEF,                                   \
    [ROWS_KNOB_VEC] = ROWS_KNOB_VEC_DEF,                                     \
    [ROWS_KNOB_MODE] = ROWS_KNOB_MODE_DEF,                                   \
    [ROWS_KNOB_SPLIT] = ROWS_KNOB_SPLIT_DEF,                                 \
    [ROWS_KNOB_SPLIT_MAX] = ROWS_KNOB_SPLIT_MAX_DEF,                         \
    [ROWS_KNOB_COOP_SPLIT] = ROWS_KNOB_COOP_SPLIT_DEF,                       \
    [ROWS_KNOB_COOP_MAX] = ROWS_KNOB_COOP_MAX_DEF

/* What the shape-aware defaults aim at on GPUs: elements per work-item
 * (float32, half-width storage), work-items per group of short rows and
 * the widest vector (0: 8 elements for half-width storage, 4 for float32);
 * and the rows of a work-group on CPUs (over wg). */
struct rows_aim {
    int item_floats, item_halves;
    int group_items, group_halves;
    int cpu_rows;
    int gpu_vec;
};

/* The most floats one work-item keeps in registers (mode: registers). */
#define ROWS_REG_FLOATS 64

/* Vectors a streaming work-item sums into a fresh accumulator before
 * adding the block's sum to its compensated total (row_reduce.cl): a sum
 * of 64 float32 terms is off by a few 1e-7 relative at worst-typical, far
 * inside the 1e-5 bound, and the compensated add costs a few operations
 * per 64 vectors. */
#define ROWS_SUM_BLOCK 64

/* Whether KS keeps its rows in registers (mode, with auto resolved). */
int rows_in_registers(const struct kernel_spec *ks);

/* Fills the knobs the spec left unset from the shape (see op_rows.c). */
void rows_defaults(struct kernel_spec *ks);
/* The same aiming at AIM. */
void rows_defaults_aim(struct kernel_spec *ks, const struct rows_aim *aim);

/* Checks the knobs against each other and the shape. LOCAL_FLOATS is how
 * many floats of local memory the template takes per work-item. */
void rows_validate(const struct kernel_spec *ks, struct diags *d,
                   int local_floats);

/* Reports an eps that is not > 0 (as a float) at its mark. */
void rows_validate_eps(const struct kernel_spec *ks, struct diags *d);

/* Starts P: the dtype, FEATURES and the geometry defines. */
void rows_plan_begin(const struct kernel_spec *ks, struct plan *p);

/* Adds a float field KEY as define and public constant NAME. */
void rows_plan_float(const struct kernel_spec *ks, struct plan *p,
                     const char *key, const char *name, const char *comment);

/* SHFL_PTX of templates/softmax_common.cl's row_merge: where the target
 * offers shfl.sync (NVIDIA) a row's (max, sum) pairs merge across a warp
 * by PTX shuffles, then across warps through local memory. */
void rows_plan_shfl(const struct kernel_spec *ks, struct plan *p);

/* STREAM_FMAX of templates/softmax_common.cl's STREAM_MAX, for plans that
 * stream a row (softmax, cross_entropy): a streamed max by fmax on GPUs,
 * one instruction where MAX2's ?: is a compare and a select (NVIDIA);
 * by MAX2 on CPUs, one max instruction where fmax's NaN rules take
 * several (bench/RESULTS.md, "Streamed rows: a block's loads in flight
 * together"). */
void rows_plan_stream_max(const struct kernel_spec *ks, struct plan *p);

/* Whether KS's rows can be read and written with L2 eviction priorities
 * (templates/l2_policy.cl: 16-byte vectors, float32 by 4 or bf16 by 8
 * with PTX conversions; a target that offers l2_hint); WANTED and that,
 * as the plan's NAME (TEXT where 1), the capability then needed. */
int rows_plan_l2_hints(const struct kernel_spec *ks, struct plan *p,
                       const char *name, const char *text, int wanted);

/* Ends P: buffers x, PARAMS (NULL-terminated; FEATURES elements each) and
 * y, and the one launch of KERNEL over them. */
/* The norms' rescaling limits (templates/norm_scale.cl), from eps. */
void rows_plan_norm_scale(const struct kernel_spec *ks, struct plan *p);
void rows_plan_end(const struct kernel_spec *ks, struct plan *p,
                   const char *kernel, const char *const *params);
/* rows_plan_end with buffers INPUTS (rows x FEATURES each), PARAMS
 * (FEATURES each) and OUTPUTS (rows x FEATURES each), all NULL-terminated,
 * in that order, the launch's arguments after rows. */
void rows_plan_launch(const struct kernel_spec *ks, struct plan *p,
                      const char *kernel, const char *const *inputs,
                      const char *const *params, const char *const *outputs);

/* What `specl tune` searches for a row op, and for one with a split
 * path; ROWS_TUNE_AXES for ops that search knobs of their own after
 * them. */
#define ROWS_TUNE_AXES                                                       \
    {"wg", "1 2 4 8 16 32 64 128 256 512 1024"}, {"vec", "1 2 4 8 16"},      \
        {"rows", "1 2 4 8 16 64 256"}, {"mode", "registers streaming"}
/* The split path's axes, after ROWS_TUNE_AXES. */
#define ROWS_SPLIT_TUNE_AXES                                                 \
    {"split", "1 4 8 16 32 64 128"}, {"split_max", "0 8 128 512"}
extern const struct tune_axis rows_tune_space[];
extern const struct tune_axis rows_split_tune_space[];

/* Checking and measuring (the op_def hooks of the same names). Buffers
 * are x, PARAMS, y, as rows_plan_end lays them out. */

/* The float64 reference of rmsnorm (CENTRED 0) or layernorm (1): x over
 * its root mean square (or x - mean over its standard deviation), times
 * gamma (plus beta). */
int rows_norm_reference(const struct kernel_spec *ks, const float *const *in,
                        const size_t *sizes, double *const *out,
                        int centred);

/* The naive hook: KERNEL (rows, x, PARAMS, y) of tests/naive.cl, one
 * work-item per row, FEATURES and float field KEY defined (as NAME,
 * COMMENT). */
void rows_naive(const struct kernel_spec *ks, struct plan *p,
                const char *kernel, const char *key, const char *name,
                const char *comment, const char *const *params);

/* gamma in [0.5, 1.5]: scales of either sign or near 0 would make the
 * error relative to a vanishing output. */
void rows_input_range(const struct kernel_spec *ks, const char *buffer,
                      double *lo, double *hi);

/* Each buffer once; 5 flops per element of y. */
void rows_costs(const struct kernel_spec *ks, const size_t *sizes,
                double *bytes, double *flops);

/* 1e-5 for float32 storage. */
double rows_error_bound(const struct kernel_spec *ks);

/* 16 Mi elements' worth of rows. */
void rows_bench_sizes(const struct kernel_spec *ks, size_t *sizes);

/* The split path for few long rows (op_rows_split.c; ops whose knobs are
 * rows_knobs up to ROWS_N_SPLIT_KNOBS): work-items of a split
 * work-group, vectors per chunk, chunks per row (`split` of them, fewer
 * where the row has fewer vectors or the last would be empty), and
 * whether the plan has the path (`split` 1 or `split_max` 0: not). */
long rows_split_items(const struct kernel_spec *ks);
long rows_split_chunk_vectors(const struct kernel_spec *ks);
long rows_split_groups(const struct kernel_spec *ks);
int rows_has_split(const struct kernel_spec *ks);
/* The row knobs' defaults, then the split path's: the shape's chunks up
 * to the target's rows, none (split 1, split_max 0) for rows too short.
 * A spec that gives split (2 or more) alone gets those rows; one that
 * gives split_max alone, the shape's chunks, at least 2. */
void rows_split_defaults(struct kernel_spec *ks);
/* The entry_rows hook of such ops: a tuning entry timed at ROWS rows
 * shows on which side of ROWS the crossover lies, not where. KS keeps the
 * spec's split_max (or the default), raised to ROWS where the split path
 * ran or lowered below ROWS where the row path did; and the entry's split
 * count where it was timed. */
void rows_split_entry_rows(struct kernel_spec *ks,
                           const struct kernel_spec *entry, long rows);
/* Adds the split path's defines and its path: KERNELS[0] then
 * KERNELS[1], each over (SPLIT_GROUPS, rows) work-groups of SPLIT_WG
 * items taking ARGS[k]; the caller sets its why and scratch. */
struct path *rows_plan_split(const struct kernel_spec *ks, struct plan *p,
                             const char *const kernels[2],
                             const char *const *const args[2]);

/* The one-launch split path (op_rows_split.c; ops whose knobs are
 * rows_knobs up to ROWS_N_COOP_KNOBS): each row of up to coop_max in
 * coop_split chunks, a work-group each, that wait on one another
 * (a grid-wide barrier per row) instead of a second launch. Its geometry:
 * chunks per row (fewer than coop_split where the row has fewer vectors
 * or the last would be empty), vectors per chunk, work-items per group,
 * vectors per work-item, and whether the chunk stays in registers (else
 * it is read twice; REGISTERS 0: always read twice). */
struct rows_coop {
    long groups, vecs, items, slots;
    long most;  /* work-groups per row the stub may spread few rows over */
    long least; /* work-groups per row it may cut many rows down to: the
                   chunks then outgrow registers and are read twice */
    int in_registers;
};
int rows_has_coop(const struct kernel_spec *ks);
/* STREAM_PAST: the kernel reads a chunk longer than COOP_VECS twice, so
 * that rows up to coop_max may take fewer chunks than coop_split (down to
 * about a wave's worth over coop_max rows); else least is groups. */
void rows_coop_geometry(const struct kernel_spec *ks, int registers,
                        int stream_past, struct rows_coop *g);
/* Its defaults (after rows_split_defaults): on NVIDIA GPUs, for rows the
 * split path takes, COOP_GPU_ROWS rows in chunks that fill about a wave;
 * none on other devices, CPUs among them, whose work-groups need not run
 * at once (a spec may still ask: the stub checks the device's compute
 * units). A spec that gives one of
 * the two knobs alone gets the other from the shape (coop_split at least
 * 2, coop_max 1). */
void rows_coop_defaults(struct kernel_spec *ks);
/* Checks the coop knobs against each other. */
void rows_validate_coop(const struct kernel_spec *ks, struct diags *d);
/* Adds its defines and its path (one launch of KERNEL over
 * (COOP_GROUPS, rows) work-groups of COOP_WG items taking ARGS, "sync"
 * among them) and the handle's sync words: per row its counters and the
 * words its work-groups publish, PER_CHUNK for each plus PER_ROW
 * (templates/row_coop.cl); REGISTERS 0 for a kernel that always reads
 * its chunk twice (the others keep it in registers where it fits);
 * STREAM_PAST as rows_coop_geometry takes it; the sync words cover
 * SYNC_ROWS rows where that passes coop_max (a second one-launch path of
 * the op's over more rows shares them). The caller sets its why. */
/* The macro of templates/grid_sync.cl, the barrier across the
 * work-groups of a launch that all run at once. */
void rows_plan_grid_sync(const struct kernel_spec *ks, struct plan *p);
struct path *rows_plan_coop(const struct kernel_spec *ks, struct plan *p,
                            const char *kernel, const char *const *args,
                            long per_chunk, long per_row, int registers,
                            int stream_past, long sync_rows);
/* A one-launch path of KERNEL over (GROUPS, rows) work-groups of ITEMS
 * items taking ARGS, up to MAX_ROWS rows, its groups doubled up to MOST
 * at fewer rows (the stub's spread), on the sync words rows_plan_coop
 * laid out. The caller sets its why. */
struct path *rows_plan_coop_path(struct plan *p, const char *kernel,
                                 const char *const *args, long max_rows,
                                 long groups, long most, long items);

/* "ROWSxFEATURES". */
void rows_shape_text(const struct kernel_spec *ks, const size_t *sizes,
                     char *buf, size_t size);

#endif
