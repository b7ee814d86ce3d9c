// The event log, the SSE stream and webhooks over real sockets, with the fake model (the e2e tier runs
// the real one): order, resume, keep-alive, limits, leaks, signatures, retries, filters, given_up,
// timeouts and redirects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { eventsOf, followBatch, openStream, startReceiver, verifySignature, type Receiver } from '../helpers/events.ts';
import { WebhookDispatcher } from '../../src/background/webhook-dispatcher.ts';
import { LocalEventBus } from '../../src/adapters/event-bus.ts';

let t: TestApp;
let base: string;
let receiver: Receiver;
const DELAYS = [150, 300, 450, 600];
beforeAll(async () => {
  t = await createTestApp({
    requestsPerMinute: 1_000_000,
    allowPrivateNetworks: true,
    sseKeepAliveMs: 150,
    webhookRetryDelaysMs: DELAYS,
    webhookTimeoutMs: 400,
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

async function batch(
  auth: Record<string, string>,
  photos: number,
  body: object = {},
  on: TestApp = t,
): Promise<{ id: string; webhookSecret?: string }> {
  const created = await on.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: body });
  expect(created.statusCode).toBe(201);
  const job = created.json();
  const files = await Promise.all(
    Array.from({ length: photos }, async (_, i) => ({
      name: 'files',
      filename: `p${i}.jpg`,
      data: await productPhoto(300 + i * 10, 200),
    })),
  );
  const form = multipart(files);
  const added = await on.app.inject({
    method: 'POST',
    url: `/v1/jobs/${job.id}/items`,
    headers: { ...auth, ...form.headers },
    payload: form.payload,
  });
  expect(added.json().added).toBe(photos);
  return job;
}

/** The batch's webhook listing once `until` holds of it (polled; each poll lets timers run). */
async function webhooksOnce(
  auth: Record<string, string>,
  jobId: string,
  until: (list: Record<string, any>) => boolean,
  timeoutMs = 5000,
): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}/webhooks`, headers: auth })).json();
    if (until(list) || Date.now() > deadline) return list;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The batch's first delivery once `until` holds of it. */
async function firstDelivery(
  auth: Record<string, string>,
  jobId: string,
  until: (d: Record<string, any>) => boolean,
): Promise<Record<string, any>> {
  const list = await webhooksOnce(auth, jobId, (l) => l.deliveries[0] !== undefined && until(l.deliveries[0]));
  return list.deliveries[0];
}

const start = (auth: Record<string, string>, id: string, body: object = {}, on: TestApp = t) =>
  on.app.inject({ method: 'POST', url: `/v1/jobs/${id}/start`, headers: auth, payload: body });
const stream = (auth: Record<string, string>, id: string, extra: Record<string, string> = {}) =>
  openStream(`${base}/v1/jobs/${id}/events`, { ...auth, ...extra });
const streamAt = (auth: Record<string, string>, path: string) => openStream(`${base}${path}`, auth);

describe('GET /v1/jobs/{id}/events', () => {
  it('sends the snapshot first, then every event in id order, and ends after job.done', async () => {
    const { auth } = await t.account(10);
    const job = await batch(auth, 3);
    const s = await stream(auth, job.id);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(s.headers.get('cache-control')).toContain('no-cache');
    const snapshot = await s.next();
    expect(snapshot.event).toBe('snapshot');
    expect(snapshot.id).toBe('0');
    const summary = JSON.parse(snapshot.data!);
    expect(summary).toMatchObject({ id: job.id, status: 'draft' });
    expect(summary.items).toBeUndefined();

    expect((await start(auth, job.id)).statusCode).toBe(202);
    await s.ended;
    const events = eventsOf(s.messages);
    expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(events[0].event).toBe('job.started');
    expect(events.slice(1, 4).map((e) => e.event)).toEqual(['item.done', 'item.done', 'item.done']);
    expect(events[4].event).toBe('job.done');
    for (const e of events) expect(e.body).toMatchObject({ id: e.id, event: e.event, jobId: job.id });
    expect(events[0].body.data).toEqual({
      status: 'queued',
      counts: expect.objectContaining({ total: 3, pending: 3 }),
      downloadUrl: null,
      reviewUrl: `/v1/jobs/${job.id}/review`,
      continueUrl: null,
    });
    const item = events[1].body.data;
    expect(Object.keys(item).sort()).toEqual([
      'attempts',
      'credits',
      'error',
      'inputThumbUrl',
      'itemId',
      'name',
      'outputUrl',
      'review',
      'score',
      'status',
      'thumbUrl',
    ]);
    expect(item).toMatchObject({ status: 'done', review: 'none', credits: 1, attempts: 1, error: null });
    expect(typeof item.score).toBe('number');
    expect(events[4].body.data).toMatchObject({
      status: 'done',
      downloadUrl: `/v1/jobs/${job.id}/download`,
      counts: expect.objectContaining({ done: 3 }),
    });
    // The event's `at` is the change's time; events count up in time too.
    expect(events.map((e) => e.body.at)).toEqual([...events.map((e) => e.body.at)].sort((a, b) => a - b));
  });

  it('a stream opened on a finished batch sends the snapshot and ends; Last-Event-ID resumes after that id with no repeat', async () => {
    const { auth } = await t.account(10);
    const job = await batch(auth, 2);
    await start(auth, job.id);
    await waitForBatch(t.app, auth, job.id);

    const fresh = await stream(auth, job.id);
    await fresh.ended;
    expect(fresh.messages.map((m) => m.event)).toEqual(['snapshot']);
    expect(fresh.messages[0].id).toBe('4');
    expect(JSON.parse(fresh.messages[0].data!).status).toBe('done');

    const resumed = await stream(auth, job.id, { 'last-event-id': '2' });
    await resumed.ended;
    expect(resumed.messages[0]).toMatchObject({ event: 'snapshot' });
    expect(resumed.messages[0].id).toBeUndefined();
    expect(eventsOf(resumed.messages).map((e) => [e.id, e.event])).toEqual([
      [3, 'item.done'],
      [4, 'job.done'],
    ]);
  });

  it('a client that reconnects mid-batch with its last id gets every later event exactly once', async () => {
    const { auth } = await t.account(10);
    const job = await batch(auth, 3);
    const release = t.model.hold();
    try {
      const first = await stream(auth, job.id);
      await first.next((m) => m.event === 'snapshot');
      await start(auth, job.id);
      const started = await first.next((m) => m.event === 'job.started');
      first.close();
      await first.ended;
      release();
      await waitForBatch(t.app, auth, job.id);
      const second = await stream(auth, job.id, { 'last-event-id': started.id! });
      await second.ended;
      const ids = [...eventsOf(first.messages), ...eventsOf(second.messages)].map((e) => e.id);
      expect(ids).toEqual([1, 2, 3, 4, 5]);
    } finally {
      release();
    }
  });

  it('a sample run streams job.paused and stays open; continue streams job.started and the rest to job.done, each once', async () => {
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 200 });
    const { auth } = await t.account(10);
    const job = await batch(auth, 3, { webhookUrl: receiver.url, webhookEvents: ['job.started', 'job.paused'] });
    const s = await stream(auth, job.id);
    await s.next((m) => m.event === 'snapshot');
    expect((await start(auth, job.id, { sample: 1 })).statusCode).toBe(202);
    const paused = await s.next((m) => m.event === 'job.paused');
    expect(JSON.parse(paused.data!).data).toMatchObject({
      status: 'paused',
      continueUrl: `/v1/jobs/${job.id}/continue`,
      counts: expect.objectContaining({ held: 2, done: 1 }),
    });
    expect((await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/continue`, headers: auth })).statusCode).toBe(
      202,
    );
    await s.ended;
    expect(eventsOf(s.messages).map((e) => e.event)).toEqual([
      'job.started',
      'item.done',
      'job.paused',
      'job.started',
      'item.done',
      'item.done',
      'job.done',
    ]);
    await receiver.waitFor((all) => all.filter((r) => r.body.jobId === job.id).length >= 3);
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.requests.filter((r) => r.body.jobId === job.id).map((r) => [r.body.id, r.body.event])).toEqual([
      [1, 'job.started'],
      [3, 'job.paused'],
      [4, 'job.started'],
    ]);
  });

  it('with ?until=paused ends at job.paused, and opened on a paused batch sends the snapshot and ends', async () => {
    const { auth } = await t.account(10);
    const job = await batch(auth, 3);
    const s = await streamAt(auth, `/v1/jobs/${job.id}/events?until=paused`);
    await s.next((m) => m.event === 'snapshot');
    expect((await start(auth, job.id, { sample: 1 })).statusCode).toBe(202);
    await s.ended;
    expect(eventsOf(s.messages).map((e) => e.event)).toEqual(['job.started', 'item.done', 'job.paused']);
    const again = await streamAt(auth, `/v1/jobs/${job.id}/events?until=paused`);
    await again.ended;
    expect(again.messages.map((m) => m.event)).toEqual(['snapshot']);
    expect(JSON.parse(again.messages[0]!.data!).status).toBe('paused');
    // Without it, the stream on the paused batch stays open for the continue.
    const open = await stream(auth, job.id);
    await open.next((m) => m.event === 'snapshot');
    const settled = await Promise.race([
      open.ended.then(() => 'ended'),
      new Promise((r) => setTimeout(r, 300, 'open')),
    ]);
    expect(settled).toBe('open');
    open.close();
    const bad = await fetch(`${base}/v1/jobs/${job.id}/events?until=forever`, { headers: auth });
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('VALIDATION');
  });

  it('sends a keep-alive comment while nothing happens', async () => {
    const { auth } = await t.account(10);
    const job = await batch(auth, 1);
    const s = await stream(auth, job.id);
    const comment = await s.next((m) => m.comment !== undefined, 5000);
    expect(comment.comment).toBe('keep-alive');
    s.close();
  });

  it('ends when the batch is deleted', async () => {
    const { auth } = await t.account(10);
    const job = await batch(auth, 1);
    const s = await stream(auth, job.id);
    await s.next((m) => m.event === 'snapshot');
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}`, headers: auth })).statusCode).toBe(204);
    await s.ended;
  });

  it("refuses an unknown batch, another account's batch and a malformed Last-Event-ID with problem answers", async () => {
    const a = await t.account(10);
    const b = await t.account(10);
    const job = await batch(a.auth, 1);
    const unknown = await fetch(`${base}/v1/jobs/job_nope/events`, { headers: a.auth });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    expect((await fetch(`${base}/v1/jobs/${job.id}/events`, { headers: b.auth })).status).toBe(404);
    const bad = await fetch(`${base}/v1/jobs/${job.id}/events`, { headers: { ...a.auth, 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('VALIDATION');
    expect((await fetch(`${base}/v1/jobs/${job.id}/events`)).status).toBe(401);
  });

  it('1,000 connects and disconnects leave no listener or timer behind', async () => {
    const { auth } = await t.account(10);
    const job = await batch(auth, 1);
    const listenersBefore = t.c.bus.listenerCount();
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const timersBefore = timers();
    for (let round = 0; round < 20; round++) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const s = await stream(auth, job.id);
          // Half leave after the snapshot, half at once.
          if (i % 2 === 0) await s.next((m) => m.event === 'snapshot');
          s.close();
          await s.ended;
        }),
      );
    }
    const deadline = Date.now() + 5000;
    while (t.c.bus.listenerCount() !== listenersBefore && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(t.c.bus.listenerCount()).toBe(listenersBefore);
    expect(timers()).toBeLessThanOrEqual(timersBefore + 2);
    // The server still answers streams.
    const s = await stream(auth, job.id);
    expect((await s.next()).event).toBe('snapshot');
    s.close();
  });
});

describe('the stream ends after its time limit', () => {
  it('closes by itself after sseMaxMs', async () => {
    const short = await createTestApp({ sseMaxMs: 300, sseKeepAliveMs: 100 });
    try {
      await short.app.listen({ port: 0, host: '127.0.0.1' });
      const { auth } = await short.account(10);
      const created = (await short.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
      // The batch never changes and the client never closes: the stream ends only because its time ran out.
      const s = await openStream(
        `http://127.0.0.1:${(short.app.server.address() as AddressInfo).port}/v1/jobs/${created.id}/events`,
        auth,
      );
      await s.ended;
      expect(s.messages[0].event).toBe('snapshot');
      expect(s.messages.filter((m) => m.comment === 'keep-alive').length).toBeGreaterThanOrEqual(1);
    } finally {
      await short.close();
    }
  });

  it('a client that reconnects with its last id when the time runs out follows a longer batch whole', async () => {
    const short = await createTestApp({ sseMaxMs: 300, sseKeepAliveMs: 100 });
    const release = short.model.hold();
    try {
      await short.app.listen({ port: 0, host: '127.0.0.1' });
      const { auth } = await short.account(10);
      const job = await batch(auth, 3, {}, short);
      const followed = await followBatch(
        `http://127.0.0.1:${(short.app.server.address() as AddressInfo).port}/v1/jobs/${job.id}/events`,
        auth,
        20,
      );
      await start(auth, job.id, {}, short);
      // The photos wait at the model for longer than a stream lasts.
      await new Promise((r) => setTimeout(r, 700));
      release();
      await followed.ended;
      expect(followed.connections).toBeGreaterThanOrEqual(2);
      expect(eventsOf(followed.messages).map((e) => [e.id, e.event])).toEqual([
        [1, 'job.started'],
        [2, 'item.done'],
        [3, 'item.done'],
        [4, 'item.done'],
        [5, 'job.done'],
      ]);
    } finally {
      release();
      await short.close();
    }
  });
});

