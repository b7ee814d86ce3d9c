// The scale-out figures of `npm run bench -- all` (issue 25), each measured in this run:
//  - throughput with the model in the process against the model on `bin/matte inference-server` on the same
//    machine (a ratio of photos a second, rounds alternated);
//  - the queue's claim latency with 10,000 pending photos on PostgreSQL (FOR UPDATE SKIP LOCKED);
//  - SQL statements per photo, a whole batch's (adding, starting, following, running, settling), read from
//    the server's matte_db_statements_total on PostgreSQL;
//  - P5: a worker's peak RSS over five batches of 12-megapixel photos with MATTE_LOW_MEMORY=1's settings (bench/memory.ts;
//    the default's peak is bench:memory's first row).
// PostgreSQL figures are left out, saying so, where no PostgreSQL answers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { createDatabase } from '../src/db/database.ts';
import { Store } from '../src/db/store.ts';
import type { NewItem } from '../src/db/schema.ts';
import { evalEntries, evalFile } from '../tools/shared-data.ts';
import { createTestDatabase, PG_AVAILABLE } from '../test/helpers/databases.ts';
import { dbTierServices } from '../test/helpers/services.ts';
import { productPhoto } from '../test/helpers/images.ts';
import { freePort, startServer, type RunningServer } from '../test/helpers/server.ts';
import { bigPhotos, runBatch, worker, type WorkerFigures } from './memory.ts';
import { percentile as pct } from '../tools/figures.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface ScaleFigures {
  remote?: { inProcess: number; remote: number; ratio: number; photos: number; rounds: number };
  claim?: { pending: number; p50Ms: number; p99Ms: number; claims: number };
  statementsPerPhoto?: { statements: number; photos: number; perPhoto: number };
  worker?: WorkerFigures;
  skipped: string[];
}

