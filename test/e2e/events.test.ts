// End to end, real servers and the real model: a batch followed by its SSE stream and by a webhook on
// a loopback receiver (signatures verified with the secret, sorted by id, deduplicated by delivery id);
// a server killed in the middle of a delivery's retries delivers after its restart; and on PostgreSQL,
// a stream and a long-poll served by an API-only process hear what a separate worker process did.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer, type RunningServer, E2E_TEST_TIMEOUT } from '../helpers/server.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../../tools/shared-data.ts';
import { eventsOf, openStream, startReceiver, verifySignature, type Receiver } from '../helpers/events.ts';
import { PG_AVAILABLE, createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

const photos = evalEntries()
  .filter((e) => e.kind === 'product')
  .slice(0, 3)
  .map((e) => ({ name: `${e.id}.jpg`, data: evalFile(e.image) }));

type Api = (path: string, init?: RequestInit & { json?: unknown }) => Promise<Response>;
function client(server: RunningServer, apiKey: string): Api {
  return (path, init = {}) =>
    fetch(`${server.base}${path}`, {
      ...init,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.headers as Record<string, string>),
      },
    });
}

async function batchWith(api: Api, list: typeof photos, body: object): Promise<{ id: string; webhookSecret?: string }> {
  const created = await api('/v1/jobs', { method: 'POST', json: body });
  expect(created.status).toBe(201);
  const job = await created.json();
  const form = new FormData();
  for (const p of list) form.append('files', new Blob([new Uint8Array(p.data)]), p.name);
  expect((await api(`/v1/jobs/${job.id}/items`, { method: 'POST', body: form })).status).toBe(200);
  return job;
}

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => receiver?.close());

describe.skipIf(!HAVE_EVAL_DATA)('events with the real model', () => {
  let server: RunningServer;
  let api: Api;
  let apiKey: string;
  beforeAll(async () => {
    server = await startServer({ MATTE_WEBHOOK_RETRY_DELAYS_MS: '300,300,300,300' });
    apiKey = (await server.createAccount('events@example.com', 20)).apiKey;
    api = client(server, apiKey);
  });
  afterAll(async () => server?.stop());

  it('the stream and the webhook tell the same story: snapshot, job.started, each photo, job.done', async () => {
    receiver.requests.length = 0;
    // The receiver fails every first attempt: the retry arrives after later events (out of order),
    // as the spec warns; sorted by id and deduplicated by delivery id, the story is whole.
    receiver.respond = (req) => ({
      status: req.headers['x-matte-attempt'] === '1' && req.body.event === 'item.done' ? 500 : 200,
    });
    const job = await batchWith(api, photos, { webhookUrl: receiver.url });
    const stream = await openStream(`${server.base}/v1/jobs/${job.id}/events`, { authorization: `Bearer ${apiKey}` });
    expect((await stream.next()).event).toBe('snapshot');
    expect((await api(`/v1/jobs/${job.id}/start`, { method: 'POST' })).status).toBe(202);
    await stream.ended;
    const streamed = eventsOf(stream.messages);
    expect(streamed.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(streamed[0].event).toBe('job.started');
    expect(streamed.at(-1)!.event).toBe('job.done');
    for (const e of streamed.slice(1, 4)) expect(['item.done', 'item.needs_review']).toContain(e.event);

    await receiver.waitFor(
      (all) =>
        new Set(all.filter((r) => r.answered === 200 && r.body.jobId === job.id).map((r) => r.body.id)).size === 5,
      30_000,
    );
    const got = receiver.requests.filter((r) => r.body.jobId === job.id);
    for (const r of got)
      expect(verifySignature(job.webhookSecret!, r.headers['x-matte-signature'] as string, r.raw)).toBe(true);
    const byDelivery = new Map<string, (typeof got)[number]>();
    for (const r of got) if (r.answered === 200) byDelivery.set(r.headers['x-matte-delivery'] as string, r);
    const story = [...byDelivery.values()].sort((a, b) => a.body.id - b.body.id).map((r) => r.body);
    expect(story).toEqual(streamed.map((e) => e.body));
    // The item events were each tried twice under the same delivery id.
    const itemTries = got.filter((r) => r.body.event === 'item.done');
    for (const r of itemTries)
      expect(itemTries.filter((x) => x.headers['x-matte-delivery'] === r.headers['x-matte-delivery']).length).toBe(2);
  });
  it('gives a delivery up after five failed attempts, and only the selected events are sent', async () => {
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 500 });
    const job = await batchWith(api, photos.slice(0, 1), { webhookUrl: receiver.url, webhookEvents: ['job.done'] });
    expect((await api(`/v1/jobs/${job.id}/start`, { method: 'POST' })).status).toBe(202);
    await receiver.waitFor((all) => all.filter((r) => r.body.jobId === job.id).length >= 5, 60_000);
    let list = await (await api(`/v1/jobs/${job.id}/webhooks`)).json();
    for (let i = 0; i < 50 && list.deliveries[0].status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      list = await (await api(`/v1/jobs/${job.id}/webhooks`)).json();
    }
    expect(list.events).toEqual(['job.done']);
    expect(list.deliveries).toHaveLength(1);
    expect(list.deliveries[0]).toMatchObject({
      event: 'job.done',
      status: 'given_up',
      attempts: 5,
      lastStatus: 500,
      nextAttemptAt: null,
    });
    await new Promise((r) => setTimeout(r, 700));
    const tries = receiver.requests.filter((r) => r.body.jobId === job.id);
    expect(tries.map((r) => [r.body.event, r.headers['x-matte-attempt']])).toEqual(
      [1, 2, 3, 4, 5].map((n) => ['job.done', String(n)]),
    );
  });
});

