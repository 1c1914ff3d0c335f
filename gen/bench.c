/* bench.c - `specl bench`: the emitted kernels side by side with the naive
 * kernels and CLBlast on one device, against the device's own ceilings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "clblast.h"
#include "knobs.h"
#include "measure.h"
#include "spec.h"
#include "tunedb.h"
#include "variant.h"

/* Clears stderr's progress line before anything else is printed there. */
static void progress_clear(void);

/* Whether stdout's last line is unfinished: a --json row waits for the
 * comma that goes after it, or the closing bracket. */
static int stdout_line_open;

struct bench_opts {
    const char *device;
    long rows;          /* 0: per op default */
    int reps;           /* timed runs per variant */
    int csv, json, quick;
    int no_naive;
    int verbose;        /* the per-kernel detail: floor, copy, knobs */
    const char *kernel; /* only this kernel; NULL: all */
    const char *db;     /* tuning database for tile: auto / untiled */
    int n_size;         /* --size NAME=N: runtime sizes by name */
    char size_name[SPECL_MAX_SIZES][32];
    long size_value[SPECL_MAX_SIZES];
};

/* KS's runtime sizes: the op's bench sizes, the first --rows, then each
 * --size; 0 when a --size names none of the op's sizes (said on stderr). */
static int bench_sizes_of(const struct bench_opts *o,
                          const struct kernel_spec *ks, size_t *sizes)
{
    memset(sizes, 0, SPECL_MAX_SIZES * sizeof *sizes);
    ks->op->bench_sizes(ks, sizes);
    sizes[0] = (size_t)(o->rows > 0 ? o->rows : measure_default_rows(ks));
    for (int i = 0; i < o->n_size; i++) {
        int at = op_size_index(ks->op, o->size_name[i]);
        if (at < 0) {
            char names[128];
            sizes_text(ks->op, (1u << op_n_sizes(ks->op)) - 1, ", ", names,
                       sizeof names);
            progress_clear();
            fprintf(stderr, "specl: bench: %s: op %s has no runtime size "
                    "'%s' (its sizes: %s)\n", ks->name, ks->op->name,
                    o->size_name[i], names);
            return 0;
        }
        sizes[at] = (size_t)o->size_value[i];
    }
    return 1;
}

/* The SGEMMs of the case being measured (the op's blas_peer); bench
 * measures one case at a time. */
static struct gemm_chain peer_chain;

/* A gemm operand: the plan buffer NAME of buffer set SET, or one of the
 * chain's temporaries; NULL if the case has no such buffer. */
static cl_mem gemm_operand(const struct measure_case *bc, int set,
                           const char *name)
{
    if (strcmp(name, "temp") == 0) {
        return bc->t[set];
    }
    if (strcmp(name, "temp2") == 0) {
        return bc->t2[set];
    }
    int i = buffer_named(&bc->vc, name);
    return i >= 0 ? bc->sets[set].mem[i] : NULL;
}

/* CLBlast: the op's chain of SGEMMs (HGEMMs for f16 storage), what a user
 * would write without specl. */
static cl_int run_clblast(void *p, int set, struct run_events *r)
{
    cl_event *events = r->ev;
    int *n = &r->n;
    struct measure_case *bc = p;
    cl_command_queue q = bc->rt->queue;
    int s = CLBLAST_SUCCESS;
    *n = 0;
    for (int i = 0; i < peer_chain.n_gemm && s == CLBLAST_SUCCESS; i++) {
        const struct gemm *g = &peer_chain.gemm[i];
        cl_mem a = gemm_operand(bc, set, g->a);
        cl_mem b = gemm_operand(bc, set, g->b);
        cl_mem c = gemm_operand(bc, set, g->c);
        if (a == NULL || b == NULL || c == NULL) {
            for (int e = 0; e < *n; e++) {
                clReleaseEvent(events[e]);
            }
            *n = 0;
            return CL_INVALID_MEM_OBJECT;
        }
        /* Row-major leading dimensions: the stored rows' lengths. */
        size_t lda = g->trans_a ? g->m : g->k, ldb = g->trans_b ? g->k : g->n;
        if (bc->vc.ks->dtype == DTYPE_F16) {
            s = clblast_hgemm(g->trans_a, g->trans_b, g->m, g->n, g->k,
                              float_to_half((float)g->alpha), a, 0, lda, b, 0,
                              ldb, float_to_half((float)g->beta), c, 0, g->n,
                              &q, &events[(*n)++]);
        } else {
            s = clblast_sgemm(g->trans_a, g->trans_b, g->m, g->n, g->k,
                              (float)g->alpha, a, 0, lda, b, 0, ldb,
                              (float)g->beta, c, 0, g->n, &q,
                              &events[(*n)++]);
        }
    }
    if (s != CLBLAST_SUCCESS) {
        (*n)--;
        for (int e = 0; e < *n; e++) {
            clReleaseEvent(events[e]);
        }
        *n = 0;
        return s < 0 ? (cl_int)s : CL_INVALID_OPERATION;
    }
    return CL_SUCCESS;
}

