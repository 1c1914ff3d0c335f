/* fuzz_import_target.c - libFuzzer's entry for fuzz_import.c, apart
 * from it so that the test driver, which links fuzz_import.c beside
 * fuzz_db.c's entry, has one. */
#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_import_input(data, size);
    return 0;
}
