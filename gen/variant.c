/* variant.c - the knob sets one kernel's NAME.c carries (see variant.h). */
#include "variant.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clsource.h"
#include "knobs.h"
#include "tunedb.h"

/* Appends one line (printf FMT) to NOTES, when there are notes to keep. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void note(struct buf *notes, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (notes == NULL) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    buf_printf(notes, "%s\n", line);
}

void variants_print_notes(const struct buf *notes, FILE *out)
{
    for (const char *line = buf_str(notes); *line != '\0';) {
        size_t len = strcspn(line, "\n");
        fprintf(out, "specl: note: %.*s\n", (int)len, line);
        line += len + (line[len] == '\n');
    }
}

void variants_one(const struct kernel_spec *ks, struct variant_set *vs)
{
    memset(vs, 0, sizeof *vs);
    vs->n = 1;
    vs->v[0].ks = *ks;
    snprintf(vs->v[0].label, sizeof vs->v[0].label, "%s",
             ks->tile_note[0] ? ks->tile_note
                              : target_defaults_label(ks->target));
    vs->v[0].n_match = 1; /* every device */
}

/* Adds KS to VS under LABEL for the devices of MATCH (NULL: none, a
 * variant that rows ranges name), or (with MERGE) gives those devices the
 * variant that already emits the same code; without MERGE such a KS adds
 * nothing. Returns the variant's index, or -1 when VS is full or KS
 * cannot be emitted (WHY says so). */
static int add_variant(struct variant_set *vs, const struct kernel_spec *ks,
                       const char *label, const struct variant_match *match,
                       int merge, char *why, size_t why_size)
{
    uint64_t hash;
    char err[256];
    if (kernel_code_hash(ks, &hash, err, sizeof err) < 0) {
        snprintf(why, why_size, "%s", err);
        return -1;
    }
    for (int i = 0; i < vs->n; i++) {
        struct variant *v = &vs->v[i];
        if (v->code_hash == hash) {
            int room = v->n_match < (int)(sizeof v->match /
                                          sizeof v->match[0]);
            if (merge && room && match != NULL) {
                v->match[v->n_match++] = *match;
            }
            snprintf(why, why_size, "the same code as variant %d", i);
            return i;
        }
    }
    if (vs->n == SPECL_MAX_VARIANTS) {
        snprintf(why, why_size, "a NAME.c holds at most %d variants",
                 SPECL_MAX_VARIANTS);
        return -1;
    }
    struct variant *v = &vs->v[vs->n++];
    memset(v, 0, sizeof *v);
    v->ks = *ks;
    v->code_hash = hash;
    snprintf(v->label, sizeof v->label, "%s", label);
    snprintf(v->ks.tile_note, sizeof v->ks.tile_note, "%.255s", label);
    if (match != NULL) {
        v->match[v->n_match++] = *match;
    }
    why[0] = '\0';
    return vs->n - 1;
}

/* KS with the knobs it leaves out chosen for TARGET; -1 when they do not
 * validate with the knobs the spec gives. */
static int for_target(const struct kernel_spec *ks, enum target target,
                      struct kernel_spec *out)
{
    struct diags quiet = {.out = NULL};
    *out = *ks;
    out->target = target;
    out->tile_note[0] = '\0';
    return knobs_resolve(out, &quiet) == 0 ? 0 : -1;
}

/* The geometric mean of LO and HI (1 to TUNE_MAX_ROWS), rounded down. */
static long ladder_mean(long lo, long hi)
{
    long long prod = (long long)lo * hi; /* <= 2^48 */
    long long m = (long long)sqrt((double)prod);
    while (m * m > prod) {
        m--;
    }
    while ((m + 1) * (m + 1) <= prod) {
        m++;
    }
    return (long)m;
}

