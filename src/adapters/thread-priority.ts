// Gives the model's threads the CPU first. On a small host the model keeps every core busy, and its
// threads meet at a barrier after each parallel step: when a sharp thread (decoding the next photo,
// encoding the last one) preempts one of them, the others wait, and the run loses more time than the
// image work took. Measured on 2 cores: photos overlapped at equal priority ran the model 15% slower
// than bare, more than running them one after another. With every other thread of the process at a
// higher nice value, image work fills the model's gaps instead. The event loop keeps its priority:
// API answers must not wait for the model.
import os from 'node:os';
import { threadIds } from './threads.mjs';

export interface ThreadPriorityOps {
  list(): number[];
  get(tid: number): number;
  set(tid: number, nice: number): void;
}

const linuxOps: ThreadPriorityOps = {
  list: threadIds,
  // On Linux the nice value belongs to a thread, and setpriority(PRIO_PROCESS, tid) reaches one thread.
  get: (tid) => os.getPriority(tid),
  set: (tid, nice) => os.setPriority(tid, nice),
};

export class HelperThreadPriority {
  constructor(
    private readonly nice: number,
    /** Threads that keep their priority besides the event loop's: the model's. */
    private readonly keep: () => number[],
    private readonly ops: ThreadPriorityOps = linuxOps,
  ) {}

  /**
   * Lowers every other thread still at a different nice value; answers how many it changed. New
   * threads appear over time (libuv's pool, libvips' workers), so the worker calls this per photo:
   * a list of some twenty thread ids and one syscall each.
   */
  apply(): number {
    const model = this.keep();
    // Without the model's threads known, lowering the rest would lower them too: do nothing.
    if (this.nice <= 0 || model.length === 0) return 0;
    const kept = new Set([process.pid, ...model]);
    let changed = 0;
    for (const tid of this.ops.list()) {
      if (kept.has(tid)) continue;
      try {
        if (this.ops.get(tid) === this.nice) continue;
        this.ops.set(tid, this.nice);
        changed++;
      } catch {
        // The thread ended between the listing and the call.
      }
    }
    return changed;
  }
}
