// native/enlarge.c: a photo enlarged to the model's input as libvips' bicubic affine does it.
#ifndef MATTE_ENLARGE_H
#define MATTE_ENLARGE_H
#include <node_api.h>
#include <stdint.h>

/** src (w x h RGB) enlarged to out (W x H RGB), w < W and h < H; 0 when out of memory. */
int enlarge_rgb(const uint8_t *src, int w, int h, int W, int H, uint8_t *out);
/** Adds enlargeRgb to the addon's exports; 0 on failure. */
int enlarge_define(napi_env env, napi_value exports);
#endif
