/* tune_plot.h - an SVG of one kernel's search (tune_plot.c). */
#ifndef SPECL_TUNE_PLOT_H
#define SPECL_TUNE_PLOT_H

#include <stddef.h>

#include "op.h"
#include "tune_space.h"

/* What an SVG of one kernel's search shows: per config of SP, its time
 * (a config that emits another's code has that one's; INFINITY when not
 * timed), and the chosen config (BEST, -1 when none). REP (NULL: each
 * config its own): per config the candidate that emits its code; the CSV
 * lists candidates alone. */
struct tune_plot {
    const struct kernel_spec *ks;
    const struct tune_space *sp;
    const double *us;
    const long *rep;
    long best;
    const char *best_knobs;
    double best_us;
    const char *device;
};

/* Writes PL's plot as an SVG to PATH (atomically), sized to its text:
 * the heat map of the first two axes, every axis's values with the
 * chosen one in brackets, and the chosen config's every knob; and its
 * timed candidates as CSV (a column per axis, us, chosen) to
 * tune_plot_csv_path's. Returns 0, or -1 with a message in ERR. */
int tune_plot_write(const struct tune_plot *pl, const char *path, char *err,
                    size_t errsize);

/* The CSV written beside the plot SVG: its .svg replaced by .csv, else
 * .csv appended. */
void tune_plot_csv_path(const char *svg, char *out, size_t size);

/* Pixels that CHARS characters of the plot's monospace text take at FONT
 * pixels (a generous estimate: the SVG is made that wide). */
int tune_plot_text_width(int chars, int font);

#endif
