/* tune_space.c - a kernel's search space for the tuner and the
 * constraint filter over it: which configs the op accepts, and which of
 * them emit the same code (tune.h says what each does). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clsource.h"
#include "knobs.h"
#include "tune_space.h"

/* ---- the search space ------------------------------------------------- */

/* Whether KNOBS, names separated by spaces, holds NAME. */
static int names_hold(const char *knobs, const char *name)
{
    size_t n = strlen(name);
    for (const char *c = knobs; *c != '\0';) {
        size_t len = strcspn(c, " ");
        if (len == n && strncmp(c, name, n) == 0) {
            return 1;
        }
        c += len;
        c += *c == ' ';
    }
    return 0;
}

/* SP's parts (struct tune_space) from OP's tune_parts where SP holds
 * axes of OP's tune_space (AXES), in which every knob a part names must
 * be, in one part only; else (a space of few rows, tune_space_rows: one
 * path, one kernel) one part. SP may hold fewer axes than AXES lists
 * (drop_idle_axes): a part none of whose knobs SP holds is none. */
static int parts_of_axes(const struct op_def *op,
                         const struct tune_axis *axes, struct tune_space *sp,
                         char *err, size_t errsize)
{
    int check = axes == op->tune_space;
    const struct tune_part *parts = check ? op->tune_parts : NULL;
    int rest = -1;
    for (int a = 0; a < sp->n_axis; a++) {
        sp->part[a] = -1;
    }
    for (int t = 0; parts != NULL && parts[t].name != NULL; t++) {
        int part = -1;
        for (int a = 0; a < sp->n_axis; a++) {
            const char *key = op->knobs[sp->knob[a]].key;
            if (!names_hold(parts[t].knobs, key)) {
                continue;
            }
            if (sp->part[a] >= 0) {
                snprintf(err, errsize, "tuning parts of %s: %s is in two "
                         "parts", op->name, key);
                return -1;
            }
            if (part < 0) {
                part = sp->n_part++;
                sp->part_name[part] = parts[t].name;
            }
            sp->part[a] = part;
        }
        for (const char *c = parts[t].knobs; check && *c != '\0';) {
            size_t len = strcspn(c, " ");
            int found = 0;
            for (const struct tune_axis *ax = axes; ax->knob; ax++) {
                found |= strlen(ax->knob) == len &&
                         strncmp(c, ax->knob, len) == 0;
            }
            if (!found) {
                snprintf(err, errsize, "tuning parts of %s: %.*s is not "
                         "in its space", op->name, (int)len, c);
                return -1;
            }
            c += len;
            c += *c == ' ';
        }
    }
    for (int a = 0; a < sp->n_axis; a++) {
        if (sp->part[a] < 0) {
            if (rest < 0) {
                rest = sp->n_part++;
                sp->part_name[rest] = NULL;
            }
            sp->part[a] = rest;
        }
    }
    return 0;
}

void tune_space_parts_text(const struct op_def *op,
                           const struct tune_space *sp, const long *counts,
                           char *out, size_t size)
{
    out[0] = '\0';
    for (int t = 0; sp->n_part > 1 && t < sp->n_part; t++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s (", t ? ", " : "",
                 sp->part_name[t] != NULL ? sp->part_name[t] : "the rest");
        for (int a = 0, first = 1; a < sp->n_axis; a++) {
            if (sp->part[a] == t) {
                len = strlen(out);
                snprintf(out + len, size - len, "%s%s", first ? "" : " ",
                         op->knobs[sp->knob[a]].key);
                first = 0;
            }
        }
        len = strlen(out);
        if (counts != NULL) {
            snprintf(out + len, size - len, ": %ld)", counts[t]);
        } else {
            snprintf(out + len, size - len, ")");
        }
    }
}

