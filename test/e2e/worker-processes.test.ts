// Processes on PostgreSQL with files in S3 (s3rver): an API-only server (MATTE_WORKER=0) and `bin/matte
// worker` processes with the real model. Photos added through the API are run by the worker; results are
// read back through the API from the bucket; no process keeps a result on its own disk; SIGTERM stops a
// worker within 30 s with none of its photos left leased; each process serves its own /metrics and /readyz.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { filesUnder, freePort, startServer, type RunningServer, E2E_TEST_TIMEOUT } from '../helpers/server.ts';
import { createTestDatabase, PG_AVAILABLE, type TestDatabase } from '../helpers/databases.ts';
import { startS3, type S3Server } from '../helpers/s3.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../../tools/shared-data.ts';
import { startInferenceServer } from '../../src/main/inference-server.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

const ROOT = path.resolve(import.meta.dirname, '../..');
const RUN = PG_AVAILABLE && HAVE_EVAL_DATA;

interface Worker {
  proc: ChildProcess;
  metrics: string;
  dataDir: string;
  log: () => string;
}

let db: TestDatabase;
let s3: S3Server;
let api: RunningServer;
let apiMetrics: string;
let env: Record<string, string>;
let auth: Record<string, string>;
const workers: Worker[] = [];

async function startWorker(extraEnv: Record<string, string> = {}): Promise<Worker> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-worker-'));
  let log = '';
  const proc = spawn(path.join(ROOT, 'bin/matte'), ['worker'], {
    env: {
      ...process.env,
      ...env,
      DATA_DIR: dataDir,
      MATTE_METRICS_PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (d) => (log += d));
  proc.stderr!.on('data', (d) => (log += d));
  const metrics = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; ;) {
    if (proc.exitCode !== null) throw new Error(`worker exited: ${log}`);
    const ready = await fetch(`${metrics}/readyz`).catch(() => null);
    if (ready?.status === 200) break;
    if (Date.now() > deadline) throw new Error(`worker not ready: ${ready && (await ready.text())} ${log}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const w = { proc, metrics, dataDir, log: () => log };
  workers.push(w);
  return w;
}

const call = (p: string, init: RequestInit = {}) =>
  fetch(`${api.base}${p}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });

async function batchOf(photos: Buffer[]): Promise<string> {
  const id = (await (await call('/v1/jobs', { method: 'POST' })).json()).id;
  const form = new FormData();
  photos.forEach((p, i) => form.append('files', new Blob([new Uint8Array(p)]), `p${i}.jpg`));
  expect((await (await call(`/v1/jobs/${id}/items`, { method: 'POST', body: form })).json()).added).toBe(photos.length);
  expect((await call(`/v1/jobs/${id}/start`, { method: 'POST' })).status).toBe(202);
  return id;
}

async function settled(id: string, timeoutMs = 240_000): Promise<any> {
  for (const deadline = Date.now() + timeoutMs; ;) {
    const job = await (await call(`/v1/jobs/${id}?wait=20`)).json();
    if (['done', 'failed', 'paused'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${job.status}`);
  }
}

beforeAll(async () => {
  if (!RUN) return;
  db = await createTestDatabase('postgres');
  s3 = await startS3();
  env = { DATABASE_URL: db.databaseUrl, ...s3.env('matte') };
  const metricsPort = await freePort();
  apiMetrics = `http://127.0.0.1:${metricsPort}`;
  api = await startServer({ ...env, MATTE_WORKER: '0', MATTE_METRICS_PORT: String(metricsPort) });
  const created = await api.createAccount('scale@example.com', 40);
  auth = { authorization: `Bearer ${created.apiKey}` };
}, 180_000);

afterAll(async () => {
  for (const w of workers) {
    if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill('SIGKILL');
    fs.rmSync(w.dataDir, { recursive: true, force: true });
  }
  await api?.stop();
  await s3?.close();
  await db?.drop();
});

describe.skipIf(!RUN)('worker processes on PostgreSQL with files in S3', () => {
  const photos = () =>
    evalEntries()
      .filter((e) => e.image.endsWith('.jpg'))
      .map((e) => evalFile(e.image));

  it('an API-only process queues, a bin/matte worker runs, results come back through the API from the bucket', async () => {
    const apiReady = await (await fetch(`${api.base}/readyz`)).json();
    expect(apiReady.parts).toMatchObject({ database: 'ok', blobStore: 'ok', model: 'not run by this process' });
    const worker = await startWorker();
    const id = await batchOf(photos().slice(0, 3));
    const job = await settled(id);
    expect(job.counts).toMatchObject({ total: 3, done: 3 });
    for (const item of job.items) {
      const file = await call(`/v1/jobs/${id}/items/${item.id}/file`);
      expect(file.status).toBe(200);
      expect(
        Buffer.from(await file.arrayBuffer())
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');
    }
    expect((await call(`/v1/jobs/${id}/download?optimize=off`)).status).toBe(200);
    // Every file is in the bucket; no process keeps one on its disk.
    expect(s3.objects().filter((k) => k.includes(id)).length).toBeGreaterThanOrEqual(9);
    expect(filesUnder(path.join(api.dataDir, 'blobs'))).toEqual([]);
    expect(filesUnder(path.join(worker.dataDir, 'blobs'))).toEqual([]);

    // Each process counts what it did, on its own operations port.
    const workerMetrics = await (await fetch(`${worker.metrics}/metrics`)).text();
    const done = [
      ...workerMetrics.matchAll(
        /^matte_photos_total\{outcome="(?:done|flagged)",tier="light",process="worker"\} (\d+)/gm,
      ),
    ];
    expect(done.reduce((n, m) => n + Number(m[1]), 0)).toBe(3);
    const apiText = await (await fetch(`${apiMetrics}/metrics`)).text();
    expect(apiText).toMatch(
      /^matte_http_request_seconds_count\{[^}]*process="api"[^}]*route="\/v1\/jobs\/:id\/items"/m,
    );
    expect(apiText).not.toMatch(/^matte_photos_total\{/m);
    expect((await fetch(`${api.base}/metrics`)).status).toBe(404);
    // One line per photo names the process that ran it.
    const lines = worker
      .log()
      .split('\n')
      .filter((l) => l.includes('"photo settled"'))
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    for (const line of lines)
      expect(line).toMatchObject({ jobId: id, process: expect.stringMatching(/^worker-/), attempt: 1, tier: 'light' });
  });

  it('SIGTERM stops a worker, leaving no photo leased, and another worker finishes the batch', async () => {
    const first = workers[0] ?? (await startWorker());
    const before = (await (await call('/v1/account')).json()).credits.plan;
    const id = await batchOf(photos().slice(3, 9));
    for (const deadline = Date.now() + 120_000; ;) {
      const job = await (await call(`/v1/jobs/${id}?fields=summary&wait=10`)).json();
      if (job.counts.done >= 1) break;
      if (Date.now() > deadline) throw new Error('no photo finished');
    }
    first.proc.kill('SIGTERM');
    // Within the test's timeout: the worker finishes or hands back the photo it holds, then exits.
    const code = await new Promise<number | null>((r) => first.proc.once('exit', (c) => r(c)));
    expect(code).toBe(0);
    const stopped = await (await call(`/v1/jobs/${id}`)).json();
    expect(stopped.items.filter((i: any) => i.status === 'processing')).toEqual([]);

    // The next worker runs the model on an inference server (bin/matte inference-server's protocol).
    const inference = await startInferenceServer(0, '127.0.0.1');
    let job: any;
    try {
      const remote = await startWorker({ MATTE_INFERENCE_URL: `http://127.0.0.1:${inference.port}/v2/models/isnet` });
      expect((await (await fetch(`${remote.metrics}/readyz`)).json()).parts.model).toBe('ok');
      job = await settled(id);
      // It ran the photos the stopped worker had not: the model's time was spent on the inference server.
      const text = await (await fetch(`${remote.metrics}/metrics`)).text();
      const ran = [
        ...text.matchAll(/^matte_photos_total\{outcome="(?:done|flagged)",tier="light",process="worker"\} (\d+)/gm),
      ];
      expect(ran.reduce((n, m) => n + Number(m[1]), 0)).toBeGreaterThan(0);
    } finally {
      await inference.app.close();
      await inference.session.release();
    }
    expect(job.counts).toMatchObject({ total: 6, done: 6 });
    // Each photo charged once: a clean one costs one credit, a flagged one nothing.
    const charged = job.items.filter((i: any) => !i.refunded).length;
    expect(before - (await (await call('/v1/account')).json()).credits.plan).toBe(charged);
    expect(job.items.every((i: any) => i.attempts === 1)).toBe(true);
  });

  it('a touch-up made through one API process is read and reverted through another, its files in the bucket', async () => {
    // A worker of its own with the model in process (a worker left by another test may run it on a server since stopped).
    for (const w of workers.filter((w) => w.proc.exitCode === null && w.proc.signalCode === null)) {
      w.proc.kill('SIGTERM');
      await new Promise((r) => w.proc.once('exit', r));
    }
    await startWorker();
    const id = await batchOf(photos().slice(9, 10));
    const [item] = (await settled(id)).items;
    const cutout = async (base: string, url: string) =>
      Buffer.from(await (await fetch(`${base}${url}`, { headers: auth })).arrayBuffer());
    const model = await cutout(api.base, item.cutoutUrl);
    const { width, height } = item.meta.cutout;
    const res = await call(`/v1/jobs/${id}/items/${item.id}/touch-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        strokes: [
          {
            mode: 'erase',
            size: Math.round(width / 4),
            points: [
              [width / 2, 0],
              [width / 2, height],
            ],
          },
        ],
        snap: false,
      }),
    });
    expect(res.status).toBe(200);
    const touched = (await res.json()).items[0];
    expect(touched.touchUp.strokes).toBe(1);
    expect(filesUnder(path.join(api.dataDir, 'blobs'))).toEqual([]);

    const other = await startServer({ ...env, MATTE_WORKER: '0' });
    try {
      const seen = (await (await fetch(`${other.base}/v1/jobs/${id}`, { headers: auth })).json()).items[0];
      expect(seen).toMatchObject({ rev: touched.rev, touchUp: touched.touchUp });
      const there = await cutout(other.base, seen.cutoutUrl);
      expect(there.equals(await cutout(api.base, touched.cutoutUrl))).toBe(true);
      expect(there.equals(model)).toBe(false);
      const back = await fetch(`${other.base}/v1/jobs/${id}/items/${item.id}/touch-up`, {
        method: 'DELETE',
        headers: auth,
      });
      expect(back.status).toBe(200);
      const reverted = (await back.json()).items[0];
      expect(reverted).not.toHaveProperty('touchUp');
      expect((await cutout(api.base, reverted.cutoutUrl)).equals(model)).toBe(true);
    } finally {
      await other.stop();
    }
  });
});
