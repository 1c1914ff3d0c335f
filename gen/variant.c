/* variant.c - the knob sets one kernel's NAME.c carries (see variant.h). */
#include "variant.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
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

/* Adds KS to VS under LABEL for the devices of MATCH, or (with MERGE)
 * gives those devices the variant that already emits the same code;
 * without MERGE such a KS adds nothing. Returns 0, or -1 when VS is full
 * or KS cannot be emitted (WHY says so). */
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
            if (merge && room) {
                v->match[v->n_match++] = *match;
            }
            snprintf(why, why_size, "the same code as variant %d", i);
            return 0;
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
    v->match[v->n_match++] = *match;
    why[0] = '\0';
    return 0;
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

void variants_build(const struct kernel_spec *ks, const struct tunedb *db,
                    const char *device, struct variant_set *vs,
                    struct buf *notes)
{
    struct kernel_spec one;
    struct variant_match match;
    char why[256], label[640];
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
            add_variant(vs, &one, target_defaults_label((enum target)t),
                        &match, match.caps == 0, why, sizeof why);
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
     * database), as tunedb_apply decides for one device. */
    int any_set = 0;
    for (int k = 0; k < ks->op->n_knobs; k++) {
        any_set |= ks->knob[k].set;
    }
    if (db == NULL || (any_set && !ks->tile_auto)) {
        if (db != NULL) {
            note(notes, "%s: knobs as the spec gives them", ks->name);
        }
        return;
    }
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
        if (add_variant(vs, &one, label, &match, 1, merged, sizeof merged) <
            0) {
            note(notes, "%s: %s: left out: %s", ks->name, dev, merged);
            continue;
        }
        used++;
        note(notes, "%s: %s: %s%s%s", ks->name, dev, why,
             merged[0] ? "; " : "", merged);
    }
    if (used == 0) {
        note(notes,
             "%s: no tuning entry used: op defaults for every "
             "device",
             ks->name);
    }
}
