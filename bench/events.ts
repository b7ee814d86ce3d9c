// Event latency: from a photo finishing (the event's `at`, stamped by the server when the photo's result
// is committed) to the SSE message arriving at a client and to the webhook POST arriving at a receiver,
// both on loopback, at p50 and p99 over the item events of real batches with the real model.
// Server and clients share this machine's clock. Part of npm run bench -- all; runs alone too
// (npm run bench -- events; BENCH_EVENT_PHOTOS photos, default 24).
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../tools/shared-data.ts';
import { openStream, startReceiver } from '../test/helpers/events.ts';
import { startServer } from '../test/helpers/server.ts';
import { percentile as pct } from '../tools/figures.ts';

export interface EventLatency {
  events: number;
  sse: number[];
  webhook: number[];
}

/** Runs `photos` through batches of at most 8 (one stream and one webhook each) on a running server. */
export async function eventLatency(
  base: string,
  apiKey: string,
  photos: { name: string; data: Buffer }[],
): Promise<EventLatency> {
  const receiver = await startReceiver();
  const auth = { authorization: `Bearer ${apiKey}` };
  const sse: number[] = [];
  const webhook: number[] = [];
  try {
    for (let i = 0; i < photos.length; i += 8) {
      const list = photos.slice(i, i + 8);
      const job = await (
        await fetch(`${base}/v1/jobs`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({
            webhookUrl: receiver.url,
            webhookEvents: ['item.done', 'item.needs_review', 'item.failed'],
          }),
        })
      ).json();
      const form = new FormData();
      for (const p of list) form.append('files', new Blob([new Uint8Array(p.data)]), p.name);
      await (
        await fetch(`${base}/v1/jobs/${job.id}/items`, { method: 'POST', body: form, headers: auth })
      ).arrayBuffer();
      const stream = await openStream(`${base}/v1/jobs/${job.id}/events`, auth);
      await stream.next((m) => m.event === 'snapshot');
      await (await fetch(`${base}/v1/jobs/${job.id}/start`, { method: 'POST', headers: auth })).arrayBuffer();
      await stream.ended;
      for (const m of stream.messages) if (m.event?.startsWith('item.')) sse.push(m.at - JSON.parse(m.data!).at);
      await receiver.waitFor((all) => all.filter((r) => r.body.jobId === job.id).length >= list.length, 30_000);
      for (const r of receiver.requests.filter((x) => x.body.jobId === job.id)) webhook.push(r.at - r.body.at);
    }
  } finally {
    await receiver.close();
  }
  return { events: sse.length, sse, webhook };
}

export function eventLatencyLines(f: EventLatency): string[] {
  const row = (name: string, xs: number[]) =>
    `${name.padEnd(34)} p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
  return [
    `\n## event latency, photo finished (event \`at\`) to arrival, ${f.events} item events over loopback (goals: p50 < 100 ms, p99 < 500 ms)`,
    row('SSE message (GET /v1/jobs/{id}/events)', f.sse),
    row('webhook POST received', f.webhook),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!HAVE_EVAL_DATA)
    throw new Error('npm run bench -- events reads ../shared/eval-data; set MATTE_SHARED_DIR to the shared folder');
  const n = Number(process.env.BENCH_EVENT_PHOTOS ?? 24);
  const entries = evalEntries().filter((e) => e.kind === 'product');
  const photos = Array.from({ length: n }, (_, i) => ({
    name: `${i}.jpg`,
    data: evalFile(entries[i % entries.length].image),
  }));
  const server = await startServer({ LOG_LEVEL: 'error', MATTE_REQUESTS_PER_MINUTE: '1000000' });
  try {
    const { apiKey } = await server.createAccount('bench-events@example.com', 100000, 0);
    console.log(eventLatencyLines(await eventLatency(server.base, apiKey, photos)).join('\n'));
  } finally {
    await server.stop();
  }
}
