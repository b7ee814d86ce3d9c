// The model's input and output at 1024x1024, on the answer's path before and after the model runs:
// in JavaScript about 3 and 6 ms (model-session.mjs, the reference), here well under one each.
#include "model-io.h"

void matte_fill_model_input(const uint8_t *rgb, size_t plane, float *out) {
  float table[256];
  // Exact in float: every value is a multiple of 1/256 within [-0.5, 0.5).
  for (int v = 0; v < 256; v++) table[v] = (float)((v - 128) / 256.0);
  float *r = out, *g = out + plane, *b = out + 2 * plane;
  for (size_t i = 0; i < plane; i++, rgb += 3) {
    r[i] = table[rgb[0]];
    g[i] = table[rgb[1]];
    b[i] = table[rgb[2]];
  }
}

void matte_mask_from_output(const float *out, int size, uint8_t *mask, uint32_t *histogram, int32_t *box) {
  for (int v = 0; v < 256; v++) histogram[v] = 0;
  int minX = size, minY = size, maxX = -1, maxY = -1;
  for (int y = 0; y < size; y++) {
    const float *row = out + (size_t)y * size;
    uint8_t *m = mask + (size_t)y * size;
    int first = -1, last = -1;
    for (int x = 0; x < size; x++) {
      // JavaScript: v <= 0 ? 0 : v >= 1 ? 255 : (v * 255 + 0.5) | 0, in doubles; NaN falls to 0 there too.
      double v = row[x];
      uint8_t b = !(v > 0) ? 0 : v >= 1 ? 255 : (uint8_t)(int)(v * 255.0 + 0.5);
      m[x] = b;
      histogram[b]++;
      if (b >= 128) {
        if (first < 0) first = x;
        last = x;
      }
    }
    if (first >= 0) {
      if (first < minX) minX = first;
      if (last > maxX) maxX = last;
      if (y < minY) minY = y;
      maxY = y;
    }
  }
  box[0] = minX;
  box[1] = minY;
  box[2] = maxX;
  box[3] = maxY;
}
