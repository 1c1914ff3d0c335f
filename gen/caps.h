/* caps.h - what an OpenCL device can do, read once (caps_query), and the
 * kinds of device the op defaults aim at.
 *
 * One table (caps.c) decides which device offers which capability: a
 * row per CAP_* bit, its name and the rule that grants it (an extension
 * the device lists, an NVIDIA compute capability). Plans and variants
 * say what they need as a mask of those bits; a device can run them when
 * (needs & ~have) == 0. The emitted stub evaluates the same rows
 * (emit_caps.c writes its query from the table). */
#ifndef SPECL_CAPS_H
#define SPECL_CAPS_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>

/* The capabilities, one bit each (caps.c's table says what grants
 * them). */
enum cap {
    CAP_FP16 = 1 << 0,            /* cl_khr_fp16 */
    CAP_SUBGROUPS = 1 << 1,       /* cl_khr_subgroups */
    CAP_INTEL_SUBGROUPS = 1 << 2, /* cl_intel_subgroups */
    CAP_SHFL_SYNC = 1 << 3,       /* inline PTX shfl.sync */
    CAP_CVT_BF16 = 1 << 4,        /* inline PTX cvt.rn.bf16x2.f32 */
    CAP_MMA_SYNC_BF16_F16 = 1 << 5, /* inline PTX mma.sync m16n8k16 on
                                       bf16/f16 (m16n8k8 on tf32),
                                       ldmatrix, cp.async */
    CAP_WGMMA = 1 << 6,           /* wgmma, the PTX rebuilt for sm_90a */
    CAP_L2_HINT = 1 << 7,         /* inline PTX createpolicy, loads and
                                     stores with .L2::cache_hint */
    CAP_CP_ASYNC = 1 << 8,        /* inline PTX cp.async, global to
                                     local memory */
    CAP_APPROX_TRIG = 1 << 9      /* native_sin and native_cos by the
                                     hardware's sin.approx, cos.approx */
};

/* One row of the table: capability BIT is granted where the device lists
 * EXTENSION (NULL: no such condition) and, when CC_MIN is not 0, reports
 * an NVIDIA compute capability (10 * major + minor) of at least CC_MIN
 * and at most CC_MAX (0: no upper bound). */
struct cap_rule {
    unsigned bit;
    const char *name;      /* as printed: "mma_sync" */
    const char *what;      /* what it lets a kernel do, on which devices */
    const char *extension;
    int cc_min, cc_max;
};

/* The I-th row of the table, or NULL past the last. */
const struct cap_rule *cap_rule(int i);

/* The vendors a device's CL_DEVICE_VENDOR_ID (a PCI vendor id) names. */
enum device_vendor {
    VENDOR_OTHER, VENDOR_NVIDIA, VENDOR_AMD, VENDOR_INTEL, VENDOR_ARM,
    VENDOR_QUALCOMM
};

#define CAPS_MAX_SUBGROUP_SIZES 8

/* What a device is and offers. */
struct device_caps {
    enum device_vendor vendor;
    cl_uint vendor_id;           /* CL_DEVICE_VENDOR_ID */
    int cpu;                     /* CL_DEVICE_TYPE_CPU (else a GPU or an
                                    accelerator) */
    int compute_capability;      /* NVIDIA's, 10 * major + minor (90: 9.0),
                                    from cl_nv_device_attribute_query; 0
                                    on any other device */
    unsigned have;               /* the CAP_* bits the table grants */
    int n_subgroup_sizes;        /* where the device says: NVIDIA's warp,
                                    AMD's wavefront, Intel's sizes */
    size_t subgroup_sizes[CAPS_MAX_SUBGROUP_SIZES];
    cl_ulong local_mem;          /* CL_DEVICE_LOCAL_MEM_SIZE, bytes */
    size_t max_work_group;       /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    cl_uint compute_units;       /* CL_DEVICE_MAX_COMPUTE_UNITS */
    cl_uint max_clock_mhz;       /* CL_DEVICE_MAX_CLOCK_FREQUENCY */
};

/* Fills C for DEVICE. Returns CL_SUCCESS, or the status of the query
 * that failed (C then zeroed). */
cl_int caps_query(cl_device_id device, struct device_caps *c);

/* The capabilities the table grants a device that lists EXTENSIONS (its
 * CL_DEVICE_EXTENSIONS; NULL: none) and reports NVIDIA compute
 * capability CC (0: none). */
unsigned caps_grant(const char *extensions, int cc);

/* Whether EXTENSIONS, a space-separated list, holds NAME as a whole
 * word (NULL holds nothing). */
int caps_has_extension(const char *extensions, const char *name);

