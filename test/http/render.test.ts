// Re-rendering from stored cut-outs over the HTTP API: apply (saved, free, no model call) and preview
// (not saved), with every refusal leaving the photo as it was.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

async function finished(count = 1) {
  const acct = await t.account(10);
  const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: acct.auth, payload: {} })).json();
  const photos = await Promise.all(Array.from({ length: count }, () => productPhoto()));
  const real = multipart(photos.map((data, i) => ({ name: 'files', filename: `p${i}.jpg`, data, type: 'image/jpeg' })));
  await t.app.inject({
    method: 'POST',
    url: `/v1/jobs/${job.id}/items`,
    headers: { ...acct.auth, ...real.headers },
    payload: real.payload,
  });
  await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: acct.auth, payload: {} });
  const done = await waitForBatch(t.app, acct.auth, job.id);
  return { ...acct, jobId: job.id as string, items: done.items as Array<Record<string, any>> };
}

const get = (auth: Record<string, string>, url: string) => t.app.inject({ method: 'GET', url, headers: auth });
const files = (jobId: string) =>
  fs.readdirSync(path.join(t.dataDir, 'blobs', 'jobs', jobId), { recursive: true }).map(String);

describe('apply', () => {
  it('re-renders with a preset from the stored cut-out: new output, rev up, no model call, no charge; the old render is removed', async () => {
    const { auth, accountId, jobId, items } = await finished();
    const before = items[0];
    const calls = t.model.calls;
    const ledger = await t.c.store.repos.ledger.sums(accountId);
    const oldOutput = (await get(auth, before.outputUrl)).rawPayload;
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/apply`,
      headers: auth,
      payload: { settings: { presetId: 'amazon-main' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect([res.headers['x-matte-applied'], res.headers['x-matte-skipped']]).toEqual(['1', '0']);
    expect(body).not.toHaveProperty('applied');
    const after = body.items[0];
    expect(after.rev).toBe(before.rev + 1);
    expect(after.settings).toMatchObject({ presetId: 'amazon-main', background: { mode: 'white' } });
    expect(after.meta.output).toMatchObject({ width: 1600, height: 1600, format: 'jpeg' });
    expect(after.outputUrl).not.toBe(before.outputUrl);
    const output = (await get(auth, after.outputUrl)).rawPayload;
    expect(output.equals(oldOutput)).toBe(false);
    expect(await sharp(output).metadata()).toMatchObject({ format: 'jpeg', width: 1600, height: 1600 });
    expect(t.model.calls).toBe(calls);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual(ledger);
    // One cut-out, one output and one thumbnail are kept, plus the input and its thumbnail.
    expect(files(jobId).filter((f) => f.includes('output'))).toHaveLength(1);
    expect(after.credits).toBe(1);
  });

  it("changes only what the patch names; a multipart background image becomes the batch's and shows behind the product", async () => {
    const { auth, jobId, items } = await finished();
    await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/apply`,
      headers: auth,
      payload: { settings: { brightness: 10 } },
    });
    const red = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    const form = multipart([
      {
        name: 'payload',
        data: JSON.stringify({ itemIds: [items[0].id], settings: { background: { mode: 'image' } } }),
      },
      { name: 'image', filename: 'red.png', data: red, type: 'image/png' },
    ]);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/apply`,
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    expect(res.statusCode, res.body).toBe(200);
    const item = res.json().items[0];
    expect(item.settings).toMatchObject({ brightness: 10, background: { mode: 'image', hasImage: true } });
    const { data } = await sharp((await get(auth, item.outputUrl)).rawPayload)
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 3)]).toEqual([255, 0, 0]);
  });

  it('refuses bad settings and unfinished photos, and changes nothing', async () => {
    const { auth, jobId, items } = await finished();
    const bad: unknown[] = [
      { settings: { presetId: 'nope' } },
      { settings: { presetId: 'custom' } },
      { settings: { presetId: 'custom', customSize: { width: 50, height: 400 } } },
      { settings: { presetId: 'custom', customSize: { width: 9000, height: 400 } } },
      { settings: { background: { mode: 'image' } } },
      { settings: { background: { mode: 'solid' } } },
      { settings: { fill: 2 } },
      { settings: { rotate: 45 } },
      { settings: {}, extra: 1 },
      { itemIds: [], settings: {} },
      {},
    ];
    for (const payload of bad) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/v1/jobs/${jobId}/apply`,
        headers: auth,
        payload: payload as object,
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    const notImage = multipart([
      { name: 'payload', data: JSON.stringify({ settings: { background: { mode: 'image' } } }) },
      { name: 'image', filename: 'x.png', data: 'this is text', type: 'image/png' },
    ]);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/apply`,
      headers: { ...auth, ...notImage.headers },
      payload: notImage.payload,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe('body/image');
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/v1/jobs/${jobId}/apply`,
          headers: auth,
          payload: { itemIds: ['itm_nope'], settings: {} },
        })
      ).statusCode,
    ).toBe(404);
    const after = (await get(auth, `/v1/jobs/${jobId}`)).json().items[0];
    expect(after.rev).toBe(items[0].rev);
    expect(after.settings).toEqual(items[0].settings);

    const draft = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
    const none = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${draft.id}/apply`,
      headers: auth,
      payload: { settings: { flip: true } },
    });
    expect(none.statusCode).toBe(409);
    expect(none.json()).toMatchObject({ code: 'CONFLICT', reason: 'NOT_DONE' });
  });
});

describe('preview', () => {
  it('answers the rendered image with X-Output-Size and saves nothing', async () => {
    const { auth, jobId, items } = await finished();
    const url = `/v1/jobs/${jobId}/items/${items[0].id}/preview`;
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers: auth,
      payload: {
        settings: {
          presetId: 'custom',
          customSize: { width: 500, height: 300 },
          background: { mode: 'solid', color: '#00ff00' },
        },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-output-size']).toBe('500x300');
    expect(res.headers['content-type']).toBe('image/png');
    expect(await sharp(res.rawPayload).metadata()).toMatchObject({ width: 500, height: 300 });
    const webp = await t.app.inject({ method: 'POST', url, headers: auth, payload: { format: 'webp' } });
    expect(webp.headers['content-type']).toBe('image/webp');
    expect(webp.headers['x-output-size']).toBe(`${items[0].meta.output.width}x${items[0].meta.output.height}`);
    const after = (await get(auth, `/v1/jobs/${jobId}`)).json().items[0];
    expect(after.rev).toBe(items[0].rev);
    expect(
      (await t.app.inject({ method: 'POST', url, headers: auth, payload: { settings: { presetId: 'nope' } } }))
        .statusCode,
    ).toBe(400);
  });

  it('is 409 NOT_DONE for a photo that has not finished', async () => {
    const acct = await t.account(10);
    const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: acct.auth, payload: {} })).json();
    const form = multipart([{ name: 'files', filename: 'a.jpg', data: await productPhoto(), type: 'image/jpeg' }]);
    const added = (
      await t.app.inject({
        method: 'POST',
        url: `/v1/jobs/${job.id}/items`,
        headers: { ...acct.auth, ...form.headers },
        payload: form.payload,
      })
    ).json();
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${job.id}/items/${added.items[0].id}/preview`,
      headers: acct.auth,
      payload: {},
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().reason).toBe('NOT_DONE');
  });
});

