// The cut-out writer's per-pixel passes in C: the mask's area reduction to the refinement's grid
// (src/imaging/mask-reduce.mjs reduceArea, one channel), the edge refinement of a band of rows
// (src/imaging/edge-refine.mjs refineRows, as the writer calls it: the photo and mask given on the grid,
// guided, decontaminated in place) and the band's RGBA layout with its thumbnail reduction
// (src/imaging/rgba-bands.mjs bandRgba); and the check's block reduction (mask-reduce.mjs reduceBlocks).
// Each gives the same bytes as the JavaScript it stands for, which stays the reference
// (test/unit/native-cutout.test.ts compares them) and the fallback where this addon was not built: the same
// operations in the same order, in doubles where JavaScript computes in doubles and stored as floats where it
// stores in a Float32Array, with floating-point contraction off (binding.gyp). Why native: the first three took
// 72 ms of a 2000x2000 photo's CPU in JavaScript, and no library does them (docs/performance.md, "The cut-out's
// passes in C"); the block reduction, 4 ms of JavaScript on the event loop a photo, takes under 1 here.
#include <math.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "enlarge.h"

// ---- arithmetic as JavaScript does it ----

/**
 * Math.round of a number in [0, 2^31): the nearest integer, halves up. Truncation is the floor there,
 * and needs no libm call (x86-64's baseline has no rounding instruction: floor() was a sixth of bandRgba).
 */
static double js_round(double x) {
  double f = (double)(int32_t)x;
  return x - f >= 0.5 ? f + 1 : f;
}

static double min_d(double a, double b) { return a < b ? a : b; }
static double max_d(double a, double b) { return a > b ? a : b; }
static int min_i(int a, int b) { return a < b ? a : b; }
static int max_i(int a, int b) { return a > b ? a : b; }

/** edge-refine.mjs clamp. */
static uint8_t clamp255(double v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)js_round(v); }

// ---- memory kept between calls ----

/** Scratch arrays, one set for each thread that loads the addon (Node-API instance data), grown when short. */
enum {
  S_MP, S_BAND, S_ROW_SUMS, S_COLS, S_A, S_BC, S_MA, S_MB, S_BG_R, S_BG_G, S_BG_B, S_GREY, S_COL_X0, S_COL_X1,
  S_COL_FX, S_CELL_START, S_DILATE, S_NEAR, S_NEAR_FIRST, S_NEAR_END, S_NEARER, S_NEARER_FIRST, S_NEARER_END,
  S_PREVIEW_SUMS, S_TW, S_TR, S_TG, S_TB, S_VW, S_VR, S_VG, S_VB, S_COUNT
};

typedef struct {
  void *data[S_COUNT];
  size_t size[S_COUNT];
} Kept;

/**
 * Room for `bytes` in slot `slot`, as the last call left it (its contents are the caller's to write): a
 * photo's bands reuse the same pages instead of faulting fresh ones in (about 10 MB a band).
 */
static void *kept_room(Kept *kept, int slot, size_t bytes) {
  if (kept->size[slot] < bytes) {
    free(kept->data[slot]);
    kept->data[slot] = malloc(bytes ? bytes : 1);
    kept->size[slot] = kept->data[slot] ? bytes : 0;
  }
  return kept->data[slot];
}

static void kept_free(napi_env env, void *data, void *hint) {
  Kept *kept = data;
  for (int i = 0; i < S_COUNT; i++) free(kept->data[i]);
  free(kept);
}

// ---- mask-reduce.mjs ----

typedef struct {
  int32_t *first;
  int32_t *offset;
  int32_t *weight;
} Axis;

/** areaAxis: each cell's first source pixel, and each covered pixel's overlap in units of 1/d pixel. */
static int area_axis(int n, int d, Axis *axis) {
  axis->first = malloc(sizeof(int32_t) * d);
  axis->offset = malloc(sizeof(int32_t) * (d + 1));
  // A cell covers at most n/d + 2 source pixels.
  axis->weight = malloc(sizeof(int32_t) * ((size_t)d * (n / d + 2) + 1));
  if (!axis->first || !axis->offset || !axis->weight) return 0;
  int count = 0;
  for (int i = 0; i < d; i++) {
    int64_t lo = (int64_t)i * n, hi = lo + n;
    axis->first[i] = (int32_t)(lo / d);
    axis->offset[i] = count;
    for (int64_t k = axis->first[i]; k * d < hi; k++) {
      int64_t a = (k + 1) * d < hi ? (k + 1) * d : hi;
      int64_t b = k * d > lo ? k * d : lo;
      axis->weight[count++] = (int32_t)(a - b);
    }
  }
  axis->offset[d] = count;
  return 1;
}

static void free_axis(Axis *axis) {
  free(axis->first);
  free(axis->offset);
  free(axis->weight);
}

