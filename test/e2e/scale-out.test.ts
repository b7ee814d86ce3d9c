// The scale-out tier: on PostgreSQL with files in s3rver, two API processes (MATTE_WORKER=0) and two
// `bin/matte worker` processes, one of them running the model on `bin/matte inference-server`. Three batches
// of 2 photos added through either API; one worker SIGKILLed mid-batch. Checked: every photo done, each
// charged exactly once, the ledger balanced, events complete and in order on streams served by the other API,
// results and ZIPs from either API, limits shared, and no result file under any process's DATA_DIR.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { filesUnder, freePort, startServer, type RunningServer, E2E_TEST_TIMEOUT } from '../helpers/server.ts';
import { createTestDatabase, PG_AVAILABLE, type TestDatabase } from '../helpers/databases.ts';
import { startS3, type S3Server } from '../helpers/s3.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../../tools/shared-data.ts';
import { eventsOf, followBatch, type FollowedBatch } from '../helpers/events.ts';
import { unzip } from '../helpers/unzip.ts';
import { retryingFetch } from '@matte/client';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

const ROOT = path.resolve(import.meta.dirname, '../..');
const RUN = PG_AVAILABLE && HAVE_EVAL_DATA;
const BATCHES = 3;
// Two a batch (even: half through each API): the first worker is killed once one of the first batch is done,
// with photos of it or the next leased and the other batches' still queued.
const PER_BATCH = 2;

interface Proc {
  proc: ChildProcess;
  dataDir: string;
  log: () => string;
}

let db: TestDatabase;
let s3: S3Server;
let env: Record<string, string>;
const apis: RunningServer[] = [];
const procs: Proc[] = [];
/** Two sellers: an account may run two batches at once, so the third batch is the second seller's. */
let sellers: Record<string, string>[] = [];

