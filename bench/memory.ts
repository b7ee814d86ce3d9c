// Memory per process (issue 25, P5): a worker running batches of 12-megapixel photos, with onnxruntime's
// CPU memory arena on and off, and an API-only process (MATTE_WORKER=0) taking uploads. Each configuration
// is a real server process (npm start: bin/matte serve) on its own SQLite; its RSS is read from /proc every 100 ms
// (VmRSS) and its peak at the end (VmHWM). Writes bench/results/memory.{json,md}. Rows: arena on; off;
// the model optimised once and read from the cache; glibc's malloc as bin/matte sets it by default (freed memory
// kept for the next photo), for memory (large blocks mapped in huge pages and given back, two arenas) or left
// alone; the graph optimisation levels `all`, `extended`, `basic`;
// two photos in flight or one.
//   npm run bench:memory        (BENCH_MEMORY_BATCHES, default 5; BENCH_MEMORY_PHOTOS per batch, default 4)
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { startServer, type RunningServer } from '../test/helpers/server.ts';
import { evalEntries, evalFile } from '../tools/shared-data.ts';

const BATCHES = Number(process.env.BENCH_MEMORY_BATCHES ?? 5);
const PHOTOS = Number(process.env.BENCH_MEMORY_PHOTOS ?? 4);
const MiB = 1024 * 1024;

