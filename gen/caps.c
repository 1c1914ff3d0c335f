/* caps.c - the capability table, a device's capabilities, and the
 * targets of the op defaults (see caps.h). */
#include "caps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What grants each capability: the one place that says which devices
 * offer what. The emitted stub evaluates the same rows (emit_caps.c).
 * The NVIDIA rows grant from compute capability 8.0, where specl's
 * kernels of each were verified; wgmma's sm_90a code runs on 9.0
 * alone. */
static const struct cap_rule rules[] = {
    {CAP_FP16, "fp16", "half-precision arithmetic (cl_khr_fp16)",
     "cl_khr_fp16", 0, 0},
    {CAP_SUBGROUPS, "subgroups", "sub-groups (cl_khr_subgroups)",
     "cl_khr_subgroups", 0, 0},
    {CAP_INTEL_SUBGROUPS, "intel_subgroups",
     "Intel sub-group shuffles and block reads (cl_intel_subgroups)",
     "cl_intel_subgroups", 0, 0},
    {CAP_SHFL_SYNC, "shfl_sync",
     "warp shuffles by inline PTX shfl.sync (NVIDIA compute capability "
     "8.0 or later)",
     NULL, 80, 0},
    {CAP_CVT_BF16, "cvt_bf16",
     "float pairs rounded to bf16 by inline PTX cvt.rn.bf16x2.f32 (NVIDIA "
     "compute capability 8.0 or later)",
     NULL, 80, 0},
    {CAP_MMA_SYNC_BF16_F16, "mma_sync",
     "NVIDIA tensor cores by inline PTX mma.sync (m16n8k16 on bf16 and "
     "f16, m16n8k8 on tf32), ldmatrix and cp.async (compute capability 8.0 "
     "or later)",
     NULL, 80, 0},
    {CAP_L2_HINT, "l2_hint",
     "L2 eviction priorities of loads and stores by inline PTX createpolicy "
     "and .L2::cache_hint (NVIDIA compute capability 8.0 or later)",
     NULL, 80, 0},
    {CAP_CP_ASYNC, "cp_async",
     "copies from global to local memory by inline PTX cp.async (NVIDIA "
     "compute capability 8.0 or later)",
     NULL, 80, 0},
    {CAP_APPROX_TRIG, "approx_trig",
     "native_sin and native_cos by the hardware's sin.approx and "
     "cos.approx, absolute error near 2^-21 over [-pi, pi] (NVIDIA compute "
     "capability 8.0 or later)",
     NULL, 80, 0},
    {CAP_WGMMA, "wgmma",
     "wgmma on warpgroups, the PTX rebuilt for sm_90a (NVIDIA compute "
     "capability 9.0)",
     NULL, 90, 90},
};

#define N_RULES (int)(sizeof rules / sizeof rules[0])

const struct cap_rule *cap_rule(int i)
{
    return i >= 0 && i < N_RULES ? &rules[i] : NULL;
}

int caps_has_extension(const char *extensions, const char *name)
{
    size_t n = strlen(name);
    if (extensions == NULL) {
        return 0;
    }
    for (const char *p = strstr(extensions, name); p != NULL;
         p = strstr(p + 1, name)) {
        if ((p == extensions || p[-1] == ' ') &&
            (p[n] == ' ' || p[n] == '\0')) {
            return 1;
        }
    }
    return 0;
}

unsigned caps_grant(const char *extensions, int cc)
{
    unsigned have = 0;
    for (int i = 0; i < N_RULES; i++) {
        const struct cap_rule *r = &rules[i];
        int ext_ok = r->extension == NULL ||
                     caps_has_extension(extensions, r->extension);
        int cc_ok = r->cc_min == 0 ||
                    (cc >= r->cc_min && (r->cc_max == 0 || cc <= r->cc_max));
        if (ext_ok && cc_ok) {
            have |= r->bit;
        }
    }
    return have;
}

unsigned caps_lacking(unsigned needs, unsigned have)
{
    return needs & ~have;
}

