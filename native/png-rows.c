// A band's PNG scanlines and thumbnail reduction: src/adapters/png-strips.mjs bandLines in C, the same bytes.
#include <stdlib.h>
#include <string.h>
#include "numbers.h"
#include "png-rows.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MATTE_ROWS_SSSE3 1

/**
 * One row's pixels x in [0, end), end a multiple of 16, as the scalar loop of matte_band_lines makes them:
 * the RGBA row (colour zeroed where alpha is 0), its Up-filtered line, and per pixel the preview's four
 * sums (r*a, g*a, b*a, a) as 32-bit lanes in `prod`. Sixteen pixels a step: SSSE3 byte shuffles spread
 * RGB to RGBA, 16-bit multiplies (255 * 255 fits) make the products.
 */
__attribute__((target("ssse3"))) static void row_ssse3(const uint8_t *rgb, const uint8_t *alpha, int end, uint8_t *row, const uint8_t *above,
                                                       uint8_t *out, uint32_t *prod) {
  const __m128i zero = _mm_setzero_si128();
  // RGB of four pixels from 12 bytes (at 0, or at 4 for the last four of a step) to RGBA with alpha 0.
  const __m128i spread = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
  const __m128i spreadLast = _mm_setr_epi8(4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1);
  const __m128i ones = _mm_setr_epi8(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1);
  __m128i toAlpha[4], fill[4], weigh[4];
  for (int k = 0; k < 4; k++) {
    char b = (char)(4 * k);
    // alpha k*4..k*4+3 into the alpha bytes; each alpha over its pixel's four bytes; over its three colours.
    toAlpha[k] = _mm_setr_epi8(-1, -1, -1, b, -1, -1, -1, (char)(b + 1), -1, -1, -1, (char)(b + 2), -1, -1, -1, (char)(b + 3));
    fill[k] = _mm_setr_epi8(b, b, b, b, (char)(b + 1), (char)(b + 1), (char)(b + 1), (char)(b + 1), (char)(b + 2), (char)(b + 2), (char)(b + 2),
                            (char)(b + 2), (char)(b + 3), (char)(b + 3), (char)(b + 3), (char)(b + 3));
    weigh[k] = _mm_setr_epi8(b, b, b, -1, (char)(b + 1), (char)(b + 1), (char)(b + 1), -1, (char)(b + 2), (char)(b + 2), (char)(b + 2), -1,
                             (char)(b + 3), (char)(b + 3), (char)(b + 3), -1);
  }
  for (int x = 0; x < end; x += 16) {
    const uint8_t *c = rgb + (size_t)x * 3;
    __m128i a = _mm_loadu_si128((const __m128i *)(alpha + x));
    __m128i colours[4] = {
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)c), spread),
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(c + 12)), spread),
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(c + 24)), spread),
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(c + 32)), spreadLast),
    };
    for (int k = 0; k < 4; k++) {
      size_t at = (size_t)(x + 4 * k) * 4;
      __m128i transparent = _mm_cmpeq_epi8(_mm_shuffle_epi8(a, fill[k]), zero);
      __m128i p = _mm_andnot_si128(transparent, _mm_or_si128(colours[k], _mm_shuffle_epi8(a, toAlpha[k])));
      _mm_storeu_si128((__m128i *)(row + at), p);
      _mm_storeu_si128((__m128i *)(out + at), _mm_sub_epi8(p, _mm_loadu_si128((const __m128i *)(above + at))));
      __m128i w = _mm_or_si128(_mm_shuffle_epi8(a, weigh[k]), ones);
      __m128i lo = _mm_mullo_epi16(_mm_unpacklo_epi8(p, zero), _mm_unpacklo_epi8(w, zero));
      __m128i hi = _mm_mullo_epi16(_mm_unpackhi_epi8(p, zero), _mm_unpackhi_epi8(w, zero));
      __m128i *q = (__m128i *)(prod + at);
      _mm_storeu_si128(q, _mm_unpacklo_epi16(lo, zero));
      _mm_storeu_si128(q + 1, _mm_unpackhi_epi16(lo, zero));
      _mm_storeu_si128(q + 2, _mm_unpacklo_epi16(hi, zero));
      _mm_storeu_si128(q + 3, _mm_unpackhi_epi16(hi, zero));
    }
  }
}

/** Math.round of two numbers in [0, 2^31), as js_round does it. */
static inline __m128i js_round2(__m128d x) {
  __m128i whole = _mm_cvttpd_epi32(x);
  __m128d up = _mm_cmpge_pd(_mm_sub_pd(x, _mm_cvtepi32_pd(whole)), _mm_set1_pd(0.5));
  // The comparison's all-ones lanes are -1 as whole numbers: subtracting them adds one.
  return _mm_sub_epi32(whole, _mm_shuffle_epi32(_mm_castpd_si128(up), 0x08));
}

