/* tunedb_pick.c - knobs for `specl gen` from a tuning database: the entry
 * of a kernel's device, op, dtype and shape, else the nearest shape's, and
 * the kernels of a spec set given the knobs it holds. */
#include "tunedb.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "spec.h"

const char *tunedb_device(const struct tunedb *db, const char *name,
                          char *list, size_t list_size)
{
    char slug[256];
    if (list != NULL && list_size > 0) {
        list[0] = '\0';
    }
    for (int i = 0; i < db->n; i++) {
        const char *dev = db->entry[i].device;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen = strcmp(db->entry[j].device, dev) == 0;
        }
        if (seen) {
            continue;
        }
        tune_device_slug(dev, slug, sizeof slug);
        if (strcmp(dev, name) == 0 || strcmp(slug, name) == 0) {
            return dev;
        }
        if (list != NULL && list_size > 0) {
            size_t len = strlen(list);
            snprintf(list + len, list_size - len, "%s%s (%s)", len ? "; " : "",
                     dev, slug);
        }
    }
    return NULL;
}

/* Value of KEY in a "k=v k=v" text (true and false as 1 and 0); NAN
 * when absent. */
static double text_value(const char *text, const char *key)
{
    char v[64];
    if (knobs_text_value(text, key, v, sizeof v) < 0) {
        return NAN;
    }
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
        return v[0] == 't';
    }
    return strtod(v, NULL);
}

/* How far shape B is from A: the sum of |log2| ratios of the sizes;
 * infinite when a flag differs. */
static double shape_distance(const struct kernel_spec *ks, const char *a,
                             const char *b)
{
    double dist = 0;
    for (int i = 0; i < ks->op->n_fields; i++) {
        const struct param_def *f = &ks->op->fields[i];
        if (f->kind != VALUE_INT && f->kind != VALUE_BOOL) {
            continue;
        }
        double va = text_value(a, f->key), vb = text_value(b, f->key);
        if (isnan(va) && isnan(vb) && param_stand_in(f)) {
            continue; /* both leave it to the field it stands for */
        }
        if (isnan(va) || isnan(vb)) {
            return INFINITY;
        }
        if (f->kind == VALUE_BOOL) {
            if (va != vb) {
                return INFINITY;
            }
        } else {
            dist += fabs(log2(va / vb));
        }
    }
    return dist;
}

/* What E, an entry without a best, holds: "has no result: ...". */
static void no_result_text(const struct tune_entry *e, char *out,
                           size_t size)
{
    int timed = 0;
    for (int i = 0; i < e->n_tried; i++) {
        timed += e->tried[i].us >= 0;
    }
    if (e->n_tried > 0 && timed == 0) {
        snprintf(out, size, "has no result: none of its %d tried configs "
                 "ran", e->n_tried);
    } else {
        /* The tuner decides the best at the end of its search: a run
         * stopped before that saved only what it measured. */
        snprintf(out, size, "has no result: its tune did not finish (%d "
                 "config%s measured)", timed, timed == 1 ? "" : "s");
    }
}

enum tune_pick tunedb_pick(const struct tunedb *db, const char *device,
                           const struct kernel_spec *ks, char *knobs,
                           size_t knobs_size, char *why, size_t why_size)
{
    enum tune_pick pick;
    const struct tune_entry *e =
        tunedb_pick_entry(db, device, ks, &pick, why, why_size);
    if (e != NULL) {
        snprintf(knobs, knobs_size, "%s", e->best);
    }
    return pick;
}

