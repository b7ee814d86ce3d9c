// The native kernels as a Node.js module: the model's input and output (model-io.c), the mask's
// reduction to the refinement's grid (mask-reduce.c), the edge refinement (edge-refine.c), the PNG
// rows (png-rows.c) and their deflate (deflate.c). The JavaScript stays the reference and the fallback:
// src/adapters/cutout-kernels.mjs uses this module when it was built (npm install runs
// scripts/build-native.mjs) and the JavaScript otherwise. Plain Node-API (node_api.h), context-aware:
// the cut-out writer's worker threads each load it. Every argument is checked here: a size that does
// not agree is a TypeError, never a read or write out of bounds.
#define NAPI_VERSION 8
#include <node_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "deflate.h"
#include "edge-refine.h"
#include "mask-reduce.h"
#include "model-io.h"
#include "numbers.h"
#include "png-rows.h"
#include "scratch.h"

static int throw_type(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return 0;
}

/** A typed array argument of one kind: its data and its length in elements. */
static int typed_arg(napi_env env, napi_value value, napi_typedarray_type want, const char *message, void **data, size_t *length) {
  bool is;
  if (napi_is_typedarray(env, value, &is) != napi_ok || !is) return throw_type(env, message);
  napi_typedarray_type kind;
  if (napi_get_typedarray_info(env, value, &kind, length, data, NULL, NULL) != napi_ok) return 0;
  if (kind != want) return throw_type(env, message);
  return 1;
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
  void *ptr;
  if (!typed_arg(env, value, napi_uint8_array, "expected a Uint8Array", &ptr, length)) return 0;
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

/** This environment's scratch memory (scratch.h), made with the module. */
static Scratch *scratch_of(napi_env env) {
  void *data = NULL;
  napi_get_instance_data(env, &data);
  return data;
}

static void free_scratch(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  matte_scratch_release(data);
  free(data);
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
  if (matte_refine_rows(rgb, W, H, lr, la, y0, y1, grid, radius, eps, steepen, outAlpha, outRgb, scratch_of(env)) != 0) napi_throw_error(env, NULL, "refineRows: out of memory");
  return NULL;
}

/** fillModelInput(rgb, out): src/adapters/model-session.mjs fillModelInput. */
static napi_value js_fill_model_input(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!args(env, info, 2, argv, "fillModelInput")) return NULL;
  uint8_t *rgb;
  void *out;
  size_t rgbLen, outLen;
  if (!bytes_arg(env, argv[0], 0, &rgb, &rgbLen) || !typed_arg(env, argv[1], napi_float32_array, "expected a Float32Array", &out, &outLen)) return NULL;
  if (rgbLen % 3 != 0 || outLen != rgbLen) return (throw_type(env, "fillModelInput: sizes do not agree"), NULL);
  matte_fill_model_input(rgb, rgbLen / 3, out);
  return NULL;
}

/** maskFromOutput(out, size, mask, histogram, box): src/adapters/model-session.mjs maskFromOutput. */
static napi_value js_mask_from_output(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!args(env, info, 5, argv, "maskFromOutput")) return NULL;
  void *out, *histogram, *box;
  uint8_t *mask;
  size_t outLen, maskLen, histogramLen, boxLen;
  int size;
  if (!typed_arg(env, argv[0], napi_float32_array, "expected a Float32Array", &out, &outLen) || !int_arg(env, argv[1], 1, &size) ||
      !bytes_arg(env, argv[2], 0, &mask, &maskLen) || !typed_arg(env, argv[3], napi_uint32_array, "expected a Uint32Array", &histogram, &histogramLen) ||
      !typed_arg(env, argv[4], napi_int32_array, "expected an Int32Array", &box, &boxLen))
    return NULL;
  if (size > (1 << 15) || outLen < (size_t)size * size || maskLen < (size_t)size * size || histogramLen < 256 || boxLen < 4)
    return (throw_type(env, "maskFromOutput: sizes do not agree"), NULL);
  matte_mask_from_output(out, size, mask, histogram, box);
  return NULL;
}

