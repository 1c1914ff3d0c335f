/* tune_plot.h - an SVG of one kernel's search (tune_plot.c). */
#ifndef SPECL_TUNE_PLOT_H
#define SPECL_TUNE_PLOT_H

#include <stddef.h>

#include "op.h"
#include "tune_space.h"

/* What an SVG of one kernel's search shows: per config of SP, its time
 * (a config that emits another's code has that one's; INFINITY when not
 * timed), and the chosen config (BEST, -1 when none). */
struct tune_plot {
    const struct kernel_spec *ks;
    const struct tune_space *sp;
    const double *us;
    long best;
    const char *best_knobs;
    double best_us;
    const char *device;
};

/* Writes PL's plot as an SVG to PATH (atomically). Returns 0, or -1 with
 * a message in ERR. */
int tune_plot_write(const struct tune_plot *pl, const char *path, char *err,
                    size_t errsize);

#endif