const struct tune_entry *tunedb_pick_entry(const struct tunedb *db,
                                           const char *device,
                                           const struct kernel_spec *ks,
                                           enum tune_pick *pick, char *why,
                                           size_t why_size)
{
    char shape[TUNE_TEXT];
    tune_shape_text(ks, shape, sizeof shape);
    /* Without a device named, only a database of one device answers:
     * knobs tuned on one device are no guide for another. */
    for (int i = 1; device == NULL && i < db->n; i++) {
        if (strcmp(db->entry[i].device, db->entry[0].device) != 0) {
            snprintf(why, why_size, "the tuning database holds several "
                     "devices and none was named (gen --db-device)");
            *pick = PICK_NONE;
            return NULL;
        }
    }
    const struct tune_entry *exact = NULL, *near = NULL, *unfinished = NULL;
    double best_dist = INFINITY;
    for (int i = 0; i < db->n; i++) {
        const struct tune_entry *e = &db->entry[i];
        if ((device != NULL && strcmp(e->device, device) != 0) ||
            strcmp(e->op, ks->op->name) != 0 ||
            strcmp(e->dtype, dtype_name(ks->dtype)) != 0) {
            continue;
        }
        if (!e->best[0]) { /* no result: named if nothing else answers */
            if (strcmp(e->shape, shape) == 0 &&
                (unfinished == NULL || e->rows > unfinished->rows)) {
                unfinished = e;
            }
            continue;
        }
        if (strcmp(e->shape, shape) == 0) {
            if (exact == NULL || e->rows > exact->rows) {
                exact = e;
            }
            continue;
        }
        double dist = shape_distance(ks, shape, e->shape);
        if (dist < best_dist ||
            (dist == best_dist && near != NULL && e->rows > near->rows)) {
            best_dist = dist;
            near = e;
        }
    }
    const struct tune_entry *e = exact ? exact : near;
    if (e == NULL) {
        if (unfinished != NULL) {
            char none[160];
            no_result_text(unfinished, none, sizeof none);
            snprintf(why, why_size, "the tuning entry of this shape%s%s "
                     "(rows %ld) %s", device ? " on " : "",
                     device ? device : "", unfinished->rows, none);
        } else {
            snprintf(why, why_size, "no tuning entry for this op and "
                     "dtype%s%s", device ? " on " : "", device ? device : "");
        }
        *pick = PICK_NONE;
        return NULL;
    }
    snprintf(why, why_size, "%s tuning entry: %s, %s, rows %ld (%.1f us, "
             "specl %s)",
             exact ? "exact" : "nearest-shape", e->device, e->shape, e->rows,
             e->best_us, e->version);
    *pick = exact ? PICK_EXACT : PICK_NEAREST;
    return e;
}

int tunedb_entry_knobs(struct kernel_spec *ks, const char *knobs, long rows)
{
    const struct kernel_spec spec = *ks;
    if (knobs_parse(ks, knobs, NULL, 0) < 0) {
        return -1;
    }
    const struct kernel_spec entry = *ks;
    /* The few-row paths' knobs as the spec has them: the tuner did not
     * time them at the entry's rows, and their defaults may have moved
     * since; the op's entry_rows takes what those rows did time. */
    for (int f = 0; ks->op->few_rows_knobs != NULL &&
                    ks->op->few_rows_knobs[f] != NULL;
         f++) {
        int k = op_knob_index(ks->op, ks->op->few_rows_knobs[f]);
        assert(k >= 0);
        ks->knob[k] = spec.knob[k];
    }
    if (ks->op->entry_rows != NULL) {
        ks->op->entry_rows(ks, &entry, rows);
    }
    return 0;
}

/* Takes knobs from DB for every kernel that asked for `tile: auto` or
 * gave no knob at all; says which source it used in the header. */
void tunedb_apply(const struct tunedb *db, struct spec_set *set,
                  const char *device)
{
    for (int i = 0; i < set->n_kernel; i++) {
        struct kernel_spec *ks = &set->kernel[i];
        int any_set = 0;
        for (int k = 0; k < ks->op->n_knobs; k++) {
            any_set |= ks->knob[k].set;
        }
        if (any_set && !ks->tile_auto) {
            continue;
        }
        char why[200] = "an empty tuning database";
        enum tune_pick pick = PICK_NONE;
        const struct tune_entry *e =
            db == NULL ? NULL
                       : tunedb_pick_entry(db, device, ks, &pick, why,
                                           sizeof why);
        if (e == NULL) {
            snprintf(ks->tile_note, sizeof ks->tile_note,
                     "op defaults (%s)", why);
            continue;
        }
        struct kernel_spec tuned = *ks;
        struct diags quiet = {.out = NULL};
        if (tunedb_entry_knobs(&tuned, e->best, e->rows) == 0 &&
            knobs_resolve(&tuned, &quiet) == 0) {
            snprintf(tuned.tile_note, sizeof tuned.tile_note, "%s", why);
            *ks = tuned;
        } else {
            snprintf(ks->tile_note, sizeof ks->tile_note,
                     "op defaults (the %s does not fit this shape)", why);
        }
    }
}
