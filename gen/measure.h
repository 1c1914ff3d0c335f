/* measure.h - verifying and timing one kernel's variants on a device:
 * shared by `specl bench` and `specl tune`. */
#ifndef SPECL_MEASURE_H
#define SPECL_MEASURE_H

#include "runtime.h"
#include "stubrun.h"
#include "verify.h"

#define MAX_REPS 1000
#define MAX_SETS 8

struct ceilings {
    double copy_gbs;    /* read + write bytes per second / 1e9 */
    double read_gbs;    /* bytes read per second / 1e9 (1 float stored
                         * per 256 bytes read, not counted) */
    double write_gbs;   /* bytes written per second / 1e9, nothing read */
    double gflops;      /* fp32 multiply-add rate */
};

/* The floor of one case: the least time the device could take, the
 * larger of its bytes over the copy rate and its flops over the compute
 * rate. The compute rate is the measured fp32 rate, except for a
 * half-precision GEMM (f16 or bf16 storage, an op whose bench peer is a
 * BLAS GEMM chain) on a device whose dense tensor-core rate the
 * capability table gives (caps_tensor_gflops): tensor cores do that
 * arithmetic, so the fp32 rate would put the floor several times too
 * high. */
struct case_floor {
    double bytes_us;     /* the bytes at the copy rate */
    double flops_us;     /* the flops at gflops */
    double gflops;       /* the compute rate the flops are counted at */
    int tensor;          /* gflops is the tensor cores' (capability table) */
    int memory_bound;    /* bytes_us > flops_us */
    double us;           /* the floor: the larger of the two */
};

/* Fills F for KS moving BYTES and doing FLOPS on a device of CAPS with
 * ceilings C. */
void case_floor(const struct ceilings *c, const struct device_caps *caps,
                const struct kernel_spec *ks, double bytes, double flops,
                struct case_floor *f);

/* One measured variant. */
struct result {
    const char *variant;
    int ok;             /* ran and verified */
    double err;         /* relative L2 error against float64 */
    double us;          /* median event time */
    double wall_us;     /* median host time per call, enqueue to finish */
    int host_timed;     /* us is host time over back-to-back batches */
    int stub_variant;   /* the variant that ran at the case's sizes
                           (measure_stub): the one the stub built, or
                           its device's rows range's */
    int stub_path;      /* the path it ran at the case's sizes, as
                           NAME_path_index picks it; -1: none */
    char path_why[160]; /* that path's description in the plan */
    char note[96];
    /* measure_stub's seconds: NAME.c emitted and compiled, its program
     * built (NAME_create), the outputs checked, the runs timed */
    double compile_s, build_s, check_s, timing_s;
};

/* One kernel at one size: random inputs in several sets of device
 * buffers (rotated between runs so that a cache large enough for one set
 * does not flatter the figures), the float64 reference of sampled rows,
 * and the emitted stub under test. */
struct measure_case {
    const struct rt *rt;
    struct vcase vc;
    struct vbuffers sets[MAX_SETS];
    int n_sets;
    struct stub stub;           /* the emitted stub under test (may be unset) */
    struct naive_stubs *naive;  /* where the naive stubs are kept */
    struct stub *naive_stub;    /* this kernel's, in *naive, once
                                   mcase_load_naive */
    cl_mem t[MAX_SETS];         /* temporaries of peers (gemm_chain) */
    cl_mem t2[MAX_SETS];
    cl_program mark_program;    /* the one-item kernel run_specl times from */
    cl_kernel mark;
    double *ref;                /* reference of the sampled rows */
    size_t rows_idx[64];
    size_t n_rows;
    float *got;                 /* room for all outputs */
    double bytes;               /* fewest bytes the op moves */
    double flops;
};

/* Sets up MC for KS over ROWS rows; ROTATE: as many buffer sets as it
 * takes to spill a 64 MiB cache (else one). Returns CL_SUCCESS or an error
 * (MC is then freed). */
cl_int mcase_init(struct measure_case *mc, const struct rt *rt,
                  struct naive_stubs *naive, const struct kernel_spec *ks,
                  size_t rows, unsigned long seed, int rotate);
/* As mcase_init at the runtime sizes SIZES (op order). */
cl_int mcase_init_sizes(struct measure_case *mc, const struct rt *rt,
                        struct naive_stubs *naive,
                        const struct kernel_spec *ks, const size_t *sizes,
                        unsigned long seed, int rotate);
void mcase_free(struct measure_case *mc);

/* The events of one run of a variant: it lasted from the start of ev[0]
 * (from its end when from_end is set: ev[0] is then a one-item mark
 * kernel queued just before the run, as a CUDA event recorded before a
 * call would be, so the launch gap after it counts) to the end of
 * ev[n - 1]. A BLAS peer's chain has an event per SGEMM. */
struct run_events {
    cl_event ev[SPECL_MAX_GEMMS > 2 ? SPECL_MAX_GEMMS : 2];
    int n;
    int from_end;
};

