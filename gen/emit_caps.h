/* emit_caps.h - the stub's own reading of a device's capabilities, written
 * from caps.c's table (emit_caps.c). */
#ifndef SPECL_EMIT_CAPS_H
#define SPECL_EMIT_CAPS_H

#include "buf.h"
#include "emit_text.h"

/* The capabilities the N variants EV ask a device for: what their plans
 * need and what their matches name. *NEEDED (may be NULL) gets the
 * plans' alone. */
unsigned stub_caps_asked(const struct emit_variant *ev, int n,
                         unsigned *needed);

/* Appends to OUT the C of stub NAME that reads what a device offers of
 * the capabilities ASKED: NAME_device_caps(dev), which evaluates caps.c's
 * rule of each, and nothing of the rules of the others (a stub that asks
 * nothing of NVIDIA's devices queries no compute capability), and, when
 * the variants' sources need some (NEEDED), the table NAME_caps (bit, and
 * what it is) of those NEEDED names, which says what a device lacks.
 * Nothing when ASKED is 0. */
void stub_caps_code(const char *name, unsigned asked, unsigned needed,
                    struct buf *out);

#endif
