/* stubrun.c - compiles an emitted NAME.c to a shared object, loads it and
 * calls its public API (see stubrun.h). */
#include "stubrun.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "emit.h"

static char *dup_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p != NULL) {
        memcpy(p, s, n);
    }
    return p;
}

static void set_log(char **log, const char *text)
{
    if (log != NULL && *log == NULL) {
        *log = dup_text(text);
    }
}

/* The whole of a small text file (caller frees); NULL when unreadable. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct buf b;
    char chunk[4096];
    size_t n;
    if (f == NULL) {
        return NULL;
    }
    buf_init(&b);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        buf_add(&b, chunk, n);
    }
    fclose(f);
    char *text = dup_text(buf_str(&b));
    buf_free(&b);
    return text;
}

static double clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *compiler(void)
{
    const char *cc = getenv("SPECL_CC");
    if (cc == NULL || *cc == '\0') {
        cc = getenv("CC");
    }
    return cc != NULL && *cc != '\0' ? cc : "cc";
}

/* Writes E's NAME.h and NAME.c into DIR and compiles them to SO. Returns
 * 0, or -1 with the reason in *LOG. */
static int compile_stub(const char *dir, const struct emitted *e,
                        const char *so, char **log)
{
    char err[512];
    struct buf cmd, path;
    if (emit_write(dir, e, err, sizeof err) < 0) {
        set_log(log, err);
        return -1;
    }
    const char *flags = getenv("SPECL_STUB_CFLAGS");
    buf_init(&cmd);
    buf_printf(&cmd,
               "%s -std=c99 -O2 -fPIC -shared %s -o '%s' '%s/%s.c' "
               ">'%s/cc.log' 2>&1",
               compiler(), flags != NULL ? flags : "", so, dir, e->name, dir);
    int status = system(buf_str(&cmd));
    /* system() ignores SIGINT and SIGQUIT while the compiler runs, so a
     * Ctrl-C meant for the whole process group killed the compiler alone:
     * pass it on, to the caller's handler (specl tune stops and saves) or
     * to the default action. */
    int sig = status != -1 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (sig == SIGINT || sig == SIGQUIT) {
        raise(sig);
    }
    int rc = status == 0 ? 0 : -1;
    if (rc != 0 && log != NULL && *log == NULL) {
        buf_init(&path);
        buf_printf(&path, "%s/cc.log", dir);
        char *out = read_text(buf_str(&path));
        buf_free(&path);
        buf_init(&path);
        buf_printf(&path, "compiling the emitted %s.c failed:\n%s\n%s",
                   e->name, buf_str(&cmd), out != NULL ? out : "");
        *log = dup_text(buf_str(&path));
        buf_free(&path);
        free(out);
    }
    buf_free(&cmd);
    return rc;
}

/* Removes the files stub_load made in DIR, then DIR. */
static void remove_dir(const char *dir, const char *name)
{
    static const char *const file[] = {".c", ".h", ".cl", ".so", "cc.log"};
    for (size_t i = 0; i < sizeof file / sizeof file[0]; i++) {
        struct buf path;
        buf_init(&path);
        buf_printf(&path, "%s/%s%s", dir, file[i][0] == '.' ? name : "",
                   file[i]);
        unlink(buf_str(&path));
        buf_free(&path);
    }
    rmdir(dir);
}

/* Resolves NAME_SUFFIX in S's library into *FN; -1 when missing. */
static int resolve(struct stub *s, const char *name, const char *suffix,
                   void *fn)
{
    char sym[EMIT_NAME_MAX + 32];
    snprintf(sym, sizeof sym, "%s%s", name, suffix);
    void *p = dlsym(s->dl, sym);
    memcpy(fn, &p, sizeof p); /* POSIX: data and function pointers agree */
    return p != NULL ? 0 : -1;
}

/* Compiles and loads E, emitted from the N_PLAN variants of PLANS, and
 * calls its NAME_create (VARIANT < 0) or NAME_create_variant for RT's
 * device (stub_load, stub_load_naive). Frees E. */
