// End to end, real server and real model: the check agrees with ground truth on eval photos (within a
// stated tolerance), the calibrated check refunds a flagged cut-out, the review
// queue lists it, reports are judged on real cut-outs (accepted, rejected, accepted on the model's doubt
// where the part's colours pass for the background's, accepted on a loose box around kept backdrop, and
// each 409), re-runs
// refuse a busy photo (409) and a short balance (402), and the ledger balances after all of it.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import sharp, { type Sharp } from 'sharp';
import { E2E_TEST_TIMEOUT, type ServerHandle } from '../helpers/server.ts';
import { sharedServer } from '../helpers/shared-server.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA, iou } from '../../tools/shared-data.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

let server: ServerHandle;
const entries = new Map(evalEntries().map((e) => [e.id, e]));

beforeAll(async () => {
  if (!HAVE_EVAL_DATA) return;
  server = sharedServer();
});
afterAll(async () => server?.stop());

async function account(plan: number, pack = 0) {
  const { apiKey } = await server.createAccount(
    `q${Math.random().toString(16).slice(2)}@example.com`,
    String(plan),
    String(pack),
  );
  const api = (path: string, init: RequestInit & { json?: unknown } = {}) =>
    fetch(`${server.base}${path}`, {
      ...init,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.headers as Record<string, string>),
      },
    });
  return api;
}
type Api = Awaited<ReturnType<typeof account>>;

async function batch(api: Api, files: { name: string; data: Buffer }[], start = true): Promise<string> {
  const job = await (await api('/v1/jobs', { method: 'POST', json: {} })).json();
  const form = new FormData();
  for (const f of files) form.append('files', new Blob([new Uint8Array(f.data)]), f.name);
  expect((await api(`/v1/jobs/${job.id}/items`, { method: 'POST', body: form })).status).toBe(200);
  if (start) expect((await api(`/v1/jobs/${job.id}/start`, { method: 'POST' })).status).toBe(202);
  return job.id;
}

async function follow(api: Api, jobId: string): Promise<Record<string, any>> {
  let since = 0;
  for (let i = 0; i < 60; i++) {
    const state = await (await api(`/v1/jobs/${jobId}?wait=20&since=${since}`)).json();
    since = state.updatedAt;
    if (!['queued', 'running'].includes(state.status)) return (await api(`/v1/jobs/${jobId}`)).json();
  }
  throw new Error('batch did not finish');
}

/** The ledger's rows, all pages, summed per pool, against the account's balances. */
async function ledgerBalances(api: Api): Promise<void> {
  let before = '';
  const sums = { plan: 0, pack: 0 };
  for (;;) {
    const page = await (await api(`/v1/credits/ledger?limit=100${before ? `&before=${before}` : ''}`)).json();
    for (const e of page.entries) sums[e.pool as 'plan' | 'pack'] += e.amount;
    if (!page.nextBefore) break;
    before = page.nextBefore;
  }
  const account = await (await api('/v1/account')).json();
  expect(sums).toEqual({ plan: account.credits.plan, pack: account.credits.pack });
}

/** In a box of an eval photo: the ground truth's alpha and the cut-out's (brought back to the photo's size). */
async function truthAndKept(
  api: Api,
  photo: { cutoutUrl: string },
  id: string,
  box: { x: number; y: number; width: number; height: number },
): Promise<{ truth: Buffer; kept: Buffer }> {
  const entry = entries.get(id)!;
  const cutout = Buffer.from(await (await api(photo.cutoutUrl)).arrayBuffer());
  const region = (img: Sharp) =>
    img.extract({ left: box.x, top: box.y, width: box.width, height: box.height }).raw().toBuffer();
  return {
    truth: await region(sharp(evalFile(entry.mask)).extractChannel(0)),
    kept: await region(
      sharp(cutout).ensureAlpha().extractChannel(3).resize(entry.width, entry.height, { fit: 'fill' }),
    ),
  };
}

