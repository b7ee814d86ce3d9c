// @matte/client against the real app over a real socket (fake model): the batch flow, SSE with reconnection,
// long-polls, errors, retries against the server's own rate limit, and webhook signatures of real deliveries.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import {
  createMatteClient,
  MatteApiError,
  MatteConnectionError,
  verifyWebhook,
  WebhookVerificationError,
  type BatchUpdate,
} from '@matte/client';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { startReceiver, type Receiver } from '../helpers/events.ts';
import { unzip } from '../helpers/unzip.ts';

async function listening(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

async function collect(updates: AsyncGenerator<BatchUpdate>): Promise<BatchUpdate[]> {
  const all: BatchUpdate[] = [];
  for await (const u of updates) all.push(u);
  return all;
}

const eventNames = (updates: BatchUpdate[]) => updates.flatMap((u) => (u.type === 'event' ? [u.event.event] : []));

describe('@matte/client, the batch flow', () => {
  let t: TestApp;
  let base: string;
  let receiver: Receiver;
  beforeAll(async () => {
    // Streams end after 400 ms, so following a batch has to reconnect with Last-Event-ID.
    t = await createTestApp({
      requestsPerMinute: 1_000_000,
      allowPrivateNetworks: true,
      sseMaxMs: 400,
      sseKeepAliveMs: 100,
    });
    base = await listening(t);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('creates, fills, starts (with its own Idempotency-Key), follows over SSE and downloads the ZIP', async () => {
    const { apiKey } = await t.account(10);
    const client = createMatteClient({ baseUrl: base, apiKey });
    const batch = await client.createBatch({ name: 'two photos', defaults: { background: { mode: 'white' } } });
    expect(batch.status).toBe('draft');
    const photo = await productPhoto();
    const added = await client.addFiles(batch.id, [
      new File([new Uint8Array(photo)], 'a.jpg'),
      { name: 'b.jpg', data: new Uint8Array(photo) },
      { name: 'c.jpg', data: new Blob([new Uint8Array(photo.subarray(0, 100))]) },
    ]);
    expect(added.added).toBe(2);
    expect(added.rejected.map((r) => r.name)).toEqual(['c.jpg']);
    // The model is held for longer than a stream lives: the client reconnects mid-batch.
    const release = t.model.hold();
    setTimeout(release, 700);
    const started = await client.start(batch.id);
    expect(['queued', 'running']).toContain(started.status);

    const updates = await collect(client.follow(batch.id));
    const events = updates.filter((u) => u.type === 'event').map((u) => (u as { event: { id: number } }).event);
    // Every event once, in order, across reconnections.
    expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((a, b) => a - b));
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(eventNames(updates).filter((e) => e === 'item.done')).toHaveLength(2);
    expect(eventNames(updates).at(-1)).toBe('job.done');
    expect(updates.filter((u) => u.type === 'snapshot').length).toBeGreaterThan(1);

    const done = await client.getBatch(batch.id);
    expect(done.counts).toMatchObject({ done: 2, failed: 0 });
    expect((await client.review(batch.id)).items).toEqual([]);
    const zip = await client.download(batch.id, { optimize: 'off' });
    const entries = await unzip(Buffer.from(await new Response(zip.stream).arrayBuffer()));
    expect([...entries.keys()].sort()).toEqual(['a.png', 'b.png']);
    expect(zip.fileName).toMatch(/\.zip$/);
  });

  it('follows by ?wait= long-polls where SSE is not used', async () => {
    const { apiKey } = await t.account(10);
    const client = createMatteClient({ baseUrl: base, apiKey });
    const batch = await client.createBatch();
    await client.addFiles(batch.id, [{ name: 'a.jpg', data: new Uint8Array(await productPhoto()) }]);
    await client.start(batch.id);
    const updates = await collect(client.follow(batch.id, { transport: 'poll', waitSeconds: 5 }));
    expect(updates.every((u) => u.type === 'poll')).toBe(true);
    const last = updates.at(-1)!;
    expect(last.type === 'poll' && last.batch.status).toBe('done');
  });

  it("touches up a finished photo's cut-out and reverts it (touchUp, revertTouchUp), refusals as MatteApiError", async () => {
    const { apiKey } = await t.account(10);
    const client = createMatteClient({ baseUrl: base, apiKey });
    const batch = await client.createBatch();
    await client.addFiles(batch.id, [{ name: 'a.jpg', data: new Uint8Array(await productPhoto()) }]);
    await client.start(batch.id);
    await collect(client.follow(batch.id));
    const [item] = (await client.getBatch(batch.id)).items;
    const touched = await client.touchUp(batch.id, item.id, {
      strokes: [
        {
          mode: 'erase',
          size: 40,
          points: [
            [200, 60],
            [200, 240],
          ],
        },
      ],
    });
    const after = touched.items[0];
    expect(after.touchUp?.strokes).toBe(1);
    expect(after.rev).toBe(item.rev + 1);
    const refused = (await client
      .touchUp(batch.id, item.id, { strokes: [{ mode: 'erase', size: 2000, points: [[1, 1]] }] })
      .catch((e: unknown) => e)) as MatteApiError;
    expect(refused).toMatchObject({ status: 400, code: 'VALIDATION', field: 'body/strokes/0/size' });
    const reverted = await client.revertTouchUp(batch.id, item.id);
    expect(reverted.items[0].touchUp).toBeUndefined();
    expect(reverted.items[0].rev).toBe(after.rev + 1);
  });

  it('cuts out one photo and says plainly when the check flagged it (not charged) and when it was scaled down', async () => {
    const { apiKey } = await t.account(10);
    const client = createMatteClient({ baseUrl: base, apiKey });
    const clean = await client.cutOut({ name: 'a.jpg', data: new Uint8Array(await productPhoto()) });
    expect(clean).toMatchObject({ status: 'done', flagged: false, review: 'none', charged: 1, scaledFrom: null });
    if (clean.status !== 'done') throw new Error('not done');
    expect(clean.contentType).toBe('image/png');
    expect(clean.score).toBeGreaterThanOrEqual(50);
    // A photo that is all subject: nothing was cut away, the check flags it, and it is not charged.
    const dark = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#203040' } })
      .jpeg()
      .toBuffer();
    const flagged = await client.cutOut({ name: 'dark.jpg', data: new Uint8Array(dark) });
    expect(flagged).toMatchObject({ status: 'done', flagged: true, review: 'red', charged: 0 });
    // A panorama wider than the largest side a cut-out is made at: answered at 4096 px, and said so.
    const wide = await client.cutOut({ name: 'wide.jpg', data: new Uint8Array(await productPhoto(6000, 300)) });
    expect(wide).toMatchObject({ status: 'done', scaledFrom: { width: 6000, height: 300 } });
    if (wide.status !== 'done') throw new Error('not done');
    const size = await sharp(Buffer.from(await wide.image.arrayBuffer())).metadata();
    expect([size.width, size.height]).toEqual([4096, 205]);
  });

  it('raises refusals as MatteApiError with status, code, detail and the field path', async () => {
    const { apiKey } = await t.account(0);
    const client = createMatteClient({ baseUrl: base, apiKey });
    const missing = await client.getBatch('job_nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(MatteApiError);
    expect(missing).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const invalid = (await client
      .createBatch({ defaults: { presetId: '' } })
      .catch((e: unknown) => e)) as MatteApiError;
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION', field: 'body/defaults/presetId' });
    expect(invalid.detail).toMatch(/presetId/);
    const batch = await client.createBatch();
    await client.addFiles(batch.id, [{ name: 'a.jpg', data: new Uint8Array(await productPhoto()) }]);
    const broke = (await client.start(batch.id).catch((e: unknown) => e)) as MatteApiError;
    expect(broke).toMatchObject({ status: 402, code: 'NO_CREDITS' });
    const wrongKey = createMatteClient({ baseUrl: base, apiKey: 'mk_live_wrong' });
    await expect(wrongKey.account()).rejects.toMatchObject({ status: 401, code: 'INVALID_KEY' });
  });

  it("verifies the server's real webhook deliveries and refuses a changed body, a wrong secret and an old timestamp", async () => {
    const { apiKey } = await t.account(10);
    const client = createMatteClient({ baseUrl: base, apiKey });
    const batch = await client.createBatch({ webhookUrl: receiver.url });
    const secret = batch.webhookSecret!;
    await client.addFiles(batch.id, [{ name: 'a.jpg', data: new Uint8Array(await productPhoto()) }]);
    await client.start(batch.id);
    await receiver.waitFor((all) => all.some((r) => r.body.jobId === batch.id && r.body.event === 'job.done'));
    const mine = receiver.requests.filter((r) => r.body.jobId === batch.id);
    expect(mine.length).toBeGreaterThanOrEqual(3);
    for (const r of mine) {
      const header = r.headers['x-matte-signature'] as string;
      const event = await verifyWebhook(r.raw, header, secret);
      expect(event).toMatchObject({ jobId: batch.id, event: r.headers['x-matte-event'] });
      expect(await verifyWebhook(r.raw.toString('utf8'), header, secret)).toEqual(event);
    }
    const { raw, headers } = mine[0];
    const header = headers['x-matte-signature'] as string;
    const t0 = Number(/^t=(\d+)/.exec(header)![1]);
    const changed = Buffer.from(raw.toString('utf8').replace('"jobId"', '"jobld"'));
    await expect(verifyWebhook(changed, header, secret)).rejects.toThrow(WebhookVerificationError);
    await expect(verifyWebhook(raw, header, `${secret}x`)).rejects.toThrow(/does not match/);
    await expect(verifyWebhook(raw, header, secret, { now: (t0 + 301) * 1000 })).rejects.toThrow(/tolerance/);
    await expect(verifyWebhook(raw, header, secret, { now: (t0 + 299) * 1000 })).resolves.toBeTruthy();
    await expect(verifyWebhook(raw, header, secret, { now: (t0 + 120) * 1000, toleranceSeconds: 60 })).rejects.toThrow(
      /tolerance/,
    );
    for (const bad of ['', 'v1=abc', `t=${t0}`, header.replace(/v1=[0-9a-f]+/, 'v1=zz'), `${header},v0=1`])
      await expect(verifyWebhook(raw, bad, secret)).rejects.toThrow(/malformed/);
  });
});

describe('@matte/client retries', () => {
  let t: TestApp;
  let base: string;
  let now = Date.now();
  beforeAll(async () => {
    // The server's real rate limit, three requests a minute, on a clock the test moves.
    t = await createTestApp({ requestsPerMinute: 3 }, { clock: () => now });
    base = await listening(t);
  });
  afterAll(() => t.close());

  /**
   * A client whose waits move the server's clock, recording every request it sends and every wait. Its pacing is
   * off unless asked for, so that it meets the server's limit and its retries are seen.
   */
  function recordingClient(apiKey: string, paced = false) {
    const sent: { method: string; path: string; status: number; retryAfter: string | null }[] = [];
    const slept: number[] = [];
    const client = createMatteClient({
      baseUrl: base,
      apiKey,
      fetch: async (request) => {
        const response = await fetch(request);
        sent.push({
          method: request.method,
          path: new URL(request.url).pathname,
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
        });
        return response;
      },
      retry: {
        sleep: async (ms) => {
          slept.push(ms);
          now += ms;
        },
      },
      pace: {
        enabled: paced,
        now: () => now,
        sleep: async (ms) => {
          slept.push(ms);
          now += ms;
        },
      },
    });
    return { client, sent, slept };
  }

  it("keeps to the rate limit from the answers' headers: a run of requests past it waits, and meets no 429", async () => {
    const { apiKey } = await t.account(10);
    now += 120_000;
    const { client, sent, slept } = recordingClient(apiKey, true);
    for (let i = 0; i < 7; i++) await client.account();
    expect(sent.map((s) => s.status)).toEqual(Array(7).fill(200));
    // Three requests a minute: two waits, each until the window has room, not a retry after a refusal.
    expect(slept.length).toBeGreaterThanOrEqual(2);
    for (const ms of slept) expect(ms).toBeLessThanOrEqual(61_100);
    // The same run without pacing is refused on its fourth request.
    now += 120_000;
    const raw = recordingClient(apiKey);
    for (let i = 0; i < 4; i++) await raw.client.account();
    expect(raw.sent.map((s) => s.status)).toContain(429);
  });

  it('waits out Retry-After on 429 from the real rate limit, then succeeds', async () => {
    const { apiKey } = await t.account(10);
    const { client, sent, slept } = recordingClient(apiKey);
    for (let i = 0; i < 3; i++) await client.account();
    expect(slept).toEqual([]);
    const account = await client.account();
    expect(account.auth.via).toBe('key');
    expect(sent.map((s) => s.status)).toEqual([200, 200, 200, 429, 200]);
    const retryAfter = Number(sent[3].retryAfter);
    expect(retryAfter).toBeGreaterThan(0);
    expect(slept).toHaveLength(1);
    expect(slept[0]).toBeGreaterThanOrEqual(retryAfter * 1000);
    expect(slept[0]).toBeLessThan(retryAfter * 1000 + 1000);
  });

  it('never repeats a POST without an Idempotency-Key, and repeats start, which carries one', async () => {
    const { apiKey } = await t.account(10);
    const { client, sent, slept } = recordingClient(apiKey);
    const batch = await client.createBatch();
    await client.addFiles(batch.id, [{ name: 'a.jpg', data: new Uint8Array(await productPhoto()) }]);
    await client.account();
    // The minute's three requests are spent: an unsafe POST is refused once and not sent again.
    const refused = (await client.createBatch().catch((e: unknown) => e)) as MatteApiError;
    expect(refused).toBeInstanceOf(MatteApiError);
    expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(sent.filter((s) => s.method === 'POST' && s.path === '/v1/jobs')).toHaveLength(2);
    expect(slept).toEqual([]);
    // start carries the key it made: after the wait, the same request runs once and the batch starts.
    const started = await client.start(batch.id);
    expect(['queued', 'running', 'done']).toContain(started.status);
    const starts = sent.filter((s) => s.path.endsWith('/start'));
    expect(starts.map((s) => s.status)).toEqual([429, 202]);
    expect(slept).toHaveLength(1);
  });

  it('retries a safe request after a connection reset, and not an unsafe one', async () => {
    const { apiKey } = await t.account(10);
    now += 120_000;
    let resets = 0;
    const flaky = (request: Request) => {
      if (resets++ === 0)
        return Promise.reject(
          new TypeError('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }),
        );
      return fetch(request);
    };
    const slept: number[] = [];
    const client = createMatteClient({
      baseUrl: base,
      apiKey,
      fetch: flaky,
      retry: { sleep: async (ms) => void slept.push(ms) },
    });
    expect((await client.account()).auth.via).toBe('key');
    expect(slept).toHaveLength(1);
    resets = 0;
    await expect(client.createBatch()).rejects.toBeInstanceOf(MatteConnectionError);
    expect(resets).toBe(1);
  });
});