static cl_int load_emitted(struct stub *s, const struct rt *rt,
                           struct emitted *e, const struct plan *plans,
                           int n_plan, int variant, char **log)
{
    char dir[1024];
    struct buf so;
    cl_int (*fn_create)(cl_context, cl_device_id, void **) = NULL;
    cl_int (*fn_create_variant)(cl_context, cl_device_id, int,
                                void **) = NULL;
    int (*fn_variant)(const void *) = NULL;
    const char *(*fn_build_log)(const void *) = NULL;
    cl_int st = CL_INVALID_PROGRAM;

    /* A directory of its own, so that loading never meets another
     * stub's files; quoted in the compiler's command line. */
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || *tmp == '\0' || strchr(tmp, '\'') != NULL ||
        strlen(tmp) > sizeof dir - 16) {
        tmp = "/tmp";
    }
    snprintf(dir, sizeof dir, "%s/specl-XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) {
        set_log(log, "cannot create a temporary directory for the stub");
        emitted_free(e);
        return CL_OUT_OF_HOST_MEMORY;
    }
    buf_init(&so);
    buf_printf(&so, "%s/%s.so", dir, e->name);
    if (compile_stub(dir, e, buf_str(&so), log) == 0) {
        s->dl = dlopen(buf_str(&so), RTLD_NOW | RTLD_LOCAL);
        if (s->dl == NULL) {
            set_log(log, dlerror());
        }
    }
    buf_free(&so);
    remove_dir(dir, e->name);
    if (s->dl == NULL) {
        emitted_free(e);
        return CL_INVALID_PROGRAM;
    }
    s->ctx = rt->ctx;
    if (resolve(s, e->name, "_create", &fn_create) < 0 ||
        resolve(s, e->name, "_create_variant", &fn_create_variant) < 0 ||
        resolve(s, e->name, "_variant", &fn_variant) < 0 ||
        resolve(s, e->name, "_build_log", &fn_build_log) < 0 ||
        resolve(s, e->name, "_enqueue_array", &s->fn_enqueue) < 0 ||
        resolve(s, e->name, "_scratch_bytes_array", &s->fn_scratch_bytes) <
            0 ||
        resolve(s, e->name, "_path_index", &s->fn_path_index) < 0 ||
        resolve(s, e->name, "_destroy", &s->fn_destroy) < 0) {
        set_log(log, "the emitted stub lacks a function of the host API");
        emitted_free(e);
        stub_unload(s);
        return CL_INVALID_PROGRAM;
    }
    if (resolve(s, e->name, "_variant_at", &s->fn_variant_at) < 0) {
        s->fn_variant_at = NULL; /* no rows ranges */
    }
    s->plans = malloc((size_t)n_plan * sizeof *s->plans);
    if (s->plans == NULL) {
        set_log(log, "out of memory");
        emitted_free(e);
        stub_unload(s);
        return CL_OUT_OF_HOST_MEMORY;
    }
    memcpy(s->plans, plans, (size_t)n_plan * sizeof *s->plans);
    s->n_plans = n_plan;
    struct rt_capture capture;
    double t0 = clock_s();
    rt_capture_begin(&capture);
    st = variant < 0 ? fn_create(rt->ctx, rt->device, &s->handle)
                     : fn_create_variant(rt->ctx, rt->device, variant,
                                         &s->handle);
    char *said = rt_capture_end(&capture);
    s->create_s = clock_s() - t0;
    if (st == CL_SUCCESS) {
        rt_compiler_note(rt, e->name, said);
        s->variant = fn_variant(s->handle);
        if (s->variant < 0 || s->variant >= n_plan) {
            set_log(log, "the emitted stub reports no variant it was built "
                         "with");
            st = CL_INVALID_PROGRAM;
            stub_unload(s);
        } else {
            s->plan = plans[s->variant];
        }
    } else {
        const char *text = s->handle != NULL ? fn_build_log(s->handle) : "";
        char msg[128];
        snprintf(msg, sizeof msg, "%s_create: %s", e->name, rt_status(st));
        if (log != NULL && *log == NULL) {
            struct buf b;
            buf_init(&b);
            buf_printf(&b, "%s\n%s%s", msg, text, said != NULL ? said : "");
            *log = dup_text(buf_str(&b));
            buf_free(&b);
        }
        stub_unload(s);
    }
    free(said);
    emitted_free(e);
    return st;
}