describe('stopping a server', () => {
  it('ends open streams and exits at once instead of waiting out their ten minutes', async () => {
    const server = await startServer({ MATTE_WORKER: '0' }); // no photo runs: no model to load
    try {
      const apiKey = (await server.createAccount('stop@example.com', 5)).apiKey;
      const job = await (await client(server, apiKey)('/v1/jobs', { method: 'POST', json: {} })).json();
      const stream = await openStream(`${server.base}/v1/jobs/${job.id}/events`, { authorization: `Bearer ${apiKey}` });
      await stream.next((m) => m.event === 'snapshot');
      // The stream would stay open ten minutes (MATTE_SSE_MAX_MS): ending within the test's timeout is the proof.
      await server.stop();
      await stream.ended;
      expect(server.proc.exitCode).toBe(0);
    } finally {
      await server.stop();
    }
  });
});

describe.skipIf(!HAVE_EVAL_DATA)('a restart in the middle of the retries', () => {
  it('a server killed after a failed attempt makes the next one after it starts again, with the same delivery id', async () => {
    const env = { MATTE_WEBHOOK_RETRY_DELAYS_MS: '2000,2000,2000,2000' };
    const first = await startServer(env);
    const dataDir = first.dataDir;
    let second: RunningServer | undefined;
    try {
      const apiKey = (await first.createAccount('restart@example.com', 5)).apiKey;
      receiver.requests.length = 0;
      receiver.respond = (req) => ({ status: req.headers['x-matte-attempt'] === '1' ? 500 : 200 });
      const job = await batchWith(client(first, apiKey), photos.slice(0, 1), {
        webhookUrl: receiver.url,
        webhookEvents: ['job.started'],
      });
      expect((await client(first, apiKey)(`/v1/jobs/${job.id}/start`, { method: 'POST' })).status).toBe(202);
      await receiver.waitFor((all) => all.some((r) => r.body.jobId === job.id), 15_000);
      // Killed once the failed attempt is recorded (the receiver hears it a moment before the server
      // has written down the answer: killing in between is a different case, an attempt in flight).
      for (let i = 0; i < 100; i++) {
        const deliveries = (await (await client(first, apiKey)(`/v1/jobs/${job.id}/webhooks`)).json()).deliveries;
        if (deliveries[0]?.lastStatus === 500) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await first.kill();
      const killedAt = Date.now();
      second = await startServer(env, { dataDir });
      await receiver.waitFor((all) => all.filter((r) => r.body.jobId === job.id).length >= 2, 30_000);
      const tries = receiver.requests.filter((r) => r.body.jobId === job.id);
      expect(tries.map((r) => r.headers['x-matte-attempt'])).toEqual(['1', '2']);
      expect(tries[1].headers['x-matte-delivery']).toBe(tries[0].headers['x-matte-delivery']);
      expect(tries[1].at).toBeGreaterThan(killedAt);
      expect(tries[1].at - tries[0].at).toBeGreaterThanOrEqual(1990);
      const list = await (await client(second, apiKey)(`/v1/jobs/${job.id}/webhooks`)).json();
      let d = list.deliveries[0];
      for (let i = 0; i < 50 && d.status !== 'delivered'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        d = (await (await client(second, apiKey)(`/v1/jobs/${job.id}/webhooks`)).json()).deliveries[0];
      }
      expect(d).toMatchObject({ status: 'delivered', attempts: 2, lastStatus: 200 });
    } finally {
      await first.kill();
      await second?.stop();
      await first.stop();
    }
  });
});

describe.skipIf(!HAVE_EVAL_DATA || !PG_AVAILABLE)('two processes on one PostgreSQL', () => {
  let tdb: TestDatabase;
  let apiOnly: RunningServer;
  let worker: RunningServer;
  beforeAll(async () => {
    tdb = await createTestDatabase('postgres');
    // The API process runs no photos; the worker process shares the database and the files.
    apiOnly = await startServer({ DATABASE_URL: tdb.databaseUrl, MATTE_WORKER: '0' }, { dataDir: tdb.dataDir });
    worker = await startServer({ DATABASE_URL: tdb.databaseUrl }, { dataDir: tdb.dataDir });
  });
  afterAll(async () => {
    await apiOnly?.stop();
    await worker?.stop();
    await tdb?.drop();
  });

  it('events written by the worker process reach a stream and a long-poll served by the API process', async () => {
    const apiKey = (await apiOnly.createAccount('pg-events@example.com', 5)).apiKey;
    const api = client(apiOnly, apiKey);
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 200 });
    const job = await batchWith(api, photos.slice(0, 2), { webhookUrl: receiver.url });
    const stream = await openStream(`${apiOnly.base}/v1/jobs/${job.id}/events`, { authorization: `Bearer ${apiKey}` });
    await stream.next((m) => m.event === 'snapshot');
    const started = await (await api(`/v1/jobs/${job.id}/start`, { method: 'POST' })).json();
    // A long-poll on the API process wakes when the worker process changes the batch.
    const polled = await (await api(`/v1/jobs/${job.id}?fields=summary&wait=60&since=${started.updatedAt + 1}`)).json();
    expect(polled.updatedAt).toBeGreaterThan(started.updatedAt);

    const first = await stream.next((m) => m.event === 'item.done' || m.event === 'item.needs_review', 60_000);
    // Written by the worker process (the API process has no model), read within moments by this one.
    expect(first.at - JSON.parse(first.data!).at).toBeLessThan(2000);
    await stream.ended;
    expect(eventsOf(stream.messages).map((e) => e.id)).toEqual([1, 2, 3, 4]);
    expect(eventsOf(stream.messages).at(-1)!.event).toBe('job.done');
    await receiver.waitFor((all) => all.filter((r) => r.body.jobId === job.id).length === 4, 30_000);
    expect(
      new Set(receiver.requests.filter((r) => r.body.jobId === job.id).map((r) => r.headers['x-matte-delivery'])).size,
    ).toBe(4);
  });
});
