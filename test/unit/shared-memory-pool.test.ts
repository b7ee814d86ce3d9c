// The shared memory the cut-out writer copies each photo into: handed out again after release, never
// while held, the smallest that fits first, and let go after an idle spell.
import { describe, expect, it } from 'vitest';
import { SharedMemoryPool } from '../../src/runtime/shared-memory-pool.ts';

describe('shared memory pool', () => {
  it('hands a released buffer out again, and never one still held', () => {
    const pool = new SharedMemoryPool({ maxFree: 2, idleReleaseMs: 10_000 });
    const a = pool.copy(Uint8Array.from([1, 2, 3, 4]));
    expect([...a.view]).toEqual([1, 2, 3, 4]);
    expect(a.view.buffer).toBeInstanceOf(SharedArrayBuffer);
    const b = pool.take(4);
    expect(b.view.buffer, 'a held buffer is not handed out').not.toBe(a.view.buffer);
    a.release();
    a.release(); // twice is harmless: kept once
    expect(pool.heldBytes()).toBe(4);
    const c = pool.take(3);
    expect(c.view.buffer, 'the released one is reused').toBe(a.view.buffer);
    expect(c.view.length).toBe(3);
    expect(pool.heldBytes()).toBe(0);
    const d = pool.take(4);
    expect(d.view.buffer).not.toBe(a.view.buffer);
    pool.clear();
  });

  it('takes the smallest released buffer that is large enough, and keeps at most maxFree (the largest)', () => {
    const pool = new SharedMemoryPool({ maxFree: 2, idleReleaseMs: 10_000 });
    const [small, middle, large] = [10, 20, 30].map((n) => pool.take(n));
    for (const lease of [large, small, middle]) lease.release();
    expect(pool.heldBytes(), 'the smallest went').toBe(50);
    expect(pool.take(15).view.buffer).toBe(middle.view.buffer);
    expect(pool.take(15).view.buffer).toBe(large.view.buffer);
    expect(pool.take(35).view.buffer.byteLength, 'none fits: a new one').toBe(35);
    pool.clear();
  });

  it('lets released buffers go after the idle time, and clear lets them go at once', async () => {
    const pool = new SharedMemoryPool({ maxFree: 2, idleReleaseMs: 100 });
    pool.take(8).release();
    expect(pool.heldBytes()).toBe(8);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(pool.heldBytes()).toBe(0);
    pool.take(8).release();
    pool.clear();
    expect(pool.heldBytes()).toBe(0);
  });

  it('copies in slices with the event loop free between them: the same bytes, in shared memory', async () => {
    const pool = new SharedMemoryPool();
    const data = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7) % 256);
    const immediates: number[] = [];
    const count = () => {
      immediates.push(1);
      if (immediates.length < 100) setImmediate(count);
    };
    setImmediate(count);
    const lease = await pool.copyInSlices(data, 1000);
    expect(lease.view.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(Buffer.from(lease.view).equals(Buffer.from(data))).toBe(true);
    // Ten slices: the loop ran other callbacks between them.
    expect(immediates.length).toBeGreaterThanOrEqual(9);
    lease.release();
  });
});
