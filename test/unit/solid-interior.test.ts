// The subject's inside made opaque on the refinement's grid mask (src/imaging/solid-interior.mjs): deep inside
// raised to 255, the outline left as the model made it, small unsure specks filled, holes that show the background
// kept, and what stays see-through measured.
import { describe, expect, it } from 'vitest';
import { solidInterior } from '../../src/imaging/solid-interior.mjs';

const W = 400;
const H = 300;

/** A grid mask: `value(x, y)` for each cell. */
function grid(value: (x: number, y: number) => number): Uint8Array {
  const out = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) out[y * W + x] = value(x, y);
  return out;
}

/** A disc of radius 100 at (200, 150): a soft outline 4 cells wide, `inside` within. */
const disc = (inside: number) => (x: number, y: number) => {
  const d = Math.hypot(x - 200, y - 150) - 100;
  return d > 2 ? 0 : d < -2 ? inside : Math.round((inside * (2 - d)) / 4);
};

describe('solidInterior', () => {
  it('makes a see-through inside opaque and leaves the outline and the background as the model made them', () => {
    const alpha = grid(disc(200));
    const before = Uint8Array.from(alpha);
    const { changed, seeThrough } = solidInterior(alpha, W, H);
    expect(changed).toBeGreaterThan(0);
    // Deep inside (a long side of 400 cells: whole from 2 cells in), opaque.
    expect(alpha[150 * W + 200]).toBe(255);
    expect(alpha[150 * W + 120]).toBe(255);
    // The outline and the background are untouched.
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const d = Math.hypot(x - 200, y - 150) - 100;
        if (d > -2) expect(alpha[y * W + x]).toBe(before[y * W + x]);
      }
    expect(seeThrough.share).toBe(0);
  });

  it('fills a small speck the model was unsure of, and keeps a clear hole and a large one', () => {
    const speck = (x: number, y: number) => Math.hypot(x - 170, y - 150) < 4;
    const clear = (x: number, y: number) => Math.hypot(x - 230, y - 150) < 4;
    const alpha = grid((x, y) => (speck(x, y) ? 100 : clear(x, y) ? 0 : disc(255)(x, y)));
    solidInterior(alpha, W, H);
    expect(alpha[150 * W + 170]).toBe(255);
    expect(alpha[150 * W + 230]).toBe(0);
    // A ring: its middle is a hole larger than a speck (a mug's handle, a roll of tape), left as it is.
    const ring = grid((x, y) => {
      const r = Math.hypot(x - 200, y - 150);
      return r < 60 ? 90 : disc(255)(x, y);
    });
    const { seeThrough } = solidInterior(ring, W, H);
    expect(ring[150 * W + 200]).toBe(90);
    // ...and measured as see-through inside the silhouette, where it is.
    expect(seeThrough.share).toBeGreaterThan(0.2);
    expect(seeThrough.box).toMatchObject({ x: expect.closeTo(141, 0), width: expect.closeTo(119, 0) });
  });

  it('is not fooled by the frame: a product cut by the border is solid up to it', () => {
    // A subject covering the bottom half, cut by the bottom, left and right edges, 200 inside.
    const alpha = grid((x, y) => (y > 150 ? 200 : y > 146 ? 120 : 0));
    solidInterior(alpha, W, H);
    expect(alpha[(H - 1) * W + 0]).toBe(255);
    expect(alpha[(H - 1) * W + W - 1]).toBe(255);
    expect(alpha[148 * W + 200]).toBe(120);
  });

  it('leaves an empty mask and a subject of outline only alone', () => {
    const empty = new Uint8Array(W * H);
    expect(solidInterior(empty, W, H)).toEqual({ changed: 0, seeThrough: { share: 0, box: null } });
    const thin = grid((x, y) => (Math.abs(y - 150) < 2 ? 180 : 0));
    const before = Uint8Array.from(thin);
    solidInterior(thin, W, H);
    expect(Buffer.from(thin).equals(Buffer.from(before))).toBe(true);
  });
});
