// The whole batch flow with its files in S3-compatible storage (s3rver): uploads, results, the ZIP and
// one file read back from the bucket, nothing under the process's DATA_DIR, and the batch's objects gone
// when it is deleted.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { startS3, type S3Server } from '../helpers/s3.ts';
import { unzip } from '../helpers/unzip.ts';
import { filesUnder } from '../helpers/server.ts';

let s3: S3Server;
let t: TestApp;
beforeAll(async () => {
  s3 = await startS3();
  // The AWS credential chain reads these, as it would on a server.
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' });
  t = await createTestApp({
    blobStore: `s3://${s3.bucket}/matte`,
    s3: { region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true },
  });
});
afterAll(async () => {
  await t?.close();
  await s3?.close();
});

describe('files in S3-compatible storage', () => {
  it('runs a batch with every file in the bucket and none on local disk, and deletes its objects with it', async () => {
    const { auth } = await t.account(10);
    const created = await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} });
    const id = created.json().id as string;
    const photo = await productPhoto(640, 480);
    const form = multipart([
      { name: 'files', filename: 'a.jpg', data: photo, type: 'image/jpeg' },
      { name: 'files', filename: 'b.jpg', data: photo, type: 'image/jpeg' },
    ]);
    const added = await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${id}/items`,
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    expect(added.json().added).toBe(2);
    expect((await t.app.inject({ method: 'POST', url: `/v1/jobs/${id}/start`, headers: auth })).statusCode).toBe(202);
    const job: any = await waitForBatch(t.app, auth, id);
    expect(job.counts.done).toBe(2);

    const objects = s3.objects().filter((k) => k.startsWith(`matte/jobs/${id}/`) || k.includes(id));
    expect(objects.length).toBeGreaterThanOrEqual(6);
    expect(filesUnder(path.join(t.dataDir, 'blobs'))).toEqual([]);

    const file = await t.app.inject({
      method: 'GET',
      url: `/v1/jobs/${id}/items/${job.items[0].id}/file`,
      headers: auth,
    });
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.subarray(1, 4).toString()).toBe('PNG');
    const input = await t.app.inject({
      method: 'GET',
      url: `/v1/jobs/${id}/items/${job.items[0].id}/file?variant=input`,
      headers: auth,
    });
    expect(Buffer.compare(input.rawPayload, photo)).toBe(0);
    const zip = await t.app.inject({ method: 'GET', url: `/v1/jobs/${id}/download?optimize=off`, headers: auth });
    expect([...(await unzip(zip.rawPayload)).keys()].sort()).toEqual(['a.png', 'b.png']);

    expect((await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${id}`, headers: auth })).statusCode).toBe(204);
    // A thumbnail still being stored when the batch was deleted is removed by the worker right after it lands
    // (photo-worker.ts), so the bucket is empty of the batch within moments, not necessarily at once.
    await expect.poll(() => s3.objects().filter((k) => k.includes(id)), { timeout: 10_000 }).toEqual([]);
  });
});
