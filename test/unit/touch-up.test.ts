// The touch-up's brush (src/imaging/touch-up.mjs): strokes painted as discs, exactly, and snap keeping what a
// stroke spills onto when the photo has an edge there.
import { describe, expect, it } from 'vitest';
import {
  applyStrokes,
  changedPixels,
  paintedArea,
  paintStrokes,
  photoWindow,
  SNAP_DEFAULTS,
  strokeBounds,
  strokeRuns,
  strokesWindow,
} from '../../src/imaging/touch-up.mjs';
import type { Stroke } from '../../src/domain/touch-up.schemas.ts';

/** The reference: a pixel is painted when its centre is within size / 2 of one of the stroke's segments. */
function reference(strokes: Stroke[], width: number, height: number): Uint8Array {
  const out = new Uint8Array(width * height);
  const dist = (px: number, py: number, [ax, ay]: number[], [bx, by]: number[]) => {
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / len2));
    return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
  };
  for (const s of strokes) {
    const segments =
      s.points.length === 1 ? [[s.points[0], s.points[0]]] : s.points.slice(1).map((p, i) => [s.points[i], p]);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++)
        if (segments.some(([a, b]) => dist(x, y, a, b) <= s.size / 2 + 1e-9)) out[y * width + x] = 1;
  }
  return out;
}

const whole = (width: number, height: number) => ({ x0: 0, y0: 0, x1: width, y1: height });
/** The whole photo as the window a touch-up reads. */
const windowOf = (rgb: Uint8Array, alpha: Uint8Array | null, width: number, height: number) =>
  photoWindow({ rgb, alpha, width }, whole(width, height));

/** A photo of a red square (the product) on blue, 60x60, and a cut-out of it. */
function scene() {
  const width = 60;
  const height = 60;
  const rgb = new Uint8Array(width * height * 3);
  const product = (x: number, y: number) => x >= 20 && x < 40 && y >= 10 && y < 50;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) rgb.set(product(x, y) ? [200, 40, 30] : [40, 60, 190], (y * width + x) * 3);
  /** A cut-out whose alpha is `alpha(x, y)`, with the photo's colours where it is not transparent. */
  const cutout = (alpha: (x: number, y: number) => number) => {
    const rgba = new Uint8Array(width * height * 4);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const a = alpha(x, y);
        const i = y * width + x;
        if (a) rgba.set([rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2], a], i * 4);
      }
    return rgba;
  };
  const alphaOf = (rgba: Uint8Array, x: number, y: number) => rgba[(y * width + x) * 4 + 3];
  // A cut-out in which the model kept a strip of the blue background right of the product (x 40-49), and a broad
  // erase stroke down the strip's middle, 16 px wide, that spills 3 px onto the product.
  const wrong = (x: number, y: number) => x >= 40 && x < 50 && y >= 10 && y < 50;
  const keptStrip = () => cutout((x, y) => (product(x, y) || wrong(x, y) ? 255 : 0));
  const stripStroke: Stroke = {
    mode: 'erase',
    size: 16,
    points: [
      [45, 12],
      [45, 47],
    ],
  };
  return { width, height, rgb, product, cutout, alphaOf, wrong, keptStrip, stripStroke };
}