/**
 * A preview pixel from its block's sums (r*a, g*a, b*a, a; a not 0) and area: the colours divided by
 * the alpha sum, the alpha by the area, each rounded as Math.round; the same divisions as the scalar
 * code, two at a time.
 */
static inline void preview_pixel(const double *s, double area, uint8_t *p) {
  __m128d a = _mm_set1_pd(s[3]);
  __m128i rg = js_round2(_mm_div_pd(_mm_loadu_pd(s), a));
  __m128i ba = js_round2(_mm_div_pd(_mm_loadu_pd(s + 2), _mm_setr_pd(s[3], area)));
  __m128i all = _mm_unpacklo_epi64(rg, ba);
  all = _mm_packs_epi32(all, all);
  all = _mm_packus_epi16(all, all);
  uint32_t v = (uint32_t)_mm_cvtsi128_si32(all);
  memcpy(p, &v, 4);
}

/** Adds a block's per-pixel sums, `count` pixels from `prod`, to its four preview sums. */
static inline void add_block(const uint32_t *prod, int count, double *s) {
  __m128i acc = _mm_setzero_si128();
  for (int x = 0; x < count; x++) acc = _mm_add_epi32(acc, _mm_loadu_si128((const __m128i *)(prod + (size_t)x * 4)));
  // Whole numbers below 2^31 (the caller keeps a block to 32768 pixels): exact as doubles, and adding
  // zero leaves a sum as it is, so every block is added, as the scalar loop adds only those with alpha.
  _mm_storeu_pd(s, _mm_add_pd(_mm_loadu_pd(s), _mm_cvtepi32_pd(acc)));
  _mm_storeu_pd(s + 2, _mm_add_pd(_mm_loadu_pd(s + 2), _mm_cvtepi32_pd(_mm_shuffle_epi32(acc, 0xEE))));
}
#endif

int matte_band_lines(const uint8_t *rgb, uint8_t *alpha, const uint8_t *sourceAlpha, int width, int rows, int factor, uint8_t *lines,
                      uint8_t *preview) {
  size_t stride = 1 + (size_t)width * 4;
  int pw = (width + factor - 1) / factor;
  uint8_t *above = calloc((size_t)width * 4, 2);
  double *sums = calloc((size_t)pw * 4, sizeof(double));
#ifdef MATTE_ROWS_SSSE3
  // A block's row sums stay below 2^31 in 32-bit lanes: at most 32768 pixels of 255 * 255.
  int vector = width >= 16 && factor <= 32768 && __builtin_cpu_supports("ssse3");
  uint32_t *prod = vector ? malloc(sizeof(uint32_t) * 4 * (size_t)width) : NULL;
  if (!above || !sums || (vector && !prod)) {
    free(prod);
#else
  if (!above || !sums) {
#endif
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
#ifdef MATTE_ROWS_SSSE3
    if (vector) {
      const uint8_t *a = alpha + (size_t)y * width, *c = rgb + (size_t)y * width * 3;
      int end = width & ~15;
      row_ssse3(c, a, end, row, above, out, prod);
      for (int x = end; x < width; x++) {
        uint8_t v = a[x], r = v ? c[x * 3] : 0, g = v ? c[x * 3 + 1] : 0, b = v ? c[x * 3 + 2] : 0;
        uint8_t *p = row + (size_t)x * 4, *q = above + (size_t)x * 4, *u = out + (size_t)x * 4;
        uint32_t *m = prod + (size_t)x * 4;
        p[0] = r, p[1] = g, p[2] = b, p[3] = v;
        u[0] = (uint8_t)(r - q[0]), u[1] = (uint8_t)(g - q[1]), u[2] = (uint8_t)(b - q[2]), u[3] = (uint8_t)(v - q[3]);
        m[0] = (uint32_t)r * v, m[1] = (uint32_t)g * v, m[2] = (uint32_t)b * v, m[3] = v;
      }
      for (int cx = 0; cx < pw; cx++) add_block(prod + (size_t)cx * factor * 4, imin(width, (cx + 1) * factor) - cx * factor, sums + (size_t)cx * 4);
      i += width;
    } else
#endif
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
#ifdef MATTE_ROWS_SSSE3
        preview_pixel(sums + (size_t)cx * 4, (double)(blockW * blockH), p);
#else
        p[0] = (uint8_t)js_round(sums[cx * 4] / a);
        p[1] = (uint8_t)js_round(sums[cx * 4 + 1] / a);
        p[2] = (uint8_t)js_round(sums[cx * 4 + 2] / a);
        p[3] = (uint8_t)js_round(a / (double)(blockW * blockH));
#endif
      }
      memset(sums, 0, sizeof(double) * (size_t)pw * 4);
    }
  }
  // `above` and `row` swap every row: the allocation starts at whichever is lower.
  free(above < row ? above : row);
  free(sums);
#ifdef MATTE_ROWS_SSSE3
  free(prod);
#endif
  return 0;
}
