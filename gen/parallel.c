/* parallel.c - parallel.h's loop on POSIX threads. */
#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

#define PARALLEL_MAX_THREADS 64

struct strand {
    size_t first, n, step;
    void (*body)(void *ctx, size_t i);
    void *ctx;
};

static void *run_strand(void *arg)
{
    const struct strand *s = arg;
    for (size_t i = s->first; i < s->n; i += s->step) {
        s->body(s->ctx, i);
    }
    return NULL;
}

void parallel_for(size_t n, void (*body)(void *ctx, size_t i), void *ctx)
{
    if (n == 0) {
        return;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t t = cores > 1 ? (size_t)cores : 1;
    t = t > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : t;
    t = t > n ? n : t;
    pthread_t tid[PARALLEL_MAX_THREADS];
    struct strand s[PARALLEL_MAX_THREADS];
    size_t started = 0;
    for (size_t k = 0; k < t; k++) {
        s[k] = (struct strand){k, n, t, body, ctx};
    }
    /* Strand 0 runs here; the others on threads while they can be had,
     * the rest here after them. */
    while (started + 1 < t &&
           pthread_create(&tid[started], NULL, run_strand,
                          &s[started + 1]) == 0) {
        started++;
    }
    run_strand(&s[0]);
    for (size_t k = started + 1; k < t; k++) {
        run_strand(&s[k]);
    }
    for (size_t k = 0; k < started; k++) {
        pthread_join(tid[k], NULL);
    }
}
