// The photo worker: it lowers its helper threads only while photos overlap (thread-priority.ts), since
// a photo alone has nothing to yield to; and it stores a photo's cut-out as soon as it exists, so a
// photo that fails after that must take its files with it.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { PhotoWorker } from '../../src/background/photo-worker.ts';
import { WorkerCutoutWriter } from '../../src/imaging/cutout-writer.ts';
import type { ImageRenderer } from '../../src/adapters/images/renderer.ts';
import type { BlobStore } from '../../src/adapters/blob-store.ts';
import sharp from 'sharp';

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
      {
        queue: t.c.queue,
        blobs: t.c.blobs,
        pipeline: { decoder: t.c.decoder, renderer: t.c.renderer, rasters: t.c.rasters, model: t.model, cutouts },
        bus: t.c.bus,
        stats: t.c.stats,
        priority,
        log: pino({ level: 'silent' }),
      },
      { concurrency: 2, leaseMs: 5000, maxAttempts: 3, idlePollMs: 20 },
    );
    const { accountId } = await t.account(10);
    const run = async (photos: number) => {
      const job = await t.c.batches.createJob(accountId, {}, null);
      await t.c.intake.addPhotos(
        accountId,
        job.id,
        await Promise.all(
          Array.from({ length: photos }, async (_, i) => ({
            name: `p${i}.jpg`,
            data: await productPhoto(200 + i, 160),
          })),
        ),
      );
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
  (fs.readdirSync(t.dataDir, { recursive: true }) as string[]).filter(
    (f) => String(f).includes(jobId) && /\/[0-9a-f]{8}-[0-9a-f]{4}-(cutout\.png|output|thumb\.webp)/.test(String(f)),
  );

/** Runs one photo of a new batch through a worker with these parts, to its end. */
async function runOne(parts: { renderer?: ImageRenderer; blobs?: BlobStore }) {
  const worker = new PhotoWorker(
    {
      queue: t.c.queue,
      blobs: parts.blobs ?? t.c.blobs,
      pipeline: {
        decoder: t.c.decoder,
        renderer: parts.renderer ?? t.c.renderer,
        rasters: t.c.rasters,
        model: t.model,
        cutouts,
      },
      bus: t.c.bus,
      stats: t.c.stats,
      log: pino({ level: 'silent' }),
    },
    { concurrency: 1, leaseMs: 5000, maxAttempts: 1, idlePollMs: 20 },
  );
  const { accountId, auth } = await t.account(5);
  const job = await t.c.batches.createJob(accountId, {}, null);
  await t.c.intake.addPhotos(accountId, job.id, [{ name: 'p.jpg', data: await productPhoto(300, 240) }]);
  await t.c.batches.start(accountId, job.id, {});
  worker.start();
  try {
    await until(
      async () => ['done', 'failed'].includes((await t.c.queries.getJob(accountId, job.id)).items[0].status),
      'the photo',
    );
  } finally {
    await worker.stop();
  }
  return { accountId, auth, jobId: job.id, item: (await t.c.queries.getJob(accountId, job.id)).items[0] };
}

describe('result files', () => {
  it('a photo that fails after its cut-out was stored leaves no result file behind, and is not charged', async () => {
    // The cut-out is stored as soon as it exists; storing the output under its second name fails.
    const blobs = Object.create(t.c.blobs) as BlobStore;
    let copies = 0;
    blobs.copy = async () => {
      copies++;
      throw new Error('disk trouble');
    };
    const { accountId, jobId, item } = await runOne({ blobs });
    expect(item.status).toBe('failed');
    expect(copies).toBe(1);
    expect(resultFilesOnDisk(jobId), JSON.stringify(resultFilesOnDisk(jobId))).toEqual([]);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 5, pack: 0 });
  });

  it('the thumbnail is made after the photo is done; if that fails, the thumbnail is made when first asked for, and kept', async () => {
    let thumbnails = 0;
    const renderer = Object.create(t.c.renderer) as ImageRenderer;
    renderer.thumbnailRaw = async () => {
      thumbnails++;
      throw new Error('thumbnail failed');
    };
    const { jobId, item, auth } = await runOne({ renderer });
    expect(item.status).toBe('done');
    expect(thumbnails).toBe(1);
    const thumbFiles = () => resultFilesOnDisk(jobId).filter((f) => f.endsWith('-thumb.webp'));
    expect(thumbFiles()).toEqual([]);
    const res = await t.app.inject({
      method: 'GET',
      url: `/v1/jobs/${jobId}/items/${item.id}/file?variant=thumb`,
      headers: auth,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/webp');
    const meta = await sharp(res.rawPayload).metadata();
    expect([meta.format, Math.max(meta.width!, meta.height!)]).toEqual(['webp', 300]);
    expect(thumbFiles()).toHaveLength(1);
    const again = await t.app.inject({
      method: 'GET',
      url: `/v1/jobs/${jobId}/items/${item.id}/file?variant=thumb`,
      headers: auth,
    });
    expect(Buffer.compare(again.rawPayload, res.rawPayload)).toBe(0);
  });

  it('a done photo has its thumbnail stored by the worker', async () => {
    const { jobId, item } = await runOne({});
    expect(item.status).toBe('done');
    expect(resultFilesOnDisk(jobId).filter((f) => f.endsWith('-thumb.webp'))).toHaveLength(1);
  });
});
