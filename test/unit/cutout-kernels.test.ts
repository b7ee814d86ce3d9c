// The native kernels (native/*.c) against their JavaScript reference: the same
// bytes on drawn photos and eval photos, cut into bands anywhere; arguments that do not agree are a
// TypeError, not a crash; and a build that cannot run leaves the install working.
import { spawnSync } from 'node:child_process';
import zlib from 'node:zlib';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { BandWorkspace, bandRows, deflateRows, loadKernels, native, nativeReason, reduceMask, refineBand } from '../../src/adapters/cutout-kernels.mjs';
import { adler32, joinBands } from '../../src/adapters/png-strips.mjs';
import { refineGrid } from '../../src/adapters/edge-refine.mjs';
import { fillModelInput, maskFromOutput } from '../../src/adapters/model-session.mjs';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../helpers/eval-data.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const HAVE_COMPILER = spawnSync(process.env.CC || 'cc', ['--version']).status === 0;
const kernels = native!;

/** A drawn photo: a textured disc with a soft edge on a gradient, and its mask reduced to the refinement grid. */
function drawn(width: number, height: number, seed: number) {
  const rgb = new Uint8Array(width * height * 3);
  const alpha = new Uint8Array(width * height);
  let s = seed;
  const noise = () => ((s = (s * 1103515245 + 12345) >>> 0) >>> 24) % 23;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const d = Math.hypot(x - width * 0.45, y - height * 0.55) - Math.min(width, height) * 0.3;
      const i = y * width + x;
      alpha[i] = Math.max(0, Math.min(255, Math.round(128 - d * 40)));
      rgb.set(d < 0 ? [200 - noise(), 40 + noise(), 30] : [(x * 255) / width, 220, (y * 255) / height - noise()], i * 3);
    }
  }
  const grid = refineGrid(width, height);
  const low = { rgb: new Uint8Array(grid.w * grid.h * 3), alpha: new Uint8Array(grid.w * grid.h) };
  for (let y = 0; y < grid.h; y++) {
    for (let x = 0; x < grid.w; x++) {
      const i = Math.floor((y * height) / grid.h) * width + Math.floor((x * width) / grid.w);
      low.rgb.set(rgb.subarray(i * 3, i * 3 + 3), (y * grid.w + x) * 3);
      low.alpha[y * grid.w + x] = alpha[i];
    }
  }
  return { rgb, width, height, low };
}

function expectSameBands(photo: ReturnType<typeof drawn>, cuts: number[]) {
  for (let i = 0; i + 1 < cuts.length; i++) {
    const js = refineBand(photo, photo.low, cuts[i], cuts[i + 1], { native: null });
    const c = refineBand(photo, photo.low, cuts[i], cuts[i + 1], { native: kernels });
    expect(Buffer.compare(Buffer.from(c.alpha), Buffer.from(js.alpha)), `alpha of rows ${cuts[i]}-${cuts[i + 1]}`).toBe(0);
    expect(Buffer.compare(Buffer.from(c.rgb), Buffer.from(js.rgb)), `RGB of rows ${cuts[i]}-${cuts[i + 1]}`).toBe(0);
    // Some edge pixels really were refined and decontaminated, or the comparison proves little.
    const rows = cuts[i + 1] - cuts[i];
    let soft = 0;
    for (const a of js.alpha) if (a > 0 && a < 255) soft++;
    if (rows > 100) expect(soft).toBeGreaterThan(0);
  }
}

