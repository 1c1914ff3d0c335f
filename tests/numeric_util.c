/* numeric_util.c - what the numeric and sweep suites share: one device per
 * suite, kernels read from YAML text, and checked runs of a generated
 * kernel against the naive kernel and the float64 reference. */
#include "numeric_util.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct nu_stats nu_stats;

static struct rt the_rt;
static int rt_ok;
static struct naive_stubs the_naive;
static unsigned long base_seed;
static unsigned long case_counter;
static CU_pTest counted_test; /* the test case_counter counts the cases of */

/* The seed of the next case: the base seed and the case's place among
 * its test's cases, so that a test draws the same inputs whichever
 * tests ran before it in the process (the suites' tests are shared
 * between processes in any order) and alone (--only) as in the whole
 * run. */
static unsigned long next_seed(void)
{
    CU_pTest test = CU_get_current_test();
    if (test != counted_test) {
        counted_test = test;
        case_counter = 0;
    }
    return base_seed * 1000003UL + ++case_counter;
}
static const char *suite_name = "numeric";
static int verbose;       /* $SPECL_TEST_VERBOSE: a line per build and run */

#define DEFAULT_SEED 20240611UL
/* Rows of a failing case printed in detail. */
#define SHOW_ROWS 6
/* The naive kernels sum rows of up to 32000 elements one by one in
 * float32; their error may reach the generated kernels' bound, which is
 * the contract (error_bound) and stays strict. The naive ones are a check
 * of the semantics (wrong results are off by far more), so they get this
 * much room. */