describe('marketplace compliance', () => {
  it('reports per photo whether the output meets its preset, and what was fixed', async () => {
    const { auth, jobId } = await finished();
    const compliance = async (itemId: string) => {
      const res = await t.app.inject({
        method: 'GET',
        url: `/v1/jobs/${jobId}/items/${itemId}/compliance`,
        headers: auth,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const applyWith = async (settings: object) =>
      (
        await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/apply`, headers: auth, payload: { settings } })
      ).json().items[0];

    const amazon = await applyWith({ presetId: 'amazon-main' });
    expect(amazon.meta).not.toHaveProperty('compliance');
    const report = await compliance(amazon.id);
    expect(report).toMatchObject({
      itemId: amazon.id,
      rev: amazon.rev,
      compliance: { presetId: 'amazon-main', meets: true },
    });
    expect(report.compliance.checks.map((c: { check: string; ok: boolean }) => [c.check, c.ok])).toEqual([
      ['size', true],
      ['background', true],
      ['fill', true],
      ['bytes', true],
    ]);
    expect(report.compliance.fixed.join(' ')).toMatch(/white/);
    expect(amazon.meta.warnings ?? []).toEqual([]);
    // Pure white around the product, exactly RGB 255.
    const out = await sharp((await get(auth, amazon.outputUrl)).rawPayload)
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([...out.data.subarray(0, 3)]).toEqual([255, 255, 255]);

    // A failed check is in the report and, as one line, in the photo's warnings.
    const transparent = await applyWith({ background: { mode: 'transparent' } });
    const failed = (await compliance(transparent.id)).compliance;
    expect(failed.meets).toBe(false);
    expect(failed.checks.find((c: { check: string }) => c.check === 'background')).toMatchObject({ ok: false });
    expect(transparent.meta.warnings).toContainEqual(
      expect.stringMatching(/^amazon-main: background: expected pure white/),
    );

    const original = await applyWith({ presetId: 'original' });
    expect((await compliance(original.id)).compliance).toBeNull();
    expect(original.meta.warnings ?? []).toEqual([]);
  });

  it("re-encodes an output over the preset's upload limit until it fits, and says so", async () => {
    const acct = await t.account(10);
    const job = (
      await t.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        headers: acct.auth,
        payload: { defaults: { presetId: 'temu' } },
      })
    ).json();
    // Noise at 1600x1600 does not fit temu's 2 MB at the preset's quality.
    const rgb = Buffer.alloc(1600 * 1600 * 3);
    let seed = 1;
    for (let i = 0; i < rgb.length; i++) rgb[i] = ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) % 180;
    const noise = await sharp(rgb, { raw: { width: 1600, height: 1600, channels: 3 } })
      .jpeg({ quality: 95 })
      .toBuffer();
    const form = multipart([{ name: 'files', filename: 'noise.jpg', data: noise, type: 'image/jpeg' }]);
    await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${job.id}/items`,
      headers: { ...acct.auth, ...form.headers },
      payload: form.payload,
    });
    await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: acct.auth, payload: {} });
    const item = (await waitForBatch(t.app, acct.auth, job.id)).items as Array<Record<string, any>>;
    const compliance = (
      await t.app.inject({
        method: 'GET',
        url: `/v1/jobs/${job.id}/items/${item[0].id}/compliance`,
        headers: acct.auth,
      })
    ).json().compliance;
    expect(compliance.checks.find((c: { check: string }) => c.check === 'bytes')).toMatchObject({ ok: true });
    expect(compliance.fixed.join(' ')).toMatch(/re-encoded from .* MB to .* MB to stay under the 2.0 MB upload limit/);
    expect(item[0].meta.output.bytes).toBeLessThanOrEqual(2_000_000);
    expect((await get(acct.auth, item[0].outputUrl)).rawPayload.length).toBeLessThanOrEqual(2_000_000);
  });
});