/** One eval photo in a batch of its own, run to the end: it passes the check, is charged and can be reported. */
async function chargedPhoto(api: Api, id: string, name: string) {
  const entry = entries.get(id)!;
  const jobId = await batch(api, [{ name, data: evalFile(entry.image) }]);
  const photo = (await follow(api, jobId)).items[0];
  expect(photo, JSON.stringify(photo.quality)).toMatchObject({ status: 'done', credits: 1, canReport: true });
  return { entry, jobId, photo };
}

/** An accepted report's answer: the photo is refunded, the plan's credits are back to `plan`, the ledger balances. */
async function expectRefunded(api: Api, body: { job: { items: unknown[] } }, plan: number) {
  expect(body.job.items[0]).toMatchObject({ refunded: true, credits: 0 });
  expect((await (await api('/v1/account')).json()).credits.plan).toBe(plan);
  await ledgerBalances(api);
}

/** An eval product cut out by its ground truth (straight RGBA PNG), resized to `size`. */
async function cutByTruth(id: string, size: { width: number } | { height: number }) {
  const e = entries.get(id)!;
  const rgb = sharp(evalFile(e.image)).removeAlpha();
  const withAlpha = await rgb
    .joinChannel(await sharp(evalFile(e.mask)).extractChannel(0).toBuffer())
    .png()
    .toBuffer();
  return sharp(withAlpha).resize(size).png().toBuffer({ resolveWithObject: true });
}

/** Two eval products cut out by their ground truth and laid on white: a vase, and a banana apart from it. */
async function twoProductsOnWhite(): Promise<{
  data: Buffer;
  banana: { x: number; y: number; width: number; height: number };
}> {
  const vase = await cutByTruth('grabcut-ceramic', { width: 560 });
  const banana = await cutByTruth('grabcut-banana1', { width: 150 });
  const at = { x: 860, y: 480 };
  const data = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#ffffff' } })
    .composite([
      { input: vase.data, left: 20, top: 60 },
      { input: banana.data, left: at.x, top: at.y },
    ])
    .jpeg({ quality: 92 })
    .toBuffer();
  return { data, banana: { x: at.x, y: at.y, width: banana.info.width, height: banana.info.height } };
}

