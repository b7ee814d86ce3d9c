// A seller's touch-up over the HTTP API (POST and DELETE /v1/jobs/{id}/items/{itemId}/touch-up): strokes on a
// finished photo's cut-out, free, followed by every file of the photo, undone by a revert and by a re-run, and
// every bad request refused with nothing changed. The stand-in model cuts the dark square of productPhoto out
// exactly (x 100-299, y 75-224 of 400x300), so what a stroke does is known to the pixel.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { unzip } from '../helpers/unzip.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

type Auth = Record<string, string>;
type Json = Record<string, any>;

async function finished(count = 1) {
  const acct = await t.account(10);
  const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: acct.auth, payload: {} })).json();
  const photos = await Promise.all(Array.from({ length: count }, () => productPhoto()));
  const form = multipart(photos.map((data, i) => ({ name: 'files', filename: `p${i}.jpg`, data, type: 'image/jpeg' })));
  await t.app.inject({
    method: 'POST',
    url: `/v1/jobs/${job.id}/items`,
    headers: { ...acct.auth, ...form.headers },
    payload: form.payload,
  });
  await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: acct.auth, payload: {} });
  const done = await waitForBatch(t.app, acct.auth, job.id);
  return { ...acct, jobId: job.id as string, item: (done.items as Json[])[0] };
}

