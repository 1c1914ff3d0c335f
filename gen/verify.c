/* verify.c - random inputs, float64 references, naive kernels and error
 * measures: what the tests, the benchmark and the tuner check with. */
#include "verify.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "render.h"

/* ---- numbers ---------------------------------------------------------- */

unsigned short float_to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t exp = (u >> 23) & 0xffu;
    uint32_t man = u & 0x7fffffu;
    if (exp == 0xff) {
        return (unsigned short)(sign | 0x7c00u | (man ? 0x200u : 0));
    }
    int e = (int)exp - 127 + 15;
    if (e >= 31) {
        return (unsigned short)(sign | 0x7c00u);
    }
    if (e <= 0) {
        if (e < -10) {
            return (unsigned short)sign;
        }
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) {
            half++;
        }
        return (unsigned short)(sign | half);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) {
        h++; /* may carry into the exponent: still right */
    }
    return (unsigned short)(sign | h);
}

float half_to_float(unsigned short h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
        float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    if (exp == 31) {
        u = sign | 0x7f800000u | (man << 13);
    } else {
        u = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

unsigned short float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f)) {
        return (unsigned short)((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

float bf16_to_float(unsigned short h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float round_to_dtype(float f, enum dtype dt)
{
    switch (dt) {
    case DTYPE_F16:
        return half_to_float(float_to_half(f));
    case DTYPE_BF16:
        return bf16_to_float(float_to_bf16(f));
    default:
        return f;
    }
}

double rel_l2(const float *got, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i])) {
            return INFINITY;
        }
        double d = (double)got[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    if (den == 0) {
        return num == 0 ? 0 : INFINITY;
    }
    return sqrt(num / den);
}

double error_bound(const struct kernel_spec *ks)
{
    int lora = strcmp(ks->op->name, "lora_forward") == 0;
    switch (ks->dtype) {
    case DTYPE_F16:
        return 2e-3; /* output rounding alone is up to 2^-11 per element */
    case DTYPE_BF16:
        return 1e-2; /* 2^-8 */
    default:
        return lora ? 1e-4 : 1e-5;
    }
}

/* ---- cases ------------------------------------------------------------ */

/* splitmix64: small, fast, and the same everywhere. */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * (double)(next_random(s) >> 11) * 0x1.0p-53;
}

/* The plan's public constant NAME as a number (0 if absent). */
static double plan_const(const struct plan *p, const char *name)
{
    for (int i = 0; i < p->n_constant; i++) {
        if (strcmp(p->constant[i].name, name) == 0) {
            return strtod(p->constant[i].value, NULL);
        }
    }
    return 0;
}

static int is_op(const struct vcase *c, const char *name)
{
    return strcmp(c->ks->op->name, name) == 0;
}

int vcase_init(struct vcase *c, const struct kernel_spec *ks, size_t rows,
               unsigned long seed, struct vdist dist)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dull + 1;
    memset(c, 0, sizeof *c);
    c->ks = ks;
    c->rows = rows;
    c->seed = seed;
    ks->op->plan(ks, &c->plan);
    c->out = c->plan.n_buffer - 1;
    for (int i = 0; i < c->plan.n_buffer; i++) {
        const struct plan_buffer *pb = &c->plan.buffer[i];
        c->count[i] = (size_t)pb->per_row * rows + (size_t)pb->fixed;
        if (pb->optional) {
            continue;
        }
        c->host[i] = malloc((c->count[i] ? c->count[i] : 1) * sizeof(float));
        if (c->host[i] == NULL) {
            vcase_free(c);
            return -1;
        }
        double lo = -1, hi = 1;
        if (strcmp(pb->name, "x") == 0) {
            lo = dist.offset - dist.spread;
            hi = dist.offset + dist.spread;
        } else if (strcmp(pb->name, "gamma") == 0) {
            lo = 0.5;
            hi = 1.5;
        }
        for (size_t k = 0; k < c->count[i]; k++) {
            c->host[i][k] = round_to_dtype((float)uniform(&s, lo, hi),
                                           ks->dtype);
        }
    }
    return 0;
}

void vcase_free(struct vcase *c)
{
    for (int i = 0; i < SPECL_MAX_BUFFERS; i++) {
        free(c->host[i]);
        c->host[i] = NULL;
    }
}

