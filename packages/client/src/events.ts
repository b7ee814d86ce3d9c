// Following a batch: the SSE stream of GET /v1/jobs/{id}/events, parsed by eventsource-parser, reconnecting
// with Last-Event-ID when it drops (the server replays what was missed); where the stream cannot be read
// (a proxy that buffers it, say), long-polls of GET /v1/jobs/{id}?wait= instead.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { errorFromResponse, MatteApiError } from './errors.ts';
import { defaultSleep } from './retry.ts';
import type { FullBatch, JobEvent } from './types.ts';
import type { Client } from 'openapi-fetch';
import type { paths } from './schema.ts';

/** The batch without its photos, as the stream's first message carries it. */
export type BatchSnapshot = Omit<FullBatch, 'items' | 'delta' | 'rejected'>;

export type BatchUpdate =
  /** The batch when the stream (re)opened. */
  | { type: 'snapshot'; batch: BatchSnapshot }
  /** One event: `job.started`, `item.done`, `item.needs_review`, `item.failed`, `job.paused`, `job.done`. */
  | { type: 'event'; event: JobEvent }
  /** Long-polling: the batch, with the photos changed since the last answer (`delta`). */
  | { type: 'poll'; batch: FullBatch };

export interface FollowOptions {
  signal?: AbortSignal;
  /** Resume after this event id (events up to it are not sent again). */
  lastEventId?: number;
  /** Also stop when the batch pauses (a sample ran, or it was stopped), not only when it is done. Default true. */
  untilSettled?: boolean;
  /** `auto` (default): SSE, long-polls if the stream cannot be read. */
  transport?: 'auto' | 'sse' | 'poll';
  /** Seconds each long-poll may wait (1-60, default 30). */
  waitSeconds?: number;
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
}

const ENDED = new Set(['done', 'failed', 'cancelled']);

function settled(status: string, untilSettled: boolean): boolean {
  return ENDED.has(status) || (untilSettled && status === 'paused');
}

/**
 * What following a batch needs of a client (MatteClient has it): its raw requests, for the event stream,
 * and its typed API, for long-polls. Said here and not imported, so that the client and this module do
 * not import each other.
 */
export interface BatchFollower {
  raw(path: string, init?: RequestInit): Promise<Response>;
  readonly api: Client<paths>;
}

export async function* followBatch(
  client: BatchFollower,
  id: string,
  options: FollowOptions = {},
): AsyncGenerator<BatchUpdate> {
  const untilSettled = options.untilSettled ?? true;
  const sleep = options.sleep ?? defaultSleep;
  let last = options.lastEventId;
  let transport = options.transport ?? 'auto';
  let drops = 0;
  let status: string | undefined;
  while (transport !== 'poll') {
    let response: Response;
    try {
      response = await client.raw(`/v1/jobs/${encodeURIComponent(id)}/events`, {
        headers: { accept: 'text/event-stream', ...(last !== undefined ? { 'last-event-id': String(last) } : {}) },
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (++drops > 5 && transport === 'auto') break;
      await sleep(Math.min(10_000, 500 * 2 ** drops), options.signal);
      continue;
    }
    if (!response.ok) throw await errorFromResponse(response);
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream') || !response.body) {
      await response.body?.cancel();
      if (transport === 'auto') break;
      throw new MatteApiError(response.status, { detail: 'the events answer is not an event stream' });
    }
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (message) => queue.push(message) });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<string>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (options.signal?.aborted) throw error;
          break; // the connection dropped: reconnect with Last-Event-ID
        }
        if (chunk.done) break;
        parser.feed(chunk.value);
        while (queue.length) {
          const message = queue.shift()!;
          if (message.event === 'snapshot') {
            const batch = JSON.parse(message.data) as BatchSnapshot;
            status = batch.status;
            drops = 0;
            yield { type: 'snapshot', batch };
            // A first snapshot of a settled batch is the end; after a reconnection, the missed events follow it.
            if (last === undefined && settled(batch.status, untilSettled)) return;
            if (message.id) last = Number(message.id);
          } else if (message.event) {
            const event = JSON.parse(message.data) as JobEvent;
            last = event.id;
            if (typeof event.data.status === 'string' && event.event.startsWith('job.')) status = event.data.status;
            yield { type: 'event', event };
            if (event.event === 'job.done' || (untilSettled && event.event === 'job.paused')) return;
          }
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
    // The server ends a settled batch's stream once every event is sent.
    if (status !== undefined && settled(status, untilSettled)) return;
    // The stream ended before the batch did (its ten minutes, or the network): open it again.
    if (++drops > 5 && transport === 'auto') break;
    await sleep(Math.min(10_000, 250 * 2 ** drops), options.signal);
  }
  transport = 'poll';
  let since: number | undefined;
  for (;;) {
    const { data, error, response } = await client.api.GET('/v1/jobs/{id}', {
      params: { path: { id }, query: { wait: options.waitSeconds ?? 30, ...(since !== undefined ? { since } : {}) } },
      signal: options.signal,
    });
    if (!response.ok || !data) throw await errorFromResponse(response, error);
    const batch = data as FullBatch;
    since = batch.updatedAt;
    yield { type: 'poll', batch };
    if (settled(batch.status, untilSettled)) return;
  }
}