async function until(ready: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await ready().catch(() => false));) {
    if (Date.now() > deadline) throw new Error(`${what} not ready`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function apiKeyOf(server: RunningServer): Promise<Record<string, string>> {
  const email = `scale${Date.now()}${Math.random().toString(36).slice(2, 6)}@example.com`;
  const { apiKey } = await server.createAccount(email, 5000);
  return { authorization: `Bearer ${apiKey}` };
}

/** The in-process model against bin/matte inference-server on this machine, rounds alternated. */
async function remoteRatio(photos: Buffer[], rounds: number): Promise<ScaleFigures['remote']> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-bench-inference-'));
  const inference: ChildProcess = spawn(
    path.join(ROOT, 'bin/matte'),
    ['inference-server', '--port', String(port), '--host', '127.0.0.1'],
    { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}/v2/models/isnet`;
  const env = { MATTE_REQUESTS_PER_MINUTE: '100000', LOG_LEVEL: 'error' };
  let local: RunningServer | undefined;
  let remote: RunningServer | undefined;
  try {
    await until(async () => (await fetch(`${url}/ready`)).ok, 'inference server');
    // Both servers are up together; each computes only while its own batch runs, so they never share the cores.
    local = await startServer(env);
    remote = await startServer({ ...env, MATTE_INFERENCE_URL: url });
    const [localAuth, remoteAuth] = [await apiKeyOf(local), await apiKeyOf(remote)];
    await runBatch(local, localAuth, photos.slice(0, 1)); // warm-ups
    await runBatch(remote, remoteAuth, photos.slice(0, 1));
    let localSeconds = 0;
    let remoteSeconds = 0;
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        localSeconds += await runBatch(local, localAuth, photos);
        remoteSeconds += await runBatch(remote, remoteAuth, photos);
      } else {
        remoteSeconds += await runBatch(remote, remoteAuth, photos);
        localSeconds += await runBatch(local, localAuth, photos);
      }
    }
    const inProcess = (rounds * photos.length) / localSeconds;
    const viaServer = (rounds * photos.length) / remoteSeconds;
    return { inProcess, remote: viaServer, ratio: viaServer / inProcess, photos: photos.length, rounds };
  } finally {
    await local?.stop();
    await remote?.stop();
    inference.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The claim with 10,000 pending photos on PostgreSQL: one started batch of 200, copied to 10,000 rows. */
async function claimLatency(pending: number, claims: number): Promise<ScaleFigures['claim']> {
  const tdb = await createTestDatabase('postgres');
  const store = new Store(await createDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir }));
  try {
    const now = Date.now();
    const { accounts, batches, intake, queue } = dbTierServices(store, tdb.dataDir, () => now);
    const { accountId } = await accounts.createAccount({ email: 'claims@example.com', plan: 200, pack: 0 });
    const job = await batches.createJob(accountId, {}, null);
    const photo = await productPhoto(120, 100);
    await intake.addPhotos(
      accountId,
      job.id,
      Array.from({ length: 200 }, (_, i) => ({ name: `${i}.jpg`, data: photo })),
    );
    await batches.start(accountId, job.id, {});
    const rows = await store.repos.items.listForJob(job.id);
    for (let copy = 1; copy * rows.length < pending; copy++)
      await store.repos.items.insertMany(
        rows.map(
          (row) => ({ ...row, id: `${row.id}c${copy}`, position: row.position + copy * rows.length }) as NewItem,
        ),
      );
    const times: number[] = [];
    for (let i = 0; i < claims; i++) {
      const started = performance.now();
      const item = await queue.claimNext(`bench-${i % 4}`, 60_000);
      times.push(performance.now() - started);
      if (!item) throw new Error('the queue ran dry');
    }
    return { pending, claims, p50Ms: pct(times, 50), p99Ms: pct(times, 99) };
  } finally {
    await store.close();
    await tdb.drop();
  }
}

/** Statements a photo costs on PostgreSQL, read from the server's own counter around one batch. */
async function statementsPerPhoto(photos: Buffer[]): Promise<ScaleFigures['statementsPerPhoto']> {
  const tdb = await createTestDatabase('postgres');
  const metricsPort = await freePort();
  const server = await startServer({
    DATABASE_URL: tdb.databaseUrl,
    MATTE_METRICS_PORT: String(metricsPort),
    MATTE_REQUESTS_PER_MINUTE: '100000',
    LOG_LEVEL: 'error',
  });
  const counter = async () =>
    Number(
      /^matte_db_statements_total\{[^}]*\} (\d+)/m.exec(
        await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(),
      )?.[1],
    );
  try {
    const auth = await apiKeyOf(server);
    await runBatch(server, auth, photos.slice(0, 1)); // warm: the model loaded, the statements prepared
    const before = await counter();
    await runBatch(server, auth, photos);
    // The worker settles, then records the batch's end; give the last statements a moment to land.
    await new Promise((r) => setTimeout(r, 1000));
    const statements = (await counter()) - before;
    return { statements, photos: photos.length, perPhoto: statements / photos.length };
  } finally {
    await server.stop();
    await tdb.drop();
  }
}

export async function scaleFigures(): Promise<ScaleFigures> {
  const figures: ScaleFigures = { skipped: [] };
  const photos = evalEntries()
    .filter((e) => e.kind === 'product' && e.image.endsWith('.jpg'))
    .slice(0, 6)
    .map((e) => evalFile(e.image));
  // BENCH_SCALE_PARTS=statements (a comma list of remote, claim, statements, worker) runs those parts alone.
  const parts = new Set((process.env.BENCH_SCALE_PARTS ?? 'remote,claim,statements,worker').split(','));
  if (parts.has('remote')) figures.remote = await remoteRatio(photos, Number(process.env.BENCH_REMOTE_ROUNDS ?? 2));
  if (PG_AVAILABLE) {
    if (parts.has('claim')) figures.claim = await claimLatency(10_000, 300);
    if (parts.has('statements')) figures.statementsPerPhoto = await statementsPerPhoto(photos);
  } else figures.skipped.push('PostgreSQL figures: no PostgreSQL answers (MATTE_TEST_PG_URL)');
  if (parts.has('worker') && process.env.BENCH_MEMORY !== '0')
    figures.worker = await worker(await bigPhotos(4), {
      arena: false,
      optimization: 'extended',
      cached: true,
      malloc: 'memory',
      inFlight: 2,
      // MATTE_LOW_MEMORY=1 runs the weights as stored.
      float32: false,
    });
  return figures;
}

export function scaleLines(f: ScaleFigures): string[] {
  const fmt = (v: number, d: number) => v.toFixed(d);
  const lines: string[] = [];
  if (f.remote)
    lines.push(
      `model on bin/matte inference-server / in the process, same machine: ${fmt(f.remote.ratio, 3)} (${fmt(f.remote.remote, 3)} vs ${fmt(f.remote.inProcess, 3)} photos/s, ${f.remote.rounds} alternated rounds of ${f.remote.photos})`,
    );
  if (f.claim)
    lines.push(
      `queue claim with ${f.claim.pending.toLocaleString('en')} pending (PostgreSQL): p50 ${fmt(f.claim.p50Ms, 2)} ms, p99 ${fmt(f.claim.p99Ms, 2)} ms (${f.claim.claims} claims)`,
    );
  if (f.statementsPerPhoto)
    lines.push(
      `database statements per photo (PostgreSQL, a whole batch of ${f.statementsPerPhoto.photos}): ${fmt(f.statementsPerPhoto.perPhoto, 1)}`,
    );
  if (f.worker)
    lines.push(
      `P5, MATTE_LOW_MEMORY=1: worker peak RSS over 5 batches of 4 12-MP photos: ${fmt(f.worker.peakMiB, 0)} MiB (after each batch ${f.worker.afterBatchMiB.join(', ')} MiB)`,
    );
  for (const s of f.skipped) lines.push(`skipped: ${s}`);
  return lines;
}

// Alone: npm run bench -- scale (also bench/results/scale.{json,md}); npm run bench -- all runs it as its last section.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = await scaleFigures();
  const lines = scaleLines(figures);
  const dir = path.join(import.meta.dirname, 'results');
  // A run of some parts (BENCH_SCALE_PARTS) is written beside the whole run's files, not over them.
  const name = process.env.BENCH_SCALE_PARTS ? `scale-${process.env.BENCH_SCALE_PARTS.replaceAll(',', '-')}` : 'scale';
  fs.writeFileSync(
    path.join(dir, `${name}.json`),
    `${JSON.stringify({ at: new Date().toISOString(), ...figures }, null, 2)}\n`,
  );
  fs.writeFileSync(
    path.join(dir, `${name}.md`),
    `# npm run bench -- scale, ${new Date().toISOString()}\n\n${lines.map((l) => `- ${l}`).join('\n')}\n`,
  );
  console.log(lines.join('\n'));
}
