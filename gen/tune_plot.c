/* tune_plot.c - an SVG of a kernel's search: the best time over the other
 * knobs for each value of the first two axes, the chosen config boxed. */
#include <math.h>
#include <stdio.h>

#include "buf.h"
#include "files.h"
#include "tune_plot.h"

static void svg_color(double t, char *out, size_t size)
{
    /* 0: fastest (green) .. 1: slowest (red), through yellow. */
    int r = t < 0.5 ? (int)(510 * t) : 255;
    int g = t < 0.5 ? 200 : (int)(200 * (1 - t) * 2);
    snprintf(out, size, "rgb(%d,%d,60)", r, g);
}

int tune_plot_write(const struct tune_plot *pl, const char *path, char *err,
                    size_t errsize)
{
    const struct tune_space *sp = pl->sp;
    const struct op_def *op = pl->ks->op;
    int ax = 0, ay = sp->n_axis > 1 ? 1 : 0;
    int nx = sp->n_value[ax], ny = sp->n_axis > 1 ? sp->n_value[ay] : 1;
    double cell[TUNE_MAX_VALUES][TUNE_MAX_VALUES];
    double lo = INFINITY, hi = 0;
    for (int x = 0; x < nx; x++) {
        for (int y = 0; y < ny; y++) {
            cell[x][y] = INFINITY;
        }
    }
    for (long i = 0; i < sp->n_config; i++) {
        double us = pl->us[i];
        if (!isfinite(us)) {
            continue;
        }
        int idx[TUNE_MAX_AXES] = {0};
        tune_space_decode(sp, i, idx);
        int x = idx[ax], y = sp->n_axis > 1 ? idx[ay] : 0;
        cell[x][y] = us < cell[x][y] ? us : cell[x][y];
        lo = us < lo ? us : lo;
        hi = us > hi ? us : hi;
    }
    int bx = -1, by = -1;
    if (pl->best >= 0) {
        int idx[TUNE_MAX_AXES] = {0};
        tune_space_decode(sp, pl->best, idx);
        bx = idx[ax];
        by = sp->n_axis > 1 ? idx[ay] : 0;
    }
    const int cw = 90, ch = 44, left = 110, top = 70;
    int width = left + nx * cw + 40, height = top + ny * ch + 90;
    struct buf b;
    buf_init(&b);
    buf_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n",
               width, height);
    buf_printf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"10\" y=\"22\" font-size=\"15\">%s (%s): best time "
               "over the other knobs</text>\n<text x=\"10\" y=\"42\">%s; "
               "green fast, red slow, grey not timed; the box marks the "
               "chosen config</text>\n",
               pl->ks->name, op->name, pl->device);
    char v[64], col[32];
    for (int x = 0; x < nx; x++) {
        param_format(&op->knobs[sp->knob[ax]], sp->value[ax][x], v, sizeof v);
        buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s"
                   "</text>\n", left + x * cw + cw / 2, top - 8, v);
    }
    for (int y = 0; y < ny; y++) {
        if (sp->n_axis > 1) {
            param_format(&op->knobs[sp->knob[ay]], sp->value[ay][y], v,
                         sizeof v);
        } else {
            snprintf(v, sizeof v, "-");
        }
        buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s"
                   "</text>\n", left - 8, top + y * ch + ch / 2 + 4, v);
        for (int x = 0; x < nx; x++) {
            double us = cell[x][y];
            if (isfinite(us)) {
                double t = hi > lo ? log(us / lo) / log(hi / lo) : 0;
                svg_color(t, col, sizeof col);
            } else {
                snprintf(col, sizeof col, "#ddd");
            }
            buf_printf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height="
                       "\"%d\" fill=\"%s\" stroke=\"white\"/>\n",
                       left + x * cw, top + y * ch, cw, ch, col);
            if (isfinite(us)) {
                buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle"
                           "\">%.1f us</text>\n", left + x * cw + cw / 2,
                           top + y * ch + ch / 2 + 4, us);
            }
        }
    }
    if (bx >= 0) {
        buf_printf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                   "fill=\"none\" stroke=\"black\" stroke-width=\"4\"/>\n",
                   left + bx * cw + 2, top + by * ch + 2, cw - 4, ch - 4);
    }
    buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s"
               "</text>\n", left + nx * cw / 2, top + ny * ch + 24,
               op->knobs[sp->knob[ax]].key);
    buf_printf(&b, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" "
               "text-anchor=\"middle\">%s</text>\n",
               top + ny * ch / 2, top + ny * ch / 2,
               sp->n_axis > 1 ? op->knobs[sp->knob[ay]].key : "");
    if (pl->best >= 0) {
        buf_printf(&b, "<text x=\"10\" y=\"%d\">chosen: %s (%.1f us)</text>\n",
                   top + ny * ch + 56, pl->best_knobs, pl->best_us);
    }
    buf_puts(&b, "</svg>\n");
    int rc = write_file_atomic(path, buf_str(&b), b.len, err, errsize);
    buf_free(&b);
    return rc;
}