#define NAIVE_SLACK 4.0

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Fails the current test with a message built from FMT. */
static void fail(int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void fail(int line, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* CUnit copies the message into its failure record. */
    CU_assertImplementation(CU_FALSE, (unsigned)line, msg, __FILE__, "",
                            CU_FALSE);
}

int nu_open(const char *name)
{
    char err[256];
    const char *s = getenv("SPECL_TEST_SEED");
    memset(&nu_stats, 0, sizeof nu_stats);
    suite_name = name;
    base_seed = s != NULL && *s ? strtoul(s, NULL, 0) : DEFAULT_SEED;
    case_counter = 0;
    counted_test = NULL;
    s = getenv("SPECL_TEST_VERBOSE");
    verbose = s != NULL && *s && *s != '0';
    naive_init(&the_naive);
    if (rt_open(&the_rt, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "%s: no OpenCL device: %s\n", name, err);
        rt_ok = 0;
        return -1;
    }
    rt_ok = 1;
    fprintf(stderr, "%s: device %s (%s), base seed %lu\n", name,
            the_rt.name, the_rt.platform_name, base_seed);
    return 0;
}

int nu_close(void)
{
    fprintf(stderr,
            "\n%s: %ld kernels built, %ld cases run, %ld failed, %ld "
            "specs skipped as invalid\n",
            suite_name, nu_stats.kernels, nu_stats.cases, nu_stats.failed,
            nu_stats.skipped);
    naive_free(&the_naive);
    if (rt_ok) {
        rt_close(&the_rt);
        rt_ok = 0;
    }
    return 0;
}

const struct rt *nu_rt(void)
{
    return &the_rt;
}

/* ---- specs ------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 0)))
#endif
static int read_yaml(struct nu_kernel *k, const char *fmt, va_list ap)
{
    memset(k, 0, sizeof *k);
    spec_set_init(&k->set);
    int n = vsnprintf(k->yaml, sizeof k->yaml, fmt, ap);
    if (n < 0 || (size_t)n >= sizeof k->yaml) {
        snprintf(k->errors, sizeof k->errors, "test spec text too long");
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    struct diags d = {.out = mem};
    spec_read_buffer(&k->set, "<test>", (const unsigned char *)k->yaml,
                     strlen(k->yaml), &d);
    if (mem != NULL) {
        fclose(mem);
        snprintf(k->errors, sizeof k->errors, "%s", text ? text : "");
        free(text);
    }
    if (d.count != 0 || k->set.n_kernel != 1) {
        if (d.count == 0) {
            snprintf(k->errors, sizeof k->errors, "expected one kernel, "
                     "read %d", k->set.n_kernel);
        }
        return 0;
    }
    k->ks = &k->set.kernel[0];
    return 1;
}

int nu_spec(struct nu_kernel *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int ok = read_yaml(k, fmt, ap);
    va_end(ap);
    return ok;
}

int nu_spec_ok(struct nu_kernel *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int ok = read_yaml(k, fmt, ap);
    va_end(ap);
    if (!ok) {
        fprintf(stderr, "\nFAIL: a spec the test expects valid was "
                "rejected:\n%s%s\n", k->yaml, k->errors);
        fail(__LINE__, "spec rejected: %.200s", k->errors);
    }
    return ok;
}

void nu_adopt(struct nu_kernel *k, const struct spec_set *set, int i,
              const char *what)
{
    memset(k, 0, sizeof *k);
    spec_set_init(&k->set);
    k->set.kernel = malloc(sizeof *k->set.kernel);
    if (k->set.kernel == NULL) {
        return;
    }
    k->set.kernel[0] = set->kernel[i];
    k->set.n_kernel = k->set.cap = 1;
    k->ks = &k->set.kernel[0];
    snprintf(k->yaml, sizeof k->yaml, "# kernel '%s' of %s\n",
             k->ks->name, what);
}

int nu_build(struct nu_kernel *k)
{
    char *log = NULL;
    if (k->ks == NULL || !rt_ok) {
        fail(__LINE__, "no spec or no device");
        return 0;
    }
    double t0 = now();
    static struct variant_set one; /* big: off the stack */
    variants_one(k->ks, &one);
    cl_int st = stub_load(&k->stub, &the_rt, &one, -1, &log);
    if (verbose) {
        fprintf(stderr, "  build %-12s %-5s %6.2f s  %s", k->ks->op->name,
                dtype_name(k->ks->dtype), now() - t0,
                strchr(k->yaml, '{') ? strchr(k->yaml, '{') : k->yaml);
    }
    if (st != CL_SUCCESS) {
        fprintf(stderr, "\nFAIL: stub_load: %s\n--- spec:\n%s--- log:\n"
                "%s\n", rt_status(st), k->yaml, log ? log : "(none)");
        fail(__LINE__, "kernel '%s' does not build: %s", k->ks->name,
             rt_status(st));
        free(log);
        return 0;
    }
    free(log);
    log = NULL;
    t0 = now();
    naive_stub(&the_naive, &the_rt, k->ks, &st, &log);
    if (verbose) {
        fprintf(stderr, "  build %-12s naive %6.2f s\n", k->ks->op->name,
                now() - t0);
    }
    if (st != CL_SUCCESS) {
        fprintf(stderr, "\nFAIL: naive_stub: %s\n--- spec:\n%s--- log:\n"
                "%s\n", rt_status(st), k->yaml, log ? log : "(none)");
        fail(__LINE__, "the naive kernels of '%s' do not build: %s",
             k->ks->name, rt_status(st));
        free(log);
        stub_unload(&k->stub);
        return 0;
    }
    free(log);
    k->built = 1;
    nu_stats.kernels++;
    return 1;
}

void nu_kernel_free(struct nu_kernel *k)
{
    if (k->built) {
        stub_unload(&k->stub);
        k->built = 0;
    }
    spec_set_free(&k->set);
    k->ks = NULL;
}

unsigned nu_compute_units(void)
{
    return the_rt.caps.compute_units;
}

void nu_plan_for(struct nu_kernel *k, enum target target, struct plan *p)
{
    struct diags d = {.out = stderr};
    CU_ASSERT(spec_set_target(&k->set, target, &d) == 0);
    memset(p, 0, sizeof *p);
    k->set.kernel[0].op->plan(&k->set.kernel[0], p);
}

long nu_knob(const struct nu_kernel *k, const char *key)
{
    return (long)spec_knob(k->ks, key);
}

long nu_small_path_rows(const struct nu_kernel *k)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    k->ks->op->plan(k->ks, &p);
    return p.n_path > 1 ? p.path[0].max_rows : 0;
}

