/* outdir.h - a run's files into an output directory, all or none. */
#ifndef SPECL_OUTDIR_H
#define SPECL_OUTDIR_H

#include <stddef.h>

/* The files of one run on their way into an output directory DIR, all or
 * none. outdir_add writes each into a staging directory of the run's own
 * inside DIR (DIR/.specl-tmp-XXXXXX); outdir_commit then takes DIR's lock
 * (flock on DIR/.specl.lock, a file removed again when the run is done)
 * and renames them into place one by one, keeping a second link to each
 * file it replaces until all are in place. A run that fails anywhere puts
 * back what it replaced and removes what it staged, so DIR holds either
 * every file of the run or the files it held before; and of runs that
 * write into one DIR at once, one's files all replace the other's, never
 * some of them. A run killed before it is done may leave its staging
 * directory behind: it is safe to remove when no run is writing. */
struct outdir {
    char *dir;     /* DIR as given */
    char *staging; /* DIR/.specl-tmp-XXXXXX, while it exists */
    char **names;  /* DIR/NAME of each file added, in order */
    int n_names;
    int cap_names;
};

/* Creates DIR (and its parents) if missing and a staging directory in it.
 * Returns 0, after which O ends with outdir_commit or outdir_discard; or
 * -1 with a message in ERR (nothing to end). */
int outdir_begin(struct outdir *o, const char *dir, char *err,
                 size_t errsize);

/* Stages the LEN bytes of TEXT as DIR/NAME. Returns 0, or -1 with a
 * message in ERR (then discard O). */
int outdir_add(struct outdir *o, const char *name, const char *text,
               size_t len, char *err, size_t errsize);

/* Moves every staged file into place, under DIR's lock, and ends O.
 * Returns 0; -1 with a message in ERR when it failed and DIR holds what
 * it held before; or -2 when, moreover, some files it replaced could not
 * be put back (ERR names them and the directory that keeps them). */
int outdir_commit(struct outdir *o, char *err, size_t errsize);

/* Removes what O staged and ends it; DIR is left as it was. */
void outdir_discard(struct outdir *o);

#endif
