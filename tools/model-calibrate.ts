// npm run model -- calibrate: writes src/adapters/model-int8.calibration.json, the activation ranges the int8
// model is quantized with (src/adapters/model-int8.mjs), from the shipped ISNet weights run in float32 on
// the calibration half of ../shared/eval-data (every other photo of its manifest, from the first; the other
// half is kept to judge the int8 model on: npm run bench -- int8), each photo as it is and as a small copy of it.
//
// Each quantized value's range runs from the lowest to the highest, over the photos, of each photo's 0.01st
// and 99.99th percentile (a histogram of 16,384 bins between the photo's own minimum and maximum). The
// photos are the calibration half as it is and reduced to fit SMALL_COPIES (JPEG at quality 90, as a seller's
// small photo arrives): the model sees every photo at 1024², and a photo of 250 px upscaled fourfold sets
// values the eval photos (600-800 px) never reach. Chosen by measurement on the real photos of horses
// (195-560 px) the bench does not judge on (docs/performance.md, "int8"): the plain extremes leave too few
// levels for the rest (these activations have rare extremes up to 90 times a typical photo's); the
// 99.999th percentile of the eval photos alone lost up to 0.07 IoU on them, 0.02 with this rule.
// Six small convolutions stay in float (KEEP_FLOAT), found by measuring one at a time (docs/performance.md, "int8").
// The ranges are written to 5 significant digits, so that a run on another CPU, whose float sums differ in
// their last bits, writes the same file.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import sharp from 'sharp';
import { fromBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import { ImageDecoder } from '../src/adapters/images/decoder.ts';
import { MODEL_INPUT_SIZE, modelSource } from '../src/adapters/mask-model.adapter.ts';
import { float16ToFloat32 } from '../src/adapters/model-float32.mjs';
import { MODEL_OUTPUT, withOnlyOutput } from '../src/adapters/model-outputs.mjs';
import { QUANTIZER_VERSION, quantizedValues, withOutputs, type Calibration } from '../src/adapters/model-int8.mjs';
import { INT8_CALIBRATION_FILE, readModel } from '../src/adapters/model-session.mjs';
import { fillModelInput } from '../src/imaging/model-io.mjs';
import { inRepoStyle } from './repo-style.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from './shared-data.ts';

/** The lower and upper tail left out of each photo's range. */
const TAIL = 0.0001;
/** The small copies of each calibration photo, by the longest side they are reduced to fit. */
const SMALL_COPIES = [400, 256];
const BINS = 16384;
/**
 * The convolutions left in float, by their output's name. Each of the 113 was taken back to float alone and the
 * mask compared with the float model's on the four photos of the calibration half and the odd horses that int8
 * changed most (alphamatting-gt01, horses 196, 298 and 320); these six moved the masks most towards float's of
 * those that cost almost nothing (1.4 of 159.5 GMAC, all at 16-256 px). Kept together, on the calibration
 * half, the held-out half and the 164 odd horses, the worst IoU change went from -0.053 to -0.015 and the verdicts
 * that differ from 10 to 7, for about 3% of the int8 model's time. The two costly ones that also ranked high
 * (stage1/rebnconv1, stage5d/rebnconvin: 4.8 GMAC each) took 20-27% more of its time for little more.
 */
export const KEEP_FLOAT = [
  'stage1/rebnconv3d',
  'stage3/rebnconv2',
  'stage3/rebnconv4',
  'stage3/rebnconv4d',
  'stage6/rebnconvin',
  'stage6/rebnconv1',
].map((block) => `/${block}/conv_s1/Conv_output_0`);

/** The photos the ranges are taken from: every other one of the manifest, from the first. */
export function calibrationPhotos<T>(entries: T[]): T[] {
  return entries.filter((_, i) => i % 2 === 0);
}

/** The photos kept to judge the int8 model on: the other half. */
export function heldOutPhotos<T>(entries: T[]): T[] {
  return entries.filter((_, i) => i % 2 === 1);
}

/** The 0.01st and 99.99th percentile of a photo's values (their histogram between the extremes). */
function tails(values: Float32Array): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const span = hi - lo || 1;
  const histogram = new Uint32Array(BINS);
  for (const v of values) histogram[Math.min(BINS - 1, ((v - lo) / span) * BINS) | 0]++;
  const at = (q: number) => {
    let seen = 0;
    for (let b = 0; b < BINS; b++) {
      seen += histogram[b];
      if (seen >= q * values.length) return lo + ((b + 1) / BINS) * span;
    }
    return hi;
  };
  return [at(TAIL), at(1 - TAIL)];
}