static void shape_text(const struct vcase *c, char *s, size_t size)
{
    c->ks->op->shape_text(c->ks, c->sizes, s, size);
}

/* What every variant of a case is held against. */
struct case_figures {
    double bytes, flops; /* the fewest the op moves and does */
    double copy_us;      /* a copy of the same bytes (memory-bound cases);
                            0: not measured */
    struct case_floor floor; /* from the device's ceilings */
};

/* ---- --csv and --json ------------------------------------------------- */

#define MAX_DIMENSIONS 16

/* The shape columns after rows: every whole-number field of any op that
 * counts something, from 1 up (in_features, out_features, rank,
 * features, heads, head_dim, rotary_dim, vocab, kv_heads; not
 * cross_entropy's ignore_index), in registry order. */
static int dimension_keys(const char **keys)
{
    int n = 0;
    for (int i = 0; op_registry[i] != NULL; i++) {
        const struct op_def *op = op_registry[i];
        for (int f = 0; f < op->n_fields; f++) {
            const char *key = op->fields[f].key;
            int seen = op->fields[f].kind != VALUE_INT ||
                       op->fields[f].min < 1;
            for (int k = 0; k < n && !seen; k++) {
                seen = strcmp(keys[k], key) == 0;
            }
            if (!seen && n < MAX_DIMENSIONS) {
                keys[n++] = key;
            }
        }
    }
    return n;
}

/* A row of --csv or --json being written: a CSV line, or a JSON object
 * of the same columns by name. */
struct row_writer {
    struct buf *b;
    int json;
    int n; /* columns so far */
};

static void column_start(struct row_writer *w, const char *name)
{
    if (w->json) {
        buf_printf(w->b, "%s\"%s\":", w->n ? "," : "{", name);
    } else if (w->n) {
        buf_puts(w->b, ",");
    }
    w->n++;
}

static void column_text(struct row_writer *w, const char *name,
                        const char *text)
{
    column_start(w, name);
    if (w->json) {
        cli_json_string(w->b, text);
    } else {
        cli_csv_field(w->b, text);
    }
}

/* V with DIGITS after the point when HAS is set and V is finite; else
 * csv's empty field, json's null. */
static void column_number(struct row_writer *w, const char *name, int has,
                          int digits, double v)
{
    column_start(w, name);
    if (has && isfinite(v)) {
        buf_printf(w->b, "%.*f", digits, v);
    } else if (w->json) {
        buf_puts(w->b, "null");
    }
}

/* V to DIGITS significant digits when finite (an error is not otherwise:
 * NaN until verified). */
static void column_significant(struct row_writer *w, const char *name,
                               int digits, double v)
{
    column_start(w, name);
    if (isfinite(v)) {
        buf_printf(w->b, "%.*g", digits, v);
    } else if (w->json) {
        buf_puts(w->b, "null");
    }
}

static void column_bool(struct row_writer *w, const char *name, int v)
{
    column_start(w, name);
    buf_puts(w->b, w->json ? (v ? "true" : "false") : (v ? "1" : "0"));
}

static void print_header(void)
{
    const char *keys[MAX_DIMENSIONS];
    int n = dimension_keys(keys);
    printf("kernel,op,dtype,device,rows");
    for (int k = 0; k < n; k++) {
        printf(",%s", keys[k]);
    }
    printf(",variant,ok,error,us,wall_us,gbs,gflops,pct_floor,floor_us,"
           "floor_gflops,floor_tensor,copy_us,vs_naive,vs_clblast,note,"
           "path\n");
}

/* One result as a row of --csv or --json (the line buffering shows it as
 * soon as it is measured). */