cl_int stub_load(struct stub *s, const struct rt *rt,
                 const struct variant_set *vs, int variant, char **log)
{
    struct emitted e;
    char err[512];
    memset(s, 0, sizeof *s);
    if (log != NULL) {
        *log = NULL;
    }
    struct plan *plans = calloc((size_t)vs->n, sizeof *plans);
    if (plans == NULL) {
        set_log(log, "out of memory");
        return CL_OUT_OF_HOST_MEMORY;
    }
    for (int v = 0; v < vs->n; v++) {
        plan_of(&vs->v[v].ks, &plans[v]);
    }
    cl_int st = CL_INVALID_PROGRAM;
    double t0 = clock_s();
    if (emit_kernel(vs, &e, err, sizeof err) < 0) {
        set_log(log, err);
    } else {
        st = load_emitted(s, rt, &e, plans, vs->n, variant, log);
    }
    s->compile_s = clock_s() - t0 - s->create_s;
    free(plans);
    return st;
}

cl_int stub_load_naive(struct stub *s, const struct rt *rt,
                       const struct kernel_spec *ks, char **log)
{
    struct plan plan;
    char name[EMIT_NAME_MAX];
    memset(s, 0, sizeof *s);
    if (log != NULL) {
        *log = NULL;
    }
    naive_plan(ks, &plan);
    snprintf(name, sizeof name, "%s%s", ks->name, EMIT_NAIVE_SUFFIX);
    struct emitted e;
    char err[512];
    if (emit_stub(ks, name, &plan, NAIVE_TEMPLATE, &e, err, sizeof err) <
        0) {
        set_log(log, err);
        return CL_INVALID_PROGRAM;
    }
    return load_emitted(s, rt, &e, &plan, 1, -1, log);
}

int stub_variant_at(const struct stub *s, const size_t *sizes)
{
    if (s->fn_variant_at == NULL) {
        return s->fn_path_index(s->handle, sizes) >= 0 ? s->variant : -1;
    }
    int v = s->fn_variant_at(s->handle, sizes);
    return v >= 0 && v < s->n_plans ? v : -1;
}

const struct path *stub_path(const struct stub *s, const size_t *sizes)
{
    int v = stub_variant_at(s, sizes);
    int i = s->fn_path_index(s->handle, sizes);
    return v >= 0 && i >= 0 ? &s->plans[v].path[i] : NULL;
}

cl_int stub_enqueue_scratch(const struct stub *s, cl_command_queue q,
                            const size_t *sizes, const cl_mem *buffers,
                            cl_mem scratch, cl_uint n_wait,
                            const cl_event *wait, cl_event *done)
{
    return s->fn_enqueue(s->handle, q, sizes, buffers, scratch, n_wait, wait,
                         done);
}

cl_int stub_enqueue(struct stub *s, cl_command_queue q, const size_t *sizes,
                    const cl_mem *buffers, cl_uint n_wait,
                    const cl_event *wait, cl_event *done)
{
    size_t need = s->fn_scratch_bytes(sizes);
    if (need > s->scratch_size) {
        cl_int st;
        if (s->scratch != NULL) {
            clReleaseMemObject(s->scratch);
        }
        s->scratch = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, need, NULL,
                                    &st);
        if (st != CL_SUCCESS) {
            s->scratch = NULL;
            s->scratch_size = 0;
            return st;
        }
        s->scratch_size = need;
    }
    return stub_enqueue_scratch(s, q, sizes, buffers, s->scratch, n_wait,
                                wait, done);
}

void stub_unload(struct stub *s)
{
    if (s->handle != NULL && s->fn_destroy != NULL) {
        s->fn_destroy(s->handle);
    }
    if (s->scratch != NULL) {
        clReleaseMemObject(s->scratch);
    }
    if (s->dl != NULL) {
        dlclose(s->dl);
    }
    free(s->plans);
    memset(s, 0, sizeof *s);
}
