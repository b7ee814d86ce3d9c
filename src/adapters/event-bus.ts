// Notifications between the parts that change batches and the parts that wait on them: a batch changed
// (long-polls, event streams and the webhook dispatcher look again), work was queued (idle workers stop
// waiting). The database stays the authority; a signal only says "look again", so a lost or doubled
// signal costs a query, never a wrong answer.
//
// LocalEventBus serves one process (SQLite, tests). With PostgreSQL, PgNotifyBus (pg-notify-bus.adapter.ts) carries the
// same signals between processes over LISTEN/NOTIFY, so a stream served by an API process hears what a
// worker process did.
import { EventEmitter } from 'node:events';

export interface EventBus {
  jobChanged(jobId: string): void;
  /**
   * A photo of the batch moved to its next stage and nothing else changed: its counts, status and events
   * are as they were. Heard only by listeners that asked for stages (a long-poll of the whole batch); a
   * summary, an event stream or the webhook dispatcher has nothing new to read.
   */
  photoMoved(jobId: string): void;
  onJobChanged(jobId: string, listener: () => void, options?: { stages?: boolean }): () => void;
  /**
   * Every batch's changes (the webhook dispatcher), with the batch's id; without one after signals may have
   * been missed (wakeAll), when every batch may have changed.
   */
  onAnyJobChanged(listener: (jobId?: string) => void): () => void;
  workQueued(): void;
  onWorkQueued(listener: () => void): () => void;
  /** Listeners subscribed now, of every kind: a stream or long-poll that ended must leave none behind. */
  listenerCount(): number;
  close(): Promise<void>;
}

const ANY_JOB = 'job:*';

export class LocalEventBus implements EventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every long-poll and stream subscribes; the default cap of 10 listeners would warn under load.
    this.emitter.setMaxListeners(0);
  }

  jobChanged(jobId: string): void {
    this.emitter.emit(`job:${jobId}`);
    this.emitter.emit(ANY_JOB, jobId);
  }

  photoMoved(jobId: string): void {
    this.emitter.emit(`moved:${jobId}`);
  }

  onJobChanged(jobId: string, listener: () => void, options: { stages?: boolean } = {}): () => void {
    const off = this.on(`job:${jobId}`, listener);
    if (!options.stages) return off;
    const offMoved = this.on(`moved:${jobId}`, listener);
    return () => {
      off();
      offMoved();
    };
  }

  onAnyJobChanged(listener: (jobId?: string) => void): () => void {
    return this.on(ANY_JOB, listener);
  }

  workQueued(): void {
    this.emitter.emit('work');
  }

  onWorkQueued(listener: () => void): () => void {
    return this.on('work', listener);
  }

  /** Wakes every listener: after signals may have been missed (a lost database connection). */
  wakeAll(): void {
    for (const name of this.emitter.eventNames()) this.emitter.emit(name);
  }

  listenerCount(): number {
    return this.emitter.eventNames().reduce((sum, name) => sum + this.emitter.listenerCount(name), 0);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }

  private on(name: string, listener: (jobId?: string) => void): () => void {
    this.emitter.on(name, listener);
    return () => this.emitter.off(name, listener);
  }
}
