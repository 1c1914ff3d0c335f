/* spec_strmap.h - memory for the spec reader: growing arrays and a string map
 * (spec_strmap.c), which cl_prune.c counts a kernel text's names in too. */
#ifndef SPECL_SPEC_STRMAP_H
#define SPECL_SPEC_STRMAP_H

#include <stddef.h>

/* P grown to twice *CAP elements of SIZE bytes (16 at first); *CAP set.
 * Out of memory ends the run. */
void *spec_grow(void *p, size_t *cap, size_t size);

/* A hash map from strings to ints. */
struct strmap {
    char **key;   /* owned copies; NULL: empty slot */
    int *value;
    size_t cap;   /* a power of two, or 0 */
    size_t n;
};

/* Whether M maps KEY (LEN bytes); its value in *VALUE. */
int strmap_get(const struct strmap *m, const char *key, size_t len,
               int *value);
/* Maps KEY to VALUE, replacing what it mapped to. */
void strmap_put(struct strmap *m, const char *key, size_t len, int value);
void strmap_free(struct strmap *m);

#endif
