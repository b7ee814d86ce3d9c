// npm run bench -- aspect: does the model cut as well at the photo's own aspect ratio as squeezed to 1024²,
// measured against the masks a person drew? ISNet is convolutional; its export fixed every upsampling to the
// traced size, and model-shape.mjs makes them follow their input, so the model runs at long side 1024 and the
// short side rounded to a multiple of 32 (aspectInputSize; ASPECT_STEP=<n> tries another): a 3:2 photo is then
// a third less work. Per real set (../shared/eval-data, ../shared/real-photos, CALIBRATION_PHOTOS), the model
// the service runs (int8; MATTE_MODEL_INT8=0 for float) squeezed and at the aspect ratio: mean IoU, the worst
// photo's change, photos better and worse by more than 0.005, the check's errors against the masks (as in
// bench:int8-gate: good results, IoU >= 0.95, flagged; broken ones, IoU < 0.85, passed) and the model's pixels
// against 1024². The aspect arm runs as the service runs it: the output stretched to the square mask the check
// reads (model-io.mjs stretchToSquare), scaled to the photo; the figure scaled straight from the model's size to
// the photo is printed beside it. The squeezed masks are the cached ones bench:int8-gate and bench:photos read.
// The int8 model with free sizes runs at optimisation level `extended` (model-session.mjs), which rounds apart from
// the service's `all`; so the same session is also run on the squeezed input, and the aspect ratio is judged
// against that too ("same level"): what is left is the aspect ratio's own effect.
// BENCH_JSON=<file> writes the figures.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import sharp from 'sharp';
import {
  ASPECT_STEP,
  aspectInputSize,
  MODEL_INPUT_SIZE,
  modelSource,
  SQUARE_INPUT as SQUARE,
} from '../src/adapters/mask-model.adapter.ts';
import { createSession, readModel } from '../src/adapters/model-session.mjs';
import { loadConfig } from '../src/config.ts';
import { fillModelInput, maskFromOutput, stretchToSquare } from '../src/imaging/model-io.mjs';
import { compareAlpha } from '../tools/shared-data.ts';
import {
  CachedMasks,
  checkErrors,
  checkFlags,
  int8Masks,
  MaskedPhotoReader,
  realFolders,
} from '../tools/calibration/real-photos.ts';

const STEP = Number(process.env.ASPECT_STEP ?? ASPECT_STEP);
const int8 = loadConfig().modelInt8;
const session = await createSession(ort, readModel(modelSource('')), { threads: 2, int8, freeSize: true });
const reader = new MaskedPhotoReader(int8 ? int8Masks() : new CachedMasks());