/* The capabilities of NEEDS that HAVE lacks: 0 when a device of HAVE can
 * run what needs NEEDS. */
unsigned caps_lacking(unsigned needs, unsigned have);

/* The names of the bits of MASK, as "cvt_bf16, mma_sync" ("" for 0). */
void caps_names(unsigned mask, char *buf, size_t size);

/* The dense f16/bf16 tensor-core rate (float32 accumulation) of an
 * NVIDIA device of compute capability CC, in flops per SM per clock,
 * from the vendor's architecture documents; 0 where the table has no
 * entry (no tensor cores, or a rate that differs between products of
 * one compute capability). */
double caps_tensor_flops_per_clock(int cc);

/* Device C's peak dense f16/bf16 tensor-core rate in GFLOP/s: the rate
 * per SM per clock times its compute units and CL_DEVICE_MAX_CLOCK_
 * FREQUENCY; 0 when the table has no entry or C reports no clock. */
double caps_tensor_gflops(const struct device_caps *c);

/* The kind of device the op defaults aim at: the knobs a spec leaves out
 * are chosen for GPUs unless the device is known to be a CPU (`gen
 * --target cpu`, or bench and tune on a CPU device) or to offer what
 * another target's defaults use: NVIDIA tensor cores (compute capability
 * 8.0+), which get the GPU defaults except where an op has a tensor-core
 * kernel for the spec; and wgmma (compute capability 9.0: Hopper GPUs),
 * the tensor-core defaults except where an op has a kernel on warpgroups.
 * caps.c's target table says what each may use. */
enum target { TARGET_GPU, TARGET_CPU, TARGET_TENSOR, TARGET_SM90A,
              N_TARGETS };

/* The target for a device of C: CPU for a CPU, else the one whose
 * capabilities it offers, the most of them. */
enum target caps_target(const struct device_caps *c);

/* The capabilities TARGET's defaults may use (every device of it
 * offers them). */
unsigned target_caps(enum target target);

/* Whether TARGET's defaults may use every capability of CAPS. */
int target_offers(enum target target, unsigned caps);

/* The devices TARGET's defaults are meant for: CPUs (*CPU set) or every
 * device that offers *CAPS. */
void target_devices(enum target target, int *cpu, unsigned *caps);

/* "op defaults for GPUs" and the like: how emitted comments and notes
 * name the defaults for TARGET. */
const char *target_defaults_label(enum target target);

/* How comments name the devices of a variant match for CPUs (CPU set)
 * or those that offer CAPS: "CPUs", "any device", "NVIDIA tensor cores
 * (compute capability 8.0+)"; NULL where no target has those. */
const char *target_devices_text(int cpu, unsigned caps);

/* What the op defaults know of the devices a target aims at: the facts
 * their waves of work-groups and their cache-resident thresholds derive
 * from (device_wave_units and the like below; lora_defaults.c,
 * lora_sizes.c, op_rows_split.c). Every entry holds every fact (a
 * GPU's compute unit is an SM or CU, a CPU's a core). */
struct device_facts {
    long compute_units;       /* SMs, CUs, cores */
    long registers_per_unit;  /* 32-bit registers a unit's work-items
                                 share (a CPU core: its vector registers
                                 as 32-bit lanes) */
    long local_per_unit;      /* bytes of fast memory a unit holds for
                                 its work-groups' local arrays together
                                 (a GPU's shared memory, a CPU core's L1
                                 data cache) */
    long local_per_group;     /* bytes of local arrays one work-group may
                                 declare (NVIDIA's OpenCL: 48 KiB of
                                 static shared memory; a CPU: OpenCL's
                                 least, 32 KiB) */
    long cache_bytes;         /* the last-level cache all units share */
};

/* TARGET's facts (caps.c's table). */
const struct device_facts *target_facts(enum target target);

/* The compute units a wave counts: the power of two at or below F's (the
 * split paths' slices and bands are powers of two, and halve by wave). */
long device_wave_units(const struct device_facts *f);

/* Work-groups of ITEMS work-items at REGS registers each that one unit of
 * F holds at once by its registers, at least 1. */
long device_groups_by_registers(const struct device_facts *f, long items,
                                long regs);

/* The cache share that W's bytes, read again by every block of rows,
 * stay within: the power of two at or below F's cache bytes, over
 * PARTS. */
long device_cache_share(const struct device_facts *f, long parts);

/* "gpu", "cpu", "tensor", "sm90a": TARGET as `specl gen --target` and tuning
 * databases spell it; target_from_name reads it back (-1: none of them). */
const char *target_name(enum target target);
int target_from_name(const char *name, enum target *target);

#endif