static void print_data_row(const struct bench_opts *o, const struct rt *rt,
                           const struct vcase *c, const struct result *r,
                           const struct result *naive,
                           const struct result *blas,
                           const struct case_figures *figures, int *first)
{
    const struct kernel_spec *ks = c->ks;
    const char *keys[MAX_DIMENSIONS];
    int n_keys = dimension_keys(keys);
    struct buf b;
    buf_init(&b);
    struct row_writer w = {&b, o->json, 0};
    if (o->json) {
        buf_puts(&b, *first ? "[\n" : ",\n");
    } else if (*first) {
        print_header();
    }
    column_text(&w, "kernel", ks->name);
    column_text(&w, "op", ks->op->name);
    column_text(&w, "dtype", dtype_name(ks->dtype));
    column_text(&w, "device", rt->name);
    column_number(&w, "rows", 1, 0, (double)c->rows);
    for (int k = 0; k < n_keys; k++) {
        int f = op_field_index(ks->op, keys[k]);
        /* An unset stand-in (rope's rotary_dim: head_dim): empty. */
        int given = f >= 0 && (ks->field[f].set ||
                               !param_stand_in(&ks->op->fields[f]));
        column_number(&w, keys[k], given, 0, given ? ks->field[f].num : 0);
    }
    int timed = r->ok && r->us > 0;
    column_text(&w, "variant", r->variant);
    column_bool(&w, "ok", r->ok);
    column_significant(&w, "error", 3, r->err);
    column_number(&w, "us", r->ok, 2, r->us);
    column_number(&w, "wall_us", r->ok, 2, r->wall_us);
    column_number(&w, "gbs", timed, 1,
                  timed ? figures->bytes / (r->us * 1e3) : 0);
    column_number(&w, "gflops", timed, 1,
                  timed ? figures->flops / (r->us * 1e3) : 0);
    column_number(&w, "pct_floor", timed, 1,
                  timed ? 100.0 * figures->floor.us / r->us : 0);
    /* The case's, on each of its rows as its dimensions are. */
    column_number(&w, "floor_us", 1, 2, figures->floor.us);
    column_number(&w, "floor_gflops", 1, 0, figures->floor.gflops);
    column_bool(&w, "floor_tensor", figures->floor.tensor);
    column_number(&w, "copy_us", figures->copy_us > 0, 2, figures->copy_us);
    column_number(&w, "vs_naive", timed && naive->ok, 2,
                  timed ? naive->us / r->us : 0);
    column_number(&w, "vs_clblast", timed && blas->ok, 2,
                  timed ? blas->us / r->us : 0);
    column_text(&w, "note", r->note);
    column_number(&w, "path", r->stub_path >= 0, 0, (double)r->stub_path);
    buf_puts(&b, o->json ? "}" : "\n");
    fputs(buf_str(&b), stdout);
    fflush(stdout);
    buf_free(&b);
    stdout_line_open = o->json;
    *first = 0;
}

/* ---- progress on stderr ---------------------------------------------- */

static double bench_clock_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Whether stderr's terminal line shows which kernel runs. */
static int progress_shown;

/* Whether progress is one line on stderr's terminal, redrawn: not when
 * stdout is a pipe, whose reader (tee) may print the rows on that same
 * terminal at any time, into the line; there, as into a file, it is a
 * line per finished kernel. */
