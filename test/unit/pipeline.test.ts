import { afterAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import http from 'node:http';
import { planLayout, outputFormatFor } from '../../src/pipeline/compose.ts';
import { diagnose } from '../../src/pipeline/diagnose.ts';
import { gridRgb, refineInputs } from '../../src/pipeline/segment.ts';
import { warmUpCheck } from '../../src/pipeline/photo-pipeline.ts';
import { maskStatistics } from '../../src/imaging/model-io.mjs';
import { CHECK_GRID, measure } from '../../src/pipeline/check/features.ts';
import {
  brokenProbability,
  chooseThreshold,
  fitLogistic,
  loadCalibration,
  MODEL_FEATURES,
  scoreFor,
} from '../../src/pipeline/check/calibration.ts';
import { ImageDecoder } from '../../src/adapters/images/decoder.ts';
import { ImageRenderer } from '../../src/adapters/images/renderer.ts';
import { CheckRasters } from '../../src/adapters/images/rasters.ts';
import { THUMB_EDGE } from '../../src/adapters/images/sharp.ts';
import type { DecodedImage } from '../../src/adapters/images/decoder.ts';
import { exportKeepsStored } from '../../src/domain/export-rules.ts';
import { WorkerCutoutWriter } from '../../src/imaging/cutout-writer.ts';
import { checkEntryName } from '../../src/adapters/zip-archive.adapter.ts';
import { fetchPublic, isPrivateAddress } from '../../src/adapters/outbound-http.adapter.ts';
import { resolveSettings } from '../../src/services/settings.ts';
import {
  cmykJpeg,
  exifRotated,
  hugePngHeader,
  png16,
  productPhoto,
  transparentPng,
  truncatedJpeg,
} from '../helpers/images.ts';

const base = resolveSettings(undefined, { hasBackgroundImage: false, path: '/defaults' });

describe('compose: layout', () => {
  it('original: the cutout as it is', () => {
    const l = planLayout({ width: 400, height: 300 }, { x: 100, y: 75, width: 200, height: 150 }, base);
    expect(l.canvas).toEqual({ width: 400, height: 300 });
    expect(l.place).toEqual({ left: 0, top: 0, width: 400, height: 300 });
    expect(l.background).toEqual({ kind: 'transparent' });
  });
  it('fill reframes around the subject; align moves it; rotate swaps the canvas', () => {
    const s = { ...base, presetId: 'custom', customSize: { width: 1000, height: 1000 }, fill: 0.5 };
    const l = planLayout({ width: 400, height: 300 }, { x: 100, y: 75, width: 200, height: 150 }, s);
    expect(l.crop).toEqual({ left: 100, top: 75, width: 200, height: 150 });
    expect(l.place).toEqual({ left: 250, top: 313, width: 500, height: 375 });
    const tl = planLayout(
      { width: 400, height: 300 },
      { x: 100, y: 75, width: 200, height: 150 },
      { ...s, align: 'top-left' },
    );
    expect([tl.place.left, tl.place.top]).toEqual([250, 250]);
    const r = planLayout({ width: 400, height: 300 }, null, { ...base, rotate: 90 });
    expect(r.canvas).toEqual({ width: 300, height: 400 });
  });
  it('presets set canvas, fill, white background and JPEG', () => {
    const s = resolveSettings({ presetId: 'amazon-main' }, { hasBackgroundImage: false, path: '/defaults' });
    expect(s.background.mode).toBe('white');
    const l = planLayout({ width: 400, height: 300 }, { x: 100, y: 75, width: 200, height: 150 }, s);
    expect(l.canvas).toEqual({ width: 1600, height: 1600 });
    expect(l.place.width).toBe(1360); // 85% fill
    expect(outputFormatFor(s)).toBe('jpeg');
    expect(outputFormatFor(base)).toBe('png');
  });
  it('refuses solid without a colour and image without an image', () => {
    expect(() => resolveSettings({ background: { mode: 'solid' } }, { hasBackgroundImage: false, path: '/d' })).toThrow(
      /color/,
    );
    expect(() => resolveSettings({ background: { mode: 'image' } }, { hasBackgroundImage: false, path: '/d' })).toThrow(
      /image/,
    );
  });
});

describe('diagnose: the calibrated check', () => {
  const N = 1024;
  /** A white photo with dark boxes, and a mask drawn with other boxes (value per box). */
  const scene = (dark: number[][], masked: [number, number, number, number, number][]) => {
    const rgb = Buffer.alloc(N * N * 3, 250);
    for (const [x0, y0, x1, y1] of dark) for (let y = y0; y < y1; y++) rgb.fill(40, (y * N + x0) * 3, (y * N + x1) * 3);
    const mask = Buffer.alloc(N * N);
    for (const [x0, y0, x1, y1, v] of masked) for (let y = y0; y < y1; y++) mask.fill(v, y * N + x0, y * N + x1);
    return { rgb, prediction: { mask, ...maskStatistics(mask, N) } };
  };
  const rasters = new CheckRasters(100_000_000);
  const run = async (s: ReturnType<typeof scene>, cutout = { width: 2048, height: 1024 }) =>
    diagnose(s.prediction, await rasters.checkGrid(s.prediction.mask, s.rgb, N, CHECK_GRID), N, cutout);

  it('scores a clean cut-out high, not red, and maps the bbox to cutout pixels', async () => {
    const d = await run(scene([[256, 256, 768, 768]], [[256, 256, 768, 768, 255]]));
    expect(d.red).toBe(false);
    // Well clear of the bar (50). The calibration chosen on real photos (L2 weight 1) is less sure of any photo
    // than the composites' was: a flawless cut-out scores 82.
    expect(d.quality.score).toBeGreaterThan(75);
    expect(d.bbox).toEqual({ x: 512, y: 256, width: 1024, height: 512 });
    expect(d.quality.flags.filter((f) => f.severity > 0.5)).toEqual([]);
  });
  it('flags a subject cut off by one side of the photo (marketplaces refuse it), not one clear of the frame or a speck on it', async () => {
    const touches = (d: Awaited<ReturnType<typeof run>>) =>
      d.quality.flags.find((f) => f.code === 'subject-touches-edge');
    const cut = await run(scene([[256, 512, 768, 1024]], [[256, 512, 768, 1024, 255]]));
    expect(touches(cut)).toMatchObject({ severity: 0.25, bbox: { x: 512, y: 512, width: 1024, height: 512 } });
    const corner = await run(scene([[0, 512, 512, 1024]], [[0, 512, 512, 1024, 255]]));
    expect(touches(corner)?.severity).toBe(0.5);
    expect(touches(await run(scene([[256, 256, 768, 768]], [[256, 256, 768, 768, 255]])))).toBeUndefined();
    // Four model pixels on the bottom row are one grid pixel: a speck, not a product the frame cuts.
    const speck = scene(
      [[256, 256, 768, 768]],
      [
        [256, 256, 768, 768, 255],
        [500, 1020, 504, 1024, 255],
      ],
    );
    expect(touches(await run(speck))).toBeUndefined();
  });
  it('refuses an empty mask as NO_SUBJECT and sends a whole-frame "subject" to review', async () => {
    await expect(run(scene([], []))).rejects.toThrow(/No subject/);
    const d = await run(scene([[256, 256, 768, 768]], [[0, 0, N, N, 255]]));
    expect(d.red).toBe(true);
    expect(d.quality.flags[0]).toMatchObject({ code: 'background-kept', severity: 1 });
  });
  it('sends a cut-out that left out what the model was unsure of to review, flagged low-confidence where it is', async () => {
    // The model kept the subject's left half and only half believed in its right half (mask 100: left out).
    const d = await run(
      scene(
        [[256, 256, 768, 768]],
        [
          [256, 256, 512, 768, 255],
          [512, 256, 768, 768, 100],
        ],
      ),
      { width: N, height: N },
    );
    expect(d.red).toBe(true);
    const flag = d.quality.flags.find((f) => f.code === 'low-confidence')!;
    expect(flag.severity).toBeGreaterThan(0.5);
    expect(flag.bbox).toMatchObject({ x: 512, y: 256 });
  });
  it('keeps a clean cut-out with a faint haze of doubt over the background out of review', async () => {
    const d = await run(
      scene(
        [[256, 256, 768, 768]],
        [
          [256, 256, 768, 768, 255],
          [100, 100, 900, 130, 60],
        ],
      ),
      { width: N, height: N },
    );
    expect(d.red).toBe(false);
  });
  it('counts the doubt joined to the subject (all of it, and its largest part), not doubt in specks or apart from it', async () => {
    const features = async (s: ReturnType<typeof scene>) =>
      measure(await rasters.checkGrid(s.prediction.mask, s.rgb, N, CHECK_GRID)).features;
    const subject: [number, number, number, number, number] = [256, 256, 512, 768, 255];
    // A quarter of the subject's area of doubt (mask 100): one block beside it, the same block a gap away,
    // and the same area in sixteen specks over the background.
    const joined = await features(scene([[256, 256, 768, 768]], [subject, [512, 256, 768, 384, 100]]));
    const apart = await features(scene([[256, 256, 768, 768]], [subject, [544, 256, 800, 384, 100]]));
    const specks = Array.from({ length: 16 }, (_, k): [number, number, number, number, number] => {
      const [x, y] = [600 + (k % 4) * 96, 40 + Math.floor(k / 4) * 200];
      return [x, y, x + 64, y + 32, 100];
    });
    const specked = await features(scene([[256, 256, 768, 768]], [subject, ...specks]));
    expect(joined.uncertainPart).toBeCloseTo(0.25, 1);
    expect(joined.uncertain).toBeCloseTo(0.25, 1);
    expect(apart.uncertain).toBeCloseTo(0.25, 1);
    expect(apart.uncertainPart).toBe(0);
    expect(specked.uncertain).toBeCloseTo(0.25, 1);
    expect(specked.uncertainPart).toBe(0);
    // Joined doubt counts each piece beside the subject, the smaller ones too; the largest piece alone does not.
    expect(joined.uncertainJoined).toBeCloseTo(0.25, 1);
    expect(apart.uncertainJoined).toBe(0);
    expect(specked.uncertainJoined).toBe(0);
    const split = await features(
      scene([[256, 256, 768, 768]], [subject, [512, 256, 768, 320, 100], [512, 336, 768, 384, 100]]),
    );
    expect(split.uncertainJoined).toBeCloseTo(0.22, 1);
    expect(split.uncertainPart).toBeCloseTo(0.125, 1);
  });
  it('measures the outline over flat colour: none when the cut follows the photo, most when it misses it', async () => {
    const weak = async (s: ReturnType<typeof scene>) =>
      measure(await rasters.checkGrid(s.prediction.mask, s.rgb, N, CHECK_GRID)).features.weakEdges;
    expect(await weak(scene([[256, 256, 768, 768]], [[256, 256, 768, 768, 255]]))).toBe(0);
    // The cut shifted up and left: its outline runs over the flat backdrop and through the flat product.
    expect(await weak(scene([[256, 256, 768, 768]], [[96, 96, 608, 608, 255]]))).toBeGreaterThan(0.8);
    const d = await run(scene([[256, 256, 768, 768]], [[96, 96, 608, 608, 255]]), { width: N, height: N });
    expect(d.quality.flags.find((f) => f.code === 'uncertain-edges')?.severity).toBe(1);
  });
  it('flags a part left out (subject colours beside the cut-out), with its box', async () => {
    const d = await run(scene([[256, 256, 768, 768]], [[256, 256, 448, 768, 255]]), { width: N, height: N });
    const flag = d.quality.flags.find((f) => f.code === 'uncertain-edges')!;
    expect(flag.severity).toBeGreaterThan(0.1);
    expect(flag.bbox!.x).toBeGreaterThanOrEqual(440);
  });
  it('flags a second separate object and a hole inside the subject', async () => {
    const two = await run(
      scene(
        [
          [100, 100, 500, 500],
          [700, 700, 900, 900],
        ],
        [
          [100, 100, 500, 500, 255],
          [700, 700, 900, 900, 255],
        ],
      ),
      { width: N, height: N },
    );
    expect(two.quality.flags.find((f) => f.code === 'multiple-objects')).toMatchObject({
      bbox: { x: 700, y: 700, width: 200, height: 200 },
    });
    const holed = await run(
      scene(
        [[200, 200, 800, 800]],
        [
          [200, 200, 800, 800, 255],
          [350, 350, 650, 650, 0],
        ],
      ),
      { width: N, height: N },
    );
    expect(holed.quality.flags.find((f) => f.code === 'hole-in-subject')).toMatchObject({
      bbox: { x: 352, y: 352, width: 296, height: 296 },
    });
  });
  it('the score is below 50 exactly when the calibrated probability reaches the threshold', () => {
    for (const t of [0.1, 0.24, 0.6]) {
      expect(scoreFor(t - 1e-6, t)).toBeGreaterThanOrEqual(50);
      expect(scoreFor(t, t)).toBeLessThan(50);
      expect(scoreFor(0, t)).toBe(100);
      expect(scoreFor(1, t)).toBe(0);
    }
    const cal = loadCalibration();
    expect(cal.threshold).toBeGreaterThan(0);
    expect(cal.threshold).toBeLessThan(1);
  });
  it('fits a logistic model that separates what can be separated, the same way every time', () => {
    const xs = [[0], [1], [2], [3], [10], [11], [12], [13]];
    const ys = xs.map(([v]) => v >= 10);
    const a = fitLogistic(xs, ys);
    expect(a).toEqual(fitLogistic(xs, ys));
    const cal = {
      features: MODEL_FEATURES,
      ...a,
      threshold: chooseThreshold(
        xs.map((x) => brokenProbability({ ...a, features: [], threshold: 1 }, x)),
        ys.map((y) => !y),
      ),
    };
    expect(xs.map((x) => brokenProbability(cal, x) >= cal.threshold)).toEqual(ys);
  });
});

describe('image codec', () => {
  const decoder = new ImageDecoder(100_000_000);
  const renderer = new ImageRenderer(100_000_000);
  const rasters = new CheckRasters(100_000_000);
  const cutouts = new WorkerCutoutWriter(2);
  afterAll(() => cutouts.close());
  /** The service's cut-out of a decoded photo for a model mask (1024 x 1024). */
  async function cutoutOf(decoded: DecodedImage, mask: Buffer) {
    const cut = cutouts.write(decoded, await refineInputs(decoder, decoded, mask), THUMB_EDGE);
    return { png: await cut.png, thumb: await renderer.thumbnailRaw(await cut.preview) };
  }
  it('converts a photo with a wide-gamut profile to sRGB, and writes outputs with no profile or metadata', async () => {
    const srgb = Buffer.alloc(32 * 32 * 3);
    for (let i = 0; i < srgb.length; i += 3) srgb.set([200, 100, 50], i);
    // Stored as Display P3 (other numbers for the same colour), with EXIF.
    const p3 = await sharp(srgb, { raw: { width: 32, height: 32, channels: 3 } })
      .withIccProfile('p3')
      .withExif({ IFD0: { Copyright: 'x' } })
      .jpeg({ quality: 100 })
      .toBuffer();
    const stored = await sharp(p3).keepIccProfile().raw().toBuffer();
    expect(Math.abs(stored[0] - 200)).toBeGreaterThan(5);
    const decoded = await decoder.decode(p3);
    for (const [k, v] of [200, 100, 50].entries()) expect(Math.abs(decoded.rgb[k] - v)).toBeLessThanOrEqual(3);
    const { png } = await cutoutOf(decoded, Buffer.alloc(1024 * 1024, 255));
    for (const out of [png, await renderer.convert(png, 'jpeg', 'off'), await renderer.convert(png, 'webp', 'off')]) {
      const meta = await sharp(out).metadata();
      expect([meta.icc, meta.exif, meta.space]).toEqual([undefined, undefined, 'srgb']);
    }
  });
  it('decodes EXIF-rotated, CMYK, 16-bit and transparent inputs to 8-bit RGB, keeping the alpha apart', async () => {
    const rotated = await decoder.decode(await exifRotated());
    expect([rotated.width, rotated.height]).toEqual([300, 400]);
    for (const input of [await cmykJpeg(), await png16()]) {
      const d = await decoder.decode(input);
      expect(d.rgb.length).toBe(d.width * d.height * 3);
      // CMYK has no alpha; the 16-bit fixture has an opaque one, kept as all 255.
      expect(d.alpha === null || d.alpha.every((v) => v === 255)).toBe(true);
    }
    expect((await decoder.decode(await cmykJpeg())).alpha).toBeNull();
    const t = await decoder.decode(await transparentPng());
    expect(t.alpha!.length).toBe(t.width * t.height);
    expect(t.rgb[0]).toBe(255); // transparent corner flattened onto white
  });
  it('masks come out with one channel, and the source alpha is kept', async () => {
    const t = await decoder.decode(await transparentPng());
    const full = Buffer.alloc(1024 * 1024, 255);
    const alpha = await rasters.maskToSize(full, 1024, t);
    expect(alpha.length).toBe(t.width * t.height); // one channel, not three
    expect(alpha[0]).toBe(0); // transparent in the source stays transparent
    expect(alpha[100 * t.width + 100]).toBe(255);
    const { png: cutout, thumb } = await cutoutOf(t, full);
    const pixels = await sharp(cutout).raw().toBuffer({ resolveWithObject: true });
    expect(pixels.info.channels).toBe(4);
    expect(pixels.data[3]).toBe(0); // the cut-out too: the source's transparency caps the alpha
    expect(pixels.data[(100 * t.width + 100) * 4 + 3]).toBe(255);
    expect((await sharp(thumb).metadata()).format).toBe('webp');
  });
  it('answers a stored output as it is only when nothing needs converting (and says so without reading it)', async () => {
    expect(exportKeepsStored('png', 5000, 'png', 'off')).toBe(true);
    expect(exportKeepsStored('png', 5000, 'png', 'marketplace')).toBe(true);
    expect(exportKeepsStored('jpeg', 5000, 'jpeg', 'marketplace', 5000)).toBe(true);
    expect(exportKeepsStored('jpeg', 5001, 'jpeg', 'marketplace', 5000)).toBe(false);
    expect(exportKeepsStored('png', 5000, 'webp', 'off')).toBe(false);
    expect(exportKeepsStored('png', 5000, 'png', 'lossless')).toBe(false);
    expect(exportKeepsStored('png', 5000, 'png', 'web')).toBe(false);
    // exportOutput follows the same rule: the very buffer back, or a new encoding.
    const stored = await sharp({
      create: { width: 8, height: 8, channels: 4, background: { r: 1, g: 2, b: 3, alpha: 1 } },
    })
      .png()
      .toBuffer();
    expect(await renderer.exportOutput(stored, 'png', 'png', 'off')).toBe(stored);
    expect(await renderer.exportOutput(stored, 'png', 'png', 'marketplace', stored.length - 1)).not.toBe(stored);
  });

  it("reduces a photo larger than the model's input to the refinement grid from that input, a smaller one from itself", async () => {
    // Left half red, right half blue, and a different picture as the "model input": which one was read shows.
    const photo = async (width: number, height: number) =>
      decoder.decode(
        await sharp({ create: { width, height, channels: 3, background: '#ff0000' } })
          .composite([
            {
              input: { create: { width: width / 2, height, channels: 3, background: '#0000ff' } },
              left: width / 2,
              top: 0,
            },
          ])
          .png()
          .toBuffer(),
      );
    const input = { rgb: Buffer.alloc(1024 * 1024 * 3, 0x40), width: 1024, height: 1024 };
    const big = await gridRgb(decoder, await photo(2000, 1600), input);
    expect([...big.subarray(0, 3)]).toEqual([0x40, 0x40, 0x40]);
    const small = await gridRgb(decoder, await photo(800, 600), input);
    expect([...small.subarray(0, 3)]).toEqual([255, 0, 0]);
    // No input given: the photo itself, at any size.
    expect([...(await gridRgb(decoder, await photo(2000, 1600))).subarray(0, 3)]).toEqual([255, 0, 0]);
  });

  it('refuses truncated files, huge declared sizes and non-images', async () => {
    await expect(decoder.decode(await truncatedJpeg())).rejects.toMatchObject({ code: 'INVALID_IMAGE' });
    await expect(decoder.probe(hugePngHeader())).rejects.toMatchObject({ code: 'TOO_LARGE' });
    await expect(decoder.probe(Buffer.from('GIF89a'))).rejects.toMatchObject({ code: 'INVALID_IMAGE' });
    expect(await decoder.probe(await productPhoto(64, 48, 'webp'))).toEqual({ format: 'webp', width: 64, height: 48 });
  });
});

describe('ZIP entry names', () => {
  it.each([
    ['a/b/c.jpg', 'a/b/c.jpg'],
    ['./x.jpg', 'x.jpg'],
    ['dir\\win.jpg', 'dir/win.jpg'],
  ])('accepts %s', (raw, name) => expect(checkEntryName(raw)).toEqual({ name }));
  it.each(['../x.jpg', 'a/../../x.jpg', '/abs.jpg', 'C:/x.jpg', 'a\u0000b.jpg', ''])('refuses %j', (raw) =>
    expect(checkEntryName(raw)).toHaveProperty('reason'),
  );
});

describe('outbound fetches', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '192.168.0.1',
    '172.16.5.5',
    '169.254.169.254',
    '::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '0.0.0.0',
  ])('%s is private', (a) => expect(isPrivateAddress(a)).toBe(true));
  it.each(['8.8.8.8', '1.1.1.1', '2606:4700::1111'])('%s is public', (a) => expect(isPrivateAddress(a)).toBe(false));

  it('refuses loopback unless allowed, and caps the bytes read', async () => {
    const server = http.createServer((_req, res) => res.end(Buffer.alloc(5000)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://localhost:${(server.address() as { port: number }).port}/x.jpg`;
    try {
      await expect(fetchPublic(url, { allowPrivate: false, maxBytes: 10_000, timeoutMs: 2000 })).rejects.toMatchObject({
        kind: 'refused',
      });
      expect((await fetchPublic(url, { allowPrivate: true, maxBytes: 10_000, timeoutMs: 2000 })).data.length).toBe(
        5000,
      );
      await expect(fetchPublic(url, { allowPrivate: true, maxBytes: 100, timeoutMs: 2000 })).rejects.toMatchObject({
        kind: 'too-large',
      });
      await expect(
        fetchPublic('file:///etc/passwd', { allowPrivate: true, maxBytes: 100, timeoutMs: 2000 }),
      ).rejects.toMatchObject({ kind: 'refused' });
    } finally {
      server.close();
    }
  });
});

describe('warming the check', () => {
  it('runs the check on a synthetic photo, giving the event loop its turn between the pieces', async () => {
    const rasters = new CheckRasters(100_000_000);
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    try {
      await warmUpCheck(rasters, 2);
    } finally {
      clearInterval(tick);
    }
    // Three turns a round at least (after the reduction, the colours and the check); one stretch would give none.
    expect(turns).toBeGreaterThanOrEqual(4);
  });
});
