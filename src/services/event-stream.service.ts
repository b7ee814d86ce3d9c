// Following a batch: the snapshot, then each event of the log in order, as they are committed. What a
// stream sends comes from the database (job_events), never from memory, so an event written by another
// process arrives the same way (the bus only says when to look), and a resumed stream continues at
// the id it was given with no gap and no repeat.
//
// Ids: a fresh stream's snapshot carries the id of the last event it already reflects, so a client
// that reconnects with it (EventSource sends Last-Event-ID by itself) gets exactly the events after
// it. A resumed stream's snapshot carries no id (the client's id stays as it was), then the events
// after the given one follow.
import type { Store } from '../db/store.ts';
import type { JobSummary } from '../domain/batch.schemas.ts';
import type { JobEvent } from '../domain/event.schemas.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import type { BatchQueries } from './batch-queries.service.ts';

export type StreamMessage =
  | { kind: 'snapshot'; id: number | null; data: JobSummary }
  | { kind: 'event'; event: JobEvent }
  | { kind: 'keepalive' };

/** Statuses after which nothing more happens to a batch unless a user acts (re-run, continue). */
const SETTLED = ['done', 'failed', 'cancelled'];
/** Events read per query while catching up. */
const PAGE = 500;

export class EventStreamService {
  /** Aborted on shutdown: every open stream ends, so a graceful stop does not wait out their ten minutes. */
  private readonly closing = new AbortController();

  constructor(
    private readonly deps: {
      store: Store;
      queries: BatchQueries;
      bus: EventBus;
      clock: () => number;
      keepAliveMs: number;
      maxMs: number;
    },
  ) {}

  /**
   * Sends the batch's stream to `emit` until the batch is done, the time limit, the batch is deleted,
   * or `signal` aborts (the client left). The batch must exist on the account (checked first: NOT_FOUND).
   */
  async follow(
    accountId: string,
    jobId: string,
    lastEventId: number | null,
    emit: (m: StreamMessage) => void,
    left: AbortSignal,
    /** `paused`: the stream also ends at job.paused (a sample run, a stop), and opened on a paused batch it ends after the snapshot. */
    until: 'done' | 'paused' = 'done',
  ): Promise<void> {
    const { queries, bus, clock, keepAliveMs, maxMs } = this.deps;
    const signal = AbortSignal.any([left, this.closing.signal]);
    const endsAt = clock() + maxMs;
    let changed = true;
    let wake: (() => void) | null = null;
    // Subscribed before the first read: a change between the read and the subscription is not missed.
    const unsubscribe = bus.onJobChanged(jobId, () => {
      changed = true;
      wake?.();
    });
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      // The row gives the last event id and the status together; the counts, read after it, reflect
      // at least every event up to that id.
      const row = await queries.requireJob(accountId, jobId);
      const seq = Number(row.event_seq);
      const snapshot = await queries.summarise(row);
      let after = lastEventId ?? seq;
      emit({ kind: 'snapshot', id: lastEventId === null ? seq : null, data: snapshot });
      const ends = until === 'paused' ? [...SETTLED, 'paused'] : SETTLED;
      if (lastEventId === null && ends.includes(snapshot.status)) return;

      let nextKeepAlive = clock() + keepAliveMs;
      while (!signal.aborted) {
        if (changed) {
          changed = false;
          let events: JobEvent[];
          do {
            events = await this.deps.store.repos.events.listForJob(jobId, after, PAGE);
            for (const event of events) {
              if (signal.aborted) return;
              emit({ kind: 'event', event });
              after = event.id;
              if (event.event === 'job.done' || (until === 'paused' && event.event === 'job.paused')) return;
            }
          } while (events.length === PAGE);
          // Nothing more to send: the batch may be gone, or settled with no done event to come.
          const job = await this.deps.store.repos.jobs.findById(jobId);
          if (!job || job.account_id !== accountId) return;
          if (ends.includes(job.status) && Number(job.event_seq) <= after) return;
        }
        const now = clock();
        if (now >= endsAt) return;
        if (now >= nextKeepAlive) {
          emit({ kind: 'keepalive' });
          nextKeepAlive = now + keepAliveMs;
        }
        if (changed || signal.aborted) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, Math.max(1, Math.min(nextKeepAlive, endsAt) - clock()));
          function done() {
            clearTimeout(timer);
            wake = null;
            resolve();
          }
          wake = done;
        });
      }
    } finally {
      wake = null;
      signal.removeEventListener('abort', onAbort);
      unsubscribe();
    }
  }

  /** Ends every open stream (clients reconnect elsewhere with Last-Event-ID). */
  close(): void {
    this.closing.abort();
  }
}
