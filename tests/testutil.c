/* testutil.c - files, temporary directories and child commands shared by
 * the test suites. */
#include "testutil.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "variant.h"

char *tu_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t n = 0, cap = 4096;
    char *data = malloc(cap);
    while (data != NULL) {
        n += fread(data + n, 1, cap - n - 1, f);
        if (n < cap - 1) {
            break;
        }
        cap *= 2;
        char *p = realloc(data, cap);
        if (p == NULL) {
            free(data);
        }
        data = p;
    }
    int bad = ferror(f);
    fclose(f);
    if (data == NULL || bad) {
        free(data);
        return NULL;
    }
    data[n] = '\0';
    if (len != NULL) {
        *len = n;
    }
    return data;
}

int tu_run(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd) {
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) {
        return -1;
    }
    return WEXITSTATUS(st);
}

char *tu_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/specl-test-XXXXXX",
             base != NULL && base[0] != '\0' ? base : "/tmp");
    if (mkdtemp(tmpl) == NULL) {
        return NULL;
    }
    return strdup(tmpl);
}

int tu_rmtree(const char *dir)
{
    char **names;
    int n = tu_list(dir, NULL, &names);
    int rc = 0;
    if (n < 0) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char *p = tu_path(dir, names[i]);
        struct stat st;
        if (p != NULL && lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            rc |= tu_rmtree(p);
        } else if (p == NULL || remove(p) != 0) {
            rc = -1;
        }
        free(p);
    }
    tu_free_list(names, n);
    return rmdir(dir) == 0 ? rc : -1;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int tu_list(const char *dir, const char *suffix, char ***names)
{
    DIR *d = opendir(dir);
    int n = 0, cap = 0;
    *names = NULL;
    if (d == NULL) {
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            (suffix != NULL && !ends_with(e->d_name, suffix))) {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **p = realloc(*names, (size_t)cap * sizeof *p);
            if (p == NULL) {
                break;
            }
            *names = p;
        }
        (*names)[n] = strdup(e->d_name);
        if ((*names)[n] != NULL) {
            n++;
        }
    }
    closedir(d);
    if (n > 0) {
        qsort(*names, (size_t)n, sizeof **names, compare_names);
    }
    return n;
}

void tu_free_list(char **names, int n)
{
    for (int i = 0; i < n; i++) {
        free(names[i]);
    }
    free(names);
}

char *tu_path(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p != NULL) {
        snprintf(p, n, "%s/%s", a, b);
    }
    return p;
}

char *tu_flat(const char *text)
{
    char *out = malloc(strlen(text) + 1);
    size_t n = 0;
    if (out == NULL) {
        return NULL;
    }
    for (const char *p = text; *p != '\0'; p++) {
        char c = *p;
        if (c == '\n') {
            /* The next line's indentation, and its "*" in a comment. */
            p += strspn(p + 1, " ");
            if (p[1] == '*' && p[2] != '/') {
                p++;
            }
            c = ' ';
        }
        if (c != ' ' || n == 0 || out[n - 1] != ' ') {
            out[n++] = c;
        }
    }
    out[n] = '\0';
    return out;
}

int tu_first_diff(const char *a, const char *b, const char **line_a,
                  const char **line_b)
{
    const char *la = a, *lb = b;
    int line = 1;
    size_t i = 0;
    for (; a[i] != '\0' && a[i] == b[i]; i++) {
        if (a[i] == '\n') {
            line++;
            la = a + i + 1;
            lb = b + i + 1;
        }
    }
    if (a[i] == b[i]) {
        return 0;
    }
    if (line_a != NULL) {
        *line_a = la;
    }
    if (line_b != NULL) {
        *line_b = lb;
    }
    return line;
}

void tu_report_diff(const char *what, const char *a, const char *b)
{
    const char *la, *lb;
    int line = tu_first_diff(a, b, &la, &lb);
    if (line == 0) {
        return;
    }
    fprintf(stderr, "\n%s: first difference at line %d\n  expected: %.*s\n"
            "  got:      %.*s\n",
            what, line, (int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"),
            lb);
}

const struct variant_set *tu_gen_variants(const struct kernel_spec *ks)
{
    static struct variant_set vs;
    variants_build(ks, NULL, NULL, &vs, NULL);
    return &vs;
}

int tu_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) {
        n += *s == '\n';
    }
    return n;
}

int tu_replay_dir(const char *dir, const char *suffix, tu_replay_fn input,
                  int expect_errors, const char *what,
                  const char *replayer)
{
    char **names;
    int n = tu_list(dir, suffix, &names), count = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        if (suffix == NULL &&
            (strncmp(names[i], "README", 6) == 0 || names[i][0] == '.' ||
             (len >= 4 && strcmp(names[i] + len - 4, ".err") == 0))) {
            continue;
        }
        char *path = tu_path(dir, names[i]);
        char *data = tu_read(path, &len);
        TU_CHECK(data != NULL, "cannot read %s", path);
        fflush(NULL);
        pid_t pid = data != NULL ? fork() : -1;
        if (pid == 0) {
            int errors = input(path, data, len);
            free(data); /* for valgrind, which follows the child */
            free(path);
            tu_free_list(names, n);
            _exit(expect_errors < 0 || (errors != 0) == expect_errors ? 0
                                                                     : 3);
        }
        int st = 0;
        if (pid > 0 && waitpid(pid, &st, 0) == pid) {
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            TU_CHECK(code != 3, "%s: %s", path,
                     expect_errors ? "no error reported"
                                   : "an error reported");
            TU_CHECK(code == 0 || code == 3,
                     "%s crashes %s (%s %d); replay it with %s %s", path,
                     what, code < 0 ? "signal" : "exit status",
                     code < 0 ? WTERMSIG(st) : code, replayer, path);
        } else if (data != NULL) {
            CU_FAIL("cannot fork for a replay");
        }
        count++;
        free(data);
        free(path);
    }
    tu_free_list(names, n);
    return count;
}