describe.skipIf(!HAVE_EVAL_DATA)('the check against ground truth, with the real model', () => {
  // Ten photos through the real model, while other suites load theirs: more than the default minute on a busy 2-core machine.
  it('flags every broken result (IoU < 0.85) of ten eval products and at most one clean one (IoU >= 0.95)', async () => {
    // Ten products from both source folders. The model's quality decides which results are clean or
    // broken; the check must tell them apart, whatever the split (a better model makes fewer broken ones).
    const picked = evalEntries()
      .filter((e) => e.kind === 'product')
      .filter((_, i) => i % 2 === 0)
      .slice(0, 10);
    const api = await account(picked.length);
    const jobId = await batch(
      api,
      picked.map((e) => ({ name: `${e.id}.jpg`, data: evalFile(e.image) })),
    );
    // Polled every two seconds, not long-polled: ten photos change the batch about sixty times, and the
    // key may make sixty requests a minute.
    for (let i = 0; i < 150; i++) {
      const summary = await (await api(`/v1/jobs/${jobId}?fields=summary`)).json();
      expect(summary.status, JSON.stringify(summary)).toBeDefined();
      if (!['queued', 'running'].includes(summary.status)) break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    const job = await (await api(`/v1/jobs/${jobId}`)).json();
    const rows: string[] = [];
    let broken = 0;
    let caught = 0;
    let clean = 0;
    let alarms = 0;
    for (const entry of picked) {
      const item = job.items.find((i: { name: string }) => i.name === `${entry.id}.jpg`);
      expect(item.status, entry.id).toBe('done');
      const score = await iou(Buffer.from(await (await api(item.cutoutUrl)).arrayBuffer()), entry);
      const flagged = item.review === 'red';
      rows.push(`${entry.id} IoU ${score.toFixed(3)} ${flagged ? 'flagged' : 'passed'} (score ${item.quality.score})`);
      if (score < 0.85) {
        broken++;
        if (flagged) caught++;
      } else if (score >= 0.95) {
        clean++;
        if (flagged) alarms++;
      }
    }
    // Held out, the check catches 11 of the 11 broken eval photos and flags 1 of the 25 good ones (docs/check.md):
    // on these ten products (their subjects are in the fit) every broken one is caught; one false alarm is within
    // what that rate gives, two are not.
    expect(broken + clean, rows.join('\n')).toBeGreaterThanOrEqual(5);
    expect(caught, rows.join('\n')).toBe(broken);
    expect(alarms, rows.join('\n')).toBeLessThanOrEqual(1);
    await ledgerBalances(api);
  });
});

describe.skipIf(!HAVE_EVAL_DATA)('the calibrated check, reviews and reports, with the real model', () => {
  it('refunds a cut-out the check flags (review red, score under 50, flags), charges the clean one, and lists the flagged one for review', async () => {
    const api = await account(5);
    // Two products in one photo: a cut-out holding both is not a product shot, whatever the model's
    // quality (a better model keeps both all the more). The vase alone is clean.
    const two = await twoProductsOnWhite();
    const jobId = await batch(api, [
      { name: 'plant.jpg', data: two.data },
      { name: 'vase.jpg', data: evalFile(entries.get('grabcut-ceramic')!.image) },
    ]);
    const job = await follow(api, jobId);
    const plant = job.items.find((i: { name: string }) => i.name === 'plant.jpg');
    const vase = job.items.find((i: { name: string }) => i.name === 'vase.jpg');
    expect(plant).toMatchObject({
      status: 'done',
      review: 'red',
      refunded: true,
      credits: 0,
      canReport: false,
      canRerun: true,
    });
    expect(plant.quality.score).toBeLessThan(50);
    expect(plant.quality.flags.length).toBeGreaterThan(0);
    for (const f of plant.quality.flags) expect(f.severity).toBeGreaterThan(0);
    expect(vase).toMatchObject({ status: 'done', review: 'none', refunded: false, credits: 1, canReport: true });
    expect(vase.quality.score).toBeGreaterThanOrEqual(50);
    expect(job.counts).toMatchObject({ done: 2, refunded: 1 });

    const queue = await (await api(`/v1/jobs/${jobId}/review`)).json();
    expect(queue).toMatchObject({ total: 1, review: 1, failed: 0 });
    expect(queue.items[0]).toMatchObject({ id: plant.id, kind: 'review', refunded: true, credits: 0 });
    expect(queue.items[0].reason.length).toBeGreaterThan(5);

    const account_ = await (await api('/v1/account')).json();
    expect(account_.credits.plan).toBe(4);
    await ledgerBalances(api);
    // A refunded photo has nothing to give back.
    const onPlant = await api(`/v1/jobs/${jobId}/items/${plant.id}/report`, {
      method: 'POST',
      json: { reason: 'missing-part', region: { x: 0, y: 0, width: 100, height: 100 } },
    });
    expect(onPlant.status).toBe(409);
    expect(await onPlant.json()).toMatchObject({ code: 'CONFLICT', reason: 'ALREADY_REFUNDED' });
  });

  it('judges reports on a real cut-out: a false report is rejected, a report the pixels back is refunded, a third refused', async () => {
    const api = await account(5);
    // alphamatting-gt12 (a plush toy) passes the check. The region `foot` below is where the ground truth
    // has its left foot: the report there is accepted when the cut-out lacks the foot, and rejected
    // when it has it; either way the verdict must agree with the pixels (the accepted path on a cut-out
    // damaged on purpose is test/http/reports.test.ts).
    const jobId = await batch(api, [{ name: 'toy.jpg', data: evalFile(entries.get('alphamatting-gt12')!.image) }]);
    const photo = (await follow(api, jobId)).items[0];
    expect(photo, JSON.stringify(photo.quality)).toMatchObject({
      status: 'done',
      review: 'none',
      credits: 1,
      canReport: true,
    });
    const foot = { x: 43, y: 408, width: 294, height: 119 };

    const rejected = await api(`/v1/jobs/${jobId}/items/${photo.id}/report`, {
      method: 'POST',
      json: { reason: 'background-kept', region: { x: 240, y: 160, width: 120, height: 120 } },
    });
    expect(rejected.status).toBe(200);
    expect((await rejected.json()).verdict).toMatchObject({ accepted: false, reason: 'background-kept' });

    // Does this cut-out lack the foot? The share of the truth's pixels in the region that the cut-out keeps.
    const { truth, kept } = await truthAndKept(api, photo, 'alphamatting-gt12', foot);
    let inTruth = 0;
    let keptOfTruth = 0;
    for (let i = 0; i < truth.length; i++) {
      if (truth[i] >= 128) {
        inTruth++;
        if (kept[i] >= 128) keptOfTruth++;
      }
    }
    const footMissing = keptOfTruth / inTruth < 0.5;

    const second = await api(`/v1/jobs/${jobId}/items/${photo.id}/report`, {
      method: 'POST',
      json: { reason: 'missing-part', region: foot, note: 'the left foot is gone' },
    });
    const body = await second.json();
    expect(second.status, JSON.stringify(body)).toBe(200);
    expect(body.verdict, `the cut-out keeps ${keptOfTruth} of the foot's ${inTruth} pixels`).toMatchObject({
      accepted: footMissing,
      reason: 'missing-part',
      region: foot,
    });
    expect(body.verdict.evidence).toMatch(/\d+%/);
    expect(body.job.items[0].claims.map((c: { verdict: string }) => c.verdict)).toEqual([
      'rejected',
      footMissing ? 'accepted' : 'rejected',
    ]);
    if (footMissing) {
      expect(body.job.items[0]).toMatchObject({ refunded: true, credits: 0, canReport: false });
      expect((await (await api('/v1/account')).json()).credits.plan).toBe(5);
      const ledger = await (await api('/v1/credits/ledger')).json();
      expect(ledger.entries[0]).toMatchObject({ kind: 'claim', amount: 1, itemId: photo.id });
    } else {
      expect(body.job.items[0]).toMatchObject({ refunded: false, credits: 1 });
    }
    await ledgerBalances(api);

    const third = await api(`/v1/jobs/${jobId}/items/${photo.id}/report`, {
      method: 'POST',
      json: { reason: 'rough-edges', region: foot },
    });
    expect(third.status).toBe(409);
    expect((await third.json()).reason).toMatch(/ALREADY_REFUNDED|NO_ATTEMPTS_LEFT/);
  });

  it("refunds a report on a part the model half kept whose colours pass for the background's (the model's doubt is the evidence)", async () => {
    const api = await account(2);
    // alphamatting-gt21 (orange lilies) passes the check, but the model half kept a stretch of stem at the
    // bottom edge (found by calibrate:figures's true claims on the eval photos as they are). Its green passes
    // for the background's colours, so only the second way in can accept it.
    const { entry, jobId, photo } = await chargedPhoto(api, 'alphamatting-gt21', 'lilies.jpg');
    const stem = { x: 520, y: 590, width: 60, height: 73 };

    // The premise, from the pixels: the truth has the stem here, the cut-out left much of it out (55% in this
    // run), nearly all of that half kept.
    const { truth, kept } = await truthAndKept(api, photo, entry.id, stem);
    let inTruth = 0;
    let cut = 0;
    let half = 0;
    for (let i = 0; i < truth.length; i++) {
      if (truth[i] < 128) continue;
      inTruth++;
      if (kept[i] < 128) cut++;
      if (kept[i] >= 26 && kept[i] < 128) half++;
    }
    const premise = `${inTruth} stem pixels, ${cut} cut away, ${half} half kept`;
    expect(cut / inTruth, premise).toBeGreaterThan(0.4);
    expect(half / cut, premise).toBeGreaterThan(0.15);

    const reported = await api(`/v1/jobs/${jobId}/items/${photo.id}/report`, {
      method: 'POST',
      json: { reason: 'missing-part', region: stem, note: 'the stem is cut off' },
    });
    const body = await reported.json();
    expect(reported.status, JSON.stringify(body)).toBe(200);
    expect(body.verdict, premise).toMatchObject({ accepted: true, reason: 'missing-part', region: stem });
    expect(body.verdict.evidence).toMatch(/half kept \d+%/);
    expect(body.verdict.metrics.subjectLikeShare).toBeLessThan(0.1);
    await expectRefunded(api, body, 2);
  });

  it('refunds a background-kept report drawn loosely: the kept backdrop is judged in the part of the box where it is', async () => {
    const api = await account(2);
    // alphamatting-gt15 (a white plush rabbit) passes the check, but the model kept a stretch of the backdrop
    // beside it (calibrate:figures's true claims on the eval photos as they are: grid box 141,89 77x53 of 256²).
    // The seller's box here is that box with a quarter more on each side, so it also holds rabbit and backdrop
    // the cut-out has right; the check finds the kept backdrop in a window of it.
    const { entry, jobId, photo } = await chargedPhoto(api, 'alphamatting-gt15', 'rabbit.jpg');
    expect(photo.meta.cutout).toMatchObject({ width: entry.width, height: entry.height });
    const loose = { x: 381, y: 145, width: 359, height: 152 };

    // The premise, from the pixels: the cut-out keeps backdrop in the box (kept where the truth has none).
    const { truth, kept } = await truthAndKept(api, photo, entry.id, loose);
    let keptBackdrop = 0;
    let keptRabbit = 0;
    for (let i = 0; i < truth.length; i++) {
      if (kept[i] < 128) continue;
      if (truth[i] < 128) keptBackdrop++;
      else keptRabbit++;
    }
    const premise = `${truth.length} pixels in the box, ${keptRabbit} kept rabbit, ${keptBackdrop} kept backdrop`;
    expect(keptBackdrop / truth.length, premise).toBeGreaterThan(0.03);

    const reported = await api(`/v1/jobs/${jobId}/items/${photo.id}/report`, {
      method: 'POST',
      json: { reason: 'background-kept', region: loose, note: 'the backdrop beside the rabbit is kept' },
    });
    const body = await reported.json();
    expect(reported.status, JSON.stringify(body)).toBe(200);
    expect(body.verdict, `${premise}: ${body.verdict.evidence}`).toMatchObject({
      accepted: true,
      reason: 'background-kept',
      region: loose,
    });
    expect(body.verdict.metrics.windowScale).toBeLessThan(1);
    expect(body.verdict.evidence).toMatch(/window \d+% of its width and height/);
    // Kept backdrop, not the blend along a correct edge: some of it lies two pixels or more in from the cut.
    expect(body.verdict.metrics.deepShare).toBeGreaterThanOrEqual(0.005);
    expect(body.verdict.evidence).toMatch(/lie two pixels or more in from the cut/);
    await expectRefunded(api, body, 2);
  });

  it('flags a photo holding a second product (multiple-objects, with its box) and does not charge it', async () => {
    const api = await account(2);
    const { data, banana } = await twoProductsOnWhite();
    const jobId = await batch(api, [{ name: 'vase-and-banana.jpg', data }]);
    const photo = (await follow(api, jobId)).items[0];
    expect(photo).toMatchObject({ status: 'done', review: 'red', refunded: true, credits: 0 });
    const flag = photo.quality.flags.find((f: { code: string }) => f.code === 'multiple-objects');
    expect(flag.bbox.x).toBeGreaterThanOrEqual(banana.x - 8);
    expect(flag.bbox.y).toBeGreaterThanOrEqual(banana.y - 8);
    expect((await (await api('/v1/account')).json()).credits.plan).toBe(2);
    await ledgerBalances(api);
  });

  it('flags a product the frame cuts off (subject-touches-edge: marketplaces refuse it), not the same product clear of the frame', async () => {
    const { data: cutVase, info } = await cutByTruth('grabcut-ceramic', { height: 600 });
    // On white, 900 x 700: clear of every side, and moved down so that its lowest third runs past the bottom.
    const onWhite = (top: number) =>
      sharp({ create: { width: 900, height: 700, channels: 3, background: '#ffffff' } })
        .composite([{ input: cutVase, left: Math.round((900 - info.width) / 2), top }])
        .jpeg({ quality: 92 })
        .toBuffer();
    const api = await account(2);
    const jobId = await batch(api, [
      { name: 'clear.jpg', data: await onWhite(50) },
      { name: 'cut-off.jpg', data: await onWhite(300) },
    ]);
    const items = (await follow(api, jobId)).items as { name: string; quality: { flags: { code: string }[] } }[];
    const touches = (name: string) =>
      items.find((i) => i.name === name)!.quality.flags.find((f) => f.code === 'subject-touches-edge');
    expect(touches('cut-off.jpg'), JSON.stringify(items)).toMatchObject({ severity: 0.25 });
    expect(touches('clear.jpg')).toBeUndefined();
  });

  it('refuses reports and re-runs of a photo not finished (409 NOT_DONE, PHOTO_BUSY), a heavy re-run without the credits (402), and a report after two (NO_ATTEMPTS_LEFT)', async () => {
    const api = await account(4);
    const vase = evalFile(entries.get('grabcut-ceramic')!.image);
    // Three photos, one model: the last is still waiting when the batch has just started.
    const jobId = await batch(api, [
      { name: 'a.jpg', data: vase },
      { name: 'b.jpg', data: vase },
      { name: 'vase.jpg', data: vase },
    ]);
    const waiting = (await (await api(`/v1/jobs/${jobId}`)).json()).items[2];
    expect(waiting.status).toBe('pending');
    const early = await api(`/v1/jobs/${jobId}/items/${waiting.id}/report`, {
      method: 'POST',
      json: { reason: 'hole', region: { x: 0, y: 0, width: 10, height: 10 } },
    });
    expect(early.status).toBe(409);
    expect((await early.json()).reason).toBe('NOT_DONE');
    const busy = await api(`/v1/jobs/${jobId}/items/${waiting.id}/retry`, { method: 'POST', json: { tier: 'light' } });
    expect(busy.status).toBe(409);
    expect((await busy.json()).reason).toBe('PHOTO_BUSY');
    const photo = (await follow(api, jobId)).items[2];
    expect(photo).toMatchObject({ status: 'done', credits: 1 });
    // One credit left: the heavy tier needs two.
    const heavy = await api(`/v1/jobs/${jobId}/items/${photo.id}/retry`, { method: 'POST', json: { tier: 'heavy' } });
    expect(heavy.status).toBe(402);
    expect(await heavy.json()).toMatchObject({ code: 'NO_CREDITS', needed: 2, balance: 1 });
    for (const reason of ['background-kept', 'extra-object']) {
      const res = await api(`/v1/jobs/${jobId}/items/${photo.id}/report`, {
        method: 'POST',
        json: { reason, region: { x: 250, y: 200, width: 120, height: 120 } },
      });
      const vv = (await res.json()).verdict;
      expect(vv.accepted, `${reason}: ${vv.evidence}`).toBe(false);
    }
    const third = await api(`/v1/jobs/${jobId}/items/${photo.id}/report`, {
      method: 'POST',
      json: { reason: 'hole', region: { x: 250, y: 200, width: 120, height: 120 } },
    });
    expect(third.status).toBe(409);
    expect((await third.json()).reason).toBe('NO_ATTEMPTS_LEFT');
    expect((await (await api('/v1/account')).json()).credits.plan).toBe(1);
    await ledgerBalances(api);
  });
});

describe.skipIf(!HAVE_EVAL_DATA)('sample runs, stopping and their refusals, with the real model', () => {
  const photos = () =>
    ['grabcut-ceramic', 'grabcut-book', 'grabcut-teddy'].map((id) => ({
      name: `${id}.jpg`,
      data: evalFile(entries.get(id)!.image),
    }));
  const post = (api: Api, path: string, json?: unknown) =>
    api(path, { method: 'POST', ...(json !== undefined ? { json } : {}) });

  it('a sample of one runs and pauses (continueUrl); held photos refuse a re-run (HELD); continue runs the rest; then nothing is held', async () => {
    const api = await account(5);
    const jobId = await batch(api, photos(), false);
    const draftRetry = await post(api, `/v1/jobs/${jobId}/retry`, { failed: true });
    expect(draftRetry.status).toBe(409);
    expect((await draftRetry.json()).reason).toBe('NOT_STARTED');
    const started = await post(api, `/v1/jobs/${jobId}/start`, { sample: 1 });
    expect(started.status).toBe(202);
    const paused = await follow(api, jobId);
    expect(paused).toMatchObject({ status: 'paused', continueUrl: `/v1/jobs/${jobId}/continue` });
    expect(paused.counts).toMatchObject({ done: 1, held: 2 });
    expect((await (await api('/v1/account')).json()).credits.plan).toBe(4);
    const held = paused.items.find((i: { status: string }) => i.status === 'held');
    const heldRetry = await post(api, `/v1/jobs/${jobId}/items/${held.id}/retry`, { tier: 'light' });
    expect(heldRetry.status).toBe(409);
    expect((await heldRetry.json()).reason).toBe('HELD');
    const nothingFailed = await post(api, `/v1/jobs/${jobId}/retry`, { failed: true });
    expect((await nothingFailed.json()).reason).toBe('NOTHING_TO_RETRY');

    const continued = await post(api, `/v1/jobs/${jobId}/continue`);
    expect(continued.status).toBe(202);
    const done = await follow(api, jobId);
    expect(done).toMatchObject({ status: 'done', continueUrl: null });
    expect(done.counts).toMatchObject({ done: 3, held: 0 });
    const again = await post(api, `/v1/jobs/${jobId}/continue`);
    expect(again.status).toBe(409);
    expect((await again.json()).reason).toBe('NOTHING_HELD');
    expect((await (await api('/v1/account')).json()).credits.plan).toBe(2);
    await ledgerBalances(api);
  });

  it('stop returns queued photos to held and releases their credits at once while the photo at the model finishes; stopping a stopped batch is 409 NOT_RUNNING; continuing without credits is 402', async () => {
    const api = await account(3);
    const jobId = await batch(api, photos());
    const stop = await post(api, `/v1/jobs/${jobId}/cancel`);
    expect(stop.status).toBe(200);
    const stopped = await stop.json();
    expect(stopped.stopped + stopped.inFlight).toBe(3);
    expect(stopped.stopped).toBeGreaterThanOrEqual(1);
    // The released credits are back at once; only the photo at the model (if any) still holds one.
    expect((await (await api('/v1/account')).json()).credits.plan).toBe(3 - stopped.inFlight);
    const paused = await follow(api, jobId);
    expect(paused.status).toBe('paused');
    expect(paused.counts.held).toBe(stopped.stopped);
    const twice = await post(api, `/v1/jobs/${jobId}/cancel`);
    expect(twice.status).toBe(409);
    expect((await twice.json()).code).toBe('NOT_RUNNING');
    // Spend one of the released credits on another batch: the held photos then cost more than is left.
    const other = await batch(api, [{ name: 'x.jpg', data: evalFile(entries.get('grabcut-book')!.image) }]);
    expect((await follow(api, other)).items[0]).toMatchObject({ status: 'done', credits: 1 });
    expect((await (await api('/v1/account')).json()).credits.total).toBe(stopped.stopped - 1);
    const broke = await post(api, `/v1/jobs/${jobId}/continue`);
    expect(broke.status).toBe(402);
    expect(await broke.json()).toMatchObject({
      code: 'NO_CREDITS',
      needed: stopped.stopped,
      balance: stopped.stopped - 1,
    });
    expect((await (await api(`/v1/jobs/${jobId}`)).json()).counts.held).toBe(stopped.stopped);
    await ledgerBalances(api);
  });
});
