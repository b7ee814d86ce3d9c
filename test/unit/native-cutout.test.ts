// The cut-out writer's passes in C (native/cutout.c, through src/imaging/native.mjs) give the same bytes as
// the JavaScript they stand for, which is the reference: the mask's area and block reductions, a band's edge refinement
// (its alpha, and its RGB decontaminated in place) and its RGBA layout with the thumbnail's reduction, on a
// generated photo at three sizes with bands cut anywhere, and on drawn inputs where every branch runs (on
// real photos: test/e2e/native-cutout.test.ts). Bad arguments are refused with an error, not a crash.
import { describe, expect, it } from 'vitest';
import { refineGrid } from '../../src/imaging/edge-refine.mjs';
import { reduceArea, reduceBlocks } from '../../src/imaging/mask-reduce.mjs';
import { nativeCutout } from '../../src/imaging/native.mjs';
import { bothRefinements, expectSameCutout, native, same } from '../helpers/native-cutout.ts';
import { H, scene, W } from '../helpers/edge-scene.ts';

/**
 * A generated photo as the writer gets it: a textured product (a soft-edged blob) on a textured background,
 * RGB at `width` x `height`, and its mask at the model's 1024², soft at the edge as a model's is.
 */
function photo(width: number, height: number) {
  const rgb = new Uint8Array(width * height * 3);
  const inside = (x: number, y: number) => Math.hypot(x - 0.5, (y - 0.55) * 1.3) - 0.3 - 0.04 * Math.sin(9 * x + 5 * y);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const d = inside(x / width, y / height);
      const t = ((x * 7919 + y * 104729) % 61) - 30;
      const product = [150 + t, 40 + (t >> 1), 30];
      const background = [225 + (t >> 2), 230 + (t >> 2), 220 - (t >> 2)];
      const mix = Math.min(1, Math.max(0, 0.5 - d * 400));
      for (let c = 0; c < 3; c++)
        rgb[(y * width + x) * 3 + c] = Math.round(product[c] * mix + background[c] * (1 - mix));
    }
  }
  const mask = new Uint8Array(1024 * 1024);
  for (let y = 0; y < 1024; y++)
    for (let x = 0; x < 1024; x++)
      mask[y * 1024 + x] = Math.round(255 * Math.min(1, Math.max(0, 0.5 - inside(x / 1024, y / 1024) * 60)));
  const g = refineGrid(width, height);
  return {
    rgb,
    mask,
    low: { rgb: reduceArea(rgb, width, height, g.w, g.h, 3), alpha: reduceArea(mask, 1024, 1024, g.w, g.h) },
    grid: g,
  };
}

describe('the cut-out passes in C', () => {
  it('are built', () => {
    expect(nativeCutout, 'build/Release/matte_native.node: run `npm install` with a C compiler').not.toBeNull();
  });

  it.each([
    [2000, 2000],
    [1337, 1500],
    [999, 731],
  ])('refine and lay out a generated photo at %ix%i as the JavaScript does, in bands cut anywhere', (width, height) => {
    expectSameCutout(photo(width, height), width, height);
  });

  it('refine a drawn edge as the JavaScript does on small grids, and reduce masks of any size', () => {
    const { rgb, blurred } = scene();
    for (const g of [50, 60, 120]) {
      const size = refineGrid(W, H, g);
      const low = { rgb: new Uint8Array(size.w * size.h * 3), alpha: reduceArea(blurred, W, H, size.w, size.h) };
      const f = W / size.w;
      for (let k = 0; k < size.w * size.h; k++) {
        const i = Math.floor(Math.floor(k / size.w) * f) * W + Math.floor((k % size.w) * f);
        low.rgb.set(rgb.subarray(i * 3, i * 3 + 3), k * 3);
      }
      for (const [y0, y1] of [
        [0, H],
        [0, 1],
        [33, 34],
        [40, H],
      ]) {
        const { js, c } = bothRefinements(rgb, W, H, low, y0, y1, g);
        expect(same(c.alpha, js.alpha)).toBe(true);
        expect(same(c.rgb, js.rgb)).toBe(true);
      }
    }
    const noise = Uint8Array.from({ length: 97 * 61 }, (_, k) => (k * 131) % 256);
    for (const [dw, dh] of [
      [97, 61],
      [50, 30],
      [13, 61],
      [1, 1],
    ])
      expect(same(native.reduceArea(noise, 97, 61, dw, dh), reduceArea(noise, 97, 61, dw, dh))).toBe(true);
  });

  it("reduce by blocks as the check's JavaScript does, for every channel count and whole factor", () => {
    for (const [size, channels, factor] of [
      [1024, 3, 4],
      [1024, 1, 4],
      [96, 4, 8],
      [99, 3, 3],
      [64, 2, 64],
      [5, 1, 1],
    ]) {
      const src = Uint8Array.from({ length: size * size * channels }, (_, k) => (k * 2654435761) >>> 24);
      // Every byte 255 too: a block's sum at its largest, rounded.
      for (const pixels of [src, new Uint8Array(src.length).fill(255)])
        expect(
          same(native.reduceBlocks(pixels, size, channels, factor), reduceBlocks(pixels, size, channels, factor)),
        ).toBe(true);
    }
  });

  it('refuse bad arguments with an error', () => {
    const small = new Uint8Array(16);
    expect(() => native.reduceArea(small, 4, 4, 8, 8)).toThrow(RangeError);
    expect(() => native.reduceArea(small, 8, 8, 4, 4)).toThrow(RangeError);
    expect(() => native.reduceArea([1, 2] as unknown as Uint8Array, 1, 2, 1, 1)).toThrow(TypeError);
    expect(() => native.reduceBlocks(small, 4, 1, 3)).toThrow(RangeError);
    expect(() => native.reduceBlocks(small, 4, 3, 2)).toThrow(RangeError);
    expect(() => native.reduceBlocks(small, 4, 1, 0)).toThrow(RangeError);
    const { rgb, blurred } = scene();
    const out = new Uint8Array(W * H);
    expect(() => native.refineRows(rgb, W, H, rgb, blurred, 10, 5, 60, 1, 1e-4, 1.3, out)).toThrow(/outside/);
    expect(() => native.refineRows(rgb, W, H, small, blurred, 0, H, 60, 1, 1e-4, 1.3, out)).toThrow(/smaller/);
    expect(() => native.bandRgba(rgb, blurred, null, W, H, 4, small)).toThrow(/too small/);
    expect(() => native.bandRgba(rgb, blurred, null, W, H, 0, out)).toThrow(RangeError);
  });
});
