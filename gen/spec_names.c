/* spec_names.c - the names a kernel may not have, and why.
 *
 * A kernel's name is a C identifier that prefixes every symbol it emits:
 * NAME.h declares `typedef struct NAME NAME`, NAME_create ... NAME_destroy
 * and macros such as NAME_RANK, next to <CL/cl.h> and <stddef.h>; NAME.c
 * also includes <limits.h>, <stdint.h>, <stdio.h>, <stdlib.h> and
 * <string.h>, and NAME.h is meant to be usable from C++. So a name must
 * not be a keyword of C (through C23) or C++ (through C++20), a macro the
 * compilers predefine, a name OpenCL or the emitted code keep for
 * themselves, one C reserves, or a name those headers declare or define.
 *
 * The header tables below hold what glibc's headers (Debian 12, glibc
 * 2.36) and Khronos' OpenCL headers declare, as gcc 12 and clang 14 see
 * them in their default GNU C dialects, with _GNU_SOURCE, in C23 and in
 * C++: every macro, and every name that clashes with `typedef struct NAME
 * NAME; struct NAME {...};` (struct members and parameter names do not).
 * Each name is listed under the first of the headers that has it, in the
 * order stddef.h, stdint.h, limits.h, stdio.h, stdlib.h, string.h, and
 * each table is sorted (strcmp) for bsearch. The spec suite checks the
 * tables against the compilers of the machine it runs on and names what
 * is missing. Other C libraries (macOS, Windows) are not covered. */