/** reduceArea with one channel. The sums are whole numbers below 2^53 (exact in JavaScript's doubles). */
static int reduce_area(const uint8_t *src, int sw, int sh, int dw, int dh, uint8_t *out) {
  Axis xs = {0}, ys = {0};
  int64_t *across = malloc(sizeof(int64_t) * dw);
  int64_t *sums = malloc(sizeof(int64_t) * dw);
  int ok = across && sums && area_axis(sw, dw, &xs) && area_axis(sh, dh, &ys);
  if (ok) {
    int64_t whole = (int64_t)sw * sh, half = whole / 2;
    int across_row = -1;
    for (int y = 0; y < dh; y++) {
      memset(sums, 0, sizeof(int64_t) * dw);
      for (int j = ys.offset[y], k = ys.first[y]; j < ys.offset[y + 1]; j++, k++) {
        if (k != across_row) {
          const uint8_t *row = src + (size_t)k * sw;
          for (int x = 0, jj = 0; x < dw; x++) {
            int64_t sum = 0;
            for (int kk = xs.first[x], end = xs.offset[x + 1]; jj < end; jj++, kk++) sum += (int64_t)row[kk] * xs.weight[jj];
            across[x] = sum;
          }
          across_row = k;
        }
        int64_t wj = ys.weight[j];
        for (int x = 0; x < dw; x++) sums[x] += across[x] * wj;
      }
      for (int x = 0; x < dw; x++) out[(size_t)y * dw + x] = (uint8_t)((sums[x] + half) / whole);
    }
  }
  free(across);
  free(sums);
  free_axis(&xs);
  free_axis(&ys);
  return ok;
}

/**
 * mask-reduce.mjs reduceBlocks: a square of interleaved 8-bit pixels reduced by a whole factor on both axes, each
 * output byte its block's mean rounded half up (the sums are whole: exact in JavaScript too). The check's colours and
 * mask: about 4 ms of JavaScript on the event loop a photo, well under one here.
 */
static void reduce_blocks(const uint8_t *src, int size, int channels, int factor, uint32_t *sums, uint8_t *out) {
  const int edge = size / factor, row_width = edge * channels, line = size * channels;
  const uint32_t whole = (uint32_t)factor * factor, half = whole >> 1;
  for (int gy = 0; gy < edge; gy++) {
    // The block row's source rows added column by column (a loop the compiler vectorizes), then each block's
    // columns: the same whole sums in another order.
    memset(sums, 0, sizeof(uint32_t) * line);
    for (int dy = 0; dy < factor; dy++) {
      const uint8_t *row = src + (size_t)(gy * factor + dy) * line;
      for (int i = 0; i < line; i++) sums[i] += row[i];
    }
    uint8_t *o = out + (size_t)gy * row_width;
    for (int gx = 0; gx < edge; gx++)
      for (int c = 0; c < channels; c++) {
        uint32_t sum = 0;
        for (int dx = 0; dx < factor; dx++) sum += sums[(gx * factor + dx) * channels + c];
        o[gx * channels + c] = (uint8_t)((sum + half) / whole);
      }
  }
}

// ---- edge-refine.mjs ----

typedef struct {
  uint8_t *mask;
  int32_t *first;
  int32_t *end;
  int row_start, row_end;
} Cells;

/**
 * raster.mjs dilate: the set (0 or 1 a cell) grown by `radius` cells (a square), into `out`; `rows` is room
 * for w x h. A cell is set when one within `radius` along the row is (then down the column): the same cells
 * as the JavaScript's distance to the last set one, as an OR over the window, which the compiler vectorises.
 */
static void dilate(const uint8_t *in, int w, int h, int radius, uint8_t *rows, uint8_t *out) {
  for (int y = 0; y < h; y++) {
    const uint8_t *r = in + (size_t)y * w;
    uint8_t *o = rows + (size_t)y * w;
    for (int x = 0; x < w; x++) {
      uint8_t v = 0;
      for (int d = max_i(0, x - radius), e = min_i(w - 1, x + radius); d <= e; d++) v |= r[d];
      o[x] = v;
    }
  }
  for (int y = 0; y < h; y++) {
    uint8_t *o = out + (size_t)y * w;
    const int ya = max_i(0, y - radius), yb = min_i(h - 1, y + radius);
    memcpy(o, rows + (size_t)ya * w, w);
    for (int yy = ya + 1; yy <= yb; yy++) {
      const uint8_t *r = rows + (size_t)yy * w;
      for (int x = 0; x < w; x++) o[x] |= r[x];
    }
  }
}

/** spans: per row the first set column and one past the last (into `first` and `end`, h each); the first and last rows with any. */
static void spans(uint8_t *mask, int w, int h, int32_t *first, int32_t *end, Cells *cells) {
  cells->mask = mask;
  cells->first = first;
  cells->end = end;
  cells->row_start = h;
  cells->row_end = 0;
  for (int y = 0; y < h; y++) {
    first[y] = w;
    end[y] = 0;
    for (int x = 0; x < w; x++) {
      if (!mask[(size_t)y * w + x]) continue;
      if (first[y] == w) first[y] = x;
      end[y] = x + 1;
    }
    if (end[y] > 0) {
      if (cells->row_start == h) cells->row_start = y;
      cells->row_end = y + 1;
    }
  }
}

