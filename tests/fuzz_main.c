/* fuzz_main.c - a main for the fuzz targets without libFuzzer: replays
 * the files and directories named on the command line through
 * LLVMFuzzerTestOneInput (build/fuzz_replay for the spec reader,
 * build/fuzz_db_replay for the tuning database), as `make valgrind` and
 * a crasher's investigation do. */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


/* Replays the file at PATH; returns 0, or 1 if it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t len = 0, cap = 4096;
    uint8_t *data = malloc(cap);
    while (data != NULL) {
        len += fread(data + len, 1, cap - len, f);
        if (len < cap) {
            break;
        }
        cap *= 2;
        uint8_t *p = realloc(data, cap);
        if (p == NULL) {
            free(data);
        }
        data = p;
    }
    int bad = ferror(f) || data == NULL;
    fclose(f);
    if (!bad) {
        LLVMFuzzerTestOneInput(data, len);
    } else {
        fprintf(stderr, "%s: cannot read\n", path);
    }
    free(data);
    return bad;
}

/* Replays PATH, or every regular file in it if it is a directory. */
static int replay(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    DIR *d = opendir(path);
    if (d == NULL) {
        perror(path);
        return 1;
    }
    int bad = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char child[4096];
        if (e->d_name[0] == '.') {
            continue;
        }
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        if (stat(child, &st) == 0 && S_ISREG(st.st_mode)) {
            (*count)++;
            bad |= replay_file(child);
        }
    }
    closedir(d);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0, count = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        bad |= replay(argv[i], &count);
    }
    printf("%s: %d input%s replayed\n", argv[0], count,
           count == 1 ? "" : "s");
    return bad;
}
