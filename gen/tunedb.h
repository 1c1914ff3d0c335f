/* tunedb.h - the tuning database: best knobs per device, op and shape,
 * kept as YAML (tuning/<device-slug>.yaml by default). */
#ifndef SPECL_TUNEDB_H
#define SPECL_TUNEDB_H

#include "diag.h"
#include "knobs.h"
#include "op.h"

/* The most rows an entry is measured at (`specl tune --rows`). */
#define TUNE_MAX_ROWS (1L << 24)

struct buf;

/* One configuration measured for an entry (kept so that a run resumes). */
struct tune_record {
    char knobs[TUNE_TEXT];  /* "m=128 n=64 ...": every knob of the op */
    double us;              /* median time; < 0 when it did not run */
    char status[96];        /* "ok", or why it was skipped */
    char code[17];          /* kernel_code_hash of what it measured, 16 hex
                             * digits; "" (older files): unknown */
    int fresh;              /* measured by this process (not saved): it
                             * replaces a record of the same knobs on
                             * merge */
};

/* The result of tuning one kernel shape on one device. */
struct tune_entry {
    char device[256];
    char driver[128];
    char op[32];
    char dtype[8];
    char target[8];         /* the op defaults the tuner ran ("gpu", "cpu",
                             * "tensor"); "" in older files: "gpu" */
    char shape[TUNE_TEXT];  /* "in_features=4096 ...": int and bool fields */
    long rows;
    char best[TUNE_TEXT];   /* knobs of the fastest config; "" if none */
    double best_us;
    double best_gbs;
    double best_gflops;
    double default_us;      /* the op's default knobs, same run */
    /* How best_us and default_us were measured (all 0 in older files and
     * entries whose run was stopped before: then best_us is the search's
     * own median of the best, the luckiest of many): after the search,
     * the best and the defaults re-timed back to back, RETIMED_REPS runs
     * each, interleaved on the same buffers; the times are their medians,
     * the *_p10_us and *_p90_us the 10th and 90th percentiles of those
     * runs. */
    int retimed_reps;
    double best_p10_us, best_p90_us;
    double default_p10_us, default_p90_us;
    /* The search that stored it (0 in older files: unknown): candidates
     * evaluated of the kernel's distinct valid configs, and why it ended
     * before all of them ("" when complete). */
    long searched;
    long candidates;
    char stopped[32];
    int search_fresh;       /* searched, candidates and stopped were set by
                             * this process (not saved): they replace an
                             * older run's on merge */
    int default_fresh;      /* default_us was timed by this process (not
                             * saved): it replaces an older one on merge */
    int best_fresh;         /* best was decided by this process, which
                             * found best_seen there (neither saved): on
                             * merge it replaces best_seen even where that
                             * is faster (timed on older code), any other
                             * best only where faster */
    char best_seen[TUNE_TEXT];
    /* The crossover of a ladder (0 where not measured): the best runs up
     * to UPTO_ROWS rows, the best of the entry at UPTO_NEXT rows (the next
     * row count; its best was UPTO_WITH) from NEXT_FROM, the defaults
     * between; the three timed at the rows between (specl tune --rows).
     * ROWS <= UPTO_ROWS < NEXT_FROM <= UPTO_NEXT. */
    long upto_rows, upto_next, next_from;
    char upto_with[TUNE_TEXT];
    char version[16];       /* specl version that measured it */
    int n_tried;
    int cap_tried;
    struct tune_record *tried;
};

struct tunedb {
    int n;
    int cap;
    struct tune_entry *entry;
};

void tunedb_init(struct tunedb *db);
void tunedb_free(struct tunedb *db);

/* Loads PATH into DB (merged with what DB holds, as tunedb_merge does).
 * A missing file is an empty database when MAY_BE_MISSING. Errors go
 * through D with file:line:col, and a file with any leaves DB as it was.
 * Every entry is checked: its keys known and given once, rows an integer
 * in [1, TUNE_MAX_ROWS], times and rates finite and >= 0 (a tried
 * config's time -1 when it did not run), a known op and dtype, a target
 * of gpu, cpu or tensor if given, its shape as tune_shape_text writes it
 * and one the op's checks take, its best and tried knobs knobs of the op
 * (knobs_parse: each once), its best one of its tried configs (when it
 * has any), statuses as the tuner writes them, no tried config twice, no
 * NUL in a text and no entry of another's key.
 * Returns the number of errors. */
