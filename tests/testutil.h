/* testutil.h - files, temporary directories and child commands shared by
 * the test suites (spec, emit, syntax, stub). */
#ifndef SPECL_TESTS_TESTUTIL_H
#define SPECL_TESTS_TESTUTIL_H

#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdio.h>

/* A CUnit assertion that prints its printf-style message (to stderr) when
 * COND is false, so that a failure says which file, kernel or seed. */
#define TU_CHECK(cond, ...)                                                  \
    do {                                                                     \
        int tu_ok_ = (cond) != 0;                                            \
        if (!tu_ok_) {                                                       \
            fprintf(stderr, "\n    %s:%d: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
        CU_assertImplementation(tu_ok_, __LINE__, #cond, __FILE__, "",       \
                                CU_FALSE);                                   \
    } while (0)

/* The specl binary the command-line tests run (relative to the repo root,
 * where the tests run from); tests.mk passes $(B)/specl. */
#ifdef SPECL_BIN
#define TU_SPECL SPECL_BIN
#else
#define TU_SPECL "build/specl"
#endif

/* The whole file at PATH, NUL-terminated (*LEN, if not NULL, gets its
 * length); NULL if it cannot be read. Caller frees with free(). */
char *tu_read(const char *path, size_t *len);

/* Runs CMD (printf-style) through sh -c; returns its exit status, or -1
 * when it could not run or was killed by a signal. */
int tu_run(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* A new empty directory under $TMPDIR (or /tmp); caller frees the string
 * and removes the directory with tu_rmtree. NULL on failure. */
char *tu_tempdir(void);

/* Removes DIR and everything under it. Returns 0 on success. */
int tu_rmtree(const char *dir);

/* The sorted names of the entries of DIR ending in SUFFIX (NULL: every
 * entry but . and ..) in *NAMES; returns their count, or -1 if DIR cannot
 * be read. Free with tu_free_list. */
int tu_list(const char *dir, const char *suffix, char ***names);
void tu_free_list(char **names, int n);

/* What tu_replay_dir feeds each file to: the file's PATH and its LEN
 * bytes at DATA; returns the errors it reported. */
typedef int (*tu_replay_fn)(const char *path, const char *data, size_t len);

/* Feeds every file of DIR whose name ends in SUFFIX (NULL: any but
 * READMEs, hidden files and .err files) to INPUT in a child process, so
 * that a crasher fails the test and names its file instead of taking the
 * test driver down. EXPECT_ERRORS 1: each must report an error; 0: none
 * may; -1: either. WHAT names the code under test ("the importer"), and
 * REPLAYER the program that replays a file. Returns the number of
 * files. */
int tu_replay_dir(const char *dir, const char *suffix, tu_replay_fn input,
                  int expect_errors, const char *what,
                  const char *replayer);

/* "A/B" in a new string (caller frees). */
char *tu_path(const char *a, const char *b);

/* TEXT with every line break, the indentation after it and a comment
 * line's leading "*" made one blank, and every run of blanks one blank
 * (caller frees): what emitted C says, however its lines are laid out
 * (gen/c_layout.c), for strstr of a flattened line. */
char *tu_flat(const char *text);

/* The 1-based line number of the first difference between A and B (0 if
 * equal); *LINE_A / *LINE_B (if not NULL) point at that line in each. */
int tu_first_diff(const char *a, const char *b, const char **line_a,
                  const char **line_b);

/* Prints a short diff report of A (expected) and B (got) to stderr,
 * naming WHAT. */
void tu_report_diff(const char *what, const char *a, const char *b);

/* The number of newlines in S. */
int tu_count_lines(const char *s);

struct kernel_spec;
struct variant_set;

/* The variants `specl gen` emits for KS without a tuning database
 * (variants_build), in a buffer that the next call overwrites. */
const struct variant_set *tu_gen_variants(const struct kernel_spec *ks);

#endif
