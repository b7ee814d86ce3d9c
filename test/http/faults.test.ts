// Faults an operator meets: the database unreachable (503 SERVICE_UNAVAILABLE with Retry-After at once,
// /readyz naming it, full recovery) and the data volume full (507 STORAGE_FULL on what writes, reads
// answering, everything back once there is room).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { createTestDatabase, PG_ADMIN_URL, PG_AVAILABLE, type TestDatabase } from '../helpers/databases.ts';
import { productPhoto } from '../helpers/images.ts';

/** A TCP proxy in front of PostgreSQL that the test can cut (every connection dropped, new ones refused) and restore. */
async function cuttableProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    async cut() {
      await new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      });
    },
    async restore() {
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe.skipIf(!PG_AVAILABLE)('the database unreachable (PostgreSQL)', () => {
  let db: TestDatabase;
  let proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  let t: TestApp;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const url = new URL(db.databaseUrl);
    const admin = new URL(PG_ADMIN_URL);
    proxy = await cuttableProxy({ host: admin.hostname, port: Number(admin.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    t = await createTestApp({ databaseUrl: url.toString() });
  });
  afterAll(async () => {
    await t?.close().catch(() => undefined);
    await proxy?.close();
    await db?.drop();
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After at once, /readyz names the database, and all comes back', async () => {
    const { auth } = await t.account(5);
    const created = await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;

    await proxy.cut();
    for (const request of [
      { method: 'GET' as const, url: '/v1/account' },
      { method: 'GET' as const, url: `/v1/jobs/${id}` },
      { method: 'POST' as const, url: '/v1/jobs' },
    ]) {
      const res = await t.app.inject({
        ...request,
        headers: auth,
        ...(request.method === 'POST' ? { payload: {} } : {}),
      });
      expect(res.statusCode, `${request.method} ${request.url}`).toBe(503);
      expect(res.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
      expect(res.headers['retry-after']).toBe('5');
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().failing).toEqual(['database']);

    await proxy.restore();
    let account;
    for (const deadline = Date.now() + 10_000; ;) {
      account = await t.app.inject({ method: 'GET', url: '/v1/account', headers: auth });
      if (account.statusCode === 200 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(account.statusCode).toBe(200);
    expect(account.json().credits.plan).toBe(5);
    expect((await t.app.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: auth })).json().status).toBe('draft');
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});

/** A small tmpfs, where this process may mount one (root on Linux); undefined elsewhere. */
function smallVolume(megabytes: number): string | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}

const VOLUME = smallVolume(16);
if (!VOLUME)
  console.warn('[matte tests] cannot mount a tmpfs here (needs root on Linux): the full-volume test is SKIPPED');

describe.skipIf(!VOLUME)('the data volume full (SQLite and files on a 16 MB tmpfs)', () => {
  let t: TestApp;
  const filler = path.join(VOLUME ?? '/nonexistent', 'filler');
  beforeAll(async () => {
    t = await createTestApp({ dataDir: path.join(VOLUME!, 'data') });
  });
  afterAll(async () => {
    await t?.close().catch(() => undefined);
    if (VOLUME) {
      execFileSync('umount', [VOLUME]);
      fs.rmSync(VOLUME, { recursive: true, force: true });
    }
  });

  function fill() {
    const fd = fs.openSync(filler, 'a');
    const chunk = Buffer.alloc(256 * 1024, 1);
    try {
      for (;;) fs.writeSync(fd, chunk);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    } finally {
      fs.closeSync(fd);
    }
  }

  it('answers 507 STORAGE_FULL to writes and keeps answering reads, then works again when there is room', async () => {
    const { auth } = await t.account(5);
    const id = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json().id;
    const photo = await productPhoto();
    fill();

    const read = await t.app.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: auth });
    expect(read.statusCode, read.body).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/v1/account', headers: auth })).statusCode).toBe(200);
    const create = await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} });
    expect(create.statusCode).toBe(507);
    expect(create.json()).toMatchObject({ code: 'STORAGE_FULL' });
    const form = multipart([{ name: 'files', filename: 'a.jpg', data: photo }]);
    const upload = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${id}/items`,
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    expect(upload.statusCode).toBe(507);
    expect(upload.json().code).toBe('STORAGE_FULL');

    fs.rmSync(filler);
    const again = multipart([{ name: 'files', filename: 'a.jpg', data: photo }]);
    const added = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${id}/items`,
      headers: { ...auth, ...again.headers },
      payload: again.payload,
    });
    expect(added.statusCode).toBe(200);
    expect(added.json().added).toBe(1);
    expect(added.json().items).toHaveLength(1);
    expect((await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).statusCode).toBe(201);
  });

  it('a batch running while the volume fills: uploads 507, every read 200 throughout (long-polls too), every photo finishes once there is room, charged exactly', async () => {
    const { auth, accountId } = await t.account(10);
    const id = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json().id;
    const photos = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => productPhoto(300 + i * 10, 220)));
    const form = multipart(photos.map((data, i) => ({ name: 'files', filename: `p${i}.jpg`, data })));
    await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${id}/items`,
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    // The photos wait at the model while the volume fills, then run into it.
    const release = t.model.hold();
    expect((await t.app.inject({ method: 'POST', url: `/v1/jobs/${id}/start`, headers: auth })).statusCode).toBe(202);
    // SQLite's write-ahead log keeps the room it grew to; on an operator's volume, full for minutes, a
    // checkpoint gives that back and the files take it. Here at once: every database write now fails.
    // The key was last used over a minute ago: its next request records "last used", a write.
    const sqlite = new Database(path.join(VOLUME!, 'data', 'matte.sqlite'));
    try {
      sqlite.prepare('update api_keys set last_used_at = 0 where account_id = ?').run(accountId);
      sqlite.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      sqlite.close();
    }
    fill();
    release();

    const first = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: auth })).json();
    const itemId = first.items[0].id;
    const reads = [
      `/v1/jobs/${id}?wait=1`,
      `/v1/jobs/${id}?fields=summary`,
      `/v1/jobs/${id}?since=${first.updatedAt}&wait=1`,
      '/v1/jobs',
      `/v1/jobs/${id}/review`,
      `/v1/jobs/${id}/webhooks`,
      `/v1/jobs/${id}/items/${itemId}/file?variant=input`,
      '/v1/account',
      '/v1/credits/ledger',
      '/v1/presets',
    ];
    const answers = new Map<string, number>();
    const until = Date.now() + 4000;
    while (Date.now() < until)
      for (const url of reads) {
        const res = await t.app.inject({ method: 'GET', url, headers: auth });
        const seen = `${url.split('?')[0]} ${res.statusCode} ${res.statusCode === 200 ? '' : res.json().code}`;
        answers.set(seen, (answers.get(seen) ?? 0) + 1);
      }
    expect([...answers.keys()].filter((k) => !/ 200 $/.test(k))).toEqual([]);
    const upload = multipart([{ name: 'files', filename: 'late.jpg', data: photos[0]! }]);
    const second = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).statusCode;
    expect(second).toBe(507);

    fs.rmSync(filler);
    const done = await waitForBatch(t.app, auth, id, 60_000);
    expect(done.status).toBe('done');
    expect(done.counts).toMatchObject({ total: 6, done: 6, failed: 0 });
    // Charged exactly: one credit a clean photo, nothing twice, and the ledger agrees with the balance.
    const clean = (done.items as { refunded: boolean }[]).filter((i) => !i.refunded).length;
    const account = (await t.c.store.repos.accounts.findById(accountId))!;
    expect(account.plan_credits).toBe(10 - clean);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 10 - clean, pack: 0 });
    expect(upload.payload.length).toBeGreaterThan(0);
    const db = new Database(path.join(VOLUME!, 'data', 'matte.sqlite'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });
});