static int progress_in_place(void)
{
    struct stat st;
    int piped = fstat(fileno(stdout), &st) == 0 &&
                (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
    return cli_is_terminal(stderr) && !piped;
}

/* Clears that line before anything else is printed on the terminal. */
static void progress_clear(void)
{
    if (progress_shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        progress_shown = 0;
    }
}

/* On a terminal: which kernel runs, a line the next output overwrites,
 * drawn below a row stdout left unfinished on the same terminal (it
 * would overwrite that row). */
static void progress_start(int i, int n, const char *name)
{
    if (progress_in_place()) {
        if (stdout_line_open && cli_is_terminal(stdout)) {
            fputs("\n", stdout); /* whitespace between JSON's tokens */
            fflush(stdout);
            stdout_line_open = 0;
        }
        fprintf(stderr, "\rspecl bench: kernel %d/%d: %s ...\033[K", i, n,
                name);
        fflush(stderr);
        progress_shown = 1;
    }
}

/* On a terminal the progress line is cleared; redirected (or stdout
 * piped), stderr gets one line per finished kernel, so that a long run
 * is not silent. */
static void progress_end(int i, int n, const char *name, int failed,
                         double seconds)
{
    if (progress_in_place()) {
        progress_clear();
    } else {
        fprintf(stderr, "specl bench: kernel %d/%d: %s %s (%.1f s)\n", i, n,
                name, failed ? "failed" : "done", seconds);
    }
    fflush(stderr);
}

/* ---- the table -------------------------------------------------------- */

/* The header of the compact table. */
static void print_compact_header(void)
{
    printf("%-24s %-8s %11s %16s %7s  %-10s  %s\n", "kernel", "variant",
           "time", "rate", "%floor", "verified", "vs peer");
}

/* RATE (bytes or flops per microsecond, over 1e3: G/s) in the unit a
 * reader expects: GB/s for a memory-bound case, TFLOP/s (GFLOP/s below
 * one) for a compute-bound one. */
static void rate_text(const struct case_figures *figures, double us,
                      char *s, size_t size)
{
    if (figures->floor.memory_bound) {
        snprintf(s, size, "%.1f GB/s", figures->bytes / (us * 1e3));
        return;
    }
    double gflops = figures->flops / (us * 1e3);
    if (gflops >= 1000) {
        snprintf(s, size, "%.2f TFLOP/s", gflops / 1e3);
    } else {
        snprintf(s, size, "%.1f GFLOP/s", gflops);
    }
}

/* One line per variant: kernel, variant, time, rate, share of the
 * floor, "ok" and the error against float64 it verified with, and for
 * specl's row how many times faster than its peer (CLBlast where it
 * ran, else the naive kernel). A variant that failed (verification
 * included) has no figures: its note says why ("WRONG: error ..."). */
static void print_compact_row(const struct vcase *c, const struct result *r,
                              const struct result *naive,
                              const struct result *blas,
                              const struct case_figures *figures)
{
    const char *kernel = c->ks->name;
    if (!r->ok) {
        printf("%-24s %-8s %11s  %s\n", kernel, r->variant, "-",
               r->note[0] ? r->note : "skipped");
        return;
    }
    char time[24], rate[32], peer[48] = "", verified[24];
    snprintf(time, sizeof time, "%.1f us", r->us);
    snprintf(verified, sizeof verified, "ok %.1e", r->err);
    rate_text(figures, r->us, rate, sizeof rate);
    const struct result *p = blas->ok ? blas : naive->ok ? naive : NULL;
    if (r != naive && r != blas && p != NULL) {
        snprintf(peer, sizeof peer, "%.2fx %s", p->us / r->us, p->variant);
    }
    printf("%-24s %-8s %11s %16s %6.1f%%  %-10s%s%s%s%s\n", kernel,
           r->variant, time, rate, 100.0 * figures->floor.us / r->us,
           verified, peer[0] ? "  " : "", peer, r->note[0] ? "  " : "",
           r->note);
}

static void print_row(const struct bench_opts *o, const struct rt *rt,
                      const struct vcase *c, const struct result *r,
                      const struct result *naive, const struct result *blas,
                      const struct case_figures *figures, int *first)
{
    progress_clear();
    if (o->csv || o->json) {
        print_data_row(o, rt, c, r, naive, blas, figures, first);
        return;
    }
    if (!o->verbose) {
        if (*first) {
            print_compact_header();
        }
        print_compact_row(c, r, naive, blas, figures);
        *first = 0;
        return;
    }
    double gbs = r->ok ? figures->bytes / (r->us * 1e3) : 0;
    double gfl = r->ok ? figures->flops / (r->us * 1e3) : 0;
    double pct = r->ok ? 100.0 * figures->floor.us / r->us : 0;
    double vs_naive = naive->ok && r->ok ? naive->us / r->us : 0;
    double vs_blas = blas->ok && r->ok ? blas->us / r->us : 0;
    if (r->ok) {
        char naive_col[16] = "-", blas_col[16] = "-";
        if (vs_naive > 0) {
            snprintf(naive_col, sizeof naive_col, "%.2fx", vs_naive);
        }
        if (vs_blas > 0) {
            snprintf(blas_col, sizeof blas_col, "%.2fx", vs_blas);
        }
        printf("  %-8s %10.1f %10.1f %9.1f %9.1f %6.1f%% %9s %8s %9.2g%s%s\n",
               r->variant, r->us, r->wall_us, gbs, gfl, pct, naive_col,
               blas_col, r->err, r->note[0] ? "  " : "", r->note);
    } else {
        printf("  %-8s %s\n", r->variant, r->note[0] ? r->note : "skipped");
    }
    *first = 0;
}

/* The lines above a case's table: its shape, the floor and, for a
 * memory-bound case, the copy of the same bytes. */
static void print_case_head(const struct kernel_spec *ks,
                            const struct measure_case *mc,
                            const struct ceilings *ceil,
                            const struct case_figures *figures,
                            const struct result *copy, double copy_bytes)
{
    const struct case_floor *fl = &figures->floor;
    char shape[96];
    progress_clear();
    shape_text(&mc->vc, shape, sizeof shape);
    printf("\n%s  %s %s %s\n", ks->name, ks->op->name, shape,
           dtype_name(ks->dtype));
    printf("  floor %.1f us, %s-bound: %.1f MB at %.0f GB/s = %.1f us; "
           "%.2f GFLOP at %.0f GFLOP/s (%s) = %.1f us\n",
           fl->us, fl->memory_bound ? "memory" : "compute",
           mc->bytes / 1e6, ceil->copy_gbs, fl->bytes_us, mc->flops / 1e9,
           fl->gflops,
           fl->tensor ? "tensor cores, capability table" : "fp32, measured",
           fl->flops_us);
    if (copy->ok) {
        /* Tiny cases copy at well under 1 GB/s: digits enough that the
         * figure never reads as 0. */
        double gbs = copy_bytes / (copy->us * 1e3);
        printf("  copy of the same bytes: %.1f us (%.*f GB/s)\n", copy->us,
               gbs < 1 ? 3 : gbs < 10 ? 1 : 0, gbs);
    } else if (fl->memory_bound) {
        printf("  copy of the same bytes: not measured (%s)\n", copy->note);
    }
    printf("  %-8s %10s %10s %9s %9s %7s %9s %8s %9s\n", "variant",
           "time_us", "wall_us", "GB/s", "GFLOP/s", "%floor", "vs_naive",
           "vs_blas", "error");
}

/* The naive kernels' column: built, verified and timed into R. */
static void bench_naive(const struct bench_opts *o, const struct rt *rt,
                        struct measure_case *mc, struct result *r)
{
    if (o->no_naive) {
        snprintf(r->note, sizeof r->note, "skipped (--no-naive)");
        return;
    }
    char *naive_log = NULL;
    cl_int err = mcase_load_naive(mc, &naive_log);
    if (err != CL_SUCCESS) {
        progress_clear();
        fprintf(stderr, "%s: naive kernels: build log:\n%s\n", mc->vc.ks->name,
                naive_log ? naive_log : "");
        snprintf(r->note, sizeof r->note, "build failed: %s",
                 rt_status(err));
    } else {
        verify_variant(mc, run_naive, r);
    }
    if (r->ok) {
        time_variant(rt, run_naive, mc, mc->n_sets, o->reps, r);
    }
    free(naive_log);
}

/* CLBlast's column: verified and timed into R, or why there is none. */
static void bench_blas(const struct bench_opts *o, const struct rt *rt,
                       struct measure_case *mc, size_t rows, struct result *r)
{
    const struct kernel_spec *ks = mc->vc.ks;
    /* CLBlast multiplies f32 (SGEMM) and f16 (HGEMM, on devices with
     * cl_khr_fp16); it has no bf16 GEMM. */
    const char *no_peer = NULL;
    if (ks->op->blas_peer == NULL) {
        no_peer = "no such primitive in CLBlast";
    } else if (ks->dtype == DTYPE_BF16) {
        no_peer = "no bf16 GEMM in CLBlast";
    } else if (ks->dtype == DTYPE_F16 &&
               caps_lacking(CAP_FP16, rt->caps.have) != 0) {
        no_peer = "CLBlast's HGEMM needs cl_khr_fp16, which the device lacks";
    }
    /* Without CLBlast the row says why and how to get it. */
    if (no_peer != NULL || clblast_load(r->note, sizeof r->note) != 0) {
        if (r->note[0] == '\0') {
            snprintf(r->note, sizeof r->note, "%s", no_peer);
        }
        return;
    }
    memset(&peer_chain, 0, sizeof peer_chain);
    ks->op->blas_peer(ks, rows, &peer_chain);
    /* the temporaries in the storage dtype, as HGEMM's operands */
    size_t es = dtype_size(ks->dtype);
    size_t temp = peer_chain.temp_per_row;
    size_t temp2 = peer_chain.temp2_per_row;
    cl_int err = CL_SUCCESS;
    for (int s = 0; s < mc->n_sets && err == CL_SUCCESS; s++) {
        if (temp > 0) {
            mc->t[s] = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE,
                                      rows * temp * es, NULL, &err);
        }
        if (temp2 > 0 && err == CL_SUCCESS) {
            mc->t2[s] = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE,
                                       rows * temp2 * es, NULL, &err);
        }
    }
    verify_variant(mc, run_clblast, r);
    if (r->ok) {
        time_variant(rt, run_clblast, mc, mc->n_sets, o->reps, r);
    }
}

