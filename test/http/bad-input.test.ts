// Every bad input gets a clear problem+json or a `rejected` entry; the server stays up; nothing is charged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import { createTestApp, multipart, type TestApp } from '../helpers/test-app.ts';
import { hugePngHeader, makeZip, productPhoto, truncatedJpeg } from '../helpers/images.ts';
import { PHOTO_REFUSALS } from '../../src/domain/photo-refusals.ts';

let t: TestApp;
beforeAll(async () => {
  // Small limits so the oversize cases stay small; the defaults are documented in the README.
  t = await createTestApp({
    maxUploadBytes: 2 * 1024 * 1024,
    maxImageBytes: 1024 * 1024,
    maxZipUncompressedBytes: 8 * 1024 * 1024,
    maxZipEntries: 50,
  });
});
afterAll(async () => t.close());

async function draftWith(auth: Record<string, string>) {
  return (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth })).json().id as string;
}

async function uploadFiles(auth: Record<string, string>, jobId: string, files: { filename: string; data: Buffer }[]) {
  const form = multipart(files.map((f) => ({ name: 'files', ...f })));
  return t.app.inject({
    method: 'POST',
    url: `/v1/jobs/${jobId}/items`,
    headers: { ...auth, ...form.headers },
    payload: form.payload,
  });
}

function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; json(): any },
  status: number,
  code: string,
) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toContain('application/problem+json');
  const body = res.json();
  expect(body).toMatchObject({ status, code, type: `http://matte.test/docs/errors#${code}` });
  expect(typeof body.title).toBe('string');
  return body;
}