/** For every set cell k at (x, y): its window of radius r clipped at the grid, rows [ya, yb), columns [xa, xb). */
#define FOR_EACH_WINDOW(cells, w, h, r, ...)                                              \
  for (int y = (cells).row_start; y < (cells).row_end; y++) {                             \
    for (int x = (cells).first[y], end_ = (cells).end[y]; x < end_; x++) {                \
      size_t k = (size_t)y * (w) + x;                                                     \
      if (!(cells).mask[k]) continue;                                                     \
      int ya = max_i(0, y - (r)), yb = min_i((h), y + (r) + 1);                           \
      int xa = max_i(0, x - (r)), xb = min_i((w), x + (r) + 1);                           \
      __VA_ARGS__                                                                         \
    }                                                                                     \
  }

typedef struct {
  int grid, radius;
  double eps, steepen;
} RefineOptions;

/** refineGrid. */
static void refine_grid(int W, int H, int grid, int *w, int *h) {
  double f = max_d(1, ceil((double)max_i(W, H) / grid));
  *w = (int)ceil(W / f);
  *h = (int)ceil(H / f);
}

/** Grid rows each side of a band's own rows that its result reads (edge-refine.mjs MARGIN). */
#define MARGIN 6

/**
 * refineRows(img, { low: { rgb: lr, alpha: la }, inPlace: true }, y0, y1) with the guided filter and
 * decontamination on: the rows' RGB decontaminated in `rgb` (the whole photo's, W x H x 3), their alpha
 * written to `out_alpha` ((y1 - y0) x W).
 */