int nu_path_limits(const struct nu_kernel *k, long *out, int max)
{
    struct plan p;
    int n = 0;
    memset(&p, 0, sizeof p);
    k->ks->op->plan(k->ks, &p);
    for (int i = 0; i + 1 < p.n_path && n < max; i++) {
        out[n++] = p.path[i].max_rows;
    }
    return n;
}

/* ---- rows -------------------------------------------------------------- */

int nu_rows_add(size_t *out, int n, long v)
{
    if (v < 1) {
        return n;
    }
    int i = 0;
    while (i < n && out[i] < (size_t)v) {
        i++;
    }
    if (i < n && out[i] == (size_t)v) {
        return n;
    }
    memmove(out + i + 1, out + i, (size_t)(n - i) * sizeof *out);
    out[i] = (size_t)v;
    return n + 1;
}

int nu_tile_rows(long tile, long large, size_t *out)
{
    int n = 0;
    n = nu_rows_add(out, n, 1);
    n = nu_rows_add(out, n, tile - 1);
    n = nu_rows_add(out, n, tile);
    n = nu_rows_add(out, n, tile + 1);
    n = nu_rows_add(out, n, large);
    return n;
}

struct vdist nu_unit(void)
{
    struct vdist d = {0.0, 1.0};
    return d;
}

/* ---- runs -------------------------------------------------------------- */

/* The bound of output I of C, whose float64 reference is REF (all
 * outputs): the op's (error_bound), or, in f16 and bf16, where rounding
 * REF itself to the storage type is off by more (outputs among the
 * subnormals, whose fixed spacing costs relative precision that no
 * kernel gets back; 1 where they all round to 0), that rounding's error
 * plus twice the op's f32 bound: a result y within the f32 bound before
 * its one rounding is off by at most |round(ref) - ref| + 2 |y - ref| in
 * each element. Outputs of float32 elements (plan_buffer_elem) are held
 * to the f32 bound in every dtype: no storage rounding enters them. */
static double output_bound(const struct vcase *c, const double *ref, int i)
{
    double bound = error_bound(c->ks);
    enum dtype dt = c->ks->dtype;
    size_t n = c->count[i];
    struct kernel_spec f32 = *c->ks;
    f32.dtype = DTYPE_F32;
    if (dt == DTYPE_F32) {
        return bound;
    }
    if (c->plan.buffer[i].elem == ELEM_F32) {
        return error_bound(&f32); /* float32 whatever the dtype */
    }
    float *rounded = malloc((n ? n : 1) * sizeof *rounded);
    if (rounded == NULL) {
        return bound;
    }
    const double *r = ref + c->out_at[i];
    for (size_t k = 0; k < n; k++) {
        rounded[k] = round_to_dtype((float)r[k], dt);
    }
    double honest = rel_l2(rounded, r, n) + 2 * error_bound(&f32);
    free(rounded);
    return honest > bound ? honest : bound;
}

long nu_define(const struct plan *p, const char *name)
{
    const struct define *d = plan_find_define(p, name);
    return d != NULL ? d->i : -1;
}

double nu_rel_l2_nans(const float *got, const double *ref, size_t n)
{
    float *g = malloc((n + 1) * sizeof *g);
    double *r = malloc((n + 1) * sizeof *r);
    size_t kept = 0;
    int same_nans = 1;
    double err = NAN;
    if (g != NULL && r != NULL) {
        for (size_t i = 0; i < n; i++) {
            if (isnan(ref[i]) || isnan(got[i])) {
                same_nans &= isnan(ref[i]) && isnan(got[i]);
                continue;
            }
            if (isinf(ref[i]) || isinf(got[i])) {
                same_nans &= (double)got[i] == ref[i];
                continue;
            }
            g[kept] = got[i];
            r[kept++] = ref[i];
        }
        err = same_nans ? rel_l2(g, r, kept) : NAN;
    }
    free(g);
    free(r);
    return err;
}

/* GOT against REF (all outputs of C), each output by its bound BOUNDS[i]
 * times SCALE (nu_rel_l2_nans: NaN where REF has it): returns whether all
 * are within; the error and the bound
 * of the output nearest its bound (or past it the most) into *ERR and
 * *BOUND. */