static int buffer_of(const struct vcase *c, const char *name)
{
    for (int i = 0; i < c->plan.n_buffer; i++) {
        if (strcmp(c->plan.buffer[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

static void reference_lora(const struct vcase *c, double *y)
{
    const struct plan *p = &c->plan;
    size_t K = (size_t)plan_const(p, "IN_FEATURES");
    size_t N = (size_t)plan_const(p, "OUT_FEATURES");
    size_t R = (size_t)plan_const(p, "RANK");
    double scale = plan_const(p, "SCALE");
    int base = spec_field(c->ks, "base") != 0;
    int accumulate = spec_field(c->ks, "accumulate") != 0;
    const float *x = c->host[buffer_of(c, "x")];
    const float *w = base ? c->host[buffer_of(c, "w")] : NULL;
    const float *a = c->host[buffer_of(c, "a")];
    const float *b = c->host[buffer_of(c, "b")];
    const float *y0 = c->host[buffer_of(c, "y")];
    double *t = calloc(R ? R : 1, sizeof *t);
    double *row = calloc(N, sizeof *row);
    if (t == NULL || row == NULL) {
        free(t);
        free(row);
        return;
    }
    for (size_t m = 0; m < c->rows; m++) {
        const float *xm = x + m * K;
        for (size_t j = 0; j < R; j++) {
            double acc = 0;
            for (size_t k = 0; k < K; k++) {
                acc += (double)xm[k] * a[k * R + j];
            }
            t[j] = scale * acc;
        }
        for (size_t n = 0; n < N; n++) {
            row[n] = accumulate ? y0[m * N + n] : 0.0;
        }
        for (size_t k = 0; base && k < K; k++) {
            double xv = xm[k];
            const float *wk = w + k * N;
            for (size_t n = 0; n < N; n++) {
                row[n] += xv * wk[n];
            }
        }
        for (size_t j = 0; j < R; j++) {
            for (size_t n = 0; n < N; n++) {
                row[n] += t[j] * b[j * N + n];
            }
        }
        memcpy(y + m * N, row, N * sizeof *row);
    }
    free(t);
    free(row);
}

static void reference_rows(const struct vcase *c, double *y)
{
    size_t D = (size_t)spec_field(c->ks, "features");
    const float *x = c->host[buffer_of(c, "x")];
    int gi = buffer_of(c, "gamma"), bi = buffer_of(c, "beta");
    const float *gamma = gi >= 0 ? c->host[gi] : NULL;
    const float *beta = bi >= 0 ? c->host[bi] : NULL;
    for (size_t m = 0; m < c->rows; m++) {
        const float *xm = x + m * D;
        double *ym = y + m * D;
        if (is_op(c, "softmax")) {
            double s = spec_field(c->ks, "scale"), mx = -INFINITY, sum = 0;
            for (size_t i = 0; i < D; i++) {
                mx = fmax(mx, s * xm[i]);
            }
            for (size_t i = 0; i < D; i++) {
                ym[i] = exp(s * xm[i] - mx);
                sum += ym[i];
            }
            for (size_t i = 0; i < D; i++) {
                ym[i] /= sum;
            }
        } else {
            double eps = spec_field(c->ks, "eps"), mean = 0, var = 0;
            int layer = is_op(c, "layernorm");
            for (size_t i = 0; layer && i < D; i++) {
                mean += xm[i];
            }
            mean /= (double)D;
            for (size_t i = 0; i < D; i++) {
                var += (xm[i] - mean) * (xm[i] - mean);
            }
            double inv = 1.0 / sqrt(var / (double)D + eps);
            for (size_t i = 0; i < D; i++) {
                ym[i] = (xm[i] - mean) * inv * gamma[i] +
                        (layer ? beta[i] : 0.0);
            }
        }
    }
}

double *vcase_reference(const struct vcase *c)
{
    double *y = calloc(c->count[c->out] ? c->count[c->out] : 1, sizeof *y);
    if (y == NULL) {
        return NULL;
    }
    if (is_op(c, "lora_forward")) {
        reference_lora(c, y);
    } else {
        reference_rows(c, y);
    }
    return y;
}

/* ---- device buffers --------------------------------------------------- */

/* Converts N floats to the storage dtype in a new array (caller frees). */
static void *to_storage(const float *v, size_t n, enum dtype dt)
{
    size_t es = dtype_size(dt);
    unsigned char *p = malloc(n * es + 1);
    if (p == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (dt == DTYPE_F32) {
            memcpy(p + 4 * i, &v[i], 4);
        } else {
            unsigned short h = dt == DTYPE_F16 ? float_to_half(v[i])
                                               : float_to_bf16(v[i]);
            memcpy(p + 2 * i, &h, 2);
        }
    }
    return p;
}

static float from_storage(const unsigned char *p, size_t i, enum dtype dt)
{
    if (dt == DTYPE_F32) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    unsigned short h;
    memcpy(&h, p + 2 * i, 2);
    return dt == DTYPE_F16 ? half_to_float(h) : bf16_to_float(h);
}

#define CANARY_VALUE 12345.0f

cl_int vbuffers_reset_output(const struct rt *rt, const struct vcase *c,
                             const struct vbuffers *b)
{
    size_t n = c->count[c->out], total = n + b->canary;
    int accumulate = is_op(c, "lora_forward") &&
                     spec_field(c->ks, "accumulate") != 0;
    float *init = malloc(total * sizeof *init);
    if (init == NULL) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    for (size_t i = 0; i < total; i++) {
        init[i] = i >= n ? CANARY_VALUE
                         : accumulate ? c->host[c->out][i] : NAN;
    }
    void *st = to_storage(init, total, c->ks->dtype);
    free(init);
    if (st == NULL) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    cl_int err = clEnqueueWriteBuffer(rt->queue, b->mem[c->out], CL_TRUE, 0,
                                      total * dtype_size(c->ks->dtype), st,
                                      0, NULL, NULL);
    free(st);
    return err;
}

cl_int vbuffers_create(const struct rt *rt, const struct vcase *c,
                       struct vbuffers *b)
{
    cl_int err = CL_SUCCESS;
    size_t es = dtype_size(c->ks->dtype);
    memset(b, 0, sizeof *b);
    b->canary = 64;
    for (int i = 0; i < c->plan.n_buffer && err == CL_SUCCESS; i++) {
        if (c->host[i] == NULL) {
            continue;
        }
        size_t n = c->count[i] + (i == c->out ? b->canary : 0);
        b->mem[i] = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE,
                                   (n ? n : 1) * es, NULL, &err);
        if (err != CL_SUCCESS || i == c->out || c->count[i] == 0) {
            continue;
        }
        void *st = to_storage(c->host[i], c->count[i], c->ks->dtype);
        if (st == NULL) {
            err = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        err = clEnqueueWriteBuffer(rt->queue, b->mem[i], CL_TRUE, 0,
                                   c->count[i] * es, st, 0, NULL, NULL);
        free(st);
    }
    if (err == CL_SUCCESS) {
        err = vbuffers_reset_output(rt, c, b);
    }
    if (err != CL_SUCCESS) {
        vbuffers_free(b);
    }
    return err;
}

cl_int vbuffers_read_output(const struct rt *rt, const struct vcase *c,
                            const struct vbuffers *b, float *out,
                            int *canary_ok)
{
    size_t n = c->count[c->out], total = n + b->canary;
    enum dtype dt = c->ks->dtype;
    unsigned char *raw = malloc(total * dtype_size(dt));
    if (raw == NULL) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    cl_int err = clEnqueueReadBuffer(rt->queue, b->mem[c->out], CL_TRUE, 0,
                                     total * dtype_size(dt), raw, 0, NULL,
                                     NULL);
    *canary_ok = 1;
    if (err == CL_SUCCESS) {
        for (size_t i = 0; i < n; i++) {
            out[i] = from_storage(raw, i, dt);
        }
        for (size_t i = n; i < total; i++) {
            if (from_storage(raw, i, dt) != round_to_dtype(CANARY_VALUE, dt)) {
                *canary_ok = 0;
                err = CL_INVALID_VALUE;
                break;
            }
        }
    }
    free(raw);
    return err;
}

void vbuffers_free(struct vbuffers *b)
{
    for (int i = 0; i < SPECL_MAX_BUFFERS; i++) {
        if (b->mem[i] != NULL) {
            clReleaseMemObject(b->mem[i]);
            b->mem[i] = NULL;
        }
    }
}

/* ---- naive kernels ---------------------------------------------------- */

void naive_init(struct naive *n)
{
    memset(n, 0, sizeof *n);
}

void naive_free(struct naive *n)
{
    for (int i = 0; i < 3; i++) {
        if (n->program[i] != NULL) {
            clReleaseProgram(n->program[i]);
        }
    }
    naive_init(n);
}

static cl_program naive_program(const struct rt *rt, struct naive *n,
                                enum dtype dt, cl_int *err)
{
    static const char *const macro[] = {"DTYPE_F32", "DTYPE_F16",
                                        "DTYPE_BF16"};
    if (n->program[dt] != NULL) {
        *err = CL_SUCCESS;
        return n->program[dt];
    }
    struct buf src;
    char msg[128];
    buf_init(&src);
    buf_printf(&src, "#define %s 1\n", macro[dt]);
    if (render(&src, template_text("naive.cl"), NULL, msg, sizeof msg) < 0) {
        buf_free(&src);
        *err = CL_INVALID_PROGRAM;
        return NULL;
    }
    n->program[dt] = rt_build(rt, buf_str(&src), "-cl-std=CL1.2", err, NULL);
    buf_free(&src);
    return n->program[dt];
}

/* Sets ARGS (int, float or cl_mem by the letters of SIG) on K. */
static cl_int set_args(cl_kernel k, const char *sig, const void *const *args)
{
    cl_int err = CL_SUCCESS;
    for (cl_uint i = 0; sig[i] && err == CL_SUCCESS; i++) {
        size_t size = sig[i] == 'i' ? sizeof(cl_int)
                      : sig[i] == 'f' ? sizeof(cl_float)
                                      : sizeof(cl_mem);
        err = clSetKernelArg(k, i, size, args[i]);
    }
    return err;
}

static cl_int run_kernel(const struct rt *rt, cl_program prog,
                         const char *name, const char *sig,
                         const void *const *args, cl_uint dims,
                         const size_t *global, cl_event *ev)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    if (err != CL_SUCCESS) {
        return err;
    }
    err = set_args(k, sig, args);
    if (err == CL_SUCCESS) {
        err = clEnqueueNDRangeKernel(rt->queue, k, dims, NULL, global, NULL,
                                     0, NULL, ev);
    }
    clReleaseKernel(k);
    return err;
}

static cl_int naive_lora_enqueue(const struct rt *rt, cl_program prog,
                                 const struct vcase *c,
                                 const struct vbuffers *b, cl_event *events,
                                 int *n_events)
{
    const struct plan *p = &c->plan;
    cl_int rows = (cl_int)c->rows;
    cl_int K = (cl_int)plan_const(p, "IN_FEATURES");
    cl_int N = (cl_int)plan_const(p, "OUT_FEATURES");
    cl_int R = (cl_int)plan_const(p, "RANK");
    cl_float scale = (cl_float)plan_const(p, "SCALE");
    cl_int base = spec_field(c->ks, "base") != 0;
    cl_int acc = spec_field(c->ks, "accumulate") != 0;
    cl_int err;
    cl_mem x = b->mem[buffer_of(c, "x")], a = b->mem[buffer_of(c, "a")];
    cl_mem bb = b->mem[buffer_of(c, "b")], y = b->mem[buffer_of(c, "y")];
    cl_mem w = base ? b->mem[buffer_of(c, "w")] : x; /* unread if !base */
    cl_mem t = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE,
                              c->rows * (size_t)R * sizeof(float), NULL, &err);
    if (err != CL_SUCCESS) {
        return err;
    }
    const void *xa_args[] = {&rows, &K, &R, &scale, &x, &a, &t};
    size_t g1[2] = {(size_t)R, c->rows};
    err = run_kernel(rt, prog, "naive_xa", "iiifmmm", xa_args, 2, g1,
                     &events[0]);
    if (err == CL_SUCCESS) {
        *n_events = 1;
        const void *args[] = {&rows, &K, &N, &R, &base, &acc,
                              &x, &w, &t, &bb, &y};
        size_t g2[2] = {(size_t)N, c->rows};
        err = run_kernel(rt, prog, "naive_lora", "iiiiiimmmmm", args, 2, g2,
                         &events[1]);
        if (err == CL_SUCCESS) {
            *n_events = 2;
        }
    }
    clReleaseMemObject(t);
    return err;
}

cl_int naive_enqueue(const struct rt *rt, struct naive *n,
                     const struct vcase *c, const struct vbuffers *b,
                     cl_event *events, int *n_events)
{
    cl_int err;
    *n_events = 0;
    cl_program prog = naive_program(rt, n, c->ks->dtype, &err);
    if (prog == NULL) {
        return err;
    }
    if (is_op(c, "lora_forward")) {
        return naive_lora_enqueue(rt, prog, c, b, events, n_events);
    }
    cl_int rows = (cl_int)c->rows;
    cl_int D = (cl_int)spec_field(c->ks, "features");
    size_t global = c->rows;
    cl_mem x = b->mem[buffer_of(c, "x")], y = b->mem[c->out];
    if (is_op(c, "softmax")) {
        cl_float s = (cl_float)spec_field(c->ks, "scale");
        const void *args[] = {&rows, &D, &s, &x, &y};
        err = run_kernel(rt, prog, "naive_softmax", "iifmm", args, 1,
                         &global, &events[0]);
    } else {
        cl_float eps = (cl_float)spec_field(c->ks, "eps");
        cl_mem g = b->mem[buffer_of(c, "gamma")];
        if (is_op(c, "rmsnorm")) {
            const void *args[] = {&rows, &D, &eps, &x, &g, &y};
            err = run_kernel(rt, prog, "naive_rmsnorm", "iifmmm", args, 1,
                             &global, &events[0]);
        } else {
            cl_mem be = b->mem[buffer_of(c, "beta")];
            const void *args[] = {&rows, &D, &eps, &x, &g, &be, &y};
            err = run_kernel(rt, prog, "naive_layernorm", "iifmmmm", args, 1,
                             &global, &events[0]);
        }
    }
    if (err == CL_SUCCESS) {
        *n_events = 1;
    }
    return err;
}
