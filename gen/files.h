/* files.h - writing files whole: a file replaced atomically, directories
 * made and removed, and a lock file that runs writing one place take in
 * turn. The lowest layer of every command that writes. */
#ifndef SPECL_FILES_H
#define SPECL_FILES_H

#include <stddef.h>

/* "DIR/NAME" in a new string (caller frees; aborts when out of memory). */
char *path_join(const char *dir, const char *name);

/* The base name of PATH (after its last slash), inside PATH. */
const char *base_name(const char *path);

/* Writes the LEN bytes of TEXT to PATH (created or truncated). Returns 0,
 * or -1 with a message in ERR that names the file WHAT. */
int write_file(const char *path, const char *what, const char *text,
               size_t len, char *err, size_t errsize);

/* Writes TEXT to PATH atomically (temporary file, then rename): one file,
 * with no lock; a run's several files go through outdir.h. */
int write_file_atomic(const char *path, const char *text, size_t len,
                      char *err, size_t errsize);

/* Creates DIR and its missing parents. Returns 0, or -1 with a message in
 * ERR. */
int make_dirs(const char *dir, char *err, size_t errsize);

/* Removes PATH and, for a directory, everything under it (without
 * following links). Returns 0, or -1 when something stayed. */
int remove_tree(const char *path);

/* Takes the lock file PATH (flock, exclusive), waiting while another run
 * holds it. The holder removes the file when it is done (unlock_file), so
 * nothing of specl's stays between runs; a lock taken on a file removed
 * in the meantime is taken again, on the file that is there now. Returns
 * the descriptor, or -1 with the reason in ERR. */
int lock_file(const char *path, char *err, size_t errsize);

/* Releases the lock lock_file took, removing its file first: a run
 * waiting on it then finds it gone and takes the next. */
void unlock_file(const char *path, int fd);

#endif