static int judge(const struct vcase *c, const float *got, const double *ref,
                 const double *bounds, double scale, double *err,
                 double *bound)
{
    double worst = -1;
    for (int o = 0; o < c->n_out; o++) {
        int i = c->outs[o];
        double e = nu_rel_l2_nans(got + c->out_at[i], ref + c->out_at[i],
                                  c->count[i]);
        double b = scale * bounds[i];
        double ratio = e / b;
        if (!(ratio <= worst)) { /* NaN counts as worst */
            worst = ratio;
            *err = e;
            *bound = b;
        }
    }
    return worst <= 1;
}

/* What one run found, for the report. */
struct outcome {
    const char *stage;   /* where an OpenCL call failed, or NULL */
    cl_int status;
    int canary_gen, canary_naive;
    double err_gen, err_naive, err_pair; /* of the output judged worst */
    double bound;       /* the generated kernel's, vs float64 */
    double naive_bound; /* the naive kernel's, vs float64 */
    double pair_bound;  /* generated vs naive */
    int ok_gen, ok_naive, ok_pair;
    double t_gen, t_naive; /* seconds, compiling at first launch included */
};

/* Runs the generated (NAIVE 0) or naive stub on B and reads y into OUT. */
static cl_int run_one(struct nu_kernel *k, const struct vcase *c,
                      const struct vbuffers *b, int naive, float *out,
                      int *canary_ok)
{
    cl_event done = NULL;
    cl_int st = CL_SUCCESS;
    struct stub *s = naive ? naive_stub(&the_naive, &the_rt, k->ks, &st, NULL)
                           : &k->stub;
    *canary_ok = 1;
    if (s != NULL) {
        st = stub_enqueue(s, the_rt.queue, c->sizes, b->mem, 0, NULL, &done);
    }
    cl_int fin = clFinish(the_rt.queue);
    if (done != NULL) {
        clReleaseEvent(done);
    }
    if (st == CL_SUCCESS) {
        st = fin;
    }
    if (st != CL_SUCCESS) {
        return st;
    }
    return vbuffers_read_output(&the_rt, c, b, out, canary_ok);
}

/* Relative L2 error of ROW of GOT against REF (ROW_LEN elements). */
static double row_error(const float *got, const double *ref, size_t row,
                        size_t row_len)
{
    return rel_l2(got + row * row_len, ref + row * row_len, row_len);
}

static void print_rows(const char *who, const float *got, const double *ref,
                       size_t rows, size_t row_len, double bound)
{
    int shown = 0;
    size_t bad = 0;
    for (size_t r = 0; r < rows; r++) {
        double e = row_error(got, ref, r, row_len);
        if (!(e <= bound)) {
            bad++;
        }
        if (!(e <= bound) && shown < SHOW_ROWS) {
            size_t worst = 0;
            double wd = -1;
            for (size_t i = 0; i < row_len; i++) {
                double v = got[r * row_len + i];
                double dd = isfinite(v) ? fabs(v - ref[r * row_len + i])
                                        : INFINITY;
                if (dd > wd) {
                    wd = dd;
                    worst = i;
                }
            }
            fprintf(stderr, "  %s row %zu: rel_l2 %.3g; worst [%zu] got "
                    "%.9g want %.9g\n", who, r, e, worst,
                    (double)got[r * row_len + worst], ref[r * row_len + worst]);
            shown++;
        }
    }
    fprintf(stderr, "  %s: %zu of %zu rows over the bound\n", who, bad, rows);
}