/* SP over the axes AXES of OP's knobs. */
static int space_of_axes(const struct op_def *op, const struct tune_axis *axes,
                         struct tune_space *sp, char *err, size_t errsize)
{
    memset(sp, 0, sizeof *sp);
    sp->n_config = 1;
    if (axes == NULL) {
        snprintf(err, errsize, "op %s declares no tuning space", op->name);
        return -1;
    }
    for (const struct tune_axis *ax = axes; ax->knob; ax++) {
        int k = op_knob_index(op, ax->knob);
        if (k < 0 || sp->n_axis == TUNE_MAX_AXES) {
            snprintf(err, errsize, "tuning space of %s: bad knob %s",
                     op->name, ax->knob);
            return -1;
        }
        const struct param_def *def = &op->knobs[k];
        int a = sp->n_axis++;
        sp->knob[a] = k;
        char copy[256], *save = NULL;
        snprintf(copy, sizeof copy, "%s", ax->values);
        for (char *t = strtok_r(copy, " ", &save); t;
             t = strtok_r(NULL, " ", &save)) {
            double v;
            if (knobs_parse_value(def, t, &v) < 0 ||
                sp->n_value[a] == TUNE_MAX_VALUES) {
                snprintf(err, errsize, "tuning space of %s: bad value %s "
                         "for %s", op->name, t, ax->knob);
                return -1;
            }
            sp->value[a][sp->n_value[a]++] = v;
        }
        sp->n_config *= sp->n_value[a];
        if (sp->n_config > TUNE_MAX_DECLARED) {
            snprintf(err, errsize, "tuning space of %s is too large",
                     op->name);
            return -1;
        }
    }
    return 0;
}

int tune_space_build(const struct op_def *op, struct tune_space *sp,
                     char *err, size_t errsize)
{
    if (space_of_axes(op, op->tune_space, sp, err, errsize) < 0) {
        return -1;
    }
    return parts_of_axes(op, op->tune_space, sp, err, errsize);
}

void tune_space_decode(const struct tune_space *sp, long index, int *idx)
{
    for (int a = sp->n_axis - 1; a >= 0; a--) {
        idx[a] = (int)(index % sp->n_value[a]);
        index /= sp->n_value[a];
    }
}

long tune_space_encode(const struct tune_space *sp, const int *idx)
{
    long index = 0;
    for (int a = 0; a < sp->n_axis; a++) {
        index = index * sp->n_value[a] + idx[a];
    }
    return index;
}

static int resolve_config(const struct kernel_spec *ks,
                          struct kernel_spec *out, char *why, size_t size);

int tune_space_config(const struct kernel_spec *ks,
                      const struct tune_space *sp, long index,
                      struct kernel_spec *out, char *why, size_t size)
{
    int idx[TUNE_MAX_AXES] = {0};
    *out = *ks;
    tune_space_decode(sp, index, idx);
    for (int a = 0; a < sp->n_axis; a++) {
        out->knob[sp->knob[a]].num = sp->value[a][idx[a]];
        out->knob[sp->knob[a]].set = 1;
    }
    return resolve_config(ks, out, why, size);
}

/* OUT (KS with some knobs set) resolved quietly: 1 when it validates and
 * runs on KS's target, else 0 with the first reason in WHY (when not
 * NULL; "" when valid). */
static int resolve_config(const struct kernel_spec *ks,
                          struct kernel_spec *out, char *why, size_t size)
{
    struct diags quiet = {.out = NULL};
    int valid = knobs_resolve(out, &quiet) == 0;
    if (why != NULL) {
        snprintf(why, size, "%s", quiet.first);
    }
    /* Kernels that need a capability the device lacks (ks->target says
     * which the tuner runs on: caps_target) are no candidates there. */
    if (valid) {
        struct plan p;
        memset(&p, 0, sizeof p);
        out->op->plan(out, &p);
        unsigned lacking = caps_lacking(p.needs, target_caps(ks->target));
        if (lacking != 0) {
            valid = 0;
            if (why != NULL) {
                char names[128];
                caps_names(lacking, names, sizeof names);
                snprintf(why, size, "needs %s, which the device lacks",
                         names);
            }
        }
    }
    return valid;
}

