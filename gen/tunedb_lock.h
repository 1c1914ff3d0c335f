/* tunedb_lock.h - a tuning database's file, written by runs that may run
 * at once. */
#ifndef SPECL_TUNEDB_LOCK_H
#define SPECL_TUNEDB_LOCK_H

#include <stddef.h>

#include "tunedb.h"

/* Saves DB into PATH merged with what PATH holds now (another run's
 * entries and records kept; of two bests the faster), under PATH.lock, so
 * that runs writing one database at once lose nothing. Where PATH does
 * not load it is left as it is and DB goes to PATH.unmerged. */
int tunedb_save_merged(const struct tunedb *db, const char *path, char *err,
                       size_t errsize);

/* Whether the database at PATH can be written (its directory, since it is
 * replaced through a temporary file), before any measuring. */
int tunedb_writable(const char *path, char *err, size_t errsize);

#endif
