/* variant_source.c - prints the kernel source of one variant of an
 * emitted NAME.c (its texts in order), for the lab programs to build and
 * edit. Built per stub:
 *
 *   cc -DSTUB=NAME -I OUTDIR -include OUTDIR/NAME.c \
 *      -o vsrc bench/lab/variant_source.c -lOpenCL
 *   vsrc V > NAME-vV.cl
 */
#include <stdio.h>
#include <stdlib.h>

#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)
#define VARIANTS PASTE(STUB, _variants)

int main(int argc, char **argv)
{
    const size_t n = sizeof VARIANTS / sizeof VARIANTS[0];
    const size_t v = argc > 1 ? (size_t)atoi(argv[1]) : 0;
    if (v >= n) {
        fprintf(stderr, "vsrc: %zu variants\n", n);
        return 2;
    }
    fprintf(stderr, "variant %zu: %s\n", v, VARIANTS[v].label);
    for (const char *const *const *t = VARIANTS[v].source; *t != NULL; t++) {
        for (const char *const *part = *t; *part != NULL; part++) {
            fputs(*part, stdout);
        }
    }
    return 0;
}
