/* fuzz_spec.c - libFuzzer target for the spec reader: any bytes go to
 * spec_read_buffer (messages discarded) and every kernel that validates is
 * planned and rendered, as `specl gen` emits it without a database, by
 * emit_kernel and emit_decisions (nothing is written).
 *
 * Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined.
 * With tests/fuzz_main.c instead of libFuzzer it is build/fuzz_replay, a
 * plain program that replays the files and directories named on its
 * command line (crashers kept in tests/fuzz/regressions), as `make
 * valgrind` does. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "spec.h"
#include "variant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct spec_set set;
    struct diags quiet = {.out = NULL};
    spec_set_init(&set);
    spec_read_buffer(&set, "fuzz.yaml", data, size, &quiet);
    for (int i = 0; i < set.n_kernel; i++) {
        /* static: a variant set holds several whole kernel specs */
        static struct variant_set vs;
        struct emitted e;
        char err[256];
        variants_build(&set.kernel[i], NULL, NULL, &vs, NULL);
        if (emit_kernel(&vs, &e, err, sizeof err) == 0) {
            emitted_free(&e);
        }
        struct buf plan;
        buf_init(&plan);
        emit_decisions(&vs, &plan, err, sizeof err);
        buf_free(&plan);
    }
    spec_set_free(&set);
    return 0;
}
