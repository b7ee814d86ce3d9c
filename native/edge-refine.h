// The edge refinement kernel (edge-refine.c).
#ifndef MATTE_EDGE_REFINE_H
#define MATTE_EDGE_REFINE_H
#include <stdint.h>
#include "scratch.h"

/**
 * edge-refine.mjs refineRows(img, { low, grid, radius, eps, steepen }, y0, y1) with the guided filter and
 * decontamination on: writes the rows' alpha ((y1 - y0) x W) and RGB. Returns 0, or -1 when out of memory.
 * The grid's planes are `scratch` memory.
 */
int matte_refine_rows(const uint8_t *rgb, int W, int H, const uint8_t *lr, const uint8_t *la, int y0, int y1, int gridMax, int radius, double eps,
                double steepen, uint8_t *outAlpha, uint8_t *outRgb, Scratch *scratch);

#endif
