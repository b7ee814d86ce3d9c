// GET /v1/jobs/{id}/download over the HTTP API: every option, the names it makes, and every refusal.
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

async function finished(names: string[]) {
  const acct = await t.account(20);
  const job = (
    await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: acct.auth, payload: { name: 'Spring: shoes' } })
  ).json();
  const photos = await Promise.all(names.map((_, i) => productPhoto(400 + i * 10, 300)));
  const form = multipart(photos.map((data, i) => ({ name: 'files', filename: names[i], data, type: 'image/jpeg' })));
  await t.app.inject({
    method: 'POST',
    url: `/v1/jobs/${job.id}/items`,
    headers: { ...acct.auth, ...form.headers },
    payload: form.payload,
  });
  await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: acct.auth, payload: {} });
  const done = await waitForBatch(t.app, acct.auth, job.id);
  return { ...acct, jobId: job.id as string, items: done.items as Array<Record<string, any>> };
}

const download = (auth: Record<string, string>, jobId: string, query = '') =>
  t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}/download${query}`, headers: auth });

describe('downloads', () => {
  it('by default: every finished photo as rendered, named {name}, with a Content-Length; bytes as the file endpoint gives them', async () => {
    const { auth, jobId, items } = await finished(['red shoe.jpg', 'blue.jpg']);
    const res = await download(auth, jobId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toContain('Spring_ shoes.zip');
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
    const files = await unzip(res.rawPayload);
    expect([...files.keys()]).toEqual(['red shoe.png', 'blue.png']);
    const first = await t.app.inject({ method: 'GET', url: items[0].outputUrl, headers: auth });
    expect(files.get('red shoe.png')!.equals(first.rawPayload)).toBe(true);
  });

  it('format converts every rendered file; include makes a folder per group; presets a folder per preset, rendered on the fly', async () => {
    const { auth, jobId } = await finished(['a.jpg', 'b.jpg']);
    const webp = await download(auth, jobId, '?format=webp');
    expect(webp.headers['content-length']).toBeUndefined();
    const converted = await unzip(webp.rawPayload);
    expect([...converted.keys()]).toEqual(['a.webp', 'b.webp']);
    expect((await sharp(converted.get('a.webp')!).metadata()).format).toBe('webp');

    const groups = await unzip((await download(auth, jobId, '?include=rendered,cutouts,originals')).rawPayload);
    expect([...groups.keys()].sort()).toEqual([
      'cutouts/a.png',
      'cutouts/b.png',
      'originals/a.jpg',
      'originals/b.jpg',
      'rendered/a.png',
      'rendered/b.png',
    ]);
    expect((await sharp(groups.get('cutouts/a.png')!).metadata()).channels).toBe(4);

    const presets = await unzip(
      (await download(auth, jobId, '?presets=amazon-main,ebay&pattern={name}-{preset}-{w}x{h}')).rawPayload,
    );
    expect([...presets.keys()].sort()).toEqual([
      'amazon-main/a-amazon-main-1600x1600.jpg',
      'amazon-main/b-amazon-main-1600x1600.jpg',
      // eBay keeps the photo's own background (transparent here), so the preset's JPEG becomes PNG.
      'ebay/a-ebay-1600x1600.png',
      'ebay/b-ebay-1600x1600.png',
      'rendered/a-original-400x300.png',
      'rendered/b-original-410x300.png',
    ]);
    const amazon = await sharp(presets.get('amazon-main/a-amazon-main-1600x1600.jpg')!)
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([amazon.info.width, amazon.info.height]).toEqual([1600, 1600]);
    expect([...amazon.data.subarray(0, 3)]).toEqual([255, 255, 255]);
  });

  it('pattern tokens, start, items order and skus', async () => {
    const { auth, jobId, items } = await finished(['a.jpg', 'b.jpg', 'c.jpg']);
    const query = `?items=${items[2].id},${items[0].id}&skus=${encodeURIComponent('["SKU/9","SKU-1"]')}&start=10&pattern=${encodeURIComponent('{index}_{n}_{sku}_{name}_{date}')}`;
    const res = await download(auth, jobId, query);
    expect(res.statusCode, res.body).toBe(200);
    const date = new Date().toISOString().slice(0, 10);
    expect([...(await unzip(res.rawPayload)).keys()]).toEqual([`10_1_SKU_9_c_${date}.png`, `11_2_SKU-1_a_${date}.png`]);
  });

  it('names from uploads are made safe and unique (default pattern numbers clashes)', async () => {
    const { auth, jobId } = await finished(['CON.jpg', 'x.jpg', 'X.jpeg', 'mix?*.jpg']);
    const names = [...(await unzip((await download(auth, jobId)).rawPayload)).keys()];
    expect(names).toEqual(['_CON.png', 'x.png', 'X (2).png', 'mix_.png']);
  });

  it('refuses bad options before sending anything: 400, 404, 409', async () => {
    const { auth, jobId, items } = await finished(['a.jpg', 'b.jpg']);
    const ids = `${items[0].id},${items[1].id}`;
    const bad = [
      '?pattern={foo}',
      '?pattern=photo',
      `?pattern=${encodeURIComponent('../{name}')}`,
      `?pattern=${encodeURIComponent('a/{name}')}`,
      `?pattern=${encodeURIComponent('{name')}`,
      '?pattern={sku}',
      `?items=${ids}&skus=notjson`,
      `?items=${ids}&skus=${encodeURIComponent('{"a":1}')}`,
      `?items=${ids}&skus=${encodeURIComponent('["only-one"]')}`,
      `?skus=${encodeURIComponent('["A","B"]')}`,
      `?items=${ids}&skus=${encodeURIComponent('["A",""]')}`,
      `?items=${ids}&skus=${encodeURIComponent('["A","A"]')}&pattern={sku}`,
      '?presets=nope',
      '?presets=custom',
      '?include=thumbs',
      '?include=',
      '?format=gif',
      '?start=-1',
      `?items=${items[0].id},${items[0].id}`,
      `?pattern=${'x'.repeat(81)}`,
    ];
    for (const query of bad) {
      const res = await download(auth, jobId, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['content-type'], query).toContain('application/problem+json');
    }
    expect((await download(auth, jobId, '?items=itm_nope')).statusCode).toBe(404);
    const other = await t.account(1);
    expect((await download(other.auth, jobId)).statusCode).toBe(404);

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
    const nothing = await download(auth, draft.id);
    expect(nothing.statusCode).toBe(409);
    expect(nothing.json()).toMatchObject({ code: 'CONFLICT', reason: 'NOT_DONE' });
    expect((await download(auth, draft.id, `?items=${added.items[0].id}`)).json().reason).toBe('NOT_DONE');
  });
});
