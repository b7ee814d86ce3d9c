// Native kernels of the cut-out writer: the same arithmetic as src/adapters/edge-refine.mjs (refineRows,
// on the service's path: reduced inputs given, guided filter, decontamination) and
// src/adapters/png-strips.mjs (bandLines), in C, bit for bit the same values. The JavaScript stays the
// reference and the fallback: src/adapters/cutout-kernels.mjs uses this module when it was built
// (npm install runs scripts/build-native.mjs) and the JavaScript otherwise. Every double below is a
// JavaScript number and every float a Float32Array element, in the same order of operations; the build
// turns off floating-point contraction (no fused multiply-add), so the rounding is the same too.
// Plain Node-API (node_api.h), context-aware: the cut-out writer's worker threads each load it.
#define NAPI_VERSION 8
#include <node_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

typedef struct {
  uint8_t *mask;
  int32_t *first, *end;
  int rowStart, rowEnd, colStart, colEnd;
} Cells;

/** edge-refine.mjs dilate(): where mask is set, grown by r cells each way. */
static void dilate(const uint8_t *mask, int w, int h, int r, uint8_t *across, uint8_t *out) {
  memset(across, 0, (size_t)w * h);
  for (int y = 0; y < h; y++) {
    int o = y * w;
    for (int x = 0; x < w; x++) {
      if (!mask[o + x]) continue;
      int a = imax(0, x - r), b = imin(w, x + r + 1);
      memset(across + o + a, 1, (size_t)(b - a));
    }
  }
  memset(out, 0, (size_t)w * h);
  for (int y = 0; y < h; y++) {
    int o = y * w;
    int y1 = imin(h, y + r + 1);
    for (int x = 0; x < w; x++) {
      if (!across[o + x]) continue;
      for (int yy = imax(0, y - r); yy < y1; yy++) out[yy * w + x] = 1;
    }
  }
}

/** edge-refine.mjs spans(). */
static void spans(uint8_t *mask, int w, int h, Cells *c) {
  c->mask = mask;
  c->rowStart = h;
  c->rowEnd = 0;
  c->colStart = w;
  c->colEnd = 0;
  for (int y = 0; y < h; y++) {
    int o = y * w;
    c->first[y] = w;
    c->end[y] = 0;
    for (int x = 0; x < w; x++) {
      if (!mask[o + x]) continue;
      if (c->first[y] == w) c->first[y] = x;
      c->end[y] = x + 1;
    }
    if (c->end[y] > 0) {
      if (c->rowStart == h) c->rowStart = y;
      c->rowEnd = y + 1;
      if (c->first[y] < c->colStart) c->colStart = c->first[y];
      if (c->end[y] > c->colEnd) c->colEnd = c->end[y];
    }
  }
}

/** edge-refine.mjs boxMean(): out is zeroed here, sat has room for (w + 1) * (h + 1). */
static void box_mean(const float *src, int w, int h, int r, double *sat, const Cells *only, float *out) {
  int W1 = w + 1;
  int top0 = only ? imax(0, imin(h, only->rowStart - r)) : 0;
  int left0 = only ? imax(0, imin(w, only->colStart - r)) : 0;
  int rows = only ? imin(h, only->rowEnd + r) : h;
  int cols = only ? imin(w, only->colEnd + r) : w;
  for (int i = top0 * W1 + left0, e = top0 * W1 + cols + 1; i < e; i++) sat[i] = 0;
  for (int y = top0; y < rows; y++) {
    double row = 0;
    int at = (y + 1) * W1, above = y * W1, from = y * w;
    sat[at + left0] = 0;
    for (int x = left0; x < cols; x++) {
      row += (double)src[from + x];
      sat[at + x + 1] = sat[above + x + 1] + row;
    }
  }
  memset(out, 0, sizeof(float) * (size_t)w * h);
  int left = imin(w, r);
  int right = imax(left, w - r - 1);
  for (int y = 0; y < h; y++) {
    int ya = imax(0, y - r), yb = imin(h, y + r + 1);
    int top = ya * W1, bottom = yb * W1, o = y * w;
#define CLIPPED(x)                                                                                         \
  do {                                                                                                     \
    int xa_ = imax(0, (x) - r), xb_ = imin(w, (x) + r + 1);                                                \
    out[o + (x)] = (float)((sat[bottom + xb_] - sat[top + xb_] - sat[bottom + xa_] + sat[top + xa_]) /      \
                           (double)((yb - ya) * (xb_ - xa_)));                                              \
  } while (0)
    if (only) {
      for (int x = only->first[y], end = only->end[y]; x < end; x++)
        if (only->mask[o + x]) CLIPPED(x);
      continue;
    }
    double area = (double)((yb - ya) * (2 * r + 1));
    for (int x = 0; x < left; x++) CLIPPED(x);
    for (int x = left, xa = left - r, xb = left + r + 1; x < right; x++, xa++, xb++) {
      out[o + x] = (float)((sat[bottom + xb] - sat[top + xb] - sat[bottom + xa] + sat[top + xa]) / area);
    }
    for (int x = right; x < w; x++) CLIPPED(x);
#undef CLIPPED
  }
}

