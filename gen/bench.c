/* bench.c - `specl bench`: the emitted kernels side by side with the naive
 * kernels and CLBlast on one device, against the device's own ceilings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clblast.h"
#include "knobs.h"
#include "measure.h"
#include "spec.h"
#include "tunedb.h"
#include "variant.h"

struct bench_opts {
    const char *device;
    long rows;          /* 0: per op default */
    int reps;           /* timed runs per variant */
    int csv, json, quick;
    int no_naive;
    const char *kernel; /* only this kernel; NULL: all */
    const char *db;     /* tuning database for tile: auto / untiled */
};

/* The SGEMMs of the case being measured (the op's blas_peer); bench
 * measures one case at a time. */
static struct gemm_chain peer_chain;

/* A gemm operand: the plan buffer NAME of buffer set SET, or the chain's
 * temporary; NULL if the case has no such buffer. */
static cl_mem gemm_operand(const struct measure_case *bc, int set,
                           const char *name)
{
    if (strcmp(name, "temp") == 0) {
        return bc->t[set];
    }
    int i = buffer_named(&bc->vc, name);
    return i >= 0 ? bc->sets[set].mem[i] : NULL;
}

/* CLBlast: the op's chain of SGEMMs, what a user would write without
 * specl. */
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
        s = clblast_sgemm(g->m, g->n, g->k, (float)g->alpha, a, 0, g->k, b, 0,
                          g->n, (float)g->beta, c, 0, g->n, &q,
                          &events[(*n)++]);
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
    c->ks->op->shape_text(c->ks, c->rows, s, size);
}

