// The worker stores a photo's cut-out as soon as it exists, before the photo is done: when the photo
// fails after that, its files go with it, and none is left behind.
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

const resultFilesOnDisk = () =>
  (fs.readdirSync(t.dataDir, { recursive: true }) as string[]).filter((f) => /\/[0-9a-f]{8}-[0-9a-f]{4}-(cutout\.png|output|thumb\.webp)/.test(String(f)));

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
    expect(resultFilesOnDisk(), JSON.stringify(resultFilesOnDisk())).toEqual([]);
    // Nothing charged for it.
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 5, pack: 0 });
  });
});
