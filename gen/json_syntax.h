/* json_syntax.h - JSON's syntax (RFC 8259), checked strictly before a
 * config.json is read with libyaml: libyaml reads JSON as YAML flow and
 * so takes what JSON does not (a YAML block mapping, a trailing comma,
 * a comment, a bare or single-quoted word). */
#ifndef SPECL_JSON_SYNTAX_H
#define SPECL_JSON_SYNTAX_H

#include <stddef.h>

#include "diag.h"

/* Whether TEXT (a whole token, NUL-ended) is a number by JSON's grammar. */
int json_number_syntax(const char *text);

/* Whether DATA (LEN bytes, the file PATH; a leading UTF-8 byte order mark
 * is let be) is one JSON value and nothing else: 0, or 1 after reporting
 * through D the first place where it is not ("not JSON: ..." at its
 * line and column, counted in characters as libyaml counts them). */
int json_syntax_check(const unsigned char *data, size_t len,
                      const char *path, struct diags *d);

#endif
