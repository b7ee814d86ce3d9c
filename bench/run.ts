// npm run bench: the service's figures from one run on the same photos, printed and written to
// bench/results/latest.json and bench/results/latest.md (docs/performance.md explains each one).
//  1. batch throughput: Matte end to end over HTTP (add, start, wait) against the bare model (session.run
//     alone, onnxruntime's defaults, its own process: bench/bare-model.ts), photos/s, in alternating rounds
//  2. POST /v1/images latency against bare inference, and CPU per photo outside the model (bench/cpu.ts)
//  3. event-loop responsiveness: GET /v1/jobs/{id} latency while photos are at the model
//  4. event latency: photo finished → SSE message and → webhook received (bench/events.ts)
//  5. edges: mean alpha error of the upsampled mask and of the refined alpha (bench/edges.ts; BENCH_EDGES=0 skips it)
//  6. int8 against float: the two models bare and through the API, imgly-node, and the quality gates on photos
//     the int8 ranges were not taken from (bench/int8.ts; BENCH_INT8=0 skips it)
// The service runs as shipped: the int8 model (MATTE_MODEL_INT8=0 runs the float one). Sections 1-2 set it
// against the bare model as shipped (float16 weights, onnxruntime's defaults); speed-check sets it against the
// faster of the bare float and bare int8 models; section 6 sets the int8 model against the float model.
// This machine is shared and noisy: compare the ratios, not the absolute numbers. Bare and service
// runs alternate, each round gives its own ratio, and the median ratio is the figure, so a burst of
// load from another tenant spoils one round and not the result.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { EVAL_DIR, evalEntries, evalFile, HAVE_EVAL_DATA } from '../tools/shared-data.ts';
import { startServer } from '../test/helpers/server.ts';
import { BareModel } from './bare-model.ts';
import { runBatch } from './batch.ts';
import { edgeFigures, edgeLines, type EdgeFigures } from './edges.ts';
import { cpuLines, measureCpuAndLatency, median, type CpuFigures } from './cpu.ts';
import { eventLatency, eventLatencyLines, type EventLatency } from './events.ts';
import { scaleFigures, scaleLines, type ScaleFigures } from './scale.ts';
import {
  int8GatesMet,
  int8Quality,
  int8QualityLines,
  int8Speed,
  int8SpeedLines,
  type SetFigures,
  type SpeedFigures,
} from './int8.ts';
import { percentile as pct } from '../tools/figures.ts';

const PHOTOS = Number(process.env.BENCH_PHOTOS ?? 16);
// 15 pairs: the p50 of 7 moved from 1.064 to 1.118 between two runs of the same code on the same day.
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const THREADS = 2;

const fmt = (n: number, d = 2) => n.toFixed(d);

if (!HAVE_EVAL_DATA)
  throw new Error('npm run bench -- all reads ../shared/eval-data; set MATTE_SHARED_DIR to the shared folder');
const entries = evalEntries()
  .filter((e) => e.kind === 'product')
  .slice(0, PHOTOS);
const photos = entries.map((e) => ({ name: `${e.id}.jpg`, data: evalFile(e.image) }));

// ---- the bare model -----------------------------------------------------------------------------
// onnxruntime's own defaults in a process of its own (bench/bare-model.ts), on the same photos.
const photoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-bench-'));
const photoFiles = photos.map((p) => {
  const file = path.join(photoDir, p.name);
  fs.writeFileSync(file, p.data);
  return file;
});
const bareModel = await BareModel.start(photoFiles, THREADS);
/** Seconds for session.run over every photo, one after another. */
async function bareRun(): Promise<number> {
  const ms = await bareModel.run(photoFiles.map((_, i) => i));
  return ms.reduce((a: number, b: number) => a + b, 0) / 1000;
}

// ---- the service over HTTP ----------------------------------------------------------------------
// Following a batch with long-polls answers on every stage change (about six per photo): far more than
// the default 60 requests a minute. The limit is raised, not switched off, so every request still pays
// for its rate-limit transaction, as in production.
interface Throughput {
  photos: number;
  rounds: number;
  barePhotosPerSecond: number;
  mattePhotosPerSecond: number;
  ratio: number;
  roundRatios: number[];
  stageMeansMs: Record<string, number>;
}
interface Reads {
  p50: number;
  p99: number;
  max: number;
  count: number;
}
let throughput: Throughput | undefined;
let latency: CpuFigures | undefined;
let reads: Reads | undefined;
let events: EventLatency | undefined;