void caps_names(unsigned mask, char *buf, size_t size)
{
    size_t len = 0;
    if (size > 0) {
        buf[0] = '\0';
    }
    for (int i = 0; i < N_RULES && len < size; i++) {
        if (mask & rules[i].bit) {
            int n = snprintf(buf + len, size - len, "%s%s",
                             len ? ", " : "", rules[i].name);
            len += n > 0 ? (size_t)n : 0;
        }
    }
}

/* ---- reading a device -------------------------------------------------- */

/* DEVICE's extensions as a new string ("" when it lists none); NULL with
 * *STATUS set when they cannot be read. */
static char *extensions_of(cl_device_id device, cl_int *status)
{
    size_t size = 0;
    *status = clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &size);
    char *ext = *status == CL_SUCCESS ? malloc(size + 1) : NULL;
    if (ext == NULL) {
        *status = *status == CL_SUCCESS ? CL_OUT_OF_HOST_MEMORY : *status;
        return NULL;
    }
    *status = size == 0 ? CL_SUCCESS
                        : clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size,
                                          ext, NULL);
    ext[size] = '\0';
    if (*status != CL_SUCCESS) {
        free(ext);
        return NULL;
    }
    return ext;
}

/* A cl_uint property of an extension's, 0 when it cannot be read. */
static cl_uint uint_info(cl_device_id device, cl_device_info what)
{
    cl_uint v = 0;
    if (clGetDeviceInfo(device, what, sizeof v, &v, NULL) != CL_SUCCESS) {
        return 0;
    }
    return v;
}

/* The vendor-specific queries, each behind the extension that defines
 * it: NVIDIA's compute capability and warp, AMD's wavefront, Intel's
 * sub-group sizes. */
static void vendor_queries(cl_device_id device, const char *ext,
                           struct device_caps *c)
{
    /* cl_nv_device_attribute_query: COMPUTE_CAPABILITY_MAJOR_NV,
     * _MINOR_NV, WARP_SIZE_NV */
    cl_uint major = 0, minor = 0;
    if (caps_has_extension(ext, "cl_nv_device_attribute_query")) {
        cl_uint warp = uint_info(device, 0x4003);
        if (clGetDeviceInfo(device, 0x4000, sizeof major, &major, NULL) ==
                CL_SUCCESS &&
            clGetDeviceInfo(device, 0x4001, sizeof minor, &minor, NULL) ==
                CL_SUCCESS) {
            c->compute_capability = (int)(major * 10 + minor);
        }
        if (warp) {
            c->subgroup_sizes[c->n_subgroup_sizes++] = warp;
        }
    }
    /* cl_amd_device_attribute_query: WAVEFRONT_WIDTH_AMD */
    if (caps_has_extension(ext, "cl_amd_device_attribute_query")) {
        cl_uint wave = uint_info(device, 0x4043);
        if (wave && c->n_subgroup_sizes == 0) {
            c->subgroup_sizes[c->n_subgroup_sizes++] = wave;
        }
    }
    /* cl_intel_required_subgroup_size: SUB_GROUP_SIZES_INTEL */
    size_t sizes[CAPS_MAX_SUBGROUP_SIZES], bytes = 0;
    if (c->n_subgroup_sizes == 0 &&
        caps_has_extension(ext, "cl_intel_required_subgroup_size") &&
        clGetDeviceInfo(device, 0x4108, sizeof sizes, sizes, &bytes) ==
            CL_SUCCESS) {
        size_t n = bytes / sizeof sizes[0];
        c->n_subgroup_sizes = (int)(n < CAPS_MAX_SUBGROUP_SIZES
                                        ? n
                                        : CAPS_MAX_SUBGROUP_SIZES);
        memcpy(c->subgroup_sizes, sizes,
               (size_t)c->n_subgroup_sizes * sizeof sizes[0]);
    }
}

static enum device_vendor vendor_of(cl_uint id)
{
    static const struct {
        cl_uint id;
        enum device_vendor vendor;
    } pci[] = {{0x10de, VENDOR_NVIDIA}, {0x1002, VENDOR_AMD},
               {0x8086, VENDOR_INTEL}, {0x13b5, VENDOR_ARM},
               {0x5143, VENDOR_QUALCOMM}};
    for (size_t i = 0; i < sizeof pci / sizeof pci[0]; i++) {
        if (pci[i].id == id) {
            return pci[i].vendor;
        }
    }
    return VENDOR_OTHER;
}

