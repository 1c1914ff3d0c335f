/* tunedb_lock.c - a tuning database's file, written by runs that may run
 * at once: saved merged with what the file holds now, under its lock. */
#include "tunedb_lock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "files.h"

int tunedb_save_merged(const struct tunedb *db, const char *path, char *err,
                       size_t errsize)
{
    char lock[4200];
    snprintf(lock, sizeof lock, "%s.lock", path);
    int fd = lock_file(lock, err, errsize);
    if (fd < 0) {
        return -1;
    }
    struct tunedb disk;
    struct diags d = {.out = stderr};
    tunedb_init(&disk);
    int rc = tunedb_load(&disk, path, 1, &d) == 0 ? 0 : -1;
    if (rc < 0) {
        /* Not overwritten, and this run's measurements not lost. */
        char aside[4200], why[512] = "";
        snprintf(aside, sizeof aside, "%s.unmerged", path);
        if (tunedb_save(db, aside, why, sizeof why) == 0) {
            snprintf(err, errsize, "%s does not load (the errors above); "
                     "not overwritten: this run's measurements are in %s",
                     path, aside);
        } else {
            snprintf(err, errsize, "%s does not load (the errors above); "
                     "not overwritten, and this run's measurements could "
                     "not be saved aside: %s", path, why);
        }
    } else {
        tunedb_merge(&disk, db);
        rc = tunedb_save(&disk, path, err, errsize);
    }
    tunedb_free(&disk);
    unlock_file(lock, fd);
    return rc;
}

int tunedb_writable(const char *path, char *err, size_t errsize)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) {
        snprintf(dir, sizeof dir, ".");
    } else if (slash == dir) {
        dir[1] = '\0';
    } else {
        *slash = '\0';
    }
    if (access(dir, W_OK) != 0) {
        snprintf(err, errsize, "cannot write the tuning database %s: %s: %s",
                 path, dir, strerror(errno));
        return 0;
    }
    return 1;
}
