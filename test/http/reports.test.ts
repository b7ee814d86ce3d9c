// Reports over the HTTP API: the pixel check's verdicts, refunds as `claim` ledger rows, two reports
// per result, and every refusal (409 with its reason, 400, 404) leaving nothing changed.
// The fake model keeps pixels darker than light grey: a pale pink part of a product is cut away, a
// real missing part the check can see.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

/** 400x300, white, a dark blue product with a pale pink part on its right (which the fake model drops). */
async function productWithPalePart(): Promise<Buffer> {
  const w = 400,
    h = 300;
  const rgb = Buffer.alloc(w * h * 3, 255);
  const paint = (x0: number, y0: number, x1: number, y1: number, c: number[]) => {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) rgb.set(c, (y * w + x) * 3);
  };
  paint(60, 60, 220, 240, [30, 40, 120]);
  paint(220, 100, 300, 200, [250, 170, 200]);
  return sharp(rgb, { raw: { width: w, height: h, channels: 3 } })
    .png()
    .toBuffer();
}
const MISSING = { x: 220, y: 100, width: 80, height: 100 };
const ON_PRODUCT = { x: 80, y: 80, width: 100, height: 100 };

async function finishedPhoto(plan = 5, pack = 0) {
  const acct = await t.account(plan, pack);
  const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: acct.auth, payload: {} })).json();
  const form = multipart([
    { name: 'files', filename: 'vase.png', data: await productWithPalePart(), type: 'image/png' },
  ]);
  await t.app.inject({
    method: 'POST',
    url: `/v1/jobs/${job.id}/items`,
    headers: { ...acct.auth, ...form.headers },
    payload: form.payload,
  });
  await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: acct.auth, payload: {} });
  const done = await waitForBatch(t.app, acct.auth, job.id);
  const item = (done.items as Array<Record<string, any>>)[0];
  return { ...acct, jobId: job.id as string, item };
}