static int bench_kernel(const struct bench_opts *o, const struct rt *rt,
                        const struct ceilings *ceil, struct naive_stubs *naive,
                        const struct variant_set *vs, int *first)
{
    const struct kernel_spec *ks = &vs->v[0].ks;
    struct measure_case mc;
    char *log = NULL;
    int failed = 0;
    size_t sizes[SPECL_MAX_SIZES];
    if (!bench_sizes_of(o, ks, sizes)) {
        return 1;
    }
    size_t rows = sizes[0];
    cl_int err = mcase_init_sizes(&mc, rt, naive, ks, sizes, 20261122,
                                  !o->quick);
    if (err != CL_SUCCESS) {
        progress_clear();
        fprintf(stderr, "specl: bench: %s: cannot set up %zu rows: %s\n",
                ks->name, rows, rt_status(err));
        return 1;
    }
    struct result res[3];
    memset(res, 0, sizeof res);
    for (int i = 0; i < 3; i++) {
        res[i].stub_path = -1; /* the naive and CLBlast rows have none */
    }
    for (int i = 0; i < 3; i++) {
        res[i].err = NAN; /* until verified */
    }
    res[0].variant = "specl";
    res[1].variant = "naive";
    res[2].variant = "clblast";
    /* CLBlast's events cover only the last kernel of each routine. */
    res[2].host_timed = 1;

    struct case_figures figures;
    memset(&figures, 0, sizeof figures);
    case_floor(ceil, &rt->caps, ks, mc.bytes, mc.flops, &figures.floor);
    figures.bytes = mc.bytes;
    figures.flops = mc.flops;
    int memory_bound = figures.floor.memory_bound;
    /* The floor's big-buffer rate flatters a copy of a case's size (a
     * kernel ramps up and drains): a copy of the same bytes on as many
     * buffer pairs as the case has sets says how close it comes to memory
     * speed at that size. */
    struct result copy;
    double copy_bytes = 0;
    memset(&copy, 0, sizeof copy);
    if (memory_bound) {
        err = measure_copy(rt, mc.bytes, mc.n_sets, o->reps, &copy,
                           &copy_bytes);
        if (err != CL_SUCCESS) {
            progress_clear();
            fprintf(stderr, "specl: bench: %s: copy of the same bytes: %s\n",
                    ks->name, rt_status(err));
            failed = 1;
        }
        if (copy.ok) {
            figures.copy_us = copy.us;
        }
    }
    int detail = o->verbose && !o->csv && !o->json;
    if (detail) {
        print_case_head(ks, &mc, ceil, &figures, &copy, copy_bytes);
    }
    enum stub_outcome got = measure_stub(&mc, vs, o->reps, &res[0], &log);
    if (got == STUB_BUILD_FAILED) {
        progress_clear();
        fprintf(stderr, "%s: build log:\n%s\n", ks->name, log ? log : "");
    }
    failed |= got != STUB_TIMED;
    bench_naive(o, rt, &mc, &res[1]);
    bench_blas(o, rt, &mc, rows, &res[2]);
    for (int i = 0; i < 3; i++) {
        print_row(o, rt, &mc.vc, &res[i], &res[1], &res[2], &figures,
                  first);
    }
    if (detail && got == STUB_TIMED && copy.ok) {
        printf("  specl at %.0f%% of that copy\n",
               100.0 * copy.us / res[0].us);
    }
    if (detail && got != STUB_BUILD_FAILED) {
        /* What ran at these rows, as gen's NAME.c would: the variant
         * NAME_create chose on this device, or its rows range's. */
        const struct variant *v = &vs->v[res[0].stub_variant];
        char knobs[TUNE_TEXT];
        knobs_text(&v->ks, knobs, sizeof knobs);
        printf("  specl ran variant %d of %d (%s): %s\n",
               res[0].stub_variant, vs->n, v->label, knobs);
        if (res[0].stub_path >= 0) {
            printf("  at these rows its path %d: %s\n", res[0].stub_path,
                   res[0].path_why);
        }
    }
    free(log);
    mcase_free(&mc);
    return failed;
}

