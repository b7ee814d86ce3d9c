// Edge refinement on a drawn photo (edge-refine.mjs): a blurred mask snaps towards the photo's real
// edge, edge colours lose the old background's tint, a band of rows is refined as the whole photo is,
// and the filter's box means are right wherever they are asked for.
import { describe, expect, it } from 'vitest';
import { boxMean, refineEdges, refineGrid, refineRows, spans, windowMean } from '../../src/imaging/edge-refine.mjs';
import { H, mae, scene, W } from '../helpers/edge-scene.ts';

describe('edge refinement', () => {
  it('brings a blurred mask closer to the true edge, and leaves certain pixels alone', () => {
    const { rgb, truth, blurred } = scene();
    const { alpha } = refineEdges({ rgb, alpha: blurred, width: W, height: H });
    expect(mae(alpha, truth)).toBeLessThan(mae(blurred, truth) * 0.7);
    expect(alpha[10 * W + 5]).toBe(255);
    expect(alpha[10 * W + 110]).toBe(0);
  });

  it("works from the reduced inputs alone (the service's way): no upsampled mask needed", () => {
    const { rgb, truth, blurred } = scene();
    const grid = refineGrid(W, H, 60);
    const f = W / grid.w;
    const low = { rgb: new Uint8Array(grid.w * grid.h * 3), alpha: new Uint8Array(grid.w * grid.h) };
    for (let y = 0; y < grid.h; y++) {
      for (let x = 0; x < grid.w; x++) {
        const i = Math.floor(y * f) * W + Math.floor(x * f);
        low.rgb.set(rgb.subarray(i * 3, i * 3 + 3), (y * grid.w + x) * 3);
        low.alpha[y * grid.w + x] = blurred[i];
      }
    }
    const { alpha } = refineEdges({ rgb, alpha: null, width: W, height: H }, { grid: 60, low });
    expect(mae(alpha, truth)).toBeLessThan(mae(blurred, truth));
    expect(alpha[10 * W + 5]).toBe(255);
    expect(alpha[10 * W + 115]).toBe(0);
    expect(() => refineEdges({ rgb, alpha: null, width: W, height: H })).toThrow(/needs/);
  });

  it('decontaminates a semi-transparent edge pixel towards the product colour', () => {
    const { rgb, blurred } = scene();
    const half = new Uint8Array(blurred);
    for (let y = 0; y < H; y++) half[y * W + 60] = 128;
    const out = refineEdges({ rgb, alpha: half, width: W, height: H }, { guided: false, steepen: 1 });
    const i = (10 * W + 60) * 3;
    // The mixed pixel (165,125,100) minus half the green background is close to the red product.
    expect(out.rgb[i + 1]).toBeLessThan(60);
    expect(out.rgb[i]).toBeGreaterThan(130);
    // Opaque pixels keep their colours.
    expect([...out.rgb.subarray((10 * W + 5) * 3, (10 * W + 5) * 3 + 3)]).toEqual([150, 20, 20]);
  });

  it('refines a band of rows exactly as the whole photo does, wherever the band is cut', () => {
    const { rgb, blurred } = scene();
    for (const opts of [{}, { grid: 50 }, { guided: false, steepen: 1 }]) {
      const whole = refineEdges({ rgb, alpha: blurred, width: W, height: H }, opts);
      for (const cuts of [
        [0, 1, H],
        [0, 33, 34, 79, H],
        [0, 40, H],
      ]) {
        const bands = cuts
          .slice(1)
          .map((y1, i) => refineRows({ rgb, alpha: blurred, width: W, height: H }, opts, cuts[i], y1));
        expect(Buffer.concat(bands.map((b) => Buffer.from(b.alpha))).equals(Buffer.from(whole.alpha))).toBe(true);
        expect(Buffer.concat(bands.map((b) => Buffer.from(b.rgb))).equals(Buffer.from(whole.rgb))).toBe(true);
      }
    }
  });

  it('spans: the extent of a mask, and of an empty one', () => {
    const mask = new Uint8Array(6 * 4);
    mask[1 * 6 + 4] = mask[2 * 6 + 2] = 1;
    expect(spans(mask, 6, 4)).toMatchObject({ rowStart: 1, rowEnd: 3, colStart: 2, colEnd: 5 });
    const none = spans(new Uint8Array(6 * 4), 6, 4);
    expect(none.rowStart >= none.rowEnd && none.colStart >= none.colEnd).toBe(true);
    expect([
      ...boxMean(
        Float32Array.from({ length: 24 }, () => 1),
        6,
        4,
        1,
        undefined,
        none,
      ),
    ]).toEqual(new Array(24).fill(0));
  });

  it('boxMean and windowMean: the mean of every clipped window, and only where asked', () => {
    const w = 9,
      h = 7,
      src = Float32Array.from({ length: w * h }, (_, i) => (i * 37) % 11);
    const only = new Uint8Array(w * h);
    only[3 * w + 4] = only[0] = only[w * h - 1] = 1;
    for (const r of [1, 3]) {
      const all = boxMean(src, w, h, r);
      const some = boxMean(src, w, h, r, new Float64Array(200), spans(only, w, h));
      const direct = windowMean(src, w, h, r, spans(only, w, h));
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          let sum = 0;
          let n = 0;
          for (let yy = Math.max(0, y - r); yy <= Math.min(h - 1, y + r); yy++) {
            for (let xx = Math.max(0, x - r); xx <= Math.min(w - 1, x + r); xx++) {
              sum += src[yy * w + xx];
              n++;
            }
          }
          expect(all[y * w + x]).toBeCloseTo(sum / n, 5);
          expect(some[y * w + x]).toBe(only[y * w + x] ? all[y * w + x] : 0);
          expect(direct[y * w + x]).toBeCloseTo(only[y * w + x] ? sum / n : 0, 5);
          // Cells only near the top-left corner: the table is built only that far, from a dirty scratch.
          const corner = new Uint8Array(w * h);
          corner[2 * w + 1] = 1;
          const dirty = new Float64Array(200).fill(1e9);
          expect(boxMean(src, w, h, r, dirty, spans(corner, w, h))[2 * w + 1]).toBe(all[2 * w + 1]);
          // Cells only away from the top-left: the table starts at their first window, the rows above and
          // the columns left of it never written.
          const inner = new Uint8Array(w * h);
          inner[5 * w + 6] = inner[4 * w + 7] = 1;
          const late = boxMean(
            src,
            w,
            h,
            r,
            Float64Array.from({ length: 200 }, (_, i) => i * 1e6 + 7),
            spans(inner, w, h),
          );
          expect([late[5 * w + 6], late[4 * w + 7]]).toEqual([all[5 * w + 6], all[4 * w + 7]]);
        }
      }
    }
  });
});