static int refine_rows(Kept *kept, uint8_t *rgb, int W, int H, const uint8_t *lr, const uint8_t *la, int y0, int y1,
                       RefineOptions opt, uint8_t *out_alpha) {
  int w, h;
  refine_grid(W, H, opt.grid, &w, &h);
  const int radius = opt.radius;
  const double sx = (double)W / w, sy = (double)H / h;
  const int g0 = max_i(0, (int)floor(y0 / sy) - MARGIN);
  const int g1 = min_i(h, (int)ceil(y1 / sy) + MARGIN);
  const int gh = g1 - g0;
  const size_t n = (size_t)w * gh, base = (size_t)g0 * w;
  const int rows = y1 - y0;

  // Every array is written where it is read before it is read (as edge-refine.mjs's kept arrays are).
  float *mP = kept_room(kept, S_MP, sizeof(float) * n);
  uint8_t *band = kept_room(kept, S_BAND, n);
  double *row_sums = kept_room(kept, S_ROW_SUMS, sizeof(double) * n);
  double *cols = kept_room(kept, S_COLS, sizeof(double) * w);
  float *A = kept_room(kept, S_A, sizeof(float) * n), *Bc = kept_room(kept, S_BC, sizeof(float) * n);
  // The coefficients' means and the background colours as the JavaScript's Float32Arrays hold them, kept as
  // doubles: each pixel reads twenty of them, and a float read is a conversion too.
  double *mA = kept_room(kept, S_MA, sizeof(double) * n), *mB = kept_room(kept, S_MB, sizeof(double) * n);
  double *bgR = kept_room(kept, S_BG_R, sizeof(double) * n), *bgG = kept_room(kept, S_BG_G, sizeof(double) * n);
  double *bgB = kept_room(kept, S_BG_B, sizeof(double) * n);
  float *grey = kept_room(kept, S_GREY, sizeof(float) * n);
  int32_t *colX0 = kept_room(kept, S_COL_X0, sizeof(int32_t) * W);
  int32_t *colX1 = kept_room(kept, S_COL_X1, sizeof(int32_t) * W);
  double *colFx = kept_room(kept, S_COL_FX, sizeof(double) * W);
  int32_t *cellStart = kept_room(kept, S_CELL_START, sizeof(int32_t) * (w + 1));
  uint8_t *dilated = kept_room(kept, S_DILATE, n);
  uint8_t *near_mask = kept_room(kept, S_NEAR, n), *nearer_mask = kept_room(kept, S_NEARER, n);
  int32_t *near_first = kept_room(kept, S_NEAR_FIRST, sizeof(int32_t) * gh);
  int32_t *near_end = kept_room(kept, S_NEAR_END, sizeof(int32_t) * gh);
  int32_t *nearer_first = kept_room(kept, S_NEARER_FIRST, sizeof(int32_t) * gh);
  int32_t *nearer_end = kept_room(kept, S_NEARER_END, sizeof(int32_t) * gh);
  double *tW = kept_room(kept, S_TW, sizeof(double) * n), *tR = kept_room(kept, S_TR, sizeof(double) * n);
  double *tG = kept_room(kept, S_TG, sizeof(double) * n), *tB = kept_room(kept, S_TB, sizeof(double) * n);
  double *vW = kept_room(kept, S_VW, sizeof(double) * w), *vR = kept_room(kept, S_VR, sizeof(double) * w);
  double *vG = kept_room(kept, S_VG, sizeof(double) * w), *vB = kept_room(kept, S_VB, sizeof(double) * w);
  Cells near, nearer;
  if (!mP || !band || !row_sums || !cols || !A || !Bc || !mA || !mB || !bgR || !bgG || !bgB || !grey || !colX0 ||
      !colX1 || !colFx || !cellStart || !dilated || !near_mask || !nearer_mask || !near_first || !near_end ||
      !nearer_first || !nearer_end || !tW || !tR || !tG || !tB || !vW || !vR || !vG || !vB)
    return 0;
  memset(cols, 0, sizeof(double) * w);

  // windowMeans(la, base, w, gh, radius, mP, 1 / 255): whole-number sums, exact in any order.
  {
    const double scale = 1.0 / 255;
    for (int y = 0; y < gh; y++) {
      const uint8_t *from = la + base + (size_t)y * w;
      double *o = row_sums + (size_t)y * w;
      double sum = 0;
      for (int x = 0; x < min_i(w, radius); x++) sum += from[x];
      for (int x = 0; x < w; x++) {
        if (x + radius < w) sum += from[x + radius];
        if (x - radius - 1 >= 0) sum -= from[x - radius - 1];
        o[x] = sum;
      }
    }
    for (int y = 0; y < min_i(gh, radius); y++)
      for (int x = 0; x < w; x++) cols[x] += row_sums[(size_t)y * w + x];
    for (int y = 0; y < gh; y++) {
      if (y + radius < gh)
        for (int x = 0; x < w; x++) cols[x] += row_sums[(size_t)(y + radius) * w + x];
      if (y - radius - 1 >= 0)
        for (int x = 0; x < w; x++) cols[x] -= row_sums[(size_t)(y - radius - 1) * w + x];
      const int hh = min_i(gh, y + radius + 1) - max_i(0, y - radius);
      for (int x = 0; x < w; x++) {
        const int ww = min_i(w, x + radius + 1) - max_i(0, x - radius);
        mP[(size_t)y * w + x] = (float)((cols[x] / (double)(hh * ww)) * scale);
      }
    }
  }
  for (size_t k = 0; k < n; k++) band[k] = mP[k] > 0.002 && mP[k] < 0.998 ? 1 : 0;
  dilate(band, w, gh, 1, dilated, near_mask);
  spans(near_mask, w, gh, near_first, near_end, &near);
  dilate(near_mask, w, gh, radius, dilated, nearer_mask);
  spans(nearer_mask, w, gh, nearer_first, nearer_end, &nearer);

  // Each cell's grey guide and alpha (0..1) as the JavaScript forms them inside its sums: computed once a
  // cell (the windows overlap nine times) and once a value, not once a term.
  float alpha_of[256];
  double background_weight[256];
  for (int a = 0; a < 256; a++) {
    alpha_of[a] = (float)(a / 255.0);
    const double u = 1 - a / 255.0;
    background_weight[a] = u * u;
  }
  // Every cell the windows of the `nearer` cells read, each once: a grid row's are between the first and
  // last such cell of the rows within `radius` of it, widened by `radius`.
  for (int yy = max_i(0, nearer.row_start - radius); yy < min_i(gh, nearer.row_end + radius); yy++) {
    int xa = w, xb = 0;
    for (int y = max_i(nearer.row_start, yy - radius); y < min_i(nearer.row_end, yy + radius + 1); y++) {
      if (nearer.first[y] >= nearer.end[y]) continue;
      xa = min_i(xa, max_i(0, nearer.first[y] - radius));
      xb = max_i(xb, min_i(w, nearer.end[y] + radius));
    }
    for (size_t k = (size_t)yy * w + xa, e = (size_t)yy * w + xb; k < e; k++) {
      const size_t j = base + k;
      grey[k] = (float)((0.299 * lr[j * 3] + 0.587 * lr[j * 3 + 1] + 0.114 * lr[j * 3 + 2]) / 255);
    }
  }
  // The filter's coefficients at the `nearer` cells.
  FOR_EACH_WINDOW(nearer, w, gh, radius, {
    double sI = 0, sIP = 0, sII = 0;
    for (int yy = ya; yy < yb; yy++) {
      for (size_t kk = (size_t)yy * w + xa, e = (size_t)yy * w + xb; kk < e; kk++) {
        const double v = grey[kk];
        sI += v;
        sIP += v * (double)alpha_of[la[base + kk]];
        sII += v * v;
      }
    }
    const double area = (double)((yb - ya) * (xb - xa));
    const double mI = (float)(sI / area);
    const double varI = (double)(float)(sII / area) - mI * mI;
    const double cov = (double)(float)(sIP / area) - mI * (double)mP[k];
    A[k] = (float)(cov / (varI + opt.eps));
    Bc[k] = (float)((double)mP[k] - (double)A[k] * mI);
  })
  // windowMean(A) and windowMean(Bc) at the `near` cells, in one walk (each sum takes its terms in its own order).
  FOR_EACH_WINDOW(near, w, gh, radius, {
    double sa = 0, sb = 0;
    for (int yy = ya; yy < yb; yy++) {
      for (size_t j = (size_t)yy * w + xa, e = (size_t)yy * w + xb; j < e; j++) {
        sa += A[j];
        sb += Bc[j];
      }
    }
    const double area = (double)((yb - ya) * (xb - xa));
    mA[k] = (float)(sa / area);
    mB[k] = (float)(sb / area);
  })
  // The background's colour near each edge: each cell's weight and weighted colours formed once, then each
  // window summed down its columns and those sums across, in edge-refine.mjs's order.
  {
    const int r3 = radius * 3;
    for (size_t k = (size_t)max_i(0, near.row_start - r3) * w, end = (size_t)min_i(gh, near.row_end + r3) * w; k < end;
         k++) {
      const size_t j = base + k;
      const double t = background_weight[la[j]];
      tW[k] = t;
      tR[k] = t * lr[j * 3];
      tG[k] = t * lr[j * 3 + 1];
      tB[k] = t * lr[j * 3 + 2];
    }
    for (int y = near.row_start; y < near.row_end; y++) {
      if (near.first[y] >= near.end[y]) continue;
      const int ya = max_i(0, y - r3), yb = min_i(gh, y + r3 + 1);
      for (int x = max_i(0, near.first[y] - r3), x1 = min_i(w, near.end[y] + r3); x < x1; x++) {
        double sT = 0, sR = 0, sG = 0, sB = 0;
        for (size_t k = (size_t)ya * w + x, end = (size_t)yb * w + x; k < end; k += w) {
          sT += tW[k];
          sR += tR[k];
          sG += tG[k];
          sB += tB[k];
        }
        vW[x] = sT;
        vR[x] = sR;
        vG[x] = sG;
        vB[x] = sB;
      }
      for (int x = near.first[y]; x < near.end[y]; x++) {
        const size_t k = (size_t)y * w + x;
        if (!near.mask[k]) continue;
        const int xa = max_i(0, x - r3), xb = min_i(w, x + r3 + 1);
        double sT = 0, sR = 0, sG = 0, sB = 0;
        for (int xx = xa; xx < xb; xx++) {
          sT += vW[xx];
          sR += vR[xx];
          sG += vG[xx];
          sB += vB[xx];
        }
        const double area = (double)((yb - ya) * (xb - xa));
        const double t = sT / area > 1e-6 ? sT : area;
        bgR[k] = (float)(sR / t);
        bgG[k] = (float)(sG / t);
        bgB[k] = (float)(sB / t);
      }
    }
  }

  // Outside the band the mask is certain: each cell's 0 or 255 filled in at full size.
  memset(out_alpha, 0, (size_t)rows * W);
  {
    const int c0 = max_i(0, (int)floor(y0 / sy) - 1);
    const int c1 = min_i(h, (int)ceil(y1 / sy) + 1);
    for (int cy = c0; cy < c1; cy++) {
      const int yStart = max_i(y0, (int)floor(cy * sy));
      const int yEnd = min_i(y1, (int)ceil((cy + 1) * sy));
      if (yStart >= yEnd) continue;
      const uint8_t *cells = la + base + (size_t)(cy - g0) * w;
      for (int cx = 0; cx < w;) {
        if (cells[cx] < 127.5) {
          cx++;
          continue;
        }
        int end = cx + 1;
        while (end < w && cells[end] >= 127.5) end++;
        const int x0 = (int)floor(cx * sx);
        const int x1 = min_i(W, (int)ceil(end * sx));
        for (int y = yStart; y < yEnd; y++) memset(out_alpha + (size_t)(y - y0) * W + x0, 255, x1 - x0);
        cx = end;
      }
    }
  }

  // The pixels near the band, cell by cell of the near ones, each once.
  for (int x = 0; x <= w; x++) cellStart[x] = W;
  for (int x = W - 1; x >= 0; x--) {
    const double gx = min_d(w - 1, max_d(0, (x + 0.5) / sx - 0.5));
    const int x0 = (int)gx;
    colX0[x] = x0;
    colX1[x] = min_i(w - 1, x0 + 1);
    colFx[x] = gx - x0;
    cellStart[min_i(w - 1, (int)(x / sx))] = x;
  }
  for (int cx = w - 1; cx >= 0; cx--) cellStart[cx] = min_i(cellStart[cx], cellStart[cx + 1]);
  const double steepen = opt.steepen;
  // The grey guide's terms for each byte value (the same products the pixel loop would form).
  double grey_r[256], grey_g[256], grey_b[256];
  for (int v = 0; v < 256; v++) {
    grey_r[v] = 0.299 * v;
    grey_g[v] = 0.587 * v;
    grey_b[v] = 0.114 * v;
  }
  for (int y = y0; y < y1; y++) {
    const int cy = min_i(h - 1, (int)(y / sy));
    const size_t nearRow = (size_t)(cy - g0) * w;
    const int firstCell = near.first[cy - g0], endCell = near.end[cy - g0];
    if (firstCell >= endCell) continue;
    const double gy = min_d(h - 1, max_d(0, (y + 0.5) / sy - 0.5));
    const int ya = (int)gy;
    const int yb = min_i(h - 1, ya + 1);
    const double fy = gy - ya;
    const size_t ka = (size_t)(ya - g0) * w, kb = (size_t)(yb - g0) * w;
    for (int cx = firstCell; cx < endCell; cx++) {
      if (!near.mask[nearRow + cx]) continue;
      for (int x = cellStart[cx], xEnd = cellStart[cx + 1]; x < xEnd; x++) {
        const size_t i = (size_t)y * W + x;
        const size_t o = i - (size_t)y0 * W;
        const size_t k00 = ka + colX0[x], k01 = ka + colX1[x], k10 = kb + colX0[x], k11 = kb + colX1[x];
        if (!(band[k00] | band[k01] | band[k10] | band[k11])) continue;
        const double fx = colFx[x];
        const double w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy), w10 = (1 - fx) * fy, w11 = fx * fy;
        const uint8_t r8 = rgb[i * 3], g8 = rgb[i * 3 + 1], b8 = rgb[i * 3 + 2];
        const double r = r8, g = g8, b = b8;
        const double grey = (grey_r[r8] + grey_g[g8] + grey_b[b8]) / 255;
        const double a = mA[k00] * w00 + mA[k01] * w01 + mA[k10] * w10 + mA[k11] * w11;
        const double c = mB[k00] * w00 + mB[k01] * w01 + mB[k10] * w10 + mB[k11] * w11;
        double q = a * grey + c;
        if (steepen != 1) q = (q - 0.5) * steepen + 0.5;
        q = q < 0 ? 0 : q > 1 ? 1 : q;
        out_alpha[o] = (uint8_t)js_round(q * 255);
        if (q > 0.02 && q < 0.98) {
          const double keep = 1 - q;
          const double br = bgR[k00] * w00 + bgR[k01] * w01 + bgR[k10] * w10 + bgR[k11] * w11;
          const double bgc = bgG[k00] * w00 + bgG[k01] * w01 + bgG[k10] * w10 + bgG[k11] * w11;
          const double bb = bgB[k00] * w00 + bgB[k01] * w01 + bgB[k10] * w10 + bgB[k11] * w11;
          rgb[i * 3] = clamp255((r - keep * br) / q);
          rgb[i * 3 + 1] = clamp255((g - keep * bgc) / q);
          rgb[i * 3 + 2] = clamp255((b - keep * bb) / q);
        }
      }
    }
  }
  return 1;
}

