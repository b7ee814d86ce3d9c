// Area-average reduction of a one-channel image (mask-reduce.c).
#ifndef MATTE_MASK_REDUCE_H
#define MATTE_MASK_REDUCE_H
#include <stdint.h>
#include "scratch.h"

/**
 * src/adapters/mask-reduce.mjs reduceArea: `src` (sw x sh) reduced to `dst` (dw x dh, 1 <= dw <= sw,
 * 1 <= dh <= sh) by area averages, the same bytes. Returns 0, or -1 when out of memory.
 */
int matte_reduce_area(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh, Scratch *scratch);

#endif