long tune_space_home(const struct tune_space *sp,
                     const struct kernel_spec *ks)
{
    int idx[TUNE_MAX_AXES] = {0};
    for (int a = 0; a < sp->n_axis; a++) {
        idx[a] = -1;
        for (int v = 0; v < sp->n_value[a]; v++) {
            if (sp->value[a][v] == ks->knob[sp->knob[a]].num) {
                idx[a] = v;
            }
        }
        if (idx[a] < 0) {
            return -1;
        }
    }
    return tune_space_encode(sp, idx);
}

int tune_space_add_home(struct tune_space *sp, const struct kernel_spec *ks,
                        char *err, size_t errsize)
{
    for (int a = 0; a < sp->n_axis; a++) {
        const double v = ks->knob[sp->knob[a]].num;
        const int n = sp->n_value[a];
        int at = 0, found = 0;
        for (int i = 0; i < n; i++) {
            found |= sp->value[a][i] == v;
        }
        if (found) {
            continue;
        }
        long grown = sp->n_config / n * (n + 1);
        if (grown > TUNE_MAX_DECLARED) {
            snprintf(err, errsize, "tuning space of %s with %s's own "
                     "knobs is too large", ks->op->name, ks->name);
            return -1;
        }
        while (at < n && sp->value[a][at] < v) {
            at++;
        }
        memmove(&sp->value[a][at + 1], &sp->value[a][at],
                (size_t)(n - at) * sizeof sp->value[a][0]);
        sp->value[a][at] = v;
        sp->n_value[a] = n + 1;
        sp->n_config = grown;
        sp->own |= 1u << a;
    }
    return 0;
}

/* ---- the axes that shape the code at the rows -------------------------- */

/* Appends NAME to the space-separated list OUT of SIZE bytes. */
static void list_add(char *out, size_t size, const char *name)
{
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s%s", len ? " " : "", name);
}

/* Whether OUT's code at ROWS, when OUT (resolved from KS) is valid,
 * is HOME's: into *SAME or *DIFFERS. Returns 0, or -1 with ERR. */
static int compare_code(const struct kernel_spec *ks, struct kernel_spec *out,
                        long rows, uint64_t home, int *same, int *differs,
                        char *err, size_t errsize)
{
    uint64_t code;
    if (!resolve_config(ks, out, NULL, 0)) {
        return 0;
    }
    if (kernel_code_hash_at(out, rows, &code, err, errsize) < 0) {
        return -1;
    }
    *same |= code == home;
    *differs |= code != home;
    return 0;
}

/* Leaves out of SP the axes that shape nothing at ROWS for KS: each of
 * whose other values fails to validate or emits the code of the axis's
 * home value (KS's own), both with the home config's values elsewhere
 * and with KS's other knobs chosen again by the defaults, and at least
 * one emits it (lora_backward's warpgroup tile where KS runs SIMT, its
 * SIMT tile where KS runs on warpgroups). An axis whose every other
 * value fails may pass with other axes changed, and stays. The axes
 * left out keep KS's values where KS sets them, else the defaults', as
 * knobs outside the space do; their names go to SP->idle. Where the
 * home config does not validate (the device lacks what KS's own knobs
 * ask for), the defaults of the axes KS sets stand in for it; where
 * they do not either, every axis stays. */