// ---- rgba-bands.mjs ----

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bandRgba writes a pixel's bytes as one little-endian 32-bit number"
#endif

/**
 * bandRgba: straight RGBA rows into `out` (byte order R, G, B, A), the alpha capped by `source_alpha`
 * in place, and the band reduced by `factor` into `preview` (pw x ph x 4).
 */
static int band_rgba(Kept *kept, const uint8_t *rgb, uint8_t *alpha, const uint8_t *source_alpha, int width, int rows,
                     int factor, uint8_t *out, uint8_t *preview) {
  const int pw = (width + factor - 1) / factor;
  // A block's sums are whole numbers (as in the JavaScript's doubles): below factor² x 255 x 255.
  uint64_t *sums = kept_room(kept, S_PREVIEW_SUMS, sizeof(uint64_t) * pw * 4);
  if (!sums) return 0;
  memset(sums, 0, sizeof(uint64_t) * pw * 4);
  const size_t count = (size_t)width * rows;
  if (source_alpha)
    for (size_t i = 0; i < count; i++)
      if (source_alpha[i] < alpha[i]) alpha[i] = source_alpha[i];
  for (int y = 0; y < rows; y++) {
    const size_t start = (size_t)y * width;
    int from = 0;
    while (from < width && alpha[start + from] == 0) from++;
    int to = width;
    while (to > from && alpha[start + to - 1] == 0) to--;
    const int firstBlock = from / factor;
    const int x0 = min_i(width, firstBlock * factor);
    const int x1 = to <= from ? x0 : min_i(width, ((to + factor - 1) / factor) * factor);
    uint8_t *row = out + start * 4;
    memset(row, 0, (size_t)x0 * 4);
    memset(row + (size_t)x1 * 4, 0, (size_t)(width - x1) * 4);
    // The pixels between, without a branch: a pixel of alpha 0 is written as zeros (bytes R, G, B, A). A
    // pixel's RGB is read as one 32-bit load (the next pixel's red masked off), but the buffer's last.
    const uint8_t *a_row = alpha + start;
    const uint8_t *rgb_row = rgb + start * 3;
    const int safe = start + x1 < count ? x1 : x1 - 1;
    int x = x0;
    for (; x < safe; x++) {
      uint32_t colour;
      memcpy(&colour, rgb_row + (size_t)x * 3, 4);
      const uint32_t a = a_row[x];
      const uint32_t pixel = ((colour & 0xffffffu) | a << 24) & (a ? 0xffffffffu : 0);
      memcpy(row + (size_t)x * 4, &pixel, 4);
    }
    for (; x < x1; x++) {
      const uint32_t a = a_row[x];
      const uint8_t *c = rgb_row + (size_t)x * 3;
      const uint32_t pixel = (c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | a << 24) & (a ? 0xffffffffu : 0);
      memcpy(row + (size_t)x * 4, &pixel, 4);
    }
    // Each block's colours weighted by alpha, and its alpha, from the pixels just written.
    for (int cx = firstBlock, bx = x0; bx < x1; cx++, bx += factor) {
      const int blockEnd = min_i(x1, bx + factor);
      uint32_t sr = 0, sg = 0, sb = 0, sa = 0;
      for (int px = bx; px < blockEnd; px++) {
        uint32_t pixel;
        memcpy(&pixel, row + (size_t)px * 4, 4);
        const uint32_t a = pixel >> 24;
        sr += (pixel & 255) * a;
        sg += (pixel >> 8 & 255) * a;
        sb += (pixel >> 16 & 255) * a;
        sa += a;
      }
      uint64_t *s = sums + (size_t)cx * 4;
      s[0] += sr;
      s[1] += sg;
      s[2] += sb;
      s[3] += sa;
    }
    if ((y + 1) % factor == 0 || y == rows - 1) {
      const int cy = y / factor;
      const int blockH = y + 1 - cy * factor;
      for (int cx = 0; cx < pw; cx++) {
        const double a = (double)sums[cx * 4 + 3];
        if (a == 0) continue;
        const int blockW = min_i(width, (cx + 1) * factor) - cx * factor;
        uint8_t *p = preview + ((size_t)cy * pw + cx) * 4;
        p[0] = (uint8_t)js_round((double)sums[cx * 4] / a);
        p[1] = (uint8_t)js_round((double)sums[cx * 4 + 1] / a);
        p[2] = (uint8_t)js_round((double)sums[cx * 4 + 2] / a);
        p[3] = (uint8_t)js_round(a / (double)(blockW * blockH));
      }
      memset(sums, 0, sizeof(uint64_t) * pw * 4);
    }
  }
  return 1;
}

