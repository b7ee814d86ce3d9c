// npm run bench -- stage-cpu: the CPU each stage of one photo costs outside the model, for a 2000x2000 JPEG,
// each stage run alone in this process (every thread's CPU, process.cpuUsage, over the stage), the
// median of BENCH_STAGE_RUNS (9). The mask is the photo's hand-drawn one at the model's 1024x1024, so no
// model runs: the figures are the work around it, stage by stage, to find what bench/cpu.ts's total is made of.
import fs from 'node:fs';
import sharp from 'sharp';
import { ImageDecoder } from '../src/adapters/images/decoder.ts';
import { CheckRasters } from '../src/adapters/images/rasters.ts';
import { ImageRenderer } from '../src/adapters/images/renderer.ts';
import { THUMB_EDGE } from '../src/adapters/images/sharp.ts';
import { MODEL_INPUT_SIZE } from '../src/adapters/mask-model.adapter.ts';
import { WorkerCutoutWriter } from '../src/imaging/cutout-writer.ts';
import { maskStatistics } from '../src/imaging/model-io.mjs';
import { CHECK_GRID } from '../src/pipeline/check/features.ts';
import { diagnose } from '../src/pipeline/diagnose.ts';
import { cutoutAtSize, gridRgb } from '../src/pipeline/segment.ts';
import { evalEntries, evalFile } from '../tools/shared-data.ts';
import { median } from './cpu.ts';

const entry = evalEntries().filter((e) => e.kind === 'product')[0];
const big = await sharp(evalFile(entry.image)).resize(2000, 2000, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
const mask = await sharp(evalFile(entry.mask))
  .resize(MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, { fit: 'fill' })
  .extractChannel(0)
  .raw()
  .toBuffer();
const { histogram, bbox } = maskStatistics(mask, MODEL_INPUT_SIZE);
const prediction = { mask, histogram, bbox, runMs: 0 };

const decoder = new ImageDecoder(100_000_000);
const rasters = new CheckRasters(100_000_000);
const renderer = new ImageRenderer(100_000_000);
const cutouts = new WorkerCutoutWriter(2);
// As the server starts it (container.ts).
await cutouts.warmUp();

const usage = () => {
  const u = process.resourceUsage();
  return { user: u.userCPUTime / 1000, system: u.systemCPUTime / 1000, faults: u.minorPageFault };
};
const stages: Record<string, number[]> = {};
const kernel: Record<string, number[]> = {};
const faults: Record<string, number[]> = {};
async function stage<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
  const u0 = usage();
  const out = await fn();
  const u1 = usage();
  (stages[name] ??= []).push(u1.user + u1.system - u0.user - u0.system);
  (kernel[name] ??= []).push(u1.system - u0.system);
  (faults[name] ??= []).push(u1.faults - u0.faults);
  return out;
}

const runs = Number(process.env.BENCH_STAGE_RUNS ?? 9);
for (let i = 0; i < runs + 1; i++) {
  const decoded = await stage('decode', () => decoder.decode(big));
  const modelInput = await stage('model input', () => decoder.toModelInput(decoded, MODEL_INPUT_SIZE));
  const prepared = await stage('hand to the cut-out writer', () => cutouts.prepare(decoded, THUMB_EDGE));
  const low = await stage('photo to the refinement grid', () => gridRgb(decoder, decoded, modelInput));
  const colours = await stage('check colours', () => rasters.checkColours(modelInput, CHECK_GRID));
  const diagnosis = await stage('check', () =>
    diagnose(
      prediction,
      { mask: rasters.checkMask(mask, MODEL_INPUT_SIZE, CHECK_GRID), rgb: colours },
      MODEL_INPUT_SIZE,
      decoded,
    ),
  );
  const cut = await stage('cut-out (refine, pixels, PNG)', async () => {
    const c = await cutoutAtSize(decoded, prediction, prepared, Promise.resolve(low));
    await c.png;
    return c;
  });
  await stage('thumbnail', async () => renderer.thumbnailRaw(await cut.preview));
  void diagnosis;
}
await cutouts.close();
const rows = Object.entries(stages).map(([name, xs]) => [name, median(xs.slice(1))] as const);
for (const [name, ms] of rows)
  console.log(
    `${ms.toFixed(1).padStart(8)} ms  ${name} (in the kernel ${median(kernel[name].slice(1)).toFixed(1)} ms, ${median(faults[name].slice(1))} page faults)`,
  );

const total = rows.reduce((s, [, ms]) => s + ms, 0);
const out = process.env.BENCH_JSON ?? 'bench/results/stage-cpu.json';
fs.writeFileSync(out, JSON.stringify({ runs, stages: Object.fromEntries(rows), total }, null, 2) + '\n');
fs.writeFileSync(
  out.replace(/\.json$/, '.md'),
  [
    '| stage | CPU, ms |',
    '| --- | ---: |',
    ...rows.map(([name, ms]) => `| ${name} | ${ms.toFixed(1)} |`),
    `| in all | ${total.toFixed(1)} |`,
    '',
  ].join('\n'),
);
console.log(`${total.toFixed(1).padStart(8)} ms  in all`);
console.log(`written to ${out} and .md`);
