/* tune_plot.c - an SVG of a kernel's search: the best time over the other
 * knobs for each value of the first two axes, the chosen config boxed,
 * every searched knob's values with the chosen one marked, and the chosen
 * config's knobs in full; the SVG sized to its text. Beside it, the
 * timed candidates as CSV. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "files.h"
#include "tune_plot.h"

/* The text is monospace: a character is about CHAR_EM of the
 * font size wide (0.6 in DejaVu Sans Mono and Courier, a little more
 * allowed), so that the picture can be made wide enough for it. */
#define CHAR_EM 0.62
#define FONT 12
#define TITLE_FONT 15
#define LINE 18      /* pixels between lines of text */
#define MARGIN 10

static void svg_color(double t, char *out, size_t size)
{
    /* 0: fastest (green) .. 1: slowest (red), through yellow. */
    int r = t < 0.5 ? (int)(510 * t) : 255;
    int g = t < 0.5 ? 200 : (int)(200 * (1 - t) * 2);
    snprintf(out, size, "rgb(%d,%d,60)", r, g);
}

/* S appended to B with XML's special characters escaped. */
static void put_escaped(struct buf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        switch (*s) {
        case '&': buf_puts(b, "&amp;"); break;
        case '<': buf_puts(b, "&lt;"); break;
        case '>': buf_puts(b, "&gt;"); break;
        case '"': buf_puts(b, "&quot;"); break;
        default: buf_add(b, s, 1);
        }
    }
}

int tune_plot_text_width(int chars, int font)
{
    return (int)ceil(chars * font * CHAR_EM);
}

/* Lines of text below the heat map, each at most COLS characters (words
 * longer than that stand alone): kept as one buffer of lines. */
struct text_lines {
    struct buf b;       /* the lines, each ended by '\n', escaped */
    int n;
    int longest;        /* characters, before escaping */
};

/* WORDS (separated by spaces) after LEAD, wrapped at COLS into T; later
 * lines indented by two spaces. */
static void add_wrapped(struct text_lines *t, const char *lead,
                        const char *words, int cols)
{
    struct buf line;
    int len = (int)strlen(lead);
    buf_init(&line);
    put_escaped(&line, lead);
    for (const char *p = words + strspn(words, " "); *p != '\0';) {
        int w = (int)strcspn(p, " ");
        char word[512];
        snprintf(word, sizeof word, "%.*s", w, p);
        if (len > 2 && len + 1 + w > cols) {
            buf_puts(&t->b, buf_str(&line));
            buf_puts(&t->b, "\n");
            t->n++;
            t->longest = len > t->longest ? len : t->longest;
            buf_free(&line);
            buf_init(&line);
            buf_puts(&line, "  ");
            len = 2;
        } else if (len > 0 && buf_str(&line)[line.len - 1] != ' ') {
            buf_puts(&line, " ");
            len++;
        }
        put_escaped(&line, word);
        len += w;
        p += w;
        p += strspn(p, " ");
    }
    buf_puts(&t->b, buf_str(&line));
    buf_puts(&t->b, "\n");
    t->n++;
    t->longest = len > t->longest ? len : t->longest;
    buf_free(&line);
}

/* The text under the map: each axis of the space with its values, the
 * chosen one in brackets, then the chosen config's every knob. */
static void knob_lines(const struct tune_plot *pl, struct text_lines *t,
                       int cols)
{
    const struct tune_space *sp = pl->sp;
    const struct op_def *op = pl->ks->op;
    int chosen[TUNE_MAX_AXES] = {0};
    if (pl->best >= 0) {
        tune_space_decode(sp, pl->best, chosen);
    }
    add_wrapped(t, "searched knobs (the chosen value in brackets):", "",
                cols);
    for (int a = 0; a < sp->n_axis; a++) {
        struct buf values;
        char lead[80], v[64];
        buf_init(&values);
        for (int i = 0; i < sp->n_value[a]; i++) {
            param_format(&op->knobs[sp->knob[a]], sp->value[a][i], v,
                         sizeof v);
            int mark = pl->best >= 0 && i == chosen[a];
            buf_printf(&values, "%s%s%s%s", i ? " " : "", mark ? "[" : "", v,
                       mark ? "]" : "");
        }
        snprintf(lead, sizeof lead, "  %s:", op->knobs[sp->knob[a]].key);
        add_wrapped(t, lead, buf_str(&values), cols);
        buf_free(&values);
    }
    if (pl->best >= 0) {
        char lead[96];
        snprintf(lead, sizeof lead, "chosen, %.1f us, every knob:",
                 pl->best_us);
        add_wrapped(t, lead, pl->best_knobs, cols);
    }
}

