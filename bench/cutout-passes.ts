// npm run bench -- cutout-passes: the cut-out writer's three pixel passes (the mask to the refinement grid, the
// edge refinement, the RGBA layout with the thumbnail's sums), in JavaScript and in C (native/cutout.c), each
// alone in one thread on a whole 2000x2000 photo: CPU ms, the median of BENCH_PASS_RUNS (9) interleaved runs.
// Three photos, each squeezed to 2000x2000: the stage bench's (eval-data's first product, its drawn mask standing
// for the model's: sharp edges), the same photo with the int8 model's mask (the speed-check's single photo), and
// eval-data's first photo (gerbera flowers), whose int8 mask is soft over half the grid: the refinement's worst.
// Both implementations give the same bytes (test/unit/native-cutout.test.ts); this checks that too.
import fs from 'node:fs';
import sharp from 'sharp';
import { ImageDecoder, type DecodedImage } from '../src/adapters/images/decoder.ts';
import { MODEL_INPUT_SIZE } from '../src/adapters/mask-model.adapter.ts';
import { thumbnailFactor } from '../src/imaging/band-cuts.mjs';
import { REFINE_DEFAULTS, refineGrid, refineRows } from '../src/imaging/edge-refine.mjs';
import { reduceArea } from '../src/imaging/mask-reduce.mjs';
import { nativeCutout } from '../src/imaging/native.mjs';
import { bandRgba } from '../src/imaging/rgba-bands.mjs';
import { gridRgb } from '../src/pipeline/segment.ts';
import { int8Masks } from '../tools/calibration/real-photos.ts';
import { evalEntries, evalFile } from '../tools/shared-data.ts';
import { median } from './cpu.ts';

if (!nativeCutout) throw new Error('the C passes are not built: run npm install with a C compiler');
const native = nativeCutout;
const runs = Number(process.env.BENCH_PASS_RUNS ?? 9);
const decoder = new ImageDecoder(100_000_000);
const { grid, radius, eps, steepen } = REFINE_DEFAULTS;

async function photo(name: string, file: string, mask: (bytes: Buffer, input: Buffer) => Promise<Buffer>) {
  const bytes = await sharp(evalFile(file)).resize(2000, 2000, { fit: 'fill' }).jpeg({ quality: 92 }).toBuffer();
  const decoded = await decoder.decode(bytes);
  const input = await decoder.toModelInput(decoded, MODEL_INPUT_SIZE);
  return { name, decoded, input, mask: await mask(bytes, input.rgb) };
}

const product = evalEntries().filter((e) => e.kind === 'product')[0];
const first = evalEntries()[0];
const masks = int8Masks();
const photos = [
  await photo('the stage bench photo (a drawn mask)', product.image, () =>
    sharp(evalFile(product.mask))
      .resize(MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, { fit: 'fill' })
      .extractChannel(0)
      .raw()
      .toBuffer(),
  ),
  await photo("the same photo, the int8 model's mask (the speed-check's single photo)", product.image, (bytes, input) =>
    masks.mask(bytes, input),
  ),
  await photo(`${first.id}, the int8 model's mask (soft over half the grid)`, first.image, (bytes, input) =>
    masks.mask(bytes, input),
  ),
];
await masks.close();

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const same = (a: Uint8Array, b: Uint8Array) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

interface Row {
  photo: string;
  softCells: number;
  passes: Record<string, { javascript: number; c: number }>;
}
const rows: Row[] = [];
for (const p of photos) {
  const { decoded, mask } = p;
  const { width: W, height: H } = decoded as DecodedImage;
  const g = refineGrid(W, H);
  const lowRgb = await gridRgb(decoder, decoded, p.input);
  const lowAlpha = reduceArea(mask, MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, g.w, g.h);
  const factor = thumbnailFactor(Math.max(W, H), 500);
  const t: Record<string, number[]> = {};
  const time = <T>(name: string, fn: () => T): T => {
    const c0 = cpu();
    const out = fn();
    (t[name] ??= []).push(cpu() - c0);
    return out;
  };
  const cAlpha = new Uint8Array(W * H);
  const [jsOut, cOut] = [new Uint8Array(W * H * 4), new Uint8Array(W * H * 4)];
  for (let i = 0; i < runs + 1; i++) {
    const jsReduced = time('js reduce', () => reduceArea(mask, MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, g.w, g.h));
    const cReduced = time('c reduce', () => native.reduceArea(mask, MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, g.w, g.h));
    const [jsRgb, cRgb] = [Buffer.from(decoded.rgb), Buffer.from(decoded.rgb)];
    const low = { rgb: lowRgb, alpha: lowAlpha };
    const js = time('js refine', () =>
      refineRows({ rgb: jsRgb, alpha: null, width: W, height: H }, { low, inPlace: true }, 0, H),
    );
    time('c refine', () => native.refineRows(cRgb, W, H, lowRgb, lowAlpha, 0, H, grid, radius, eps, steepen, cAlpha));
    const jsAlpha = Uint8Array.from(js.alpha);
    const cAlphaCopy = Uint8Array.from(cAlpha);
    time('js rgba', () => bandRgba(jsRgb, jsAlpha, null, W, H, factor, jsOut));
    time('c rgba', () => native.bandRgba(cRgb, cAlphaCopy, null, W, H, factor, cOut));
    if (!same(jsReduced, cReduced) || !same(jsRgb, cRgb) || !same(jsOut, cOut))
      throw new Error(`the C passes gave other bytes than the JavaScript on ${p.name}`);
  }
  let soft = 0;
  for (const a of lowAlpha) if (a !== 0 && a !== 255) soft++;
  const m = (name: string) => Math.round(median(t[name].slice(1)) * 10) / 10;
  rows.push({
    photo: p.name,
    softCells: Math.round((soft / lowAlpha.length) * 1000) / 10,
    passes: Object.fromEntries(
      ['reduce', 'refine', 'rgba'].map((k) => [k, { javascript: m(`js ${k}`), c: m(`c ${k}`) }]),
    ),
  });
}

const names = { reduce: 'the mask to the grid', refine: 'the edge refinement', rgba: 'the RGBA layout and sums' };
const lines = [
  `| photo | soft grid cells | ${Object.values(names).join(' | ')} | in all |`,
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map((r) => {
    const cells = Object.keys(names).map((k) => `${r.passes[k].javascript} → ${r.passes[k].c}`);
    const sum = (key: 'javascript' | 'c') =>
      Object.values(r.passes)
        .reduce((s, v) => s + v[key], 0)
        .toFixed(1);
    return `| ${r.photo} | ${r.softCells}% | ${cells.join(' | ')} | ${sum('javascript')} → ${sum('c')} |`;
  }),
  '',
  `CPU ms, one thread, JavaScript → C, the median of ${runs} interleaved runs (npm run bench -- cutout-passes).`,
  '',
];
fs.writeFileSync('bench/results/cutout-passes.json', `${JSON.stringify({ runs, rows }, null, 2)}\n`);
fs.writeFileSync('bench/results/cutout-passes.md', lines.join('\n'));
console.log(lines.join('\n'));
console.log('written to bench/results/cutout-passes.json and .md');
