// The model's mask reduced to the refinement grid by area averages (mask-reduce.mjs): what each cell
// holds, cells that cut pixels, rounding, and sizes it refuses.
import { describe, expect, it } from 'vitest';
import { areaAxis, reduceArea, reduceBlocks } from '../../src/imaging/mask-reduce.mjs';

describe('area-average reduction', () => {
  it('gives each cell the mean of the whole pixels it covers', () => {
    const src = Uint8Array.from([10, 20, 30, 40, 50, 60, 70, 80, 0, 0, 255, 255, 0, 0, 255, 255]);
    expect([...reduceArea(src, 4, 4, 2, 2)]).toEqual([
      Math.round((10 + 20 + 50 + 60) / 4),
      Math.round((30 + 40 + 70 + 80) / 4),
      0,
      255,
    ]);
  });

  it('weights a pixel cut by a cell border by the share inside the cell', () => {
    // Three pixels into two cells of 1.5 pixels: [0, 1.5) and [1.5, 3).
    expect(areaAxis(3, 2)).toEqual({
      first: Int32Array.from([0, 1]),
      offset: Int32Array.from([0, 2, 4]),
      weight: Int32Array.from([2, 1, 1, 2]),
    });
    expect([...reduceArea(Uint8Array.from([0, 90, 255]), 3, 1, 2, 1)]).toEqual([
      Math.round(90 / 3),
      Math.round((90 + 2 * 255) / 3),
    ]);
  });

  it('rounds halves up, keeps a flat mask flat and the same size unchanged', () => {
    expect([...reduceArea(Uint8Array.from([0, 1]), 2, 1, 1, 1)]).toEqual([1]);
    expect([...reduceArea(Uint8Array.from([0, 2, 1, 0]), 4, 1, 1, 1)]).toEqual([1]);
    expect(reduceArea(new Uint8Array(1024 * 1024).fill(173), 1024, 1024, 768, 577).every((v) => v === 173)).toBe(true);
    const src = Uint8Array.from({ length: 35 }, (_, i) => (i * 53) % 256);
    expect([...reduceArea(src, 7, 5, 7, 5)]).toEqual([...src]);
  });

  it('refuses to enlarge, an empty size, or a source shorter than its size', () => {
    expect(() => reduceArea(new Uint8Array(16), 4, 4, 5, 4)).toThrow(RangeError);
    expect(() => reduceArea(new Uint8Array(16), 4, 4, 0, 4)).toThrow(RangeError);
    expect(() => reduceArea(new Uint8Array(15), 4, 4, 2, 2)).toThrow(RangeError);
  });

  it('reduces interleaved pixels by a whole factor to the same figures as area averages, channel by channel', () => {
    const size = 16;
    for (const channels of [1, 2, 3]) {
      const px = Uint8Array.from({ length: size * size * channels }, (_, i) => (i * 37 + (i >> 5) * 11) % 256);
      const blocks = reduceBlocks(px, size, channels, 4);
      expect(blocks.length).toBe(4 * 4 * channels);
      for (let c = 0; c < channels; c++) {
        const plane = Uint8Array.from({ length: size * size }, (_, i) => px[i * channels + c]);
        expect([...blocks.filter((_, i) => i % channels === c)]).toEqual([...reduceArea(plane, size, size, 4, 4)]);
      }
    }
    expect(() => reduceBlocks(new Uint8Array(size * size), size, 1, 5)).toThrow(RangeError);
  });

  it('reduces interleaved pixels of any size (an input at its aspect ratio) channel by channel, as planes alone; by blocks where whole', () => {
    const [w, h] = [40, 26];
    for (const channels of [1, 2, 3]) {
      const px = Uint8Array.from({ length: w * h * channels }, (_, i) => (i * 37 + (i >> 5) * 11) % 256);
      const out = reduceArea(px, w, h, 16, 16, channels);
      expect(out.length).toBe(16 * 16 * channels);
      for (let c = 0; c < channels; c++) {
        const plane = Uint8Array.from({ length: w * h }, (_, i) => px[i * channels + c]);
        expect([...out.filter((_, i) => i % channels === c)]).toEqual([...reduceArea(plane, w, h, 16, 16)]);
      }
      const square = px.subarray(0, 16 * 16 * channels);
      expect([...reduceArea(square, 16, 16, 4, 4, channels)]).toEqual([...reduceBlocks(square, 16, channels, 4)]);
    }
    expect(() => reduceArea(new Uint8Array(w * h * 2), w, h, 16, 16, 3)).toThrow(RangeError);
  });
});
