// npm run bench -- int8-ablation: what each of the int8 model's roundings costs, measured apart, against the float
// model's masks on the odd entries of ../shared/real-photos (164 horses: the half npm run bench -- int8 does not judge
// on). For each variant: how far its masks are from float's (mean absolute difference, 0-255), the worst IoU change
// against the drawn masks, and how many of the check's verdicts differ. Variants: the weights alone rounded (7 bits
// as the int8 model rounds them, and the full 8 bits), the activations alone, the costliest convolutions alone, and
// both roundings (the int8 model). Also counted: how many photos the float model leaves within 0.001 and 0.002 of the
// check's bar. Why: the verdicts are one of the gates for making int8 the default (docs/performance.md, "int8"), and
// this shows whether any finer or partial quantization could meet it. Writes bench/results/int8-ablation.{md,json}.
// About 35 minutes on two cores (the float masks are cached under .bench/photos/ with npm run bench -- photos').
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { fromBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import { modelSource, MODEL_INPUT_SIZE, OnnxMaskModel, squareInput } from '../src/adapters/mask-model.adapter.ts';
import { float16ToFloat32 } from '../src/adapters/model-float32.mjs';
import {
  quantizedValues,
  quantizeInt8,
  withOutputs,
  type Calibration,
  type Rounding,
} from '../src/adapters/model-int8.mjs';
import { INT8_CALIBRATION_FILE, readModel } from '../src/adapters/model-session.mjs';
import { MaskedPhotoReader } from '../tools/calibration/real-photos.ts';
import { SHARED_DIR } from '../tools/shared-data.ts';
import { brokenProbabilityOf, CHECK_BAR } from './int8.ts';

interface Variant {
  name: string;
  rounding: Rounding;
  /** Only the N costliest convolutions quantized (multiply-adds at 1024²); the others stay float. */
  costliest?: number;
}

const VARIANTS: Variant[] = [
  {
    name: 'the weights alone, to 7 bits as the int8 model rounds them (activations float)',
    rounding: { activations: false },
  },
  { name: 'the weights alone, to the full 8 bits (±127)', rounding: { activations: false, weightLevels: 127 } },
  { name: 'the activations alone (weights float)', rounding: { weights: false } },
  { name: 'the 14 costliest convolutions only (the rest float)', rounding: {}, costliest: 14 },
  { name: 'both: the int8 model', rounding: {} },
];

interface Row {
  name: string;
  /** Mean over the photos of the masks' mean absolute difference from float's, 0-255. */
  masksApart: number;
  worstChange: number;
  worstPhoto: string;
  verdictsDiffer: number;
}

/** The quantized convolutions by their cost (multiply-adds for a 1024² input), costliest first. */
async function byCost(float32: Uint8Array): Promise<string[]> {
  const graph = fromBinary(ModelProtoSchema, float32).graph!;
  const dims = new Map(graph.initializer.map((t) => [t.name, t.dims.map(Number)]));
  const { convs } = quantizedValues(graph);
  const names = convs.map((c) => c.output[0]);
  const session = await ort.InferenceSession.create(withOutputs(float32, names), { intraOpNumThreads: 2 });
  const size = MODEL_INPUT_SIZE;
  const out = await session.run(
    { input: new ort.Tensor('float32', new Float32Array(3 * size * size), [1, 3, size, size]) },
    names,
  );
  const cost = new Map(
    convs.map((c) => {
      const [, , h, w] = out[c.output[0]].dims;
      return [c.output[0], h * w * dims.get(c.input[1])!.reduce((a, b) => a * b, 1)];
    }),
  );
  await session.release();
  return names.sort((a, b) => cost.get(b)! - cost.get(a)!);
}

if (!SHARED_DIR) throw new Error('this bench reads ../shared/real-photos; set MATTE_SHARED_DIR');
const dir = path.join(SHARED_DIR, 'real-photos');
const photos = (
  JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { id: string; image: string; mask: string }[]
).filter((_, i) => i % 2 === 1);
const calibration = JSON.parse(fs.readFileSync(INT8_CALIBRATION_FILE, 'utf8')) as Calibration;
const shipped = readModel(modelSource());
const float32 = float16ToFloat32(shipped) ?? shipped;
const ranked = await byCost(float32);
const reader = new MaskedPhotoReader();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-ablation-'));

/** The float model's result on each photo: the check's probability and the IoU against the drawn mask. */
const floatResults: { probability: number; iou: number }[] = [];
for (const e of photos) {
  const photo = await reader.read(path.join(dir, e.image), path.join(dir, e.mask));
  floatResults.push({
    probability: await brokenProbabilityOf(photo.light, photo.input),
    iou: (await photo.score(photo.light)).iou,
  });
}
const near = (d: number) => floatResults.filter((r) => Math.abs(r.probability - CHECK_BAR) < d).length;

const rows: Row[] = [];
for (const variant of VARIANTS) {
  const float = variant.costliest
    ? [...(calibration.float ?? []), ...ranked.slice(variant.costliest)]
    : calibration.float;
  const file = path.join(tmp, 'variant.onnx');
  fs.writeFileSync(file, quantizeInt8(float32, { ...calibration, float }, variant.rounding));
  const model = new OnnxMaskModel({ modelPath: file, threads: 2, float32: false });
  await model.ready();
  const row: Row = { name: variant.name, masksApart: 0, worstChange: Infinity, worstPhoto: '', verdictsDiffer: 0 };
  for (const [k, e] of photos.entries()) {
    const photo = await reader.read(path.join(dir, e.image), path.join(dir, e.mask));
    const mask = (await model.predict(squareInput(photo.input))).mask;
    let apart = 0;
    for (let i = 0; i < mask.length; i++) apart += Math.abs(mask[i] - photo.light[i]);
    row.masksApart += apart / mask.length / photos.length;
    const change = (await photo.score(mask)).iou - floatResults[k].iou;
    if (change < row.worstChange) Object.assign(row, { worstChange: change, worstPhoto: e.id });
    const flagged = (await brokenProbabilityOf(mask, photo.input)) >= CHECK_BAR;
    if (flagged !== floatResults[k].probability >= CHECK_BAR) row.verdictsDiffer++;
  }
  await model.close();
  rows.push(row);
  console.log(
    `${row.name}: masks ${row.masksApart.toFixed(2)} apart, worst ${row.worstChange.toFixed(4)} (${row.worstPhoto}), ${row.verdictsDiffer} verdicts differ`,
  );
}
await reader.close();
fs.rmSync(tmp, { recursive: true, force: true });

const allowed = Math.floor(photos.length * 0.03);
const lines = [
  `# int8 ablation (npm run bench -- int8-ablation, ${new Date().toISOString().slice(0, 16)} UTC)`,
  '',
  `${photos.length} horses of ../shared/real-photos (its odd entries), each variant against the float model's masks. The check's bar ${CHECK_BAR.toFixed(5)}: the float model leaves ${near(0.001)} photos within 0.001 of it, ${near(0.002)} within 0.002. The gate for the default allows ${allowed} verdicts that differ (97%).`,
  '',
  '| what is quantized | masks apart (mean, of 255) | worst IoU change (photo) | verdicts that differ |',
  '| --- | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.masksApart.toFixed(2)} | ${r.worstChange.toFixed(4)} (${r.worstPhoto}) | ${r.verdictsDiffer} |`,
  ),
  '',
];
const results = path.join(import.meta.dirname, 'results');
fs.writeFileSync(path.join(results, 'int8-ablation.md'), lines.join('\n'));
fs.writeFileSync(
  path.join(results, 'int8-ablation.json'),
  `${JSON.stringify({ photos: photos.length, bar: CHECK_BAR, near: { 0.001: near(0.001), 0.002: near(0.002) }, rows }, null, 2)}\n`,
);
console.log(lines.join('\n'));
