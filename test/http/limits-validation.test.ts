// Rate limits (requests per minute, photos per hour), strict validation, problem+json for answers
// made before routing, ledger paging, and the OpenAPI document (linted with Redocly's real linter).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { addFiles, createTestApp, multipart, type TestApp } from '../helpers/test-app.ts';
import { makeZip, productPhoto } from '../helpers/images.ts';
import { resolveRefs } from '../helpers/openapi.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ publicBaseUrl: 'https://api.matte.test' });
});
afterAll(async () => t?.close());

const upload = (auth: Record<string, string>, jobId: string, files: { filename: string; data: Buffer }[]) =>
  addFiles(t.app, auth, jobId, files);

describe('requests per minute, per key', () => {
  it('answers 60 of 130 requests sent at once; the rest get 429 RATE_LIMITED with Retry-After, and every answer has the headers', async () => {
    const { auth, apiKey } = await t.account();
    const answers = await Promise.all(
      Array.from({ length: 130 }, () => t.app.inject({ method: 'GET', url: '/v1/account', headers: auth })),
    );
    const ok = answers.filter((a) => a.statusCode === 200);
    const limited = answers.filter((a) => a.statusCode === 429);
    expect(ok).toHaveLength(60);
    expect(limited).toHaveLength(70);
    for (const a of limited) {
      expect(a.headers['content-type']).toContain('application/problem+json');
      const body = a.json();
      expect(body.code).toBe('RATE_LIMITED');
      expect(body.retryAfter).toBeGreaterThanOrEqual(1);
      expect(body.retryAfter).toBeLessThanOrEqual(61);
      expect(a.headers['retry-after']).toBe(String(body.retryAfter));
      expect(a.headers['ratelimit-remaining']).toBe('0');
    }
    for (const a of answers) {
      expect(a.headers['ratelimit-limit']).toBe('60');
      expect(a.headers['x-matte-photos-limit']).toBe('2000');
    }
    expect(ok.map((a) => Number(a.headers['ratelimit-remaining'])).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 60 }, (_, i) => i),
    );
    // Another key of the same account has its own budget; no key is not counted at all.
    const other = await t.c.accounts.createKey((await t.c.accounts.authenticate(apiKey)).accountId, 'second');
    expect(
      (await t.app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${other.apiKey}` } }))
        .statusCode,
    ).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/v1/account' })).json().code).toBe('UNAUTHENTICATED');
  });

  it('counts a sliding window: requests come back a minute after they were made, and refused ones are not counted', async () => {
    let now = 1_800_000_000_000;
    const timed = await createTestApp({}, { runWorker: false, clock: () => now });
    try {
      const { auth } = await timed.account();
      const get = () => timed.app.inject({ method: 'GET', url: '/v1/presets', headers: auth });
      for (let i = 0; i < 30; i++) expect((await get()).statusCode).toBe(200);
      now += 30_000;
      for (let i = 0; i < 30; i++) expect((await get()).statusCode).toBe(200);
      const refused = await get();
      expect(refused.statusCode).toBe(429);
      // The first 30 leave the window 61 s after their second began (30 s from here, plus the bucket).
      expect(refused.json().retryAfter).toBe(31);
      now += 10_000;
      for (let i = 0; i < 20; i++) expect((await get()).statusCode).toBe(429);
      now += 21_000; // 61 s after the first 30: they have left; the refused 21 never counted
      for (let i = 0; i < 30; i++) expect((await get()).statusCode, `request ${i}`).toBe(200);
      expect((await get()).statusCode).toBe(429);
    } finally {
      await timed.close();
    }
  });
});

describe('photos per hour, per key', () => {
  it('counts added photos across batches: past 2,000 the extra photos are rejected, then uploads get 429', async () => {
    const { auth } = await t.account();
    const tiny = await productPhoto(48, 36);
    const zipOf = (n: number, tag: string) =>
      makeZip(Array.from({ length: n }, (_, i) => ({ name: `${tag}-${i}.jpg`, data: tiny })));
    let added = 0;
    for (const [i, n] of [200, 200, 200, 200, 200, 200, 200, 200, 200, 190].entries()) {
      const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
      const res = await upload(auth, job.id, [{ filename: `b${i}.zip`, data: zipOf(n, `b${i}`) }]);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().added).toBe(n);
      added += n;
      expect(Number(res.headers['x-matte-photos-remaining'])).toBe(2000 - added + n); // counted before this upload
    }
    const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
    const partial = await upload(auth, job.id, [{ filename: 'last.zip', data: zipOf(20, 'last') }]);
    expect(partial.json().added).toBe(10);
    const over = partial.json().rejected.filter((r: { reason: string }) => r.reason.includes('hourly photo budget'));
    expect(over).toHaveLength(10);
    const refused = await upload(auth, job.id, [{ filename: 'one.jpg', data: tiny }]);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused.json().retryAfter).toBeGreaterThan(3000);
    expect(Number(refused.headers['retry-after'])).toBe(refused.json().retryAfter);
    expect(refused.headers['x-matte-photos-remaining']).toBe('0');
    const single = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers: auth,
      payload: { imageBase64: tiny.toString('base64') },
    });
    expect(single.json().code).toBe('RATE_LIMITED');
    // Nothing of the refused photos was kept: the batch holds the 10 that fitted.
    expect((await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}`, headers: auth })).json().counts.total).toBe(
      10,
    );
  });
});