// ---- Node-API bindings ----

#define CHECK(call)                                                      \
  do {                                                                   \
    if ((call) != napi_ok) {                                             \
      napi_throw_error(env, NULL, "matte native: a Node-API call failed"); \
      return NULL;                                                       \
    }                                                                    \
  } while (0)

/** A Uint8Array (or Buffer) argument's bytes, or NULL with a TypeError thrown; `null` gives NULL and no error when allowed. */
static uint8_t *bytes_of(napi_env env, napi_value value, size_t *length, int nullable, int *failed) {
  napi_valuetype type;
  *failed = 0;
  if (napi_typeof(env, value, &type) == napi_ok && type == napi_null && nullable) {
    *length = 0;
    return NULL;
  }
  bool is_typed;
  napi_typedarray_type kind;
  void *data;
  size_t offset;
  napi_value buffer;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, value, &kind, length, &data, &buffer, &offset) != napi_ok ||
      kind != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "matte native: expected a Uint8Array");
    *failed = 1;
    return NULL;
  }
  return data;
}

static int int_of(napi_env env, napi_value value, int *out) {
  return napi_get_value_int32(env, value, out) == napi_ok;
}

static int double_of(napi_env env, napi_value value, double *out) {
  return napi_get_value_double(env, value, out) == napi_ok;
}

