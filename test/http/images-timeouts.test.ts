import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';

const apps: TestApp[] = [];
afterAll(async () => Promise.all(apps.map((a) => a.close())));

describe('POST /v1/images at its timeout', () => {
  it('504 TIMEOUT when the photo never started: reservation released, batch cancelled', async () => {
    const t = await createTestApp({}, { runWorker: false }); // nothing claims photos
    apps.push(t);
    const { auth, accountId } = await t.account(2);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers: auth,
      payload: { imageBase64: (await productPhoto()).toString('base64'), timeout: 5 },
    });
    expect(res.statusCode).toBe(504);
    const body = res.json();
    expect(body).toMatchObject({ code: 'TIMEOUT', reason: 'NOT_STARTED' });
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(2);
    const job = (await t.app.inject({ method: 'GET', url: `/v1/jobs/${body.jobId}`, headers: auth })).json();
    expect(job.status).toBe('cancelled');
    expect(job.items[0].error.code).toBe('CANCELLED');
  });

  it('202 ImageResult when still processing; the credit is settled when the photo finishes', async () => {
    const t = await createTestApp();
    apps.push(t);
    const { auth, accountId } = await t.account(2);
    const release = t.model.hold();
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/images',
      headers: auth,
      payload: { imageBase64: (await productPhoto()).toString('base64'), timeout: 5 },
    });
    expect(res.statusCode).toBe(202);
    const result = res.json();
    expect(result).toMatchObject({ status: 'processing', charged: 0 });
    release();
    const done = await waitForBatch(t.app, auth, result.jobId);
    expect(done.status).toBe('done');
    expect((await t.c.store.repos.accounts.findById(accountId))!.plan_credits).toBe(1);
  });
});