void ladder_ranges(const long *rows, int n, long *max_rows)
{
    for (int i = 0; i + 1 < n; i++) {
        /* A config's time follows the log of the rows (tiles filled,
         * waves of work-groups): the row count nearest in log scale
         * predicts a call best, the boundary being the geometric mean,
         * rounded down (ROWS[i] <= it < ROWS[i + 1]). */
        max_rows[i] = ladder_mean(rows[i], rows[i + 1]);
    }
    if (n > 0) {
        max_rows[n - 1] = 0;
    }
}

void range_rows_text(const struct variant_set *vs, int r, char *out,
                     size_t size)
{
    const struct variant_range *range = &vs->range[r];
    long first = r > 0 && strcmp(vs->range[r - 1].device, range->device) == 0
                     ? vs->range[r - 1].max_rows + 1
                     : 1;
    if (range->max_rows == 0) {
        snprintf(out, size, "rows %ld and more", first);
    } else {
        snprintf(out, size, "rows %ld to %ld", first, range->max_rows);
    }
}

/* A row count of a device's ladder: the variant its entry emits. */
struct ladder_point {
    long rows;
    double us;
    double gain;         /* the defaults' time over the best's (1: unknown) */
    const struct tune_entry *e;
    int fallback;        /* left out: the defaults run its rows */
    int gap_variant;     /* the defaults' variant, which runs the rows
                            after its range up to the next best's first
                            (measured_ends); -1: none */
    char version[16];
    int variant;
    struct kernel_spec ks;
};

static int point_rows_cmp(const void *a, const void *b)
{
    const struct ladder_point *pa = a, *pb = b;
    return (pa->rows > pb->rows) - (pa->rows < pb->rows);
}

/* The variant of VS that emits what NAME.c runs without a database at
 * ROWS on a device of TARGET (the target its entries were tuned with:
 * the op defaults, on a CPU at few rows the CPU's for few rows), or -1
 * where none does. */
static int defaults_variant(const struct kernel_spec *ks, enum target target,
                            long rows, struct variant_set *vs)
{
    struct kernel_spec one, few;
    char why[256];
    if (for_target(ks, target, &one) < 0) {
        return -1;
    }
    /* the variant of the same code, or (room left) one of its own */
    return add_variant(vs, cpu_defaults_at(&one, rows, &few),
                       target_defaults_label(target), NULL, 1, why,
                       sizeof why);
}

/* Where the tuner measured where the bests of neighbouring row counts
 * give way (tune_crossover: the fewer rows' best up to upto_rows, the
 * next's from next_from, the defaults between), point I's range ends
 * there (MAX_ROWS[i]), and the defaults' variant runs the rows before the
 * next best's (the point's gap_variant, up to its entry's next_from). One
 * measured against a best the next row count no longer has is passed
 * over; a point left out (running the defaults) keeps its neighbour's
 * side. NOTES says where each was used. */
static void measured_ends(const struct kernel_spec *ks,
                          const struct tune_entry *top,
                          struct ladder_point *point, int n, long *max_rows,
                          struct variant_set *vs, struct buf *notes)
{
    for (int i = 0; i < n; i++) {
        point[i].gap_variant = -1;
    }
    for (int i = 0; i + 1 < n; i++) {
        struct ladder_point *p = &point[i];
        const struct ladder_point *q = &point[i + 1];
        const struct tune_entry *e = p->e, *next = q->e;
        /* (the loader keeps rows <= upto_rows < next_from <= upto_next) */
        if (e->upto_next != next->rows ||
            strcmp(e->upto_with, next->best) != 0 ||
            (p->fallback && q->fallback)) {
            continue;
        }
        max_rows[i] = p->fallback ? e->next_from - 1 : e->upto_rows;
        if (!p->fallback && !q->fallback &&
            e->next_from > e->upto_rows + 1) {
            /* (no room: the next best from the first best's end) */
            p->gap_variant = defaults_variant(ks, p->ks.target,
                                              e->upto_rows + 1, vs);
        }
        note(notes, "%s: %s: rows %ld to %ld: measured: the first best "
             "fastest up to %ld rows, the second from %ld%s", ks->name,
             top->device, e->rows, next->rows, e->upto_rows, e->next_from,
             p->gap_variant >= 0 ? ", the defaults between" : "");
    }
}

