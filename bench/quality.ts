// npm run bench:quality — the segmentation tiers against ground truth, on every photo of
// ../shared/eval-data: mean IoU (alpha >= 128 against mask >= 128), mean absolute alpha error (0..1),
// and how many photos fall below IoU 0.85. It runs the service's own inference stage
// (src/pipeline/segment.ts) on the service's own decode, with the default weights.
import sharp from 'sharp';
import { ImageCodec } from '../src/adapters/image-codec.adapter.ts';
import { OnnxMaskModel, MODEL_INPUT_SIZE } from '../src/adapters/mask-model.adapter.ts';
import { segment } from '../src/pipeline/segment.ts';
import type { Tier } from '../src/domain/batch.schemas.ts';
import { compareAlpha, evalEntries, evalFile, HAVE_EVAL_DATA } from '../test/helpers/eval-data.ts';

if (!HAVE_EVAL_DATA) throw new Error('npm run bench:quality reads ../shared/eval-data; set MATTE_SHARED_DIR to the shared folder');
const VARIANTS: { name: string; tier: Tier }[] = [
  { name: 'light', tier: 'light' },
  { name: 'heavy', tier: 'heavy' },
];
const only = process.env.BENCH_QUALITY_LIMIT ? Number(process.env.BENCH_QUALITY_LIMIT) : undefined;
const entries = evalEntries().slice(0, only);
const codec = new ImageCodec(100_000_000);
const model = new OnnxMaskModel({ modelPath: '', threads: 2 });
await model.ready();

type Score = { iou: number; mae: number; ms: number };
const results: Record<string, Score[]> = Object.fromEntries(VARIANTS.map((v) => [v.name, []]));
const rows: string[] = [];
for (const entry of entries) {
  const decoded = await codec.decode(evalFile(entry.image));
  const input = await codec.toModelInput(decoded, MODEL_INPUT_SIZE);
  const truth = await sharp(evalFile(entry.mask)).extractChannel(0).raw().toBuffer();
  const line = [entry.id.padEnd(26)];
  for (const { name, tier } of VARIANTS) {
    const t0 = performance.now();
    const { alpha } = await segment({ codec, model }, decoded, input, tier);
    const ms = performance.now() - t0;
    const atTruth = await sharp(alpha, { raw: { width: decoded.width, height: decoded.height, channels: 1 } }).resize(entry.width, entry.height, { fit: 'fill' }).extractChannel(0).raw().toBuffer();
    const score = { ...compareAlpha(atTruth, truth), ms };
    results[name].push(score);
    line.push(`${name} IoU ${score.iou.toFixed(3)} MAE ${score.mae.toFixed(4)}`);
  }
  rows.push(line.join('  '));
  console.log(rows[rows.length - 1]);
}
await model.close();

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`\nsegmentation on ${entries.length} eval photos (default weights)`);
console.log('tier    mean IoU  mean |alpha error|  photos < 0.85  model+merge ms/photo');
for (const { name } of VARIANTS) {
  const s = results[name];
  console.log(`${name.padEnd(7)} ${mean(s.map((x) => x.iou)).toFixed(3)}     ${mean(s.map((x) => x.mae)).toFixed(4)}              ${String(s.filter((x) => x.iou < 0.85).length).padStart(2)}             ${Math.round(mean(s.map((x) => x.ms)))}`);
}
const gain = mean(results.heavy.map((x) => x.iou)) - mean(results.light.map((x) => x.iou));
console.log(`heavy - light mean IoU: ${gain >= 0 ? '+' : ''}${gain.toFixed(3)} (target >= +0.02)`);
// By source folder, as held-back groups: the heavy tier was chosen on all 47 photos, so it should also win in each folder alone.
for (const folder of [...new Set(entries.map((e) => e.source))]) {
  const idx = entries.map((e, i) => (e.source === folder ? i : -1)).filter((i) => i >= 0);
  const m = (name: string) => mean(idx.map((i) => results[name][i].iou));
  console.log(`  ${folder.padEnd(13)} ${String(idx.length).padStart(2)} photos: light ${m('light').toFixed(3)}, heavy ${m('heavy').toFixed(3)}`);
}
