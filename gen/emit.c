/* emit.c - turns a validated kernel spec into its .cl, .h and .c text.
 *
 * The op plans (sizes, tiles, launches); the emitter only formats: a
 * header comment, the #define prelude, the rendered templates, and the
 * stub's tables (emit_text.c, emit_stub.c, emit_variants.c,
 * emit_plan.c: each with its header). Output depends on
 * nothing but the spec, so it is byte-stable. This file holds the emitted
 * files: in memory, the kernel source alone, and written through outdir. */

#include "emit.h"

#include <stdio.h>

#include "clsource.h"
#include "emit_text.h"
#include "outdir.h"

void emitted_free(struct emitted *e)
{
    buf_free(&e->cl);
    buf_free(&e->h);
    buf_free(&e->c);
}

int emit_cl(const struct kernel_spec *ks, const struct plan *plan,
            struct buf *out, char *err, size_t errsize)
{
    struct emit_variant ev = {.ks = ks, .template_file = NULL};
    header_comment(&ev, 1, ks->name, "cl", out);
    return cl_body(ks, plan, NULL, out, err, errsize);
}

int emit_stage_kernel(struct outdir *o, const struct emitted *e, char *err,
                      size_t errsize)
{
    const struct {
        const char *ext;
        const struct buf *text;
    } files[] = {{"cl", &e->cl}, {"h", &e->h}, {"c", &e->c}};
    for (int i = 0; i < 3; i++) {
        if (e->header_only && files[i].text != &e->h) {
            continue;
        }
        char name[EMIT_NAME_MAX + 4];
        snprintf(name, sizeof name, "%s.%s", e->name, files[i].ext);
        if (outdir_add(o, name, buf_str(files[i].text),
                       files[i].text->len, err, errsize) < 0) {
            return -1;
        }
    }
    return 0;
}

int emit_write(const char *dir, const struct emitted *e, char *err,
               size_t errsize)
{
    struct outdir o;
    if (outdir_begin(&o, dir, err, errsize) < 0) {
        return -1;
    }
    if (emit_stage_kernel(&o, e, err, errsize) < 0) {
        outdir_discard(&o);
        return -1;
    }
    return outdir_commit(&o, err, errsize) == 0 ? 0 : -1;
}

int emit_write_decisions(const char *dir, const char *name,
                         const struct buf *text, char *err, size_t errsize)
{
    struct outdir o;
    char file[EMIT_NAME_MAX + 8];
    snprintf(file, sizeof file, "%s.plan", name);
    if (outdir_begin(&o, dir, err, errsize) < 0) {
        return -1;
    }
    if (outdir_add(&o, file, buf_str(text), text->len, err, errsize) <
        0) {
        outdir_discard(&o);
        return -1;
    }
    return outdir_commit(&o, err, errsize) == 0 ? 0 : -1;
}
