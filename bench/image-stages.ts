// npm run bench -- image-stages: where the time of one POST /v1/images goes, for a 2000x2000 JPEG over real
// HTTP with the real model (BENCH_IMAGE_RUNS requests, 6 by default; the first warms up): before the worker claims the photo
// (upload, check, intake, start), each pipeline stage (meta.timings), and from the photo finishing to
// the answer's last byte. PROBE_ENV='{"MATTE_IMAGE_THREADS":"2"}' passes settings to the server.
import sharp from 'sharp';
import { startServer } from '../test/helpers/server.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../tools/shared-data.ts';

if (!HAVE_EVAL_DATA)
  throw new Error('npm run bench -- image-stages reads ../shared/eval-data; set MATTE_SHARED_DIR to the shared folder');
const entry = evalEntries().filter((x) => x.kind === 'product')[0];
const big = await sharp(evalFile(entry.image)).resize(2000, 2000, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
const server = await startServer({
  LOG_LEVEL: 'error',
  MATTE_REQUESTS_PER_MINUTE: '1000000',
  ...(process.env.PROBE_ENV ? JSON.parse(process.env.PROBE_ENV) : {}),
});
try {
  const { apiKey } = await server.createAccount('bench-image@example.com', 1000, 0);
  const auth = { authorization: `Bearer ${apiKey}` };
  for (let i = 0; i < Number(process.env.BENCH_IMAGE_RUNS ?? 6); i++) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(big)]), 'big.jpg');
    const t0 = Date.now();
    const res = await fetch(`${server.base}/v1/images`, { method: 'POST', body: form, headers: auth });
    await res.arrayBuffer();
    const t1 = Date.now();
    const item = (
      await (await fetch(`${server.base}/v1/jobs/${res.headers.get('x-matte-job-id')}`, { headers: auth })).json()
    ).items[0];
    const tm = item.meta.timings;
    console.log(
      `${i === 0 ? 'warm-up ' : ''}total ${t1 - t0} ms | before the claim ${item.startedAt - t0} | decode ${tm.decode} | model ${tm.inference} | check + edges ${tm.diagnose} | cut-out PNG + thumbnail ${tm.compose} | render ${tm.encode} | finished → last byte ${t1 - item.finishedAt}`,
    );
  }
} finally {
  await server.stop();
}
