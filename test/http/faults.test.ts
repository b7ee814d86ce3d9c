// Faults an operator meets: the database unreachable (503 SERVICE_UNAVAILABLE with Retry-After at once,
// /readyz naming it, full recovery) and the data volume full (507 STORAGE_FULL on what writes, reads
// answering, everything back once there is room).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, multipart, type TestApp } from '../helpers/test-app.ts';
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
      const started = Date.now();
      const res = await t.app.inject({
        ...request,
        headers: auth,
        ...(request.method === 'POST' ? { payload: {} } : {}),
      });
      expect(res.statusCode, `${request.method} ${request.url}`).toBe(503);
      expect(res.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
      expect(res.headers['retry-after']).toBe('5');
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(Date.now() - started).toBeLessThan(8000);
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
    const fd = fs.openSync(filler, 'w');
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
});
