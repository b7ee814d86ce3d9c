// The C cut-out passes (src/imaging/native.mjs) against the JavaScript they stand for, on one photo: used
// by test/unit/native-cutout.test.ts (generated photos) and test/e2e/native-cutout.test.ts (real ones).
import { expect } from 'vitest';
import { thumbnailFactor } from '../../src/imaging/band-cuts.mjs';
import { REFINE_DEFAULTS, refineRows } from '../../src/imaging/edge-refine.mjs';
import { nativeCutout } from '../../src/imaging/native.mjs';
import { bandRgba } from '../../src/imaging/rgba-bands.mjs';

export const native = nativeCutout!;
export const same = (a: Uint8Array, b: Uint8Array) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/** A band refined both ways from copies of the photo: alpha and the photo's bytes afterwards. */
export function bothRefinements(
  rgb: Uint8Array,
  width: number,
  height: number,
  low: { rgb: Uint8Array; alpha: Uint8Array },
  y0: number,
  y1: number,
  grid: number = REFINE_DEFAULTS.grid,
) {
  const { radius, eps, steepen } = REFINE_DEFAULTS;
  const jsRgb = Uint8Array.from(rgb);
  const js = refineRows({ rgb: jsRgb, alpha: null, width, height }, { grid, low, inPlace: true }, y0, y1);
  const cRgb = Uint8Array.from(rgb);
  // A dirty buffer: every byte must be written.
  const cAlpha = new Uint8Array((y1 - y0) * width).fill(0xa5);
  native.refineRows(cRgb, width, height, low.rgb, low.alpha, y0, y1, grid, radius, eps, steepen, cAlpha);
  return { js: { alpha: Uint8Array.from(js.alpha), rgb: jsRgb }, c: { alpha: cAlpha, rgb: cRgb } };
}

/**
 * Expects the C passes to give the JavaScript's bytes for a photo and its mask (at the model's 1024²): the
 * mask's reduction to the grid, and bands cut anywhere refined and laid out with their thumbnail reduction,
 * one of them capped by a source alpha.
 */
export function expectSameCutout(
  photo: {
    rgb: Uint8Array;
    mask: Uint8Array;
    low: { rgb: Uint8Array; alpha: Uint8Array };
    grid: { w: number; h: number };
  },
  width: number,
  height: number,
) {
  const { rgb, mask, low, grid } = photo;
  expect(same(native.reduceArea(mask, 1024, 1024, grid.w, grid.h), low.alpha)).toBe(true);
  const factor = thumbnailFactor(Math.max(width, height), 500);
  // The photo's own transparency on some bands, as a PNG upload's caps the cut-out.
  const sourceAlpha = Uint8Array.from({ length: width * height }, (_, k) => (k * 7) % 256);
  for (const [y0, y1] of [
    [0, height],
    [0, Math.floor(height / 3)],
    [Math.floor(height / 3), height - 1],
    [height - 1, height],
  ]) {
    const { js, c } = bothRefinements(rgb, width, height, low, y0, y1);
    expect(same(c.alpha, js.alpha), `alpha of rows ${y0}-${y1}`).toBe(true);
    expect(same(c.rgb, js.rgb), `colours of rows ${y0}-${y1}`).toBe(true);
    const rows = y1 - y0;
    const band = js.rgb.subarray(y0 * width * 3, y1 * width * 3);
    const cap = y0 === 0 ? null : sourceAlpha.subarray(y0 * width, y1 * width);
    const [jsOut, cOut] = [new Uint8Array(width * rows * 4), new Uint8Array(width * rows * 4).fill(0xa5)];
    const [jsAlpha, cAlpha] = [Uint8Array.from(js.alpha), Uint8Array.from(js.alpha)];
    const jsPreview = bandRgba(band, jsAlpha, cap, width, rows, factor, jsOut);
    const cPreview = native.bandRgba(band, cAlpha, cap, width, rows, factor, cOut);
    expect(same(cOut, jsOut), `pixels of rows ${y0}-${y1}`).toBe(true);
    expect(same(cAlpha, jsAlpha), 'the alpha capped in place').toBe(true);
    expect([cPreview.width, cPreview.height]).toEqual([jsPreview.width, jsPreview.height]);
    expect(same(cPreview.data, jsPreview.data), `thumbnail of rows ${y0}-${y1}`).toBe(true);
  }
}
