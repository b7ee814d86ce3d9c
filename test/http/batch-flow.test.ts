import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import sharp from 'sharp';
import { addFiles, createTestApp, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { cmykJpeg, exifRotated, png16, productPhoto, transparentPng } from '../helpers/images.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function draft(auth: Record<string, string>, body: object = {}) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: body });
  expect(res.statusCode).toBe(201);
  return res.json();
}

const upload = (auth: Record<string, string>, jobId: string, files: { filename: string; data: Buffer }[]) =>
  addFiles(t.app, auth, jobId, files);

describe('a batch from upload to cut-out', () => {
  it('creates, adds, starts, runs every photo and charges one credit each', async () => {
    const { auth, accountId } = await t.account(3, 2);
    const job = await draft(auth, { name: 'shoes' });
    expect(job.status).toBe('draft');
    expect(job.items).toEqual([]);

    const added = await upload(auth, job.id, [
      { filename: 'plain.jpg', data: await productPhoto() },
      { filename: 'rotated.jpg', data: await exifRotated() },
      { filename: 'cmyk.jpg', data: await cmykJpeg() },
      { filename: 'deep.png', data: await png16() },
      { filename: 'cut.png', data: await transparentPng() },
    ]);
    expect(added.statusCode).toBe(200);
    const body = added.json();
    expect(body.added).toBe(5);
    expect(body.items.every((i: { status: string }) => i.status === 'held')).toBe(true);

    const started = await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
    expect(started.statusCode).toBe(202);
    expect(started.json().status).toBe('queued');

    // 5 photos: 3 from the plan pool, then 2 from the pack pool, reserved at once.
    const account = (await t.app.inject({ method: 'GET', url: '/v1/account', headers: auth })).json();
    expect(account.credits).toMatchObject({ plan: 0, pack: 0, total: 0 });

    const done = await waitForBatch(t.app, auth, job.id);
    expect(done.status).toBe('done');
    expect(done.counts).toMatchObject({ total: 5, done: 5, failed: 0, refunded: 0 });
    expect(done.downloadUrl).toBe(`/v1/jobs/${job.id}/download`);
    const items = done.items as Array<Record<string, any>>;
    const rotated = items.find((i) => i.name === 'rotated.jpg')!;
    // EXIF orientation 6: stored 400x300, seen 300x400; the output keeps the seen orientation.
    expect(rotated.meta.source).toMatchObject({ width: 300, height: 400 });
    expect(rotated.meta.output).toMatchObject({ width: 300, height: 400, format: 'png' });
    for (const item of items) {
      expect(item.credits).toBe(1);
      expect(item.review).toBe('none');
      expect(Object.keys(item.meta.timings)).toEqual(['decode', 'inference', 'diagnose', 'compose', 'encode', 'total']);
      expect(item.meta.bbox).not.toBeNull();
      expect(item.outputUrl).toContain(`/v1/jobs/${job.id}/items/${item.id}/file`);
    }

    // Ledger: balances equal the sum of the rows per pool; 5 reserved and 5 committed.
    const sums = await t.c.store.repos.ledger.sums(accountId);
    expect(sums).toEqual({ plan: 0, pack: 0 });
    const ledger = (await t.app.inject({ method: 'GET', url: '/v1/credits/ledger', headers: auth })).json();
    const kinds = ledger.entries.map((e: { kind: string }) => e.kind);
    expect(kinds.filter((k: string) => k === 'commit')).toHaveLength(5);
    // One reservation row per photo (plan 3 then pack 2), each naming its photo.
    const reserves = ledger.entries.filter((e: { kind: string }) => e.kind === 'reserve');
    expect(reserves.map((e: { pool: string }) => e.pool).sort()).toEqual(['pack', 'pack', 'plan', 'plan', 'plan']);
    expect(new Set(reserves.map((e: { itemId: string }) => e.itemId)).size).toBe(5);
  });

  it('serves every variant: output as transparent PNG at source size, converted formats, thumbnails, cutout, input', async () => {
    const { auth } = await t.account();
    const job = await draft(auth);
    await upload(auth, job.id, [{ filename: 'a.jpg', data: await productPhoto(400, 300) }]);
    await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
    const done = await waitForBatch(t.app, auth, job.id);
    const item = (done.items as Array<Record<string, any>>)[0];

    const out = await t.app.inject({ method: 'GET', url: item.outputUrl, headers: auth });
    expect(out.statusCode).toBe(200);
    expect(out.headers['content-type']).toBe('image/png');
    const meta = await sharp(out.rawPayload).metadata();
    expect(meta).toMatchObject({ width: 400, height: 300, channels: 4 });
    const { data } = await sharp(out.rawPayload).raw().toBuffer({ resolveWithObject: true });
    expect(data[3]).toBe(0); // corner: background transparent
    const centre = (150 * 400 + 200) * 4;
    expect(data[centre + 3]).toBe(255); // the product kept

    const jpeg = await t.app.inject({ method: 'GET', url: `${item.outputUrl}&format=jpeg&download=1`, headers: auth });
    expect(jpeg.headers['content-type']).toBe('image/jpeg');
    expect(jpeg.headers['content-disposition']).toContain('attachment; filename="a.jpg"');
    const flat = await sharp(jpeg.rawPayload).raw().toBuffer();
    expect([flat[0], flat[1], flat[2]].every((v) => v > 245)).toBe(true); // flattened onto white

    const webp = await t.app.inject({ method: 'GET', url: `${item.outputUrl}&format=webp`, headers: auth });
    expect((await sharp(webp.rawPayload).metadata()).format).toBe('webp');

    for (const [url, format] of [
      [item.thumbUrl, 'webp'],
      [item.inputThumbUrl, 'webp'],
      [item.cutoutUrl, 'png'],
    ]) {
      const res = await t.app.inject({ method: 'GET', url, headers: auth });
      expect(res.statusCode).toBe(200);
      const m = await sharp(res.rawPayload).metadata();
      expect(m.format).toBe(format);
      expect(Math.max(m.width!, m.height!)).toBeLessThanOrEqual(512);
    }
    const cutout = await sharp(
      (await t.app.inject({ method: 'GET', url: item.cutoutUrl, headers: auth })).rawPayload,
    ).metadata();
    expect(cutout.channels).toBe(4);
    const input = await t.app.inject({ method: 'GET', url: item.inputUrl, headers: auth });
    expect(input.headers['content-type']).toBe('image/jpeg');

    // Same URL, another account's key: not found.
    const other = await t.account();
    expect((await t.app.inject({ method: 'GET', url: item.outputUrl, headers: other.auth })).statusCode).toBe(404);
  });

  it('renders the batch defaults: white background, custom canvas with fill', async () => {
    const { auth } = await t.account();
    const job = await draft(auth, {
      defaults: {
        presetId: 'custom',
        customSize: { width: 500, height: 500 },
        background: { mode: 'white' },
        fill: 0.8,
      },
    });
    await upload(auth, job.id, [{ filename: 'a.jpg', data: await productPhoto(400, 300) }]);
    await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
    const done = await waitForBatch(t.app, auth, job.id);
    const item = (done.items as Array<Record<string, any>>)[0];
    const out = await t.app.inject({ method: 'GET', url: item.outputUrl, headers: auth });
    const { data, info } = await sharp(out.rawPayload).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([500, 500]);
    expect([data[0], data[1], data[2], data[3]]).toEqual([255, 255, 255, 255]);
    // The 200x150 product spans 80% of the canvas width: 400 px wide, centred.
    const row = 250 * 500 * 4;
    expect(data[row + 60 * 4]).toBeLessThan(100);
    expect(data[row + 40 * 4]).toBe(255);
  });

  it('answers long-polls when the batch changes, deltas with since, and summaries', async () => {
    const { auth } = await t.account();
    const job = await draft(auth);
    const created = job.updatedAt;
    await upload(auth, job.id, [
      { filename: 'a.jpg', data: await productPhoto() },
      { filename: 'b.jpg', data: await productPhoto() },
    ]);
    const delta = (
      await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}?since=${created}`, headers: auth })
    ).json();
    expect(delta.delta).toBe(true);
    expect(delta.items).toHaveLength(2);
    const future = (
      await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}?since=${Date.now() + 60_000}`, headers: auth })
    ).json();
    expect(future.items).toHaveLength(0);
    const summary = (
      await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}?fields=summary`, headers: auth })
    ).json();
    expect(summary.items).toBeUndefined();
    expect(summary.counts.total).toBe(2);
    // A draft is not running: wait answers at once. With the timers frozen, a long-poll that waited for
    // its 30 s (or for a change, which never comes) would never answer.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const answered = await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}?wait=30`, headers: auth });
      expect(answered.json().status).toBe('draft');
    } finally {
      vi.useRealTimers();
    }
  });

  it('lists batches newest first with paging, filters by status', async () => {
    const { auth } = await t.account();
    const ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await draft(auth)).id);
      await new Promise((r) => setTimeout(r, 3));
    }
    const first = (await t.app.inject({ method: 'GET', url: '/v1/jobs?limit=2', headers: auth })).json();
    expect(first.jobs.map((j: { id: string }) => j.id)).toEqual([ids[2], ids[1]]);
    expect(first.hasMore).toBe(true);
    const second = (
      await t.app.inject({ method: 'GET', url: `/v1/jobs?limit=2&before=${first.nextBefore}`, headers: auth })
    ).json();
    expect(second.jobs.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
    expect(second.hasMore).toBe(false);
    expect(second.nextBefore).toBeNull();
    const done = (await t.app.inject({ method: 'GET', url: '/v1/jobs?status=done', headers: auth })).json();
    expect(done.jobs).toEqual([]);
  });

  it('deletes photos (bulk and single) and batches; refuses to delete a running batch', async () => {
    const { auth } = await t.account();
    const job = await draft(auth);
    const added = (
      await upload(
        auth,
        job.id,
        [1, 2, 3].map((i) => ({ filename: `${i}.jpg`, data: Buffer.alloc(0) })),
      )
    ).json();
    expect(added.added).toBe(0);
    const real = (
      await upload(
        auth,
        job.id,
        await Promise.all([1, 2, 3].map(async (i) => ({ filename: `${i}.jpg`, data: await productPhoto() }))),
      )
    ).json();
    const [a, b, c] = real.items.map((i: { id: string }) => i.id);
    const bulk = await t.app.inject({
      method: 'DELETE',
      url: `/v1/jobs/${job.id}/items`,
      headers: auth,
      payload: { itemIds: [a, b, 'img_unknown'] },
    });
    expect(bulk.statusCode).toBe(200);
    expect(bulk.json().removed).toBe(2);
    const single = await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}/items/${c}`, headers: auth });
    expect(single.json().counts.total).toBe(0);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}/items/${c}`, headers: auth })).statusCode,
    ).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}`, headers: auth })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}`, headers: auth })).statusCode).toBe(404);
  });
});

