// npm run bench -- int8 (and a section of npm run bench -- all): the int8 model (src/adapters/model-int8.mjs) against
// the float model it is made from, side by side in one run.
//  Quality, on photos the int8 ranges were not taken from: the held-out half of ../shared/eval-data
//  (tools/model-calibrate.ts heldOutPhotos), composites of those subjects over seller-like backgrounds
//  (tools/calibration/calibration-set.ts), and ../shared/real-photos (every BENCH_INT8_REAL_EVERY-th, default 4). Per
//  set: mean IoU of each model against the drawn masks, the int8 model's mean and worst change, the check's
//  verdict on both (the shipped calibration), and the refined alpha's error within 3 px of the true edge at
//  full resolution. The gates for making int8 the default: mean IoU -0.003 at most, no photo -0.03, the
//  same verdict on 97% of photos, edge error at most 2% worse. For scale, the check's own noise: the float
//  model's verdict on each photo against its verdict on the same photo saved again as JPEG at quality 95.
//  Speed: the two models bare (session.run alone, onnxruntime's defaults, each in a process of its own) in
//  alternating rounds; batches through the API on a server with each (MATTE_MODEL_INT8=0 and the default int8);
//  @imgly/background-removal-node (`medium`, the same weights) on the same photos.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { ImageDecoder } from '../src/adapters/images/decoder.ts';
import { CheckRasters } from '../src/adapters/images/rasters.ts';
import { MODEL_INPUT_SIZE, OnnxMaskModel, squareInput } from '../src/adapters/mask-model.adapter.ts';
import { CHECK_GRID, measure } from '../src/pipeline/check/features.ts';
import { brokenProbability, featureVector, loadCalibration } from '../src/pipeline/check/calibration.ts';
import { heldOutPhotos } from '../tools/model-calibrate.ts';
import { compareAlpha, evalEntries, evalFile, HAVE_EVAL_DATA, SHARED_DIR } from '../tools/shared-data.ts';
import { startServer } from '../test/helpers/server.ts';
import { BareModel } from './bare-model.ts';
import { runBatch, type Api } from './batch.ts';
import { composite, generator } from '../tools/calibration/calibration-set.ts';
import { RESAVE_QUALITY, resavedJpeg } from '../tools/calibration/real-photos.ts';
import { alphaErrors, refinedAlpha } from './edges.ts';
import { median } from './cpu.ts';

interface Photo {
  id: string;
  kind: string;
  jpeg: Buffer;
  /** The drawn mask, one channel. */
  truth: { data: Buffer; width: number; height: number };
}

interface Judged {
  iou: number;
  flagged: boolean;
  edgeError: number;
}

export interface SetFigures {
  name: string;
  photos: number;
  floatIou: number;
  int8Iou: number;
  meanChange: number;
  worstChange: number;
  worstPhoto: string;
  sameVerdict: number;
  /** The check's own noise: the float model's verdict on each photo against its verdict on the photo saved again. */
  resavedSameVerdict: number;
  floatFlagged: number;
  int8Flagged: number;
  floatEdgeError: number;
  int8EdgeError: number;
}

export interface SpeedFigures {
  photos: number;
  rounds: number;
  bareFloatMs: number;
  bareInt8Ms: number;
  bareRatio: number;
  batchFloatMs: number;
  batchInt8Ms: number;
  batchRatio: number;
  imglyMs: number | null;
}

const decoder = new ImageDecoder(100_000_000);
const rasters = new CheckRasters(100_000_000);
const check = loadCalibration();

/** The check's bar: a result whose broken probability is at or above it is flagged. */
export const CHECK_BAR = check.threshold;

/** The check's broken probability for a mask of the model's input, as the service computes it. */
export async function brokenProbabilityOf(mask: Buffer, input: Buffer): Promise<number> {
  const evidence = measure(await rasters.checkGrid(mask, input, MODEL_INPUT_SIZE, CHECK_GRID));
  return brokenProbability(check, featureVector(evidence.features, check.features));
}

/** The check's verdict on a mask, as the service decides it. */
async function flagged(mask: Buffer, input: Buffer): Promise<boolean> {
  return (await brokenProbabilityOf(mask, input)) >= CHECK_BAR;
}

/** The model's verdict on the photo decoded and saved again as JPEG (upright, as the service decodes it). */
async function flaggedResaved(model: OnnxMaskModel, photo: Photo): Promise<boolean> {
  const again = await resavedJpeg(photo.jpeg);
  const input = (await decoder.toModelInput(await decoder.decode(again), MODEL_INPUT_SIZE)).rgb;
  return flagged((await model.predict(squareInput(input))).mask, input);
}

