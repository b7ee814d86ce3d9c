// One batch through the HTTP API as a client runs it, timed: the throughput sections of npm run bench -- all
// (bench/run.ts) and of its int8 section (bench/int8.ts).

/** A request to the server with the account's key already set. */
export type Api = (path: string, init?: RequestInit) => Promise<Response>;

export interface BenchPhoto {
  name: string;
  data: Buffer;
}

/**
 * add + start + wait for one batch of `photos`, waiting as a client would: long-polls with `since`/`wait`.
 * @returns its wall time, its id and the status it ended in
 */
export async function runBatch(
  api: Api,
  photos: BenchPhoto[],
  onStarted?: (jobId: string) => void,
): Promise<{ seconds: number; jobId: string; status: string }> {
  const t0 = performance.now();
  const job = await (await api('/v1/jobs', { method: 'POST' })).json();
  const form = new FormData();
  for (const p of photos) form.append('files', new Blob([new Uint8Array(p.data)]), p.name);
  const added = await api(`/v1/jobs/${job.id}/items`, { method: 'POST', body: form });
  if (added.status !== 200 && added.status !== 201) throw new Error(`adding photos answered ${added.status}`);
  const started = await api(`/v1/jobs/${job.id}/start`, { method: 'POST' });
  if (started.status !== 200 && started.status !== 202) throw new Error(`start answered ${started.status}`);
  onStarted?.(job.id);
  let since = 0;
  for (;;) {
    const s = await (await api(`/v1/jobs/${job.id}?fields=summary&wait=30${since ? `&since=${since}` : ''}`)).json();
    if (s.status !== 'queued' && s.status !== 'running')
      return { seconds: (performance.now() - t0) / 1000, jobId: job.id, status: s.status };
    since = s.updatedAt;
  }
}
