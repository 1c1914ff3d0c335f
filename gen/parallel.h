/* parallel.h - a loop over independent items on the host's cores, for
 * the float64 references whose cost grows with a product of sizes
 * (attention's, the LoRA GEMMs'): at the shapes bench and the device
 * suites check they would take minutes on one core. */
#ifndef SPECL_PARALLEL_H
#define SPECL_PARALLEL_H

#include <stddef.h>

/* Calls BODY(CTX, i) for every i in [0, N), each once, spread over up to
 * one thread per online core (item t, t + T, ... to thread t of T); the
 * calls must not write what another call reads or writes. Runs them in
 * this thread, in order, where threads cannot be had. */
void parallel_for(size_t n, void (*body)(void *ctx, size_t i), void *ctx);

#endif
