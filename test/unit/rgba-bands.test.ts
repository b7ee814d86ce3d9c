// A cut-out's rows laid out as RGBA by bands (rgba-bands.mjs): the pixels, transparent ones as zeros,
// wherever the bands are cut and however the transparent margins move; and the thumbnail's reduction.
import { describe, expect, it } from 'vitest';
import { bandRgba } from '../../src/imaging/rgba-bands.mjs';

describe('RGBA bands', () => {
  const width = 37,
    rows = 23;
  const rgb = Uint8Array.from({ length: width * rows * 3 }, (_, i) => (i * 7) % 256);
  const scattered = Uint8Array.from({ length: width * rows }, (_, i) => (i % 5 === 0 ? 0 : (i * 13) % 256));
  // A subject with transparent margins that move from row to row, and rows with nothing visible (a row is
  // worked through only between its first and last visible pixel).
  const subject = Uint8Array.from({ length: width * rows }, (_, i) => {
    const [x, y] = [i % width, Math.floor(i / width)];
    return y === 0 || y === 9 || y === 10 || Math.abs(x - 18) > (y * 5) % 17 ? 0 : 1 + ((i * 13) % 255);
  });

  it.each([
    ['scattered transparent pixels', scattered],
    ['a subject with moving margins', subject],
  ])('lays out the pixels, transparent ones as zeros, in bands cut anywhere (%s)', (_, alpha) => {
    for (const cuts of [
      [0, 8, 16, rows],
      [0, rows],
      [0, 1, rows],
      [0, 10, rows],
    ]) {
      // A dirty buffer: every byte must be written.
      const out = new Uint8Array(width * rows * 4).fill(0xa5);
      for (let b = 0; b + 1 < cuts.length; b++) {
        const [y0, y1] = [cuts[b], cuts[b + 1]];
        bandRgba(
          rgb.subarray(y0 * width * 3, y1 * width * 3),
          alpha.slice(y0 * width, y1 * width),
          null,
          width,
          y1 - y0,
          4,
          out.subarray(y0 * width * 4, y1 * width * 4),
        );
      }
      for (let i = 0; i < width * rows; i++) {
        const expected = alpha[i] ? [rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2], alpha[i]] : [0, 0, 0, 0];
        expect([...out.subarray(i * 4, i * 4 + 4)], `pixel ${i}, bands ${cuts}`).toEqual(expected);
      }
    }
  });

  it("caps the alpha with the photo's own, and refuses room that is short or not aligned", () => {
    const alpha = new Uint8Array(width * rows).fill(200);
    const source = Uint8Array.from({ length: width * rows }, (_, i) => (i % 3) * 120);
    const out = new Uint8Array(width * rows * 4);
    bandRgba(rgb, alpha, source, width, rows, 4, out);
    for (let i = 0; i < width * rows; i++) expect(out[i * 4 + 3]).toBe(Math.min(200, source[i]));
    expect(() => bandRgba(rgb, alpha, null, width, rows, 4, new Uint8Array(10))).toThrow(RangeError);
    expect(() => bandRgba(rgb, alpha, null, width, rows, 4, new Uint8Array(width * rows * 4 + 4).subarray(1))).toThrow(
      RangeError,
    );
  });

  it('reduces a band for the thumbnail: alpha-weighted block means, partial blocks at the edges', () => {
    const w = 5,
      h = 3;
    const colours = new Uint8Array(w * h * 3).fill(10);
    colours.set([200, 100, 50], 0);
    const alpha = new Uint8Array(w * h).fill(255);
    alpha[1] = 0; // a transparent pixel adds no colour
    alpha[4] = 51;
    const preview = bandRgba(colours, alpha, null, w, h, 2, new Uint8Array(w * h * 4));
    expect([preview.width, preview.height]).toEqual([3, 2]);
    // Block (0,0): pixels 0 (200,100,50 @255), 1 (@0), 5 and 6 (10 @255).
    expect([...preview.data.subarray(0, 4)]).toEqual([
      Math.round((200 + 20) / 3),
      Math.round((100 + 20) / 3),
      Math.round((50 + 20) / 3),
      Math.round((255 * 3) / 4),
    ]);
    // Block (2,0) is one pixel wide: pixels 4 (@51) and 9 (@255).
    expect(preview.data[2 * 4 + 3]).toBe(Math.round((51 + 255) / 2));
  });
});