function spawnMatte(args: string[], extra: Record<string, string>): Proc {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-scale-'));
  let log = '';
  const proc = spawn(path.join(ROOT, 'bin/matte'), args, {
    env: { ...process.env, ...env, DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (d) => (log += d));
  proc.stderr!.on('data', (d) => (log += d));
  const p = { proc, dataDir, log: () => log };
  procs.push(p);
  return p;
}

async function until(ready: () => Promise<boolean>, what: string, timeoutMs = 90_000) {
  for (const deadline = Date.now() + timeoutMs; !(await ready().catch(() => false));) {
    if (Date.now() > deadline) throw new Error(`${what} not ready`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  if (!RUN) return;
  db = await createTestDatabase('postgres');
  s3 = await startS3();
  // Short leases, so the killed worker's photos are taken over within seconds.
  env = { DATABASE_URL: db.databaseUrl, MATTE_LEASE_MS: '4000', ...s3.env('matte') };
  for (let i = 0; i < 2; i++) apis.push(await startServer({ ...env, MATTE_WORKER: '0' }));
  sellers = [];
  for (const email of ['fleet-a@example.com', 'fleet-b@example.com']) {
    const created = await apis[0].createAccount(email, 200);
    sellers.push({ authorization: `Bearer ${created.apiKey}` });
  }
}, 180_000);

afterAll(async () => {
  for (const p of procs) {
    if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
    fs.rmSync(p.dataDir, { recursive: true, force: true });
  }
  for (const a of apis) await a.stop();
  await s3?.close();
  await db?.drop();
});

describe.skipIf(!RUN)('two API processes and two workers on PostgreSQL and S3', () => {
  it('runs three batches of 2 through either API, survives a SIGKILLed worker, and charges each photo once', async () => {
    const [a, b] = apis;
    const sellerOf = (n: number) => sellers[n < 2 ? 0 : 1];
    // A client that keeps to the limits, as the spec asks: @matte/client's fetch waits out a 429's Retry-After
    // before repeating a GET. The polls below spend most of a seller's 60 requests a minute, so the calls
    // after them may meet one.
    const send = retryingFetch((request) => fetch(request));
    const callAs = (auth: Record<string, string>, api: RunningServer, p: string, init: RequestInit = {}) =>
      send(
        new Request(`${api.base}${p}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } }),
      );
    let auth = sellers[0];
    const call = (api: RunningServer, p: string, init: RequestInit = {}) => callAs(auth, api, p, init);

    // Limits are shared: one key's requests are counted across both APIs.
    const first = Number((await call(a, '/v1/account')).headers.get('ratelimit-remaining'));
    const second = Number((await call(b, '/v1/account')).headers.get('ratelimit-remaining'));
    expect(second).toBe(first - 1);

    // Workers: one runs the model itself, the other on bin/matte inference-server.
    const inferencePort = await freePort();
    spawnMatte(['inference-server', '--port', String(inferencePort), '--host', '127.0.0.1'], {});
    const modelUrl = `http://127.0.0.1:${inferencePort}/v2/models/isnet`;
    await until(async () => (await fetch(`${modelUrl}/ready`)).ok, 'inference server');
    const metricsPorts = [await freePort(), await freePort()];
    const workers = [
      spawnMatte(['worker'], { MATTE_METRICS_PORT: String(metricsPorts[0]) }),
      spawnMatte(['worker'], { MATTE_METRICS_PORT: String(metricsPorts[1]), MATTE_INFERENCE_URL: modelUrl }),
    ];
    for (const port of metricsPorts)
      await until(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, `worker on ${port}`);

    const photos = evalEntries()
      .filter((e) => e.image.endsWith('.jpg'))
      .map((e) => evalFile(e.image));
    const before = await Promise.all(
      sellers.map(async (seller) => (await (await callAs(seller, a, '/v1/account')).json()).credits.plan as number),
    );
    const ids: string[] = [];
    const streams: FollowedBatch[] = [];
    for (let n = 0; n < BATCHES; n++) {
      auth = sellerOf(n);
      const via = n % 2 === 0 ? a : b;
      const id = (await (await call(via, '/v1/jobs', { method: 'POST' })).json()).id as string;
      // Half the photos through each API.
      for (const [k, api] of [a, b].entries()) {
        const form = new FormData();
        for (let i = k; i < PER_BATCH; i += 2)
          form.append(
            'files',
            new Blob([new Uint8Array(photos[(n * PER_BATCH + i) % photos.length])]),
            `p${n}-${i}.jpg`,
          );
        const added = await (await call(api, `/v1/jobs/${id}/items`, { method: 'POST', body: form })).json();
        expect(added.added).toBe(PER_BATCH / 2);
      }
      // The stream is served by the API that did not create the batch. On a slow host the batches outlast
      // a stream's ten minutes: the client then reconnects with Last-Event-ID, as EventSource does.
      streams.push(await followBatch(`${(via === a ? b : a).base}/v1/jobs/${id}/events`, auth));
      expect((await call(via, `/v1/jobs/${id}/start`, { method: 'POST' })).status).toBe(202);
      ids.push(id);
    }

    // SIGKILL the first worker once it has finished a few photos.
    auth = sellers[0];
    await until(
      async () => {
        const job = await (await call(a, `/v1/jobs/${ids[0]}?fields=summary`)).json();
        return job.counts.done >= 1;
      },
      'first photos',
      180_000,
    );
    workers[0].proc.kill('SIGKILL');

    for (const [n, id] of ids.entries())
      await until(
        async () => (await (await callAs(sellerOf(n), b, `/v1/jobs/${id}?fields=summary`)).json()).status === 'done',
        `batch ${id}`,
        600_000,
      );

    const charged = [0, 0];
    for (const [n, id] of ids.entries()) {
      auth = sellerOf(n);
      const job = await (await call(n % 2 ? a : b, `/v1/jobs/${id}`)).json();
      expect(job.counts).toMatchObject({ total: PER_BATCH, done: PER_BATCH, failed: 0 });
      charged[n < 2 ? 0 : 1] += job.items.filter((i: any) => !i.refunded).length;
      // Events complete and in order on the other API's stream: one per photo, then job.done.
      await streams[n].ended;
      const events = eventsOf(streams[n].messages);
      const seq = events.map((e) => e.id);
      expect(seq).toEqual([...seq].sort((x, y) => x - y));
      expect(new Set(seq).size).toBe(seq.length);
      const perPhoto = events.filter((e) => e.event.startsWith('item.'));
      expect(perPhoto).toHaveLength(PER_BATCH);
      expect(new Set(perPhoto.map((e) => e.body.data.itemId)).size).toBe(PER_BATCH);
      expect(events.at(-1)?.event).toBe('job.done');
      // Results and ZIPs from either API.
      for (const api of [a, b]) {
        const file = await call(api, `/v1/jobs/${id}/items/${job.items[n % PER_BATCH].id}/file`);
        expect(file.status).toBe(200);
        const zip = await call(api, `/v1/jobs/${id}/download?optimize=off`);
        const body = Buffer.from(await zip.arrayBuffer());
        expect(zip.status, body.toString('utf8', 0, 500)).toBe(200);
        expect(zip.headers.get('content-length')).toBe(String(body.length));
        expect((await unzip(body)).size).toBe(PER_BATCH);
      }
    }
    // Each photo charged exactly once, and each seller's ledger says the same.
    for (const [k, seller] of sellers.entries()) {
      const account = await (await callAs(seller, b, '/v1/account')).json();
      expect(before[k] - account.credits.plan).toBe(charged[k]);
      const ledger = (await (await callAs(seller, a, '/v1/credits/ledger?limit=200')).json()).entries.filter((e: any) =>
        ids.includes(e.jobId),
      );
      const reserves = new Map<string, number>();
      for (const e of ledger) if (e.kind === 'reserve') reserves.set(e.itemId, (reserves.get(e.itemId) ?? 0) + 1);
      const photosOfSeller = (k === 0 ? 2 : 1) * PER_BATCH;
      expect(reserves.size).toBe(photosOfSeller);
      expect([...reserves.values()].every((times) => times === 1)).toBe(true);
      expect(ledger.filter((e: any) => e.kind === 'commit')).toHaveLength(charged[k]);
      expect(ledger.filter((e: any) => e.kind === 'release')).toHaveLength(photosOfSeller - charged[k]);
    }

    // No process keeps a result on its own disk.
    for (const dir of [...apis.map((x) => x.dataDir), ...procs.map((p) => p.dataDir)])
      expect(filesUnder(path.join(dir, 'blobs'))).toEqual([]);
    expect(s3.objects().filter((k) => k.includes(ids[0])).length).toBeGreaterThanOrEqual(PER_BATCH * 3);
  }, 900_000);
});
