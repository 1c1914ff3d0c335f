/* fuzz_spec.c - libFuzzer target for the spec reader: any bytes go to
 * spec_read_buffer (messages discarded) and every kernel that validates is
 * planned and rendered, as `specl gen` emits it without a database, by
 * emit_kernel and emit_decisions (nothing is written).
 *
 * Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined.
 * With -DSPECL_FUZZ_MAIN it is a plain program that replays the files and
 * directories named on its command line (crashers kept in
 * tests/fuzz/regressions), as `make valgrind` does. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "spec.h"
#include "variant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct spec_set set;
    struct diags quiet = {.out = NULL};
    spec_set_init(&set);
    spec_read_buffer(&set, "fuzz.yaml", data, size, &quiet);
    for (int i = 0; i < set.n_kernel; i++) {
        /* static: a variant set holds several whole kernel specs */
        static struct variant_set vs;
        struct emitted e;
        char err[256];
        variants_build(&set.kernel[i], NULL, NULL, &vs, NULL);
        if (emit_kernel(&vs, &e, err, sizeof err) == 0) {
            emitted_free(&e);
        }
        struct buf plan;
        buf_init(&plan);
        emit_decisions(&vs, &plan, err, sizeof err);
        buf_free(&plan);
    }
    spec_set_free(&set);
    return 0;
}

#ifdef SPECL_FUZZ_MAIN
#include <dirent.h>
#include <sys/stat.h>

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
        fputs("usage: fuzz_replay FILE|DIR...\n", stderr);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        bad |= replay(argv[i], &count);
    }
    printf("fuzz_replay: %d input%s replayed\n", count, count == 1 ? "" : "s");
    return bad;
}
#endif
