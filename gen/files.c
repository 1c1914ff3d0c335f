/* files.c - writing files whole: a file replaced atomically, directories
 * made and removed, and a lock file that runs writing one place take in
 * turn (files.h says what each does). */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"

const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

char *path_join(const char *dir, const char *name)
{
    struct buf b;
    buf_init(&b);
    buf_printf(&b, "%s/%s", dir, name);
    return b.data;
}

int write_file(const char *path, const char *what, const char *text,
               size_t len, char *err, size_t errsize)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        snprintf(err, errsize, "%s: cannot create: %s", what,
                 strerror(errno));
        return -1;
    }
    int ok = fwrite(text, 1, len, f) == len && fflush(f) == 0;
    int why = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        why = errno;
    }
    if (!ok) {
        snprintf(err, errsize, "%s: cannot write: %s", what, strerror(why));
        return -1;
    }
    return 0;
}

int write_file_atomic(const char *path, const char *text, size_t len,
                      char *err, size_t errsize)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    if (write_file(tmp, tmp, text, len, err, errsize) < 0) {
        remove(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errsize, "%s: cannot rename into place: %s", path,
                 strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

int make_dirs(const char *dir, char *err, size_t errsize)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0777);
            *p = '/';
        }
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errsize, "%s: cannot create directory: %s", dir,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        return errno == ENOENT ? 0 : -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        return unlink(path);
    }
    DIR *d = opendir(path);
    int rc = d != NULL ? 0 : -1;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            char *sub = path_join(path, e->d_name);
            rc |= remove_tree(sub);
            free(sub);
        }
    }
    if (d != NULL) {
        closedir(d);
    }
    return rmdir(path) == 0 ? rc : -1;
}

int lock_file(const char *path, char *err, size_t errsize)
{
    for (;;) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
            snprintf(err, errsize, "%s: cannot create: %s", path,
                     strerror(errno));
            break;
        }
        int rc;
        while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
        }
        struct stat held, now;
        if (rc != 0 || fstat(fd, &held) != 0) {
            snprintf(err, errsize, "%s: cannot lock: %s", path,
                     strerror(errno));
            close(fd);
            break;
        }
        int there = stat(path, &now) == 0;
        if (!there && errno != ENOENT) {
            snprintf(err, errsize, "%s: %s", path, strerror(errno));
            close(fd);
            break;
        }
        if (there && now.st_dev == held.st_dev &&
            now.st_ino == held.st_ino) {
            return fd;
        }
        close(fd); /* removed by the run that held it: take the next */
    }
    return -1;
}

void unlock_file(const char *path, int fd)
{
    unlink(path);
    close(fd);
}