/** This thread's scratch arrays (kept_room). */
static Kept *kept_of(napi_env env) {
  void *data = NULL;
  napi_get_instance_data(env, &data);
  return data;
}

static napi_value range_error(napi_env env, const char *message) {
  napi_throw_range_error(env, NULL, message);
  return NULL;
}

/** reduceArea(src, sw, sh, dw, dh) -> Uint8Array, one channel. */
static napi_value js_reduce_area(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t length;
  int failed, sw, sh, dw, dh;
  const uint8_t *src = bytes_of(env, argv[0], &length, 0, &failed);
  if (failed) return NULL;
  if (!int_of(env, argv[1], &sw) || !int_of(env, argv[2], &sh) || !int_of(env, argv[3], &dw) ||
      !int_of(env, argv[4], &dh) || !(dw >= 1 && dh >= 1 && dw <= sw && dh <= sh) || length < (size_t)sw * sh)
    return range_error(env, "reduceArea: cannot reduce to that size");
  void *data;
  napi_value buffer, array;
  CHECK(napi_create_arraybuffer(env, (size_t)dw * dh, &data, &buffer));
  if (!reduce_area(src, sw, sh, dw, dh, data)) return range_error(env, "reduceArea: out of memory");
  CHECK(napi_create_typedarray(env, napi_uint8_array, (size_t)dw * dh, buffer, 0, &array));
  return array;
}

/** reduceBlocks(src, size, channels, factor) -> Uint8Array. */
static napi_value js_reduce_blocks(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t length;
  int failed, size, channels, factor;
  const uint8_t *src = bytes_of(env, argv[0], &length, 0, &failed);
  if (failed) return NULL;
  if (!int_of(env, argv[1], &size) || !int_of(env, argv[2], &channels) || !int_of(env, argv[3], &factor) ||
      !(size >= 1 && size <= 65536 && channels >= 1 && channels <= 4 && factor >= 1 && factor <= 4096 && size % factor == 0) ||
      length < (size_t)size * size * channels)
    return range_error(env, "reduceBlocks: cannot reduce that square by that factor");
  const int edge = size / factor;
  const size_t bytes = (size_t)edge * edge * channels;
  uint32_t *sums = malloc(sizeof(uint32_t) * (size_t)size * channels);
  if (!sums) return range_error(env, "reduceBlocks: out of memory");
  void *data;
  napi_value buffer, array;
  if (napi_create_arraybuffer(env, bytes, &data, &buffer) != napi_ok) {
    free(sums);
    return range_error(env, "reduceBlocks: out of memory");
  }
  reduce_blocks(src, size, channels, factor, sums, data);
  free(sums);
  CHECK(napi_create_typedarray(env, napi_uint8_array, bytes, buffer, 0, &array));
  return array;
}

