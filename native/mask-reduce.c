// The model's mask reduced to the edge refinement's grid by area averages: src/adapters/mask-reduce.mjs
// reduceArea in C, the same integer arithmetic and so the same bytes.
#include <math.h>
#include <string.h>
#include "mask-reduce.h"
#include "numbers.h"

typedef struct {
  int32_t *first, *offset, *weight;
} Axis;

/** mask-reduce.mjs areaAxis into memory at `mem` (d firsts, d + 1 offsets, at most n + d - 1 weights); returns the ints used. */
static size_t area_axis(int n, int d, int32_t *mem, Axis *axis) {
  axis->first = mem;
  axis->offset = mem + d;
  axis->weight = mem + 2 * d + 1;
  int32_t count = 0;
  for (int i = 0; i < d; i++) {
    int64_t lo = (int64_t)i * n, hi = lo + n;
    int k = (int)(lo / d);
    axis->first[i] = k;
    axis->offset[i] = count;
    for (; (int64_t)k * d < hi; k++) {
      int64_t a = (int64_t)(k + 1) * d < hi ? (int64_t)(k + 1) * d : hi;
      int64_t b = (int64_t)k * d > lo ? (int64_t)k * d : lo;
      axis->weight[count++] = (int32_t)(a - b);
    }
  }
  axis->offset[d] = count;
  return (size_t)(2 * d + 1 + count);
}

int matte_reduce_area(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh, Scratch *scratch) {
  // One block of scratch: a row of sums down (doubles, first for their alignment), the rows across, and
  // each axis' tables: d firsts, d + 1 offsets, and n + d - 1 weights at most (a pixel cut by a cell
  // border counts twice).
  size_t sumBytes = sizeof(double) * (size_t)dw;
  size_t acrossBytes = sizeof(uint32_t) * (size_t)sh * dw;
  size_t axisInts = (size_t)(3 * dw + sw) + (size_t)(3 * dh + sh);
  char *mem = matte_scratch(scratch, SCRATCH_REDUCE, sumBytes + acrossBytes + sizeof(int32_t) * axisInts);
  if (!mem) return -1;
  double *sum = (double *)mem;
  uint32_t *across = (uint32_t *)(mem + sumBytes);
  int32_t *ints = (int32_t *)(mem + sumBytes + acrossBytes);
  Axis xs, ys;
  size_t used = area_axis(sw, dw, ints, &xs);
  area_axis(sh, dh, ints + used, &ys);
  int taps = 0;
  for (int x = 0; x < dw; x++) taps = imax(taps, xs.offset[x + 1] - xs.offset[x]);
  int32_t *four = taps <= 4 && sw >= 4 ? matte_scratch(scratch, SCRATCH_REDUCE_TAPS, sizeof(int32_t) * 5 * (size_t)dw) : NULL;
  if (four) {
    // Across with four taps a cell (a reduction by less than three covers at most four pixels): each
    // cell's weights padded with zeros, its window moved left where it would pass the row's end, so
    // that the loop has no inner loop of varying length. The same sums.
    int32_t *start = four + 4 * (size_t)dw;
    for (int x = 0; x < dw; x++) {
      int s = imin(xs.first[x], sw - 4);
      start[x] = s;
      for (int k = 0; k < 4; k++) four[4 * x + k] = 0;
      for (int j = xs.offset[x], k = xs.first[x] - s; j < xs.offset[x + 1]; j++, k++) four[4 * x + k] = xs.weight[j];
    }
    for (int y = 0; y < sh; y++) {
      const uint8_t *row = src + (size_t)y * sw;
      uint32_t *out = across + (size_t)y * dw;
      for (int x = 0; x < dw; x++) {
        const uint8_t *p = row + start[x];
        const int32_t *w = four + 4 * x;
        out[x] = (uint32_t)p[0] * (uint32_t)w[0] + (uint32_t)p[1] * (uint32_t)w[1] + (uint32_t)p[2] * (uint32_t)w[2] + (uint32_t)p[3] * (uint32_t)w[3];
      }
    }
  } else {
    for (int y = 0; y < sh; y++) {
      const uint8_t *row = src + (size_t)y * sw;
      uint32_t *out = across + (size_t)y * dw;
      for (int x = 0; x < dw; x++) {
        uint32_t acc = 0;
        const uint8_t *p = row + xs.first[x];
        for (int j = xs.offset[x]; j < xs.offset[x + 1]; j++) acc += (uint32_t)*p++ * (uint32_t)xs.weight[j];
        out[x] = acc;
      }
    }
  }
  // Down, a row of cells at a time (the rows above are read in order); the division in doubles, as the
  // JavaScript's: a quotient of at most 255 of integers below 2^53 is exact enough that floor agrees.
  double whole = (double)sw * sh, half = floor(whole / 2);
  for (int y = 0; y < dh; y++) {
    memset(sum, 0, sizeof(double) * (size_t)dw);
    for (int j = ys.offset[y], k = ys.first[y]; j < ys.offset[y + 1]; j++, k++) {
      const uint32_t *row = across + (size_t)k * dw;
      double w = ys.weight[j];
      for (int x = 0; x < dw; x++) sum[x] += row[x] * w;
    }
    uint8_t *out = dst + (size_t)y * dw;
    // Non-negative quotients: truncation is the floor, without a call to floor() for every cell.
    for (int x = 0; x < dw; x++) out[x] = (uint8_t)(int)((sum[x] + half) / whole);
  }
  return 0;
}