describe('validation never coerces', () => {
  it('a JSON body with the wrong type is 400 VALIDATION, not converted', async () => {
    const { auth } = await t.account();
    for (const payload of [
      { name: 123 },
      { name: true },
      { defaults: { scale: '2' } },
      { defaults: { sharpen: '5' } },
      { webhookEvents: 'job.done' },
    ]) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('VALIDATION');
    }
    const named = await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: { name: 123 } });
    expect(named.json().errors[0].path).toBe('body/name');
    expect((await t.app.inject({ method: 'GET', url: '/v1/jobs', headers: auth })).json().jobs).toEqual([]);
  });

  it('query numbers must be finite decimal whole numbers in range', async () => {
    const { auth } = await t.account();
    const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
    for (const query of [
      'since=1e400',
      'since=1e3',
      'since=Infinity',
      'since=-1',
      'since=9007199254740992',
      'wait=0x10',
      'wait=61',
      'wait=1.5',
      'since=',
      'since=12abc',
    ]) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}?${query}`, headers: auth });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code, query).toBe('VALIDATION');
    }
    for (const query of ['limit=0', 'limit=101', 'limit=1e1', 'before=1.5']) {
      expect((await t.app.inject({ method: 'GET', url: `/v1/jobs?${query}`, headers: auth })).statusCode, query).toBe(
        400,
      );
    }
    expect((await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}?since=0`, headers: auth })).statusCode).toBe(
      200,
    );
    expect((await t.app.inject({ method: 'GET', url: '/v1/jobs?limit=5', headers: auth })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/v1/credits/ledger?limit=201', headers: auth })).statusCode).toBe(
      400,
    );
  });
});

