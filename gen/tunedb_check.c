/* tunedb_check.c - the values of a tuning entry as the loader checks
 * them: knobs and shapes of its op, code hashes, statuses, dtypes. */
#include "tunedb_internal.h"

#include <stdio.h>
#include <string.h>

#include "knobs.h"

/* Whether TEXT reads as knobs of OP (knobs_parse: any of its knobs, each
 * with a value within its limits); else the reason in WHY. */
int tunedb_knobs_fit(const struct op_def *op, const char *text, char *why,
                     size_t size)
{
    struct kernel_spec ks;
    memset(&ks, 0, sizeof ks);
    ks.op = op;
    return knobs_parse(&ks, text, why, size) == 0;
}

/* Whether KS, its int and bool fields read from an entry's shape, is a
 * kernel a spec could give (rank <= in_features...): the op's checks
 * of its fields with the knobs its defaults choose for DTYPE and
 * TARGET, as `specl check` makes them. Else the first reason in WHY. */
static int shape_valid(struct kernel_spec *ks, enum dtype dtype,
                       enum target target, char *why, size_t size)
{
    struct diags quiet = {.out = NULL};
    for (int f = 0; f < ks->op->n_fields; f++) {
        const struct param_def *def = &ks->op->fields[f];
        if (def->kind != VALUE_INT && def->kind != VALUE_BOOL &&
            def->kind != VALUE_CHOICE) {
            ks->field[f].num = def->def; /* not in the shape: the default */
        }
    }
    ks->dtype = dtype;
    ks->target = target;
    ks->shape_only = 1;
    if (knobs_resolve(ks, &quiet) != 0) {
        snprintf(why, size, "%s", quiet.first);
        return 0;
    }
    return 1;
}

/* Whether TEXT is a shape of OP as tune_shape_text writes it (every int
 * and bool field once, a stand-in when given, a choice when not its
 * default, in the op's order, values within their limits)
 * that a spec could give (shape_valid): entries are found by their
 * shape's text. Else the reason in WHY. */
int tunedb_shape_fits(const struct op_def *op, enum dtype dtype,
                      enum target target, const char *text, char *why,
                      size_t size)
{
    struct kernel_spec ks;
    int given[SPECL_MAX_PARAMS] = {0};
    char key[64], canonical[TUNE_TEXT];
    memset(&ks, 0, sizeof ks);
    ks.op = op;
    for (const char *p = text + strspn(text, " "); *p != '\0';) {
        size_t len = strcspn(p, " ");
        const char *eq = memchr(p, '=', len);
        size_t kl = eq != NULL ? (size_t)(eq - p) : len;
        snprintf(key, sizeof key, "%.*s", (int)kl, p);
        int f = eq != NULL ? op_field_index(op, key) : -1;
        const struct param_def *def = f >= 0 ? &op->fields[f] : NULL;
        char value[64];
        snprintf(value, sizeof value, "%.*s",
                 eq != NULL ? (int)(len - kl - 1) : 0, eq != NULL ? eq + 1 : "");
        if (eq == NULL) {
            snprintf(why, size, "no '=' in '%.*s'", (int)len, p);
            return 0;
        }
        if (def == NULL || (def->kind != VALUE_INT &&
                            def->kind != VALUE_BOOL &&
                            def->kind != VALUE_CHOICE)) {
            snprintf(why, size, "'%s' is no shape key of %s", key, op->name);
            return 0;
        }
        if (given[f]) {
            snprintf(why, size, "'%s' given twice", key);
            return 0;
        }
        if (knobs_parse_value(def, value, &ks.field[f].num) < 0) {
            snprintf(why, size, "bad value of '%.*s'", (int)len, p);
            return 0;
        }
        given[f] = 1;
        ks.field[f].set = 1;
        p += len;
        p += strspn(p, " ");
    }
    for (int f = 0; f < op->n_fields; f++) {
        const struct param_def *def = &op->fields[f];
        if ((def->kind == VALUE_INT || def->kind == VALUE_BOOL) &&
            !given[f] && !param_stand_in(def)) {
            snprintf(why, size, "no '%s'", def->key);
            return 0;
        }
        if (!given[f]) {
            ks.field[f].num = def->def;
        }
    }
    tune_shape_text(&ks, canonical, sizeof canonical);
    if (strcmp(canonical, text) != 0) {
        snprintf(why, size, "not as the tuner writes it: \"%.120s\"",
                 canonical);
        return 0;
    }
    return shape_valid(&ks, dtype, target, why, size);
}

