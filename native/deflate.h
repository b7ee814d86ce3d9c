// Deflate of PNG rows (deflate.c).
#ifndef MATTE_DEFLATE_H
#define MATTE_DEFLATE_H
#include <stddef.h>
#include <stdint.h>
#include "scratch.h"

/** The most bytes deflate_rows writes for `n` bytes of input. */
size_t matte_deflate_bound(size_t n);

/** Deflates `n` bytes into `out` (matte_deflate_bound(n) bytes); returns the length, or 0 when out of memory. Tokens are `scratch` memory. */
size_t matte_deflate_rows(const uint8_t *in, size_t n, int last, uint8_t *out, Scratch *scratch);

/** Adler-32 (RFC 1950) of `n` bytes, continuing from `adler`. */
uint32_t matte_adler32(uint32_t adler, const uint8_t *p, size_t n);

#endif
