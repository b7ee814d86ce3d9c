// The mirror image of a square picture: the second look `npm run bench -- heavy-looks` measures against light.

/** A square image of `channels` bytes a pixel (RGB by default, 1 for a mask) mirrored left to right. */
export function flipLeftRight(pixels: Buffer, size: number, channels = 3): Buffer {
  const out = Buffer.alloc(pixels.length);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const s = (y * size + x) * channels;
      const d = (y * size + (size - 1 - x)) * channels;
      for (let c = 0; c < channels; c++) out[d + c] = pixels[s + c];
    }
  }
  return out;
}
