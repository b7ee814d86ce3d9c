// Thread ids of this process, for giving the model's threads the CPU first (see thread-priority.ts).
// Linux only: elsewhere /proc is missing and both functions answer empty, which turns the feature off.
import fs from 'node:fs';

/** Ids of every thread of this process. */
export function threadIds() {
  try {
    return fs.readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
  } catch {
    return [];
  }
}

/** Id of the calling thread (a worker thread's own id, which Node does not expose), or null. */
export function currentThreadId() {
  try {
    // /proc/thread-self is resolved by the thread that opens it; a synchronous read opens it here.
    return Number(fs.readFileSync('/proc/thread-self/stat', 'utf8').split(' ', 1)[0]);
  } catch {
    return null;
  }
}

/**
 * A thread's name (/proc/self/task/<tid>/comm), or null when it ended or /proc is missing.
 * @param {number} tid
 */
export function threadName(tid) {
  try {
    return fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}