const report = (auth: Record<string, string>, jobId: string, itemId: string, payload: unknown) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/jobs/${jobId}/items/${itemId}/report`,
    headers: auth,
    payload: payload as object,
  });

describe('reports', () => {
  it('accepts a report the pixels back: the credit comes back as a claim row, the photo is refunded and keeps the claim', async () => {
    const { auth, accountId, jobId, item } = await finishedPhoto(5);
    expect(item).toMatchObject({
      status: 'done',
      review: 'none',
      refunded: false,
      credits: 1,
      canReport: true,
      claims: [],
    });
    expect(item.meta.cutout).toEqual({ width: 400, height: 300 });
    const res = await report(auth, jobId, item.id, {
      reason: 'missing-part',
      region: MISSING,
      note: 'the pink handle is gone',
    });
    expect(res.statusCode, res.body).toBe(200);
    const { job, verdict } = res.json();
    expect(verdict).toMatchObject({ accepted: true, reason: 'missing-part', region: MISSING });
    expect(verdict.confidence).toBeGreaterThan(0.5);
    expect(verdict.evidence).toMatch(/\d+%/);
    expect(verdict.metrics.subjectLikeShare).toBeGreaterThan(0.5);
    const after = job.items[0];
    expect(after).toMatchObject({ refunded: true, credits: 0, canReport: false, review: 'none' });
    expect(after.claims).toEqual([
      expect.objectContaining({
        reason: 'missing-part',
        verdict: 'accepted',
        region: MISSING,
        evidence: verdict.evidence,
      }),
    ]);
    expect(job.counts.refunded).toBe(1);

    const account = (await t.c.store.repos.accounts.findById(accountId))!;
    expect(account.plan_credits).toBe(5);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 5, pack: 0 });
    const ledger = (await t.app.inject({ method: 'GET', url: '/v1/credits/ledger', headers: auth })).json();
    expect(ledger.entries[0]).toMatchObject({ kind: 'claim', pool: 'plan', amount: 1, itemId: item.id, jobId });

    // Refunded: a further report has nothing to refund.
    const again = await report(auth, jobId, item.id, { reason: 'hole', region: ON_PRODUCT });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'CONFLICT', reason: 'ALREADY_REFUNDED' });
  });

  it('rejects a report the pixels do not back, keeps it, and allows two reports a result (409 NO_ATTEMPTS_LEFT after)', async () => {
    const { auth, accountId, jobId, item } = await finishedPhoto(5);
    const first = await report(auth, jobId, item.id, { reason: 'background-kept', region: ON_PRODUCT });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().verdict).toMatchObject({ accepted: false, reason: 'background-kept' });
    expect(first.json().verdict.metrics.backgroundLikeShare).toBeLessThan(0.4);
    expect(first.json().job.items[0]).toMatchObject({ refunded: false, credits: 1, canReport: true });
    const second = await report(auth, jobId, item.id, { reason: 'extra-object', region: ON_PRODUCT });
    expect(second.json().verdict.accepted).toBe(false);
    expect(second.json().job.items[0].claims.map((c: { verdict: string }) => c.verdict)).toEqual([
      'rejected',
      'rejected',
    ]);
    expect(second.json().job.items[0].canReport).toBe(false);
    const third = await report(auth, jobId, item.id, { reason: 'missing-part', region: MISSING });
    expect(third.statusCode).toBe(409);
    expect(third.json()).toMatchObject({ code: 'CONFLICT', reason: 'NO_ATTEMPTS_LEFT' });
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(4);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 4, pack: 0 });

    // A re-run makes a new result, which may be reported again; its claim refunds the re-run's charge.
    const rerun = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/items/${item.id}/retry`,
      headers: auth,
      payload: { tier: 'heavy' },
    });
    expect(rerun.statusCode, rerun.body).toBe(202);
    const notDone = await report(auth, jobId, item.id, { reason: 'missing-part', region: MISSING });
    if (notDone.statusCode === 409) expect(notDone.json().reason).toBe('NOT_DONE');
    const done = await waitForBatch(t.app, auth, jobId);
    const rerunItem = (done.items as Array<Record<string, any>>)[0];
    expect(rerunItem).toMatchObject({ tier: 'heavy', credits: 2, canReport: true });
    const fourth = await report(auth, jobId, item.id, { reason: 'missing-part', region: MISSING });
    expect(fourth.statusCode, fourth.body).toBe(200);
    expect(fourth.json().verdict.accepted).toBe(true);
    expect(fourth.json().job.items[0].claims).toHaveLength(3);
    // 5 - 1 (first run, kept) - 2 (heavy re-run) + 2 (its claim)
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(4);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 4, pack: 0 });
  });

  it('gives a claim back to the pools the charge came from', async () => {
    const { auth, accountId, jobId, item } = await finishedPhoto(0, 3);
    const res = await report(auth, jobId, item.id, { reason: 'missing-part', region: MISSING });
    expect(res.json().verdict.accepted).toBe(true);
    expect((await t.c.store.repos.accounts.findById(accountId))!).toMatchObject({ plan_credits: 0, pack_credits: 3 });
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 0, pack: 3 });
  });

  it('refuses what cannot be reported and changes nothing: 409 NOT_DONE, ALREADY_REFUNDED (flagged), 400, 404', async () => {
    const acct = await t.account(5);
    const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: acct.auth, payload: {} })).json();
    const black = await sharp({ create: { width: 200, height: 160, channels: 3, background: '#000000' } })
      .jpeg()
      .toBuffer();
    const form = multipart([
      { name: 'files', filename: 'vase.png', data: await productWithPalePart(), type: 'image/png' },
      { name: 'files', filename: 'black.jpg', data: black, type: 'image/jpeg' },
    ]);
    const added = (
      await t.app.inject({
        method: 'POST',
        url: `/v1/jobs/${job.id}/items`,
        headers: { ...acct.auth, ...form.headers },
        payload: form.payload,
      })
    ).json();
    const draftItem = added.items[0];
    const draft = await report(acct.auth, job.id, draftItem.id, { reason: 'missing-part', region: MISSING });
    expect(draft.statusCode).toBe(409);
    expect(draft.json()).toMatchObject({ code: 'CONFLICT', reason: 'NOT_DONE' });
    await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: acct.auth, payload: {} });
    const done = await waitForBatch(t.app, acct.auth, job.id);
    const flagged = (done.items as Array<Record<string, any>>).find((i) => i.name === 'black.jpg')!;
    expect(flagged).toMatchObject({ review: 'red', refunded: true, canReport: false });
    const onFlagged = await report(acct.auth, job.id, flagged.id, {
      reason: 'background-kept',
      region: { x: 0, y: 0, width: 50, height: 50 },
    });
    expect(onFlagged.json()).toMatchObject({ code: 'CONFLICT', reason: 'ALREADY_REFUNDED' });

    const bad = [
      { reason: 'missing-part', region: { x: 390, y: 100, width: 20, height: 10 } }, // off the cut-out
      { reason: 'looks-bad', region: MISSING },
      { reason: 'hole', region: { ...MISSING, width: 0 } },
      { reason: 'hole', region: { ...MISSING, x: -1 } },
      { reason: 'hole', region: { ...MISSING, x: 1.5 } },
      { reason: 'hole' },
      { reason: 'hole', region: MISSING, extra: true },
      { reason: 'hole', region: MISSING, note: 'x'.repeat(501) },
    ];
    for (const payload of bad) {
      const res = await report(acct.auth, job.id, draftItem.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    expect((await report(acct.auth, job.id, 'itm_nope', { reason: 'hole', region: MISSING })).statusCode).toBe(404);
    const other = await t.account(5);
    expect((await report(other.auth, job.id, draftItem.id, { reason: 'hole', region: MISSING })).statusCode).toBe(404);
    const after = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}`, headers: acct.auth })).json();
    expect(after.items.flatMap((i: { claims: unknown[] }) => i.claims)).toEqual([]);
    expect((await t.c.store.repos.accounts.findById(acct.accountId))!.plan_credits).toBe(4);
    expect(await t.c.store.repos.ledger.sums(acct.accountId)).toEqual({ plan: 4, pack: 0 });
  });

  it('two reports sent at once on one result refund once', async () => {
    const { auth, accountId, jobId, item } = await finishedPhoto(5);
    const results = await Promise.all(
      [1, 2, 3].map(() => report(auth, jobId, item.id, { reason: 'missing-part', region: MISSING })),
    );
    expect(results.filter((r) => r.statusCode === 200 && r.json().verdict.accepted)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200))
      expect(r.json().reason).toMatch(/ALREADY_REFUNDED|NO_ATTEMPTS_LEFT/);
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(5);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 5, pack: 0 });
  });
});
