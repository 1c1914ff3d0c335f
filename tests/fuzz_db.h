/* fuzz_db.h - the tuning-database fuzz target (tests/fuzz_db.c), which
 * the test suite replays too. */
#ifndef SPECL_TESTS_FUZZ_DB_H
#define SPECL_TESTS_FUZZ_DB_H

#include <stddef.h>
#include <stdint.h>

/* Loads DATA as a tuning database and, when it loads, checks that it
 * saves and loads back the same (aborting if not) and uses it as gen
 * --db does. Returns the number of errors the loader reported. */
int fuzz_db_input(const uint8_t *data, size_t size);

/* libFuzzer's entry point: fuzz_db_input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
