// Edge refinement on a drawn photo: a blurred mask snaps towards the photo's real edge, and edge
// colours lose the old background's tint. Then the cut-out writer the service uses: bands refined
// and deflated in worker threads, joined into one PNG, which must decode to exactly the refined pixels.
import zlib from 'node:zlib';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { boxMean, refineEdges, refineGrid, refineRows, spans } from '../../src/adapters/edge-refine.mjs';
import { adler32, adler32Combine, bandLines, deflateBand, joinBands } from '../../src/adapters/png-strips.mjs';
import { bandCuts, WorkerCutoutWriter } from '../../src/adapters/cutout-writer.adapter.ts';
import { ImageCodec } from '../../src/adapters/image-codec.adapter.ts';
import { native } from '../../src/adapters/cutout-kernels.mjs';
import { refineInputs } from '../../src/pipeline/segment.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../helpers/eval-data.ts';

const W = 120;
const H = 80;
/** A dark red product (x < 60) on a light green background; the true alpha is a step at x = 60. */
function scene() {
  const rgb = new Uint8Array(W * H * 3);
  const truth = new Uint8Array(W * H);
  const blurred = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const inside = x < 60;
      rgb.set(inside ? [150, 20, 20] : [180, 230, 180], i * 3);
      truth[i] = inside ? 255 : 0;
      // An upsampled mask: a ramp 8 px wide around the edge, as a 1024 px mask scaled up gives.
      blurred[i] = Math.round(Math.min(1, Math.max(0, (64 - x) / 8)) * 255);
    }
  }
  // An edge pixel that mixes product and background half and half.
  for (let y = 0; y < H; y++) rgb.set([165, 125, 100], (y * W + 60) * 3);
  return { rgb, truth, blurred };
}
const mae = (a: Uint8Array, b: Uint8Array) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0) / a.length / 255;

describe('edge refinement', () => {
  it('brings a blurred mask closer to the true edge, and leaves certain pixels alone', () => {
    const { rgb, truth, blurred } = scene();
    const { alpha } = refineEdges({ rgb, alpha: blurred, width: W, height: H });
    expect(mae(alpha, truth)).toBeLessThan(mae(blurred, truth) * 0.7);
    expect(alpha[10 * W + 5]).toBe(255);
    expect(alpha[10 * W + 110]).toBe(0);
  });

  it('works from the reduced inputs alone (the service\'s way): no upsampled mask needed', () => {
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
      for (const cuts of [[0, 1, H], [0, 33, 34, 79, H], [0, 40, H]]) {
        const bands = cuts.slice(1).map((y1, i) => refineRows({ rgb, alpha: blurred, width: W, height: H }, opts, cuts[i], y1));
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
    expect([...boxMean(Float32Array.from({ length: 24 }, () => 1), 6, 4, 1, undefined, none)]).toEqual(new Array(24).fill(0));
  });

  it('boxMean: the mean of every clipped window, and only where asked', () => {
    const w = 9, h = 7, src = Float32Array.from({ length: w * h }, (_, i) => (i * 37) % 11);
    const only = new Uint8Array(w * h);
    only[3 * w + 4] = only[0] = only[w * h - 1] = 1;
    for (const r of [1, 3]) {
      const all = boxMean(src, w, h, r);
      const some = boxMean(src, w, h, r, new Float64Array(200), spans(only, w, h));
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
          // Cells only near the top-left corner: the table is built only that far, from a dirty scratch.
          const corner = new Uint8Array(w * h);
          corner[2 * w + 1] = 1;
          const dirty = new Float64Array(200).fill(1e9);
          expect(boxMean(src, w, h, r, dirty, spans(corner, w, h))[2 * w + 1]).toBe(all[2 * w + 1]);
          // Cells only away from the top-left: the table starts at their first window, the rows above and
          // the columns left of it never written.
          const inner = new Uint8Array(w * h);
          inner[5 * w + 6] = inner[4 * w + 7] = 1;
          const late = boxMean(src, w, h, r, Float64Array.from({ length: 200 }, (_, i) => i * 1e6 + 7), spans(inner, w, h));
          expect([late[5 * w + 6], late[4 * w + 7]]).toEqual([all[5 * w + 6], all[4 * w + 7]]);
        }
      }
    }
  });
});