function status(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** 12-megapixel JPEGs (4000x3000) made from eval photos. */
export async function bigPhotos(n: number): Promise<Buffer[]> {
  const entries = evalEntries().filter((e) => e.image.endsWith('.jpg'));
  return Promise.all(
    entries
      .slice(0, n)
      .map((e) => sharp(evalFile(e.image)).resize(4000, 3000, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer()),
  );
}

async function account(server: RunningServer): Promise<Record<string, string>> {
  const { apiKey } = await server.createAccount(`mem${Date.now()}@example.com`, 1000);
  return { authorization: `Bearer ${apiKey}` };
}

/** One batch through a server: created, filled, started and followed with long-polls; seconds from start to done. */
export async function runBatch(server: RunningServer, auth: Record<string, string>, photos: Buffer[]): Promise<number> {
  const call = (p: string, init: RequestInit = {}) => fetch(`${server.base}${p}`, { ...init, headers: auth });
  const id = (await (await call('/v1/jobs', { method: 'POST' })).json()).id;
  const form = new FormData();
  photos.forEach((p, i) => form.append('files', new Blob([new Uint8Array(p)]), `p${i}.jpg`));
  const added = await call(`/v1/jobs/${id}/items`, { method: 'POST', body: form });
  if (!added.ok) throw new Error(`adding photos: HTTP ${added.status}`);
  const at = performance.now();
  const started = await call(`/v1/jobs/${id}/start`, { method: 'POST' });
  if (!started.ok) throw new Error(`starting: HTTP ${started.status}`);
  for (;;) {
    const res = await call(`/v1/jobs/${id}?fields=summary&wait=30`);
    if (!res.ok) throw new Error(`following: HTTP ${res.status}`);
    const job = await res.json();
    if (['done', 'failed'].includes(job.status)) return (performance.now() - at) / 1000;
  }
}

export type Optimization = 'basic' | 'extended' | 'all';
export interface WorkerFigures {
  arena: boolean;
  optimization: Optimization;
  /** The model optimised once and read from the cache (model-session.mjs), or optimised at load. */
  cached: boolean;
  inFlight: number;
  /** glibc's malloc as bin/matte sets it: `reuse` (the default), `memory` (MATTE_MALLOC_TUNING=1) or left alone. */
  malloc: 'reuse' | 'memory' | 'glibc default';
  /** A float16 model run as float32 (MATTE_MODEL_FLOAT32): on by default, off with MATTE_LOW_MEMORY=1. */
  float32: boolean;
  /** The int8 model (MATTE_MODEL_INT8, the default) or the float one. */
  int8: boolean;
  peakMiB: number;
  afterBatchMiB: number[];
  secondsPerPhoto: number;
}

export async function worker(
  photos: Buffer[],
  {
    arena,
    optimization,
    cached,
    malloc,
    inFlight,
    float32,
    int8 = true,
  }: {
    arena: boolean;
    optimization: Optimization;
    cached: boolean;
    malloc: WorkerFigures['malloc'];
    inFlight: number;
    float32: boolean;
    int8?: boolean;
  },
): Promise<WorkerFigures> {
  const server = await startServer({
    MATTE_MODEL_OPTIMIZATION: optimization,
    ...(cached ? {} : { MATTE_MODEL_CACHE_DIR: 'off' }),
    MATTE_WORKER_CONCURRENCY: String(inFlight),
    MATTE_MODEL_ARENA: arena ? '1' : '0',
    MATTE_REQUESTS_PER_MINUTE: '100000',
    LOG_LEVEL: 'warn',
    MATTE_MALLOC_TUNING: { reuse: '', memory: '1', 'glibc default': '0' }[malloc],
    MATTE_MODEL_FLOAT32: float32 ? '1' : '0',
    MATTE_MODEL_INT8: int8 ? '1' : '0',
  });
  try {
    const pid = server.proc.pid!;
    const auth = await account(server);
    await runBatch(server, auth, photos.slice(0, 1)); // warm: the model loaded and run once
    const afterBatch: number[] = [];
    const started = performance.now();
    for (let b = 0; b < BATCHES; b++) {
      await runBatch(server, auth, photos);
      afterBatch.push(status(pid, 'VmRSS') / MiB);
    }
    const seconds = (performance.now() - started) / 1000;
    return {
      arena,
      optimization,
      cached,
      malloc,
      inFlight,
      float32,
      int8,
      peakMiB: status(pid, 'VmHWM') / MiB,
      afterBatchMiB: afterBatch.map((v) => Math.round(v)),
      secondsPerPhoto: seconds / (BATCHES * photos.length),
    };
  } finally {
    await server.stop();
  }
}

async function apiOnly(photos: Buffer[]): Promise<{ peakMiB: number; rssMiB: number }> {
  const server = await startServer({ MATTE_WORKER: '0', MATTE_REQUESTS_PER_MINUTE: '100000', LOG_LEVEL: 'warn' });
  try {
    const auth = await account(server);
    for (let b = 0; b < BATCHES; b++) {
      const id = (await (await fetch(`${server.base}/v1/jobs`, { method: 'POST', headers: auth })).json()).id;
      const form = new FormData();
      photos.forEach((p, i) => form.append('files', new Blob([new Uint8Array(p)]), `p${i}.jpg`));
      await fetch(`${server.base}/v1/jobs/${id}/items`, { method: 'POST', headers: auth, body: form });
      for (let i = 0; i < 10; i++) await fetch(`${server.base}/v1/jobs/${id}`, { headers: auth });
    }
    const pid = server.proc.pid!;
    return { peakMiB: status(pid, 'VmHWM') / MiB, rssMiB: status(pid, 'VmRSS') / MiB };
  } finally {
    await server.stop();
  }
}

// Run as a script (npm run bench:memory); npm run bench imports worker() for its P5 row.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();

async function main(): Promise<void> {
  const photos = await bigPhotos(PHOTOS);
  const results = {
    at: new Date().toISOString(),
    batches: BATCHES,
    photosPerBatch: PHOTOS,
    photo: '4000x3000 JPEG',
    // BENCH_MEMORY_CONFIGS=1,4 runs only those rows.
    workers: await (async () => {
      // arena, graph optimisation, optimised model cached, glibc malloc (bin/matte's tuning or glibc's own), photos
      // in flight; the weights run as float32 for `all` (as by default) and as stored otherwise (as MATTE_LOW_MEMORY=1).
      // Row 1 is the default (npm start with nothing set: the int8 model); row 2 is MATTE_LOW_MEMORY=1; row 3 the
      // default with the float model (MATTE_MODEL_INT8=0); the last two the default with malloc set for memory
      // (MATTE_MALLOC_TUNING=1) and left alone (MATTE_MALLOC_TUNING=0); the rest run the int8 model too.
      const configs: [boolean, Optimization, boolean, WorkerFigures['malloc'], number, boolean?][] = [
        [true, 'all', true, 'reuse', 2],
        [false, 'extended', true, 'memory', 2],
        [true, 'all', true, 'reuse', 2, false],
        [true, 'all', false, 'glibc default', 2],
        [false, 'all', false, 'glibc default', 2],
        [false, 'all', true, 'glibc default', 2],
        [false, 'all', true, 'memory', 2],
        [false, 'extended', true, 'glibc default', 2],
        [false, 'extended', true, 'memory', 1],
        [false, 'basic', true, 'memory', 2],
        [true, 'all', true, 'memory', 2],
        [true, 'all', true, 'glibc default', 2],
      ];
      const only = process.env.BENCH_MEMORY_CONFIGS?.split(',').map(Number);
      const out: WorkerFigures[] = [];
      for (const [k, [arena, optimization, cached, malloc, inFlight, int8 = true]] of configs.entries())
        if (!only || only.includes(k + 1))
          out.push(
            await worker(photos, {
              arena,
              optimization,
              cached,
              malloc,
              inFlight,
              float32: optimization === 'all',
              int8,
            }),
          );
      return out;
    })(),
    apiOnly: await apiOnly(photos),
  };
  const dir = path.join(import.meta.dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'memory.json'), `${JSON.stringify(results, null, 2)}\n`);
  const lines = [
    `# npm run bench:memory, ${results.at}`,
    '',
    `${BATCHES} batches of ${PHOTOS} photos of 12 megapixels, after one warm-up photo; one process (API + worker, SQLite).`,
    '',
    '| model | onnxruntime arena | graph optimisation | weights | optimised model | glibc malloc | photos in flight | peak RSS (MiB) | RSS after each batch (MiB) | seconds per photo |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...results.workers.map(
      (w) =>
        `| ${w.int8 ? 'int8' : 'float'} | ${w.arena ? 'on' : 'off'} | ${w.optimization} | ${w.float32 ? 'float32' : 'as stored'} | ${w.cached ? 'cached' : 'at load'} | ${w.malloc} | ${w.inFlight} | ${w.peakMiB.toFixed(0)} | ${w.afterBatchMiB.join(', ')} | ${w.secondsPerPhoto.toFixed(2)} |`,
    ),
    '',
    `API only (MATTE_WORKER=0), ${BATCHES} uploads of ${PHOTOS} photos and reads: peak ${results.apiOnly.peakMiB.toFixed(0)} MiB, ${results.apiOnly.rssMiB.toFixed(0)} MiB at the end.`,
  ];
  fs.writeFileSync(path.join(dir, 'memory.md'), `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
}
