// npm run bench -- eval-photos — quality figures on the 47 photos of ../shared/eval-data as they are, with
// the default weights (the calibration set, tools/calibration/calibrate.ts, is what the check is fitted and judged on;
// these photos are a second, outside set for the shipped calibration):
//  1. the segmentation passes against ground truth: mean IoU (alpha >= 128 against mask >= 128), mean
//     absolute alpha error (0..1), photos below IoU 0.85 (the light tier: one pass of the default weights).
//  2. the automatic check (src/pipeline/check): the share of broken results (IoU < 0.85) it flags and of
//     clean results (IoU >= 0.95) it flags, out of sample: leave one photo out (both its results), and
//     by held-back source folder. The in-sample figures of the shipped calibration are printed too.
//  3. reports: the pixel check on claims generated from the ground truth (see bench/claims-eval.ts).
// The shipped calibration is judged on every result here (it was fitted on the calibration set, never on
// these photos). MATTE_QUALITY_CACHE=<dir> keeps the model's masks between runs.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { ImageDecoder } from '../src/adapters/images/decoder.ts';
import { CheckRasters } from '../src/adapters/images/rasters.ts';
import {
  OnnxMaskModel,
  MODEL_INPUT_SIZE,
  squareInput,
  type MaskPrediction,
} from '../src/adapters/mask-model.adapter.ts';
import { maskStatistics } from '../src/imaging/model-io.mjs';
import { CHECK_GRID, measure, type CheckFeatures } from '../src/pipeline/check/features.ts';
import { brokenProbability, featureVector, loadCalibration } from '../src/pipeline/check/calibration.ts';
import { compareAlpha, evalEntries, evalFile, HAVE_EVAL_DATA, type EvalEntry } from '../tools/shared-data.ts';
import { evaluateClaims, printClaims } from './claims-eval.ts';
import { heldBackFolders, leaveOnePhotoOut, tally, type Sample, type Tally } from './check-fit.ts';
import { percent as pct } from '../tools/figures.ts';
import { TRUTH_BARS } from '../src/pipeline/check/calibration.ts';

if (!HAVE_EVAL_DATA)
  throw new Error('this command reads ../shared/eval-data; set MATTE_SHARED_DIR to the shared folder');
const only = process.env.BENCH_QUALITY_LIMIT ? Number(process.env.BENCH_QUALITY_LIMIT) : undefined;
const CACHE = process.env.MATTE_QUALITY_CACHE;
const entries = evalEntries().slice(0, only);
const decoder = new ImageDecoder(100_000_000);
const rasters = new CheckRasters(100_000_000);
let model: OnnxMaskModel | undefined;

/** The light model's mask of a photo, with its run time (kept under MATTE_QUALITY_CACHE when set, by the photo's id). */
async function predict(entry: EvalEntry, input: Buffer): Promise<MaskPrediction> {
  const file = CACHE && path.join(CACHE, `${entry.id}.photo.mask`);
  if (file && fs.existsSync(file)) {
    const mask = fs.readFileSync(file);
    return { mask, ...maskStatistics(mask, MODEL_INPUT_SIZE), runMs: 0 };
  }
  model ??= new OnnxMaskModel({ modelPath: '', threads: 2 });
  await model.ready();
  const p = await model.predict(squareInput(input));
  if (file) {
    fs.mkdirSync(CACHE!, { recursive: true });
    fs.writeFileSync(file, p.mask);
  }
  return p;
}