const touchUp = (auth: Auth, jobId: string, itemId: string, payload: unknown) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/jobs/${jobId}/items/${itemId}/touch-up`,
    headers: auth,
    payload: payload as object,
  });
const revert = (auth: Auth, jobId: string, itemId: string) =>
  t.app.inject({ method: 'DELETE', url: `/v1/jobs/${jobId}/items/${itemId}/touch-up`, headers: auth });
const get = async (auth: Auth, url: string) => (await t.app.inject({ method: 'GET', url, headers: auth })).rawPayload;
const itemOf = (job: Json, id: string): Json => job.items.find((i: Json) => i.id === id);

/** Alpha of a PNG at (x, y). */
async function alphaAt(png: Buffer, points: [number, number][]): Promise<number[]> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return points.map(([x, y]) => data[(y * info.width + x) * 4 + 3]);
}

/** An erase stroke down the middle of the product square: a 40 px band at x 180-220. */
const ERASE = {
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
};

describe('touch-up', () => {
  it('erases a band across the product: 200 with the batch, rev up, every file follows, free and without the model', async () => {
    const { auth, accountId, jobId, item } = await finished();
    const thumbBefore = await get(auth, item.thumbUrl);
    const calls = t.model.calls;
    const ledger = await t.c.store.repos.ledger.sums(accountId);
    const before = await get(auth, item.cutoutUrl);
    expect(
      await alphaAt(before, [
        [200, 150],
        [120, 150],
      ]),
    ).toEqual([255, 255]);

    const res = await touchUp(auth, jobId, item.id, ERASE);
    expect(res.statusCode, res.body).toBe(200);
    const after = itemOf(res.json(), item.id);
    expect(after.rev).toBe(item.rev + 1);
    expect(after.touchUp).toEqual({ strokes: 1, updatedAt: expect.any(Number) });
    expect(after.quality).toEqual(item.quality);
    expect(after.credits).toBe(1);
    expect(after.cutoutUrl).not.toBe(item.cutoutUrl);
    const cutout = await get(auth, after.cutoutUrl);
    // The band is gone; the rest of the product is as it was.
    expect(
      await alphaAt(cutout, [
        [200, 150],
        [190, 100],
        [210, 200],
        [120, 150],
        [280, 150],
      ]),
    ).toEqual([0, 0, 0, 255, 255]);
    // The output (here the cut-out itself), its PNG and its thumbnail are drawn from the touched-up cut-out.
    expect(await alphaAt(await get(auth, after.outputUrl), [[200, 150]])).toEqual([0]);
    expect(
      await alphaAt(await get(auth, after.pngUrl), [
        [200, 150],
        [120, 150],
      ]),
    ).toEqual([0, 255]);
    expect((await get(auth, after.thumbUrl)).equals(thumbBefore)).toBe(false);
    expect(t.model.calls).toBe(calls);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual(ledger);

    // Strokes add up: a second request keeps the first one's band.
    const second = await touchUp(auth, jobId, item.id, {
      strokes: [{ mode: 'erase', size: 20, points: [[120, 100]] }],
    });
    const twice = itemOf(second.json(), item.id);
    expect(twice.touchUp.strokes).toBe(2);
    expect(
      await alphaAt(await get(auth, twice.cutoutUrl), [
        [200, 150],
        [120, 100],
        [280, 150],
      ]),
    ).toEqual([0, 0, 255]);
  });

  it('restores what a stroke brings back from the photo, and snap keeps a spill off what was right', async () => {
    const { auth, jobId, item } = await finished();
    await touchUp(auth, jobId, item.id, ERASE);
    // Restore the band with a brush 30 px wider than it: snap brings back the product, not the white around it.
    const res = await touchUp(auth, jobId, item.id, {
      strokes: [
        {
          mode: 'restore',
          size: 70,
          points: [
            [200, 75],
            [200, 224],
          ],
        },
      ],
    });
    const after = itemOf(res.json(), item.id);
    const cutout = await get(auth, after.cutoutUrl);
    expect(
      await alphaAt(cutout, [
        [200, 150],
        [200, 80],
        [200, 220],
      ]),
    ).toEqual([255, 255, 255]);
    // Above and below the square the brush covered white background: it stays transparent.
    expect(
      await alphaAt(cutout, [
        [200, 65],
        [200, 235],
      ]),
    ).toEqual([0, 0]);
    const { data } = await sharp(cutout).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const photo = await sharp(await get(auth, item.inputUrl))
      .raw()
      .toBuffer();
    const at = (y: number, x: number) => (y * 400 + x) * 4;
    // Restored pixels carry the photo's own colours.
    expect(Math.abs(data[at(150, 200)] - photo[(150 * 400 + 200) * 3])).toBeLessThanOrEqual(2);

    // Without snap a stroke is exactly its discs: the same restore also brings back the white above the square.
    const plain = itemOf(
      (
        await touchUp(auth, jobId, item.id, {
          strokes: [
            {
              mode: 'restore',
              size: 70,
              points: [
                [200, 75],
                [200, 224],
              ],
            },
          ],
          snap: false,
        })
      ).json(),
      item.id,
    );
    expect(
      await alphaAt(await get(auth, plain.cutoutUrl), [
        [200, 65],
        [200, 235],
      ]),
    ).toEqual([255, 255]);
  });

  it('reverts to the model cut-out byte for byte (DELETE), and a photo not touched up is answered as it is', async () => {
    const { auth, jobId, item } = await finished();
    const model = await get(auth, item.cutoutUrl);
    const touched = itemOf((await touchUp(auth, jobId, item.id, ERASE)).json(), item.id);
    const res = await revert(auth, jobId, item.id);
    expect(res.statusCode, res.body).toBe(200);
    const back = itemOf(res.json(), item.id);
    expect(back).not.toHaveProperty('touchUp');
    expect(back.rev).toBe(touched.rev + 1);
    expect((await get(auth, back.cutoutUrl)).equals(model)).toBe(true);
    expect(back.meta.bbox).toEqual(item.meta.bbox);
    // Only the model's cut-out and one output and thumbnail are left beside the input.
    const files = fs.readdirSync(path.join(t.dataDir, 'blobs', 'jobs', jobId, item.id));
    expect(files.filter((f) => f.endsWith('cutout.png'))).toHaveLength(1);
    expect(files.filter((f) => f.endsWith('output'))).toHaveLength(1);
    const again = await revert(auth, jobId, item.id);
    expect(again.statusCode).toBe(200);
    expect(itemOf(again.json(), item.id).rev).toBe(back.rev);
  });

  it("the batch ZIP, apply and preview follow the touched-up cut-out; reports judge the model's", async () => {
    const { auth, jobId, item } = await finished();
    // Erase the whole product.
    const touched = itemOf(
      (
        await touchUp(auth, jobId, item.id, {
          strokes: [{ mode: 'erase', size: 400, points: [[200, 150]] }],
          snap: false,
        })
      ).json(),
      item.id,
    );
    const cutout = await get(auth, touched.cutoutUrl);
    const zip = await unzip(await get(auth, `/v1/jobs/${jobId}/download?include=rendered,cutouts`));
    expect(zip.get('cutouts/p0.png')!.equals(cutout)).toBe(true);
    expect(await alphaAt(zip.get('rendered/p0.png')!, [[200, 150]])).toEqual([0]);

    const preview = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/items/${item.id}/preview`,
      headers: auth,
      payload: { settings: { background: { mode: 'solid', color: '#00ff00' } }, format: 'png' },
    });
    const { data } = await sharp(preview.rawPayload).raw().toBuffer({ resolveWithObject: true });
    // The product was erased: the preview is green where it was.
    expect(Array.from(data.subarray((150 * 400 + 200) * 3, (150 * 400 + 200) * 3 + 3))).toEqual([0, 255, 0]);

    const applied = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/apply`,
      headers: auth,
      payload: { settings: { background: { mode: 'white' } } },
    });
    const after = itemOf(applied.json(), item.id);
    expect(after.touchUp.strokes).toBe(1);
    expect((await get(auth, after.cutoutUrl)).equals(cutout)).toBe(true);
  });

  it("reports judge the model's cut-out, not the touched-up one: a touch-up never changes what was charged", async () => {
    const { auth, jobId, item } = await finished();
    await touchUp(auth, jobId, item.id, ERASE);
    // The band the touch-up erased, reported missing: the model's cut-out has it, so the pixels disagree.
    const report = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/items/${item.id}/report`,
      headers: auth,
      payload: { reason: 'missing-part', region: { x: 182, y: 80, width: 36, height: 140 } },
    });
    expect(report.statusCode, report.body).toBe(200);
    const { verdict } = report.json();
    expect(verdict.accepted).toBe(false);
    // None of the region is cut away in the model's cut-out (all of it is in the touched-up one).
    expect(verdict.metrics.transparentShare).toBe(0);
    expect(itemOf(report.json().job, item.id)).toMatchObject({ refunded: false, credits: 1 });
  });

  it('a re-run replaces the cut-out and drops the touch-up, its files removed', async () => {
    const { auth, jobId, item } = await finished();
    expect(itemOf((await touchUp(auth, jobId, item.id, ERASE)).json(), item.id).touchUp.strokes).toBe(1);
    const res = await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/items/${item.id}/retry`, headers: auth });
    expect(res.statusCode, res.body).toBe(202);
    const done = itemOf(await waitForBatch(t.app, auth, jobId), item.id);
    expect(done.status).toBe('done');
    expect(done).not.toHaveProperty('touchUp');
    expect(await alphaAt(await get(auth, done.cutoutUrl), [[200, 150]])).toEqual([255]);
    // The worker removes the old result's files just after it settles the photo.
    const cutouts = () =>
      fs.readdirSync(path.join(t.dataDir, 'blobs', 'jobs', jobId, item.id)).filter((f) => f.endsWith('cutout.png'));
    await expect.poll(cutouts).toHaveLength(1);
    const [left] = cutouts();
    const stored = await t.c.store.repos.items.findById(item.id);
    expect(stored!.cutout_blob).toContain(left);
    expect(stored!.model_cutout_blob).toBeNull();
  });

  it('refuses bad strokes with 400 naming the field, an unfinished photo with 409, another account with 404: nothing changes', async () => {
    const { auth, jobId, item } = await finished();
    const point = (p: unknown) => ({ strokes: [{ mode: 'erase', size: 10, points: [p] }] });
    const cases: [unknown, string][] = [
      [{ strokes: [{ mode: 'smudge', size: 10, points: [[1, 2]] }] }, 'body/strokes/0/mode'],
      [{ strokes: [{ mode: 'erase', size: 0, points: [[1, 2]] }] }, 'body/strokes/0/size'],
      [{ strokes: [{ mode: 'erase', size: 1001, points: [[1, 2]] }] }, 'body/strokes/0/size'],
      [{ strokes: [{ mode: 'erase', size: 10, points: [] }] }, 'body/strokes/0/points'],
      [point([1]), 'body/strokes/0/points/0'],
      [point([1, 2, 3]), 'body/strokes/0/points/0'],
      [point(['1', 2]), 'body/strokes/0/points/0/0'],
      [point([1, null]), 'body/strokes/0/points/0/1'],
      [{ strokes: [] }, 'body/strokes'],
      [{}, 'body/strokes'],
      [{ strokes: [{ mode: 'erase', size: 10, points: [[1, 2]] }], snap: 'yes' }, 'body/snap'],
      [
        {
          strokes: [
            { mode: 'erase', size: 3, points: Array.from({ length: 6000 }, (_, i) => [i % 400, 5]) },
            { mode: 'erase', size: 3, points: Array.from({ length: 4001 }, (_, i) => [i % 400, 9]) },
          ],
        },
        'body/strokes',
      ],
    ];
    for (const [payload, field] of cases) {
      const res = await touchUp(auth, jobId, item.id, payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().code).toBe('VALIDATION');
      expect(res.json().errors.map((e: Json) => e.path)).toContain(field);
    }
    const notJson = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/items/${item.id}/touch-up`,
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"strokes": [',
    });
    expect([notJson.statusCode, notJson.json().code]).toEqual([400, 'VALIDATION']);

    const other = await t.account(10);
    expect((await touchUp(other.auth, jobId, item.id, ERASE)).statusCode).toBe(404);
    expect((await revert(other.auth, jobId, item.id)).statusCode).toBe(404);
    expect((await touchUp(auth, jobId, 'img_nope', ERASE)).statusCode).toBe(404);

    const job = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}`, headers: auth })).json();
    expect(itemOf(job, item.id).rev).toBe(item.rev);
    expect(itemOf(job, item.id)).not.toHaveProperty('touchUp');

    // A photo that has not run yet.
    const draft = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
    const form = multipart([{ name: 'files', filename: 'a.jpg', data: await productPhoto(), type: 'image/jpeg' }]);
    const added = (
      await t.app.inject({
        method: 'POST',
        url: `/v1/jobs/${draft.id}/items`,
        headers: { ...auth, ...form.headers },
        payload: form.payload,
      })
    ).json();
    const held = added.items[0].id;
    for (const res of [await touchUp(auth, draft.id, held, ERASE), await revert(auth, draft.id, held)]) {
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: 'CONFLICT', reason: 'NOT_DONE' });
    }
  });

  it('paints nothing where its points lie outside the cut-out', async () => {
    const { auth, jobId, item } = await finished();
    const before = await get(auth, item.cutoutUrl);
    const res = await touchUp(auth, jobId, item.id, {
      strokes: [
        {
          mode: 'erase',
          size: 50,
          points: [
            [-500, -500],
            [-100, 900],
            [5000, 900],
          ],
        },
      ],
    });
    expect(res.statusCode).toBe(200);
    const after = itemOf(res.json(), item.id);
    const { data: a } = await sharp(before).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const { data: b } = await sharp(await get(auth, after.cutoutUrl))
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(b.equals(a)).toBe(true);
  });
});
