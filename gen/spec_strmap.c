/* spec_strmap.c - the spec reader's memory: arrays that grow by doubling
 * and a hash map from strings to ints (anchors, keys, kernel names). Out
 * of memory ends the run. */
#include "spec_strmap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *spec_grow(void *p, size_t *cap, size_t size)
{
    size_t n = *cap ? *cap * 2 : 16;
    void *q = realloc(p, n * size);
    if (q == NULL) {
        fputs("specl: out of memory\n", stderr);
        exit(1);
    }
    *cap = n;
    return q;
}

static size_t hash_text(const char *s, size_t len)
{
    size_t h = 14695981039346656037ULL & SIZE_MAX; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (unsigned char)s[i]) * (1099511628211ULL & SIZE_MAX);
    }
    return h;
}

/* The slot of KEY (LEN bytes) in M: where it is, or the empty one where it
 * would go. M must have a free slot. */
static size_t strmap_slot(const struct strmap *m, const char *key, size_t len)
{
    size_t i = hash_text(key, len) & (m->cap - 1);
    while (m->key[i] != NULL &&
           !(strncmp(m->key[i], key, len) == 0 && m->key[i][len] == '\0')) {
        i = (i + 1) & (m->cap - 1);
    }
    return i;
}

int strmap_get(const struct strmap *m, const char *key, size_t len,
                      int *value)
{
    if (m->n == 0) {
        return 0;
    }
    size_t i = strmap_slot(m, key, len);
    if (m->key[i] == NULL) {
        return 0;
    }
    *value = m->value[i];
    return 1;
}

void strmap_put(struct strmap *m, const char *key, size_t len, int value)
{
    if (2 * (m->n + 1) > m->cap) {
        struct strmap bigger = {NULL, NULL, m->cap ? m->cap * 2 : 64, 0};
        bigger.key = calloc(bigger.cap, sizeof *bigger.key);
        bigger.value = calloc(bigger.cap, sizeof *bigger.value);
        if (bigger.key == NULL || bigger.value == NULL) {
            fputs("specl: out of memory\n", stderr);
            exit(1);
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->key[i] != NULL) {
                size_t j = strmap_slot(&bigger, m->key[i], strlen(m->key[i]));
                bigger.key[j] = m->key[i];
                bigger.value[j] = m->value[i];
                bigger.n++;
            }
        }
        free(m->key);
        free(m->value);
        *m = bigger;
    }
    size_t i = strmap_slot(m, key, len);
    if (m->key[i] == NULL) {
        m->key[i] = malloc(len + 1);
        if (m->key[i] == NULL) {
            fputs("specl: out of memory\n", stderr);
            exit(1);
        }
        memcpy(m->key[i], key, len);
        m->key[i][len] = '\0';
        m->n++;
    }
    m->value[i] = value;
}

void strmap_free(struct strmap *m)
{
    for (size_t i = 0; i < m->cap; i++) {
        free(m->key[i]);
    }
    free(m->key);
    free(m->value);
    memset(m, 0, sizeof *m);
}
