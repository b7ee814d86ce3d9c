import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { HelperThreadPriority, type ThreadPriorityOps } from '../../src/runtime/thread-priority.ts';
import { loadConfig } from '../../src/config.ts';

const SRC = path.resolve(import.meta.dirname, '../../src');

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
    // In a process of its own (it renices every other thread of its process, and the tests share theirs): a
    // worker thread stands in for the model, reports its own id and stays alive until told.
    const script = `
      import { Worker } from 'node:worker_threads';
      import os from 'node:os';
      import { HelperThreadPriority } from ${JSON.stringify(path.join(SRC, 'runtime/thread-priority.ts'))};
      import { currentThreadId, threadIds } from ${JSON.stringify(path.join(SRC, 'runtime/threads.mjs'))};
      // (an ES module, as --input-type passes on to it)
      const worker = new Worker(
        "import { parentPort } from 'node:worker_threads'; import fs from 'node:fs';" +
          "const id = Number(fs.readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]);" +
          "parentPort.postMessage(id); parentPort.once('message', () => process.exit(0));",
        { eval: true },
      );
      const modelTid = await new Promise((resolve) => worker.once('message', resolve));
      const priorities = () => threadIds().map((tid) => [tid, os.getPriority(tid)]);
      const seen = { pid: process.pid, modelTid, threads: threadIds(), current: currentThreadId() };
      const changed = new HelperThreadPriority(7, () => [modelTid]).apply();
      const applied = priorities();
      new HelperThreadPriority(7, () => [modelTid]).restore();
      const restored = priorities();
      worker.postMessage('exit');
      await new Promise((r) => worker.once('exit', r));
      console.log(JSON.stringify({ ...seen, changed, applied, restored }));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', script],
      { cwd: path.dirname(SRC) },
    );
    const seen = JSON.parse(stdout) as {
      pid: number;
      modelTid: number;
      threads: number[];
      current: number;
      changed: number;
      applied: [number, number][];
      restored: [number, number][];
    };
    expect(seen.threads).toContain(seen.modelTid);
    expect(seen.current).toBe(seen.pid);
    expect(seen.changed).toBeGreaterThan(0);
    for (const [tid, nice] of seen.applied)
      expect(nice, `thread ${tid}`).toBe(tid === seen.pid || tid === seen.modelTid ? 0 : 7);
    // Raising them back needs CAP_SYS_NICE (root here) or a nice limit that allows it.
    if (process.getuid?.() === 0) for (const [tid, nice] of seen.restored) expect(nice, `thread ${tid}`).toBe(0);
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