static void print_row(const struct bench_opts *o, const struct rt *rt,
                      const struct vcase *c, const struct result *r,
                      const struct result *naive, const struct result *blas,
                      double floor_us, double bytes, double flops,
                      int *first)
{
    char shape[96];
    shape_text(c, shape, sizeof shape);
    double gbs = r->ok ? bytes / (r->us * 1e3) : 0;
    double gfl = r->ok ? flops / (r->us * 1e3) : 0;
    double pct = r->ok ? 100.0 * floor_us / r->us : 0;
    double vs_naive = naive && naive->ok && r->ok ? naive->us / r->us : 0;
    double vs_blas = blas && blas->ok && r->ok ? blas->us / r->us : 0;
    if (o->json) {
        printf("%s{\"kernel\":\"%s\",\"op\":\"%s\",\"shape\":\"%s\","
               "\"device\":\"%s\",\"variant\":\"%s\",\"ok\":%s,"
               "\"error\":%.3g,\"us\":%.2f,\"wall_us\":%.2f,\"gbs\":%.1f,"
               "\"gflops\":%.1f,\"pct_floor\":%.1f,\"vs_naive\":%.2f,"
               "\"vs_clblast\":%.2f,\"note\":\"%s\"}",
               *first ? "[\n" : ",\n", c->ks->name, c->ks->op->name, shape,
               rt->name, r->variant, r->ok ? "true" : "false",
               isfinite(r->err) ? r->err : -1, r->us, r->wall_us, gbs, gfl,
               pct, vs_naive, vs_blas, r->note);
    } else if (o->csv) {
        if (*first) {
            printf("kernel,op,shape,variant,ok,error,us,wall_us,gbs,gflops,"
                   "pct_floor,vs_naive,vs_clblast,note\n");
        }
        printf("%s,%s,%s,%s,%d,%.3g,%.2f,%.2f,%.1f,%.1f,%.1f,%.2f,%.2f,%s\n",
               c->ks->name, c->ks->op->name, shape, r->variant, r->ok, r->err,
               r->us, r->wall_us, gbs, gfl, pct, vs_naive, vs_blas, r->note);
    } else if (r->ok) {
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

static int bench_kernel(const struct bench_opts *o, const struct rt *rt,
                        const struct ceilings *ceil, struct naive *naive,
                        const struct variant_set *vs, int *first)
{
    const struct kernel_spec *ks = &vs->v[0].ks;
    struct measure_case mc;
    char *log = NULL;
    int failed = 0;
    size_t rows = (size_t)(o->rows > 0 ? o->rows : measure_default_rows(ks));
    cl_int err = mcase_init(&mc, rt, naive, ks, rows, 20261122, !o->quick);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "specl: bench: %s: cannot set up %zu rows: %s\n",
                ks->name, rows, rt_status(err));
        return 1;
    }
    struct result res[3];
    memset(res, 0, sizeof res);
    res[0].variant = "specl";
    res[1].variant = "naive";
    res[2].variant = "clblast";
    /* CLBlast's events cover only the last kernel of each routine. */
    res[2].host_timed = 1;

    double t_bytes = mc.bytes / (ceil->copy_gbs * 1e3);
    double t_flops = mc.flops / (ceil->gflops * 1e3);
    double floor_us = t_bytes > t_flops ? t_bytes : t_flops;
    if (!o->csv && !o->json) {
        char shape[96];
        shape_text(&mc.vc, shape, sizeof shape);
        printf("\n%s  %s %s %s\n", ks->name, ks->op->name, shape,
               dtype_name(ks->dtype));
        printf("  floor %.1f us, %s-bound: %.1f MB at %.0f GB/s = %.1f us; "
               "%.2f GFLOP at %.0f GFLOP/s = %.1f us\n",
               floor_us, t_bytes > t_flops ? "memory" : "compute",
               mc.bytes / 1e6, ceil->copy_gbs, t_bytes, mc.flops / 1e9,
               ceil->gflops, t_flops);
        printf("  %-8s %10s %10s %9s %9s %7s %9s %8s %9s\n", "variant",
               "time_us", "wall_us", "GB/s", "GFLOP/s", "%floor", "vs_naive",
               "vs_blas", "error");
    }
    enum stub_outcome got = measure_stub(&mc, vs, o->reps, &res[0], &log);
    if (got == STUB_BUILD_FAILED) {
        fprintf(stderr, "%s: build log:\n%s\n", ks->name, log ? log : "");
    }
    failed = got != STUB_TIMED;
    if (!o->no_naive) {
        char *naive_log = NULL;
        err = mcase_load_naive(&mc, &naive_log);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "%s: naive kernels: build log:\n%s\n", ks->name,
                    naive_log ? naive_log : "");
            snprintf(res[1].note, sizeof res[1].note, "build failed: %s",
                     rt_status(err));
            err = CL_SUCCESS;
        } else {
            verify_variant(&mc, run_naive, &res[1]);
        }
        if (res[1].ok) {
            time_variant(rt, run_naive, &mc, mc.n_sets, o->reps, &res[1]);
        }
        free(naive_log);
    } else {
        snprintf(res[1].note, sizeof res[1].note, "skipped (--no-naive)");
    }
    int peer = ks->op->blas_peer != NULL;
    /* Without CLBlast the row says why and how to get it. */
    if (peer && ks->dtype == DTYPE_F32 &&
        clblast_load(res[2].note, sizeof res[2].note) == 0) {
        memset(&peer_chain, 0, sizeof peer_chain);
        ks->op->blas_peer(ks, rows, &peer_chain);
        size_t temp = peer_chain.temp_per_row;
        for (int s = 0; s < mc.n_sets && err == CL_SUCCESS && temp > 0;
             s++) {
            mc.t[s] = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE,
                                     rows * temp * sizeof(float), NULL, &err);
        }
        verify_variant(&mc, run_clblast, &res[2]);
        if (res[2].ok) {
            time_variant(rt, run_clblast, &mc, mc.n_sets, o->reps, &res[2]);
        }
    } else if (res[2].note[0] == '\0') {
        snprintf(res[2].note, sizeof res[2].note, "%s",
                 peer ? "no half-width sgemm" : "no such primitive in CLBlast");
    }
    for (int i = 0; i < 3; i++) {
        print_row(o, rt, &mc.vc, &res[i], &res[1], &res[2], floor_us,
                  mc.bytes, mc.flops, first);
    }
    if (!o->csv && !o->json && got != STUB_BUILD_FAILED) {
        /* What NAME_create chose on this device, as gen's NAME.c would. */
        const struct variant *v = &vs->v[res[0].stub_variant];
        char knobs[256];
        knobs_text(&v->ks, knobs, sizeof knobs);
        printf("  specl ran variant %d of %d (%s): %s\n",
               res[0].stub_variant, vs->n, v->label, knobs);
    }
    free(log);
    mcase_free(&mc);
    return failed;
}

int specl_bench_main(int argc, char **argv);