/* For TOP, the entry of KS's shape with the most rows on its device,
 * emitted as variant TOP_VARIANT: the device's other exact entries (of
 * TOP's driver: one measured setup) as variants of their own, and the
 * rows ranges that run each (VS's range). Says in NOTES what each range
 * runs and which entries it passed over, and why. */
static void add_ladder(const struct kernel_spec *ks, const struct tunedb *db,
                       const struct tune_entry *top, int top_variant,
                       struct variant_set *vs, struct buf *notes)
{
    struct ladder_point *point = calloc(SPECL_MAX_RANGES, sizeof *point);
    char why[256], label[640];
    int n = 0;
    if (point == NULL) {
        return;
    }
    for (int i = 0; i < db->n; i++) {
        const struct tune_entry *e = &db->entry[i];
        if (e == top || strcmp(e->device, top->device) != 0 ||
            strcmp(e->op, top->op) != 0 ||
            strcmp(e->dtype, top->dtype) != 0 ||
            strcmp(e->shape, top->shape) != 0) {
            continue;
        }
        if (strcmp(e->driver, top->driver) != 0) {
            note(notes, "%s: %s: rows %ld: skipped: measured with driver "
                 "%s, not %s as the entry of rows %ld", ks->name, e->device,
                 e->rows, e->driver, top->driver, top->rows);
            continue;
        }
        if (!e->best[0]) {
            note(notes, "%s: %s: rows %ld: skipped: the entry has no "
                 "result", ks->name, e->device, e->rows);
            continue;
        }
        if (n + 1 == SPECL_MAX_RANGES) {
            note(notes, "%s: %s: rows %ld: skipped: a ladder holds at most "
                 "%d row counts", ks->name, e->device, e->rows,
                 SPECL_MAX_RANGES);
            continue;
        }
        struct ladder_point *p = &point[n];
        struct diags quiet = {.out = NULL};
        p->ks = *ks;
        p->ks.target = TARGET_GPU;
        target_from_name(e->target, &p->ks.target);
        if (tunedb_entry_knobs(&p->ks, e->best, e->rows) < 0) {
            note(notes, "%s: %s: rows %ld: skipped: its knobs do not fit "
                 "this shape", ks->name, e->device, e->rows);
            continue;
        }
        if (knobs_resolve(&p->ks, &quiet) != 0) {
            note(notes, "%s: %s: rows %ld: skipped: its knobs fail this "
                 "specl's checks: %s", ks->name, e->device, e->rows,
                 quiet.first);
            continue;
        }
        p->rows = e->rows;
        p->us = e->best_us;
        p->e = e;
        p->gain = e->default_us > 0 && e->best_us > 0
                      ? e->default_us / e->best_us
                      : 1.0;
        snprintf(p->version, sizeof p->version, "%s", e->version);
        n++;
    }
    if (n == 0) {
        free(point);
        return;
    }
    qsort(point, (size_t)n, sizeof *point, point_rows_cmp);
    /* Each row count's variant, the largest gain over the defaults first
     * where a NAME.c cannot hold them all; one left out runs the
     * defaults, which its tune timed at its rows (a neighbour's knobs
     * were never timed there), else leaves its rows to its neighbours. */
    int order[SPECL_MAX_RANGES];
    for (int i = 0; i < n; i++) {
        int at = i;
        while (at > 0 && point[order[at - 1]].gain < point[i].gain) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
    }
    for (int j = 0; j < n; j++) {
        struct ladder_point *p = &point[order[j]];
        snprintf(label, sizeof label,
                 "tuned on %.255s (driver %.127s) at rows %ld (%.1f us, "
                 "specl %s)", top->device, top->driver, p->rows, p->us,
                 p->version);
        p->variant = add_variant(vs, &p->ks, label, NULL, 1, why,
                                 sizeof why);
        int fallback = p->variant < 0 ? defaults_variant(ks, p->ks.target,
                                                         p->rows, vs)
                                      : -1;
        if (p->variant < 0 && fallback >= 0) {
            note(notes, "%s: %s: rows %ld: left out: %s; the defaults "
                 "(variant %d) run its rows", ks->name, top->device, p->rows,
                 why, fallback);
            p->variant = fallback;
            p->fallback = 1;
        } else if (p->variant < 0) {
            note(notes, "%s: %s: rows %ld: left out: %s", ks->name,
                 top->device, p->rows, why);
        }
    }
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (point[i].variant >= 0) {
            point[kept++] = point[i];
        }
    }
    memset(&point[kept], 0, sizeof point[kept]);
    point[kept].rows = top->rows;
    point[kept].us = top->best_us;
    point[kept].variant = top_variant;
    point[kept].e = top;
    n = kept + 1;
    long rows[SPECL_MAX_RANGES], max_rows[SPECL_MAX_RANGES];
    for (int i = 0; i < n; i++) {
        rows[i] = point[i].rows;
    }
    ladder_ranges(rows, n, max_rows);
    measured_ends(ks, top, point, n, max_rows, vs, notes);
    /* Neighbours of the same code share a range; the defaults' rows
     * between two row counts are a range of their own. */
    struct variant_range range[2 * SPECL_MAX_RANGES];
    int n_range = 0;
    for (int i = 0; i < n; i++) {
        for (int g = 0; g < 2; g++) {
            int variant = g == 0 ? point[i].variant : point[i].gap_variant;
            if (variant < 0) {
                continue;
            }
            struct variant_range *r = &range[n_range];
            if (n_range > 0 && range[n_range - 1].variant == variant) {
                r = &range[n_range - 1];
            } else {
                memset(r, 0, sizeof *r);
                snprintf(r->device, sizeof r->device, "%s", top->device);
                r->variant = variant;
                n_range++;
            }
            size_t len = strlen(r->tuned);
            if (g == 0) {
                snprintf(r->tuned + len, sizeof r->tuned - len, "%s%ld",
                         len ? ", " : "", point[i].rows);
            }
            r->max_rows = g == 0 ? max_rows[i] : point[i].e->next_from - 1;
        }
    }
    if (n_range == 1) {
        note(notes, "%s: %s: rows %s: one config: no rows ranges",
             ks->name, top->device, range[0].tuned);
    } else if (vs->n_range + n_range > SPECL_MAX_RANGES) {
        note(notes, "%s: %s: no rows ranges: a NAME.c holds at most %d",
             ks->name, top->device, SPECL_MAX_RANGES);
    } else {
        for (int i = 0; i < n_range; i++) {
            char upto[64];
            vs->range[vs->n_range++] = range[i];
            range_rows_text(vs, vs->n_range - 1, upto, sizeof upto);
            if (range[i].tuned[0]) {
                note(notes, "%s: %s: %s: variant %d, tuned at rows %s",
                     ks->name, top->device, upto, range[i].variant,
                     range[i].tuned);
            } else {
                note(notes, "%s: %s: %s: variant %d, the defaults, between "
                     "tuned row counts", ks->name, top->device, upto,
                     range[i].variant);
            }
        }
    }
    free(point);
}