#include "spec_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const stddef_macros[] = {
    "NULL", "offsetof",
};
static const char *const stddef_names[] = {
    "max_align_t", "nullptr_t", "ptrdiff_t", "size_t",
};
static const char *const stdint_macros[] = {
    "INT16_C", "INT16_MAX", "INT16_MIN", "INT16_WIDTH", "INT32_C",
    "INT32_MAX", "INT32_MIN", "INT32_WIDTH", "INT64_C", "INT64_MAX",
    "INT64_MIN", "INT64_WIDTH", "INT8_C", "INT8_MAX", "INT8_MIN",
    "INT8_WIDTH", "INTMAX_C", "INTMAX_MAX", "INTMAX_MIN", "INTMAX_WIDTH",
    "INTPTR_MAX", "INTPTR_MIN", "INTPTR_WIDTH", "INT_FAST16_MAX",
    "INT_FAST16_MIN", "INT_FAST16_WIDTH", "INT_FAST32_MAX", "INT_FAST32_MIN",
    "INT_FAST32_WIDTH", "INT_FAST64_MAX", "INT_FAST64_MIN",
    "INT_FAST64_WIDTH", "INT_FAST8_MAX", "INT_FAST8_MIN", "INT_FAST8_WIDTH",
    "INT_LEAST16_MAX", "INT_LEAST16_MIN", "INT_LEAST16_WIDTH",
    "INT_LEAST32_MAX", "INT_LEAST32_MIN", "INT_LEAST32_WIDTH",
    "INT_LEAST64_MAX", "INT_LEAST64_MIN", "INT_LEAST64_WIDTH",
    "INT_LEAST8_MAX", "INT_LEAST8_MIN", "INT_LEAST8_WIDTH", "PTRDIFF_MAX",
    "PTRDIFF_MIN", "PTRDIFF_WIDTH", "SIG_ATOMIC_MAX", "SIG_ATOMIC_MIN",
    "SIG_ATOMIC_WIDTH", "SIZE_MAX", "SIZE_WIDTH", "UINT16_C", "UINT16_MAX",
    "UINT16_WIDTH", "UINT32_C", "UINT32_MAX", "UINT32_WIDTH", "UINT64_C",
    "UINT64_MAX", "UINT64_WIDTH", "UINT8_C", "UINT8_MAX", "UINT8_WIDTH",
    "UINTMAX_C", "UINTMAX_MAX", "UINTMAX_WIDTH", "UINTPTR_MAX",
    "UINTPTR_WIDTH", "UINT_FAST16_MAX", "UINT_FAST16_WIDTH",
    "UINT_FAST32_MAX", "UINT_FAST32_WIDTH", "UINT_FAST64_MAX",
    "UINT_FAST64_WIDTH", "UINT_FAST8_MAX", "UINT_FAST8_WIDTH",
    "UINT_LEAST16_MAX", "UINT_LEAST16_WIDTH", "UINT_LEAST32_MAX",
    "UINT_LEAST32_WIDTH", "UINT_LEAST64_MAX", "UINT_LEAST64_WIDTH",
    "UINT_LEAST8_MAX", "UINT_LEAST8_WIDTH", "WCHAR_MAX", "WCHAR_MIN",
    "WCHAR_WIDTH", "WINT_MAX", "WINT_MIN", "WINT_WIDTH",
};
static const char *const stdint_names[] = {
    "int16_t", "int32_t", "int64_t", "int8_t", "int_fast16_t", "int_fast32_t",
    "int_fast64_t", "int_fast8_t", "int_least16_t", "int_least32_t",
    "int_least64_t", "int_least8_t", "intmax_t", "intptr_t", "uint16_t",
    "uint32_t", "uint64_t", "uint8_t", "uint_fast16_t", "uint_fast32_t",
    "uint_fast64_t", "uint_fast8_t", "uint_least16_t", "uint_least32_t",
    "uint_least64_t", "uint_least8_t", "uintmax_t", "uintptr_t",
};
static const char *const limits_macros[] = {
    "AIO_PRIO_DELTA_MAX", "BC_BASE_MAX", "BC_DIM_MAX", "BC_SCALE_MAX",
    "BC_STRING_MAX", "BITINT_MAXWIDTH", "BOOL_MAX", "BOOL_WIDTH",
    "CHARCLASS_NAME_MAX", "CHAR_BIT", "CHAR_MAX", "CHAR_MIN", "CHAR_WIDTH",
    "COLL_WEIGHTS_MAX", "DELAYTIMER_MAX", "EXPR_NEST_MAX", "HOST_NAME_MAX",
    "INT_MAX", "INT_MIN", "INT_WIDTH", "IOV_MAX", "LINE_MAX", "LLONG_MAX",
    "LLONG_MIN", "LLONG_WIDTH", "LOGIN_NAME_MAX", "LONG_BIT", "LONG_LONG_MAX",
    "LONG_LONG_MIN", "LONG_MAX", "LONG_MIN", "LONG_WIDTH", "MAX_CANON",
    "MAX_INPUT", "MB_LEN_MAX", "MQ_PRIO_MAX", "NAME_MAX", "NGROUPS_MAX",
    "NL_ARGMAX", "NL_LANGMAX", "NL_MSGMAX", "NL_NMAX", "NL_SETMAX",
    "NL_TEXTMAX", "NZERO", "PATH_MAX", "PIPE_BUF",
    "PTHREAD_DESTRUCTOR_ITERATIONS", "PTHREAD_KEYS_MAX", "PTHREAD_STACK_MIN",
    "RE_DUP_MAX", "RTSIG_MAX", "SCHAR_MAX", "SCHAR_MIN", "SCHAR_WIDTH",
    "SEM_VALUE_MAX", "SHRT_MAX", "SHRT_MIN", "SHRT_WIDTH", "SSIZE_MAX",
    "TTY_NAME_MAX", "UCHAR_MAX", "UCHAR_WIDTH", "UINT_MAX", "UINT_WIDTH",
    "ULLONG_MAX", "ULLONG_WIDTH", "ULONG_LONG_MAX", "ULONG_MAX",
    "ULONG_WIDTH", "USHRT_MAX", "USHRT_WIDTH", "WORD_BIT", "XATTR_LIST_MAX",
    "XATTR_NAME_MAX", "XATTR_SIZE_MAX",
};
static const char *const stdio_macros[] = {
    "BUFSIZ", "EOF", "FILENAME_MAX", "FOPEN_MAX", "L_ctermid", "L_cuserid",
    "L_tmpnam", "P_tmpdir", "RENAME_EXCHANGE", "RENAME_NOREPLACE",
    "RENAME_WHITEOUT", "SEEK_CUR", "SEEK_DATA", "SEEK_END", "SEEK_HOLE",
    "SEEK_SET", "TMP_MAX", "stderr", "stdin", "stdout", "va_arg", "va_copy",
    "va_end", "va_start",
};
static const char *const stdio_names[] = {
    "FILE", "asprintf", "clearerr", "clearerr_unlocked",
    "cookie_close_function_t", "cookie_io_functions_t",
    "cookie_read_function_t", "cookie_seek_function_t",
    "cookie_write_function_t", "ctermid", "cuserid", "dprintf", "fclose",
    "fcloseall", "fdopen", "feof", "feof_unlocked", "ferror",
    "ferror_unlocked", "fflush", "fflush_unlocked", "fgetc", "fgetc_unlocked",
    "fgetpos", "fgetpos64", "fgets", "fgets_unlocked", "fileno",
    "fileno_unlocked", "flockfile", "fmemopen", "fopen", "fopen64",
    "fopencookie", "fpos64_t", "fpos_t", "fprintf", "fputc", "fputc_unlocked",
    "fputs", "fputs_unlocked", "fread", "fread_unlocked", "freopen",
    "freopen64", "fscanf", "fseek", "fseeko", "fseeko64", "fsetpos",
    "fsetpos64", "ftell", "ftello", "ftello64", "ftrylockfile", "funlockfile",
    "fwrite", "fwrite_unlocked", "getc", "getc_unlocked", "getchar",
    "getchar_unlocked", "getdelim", "getline", "getw", "obstack_printf",
    "obstack_vprintf", "off64_t", "off_t", "open_memstream", "pclose",
    "perror", "popen", "printf", "putc", "putc_unlocked", "putchar",
    "putchar_unlocked", "puts", "putw", "remove", "rename", "renameat",
    "renameat2", "rewind", "scanf", "setbuf", "setbuffer", "setlinebuf",
    "setvbuf", "snprintf", "sprintf", "sscanf", "ssize_t", "tempnam",
    "tmpfile", "tmpfile64", "tmpnam", "tmpnam_r", "ungetc", "va_list",
    "vasprintf", "vdprintf", "vfprintf", "vfscanf", "vprintf", "vscanf",
    "vsnprintf", "vsprintf", "vsscanf",
};
static const char *const stdlib_macros[] = {
    "BIG_ENDIAN", "BYTE_ORDER", "EXIT_FAILURE", "EXIT_SUCCESS", "FD_CLR",
    "FD_ISSET", "FD_SET", "FD_SETSIZE", "FD_ZERO", "LITTLE_ENDIAN",
    "MB_CUR_MAX", "NFDBITS", "PDP_ENDIAN", "RAND_MAX", "WCONTINUED",
    "WEXITED", "WEXITSTATUS", "WIFCONTINUED", "WIFEXITED", "WIFSIGNALED",
    "WIFSTOPPED", "WNOHANG", "WNOWAIT", "WSTOPPED", "WSTOPSIG", "WTERMSIG",
    "WUNTRACED", "alloca", "be16toh", "be32toh", "be64toh", "htobe16",
    "htobe32", "htobe64", "htole16", "htole32", "htole64", "le16toh",
    "le32toh", "le64toh",
};
static const char *const stdlib_names[] = {
    "a64l", "abort", "abs", "aligned_alloc", "arc4random", "arc4random_buf",
    "arc4random_uniform", "at_quick_exit", "atexit", "atof", "atoi", "atol",
    "atoll", "blkcnt64_t", "blkcnt_t", "blksize_t", "bsearch", "caddr_t",
    "calloc", "canonicalize_file_name", "clearenv", "clock_t", "clockid_t",
    "comparison_fn_t", "daddr_t", "dev_t", "div", "div_t", "drand48",
    "drand48_data", "drand48_r", "ecvt", "ecvt_r", "erand48", "erand48_r",
    "exit", "fcvt", "fcvt_r", "fd_mask", "fd_set", "free", "fsblkcnt64_t",
    "fsblkcnt_t", "fsfilcnt64_t", "fsfilcnt_t", "fsid_t", "gcvt", "getenv",
    "getloadavg", "getpt", "getsubopt", "gid_t", "grantpt", "id_t",
    "initstate", "initstate_r", "ino64_t", "ino_t", "jrand48", "jrand48_r",
    "key_t", "l64a", "labs", "lcong48", "lcong48_r", "ldiv", "ldiv_t",
    "llabs", "lldiv", "lldiv_t", "locale_t", "loff_t", "lrand48", "lrand48_r",
    "malloc", "mblen", "mbstowcs", "mbtowc", "mkdtemp", "mkostemp",
    "mkostemp64", "mkostemps", "mkostemps64", "mkstemp", "mkstemp64",
    "mkstemps", "mkstemps64", "mktemp", "mode_t", "mrand48", "mrand48_r",
    "nlink_t", "nrand48", "nrand48_r", "on_exit", "pid_t", "posix_memalign",
    "posix_openpt", "pselect", "pthread_attr_t", "pthread_barrier_t",
    "pthread_barrierattr_t", "pthread_cond_t", "pthread_condattr_t",
    "pthread_key_t", "pthread_mutex_t", "pthread_mutexattr_t",
    "pthread_once_t", "pthread_rwlock_t", "pthread_rwlockattr_t",
    "pthread_spinlock_t", "pthread_t", "ptsname", "ptsname_r", "putenv",
    "qecvt", "qecvt_r", "qfcvt", "qfcvt_r", "qgcvt", "qsort", "qsort_r",
    "quad_t", "quick_exit", "rand", "rand_r", "random", "random_data",
    "random_r", "realloc", "reallocarray", "realpath", "register_t",
    "rpmatch", "secure_getenv", "seed48", "seed48_r", "select", "setenv",
    "setstate", "setstate_r", "sigset_t", "srand", "srand48", "srand48_r",
    "srandom", "srandom_r", "strfromd", "strfromf", "strfromf128",
    "strfromf32", "strfromf32x", "strfromf64", "strfromf64x", "strfroml",
    "strtod", "strtod_l", "strtof", "strtof128", "strtof128_l", "strtof32",
    "strtof32_l", "strtof32x", "strtof32x_l", "strtof64", "strtof64_l",
    "strtof64x", "strtof64x_l", "strtof_l", "strtol", "strtol_l", "strtold",
    "strtold_l", "strtoll", "strtoll_l", "strtoq", "strtoul", "strtoul_l",
    "strtoull", "strtoull_l", "strtouq", "suseconds_t", "system", "time_t",
    "timer_t", "timespec", "timeval", "u_char", "u_int", "u_int16_t",
    "u_int32_t", "u_int64_t", "u_int8_t", "u_long", "u_quad_t", "u_short",
    "uid_t", "uint", "ulong", "unlockpt", "unsetenv", "useconds_t", "ushort",
    "valloc", "wcstombs", "wctomb",
};
static const char *const string_macros[] = {
    "strdupa", "strndupa",
};
static const char *const string_names[] = {
    "basename", "bcmp", "bcopy", "bzero", "explicit_bzero", "ffs", "ffsl",
    "ffsll", "index", "memccpy", "memchr", "memcmp", "memcpy", "memfrob",
    "memmem", "memmove", "mempcpy", "memrchr", "memset", "rawmemchr",
    "rindex", "sigabbrev_np", "sigdescr_np", "stpcpy", "stpncpy",
    "strcasecmp", "strcasecmp_l", "strcasestr", "strcat", "strchr",
    "strchrnul", "strcmp", "strcoll", "strcoll_l", "strcpy", "strcspn",
    "strdup", "strerror", "strerror_l", "strerror_r", "strerrordesc_np",
    "strerrorname_np", "strfry", "strlen", "strncasecmp", "strncasecmp_l",
    "strncat", "strncmp", "strncpy", "strndup", "strnlen", "strpbrk",
    "strrchr", "strsep", "strsignal", "strspn", "strstr", "strtok",
    "strtok_r", "strverscmp", "strxfrm", "strxfrm_l",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct header_table {
    const char *header;
    int macros;                /* 1: macros; 0: declared names */
    const char *const *names;  /* sorted */
    size_t n;
};

#define TABLE(h, m, a) {h, m, a, COUNT(a)}
static const struct header_table header_tables[] = {
    TABLE("stddef.h", 1, stddef_macros), TABLE("stddef.h", 0, stddef_names),
    TABLE("stdint.h", 1, stdint_macros), TABLE("stdint.h", 0, stdint_names),
    TABLE("limits.h", 1, limits_macros),
    TABLE("stdio.h", 1, stdio_macros),   TABLE("stdio.h", 0, stdio_names),
    TABLE("stdlib.h", 1, stdlib_macros), TABLE("stdlib.h", 0, stdlib_names),
    TABLE("string.h", 1, string_macros), TABLE("string.h", 0, string_names),
};

/* Keywords (sorted), each with what it is a keyword of. */
struct keyword {
    const char *name;
    const char *of;
};
static const struct keyword keywords[] = {
    {"alignas", "C23 and C++"}, {"alignof", "C23 and C++"}, {"and", "C++"},
    {"and_eq", "C++"}, {"asm", "C++ and GNU C"}, {"auto", "C"},
    {"bitand", "C++"}, {"bitor", "C++"}, {"bool", "C23 and C++"},
    {"break", "C"}, {"case", "C"}, {"catch", "C++"}, {"char", "C"},
    {"char16_t", "C++"}, {"char32_t", "C++"}, {"char8_t", "C++20"},
    {"class", "C++"}, {"co_await", "C++20"}, {"co_return", "C++20"},
    {"co_yield", "C++20"}, {"compl", "C++"}, {"concept", "C++20"},
    {"const", "C"}, {"const_cast", "C++"}, {"constant", "OpenCL C"},
    {"consteval", "C++20"}, {"constexpr", "C23 and C++"},
    {"constinit", "C++20"}, {"continue", "C"}, {"decltype", "C++"},
    {"default", "C"}, {"delete", "C++"}, {"do", "C"}, {"double", "C"},
    {"dynamic_cast", "C++"}, {"else", "C"}, {"enum", "C"},
    {"explicit", "C++"}, {"export", "C++"}, {"extern", "C"},
    {"false", "C23 and C++"}, {"float", "C"}, {"for", "C"}, {"friend", "C++"},
    {"global", "OpenCL C"}, {"goto", "C"}, {"if", "C"}, {"inline", "C"},
    {"int", "C"}, {"kernel", "OpenCL C"}, {"local", "OpenCL C"},
    {"long", "C"}, {"mutable", "C++"}, {"namespace", "C++"}, {"new", "C++"},
    {"noexcept", "C++"}, {"not", "C++"}, {"not_eq", "C++"},
    {"nullptr", "C23 and C++"}, {"operator", "C++"}, {"or", "C++"},
    {"or_eq", "C++"}, {"private", "C++ and OpenCL C"}, {"protected", "C++"},
    {"public", "C++"}, {"register", "C"}, {"reinterpret_cast", "C++"},
    {"requires", "C++20"}, {"restrict", "C"}, {"return", "C"}, {"short", "C"},
    {"signed", "C"}, {"sizeof", "C"}, {"static", "C"},
    {"static_assert", "C23 and C++"}, {"static_cast", "C++"}, {"struct", "C"},
    {"switch", "C"}, {"template", "C++"}, {"this", "C++"},
    {"thread_local", "C23 and C++"}, {"throw", "C++"},
    {"true", "C23 and C++"}, {"try", "C++"}, {"typedef", "C"},
    {"typeid", "C++"}, {"typename", "C++"}, {"typeof", "C23 and GNU C"},
    {"typeof_unqual", "C23"}, {"union", "C"}, {"unsigned", "C"},
    {"using", "C++"}, {"virtual", "C++"}, {"void", "C"}, {"volatile", "C"},
    {"wchar_t", "C++"}, {"while", "C"}, {"xor", "C++"}, {"xor_eq", "C++"},
};

/* Macros compilers predefine in their GNU dialects (the default of gcc
 * and clang), sorted, with the systems they do it on. */
static const struct keyword platform_macros[] = {
    {"MIPSEB", "MIPS"}, {"MIPSEL", "MIPS"}, {"PPC", "PowerPC"},
    {"R3000", "MIPS"}, {"R4000", "MIPS"}, {"WIN32", "Windows (MinGW)"},
    {"WIN64", "Windows (MinGW)"}, {"WINNT", "Windows (MinGW)"},
    {"bsd4_2", "BSD"}, {"bsd4_3", "BSD"}, {"hppa", "PA-RISC"},
    {"i386", "32-bit x86"}, {"i486", "32-bit x86"}, {"i586", "32-bit x86"},
    {"i686", "32-bit x86"}, {"linux", "Linux"}, {"m68k", "68000"},
    {"mc68000", "68000"}, {"mips", "MIPS"}, {"ns32000", "NS32000"},
    {"pdp11", "PDP-11"}, {"powerpc", "PowerPC"}, {"ppc", "PowerPC"},
    {"pyr", "Pyramid"}, {"sequent", "Sequent"}, {"sgi", "SGI IRIX"},
    {"sparc", "SPARC"}, {"sun", "Solaris"}, {"unix", "Unix-like"},
    {"vax", "VAX"},
};

static int compare_name(const void *key, const void *entry)
{
    return strcmp((const char *)key, *(const char *const *)entry);
}

static const struct keyword *find_keyword(const char *name,
                                          const struct keyword *table,
                                          size_t n)
{
    /* struct keyword starts with its name: compare_name applies. */
    return bsearch(name, table, n, sizeof *table, compare_name);
}

int spec_name_reserved(const char *name, char *why, size_t size)
{
    const struct keyword *kw;
    if (strncmp(name, "specl_", 6) == 0 || strncmp(name, "SPECL_", 6) == 0 ||
        strcmp(name, "specl") == 0 || strcmp(name, "SPECL") == 0) {
        snprintf(why, size,
                 "'%s' is in the emitted code's own namespace (specl_, "
                 "SPECL_)",
                 name);
        return 1;
    }
    if (strcmp(name, "cl") == 0 || strcmp(name, "CL") == 0) {
        snprintf(why, size,
                 "'%s' would make its symbols (%s_create, ...) fall in "
                 "OpenCL's cl_ and CL_ namespace",
                 name, name);
        return 1;
    }
    if (strncmp(name, "cl_", 3) == 0 || strncmp(name, "CL_", 3) == 0 ||
        (name[0] == 'c' && name[1] == 'l' && name[2] >= 'A' &&
         name[2] <= 'Z')) {
        snprintf(why, size,
                 "'%s' is in OpenCL's namespace (cl_, CL_, and cl and a "
                 "capital, as in clCreateBuffer)",
                 name);
        return 1;
    }
    if (strcmp(name, "std") == 0) {
        snprintf(why, size,
                 "'std' is the C++ standard library's namespace, which the "
                 "headers NAME.h includes open in C++");
        return 1;
    }
    if (name[0] == '_') {
        snprintf(why, size,
                 "'%s' begins with '_': C reserves such names at file scope, "
                 "where NAME.h declares them",
                 name);
        return 1;
    }
    if ((kw = find_keyword(name, keywords, COUNT(keywords))) != NULL) {
        snprintf(why, size, "'%s' is a keyword of %s", name, kw->of);
        return 1;
    }
    if ((kw = find_keyword(name, platform_macros, COUNT(platform_macros))) !=
        NULL) {
        snprintf(why, size, "'%s' is a predefined macro on %s compilers",
                 name, kw->of);
        return 1;
    }
    for (size_t t = 0; t < COUNT(header_tables); t++) {
        const struct header_table *h = &header_tables[t];
        if (bsearch(name, h->names, h->n, sizeof *h->names, compare_name) !=
            NULL) {
            snprintf(why, size,
                     h->macros ? "'%s' is a macro of <%s>, which the emitted "
                                 "code includes"
                               : "'%s' is declared by <%s>, which the emitted "
                                 "code includes",
                     name, h->header);
            return 1;
        }
    }
    return 0;
}

const char *spec_reserved_table_name(int i)
{
    size_t k = (size_t)i;
    if (i < 0) {
        return NULL;
    }
    if (k < COUNT(keywords)) {
        return keywords[k].name;
    }
    k -= COUNT(keywords);
    if (k < COUNT(platform_macros)) {
        return platform_macros[k].name;
    }
    k -= COUNT(platform_macros);
    for (size_t t = 0; t < COUNT(header_tables); t++) {
        if (k < header_tables[t].n) {
            return header_tables[t].names[k];
        }
        k -= header_tables[t].n;
    }
    return NULL;
}
