/* fuzz_import.h - the importer's fuzz target as a function the test
 * suite calls (test_import.c replays tests/fuzz/import-regressions). */
#ifndef SPECL_FUZZ_IMPORT_H
#define SPECL_FUZZ_IMPORT_H

#include <stddef.h>
#include <stdint.h>

/* DATA as a config.json through `specl import`'s steps; aborts where
 * a config that reads gives a spec that does not. Returns the config's
 * error count. */
int fuzz_import_input(const uint8_t *data, size_t size);

#endif
