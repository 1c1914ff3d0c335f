/* emit_text.h - the emitter's text: comments, C strings and the
 * header comment every emitted file opens with (emit_text.c). */
#ifndef SPECL_EMIT_TEXT_H
#define SPECL_EMIT_TEXT_H

#include <stddef.h>

#include "buf.h"
#include "op.h"
#include "variant.h"

/* One variant as the emitter renders it. */
struct emit_variant {
    const struct kernel_spec *ks;
    struct plan plan;
    const char *template_file; /* NULL: the op's kernels */
    const char *label;
    int n_match;
    const struct variant_match *match;
};

/* Appends TEXT (a spec path, a device name, a note) to OUT so that it
 * stays one line of the C or OpenCL C comment OUT ends inside. */
void comment_text(struct buf *out, const char *text);

/* The devices of a variant's matches, for comments ("any device",
 * "CPUs", a device's name and driver version as it reports them). */
void match_text(const struct variant_match *m, int n, struct buf *out);

/* VS's rows range R, for comments: "DEVICE, rows 3 to 22: variant 4
 * (tuned at rows 8)", or for every CPU's "every CPU, rows 1 to 96:
 * variant 2 (LABEL)", LABEL the variant's. */
void range_text(const struct variant_set *vs, int r, struct buf *out);

/* The comment every emitted file NAME.EXT opens with, for the N variants
 * EV. */
void header_comment(const struct emit_variant *ev, int n, const char *name,
                    const char *ext, struct buf *out);

/* Appends the N bytes at S as the body of a C string literal. */
void c_escape(struct buf *out, const char *s, size_t n);

/* The most characters of one string of an embedded text: C99 compilers
 * need not accept a string literal longer than 4095. */
#define SOURCE_CHUNK_MAX 4000

/* The most columns of a line of C of an embedded text. */
#define SOURCE_LINE_MAX 79

/* The most columns of a line of an embedded text (reflow_lines): lines
 * of a build log that point at the program's text stay readable. */
#define SOURCE_FLOW_MAX 320

/* Appends CL as the strings of a C array, each followed by a comma: its
 * characters escaped and packed into lines of C of up to SOURCE_LINE_MAX
 * columns, each broken at its last place outside a word or number (a
 * line of C ends where it must, not where a line of CL does), adjacent
 * literals joined into strings of up to SOURCE_CHUNK_MAX characters. */
void source_lines(const struct buf *cl, struct buf *out);

/* Appends the N bytes of OpenCL C at TEXT (strip_comments's output) to
 * OUT with each line's indentation dropped, and every other run of blanks
 * made one blank where it parts two tokens (two words, or punctuators
 * that would join: a - -b) and dropped elsewhere, outside quoted text:
 * the same tokens on the same lines. A directive keeps the blank after
 * its name, #define the one after the macro's too (#define A (x) is not
 * A(x)), and a line continued into the next keeps one blank in front of
 * it. Line by line, as strip_comments. */
void compact_blanks(const char *text, size_t n, struct buf *out);

/* Appends the N bytes of OpenCL C at TEXT (compact_blanks's output) to
 * OUT with lines joined where C needs no line break: a line of code
 * joins the one before when that is code too (no directive) and the two
 * fit WIDTH columns as a C string (with their "\n"; (size_t)-1: any
 * width), with a blank where tokens need one; a line continued with a
 * backslash joins the next where they fit, as the compiler splices
 * them. The same tokens, the same directives. */
void reflow_lines(const char *text, size_t n, size_t width, struct buf *out);

/* The length of the comment or quoted text of OpenCL C at P (END its
 * end), 0 when P begins neither; *COMMENT set to whether it is a comment.
 * A line comment leaves its newline; quoted text ends at its line's end;
 * a block comment without its end runs to END. */
size_t skip_length(const char *p, const char *end, int *comment);

/* Appends the N bytes of OpenCL C at TEXT to OUT without their comments,
 * as the compiler reads them: a comment becomes a space (one spanning
 * lines joins them, as in the compiler), trailing blanks go, and so do
 * blank lines (and those a comment left blank) but one that ends a
 * continued directive; quoted text ("..." or '...', ending at its
 * line's end) keeps what looks like a comment. Line by line, so texts cut
 * at line starts strip alike whole or in pieces. */
void strip_comments(const char *text, size_t n, struct buf *out);

/* SRC upper-cased into DST (SIZE bytes). */
void upper_name(char *dst, const char *src, size_t size);

/* Appends TEXT to OUT as lines of a C comment that fit 79 columns,
 * breaking at spaces: FIRST opens the first line, INDENT the others. */
void comment_wrap(struct buf *out, const char *first, const char *indent,
                  const char *text);

#endif
