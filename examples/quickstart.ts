// One batch with @matte/client: photos cut out on white, followed until done, the ZIP saved.
// Run from the Matte folder: MATTE_API_KEY=mk_… npx tsx examples/quickstart.ts examples/photos/*.jpg
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createMatteClient, MatteApiError } from '@matte/client';
import { fileFromPath } from '@matte/client/node';

const matte = createMatteClient({
  baseUrl: process.env.MATTE_URL ?? `http://localhost:${process.env.PORT ?? 8080}`,
  apiKey: process.env.MATTE_API_KEY,
});
const files = process.argv.slice(2);
const batch = await matte.createBatch({ defaults: { background: { mode: 'white' } } });
const added = await matte.addFiles(batch.id, await Promise.all(files.map((file) => fileFromPath(file))));
for (const r of added.rejected) console.log(`not added: ${r.name}: ${r.reason}`);
await matte.start(batch.id); // makes its own Idempotency-Key: a retry never charges twice
for await (const update of matte.follow(batch.id)) {
  if (update.type !== 'event') continue;
  const { event, data } = update.event;
  // item.* events carry the photo (its name, status and score); job.* events the batch's counts.
  if ('name' in data) console.log(`${event}: ${data.name}, score ${data.score ?? '-'} of 100`);
  else console.log(`${event}: ${data.counts.done} of ${data.counts.total} done`);
}
const review = await matte.review(batch.id); // flagged (not charged) and failed photos
console.log(`${review.items.length} to look at`);
const { stream } = await matte.download(batch.id, { format: 'jpeg' });
const zip = path.join(os.tmpdir(), `matte-${batch.id}.zip`); // outside the repository
await pipeline(Readable.fromWeb(stream as import('node:stream/web').ReadableStream), fs.createWriteStream(zip));
console.log(`${zip} written`);

// A mistake answers a problem: its HTTP status, a stable code and a sentence.
try {
  await matte.start('job_missing');
} catch (err) {
  if (err instanceof MatteApiError) console.log(`as expected: ${err.status} ${err.code}: ${err.detail}`);
}