const server = await startServer({ LOG_LEVEL: 'error', MATTE_REQUESTS_PER_MINUTE: '1000000' });
try {
  const { apiKey } = await server.createAccount('bench@example.com', 100000, 0);
  const auth = { authorization: `Bearer ${apiKey}` };
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.base}${path}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });

  const serviceRun = (list: typeof photos, onStarted?: (jobId: string) => void) => runBatch(api, list, onStarted);

  // Warm the worker's model with one photo first, as the bare session was warmed.
  const warm = new FormData();
  warm.append('file', new Blob([new Uint8Array(photos[0].data)]), 'warm.jpg');
  await api('/v1/images', { method: 'POST', body: warm });

  // ---- 1-2. throughput, in alternating rounds --------------------------------------------------
  const rounds: { bare: number; matte: number; inference: number }[] = [];
  let lastJob = '';
  for (let r = 0; r < ROUNDS; r++) {
    // The order alternates too, so that a machine slowing down or speeding up favours neither side.
    const bareFirst = r % 2 === 0;
    const bare = bareFirst ? await bareRun() : 0;
    const run = await serviceRun(photos);
    lastJob = run.jobId;
    // The model's own run time per photo inside the service: above bare, the photos' image work slowed
    // the model; below the batch time, the model waited (upload, first decode, last encode, gaps).
    const items = (await (await api(`/v1/jobs/${run.jobId}`)).json()).items as {
      meta: { timings: { inference: number } };
    }[];
    const inference = items.reduce((sum, i) => sum + i.meta.timings.inference, 0) / 1000;
    rounds.push({ bare: bareFirst ? bare : await bareRun(), matte: run.seconds, inference });
  }
  const ratios = rounds.map((r) => r.bare / r.matte);
  const medianRound = rounds[ratios.indexOf(median(ratios))] ?? rounds[0];
  const finished = await (await api(`/v1/jobs/${lastJob}`)).json();
  if (finished.items.some((i: { status: string }) => i.status !== 'done'))
    throw new Error('not every photo of the batch ended done');
  const stageMeans: Record<string, number> = {};
  for (const item of finished.items)
    for (const [k, v] of Object.entries(item.meta.timings as Record<string, number>))
      stageMeans[k] = (stageMeans[k] ?? 0) + v / finished.items.length;

  // ---- 2. POST /v1/images latency, and CPU per photo outside the model ----------------------------
  latency = await measureCpuAndLatency(server, apiKey, LATENCY_RUNS);

  // ---- 3. reads while photos run ---------------------------------------------------------------
  const readLatencies: number[] = [];
  let job = '';
  const probed = new Promise<void>((resolve, reject) => {
    serviceRun(photos.slice(0, 4), (id) => {
      job = id;
      resolve();
    }).catch(reject);
  });
  await probed;
  let status = 'queued';
  while (status === 'queued' || status === 'running') {
    const r0 = performance.now();
    status = (await (await api(`/v1/jobs/${job}?fields=summary`)).json()).status;
    readLatencies.push(performance.now() - r0);
    await new Promise((r) => setTimeout(r, 50));
  }
  await bareModel.close();
  fs.rmSync(photoDir, { recursive: true, force: true });

  // ---- 4. event latency ------------------------------------------------------------------------
  const eventPhotos = Array.from({ length: Number(process.env.BENCH_EVENT_PHOTOS ?? 24) }, (_, i) => ({
    ...photos[i % photos.length],
    name: `e${i}.jpg`,
  }));
  events = await eventLatency(server.base, apiKey, eventPhotos);

  const perPhoto = (s: number) => fmt((s * 1000) / photos.length, 0);
  const lines = [
    `Matte benchmark (${photos.length} product photos from ../shared/eval-data, ${THREADS} model threads, ${ROUNDS} alternating rounds in one run)`,
    ...rounds.map(
      (r, i) =>
        `round ${i + 1}: bare ${perPhoto(r.bare)} ms/photo, Matte ${perPhoto(r.matte)} ms/photo, ratio ${fmt(ratios[i], 3)}; in Matte the model ran ${perPhoto(r.inference)} ms/photo, busy ${fmt((100 * r.inference) / r.matte, 0)}% of the batch`,
    ),
    `bare model (onnxruntime defaults)   ${fmt(photos.length / medianRound.bare, 3)} photos/s  (median round)`,
    `Matte batch over HTTP (add+start+wait) ${fmt(photos.length / medianRound.matte, 3)} photos/s  (median round)`,
    `throughput ratio Matte/bare         ${fmt(median(ratios), 3)}   (median of the rounds, spread ${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)}; target >= 0.9)`,
    ...cpuLines(latency),
    `mean stage times in the last batch (ms): ${Object.entries(stageMeans)
      .map(([k, v]) => `${k} ${fmt(v, 0)}`)
      .join(', ')}`,
    `GET /v1/jobs/{id} while photos run: p50 ${fmt(median(readLatencies), 1)} ms, p99 ${fmt(pct(readLatencies, 99), 1)} ms, max ${fmt(Math.max(...readLatencies), 1)} ms (${readLatencies.length} reads)`,
    ...eventLatencyLines(events),
  ];
  console.log(lines.join('\n'));
  throughput = {
    photos: photos.length,
    rounds: rounds.length,
    barePhotosPerSecond: photos.length / medianRound.bare,
    mattePhotosPerSecond: photos.length / medianRound.matte,
    ratio: median(ratios),
    roundRatios: ratios,
    stageMeansMs: stageMeans,
  };
  reads = {
    p50: median(readLatencies),
    p99: pct(readLatencies, 99),
    max: Math.max(...readLatencies),
    count: readLatencies.length,
  };
} finally {
  await server.stop();
}

