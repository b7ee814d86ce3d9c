// The review queue and re-runs (batch and single photo, light and heavy tier) over the HTTP API.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const solid = (colour: string) =>
  sharp({ create: { width: 200, height: 160, channels: 3, background: colour } })
    .jpeg()
    .toBuffer();

async function batchOf(
  auth: Record<string, string>,
  files: { filename: string; data: Buffer }[],
  start: object | null = {},
) {
  const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
  const form = multipart(files.map((f) => ({ name: 'files', filename: f.filename, data: f.data, type: 'image/jpeg' })));
  await t.app.inject({
    method: 'POST',
    url: `/v1/jobs/${job.id}/items`,
    headers: { ...auth, ...form.headers },
    payload: form.payload,
  });
  if (start) await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth, payload: start });
  return job.id as string;
}

const byName = (job: Record<string, any>, name: string) =>
  (job.items as Array<Record<string, any>>).find((i) => i.name === name)!;

describe('the review queue', () => {
  it('lists failures first, then flagged photos by score, each with a reason and a code; clean photos are not listed', async () => {
    const { auth } = await t.account(10);
    // white: no subject (fails); black: everything kept (flagged, refunded); the product: clean.
    const jobId = await batchOf(auth, [
      { filename: 'product.jpg', data: await productPhoto() },
      { filename: 'white.jpg', data: await solid('#ffffff') },
      { filename: 'black.jpg', data: await solid('#000000') },
    ]);
    const done = await waitForBatch(t.app, auth, jobId);
    expect(byName(done, 'black.jpg')).toMatchObject({ status: 'done', review: 'red', refunded: true, canRerun: true });
    const res = await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}/review`, headers: auth });
    expect(res.statusCode).toBe(200);
    const queue = res.json();
    expect(queue).toMatchObject({ jobId, status: 'done', total: 2, failed: 1, review: 1 });
    expect(queue.counts).toMatchObject({ total: 3, done: 2, failed: 1, refunded: 1 });
    const [first, second] = queue.items;
    expect(first).toMatchObject({
      name: 'white.jpg',
      kind: 'failed',
      code: 'NO_SUBJECT',
      score: null,
      severity: null,
      refunded: false,
      credits: 0,
      canRerun: true,
    });
    expect(first.reason.length).toBeGreaterThan(5);
    expect(second).toMatchObject({ name: 'black.jpg', kind: 'review', refunded: true, credits: 0 });
    expect(second.code).toMatch(/^(background-kept|low-score|subject-touches-edge|low-confidence)$/);
    expect(second.score).toBeLessThan(50);
    expect(second.outputUrl).toContain('/file');
    expect((await t.app.inject({ method: 'GET', url: '/v1/jobs/job_nope/review', headers: auth })).json().code).toBe(
      'NOT_FOUND',
    );
  });
});

describe('re-runs', () => {
  it('retries every failed photo (1 credit each, reserved at once): the batch runs again, and the ledger balances', async () => {
    const { auth, accountId } = await t.account(4);
    const jobId = await batchOf(auth, [
      { filename: 'a.jpg', data: await productPhoto() },
      { filename: 'white.jpg', data: await solid('#ffffff') },
    ]);
    await waitForBatch(t.app, auth, jobId);
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(3);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/retry`,
      headers: auth,
      payload: { failed: true },
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ retried: 1, charged: 1 });
    expect(['queued', 'running']).toContain(res.json().status);
    expect(byName(res.json(), 'white.jpg')).toMatchObject({ tier: 'light', credits: 1, canRerun: false });
    expect(['pending', 'processing']).toContain(byName(res.json(), 'white.jpg').status);
    const again = await waitForBatch(t.app, auth, jobId);
    expect(byName(again, 'white.jpg')).toMatchObject({ status: 'failed', credits: 0 });
    expect(byName(again, 'white.jpg').attempts).toBe(2);
    // The failed re-run was released again: one credit spent in all, on the clean photo.
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(3);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 3, pack: 0 });
    const events = await t.c.store.repos.events.listForJob(jobId);
    expect(events.filter((e) => e.event === 'job.started')).toHaveLength(2);
    expect(events.filter((e) => e.event === 'job.done')).toHaveLength(2);
  });

  it('says on the account when the heavy tier is a model of its own: a heavy model file or a heavy inference server', async () => {
    for (const overrides of [
      { heavyModelPath: '/models/heavy.onnx' },
      { inferenceHeavyUrl: 'http://gpu:8000/v2/models/big' },
    ]) {
      // An API-only process answers from its configuration: the workers beside it load the model.
      const api = await createTestApp(overrides, { runWorker: false });
      try {
        const { auth } = await api.account(1);
        const answer = await api.app.inject({ method: 'GET', url: '/v1/account', headers: auth });
        expect(answer.headers['x-matte-heavy-model'], JSON.stringify(overrides)).toBe('stronger');
        expect(answer.json()).not.toHaveProperty('tiers');
      } finally {
        await api.close();
      }
    }
  });

  it('re-runs one finished photo on the heavy tier for 2 credits, plan first then pack; it is charged again when clean', async () => {
    const { auth, accountId } = await t.account(2, 5);
    const jobId = await batchOf(auth, [{ filename: 'a.jpg', data: await productPhoto() }]);
    const first = await waitForBatch(t.app, auth, jobId);
    const itemId = byName(first, 'a.jpg').id;
    const calls = t.model.calls;
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/items/${itemId}/retry`,
      headers: auth,
      payload: { tier: 'heavy' },
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ charged: 2, tier: 'heavy' });
    const done = await waitForBatch(t.app, auth, jobId);
    expect(byName(done, 'a.jpg')).toMatchObject({ status: 'done', tier: 'heavy', review: 'none', credits: 2 });
    // No heavy model is configured in this app: the re-run is one more pass of the light model, and the
    // account says so before anyone pays for one.
    expect(t.model.calls - calls).toBe(1);
    const said = await t.app.inject({ method: 'GET', url: '/v1/account', headers: auth });
    expect(said.headers['x-matte-heavy-model']).toBe('none');
    const account = (await t.c.store.repos.accounts.findById(accountId))!;
    expect([account.plan_credits, account.pack_credits]).toEqual([0, 4]);
    const rows = await t.c.store.repos.ledger.listForAccount(accountId);
    const rerun = rows.filter((r) => r.kind === 'reserve' && r.reason === 'photo run again (heavy)');
    expect(rerun.map((r) => [r.pool, r.amount])).toEqual([
      ['plan', -1],
      ['pack', -1],
    ]);
    expect(rows.filter((r) => r.kind === 'commit').map((r) => r.units)).toEqual([1, 1, 1]);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 0, pack: 4 });
    // An item retry without a body is the light tier.
    const light = await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/items/${itemId}/retry`, headers: auth });
    expect(light.json()).toMatchObject({ charged: 1, tier: 'light' });
    await waitForBatch(t.app, auth, jobId);
  });

  it('refuses what cannot run again, and changes nothing: 409 with a reason, 402, 400, 404', async () => {
    const { auth, accountId } = await t.account(3);
    const draftId = await batchOf(auth, [{ filename: 'd.jpg', data: await productPhoto() }], null);
    const draftItem = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${draftId}`, headers: auth })).json()
      .items[0];
    expect(
      (
        await t.app.inject({ method: 'POST', url: `/v1/jobs/${draftId}/items/${draftItem.id}/retry`, headers: auth })
      ).json(),
    ).toMatchObject({ code: 'CONFLICT', reason: 'NOT_STARTED' });

    const jobId = await batchOf(auth, [{ filename: 'a.jpg', data: await productPhoto() }]);
    const done = await waitForBatch(t.app, auth, jobId);
    const itemId = byName(done, 'a.jpg').id;
    expect(
      (
        await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/retry`, headers: auth, payload: { failed: true } })
      ).json(),
    ).toMatchObject({ code: 'CONFLICT', reason: 'NOTHING_TO_RETRY' });
    for (const payload of [
      {},
      { failed: true, itemIds: [itemId] },
      { itemIds: [] },
      { failed: false },
      { itemIds: [itemId], tier: 'ultra' },
    ]) {
      expect(
        (await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/retry`, headers: auth, payload })).json().code,
        JSON.stringify(payload),
      ).toBe('VALIDATION');
    }
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/v1/jobs/${jobId}/retry`,
          headers: auth,
          payload: { itemIds: ['img_nope'] },
        })
      ).json().code,
    ).toBe('NOT_FOUND');
    expect(
      (await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/items/img_nope/retry`, headers: auth })).json()
        .code,
    ).toBe('NOT_FOUND');

    // Balance 2: a heavy re-run needs 2 and fits; a second one does not (402, nothing changed).
    const release = t.model.hold();
    try {
      const ok = await t.app.inject({
        method: 'POST',
        url: `/v1/jobs/${jobId}/items/${itemId}/retry`,
        headers: auth,
        payload: { tier: 'heavy' },
      });
      expect(ok.statusCode).toBe(202);
      const busy = await t.app.inject({
        method: 'POST',
        url: `/v1/jobs/${jobId}/items/${itemId}/retry`,
        headers: auth,
      });
      expect(busy.statusCode).toBe(409);
      expect(busy.json()).toMatchObject({ code: 'CONFLICT', itemId });
      expect(['PHOTO_BUSY']).toContain(busy.json().reason);
    } finally {
      release();
    }
    await waitForBatch(t.app, auth, jobId);
    const broke = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/items/${itemId}/retry`,
      headers: auth,
      payload: { tier: 'heavy' },
    });
    expect(broke.statusCode).toBe(402);
    expect(broke.json()).toMatchObject({ code: 'NO_CREDITS', needed: 2, balance: 0 });
    expect((await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}`, headers: auth })).json().status).toBe('done');
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 0, pack: 0 });
  });

  it('a photo held for the rest of a sample run is continued, not re-run (409 HELD); a third running batch is TOO_MANY_ACTIVE', async () => {
    const { auth } = await t.account(20);
    const photo = await productPhoto();
    const jobId = await batchOf(
      auth,
      [1, 2, 3].map((i) => ({ filename: `${i}.jpg`, data: photo })),
      { sample: 1 },
    );
    const paused = await waitForBatch(t.app, auth, jobId);
    expect(paused.status).toBe('paused');
    const held = (paused.items as Array<Record<string, any>>).find((i) => i.status === 'held')!;
    expect(held.canRerun).toBe(false);
    expect(
      (await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/items/${held.id}/retry`, headers: auth })).json(),
    ).toMatchObject({ code: 'CONFLICT', reason: 'HELD' });

    const finished = (paused.items as Array<Record<string, any>>).find((i) => i.status === 'done')!;
    const release = t.model.hold();
    try {
      await batchOf(auth, [{ filename: 'x.jpg', data: photo }]);
      await batchOf(auth, [{ filename: 'y.jpg', data: photo }]);
      const third = await t.app.inject({
        method: 'POST',
        url: `/v1/jobs/${jobId}/items/${finished.id}/retry`,
        headers: auth,
      });
      expect(third.json().code).toBe('TOO_MANY_ACTIVE');
    } finally {
      release();
    }
  });
});