/** reduceArea(src, sw, sh, dst, dw, dh): src/adapters/mask-reduce.mjs reduceArea into `dst`. */
static napi_value js_reduce_area(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  if (!args(env, info, 6, argv, "reduceArea")) return NULL;
  uint8_t *src, *dst;
  size_t srcLen, dstLen;
  int sw, sh, dw, dh;
  if (!bytes_arg(env, argv[0], 0, &src, &srcLen) || !int_arg(env, argv[1], 1, &sw) || !int_arg(env, argv[2], 1, &sh) ||
      !bytes_arg(env, argv[3], 0, &dst, &dstLen) || !int_arg(env, argv[4], 1, &dw) || !int_arg(env, argv[5], 1, &dh))
    return NULL;
  // A row of sums across holds up to 255 * sw in 32 bits: sw is bounded by 2^24.
  if (dw > sw || dh > sh || sw > (1 << 24) || (double)sw * sh > 1e9 || srcLen < (size_t)sw * sh || dstLen < (size_t)dw * dh)
    return (throw_type(env, "reduceArea: sizes do not agree"), NULL);
  if (matte_reduce_area(src, sw, sh, dst, dw, dh, scratch_of(env)) != 0) napi_throw_error(env, NULL, "reduceArea: out of memory");
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
  if (matte_band_lines(rgb, alpha, sourceAlpha, width, rows, factor, lines, preview) != 0) napi_throw_error(env, NULL, "bandLines: out of memory");
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
  if (outLen < matte_deflate_bound(inLen)) return (throw_type(env, "deflateRows: the output is smaller than deflateBound"), NULL);
  size_t written = matte_deflate_rows(in, inLen, last, out, scratch_of(env));
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
  napi_create_double(env, (double)matte_deflate_bound((size_t)n), &result);
  return result;
}

/** adler32(data): the Adler-32 of `data`. */
static napi_value js_adler32(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  uint8_t *data;
  size_t length;
  if (!args(env, info, 1, argv, "adler32") || !bytes_arg(env, argv[0], 0, &data, &length)) return NULL;
  napi_value result;
  napi_create_uint32(env, matte_adler32(1, data, length), &result);
  return result;
}

/** releaseScratch(): frees the memory kept between calls (the next call allocates it again). */
static napi_value js_release_scratch(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args(env, info, 0, argv, "releaseScratch")) return NULL;
  matte_scratch_release(scratch_of(env));
  return NULL;
}

/** scratchBytes(): the bytes of memory kept between calls now. */
static napi_value js_scratch_bytes(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args(env, info, 0, argv, "scratchBytes")) return NULL;
  Scratch *s = scratch_of(env);
  double total = 0;
  for (int i = 0; i < SCRATCH_SLOTS; i++) total += (double)s->size[i];
  napi_value result;
  napi_create_double(env, total, &result);
  return result;
}

/**
 * The module's interface version: src/adapters/cutout-kernels.mjs loads a build only when it is the one
 * it expects, so a build left over from older sources is not used. Raise it whenever a function's
 * arguments or results change.
 */
#ifndef KERNELS_VERSION
#define KERNELS_VERSION 4
#endif

NAPI_MODULE_INIT() {
  Scratch *scratch = calloc(1, sizeof(Scratch));
  if (!scratch || napi_set_instance_data(env, scratch, free_scratch, NULL) != napi_ok) {
    free(scratch);
    napi_throw_error(env, NULL, "cutout-kernels: out of memory");
    return NULL;
  }
  napi_value version;
  napi_create_uint32(env, KERNELS_VERSION, &version);
  napi_property_descriptor props[] = {
      {"version", NULL, NULL, NULL, NULL, version, napi_enumerable, NULL},
      {"refineRows", NULL, js_refine_rows, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fillModelInput", NULL, js_fill_model_input, NULL, NULL, NULL, napi_enumerable, NULL},
      {"maskFromOutput", NULL, js_mask_from_output, NULL, NULL, NULL, napi_enumerable, NULL},
      {"reduceArea", NULL, js_reduce_area, NULL, NULL, NULL, napi_enumerable, NULL},
      {"bandLines", NULL, js_band_lines, NULL, NULL, NULL, napi_enumerable, NULL},
      {"deflateRows", NULL, js_deflate_rows, NULL, NULL, NULL, napi_enumerable, NULL},
      {"deflateBound", NULL, js_deflate_bound, NULL, NULL, NULL, napi_enumerable, NULL},
      {"adler32", NULL, js_adler32, NULL, NULL, NULL, napi_enumerable, NULL},
      {"releaseScratch", NULL, js_release_scratch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"scratchBytes", NULL, js_scratch_bytes, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