/** Grid rows each side of a band's own rows that its result reads (edge-refine.mjs MARGIN). */
#define MARGIN 6

/**
 * edge-refine.mjs refineRows(img, { low, grid, radius, eps, steepen }, y0, y1) with the guided filter and
 * decontamination on: writes the rows' alpha ((y1 - y0) x W) and RGB. Returns 0, or -1 when out of memory.
 */
static int refine_rows(const uint8_t *rgb, int W, int H, const uint8_t *lr, const uint8_t *la, int y0, int y1, int gridMax, int radius,
                       double eps, double steepen, uint8_t *outAlpha, uint8_t *outRgb) {
  int f = imax(1, (int)ceil((double)imax(W, H) / gridMax));
  int w = (int)ceil((double)W / f), h = (int)ceil((double)H / f);
  double sx = (double)W / w, sy = (double)H / h;
  int g0 = imax(0, (int)floor(y0 / sy) - MARGIN);
  int g1 = imin(h, (int)ceil(y1 / sy) + MARGIN);
  int gh = g1 - g0;
  size_t n = (size_t)w * gh;
  int rows = y1 - y0;

  // One allocation for every grid array: 16 float planes, 4 byte planes, the table and the spans.
  size_t floats = 16 * n, bytes = 4 * n, table = (size_t)(w + 1) * (gh + 1);
  char *mem = malloc(floats * sizeof(float) + table * sizeof(double) + 4 * (size_t)gh * sizeof(int32_t) + bytes);
  if (!mem) return -1;
  double *sat = (double *)mem;
  float *fp = (float *)(sat + table);
  float *I = fp, *P = fp + n, *R = fp + 2 * n, *G = fp + 3 * n, *B = fp + 4 * n, *mP = fp + 5 * n, *IP = fp + 6 * n, *II = fp + 7 * n;
  float *mI = fp + 8 * n, *mIP = fp + 9 * n, *mII = fp + 10 * n, *A = fp + 11 * n, *Bc = fp + 12 * n, *mA = fp + 13 * n, *mB = fp + 14 * n;
  // Reused: the guided filter's inputs are no longer read once the decontamination's are made.
  float *T = IP, *TR = II, *TG = mI, *TB = mIP, *mT = mII, *bgR = A, *bgG = Bc, *bgB = fp + 15 * n;
  int32_t *spanMem = (int32_t *)(fp + 16 * n);
  uint8_t *band = (uint8_t *)(spanMem + 4 * gh), *across = band + n, *nearMask = across + n, *nearerMask = nearMask + n;
  Cells near = {0}, nearer = {0};
  near.first = spanMem;
  near.end = spanMem + gh;
  nearer.first = spanMem + 2 * gh;
  nearer.end = spanMem + 3 * gh;

  for (size_t k = 0, j = (size_t)g0 * w; k < n; k++, j++) {
    R[k] = lr[j * 3];
    G[k] = lr[j * 3 + 1];
    B[k] = lr[j * 3 + 2];
    I[k] = (float)((0.299 * R[k] + 0.587 * (double)G[k] + 0.114 * (double)B[k]) / 255);
    P[k] = (float)(la[j] / 255.0);
  }
  box_mean(P, w, gh, radius, sat, NULL, mP);
  for (size_t k = 0; k < n; k++) band[k] = mP[k] > 0.002 && mP[k] < 0.998 ? 1 : 0;
  dilate(band, w, gh, 1, across, nearMask);
  spans(nearMask, w, gh, &near);
  dilate(nearMask, w, gh, radius, across, nearerMask);
  spans(nearerMask, w, gh, &nearer);

  for (size_t k = 0; k < n; k++) {
    IP[k] = (float)((double)I[k] * P[k]);
    II[k] = (float)((double)I[k] * I[k]);
  }
  box_mean(I, w, gh, radius, sat, &nearer, mI);
  box_mean(IP, w, gh, radius, sat, &nearer, mIP);
  box_mean(II, w, gh, radius, sat, &nearer, mII);
  memset(A, 0, n * sizeof(float));
  memset(Bc, 0, n * sizeof(float));
  for (size_t k = 0; k < n; k++) {
    if (!nearerMask[k]) continue;
    double varI = (double)mII[k] - (double)mI[k] * mI[k];
    double cov = (double)mIP[k] - (double)mI[k] * mP[k];
    A[k] = (float)(cov / (varI + eps));
    Bc[k] = (float)((double)mP[k] - (double)A[k] * mI[k]);
  }
  box_mean(A, w, gh, radius, sat, &near, mA);
  box_mean(Bc, w, gh, radius, sat, &near, mB);

  for (size_t k = 0; k < n; k++) {
    double t = (1 - (double)P[k]) * (1 - (double)P[k]);
    T[k] = (float)t;
    TR[k] = (float)(t * R[k]);
    TG[k] = (float)(t * G[k]);
    TB[k] = (float)(t * B[k]);
  }
  box_mean(T, w, gh, radius * 3, sat, &near, mT);
  box_mean(TR, w, gh, radius * 3, sat, &near, bgR);
  box_mean(TG, w, gh, radius * 3, sat, &near, bgG);
  box_mean(TB, w, gh, radius * 3, sat, &near, bgB);
  for (size_t k = 0; k < n; k++) {
    if (!nearMask[k]) continue;
    double t = mT[k] > 1e-6 ? (double)mT[k] : 1;
    bgR[k] = (float)(bgR[k] / t);
    bgG[k] = (float)(bgG[k] / t);
    bgB[k] = (float)(bgB[k] / t);
  }

  int c0 = imax(0, (int)floor(y0 / sy) - 1);
  int c1 = imin(h, (int)ceil(y1 / sy) + 1);
  memset(outAlpha, 0, (size_t)rows * W);
  for (int cy = c0; cy < c1; cy++) {
    int yStart = imax(y0, (int)floor(cy * sy));
    int yEnd = imin(y1, (int)ceil((cy + 1) * sy));
    if (yStart >= yEnd) continue;
    size_t krow = (size_t)(cy - g0) * w;
    for (int cx = 0; cx < w;) {
      if (P[krow + cx] < 0.5) {
        cx++;
        continue;
      }
      int end = cx + 1;
      while (end < w && P[krow + end] >= 0.5) end++;
      int x0 = (int)floor(cx * sx);
      int x1 = imin(W, (int)ceil(end * sx));
      for (int y = yStart; y < yEnd; y++) memset(outAlpha + (size_t)(y - y0) * W + x0, 255, (size_t)(x1 - x0));
      cx = end;
    }
  }
  memcpy(outRgb, rgb + (size_t)y0 * W * 3, (size_t)rows * W * 3);

  int32_t *colX0 = malloc(sizeof(int32_t) * 2 * (size_t)W + sizeof(double) * (size_t)W);
  if (!colX0) {
    free(mem);
    return -1;
  }
  int32_t *colX1 = colX0 + W;
  double *colFx = (double *)(colX1 + W);
  for (int x = 0; x < W; x++) {
    double gx = clamp_to((x + 0.5) / sx - 0.5, w - 1);
    int x0 = (int)gx;
    colX0[x] = x0;
    colX1[x] = imin(w - 1, x0 + 1);
    colFx[x] = gx - x0;
  }
  for (int cy = c0; cy < c1; cy++) {
    size_t nearRow = (size_t)(cy - g0) * w;
    int firstCell = near.first[cy - g0];
    int endCell = near.end[cy - g0];
    if (firstCell >= endCell) continue;
    int yStart = imax(y0, (int)floor(cy * sy));
    int yEnd = imin(y1, (int)ceil((cy + 1) * sy));
    for (int y = yStart; y < yEnd; y++) {
      double gy = clamp_to((y + 0.5) / sy - 0.5, h - 1);
      int ya = (int)gy;
      int yb = imin(h - 1, ya + 1);
      double fy = gy - ya;
      size_t ka = (size_t)(ya - g0) * w, kb = (size_t)(yb - g0) * w;
      for (int cx = firstCell; cx < endCell; cx++) {
        if (!nearMask[nearRow + cx]) continue;
        int xEnd = imin(W, ceil_pos((cx + 1) * sx));
        for (int x = floor_pos(cx * sx); x < xEnd; x++) {
          size_t i = (size_t)y * W + x;
          size_t o = i - (size_t)y0 * W;
          int x0 = colX0[x], x1 = colX1[x];
          double fx = colFx[x];
          size_t k00 = ka + x0, k01 = ka + x1, k10 = kb + x0, k11 = kb + x1;
          if (!(band[k00] | band[k01] | band[k10] | band[k11])) continue;
          double w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy), w10 = (1 - fx) * fy, w11 = fx * fy;
          double r = rgb[i * 3], g = rgb[i * 3 + 1], b = rgb[i * 3 + 2];
          double grey = (0.299 * r + 0.587 * g + 0.114 * b) / 255;
          double a = (double)mA[k00] * w00 + (double)mA[k01] * w01 + (double)mA[k10] * w10 + (double)mA[k11] * w11;
          double c = (double)mB[k00] * w00 + (double)mB[k01] * w01 + (double)mB[k10] * w10 + (double)mB[k11] * w11;
          double q = a * grey + c;
          if (steepen != 1) q = (q - 0.5) * steepen + 0.5;
          q = q < 0 ? 0 : q > 1 ? 1 : q;
          outAlpha[o] = (uint8_t)js_round(q * 255);
          if (q > 0.02 && q < 0.98) {
            double keep = 1 - q;
            double br = (double)bgR[k00] * w00 + (double)bgR[k01] * w01 + (double)bgR[k10] * w10 + (double)bgR[k11] * w11;
            double bg = (double)bgG[k00] * w00 + (double)bgG[k01] * w01 + (double)bgG[k10] * w10 + (double)bgG[k11] * w11;
            double bb = (double)bgB[k00] * w00 + (double)bgB[k01] * w01 + (double)bgB[k10] * w10 + (double)bgB[k11] * w11;
            outRgb[o * 3] = clamp255((r - keep * br) / q);
            outRgb[o * 3 + 1] = clamp255((g - keep * bg) / q);
            outRgb[o * 3 + 2] = clamp255((b - keep * bb) / q);
          }
        }
      }
    }
  }
  free(colX0);
  free(mem);
  return 0;
}

