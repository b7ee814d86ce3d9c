// A photo smaller than the model's input on both sides, enlarged to it: the same bytes as the model's input
// has always been made with (sharp's resize with `fit: 'fill'` and any kernel but nearest or linear, which
// libvips 8.18 runs as an affine transform with its bicubic interpolator), in a third of the CPU. libvips
// computes each output pixel from its 4x4 neighbours in one step (16 products a channel); the interpolator is
// separable and rounds its four row sums before it combines them, so the same sums made in two passes (each
// source row's horizontal sums once, then the vertical ones) give the same integers. What libvips does, step
// by step (resample/resize.c, affine.c, bicubic.cpp, templates.h of 8.18):
//
// - the transform: scale = 1 / (size / target) per axis, as sharp computes it; its inverse ia = (1 / (a d)) d;
//   the input offset 0.5 (libvips after 8.18 scales it by 1 - 1/scale: another image, and this code would no
//   longer be the same as sharp's), less the one-pixel border it adds, plus the interpolator's window offset 1;
// - a row's x coordinates are accumulated from the row's first (ix += ia), over the whole output width: a
//   raw output is made in strips as wide as the image (checked against tiles of 16-512 px: only full width
//   matches); y coordinates are computed for each row;
// - Catmull-Rom weights at 64 sub-pixel positions (the position's bits rounded to nearest), in 12-bit fixed
//   point truncated toward zero; each of the four row sums rounded ((v + 2048) >> 12), then the column's;
//   clipped to 0..255; pixels beyond the photo's edges repeat its edge pixels.
//
// test/unit/native-enlarge.test.ts compares the bytes with sharp's on generated photos at sizes where the
// accumulated coordinates matter, test/e2e/native-cutout.test.ts on every eval photo. Why native: libvips'
// enlargement was 28 ms of the 72 ms of CPU outside the model for one of eval-data's 800 px photos
// (docs/performance.md).
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "enlarge.h"

#define SUBPIXEL_SHIFT 6
#define SUBPIXELS (1 << SUBPIXEL_SHIFT)
#define WEIGHT_SHIFT 12
#define WEIGHT_ONE (1 << WEIGHT_SHIFT)

/** The 65 positions' weights (a microsecond's work: made for each call, so no thread ever shares them). */
static void make_weights(int weights[SUBPIXELS + 1][4]) {
  for (int s = 0; s <= SUBPIXELS; s++) {
    const double x = (double)((float)s / SUBPIXELS);
    const double cr1 = 1. - x;
    const double cr2 = -.5 * x;
    const double cr3 = cr1 * cr2;
    const double cone = cr1 * cr3;
    const double cfou = x * cr3;
    const double cr4 = cfou - cone;
    const double ctwo = cr1 - cone + cr4;
    const double cthr = x - cfou - cr4;
    const double c[4] = {cone, ctwo, cthr, cfou};
    for (int i = 0; i < 4; i++) weights[s][i] = (int)(c[i] * WEIGHT_ONE);
  }
}

static inline int fixed_round(int v) { return (v + (WEIGHT_ONE >> 1)) >> WEIGHT_SHIFT; }

/**
 * Where an output pixel at source position `p` (in the bordered image) reads: its first source pixel, and its
 * weights' row (the position's sub-pixel bits rounded to nearest, as libvips does).
 */
static inline void tap(double p, int *first, int *row) {
  const int scaled = (int)(p * SUBPIXELS * 2);
  *first = (int)p - 1;
  *row = ((scaled & (SUBPIXELS * 2 - 1)) + 1) >> 1;
}

