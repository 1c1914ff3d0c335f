/* buf.h - a growable text buffer. */
#ifndef SPECL_BUF_H
#define SPECL_BUF_H

#include <stddef.h>

struct buf {
    char *data; /* NUL-terminated; NULL until something is added */
    size_t len;
    size_t cap;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_add(struct buf *b, const char *s, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The text so far; "" when empty. */
const char *buf_str(const struct buf *b);

#endif