static int drop_idle_axes(const struct kernel_spec *ks, long rows,
                          struct tune_space *sp, char *err, size_t errsize)
{
    long home = tune_space_home(sp, ks);
    struct kernel_spec cks, start = *ks;
    uint64_t ref_code;
    double ref[TUNE_MAX_AXES];
    int keep[TUNE_MAX_AXES];
    /* The reference: the home config; where it does not validate (a
     * spec's engine the device lacks), the defaults of the space's knobs
     * that the spec leaves, and the probes start from them too. */
    int valid = home >= 0 && tune_space_config(ks, sp, home, &cks, NULL, 0);
    if (!valid) {
        for (int a = 0; a < sp->n_axis; a++) {
            start.knob[sp->knob[a]].set = 0;
        }
        cks = start;
        valid = resolve_config(ks, &cks, NULL, 0);
    }
    if (!valid) {
        return 0;
    }
    for (int a = 0; a < sp->n_axis; a++) {
        ref[a] = cks.knob[sp->knob[a]].num;
    }
    if (kernel_code_hash_at(&cks, rows, &ref_code, err, errsize) < 0) {
        return -1;
    }
    for (int a = 0; a < sp->n_axis; a++) {
        const int k = sp->knob[a];
        int same = 0, differs = 0, alone_valid = 0;
        uint64_t alone_code = 0;
        /* The reference's value alone, the rest by the defaults: what
         * the other values alone are compared with. */
        cks = start;
        cks.knob[k].num = ref[a];
        cks.knob[k].set = 1;
        if (resolve_config(ks, &cks, NULL, 0)) {
            if (kernel_code_hash_at(&cks, rows, &alone_code, err,
                                    errsize) < 0) {
                return -1;
            }
            alone_valid = 1;
        }
        for (int v = 0; v < sp->n_value[a] && !differs; v++) {
            if (sp->value[a][v] == ref[a]) {
                continue;
            }
            for (int alone = 0; alone < 1 + alone_valid; alone++) {
                cks = start;
                for (int b = 0; b < sp->n_axis; b++) {
                    if (b == a || !alone) {
                        cks.knob[sp->knob[b]].num =
                            b == a ? sp->value[a][v] : ref[b];
                        cks.knob[sp->knob[b]].set = 1;
                    }
                }
                if (compare_code(ks, &cks, rows,
                                 alone ? alone_code : ref_code, &same,
                                 &differs, err, errsize) < 0) {
                    return -1;
                }
            }
        }
        keep[a] = differs || !same;
    }
    const struct tune_space all = *sp;
    sp->n_axis = 0;
    sp->n_config = 1;
    sp->own = 0;
    sp->idle[0] = '\0';
    for (int a = 0; a < all.n_axis; a++) {
        if (!keep[a]) {
            list_add(sp->idle, sizeof sp->idle,
                     ks->op->knobs[all.knob[a]].key);
            continue;
        }
        int b = sp->n_axis++;
        sp->knob[b] = all.knob[a];
        sp->n_value[b] = all.n_value[a];
        memcpy(sp->value[b], all.value[a], sizeof sp->value[b]);
        sp->own |= (all.own >> a & 1u) << b;
        sp->n_config *= sp->n_value[b];
    }
    return 0;
}

/* ---- the constraint filter -------------------------------------------- */

