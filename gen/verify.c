/* verify.c - random inputs, float64 references, naive kernels and error
 * measures: what the tests, the benchmark and the tuner check with. */
#include "verify.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clsource.h"

/* ---- numbers ---------------------------------------------------------- */

double rel_l2(const float *got, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isinf(got[i]) && got[i] == ref[i]) {
            continue; /* exact: attention's lse of a row that sees no key */
        }
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
    return ks->op->error_bound(ks);
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

int vcase_init(struct vcase *c, const struct kernel_spec *ks, size_t rows,
               unsigned long seed, struct vdist dist)
{
    size_t sizes[SPECL_MAX_SIZES] = {0};
    ks->op->bench_sizes(ks, sizes);
    sizes[0] = rows;
    return vcase_init_sizes(c, ks, sizes, seed, dist);
}

/* A random value of [LO, HI] as buffer PB holds it (dtype DT): whole
 * numbers for int32 buffers, rounded to the storage dtype for its own. */
static float random_element(uint64_t *s, const struct plan_buffer *pb,
                            enum dtype dt, double lo, double hi)
{
    switch (pb->elem) {
    case ELEM_I32:
        return (float)floor(uniform(s, ceil(lo), floor(hi) + 1));
    case ELEM_F32:
        return (float)uniform(s, lo, hi);
    case ELEM_STORAGE:
        break;
    }
    return round_to_dtype((float)uniform(s, lo, hi), dt);
}