/**
 * png-strips.mjs bandLines(): the band's PNG scanlines (first row unfiltered, the rest "Up") into
 * `lines`, and its alpha-weighted block reduction by `factor` into `preview` (zeroed by the caller).
 * `alpha` is capped in place by `sourceAlpha` when given. Returns 0, or -1 when out of memory.
 */
static int band_lines(const uint8_t *rgb, uint8_t *alpha, const uint8_t *sourceAlpha, int width, int rows, int factor, uint8_t *lines,
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

// ---- deflate of PNG rows ------------------------------------------------------------------------
// A deflate encoder (RFC 1951) for filtered PNG rows, where zlib at level 1 with run-length matches
// (png-strips.mjs deflateBand) spends most of a band's time: the same parse (a run of a byte repeated,
// three or more, as a match at distance 1; every other byte a literal), coded with one dynamic Huffman
// block per BLOCK_BYTES of input. It ends as a sync flush does (an empty stored block, so the next band
// may follow on a byte boundary), or, for the last band, with a final block.

#define BLOCK_BYTES (1 << 18)
#define LITLEN_CODES 286
#define MAX_BITS 15

typedef struct {
  uint8_t *out;
  size_t pos;
  uint64_t bits;
  int count;
} BitWriter;

static inline void put_bits(BitWriter *w, uint32_t value, int n) {
  w->bits |= (uint64_t)value << w->count;
  w->count += n;
  if (w->count >= 32) {
    uint32_t v = (uint32_t)w->bits;
    w->out[w->pos] = (uint8_t)v;
    w->out[w->pos + 1] = (uint8_t)(v >> 8);
    w->out[w->pos + 2] = (uint8_t)(v >> 16);
    w->out[w->pos + 3] = (uint8_t)(v >> 24);
    w->pos += 4;
    w->bits >>= 32;
    w->count -= 32;
  }
}

/** Pads to a byte boundary and writes out what is held. */
static void flush_bits(BitWriter *w) {
  while (w->count > 0) {
    w->out[w->pos++] = (uint8_t)w->bits;
    w->bits >>= 8;
    w->count -= 8;
  }
  w->count = 0;
  w->bits = 0;
}

/** Length code (257..285) of a match length 3..258, and its extra bits. */
static uint16_t LEN_CODE[259];
static uint8_t LEN_EXTRA_BITS[259];
static uint16_t LEN_EXTRA[259];
static const uint16_t LEN_BASE[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t LEN_BITS[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

/** Filled once when the module is loaded, before any thread can read them. */
__attribute__((constructor)) static void init_length_codes(void) {
  for (int c = 0; c < 29; c++) {
    // Code 284's range would reach 258, which is code 285's alone: 285 comes after and takes it.
    int end = c == 28 ? 259 : LEN_BASE[c] + (1 << LEN_BITS[c]);
    for (int len = LEN_BASE[c]; len < end && len <= 258; len++) {
      LEN_CODE[len] = (uint16_t)(257 + c);
      LEN_EXTRA_BITS[len] = LEN_BITS[c];
      LEN_EXTRA[len] = (uint16_t)(len - LEN_BASE[c]);
    }
  }
}

static int cmp_key(const void *a, const void *b) {
  uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
  return x < y ? -1 : x > y;
}

/**
 * Code lengths (at most max_bits) of a Huffman code for `freq`: Moffat and Katajainen's in-place
 * minimum-redundancy code, then lengths over the limit folded back as miniz does. Symbols of weight 0
 * get length 0; when only one has weight, it and one other symbol get length 1, so that the code is
 * complete (zlib refuses an incomplete code-length code).
 */
static void code_lengths(const uint32_t *freq, int n, int max_bits, uint8_t *lens) {
  uint64_t sorted[LITLEN_CODES];
  uint32_t A[LITLEN_CODES];
  int used = 0;
  memset(lens, 0, (size_t)n);
  for (int s = 0; s < n; s++)
    if (freq[s]) sorted[used++] = ((uint64_t)freq[s] << 16) | (uint64_t)s;
  if (used == 0) return;
  if (used == 1) {
    int only = (int)(sorted[0] & 0xffff);
    lens[only] = 1;
    lens[only == 0 ? 1 : 0] = 1;
    return;
  }
  qsort(sorted, (size_t)used, sizeof(uint64_t), cmp_key);
  for (int i = 0; i < used; i++) A[i] = (uint32_t)(sorted[i] >> 16);
  // Moffat & Katajainen: A ascending by weight becomes each symbol's depth.
  int root = 0, leaf = 2, next;
  A[0] += A[1];
  for (next = 1; next < used - 1; next++) {
    if (leaf >= used || A[root] < A[leaf]) {
      A[next] = A[root];
      A[root++] = (uint32_t)next;
    } else A[next] = A[leaf++];
    if (leaf >= used || (root < next && A[root] < A[leaf])) {
      A[next] += A[root];
      A[root++] = (uint32_t)next;
    } else A[next] += A[leaf++];
  }
  A[used - 2] = 0;
  for (next = used - 3; next >= 0; next--) A[next] = A[A[next]] + 1;
  int avbl = 1, depth = 0, count = 0;
  root = used - 2;
  next = used - 1;
  while (avbl > 0) {
    while (root >= 0 && (int)A[root] == depth) {
      count++;
      root--;
    }
    while (avbl > count) {
      A[next--] = (uint32_t)depth;
      avbl--;
    }
    avbl = 2 * count;
    depth++;
    count = 0;
  }
  // How many codes of each length; those over the limit folded back until the code is complete.
  int num[64] = {0};
  for (int i = 0; i < used; i++) num[A[i] < 63 ? A[i] : 63]++;
  for (int l = max_bits + 1; l < 64; l++) num[max_bits] += num[l];
  uint32_t total = 0;
  for (int l = max_bits; l > 0; l--) total += (uint32_t)num[l] << (max_bits - l);
  while (total != (1u << max_bits)) {
    num[max_bits]--;
    for (int l = max_bits - 1; l > 0; l--) {
      if (num[l]) {
        num[l]--;
        num[l + 1] += 2;
        break;
      }
    }
    total--;
  }
  // The heaviest symbols get the shortest codes.
  for (int l = 1, j = used; l <= max_bits; l++)
    for (int k = num[l]; k > 0; k--) lens[sorted[--j] & 0xffff] = (uint8_t)l;
}

/** Canonical codes for `lens`, bit-reversed for deflate's least-significant-bit-first order. */
static void canonical_codes(const uint8_t *lens, int n, uint16_t *codes) {
  int count[MAX_BITS + 1] = {0};
  uint32_t next[MAX_BITS + 2];
  for (int s = 0; s < n; s++) count[lens[s]]++;
  count[0] = 0;
  uint32_t code = 0;
  for (int l = 1; l <= MAX_BITS; l++) {
    code = (code + (uint32_t)count[l - 1]) << 1;
    next[l] = code;
  }
  for (int s = 0; s < n; s++) {
    int l = lens[s];
    if (!l) continue;
    uint32_t c = next[l]++, r = 0;
    for (int b = 0; b < l; b++) r |= ((c >> b) & 1u) << (l - 1 - b);
    codes[s] = (uint16_t)r;
  }
}

static const uint8_t CL_ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

/** One dynamic-Huffman block of tokens (a literal byte, or 256 + a match length at distance 1). */
static void write_block(BitWriter *w, const uint16_t *tokens, size_t count, const uint32_t *litFreq, int final) {
  uint8_t lens[LITLEN_CODES + 2];
  uint16_t codes[LITLEN_CODES];
  code_lengths(litFreq, LITLEN_CODES, MAX_BITS, lens);
  int hlit = LITLEN_CODES;
  while (hlit > 257 && lens[hlit - 1] == 0) hlit--;
  canonical_codes(lens, hlit, codes);
  // Two distance codes of one bit: only distance 1 (code 0) is used; a complete code every inflater takes.
  lens[hlit] = 1;
  lens[hlit + 1] = 1;
  int total = hlit + 2;
  // The code lengths, run-length coded (16: repeat the last 3-6 times, 17: 3-10 zeros, 18: 11-138 zeros).
  uint8_t cl[LITLEN_CODES + 2][2];
  int ncl = 0;
  uint32_t clFreq[19] = {0};
  for (int i = 0; i < total;) {
    int v = lens[i], run = 1;
    while (i + run < total && lens[i + run] == v) run++;
    int left = run;
    if (v == 0) {
      while (left >= 11) {
        int r = left > 138 ? 138 : left;
        cl[ncl][0] = 18, cl[ncl++][1] = (uint8_t)(r - 11), clFreq[18]++, left -= r;
      }
      if (left >= 3) cl[ncl][0] = 17, cl[ncl++][1] = (uint8_t)(left - 3), clFreq[17]++, left = 0;
    } else {
      cl[ncl][0] = (uint8_t)v, cl[ncl++][1] = 0, clFreq[v]++, left--;
      while (left >= 3) {
        int r = left > 6 ? 6 : left;
        cl[ncl][0] = 16, cl[ncl++][1] = (uint8_t)(r - 3), clFreq[16]++, left -= r;
      }
    }
    while (left-- > 0) cl[ncl][0] = (uint8_t)v, cl[ncl++][1] = 0, clFreq[v]++;
    i += run;
  }
  uint8_t clLens[19];
  uint16_t clCodes[19];
  code_lengths(clFreq, 19, 7, clLens);
  canonical_codes(clLens, 19, clCodes);
  int hclen = 19;
  while (hclen > 4 && clLens[CL_ORDER[hclen - 1]] == 0) hclen--;

  put_bits(w, final ? 1 : 0, 1);
  put_bits(w, 2, 2); // dynamic Huffman codes
  put_bits(w, (uint32_t)(hlit - 257), 5);
  put_bits(w, 1, 5); // HDIST: two distance codes
  put_bits(w, (uint32_t)(hclen - 4), 4);
  for (int i = 0; i < hclen; i++) put_bits(w, clLens[CL_ORDER[i]], 3);
  for (int i = 0; i < ncl; i++) {
    int sym = cl[i][0];
    put_bits(w, clCodes[sym], clLens[sym]);
    if (sym == 16) put_bits(w, cl[i][1], 2);
    else if (sym == 17) put_bits(w, cl[i][1], 3);
    else if (sym == 18) put_bits(w, cl[i][1], 7);
  }
  for (size_t t = 0; t < count; t++) {
    uint16_t tok = tokens[t];
    if (tok < 256) {
      put_bits(w, codes[tok], lens[tok]);
    } else {
      int len = tok - 256, sym = LEN_CODE[len];
      // Length code, its extra bits, then distance code 0 (one bit, 0): 15 + 5 + 1 bits at most.
      put_bits(w, codes[sym] | ((uint32_t)LEN_EXTRA[len] << lens[sym]), lens[sym] + LEN_EXTRA_BITS[len]);
      put_bits(w, 0, 1);
    }
  }
  put_bits(w, codes[256], lens[256]);
}

/** The most bytes deflate_rows writes for `n` bytes of input. */
static size_t deflate_bound(size_t n) { return n + n / 4 + (n / BLOCK_BYTES + 2) * 400 + 64; }

/** Deflates `n` bytes into `out` (deflate_bound(n) bytes); returns the length, or 0 when out of memory. */
static size_t deflate_rows(const uint8_t *in, size_t n, int last, uint8_t *out) {
  uint16_t *tokens = malloc(sizeof(uint16_t) * (BLOCK_BYTES + 1));
  if (!tokens) return 0;
  BitWriter w = {out, 0, 0, 0};
  size_t i = 0;
  do {
    size_t end = n - i > BLOCK_BYTES ? i + BLOCK_BYTES : n;
    uint32_t freq[LITLEN_CODES] = {0};
    size_t count = 0;
    while (i < end) {
      uint8_t c = in[i];
      // A run of the byte before: three or more make a match at distance 1.
      if (i > 0 && c == in[i - 1] && i + 2 < end && in[i + 1] == c && in[i + 2] == c) {
        size_t max = end - i < 258 ? end - i : 258, len = 3;
        while (len + 8 <= max) {
          uint64_t word;
          memcpy(&word, in + i + len, 8);
          uint64_t diff = word ^ (0x0101010101010101ull * c);
          if (diff) {
            len += (size_t)(__builtin_ctzll(diff) >> 3);
            goto counted;
          }
          len += 8;
        }
        while (len < max && in[i + len] == c) len++;
      counted:
        tokens[count++] = (uint16_t)(256 + len);
        freq[LEN_CODE[len]]++;
        i += len;
      } else {
        tokens[count++] = c;
        freq[c]++;
        i++;
      }
    }
    freq[256] = 1;
    int final = last && i >= n;
    write_block(&w, tokens, count, freq, final);
  } while (i < n);
  if (!last) {
    // An empty stored block: the stream ends on a byte boundary, as zlib's sync flush leaves it.
    put_bits(&w, 0, 3);
    flush_bits(&w);
    out[w.pos++] = 0x00;
    out[w.pos++] = 0x00;
    out[w.pos++] = 0xff;
    out[w.pos++] = 0xff;
  } else {
    flush_bits(&w);
  }
  free(tokens);
  return w.pos;
}

/** Adler-32 (RFC 1950) of `n` bytes, continuing from `adler`. */
static uint32_t adler32(uint32_t adler, const uint8_t *p, size_t n) {
  uint32_t a = adler & 0xffff, b = adler >> 16;
  while (n > 0) {
    size_t k = n < 5552 ? n : 5552;
    n -= k;
    while (k >= 16) {
      for (int j = 0; j < 16; j++) {
        a += p[j];
        b += a;
      }
      p += 16;
      k -= 16;
    }
    while (k--) {
      a += *p++;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return (b << 16) | a;
}

// ---- Node-API glue ------------------------------------------------------------------------------

static int throw_type(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return 0;
}

/** A Uint8Array argument's bytes and length (or NULL for null/undefined when `optional`). */
static int bytes_arg(napi_env env, napi_value value, int optional, uint8_t **data, size_t *length) {
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok) return 0;
  if (optional && (type == napi_null || type == napi_undefined)) {
    *data = NULL;
    *length = 0;
    return 1;
  }
  bool is;
  if (napi_is_typedarray(env, value, &is) != napi_ok || !is) return throw_type(env, "expected a Uint8Array");
  napi_typedarray_type kind;
  void *ptr;
  if (napi_get_typedarray_info(env, value, &kind, length, &ptr, NULL, NULL) != napi_ok) return 0;
  if (kind != napi_uint8_array) return throw_type(env, "expected a Uint8Array");
  *data = ptr;
  return 1;
}

static int int_arg(napi_env env, napi_value value, int min, int *out) {
  double v;
  if (napi_get_value_double(env, value, &v) != napi_ok || !(v >= min) || v > 1e9 || v != floor(v)) return throw_type(env, "expected a whole number in range");
  *out = (int)v;
  return 1;
}

static int double_arg(napi_env env, napi_value value, double *out) {
  if (napi_get_value_double(env, value, out) != napi_ok || !isfinite(*out)) return throw_type(env, "expected a finite number");
  return 1;
}

/** The call's arguments into argv: exactly n of them, or a TypeError naming the function. */
static int args(napi_env env, napi_callback_info info, size_t n, napi_value *argv, const char *name) {
  size_t argc = n;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return 0;
  if (argc != n) {
    char message[64];
    snprintf(message, sizeof message, "%s takes %zu argument%s", name, n, n == 1 ? "" : "s");
    return throw_type(env, message);
  }
  return 1;
}

/** refineRows(rgb, width, height, lowRgb, lowAlpha, y0, y1, grid, radius, eps, steepen, outAlpha, outRgb) */
static napi_value js_refine_rows(napi_env env, napi_callback_info info) {
  napi_value argv[13];
  if (!args(env, info, 13, argv, "refineRows")) return NULL;
  uint8_t *rgb, *lr, *la, *outAlpha, *outRgb;
  size_t rgbLen, lrLen, laLen, oaLen, orLen;
  int W, H, y0, y1, grid, radius;
  double eps, steepen;
  if (!bytes_arg(env, argv[0], 0, &rgb, &rgbLen) || !int_arg(env, argv[1], 1, &W) || !int_arg(env, argv[2], 1, &H) ||
      !bytes_arg(env, argv[3], 0, &lr, &lrLen) || !bytes_arg(env, argv[4], 0, &la, &laLen) || !int_arg(env, argv[5], 0, &y0) ||
      !int_arg(env, argv[6], 0, &y1) || !int_arg(env, argv[7], 1, &grid) || !int_arg(env, argv[8], 0, &radius) || !double_arg(env, argv[9], &eps) ||
      !double_arg(env, argv[10], &steepen) || !bytes_arg(env, argv[11], 0, &outAlpha, &oaLen) || !bytes_arg(env, argv[12], 0, &outRgb, &orLen))
    return NULL;
  int f = imax(1, (int)ceil((double)imax(W, H) / grid));
  size_t cells = (size_t)((W + f - 1) / f) * (size_t)((H + f - 1) / f);
  size_t rows = (size_t)(y1 - y0);
  if (y1 <= y0 || y1 > H || rgbLen < (size_t)W * H * 3 || lrLen < cells * 3 || laLen < cells || oaLen < rows * W || orLen < rows * W * 3)
    return (throw_type(env, "refineRows: sizes do not agree"), NULL);
  if (refine_rows(rgb, W, H, lr, la, y0, y1, grid, radius, eps, steepen, outAlpha, outRgb) != 0) napi_throw_error(env, NULL, "refineRows: out of memory");
  return NULL;
}

/** bandLines(rgb, alpha, sourceAlpha | null, width, rows, factor, lines, preview) */
static napi_value js_band_lines(napi_env env, napi_callback_info info) {
  napi_value argv[8];
  if (!args(env, info, 8, argv, "bandLines")) return NULL;
  uint8_t *rgb, *alpha, *sourceAlpha, *lines, *preview;
  size_t rgbLen, aLen, saLen, linesLen, previewLen;
  int width, rows, factor;
  if (!bytes_arg(env, argv[0], 0, &rgb, &rgbLen) || !bytes_arg(env, argv[1], 0, &alpha, &aLen) || !bytes_arg(env, argv[2], 1, &sourceAlpha, &saLen) ||
      !int_arg(env, argv[3], 1, &width) || !int_arg(env, argv[4], 1, &rows) || !int_arg(env, argv[5], 1, &factor) ||
      !bytes_arg(env, argv[6], 0, &lines, &linesLen) || !bytes_arg(env, argv[7], 0, &preview, &previewLen))
    return NULL;
  size_t pixels = (size_t)width * rows;
  size_t pw = (size_t)(width + factor - 1) / factor, ph = (size_t)(rows + factor - 1) / factor;
  if (rgbLen < pixels * 3 || aLen < pixels || (sourceAlpha && saLen < pixels) || linesLen < (1 + (size_t)width * 4) * rows || previewLen < pw * ph * 4)
    return (throw_type(env, "bandLines: sizes do not agree"), NULL);
  if (band_lines(rgb, alpha, sourceAlpha, width, rows, factor, lines, preview) != 0) napi_throw_error(env, NULL, "bandLines: out of memory");
  return NULL;
}

/** deflateRows(lines, last, out): deflates `lines` into `out` (at least deflateBound(lines.length) bytes); returns the length written. */
static napi_value js_deflate_rows(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!args(env, info, 3, argv, "deflateRows")) return NULL;
  uint8_t *in, *out;
  size_t inLen, outLen;
  bool last;
  if (!bytes_arg(env, argv[0], 0, &in, &inLen) || !bytes_arg(env, argv[2], 0, &out, &outLen)) return NULL;
  if (napi_get_value_bool(env, argv[1], &last) != napi_ok) return (throw_type(env, "expected a boolean"), NULL);
  if (outLen < deflate_bound(inLen)) return (throw_type(env, "deflateRows: the output is smaller than deflateBound"), NULL);
  size_t written = deflate_rows(in, inLen, last, out);
  if (!written) return (napi_throw_error(env, NULL, "deflateRows: out of memory"), NULL);
  napi_value result;
  napi_create_double(env, (double)written, &result);
  return result;
}

/** deflateBound(length): the most bytes deflateRows writes for `length` bytes. */
static napi_value js_deflate_bound(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int n;
  if (!args(env, info, 1, argv, "deflateBound") || !int_arg(env, argv[0], 0, &n)) return NULL;
  napi_value result;
  napi_create_double(env, (double)deflate_bound((size_t)n), &result);
  return result;
}

/** adler32(data): the Adler-32 of `data`. */
static napi_value js_adler32(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  uint8_t *data;
  size_t length;
  if (!args(env, info, 1, argv, "adler32") || !bytes_arg(env, argv[0], 0, &data, &length)) return NULL;
  napi_value result;
  napi_create_uint32(env, adler32(1, data, length), &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"refineRows", NULL, js_refine_rows, NULL, NULL, NULL, napi_enumerable, NULL},
      {"bandLines", NULL, js_band_lines, NULL, NULL, NULL, napi_enumerable, NULL},
      {"deflateRows", NULL, js_deflate_rows, NULL, NULL, NULL, napi_enumerable, NULL},
      {"deflateBound", NULL, js_deflate_bound, NULL, NULL, NULL, napi_enumerable, NULL},
      {"adler32", NULL, js_adler32, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, 5, props);
  return exports;
}
