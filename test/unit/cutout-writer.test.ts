// The cut-out writer the service uses (cutout-writer.ts): bands refined and laid out in worker
// threads, encoded as one PNG, which must decode to exactly the refined pixels; its shared memory,
// its band cuts, and how it closes.
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { refineEdges, refineGrid } from '../../src/imaging/edge-refine.mjs';
import { WorkerCutoutWriter } from '../../src/imaging/cutout-writer.ts';
import { bandCuts, thumbnailFactor } from '../../src/imaging/band-cuts.mjs';
import { ImageDecoder } from '../../src/adapters/images/decoder.ts';
import { refineInputs } from '../../src/pipeline/segment.ts';
import { reduceArea } from '../../src/imaging/mask-reduce.mjs';
import { solidInterior } from '../../src/imaging/solid-interior.mjs';
import { H, scene, W } from '../helpers/edge-scene.ts';

describe('cut-out writer', () => {
  const writer = new WorkerCutoutWriter(2);
  afterAll(() => writer.close());
  const decoder = new ImageDecoder(100_000_000);

  async function expectCutout(
    photo: { rgb: Buffer; alpha: Buffer | null; width: number; height: number },
    low: { rgb: Buffer; alpha: Buffer },
    pool = writer,
  ) {
    const cut = pool.write(photo, low, 64);
    // The bands are with the threads before the pixels are done.
    let finished = false;
    void cut.png.then(() => (finished = true));
    await cut.started;
    expect(finished).toBe(false);
    const [png, preview] = await Promise.all([cut.png, cut.preview]);
    // The parts a caller may write as they come join into the same PNG.
    const parts = await Promise.all(cut.parts);
    expect(parts.length).toBeGreaterThanOrEqual(1);
    expect(Buffer.compare(Buffer.concat(parts), png)).toBe(0);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.channels]).toEqual([photo.width, photo.height, 4]);
    // The writer makes the subject's inside opaque on the grid first (solid-interior.mjs), then refines.
    const grid = refineGrid(photo.width, photo.height);
    const solid = Buffer.from(low.alpha);
    solidInterior(solid, grid.w, grid.h);
    const ref = refineEdges(
      { rgb: photo.rgb, alpha: null, width: photo.width, height: photo.height },
      { low: { rgb: low.rgb, alpha: solid } },
    );
    let wrong = 0;
    for (let i = 0; i < photo.width * photo.height; i++) {
      const a = photo.alpha ? Math.min(ref.alpha[i], photo.alpha[i]) : ref.alpha[i];
      const expected = a ? [ref.rgb[i * 3], ref.rgb[i * 3 + 1], ref.rgb[i * 3 + 2], a] : [0, 0, 0, 0];
      for (let k = 0; k < 4; k++) if (data[i * 4 + k] !== expected[k]) wrong++;
    }
    expect(wrong).toBe(0);
    const f = thumbnailFactor(Math.max(photo.width, photo.height), 64);
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

  it("hands a photo's shared copy to the next photo once its bands are done, never while they run, and lets it go when idle", async () => {
    const { rgb, blurred } = scene();
    const photo = { rgb: Buffer.from(rgb), alpha: null, width: W, height: H };
    const low = lowOf(rgb, blurred, W, H);
    const other = { rgb: Buffer.from(rgb.map((v) => 255 - v)), alpha: Buffer.alloc(W * H, 200), width: W, height: H };
    // What each photo must come out as, made first: the pool's idle time is counted from a buffer's return, and
    // on a loaded machine making these in between took longer than it.
    const expected = [await expectCutout(photo, low), await expectCutout(other, low)];
    const pool = new WorkerCutoutWriter(2, 2000);
    try {
      await expectCutout(photo, low, pool);
      // The photo's copy (RGB) and its pixels (RGBA).
      expect(pool.sharedBytes(), 'the copy is kept for the next photo').toBe(W * H * 3 + W * H * 4);
      // A second photo handed over while the first one's bands run cannot have the first one's copy
      // (it would overwrite the pixels being refined): both come out right.
      const first = pool.prepare(photo, 64);
      expect(pool.sharedBytes(), 'the copy taken, the pixels left').toBe(W * H * 4);
      const a = first.write(low).png;
      const b = pool.prepare(other, 64).write(low).png;
      expect(Buffer.compare(await a, expected[0])).toBe(0);
      expect(Buffer.compare(await b, expected[1])).toBe(0);
      // Five buffers back (both photos' colours and pixels, the second one's transparency); four kept, the
      // smallest went.
      expect(pool.sharedBytes()).toBe(2 * W * H * 3 + 2 * W * H * 4);
      await new Promise((resolve) => setTimeout(resolve, 2400));
      expect(pool.sharedBytes()).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it("caps the alpha with the photo's own transparency; a one-pixel photo works", async () => {
    const { rgb, blurred } = scene();
    const sourceAlpha = Buffer.alloc(W * H, 255);
    sourceAlpha.fill(0, 0, W * 10); // the top rows were transparent in the upload
    await expectCutout({ rgb: Buffer.from(rgb), alpha: sourceAlpha, width: W, height: H }, lowOf(rgb, blurred, W, H));
    await expectCutout(
      { rgb: Buffer.from([9, 8, 7]), alpha: null, width: 1, height: 1 },
      { rgb: Buffer.from([9, 8, 7]), alpha: Buffer.from([200]) },
    );
  });

  it('on a photo-sized picture at a scale with uneven grid cells (3001 x 1999)', async () => {
    // A textured product on a textured backdrop, and a soft-edged mask of it as the model gives one.
    const [w, h] = [3001, 1999];
    const subject = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">` +
        `<ellipse cx="1500" cy="1000" rx="900" ry="700" fill="#c0392b"/><rect x="1200" y="500" width="300" height="900" fill="#2e86c1"/></svg>`,
    );
    const noise = {
      create: {
        width: w,
        height: h,
        channels: 3 as const,
        background: '#000',
        noise: { type: 'gaussian' as const, mean: 128, sigma: 40 },
      },
    };
    const decoded = await decoder.decode(
      await sharp(noise)
        .composite([{ input: subject, blend: 'overlay' }])
        .png()
        .toBuffer(),
    );
    const mask = await sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="1024"><rect width="1024" height="1024"/>` +
          `<ellipse cx="512" cy="512" rx="307" ry="358" fill="#fff"/></svg>`,
      ),
    )
      .greyscale()
      .blur(3)
      .extractChannel(0)
      .raw()
      .toBuffer();
    const png = await expectCutout(decoded, await refineInputs(decoder, decoded, mask));
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
    // The writer holds its own copy once `copied` resolves: what the caller does to its buffer changes nothing.
    await prepared.copied;
    const original = Buffer.from(photo.rgb);
    photo.rgb.fill(0);
    const ahead = await prepared.write(low).png;
    expect(() => prepared.write(low)).toThrow(/once/);
    photo.rgb.set(original);
    expect(Buffer.compare(ahead, await expectCutout(photo, low))).toBe(0);
  });

  it("reduces the model's mask on a thread (given as the model made it) to the same cut-out as reduced beforehand", async () => {
    const { rgb } = scene();
    const photo = { rgb: Buffer.from(rgb), alpha: null, width: W, height: H };
    const grid = refineGrid(W, H);
    // A soft disc at the model's size, larger than the grid, as the model hands it over.
    const size = 1024;
    const mask = new Uint8Array(size * size);
    for (let y = 0; y < size; y++)
      for (let x = 0; x < size; x++)
        mask[y * size + x] = Math.max(0, Math.min(255, Math.round(128 - (Math.hypot(x - 500, y - 540) - 300) * 3)));
    const lowRgb = Buffer.from(
      await sharp(rgb, { raw: { width: W, height: H, channels: 3 } })
        .resize(grid.w, grid.h)
        .raw()
        .toBuffer(),
    );
    const alpha = Buffer.from(reduceArea(mask, size, size, grid.w, grid.h));
    const onThread = await writer
      .prepare(photo, 64)
      .write({ rgb: lowRgb, mask: { data: mask, width: size, height: size } }).png;
    expect(Buffer.compare(onThread, await expectCutout(photo, { rgb: lowRgb, alpha }))).toBe(0);
  });

  it('reduces for the thumbnail to its size where a whole factor comes near it, else to no less than its edge', () => {
    // Usual photo sizes: the preview is the thumbnail (500 px), no resize.
    expect([1000, 1500, 2000, 3000, 4000].map((long) => long / thumbnailFactor(long, 512))).toEqual([
      500, 500, 500, 500, 500,
    ]);
    expect(thumbnailFactor(1024, 512)).toBe(2);
    // 1200 / 3 = 400 px is under 7/8 of 512: 600 px, resized.
    expect(thumbnailFactor(1200, 512)).toBe(2);
    expect(thumbnailFactor(600, 512)).toBe(1);
    expect(thumbnailFactor(300, 512)).toBe(1);
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
    for (let y = grid.h / 2; y < grid.h; y++)
      for (let x = 0; x < grid.w; x++) lower[y * grid.w + x] = x % 7 === 0 ? 128 : 255;
    const skewed = bandCuts(width, height, 4, 2, lower);
    check(skewed, 2, 4);
    expect(skewed[1]).toBeGreaterThan(560);
    // Three bands, and as many bands as blocks (each one block), and one band.
    check(bandCuts(width, height, 5, 3, lower), 3, 5);
    expect(bandCuts(width, 9, 3, 3, new Uint8Array(refineGrid(width, 9).w * refineGrid(width, 9).h))).toEqual([
      0, 3, 6, 9,
    ]);
    expect(
      bandCuts(width, 10, 3, 4, new Uint8Array(refineGrid(width, 10).w * refineGrid(width, 10).h).fill(255)),
    ).toEqual([0, 3, 6, 9, 10]);
    expect(bandCuts(width, height, 4, 1, lower)).toEqual([0, height]);
    // More bands asked for than there are blocks: one block each.
    expect(bandCuts(width, 7, 3, 5, new Uint8Array(refineGrid(width, 7).w * refineGrid(width, 7).h))).toEqual([
      0, 3, 6, 7,
    ]);
  });

  it('warms up by writing a photo on every thread, and still writes right afterwards', async () => {
    const pool = new WorkerCutoutWriter(2);
    try {
      await pool.warmUp(1);
      const { rgb, blurred } = scene();
      await expectCutout({ rgb: Buffer.from(rgb), alpha: null, width: W, height: H }, lowOf(rgb, blurred, W, H), pool);
    } finally {
      await pool.close();
    }
  });
});
