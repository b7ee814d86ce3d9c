// PNG scanlines of a band (png-rows.c).
#ifndef MATTE_PNG_ROWS_H
#define MATTE_PNG_ROWS_H
#include <stdint.h>

/**
 * png-strips.mjs bandLines(): the band's PNG scanlines (first row unfiltered, the rest "Up") into
 * `lines`, and its alpha-weighted block reduction by `factor` into `preview` (zeroed by the caller).
 * `alpha` is capped in place by `sourceAlpha` when given. Returns 0, or -1 when out of memory.
 */
int matte_band_lines(const uint8_t *rgb, uint8_t *alpha, const uint8_t *sourceAlpha, int width, int rows, int factor, uint8_t *lines, uint8_t *preview);

#endif