describe('credits and start rules', () => {
  it('402 NO_CREDITS with needed and balance leaves the batch a draft and the balance untouched', async () => {
    const { auth, accountId } = await t.account(1, 0);
    const job = await draft(auth);
    await upload(auth, job.id, [
      { filename: 'a.jpg', data: await productPhoto() },
      { filename: 'b.jpg', data: await productPhoto() },
    ]);
    const res = await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
    expect(res.statusCode).toBe(402);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'NO_CREDITS', needed: 2, balance: 1, status: 402 });
    const after = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}`, headers: auth })).json();
    expect(after.status).toBe('draft');
    expect(after.counts.held).toBe(2);
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(1);
  });

  it('replays a start with the same Idempotency-Key and never charges twice; a second start is NOT_DRAFT', async () => {
    const { auth, accountId } = await t.account(10, 0);
    const job = await draft(auth);
    await upload(auth, job.id, [{ filename: 'a.jpg', data: await productPhoto() }]);
    const headers = { ...auth, 'idempotency-key': 'start-key-0001' };
    const first = await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers });
    const second = await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers });
    expect(first.statusCode).toBe(202);
    expect(second.statusCode).toBe(202);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    const again = await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('NOT_DRAFT');
    const reserves = (await t.c.store.repos.ledger.list(accountId, { limit: 50 })).filter((r) => r.kind === 'reserve');
    expect(reserves).toHaveLength(1);
    const bad = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${job.id}/start`,
      headers: { ...auth, 'idempotency-key': 'short' },
    });
    expect(bad.json().code).toBe('VALIDATION');
    const adding = await upload(auth, job.id, [{ filename: 'late.jpg', data: await productPhoto() }]);
    expect(adding.json().code).toBe('NOT_DRAFT');
  });

  it('a sample start runs N photos, pauses, and continue runs (and charges) the rest', async () => {
    const { auth, accountId } = await t.account(10, 0);
    const job = await draft(auth);
    await upload(
      auth,
      job.id,
      await Promise.all([1, 2, 3, 4].map(async (i) => ({ filename: `${i}.jpg`, data: await productPhoto() }))),
    );
    const started = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${job.id}/start`,
      headers: auth,
      payload: { sample: 1 },
    });
    const counts = started.json().counts;
    expect(counts.held).toBe(3);
    expect(counts.pending + counts.processing + counts.done).toBe(1); // the worker may have claimed it already
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(9);
    const paused = await waitForBatch(t.app, auth, job.id);
    expect(paused.status).toBe('paused');
    expect(paused.continueUrl).toBe(`/v1/jobs/${job.id}/continue`);
    const cont = await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/continue`, headers: auth });
    expect(cont.statusCode).toBe(202);
    const done = await waitForBatch(t.app, auth, job.id);
    expect(done.status).toBe('done');
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(6);
    expect(
      (await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/continue`, headers: auth })).json().code,
    ).toBe('CONFLICT');
    expect((await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/cancel`, headers: auth })).json().code).toBe(
      'NOT_RUNNING',
    );
  });

  it('a failed photo is never charged and a model failure says nothing of the model', async () => {
    const { auth, accountId } = await t.account(5, 0);
    const job = await draft(auth);
    await upload(auth, job.id, [{ filename: 'a.jpg', data: await productPhoto() }]);
    t.model.failNext = true;
    await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
    const done = await waitForBatch(t.app, auth, job.id);
    expect(done.status).toBe('failed');
    const item = (done.items as Array<Record<string, any>>)[0];
    expect(item.error.code).toBe('PROCESSING_FAILED');
    expect(item.error.message).not.toMatch(/onnx|model|isnet/i);
    expect(item.credits).toBe(0);
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(5);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 5, pack: 0 });
  });

  it('a white photo has no subject: failed NO_SUBJECT, not charged', async () => {
    const { auth, accountId } = await t.account(5, 0);
    const job = await draft(auth);
    const white = await sharp({ create: { width: 200, height: 200, channels: 3, background: '#ffffff' } })
      .jpeg()
      .toBuffer();
    await upload(auth, job.id, [{ filename: 'white.jpg', data: white }]);
    await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
    const done = await waitForBatch(t.app, auth, job.id);
    expect((done.items as Array<Record<string, any>>)[0].error.code).toBe('NO_SUBJECT');
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(5);
  });
});