int tunedb_load(struct tunedb *db, const char *path, int may_be_missing,
                struct diags *d);

/* tunedb_load of the LEN bytes at DATA, named PATH in messages. */
int tunedb_load_buffer(struct tunedb *db, const char *path,
                       const unsigned char *data, size_t len,
                       struct diags *d);

/* DB as the YAML text tunedb_save writes, appended to OUT. Any text in
 * DB is quoted so that it loads back the same (a byte that is not UTF-8
 * as the code point of its value). */
void tunedb_format(const struct tunedb *db, struct buf *out);

/* Writes DB to PATH atomically. Returns 0, or -1 with ERR filled. */
int tunedb_save(const struct tunedb *db, const char *path, char *err,
                size_t errsize);

/* The entry with this exact key, or NULL; tunedb_add makes one. */
struct tune_entry *tunedb_find(struct tunedb *db, const char *device,
                               const char *driver, const char *op,
                               const char *dtype, const char *shape,
                               long rows);
struct tune_entry *tunedb_add(struct tunedb *db, const struct tune_entry *e);

/* Appends a tried config to E (replacing one with the same knobs), its
 * code unknown and not fresh; returns the record. */
struct tune_record *tune_entry_record(struct tune_entry *e, const char *knobs,
                                      double us, const char *status);
/* The record for KNOBS in E, or NULL. */
const struct tune_record *tune_entry_tried(const struct tune_entry *e,
                                           const char *knobs);

/* Merges SRC into DST: entries with the same key combine their tried
 * configs and keep the faster best. */
void tunedb_merge(struct tunedb *dst, const struct tunedb *src);


/* How `specl gen` chose a kernel's knobs from a database. */
enum tune_pick { PICK_NONE, PICK_EXACT, PICK_NEAREST };

/* Finds knobs for KS in DB: the entry of the same device (DEVICE, or any
 * when NULL and DB holds one device), op, dtype and shape (the one with
 * the most rows), else the nearest shape of the same op, dtype and flags.
 * Copies its best knobs into KNOBS and a description into WHY. */
enum tune_pick tunedb_pick(const struct tunedb *db, const char *device,
                           const struct kernel_spec *ks, char *knobs,
                           size_t knobs_size, char *why, size_t why_size);

/* tunedb_pick's entry itself (NULL for PICK_NONE, the kind in *PICK). */
const struct tune_entry *tunedb_pick_entry(const struct tunedb *db,
                                           const char *device,
                                           const struct kernel_spec *ks,
                                           enum tune_pick *pick, char *why,
                                           size_t why_size);

struct spec_set;

/* Sets KS's knobs from a database entry's KNOBS text, timed at ROWS
 * rows, but for those of the op's few_rows_knobs, which keep KS's own
 * (the defaults, where the spec left them unset) save for what the op's
 * entry_rows takes from the entry. Returns -1 when KNOBS do not read as
 * the op's, KS then undefined. */
int tunedb_entry_knobs(struct kernel_spec *ks, const char *knobs, long rows);

/* For every kernel of SET that asked for `tile: auto` or gave no knob at
 * all, takes knobs from DB (see tunedb_pick) when they validate for its
 * shape, and notes the source in the kernel's tile_note. */
void tunedb_apply(const struct tunedb *db, struct spec_set *set,
                  const char *device);

/* A file-name-safe form of a device name ("nvidia-h100-80gb-hbm3"). */
void tune_device_slug(const char *device, char *out, size_t size);

/* The device of DB's entries that NAME names: a device name as stored, or
 * its slug (as in the database's file name). NULL when none does; then
 * LIST (when not NULL) gets the devices the database holds, "name (slug)"
 * separated by "; ". */
const char *tunedb_device(const struct tunedb *db, const char *name,
                          char *list, size_t list_size);

/* The shape key of KS: its int and bool fields as "key=value ...", a
 * stand-in (param_stand_in) only when the spec gives it, a choice
 * (weight_layout: out_in, rope's style...) only when not its default:
 * kernels that differ in one read their operands otherwise, and share no
 * entry. */
void tune_shape_text(const struct kernel_spec *ks, char *out, size_t size);

#endif
