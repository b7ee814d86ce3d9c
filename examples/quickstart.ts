// One batch with @matte/client: photos cut out on white, followed until done, the ZIP saved.
// Run from the Matte folder: MATTE_API_KEY=mk_… npx tsx examples/quickstart.ts shoe.jpg more.zip
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createMatteClient, MatteApiError } from '@matte/client';
import { fileFromPath } from '@matte/client/node';

const matte = createMatteClient({
  baseUrl: process.env.MATTE_URL ?? `http://localhost:${process.env.PORT ?? 8080}`,
  apiKey: process.env.MATTE_API_KEY,
});
const batch = await matte.createBatch({ defaults: { background: { mode: 'white' } } });
await matte.addFiles(batch.id, await Promise.all(process.argv.slice(2).map((file) => fileFromPath(file))));
await matte.start(batch.id); // makes its own Idempotency-Key: a retry never charges twice
for await (const update of matte.follow(batch.id)) {
  if (update.type !== 'event') continue;
  const { event, data } = update.event;
  console.log(event, 'name' in data ? `${data.name}: ${data.status}` : data.status);
}
const review = await matte.review(batch.id); // flagged (not charged) and failed photos
console.log(`${review.items.length} to look at`);
const { stream } = await matte.download(batch.id, { format: 'jpeg' });
await pipeline(Readable.fromWeb(stream as import('node:stream/web').ReadableStream), fs.createWriteStream('batch.zip'));
console.log('batch.zip written');

try {
  await matte.start('job_missing');
} catch (err) {
  if (err instanceof MatteApiError) console.error(err.status, err.code, err.detail, err.field);
}