// Edges: the upsampled mask against the refined alpha, at each eval photo's full resolution.
let edges: EdgeFigures | undefined;
if (process.env.BENCH_EDGES !== '0') console.log(edgeLines((edges = await edgeFigures())).join('\n'));

// Scale-out (issue 25): the model on an inference server, the claim at 10,000 pending, statements per photo, P5.
let scale: ScaleFigures | undefined;
if (process.env.BENCH_SCALE !== '0') console.log((scale = await scaleFigures()) && scaleLines(scale).join('\n'));

// int8 against float (issue 42): speed on the same product photos, then quality on held-out photos.
let int8: { speed: SpeedFigures; quality: SetFigures[]; gatesMet: boolean } | undefined;
if (process.env.BENCH_INT8 !== '0') {
  const speed = await int8Speed(entries.slice(0, 8).map((e) => path.join(EVAL_DIR, e.image)));
  console.log(int8SpeedLines(speed).join('\n'));
  const quality = await int8Quality();
  console.log(int8QualityLines(quality).join('\n'));
  int8 = { speed, quality, gatesMet: int8GatesMet(quality) };
}

writeResults({ throughput, latency, reads, events, edges, scale, int8 });

/** bench/results/latest.json (every figure) and latest.md (the table docs/performance.md summarises). */
function writeResults(figures: {
  throughput?: Throughput;
  latency?: CpuFigures;
  reads?: Reads;
  events?: EventLatency;
  edges?: EdgeFigures;
  scale?: ScaleFigures;
  int8?: { speed: SpeedFigures; quality: SetFigures[]; gatesMet: boolean };
}): void {
  const dir = path.join(import.meta.dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const at = new Date().toISOString();
  const json = { at, node: process.version, cpus: os.cpus()[0]?.model, ...figures };
  fs.writeFileSync(path.join(dir, 'latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  const rows: [string, string][] = [];
  const t = figures.throughput;
  if (t)
    rows.push([
      'batch throughput, Matte / bare model',
      `${fmt(t.ratio, 3)} (rounds ${fmt(Math.min(...t.roundRatios), 2)}–${fmt(Math.max(...t.roundRatios), 2)}; ${fmt(t.mattePhotosPerSecond, 3)} vs ${fmt(t.barePhotosPerSecond, 3)} photos/s)`,
    ]);
  const l = figures.latency;
  if (l) {
    rows.push([
      'POST /v1/images p50 / bare inference p50 (2000² JPEG)',
      `${fmt(l.ratio, 3)} (${fmt(l.imageMs, 0)} / ${fmt(l.bareMs, 0)} ms, ${l.pairs} pairs)`,
    ]);
    rows.push([
      'CPU per photo outside the model (2000² JPEG)',
      `${fmt(l.outsideModelCpuMs, 0)} ms (model threads ${fmt(l.modelCpuMs, 0)} ms)`,
    ]);
  }
  const r = figures.reads;
  if (r) rows.push(['GET /v1/jobs/{id} while photos run', `p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms`]);
  const e = figures.events;
  if (e) {
    const p = (xs: number[], q: number) =>
      [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((q / 100) * xs.length) - 1)];
    rows.push(['photo finished → SSE message', `p50 ${fmt(p(e.sse, 50), 0)} ms, p99 ${fmt(p(e.sse, 99), 0)} ms`]);
    rows.push([
      'photo finished → webhook received',
      `p50 ${fmt(p(e.webhook, 50), 0)} ms, p99 ${fmt(p(e.webhook, 99), 0)} ms`,
    ]);
  }
  const g = figures.edges;
  if (g) {
    const avg = (arm: 'upsampled' | 'service', k: 'mae' | 'edgeMae' | 'seeThrough') =>
      g.photos.reduce((s, p) => s + p.arms[arm][k], 0) / g.photos.length;
    rows.push([
      'the cut-out against the drawn masks: alpha error, service / upsampled (all / within 3 px of the edge)',
      `${fmt(avg('service', 'mae') / avg('upsampled', 'mae'), 3)} / ${fmt(avg('service', 'edgeMae') / avg('upsampled', 'edgeMae'), 3)}`,
    ]);
    rows.push(['see-through inside the drawn subject, all photos', `${fmt(100 * avg('service', 'seeThrough'), 2)}%`]);
  }
  if (figures.scale)
    for (const line of scaleLines(figures.scale)) rows.push(line.split(/: (.*)/s).slice(0, 2) as [string, string]);
  const q = figures.int8;
  if (q) {
    const s = q.speed;
    rows.push([
      'int8 / float, bare session.run',
      `${fmt(s.bareRatio, 3)} (${fmt(s.bareFloatMs, 0)} / ${fmt(s.bareInt8Ms, 0)} ms a photo)`,
    ]);
    rows.push([
      'int8 / float, batch throughput through the API',
      `${fmt(s.batchRatio, 3)} (${fmt(s.batchFloatMs, 0)} / ${fmt(s.batchInt8Ms, 0)} ms a photo)`,
    ]);
    if (s.imglyMs !== null)
      rows.push([
        'imgly-node / Matte (int8 batch)',
        `${fmt(s.imglyMs / s.batchInt8Ms, 2)}× (${fmt(s.imglyMs, 0)} ms a photo)`,
      ]);
    for (const set of q.quality)
      rows.push([
        `int8 against float, ${set.name}`,
        `IoU ${fmt(set.floatIou, 4)} → ${fmt(set.int8Iou, 4)} (mean ${set.meanChange >= 0 ? '+' : ''}${fmt(set.meanChange, 4)}, worst ${fmt(set.worstChange, 4)}), same verdict ${fmt(100 * set.sameVerdict, 1)}% (float against itself on the photo re-saved: ${fmt(100 * set.resavedSameVerdict, 1)}%), edge error ×${fmt(set.int8EdgeError / set.floatEdgeError, 3)}`,
      ]);
    rows.push(['int8 quality gates', q.gatesMet ? 'met on every set' : 'not met']);
  }
  const md = [
    `# npm run bench -- all, ${at}`,
    '',
    `Node ${process.version}, ${json.cpus ?? 'unknown CPU'}, ${os.cpus().length} cores.`,
    '',
    '| figure | value |',
    '| --- | --- |',
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    '',
  ];
  fs.writeFileSync(path.join(dir, 'latest.md'), md.join('\n'));
  console.log(`\nwritten: bench/results/latest.json, bench/results/latest.md`);
}