describe('paintStrokes', () => {
  it('paints exactly the pixels within size / 2 of each path: dabs, polylines, any direction, fractional points', () => {
    const width = 50;
    const height = 40;
    const cases: Stroke[][] = [
      [{ mode: 'erase', size: 1, points: [[5, 5]] }],
      [{ mode: 'erase', size: 7, points: [[10.3, 12.6]] }],
      [
        {
          mode: 'erase',
          size: 6,
          points: [
            [3, 3],
            [40, 30],
          ],
        },
      ],
      [
        {
          mode: 'erase',
          size: 9,
          points: [
            [45, 2],
            [8, 35],
            [30, 38],
            [30, 10],
          ],
        },
      ],
      [
        {
          mode: 'erase',
          size: 4.5,
          points: [
            [0, 20],
            [49, 20],
          ],
        },
      ],
      [
        {
          mode: 'erase',
          size: 3,
          points: [
            [25, 0],
            [25, 39],
          ],
        },
        {
          mode: 'erase',
          size: 12,
          points: [
            [-30, -30],
            [12, 14],
          ],
        },
      ],
    ];
    for (const strokes of cases) {
      const { cover, path } = paintStrokes(strokes, whole(width, height));
      expect(Array.from(cover)).toEqual(Array.from(reference(strokes, width, height)));
      // The path is under the brush everywhere.
      for (let i = 0; i < path.length; i++) if (path[i]) expect(cover[i]).toBe(1);
    }
    // A one-pixel dab is that pixel.
    const dab = paintStrokes([{ mode: 'erase', size: 1, points: [[5, 5]] }], whole(width, height)).cover;
    expect(dab.reduce((s, v) => s + v, 0)).toBe(1);
    expect(dab[5 * width + 5]).toBe(1);
  });

  it('paints nothing outside the cut-out, and a point far outside costs no more than the part inside', () => {
    expect(strokeBounds([{ mode: 'erase', size: 10, points: [[500, 500]] }], 50, 40, 2)).toBeNull();
    const strokes: Stroke[] = [
      {
        mode: 'erase',
        size: 4,
        points: [
          [10, 10],
          [1_000_000, 1_000_000],
        ],
      },
    ];
    const b = strokeBounds(strokes, 50, 40, 0)!;
    expect(b).toEqual({ x0: 8, y0: 8, x1: 50, y1: 40 });
    const started = performance.now();
    const { cover } = paintStrokes(strokes, whole(50, 40));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(Array.from(cover)).toEqual(Array.from(reference(strokes, 50, 40)));
  });
});

