// The one raster toolkit (src/imaging/raster.mjs) that the edge refinement, the check, the report check
// and the calibration tool share: dilation against its definition, components on known shapes.
import { describe, expect, it } from 'vitest';
import { boundary, components, dilate, scaleBox } from '../../src/imaging/raster.mjs';

/** Dilation by its definition: set where any pixel of the set lies within `r` in both directions. */
function dilateByDefinition(set: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let yy = Math.max(0, y - r); yy <= Math.min(h - 1, y + r) && !out[y * w + x]; yy++)
        for (let xx = Math.max(0, x - r); xx <= Math.min(w - 1, x + r); xx++) if (set[yy * w + xx]) out[y * w + x] = 1;
  return out;
}

describe('raster toolkit', () => {
  it('dilates by a clipped square of any radius, as its definition says', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let t = 0; t < 200; t++) {
      const [w, h, r] = [1 + Math.floor(random() * 40), 1 + Math.floor(random() * 40), Math.floor(random() * 6)];
      const set = Uint8Array.from({ length: w * h }, () => (random() < 0.05 ? 1 : 0));
      expect(
        Buffer.from(dilate(set, w, h, r)).equals(Buffer.from(dilateByDefinition(set, w, h, r))),
        `${w}x${h} r${r}`,
      ).toBe(true);
    }
  });

  it('labels 4-connected components with their sizes, boxes and whether they touch the border', () => {
    const grid = ['##..#', '#...#', '..#..', '.....', '.##..'];
    const set = Uint8Array.from(grid.join(''), (c) => (c === '#' ? 1 : 0));
    const { label, sizes, boxes, touchesBorder } = components(set, 5, 5);
    expect(sizes).toEqual([0, 3, 2, 1, 2]);
    expect(boxes.slice(1)).toEqual([
      { x: 0, y: 0, width: 2, height: 2 },
      { x: 4, y: 0, width: 1, height: 2 },
      { x: 2, y: 2, width: 1, height: 1 },
      { x: 1, y: 4, width: 2, height: 1 },
    ]);
    expect(touchesBorder).toEqual([false, true, true, false, true]);
    // Diagonal neighbours are apart: the centre pixel is a component of its own.
    expect(label[2 * 5 + 2]).toBe(3);
  });

  it('finds the boundary of a set and scales boxes between grids', () => {
    const set = new Uint8Array(25).fill(1);
    expect(Array.from(boundary(set, 5, 5)).filter((v, i) => v && i % 5 > 0 && i % 5 < 4 && i > 4 && i < 20)).toEqual(
      [],
    );
    expect(Array.from(boundary(set, 5, 5)).reduce((a, b) => a + b, 0)).toBe(16);
    expect(scaleBox({ x: 1, y: 2, width: 3, height: 1 }, 2, 0.1)).toEqual({ x: 2, y: 0, width: 6, height: 1 });
  });
});