static void report(const struct nu_kernel *k, const struct vcase *c,
                   struct vdist dist, const struct outcome *o,
                   const float *got, const float *naive, const double *ref)
{
    /* Rows are printed of the last output. */
    size_t n = c->count[c->out], at = c->out_at[c->out];
    size_t row_len = c->rows ? n / c->rows : n;
    fprintf(stderr, "\nFAIL: kernel '%s' (%s, %s) sizes", k->ks->name,
            k->ks->op->name, dtype_name(k->ks->dtype));
    for (int i = 0; i < op_n_sizes(k->ks->op); i++) {
        fprintf(stderr, " %s %zu", op_size_name(k->ks->op, i), c->sizes[i]);
    }
    fprintf(stderr, " seed %lu x~U[%g%+g, %g%+g]", c->seed, dist.offset,
            -dist.spread, dist.offset, dist.spread);
    if (k->x_ramp != 0) {
        fprintf(stderr, " + %g * column / length", k->x_ramp);
    }
    fprintf(stderr, "\n");
    if (o->stage != NULL) {
        fprintf(stderr, "  %s: %s\n", o->stage, rt_status(o->status));
    }
    fprintf(stderr, "  generated vs float64 %.3g, naive vs float64 %.3g, "
            "generated vs naive %.3g (bounds %.3g, naive %.3g, pair %.3g)"
            "%s%s\n",
            o->err_gen, o->err_naive, o->err_pair, o->bound, o->naive_bound,
            o->pair_bound,
            o->canary_gen ? "" : "; GENERATED WROTE PAST ITS OUTPUT",
            o->canary_naive ? "" : "; naive wrote past its output");
    if (got != NULL && !(o->err_gen <= o->bound)) {
        print_rows("generated", got + at, ref + at, c->rows, row_len,
                   o->bound);
    }
    if (naive != NULL && !(o->err_naive <= o->naive_bound)) {
        print_rows("naive", naive + at, ref + at, c->rows, row_len,
                   o->naive_bound);
    }
    if (k->reference_only) {
        fprintf(stderr, "  (naive kernel not run: reference_only)\n");
    }
    fprintf(stderr, "--- spec:\n%s---\n", k->yaml);
}

/* A (all outputs of C) against B, each output by the sum of its bound
 * in BOUNDS and NAIVE_SLACK times that: whether all are within; the
 * worst error and its bound into *ERR and *BOUND. */
static int pair_within(const struct vcase *c, const float *a, const float *b,
                       const double *bounds, double *err, double *bound)
{
    size_t n = c->out_count;
    double *bd = malloc((n ? n : 1) * sizeof *bd);
    if (bd == NULL) {
        *err = INFINITY;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        bd[i] = b[i];
    }
    int ok = judge(c, a, bd, bounds, 1 + NAIVE_SLACK, err, bound);
    free(bd);
    return ok;
}

/* Runs both kernels on C; fills O. GOT and NAIVE hold out_count floats. */
static void run_case(struct nu_kernel *k, const struct vcase *c,
                     const double *ref, const double *bounds, float *got,
                     float *naive, struct outcome *o)
{
    struct vbuffers b;
    cl_int st = vbuffers_create(&the_rt, c, &b);
    if (st != CL_SUCCESS) {
        o->stage = "vbuffers_create";
        o->status = st;
        return;
    }
    double t0 = now();
    st = run_one(k, c, &b, 0, got, &o->canary_gen);
    o->t_gen = now() - t0;
    if (st != CL_SUCCESS && o->canary_gen) {
        o->stage = "generated kernel";
        o->status = st;
    }
    o->ok_gen = st == CL_SUCCESS &&
                judge(c, got, ref, bounds, 1, &o->err_gen, &o->bound);
    if (k->reference_only) {
        o->err_naive = o->err_pair = 0;
        o->ok_naive = o->ok_pair = 1;
        vbuffers_free(&b);
        return;
    }
    st = vbuffers_reset_output(&the_rt, c, &b);
    if (st == CL_SUCCESS) {
        t0 = now();
        st = run_one(k, c, &b, 1, naive, &o->canary_naive);
        o->t_naive = now() - t0;
    }
    if (st != CL_SUCCESS && o->canary_naive && o->stage == NULL) {
        o->stage = "naive kernel";
        o->status = st;
    }
    o->ok_naive = st == CL_SUCCESS &&
                  judge(c, naive, ref, bounds, NAIVE_SLACK, &o->err_naive,
                        &o->naive_bound);
    o->ok_pair =
        pair_within(c, got, naive, bounds, &o->err_pair, &o->pair_bound);
    vbuffers_free(&b);
}

/* Multiplies the input buffer NAME of C by BY and adds SHIFT (rounded
 * to the dtype; an int32 buffer's down to a whole number). */