int cpu_few_rows_spec(const struct kernel_spec *ks, struct kernel_spec *out,
                      char *why, size_t size)
{
    const struct cpu_few_rows *few = ks->op->cpu_few_rows;
    struct diags quiet = {.out = NULL};
    why[0] = '\0';
    if (few == NULL || (few->applies != NULL && !few->applies(ks))) {
        return 0;
    }
    *out = *ks;
    out->target = TARGET_CPU;
    out->tile_note[0] = '\0';
    if (knobs_parse(out, few->knobs, why, size) < 0 ||
        knobs_resolve(out, &quiet) != 0) {
        if (quiet.count) {
            snprintf(why, size, "%s", quiet.first);
        }
        return 0;
    }
    /* The defaults chose them, not the spec: headers star them. */
    for (int k = 0; k < out->op->n_knobs; k++) {
        out->knob[k].set = 0;
    }
    return 1;
}

const struct kernel_spec *cpu_defaults_at(const struct kernel_spec *ks,
                                          long rows,
                                          struct kernel_spec *room)
{
    const struct cpu_few_rows *few = ks->op->cpu_few_rows;
    char why[256];
    int any_set = 0;
    for (int k = 0; k < ks->op->n_knobs; k++) {
        any_set |= ks->knob[k].set;
    }
    if (few == NULL || any_set || ks->target != TARGET_CPU || rows < 1 ||
        rows > few->max_rows || !cpu_few_rows_spec(ks, room, why,
                                                    sizeof why)) {
        return ks;
    }
    return room;
}