async function judge(models: OnnxMaskModel[], photo: Photo): Promise<Judged[]> {
  const decoded = await decoder.decode(photo.jpeg);
  const t = photo.truth;
  // At the photo's size (a mask drawn on the photo before its EXIF rotation, or at another scale, is fitted to it).
  const truth =
    t.width === decoded.width && t.height === decoded.height
      ? t.data
      : await sharp(t.data, { raw: { width: t.width, height: t.height, channels: 1 } })
          .resize(decoded.width, decoded.height, { fit: 'fill' })
          .extractChannel(0)
          .raw()
          .toBuffer();
  const input = (await decoder.toModelInput(decoded, MODEL_INPUT_SIZE)).rgb;
  const errors = alphaErrors(truth, decoded.width, decoded.height);
  const out: Judged[] = [];
  for (const model of models) {
    const p = await model.predict(squareInput(input));
    const alpha = await rasters.maskToSize(p.mask, MODEL_INPUT_SIZE, decoded);
    out.push({
      iou: compareAlpha(alpha, truth).iou,
      flagged: await flagged(p.mask, input),
      edgeError: errors(await refinedAlpha(decoder, decoded, p.mask)).edgeMae,
    });
  }
  return out;
}

async function maskAt(file: string): Promise<Photo['truth']> {
  const { data, info } = await sharp(file).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** The three sets the gates are judged on. */
async function* sets(): AsyncGenerator<{ name: string; photos: AsyncGenerator<Photo> }> {
  const heldOut = heldOutPhotos(evalEntries());
  yield {
    name: 'eval-data, held-out half',
    photos: (async function* () {
      for (const e of heldOut)
        yield {
          id: e.id,
          kind: e.kind,
          jpeg: evalFile(e.image),
          truth: await maskAt(path.join(SHARED_DIR!, 'eval-data', e.mask)),
        };
    })(),
  };
  const perSubject = Number(process.env.BENCH_INT8_COMPOSITES ?? 2);
  yield {
    name: `composites of the held-out subjects (${perSubject} each)`,
    photos: (async function* () {
      const rng = generator(20261128);
      const all = evalEntries();
      for (const e of heldOut) {
        for (let k = 0; k < perSubject; k++) {
          const c = await composite(e, k, rng, all);
          yield {
            id: `${e.id}.c${k} (${c.family})`,
            kind: e.kind,
            jpeg: c.jpeg,
            truth: { data: c.known, width: c.width, height: c.height },
          };
        }
      }
    })(),
  };
  const realDir = path.join(SHARED_DIR!, 'real-photos');
  if (fs.existsSync(path.join(realDir, 'manifest.json'))) {
    const every = Number(process.env.BENCH_INT8_REAL_EVERY ?? 4);
    const real = (
      JSON.parse(fs.readFileSync(path.join(realDir, 'manifest.json'), 'utf8')) as {
        id: string;
        kind?: string;
        image: string;
        mask: string;
      }[]
    ).filter((_, i) => i % every === 0);
    yield {
      name: `real-photos (1 in ${every})`,
      photos: (async function* () {
        for (const e of real)
          yield {
            id: e.id,
            kind: e.kind ?? 'real',
            jpeg: fs.readFileSync(path.join(realDir, e.image)),
            truth: await maskAt(path.join(realDir, e.mask)),
          };
      })(),
    };
  }
}

export async function int8Quality(log: (line: string) => void = () => {}): Promise<SetFigures[]> {
  if (!HAVE_EVAL_DATA) throw new Error('the int8 figures read ../shared/eval-data; set MATTE_SHARED_DIR');
  const float = new OnnxMaskModel({ modelPath: '', threads: 2, int8: false });
  const int8 = new OnnxMaskModel({ modelPath: '', threads: 2, int8: true });
  await Promise.all([float.ready(), int8.ready()]);
  const figures: SetFigures[] = [];
  try {
    for await (const set of sets()) {
      const rows: { id: string; f: Judged; q: Judged; resaved: boolean }[] = [];
      for await (const photo of set.photos) {
        const [f, q] = await judge([float, int8], photo);
        const resaved = await flaggedResaved(float, photo);
        rows.push({ id: photo.id, f, q, resaved });
        log(
          `${set.name.slice(0, 12)} ${photo.id.padEnd(40)} IoU float ${f.iou.toFixed(4)} int8 ${q.iou.toFixed(4)}  flagged ${+f.flagged}/${+q.flagged} (re-saved ${+resaved})  edge ${f.edgeError.toFixed(4)}/${q.edgeError.toFixed(4)}`,
        );
      }
      if (rows.length === 0) continue; // a set turned off (BENCH_INT8_COMPOSITES=0)
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const changes = rows.map((r) => r.q.iou - r.f.iou);
      const worst = Math.min(...changes);
      figures.push({
        name: set.name,
        photos: rows.length,
        floatIou: mean(rows.map((r) => r.f.iou)),
        int8Iou: mean(rows.map((r) => r.q.iou)),
        meanChange: mean(changes),
        worstChange: worst,
        worstPhoto: rows[changes.indexOf(worst)].id,
        sameVerdict: rows.filter((r) => r.f.flagged === r.q.flagged).length / rows.length,
        resavedSameVerdict: rows.filter((r) => r.f.flagged === r.resaved).length / rows.length,
        floatFlagged: rows.filter((r) => r.f.flagged).length,
        int8Flagged: rows.filter((r) => r.q.flagged).length,
        floatEdgeError: mean(rows.map((r) => r.f.edgeError)),
        int8EdgeError: mean(rows.map((r) => r.q.edgeError)),
      });
    }
  } finally {
    await Promise.all([float.close(), int8.close()]);
  }
  return figures;
}

export function int8QualityLines(sets: SetFigures[]): string[] {
  const f = (n: number, d = 4) => n.toFixed(d);
  return [
    '\n## int8 against float, on photos the int8 ranges were not taken from',
    'set                                         photos  IoU float  IoU int8  mean change  worst change (photo)                 same verdict  flagged f/q  edge error f / q (q/f)         float, photo re-saved: same verdict',
    ...sets.map(
      (s) =>
        `${s.name.padEnd(44)} ${String(s.photos).padStart(5)}   ${f(s.floatIou)}     ${f(s.int8Iou)}   ${s.meanChange >= 0 ? '+' : ''}${f(s.meanChange)}      ${f(s.worstChange)} (${s.worstPhoto.slice(0, 28)})`.padEnd(
          150,
        ) +
        `${(100 * s.sameVerdict).toFixed(1)}%       ${s.floatFlagged}/${s.int8Flagged}        ${f(s.floatEdgeError)} / ${f(s.int8EdgeError)} (${f(s.int8EdgeError / s.floatEdgeError, 3)})`.padEnd(
          230,
        ) +
        `${(100 * s.resavedSameVerdict).toFixed(1)}%`,
    ),
    'gates: mean change >= -0.003, worst change >= -0.03, same verdict >= 97%, edge error int8/float <= 1.02',
    `the last column: the float model's verdict on each photo against its verdict on the photo decoded and saved again as JPEG at quality ${RESAVE_QUALITY} (the check's own noise, for scale; not a gate)`,
  ];
}

/** Gates met on every set? */
export function int8GatesMet(sets: SetFigures[]): boolean {
  return sets.every(
    (s) =>
      s.meanChange >= -0.003 &&
      s.worstChange >= -0.03 &&
      s.sameVerdict >= 0.97 &&
      s.int8EdgeError <= 1.02 * s.floatEdgeError,
  );
}

export async function int8Speed(files: string[], rounds = 3): Promise<SpeedFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-int8-'));
  const paths = files.map((f, i) => {
    const p = path.join(dir, `${i}.jpg`);
    fs.copyFileSync(f, p);
    return p;
  });
  const indices = paths.map((_, i) => i);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const bareFloat: number[] = [];
  const bareInt8: number[] = [];
  {
    const a = await BareModel.start(paths, 2);
    const b = await BareModel.start(paths, 2, { int8: true });
    for (let r = 0; r < rounds; r++) {
      const first = r % 2 === 0 ? a : b;
      const second = first === a ? b : a;
      const x = sum(await first.run(indices)) / paths.length;
      const y = sum(await second.run(indices)) / paths.length;
      (first === a ? bareFloat : bareInt8).push(x);
      (first === a ? bareInt8 : bareFloat).push(y);
    }
    await Promise.all([a.close(), b.close()]);
  }
  // Batches through the API: one server with each model, started one after the other, batches alternating.
  const batchFloat: number[] = [];
  const batchInt8: number[] = [];
  const servers = [
    await startServer({ LOG_LEVEL: 'error', MATTE_REQUESTS_PER_MINUTE: '1000000', MATTE_MODEL_INT8: '0' }),
    await startServer({ LOG_LEVEL: 'error', MATTE_REQUESTS_PER_MINUTE: '1000000', MATTE_MODEL_INT8: '1' }),
  ];
  try {
    const clients = await Promise.all(
      servers.map(async (server) => {
        const { apiKey } = await server.createAccount('int8@example.com', 100000, 0);
        return (p: string, init: RequestInit = {}) =>
          fetch(`${server.base}${p}`, { ...init, headers: { authorization: `Bearer ${apiKey}` } });
      }),
    );
    const photos = paths.map((p) => ({ name: path.basename(p), data: fs.readFileSync(p) }));
    const batch = async (api: Api) => {
      const run = await runBatch(api, photos);
      if (run.status !== 'done') throw new Error(`a batch ended ${run.status}`);
      return (run.seconds * 1000) / paths.length;
    };
    // Each server's model warmed with one photo first.
    for (const api of clients) {
      const warm = new FormData();
      warm.append('file', new Blob([new Uint8Array(fs.readFileSync(paths[0]))]), 'warm.jpg');
      await api('/v1/images', { method: 'POST', body: warm });
    }
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        batchFloat.push(await batch(clients[0]));
        batchInt8.push(await batch(clients[1]));
      } else {
        batchInt8.push(await batch(clients[1]));
        batchFloat.push(await batch(clients[0]));
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  let imglyMs: number | null = null;
  if (process.env.BENCH_INT8_PEER !== '0') {
    const { removeBackground } = await import('@imgly/background-removal-node');
    const one = async (p: string) =>
      (
        await removeBackground(new Blob([new Uint8Array(fs.readFileSync(p))], { type: 'image/jpeg' }), {
          model: 'medium',
          output: { format: 'image/png' },
        })
      ).arrayBuffer();
    await one(paths[0]);
    const t0 = performance.now();
    for (const p of paths) await one(p);
    imglyMs = (performance.now() - t0) / paths.length;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    photos: paths.length,
    rounds,
    bareFloatMs: median(bareFloat),
    bareInt8Ms: median(bareInt8),
    bareRatio: median(bareFloat.map((x, i) => x / bareInt8[i])),
    batchFloatMs: median(batchFloat),
    batchInt8Ms: median(batchInt8),
    batchRatio: median(batchFloat.map((x, i) => x / batchInt8[i])),
    imglyMs,
  };
}

export function int8SpeedLines(s: SpeedFigures): string[] {
  const f = (n: number) => n.toFixed(0);
  return [
    `\n## int8 against float: speed (${s.photos} product photos, ${s.rounds} alternating rounds, one run)`,
    `bare session.run (onnxruntime defaults): float ${f(s.bareFloatMs)} ms a photo, int8 ${f(s.bareInt8Ms)}; float/int8 ${s.bareRatio.toFixed(3)} (median of the rounds' ratios)`,
    `batch through the API: float (MATTE_MODEL_INT8=0) ${f(s.batchFloatMs)} ms a photo, int8 (default) ${f(s.batchInt8Ms)}; throughput int8/float ${s.batchRatio.toFixed(3)} (goal >= 1.5)`,
    s.imglyMs === null
      ? 'imgly-node: not run (BENCH_INT8_PEER=0)'
      : `imgly-node (medium): ${f(s.imglyMs)} ms a photo; imgly-node / Matte int8 batch ${(s.imglyMs / s.batchInt8Ms).toFixed(2)}x, / Matte float batch ${(s.imglyMs / s.batchFloatMs).toFixed(2)}x`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const verbose = process.env.BENCH_INT8_VERBOSE ? console.log : undefined;
  if (process.env.BENCH_INT8_SPEED !== '0') {
    const files = evalEntries()
      .filter((e) => e.kind === 'product')
      .slice(0, Number(process.env.BENCH_PHOTOS ?? 8))
      .map((e) => path.join(SHARED_DIR!, 'eval-data', e.image));
    console.log(int8SpeedLines(await int8Speed(files)).join('\n'));
  }
  if (process.env.BENCH_INT8_QUALITY !== '0') {
    const q = await int8Quality(verbose);
    console.log(int8QualityLines(q).join('\n'));
    console.log(`gates ${int8GatesMet(q) ? 'met' : 'NOT met'} on every set`);
  }
}
