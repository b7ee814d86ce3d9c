// The cut-out's PNG written in bands (png-bands.mjs): bands deflated apart by zlib join into one valid
// PNG whose checksum is combined from theirs, and each band's thumbnail reduction is right.
import zlib from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { adler32Combine, bandLines, deflateBand, joinBands } from '../../src/imaging/png-bands.mjs';

/** zlib's own Adler-32 of `data`: the last four bytes of its zlib stream. */
const zlibAdler = (data: Buffer) => {
  const z = zlib.deflateSync(data);
  return z.readUInt32BE(z.length - 4);
};

describe('PNG in bands', () => {
  it("combines two runs' Adler-32 into the checksum zlib gives their concatenation", () => {
    const a = Buffer.from('the first run of bytes, ');
    for (const b of [
      Buffer.alloc(70_000, 0xfe),
      Buffer.alloc(0),
      Buffer.from('x'),
      Buffer.alloc(65_521 * 2 + 7, 0x01),
    ]) {
      expect(adler32Combine(zlibAdler(a), zlibAdler(b), b.length), `second run of ${b.length} bytes`).toBe(
        zlibAdler(Buffer.concat([a, b])),
      );
    }
    expect(zlibAdler(Buffer.from('Wikipedia'))).toBe(0x11e60398);
  });

  it('bands deflated apart and joined decode to the rows', async () => {
    const width = 37,
      rows = 23;
    const rgb = Uint8Array.from({ length: width * rows * 3 }, (_, i) => (i * 7) % 256);
    const scattered = Uint8Array.from({ length: width * rows }, (_, i) => (i % 5 === 0 ? 0 : (i * 13) % 256));
    // A subject with transparent margins that move from row to row, and rows with nothing visible (the rows
    // are worked through only between the visible pixels of a row and the one above it).
    const subject = Uint8Array.from({ length: width * rows }, (_, i) => {
      const [x, y] = [i % width, Math.floor(i / width)];
      return y === 0 || y === 9 || y === 10 || Math.abs(x - 18) > (y * 5) % 17 ? 0 : 1 + ((i * 13) % 255);
    });
    for (const [alpha, cuts] of [scattered, subject].flatMap((a) =>
      [
        [0, 8, 16, rows],
        [0, rows],
        [0, 1, rows],
        [0, 10, rows],
      ].map((c) => [a, c] as const),
    )) {
      const parts = await Promise.all(
        cuts.slice(1).map((y1, i) => {
          const { lines } = bandLines(
            rgb.subarray(cuts[i] * width * 3, y1 * width * 3),
            alpha.subarray(cuts[i] * width, y1 * width),
            null,
            width,
            y1 - cuts[i],
            4,
          );
          return deflateBand(lines, i === cuts.length - 2);
        }),
      );
      const png = joinBands(width, rows, parts);
      const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height, info.channels]).toEqual([width, rows, 4]);
      for (let i = 0; i < width * rows; i++) {
        const expected = alpha[i] ? [rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2], alpha[i]] : [0, 0, 0, 0];
        expect([...data.subarray(i * 4, i * 4 + 4)]).toEqual(expected);
      }
    }
  });

  it('reduces a band for the thumbnail: alpha-weighted block means, partial blocks at the edges', () => {
    const width = 5,
      rows = 3;
    const rgb = new Uint8Array(width * rows * 3).fill(10);
    rgb.set([200, 100, 50], 0);
    const alpha = new Uint8Array(width * rows).fill(255);
    alpha[1] = 0; // a transparent pixel adds no colour
    alpha[4] = 51;
    const { preview } = bandLines(rgb, alpha, null, width, rows, 2);
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