/* The CPU defaults for few rows of KS's op (cpu_few_rows), where it has
 * them for KS's shape, as a variant of VS (before any tuned one: every
 * CPU runs it); its index, or -1 where their knobs do not validate or
 * emit the CPU defaults' code (CPU_VARIANT), which NOTES says. */
static int add_cpu_few_rows(const struct kernel_spec *ks, int cpu_variant,
                            struct variant_set *vs, struct buf *notes)
{
    struct kernel_spec one;
    char why[256], label[640];
    if (cpu_variant < 0) {
        return -1;
    }
    if (!cpu_few_rows_spec(ks, &one, why, sizeof why)) {
        if (why[0]) {
            note(notes, "%s: no CPU variant for few rows: %s", ks->name,
                 why);
        }
        return -1;
    }
    snprintf(label, sizeof label, "%s at few rows",
             target_defaults_label(TARGET_CPU));
    int v = add_variant(vs, &one, label, NULL, 0, why, sizeof why);
    if (v < 0 || v == cpu_variant) {
        note(notes, "%s: no CPU variant for few rows: %s", ks->name,
             v < 0 ? why : "the same code as the CPU defaults");
        return -1;
    }
    return v;
}

/* Every CPU's rows ranges, after the tuned devices' (theirs match
 * first): up to the op's few rows on FEW (add_cpu_few_rows' variant),
 * past them on CPU_VARIANT, the CPU defaults. */
static void add_cpu_ranges(const struct kernel_spec *ks, int few,
                           int cpu_variant, struct variant_set *vs,
                           struct buf *notes)
{
    if (few < 0) {
        return;
    }
    if (vs->n_range + 2 > SPECL_MAX_RANGES) {
        note(notes, "%s: no CPU variant for few rows: a NAME.c holds at "
             "most %d rows ranges", ks->name, SPECL_MAX_RANGES);
        return;
    }
    struct variant_range *r = &vs->range[vs->n_range];
    memset(r, 0, 2 * sizeof *r);
    r[0].max_rows = ks->op->cpu_few_rows->max_rows;
    r[0].variant = few;
    r[1].variant = cpu_variant;
    vs->n_range += 2;
}

/* DB's entry for KS's shape from each device it holds (DEVICE: that
 * device only) as a variant of VS, with its ladder of row counts; says in
 * NOTES which entry each device got, or why none. */
