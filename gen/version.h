/* version.h - specl's version, as `specl --version` and every emitted
 * file's header comment print it, and the terms of use those header
 * comments state. */
#ifndef SPECL_VERSION_H
#define SPECL_VERSION_H

/* SPECL_VERSION: the Makefile's VERSION, in the header it writes. */
#include "specl_version.h"

/* The terms of use every emitted .cl, .h and .c states, one line of its
 * header comment. */
#define EMIT_LICENCE                                                          \
    "Generated output of specl; you may use, modify and distribute it "       \
    "under terms of your choice (see specl's LICENSE)."

#endif