describe('PNG in bands', () => {
  it('Adler-32 and its combination agree with zlib', () => {
    expect(adler32(Buffer.from('Wikipedia'))).toBe(0x11e60398);
    const a = Buffer.from('the first run of bytes, '), b = Buffer.alloc(70_000, 0xfe);
    expect(adler32Combine(adler32(a), adler32(b), b.length)).toBe(adler32(Buffer.concat([a, b])));
    // zlib's own checksum closes a zlib stream.
    const z = zlib.deflateSync(Buffer.concat([a, b]));
    expect(z.readUInt32BE(z.length - 4)).toBe(adler32(Buffer.concat([a, b])));
  });

  it('bands deflated apart and joined decode to the rows, by zlib\'s checksum or by ours', async () => {
    const width = 37, rows = 23;
    const rgb = Uint8Array.from({ length: width * rows * 3 }, (_, i) => (i * 7) % 256);
    const alpha = Uint8Array.from({ length: width * rows }, (_, i) => (i % 5 === 0 ? 0 : (i * 13) % 256));
    for (const viaRaw of [false, true]) {
      const cuts = [0, 8, 16, rows];
      const parts = await Promise.all(
        cuts.slice(1).map((y1, i) => {
          const { lines } = bandLines(rgb.subarray(cuts[i] * width * 3, y1 * width * 3), alpha.subarray(cuts[i] * width, y1 * width), null, width, y1 - cuts[i], 4);
          return deflateBand(lines, i === cuts.length - 2, { viaRaw });
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
    const width = 5, rows = 3;
    const rgb = new Uint8Array(width * rows * 3).fill(10);
    rgb.set([200, 100, 50], 0);
    const alpha = new Uint8Array(width * rows).fill(255);
    alpha[1] = 0; // a transparent pixel adds no colour
    alpha[4] = 51;
    const { preview } = bandLines(rgb, alpha, null, width, rows, 2);
    expect([preview.width, preview.height]).toEqual([3, 2]);
    // Block (0,0): pixels 0 (200,100,50 @255), 1 (@0), 5 and 6 (10 @255).
    expect([...preview.data.subarray(0, 4)]).toEqual([Math.round((200 + 20) / 3), Math.round((100 + 20) / 3), Math.round((50 + 20) / 3), Math.round((255 * 3) / 4)]);
    // Block (2,0) is one pixel wide: pixels 4 (@51) and 9 (@255).
    expect(preview.data[2 * 4 + 3]).toBe(Math.round((51 + 255) / 2));
  });
});

describe('cut-out writer', () => {
  const writer = new WorkerCutoutWriter(2);
  afterAll(() => writer.close());
  const codec = new ImageCodec(100_000_000);

  async function expectCutout(photo: { rgb: Buffer; alpha: Buffer | null; width: number; height: number }, low: { rgb: Buffer; alpha: Buffer }, pool = writer) {
    const cut = pool.write(photo, low, 64);
    const [png, preview] = await Promise.all([cut.png, cut.preview]);
    // The parts a caller may write as they come (head, a part per band, tail) join into the same PNG.
    const parts = await Promise.all(cut.parts);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    expect(Buffer.compare(Buffer.concat(parts), png)).toBe(0);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.channels]).toEqual([photo.width, photo.height, 4]);
    const ref = refineEdges({ rgb: photo.rgb, alpha: null, width: photo.width, height: photo.height }, { low });
    let wrong = 0;
    for (let i = 0; i < photo.width * photo.height; i++) {
      const a = photo.alpha ? Math.min(ref.alpha[i], photo.alpha[i]) : ref.alpha[i];
      const expected = a ? [ref.rgb[i * 3], ref.rgb[i * 3 + 1], ref.rgb[i * 3 + 2], a] : [0, 0, 0, 0];
      for (let k = 0; k < 4; k++) if (data[i * 4 + k] !== expected[k]) wrong++;
    }
    expect(wrong).toBe(0);
    const f = Math.max(1, Math.floor(Math.max(photo.width, photo.height) / 64));
    expect([preview.width, preview.height]).toEqual([Math.ceil(photo.width / f), Math.ceil(photo.height / f)]);
    return png;
  }

  function lowOf(rgb: Uint8Array, alpha: Uint8Array, width: number, height: number) {
    const grid = refineGrid(width, height);
    const f = width / grid.w;
    const low = { rgb: Buffer.alloc(grid.w * grid.h * 3), alpha: Buffer.alloc(grid.w * grid.h) };
    for (let y = 0; y < grid.h; y++) {
      for (let x = 0; x < grid.w; x++) {
        const i = Math.floor(y * f) * width + Math.floor(x * f);
        low.rgb.set(rgb.subarray(i * 3, i * 3 + 3), (y * grid.w + x) * 3);
        low.alpha[y * grid.w + x] = alpha[i];
      }
    }
    return low;
  }

  it('writes the refined pixels, transparent ones as RGB 0, in one PNG however many threads', async () => {
    const { rgb, blurred } = scene();
    const photo = { rgb: Buffer.from(rgb), alpha: null, width: W, height: H };
    const low = lowOf(rgb, blurred, W, H);
    const one = new WorkerCutoutWriter(1);
    const three = new WorkerCutoutWriter(3);
    try {
      await expectCutout(photo, low, one);
      await expectCutout(photo, low, three);
      await expectCutout(photo, low);
    } finally {
      await Promise.all([one.close(), three.close()]);
    }
  });

  it('writes the same pixels with the JavaScript kernels and zlib (MATTE_NATIVE_KERNELS=0, or no compiler)', async () => {
    const { rgb, blurred } = scene();
    const photo = { rgb: Buffer.from(rgb), alpha: null, width: W, height: H };
    const low = lowOf(rgb, blurred, W, H);
    // A writer's threads read the environment when they start: both are started (warmUp) before it is put back.
    process.env.MATTE_NATIVE_KERNELS = '0';
    const plain = new WorkerCutoutWriter(2);
    try {
      await plain.warmUp(1);
    } finally {
      delete process.env.MATTE_NATIVE_KERNELS;
    }
    try {
      const viaJs = await expectCutout(photo, low, plain);
      const viaNative = await expectCutout(photo, low);
      // The same pixels either way, deflated by zlib in one and by the native encoder in the other.
      expect(Buffer.compare(viaJs, viaNative) !== 0).toBe(native !== null);
    } finally {
      await plain.close();
    }
  });

  it.skipIf(!native)("keeps a thread's band memory from photo to photo, and lets it go once the thread is idle", async () => {
    const { rgb, blurred } = scene();
    const photo = { rgb: Buffer.from(rgb), alpha: null, width: W, height: H };
    const low = lowOf(rgb, blurred, W, H);
    const pool = new WorkerCutoutWriter(1, 400);
    try {
      await expectCutout(photo, low, pool);
      const [held] = await pool.heldBytes();
      // The refined rows (4 bytes a pixel) and their PNG lines (4 more) at least.
      expect(held).toBeGreaterThan(W * H * 8);
      await expectCutout(photo, low, pool);
      expect(await pool.heldBytes(), 'the second photo used the memory of the first').toEqual([held]);
      // Asked twice at once, both are answered.
      expect(await Promise.all([pool.heldBytes(), pool.heldBytes()])).toEqual([[held], [held]]);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await pool.heldBytes()).toEqual([0]);
      // And works as before once it has let go.
      await expectCutout(photo, low, pool);
    } finally {
      await pool.close();
    }
  });

  it("hands a photo's shared copy to the next photo once its bands are done, never while they run, and lets it go when idle", async () => {
    const { rgb, blurred } = scene();
    const photo = { rgb: Buffer.from(rgb), alpha: null, width: W, height: H };
    const low = lowOf(rgb, blurred, W, H);
    const pool = new WorkerCutoutWriter(2, 400);
    try {
      await expectCutout(photo, low, pool);
      expect(pool.sharedBytes(), 'the copy is kept for the next photo').toBe(W * H * 3);
      // A second photo handed over while the first one's bands run cannot have the first one's copy
      // (it would overwrite the pixels being refined): both come out right.
      const other = { rgb: Buffer.from(rgb.map((v) => 255 - v)), alpha: Buffer.alloc(W * H, 200), width: W, height: H };
      const first = pool.prepare(photo, 64);
      expect(pool.sharedBytes(), 'taken').toBe(0);
      const a = first.write(low).png;
      const b = pool.prepare(other, 64).write(low).png;
      expect(Buffer.compare(await a, await expectCutout(photo, low))).toBe(0);
      expect(Buffer.compare(await b, await expectCutout(other, low))).toBe(0);
      // Three copies back (both photos' colours, the second one's transparency); two kept, the smallest went.
      expect(pool.sharedBytes()).toBe(2 * W * H * 3);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(pool.sharedBytes()).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('caps the alpha with the photo\'s own transparency; a one-pixel photo works', async () => {
    const { rgb, blurred } = scene();
    const sourceAlpha = Buffer.alloc(W * H, 255);
    sourceAlpha.fill(0, 0, W * 10); // the top rows were transparent in the upload
    await expectCutout({ rgb: Buffer.from(rgb), alpha: sourceAlpha, width: W, height: H }, lowOf(rgb, blurred, W, H));
    await expectCutout({ rgb: Buffer.from([9, 8, 7]), alpha: null, width: 1, height: 1 }, { rgb: Buffer.from([9, 8, 7]), alpha: Buffer.from([200]) });
  });

  it.skipIf(!HAVE_EVAL_DATA)('on a real photo at a scale with uneven grid cells (3001 x 1999)', async () => {
    const entry = evalEntries().find((e) => e.kind === 'product')!;
    const decoded = await codec.decode(await sharp(evalFile(entry.image)).resize(3001, 1999, { fit: 'fill' }).png().toBuffer());
    const mask = await sharp(evalFile(entry.mask)).greyscale().resize(1024, 1024, { fit: 'fill' }).blur(3).extractChannel(0).raw().toBuffer();
    const png = await expectCutout(decoded, await refineInputs(codec, decoded, mask));
    // The PNG's own checksums hold (zlib verifies Adler-32 and sharp the chunks' CRCs as it decodes).
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  });

  it('a closed writer refuses what was still waiting; a new photo starts fresh threads', async () => {
    const { rgb, blurred } = scene();
    const pool = new WorkerCutoutWriter(1);
    const photo = { rgb: Buffer.from(rgb), alpha: null, width: W, height: H };
    const low = lowOf(rgb, blurred, W, H);
    const first = pool.write(photo, low, 64);
    const waiting = pool.write(photo, low, 64);
    await pool.close();
    await expect(waiting.png).rejects.toThrow(/closed|stopped/);
    await expect(first.png).rejects.toThrow(/closed|stopped/);
    await expectCutout(photo, low, pool);
    await pool.close();
  });

  it('a photo handed over before its mask (prepare) is written the same, and once', async () => {
    const { rgb, blurred } = scene();
    const photo = { rgb: Buffer.from(rgb), alpha: null, width: W, height: H };
    const low = lowOf(rgb, blurred, W, H);
    const prepared = writer.prepare(photo, 64);
    // The writer holds its own copy from then on: what the caller does to its buffer changes nothing.
    const original = Buffer.from(photo.rgb);
    photo.rgb.fill(0);
    const ahead = await prepared.write(low).png;
    expect(() => prepared.write(low)).toThrow(/once/);
    photo.rgb.set(original);
    expect(Buffer.compare(ahead, await expectCutout(photo, low))).toBe(0);
  });

  it('cuts bands at whole thumbnail blocks where their work is even: more rows where there is less to do', () => {
    const width = 1500;
    const height = 1000;
    const grid = refineGrid(width, height);
    const check = (cuts: number[], count: number, reduce: number) => {
      expect(cuts).toHaveLength(count + 1);
      expect(cuts[0]).toBe(0);
      expect(cuts[count]).toBe(height);
      for (let i = 1; i < count; i++) {
        expect(cuts[i] % reduce).toBe(0);
        expect(cuts[i]).toBeGreaterThan(cuts[i - 1]);
      }
    };
    // The same work on every row: as even as the blocks allow.
    const even = bandCuts(width, height, 4, 2, new Uint8Array(grid.w * grid.h).fill(255));
    check(even, 2, 4);
    expect(even[1]).toBe(500);
    // The subject and its edges in the lower half only: the upper band takes more rows.
    const lower = new Uint8Array(grid.w * grid.h);
    for (let y = grid.h / 2; y < grid.h; y++) for (let x = 0; x < grid.w; x++) lower[y * grid.w + x] = x % 7 === 0 ? 128 : 255;
    const skewed = bandCuts(width, height, 4, 2, lower);
    check(skewed, 2, 4);
    expect(skewed[1]).toBeGreaterThan(560);
    // Three bands, and as many bands as blocks (each one block), and one band.
    check(bandCuts(width, height, 5, 3, lower), 3, 5);
    expect(bandCuts(width, 9, 3, 3, new Uint8Array(refineGrid(width, 9).w * refineGrid(width, 9).h))).toEqual([0, 3, 6, 9]);
    expect(bandCuts(width, 10, 3, 4, new Uint8Array(refineGrid(width, 10).w * refineGrid(width, 10).h).fill(255))).toEqual([0, 3, 6, 9, 10]);
    expect(bandCuts(width, height, 4, 1, lower)).toEqual([0, height]);
    // More bands asked for than there are blocks: one block each.
    expect(bandCuts(width, 7, 3, 5, new Uint8Array(refineGrid(width, 7).w * refineGrid(width, 7).h))).toEqual([0, 3, 6, 7]);
  });

  it('warms up without error', async () => {
    const pool = new WorkerCutoutWriter(2);
    await pool.warmUp(1);
    await pool.close();
  });
});
