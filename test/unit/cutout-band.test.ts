// The cut-out's fast path for opaque photos (cutout-band.mjs): the rows laid out as if opaque before
// the mask exists, then only what differs rewritten. It must give the general path's bytes exactly
// (refineRows, then bandLines), wherever a band is cut, at any scale, with or without the layout made
// ahead; and the writer must use a layout made ahead, at the lowest priority, or do without it.
import os from 'node:os';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { refineGrid, refineRows } from '../../src/adapters/edge-refine.mjs';
import { bandLines } from '../../src/adapters/png-strips.mjs';
import { cutoutBand, opaqueBand } from '../../src/adapters/cutout-band.mjs';
import { WorkerCutoutWriter } from '../../src/adapters/cutout-writer.adapter.ts';
import { ImageCodec } from '../../src/adapters/image-codec.adapter.ts';
import { threadIds } from '../../src/adapters/threads.mjs';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../helpers/eval-data.ts';

interface Photo {
  rgb: Buffer;
  width: number;
  height: number;
  low: { rgb: Buffer; alpha: Buffer };
}

/** Drawn: a textured disc and a thin bar on a gradient, the mask a soft disc and bar on the refinement grid. */
function drawn(width: number, height: number): Photo {
  const rgb = Buffer.alloc(width * height * 3);
  const inside = (x: number, y: number) => Math.hypot(x - width * 0.45, y - height * 0.5) < Math.min(width, height) * 0.3 || (x > width * 0.8 && x < width * 0.83);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      if (inside(x, y)) rgb.set([(x * 7 + y * 3) % 256, (x * y) % 251, 60], i);
      else rgb.set([200 - (y % 50), 220, 180 + (x % 40)], i);
    }
  }
  const grid = refineGrid(width, height);
  const low = { rgb: Buffer.alloc(grid.w * grid.h * 3), alpha: Buffer.alloc(grid.w * grid.h) };
  for (let y = 0; y < grid.h; y++) {
    for (let x = 0; x < grid.w; x++) {
      const px = Math.min(width - 1, Math.floor(((x + 0.5) * width) / grid.w));
      const py = Math.min(height - 1, Math.floor(((y + 0.5) * height) / grid.h));
      low.rgb.set(rgb.subarray((py * width + px) * 3, (py * width + px) * 3 + 3), (y * grid.w + x) * 3);
      // A soft edge: mostly certain, a ramp of a few cells where the disc's and the bar's borders are.
      const d = Math.hypot(px - width * 0.45, py - height * 0.5) - Math.min(width, height) * 0.3;
      const bar = px > width * 0.8 && px < width * 0.83 ? 255 : 0;
      low.alpha[y * grid.w + x] = Math.max(bar, Math.max(0, Math.min(255, Math.round(128 - (d * 255) / 12))));
    }
  }
  return { rgb, width, height, low };
}

/** The general path's answer for rows [y0, y1). */
function reference(p: Photo, y0: number, y1: number, factor: number) {
  const refined = refineRows({ rgb: p.rgb, alpha: null, width: p.width, height: p.height }, { low: p.low }, y0, y1);
  return bandLines(refined.rgb, refined.alpha, null, p.width, y1 - y0, factor);
}

function expectSameBand(p: Photo, y0: number, y1: number, factor: number) {
  const want = reference(p, y0, y1, factor);
  for (const layout of [undefined, opaqueBand(p.rgb, p.width, y0, y1, factor)]) {
    const got = cutoutBand(p, p.low, y0, y1, factor, layout);
    expect(Buffer.compare(Buffer.from(got.lines), want.lines)).toBe(0);
    expect([got.preview.width, got.preview.height]).toEqual([want.preview.width, want.preview.height]);
    expect(Buffer.compare(Buffer.from(got.preview.data), Buffer.from(want.preview.data))).toBe(0);
  }
}

