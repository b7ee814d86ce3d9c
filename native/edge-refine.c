// The edge refinement of src/adapters/edge-refine.mjs (refineRows on the service's path: reduced inputs
// given, guided filter, decontamination) in C, bit for bit the same values: every double below is a
// JavaScript number and every float a Float32Array element, in the same order of operations, and the
// build turns off floating-point contraction (no fused multiply-add), so the rounding is the same too.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "edge-refine.h"
#include "numbers.h"

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
int matte_refine_rows(const uint8_t *rgb, int W, int H, const uint8_t *lr, const uint8_t *la, int y0, int y1, int gridMax, int radius,
                       double eps, double steepen, uint8_t *outAlpha, uint8_t *outRgb, Scratch *scratch) {
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
  char *mem = matte_scratch(scratch, SCRATCH_REFINE_GRID, floats * sizeof(float) + table * sizeof(double) + 4 * (size_t)gh * sizeof(int32_t) + bytes);
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

  int32_t *colX0 = matte_scratch(scratch, SCRATCH_REFINE_COLUMNS, sizeof(int32_t) * 2 * (size_t)W + sizeof(double) * (size_t)W);
  if (!colX0) return -1;
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
  return 0;
}