/**
 * refineRows(rgb, width, height, lowRgb, lowAlpha, y0, y1, grid, radius, eps, steepen, outAlpha) -> outAlpha:
 * the rows' alpha written to `outAlpha` ((y1 - y0) x width bytes or more); their RGB decontaminated in `rgb` itself.
 */
static napi_value js_refine_rows(napi_env env, napi_callback_info info) {
  size_t argc = 12;
  napi_value argv[12];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t rgb_length, lr_length, la_length, out_length;
  int failed, W, H, y0, y1, gw, gh;
  RefineOptions opt;
  uint8_t *rgb = bytes_of(env, argv[0], &rgb_length, 0, &failed);
  if (failed) return NULL;
  const uint8_t *lr = bytes_of(env, argv[3], &lr_length, 0, &failed);
  if (failed) return NULL;
  const uint8_t *la = bytes_of(env, argv[4], &la_length, 0, &failed);
  if (failed) return NULL;
  uint8_t *out = bytes_of(env, argv[11], &out_length, 0, &failed);
  if (failed) return NULL;
  if (!int_of(env, argv[1], &W) || !int_of(env, argv[2], &H) || !int_of(env, argv[5], &y0) ||
      !int_of(env, argv[6], &y1) || !int_of(env, argv[7], &opt.grid) || !int_of(env, argv[8], &opt.radius) ||
      !double_of(env, argv[9], &opt.eps) || !double_of(env, argv[10], &opt.steepen))
    return range_error(env, "refineRows: expected numbers");
  if (W < 1 || H < 1 || opt.grid < 1 || opt.radius < 0 || !(0 <= y0 && y0 < y1 && y1 <= H))
    return range_error(env, "refineRows: the rows are outside the photo");
  refine_grid(W, H, opt.grid, &gw, &gh);
  if (rgb_length < (size_t)W * H * 3 || lr_length < (size_t)gw * gh * 3 || la_length < (size_t)gw * gh ||
      out_length < (size_t)(y1 - y0) * W)
    return range_error(env, "refineRows: a buffer is smaller than its size says");
  if (!refine_rows(kept_of(env), rgb, W, H, lr, la, y0, y1, opt, out)) return range_error(env, "refineRows: out of memory");
  return argv[11];
}

/** bandRgba(rgb, alpha, sourceAlpha, width, rows, factor, out) -> { data, width, height }. */
static napi_value js_band_rgba(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t rgb_length, alpha_length, source_length, out_length;
  int failed, width, rows, factor;
  const uint8_t *rgb = bytes_of(env, argv[0], &rgb_length, 0, &failed);
  if (failed) return NULL;
  uint8_t *alpha = bytes_of(env, argv[1], &alpha_length, 0, &failed);
  if (failed) return NULL;
  const uint8_t *source_alpha = bytes_of(env, argv[2], &source_length, 1, &failed);
  if (failed) return NULL;
  uint8_t *out = bytes_of(env, argv[6], &out_length, 0, &failed);
  if (failed) return NULL;
  if (!int_of(env, argv[3], &width) || !int_of(env, argv[4], &rows) || !int_of(env, argv[5], &factor) || width < 1 ||
      rows < 1 || factor < 1)
    return range_error(env, "bandRgba: expected positive whole numbers");
  const size_t count = (size_t)width * rows;
  if (out_length < count * 4 || rgb_length < count * 3 || alpha_length < count ||
      (source_alpha && source_length < count))
    return range_error(env, "bandRgba: the room for the pixels is too small");
  const int pw = (width + factor - 1) / factor, ph = (rows + factor - 1) / factor;
  void *data;
  napi_value buffer, array, result, value;
  CHECK(napi_create_arraybuffer(env, (size_t)pw * ph * 4, &data, &buffer));
  memset(data, 0, (size_t)pw * ph * 4);
  if (!band_rgba(kept_of(env), rgb, alpha, source_alpha, width, rows, factor, out, data))
    return range_error(env, "bandRgba: out of memory");
  CHECK(napi_create_typedarray(env, napi_uint8_array, (size_t)pw * ph * 4, buffer, 0, &array));
  CHECK(napi_create_object(env, &result));
  CHECK(napi_set_named_property(env, result, "data", array));
  CHECK(napi_create_int32(env, pw, &value));
  CHECK(napi_set_named_property(env, result, "width", value));
  CHECK(napi_create_int32(env, ph, &value));
  CHECK(napi_set_named_property(env, result, "height", value));
  return result;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor functions[] = {
      {"reduceArea", NULL, js_reduce_area, NULL, NULL, NULL, napi_enumerable, NULL},
      {"reduceBlocks", NULL, js_reduce_blocks, NULL, NULL, NULL, napi_enumerable, NULL},
      {"refineRows", NULL, js_refine_rows, NULL, NULL, NULL, napi_enumerable, NULL},
      {"bandRgba", NULL, js_band_rgba, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  Kept *kept = calloc(1, sizeof(Kept));
  if (!kept || napi_set_instance_data(env, kept, kept_free, NULL) != napi_ok) return NULL;
  if (napi_define_properties(env, exports, sizeof(functions) / sizeof(functions[0]), functions) != napi_ok) return NULL;
  if (!enlarge_define(env, exports)) return NULL;
  return exports;
}