cl_int caps_query(cl_device_id device, struct device_caps *c)
{
    cl_device_type type = 0;
    memset(c, 0, sizeof *c);
    cl_int st = clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type,
                                NULL);
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(device, CL_DEVICE_VENDOR_ID, sizeof c->vendor_id,
                             &c->vendor_id, NULL);
    }
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE,
                             sizeof c->local_mem, &c->local_mem, NULL);
    }
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                             sizeof c->max_work_group, &c->max_work_group,
                             NULL);
    }
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS,
                             sizeof c->compute_units, &c->compute_units,
                             NULL);
    }
    if (st == CL_SUCCESS) {
        st = clGetDeviceInfo(device, CL_DEVICE_MAX_CLOCK_FREQUENCY,
                             sizeof c->max_clock_mhz, &c->max_clock_mhz,
                             NULL);
    }
    char *ext = st == CL_SUCCESS ? extensions_of(device, &st) : NULL;
    if (st != CL_SUCCESS) {
        memset(c, 0, sizeof *c);
        return st;
    }
    c->cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    c->vendor = vendor_of(c->vendor_id);
    vendor_queries(device, ext, c);
    c->have = caps_grant(ext, c->compute_capability);
    free(ext);
    return CL_SUCCESS;
}

/* ---- tensor-core rates --------------------------------------------- */

/* Dense f16/bf16 multiply-adds with float32 accumulation per SM per
 * clock, times 2 (flops), by compute capability: NVIDIA's Ampere (A100:
 * 1024 FMA per SM per clock, 312 TFLOPS at 108 SMs and 1410 MHz) and
 * Hopper (the SXM5 part: twice Ampere's per SM, 989.4 TFLOPS at 132 SMs
 * and 1830 MHz) white papers. Compute capabilities whose products differ
 * in this rate (8.6 and 8.9: GeForce cards accumulate in float32 at half
 * the rate of the professional ones) have no row; their floors stay on
 * the fp32 rate. A product whose tensor cores run below its compute
 * capability's row (NVIDIA's export parts) gets a floor below what it can
 * reach: still a bound, a looser one. */
static const struct {
    int cc;
    double flops_per_clock;
} tensor_rates[] = {
    {80, 2048},
    {90, 4096},
};

double caps_tensor_flops_per_clock(int cc)
{
    for (size_t i = 0; i < sizeof tensor_rates / sizeof tensor_rates[0];
         i++) {
        if (tensor_rates[i].cc == cc) {
            return tensor_rates[i].flops_per_clock;
        }
    }
    return 0;
}

double caps_tensor_gflops(const struct device_caps *c)
{
    return caps_tensor_flops_per_clock(c->compute_capability) *
           (double)c->compute_units * (double)c->max_clock_mhz / 1e3;
}

/* ---- targets ------------------------------------------------------------ */

/* The device facts of the GPU targets: those of the device their
 * defaults were measured on (bench/RESULTS.md: an H100 SXM5), from
 * NVIDIA's Hopper architecture white paper. A GPU target spans devices
 * of other sizes; the facts say which one its waves are counted for. */
#define HOPPER_SXM_FACTS                                                      \
    {                                                                         \
        .compute_units = 132,           /* SMs */                            \
        .registers_per_unit = 65536,    /* a 256 KiB register file */        \
        .local_per_unit = 228L << 10,   /* shared memory per SM */           \
        .local_per_group = 48L << 10,   /* static shared memory a block */   \
        .cache_bytes = 50L << 20,       /* L2 */                             \
    }

/* The CPU target's: a server CPU as PoCL sees it, a hardware thread per
 * compute unit, one work-group at a time (AMD's EPYC 7763
 * specifications: 64 cores of 2 threads, 32 KiB of L1 data cache a
 * core, 32 MiB of L3 per 8-core complex; AVX2's 16 registers of 8
 * lanes). */
#define EPYC_FACTS                                                            \
    {                                                                         \
        .compute_units = 128,                                                \
        .registers_per_unit = 16 * 8,                                        \
        .local_per_unit = 32L << 10,    /* L1 data cache per core */         \
        .local_per_group = 32L << 10,   /* OpenCL's least */                 \
        .cache_bytes = 32L << 20,                                            \
    }