describe('answers made before routing are problem+json', () => {
  let port: number;
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });

  /** Sends raw bytes and reads the whole answer (the server closes the connection on parser errors). */
  function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => {
        data += chunk;
        const [head, body = ''] = data.split('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(head)?.[1];
        if (length !== undefined && Buffer.byteLength(body) >= Number(length)) socket.end();
      });
      socket.on('error', reject);
      socket.on('close', () => {
        const [head, ...rest] = data.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), headers: head, body: rest.join('\r\n\r\n') });
      });
    });
  }

  it('431 for headers over 16 KB', async () => {
    const res = await raw(`GET /v1/account HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(res.body)).toMatchObject({
      status: 431,
      code: 'HEADERS_TOO_LARGE',
      type: 'https://api.matte.test/docs/errors#HEADERS_TOO_LARGE',
    });
  });

  it('414 for a 10 KB path parameter, 400 for a malformed request line or URL', async () => {
    const { apiKey } = await t.account();
    const long = await fetch(`http://127.0.0.1:${port}/v1/jobs/${'j'.repeat(10 * 1024)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(long.status).toBe(414);
    expect(long.headers.get('content-type')).toContain('application/problem+json');
    expect((await long.json()).code).toBe('URI_TOO_LONG');
    const bad = await raw('GARBAGE\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).code).toBe('VALIDATION');
    const badUrl = await fetch(`http://127.0.0.1:${port}/v1/jobs/%E0%A4%A`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(badUrl.status).toBe(400);
    expect((await badUrl.json()).code).toBe('VALIDATION');
  });
});

describe('the ledger', () => {
  it('pages newest first without overlap or gap, even when every row was written in the same millisecond', async () => {
    const frozen = 1_800_000_000_000;
    const same = await createTestApp({}, { runWorker: false, clock: () => frozen });
    try {
      const { auth, accountId } = await same.account(40, 7);
      const photo = await productPhoto(64, 48);
      // 20 photos started (20 reserve rows), one batch deleted before it ran (its releases), grants: all at one instant.
      for (let b = 0; b < 2; b++) {
        const job = (await same.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
        const form = multipart(
          Array.from({ length: 10 }, (_, i) => ({
            name: 'files',
            filename: `${i}.jpg`,
            data: photo,
            type: 'image/jpeg',
          })),
        );
        await same.app.inject({
          method: 'POST',
          url: `/v1/jobs/${job.id}/items`,
          headers: { ...auth, ...form.headers },
          payload: form.payload,
        });
        await same.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
        if (b === 1) await same.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/cancel`, headers: auth });
      }
      for (let i = 0; i < 5; i++)
        await same.c.store.transaction((r) =>
          same.c.credits.grant(r, accountId, 'pack', 1, 'grant', `grant ${i}`, frozen),
        );
      const all = await same.c.store.repos.ledger.listForAccount(accountId);
      expect(all.length).toBeGreaterThan(30);
      expect(new Set(all.map((r) => r.created_at)).size).toBeLessThanOrEqual(2); // one millisecond (or its neighbour)

      const seen: number[] = [];
      const stamps: string[] = [];
      let before: string | null = null;
      for (let page = 0; page < 20; page++) {
        const url: string = `/v1/credits/ledger?limit=7${before ? `&before=${encodeURIComponent(before)}` : ''}`;
        const res = await same.app.inject({ method: 'GET', url, headers: auth });
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json();
        seen.push(...body.entries.map((e: { id: number }) => e.id));
        stamps.push(...body.entries.map((e: { createdAt: string }) => e.createdAt));
        if (!body.hasMore) {
          expect(body.nextBefore).toBeNull();
          break;
        }
        before = body.nextBefore;
      }
      expect(seen).toHaveLength(all.length);
      expect(new Set(seen).size).toBe(all.length);
      expect(seen).toEqual(all.map((r) => Number(r.id)).reverse());
      // `jobId` keeps one batch's rows, paged the same way (the studio's ledger filter).
      const jobId = all.find((r) => r.job_id !== null)!.job_id!;
      const ofJob: number[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 20; page++) {
        const url: string = `/v1/credits/ledger?limit=2&jobId=${jobId}${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`;
        const body = (await same.app.inject({ method: 'GET', url, headers: auth })).json();
        ofJob.push(...body.entries.map((e: { id: number; jobId: string }) => (expect(e.jobId).toBe(jobId), e.id)));
        if (!body.hasMore) break;
        cursor = body.nextBefore;
      }
      expect(ofJob).toEqual(
        all
          .filter((r) => r.job_id === jobId)
          .map((r) => Number(r.id))
          .reverse(),
      );
      expect(ofJob.length).toBeGreaterThan(2);
      // Times are ISO 8601 with microseconds, strictly decreasing down the pages.
      for (const s of stamps) expect(s).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      for (let i = 1; i < stamps.length; i++) expect(stamps[i] < stamps[i - 1]).toBe(true);
      // Every row: the signed movement and the balance after it agree with the row before it in its pool.
      const last: Record<string, number> = { plan: 0, pack: 0 };
      for (const row of all) {
        expect(row.balance_after).toBe(last[row.pool] + row.amount);
        last[row.pool] = row.balance_after;
      }
      // A plain millisecond timestamp with a timezone offset is a valid cursor too.
      const offset = await same.app.inject({
        method: 'GET',
        url: `/v1/credits/ledger?before=${encodeURIComponent('2027-01-15T09:00:00+01:00')}`,
        headers: auth,
      });
      expect(offset.statusCode).toBe(200);
      expect(
        (await same.app.inject({ method: 'GET', url: '/v1/credits/ledger?before=yesterday', headers: auth })).json()
          .code,
      ).toBe('VALIDATION');
      expect(
        (
          await same.app.inject({ method: 'GET', url: '/v1/credits/ledger?before=2026-01-01T00:00:00', headers: auth })
        ).json().code,
      ).toBe('VALIDATION');
    } finally {
      await same.close();
    }
  });
});

describe('the OpenAPI document', () => {
  it('describes itself, every operation with an operationId, summary and error answers, and lints clean (Redocly recommended rules)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    const doc = resolveRefs(res.json());
    expect(doc.paths['/v1/openapi.json'].get.operationId).toBe('getOpenApiDocument');
    const ids = new Set<string>();
    for (const [path, methods] of Object.entries(
      doc.paths as Record<
        string,
        Record<string, { operationId: string; summary: string; responses: Record<string, unknown> }>
      >,
    )) {
      for (const [method, op] of Object.entries(methods)) {
        expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
        expect(ids.has(op.operationId), op.operationId).toBe(false);
        ids.add(op.operationId);
        expect(op.summary, `${method} ${path}`).toBeTruthy();
        expect(
          Object.keys(op.responses).some((s) => s.startsWith('4')),
          `${method} ${path}`,
        ).toBe(true);
      }
    }
    for (const path of [
      '/v1/session',
      '/v1/keys',
      '/v1/keys/{keyId}',
      '/v1/license/redeem',
      '/v1/credits/purchases',
      '/v1/credits/packs',
      '/v1/account',
    ])
      expect(doc.paths[path], path).toBeDefined();
    expect(doc.paths['/v1/keys'].post.responses['409']).toBeDefined();
    expect(doc.paths['/v1/keys'].post.responses['403']).toBeDefined();
    expect(doc.paths['/v1/account'].get.responses['429'].headers['Retry-After']).toBeDefined();
    expect(doc.paths['/v1/account'].get.responses['200'].headers['RateLimit-Remaining']).toBeDefined();
    expect(doc.paths['/v1/session'].post.responses['200'].headers['Set-Cookie']).toBeDefined();
    expect(doc.components.securitySchemes.session).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'matte_session',
    });

    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: res.body, absoluteRef: '/v1/openapi.json', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });
});

describe('Idempotency-Key', () => {
  it('answers 409 IN_PROGRESS while the first request runs, then replays its answer; a different request under the key is refused', async () => {
    const { auth, accountId } = await t.account(3);
    const photo = (await productPhoto()).toString('base64');
    const headers = { ...auth, 'idempotency-key': 'image.in-progress:1' };
    const release = t.model.hold();
    // inject() dispatches when its result is awaited or then-ed: start the first request now.
    const first = Promise.resolve(
      t.app.inject({ method: 'POST', url: '/v1/images', headers, payload: { imageBase64: photo, response: 'json' } }),
    );
    try {
      // The first request is waiting for the model: the same key now is IN_PROGRESS, and nothing runs twice.
      let second;
      for (let i = 0; i < 50; i++) {
        second = await t.app.inject({
          method: 'POST',
          url: '/v1/images',
          headers,
          payload: { imageBase64: photo, response: 'json' },
        });
        if (second.statusCode === 409) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(second!.statusCode).toBe(409);
      expect(second!.json().code).toBe('IN_PROGRESS');
    } finally {
      release();
    }
    const answered = await first;
    expect(answered.statusCode).toBe(200);
    const replay = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers,
      payload: { imageBase64: photo, response: 'json' },
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().jobId).toBe(answered.json().jobId);
    const other = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers,
      payload: { imageBase64: photo, response: 'json', timeout: 30 },
    });
    expect(other.json()).toMatchObject({ code: 'CONFLICT', reason: 'IDEMPOTENCY_KEY_REUSED' });
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(2);
    expect((await t.app.inject({ method: 'GET', url: '/v1/jobs', headers: auth })).json().jobs).toHaveLength(1);
  });

  it('replays a refusal too (the first answer), while a request without the key runs afresh', async () => {
    const { auth, accountId } = await t.account(1);
    const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
    const photo = await productPhoto();
    await upload(auth, job.id, [
      { filename: 'a.jpg', data: photo },
      { filename: 'b.jpg', data: photo },
    ]);
    const headers = { ...auth, 'idempotency-key': 'start-refused-01' };
    const refused = await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers });
    expect(refused.json()).toMatchObject({ code: 'NO_CREDITS', needed: 2, balance: 1 });
    await t.c.store.transaction((r) => t.c.credits.grant(r, accountId, 'pack', 5, 'grant', 'top-up', Date.now()));
    const replayed = await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers });
    expect(replayed.statusCode).toBe(402);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json()).toMatchObject({ code: 'NO_CREDITS', needed: 2, balance: 1 });
    const fresh = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${job.id}/start`,
      headers: { ...auth, 'idempotency-key': 'start-refused-02' },
    });
    expect(fresh.statusCode).toBe(202);
  });
});

describe('photos per batch', () => {
  it('two uploads to one draft at once never add more than 200 photos together', async () => {
    const { auth } = await t.account();
    const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
    const tiny = await productPhoto(48, 36);
    const zipOf = (tag: string) =>
      makeZip(Array.from({ length: 150 }, (_, i) => ({ name: `${tag}-${i}.jpg`, data: tiny })));
    const answers = await Promise.all(
      ['a', 'b'].map((tag) => upload(auth, job.id, [{ filename: `${tag}.zip`, data: zipOf(tag) }])),
    );
    const added = answers.map((a) => a.json().added as number);
    expect(added[0] + added[1]).toBe(200);
    const full = await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}`, headers: auth });
    expect(full.json().counts.total).toBe(200);
    expect(full.json().rejected.filter((r: { reason: string }) => r.reason.includes('200 photos'))).toHaveLength(100);
  });
});
