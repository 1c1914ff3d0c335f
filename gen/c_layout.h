/* c_layout.h - the lines of an emitted NAME.c and NAME.h once their
 * templates' holes are filled (c_layout.c): a kernel's name is longer or
 * shorter than the hole that stood for it, and generated tables have
 * lines of any length. */
#ifndef SPECL_C_LAYOUT_H
#define SPECL_C_LAYOUT_H

#include "buf.h"

/* The most columns of a line that c_layout leaves whole. */
#define C_LAYOUT_COLS 80

/* Lays out the C in TEXT again, the tokens unchanged:
 * - a line that continues an open parenthesis or brace, opened before
 *   the end of its line, starts one column past it (one opened last on
 *   its line keeps its line's own indentation below it);
 * - a line that goes on with the elements of a parenthesis (parameters,
 *   arguments) joins the line before where its first element fits
 *   there, as does the line that closes what a break left open; one
 *   blank line stands for several;
 * - a line past C_LAYOUT_COLS columns breaks after the last ", " inside
 *   a parenthesis or brace that lets it fit, repeatedly; a comment that
 *   ends such a line moves above it; a comment line breaks between
 *   words, a comment's text after "label: " aligned under itself;
 * - a preprocessor line past C_LAYOUT_COLS columns that a comment ends
 *   (neither continued nor continuing) has it moved above it, and stays
 *   as it is otherwise, as do string literals and what no rule fits. */
void c_layout(struct buf *text);

#endif