/* The targets of the op defaults: what each is called, the devices it
 * is meant for (CPUs, or those that offer CAPS: what its defaults may
 * use), and what its defaults know of them. */
static const struct {
    const char *name;    /* `gen --target`, tuning databases */
    const char *label;   /* target_defaults_label */
    const char *devices; /* target_devices_text */
    int cpu;
    unsigned caps;
    struct device_facts facts;
} targets[N_TARGETS] = {
    [TARGET_GPU] = {"gpu", "op defaults for GPUs", "any device", 0, 0,
                    HOPPER_SXM_FACTS},
    [TARGET_CPU] = {"cpu", "op defaults for CPUs", "CPUs", 1, 0, EPYC_FACTS},
    [TARGET_TENSOR] = {"tensor", "op defaults for NVIDIA tensor cores",
                       "NVIDIA tensor cores (compute capability 8.0+)", 0,
                       CAP_SHFL_SYNC | CAP_CVT_BF16 | CAP_MMA_SYNC_BF16_F16 |
                           CAP_L2_HINT | CAP_CP_ASYNC | CAP_APPROX_TRIG,
                       HOPPER_SXM_FACTS},
    [TARGET_SM90A] = {"sm90a",
                      "op defaults for NVIDIA compute capability 9.0",
                      "NVIDIA compute capability 9.0 (wgmma)", 0,
                      CAP_SHFL_SYNC | CAP_CVT_BF16 | CAP_MMA_SYNC_BF16_F16 |
                          CAP_L2_HINT | CAP_CP_ASYNC | CAP_APPROX_TRIG |
                          CAP_WGMMA,
                      HOPPER_SXM_FACTS},
};

/* The number of bits set in MASK. */
static int bit_count(unsigned mask)
{
    int n = 0;
    for (; mask != 0; mask &= mask - 1) {
        n++;
    }
    return n;
}

enum target caps_target(const struct device_caps *c)
{
    int best = -1;
    for (int t = 0; t < N_TARGETS; t++) {
        if (targets[t].cpu != c->cpu ||
            caps_lacking(targets[t].caps, c->have) != 0) {
            continue;
        }
        if (best < 0 ||
            bit_count(targets[t].caps) > bit_count(targets[best].caps)) {
            best = t;
        }
    }
    return best < 0 ? TARGET_GPU : (enum target)best;
}

unsigned target_caps(enum target target)
{
    return targets[target].caps;
}

int target_offers(enum target target, unsigned caps)
{
    return caps_lacking(caps, targets[target].caps) == 0;
}

void target_devices(enum target target, int *cpu, unsigned *caps)
{
    *cpu = targets[target].cpu;
    *caps = targets[target].caps;
}

const char *target_defaults_label(enum target target)
{
    return targets[target].label;
}

const char *target_devices_text(int cpu, unsigned caps)
{
    for (int t = 0; t < N_TARGETS; t++) {
        if (targets[t].cpu == cpu && targets[t].caps == caps) {
            return targets[t].devices;
        }
    }
    return NULL;
}

const char *target_name(enum target target)
{
    return targets[target].name;
}

int target_from_name(const char *name, enum target *target)
{
    for (int t = 0; t < N_TARGETS; t++) {
        if (strcmp(name, targets[t].name) == 0) {
            *target = (enum target)t;
            return 0;
        }
    }
    return -1;
}

const struct device_facts *target_facts(enum target target)
{
    return &targets[target].facts;
}

/* The greatest power of two <= V (1 for V <= 1). */
static long power_below(long v)
{
    long p = 1;
    while (p * 2 <= v) {
        p *= 2;
    }
    return p;
}

long device_wave_units(const struct device_facts *f)
{
    return power_below(f->compute_units);
}

long device_groups_by_registers(const struct device_facts *f, long items,
                                long regs)
{
    long groups = f->registers_per_unit / (items * regs);
    return groups < 1 ? 1 : groups;
}

long device_cache_share(const struct device_facts *f, long parts)
{
    return power_below(f->cache_bytes) / parts;
}