static void scale_input(struct vcase *c, const char *name, double by,
                        double shift)
{
    for (int b = 0; b < c->plan.n_buffer; b++) {
        if (strcmp(c->plan.buffer[b].name, name) != 0 ||
            c->plan.buffer[b].role != BUFFER_IN || c->host[b] == NULL) {
            continue;
        }
        int whole = c->plan.buffer[b].elem == ELEM_I32;
        for (size_t i = 0; i < c->count[b]; i++) {
            double v = c->host[b][i] * by + shift;
            c->host[b][i] = whole ? (float)floor(v)
                                  : round_to_dtype((float)v, c->ks->dtype);
        }
    }
}

/* Adds RAMP * i / length to element i of each row of C's x. */
static void add_ramp(struct vcase *c, double ramp)
{
    for (int b = 0; b < c->plan.n_buffer; b++) {
        const struct plan_buffer *pb = &c->plan.buffer[b];
        if (strcmp(pb->name, "x") != 0 || pb->per <= 0 ||
            c->host[b] == NULL) {
            continue;
        }
        size_t len = (size_t)pb->per;
        for (size_t i = 0; i < c->count[b]; i++) {
            double v = c->host[b][i] + ramp * (double)(i % len) / (double)len;
            c->host[b][i] = round_to_dtype((float)v, c->ks->dtype);
        }
    }
}

int nu_run(struct nu_kernel *k, size_t rows, struct vdist dist)
{
    size_t sizes[SPECL_MAX_SIZES] = {0};
    if (!k->built) {
        return 0;
    }
    k->ks->op->bench_sizes(k->ks, sizes);
    sizes[0] = rows;
    return nu_run_sizes(k, sizes, dist);
}

int nu_run_sizes(struct nu_kernel *k, const size_t *sizes, struct vdist dist)
{
    return nu_run_seed(k, sizes, next_seed(), dist);
}

int nu_run_seed(struct nu_kernel *k, const size_t *sizes, unsigned long seed,
                struct vdist dist)
{
    struct vcase c;
    size_t rows = sizes[0];
    struct outcome o;
    if (!k->built) {
        return 0;
    }
    memset(&o, 0, sizeof o);
    o.canary_gen = o.canary_naive = 1;
    o.err_gen = o.err_naive = o.err_pair = INFINITY;
    o.bound = error_bound(k->ks);
    o.naive_bound = NAIVE_SLACK * o.bound;
    o.pair_bound = o.bound + o.naive_bound;
    nu_stats.cases++;
    if (vcase_init_sizes(&c, k->ks, sizes, seed, dist) < 0) {
        nu_stats.failed++;
        fail(__LINE__, "vcase_init: out of memory ('%s', rows %zu)",
             k->ks->name, rows);
        return 0;
    }
    if (k->x_ramp != 0) {
        add_ramp(&c, k->x_ramp);
    }
    if (k->scale_input != NULL) {
        scale_input(&c, k->scale_input, k->scale_by, k->shift_by);
    }
    if (k->fill != NULL) {
        k->fill(&c);
    }
    size_t n = c.out_count;
    double bounds[SPECL_MAX_BUFFERS] = {0};
    double *ref = vcase_reference(&c);
    float *got = calloc(n ? n : 1, sizeof *got);
    float *naive = calloc(n ? n : 1, sizeof *naive);
    if (ref == NULL || got == NULL || naive == NULL) {
        o.stage = "host memory";
        o.status = CL_OUT_OF_HOST_MEMORY;
    } else {
        for (size_t i = 0; i < n; i++) {
            got[i] = naive[i] = NAN;
        }
        for (int o_i = 0; o_i < c.n_out; o_i++) {
            bounds[c.outs[o_i]] = output_bound(&c, ref, c.outs[o_i]);
        }
        double t0 = now();
        run_case(k, &c, ref, bounds, got, naive, &o);
        if (verbose) {
            fprintf(stderr, "    rows %-6zu %6.2f s (generated %.2f, naive "
                    "%.2f)  err %.2g naive %.2g\n", rows, now() - t0,
                    o.t_gen, o.t_naive, o.err_gen, o.err_naive);
        }
    }
    /* Both agree with float64; then generated and naive may differ by
     * both their errors. */
    int ok = o.stage == NULL && o.canary_gen && o.canary_naive &&
             o.ok_gen && o.ok_naive && o.ok_pair;
    k->last_error = o.err_gen;
    k->last_bound = o.bound;
    if (!ok) {
        nu_stats.failed++;
        report(k, &c, dist, &o, ref ? got : NULL, ref ? naive : NULL, ref);
        fail(__LINE__, "'%s' %s %s rows %zu seed %lu: gen %.3g naive %.3g "
             "pair %.3g bound %.3g%s", k->ks->name, k->ks->op->name,
             dtype_name(k->ks->dtype), rows, seed, o.err_gen, o.err_naive,
             o.err_pair, o.bound, o.canary_gen ? "" : " canary");
    } else {
        CU_PASS("case");
    }
    free(ref);
    free(got);
    free(naive);
    vcase_free(&c);
    return ok;
}