describe.skipIf(!HAVE_COMPILER)('native cut-out kernels', () => {
  it('are built wherever a C compiler is', () => {
    expect(native, `the native kernels did not load: ${nativeReason}`).not.toBeNull();
  });

  it('reduce a mask to the refinement grid to the same bytes as the JavaScript', () => {
    let seed = 12;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    // A soft disc with noise: every value occurs, and cells cut pixels on both axes.
    const mask = Uint8Array.from({ length: 1024 * 1024 }, (_, i) => {
      const d = Math.hypot((i % 1024) - 500, Math.floor(i / 1024) - 530) - 300;
      return Math.max(0, Math.min(255, Math.round(128 - d * 8))) ^ (random() & 7);
    });
    for (const [w, h] of [
      [768, 768],
      [768, 433],
      [301, 200],
      [1024, 1],
      [1, 1],
      [1024, 1024],
    ]) {
      const js = reduceMask(mask, 1024, 1024, w, h, { native: null });
      const c = reduceMask(mask, 1024, 1024, w, h, { native: kernels });
      expect(Buffer.compare(c, js), `${w}x${h}`).toBe(0);
    }
    const small = Uint8Array.from([0, 90, 255, 7, 8, 9, 250, 1, 2, 3]);
    expect(Buffer.compare(reduceMask(small, 5, 2, 3, 1, { native: kernels }), reduceMask(small, 5, 2, 3, 1, { native: null }))).toBe(0);
    expect(() => kernels.reduceArea(mask, 1024, 1024, new Uint8Array(10), 768, 768)).toThrow(/sizes/);
    expect(() => kernels.reduceArea(mask, 1024, 1024, new Uint8Array(2000 * 1024), 2000, 1024)).toThrow(/sizes/);
    expect(() => kernels.reduceArea(mask.subarray(5), 1024, 1024, new Uint8Array(4), 2, 2)).toThrow(/sizes/);
    expect(() => reduceMask(mask, 1024, 1024, 1025, 10)).toThrow(RangeError);
    // Rows wider than 2^24 would overflow the 32-bit sums across: refused, not summed wrong.
    expect(() => kernels.reduceArea(new Uint8Array(2 ** 24 + 1), 2 ** 24 + 1, 1, new Uint8Array(1), 1, 1)).toThrow(/sizes/);
  });

  it("make the model's input and read its output to the same floats and bytes as the JavaScript", () => {
    let seed = 5;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
    const rgb = Uint8Array.from({ length: 1024 * 1024 * 3 }, (_, i) => (i < 768 ? i % 256 : Math.floor(random() * 256)));
    const js = new Float32Array(rgb.length);
    const c = new Float32Array(rgb.length).fill(7);
    fillModelInput(rgb, js, { native: null });
    fillModelInput(rgb, c, { native: kernels });
    expect(Buffer.compare(Buffer.from(c.buffer), Buffer.from(js.buffer))).toBe(0);
    expect([js[0], js[1024 * 1024 + 1], js[2 * 1024 * 1024 + 2]]).toEqual([-0.5, (4 - 128) / 256, (8 - 128) / 256]); // R of pixel 0, G of pixel 1, B of pixel 2

    // Every rounding boundary (k + 0.5) / 255 and its float neighbours, out-of-range values, NaN, infinities.
    const special = [0, -0, -1e-9, 1e-9, 1, 1 + 1e-7, 2, -3, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
    for (let k = 0; k < 255; k++) {
      const b = Math.fround((k + 0.5) / 255);
      special.push(b, Math.fround(b * (1 + 2 ** -23)), Math.fround(b * (1 - 2 ** -23)));
    }
    const out = Float32Array.from({ length: 1024 * 1024 }, (_, i) => (i < special.length ? special[i] : Math.hypot((i % 1024) - 400, i / 1024 - 600) < 250 ? random() * 0.5 + 0.5 : random() * 0.6));
    const a = maskFromOutput(out, 1024, { native: null });
    const b = maskFromOutput(out, 1024, { native: kernels });
    expect(Buffer.compare(Buffer.from(b.mask), Buffer.from(a.mask))).toBe(0);
    expect([...b.histogram]).toEqual([...a.histogram]);
    expect(b.bbox).toEqual(a.bbox);
    expect(a.bbox).not.toBeNull();
    // Nothing at 128 or above: no box either way.
    const faint = new Float32Array(16).fill(0.3);
    expect(maskFromOutput(faint, 4, { native: kernels })).toEqual(maskFromOutput(faint, 4, { native: null }));
    expect(maskFromOutput(faint, 4, { native: kernels }).bbox).toBeNull();
    const one = Float32Array.from([0.6, 0.1, 0.2, 0.9]); // opposite corners
    expect(maskFromOutput(one, 2, { native: kernels }).bbox).toEqual({ x: 0, y: 0, width: 2, height: 2 });

    expect(() => kernels.fillModelInput(rgb, new Float32Array(10))).toThrow(/sizes/);
    expect(() => kernels.fillModelInput(rgb, new Float64Array(rgb.length) as unknown as Float32Array)).toThrow(/Float32Array/);
    expect(() => kernels.maskFromOutput(out, 1025, new Uint8Array(1024 * 1024), new Uint32Array(256), new Int32Array(4))).toThrow(/sizes/);
    expect(() => kernels.maskFromOutput(out, 1024, new Uint8Array(1024 * 1024), new Uint32Array(255), new Int32Array(4))).toThrow(/sizes/);
    expect(() => kernels.maskFromOutput(out, 1024, new Uint8Array(1024 * 1024), new Uint32Array(256), new Int32Array(3))).toThrow(/sizes/);
    expect(() => kernels.maskFromOutput(out, 1024, new Uint8Array(1024 * 1024), new Int32Array(256) as unknown as Uint32Array, new Int32Array(4))).toThrow(/Uint32Array/);
  });

  it('refine a band to the same bytes as the JavaScript, however the photo is cut', () => {
    for (const [width, height, seed] of [
      [300, 200, 1],
      [1237, 911, 2],
      [640, 1500, 3],
      [769, 33, 4],
    ]) {
      const photo = drawn(width, height, seed);
      expectSameBands(photo, [0, height]);
      expectSameBands(photo, [0, Math.floor(height / 2), height]);
      expectSameBands(photo, [0, 1, 17, height - 1, height]);
    }
  });

  it.skipIf(!HAVE_EVAL_DATA)('refine eval photos to the same bytes as the JavaScript', async () => {
    for (const entry of evalEntries().slice(0, 3)) {
      const width = 1600;
      const height = 1200;
      const rgb = await sharp(evalFile(entry.image)).resize(width, height, { fit: 'fill' }).removeAlpha().raw().toBuffer();
      const grid = refineGrid(width, height);
      const low = {
        rgb: await sharp(rgb, { raw: { width, height, channels: 3 } }).resize(grid.w, grid.h, { fit: 'fill' }).raw().toBuffer(),
        alpha: await sharp(evalFile(entry.mask)).resize(grid.w, grid.h, { fit: 'fill' }).blur(2).extractChannel(0).raw().toBuffer(),
      };
      expectSameBands({ rgb, width, height, low }, [0, 700, height]);
    }
  });

  it("lay out PNG rows and the thumbnail reduction as the JavaScript does, with the photo's own transparency capping alpha", () => {
    const photo = drawn(301, 97, 5);
    const { alpha, rgb } = refineBand(photo, photo.low, 0, photo.height, { native: null });
    const sourceAlpha = new Uint8Array(alpha.length).map((_, i) => (i * 37) % 256);
    for (const [cap, factor] of [
      [null, 1],
      [null, 7],
      [sourceAlpha, 16],
      [sourceAlpha, 400],
    ] as const) {
      const js = bandRows(rgb, new Uint8Array(alpha), cap, photo.width, photo.height, factor, { native: null });
      const c = bandRows(rgb, new Uint8Array(alpha), cap, photo.width, photo.height, factor, { native: kernels });
      expect(Buffer.compare(c.lines, js.lines)).toBe(0);
      expect([c.preview.width, c.preview.height]).toEqual([js.preview.width, js.preview.height]);
      expect(Buffer.compare(Buffer.from(c.preview.data), Buffer.from(js.preview.data))).toBe(0);
    }
  });

  it('lay out noisy rows as the JavaScript does at every width around the 16-pixel step, transparent pixels and full blocks alike', () => {
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    for (const width of [1, 15, 16, 17, 31, 48, 67]) {
      const rows = 13;
      const rgb = Uint8Array.from({ length: width * rows * 3 }, next);
      // A third transparent, a third opaque, the rest anything: the colour under alpha 0 must vanish.
      const alpha = Uint8Array.from({ length: width * rows }, () => {
        const v = next();
        return v < 85 ? 0 : v < 170 ? 255 : next();
      });
      for (const factor of [1, 2, 3, 4, 5, 8, 40]) {
        const js = bandRows(rgb, new Uint8Array(alpha), null, width, rows, factor, { native: null });
        const c = bandRows(rgb, new Uint8Array(alpha), null, width, rows, factor, { native: kernels });
        expect(Buffer.compare(c.lines, js.lines), `lines, width ${width}, factor ${factor}`).toBe(0);
        expect(Buffer.compare(Buffer.from(c.preview.data), Buffer.from(js.preview.data)), `preview, width ${width}, factor ${factor}`).toBe(0);
      }
    }
  });

  it('reuse their memory band after band (a workspace and the native scratch), with the same bytes as in fresh memory', async () => {
    const workspace = new BandWorkspace();
    const big = drawn(1600, 900, 9);
    const small = drawn(333, 250, 10);
    let previous: Uint8Array | undefined;
    // Large, small, large again: memory kept from a larger band serves a smaller one, then grows back.
    for (const [photo, y0, y1, release] of [
      [big, 0, 450, false],
      [small, 0, 250, false],
      [big, 450, 900, false],
      [big, 0, 450, true],
      [small, 100, 250, false],
    ] as const) {
      if (release) workspace.release();
      const fresh = refineBand(photo, photo.low, y0, y1);
      const reused = refineBand(photo, photo.low, y0, y1, { workspace });
      expect(Buffer.compare(Buffer.from(reused.alpha), Buffer.from(fresh.alpha))).toBe(0);
      expect(Buffer.compare(Buffer.from(reused.rgb), Buffer.from(fresh.rgb))).toBe(0);
      const rowsFresh = bandRows(fresh.rgb, fresh.alpha, null, photo.width, y1 - y0, 8);
      const rowsReused = bandRows(reused.rgb, reused.alpha, null, photo.width, y1 - y0, 8, { workspace });
      expect(Buffer.compare(rowsReused.lines, rowsFresh.lines)).toBe(0);
      const deflatedReused = await deflateRows(rowsReused.lines, true, { workspace });
      expect(Buffer.compare(deflatedReused.idat, (await deflateRows(rowsFresh.lines, true)).idat)).toBe(0);
      // The IDAT chunk is its own memory: the next band's deflate does not overwrite it.
      expect(deflatedReused.idat.buffer).not.toBe(workspace.take('deflated', 1).buffer);
      if (previous && !release) expect(reused.alpha.buffer, 'the refined alpha is in the memory of the band before').toBe(previous.buffer);
      previous = reused.alpha;
    }
  });

  it('keep their scratch memory from call to call until it is released', async () => {
    const photo = drawn(2000, 1200, 11);
    const workspace = new BandWorkspace();
    workspace.release();
    expect(kernels.scratchBytes()).toBe(0);
    refineBand(photo, photo.low, 0, 1200, { workspace });
    const held = kernels.scratchBytes();
    // The grid's planes for 667 x 400 cells (16 float planes and more): megabytes, not a stray allocation.
    expect(held).toBeGreaterThan(20e6);
    refineBand(photo, photo.low, 0, 600, { workspace });
    expect(kernels.scratchBytes(), 'a smaller band takes the memory already held').toBe(held);
    await deflateRows(Buffer.alloc(1000), true, { workspace });
    expect(kernels.scratchBytes(), "the deflate's tokens are kept too").toBeGreaterThan(held);
    workspace.release();
    expect(kernels.scratchBytes()).toBe(0);
  });

  it('refuse arguments that do not agree with a TypeError, and write nothing', () => {
    const photo = drawn(200, 100, 6);
    const args = (over: Record<number, unknown>) => {
      const base: unknown[] = [photo.rgb, 200, 100, photo.low.rgb, photo.low.alpha, 0, 100, 768, 1, 1e-4, 1.3, new Uint8Array(200 * 100), new Uint8Array(200 * 100 * 3)];
      for (const [i, v] of Object.entries(over)) base[Number(i)] = v;
      return base as Parameters<typeof kernels.refineRows>;
    };
    const outAlpha = new Uint8Array(200 * 50);
    expect(() => kernels.refineRows(...args({ 11: outAlpha }))).toThrow(TypeError);
    expect(outAlpha.every((v) => v === 0)).toBe(true);
    expect(() => kernels.refineRows(...args({ 6: 101 }))).toThrow(/sizes/);
    expect(() => kernels.refineRows(...args({ 5: 50, 6: 50 }))).toThrow(/sizes/);
    expect(() => kernels.refineRows(...args({ 4: new Uint8Array(3) }))).toThrow(/sizes/);
    expect(() => kernels.refineRows(...args({ 0: new Float32Array(60000) }))).toThrow(/Uint8Array/);
    expect(() => kernels.refineRows(...args({ 1: 2.5 }))).toThrow(/whole number/);
    expect(() => kernels.refineRows(...args({ 9: Number.NaN }))).toThrow(/finite/);
    expect(() => (kernels.refineRows as (...a: unknown[]) => void)(photo.rgb, 200)).toThrow(/refineRows takes 13 arguments/);
    expect(() => (kernels.releaseScratch as (...a: unknown[]) => void)(1)).toThrow(/releaseScratch takes 0 arguments/);
    expect(() => (kernels.scratchBytes as (...a: unknown[]) => void)(1)).toThrow(/scratchBytes takes 0 arguments/);
    expect(() => kernels.bandLines(photo.rgb, new Uint8Array(20000), null, 200, 100, 4, new Uint8Array(10), new Uint8Array(50 * 25 * 4))).toThrow(/sizes/);
    expect(() => kernels.bandLines(photo.rgb, new Uint8Array(20000), new Uint8Array(5), 200, 100, 4, new Uint8Array(801 * 100), new Uint8Array(50 * 25 * 4))).toThrow(/sizes/);
  });
});

describe.skipIf(!HAVE_COMPILER)('native deflate of PNG rows', () => {
  /** The raw deflate data inside a band's IDAT chunk. */
  const body = (idat: Buffer) => idat.subarray(8, idat.length - 4);
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  const BLOCK = 1 << 18;
  const inputs: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['one byte', Buffer.from([9])],
    ['two equal bytes', Buffer.from([4, 4])],
    ['a run of three after a different byte', Buffer.from([1, 2, 2, 2, 2])],
    ['zeros across blocks', Buffer.alloc(BLOCK * 2 + 5)],
    ['noise across a block edge', Buffer.from(Array.from({ length: BLOCK + 1000 }, random))],
    ['runs of every length up to 600 and every byte', Buffer.concat(Array.from({ length: 600 }, (_, n) => Buffer.alloc(n, n % 256)))],
    ['a run crossing the block edge', Buffer.concat([Buffer.from(Array.from({ length: BLOCK - 100 }, random)), Buffer.alloc(500, 200), Buffer.from([1, 2, 3])])],
    // The encoder looks eight bytes ahead for a place where a match can start: runs of three (never a
    // match) and of four to eleven (a match) begin at every place of that window, among bytes that
    // never repeat the one before.
    [
      'runs of three to eleven at every offset of an eight-byte window',
      Buffer.from(
        Array.from({ length: 9 }, (_, r) =>
          Array.from({ length: 16 }, (_, offset) => [...Array.from({ length: offset + 5 }, (_, k) => (k * 37 + r) % 251), ...Array(r + 3).fill(252)]).flat(),
        ).flat(),
      ),
    ],
  ];

  it.each(inputs)('inflates back to the same bytes, alone and mid-stream, with the same checksum: %s', async (_, data) => {
    const last = await deflateRows(data, true, { native: kernels });
    expect(Buffer.compare(zlib.inflateRawSync(body(last.idat)), data)).toBe(0);
    expect(last.adler).toBe(adler32(data));
    expect(last.length).toBe(data.length);
    // Not last: it ends on a byte boundary, so more deflate data (here an empty final block) may follow.
    const mid = await deflateRows(data, false, { native: kernels });
    expect(Buffer.compare(zlib.inflateRawSync(Buffer.concat([body(mid.idat), Buffer.from([3, 0])])), data)).toBe(0);
  });

  it('sums Adler-32 as the reference does, across its 32-byte steps and 173-step reductions, at the largest byte values', () => {
    for (const length of [0, 1, 31, 32, 33, 100, 173 * 32 - 1, 173 * 32, 173 * 32 + 1, 173 * 32 * 3 + 7, 1 << 20]) {
      for (const fill of [255, 0, -1]) {
        const data = Buffer.from(Array.from({ length }, () => (fill < 0 ? random() : fill)));
        expect(kernels.adler32(data), `${length} bytes of ${fill < 0 ? 'noise' : fill}`).toBe(adler32(data));
      }
    }
  });

  it('writes real rows no larger than zlib does, and bands that join into one PNG', async () => {
    const photo = drawn(900, 600, 8);
    const cuts = [0, 250, 600];
    const bands = [];
    let ours = 0;
    let zlibs = 0;
    for (let i = 0; i + 1 < cuts.length; i++) {
      const { alpha, rgb } = refineBand(photo, photo.low, cuts[i], cuts[i + 1]);
      const { lines } = bandRows(rgb, alpha, null, photo.width, cuts[i + 1] - cuts[i], 8);
      const last = i === cuts.length - 2;
      const band = await deflateRows(lines, last, { native: kernels });
      ours += band.idat.length;
      zlibs += (await deflateRows(lines, last, { native: null })).idat.length;
      bands.push(band);
    }
    expect(ours).toBeLessThanOrEqual(zlibs * 1.02);
    const png = joinBands(photo.width, photo.height, bands);
    const decoded = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect([decoded.info.width, decoded.info.height, decoded.info.channels]).toEqual([900, 600, 4]);
  });

  it('refuses an output smaller than its bound', () => {
    const data = Buffer.alloc(1000, 1);
    expect(() => kernels.deflateRows(data, true, Buffer.alloc(10))).toThrow(/deflateBound/);
    expect(() => kernels.deflateRows(data, 'yes' as unknown as boolean, Buffer.alloc(kernels.deflateBound(1000)))).toThrow(/boolean/);
  });
});