/* The rate the floors of f16 and bf16 GEMMs count flops at on a device
 * with tensor cores, and where it comes from (nothing where the
 * capability table has no entry for the device). */
static void print_tensor_rate(const struct device_caps *caps)
{
    double gflops = caps_tensor_gflops(caps);
    if (gflops > 0) {
        printf("f16/bf16 GEMM floors: tensor cores %.0f GFLOP/s (capability "
               "table, not measured: %.0f flops per SM per clock x %u SMs x "
               "%u MHz)\n",
               gflops,
               caps_tensor_flops_per_clock(caps->compute_capability),
               caps->compute_units, caps->max_clock_mhz);
    }
}

static const char bench_usage[] =
    "usage: specl bench [OPTION]... SPEC.yaml...\n"
    "\n"
    "Times each kernel of the spec files as gen emits it (every variant,\n"
    "NAME_create picking one), the naive kernel and, where the op has a\n"
    "CLBlast peer (f32), CLBlast, on one device and on the same inputs,\n"
    "each verified against float64 first; against the floor of the\n"
    "device's bandwidth and fp32 rate, measured in the same run (for f16\n"
    "and bf16 GEMMs and attention on NVIDIA tensor cores of compute\n"
    "capability 8.0 or 9.0, their rate from specl's capability table). A\n"
    "spec file '-' is standard input.\n"
    "\n"
    "Options:\n"
    "      --device N|P:D  the device ('specl devices'; default:\n"
    "                      $SPECL_DEVICE, else the first)\n"
    "      --kernel NAME   only that kernel\n"
    "      --rows M        rows of every kernel (default: the op's): its\n"
    "                      first runtime size\n"
    "      --size NAME=N   runtime size NAME of every kernel, 1 to\n"
    "                      2147483647 (attention's seq_q=1 for decode);\n"
    "                      repeatable\n"
    "      --reps N        timed runs per variant, 1 to 1000 (default 50)\n"
    "      --quick         10 reps (unless --reps) and one buffer set\n"
    "      --no-naive      leave out the naive kernels\n"
    "      --db FILE       the tuning database's entries as variants, as\n"
    "                      gen --db emits them\n"
    "      --csv           one CSV row per kernel and variant (RFC 4180)\n"
    "      --json          a JSON array of the same rows\n"
    "  -v, --verbose       per kernel: the floor, the copy of the same\n"
    "                      bytes, wall time, error, the knobs specl ran,\n"
    "                      and the OpenCL compiler's messages\n"
    "  -h, --help          this text\n"
    "\n"
    "Columns of --csv and --json: kernel, op, dtype, device, rows, one per\n"
    "dimension of any op (in_features, out_features, rank, features, heads,\n"
    "head_dim, rotary_dim, vocab: empty or null where the kernel's op has no\n"
    "such dimension, or the spec leaves rotary_dim to head_dim), variant\n"
    "(specl, naive, clblast), ok, error (relative L2 error against\n"
    "float64), us, wall_us, gbs, gflops, pct_floor, floor_us,\n"
    "floor_gflops (the rate the floor counts flops at), floor_tensor (that\n"
    "rate is the tensor cores' from the capability table, not the fp32\n"
    "rate measured), copy_us (a plain copy of the same bytes, on every\n"
    "row of a memory-bound kernel), vs_naive, vs_clblast (how many times\n"
    "faster than that variant), note, path (on the specl row: which of\n"
    "its variant's paths ran, as NAME_path_index picks it; -v says what\n"
    "it is). A figure that does not apply (a variant that did not run or\n"
    "failed, no naive or CLBlast peer, no copy for a compute-bound kernel)\n"
    "is empty in CSV and null in JSON.\n"
    "\n"
    "The table has one line per kernel and variant: time (median of the\n"
    "profiling events), rate (GB/s for a memory-bound kernel, else\n"
    "FLOP/s), share of the floor, verified (ok and the relative L2 error\n"
    "against float64; one that failed says WRONG and its error instead\n"
    "of figures), and for specl how many times faster than its peer\n"
    "(CLBlast where it ran, else the naive kernel).\n"
    "\n"
    "Rows are written as each kernel is measured. On a terminal, stderr\n"
    "shows which kernel runs; redirected, or with stdout piped, it gets\n"
    "one line per kernel as each finishes.\n";