describe('applyStrokes', () => {
  it('without snap, erases exactly its discs (transparent black) and restores the photo there, capped by its own alpha', () => {
    const { width, height, rgb, cutout, alphaOf } = scene();
    const rgba = cutout(() => 255);
    const erase: Stroke[] = [
      {
        mode: 'erase',
        size: 10,
        points: [
          [5, 5],
          [50, 30],
        ],
      },
    ];
    applyStrokes({ rgba, width, height }, windowOf(rgb, null, width, height), erase, null);
    const painted = reference(erase, width, height);
    for (let i = 0; i < painted.length; i++) {
      if (painted[i]) expect(Array.from(rgba.subarray(i * 4, i * 4 + 4))).toEqual([0, 0, 0, 0]);
      else expect(rgba[i * 4 + 3]).toBe(255);
    }
    const empty = cutout(() => 0);
    const sourceAlpha = new Uint8Array(width * height).fill(255);
    sourceAlpha[30 * width + 30] = 90;
    applyStrokes(
      { rgba: empty, width, height },
      windowOf(rgb, sourceAlpha, width, height),
      [{ mode: 'restore', size: 5, points: [[30, 30]] }],
      null,
    );
    expect(Array.from(empty.subarray((30 * width + 30) * 4, (30 * width + 30) * 4 + 4))).toEqual([200, 40, 30, 90]);
    expect(Array.from(empty.subarray((30 * width + 31) * 4, (30 * width + 31) * 4 + 4))).toEqual([200, 40, 30, 255]);
    expect(alphaOf(empty, 30, 35)).toBe(0);
  });

  it('runs strokes in order: a restore after an erase over the same pixels brings them back', () => {
    const { width, height, rgb, cutout, alphaOf } = scene();
    const rgba = cutout((x, y) => (x >= 20 && x < 40 && y >= 10 && y < 50 ? 255 : 0));
    const strokes: Stroke[] = [
      { mode: 'erase', size: 8, points: [[30, 30]] },
      { mode: 'restore', size: 4, points: [[30, 30]] },
    ];
    expect(strokeRuns(strokes)).toHaveLength(2);
    applyStrokes({ rgba, width, height }, windowOf(rgb, null, width, height), strokes, null);
    expect(alphaOf(rgba, 30, 30)).toBe(255);
    expect(alphaOf(rgba, 30, 33)).toBe(0);
  });

  it('with snap, an erase that spills over the edge of a wrongly kept region leaves the product whole', () => {
    const { width, height, rgb, product, alphaOf, wrong, keptStrip, stripStroke } = scene();
    const made = keptStrip;
    const strokes: Stroke[] = [stripStroke];
    const snapped = made();
    applyStrokes({ rgba: snapped, width, height }, windowOf(rgb, null, width, height), strokes, {});
    const plain = made();
    applyStrokes({ rgba: plain, width, height }, windowOf(rgb, null, width, height), strokes, null);
    const productLost = { snapped: 0, plain: 0 };
    let stripLeft = 0;
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        if (product(x, y) && alphaOf(snapped, x, y) < 255) productLost.snapped++;
        if (product(x, y) && alphaOf(plain, x, y) < 255) productLost.plain++;
        if (wrong(x, y) && y >= 14 && y < 46 && alphaOf(snapped, x, y) > 0) stripLeft++;
      }
    expect(productLost.plain).toBeGreaterThan(60);
    expect(productLost.snapped).toBe(0);
    expect(stripLeft).toBe(0);
  });

  it('with snap, a restore that spills onto the background restores the missing part only', () => {
    const { width, height, rgb, product, cutout, alphaOf } = scene();
    // The model missed the product's lower third.
    const made = () => cutout((x, y) => (product(x, y) && y < 37 ? 255 : 0));
    const strokes: Stroke[] = [
      {
        mode: 'restore',
        size: 26,
        points: [
          [30, 38],
          [30, 48],
        ],
      },
    ];
    const snapped = made();
    applyStrokes({ rgba: snapped, width, height }, windowOf(rgb, null, width, height), strokes, {});
    let background = 0;
    let missing = 0;
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        if (!product(x, y) && alphaOf(snapped, x, y) > 0) background++;
        if (product(x, y) && alphaOf(snapped, x, y) < 255) missing++;
      }
    expect(background).toBe(0);
    expect(missing).toBe(0);
  });

  it('snap changes nothing the plain brush leaves where no edge stops it: a stroke inside one colour is its discs', () => {
    const { width, height, rgb, cutout } = scene();
    const rgba = cutout(() => 255);
    const strokes: Stroke[] = [
      {
        mode: 'erase',
        size: 9,
        points: [
          [5, 5],
          [5, 50],
        ],
      },
    ];
    const b = strokeBounds(strokes, width, height, 0)!;
    const painted = paintStrokes(strokes, b);
    // Every pixel around is opaque background blue: nothing on the other side of an edge to protect...
    const photo = windowOf(rgb, null, width, height);
    const changed = changedPixels({ rgba, width, photo }, painted, 'erase', b, 4.5, SNAP_DEFAULTS);
    expect(Array.from(changed)).toEqual(Array.from(painted.cover));
    expect(applyStrokes({ rgba, width, height }, windowOf(rgb, null, width, height), strokes, {})).toBeGreaterThan(0);
  });

  it('reads the photo only in the strokes’ window: the same result as with the whole photo', () => {
    const { width, height, rgb, keptStrip, stripStroke } = scene();
    const made = keptStrip;
    const strokes: Stroke[] = [stripStroke, { mode: 'restore', size: 6, points: [[44, 30]] }];
    const window = strokesWindow(strokes, width, height, SNAP_DEFAULTS)!;
    expect(window.x1 - window.x0).toBeLessThan(width);
    const cropped = made();
    applyStrokes({ rgba: cropped, width, height }, photoWindow({ rgb, alpha: null, width }, window), strokes, {});
    const full = made();
    applyStrokes({ rgba: full, width, height }, windowOf(rgb, null, width, height), strokes, {});
    expect(Buffer.from(cropped).equals(Buffer.from(full))).toBe(true);
    // A window that misses part of the strokes is refused, not read past.
    const small = photoWindow({ rgb, alpha: null, width }, { ...window, x1: window.x1 - 4 });
    expect(() => applyStrokes({ rgba: made(), width, height }, small, strokes, {})).toThrow(RangeError);
  });

  it("counts the pixels a request's runs work over: each run of one mode over its own bounds", () => {
    const dab = (mode: Stroke['mode']): Stroke => ({ mode, size: 20, points: [[50, 50]] });
    expect(paintedArea([dab('erase'), dab('erase')], 100, 100, null)).toBe(21 * 21);
    expect(paintedArea([dab('erase'), dab('restore'), dab('erase')], 100, 100, null)).toBe(3 * 21 * 21);
    expect(paintedArea([dab('erase')], 100, 100, {})).toBeGreaterThan(21 * 21);
  });
});