int nu_run_rows(struct nu_kernel *k, const size_t *rows, int n,
                struct vdist dist)
{
    int passed = 0;
    for (int i = 0; i < n; i++) {
        passed += nu_run(k, rows[i], dist);
    }
    return passed;
}

int nu_check_naive(const struct kernel_spec *ks, const size_t *rows, int n)
{
    struct stub s;
    char *log = NULL;
    int passed = 0;
    if (!rt_ok) {
        fail(__LINE__, "no device");
        return 0;
    }
    cl_int st = stub_load_naive(&s, &the_rt, ks, &log);
    if (st != CL_SUCCESS) {
        fprintf(stderr, "\nFAIL: stub_load_naive '%s' (%s, %s): %s\n--- "
                "log:\n%s\n", ks->name, ks->op->name, dtype_name(ks->dtype),
                rt_status(st), log ? log : "(none)");
        fail(__LINE__, "the naive stub of '%s' (%s) does not build: %s",
             ks->name, dtype_name(ks->dtype), rt_status(st));
        free(log);
        return 0;
    }
    free(log);
    nu_stats.kernels++;
    for (int i = 0; i < n; i++) {
        struct vcase c;
        struct vbuffers b;
        unsigned long seed = next_seed();
        int canary_ok = 1, ok = 0;
        double err = INFINITY, bound = NAIVE_SLACK * error_bound(ks);
        double bounds[SPECL_MAX_BUFFERS] = {0};
        nu_stats.cases++;
        if (vcase_init(&c, ks, rows[i], seed, nu_unit()) < 0) {
            nu_stats.failed++;
            fail(__LINE__, "vcase_init: out of memory");
            continue;
        }
        size_t count = c.out_count;
        double *ref = vcase_reference(&c);
        float *got = calloc(count ? count : 1, sizeof *got);
        st = ref != NULL && got != NULL ? vbuffers_create(&the_rt, &c, &b)
                                        : CL_OUT_OF_HOST_MEMORY;
        if (st == CL_SUCCESS) {
            cl_event done = NULL;
            st = stub_enqueue(&s, the_rt.queue, c.sizes, b.mem, 0, NULL,
                              &done);
            cl_int fin = clFinish(the_rt.queue);
            if (done != NULL) {
                clReleaseEvent(done);
            }
            st = st != CL_SUCCESS ? st : fin;
            if (st == CL_SUCCESS) {
                st = vbuffers_read_output(&the_rt, &c, &b, got, &canary_ok);
            }
            vbuffers_free(&b);
        }
        if (st == CL_SUCCESS) {
            for (int o = 0; o < c.n_out; o++) {
                bounds[c.outs[o]] = output_bound(&c, ref, c.outs[o]);
            }
            ok = judge(&c, got, ref, bounds, NAIVE_SLACK, &err, &bound);
        }
        if (st == CL_SUCCESS && ok) {
            passed++;
            CU_PASS("naive case");
        } else {
            nu_stats.failed++;
            fail(__LINE__, "naive '%s' %s %s rows %zu seed %lu: %s, error "
                 "%.3g (bound %.3g)%s", ks->name, ks->op->name,
                 dtype_name(ks->dtype), rows[i], seed, rt_status(st), err,
                 bound, canary_ok ? "" : ", wrote past its output");
        }
        free(ref);
        free(got);
        vcase_free(&c);
    }
    stub_unload(&s);
    return passed;
}