/* The heat map's cells: per value of the first two axes, the best time
 * over the other axes; *LO and *HI: the least and greatest time. */
static void fill_cells(const struct tune_plot *pl,
                       double cell[TUNE_AXIS_ROOM][TUNE_AXIS_ROOM],
                       double *lo, double *hi)
{
    const struct tune_space *sp = pl->sp;
    *lo = INFINITY;
    *hi = 0;
    for (int x = 0; x < TUNE_AXIS_ROOM; x++) {
        for (int y = 0; y < TUNE_AXIS_ROOM; y++) {
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
        int x = idx[0], y = sp->n_axis > 1 ? idx[1] : 0;
        cell[x][y] = us < cell[x][y] ? us : cell[x][y];
        *lo = us < *lo ? us : *lo;
        *hi = us > *hi ? us : *hi;
    }
}

/* The heat map at (LEFT, TOP), cells CW by CH, into B. */
static void put_map(const struct tune_plot *pl, struct buf *b, int left,
                    int top, int cw, int ch)
{
    const struct tune_space *sp = pl->sp;
    const struct op_def *op = pl->ks->op;
    double cell[TUNE_AXIS_ROOM][TUNE_AXIS_ROOM], lo, hi;
    int nx = sp->n_value[0], ny = sp->n_axis > 1 ? sp->n_value[1] : 1;
    char v[64], col[32];
    fill_cells(pl, cell, &lo, &hi);
    for (int x = 0; x < nx; x++) {
        param_format(&op->knobs[sp->knob[0]], sp->value[0][x], v, sizeof v);
        buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s"
                   "</text>\n", left + x * cw + cw / 2, top - 8, v);
    }
    for (int y = 0; y < ny; y++) {
        if (sp->n_axis > 1) {
            param_format(&op->knobs[sp->knob[1]], sp->value[1][y], v,
                         sizeof v);
        } else {
            snprintf(v, sizeof v, "-");
        }
        buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s"
                   "</text>\n", left - 8, top + y * ch + ch / 2 + 4, v);
        for (int x = 0; x < nx; x++) {
            double us = cell[x][y];
            if (isfinite(us)) {
                double t = hi > lo ? log(us / lo) / log(hi / lo) : 0;
                svg_color(t, col, sizeof col);
            } else {
                snprintf(col, sizeof col, "#ddd");
            }
            buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height="
                       "\"%d\" fill=\"%s\" stroke=\"white\"/>\n",
                       left + x * cw, top + y * ch, cw, ch, col);
            if (isfinite(us)) {
                buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle"
                           "\">%.1f us</text>\n", left + x * cw + cw / 2,
                           top + y * ch + ch / 2 + 4, us);
            }
        }
    }
    if (pl->best >= 0) {
        int idx[TUNE_MAX_AXES] = {0};
        tune_space_decode(sp, pl->best, idx);
        int bx = idx[0], by = sp->n_axis > 1 ? idx[1] : 0;
        buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                   "fill=\"none\" stroke=\"black\" stroke-width=\"4\"/>\n",
                   left + bx * cw + 2, top + by * ch + 2, cw - 4, ch - 4);
    }
    buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s"
               "</text>\n", left + nx * cw / 2, top + ny * ch + 24,
               op->knobs[sp->knob[0]].key);
    buf_printf(b, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" "
               "text-anchor=\"middle\">%s</text>\n",
               top + ny * ch / 2, top + ny * ch / 2,
               sp->n_axis > 1 ? op->knobs[sp->knob[1]].key : "");
}