void tune_reason_kind(const char *why, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = why; *p && n + 1 < size; p++) {
        if (*p >= '0' && *p <= '9') {
            if (n == 0 || out[n - 1] != '#') {
                out[n++] = '#';
            }
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

static void count_reason(struct tune_reasons *r, const char *why)
{
    char kind[128];
    tune_reason_kind(why, kind, sizeof kind);
    int k = 0;
    while (k < r->n_kinds && strcmp(r->kind[k], kind) != 0) {
        k++;
    }
    if (k == r->n_kinds && r->n_kinds < TUNE_MAX_KINDS) {
        snprintf(r->example[r->n_kinds], sizeof r->example[0], "%.127s", why);
        snprintf(r->kind[r->n_kinds++], sizeof r->kind[0], "%s", kind);
    }
    if (k < TUNE_MAX_KINDS) {
        r->count[k]++;
    }
}

void tune_filter_free(struct tune_filter *f)
{
    free(f->rep);
    free(f->code);
    free(f->cand);
    f->rep = NULL;
    f->code = NULL;
    f->cand = NULL;
}

int tune_space_apart(const struct tune_space *sp, long a, long b)
{
    int ia[TUNE_MAX_AXES], ib[TUNE_MAX_AXES], n = 0;
    tune_space_decode(sp, a, ia);
    tune_space_decode(sp, b, ib);
    for (int k = 0; k < sp->n_axis; k++) {
        n += ia[k] != ib[k];
    }
    return n;
}

/* How many knobs of config I differ from the home config's (all, when
 * there is no home config). */
static int knobs_from_home(const struct tune_space *sp, long home, long i)
{
    return home < 0 ? sp->n_axis : tune_space_apart(sp, home, i);
}

/* The configs that validate emit code (at ROWS, where not 0: the code
 * that runs there); merges those of equal code (an open-addressing table
 * of the hashes seen, at most half full). Each code's candidate is the
 * config of it that differs from the home config in the fewest knobs
 * (the first in space order among those; the home config for its own):
 * a knob that does not change the code keeps the defaults' value, so an
 * entry tuned at ROWS changes nothing of what other rows run. */
static int merge_same_code(const struct kernel_spec *ks, long rows,
                           struct tune_filter *f, char *err, size_t errsize)
{
    long n = f->sp.n_config, size = 1;
    while (size < 2 * f->n_valid) {
        size *= 2;
    }
    uint64_t *hash = malloc((size_t)size * sizeof *hash);
    long *slot = malloc((size_t)size * sizeof *slot);
    int *away = malloc((size_t)size * sizeof *away);
    int rc = 0;
    if (hash == NULL || slot == NULL || away == NULL) {
        snprintf(err, errsize, "out of memory");
        rc = -1;
    }
    for (long t = 0; rc == 0 && t < size; t++) {
        slot[t] = -1;
    }
    for (long o = -1; rc == 0 && o < n; o++) {
        long i = o < 0 ? f->home : o; /* the defaults' config first */
        if (i < 0 || (o >= 0 && i == f->home) || f->rep[i] < 0) {
            continue;
        }
        struct kernel_spec cks;
        uint64_t h;
        tune_space_config(ks, &f->sp, i, &cks, NULL, 0);
        if (kernel_code_hash_at(&cks, rows, &h, err, errsize) < 0) {
            rc = -1;
            break;
        }
        f->code[i] = h;
        long t = (long)(h & (uint64_t)(size - 1));
        while (slot[t] >= 0 && hash[t] != h) {
            t = (t + 1) & (size - 1);
        }
        int d = knobs_from_home(&f->sp, f->home, i);
        if (slot[t] < 0 || d < away[t]) {
            slot[t] = i;
            hash[t] = h;
            away[t] = d;
        }
    }
    /* Every config to its code's candidate. */
    for (long i = 0; rc == 0 && i < n; i++) {
        if (f->rep[i] < 0) {
            continue;
        }
        long t = (long)(f->code[i] & (uint64_t)(size - 1));
        while (slot[t] >= 0 && hash[t] != f->code[i]) {
            t = (t + 1) & (size - 1);
        }
        f->rep[i] = slot[t];
    }
    free(hash);
    free(slot);
    free(away);
    return rc;
}

int tune_filter_run(const struct kernel_spec *ks, struct tune_filter *f,
                    char *err, size_t errsize)
{
    return tune_filter_run_at(ks, 0, f, err, errsize);
}

int tune_filter_run_at(const struct kernel_spec *ks, long rows,
                       struct tune_filter *f, char *err, size_t errsize)
{
    memset(f, 0, sizeof *f);
    const struct tune_axis *axes =
        rows > 0 && ks->op->tune_space_rows != NULL
            ? ks->op->tune_space_rows(ks, rows)
            : NULL;
    if (space_of_axes(ks->op, axes != NULL ? axes : ks->op->tune_space,
                      &f->sp, err, errsize) < 0) {
        return -1;
    }
    if (tune_space_add_home(&f->sp, ks, err, errsize) < 0 ||
        drop_idle_axes(ks, rows, &f->sp, err, errsize) < 0 ||
        parts_of_axes(ks->op, axes != NULL ? axes : ks->op->tune_space,
                      &f->sp, err, errsize) < 0) {
        return -1;
    }
    if (f->sp.n_config > TUNE_MAX_CONFIGS) {
        snprintf(err, errsize, "tuning space of %s is too large: %ld "
                 "configs of the knobs that shape its code at %ld rows, "
                 "more than %ld", ks->name, f->sp.n_config, rows,
                 (long)TUNE_MAX_CONFIGS);
        return -1;
    }
    long n = f->sp.n_config;
    f->home = tune_space_home(&f->sp, ks);
    f->rep = malloc((size_t)n * sizeof *f->rep);
    f->code = calloc((size_t)n, sizeof *f->code);
    f->cand = malloc((size_t)n * sizeof *f->cand);
    if (f->rep == NULL || f->code == NULL || f->cand == NULL) {
        tune_filter_free(f);
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    for (long i = 0; i < n; i++) {
        struct kernel_spec cks;
        char why[DIAG_MESSAGE_MAX];
        if (tune_space_config(ks, &f->sp, i, &cks, why, sizeof why)) {
            f->rep[i] = i;
            f->n_valid++;
        } else {
            f->rep[i] = -1;
            count_reason(&f->why, why);
        }
    }
    if (merge_same_code(ks, rows, f, err, errsize) < 0) {
        tune_filter_free(f);
        return -1;
    }
    for (long i = 0; i < n; i++) {
        if (f->rep[i] == i) {
            f->cand[f->n_cand++] = i;
        }
    }
    return 0;
}

long tune_part_first(const struct tune_space *sp, long from, int part,
                     int *idx, int *axes, int *n_axes)
{
    long combos = 1;
    *n_axes = 0;
    tune_space_decode(sp, from, idx);
    for (int a = 0; a < sp->n_axis; a++) {
        if (sp->part[a] == part) {
            axes[(*n_axes)++] = a;
            combos *= sp->n_value[a];
            idx[a] = 0;
        }
    }
    return combos;
}

void tune_part_next(const struct tune_space *sp, int *idx, const int *axes,
                    int n_axes)
{
    for (int j = n_axes - 1; j >= 0; j--) {
        if (++idx[axes[j]] < sp->n_value[axes[j]]) {
            return;
        }
        idx[axes[j]] = 0;
    }
}

long tune_part_candidates(const struct tune_filter *f, long from, int part,
                          long **out)
{
    const struct tune_space *sp = &f->sp;
    int idx[TUNE_MAX_AXES], axes[TUNE_MAX_AXES], n_axes;
    long n = 0;
    *out = NULL;
    long combos = tune_part_first(sp, from, part, idx, axes, &n_axes);
    long *got = malloc((size_t)combos * sizeof *got);
    if (got == NULL) {
        return -1;
    }
    for (long c = 0; c < combos; c++) {
        long rep = f->rep[tune_space_encode(sp, idx)];
        int seen = rep < 0 || rep == f->rep[from];
        for (long i = 0; !seen && i < n; i++) {
            seen = got[i] == rep;
        }
        if (!seen) {
            got[n++] = rep;
        }
        tune_part_next(sp, idx, axes, n_axes);
    }
    /* Ascending (insertion sort: a part's candidates are few). */
    for (long i = 1; i < n; i++) {
        long v = got[i], j = i - 1;
        while (j >= 0 && got[j] > v) {
            got[j + 1] = got[j];
            j--;
        }
        got[j + 1] = v;
    }
    if (n == 0) {
        free(got);
        got = NULL;
    }
    *out = got;
    return n;
}

long tune_candidates(const struct kernel_spec *ks, long rows, char **texts,
                     long *n_valid)
{
    struct tune_filter f;
    char err[256];
    *texts = NULL;
    if (tune_filter_run_at(ks, rows, &f, err, sizeof err) < 0) {
        return -1;
    }
    long n = f.n_cand;
    *texts = malloc((size_t)(n ? n : 1) * TUNE_TEXT);
    for (long i = 0; *texts != NULL && i < n; i++) {
        struct kernel_spec cks;
        tune_space_config(ks, &f.sp, f.cand[i], &cks, NULL, 0);
        knobs_text(&cks, *texts + i * TUNE_TEXT, TUNE_TEXT);
    }
    *n_valid = f.n_valid;
    tune_filter_free(&f);
    return *texts != NULL ? n : -1;
}