/* Whether TEXT is a code hash as the tuner writes it: 16 hex digits. */
int tunedb_code_hash_text(const char *text)
{
    size_t n = strlen(text);
    return n == 16 && strspn(text, "0123456789abcdef") == n;
}

/* Whether STATUS is one the tuner writes for a config timed in US (-1:
 * it did not run): "ok" for one that ran; for one that did not, why, as
 * measure_stub's notes say it: "build failed[: ...]", "WRONG: ...",
 * "wrong result", "wrote past its output", or an OpenCL status (its
 * name, "CL error"). Else what is wrong in WHY. */
int tunedb_status_fits(const char *status, double us, char *why,
                       size_t size)
{
    static const char *const failed[] = {
        "build failed", "wrong result", "wrote past its output", "CL error",
        NULL};
    int ran = us >= 0;
    int known = strcmp(status, "ok") == 0 ||
                strncmp(status, "build failed: ", 14) == 0 ||
                strncmp(status, "WRONG: ", 7) == 0 ||
                (strncmp(status, "CL_", 3) == 0 &&
                 strspn(status, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
                     strlen(status));
    for (int i = 0; failed[i] != NULL && !known; i++) {
        known = strcmp(status, failed[i]) == 0;
    }
    if (!known) {
        snprintf(why, size, "unknown status \"%.40s\" (the tuner's: "
                 "\"ok\", or why the config did not run, as \"build "
                 "failed: ...\", \"WRONG: ...\")", status);
    } else if (ran != (strcmp(status, "ok") == 0)) {
        snprintf(why, size, ran ? "status \"%.40s\" is for a config that did "
                 "not run (us: -1)" : "status \"%.40s\" is for a config that "
                 "ran (us >= 0)", status);
    }
    return known && ran == (strcmp(status, "ok") == 0);
}

/* Whether an entry's search keys agree (tunedb_internal.h): the reasons
 * a search ends before its last candidate are tune.c's. */
int tunedb_search_fits(long searched, long candidates, const char *complete,
                       const char *stopped, char *why, size_t size)
{
    static const char *const reasons[] = {"time budget", "max evals",
                                          "interrupted", NULL};
    int all = searched == candidates;
    int known = 0;
    for (int i = 0; reasons[i] != NULL; i++) {
        known |= strcmp(stopped, reasons[i]) == 0;
    }
    if (strcmp(complete, "true") != 0 && strcmp(complete, "false") != 0) {
        snprintf(why, size, "complete must be true or false (got '%.40s')",
                 complete);
    } else if (searched > candidates) {
        snprintf(why, size, "searched %ld of %ld candidates: more than "
                 "there are", searched, candidates);
    } else if (all != (strcmp(complete, "true") == 0)) {
        snprintf(why, size, "complete is %s but %ld of %ld candidates were "
                 "searched", complete, searched, candidates);
    } else if (!all && !known) {
        snprintf(why, size, "%s search needs stopped: \"time budget\", "
                 "\"max evals\" or \"interrupted\"%s%.40s%s",
                 "an incomplete", stopped[0] ? " (got \"" : "", stopped,
                 stopped[0] ? "\")" : "");
    } else if (all && stopped[0] != '\0') {
        snprintf(why, size, "stopped \"%.40s\" is for an incomplete search",
                 stopped);
    } else {
        return 1;
    }
    return 0;
}

/* Whether TEXT names a dtype (f32, f16, bf16); its value in *DTYPE. */
int tunedb_dtype_from_text(const char *text, enum dtype *dtype)
{
    static const enum dtype all[] = {DTYPE_F32, DTYPE_F16, DTYPE_BF16};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(text, dtype_name(all[i])) == 0) {
            *dtype = all[i];
            return 1;
        }
    }
    return 0;
}

/* The names of every op, for a message. */
void tunedb_known_ops(char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; op_registry[i] != NULL; i++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", i ? ", " : "",
                 op_registry[i]->name);
    }
}
