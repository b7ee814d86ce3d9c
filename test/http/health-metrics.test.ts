// /healthz and /readyz on the public port, /metrics only on the operations port, and what the metrics count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { startS3 } from '../helpers/s3.ts';
import { startOpsServer } from '../../src/main/ops-server.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ requestsPerMinute: 1_000_000 });
});
afterAll(() => t.close());

describe('health and metrics', () => {
  it('answers /healthz and /readyz on the public port without a key, and never /metrics', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', parts: { database: 'ok', blobStore: 'ok', model: 'ok' } });
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });

  it('is not ready, naming the part, when its blob store does not answer', async () => {
    const s3 = await startS3();
    const endpoint = s3.endpoint;
    await s3.close(); // nothing listens there now
    const broken = await createTestApp({
      blobStore: 's3://matte/files',
      s3: { region: 'us-east-1', endpoint, forcePathStyle: true },
    });
    try {
      const ready = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ status: 'not ready', failing: ['blobStore'], parts: { database: 'ok' } });
      expect((await broken.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await broken.close();
    }
  });

  it('counts photos by outcome and tier, stage times, HTTP answers by route, and the queue, on the operations port', async () => {
    const { auth } = await t.account(10);
    const id = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json().id;
    const photo = await productPhoto();
    const form = multipart([
      { name: 'files', filename: 'a.jpg', data: photo },
      { name: 'files', filename: 'b.jpg', data: photo },
    ]);
    await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${id}/items`,
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    await t.app.inject({ method: 'POST', url: `/v1/jobs/${id}/start`, headers: auth });
    await waitForBatch(t.app, auth, id);

    const ops = await startOpsServer(t.c, 0, '127.0.0.1');
    try {
      const port = (ops.server.address() as { port: number }).port;
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.headers.get('content-type')).toMatch(/text\/plain/);
      const text = await res.text();
      const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN);
      expect(value(/^matte_photos_total\{outcome="done",tier="light",process="api\+worker"\} (\d+)/m)).toBe(2);
      // Every statement is counted, from the migrations on: more than the two photos' settling alone.
      const statements = value(/^matte_db_statements_total\{process="api\+worker"\} (\d+)/m);
      expect(statements).toBeGreaterThan(20);
      await t.app.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: auth });
      const after = Number(
        /^matte_db_statements_total\{process="api\+worker"\} (\d+)/m.exec(
          await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
        )?.[1],
      );
      expect(after).toBeGreaterThan(statements);
      expect(value(/^matte_photo_stage_seconds_count\{process="api\+worker",stage="inference"\} (\d+)/m)).toBe(2);
      expect(value(/^matte_queue_depth\{process="api\+worker"\} (\d+)/m)).toBe(0);
      expect(value(/^matte_queue_oldest_pending_seconds\{process="api\+worker"\} (\d+)/m)).toBe(0);
      expect(text).toMatch(/^matte_http_request_seconds_count\{[^}]*route="\/v1\/jobs\/:id\/start",status="202"\} 1$/m);
      expect(text).toMatch(/^matte_process_resident_memory_bytes/m);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      await ops.close();
    }
  });
});