const significant = (v: number) => Number(v.toPrecision(5));

/** A photo reduced to fit `fit` px, as a seller's small photo arrives (JPEG). */
function smallCopy(jpeg: Buffer, fit: number): Promise<Buffer> {
  return sharp(jpeg).rotate().resize(fit, fit, { fit: 'inside' }).jpeg({ quality: 90 }).toBuffer();
}

async function main(): Promise<void> {
  if (!HAVE_EVAL_DATA)
    throw new Error('this command reads ../shared/eval-data; set MATTE_SHARED_DIR to the shared folder');
  const shipped = readModel(modelSource());
  // Cut down to the mask as runnableModel cuts it before quantizing (model-session.mjs).
  const widened = float16ToFloat32(shipped) ?? shipped;
  const float32 = withOnlyOutput(widened, MODEL_OUTPUT) ?? widened;
  const { values } = quantizedValues(fromBinary(ModelProtoSchema, float32).graph!);
  const names = [...values];
  const session = await ort.InferenceSession.create(withOutputs(float32, names), {
    intraOpNumThreads: 2,
    graphOptimizationLevel: 'basic',
  });
  const decoder = new ImageDecoder(100_000_000);
  const photos = calibrationPhotos(evalEntries());
  const ranges = new Map(names.map((n) => [n, [Infinity, -Infinity]]));
  const input = new Float32Array(3 * MODEL_INPUT_SIZE * MODEL_INPUT_SIZE);
  for (const entry of photos) {
    const jpeg = evalFile(entry.image);
    for (const fit of [null, ...SMALL_COPIES]) {
      const decoded = await decoder.decode(fit === null ? jpeg : await smallCopy(jpeg, fit));
      fillModelInput((await decoder.toModelInput(decoded, MODEL_INPUT_SIZE)).rgb, input);
      const out = await session.run(
        { input: new ort.Tensor('float32', input, [1, 3, MODEL_INPUT_SIZE, MODEL_INPUT_SIZE]) },
        names,
      );
      for (const name of names) {
        const [lo, hi] = tails(out[name].data as Float32Array);
        const range = ranges.get(name)!;
        range[0] = Math.min(range[0], lo);
        range[1] = Math.max(range[1], hi);
        out[name].dispose();
      }
      console.error(`${entry.id}${fit === null ? '' : ` at ${fit} px`}: ${names.length} values measured`);
    }
  }
  await session.release();
  const calibration: Calibration & { about: string; photos: string[] } = {
    about: `Activation ranges for the int8 model (src/adapters/model-int8.mjs), written by npm run model -- calibrate: the lowest 0.01st and the highest 99.99th percentile of the photos listed, each as it is and reduced to fit ${SMALL_COPIES.join(' and ')} px; the convolutions under float stay in float.`,
    model: createHash('sha256').update(shipped).digest('hex'),
    quantizer: QUANTIZER_VERSION,
    photos: photos.map((e) => e.id),
    float: KEEP_FLOAT,
    ranges: Object.fromEntries(
      names.map((n) => {
        const [lo, hi] = ranges.get(n)!;
        return [n, [significant(lo), significant(hi)]];
      }),
    ),
  };
  fs.writeFileSync(INT8_CALIBRATION_FILE, await inRepoStyle(INT8_CALIBRATION_FILE, JSON.stringify(calibration)));
  console.log(
    `${path.relative(process.cwd(), INT8_CALIBRATION_FILE)}: ${names.length} ranges from ${photos.length} photos`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