int specl_bench_main(int argc, char **argv)
{
    struct bench_opts o = {NULL, 0, 50, 0, 0, 0, 0, NULL, NULL};
    struct spec_set set;
    struct diags d = {.out = stderr};
    int n_files = 0;
    spec_set_init(&set);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if ((strcmp(a, "--device") == 0 || strcmp(a, "--rows") == 0 ||
             strcmp(a, "--reps") == 0 || strcmp(a, "--kernel") == 0 ||
             strcmp(a, "--db") == 0) &&
            val == NULL) {
            fprintf(stderr, "specl: error: %s needs a value\n", a);
            spec_set_free(&set);
            return 2;
        }
        if (strcmp(a, "--device") == 0) {
            o.device = val;
            i++;
        } else if (strcmp(a, "--db") == 0) {
            o.db = val;
            i++;
        } else if (strcmp(a, "--kernel") == 0) {
            o.kernel = val;
            i++;
        } else if (strcmp(a, "--rows") == 0 || strcmp(a, "--reps") == 0) {
            char *end;
            long v = strtol(val, &end, 10);
            if (*end != '\0' || v < 1 || v > (a[2] == 'r' && a[3] == 'e'
                                                  ? MAX_REPS
                                                  : 1L << 24)) {
                fprintf(stderr, "specl: error: bad %s '%s'\n", a, val);
                spec_set_free(&set);
                return 2;
            }
            if (a[3] == 'e') {
                o.reps = (int)v;
            } else {
                o.rows = v;
            }
            i++;
        } else if (strcmp(a, "--csv") == 0) {
            o.csv = 1;
        } else if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
            o.reps = 10;
        } else if (strcmp(a, "--no-naive") == 0) {
            o.no_naive = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "specl: error: unknown bench option '%s'\n", a);
            spec_set_free(&set);
            return 2;
        } else {
            spec_read_file(&set, a, &d);
            n_files++;
        }
    }
    if (n_files == 0) {
        fputs("specl: error: bench needs spec files\n", stderr);
        spec_set_free(&set);
        return 2;
    }
    if (d.count) {
        spec_set_free(&set);
        return 1;
    }
    struct rt rt;
    char err[256];
    if (rt_open(&rt, o.device, err, sizeof err) < 0) {
        fprintf(stderr, "specl: error: %s\n", err);
        spec_set_free(&set);
        return 1;
    }
    /* What runs is what `specl gen` emits: every variant (and with --db
     * every database entry for the shape), NAME_create picking the one
     * for this device. */
    struct tunedb db;
    tunedb_init(&db);
    if (o.db != NULL && tunedb_load(&db, o.db, 0, &d) != 0) {
        tunedb_free(&db);
        rt_close(&rt);
        spec_set_free(&set);
        return 1;
    }
    struct ceilings ceil;
    cl_int st = measure_ceilings(&rt, &ceil);
    if (st != CL_SUCCESS) {
        fprintf(stderr, "specl: error: cannot measure the device: %s\n",
                rt_status(st));
        tunedb_free(&db);
        rt_close(&rt);
        spec_set_free(&set);
        return 1;
    }
    if (!o.csv && !o.json) {
        printf("device: %s (%s, driver %s), %u units\n", rt.name,
               rt.platform_name, rt.driver, rt.units);
        printf("ceilings: copy %.0f GB/s (read-only %.0f, write-only %.0f), "
               "fp32 %.0f GFLOP/s (measured now); times are medians of %d "
               "runs\n",
               ceil.copy_gbs, ceil.read_gbs, ceil.write_gbs, ceil.gflops,
               o.reps);
    }
    struct naive naive;
    naive_init(&naive);
    int failed = 0, first = 1;
    int matched = 0;
    for (int k = 0; k < set.n_kernel; k++) {
        if (o.kernel != NULL && strcmp(o.kernel, set.kernel[k].name) != 0) {
            continue;
        }
        matched++;
        struct variant_set vs;
        struct buf notes;
        buf_init(&notes);
        variants_build(&set.kernel[k], o.db != NULL ? &db : NULL, NULL, &vs,
                       &notes);
        if (o.db != NULL) {
            variants_print_notes(&notes, stderr);
        }
        buf_free(&notes);
        failed |= bench_kernel(&o, &rt, &ceil, &naive, &vs, &first);
    }
    if (o.json) {
        printf("%s]\n", first ? "[" : "");
    }
    if (matched == 0) {
        fprintf(stderr, "specl: error: no kernel named '%s'\n", o.kernel);
        failed = 1;
    }
    naive_free(&naive);
    tunedb_free(&db);
    rt_close(&rt);
    spec_set_free(&set);
    return failed;
}

