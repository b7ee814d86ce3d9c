// Shared memory handed out again: a photo's copy that the cut-out writer's threads read is 12 MB for a
// 2000x2000 photo. Fresh memory costs a page fault per 4 KiB the first time it is written (about 3,000
// faults, 25 ms of the event loop's time on this kind of machine, while the model runs); memory that
// was written before costs only the copy (about 3 ms). So released buffers are kept for the next photo
// and let go when none was asked for in a while.

/** A view of shared memory held by one user until it is released. */
export interface SharedLease {
  view: Uint8Array;
  /** Gives the memory back for a later take; the view must not be used afterwards. Twice is harmless. */
  release(): void;
}

export class SharedMemoryPool {
  /** Released buffers, smallest first. */
  private free: SharedArrayBuffer[] = [];
  private idleTimer: NodeJS.Timeout | null = null;

  /**
   * @param maxFree released buffers kept at once (photos in flight at once is enough)
   * @param idleReleaseMs released buffers are let go after no take for this long
   */
  constructor(
    private readonly opts: { maxFree: number; idleReleaseMs: number } = { maxFree: 2, idleReleaseMs: 10_000 },
  ) {}

  /** `length` bytes of shared memory (not zeroed: the caller overwrites them), from the smallest released buffer that is large enough. */
  take(length: number): SharedLease {
    const i = this.free.findIndex((b) => b.byteLength >= length);
    const buffer = i >= 0 ? this.free.splice(i, 1)[0] : new SharedArrayBuffer(length);
    let held = true;
    return {
      view: new Uint8Array(buffer, 0, length),
      release: () => {
        if (!held) return;
        held = false;
        this.give(buffer);
      },
    };
  }

  /** A shared copy of `data`. */
  copy(data: Uint8Array): SharedLease {
    const lease = this.take(data.length);
    lease.view.set(data);
    return lease;
  }

  /**
   * A shared copy of `data` made `slice` bytes at a time, the event loop free between slices: a 12 MB photo
   * into fresh memory is about 3,000 page faults, which in one piece held the loop 30 ms of CPU (over 100 ms
   * of wall time while the model's threads held both cores), and held API reads behind it.
   */
  async copyInSlices(data: Uint8Array, slice = 1 << 20): Promise<SharedLease> {
    const lease = this.take(data.length);
    for (let at = 0; at < data.length; at += slice) {
      if (at) await new Promise<void>((resolve) => setImmediate(resolve));
      lease.view.set(data.subarray(at, Math.min(data.length, at + slice)), at);
    }
    return lease;
  }

  /** Bytes kept for reuse now (not counting buffers taken). */
  heldBytes(): number {
    return this.free.reduce((sum, b) => sum + b.byteLength, 0);
  }

  /** Lets every released buffer go now. */
  clear(): void {
    this.free = [];
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private give(buffer: SharedArrayBuffer): void {
    this.free.push(buffer);
    this.free.sort((a, b) => a.byteLength - b.byteLength);
    // Over the bound, the smallest goes: the largest fits every later photo.
    while (this.free.length > this.opts.maxFree) this.free.shift();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.clear(), this.opts.idleReleaseMs);
    this.idleTimer.unref();
  }
}
