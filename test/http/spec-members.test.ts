// Every answer's members against the specification's lists (test/helpers/spec-members.ts), resource by
// resource: a batch taken through every operation that answers JSON, its events (stream and webhooks), the
// account, presets, ledger, the one-photo call and a problem. A member the specification does not list fails
// here, naming where it appeared; so does a required member left out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addFiles, createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { openStream, startReceiver, type Receiver } from '../helpers/events.ts';
import sharp from 'sharp';
import * as spec from '../helpers/spec-members.ts';

let t: TestApp;
let base: string;
let receiver: Receiver;
beforeAll(async () => {
  t = await createTestApp({ requestsPerMinute: 1_000_000, allowPrivateNetworks: true });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const plain = (colour: number) =>
  sharp({ create: { width: 300, height: 200, channels: 3, background: { r: colour, g: colour, b: colour } } })
    .jpeg()
    .toBuffer();

/** Every departure of every answer, gathered so one run names them all. */
const found: string[] = [];
function conforms(what: string, value: unknown, shape: spec.Shape) {
  found.push(...spec.departures(value, shape).map((d) => `${what}: ${d}`));
}

describe('every answer has exactly the members the specification lists', () => {
  it('walks every resource through a batch, its events, the account, presets, ledger, one photo and a problem', async () => {
    const { auth } = await t.account(100);
    const call = async (method: string, url: string, payload?: object, status?: number) => {
      const res = await t.app.inject({ method: method as 'GET', url, headers: auth, payload: payload as never });
      if (status !== undefined) expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
      return res.json();
    };

    conforms('GET /v1/account', await call('GET', '/v1/account', undefined, 200), spec.Account);
    conforms('GET /v1/presets', await call('GET', '/v1/presets', undefined, 200), spec.PresetList);

    const created = await call('POST', '/v1/jobs', { name: 'shoes', webhookUrl: receiver.url }, 201);
    conforms('POST /v1/jobs', created, spec.JobCreated);
    const id = created.id as string;
    const stream = await openStream(`${base}/v1/jobs/${id}/events`, auth);

    const added = await addFiles(t.app, auth, id, [
      { filename: 'a.jpg', data: await productPhoto() },
      { filename: 'b.jpg', data: await productPhoto(320, 240) },
      { filename: 'c.jpg', data: await productPhoto(340, 260) },
      { filename: 'white.jpg', data: await plain(255) },
      { filename: 'black.jpg', data: await plain(0) },
      { filename: 'gone1.jpg', data: await productPhoto() },
      { filename: 'gone2.jpg', data: await productPhoto() },
      { filename: 'notes.txt', data: Buffer.from('not a photo') },
    ]);
    expect(added.statusCode).toBe(200);
    conforms('POST /items', added.json(), spec.Job('Job + added', ['added']));
    const byName = (job: { items: { id: string; name: string }[] }, name: string) =>
      job.items.find((i) => i.name === name)!.id;
    const draft = added.json();
    const removed = await call('DELETE', `/v1/jobs/${id}/items`, { itemIds: [byName(draft, 'gone1.jpg')] }, 200);
    conforms('DELETE /items', removed, spec.Job('Job + removed', ['removed']));
    conforms(
      'DELETE /items/{itemId}',
      await call('DELETE', `/v1/jobs/${id}/items/${byName(draft, 'gone2.jpg')}`, undefined, 200),
      spec.Job(),
    );

    conforms('POST /start', await call('POST', `/v1/jobs/${id}/start`, { sample: 2 }, 202), spec.Job());
    expect((await waitForBatch(t.app, auth, id)).status).toBe('paused');
    conforms('POST /continue', await call('POST', `/v1/jobs/${id}/continue`, undefined, 202), spec.Job());
    const done = (await waitForBatch(t.app, auth, id)) as { status: string; updatedAt: number; items: never[] };
    expect(done.status).toBe('done');
    conforms('GET /v1/jobs/{id}', done, spec.Job());
    conforms(
      'GET ?fields=summary',
      await call('GET', `/v1/jobs/${id}?fields=summary`, undefined, 200),
      spec.JobSummary,
    );
    conforms('GET ?since', await call('GET', `/v1/jobs/${id}?since=0`, undefined, 200), spec.Job());
    conforms('GET /v1/jobs', await call('GET', '/v1/jobs', undefined, 200), spec.JobList);
    const queue = await call('GET', `/v1/jobs/${id}/review`, undefined, 200);
    expect(queue.items.length).toBeGreaterThan(0);
    conforms('GET /review', queue, spec.ReviewQueue);

    const clean = byName(done, 'a.jpg');
    const region = { x: 10, y: 10, width: 40, height: 40 };
    const reported = await call('POST', `/v1/jobs/${id}/items/${clean}/report`, { reason: 'hole', region }, 200);
    conforms('POST /report', reported, spec.Report);
    expect(reported.job.items.some((i: { claims: unknown[] }) => i.claims.length > 0)).toBe(true);

    // A marketplace preset: its compliance report is served on its own route, not in ItemMeta.
    const applied = await call('POST', `/v1/jobs/${id}/apply`, { settings: { presetId: 'amazon-main' } }, 200);
    conforms('POST /apply', applied, spec.Job());
    const retried = await call('POST', `/v1/jobs/${id}/retry`, { failed: true }, 202);
    conforms('POST /retry', retried, spec.Job('Job + retried', ['retried', 'charged']));
    await waitForBatch(t.app, auth, id);
    const rerun = await call('POST', `/v1/jobs/${id}/items/${byName(done, 'b.jpg')}/retry`, { tier: 'heavy' }, 202);
    conforms('POST /items/{itemId}/retry', rerun, spec.Job('Job + charged, tier', ['charged', 'tier']));
    await waitForBatch(t.app, auth, id);

    // The stream: a snapshot (the batch without photos), then JobEvents.
    const snapshot = await stream.next((m) => m.event === 'snapshot');
    conforms('SSE snapshot', JSON.parse(snapshot.data!), spec.JobSummary);
    const streamed = await stream.next((m) => m.event === 'job.done');
    conforms('SSE job.done', JSON.parse(streamed.data!), spec.JobEvent('job.done'));
    for (const m of stream.messages.filter((x) => x.event?.startsWith('item.')))
      conforms(`SSE ${m.event}`, JSON.parse(m.data!), spec.JobEvent(m.event!));
    stream.close();

    await receiver.waitFor((all) => all.some((r) => r.body.event === 'job.done'));
    for (const r of receiver.requests) conforms(`webhook ${r.body.event}`, r.body, spec.JobEvent(String(r.body.event)));
    const hooks = await call('GET', `/v1/jobs/${id}/webhooks`, undefined, 200);
    for (const d of hooks.deliveries)
      conforms('GET /webhooks', { ...hooks, deliveries: [d] }, spec.Webhooks([d.event]));

    // A stop: a batch whose photos are held at the model.
    const second = await call('POST', '/v1/jobs', {}, 201);
    await addFiles(t.app, auth, second.id, [
      { filename: 'x.jpg', data: await productPhoto() },
      { filename: 'y.jpg', data: await productPhoto() },
      { filename: 'z.jpg', data: await productPhoto() },
    ]);
    const release = t.model.hold();
    try {
      await call('POST', `/v1/jobs/${second.id}/start`, undefined, 202);
      const cancelled = await call('POST', `/v1/jobs/${second.id}/cancel`, undefined, 200);
      conforms('POST /cancel', cancelled, spec.Job('Job + stopped, inFlight', ['stopped', 'inFlight']));
    } finally {
      release();
    }
    await waitForBatch(t.app, auth, second.id);

    conforms('GET /v1/credits/ledger', await call('GET', '/v1/credits/ledger', undefined, 200), spec.LedgerPage);

    const form = multipart([
      { name: 'file', filename: 'one.jpg', data: await productPhoto() },
      { name: 'response', data: 'json' },
    ]);
    const image = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    expect(image.statusCode, image.body).toBe(200);
    conforms('POST /v1/images', image.json(), spec.ImageResult);

    conforms('404', await call('GET', '/v1/jobs/job_nope', undefined, 404), spec.Problem);
    conforms('400', await call('GET', '/v1/jobs?limit=0', undefined, 400), spec.Problem);

    expect(found).toEqual([]);
  });

  it('catches an extra member and a missing required one (the walk itself can fail)', () => {
    const departures = spec.departures(
      { credits: {}, license: null, spendOrder: [], limits: {}, auth: { via: 'key', key: null }, tiers: {} },
      spec.Account,
    );
    expect(departures).toContain('Account.tiers: not a member of Account');
    expect(departures).toContain('Account.credits.total: required by Account.credits, missing');
    expect(spec.departures([{ x: 1, y: 2, width: 3 }], spec.BBox)).toEqual([
      'BBox[0].height: required by BBox, missing',
    ]);
  });
});
