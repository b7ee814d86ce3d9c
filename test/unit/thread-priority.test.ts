import { describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import { HelperThreadPriority, type ThreadPriorityOps } from '../../src/runtime/thread-priority.ts';
import { currentThreadId, threadIds } from '../../src/runtime/threads.mjs';
import { loadConfig } from '../../src/config.ts';

function fakeOps(tids: number[]): ThreadPriorityOps & { nice: Map<number, number>; sets: number } {
  const nice = new Map(tids.map((t) => [t, 0]));
  return {
    nice,
    sets: 0,
    list: () => [...nice.keys()],
    get: (tid) => {
      const v = nice.get(tid);
      if (v === undefined) throw new Error('ESRCH');
      return v;
    },
    set(tid, value) {
      if (!nice.has(tid)) throw new Error('ESRCH');
      this.sets++;
      nice.set(tid, value);
    },
  };
}

describe('helper thread priority', () => {
  it('lowers every thread but the event loop and the model, once', () => {
    const ops = fakeOps([process.pid, 101, 102, 103, 104]);
    const p = new HelperThreadPriority(10, () => [102, 103], ops);
    expect(p.apply()).toBe(2);
    expect(Object.fromEntries(ops.nice)).toEqual({ [process.pid]: 0, 101: 10, 102: 0, 103: 0, 104: 10 });
    // Already lowered: nothing to do. A new thread appears: only it changes.
    expect(p.apply()).toBe(0);
    ops.nice.set(105, 0);
    expect(p.apply()).toBe(1);
    expect(ops.nice.get(105)).toBe(10);
  });

  it('does nothing when off, or when the model threads are unknown (it would lower the model too)', () => {
    const ops = fakeOps([process.pid, 101, 102]);
    expect(new HelperThreadPriority(0, () => [102], ops).apply()).toBe(0);
    expect(new HelperThreadPriority(10, () => [], ops).apply()).toBe(0);
    expect(ops.sets).toBe(0);
  });

  it('skips a thread that ends between the listing and the call', () => {
    const ops = fakeOps([process.pid, 101, 102]);
    const list = ops.list;
    ops.list = () => [...list(), 999];
    expect(new HelperThreadPriority(5, () => [102], ops).apply()).toBe(1);
  });

  it("restore gives the lowered threads the event loop's priority back, and leaves other values alone", () => {
    const ops = fakeOps([process.pid, 101, 102, 103, 104]);
    const p = new HelperThreadPriority(10, () => [102], ops);
    p.apply();
    ops.nice.set(104, 5); // someone else's choice
    expect(p.restore()).toBe(2);
    expect(Object.fromEntries(ops.nice)).toEqual({ [process.pid]: 0, 101: 0, 102: 0, 103: 0, 104: 5 });
    expect(p.restore()).toBe(0);
    // Off, or the model unknown: apply never lowered anything, so restore has nothing to give back.
    expect(new HelperThreadPriority(0, () => [102], ops).restore()).toBe(0);
    expect(new HelperThreadPriority(10, () => [], ops).restore()).toBe(0);
  });

  it('where raising a priority is refused, restore stops trying and the helpers stay lowered', () => {
    const ops = fakeOps([process.pid, 101, 102, 103]);
    const p = new HelperThreadPriority(10, () => [102], ops);
    p.apply();
    const lower = ops.set.bind(ops);
    let refused = 0;
    ops.set = (tid, value) => {
      if (value < ops.get(tid)) {
        refused++;
        // As Node reports a refused setpriority(2).
        throw Object.assign(
          new Error('A system error occurred: uv_os_setpriority returned EACCES (permission denied)'),
          { code: 'ERR_SYSTEM_ERROR', info: { code: 'EACCES' } },
        );
      }
      lower(tid, value);
    };
    expect(p.restore()).toBe(0);
    expect(p.restore()).toBe(0);
    expect(refused).toBe(1);
    expect(ops.nice.get(101)).toBe(10);
    // Lowering still works.
    ops.nice.set(105, 0);
    expect(p.apply()).toBe(1);
  });

  it.skipIf(process.platform !== 'linux')('on Linux, reaches single threads of this process', async () => {
    // A worker thread stands in for the model: it reports its own id and stays alive until told.
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const id = Number(require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]);
       parentPort.postMessage(id); parentPort.once('message', () => process.exit(0));`,
      { eval: true },
    );
    const modelTid = await new Promise<number>((resolve) => worker.once('message', resolve));
    try {
      expect(threadIds()).toContain(modelTid);
      expect(currentThreadId()).toBe(process.pid);
      const changed = new HelperThreadPriority(7, () => [modelTid]).apply();
      expect(changed).toBeGreaterThan(0);
      for (const tid of threadIds()) {
        const expected = tid === process.pid || tid === modelTid ? 0 : 7;
        expect(os.getPriority(tid), `thread ${tid}`).toBe(expected);
      }
      // Raising them back needs CAP_SYS_NICE (root here) or a nice limit that allows it.
      if (process.getuid?.() === 0) {
        const p = new HelperThreadPriority(7, () => [modelTid]);
        p.restore();
        for (const tid of threadIds()) expect(os.getPriority(tid), `thread ${tid}`).toBe(0);
      }
    } finally {
      worker.postMessage('exit');
      await new Promise((r) => worker.once('exit', r));
    }
  });
});

describe('configuration of the CPU settings', () => {
  it('defaults to nice 10 and one libvips thread, and refuses values out of range', () => {
    const config = loadConfig({});
    expect([config.helperNice, config.imageThreads]).toEqual([10, 1]);
    expect(loadConfig({ MATTE_HELPER_NICE: '0', MATTE_IMAGE_THREADS: '2' })).toMatchObject({
      helperNice: 0,
      imageThreads: 2,
    });
    expect(() => loadConfig({ MATTE_HELPER_NICE: '20' })).toThrow(/helperNice/);
    expect(() => loadConfig({ MATTE_HELPER_NICE: 'low' })).toThrow(/MATTE_HELPER_NICE must be an integer/);
    expect(() => loadConfig({ MATTE_IMAGE_THREADS: '0' })).toThrow(/imageThreads/);
  });
});
