/* version.h - specl's version, as `specl --version` and every emitted
 * file's header comment print it (the Makefile reads it from here). */
#ifndef SPECL_VERSION_H
#define SPECL_VERSION_H

#define SPECL_VERSION "0.1.0"

#endif
