// A photo smaller than the model's input, enlarged in C (native/enlarge.c), gives sharp's bytes: the model's
// input as it was always made. Generated photos at sizes where libvips' accumulated coordinates and its edge
// rows matter, square and other targets; through the decoder as the pipeline calls it; bad arguments refused
// (real photos: test/e2e/native-cutout.test.ts).
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ImageDecoder } from '../../src/adapters/images/decoder.ts';
import { native, same } from '../helpers/native-cutout.ts';

/** A textured RGB photo: a gradient, a hard-edged disc and a fine pattern (ringing and clipping show). */
function photo(width: number, height: number) {
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const disc = Math.hypot(x / width - 0.5, y / height - 0.5) < 0.3;
      rgb[i] = disc ? 255 : Math.round((255 * x) / width);
      rgb[i + 1] = disc ? 0 : (x * 7919 + y * 104729) % 256;
      rgb[i + 2] = (x + y) % 2 ? 250 : 5;
    }
  return rgb;
}

const bySharp = (rgb: Uint8Array, w: number, h: number, W: number, H: number) =>
  sharp(rgb, { raw: { width: w, height: h, channels: 3 } })
    .resize(W, H, { fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer();

describe('the enlargement to the model input in C', () => {
  // 13², 26², 33², 37x300, 5x700: an output column's sub-pixel position differs unless the x coordinates are
  // accumulated over the whole row, as libvips does; 1023 and 2 touch the edges' repeated pixels.
  const sizes = [
    [13, 13],
    [26, 26],
    [33, 33],
    [37, 300],
    [5, 700],
    [800, 524],
    [315, 232],
    [1023, 1023],
    [2, 1023],
    [1, 1],
  ];
  it.each(sizes)('gives sharp’s bytes for a %ix%i photo at 1024²', async (w, h) => {
    const rgb = photo(w, h);
    const c = await native.enlargeRgb(rgb, w, h, 1024, 1024);
    expect(same(c, await bySharp(rgb, w, h, 1024, 1024))).toBe(true);
  });

  it('gives sharp’s bytes at targets other than the square', async () => {
    for (const [w, h, W, H] of [
      [500, 300, 1024, 672],
      [300, 500, 640, 1024],
      [99, 77, 512, 512],
    ]) {
      const rgb = photo(w, h);
      expect(same(await native.enlargeRgb(rgb, w, h, W, H), await bySharp(rgb, w, h, W, H))).toBe(true);
    }
  });

  it('is what the decoder gives the model, with sharp making reductions', async () => {
    const decoder = new ImageDecoder(100_000_000);
    for (const [w, h] of [
      [640, 480],
      [1500, 600],
      [2000, 2000],
    ]) {
      const rgb = photo(w, h);
      const decoded = {
        rgb: Buffer.from(rgb),
        alpha: null,
        width: w,
        height: h,
        source: { width: w, height: h, format: 'jpeg' },
      };
      const input = await decoder.toModelInput(decoded, 1024);
      expect([input.width, input.height]).toEqual([1024, 1024]);
      expect(same(input.rgb, await bySharp(rgb, w, h, 1024, 1024))).toBe(true);
    }
  });

  it('refuses what is not an enlargement on both axes, or a buffer smaller than its size', () => {
    const rgb = photo(100, 100);
    expect(() => native.enlargeRgb(rgb, 100, 100, 100, 200)).toThrow(RangeError);
    expect(() => native.enlargeRgb(rgb, 100, 100, 50, 50)).toThrow(RangeError);
    expect(() => native.enlargeRgb(rgb, 200, 200, 1024, 1024)).toThrow(RangeError);
    expect(() => native.enlargeRgb(rgb, 0, 100, 1024, 1024)).toThrow(RangeError);
    expect(() => native.enlargeRgb(new Float32Array(30) as unknown as Uint8Array, 1, 10, 1024, 1024)).toThrow(
      TypeError,
    );
  });
});