describe('sample runs and stopping, as events', () => {
  it('a sample start runs N photos and pauses (job.paused with continueUrl); continue runs the rest (job.started) to job.done', async () => {
    const { auth, accountId } = await t.account(10);
    const photo = await productPhoto();
    const jobId = await batchOf(
      auth,
      [1, 2, 3, 4].map((i) => ({ filename: `${i}.jpg`, data: photo })),
      { sample: 2 },
    );
    const paused = await waitForBatch(t.app, auth, jobId);
    expect(paused).toMatchObject({ status: 'paused', continueUrl: `/v1/jobs/${jobId}/continue` });
    expect(paused.counts).toMatchObject({ done: 2, held: 2 });
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(8);
    let events = await t.c.store.repos.events.listForJob(jobId);
    expect(events.map((e) => e.event)).toEqual(['job.started', 'item.done', 'item.done', 'job.paused']);
    expect(events[3].data).toMatchObject({
      status: 'paused',
      continueUrl: `/v1/jobs/${jobId}/continue`,
      counts: { held: 2, done: 2 },
    });

    const continued = await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/continue`, headers: auth });
    expect(continued.statusCode).toBe(202);
    const done = await waitForBatch(t.app, auth, jobId);
    expect(done).toMatchObject({ status: 'done', continueUrl: null });
    events = await t.c.store.repos.events.listForJob(jobId);
    expect(events.map((e) => e.event)).toEqual([
      'job.started',
      'item.done',
      'item.done',
      'job.paused',
      'job.started',
      'item.done',
      'item.done',
      'job.done',
    ]);
    expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(6);
    // Nothing held any more: continue is 409 CONFLICT.
    expect((await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/continue`, headers: auth })).json().code).toBe(
      'CONFLICT',
    );
  });

  it('stopping a running batch holds its queued photos (credits released at once) and ends paused with job.paused', async () => {
    const { auth, accountId } = await t.account(10);
    const photo = await productPhoto();
    const release = t.model.hold();
    let jobId: string;
    try {
      jobId = await batchOf(
        auth,
        [1, 2, 3, 4, 5].map((i) => ({ filename: `${i}.jpg`, data: photo })),
      );
      // Wait until the worker has claimed photos (at most two in flight at the model's gate).
      for (let i = 0; i < 50; i++) {
        const s = (
          await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}?fields=summary`, headers: auth })
        ).json();
        if (s.counts.processing === 2) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const stopped = await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/cancel`, headers: auth });
      expect(stopped.json()).toMatchObject({ stopped: 3, inFlight: 2 });
      expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(8);
    } finally {
      release();
    }
    const paused = await waitForBatch(t.app, auth, jobId!);
    expect(paused).toMatchObject({ status: 'paused' });
    expect(paused.counts).toMatchObject({ done: 2, held: 3 });
    const events = (await t.c.store.repos.events.listForJob(jobId!)).map((e) => e.event);
    expect(events[0]).toBe('job.started');
    expect(events[events.length - 1]).toBe('job.paused');
    expect(events.filter((e) => e === 'job.paused')).toHaveLength(1);
    expect((await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId!}/cancel`, headers: auth })).json().code).toBe(
      'NOT_RUNNING',
    );
  });
});
