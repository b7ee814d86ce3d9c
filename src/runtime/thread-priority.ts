// Gives the model's threads the CPU first. On a small host the model keeps every core busy, and its
// threads meet at a barrier after each parallel step: when a sharp thread (decoding the next photo,
// encoding the last one) preempts one of them, the others wait, and the run loses more time than the
// image work took. Measured on 2 cores: photos overlapped at equal priority ran the model 15% slower
// than bare, more than running them one after another. With every other thread of the process at a
// higher nice value, image work fills the model's gaps instead. The event loop keeps its priority:
// API answers must not wait for the model. Only while photos overlap, though: a photo alone (one sent to
// POST /v1/images) has nothing to yield to, and its own image work at a low priority lingered beside the
// model and after it (measured, 2 vCPUs: the answer 27 ms later at nice 10 than at nice 0). So the
// worker lowers the helpers when a second photo starts and gives them their priority back (restore)
// when it is alone again, where the system allows raising a priority (Linux: CAP_SYS_NICE or RLIMIT_NICE).
import os from 'node:os';
import { threadIds } from './threads.mjs';
import { errorCode } from '../errors.ts';

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
  /** False once raising a priority was refused: the helpers then stay lowered, as before there was restore. */
  private canRestore = true;

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

  /**
   * Gives the threads that apply lowered the event loop's priority back; answers how many it changed.
   * Where raising a priority is not allowed it does nothing, then and from then on.
   */
  restore(): number {
    if (this.nice <= 0 || !this.canRestore || this.keep().length === 0) return 0;
    const base = this.ops.get(process.pid);
    let changed = 0;
    for (const tid of this.ops.list()) {
      if (tid === process.pid) continue;
      try {
        if (this.ops.get(tid) !== this.nice) continue;
        this.ops.set(tid, base);
        changed++;
      } catch (err) {
        // Node reports a refused setpriority as ERR_SYSTEM_ERROR with the errno's name in `info`.
        const info = err instanceof Error && 'info' in err && err.info instanceof Object ? err.info : {};
        const code = 'code' in info && typeof info.code === 'string' ? info.code : errorCode(err);
        // Otherwise the thread ended between the listing and the call.
        if (code !== 'EACCES' && code !== 'EPERM') continue;
        this.canRestore = false;
        break;
      }
    }
    return changed;
  }
}
