// Number helpers shared by the native kernels: JavaScript's rounding and clamps, for the value ranges
// the kernels use, so that C and JavaScript give the same bytes.
#ifndef MATTE_NUMBERS_H
#define MATTE_NUMBERS_H
#include <stdint.h>

static inline int imin(int a, int b) { return a < b ? a : b; }
static inline int imax(int a, int b) { return a > b ? a : b; }

/**
 * Math.round of a number in [0, 2^31): the nearest whole number, halves up. Truncation is floor there
 * (one instruction, where floor() is a library call without SSE4.1), and x - floor(x) is exact.
 */
static inline double js_round(double x) {
  double r = (double)(int32_t)x;
  return x - r >= 0.5 ? r + 1.0 : r;
}

/** floor and ceil of a number in [0, 2^31). */
static inline int floor_pos(double x) { return (int)x; }
static inline int ceil_pos(double x) {
  int r = (int)x;
  return r + ((double)r < x);
}

/** Math.min(hi, Math.max(0, x)) for numbers that are never NaN. */
static inline double clamp_to(double x, double hi) { return x > hi ? hi : x < 0 ? 0 : x; }

/** edge-refine.mjs clamp(). */
static inline uint8_t clamp255(double v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)js_round(v); }

#endif