enum {
    OPT_DEVICE = 256,
    OPT_ROWS,
    OPT_REPS,
    OPT_KERNEL,
    OPT_DB,
    OPT_CSV,
    OPT_JSON,
    OPT_QUICK,
    OPT_NO_NAIVE,
    OPT_SIZE,
    OPT_VERBOSE = 'v'
};

static const struct cli_option bench_options[] = {
    {"device", OPT_DEVICE, 1},
    {"rows", OPT_ROWS, 1},
    {"reps", OPT_REPS, 1},
    {"kernel", OPT_KERNEL, 1},
    {"db", OPT_DB, 1},
    {"csv", OPT_CSV, 0},
    {"json", OPT_JSON, 0},
    {"quick", OPT_QUICK, 0},
    {"no-naive", OPT_NO_NAIVE, 0},
    {"size", OPT_SIZE, 1},
    {"verbose", OPT_VERBOSE, 0},
    {NULL, 0, 0},
};

/* --size NAME=N of C into O; nonzero (said) when malformed. */
static int parse_size(const struct cli *c, struct bench_opts *o)
{
    const char *eq = strchr(c->value, '=');
    char *end = NULL;
    long v = eq != NULL ? strtol(eq + 1, &end, 10) : 0;
    if (eq == NULL || eq == c->value || end == eq + 1 || *end != '\0' ||
        v < 1 || v > 2147483647L || o->n_size == SPECL_MAX_SIZES) {
        fprintf(stderr, "specl bench: error: --size needs NAME=N, N a whole "
                "number in [1, 2147483647], at most %d of them (got '%s')\n",
                SPECL_MAX_SIZES, c->value);
        return 1;
    }
    snprintf(o->size_name[o->n_size], sizeof o->size_name[0], "%.*s",
             (int)(eq - c->value), c->value);
    o->size_value[o->n_size++] = v;
    return 0;
}

/* Reads bench's command line C into O: -1 to go on, else the exit status
 * (0 after --help). */
