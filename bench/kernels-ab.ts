// One-off A/B of the native cut-out kernels against their JavaScript twins and the library encoders,
// CPU time per 2000x2000 photo (process CPU, every thread), median of RUNS. Run before native/ was
// retired (issue 22); its figures are in docs/performance.md.
import zlib from 'node:zlib';
import sharp from 'sharp';
import { native, reduceMask, refineBand, bandRows, deflateRows } from '../src/adapters/cutout-kernels.mjs';
import { refineGrid } from '../src/adapters/edge-refine.mjs';
import { fillModelInput, maskFromOutput } from '../src/adapters/model-session.mjs';
import { evalEntries, evalFile } from '../test/helpers/eval-data.ts';

const RUNS = Number(process.env.RUNS ?? 9);
const W = 2000;
const H = 2000;
const entry = evalEntries().filter((e) => e.kind === 'product')[0];
const rgb = await sharp(evalFile(entry.image)).resize(W, H, { fit: 'fill' }).removeAlpha().raw().toBuffer();
const truth = await sharp(evalFile(entry.mask)).extractChannel(0).resize(W, H, { fit: 'fill' }).raw().toBuffer();
const grid = refineGrid(W, H);
const low = {
  rgb: await sharp(rgb, { raw: { width: W, height: H, channels: 3 } }).resize(grid.w, grid.h, { fit: 'fill' }).raw().toBuffer(),
  alpha: await sharp(truth, { raw: { width: W, height: H, channels: 1 } }).blur(3).resize(grid.w, grid.h, { fit: 'fill' }).extractChannel(0).raw().toBuffer(),
};
const model1024 = await sharp(rgb, { raw: { width: W, height: H, channels: 3 } }).resize(1024, 1024, { fit: 'fill' }).raw().toBuffer();
const out1024 = Float32Array.from(await sharp(truth, { raw: { width: W, height: H, channels: 1 } }).resize(1024, 1024, { fit: 'fill' }).extractChannel(0).raw().toBuffer(), (v) => v / 255);
const mask1024 = Buffer.from(maskFromOutput(out1024, 1024, { native: null }).mask);

const cpuMs = async (f: () => unknown) => {
  const c0 = process.cpuUsage();
  await f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];

// The full photo as the service cuts it: two bands.
const cuts = [0, 1000, 2000];
const refined = cuts.slice(0, -1).map((y0, i) => refineBand({ rgb, width: W, height: H }, low, y0, cuts[i + 1], { native: null }));
const linesJs = refined.map((r, i) => bandRows(Buffer.from(r.rgb), Buffer.from(r.alpha), null, W, cuts[i + 1] - cuts[i], 15, { native: null }).lines);
const rgba = Buffer.alloc(W * H * 4);
for (let b = 0; b < 2; b++) {
  const r = refined[b];
  for (let i = 0; i < r.alpha.length; i++) {
    const o = (b * 1000 * W + i) * 4;
    rgba[o] = r.rgb[i * 3];
    rgba[o + 1] = r.rgb[i * 3 + 1];
    rgba[o + 2] = r.rgb[i * 3 + 2];
    rgba[o + 3] = r.alpha[i];
  }
}

const cases: [string, () => unknown][] = [
  ['model input (fill, 1024²) native', () => fillModelInput(model1024, new Float32Array(3 * 1024 * 1024), { native })],
  ['model input (fill, 1024²) js', () => fillModelInput(model1024, new Float32Array(3 * 1024 * 1024), { native: null })],
  ['model output (mask+stats) native', () => maskFromOutput(out1024, 1024, { native })],
  ['model output (mask+stats) js', () => maskFromOutput(out1024, 1024, { native: null })],
  ['mask to grid native', () => reduceMask(mask1024, 1024, 1024, grid.w, grid.h, { native })],
  ['mask to grid js', () => reduceMask(mask1024, 1024, 1024, grid.w, grid.h, { native: null })],
  ['edge refine (2 bands) native', () => cuts.slice(0, -1).map((y0, i) => refineBand({ rgb, width: W, height: H }, low, y0, cuts[i + 1], { native }))],
  ['edge refine (2 bands) js', () => cuts.slice(0, -1).map((y0, i) => refineBand({ rgb, width: W, height: H }, low, y0, cuts[i + 1], { native: null }))],
  ['png rows + preview native', () => refined.map((r, i) => bandRows(Buffer.from(r.rgb), Buffer.from(r.alpha), null, W, 1000, 15, { native }))],
  ['png rows + preview js', () => refined.map((r, i) => bandRows(Buffer.from(r.rgb), Buffer.from(r.alpha), null, W, 1000, 15, { native: null }))],
  ['deflate bands native', () => linesJs.map((l, i) => deflateRows(l, i === 1, { native }))],
  ['deflate bands zlib Z_RLE level 1', () => Promise.all(linesJs.map((l, i) => deflateRows(l, i === 1, { native: null })))],
  ['deflate bands zlib default strategy level 1', () => linesJs.map((l) => zlib.deflateRawSync(l, { level: 1 }))],
  ['sharp PNG (whole RGBA, level 1, no adaptive filter)', () => sharp(rgba, { raw: { width: W, height: H, channels: 4 } }).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer()],
  ['sharp PNG (whole RGBA, level 6, default)', () => sharp(rgba, { raw: { width: W, height: H, channels: 4 } }).png().toBuffer()],
];
sharp.concurrency(1);
const results: Record<string, number> = {};
for (let r = 0; r < RUNS; r++) {
  for (const [name, f] of cases) {
    const ms = await cpuMs(f);
    (results[name] ??= [] as unknown as number) as unknown;
    ((results as unknown as Record<string, number[]>)[name] ??= []).push(ms);
  }
}
const sizes = {
  zlibRle: (await Promise.all(linesJs.map((l, i) => deflateRows(l, i === 1, { native: null })))).reduce((s, b) => s + b.idat.length, 0),
  native: (await Promise.all(linesJs.map((l, i) => deflateRows(l, i === 1, { native })))).reduce((s, b) => s + b.idat.length, 0),
  sharp1: (await sharp(rgba, { raw: { width: W, height: H, channels: 4 } }).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer()).length,
};
for (const [name, xs] of Object.entries(results as unknown as Record<string, number[]>)) console.log(`${name.padEnd(52)} ${median(xs).toFixed(1).padStart(7)} ms CPU (median of ${RUNS})`);
console.log('bytes', sizes);