describe('webhooks', () => {
  it('POSTs every event, signed, with the headers of the spec, in id order; the secret verifies them', async () => {
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 204 });
    const { auth } = await t.account(10);
    const job = await batch(auth, 2, { webhookUrl: receiver.url });
    expect(job.webhookSecret).toMatch(/^whsec_[0-9a-f]{48}$/);
    await start(auth, job.id);
    await waitForBatch(t.app, auth, job.id);
    await receiver.waitFor((all) => all.some((r) => r.body.jobId === job.id && r.body.event === 'job.done'));
    const mine = receiver.requests.filter((r) => r.body.jobId === job.id);
    expect(mine.map((r) => r.body.event)).toEqual(['job.started', 'item.done', 'item.done', 'job.done']);
    expect(mine.map((r) => r.body.id)).toEqual([1, 2, 3, 4]);
    for (const r of mine) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toBe('Matte-Webhooks/1.0');
      expect(r.headers['x-matte-event']).toBe(r.body.event);
      expect(r.headers['x-matte-delivery']).toMatch(/^dlv_/);
      expect(r.headers['x-matte-attempt']).toBe('1');
      expect(verifySignature(job.webhookSecret!, r.headers['x-matte-signature'] as string, r.raw)).toBe(true);
      // A wrong secret, or a body changed by one byte, does not verify.
      expect(verifySignature('whsec_other', r.headers['x-matte-signature'] as string, r.raw)).toBe(false);
      expect(
        verifySignature(
          job.webhookSecret!,
          r.headers['x-matte-signature'] as string,
          Buffer.concat([r.raw, Buffer.from(' ')]),
        ),
      ).toBe(false);
    }
    // The receiver may hold the last request before the sender has written down its answer.
    const list = await webhooksOnce(auth, job.id, (l) =>
      l.deliveries.every((d: { status: string }) => d.status !== 'pending'),
    );
    expect(list).toMatchObject({ jobId: job.id, webhookUrl: receiver.url, events: 'all', maxAttempts: 5 });
    expect(list.deliveries.map((d: { status: string }) => d.status)).toEqual([
      'delivered',
      'delivered',
      'delivered',
      'delivered',
    ]);
    expect(list.deliveries[0]).toMatchObject({
      attempts: 1,
      lastStatus: 204,
      lastError: null,
      nextAttemptAt: null,
      givenUpAt: null,
    });
    // The payload listed is the body that was sent, byte for byte once serialised.
    expect(JSON.stringify(list.deliveries[0].payload)).toBe(mine[0].raw.toString('utf8'));
    expect(list.deliveries.map((d: { id: string }) => d.id)).toEqual(mine.map((r) => r.headers['x-matte-delivery']));
  });

  it('sends only the selected events', async () => {
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 200 });
    const { auth } = await t.account(10);
    const job = await batch(auth, 2, { webhookUrl: receiver.url, webhookEvents: ['job.done', 'item.done'] });
    await start(auth, job.id);
    await waitForBatch(t.app, auth, job.id);
    await receiver.waitFor((all) => all.some((r) => r.body.jobId === job.id && r.body.event === 'job.done'));
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.requests.filter((r) => r.body.jobId === job.id).map((r) => r.body.event)).toEqual([
      'item.done',
      'item.done',
      'job.done',
    ]);
    const list = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/webhooks`, headers: auth })).json();
    expect(list.events).toEqual(['job.done', 'item.done']);
    expect(list.deliveries).toHaveLength(3);
  });

  it('retries a failed delivery on the schedule with the same delivery id, then delivers', async () => {
    receiver.requests.length = 0;
    // Each delivery fails twice, then succeeds.
    receiver.respond = (req) => ({
      status:
        receiver.requests.filter((r) => r.headers['x-matte-delivery'] === req.headers['x-matte-delivery']).length < 2
          ? 500
          : 200,
    });
    const { auth } = await t.account(10);
    const job = await batch(auth, 1, { webhookUrl: receiver.url, webhookEvents: ['job.started'] });
    await start(auth, job.id);
    await receiver.waitFor((all) => all.filter((r) => r.body.jobId === job.id).length >= 3);
    const tries = receiver.requests.filter((r) => r.body.jobId === job.id);
    expect(tries.map((r) => r.headers['x-matte-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(tries.map((r) => r.headers['x-matte-delivery'])).size).toBe(1);
    expect(tries.map((r) => r.answered)).toEqual([500, 500, 200]);
    // Waits of the schedule between attempts (at least; the dispatcher may be a little late, never early).
    expect(tries[1].at - tries[0].at).toBeGreaterThanOrEqual(DELAYS[0] - 5);
    expect(tries[2].at - tries[1].at).toBeGreaterThanOrEqual(DELAYS[1] - 5);
    // The body is the same bytes on every attempt; each attempt is signed afresh.
    expect(tries[1].raw.equals(tries[0].raw)).toBe(true);
    const d = await firstDelivery(auth, job.id, (x) => x.status === 'delivered');
    expect(d).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 200, lastError: null });
  });

  it('gives up after five failed attempts and keeps the last status and error', async () => {
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 503 });
    const { auth } = await t.account(10);
    const job = await batch(auth, 1, { webhookUrl: receiver.url, webhookEvents: ['job.started'] });
    await start(auth, job.id);
    await receiver.waitFor((all) => all.filter((r) => r.body.jobId === job.id).length >= 5, 10_000);
    const d = await firstDelivery(auth, job.id, (x) => x.status !== 'pending');
    expect(d).toMatchObject({ status: 'given_up', attempts: 5, lastStatus: 503, nextAttemptAt: null });
    expect(d.lastError).toContain('503');
    expect(typeof d.givenUpAt).toBe('number');
    await new Promise((r) => setTimeout(r, DELAYS[3] + 200));
    expect(receiver.requests.filter((r) => r.body.jobId === job.id)).toHaveLength(5);
  });

  it('a receiver slower than the answer limit fails the attempt and never holds up the photos', async () => {
    receiver.requests.length = 0;
    // The receiver never answers within the test: photos that waited on it would never finish.
    receiver.respond = () => ({ status: 200, delayMs: 120_000 });
    const { auth } = await t.account(10);
    const job = await batch(auth, 3, { webhookUrl: receiver.url });
    await start(auth, job.id);
    const done = await waitForBatch(t.app, auth, job.id);
    expect(done.status).toBe('done');
    await receiver.waitFor((all) => all.some((r) => r.body.jobId === job.id));
    const d = await firstDelivery(auth, job.id, (x) => x.attempts > 0);
    // Failed for want of an answer, and kept for its retries. The next attempt follows the first's timeout by 150 ms,
    // so a loaded machine may read the delivery after it: attempts are 1 or more.
    expect(d).toMatchObject({ status: 'pending', lastStatus: null });
    expect(d.attempts).toBeGreaterThanOrEqual(1);
    expect(d.lastError).toMatch(/No answer within 400 ms/);
  });

  it('does not follow a redirect: the attempt fails and the target is never called', async () => {
    const target = await startReceiver();
    try {
      receiver.requests.length = 0;
      receiver.respond = () => ({ status: 302, location: target.url });
      const { auth } = await t.account(10);
      const job = await batch(auth, 1, { webhookUrl: receiver.url, webhookEvents: ['job.started'] });
      await start(auth, job.id);
      await receiver.waitFor((all) => all.some((r) => r.body.jobId === job.id));
      const d = await firstDelivery(auth, job.id, (x) => x.attempts > 0);
      expect(d).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 302 });
      expect(d.lastError).toMatch(/redirect/);
      expect(target.requests).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it('two dispatchers on one database never send the same attempt twice', async () => {
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 200, delayMs: 20 });
    const second = new WebhookDispatcher(
      { store: t.c.store, bus: new LocalEventBus(), clock: Date.now, log: pino({ level: 'silent' }) },
      { retryDelaysMs: DELAYS, timeoutMs: 2000, allowPrivateNetworks: true, idlePollMs: 10 },
    );
    second.start();
    try {
      const { auth } = await t.account(40);
      // Two batches run at once per account (the spec's limit).
      const jobs = await Promise.all(Array.from({ length: 2 }, () => batch(auth, 4, { webhookUrl: receiver.url })));
      for (const job of jobs) expect((await start(auth, job.id)).statusCode).toBe(202);
      for (const job of jobs) await waitForBatch(t.app, auth, job.id);
      const ids = new Set(jobs.map((j) => j.id));
      await receiver.waitFor(
        (all) => all.filter((r) => ids.has(r.body.jobId) && r.body.event === 'job.done').length === 2,
      );
      await new Promise((r) => setTimeout(r, 300));
      const mine = receiver.requests.filter((r) => ids.has(r.body.jobId));
      // 2 batches x (started + 4 photos + done) = 12 deliveries, each sent once, at its first attempt.
      expect(mine).toHaveLength(12);
      expect(new Set(mine.map((r) => r.headers['x-matte-delivery'])).size).toBe(12);
      expect(mine.every((r) => r.headers['x-matte-attempt'] === '1')).toBe(true);
    } finally {
      await second.stop();
    }
  });

  it('looks for due deliveries on a change to a batch with a webhook, never on a change to one without', async () => {
    // A fresh app: no other test's deliveries are due in its database.
    const own = await createTestApp({ requestsPerMinute: 1_000_000, allowPrivateNetworks: true });
    let looks = 0;
    const deliveries = own.c.store.repos.deliveries;
    const counted = new Proxy(deliveries, {
      get: (target, prop) =>
        prop === 'nextDueAt'
          ? (now: number) => (looks++, target.nextDueAt(now))
          : (Reflect.get(target, prop) as unknown),
    });
    const repos = new Proxy(own.c.store.repos, {
      get: (target, prop) => (prop === 'deliveries' ? counted : Reflect.get(target, prop)),
    });
    const store = new Proxy(own.c.store, {
      get: (target, prop) => (prop === 'repos' ? repos : Reflect.get(target, prop)),
    });
    const bus = new LocalEventBus();
    const dispatcher = new WebhookDispatcher(
      { store, bus, clock: Date.now, log: pino({ level: 'silent' }) },
      { retryDelaysMs: DELAYS, timeoutMs: 2000, allowPrivateNetworks: true, idlePollMs: 60_000 },
    );
    const settle = () => new Promise((r) => setTimeout(r, 150));
    try {
      const { auth } = await own.account(10);
      const plain = await batch(auth, 1, {}, own);
      const hooked = await batch(auth, 1, { webhookUrl: receiver.url }, own);
      dispatcher.start();
      await settle();
      const atStart = looks;
      expect(atStart).toBe(1); // the first look, and none again while idle
      for (let i = 0; i < 5; i++) bus.jobChanged(plain.id);
      await settle();
      expect(looks, 'changes to a batch without a webhook').toBe(atStart);
      bus.jobChanged(hooked.id);
      await settle();
      expect(looks, 'a change to a batch with one').toBe(atStart + 1);
    } finally {
      await dispatcher.stop();
      await own.close();
    }
  });

  it('a batch without a webhook lists none', async () => {
    const { auth } = await t.account(10);
    const job = await batch(auth, 1);
    const list = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/webhooks`, headers: auth })).json();
    expect(list).toEqual({ jobId: job.id, webhookUrl: null, events: null, maxAttempts: 5, deliveries: [] });
    expect((await t.app.inject({ method: 'GET', url: '/v1/jobs/job_nope/webhooks', headers: auth })).statusCode).toBe(
      404,
    );
  });
});