describe('long-poll', () => {
  it('holds the answer while nothing changed after `since`, and answers as soon as something does', async () => {
    const { auth } = await t.account();
    const res = await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth });
    const job = res.json();
    await upload(auth, job.id, [{ filename: 'a.jpg', data: await productPhoto() }]);
    // Hold the model so the batch stays running with nothing changing.
    const release = t.model.hold();
    try {
      await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
      let state = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}`, headers: auth })).json();
      for (let i = 0; i < 50 && state.items[0].stage !== 'inference'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        state = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}`, headers: auth })).json();
      }
      expect(state.items[0].stage).toBe('inference');
      // Nothing changes: the long-poll waits on the bus for a change until its `wait` runs out.
      const listeners = t.c.bus.listenerCount();
      const holding = t.app.inject({
        method: 'GET',
        url: `/v1/jobs/${job.id}?since=${state.updatedAt}&wait=1`,
        headers: auth,
      });
      for (let i = 0; i < 100 && t.c.bus.listenerCount() === listeners; i++) await new Promise((r) => setTimeout(r, 5));
      expect(t.c.bus.listenerCount(), 'the long-poll waits for a change').toBeGreaterThan(listeners);
      const held = await holding;
      expect(t.c.bus.listenerCount(), 'and stops listening when it answers').toBe(listeners);
      // `since` is inclusive for the delta (photos changed at or after it); nothing newer happened.
      expect(held.json().items.every((i: { status: string }) => i.status === 'processing')).toBe(true);
      const waiting = t.app.inject({
        method: 'GET',
        url: `/v1/jobs/${job.id}?since=${state.updatedAt}&wait=30`,
        headers: auth,
      });
      setTimeout(release, 100);
      const woke = (await waiting).json();
      expect(woke.delta).toBe(true);
      expect(woke.items.length).toBe(1);
      expect(['processing', 'done']).toContain(woke.items[0].status);
      expect(woke.updatedAt).toBeGreaterThan(state.updatedAt);
    } finally {
      release();
    }
  });
});

describe('stopping a batch', () => {
  it('cancel holds the queued photos again and releases their credits at once; continue charges them', async () => {
    const { auth, accountId } = await t.account(10, 0);
    const res = await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth });
    const job = res.json();
    await upload(
      auth,
      job.id,
      await Promise.all([1, 2, 3, 4].map(async (i) => ({ filename: `${i}.jpg`, data: await productPhoto() }))),
    );
    const release = t.model.hold();
    try {
      await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
      expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(6);
      const cancelled = await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/cancel`, headers: auth });
      expect(cancelled.statusCode).toBe(200);
      const body = cancelled.json();
      expect(body.stopped + body.inFlight).toBe(4);
      expect(body.cancelRequestedAt).toBeGreaterThan(0);
      expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(6 + body.stopped);
      release();
      const paused = await waitForBatch(t.app, auth, job.id);
      expect(paused.status).toBe('paused');
      expect((paused.counts as { held: number }).held).toBe(body.stopped);
    } finally {
      release();
    }
    await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/continue`, headers: auth });
    expect((await waitForBatch(t.app, auth, job.id)).status).toBe('done');
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(6);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 6, pack: 0 });
  });
});