static inline int clamp_index(int v, int n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

int enlarge_rgb(const uint8_t *src, int w, int h, int W, int H, uint8_t *out) {
  int weights[SUBPIXELS + 1][4];
  make_weights(weights);
  // libvips' transform and offsets, in its order of operations.
  const double hscale = 1.0 / ((double)w / W);
  const double vscale = 1.0 / ((double)h / H);
  const double det = hscale * vscale - 0.0 * 0.0;
  const double tmp = 1.0 / det;
  const double ia = tmp * vscale;
  const double id = tmp * hscale;
  const double idx = 0.5 - 1, idy = 0.5 - 1, offset = 1;
  // A row's x: ia * 0 + ib * oy (ib is -0.0), less idx, plus the window's offset, then accumulated.
  double x0 = ia * 0.0 + -0.0 * 0.0;
  x0 -= idx;
  x0 += offset;

  int *col_first = malloc(sizeof(int) * W), *col_row = malloc(sizeof(int) * W);
  int *row_first = malloc(sizeof(int) * H), *row_row = malloc(sizeof(int) * H);
  int *col_src = malloc(sizeof(int) * W * 4);
  int32_t *sums = malloc(sizeof(int32_t) * (size_t)W * 3 * 4);
  int ok = col_first && col_row && row_first && row_row && col_src && sums;
  if (ok) {
    double x = x0;
    for (int k = 0; k < W; k++, x += ia) tap(x, &col_first[k], &col_row[k]);
    // A row's y: ic * ox + id * oy, less idy, plus the offset (no accumulation).
    for (int y = 0; y < H; y++) {
      double p = -0.0 * 0.0 + id * (double)y;
      p -= idy;
      p += offset;
      tap(p, &row_first[y], &row_row[y]);
    }
    // The bordered image has two extra pixels before the first (libvips' border and the window's offset).
    for (int x = 0; x < W; x++)
      for (int k = 0; k < 4; k++) col_src[x * 4 + k] = clamp_index(col_first[x] + k - 2, w) * 3;
    // Four source rows' horizontal sums, kept by row index modulo 4 (the rows read only move down).
    int held[4] = {INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN};
    const size_t stride = (size_t)W * 3;
    for (int y = 0; y < H; y++) {
      for (int k = 0; k < 4; k++) {
        const int e = row_first[y] + k;
        int32_t *line = sums + (size_t)(e & 3) * stride;
        if (held[e & 3] == e) continue;
        held[e & 3] = e;
        const uint8_t *s = src + (size_t)clamp_index(e - 2, h) * w * 3;
        for (int x = 0; x < W; x++) {
          const int *c = weights[col_row[x]];
          const int *at = col_src + x * 4;
          for (int b = 0; b < 3; b++)
            line[x * 3 + b] = fixed_round(c[0] * s[at[0] + b] + c[1] * s[at[1] + b] + c[2] * s[at[2] + b] +
                                          c[3] * s[at[3] + b]);
        }
      }
      const int *c = weights[row_row[y]];
      const int e = row_first[y];
      const int32_t *r0 = sums + (size_t)(e & 3) * stride, *r1 = sums + (size_t)((e + 1) & 3) * stride;
      const int32_t *r2 = sums + (size_t)((e + 2) & 3) * stride, *r3 = sums + (size_t)((e + 3) & 3) * stride;
      uint8_t *o = out + (size_t)y * stride;
      for (size_t j = 0; j < stride; j++) {
        const int v = fixed_round(c[0] * r0[j] + c[1] * r1[j] + c[2] * r2[j] + c[3] * r3[j]);
        o[j] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
    }
  }
  free(col_first);
  free(col_row);
  free(row_first);
  free(row_row);
  free(col_src);
  free(sums);
  return ok;
}

// ---- Node-API: enlargeRgb(src, w, h, W, H) -> Promise<Uint8Array>, the work on libuv's thread pool ----

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  napi_ref source;
  napi_ref result;
  const uint8_t *src;
  uint8_t *out;
  int w, h, W, H, ok;
} Enlargement;

static void enlarge_execute(napi_env env, void *data) {
  Enlargement *job = data;
  job->ok = enlarge_rgb(job->src, job->w, job->h, job->W, job->H, job->out);
}

static void enlarge_complete(napi_env env, napi_status status, void *data) {
  Enlargement *job = data;
  napi_value array, error, message;
  if (status == napi_ok && job->ok && napi_get_reference_value(env, job->result, &array) == napi_ok) {
    napi_resolve_deferred(env, job->deferred, array);
  } else {
    napi_create_string_utf8(env, "enlargeRgb: out of memory", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, NULL, message, &error);
    napi_reject_deferred(env, job->deferred, error);
  }
  napi_delete_reference(env, job->source);
  napi_delete_reference(env, job->result);
  napi_delete_async_work(env, job->work);
  free(job);
}

static napi_value fail(napi_env env, const char *message, int range) {
  if (range)
    napi_throw_range_error(env, NULL, message);
  else
    napi_throw_type_error(env, NULL, message);
  return NULL;
}

static napi_value js_enlarge_rgb(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5)
    return fail(env, "enlargeRgb: expected (src, w, h, W, H)", 0);
  bool is_typed;
  napi_typedarray_type kind;
  size_t length, offset;
  void *data;
  napi_value buffer;
  if (napi_is_typedarray(env, argv[0], &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(env, argv[0], &kind, &length, &data, &buffer, &offset) != napi_ok ||
      kind != napi_uint8_array)
    return fail(env, "enlargeRgb: expected a Uint8Array", 0);
  int size[4];
  for (int i = 0; i < 4; i++)
    if (napi_get_value_int32(env, argv[i + 1], &size[i]) != napi_ok) return fail(env, "enlargeRgb: expected whole numbers", 0);
  const int w = size[0], h = size[1], W = size[2], H = size[3];
  // Only an enlargement on both axes is libvips' bicubic affine; W and H are the model's input, at most 8192.
  if (!(w >= 1 && h >= 1 && w < W && h < H && W <= 8192 && H <= 8192) || length < (size_t)w * h * 3)
    return fail(env, "enlargeRgb: only a photo smaller on both sides is enlarged", 1);
  Enlargement *job = calloc(1, sizeof(Enlargement));
  if (!job) return fail(env, "enlargeRgb: out of memory", 1);
  job->src = data;
  job->w = w, job->h = h, job->W = W, job->H = H;
  napi_value out_buffer, out_array, promise, name;
  void *out;
  // Everything the pool thread reads is set before the work is queued; the source is held by a reference.
  if (napi_create_arraybuffer(env, (size_t)W * H * 3, &out, &out_buffer) != napi_ok ||
      napi_create_typedarray(env, napi_uint8_array, (size_t)W * H * 3, out_buffer, 0, &out_array) != napi_ok) {
    free(job);
    return fail(env, "enlargeRgb: out of memory", 1);
  }
  job->out = out;
  if (napi_create_reference(env, argv[0], 1, &job->source) != napi_ok ||
      napi_create_reference(env, out_array, 1, &job->result) != napi_ok ||
      napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "matte:enlargeRgb", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, enlarge_execute, enlarge_complete, job, &job->work) != napi_ok ||
      napi_queue_async_work(env, job->work) != napi_ok)
    // Not reached short of a broken runtime; the job is left (a few bytes) rather than freed under a reference.
    return fail(env, "enlargeRgb: a Node-API call failed", 1);
  return promise;
}

int enlarge_define(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"enlargeRgb", NULL, js_enlarge_rgb, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  return napi_define_properties(env, exports, 1, functions) == napi_ok;
}