int vcase_init_sizes(struct vcase *c, const struct kernel_spec *ks,
                     const size_t *sizes, unsigned long seed,
                     struct vdist dist)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dull + 1;
    memset(c, 0, sizeof *c);
    c->ks = ks;
    memcpy(c->sizes, sizes, (size_t)op_n_sizes(ks->op) * sizeof *sizes);
    c->rows = sizes[0];
    c->seed = seed;
    ks->op->plan(ks, &c->plan);
    for (int i = 0; i < c->plan.n_buffer; i++) {
        const struct plan_buffer *pb = &c->plan.buffer[i];
        c->count[i] = buffer_count(pb, c->sizes);
        if (c->count[i] == SIZE_MAX) {
            return -1;
        }
        if (pb->role != BUFFER_IN && !pb->optional) {
            c->out = i;
            c->outs[c->n_out++] = i;
            c->out_at[i] = c->out_count;
            c->out_count += c->count[i];
        }
    }
    for (int i = 0; i < c->plan.n_buffer; i++) {
        const struct plan_buffer *pb = &c->plan.buffer[i];
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
        } else if (ks->op->input_range != NULL) {
            ks->op->input_range(ks, pb->name, &lo, &hi);
        }
        for (size_t k = 0; k < c->count[i]; k++) {
            c->host[i][k] = random_element(&s, pb, ks->dtype, lo, hi);
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

int vcase_reference_into(const struct vcase *c, double *const *out)
{
    const float *in[SPECL_MAX_BUFFERS] = {NULL};
    for (int i = 0; i < c->plan.n_buffer; i++) {
        in[i] = c->host[i];
    }
    return c->ks->op->reference(c->ks, in, c->sizes, out);
}

double *vcase_reference(const struct vcase *c)
{
    double *y = calloc(c->out_count ? c->out_count : 1, sizeof *y);
    double *out[SPECL_MAX_BUFFERS] = {NULL};
    if (y == NULL) {
        return NULL;
    }
    for (int o = 0; o < c->n_out; o++) {
        out[c->outs[o]] = y + c->out_at[c->outs[o]];
    }
    if (vcase_reference_into(c, out) < 0) {
        free(y);
        return NULL;
    }
    return y;
}

double vcase_error(const struct vcase *c, const float *got,
                   const double *ref, int *worst)
{
    double err = 0;
    if (worst != NULL) {
        *worst = c->out;
    }
    for (int o = 0; o < c->n_out; o++) {
        int i = c->outs[o];
        double e = rel_l2(got + c->out_at[i], ref + c->out_at[i], c->count[i]);
        if (!(e <= err)) { /* NaN counts as worst */
            err = e;
            if (worst != NULL) {
                *worst = i;
            }
        }
    }
    return err;
}

/* ---- device buffers --------------------------------------------------- */

/* How buffer I of C is held in device memory: its element type, the
 * storage dtype for ELEM_STORAGE. */
struct device_format {
    enum elem_type elem;
    enum dtype dt;
    size_t size; /* bytes of an element */
};

static struct device_format format_of(const struct vcase *c, int i)
{
    const struct plan_buffer *pb = &c->plan.buffer[i];
    return (struct device_format){pb->elem, c->ks->dtype,
                                  buffer_elem_size(pb, c->ks->dtype)};
}

/* Converts N floats to format F in a new array (caller frees); int32
 * elements from whole numbers, NaN as INT32_MIN. */
static void *to_device(const float *v, size_t n, struct device_format f)
{
    unsigned char *p = malloc(n * f.size + 1);
    if (p == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (f.elem == ELEM_I32) {
            int32_t k = isnan(v[i]) ? INT32_MIN : (int32_t)v[i];
            memcpy(p + 4 * i, &k, 4);
        } else if (f.elem == ELEM_F32 || f.dt == DTYPE_F32) {
            memcpy(p + 4 * i, &v[i], 4);
        } else {
            unsigned short h = f.dt == DTYPE_F16 ? float_to_half(v[i])
                                                 : float_to_bf16(v[i]);
            memcpy(p + 2 * i, &h, 2);
        }
    }
    return p;
}

static float from_device(const unsigned char *p, size_t i,
                         struct device_format f)
{
    if (f.elem == ELEM_I32) {
        int32_t k;
        memcpy(&k, p + 4 * i, 4);
        return (float)k;
    }
    if (f.elem == ELEM_F32 || f.dt == DTYPE_F32) {
        float v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    unsigned short h;
    memcpy(&h, p + 2 * i, 2);
    return f.dt == DTYPE_F16 ? half_to_float(h) : bf16_to_float(h);
}

/* N elements of format F at P as floats into OUT, a loop per format (the
 * outputs read back may be gigabytes). */
static void from_device_all(const unsigned char *p, size_t n,
                            struct device_format f, float *out)
{
    if (f.elem == ELEM_I32) {
        for (size_t i = 0; i < n; i++) {
            out[i] = from_device(p, i, f);
        }
    } else if (f.elem == ELEM_F32 || f.dt == DTYPE_F32) {
        memcpy(out, p, n * sizeof *out);
    } else if (f.dt == DTYPE_F16) {
        for (size_t i = 0; i < n; i++) {
            unsigned short h;
            memcpy(&h, p + 2 * i, 2);
            out[i] = half_to_float(h);
        }
    } else {
        for (size_t i = 0; i < n; i++) { /* bf16_to_float, inline */
            unsigned short h;
            memcpy(&h, p + 2 * i, 2);
            uint32_t u = (uint32_t)h << 16;
            memcpy(&out[i], &u, 4);
        }
    }
}

#define CANARY_VALUE 12345.0f

/* Writes output I's initial contents and its canary. An output the
 * kernels only write is poisoned on the device (clEnqueueFillBuffer with
 * NaN in its format: no host copy of a buffer that may be gigabytes), its
 * canary written after it; one they read (BUFFER_INOUT) gets the host's
 * values. */
static cl_int reset_one_output(const struct rt *rt, const struct vcase *c,
                               const struct vbuffers *b, int i)
{
    size_t n = c->count[i], total = n + b->canary;
    int inout = c->plan.buffer[i].role == BUFFER_INOUT;
    struct device_format f = format_of(c, i);
    size_t from = inout ? 0 : n; /* the host writes from here on */
    cl_int err = CL_SUCCESS;
    if (!inout && n > 0) {
        const float nan = NAN;
        void *poison = to_device(&nan, 1, f);
        if (poison == NULL) {
            return CL_OUT_OF_HOST_MEMORY;
        }
        err = clEnqueueFillBuffer(rt->queue, b->mem[i], poison, f.size, 0,
                                  n * f.size, 0, NULL, NULL);
        free(poison);
    }
    float *init = malloc((total - from) * sizeof *init);
    if (init == NULL) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    for (size_t k = from; k < total; k++) {
        init[k - from] = k >= n ? CANARY_VALUE : c->host[i][k];
    }
    void *st = err == CL_SUCCESS ? to_device(init, total - from, f) : NULL;
    free(init);
    if (err == CL_SUCCESS && st == NULL) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    if (err == CL_SUCCESS) {
        err = clEnqueueWriteBuffer(rt->queue, b->mem[i], CL_TRUE,
                                   from * f.size, (total - from) * f.size,
                                   st, 0, NULL, NULL);
    }
    free(st);
    return err;
}

cl_int vbuffers_reset_output(const struct rt *rt, const struct vcase *c,
                             const struct vbuffers *b)
{
    cl_int err = CL_SUCCESS;
    for (int o = 0; o < c->n_out && err == CL_SUCCESS; o++) {
        err = reset_one_output(rt, c, b, c->outs[o]);
    }
    return err;
}

cl_int vbuffers_create(const struct rt *rt, const struct vcase *c,
                       struct vbuffers *b)
{
    cl_int err = CL_SUCCESS;
    memset(b, 0, sizeof *b);
    b->canary = 64;
    for (int i = 0; i < c->plan.n_buffer && err == CL_SUCCESS; i++) {
        if (c->host[i] == NULL) {
            continue;
        }
        int is_out = c->plan.buffer[i].role != BUFFER_IN;
        struct device_format f = format_of(c, i);
        size_t n = c->count[i] + (is_out ? b->canary : 0);
        b->mem[i] = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE,
                                   (n ? n : 1) * f.size, NULL, &err);
        if (err != CL_SUCCESS || is_out || c->count[i] == 0) {
            continue;
        }
        void *st = to_device(c->host[i], c->count[i], f);
        if (st == NULL) {
            err = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        err = clEnqueueWriteBuffer(rt->queue, b->mem[i], CL_TRUE, 0,
                                   c->count[i] * f.size, st, 0, NULL, NULL);
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

/* Reads output I into OUT (count[I] values) and checks its canary. */
static cl_int read_one_output(const struct rt *rt, const struct vcase *c,
                              const struct vbuffers *b, int i, float *out,
                              int *canary_ok)
{
    size_t n = c->count[i], total = n + b->canary;
    struct device_format f = format_of(c, i);
    float canary = f.elem == ELEM_STORAGE ? round_to_dtype(CANARY_VALUE, f.dt)
                                          : CANARY_VALUE;
    unsigned char *raw = malloc(total * f.size);
    if (raw == NULL) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    cl_int err = clEnqueueReadBuffer(rt->queue, b->mem[i], CL_TRUE, 0,
                                     total * f.size, raw, 0, NULL, NULL);
    if (err == CL_SUCCESS) {
        from_device_all(raw, n, f, out);
        for (size_t k = n; k < total; k++) {
            if (from_device(raw, k, f) != canary) {
                *canary_ok = 0;
                err = CL_INVALID_VALUE;
                break;
            }
        }
    }
    free(raw);
    return err;
}

cl_int vbuffers_read_output(const struct rt *rt, const struct vcase *c,
                            const struct vbuffers *b, float *out,
                            int *canary_ok)
{
    cl_int err = CL_SUCCESS;
    *canary_ok = 1;
    for (int o = 0; o < c->n_out && err == CL_SUCCESS; o++) {
        int i = c->outs[o];
        err = read_one_output(rt, c, b, i, out + c->out_at[i], canary_ok);
    }
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

void naive_init(struct naive_stubs *n)
{
    memset(n, 0, sizeof *n);
}

void naive_free(struct naive_stubs *n)
{
    for (int i = 0; i < NAIVE_KEEP; i++) {
        stub_unload(&n->entry[i].stub);
    }
    naive_init(n);
}

struct stub *naive_stub(struct naive_stubs *n, const struct rt *rt,
                        const struct kernel_spec *ks, cl_int *err,
                        char **log)
{
    char msg[256];
    uint64_t hash;
    struct naive_stub_entry *e = &n->entry[0];
    if (log != NULL) {
        *log = NULL;
    }
    if (naive_code_hash(ks, &hash, msg, sizeof msg) < 0) {
        *err = CL_INVALID_PROGRAM;
        if (log != NULL) {
            *log = strdup(msg);
        }
        return NULL;
    }
    for (int i = 0; i < NAIVE_KEEP; i++) {
        struct naive_stub_entry *c = &n->entry[i];
        if (c->stub.dl != NULL && c->hash == hash) {
            c->used = ++n->clock;
            *err = CL_SUCCESS;
            return &c->stub;
        }
        if (c->stub.dl == NULL ? e->stub.dl != NULL : c->used < e->used) {
            e = c; /* an empty entry, else the least recently used */
        }
    }
    stub_unload(&e->stub);
    *err = stub_load_naive(&e->stub, rt, ks, log);
    if (*err != CL_SUCCESS) {
        return NULL;
    }
    e->hash = hash;
    e->used = ++n->clock;
    return &e->stub;
}
