// A 36-photo batch (about 146 MB as stored) downloaded over a real socket while the server's memory is sampled: the archive
// streams, so the server's resident memory grows by far less than the archive's size. The photos are
// noise (they compress badly), so the archive is large: buffering it would break the bound.
// The model plays no part in a download; this suite uses the fast stand-in so its photos finish in
// seconds (downloads with the real model are in test/e2e/output.test.ts). 36 photos of 1040² make an archive
// over twice the bound, for the least work (part of a photo's work is at the model's size whatever the photo's:
// 72 photos of 736² took a quarter more CPU).
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';

const PHOTOS = 36;
/** The bound stated in the README: the server's RSS grows by less than this while streaming. */
const BOUND_MB = 64;

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp({ photosPerHour: 100_000, requestsPerMinute: 100_000 });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t?.close());

function noisePhoto(seed: number): Promise<Buffer> {
  const w = 1040;
  const h = 1040;
  const rgb = Buffer.alloc(w * h * 3);
  let s = seed * 2654435761;
  for (let i = 0; i < rgb.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    rgb[i] = (s >>> 16) % 180; // darker than the stand-in model's threshold: all of it is "subject"
  }
  return sharp(rgb, { raw: { width: w, height: h, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
}

describe('a 36-photo download', () => {
  it(
    `streams: the server's memory grows by less than ${BOUND_MB} MB for an archive several times that size`,
    { timeout: 300_000 },
    async () => {
      const acct = await t.account(PHOTOS);
      const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: acct.auth, payload: {} })).json();
      for (let batch = 0; batch < PHOTOS; batch += 18) {
        const photos = await Promise.all(Array.from({ length: 18 }, (_, i) => noisePhoto(batch + i + 1)));
        const form = multipart(
          photos.map((data, i) => ({ name: 'files', filename: `p${batch + i}.jpg`, data, type: 'image/jpeg' })),
        );
        const res = await t.app.inject({
          method: 'POST',
          url: `/v1/jobs/${job.id}/items`,
          headers: { ...acct.auth, ...form.headers },
          payload: form.payload,
        });
        expect(res.statusCode, res.body).toBe(200);
      }
      await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: acct.auth, payload: {} });
      const done = await waitForBatch(t.app, acct.auth, job.id, 240_000);
      expect((done.counts as { done: number }).done).toBe(PHOTOS);

      for (const query of ['', '?optimize=lossless&include=rendered,originals']) {
        global.gc?.();
        const before = process.memoryUsage().rss;
        let peak = before;
        const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
        const res = await fetch(`${base}/v1/jobs/${job.id}/download${query}`, { headers: acct.auth });
        expect(res.status).toBe(200);
        let bytes = 0;
        // Read and drop: the client keeps nothing, so what grows is the server's.
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
        clearInterval(timer);
        const grewMb = (peak - before) / 2 ** 20;
        const archiveMb = bytes / 2 ** 20;
        console.log(
          `download${query || ' (as stored)'}: archive ${archiveMb.toFixed(0)} MB, server RSS grew ${grewMb.toFixed(0)} MB (bound ${BOUND_MB} MB)`,
        );
        expect(archiveMb).toBeGreaterThan(2 * BOUND_MB);
        expect(grewMb).toBeLessThan(BOUND_MB);
      }
    },
  );
});