/* The SVG of PL into B. */
static void put_svg(const struct tune_plot *pl, struct buf *b)
{
    const struct tune_space *sp = pl->sp;
    const int cw = 90, ch = 44, left = 110, top = 70 + LINE;
    int nx = sp->n_value[0], ny = sp->n_axis > 1 ? sp->n_value[1] : 1;
    int map_w = left + nx * cw + 40;
    /* Text wraps at the map's width, or at 100 columns when that is
     * wider: a line of every knob is hundreds of characters. */
    int cols = (map_w - 2 * MARGIN) / tune_plot_text_width(1, FONT);
    cols = cols > 100 ? cols : 100;
    char title[512], legend[512];
    snprintf(title, sizeof title, "%s (%s): best time over the other knobs",
             pl->ks->name, pl->ks->op->name);
    snprintf(legend, sizeof legend, "%s; green fast, red slow, grey not "
             "timed; the box marks the chosen config", pl->device);
    struct text_lines t;
    memset(&t, 0, sizeof t);
    buf_init(&t.b);
    add_wrapped(&t, "", legend, cols);
    int legend_lines = t.n;
    knob_lines(pl, &t, cols);
    int text_w = tune_plot_text_width(t.longest, FONT);
    int title_w = tune_plot_text_width((int)strlen(title), TITLE_FONT);
    int width = map_w;
    width = width > text_w + 2 * MARGIN ? width : text_w + 2 * MARGIN;
    width = width > title_w + 2 * MARGIN ? width : title_w + 2 * MARGIN;
    int map_top = top + (legend_lines - 1) * LINE;
    int below = map_top + ny * ch + 48;
    int height = below + (t.n - legend_lines) * LINE + MARGIN;
    buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" font-family=\"monospace\" font-size=\"%d\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%d\" y=\"22\" font-size=\"%d\">",
               width, height, FONT, MARGIN, TITLE_FONT);
    put_escaped(b, title);
    buf_puts(b, "</text>\n");
    const char *line = buf_str(&t.b);
    for (int i = 0; i < t.n; i++) {
        int len = (int)strcspn(line, "\n");
        int y = i < legend_lines ? 42 + i * LINE
                                 : below + (i - legend_lines) * LINE;
        buf_printf(b, "<text x=\"%d\" y=\"%d\" xml:space=\"preserve\">"
                   "%.*s</text>\n", MARGIN, y, len, line);
        line += len + 1;
    }
    buf_free(&t.b);
    put_map(pl, b, left, map_top, cw, ch);
    buf_puts(b, "</svg>\n");
}

void tune_plot_csv_path(const char *svg, char *out, size_t size)
{
    size_t n = strlen(svg);
    if (n > 4 && strcmp(svg + n - 4, ".svg") == 0) {
        snprintf(out, size, "%.*s.csv", (int)(n - 4), svg);
    } else {
        snprintf(out, size, "%s.csv", svg);
    }
}

/* The timed candidates of PL as CSV into B: a column per searched knob,
 * then the time and whether it is the chosen config. */
static void put_csv(const struct tune_plot *pl, struct buf *b)
{
    const struct tune_space *sp = pl->sp;
    const struct op_def *op = pl->ks->op;
    char v[64];
    for (int a = 0; a < sp->n_axis; a++) {
        buf_printf(b, "%s,", op->knobs[sp->knob[a]].key);
    }
    buf_puts(b, "us,chosen\n");
    for (long i = 0; i < sp->n_config; i++) {
        if (!isfinite(pl->us[i]) || (pl->rep != NULL && pl->rep[i] != i)) {
            continue; /* not timed, or another config's code */
        }
        int idx[TUNE_MAX_AXES] = {0};
        tune_space_decode(sp, i, idx);
        for (int a = 0; a < sp->n_axis; a++) {
            param_format(&op->knobs[sp->knob[a]], sp->value[a][idx[a]], v,
                         sizeof v);
            buf_printf(b, "%s,", v);
        }
        buf_printf(b, "%.2f,%d\n", pl->us[i], i == pl->best);
    }
}

int tune_plot_write(const struct tune_plot *pl, const char *path, char *err,
                    size_t errsize)
{
    struct buf b;
    char csv[4096];
    buf_init(&b);
    put_svg(pl, &b);
    int rc = write_file_atomic(path, buf_str(&b), b.len, err, errsize);
    buf_free(&b);
    buf_init(&b);
    if (rc == 0) {
        put_csv(pl, &b);
        tune_plot_csv_path(path, csv, sizeof csv);
        rc = write_file_atomic(csv, buf_str(&b), b.len, err, errsize);
    }
    buf_free(&b);
    return rc;
}