describe('cut-out band, fast path', () => {
  it('gives the general path\'s rows and thumbnail reduction exactly, wherever the band is cut', () => {
    for (const [width, height, factor] of [[300, 200, 1], [300, 200, 3], [257, 131, 2], [64, 400, 5]]) {
      const p = drawn(width, height);
      const cuts = [[0, height], [0, factor * Math.floor(height / factor / 2)], [factor * Math.floor(height / factor / 2), height], [factor * 7, factor * 9]];
      for (const [y0, y1] of cuts) expectSameBand(p, y0, y1, factor);
    }
  });

  it('on tiny photos: one pixel, one row, one column', () => {
    for (const [width, height] of [[1, 1], [5, 1], [1, 7], [3, 2]]) {
      const p = drawn(width, height);
      expectSameBand(p, 0, height, 1);
    }
  });

  it('lays out opaque rows as bandLines does for an alpha of 255 everywhere', () => {
    const p = drawn(90, 40);
    const got = opaqueBand(p.rgb, 90, 10, 30, 4);
    const want = bandLines(p.rgb.subarray(10 * 90 * 3, 30 * 90 * 3), new Uint8Array(20 * 90).fill(255), null, 90, 20, 4);
    expect(Buffer.compare(Buffer.from(got.lines), want.lines)).toBe(0);
    // Row sums of block 1 of the band's row 0: columns 4..7 of photo row 10.
    const row = p.rgb.subarray(10 * 90 * 3);
    expect(got.rowSums[3]).toBe(row[12] + row[15] + row[18] + row[21]);
  });

  it.skipIf(!HAVE_EVAL_DATA)('on a real photo and its true mask, at 2000 x 2000 and at uneven 3001 x 1999', async () => {
    const codec = new ImageCodec(100_000_000);
    const entry = evalEntries().find((e) => e.kind === 'product')!;
    for (const [width, height] of [[2000, 2000], [3001, 1999]]) {
      const decoded = await codec.decode(await sharp(evalFile(entry.image)).resize(width, height, { fit: 'fill' }).jpeg().toBuffer());
      const mask = await sharp(evalFile(entry.mask)).greyscale().resize(1024, 1024, { fit: 'fill' }).blur(3).extractChannel(0).raw().toBuffer();
      const grid = refineGrid(width, height);
      const low = await codec.refineInputs(decoded, mask, 1024, grid.w, grid.h);
      const p = { rgb: decoded.rgb, width, height, low };
      const factor = Math.floor(Math.max(width, height) / 512);
      const half = factor * Math.round(height / factor / 2);
      expectSameBand(p, 0, half, factor);
      expectSameBand(p, half, height, factor);
    }
  });
});

describe('cut-out writer with layouts made ahead', () => {
  const writer = new WorkerCutoutWriter(2);
  afterAll(() => writer.close());

  async function decodePng(png: Buffer) {
    return sharp(png).raw().toBuffer({ resolveWithObject: true });
  }

  it('uses the layout when it is ready before the mask, and the PNG is the same as without it', async () => {
    const p = drawn(400, 300);
    const photo = { rgb: p.rgb, alpha: null, width: 400, height: 300 };
    const ahead = writer.prepare(photo, 64);
    expect(await ahead.laidOut).toBe(true);
    const withLayout = await ahead.write(p.low).png;
    const without = writer.prepare(photo, 64);
    const written = without.write(p.low);
    // Written before its layout came: the layout is dropped, the writers lay the rows out themselves.
    expect(await without.laidOut).toBe(false);
    expect(Buffer.compare(withLayout, await written.png)).toBe(0);
    // And it decodes to the general path's pixels, transparent ones as RGB 0.
    const ref = refineRows({ rgb: p.rgb, alpha: null, width: 400, height: 300 }, { low: p.low }, 0, 300);
    const { data, info } = await decodePng(withLayout);
    expect([info.width, info.height, info.channels]).toEqual([400, 300, 4]);
    let wrong = 0;
    for (let i = 0; i < 400 * 300; i++) {
      const a = ref.alpha[i];
      const expected = a ? [ref.rgb[i * 3], ref.rgb[i * 3 + 1], ref.rgb[i * 3 + 2], a] : [0, 0, 0, 0];
      for (let k = 0; k < 4; k++) if (data[i * 4 + k] !== expected[k]) wrong++;
    }
    expect(wrong).toBe(0);
  });

  it('a photo with transparency of its own makes no layout; a discarded one writes nothing', async () => {
    const p = drawn(60, 40);
    const transparent = writer.prepare({ rgb: p.rgb, alpha: Buffer.alloc(60 * 40, 255), width: 60, height: 40 }, 64);
    expect(await transparent.laidOut).toBe(false);
    transparent.discard();
    const dropped = writer.prepare({ rgb: p.rgb, alpha: null, width: 60, height: 40 }, 64);
    dropped.discard();
    expect(await dropped.laidOut).toBe(false);
    expect(() => dropped.write(p.low)).toThrow(/once/);
  });

  it('a photo written while the layout thread is still busy with another is written without a layout', async () => {
    const big = drawn(1200, 900);
    const small = drawn(80, 60);
    const pool = new WorkerCutoutWriter(1);
    try {
      const busy = pool.prepare({ rgb: big.rgb, alpha: null, width: 1200, height: 900 }, 64);
      const waiting = pool.prepare({ rgb: small.rgb, alpha: null, width: 80, height: 60 }, 64);
      const cut = waiting.write(small.low);
      const [laid, png] = await Promise.all([waiting.laidOut, cut.png]);
      expect(laid).toBe(false);
      const { info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height]).toEqual([80, 60]);
      expect(await busy.laidOut).toBe(true);
      busy.discard();
    } finally {
      await pool.close();
    }
  });

  it.runIf(process.platform === 'linux')('lays out at the lowest priority (nice 19): it takes only what the model leaves idle', async () => {
    const p = drawn(200, 100);
    const before = new Set(threadIds().filter((t) => os.getPriority(t) === 19));
    const pool = new WorkerCutoutWriter(1);
    try {
      expect(await pool.prepare({ rgb: p.rgb, alpha: null, width: 200, height: 100 }, 64).laidOut).toBe(true);
      const lowest = threadIds().filter((t) => !before.has(t) && os.getPriority(t) === 19);
      expect(lowest.length).toBe(1);
    } finally {
      await pool.close();
    }
  });
});
