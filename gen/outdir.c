/* outdir.c - a run's files into an output directory, all or none:
 * staged, then moved into place under the directory's lock, and put back
 * when a move fails (outdir.h says how). */
#include "outdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "files.h"

/* Inside an output directory: the lock of the runs that write into it,
 * held while one moves its files into place and removed after; the
 * prefix of each run's staging directory (mkdtemp); and, in a staging
 * directory, where the files it replaces are kept until it is done. */
#define OUTDIR_LOCK ".specl.lock"
#define OUTDIR_STAGING ".specl-tmp-"
#define OUTDIR_PREVIOUS "previous"

int outdir_begin(struct outdir *o, const char *dir, char *err,
                      size_t errsize)
{
    memset(o, 0, sizeof *o);
    if (make_dirs(dir, err, errsize) < 0) {
        return -1;
    }
    char *staging = path_join(dir, OUTDIR_STAGING "XXXXXX");
    if (mkdtemp(staging) == NULL) {
        snprintf(err, errsize, "%s: cannot create a directory for the new "
                 "files: %s", dir, strerror(errno));
        free(staging);
        return -1;
    }
    struct buf copy;
    buf_init(&copy);
    buf_puts(&copy, dir);
    o->dir = copy.data;
    o->staging = staging;
    return 0;
}

int outdir_add(struct outdir *o, const char *name,
                    const char *text, size_t len, char *err, size_t errsize)
{
    /* NAME is a file of DIR: not a path, not one of the run's own. */
    if (name[0] == '\0' || name[0] == '.' || strchr(name, '/') != NULL) {
        snprintf(err, errsize, "%s: not a name for an output file", name);
        return -1;
    }
    for (int i = 0; i < o->n_names; i++) {
        if (strcmp(base_name(o->names[i]), name) == 0) {
            snprintf(err, errsize, "%s/%s: written twice in one run", o->dir,
                     name);
            return -1;
        }
    }
    if (o->n_names == o->cap_names) {
        int cap = o->cap_names ? 2 * o->cap_names : 16;
        char **names = realloc(o->names, (size_t)cap * sizeof *names);
        if (names == NULL) {
            snprintf(err, errsize, "out of memory");
            return -1;
        }
        o->names = names;
        o->cap_names = cap;
    }
    char *staged = path_join(o->staging, name);
    char *target = path_join(o->dir, name);
    int rc = write_file(staged, target, text, len, err, errsize);
    free(staged);
    if (rc == 0) {
        o->names[o->n_names++] = target;
    } else {
        free(target);
    }
    return rc;
}

void outdir_discard(struct outdir *o)
{
    if (o->staging != NULL) {
        remove_tree(o->staging);
    }
    for (int i = 0; i < o->n_names; i++) {
        free(o->names[i]);
    }
    free(o->names);
    free(o->staging);
    free(o->dir);
    memset(o, 0, sizeof *o);
}

/* Undoes the moves of outdir_commit up to file N, whose move
 * failed: each file replaced gets its previous file back from PREVIOUS
 * (where KEPT[i]), each that did not exist before is removed. Returns 0,
 * or -1 with what could not be undone appended to ERR. */
static int put_back(const struct outdir *o, int n,
                           const char *previous, const unsigned char *kept,
                           char *err, size_t errsize)
{
    int rc = 0;
    for (int i = n; i >= 0; i--) {
        const char *target = o->names[i];
        char *old = path_join(previous, base_name(target));
        int bad = 0;
        if (kept[i]) {
            /* File N was not replaced: its previous file is still in
             * place, and renaming a link onto another link of the same
             * file does nothing (or, moved aside, it goes back). */
            bad = rename(old, target) != 0;
        } else if (i < n) {
            bad = unlink(target) != 0 && errno != ENOENT;
        }
        if (bad && rc == 0) {
            size_t used = strlen(err);
            snprintf(err + used, errsize - used, "; %s could not be put "
                     "back (%s): the previous files are in %s", target,
                     strerror(errno), previous);
            rc = -1;
        }
        free(old);
    }
    return rc;
}

int outdir_commit(struct outdir *o, char *err, size_t errsize)
{
    char *lock_path = path_join(o->dir, OUTDIR_LOCK);
    int lock = lock_file(lock_path, err, errsize);
    if (lock < 0) {
        free(lock_path);
        outdir_discard(o);
        return -1;
    }
    char *previous = path_join(o->staging, OUTDIR_PREVIOUS);
    unsigned char *kept = calloc((size_t)o->n_names + 1, 1);
    int ready = kept != NULL && mkdir(previous, 0700) == 0;
    if (!ready) {
        snprintf(err, errsize, "%s: cannot create: %s", previous,
                 kept != NULL ? strerror(errno) : "out of memory");
    }
    int failed = -1; /* the file whose move failed, if one did */
    for (int i = 0; ready && failed < 0 && i < o->n_names; i++) {
        const char *target = o->names[i];
        const char *name = base_name(target);
        char *staged = path_join(o->staging, name);
        char *old = path_join(previous, name);
        struct stat st;
        int exists = lstat(target, &st) == 0;
        if (!exists && errno != ENOENT) {
            snprintf(err, errsize, "%s: %s", target, strerror(errno));
            failed = i;
        } else if (exists && !S_ISDIR(st.st_mode)) {
            /* A second link to the file replaced, to put it back if a
             * later move fails; where the file system has no hard links,
             * the file itself, moved aside until replaced. */
            if (link(target, old) != 0 && rename(target, old) != 0) {
                snprintf(err, errsize, "%s: cannot keep the previous file "
                         "(in %s): %s", target, previous, strerror(errno));
                failed = i;
            } else {
                kept[i] = 1;
            }
        }
        /* A directory in place of TARGET fails here (EISDIR). */
        if (failed < 0 && rename(staged, target) != 0) {
            snprintf(err, errsize, "%s: cannot move the new file into "
                     "place: %s", target, strerror(errno));
            failed = i;
        }
        free(staged);
        free(old);
    }
    int rc = 0;
    if (!ready) {
        rc = -1;
    } else if (failed >= 0) {
        rc = put_back(o, failed, previous, kept, err, errsize) == 0
                 ? -1
                 : -2;
    }
    if (rc == -2) {
        /* The only copies of some previous files are in PREVIOUS: the
         * staging directory stays. */
        free(o->staging);
        o->staging = NULL;
    }
    unlock_file(lock_path, lock);
    free(lock_path);
    outdir_discard(o);
    free(previous);
    free(kept);
    return rc;
}