describe('webhook bad input and the outbound guard', () => {
  it('refuses webhook URLs that are not https, private, too long or carry credentials, and bad event lists; nothing is created', async () => {
    const strict = await createTestApp({ allowPrivateNetworks: false });
    try {
      const { auth } = await strict.account(10);
      const cases: [object, RegExp][] = [
        [{ webhookUrl: 'http://hooks.example.com/x' }, /https/],
        [{ webhookUrl: 'not a url' }, /valid URL/],
        [{ webhookUrl: 'https://127.0.0.1/x' }, /public host/],
        [{ webhookUrl: 'https://[::1]/x' }, /public host/],
        [{ webhookUrl: 'https://10.1.2.3/x' }, /public host/],
        [{ webhookUrl: 'https://localhost/x' }, /public host/],
        [{ webhookUrl: 'https://user:pw@hooks.example.com/x' }, /credentials/],
        [{ webhookUrl: `https://hooks.example.com/${'a'.repeat(2000)}` }, /.+/],
        [{ webhookUrl: 'https://hooks.example.com/x', webhookEvents: [] }, /.+/],
        [{ webhookUrl: 'https://hooks.example.com/x', webhookEvents: ['job.exploded'] }, /.+/],
      ];
      for (const [payload, message] of cases) {
        const res = await strict.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload });
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(res.json().code).toBe('VALIDATION');
        expect(res.json().detail ?? res.json().title).toMatch(message);
      }
      const list = (await strict.app.inject({ method: 'GET', url: '/v1/jobs', headers: auth })).json();
      expect(list.jobs).toEqual([]);
      // A valid one answers the secret once; reading the batch never shows it again.
      const ok = await strict.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        headers: auth,
        payload: { webhookUrl: 'https://hooks.example.com/x' },
      });
      expect(ok.statusCode).toBe(201);
      expect(ok.json()).toMatchObject({ webhookUrl: 'https://hooks.example.com/x', webhookEvents: 'all' });
      const read = await strict.app.inject({ method: 'GET', url: `/v1/jobs/${ok.json().id}`, headers: auth });
      expect(read.body).not.toContain(ok.json().webhookSecret);
    } finally {
      await strict.close();
    }
  });

  it('postPublic refuses loopback addresses and names that resolve to them unless private networks are allowed', async () => {
    const { postPublic } = await import('../../src/adapters/outbound-http.adapter.ts');
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 200 });
    const opts = { allowPrivate: false, timeoutMs: 1000, headers: {} };
    await expect(postPublic(receiver.url, Buffer.from('{}'), opts)).rejects.toMatchObject({ kind: 'refused' });
    await expect(
      postPublic(receiver.url.replace('127.0.0.1', 'localhost'), Buffer.from('{}'), opts),
    ).rejects.toMatchObject({ kind: 'refused' });
    expect(receiver.requests).toHaveLength(0);
    expect(await postPublic(receiver.url, Buffer.from('{}'), { ...opts, allowPrivate: true })).toEqual({ status: 200 });
  });
});
