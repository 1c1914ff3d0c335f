/* fuzz_db.c - libFuzzer target for the tuning-database loader: any bytes
 * go to tunedb_load_buffer (messages discarded). A database that loads
 * must save and load back to the same text (tunedb_format), else the
 * target aborts, which libFuzzer reports as a crash: `specl tune` merges
 * with what it saved before, so a file it cannot read back stops every
 * later run. Then what loaded is used as `specl gen --db` uses it: picked
 * and applied to one kernel of each op (variants_build), for any device
 * and for the first entry's, and merged into a copy of itself.
 *
 * Built by `make fuzz-db` with clang -fsanitize=fuzzer,address,undefined.
 * The test suite (test_tune.c) replays tests/fuzz/db-regressions and the
 * database fixtures through fuzz_db_input, each in a child process;
 * build/fuzz_db_replay (with tests/fuzz_main.c) replays files and
 * directories named on its command line, as `make valgrind` does. */
#include "fuzz_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "spec.h"
#include "tunedb.h"
#include "variant.h"

/* Kernels that entries may fit: one of each op, of several dtypes and
 * flags, near the shapes of the seeds. */
static const char kernels_text[] =
    "kernels:\n"
    "  - {name: f_lora, op: lora_forward, in_features: 64, out_features: 64,"
    " rank: 4, tile: auto}\n"
    "  - {name: f_delta, op: lora_forward, base: false, in_features: 4096,"
    " out_features: 4096, rank: 16}\n"
    "  - {name: f_lora16, op: lora_forward, dtype: f16, in_features: 128,"
    " out_features: 96, rank: 8, accumulate: true}\n"
    "  - {name: f_softmax, op: softmax, features: 1024}\n"
    "  - {name: f_rmsnorm, op: rmsnorm, dtype: bf16, features: 4096}\n"
    "  - {name: f_layernorm, op: layernorm, features: 768, tile: auto}\n";

static const struct spec_set *kernels(void)
{
    static struct spec_set set;
    static int read;
    if (!read) {
        struct diags d = {.out = stderr};
        spec_set_init(&set);
        if (spec_read_buffer(&set, "fuzz_db kernels",
                             (const unsigned char *)kernels_text,
                             strlen(kernels_text), &d) != 0) {
            abort(); /* the target's own spec: a bug here, not in the input */
        }
        read = 1;
    }
    return &set;
}

/* DB saved and loaded back must be DB: the same text again. */
static void check_round_trip(const struct tunedb *db)
{
    struct buf first, again;
    struct tunedb back;
    struct diags d = {.out = stderr};
    buf_init(&first);
    buf_init(&again);
    tunedb_init(&back);
    tunedb_format(db, &first);
    int errors = tunedb_load_buffer(&back, "saved.yaml",
                                    (const unsigned char *)buf_str(&first),
                                    first.len, &d);
    tunedb_format(&back, &again);
    if (errors != 0 || back.n != db->n ||
        strcmp(buf_str(&first), buf_str(&again)) != 0) {
        fprintf(stderr, "fuzz_db: a database that loaded does not load back "
                "the same (%d errors, %d entries of %d)\n--- saved\n%s--- "
                "saved again\n%s", errors, back.n, db->n, buf_str(&first),
                buf_str(&again));
        abort();
    }
    tunedb_free(&back);
    buf_free(&first);
    buf_free(&again);
}

/* DB as gen --db uses it, for DEVICE (NULL: any, as without
 * --db-device). */
static void apply(const struct tunedb *db, const char *device)
{
    /* static: a variant set holds several whole kernel specs */
    static struct variant_set vs;
    const struct spec_set *set = kernels();
    for (int k = 0; k < set->n_kernel; k++) {
        struct buf notes;
        buf_init(&notes);
        variants_build(&set->kernel[k], db, device, &vs, &notes);
        buf_free(&notes);
    }
}

int fuzz_db_input(const uint8_t *data, size_t size)
{
    struct tunedb db, copy;
    struct diags quiet = {.out = NULL};
    tunedb_init(&db);
    int errors = tunedb_load_buffer(&db, "fuzz.yaml", data, size, &quiet);
    if (errors == 0) {
        check_round_trip(&db);
        apply(&db, NULL);
        if (db.n > 0) {
            char held[512];
            apply(&db, tunedb_device(&db, db.entry[0].device, held,
                                     sizeof held));
        }
        tunedb_init(&copy);
        tunedb_merge(&copy, &db);
        tunedb_merge(&copy, &db);
        tunedb_free(&copy);
    }
    tunedb_free(&db);
    return errors;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_db_input(data, size);
    return 0;
}