function errors(rows: { iou: number; red: boolean }[]) {
  const e = checkErrors(rows);
  return `good flagged ${e.goodFlagged}/${e.good}, broken passed ${e.brokenPassed}/${e.broken}`;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const out: Record<string, unknown>[] = [];
for (const { name, dir, entries } of realFolders()) {
  const squeezed: { iou: number; red: boolean }[] = [];
  const aspect: { iou: number; red: boolean }[] = [];
  const level: { iou: number; red: boolean }[] = [];
  const direct: number[] = [];
  const work: number[] = [];
  let worst = { d: Infinity, id: '' };
  let worstLevel = { d: Infinity, id: '' };
  /** The freed session's output for a model input: a probability a pixel, at the input's size. */
  const maskOf = async (input: { rgb: Buffer; width: number; height: number }) => {
    const planes = new Float32Array(input.rgb.length);
    fillModelInput(input.rgb, planes);
    const tensor = new ort.Tensor('float32', planes, [1, 3, input.height, input.width]);
    return (await session.run({ input: tensor }, ['output'])).output.data as Float32Array;
  };
  for (const e of entries) {
    const photo = await reader.read(path.join(dir, e.image), path.join(dir, e.mask));
    const { decoded } = photo;
    const input = await reader.decoder.toModelInput(decoded, aspectInputSize(decoded.width, decoded.height, STEP));
    const prob = await maskOf(input);
    const square = Buffer.from(
      maskFromOutput(stretchToSquare(prob, input.width, input.height, MODEL_INPUT_SIZE), MODEL_INPUT_SIZE).mask.buffer,
    );
    // The model's own size, bytes rounded as maskFromOutput rounds them.
    const own = Buffer.alloc(prob.length);
    for (let i = 0; i < prob.length; i++) own[i] = prob[i] <= 0 ? 0 : prob[i] >= 1 ? 255 : (prob[i] * 255 + 0.5) | 0;
    const scaled = await sharp(own, { raw: { width: input.width, height: input.height, channels: 1 } })
      .resize(decoded.width, decoded.height, { fit: 'fill', kernel: 'cubic' })
      .extractChannel(0)
      .raw()
      .toBuffer();
    direct.push(compareAlpha(scaled, photo.truth).iou);
    const a = (await photo.score(square)).iou;
    const s = (await photo.score(photo.light)).iou;
    aspect.push({ iou: a, red: await checkFlags(reader.rasters, photo, square, input) });
    squeezed.push({
      iou: s,
      red: await checkFlags(reader.rasters, photo, photo.light, { rgb: photo.input, ...SQUARE }),
    });
    const atLevel = Buffer.from(
      maskFromOutput(await maskOf({ rgb: photo.input, ...SQUARE }), MODEL_INPUT_SIZE).mask.buffer,
    );
    const l = (await photo.score(atLevel)).iou;
    level.push({ iou: l, red: await checkFlags(reader.rasters, photo, atLevel, { rgb: photo.input, ...SQUARE }) });
    work.push((input.width * input.height) / MODEL_INPUT_SIZE ** 2);
    if (a - s < worst.d) worst = { d: a - s, id: e.id };
    if (a - l < worstLevel.d) worstLevel = { d: a - l, id: e.id };
  }
  const row = {
    set: name,
    photos: entries.length,
    squeezedIou: mean(squeezed.map((r) => r.iou)),
    aspectIou: mean(aspect.map((r) => r.iou)),
    aspectDirectIou: mean(direct),
    worstChange: worst.d,
    worstPhoto: worst.id,
    better: aspect.filter((a, i) => a.iou > squeezed[i].iou + 0.005).length,
    worse: aspect.filter((a, i) => a.iou < squeezed[i].iou - 0.005).length,
    squeezedErrors: errors(squeezed),
    aspectErrors: errors(aspect),
    sameLevelIou: mean(level.map((r) => r.iou)),
    sameLevelWorstChange: worstLevel.d,
    sameLevelWorstPhoto: worstLevel.id,
    sameLevelWorse: aspect.filter((a, i) => a.iou < level[i].iou - 0.005).length,
    sameLevelErrors: errors(level),
    work: mean(work),
  };
  out.push(row);
  const signed = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(4)}`;
  console.log(
    `${name}: ${row.photos} photos; mean IoU squeezed ${row.squeezedIou.toFixed(4)}, aspect ${row.aspectIou.toFixed(4)} ` +
      `(${signed(row.aspectIou - row.squeezedIou)}; scaled straight from the model's size ${row.aspectDirectIou.toFixed(4)}); ` +
      `worst photo ${signed(row.worstChange)} (${row.worstPhoto}); better ${row.better}, worse ${row.worse} by > 0.005; ` +
      `the check: squeezed ${row.squeezedErrors}, aspect ${row.aspectErrors}; model pixels ${(row.work * 100).toFixed(0)}% of 1024²`,
  );
  console.log(
    `  same level: squeezed ${row.sameLevelIou.toFixed(4)}; aspect ${signed(row.aspectIou - row.sameLevelIou)}, ` +
      `worst photo ${signed(row.sameLevelWorstChange)} (${row.sameLevelWorstPhoto}), worse ${row.sameLevelWorse} by > 0.005; ` +
      `the check: ${row.sameLevelErrors}`,
  );
}
await reader.close();
await session.release();
console.log(`(the ${int8 ? 'int8' : 'float'} model; the short side a multiple of ${STEP})`);
if (process.env.BENCH_JSON)
  fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify({ step: STEP, int8, sets: out }, null, 2));
