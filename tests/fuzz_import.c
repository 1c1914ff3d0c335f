/* fuzz_import.c - libFuzzer target for `specl import`: any bytes go to
 * import_read_config_text as a config.json (messages discarded). A config
 * that reads is written as a spec with several sets of options, and each
 * spec written must read back without an error (the check `specl import`
 * makes before it writes, reported there as an internal error), else the
 * target aborts, which libFuzzer reports as a crash. The training spec's
 * kernels are then planned and rendered, as `specl gen` emits them.
 *
 * Built by `make fuzz-import` with clang -fsanitize=fuzzer,address,
 * undefined, its entry in fuzz_import_target.c. The test suite (test_import.c) replays
 * tests/fuzz/import-regressions and tests/models through
 * fuzz_import_input, each in a child process; build/fuzz_import_replay
 * (with fuzz_import_target.c and fuzz_main.c) replays files and directories named on its
 * command line, as `make valgrind` does. */
#include "fuzz_import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "emit.h"
#include "import_model.h"
#include "spec.h"
#include "variant.h"

/* The options a spec is written with: the command line's defaults, a
 * training spec of every projection, a rank of 1 in half precision. */
static const struct import_options option_sets[] = {
    {.rank = 16, .alpha = 32, .dtype = DTYPE_BF16,
     .targets = TARGET_BIT(T_Q) | TARGET_BIT(T_K) | TARGET_BIT(T_V) |
                TARGET_BIT(T_O)},
    {.rank = 8, .alpha = 16, .dtype = DTYPE_F32, .train = 1,
     .targets = (1u << N_TARGET_PROJ) - 1},
    {.rank = 1, .alpha = -2.5, .dtype = DTYPE_F16, .prefix = "m",
     .targets = TARGET_BIT(T_GATE) | TARGET_BIT(T_UP) | TARGET_BIT(T_DOWN)},
};

/* Plans and renders every kernel of SET (failures are reported, not
 * crashes: only a crash is a finding here). */
static void emit_all(const struct spec_set *set)
{
    for (int i = 0; i < set->n_kernel; i++) {
        /* static: a variant set holds several whole kernel specs */
        static struct variant_set vs;
        struct emitted e;
        char err[256];
        variants_build(&set->kernel[i], NULL, NULL, &vs, NULL);
        if (emit_kernel(&vs, &e, err, sizeof err) == 0) {
            emitted_free(&e);
        }
    }
}

/* The spec of M with O must read back; the training one is emitted. */
static void write_and_read_back(const struct model *m,
                                const struct import_options *o)
{
    struct buf text, why;
    int written = 0, left_out = 0;
    buf_init(&text);
    buf_init(&why);
    if (import_write_spec(m, o, &text, &written, &left_out, &why) == 0) {
        struct spec_set set;
        struct diags d = {.out = NULL};
        spec_set_init(&set);
        int errors = spec_read_buffer(&set, "imported.yaml",
                                      (const unsigned char *)buf_str(&text),
                                      text.len, &d);
        if (errors != 0) {
            struct diags shown = {.out = stderr};
            spec_set_free(&set);
            spec_set_init(&set);
            spec_read_buffer(&set, "imported.yaml",
                             (const unsigned char *)buf_str(&text), text.len,
                             &shown);
            fprintf(stderr, "fuzz_import: the spec written does not read "
                    "back (%d errors; rank %ld)\n--- spec\n%s", errors,
                    o->rank, buf_str(&text));
            abort();
        }
        if (o->train) {
            emit_all(&set);
        }
        spec_set_free(&set);
    }
    buf_free(&text);
    buf_free(&why);
}

int fuzz_import_input(const uint8_t *data, size_t size)
{
    struct model m;
    struct diags quiet = {.out = NULL};
    int errors = import_read_config_text("config.json", data, size, &m,
                                         &quiet);
    if (errors == 0) {
        for (size_t i = 0; i < sizeof option_sets / sizeof *option_sets;
             i++) {
            struct import_options o = option_sets[i];
            o.config_path = "config.json";
            write_and_read_back(&m, &o);
        }
    }
    return errors;
}
