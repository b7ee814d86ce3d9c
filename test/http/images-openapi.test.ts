import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import sharp from 'sharp';
import fs, { readFileSync } from 'node:fs';
import { createTestApp, multipart, type TestApp } from '../helpers/test-app.ts';
import { productPhoto, truncatedJpeg } from '../helpers/images.ts';
import { SHARED_DIR } from '../../tools/shared-data.ts';
import path from 'node:path';
import { PreparedInputs } from '../../src/pipeline/prepared-inputs.ts';
import { blobKeys, resultFiles } from '../../src/services/blob-keys.ts';
import { resolveRefs } from '../helpers/openapi.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('POST /v1/images', () => {
  it('multipart: answers the image with the X-Matte headers and charges one credit', async () => {
    const { auth, accountId } = await t.account(3);
    const form = multipart([
      { name: 'file', filename: 'mug.jpg', data: await productPhoto() },
      { name: 'format', data: 'webp' },
      { name: 'timeout', data: '30' },
    ]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/webp');
    expect(res.headers['x-matte-job-id']).toMatch(/^job_/);
    expect(res.headers['x-matte-item-id']).toMatch(/^img_/);
    expect(res.headers['x-matte-review']).toBe('none');
    expect(res.headers['x-matte-charged']).toBe('1');
    expect(Number(res.headers['x-matte-score'])).toBeGreaterThan(0);
    expect((await sharp(res.rawPayload).metadata()).hasAlpha).toBe(true);
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(2);
    // The batch stays readable.
    expect(
      (await t.app.inject({ method: 'GET', url: `/v1/jobs/${res.headers['x-matte-job-id']}`, headers: auth })).json()
        .status,
    ).toBe('done');
  });

  it('the photo is decoded while it is stored and queued: the worker takes that head start', async () => {
    const { auth, accountId } = await t.account(2);
    const take = vi.spyOn(PreparedInputs.prototype, 'take');
    try {
      const form = multipart([{ name: 'file', filename: 'vase.jpg', data: await productPhoto(300, 260) }]);
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/images',
        headers: { ...auth, ...form.headers },
        payload: form.payload,
      });
      expect(res.statusCode).toBe(200);
      expect(take).toHaveBeenCalledTimes(1);
      const prepared = take.mock.results[0].value!;
      const decoded = await prepared.decoded;
      expect([decoded.width, decoded.height]).toEqual([300, 260]);
      // A plain JPEG: the model's input was made straight from the file, the same bytes as from the decode.
      expect((await prepared.modelInput).rgb.equals((await t.c.decoder.toModelInput(decoded, 1024)).rgb)).toBe(true);
      // That decode was also intake's check: no second one for an input thumbnail. The thumbnail is
      // made when first asked for, then kept.
      const jobId = res.headers['x-matte-job-id'] as string;
      const itemId = res.headers['x-matte-item-id'] as string;
      // Default settings: the output is the cut-out, stored once under both names.
      const files = resultFiles(await t.c.queries.getItem(accountId, jobId, itemId));
      const [cutout, output] = [files.cutout, files.output].map((k) => fs.statSync(path.join(t.dataDir, 'blobs', k)));
      expect(output.ino).toBe(cutout.ino);
      expect(res.rawPayload.equals(await t.c.blobs.get(files.cutout))).toBe(true);
      const key = blobKeys.inputThumb(jobId, itemId);
      expect(await t.c.blobs.stat(key)).toBeUndefined();
      const item = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}`, headers: auth })).json().items[0];
      const thumb = await t.app.inject({ method: 'GET', url: item.inputThumbUrl, headers: auth });
      expect(thumb.statusCode).toBe(200);
      expect(thumb.headers['content-type']).toBe('image/webp');
      expect(await sharp(thumb.rawPayload).metadata()).toMatchObject({ format: 'webp', width: 300, height: 260 });
      expect((await t.c.blobs.get(key)).equals(thumb.rawPayload)).toBe(true);
      const again = await t.app.inject({ method: 'GET', url: item.inputThumbUrl, headers: auth });
      expect(again.rawPayload.equals(thumb.rawPayload)).toBe(true);
      // Another account reads nothing of it, and makes nothing.
      const other = await t.account(1);
      expect((await t.app.inject({ method: 'GET', url: item.inputThumbUrl, headers: other.auth })).statusCode).toBe(
        404,
      );
    } finally {
      take.mockRestore();
    }
  });

  it('JSON with base64 and response=json gives ImageResult; the same Idempotency-Key replays without a second charge', async () => {
    const { auth, accountId } = await t.account(3);
    const payload: Record<string, unknown> = {
      imageBase64: (await productPhoto()).toString('base64'),
      response: 'json',
      name: 'cup.jpg',
      settings: { background: { mode: 'white' } },
    };
    const headers = { ...auth, 'idempotency-key': 'image-key-0001' };
    const first = await t.app.inject({ method: 'POST', url: '/v1/images', headers, payload });
    expect(first.statusCode).toBe(200);
    const result = first.json();
    expect(result).toMatchObject({
      status: 'done',
      charged: 1,
      review: 'none',
      refunded: false,
      statusUrl: `/v1/jobs/${result.jobId}`,
    });
    expect(result.item.name).toBe('cup.jpg');
    expect(result.item.settings.background.mode).toBe('white');
    const file = await t.app.inject({ method: 'GET', url: result.fileUrl, headers: auth });
    expect(file.statusCode).toBe(200);
    // What is stored is what was asked for: format=webp gives a WebP behind fileUrl too.
    const webp = (
      await t.app.inject({ method: 'POST', url: '/v1/images', headers: auth, payload: { ...payload, format: 'webp' } })
    ).json();
    expect(webp.item.meta.output.format).toBe('webp');
    const stored = await t.app.inject({ method: 'GET', url: webp.fileUrl, headers: auth });
    expect(stored.headers['content-type']).toBe('image/webp');
    expect((await sharp(stored.rawPayload).metadata()).format).toBe('webp');
    const second = await t.app.inject({ method: 'POST', url: '/v1/images', headers, payload });
    expect(second.json().jobId).toBe(result.jobId);
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(1);
    const reused = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers,
      payload: { ...payload, name: 'other.jpg' },
    });
    expect(reused.json()).toMatchObject({ code: 'CONFLICT', reason: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('input at fault is 422 PROCESSING_FAILED with a reason, and nothing is charged or left behind', async () => {
    const { auth, accountId } = await t.account(3);
    const cases: [object, string][] = [
      [{ imageBase64: Buffer.from('hello').toString('base64') }, 'INVALID_IMAGE'],
      [{ imageBase64: (await truncatedJpeg()).toString('base64') }, 'INVALID_IMAGE'],
      [
        {
          imageBase64: (
            await sharp({ create: { width: 100, height: 100, channels: 3, background: '#fff' } })
              .png()
              .toBuffer()
          ).toString('base64'),
        },
        'NO_SUBJECT',
      ],
      [{ imageUrl: 'http://127.0.0.1:9/x.jpg' }, 'URL_REFUSED'],
    ];
    const jobs = async () => (await t.app.inject({ method: 'GET', url: '/v1/jobs', headers: auth })).json().jobs.length;
    for (const [payload, reason] of cases) {
      const before = await jobs();
      const res = await t.app.inject({ method: 'POST', url: '/v1/images', headers: auth, payload });
      expect(res.statusCode, reason).toBe(422);
      expect(res.json()).toMatchObject({ code: 'PROCESSING_FAILED', reason });
      // A file that is not a whole image is refused before its batch is started: none is left behind.
      if (reason === 'INVALID_IMAGE' || reason === 'URL_REFUSED')
        expect(await jobs(), JSON.stringify(payload).slice(0, 40)).toBe(before);
    }
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(3);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 3, pack: 0 });
    const both = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers: auth,
      payload: { imageUrl: 'https://x/y.jpg', imageBase64: 'AAAA' },
    });
    expect(both.json().code).toBe('VALIDATION');
    const noCredits = await t.account(0);
    const broke = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers: noCredits.auth,
      payload: { imageBase64: (await productPhoto()).toString('base64') },
    });
    expect(broke.json()).toMatchObject({ code: 'NO_CREDITS', needed: 1, balance: 0 });
    expect((await t.app.inject({ method: 'GET', url: '/v1/jobs', headers: noCredits.auth })).json().jobs).toEqual([]);
  });
});

describe('POST /v1/images multipart, read in memory', () => {
  it('a file over the byte limit is 422 TOO_LARGE; a missing file or a field sent twice is 400; nothing charged, nothing left behind', async () => {
    const small = await createTestApp({ maxImageBytes: 50_000 });
    try {
      const { auth, accountId } = await small.account(3);
      const photo = await productPhoto();
      const big = Buffer.concat([photo, Buffer.alloc(60_000 - photo.length, 7)]);
      const post = (parts: Parameters<typeof multipart>[0]) => {
        const form = multipart(parts);
        return small.app.inject({
          method: 'POST',
          url: '/v1/images',
          headers: { ...auth, ...form.headers },
          payload: form.payload,
        });
      };
      const tooLarge = await post([{ name: 'file', filename: 'big.jpg', data: big }]);
      expect(tooLarge.statusCode).toBe(422);
      expect(tooLarge.json()).toMatchObject({ code: 'PROCESSING_FAILED', reason: 'TOO_LARGE' });
      const elsewhere = await post([{ name: 'photo', filename: 'p.jpg', data: photo }]);
      expect(elsewhere.statusCode).toBe(400);
      expect(elsewhere.json()).toMatchObject({ code: 'VALIDATION', errors: [{ path: 'body/file' }] });
      const twice = await post([
        { name: 'response', data: 'json' },
        { name: 'response', data: 'image' },
        { name: 'file', filename: 'p.jpg', data: photo },
      ]);
      expect(twice.statusCode).toBe(400);
      expect(twice.json()).toMatchObject({ code: 'VALIDATION', errors: [{ path: 'body/response' }] });
      const none = await post([]);
      expect(none.statusCode).toBe(400);
      expect((await small.app.inject({ method: 'GET', url: '/v1/jobs', headers: auth })).json().jobs).toEqual([]);
      expect(await small.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 3, pack: 0 });
      // Nothing was written for the uploads: they were never on disk.
      expect(
        fs.existsSync(path.join(small.c.config.dataDir, 'tmp'))
          ? fs.readdirSync(path.join(small.c.config.dataDir, 'tmp'))
          : [],
      ).toEqual([]);
      // A photo within the limit goes through.
      const ok = await post([
        { name: 'file', filename: 'p.jpg', data: photo },
        { name: 'response', data: 'json' },
      ]);
      expect(ok.statusCode).toBe(200);
    } finally {
      await small.close();
    }
  });
});

describe("a batch's and a re-render's background, read in memory", () => {
  it('over the byte limit, or in another field, is 400 VALIDATION naming the field; no batch is made', async () => {
    const small = await createTestApp({ maxImageBytes: 50_000 });
    try {
      const { auth } = await small.account(3);
      const photo = await productPhoto();
      const big = Buffer.concat([photo, Buffer.alloc(60_000 - photo.length, 7)]);
      const post = (url: string, parts: Parameters<typeof multipart>[0]) => {
        const form = multipart(parts);
        return small.app.inject({ method: 'POST', url, headers: { ...auth, ...form.headers }, payload: form.payload });
      };
      const cases: [string, Parameters<typeof multipart>[0], string][] = [
        ['/v1/jobs', [{ name: 'background', filename: 'bg.jpg', data: big }], 'body/background'],
        ['/v1/jobs', [{ name: 'image', filename: 'bg.jpg', data: photo }], 'body/image'],
        [
          '/v1/jobs/job_none/apply',
          [
            { name: 'payload', data: '{"settings":{}}' },
            { name: 'image', filename: 'bg.jpg', data: big },
          ],
          'body/image',
        ],
        [
          '/v1/jobs/job_none/apply',
          [
            { name: 'payload', data: '{"settings":{}}' },
            { name: 'background', filename: 'bg.jpg', data: photo },
          ],
          'body/background',
        ],
      ];
      for (const [url, parts, field] of cases) {
        const res = await post(url, parts);
        expect(res.statusCode, `${url} ${field}`).toBe(400);
        expect(res.json()).toMatchObject({ code: 'VALIDATION', errors: [{ path: field }] });
      }
      expect((await small.app.inject({ method: 'GET', url: '/v1/jobs', headers: auth })).json().jobs).toEqual([]);
      // Within the limit, in its field: the batch is made with its background.
      const ok = await post('/v1/jobs', [{ name: 'background', filename: 'bg.jpg', data: photo }]);
      expect(ok.statusCode).toBe(201);
    } finally {
      await small.close();
    }
  });
});

describe('GET /v1/openapi.json', () => {
  it.skipIf(!SHARED_DIR)(
    'is public, OpenAPI 3.1, version 1.0.0, and covers every path of the spec with schemas',
    async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
      expect(res.statusCode).toBe(200);
      const doc = resolveRefs(res.json());
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.info.version).toBe('1.0.0');
      // Every endpoint the spec names, read from the spec itself.
      const spec = readFileSync(path.join(SHARED_DIR!, 'spec', 'api-spec.md'), 'utf8');
      const specPaths = new Set(
        [...spec.matchAll(/\*\*(GET|POST|DELETE) (\/v1\/[^*\s]+)\*\*/g)].map((m) => `${m[1].toLowerCase()} ${m[2]}`),
      );
      expect(specPaths.size).toBeGreaterThan(20);
      for (const entry of specPaths) {
        const [method, path] = entry.split(' ');
        if (path === '/v1/openapi.json') continue;
        const op = doc.paths[path]?.[method];
        expect(op, entry).toBeDefined();
        expect(Object.keys(op.responses).length, entry).toBeGreaterThan(1);
      }
      const create = doc.paths['/v1/jobs'].post;
      expect(Object.keys(create.requestBody.content)).toEqual(['application/json', 'multipart/form-data']);
      expect(
        create.requestBody.content['application/json'].schema.properties.defaults.properties.sharpen,
      ).toMatchObject({ minimum: 0, maximum: 100 });
      expect(doc.paths['/v1/images'].post.requestBody.content['application/json'].schema.properties).toHaveProperty(
        'imageBase64',
      );
    },
  );

  it('documents exactly what the routes validate: a field the document lacks is refused', async () => {
    const doc = resolveRefs((await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json());
    const { auth } = await t.account();
    const props = Object.keys(doc.paths['/v1/jobs'].post.requestBody.content['application/json'].schema.properties);
    expect(props.sort()).toEqual(['defaults', 'name', 'webhookEvents', 'webhookUrl']);
    expect(
      (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: { name: 'ok' } })).statusCode,
    ).toBe(201);
    expect(
      (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: { title: 'no' } })).statusCode,
    ).toBe(400);
  });

  it('documents the multipart form of every endpoint that reads one, path parameters included', async () => {
    const doc = resolveRefs((await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json());
    const form = (path: string) => doc.paths[path].post.requestBody.content['multipart/form-data']?.schema;
    expect(Object.keys(form('/v1/jobs/{id}/items').properties)).toEqual(['files']);
    expect(form('/v1/jobs/{id}/apply').required).toEqual(['payload']);
    expect(form('/v1/images').required).toEqual(['file']);
    expect(form('/v1/jobs')).toBeDefined();
  });
});