static void add_tuned(const struct kernel_spec *ks, const struct tunedb *db,
                      const char *device, struct variant_set *vs,
                      struct buf *notes)
{
    struct kernel_spec one;
    struct variant_match match;
    char why[256], label[640];
    int used = 0;
    for (int i = 0; i < db->n; i++) {
        const char *dev = db->entry[i].device;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen = strcmp(db->entry[j].device, dev) == 0;
        }
        if (seen || (device != NULL && strcmp(device, dev) != 0)) {
            continue;
        }
        enum tune_pick pick;
        const struct tune_entry *e =
            tunedb_pick_entry(db, dev, ks, &pick, why, sizeof why);
        if (e == NULL) {
            note(notes, "%s: %s: %s", ks->name, dev, why);
            continue;
        }
        /* The knobs on the op defaults the tuner ran with: a device of
         * tensor cores keeps what only they run (older entries: GPU). */
        one = *ks;
        one.target = TARGET_GPU;
        target_from_name(e->target, &one.target);
        struct diags quiet = {.out = NULL};
        if (tunedb_entry_knobs(&one, e->best, e->rows) < 0) {
            note(notes, "%s: %s: the %s does not fit this shape", ks->name,
                 dev, why);
            continue;
        }
        if (knobs_resolve(&one, &quiet) != 0) {
            /* an entry from a specl whose knobs or checks differed */
            note(notes, "%s: %s: the %s fails this specl's checks: %s",
                 ks->name, dev, why, quiet.first);
            continue;
        }
        memset(&match, 0, sizeof match);
        snprintf(match.device, sizeof match.device, "%s", e->device);
        snprintf(match.driver, sizeof match.driver, "%s", e->driver);
        snprintf(label, sizeof label,
                 "tuned on %.255s (driver %.127s): %.200s", e->device,
                 e->driver, why);
        char merged[256];
        int index = add_variant(vs, &one, label, &match, 1, merged,
                                sizeof merged);
        if (index < 0) {
            note(notes, "%s: %s: left out: %s", ks->name, dev, merged);
            continue;
        }
        used++;
        note(notes, "%s: %s: %s%s%s", ks->name, dev, why,
             merged[0] ? "; " : "", merged);
        if (pick == PICK_EXACT) {
            add_ladder(ks, db, e, index, vs, notes);
        }
    }
    if (used == 0) {
        note(notes,
             "%s: no tuning entry used: op defaults for every "
             "device",
             ks->name);
    }
}

void variants_build(const struct kernel_spec *ks, const struct tunedb *db,
                    const char *device, struct variant_set *vs,
                    struct buf *notes)
{
    struct kernel_spec one;
    struct variant_match match;
    char why[256];
    int cpu_variant = -1;
    memset(vs, 0, sizeof *vs);

    /* Each target's defaults (caps.h), the GPU's first: every device
     * without a better match gets them, and they are what a read spec
     * resolves to. A target of capabilities (tensor cores, wgmma) gets a
     * variant where the op has a kernel for it and the spec's knobs leave
     * room: otherwise its devices take one of the variants before. */
    for (int t = 0; t < N_TARGETS; t++) {
        memset(&match, 0, sizeof match);
        target_devices((enum target)t, &match.cpu, &match.caps);
        if (for_target(ks, (enum target)t, &one) == 0) {
            int v = add_variant(vs, &one,
                                target_defaults_label((enum target)t),
                                &match, match.caps == 0, why, sizeof why);
            cpu_variant = match.cpu ? v : cpu_variant;
        } else if (t == TARGET_GPU) {
            variants_one(ks, vs); /* cannot happen: the spec validated */
        } else if (match.cpu) {
            note(notes,
                 "%s: no CPU variant: the op defaults for CPUs "
                 "do not fit the knobs the spec gives",
                 ks->name);
        }
    }

    /* A spec that gives knobs keeps them (tile: auto asks for the
     * database), as tunedb_apply decides for one device; the variant every
     * CPU runs at few rows before a device's tuned ones, whose rows
     * ranges come before every CPU's. */
    int any_set = 0;
    for (int k = 0; k < ks->op->n_knobs; k++) {
        any_set |= ks->knob[k].set;
    }
    int few = any_set ? -1 : add_cpu_few_rows(ks, cpu_variant, vs, notes);
    if (db != NULL && any_set && !ks->tile_auto) {
        note(notes, "%s: knobs as the spec gives them", ks->name);
    } else if (db != NULL) {
        add_tuned(ks, db, device, vs, notes);
    }
    add_cpu_ranges(ks, few, cpu_variant, vs, notes);
}