static int parse_bench(struct cli *c, struct bench_opts *o)
{
    long reps = 0;
    int key;
    while ((key = cli_next(c)) != CLI_END) {
        int bad = 0;
        switch (key) {
        case CLI_HELP:
            return 0;
        case CLI_ERROR:
            return CLI_EXIT_USAGE;
        case OPT_DEVICE:
            bad = cli_device(c);
            o->device = c->value;
            break;
        case OPT_ROWS:
            bad = cli_long(c, 1, 1L << 24, &o->rows);
            break;
        case OPT_REPS:
            bad = cli_long(c, 1, MAX_REPS, &reps);
            break;
        case OPT_KERNEL:
            o->kernel = c->value;
            break;
        case OPT_DB:
            o->db = c->value;
            break;
        case OPT_CSV:
            o->csv = 1;
            break;
        case OPT_JSON:
            o->json = 1;
            break;
        case OPT_QUICK:
            o->quick = 1;
            break;
        case OPT_NO_NAIVE:
            o->no_naive = 1;
            break;
        case OPT_SIZE:
            bad = parse_size(c, o);
            break;
        case OPT_VERBOSE:
            o->verbose = 1;
            break;
        }
        if (bad) {
            return CLI_EXIT_USAGE;
        }
    }
    if (o->csv && o->json) {
        return cli_usage_error(c->cmd,
                               "--csv and --json exclude each other");
    }
    o->reps = reps > 0 ? (int)reps : o->quick ? 10 : 50;
    return -1;
}

int specl_bench_main(int argc, char **argv);

/* `specl bench ARGS...` (ARGV[0]: "bench"): every argument is checked,
 * the specs read, the kernel found and the database loaded before the
 * device is opened. */
int specl_bench_main(int argc, char **argv)
{
    struct bench_opts o = {.reps = 50};
    struct cli c = {.cmd = "bench",
                    .usage = bench_usage,
                    .options = bench_options,
                    .argc = argc,
                    .argv = argv};
    int rc = parse_bench(&c, &o);
    if (rc >= 0) {
        return rc;
    }
    struct spec_set set;
    struct diags d = {.out = stderr};
    spec_set_init(&set);
    int errors = cli_read_specs(&c, &set, &d);
    if (errors != 0 ||
        (o.kernel != NULL && cli_find_kernel(&set, o.kernel) < 0)) {
        spec_set_free(&set);
        return errors < 0 ? CLI_EXIT_USAGE : CLI_EXIT_INVALID;
    }
    /* What runs is what `specl gen` emits: every variant (and with --db
     * every database entry for the shape), NAME_create picking the one
     * for this device. */
    struct tunedb db;
    tunedb_init(&db);
    if (o.db != NULL && tunedb_load(&db, o.db, 0, &d) != 0) {
        tunedb_free(&db);
        spec_set_free(&set);
        return CLI_EXIT_INVALID;
    }
    struct rt rt;
    char err[256];
    if (rt_open(&rt, o.device, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s\n", err);
        tunedb_free(&db);
        spec_set_free(&set);
        return CLI_EXIT_INVALID;
    }
    rt.show_compiler = o.verbose;
    /* Each row as soon as it is measured, also into a pipe or a file. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct ceilings ceil;
    cl_int st = measure_ceilings(&rt, &ceil);
    if (st != CL_SUCCESS) {
        fprintf(stderr, "specl: error: cannot measure the device: %s\n",
                rt_status(st));
        tunedb_free(&db);
        rt_close(&rt);
        spec_set_free(&set);
        return CLI_EXIT_INVALID;
    }
    if (!o.csv && !o.json) {
        printf("device: %s (%s, driver %s), %u units\n", rt.name,
               rt.platform_name, rt.driver, rt.caps.compute_units);
        printf("ceilings: copy %.0f GB/s (read-only %.0f, write-only %.0f), "
               "fp32 %.0f GFLOP/s (measured now); times are medians of %d "
               "runs\n",
               ceil.copy_gbs, ceil.read_gbs, ceil.write_gbs, ceil.gflops,
               o.reps);
        print_tensor_rate(&rt.caps);
    }
    int n_run = o.kernel != NULL ? 1 : set.n_kernel;
    struct naive_stubs naive;
    naive_init(&naive);
    int failed = 0, first = 1;
    int matched = 0;
    for (int k = 0; k < set.n_kernel; k++) {
        if (o.kernel != NULL && strcmp(o.kernel, set.kernel[k].name) != 0) {
            continue;
        }
        matched++;
        double t0 = bench_clock_s();
        struct variant_set vs;
        struct buf notes;
        buf_init(&notes);
        variants_build(&set.kernel[k], o.db != NULL ? &db : NULL, NULL, &vs,
                       &notes);
        if (o.db != NULL) {
            variants_print_notes(&notes, stderr);
        }
        buf_free(&notes);
        progress_start(matched, n_run, set.kernel[k].name);
        int kernel_failed = bench_kernel(&o, &rt, &ceil, &naive, &vs, &first);
        progress_end(matched, n_run, set.kernel[k].name, kernel_failed,
                     bench_clock_s() - t0);
        failed |= kernel_failed;
    }
    if (o.json) {
        fputs(first ? "[]\n" : "\n]\n", stdout);
    }
    if (matched == 0) {
        fputs("specl: error: the specs have no kernel\n", stderr);
        failed = 1;
    }
    naive_free(&naive);
    tunedb_free(&db);
    rt_close(&rt);
    spec_set_free(&set);
    return failed;
}
