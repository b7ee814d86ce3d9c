// The automatic check of a photo in a worker thread of its own (check.worker.mjs running check-run.ts), so that
// its CPU (the grid reductions and `diagnose`, 20-40 ms of wall time a photo while the model's threads hold both
// cores) is not the event loop's: with the API served by the same loop, a read arriving during the check used
// to wait for it (docs/performance.md, "API reads during batches"). The thread starts when the worker warms up
// (after the model has loaded, so that it counts among the helper threads that yield to the model while photos
// overlap: runtime/thread-priority.ts), or at the first photo; one that stops is started again at the next.
import { Worker } from 'node:worker_threads';
import { PhotoError, type ItemErrorCode } from '../../errors.ts';
import type { Diagnosis } from '../diagnose.ts';
import type { CheckRequest } from './check-run.ts';
import { checkRunUrl } from '../../runtime/bundled.ts';
import { SharedMemoryPool } from '../../runtime/shared-memory-pool.ts';

type Reply =
  | { id: number; colours: Uint8Array }
  | { id: number; diagnosis: Diagnosis }
  | { id: number; photoError: { code: ItemErrorCode; message: string; inputFault: boolean } }
  | { id: number; error: string }
  | { id: number };

/** Rounds of the check on a synthetic photo before the first real one (check-run.ts warmUpCheck). */
const WARM_UP_ROUNDS = 6;

export class CheckThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private closed = false;
  /**
   * The thread reads a photo's input and mask from shared memory reused photo after photo: copies of their own
   * (4 MB a photo) would be garbage in both threads, each collected only when it had piled up to tens of MB.
   */
  private readonly memory = new SharedMemoryPool({ maxFree: 4, idleReleaseMs: 10_000 });

  /** Starts the thread and runs the check's code until the engine has optimised it. */
  async warmUp(): Promise<void> {
    await this.call({ type: 'warm', rounds: WARM_UP_ROUNDS });
  }

  /** The model's input reduced to the check's grid (imaging/check-grid.ts); started while the model runs. */
  async colours(input: { rgb: Uint8Array; width: number; height: number }): Promise<Uint8Array> {
    const rgb = this.memory.copy(input.rgb);
    try {
      const reply = await this.call({
        type: 'colours',
        input: { rgb: rgb.view, width: input.width, height: input.height },
      });
      return (reply as { colours: Uint8Array }).colours;
    } finally {
      rgb.release();
    }
  }

  /** The photo's check (check-run.ts checkPhoto); NO_SUBJECT as the PhotoError diagnose throws. */
  async diagnose(request: CheckRequest): Promise<Diagnosis> {
    const mask = this.memory.copy(request.mask);
    try {
      const reply = await this.call({ type: 'check', request: { ...request, mask: mask.view } });
      return (reply as { diagnosis: Diagnosis }).diagnosis;
    } finally {
      mask.release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.memory.clear();
    const worker = this.worker;
    this.worker = null;
    this.failAll(new Error('the check thread was closed'));
    await worker?.terminate();
  }

  private call(message: Record<string, unknown>): Promise<Reply> {
    if (this.closed) return Promise.reject(new Error('the check thread was closed'));
    const id = this.nextId++;
    const reply = new Promise<Reply>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.thread().postMessage({ ...message, id });
    return reply.then((r) => {
      if ('photoError' in r) throw new PhotoError(r.photoError.code, r.photoError.message, r.photoError.inputFault);
      if ('error' in r) throw new Error(`the check failed: ${r.error}`);
      return r;
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    // The built check where the command runs built (dist/cli), else the sources through tsx's loader.
    const worker = new Worker(new URL('./check.worker.mjs', import.meta.url), {
      execArgv: [],
      workerData: { module: checkRunUrl },
    });
    worker.unref();
    worker.on('message', (msg: Reply | { ready: true }) => {
      if (!('id' in msg)) return;
      const waiting = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      waiting?.resolve(msg);
    });
    const stopped = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.failAll(err);
    };
    worker.on('error', stopped);
    worker.on('exit', () => stopped(new Error('the check thread stopped')));
    this.worker = worker;
    return worker;
  }

  private failAll(err: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const w of waiting) w.reject(err);
  }
}
