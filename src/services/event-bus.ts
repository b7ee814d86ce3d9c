// In-process notifications: a batch changed (long-polls and streams wake up), work was queued (the
// worker stops waiting). The database stays the authority; the bus only says "look again".
import { EventEmitter } from 'node:events';

export class EventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every long-poll and stream subscribes; the default cap of 10 listeners would warn under load.
    this.emitter.setMaxListeners(0);
  }

  jobChanged(jobId: string): void {
    this.emitter.emit(`job:${jobId}`);
  }

  onJobChanged(jobId: string, listener: () => void): () => void {
    this.emitter.on(`job:${jobId}`, listener);
    return () => this.emitter.off(`job:${jobId}`, listener);
  }

  workQueued(): void {
    this.emitter.emit('work');
  }

  onWorkQueued(listener: () => void): () => void {
    this.emitter.on('work', listener);
    return () => this.emitter.off('work', listener);
  }
}