type Score = { iou: number; mae: number; ms: number };
const TIERS = ['light'] as const;
const scores: Record<(typeof TIERS)[number], Score[]> = { light: [] };
const samples: Sample[] = [];
const sampleFeatures: CheckFeatures[] = [];
const cutouts: { entry: EvalEntry; tier: string; alpha: Buffer; rgb: Buffer; truth: Buffer }[] = [];
for (const entry of entries) {
  const decoded = await decoder.decode(evalFile(entry.image));
  const input = (await decoder.toModelInput(decoded, MODEL_INPUT_SIZE)).rgb;
  const truth = await sharp(evalFile(entry.mask)).extractChannel(0).raw().toBuffer();
  const rgb = await sharp(decoded.rgb, { raw: { width: decoded.width, height: decoded.height, channels: 3 } })
    .resize(entry.width, entry.height, { fit: 'fill' })
    .raw()
    .toBuffer();
  const light = await predict(entry, input);
  const line = [entry.id.padEnd(26)];
  for (const tier of TIERS) {
    const t0 = performance.now();
    const prediction = light;
    const alpha = await rasters.maskToSize(prediction.mask, MODEL_INPUT_SIZE, decoded);
    const ms = performance.now() - t0 + prediction.runMs;
    const atTruth = await sharp(alpha, { raw: { width: decoded.width, height: decoded.height, channels: 1 } })
      .resize(entry.width, entry.height, { fit: 'fill' })
      .extractChannel(0)
      .raw()
      .toBuffer();
    const score = { ...compareAlpha(atTruth, truth), ms };
    scores[tier].push(score);
    const evidence = measure(await rasters.checkGrid(prediction.mask, input, MODEL_INPUT_SIZE, CHECK_GRID));
    samples.push({ photo: entry.id, folder: entry.source, tier, iou: score.iou, x: featureVector(evidence.features) });
    sampleFeatures.push(evidence.features);
    cutouts.push({ entry, tier, alpha: atTruth, rgb, truth });
    line.push(`${tier} IoU ${score.iou.toFixed(3)} MAE ${score.mae.toFixed(4)}`);
  }
  console.log(line.join('  '));
}
await model?.close();

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`\n## segmentation tiers, ${entries.length} eval photos (default weights)`);
console.log('tier    mean IoU  mean |alpha error|  photos < 0.85  model+merge ms/photo');
for (const tier of TIERS) {
  const s = scores[tier];
  console.log(
    `${tier.padEnd(7)} ${mean(s.map((x) => x.iou)).toFixed(3)}     ${mean(s.map((x) => x.mae)).toFixed(4)}              ${String(s.filter((x) => x.iou < TRUTH_BARS.brokenBelow).length).padStart(2)}             ${Math.round(mean(s.map((x) => x.ms)))}`,
  );
}
for (const folder of [...new Set(entries.map((e) => e.source))]) {
  const idx = entries.map((e, i) => (e.source === folder ? i : -1)).filter((i) => i >= 0);
  const m = (tier: (typeof TIERS)[number]) => mean(idx.map((i) => scores[tier][i].iou));
  console.log(`  ${folder.padEnd(13)} ${String(idx.length).padStart(2)} photos: light ${m('light').toFixed(3)}`);
}

const row = (name: string, t: Tally) =>
  `${name.padEnd(34)} broken flagged ${String(t.brokenFlagged).padStart(2)}/${String(t.broken).padEnd(2)} ${pct(t.brokenFlagged, t.broken).padStart(4)}   clean flagged ${String(t.cleanFlagged).padStart(2)}/${String(t.clean).padEnd(2)} ${pct(t.cleanFlagged, t.clean).padStart(4)}`;
console.log(
  `\n## automatic check (broken = IoU < ${TRUTH_BARS.brokenBelow}, target >= 90% flagged; clean = IoU >= ${TRUTH_BARS.goodFrom}, target <= 5% flagged)`,
);
const loo = leaveOnePhotoOut(samples);
for (const tier of TIERS)
  console.log(
    row(
      `leave-one-photo-out, ${tier}`,
      tally(samples, loo, (s) => s.tier === tier),
    ),
  );
const all = tally(samples, loo);
console.log(row('leave-one-photo-out, both tiers', all));
console.log(`  missed: ${all.missed.join(', ') || 'none'}; false alarms: ${all.falseAlarms.join(', ') || 'none'}`);
const folders = heldBackFolders(samples);
for (const folder of new Set(samples.map((s) => s.folder))) {
  const t = tally(samples, folders, (s) => s.folder === folder);
  console.log(row(`held-back folder ${folder}`, t));
}
const shipped = loadCalibration();
const judged = sampleFeatures.map(
  (f) => brokenProbability(shipped, featureVector(f, shipped.features)) >= shipped.threshold,
);
console.log(row('shipped calibration (fitted on the calibration set)', tally(samples, judged)));

// The report check's bars were set by hand on the claims of the first seed; the second seed draws
// fresh claims (other points, other damage) that played no part in setting them.
printClaims(
  await evaluateClaims(cutouts, 20261123),
  'claims generated from the ground truth, seed 20261123 (the bars were set on these)',
);
printClaims(await evaluateClaims(cutouts, 7), 'fresh claims, seed 7 (not used to set anything)');