describe('native build', () => {
  it.skipIf(!HAVE_COMPILER)('is not used when it was built from sources of another interface version', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-kernels-'));
    try {
      const file = path.join(dir, 'old.node');
      const sources = fs.readdirSync(path.join(ROOT, 'native')).filter((f) => f.endsWith('.c')).map((f) => path.join(ROOT, 'native', f));
      const include = path.join(path.dirname(process.execPath), '..', 'include', 'node');
      const cc = spawnSync(process.env.CC || 'cc', ['-shared', '-fPIC', '-fvisibility=hidden', '-DKERNELS_VERSION=0', '-I', include, ...sources, '-o', file, '-lm'], { encoding: 'utf8' });
      expect(cc.status, cc.stderr).toBe(0);
      const stale = loadKernels(file);
      expect(stale.module).toBeNull();
      expect(stale.reason).toMatch(/version 0, not \d+; npm run build:native/);
      expect(loadKernels(path.join(dir, 'missing.node'))).toMatchObject({ module: null, reason: expect.stringMatching(/^not built/) });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves the install working, and an earlier build in place, when the compiler fails', () => {
    const target = path.join(ROOT, 'build', 'cutout-kernels.node');
    const before = fs.existsSync(target) ? fs.statSync(target).mtimeMs : null;
    const run = spawnSync(process.execPath, ['scripts/build-native.mjs'], { cwd: ROOT, env: { ...process.env, CC: 'false' }, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/native cut-out kernels were not built \(false failed/);
    expect(fs.existsSync(target) ? fs.statSync(target).mtimeMs : null).toBe(before);
    expect(fs.readdirSync(path.dirname(target)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