describe('uploads that are not usable photos land in rejected, the rest is added', () => {
  it('truncated JPEG, text named .jpg, 100000x100000 PNG, oversize file, empty file', async () => {
    const { auth, accountId } = await t.account(10);
    const jobId = await draftWith(auth);
    const res = await uploadFiles(auth, jobId, [
      { filename: 'good.jpg', data: await productPhoto() },
      { filename: 'truncated.jpg', data: await truncatedJpeg() },
      { filename: 'notes.jpg', data: Buffer.from('this is not a photo\n') },
      { filename: 'huge.png', data: hugePngHeader(100000, 100000) },
      { filename: 'oversize.jpg', data: Buffer.alloc(3 * 1024 * 1024, 1) },
      { filename: 'empty.jpg', data: Buffer.alloc(0) },
    ]);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.added).toBe(1);
    const reasons = Object.fromEntries(body.rejected.map((r: { name: string; reason: string }) => [r.name, r.reason]));
    expect(Object.keys(reasons).sort()).toEqual([
      'empty.jpg',
      'huge.png',
      'notes.jpg',
      'oversize.jpg',
      'truncated.jpg',
    ]);
    // Numbers with thousands separators; one wording for each refusal, from one place (PHOTO_REFUSALS).
    expect(reasons['huge.png']).toBe(PHOTO_REFUSALS.tooManyPixels(t.c.config.maxInputPixels, 100000, 100000));
    expect(reasons['huge.png']).toContain('100,000 x 100,000 pixels (10,000,000,000), more than the ');
    expect(reasons['huge.png']).toMatch(/ \d{1,3}(,\d{3})+-pixel limit\.$/);
    expect(reasons['oversize.jpg']).toMatch(/limit/);
    expect(reasons['empty.jpg']).toBe(PHOTO_REFUSALS.empty);
    // The single-photo call words an empty file the same way (422 PROCESSING_FAILED, INVALID_IMAGE).
    const form = multipart([{ name: 'file', filename: 'empty.jpg', data: Buffer.alloc(0), type: 'image/jpeg' }]);
    const single = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    expect(expectProblem(single, 422, 'PROCESSING_FAILED').detail).toBe(PHOTO_REFUSALS.empty);
    expect(reasons['notes.jpg']).toMatch(/not a readable/);
    // Nothing charged for adding; the account is untouched.
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(10);
    // The server is still up.
    expect((await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}`, headers: auth })).statusCode).toBe(200);
  });

  it('ZIPs: nested folders kept, ../ and absolute names refused, bombs refused whole, lying sizes refused per entry', async () => {
    const { auth } = await t.account();
    const jobId = await draftWith(auth);
    const photo = await productPhoto();
    const zip = makeZip([
      { name: 'shoes/red/one.jpg', data: photo },
      { name: 'shoes/two.jpg', data: photo, deflate: true },
      { name: '../escape.jpg', data: photo },
      { name: '/etc/abs.jpg', data: photo },
      { name: '__MACOSX/shoes/._one.jpg', data: Buffer.from('meta') },
      { name: 'readme.txt', data: Buffer.from('hello') },
      { name: 'inner.zip', data: makeZip([{ name: 'x.jpg', data: photo }]) },
      // Declares 1 KiB, inflates to 2 MiB: stopped at the declared size.
      {
        name: 'liar.jpg',
        data: Buffer.alloc(0),
        compressed: zlib.deflateRawSync(Buffer.alloc(2 * 1024 * 1024)),
        uncompressedSize: 1024,
      },
    ]);
    const res = await uploadFiles(auth, jobId, [{ filename: 'photos.zip', data: zip }]);
    const body = res.json();
    expect(body.added).toBe(2);
    expect(body.items.map((i: { name: string }) => i.name).sort()).toEqual(['shoes/red/one.jpg', 'shoes/two.jpg']);
    const rejected = body.rejected.map((r: { name: string }) => r.name).sort();
    expect(rejected).toEqual([
      'photos.zip/../escape.jpg',
      'photos.zip//etc/abs.jpg',
      'photos.zip/inner.zip',
      'photos.zip/liar.jpg',
      'photos.zip/readme.txt',
    ]);
    expect(body.rejected.find((r: { name: string }) => r.name === 'photos.zip/../escape.jpg').reason).toMatch(/\.\./);

    // A bomb: 16 entries each declaring 1 MiB of zeros (8 MiB limit here): refused before anything is inflated.
    const zeros = zlib.deflateRawSync(Buffer.alloc(1024 * 1024));
    const bomb = makeZip(
      Array.from({ length: 16 }, (_, i) => ({
        name: `z${i}.jpg`,
        data: Buffer.alloc(0),
        compressed: zeros,
        uncompressedSize: 1024 * 1024,
      })),
    );
    expect(bomb.length).toBeLessThan(64 * 1024);
    const bombRes = (await uploadFiles(auth, jobId, [{ filename: 'bomb.zip', data: bomb }])).json();
    expect(bombRes.added).toBe(0);
    expect(bombRes.rejected.at(-1).reason).toMatch(/unpacks to/);

    const flood = makeZip(Array.from({ length: 60 }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from('x') })));
    const floodRes = (await uploadFiles(auth, jobId, [{ filename: 'flood.zip', data: flood }])).json();
    expect(floodRes.rejected.at(-1).reason).toMatch(/entries/);
    expect(floodRes.counts.total).toBe(2);
  });

  it('past 200 photos per batch, the extra photos are rejected with a reason; a broken one does not count', async () => {
    const { auth } = await t.account();
    const jobId = await draftWith(auth);
    const small = await productPhoto(120, 100);
    // Photos are checked several at a time: the result must still be that of checking them in turn.
    const zip = makeZip(
      Array.from({ length: 203 }, (_, i) => ({
        name: `p${i}.jpg`,
        data: i === 150 ? Buffer.from('not a photo') : small,
      })),
    );
    const big = await createTestApp();
    try {
      const acc = await big.account();
      const id = (await big.app.inject({ method: 'POST', url: '/v1/jobs', headers: acc.auth })).json().id;
      const form = multipart([{ name: 'files', filename: 'many.zip', data: zip }]);
      const body = (
        await big.app.inject({
          method: 'POST',
          url: `/v1/jobs/${id}/items`,
          headers: { ...acc.auth, ...form.headers },
          payload: form.payload,
        })
      ).json();
      expect(body.added).toBe(200);
      expect(body.rejected.map((r: { name: string }) => r.name)).toEqual([
        'many.zip/p150.jpg',
        'many.zip/p201.jpg',
        'many.zip/p202.jpg',
      ]);
      expect(body.rejected[0].reason).toMatch(/not a readable/);
      expect(body.rejected[1].reason).toMatch(/200 photos/);
      const expected = Array.from({ length: 201 }, (_, i) => `p${i}.jpg`).filter((n) => n !== 'p150.jpg');
      expect(body.items.map((i: { name: string }) => i.name)).toEqual(expected);
    } finally {
      await big.close();
    }
    expect(jobId).toBeTruthy();
  });
});

describe('requests that are malformed get problem+json', () => {
  it('malformed JSON, unknown fields, out-of-range values and query strings are VALIDATION with paths', async () => {
    const { auth } = await t.account();
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expectProblem(malformed, 400, 'VALIDATION');

    const unknown = expectProblem(
      await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: { name: 'x', colour: 'red' } }),
      400,
      'VALIDATION',
    );
    expect(unknown.errors).toContainEqual({ path: 'body/colour', message: 'is not a known field' });

    const range = expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        headers: auth,
        payload: { defaults: { scale: 3, sharpen: 101 } },
      }),
      400,
      'VALIDATION',
    );
    expect(range.errors.map((e: { path: string }) => e.path)).toEqual(
      expect.arrayContaining(['body/defaults/sharpen']),
    );

    const preset = expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        headers: auth,
        payload: { defaults: { presetId: 'nope' } },
      }),
      400,
      'VALIDATION',
    );
    expect(preset.errors[0].path).toBe('/defaults/presetId');

    for (const url of [
      '/v1/jobs?limit=0',
      '/v1/jobs?limit=101',
      '/v1/jobs?status=sleeping',
      '/v1/jobs?before=-1',
      '/v1/jobs?bogus=1',
    ]) {
      const res = await t.app.inject({ method: 'GET', url, headers: auth });
      expect(expectProblem(res, 400, 'VALIDATION').errors[0].path).toMatch(/^querystring/);
    }
    const jobId = await draftWith(auth);
    for (const q of ['wait=0', 'wait=61', 'since=-5', 'fields=all']) {
      expectProblem(
        await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}?${q}`, headers: auth }),
        400,
        'VALIDATION',
      );
    }
    expectProblem(
      await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}/items/img_x/file?variant=raw`, headers: auth }),
      400,
      'VALIDATION',
    );
    expectProblem(
      await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/start`, headers: auth, payload: { sample: 0 } }),
      400,
      'VALIDATION',
    );
    expectProblem(
      await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${jobId}/items`, headers: auth, payload: { itemIds: [] } }),
      400,
      'VALIDATION',
    );
    expectProblem(
      await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/items`, headers: auth, payload: { urls: [] } }),
      400,
      'VALIDATION',
    );
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        headers: { ...auth, 'content-type': 'text/plain' },
        payload: 'hi',
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('401 UNAUTHENTICATED without a bearer, INVALID_KEY for malformed or unknown ones; other accounts see 404', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/account' }), 401, 'UNAUTHENTICATED');
    expectProblem(
      await t.app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: 'Bearer nope' } }),
      401,
      'INVALID_KEY',
    );
    expectProblem(
      await t.app.inject({
        method: 'GET',
        url: '/v1/account',
        headers: { authorization: `Bearer mk_${'A'.repeat(40)}` },
      }),
      401,
      'INVALID_KEY',
    );
    expectProblem(
      await t.app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: 'Basic abc' } }),
      401,
      'INVALID_KEY',
    );
    // A session cookie does not rescue an invalid key.
    expectProblem(
      await t.app.inject({
        method: 'GET',
        url: '/v1/account',
        headers: { authorization: 'Bearer nope', cookie: 'session=1' },
      }),
      401,
      'INVALID_KEY',
    );

    const owner = await t.account();
    const stranger = await t.account();
    const jobId = await draftWith(owner.auth);
    expectProblem(
      await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}`, headers: stranger.auth }),
      404,
      'NOT_FOUND',
    );
    expectProblem(
      await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${jobId}`, headers: stranger.auth }),
      404,
      'NOT_FOUND',
    );
    expectProblem(
      await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/start`, headers: stranger.auth }),
      404,
      'NOT_FOUND',
    );
    expect((await t.app.inject({ method: 'GET', url: '/v1/jobs', headers: stranger.auth })).json().jobs).toEqual([]);

    const me = (await t.app.inject({ method: 'GET', url: '/v1/account', headers: owner.auth })).json();
    expect(me.auth).toEqual({ via: 'key', key: owner.apiKey.slice(0, 11) });
    // Only the hash is stored.
    const stored = await t.c.store.repos.accounts.listKeys(owner.accountId);
    expect(JSON.stringify(stored)).not.toContain(owner.apiKey);
  });

  it('sends no CORS headers, serves the errors page, and answers unknown routes with problem+json', async () => {
    const { auth } = await t.account();
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/account',
      headers: { ...auth, origin: 'https://evil.example' },
    });
    expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control'))).toEqual([]);
    const page = await t.app.inject({ method: 'GET', url: '/docs/errors' });
    expect(page.statusCode).toBe(200);
    for (const code of ['VALIDATION', 'NO_CREDITS', 'INVALID_KEY', 'NOT_DRAFT', 'PROCESSING_FAILED'])
      expect(page.body).toContain(`id="${code}"`);
    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/nothing', headers: auth }), 404, 'NOT_FOUND');
  });

  it('an empty batch cannot start; a running batch cannot be deleted; continue on a draft is NOT_DRAFT', async () => {
    const { auth } = await t.account();
    const jobId = await draftWith(auth);
    expect(
      expectProblem(
        await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/start`, headers: auth }),
        409,
        'CONFLICT',
      ).reason,
    ).toBe('EMPTY');
    expectProblem(
      await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/continue`, headers: auth }),
      409,
      'NOT_DRAFT',
    );
    expectProblem(
      await t.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/cancel`, headers: auth }),
      409,
      'NOT_RUNNING',
    );
  });
});
