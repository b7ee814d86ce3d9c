// A band's PNG scanlines and thumbnail reduction: src/adapters/png-strips.mjs bandLines in C, the same bytes.
#include <stdlib.h>
#include <string.h>
#include "numbers.h"
#include "png-rows.h"

int matte_band_lines(const uint8_t *rgb, uint8_t *alpha, const uint8_t *sourceAlpha, int width, int rows, int factor, uint8_t *lines,
                      uint8_t *preview) {
  size_t stride = 1 + (size_t)width * 4;
  int pw = (width + factor - 1) / factor;
  uint8_t *above = calloc((size_t)width * 4, 2);
  double *sums = calloc((size_t)pw * 4, sizeof(double));
  if (!above || !sums) {
    free(above);
    free(sums);
    return -1;
  }
  uint8_t *row = above + (size_t)width * 4;
  if (sourceAlpha) {
    for (size_t i = 0, e = (size_t)width * rows; i < e; i++)
      if (sourceAlpha[i] < alpha[i]) alpha[i] = sourceAlpha[i];
  }
  size_t i = 0;
  for (int y = 0; y < rows; y++) {
    uint8_t *line = lines + (size_t)y * stride;
    line[0] = y == 0 ? 0 : 2;
    uint8_t *out = line + 1;
    for (int cx = 0, x = 0; cx < pw; cx++) {
      int blockEnd = imin(width, x + factor);
      uint64_t sr = 0, sg = 0, sb = 0, sa = 0;
      for (; x < blockEnd; x++, i++) {
        uint8_t a = alpha[i], r = 0, g = 0, b = 0;
        if (a != 0) {
          r = rgb[i * 3];
          g = rgb[i * 3 + 1];
          b = rgb[i * 3 + 2];
          sr += (uint32_t)r * a;
          sg += (uint32_t)g * a;
          sb += (uint32_t)b * a;
          sa += a;
        }
        uint8_t *p = row + (size_t)x * 4, *q = above + (size_t)x * 4, *u = out + (size_t)x * 4;
        p[0] = r;
        p[1] = g;
        p[2] = b;
        p[3] = a;
        u[0] = (uint8_t)(r - q[0]);
        u[1] = (uint8_t)(g - q[1]);
        u[2] = (uint8_t)(b - q[2]);
        u[3] = (uint8_t)(a - q[3]);
      }
      if (sa != 0) {
        double *s = sums + (size_t)cx * 4;
        s[0] += (double)sr;
        s[1] += (double)sg;
        s[2] += (double)sb;
        s[3] += (double)sa;
      }
    }
    uint8_t *done = above;
    above = row;
    row = done;
    if ((y + 1) % factor == 0 || y == rows - 1) {
      int cy = y / factor;
      int blockH = y + 1 - cy * factor;
      for (int cx = 0; cx < pw; cx++) {
        double a = sums[cx * 4 + 3];
        if (a == 0) continue;
        int blockW = imin(width, (cx + 1) * factor) - cx * factor;
        uint8_t *p = preview + ((size_t)cy * pw + cx) * 4;
        p[0] = (uint8_t)js_round(sums[cx * 4] / a);
        p[1] = (uint8_t)js_round(sums[cx * 4 + 1] / a);
        p[2] = (uint8_t)js_round(sums[cx * 4 + 2] / a);
        p[3] = (uint8_t)js_round(a / (double)(blockW * blockH));
      }
      memset(sums, 0, sizeof(double) * (size_t)pw * 4);
    }
  }
  // `above` and `row` swap every row: the allocation starts at whichever is lower.
  free(above < row ? above : row);
  free(sums);
  return 0;
}
