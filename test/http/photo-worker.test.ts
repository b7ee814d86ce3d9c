// The photo worker: it lowers its helper threads only while photos overlap (thread-priority.ts), since
// a photo alone has nothing to yield to; and it stores a photo's cut-out as soon as it exists, so a
// photo that fails after that must take its files with it.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { PhotoWorker } from '../../src/jobs/photo-worker.ts';
import { WorkerCutoutWriter } from '../../src/adapters/cutout-writer.adapter.ts';
import type { ImageCodec } from '../../src/adapters/image-codec.adapter.ts';

let t: TestApp;
const cutouts = new WorkerCutoutWriter(1);
beforeAll(async () => {
  t = await createTestApp({}, { runWorker: false });
});
afterAll(async () => {
  await cutouts.close();
  await t.close();
});

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('helper thread priority in the worker', () => {
  it('lowered when a second photo starts, given back when one runs alone', async () => {
    const calls: string[] = [];
    const priority = { apply: () => (calls.push('apply'), 0), restore: () => (calls.push('restore'), 0) };
    const worker = new PhotoWorker(
      { queue: t.c.queue, blobs: t.c.blobs, pipeline: { codec: t.c.codec, model: t.model, cutouts }, bus: t.c.bus, stats: t.c.stats, priority, log: pino({ level: 'silent' }) },
      { concurrency: 2, leaseMs: 5000, maxAttempts: 3, idlePollMs: 20 },
    );
    const { accountId } = await t.account(10);
    const run = async (photos: number) => {
      const job = await t.c.batches.createJob(accountId, {}, null);
      await t.c.intake.addPhotos(accountId, job.id, await Promise.all(Array.from({ length: photos }, async (_, i) => ({ name: `p${i}.jpg`, data: await productPhoto(200 + i, 160) }))));
      await t.c.batches.start(accountId, job.id, {});
      return job.id;
    };
    const done = (jobId: string) => async () => (await t.c.queries.getJob(accountId, jobId)).status === 'done';
    worker.start();
    try {
      // One photo: alone from start to end.
      const one = await run(1);
      await until(done(one), 'the lone photo');
      await until(() => calls.length === 2, 'its end');
      expect(calls).toEqual(['restore', 'restore']);
      // Two photos held at the model together: the second one's start lowers the helpers; the first
      // to finish leaves the other alone, which gives their priority back.
      calls.length = 0;
      const release = t.model.hold();
      const calls0 = t.model.calls;
      const two = await run(2);
      await until(() => t.model.calls - calls0 === 2, 'both photos at the model');
      expect(calls).toEqual(['restore', 'apply']);
      release();
      await until(done(two), 'both photos');
      await until(() => calls.length === 4, 'their ends');
      expect(calls).toEqual(['restore', 'apply', 'restore', 'restore']);
    } finally {
      await worker.stop();
    }
  });
});

/** Result files of one batch on disk (a result's files carry its token: `<token>-cutout.png`). */
const resultFilesOnDisk = (jobId: string) =>
  (fs.readdirSync(t.dataDir, { recursive: true }) as string[]).filter((f) => String(f).includes(jobId) && /\/[0-9a-f]{8}-[0-9a-f]{4}-(cutout\.png|output|thumb\.webp)/.test(String(f)));

describe('result files of a failed photo', () => {
  it('a photo that fails after its cut-out was stored leaves no result file behind', async () => {
    // The thumbnail is made after the cut-out exists, while it is being stored: it fails here.
    let thumbnails = 0;
    const codec = Object.create(t.c.codec) as ImageCodec;
    codec.thumbnailRaw = async () => {
      thumbnails++;
      // Long enough for the cut-out's write to have started.
      await new Promise((resolve) => setTimeout(resolve, 50));
      throw new Error('thumbnail failed');
    };
    const worker = new PhotoWorker(
      { queue: t.c.queue, blobs: t.c.blobs, pipeline: { codec, model: t.model, cutouts }, bus: t.c.bus, stats: t.c.stats, log: pino({ level: 'silent' }) },
      { concurrency: 1, leaseMs: 5000, maxAttempts: 1, idlePollMs: 20 },
    );
    const { accountId } = await t.account(5);
    const job = await t.c.batches.createJob(accountId, {}, null);
    await t.c.intake.addPhotos(accountId, job.id, [{ name: 'p.jpg', data: await productPhoto(300, 240) }]);
    await t.c.batches.start(accountId, job.id, {});
    worker.start();
    try {
      for (let i = 0; i < 400 && !['done', 'failed'].includes((await t.c.queries.getJob(accountId, job.id)).items[0].status); i++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      await worker.stop();
    }
    const item = (await t.c.queries.getJob(accountId, job.id)).items[0];
    expect(item.status).toBe('failed');
    expect(thumbnails).toBe(1);
    expect(resultFilesOnDisk(job.id), JSON.stringify(resultFilesOnDisk(job.id))).toEqual([]);
    // Nothing charged for it.
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 5, pack: 0 });
  });
});
