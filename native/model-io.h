// The model's input and output at its square size (model-io.c).
#ifndef MATTE_MODEL_IO_H
#define MATTE_MODEL_IO_H
#include <stddef.h>
#include <stdint.h>

/** src/adapters/model-session.mjs fillModelInput: `plane` RGB pixels → three float planes of (v - 128) / 256. */
void matte_fill_model_input(const uint8_t *rgb, size_t plane, float *out);

/**
 * src/adapters/model-session.mjs maskFromOutput: the model's output (0..1, `size` x `size`) as bytes,
 * rounded halves up and clamped (NaN is 0), with the bytes' histogram and the box of bytes >= 128
 * (box: minX, minY, maxX, maxY; maxX -1 when there is none).
 */
void matte_mask_from_output(const float *out, int size, uint8_t *mask, uint32_t *histogram, int32_t *box);

#endif
