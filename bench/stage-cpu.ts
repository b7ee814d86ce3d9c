// npm run bench -- stage-cpu: the CPU each stage of one photo costs outside the model, for a 2000x2000 JPEG,
// each stage run alone in this process (every thread's CPU, process.cpuUsage, over the stage). The mask is the
// photo's hand-drawn one at the model's 1024x1024, so no model runs: the figures are the work around it, stage by
// stage, to find what bench/cpu.ts's total is made of. The process runs with glibc's malloc as `npm start` sets it
// (bin/malloc-tuning.sh), and reports two medians of BENCH_STAGE_RUNS (9) photos each: a fresh process's first
// photos, whose large buffers still fault in fresh memory (on a virtual machine about 30 ms of kernel time a photo),
// and the photos after BENCH_STAGE_WARM (40) more, once the process holds the memory it reuses.
// BENCH_STAGE_PHOTO=eval: the same eval photo as eval-data has it (800x524, enlarged for the model, as the
// speed-check's batch photos are), written to bench/results/stage-cpu-eval.json and .md.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
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

// Run again under the server's malloc settings, unless this is that run.
const TUNING = path.resolve(import.meta.dirname, '../bin/malloc-tuning.sh');
if (process.env.MATTE_BENCH_MALLOC_TUNED !== '1') {
  const again = spawnSync(
    'sh',
    ['-c', '. "$0" && exec "$@"', TUNING, process.execPath, ...process.execArgv, import.meta.filename],
    { stdio: 'inherit', env: { ...process.env, MATTE_BENCH_MALLOC_TUNED: '1' } },
  );
  process.exit(again.status ?? 1);
}

const entry = evalEntries().filter((e) => e.kind === 'product')[0];
const asStored = process.env.BENCH_STAGE_PHOTO === 'eval';
const big = asStored
  ? evalFile(entry.image)
  : await sharp(evalFile(entry.image)).resize(2000, 2000, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
const photoName = asStored ? `an eval photo as stored (${entry.width}x${entry.height} JPEG)` : 'a 2000x2000 JPEG';
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
const warm = Number(process.env.BENCH_STAGE_WARM ?? 40);
// The first photo is left out (code compiled, threads started); then `runs` fresh, `warm` unmeasured, `runs` settled.
for (let i = 0; i < 1 + runs + warm + runs; i++) {
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

const fresh = (xs: number[]) => median(xs.slice(1, 1 + runs));
const settled = (xs: number[]) => median(xs.slice(-runs));
const names = Object.keys(stages);
/** Each stage's median by `pick`, and their sum. */
function summary(pick: (xs: number[]) => number) {
  const byStage = Object.fromEntries(names.map((name) => [name, pick(stages[name])]));
  return { stages: byStage, total: names.reduce((sum, name) => sum + byStage[name], 0) };
}
const figures = { fresh: summary(fresh), settled: summary(settled) };
for (const name of names)
  console.log(
    `${name}: fresh ${figures.fresh.stages[name].toFixed(1)} ms (in the kernel ${fresh(kernel[name]).toFixed(1)}, ${fresh(faults[name])} page faults), settled ${figures.settled.stages[name].toFixed(1)} ms (in the kernel ${settled(kernel[name]).toFixed(1)}, ${settled(faults[name])} page faults)`,
  );
console.log(`in all: fresh ${figures.fresh.total.toFixed(1)} ms, settled ${figures.settled.total.toFixed(1)} ms`);

const out = process.env.BENCH_JSON ?? (asStored ? 'bench/results/stage-cpu-eval.json' : 'bench/results/stage-cpu.json');
fs.writeFileSync(out, JSON.stringify({ photo: photoName, runs, warm, ...figures }, null, 2) + '\n');
fs.writeFileSync(
  out.replace(/\.json$/, '.md'),
  [
    `CPU outside the model for ${photoName}, ms: medians of ${runs} photos, fresh (a new process's first photos) and settled (after ${warm} more).`,
    '',
    '| stage | fresh | settled |',
    '| --- | ---: | ---: |',
    ...names.map(
      (name) => `| ${name} | ${figures.fresh.stages[name].toFixed(1)} | ${figures.settled.stages[name].toFixed(1)} |`,
    ),
    `| in all | ${figures.fresh.total.toFixed(1)} | ${figures.settled.total.toFixed(1)} |`,
    '',
  ].join('\n'),
);
console.log(`written to ${out} and .md`);