/* Microseconds the run took; negative when the events cannot tell. */
double run_events_us(const struct run_events *r);
/* Releases the events and zeroes R. */
void run_events_release(struct run_events *r);

/* An enqueue of one variant on buffer set SET, filling R (zeroed by the
 * caller). CTX is the measure_case. */
typedef cl_int (*enqueue_fn)(void *ctx, int set, struct run_events *r);

/* The emitted stub, through NAME_enqueue_scratch: the stub's done event
 * for a plan of one kernel; for several, a mark kernel queued before the
 * stub's call (both held back by a user event until all is enqueued, so
 * that the host's work in NAME_enqueue does not count) and the done
 * event. Marker commands cannot serve: NVIDIA's report start times long
 * before the commands they follow. */
cl_int run_specl(void *mc, int set, struct run_events *r);
/* The same for the kernel's naive stub, loaded by mcase_load_naive. */
cl_int run_naive(void *mc, int set, struct run_events *r);

/* Loads the naive stub of MC's kernel into MC->naive (or finds it there)
 * for run_naive, which may use it until MC->naive loads others
 * (naive_stub). Returns CL_SUCCESS, or an error with the compiler's or
 * driver's log in *LOG (when LOG is not NULL, caller frees). */
cl_int mcase_load_naive(struct measure_case *mc, char **log);

/* Runs FN once on set 0 with a poisoned output and checks it against the
 * reference: fills r->ok, r->err and r->note. */
void verify_variant(struct measure_case *mc, enqueue_fn fn,
                    struct result *r);

/* Times FN: warm-up, then up to REPS runs (fewer when one run is slow);
 * fills r->us and r->wall_us. */
cl_int time_variant(const struct rt *rt, enqueue_fn fn, void *ctx,
                    int n_sets, int reps, struct result *r);

/* Times the N stubs STUBS (loaded for MC's kernel and verified) back to
 * back: two warm-up rounds, then REPS rounds of one run of each in turn
 * (the order reversed every other round, so that none always runs
 * first), rotating over the buffer sets; fewer rounds (at least 3) when a
 * round is slow, so that each stub takes about as long as time_variant
 * gives one. US[c][i]: stub C's event time in round i; *ROUNDS: the
 * rounds completed. */
cl_int time_interleaved(struct measure_case *mc, struct stub *stubs, int n,
                        int reps, double (*us)[MAX_REPS], int *rounds);

/* The Q-quantile (0..1) of the N values SORTED ascending: the nearest
 * rank. */
double percentile(const double *sorted, int n, double q);

/* What measure_stub got to. */
enum stub_outcome {
    STUB_BUILD_FAILED, /* emitting, compiling, loading or NAME_create */
    STUB_WRONG,        /* ran, but failed the float64 check */
    STUB_RUN_FAILED,   /* verified, then an enqueue failed while timing */
    STUB_TIMED
};

/* Build, verify, time: loads the emitted stub of VS's kernel into MC (of
 * MC's shape; knobs may differ), NAME_create picking the variant (which
 * one: mc->stub.variant until unloaded, and R's note when there are
 * several), checks one run against float64 and times REPS runs. Fills R (ok, err, us, wall_us and a note saying what
 * failed); *LOG (when LOG is not NULL, caller frees) gets the compiler's
 * or driver's log of a failed build. The stub is unloaded again. */
enum stub_outcome measure_stub(struct measure_case *mc,
                               const struct variant_set *vs, int reps,
                               struct result *r, char **log);

/* The median of V's N values (N > 0); sorts V, so V[0] and V[N - 1] are
 * then the least and the greatest. */
double median(double *v, int n);

/* Measures the device's copy, read-only and write-only bandwidths and its
 * fp32 rate. Floors use the copy; a kernel that reads all its input before
 * it writes cannot beat bytes read / read_gbs + bytes written / write_gbs. */
cl_int measure_ceilings(const struct rt *rt, struct ceilings *c);

/* A plain copy of a memory-bound case's bytes, the reference that tells
 * how close a kernel comes to memory speed at its own size (a copy of
 * tens of MB already trails the big-buffer copy_gbs: ramp-up and drain).
 * Reads BYTES / 2 and writes BYTES / 2, whole float4 values (at least
 * one), with ceilings.cl's copy4, timed as time_variant times a plan of
 * one kernel (REPS runs after warm-up), rotating over N_SETS buffer
 * pairs. Fills r->ok, r->us and r->wall_us, or r->note with why not;
 * *MOVED: the bytes read and written.
 * Returns CL_SUCCESS also when the device lacks the memory (r->ok unset,
 * the note says so); other failures return their status. */
cl_int measure_copy(const struct rt *rt, double bytes, int n_sets, int reps,
                    struct result *r, double *moved);

/* Rows a kernel is measured at when none are asked for (the op's
 * bench_rows). */
long measure_default_rows(const struct kernel_spec *ks);

/* Index of the plan buffer NAME, or -1. */
int buffer_named(const struct vcase *c, const char *name);

#endif
