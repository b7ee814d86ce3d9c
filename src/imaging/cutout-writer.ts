// CutoutWriter: a photo's cut-out, refined at full resolution and written as PNG. Worker threads refine
// bands of its rows side by side (cutout-writer.worker.mjs: edge-refine.mjs) and lay them out as RGBA
// pixels in one shared buffer (rgba-bands.mjs); the buffer is then encoded as one PNG by
// @napi-rs/image (the Rust png crate's fast deflate, Paeth-filtered rows) in one of those threads. With two
// threads on two cores a photo's refinement takes about half as long as in one. A photo is handed over
// before its mask exists (prepare, while the model runs): the copy of it that the threads share is made
// then, off the answer's path.
import { Worker } from 'node:worker_threads';
import { refineGrid } from './edge-refine.mjs';
import { scaleBox } from './raster.mjs';
import { bandCuts, thumbnailFactor } from './band-cuts.mjs';
import { SharedMemoryPool } from '../runtime/shared-memory-pool.ts';
import type { PhotoWindow, SnapOptions, Stroke } from './touch-up.mjs';
import { solidInterior } from './solid-interior.mjs';

export interface CutoutPhoto {
  /** RGB at working size, 3 bytes a pixel. */
  rgb: Buffer;
  /** The photo's own transparency (one byte a pixel), which caps the cut-out's alpha; null when opaque. */
  alpha: Buffer | null;
  width: number;
  height: number;
}

interface RawRgba {
  data: Buffer;
  width: number;
  height: number;
}

export interface Cutout {
  /** Straight-alpha RGBA PNG at working size. */
  png: Promise<Buffer>;
  /**
   * The same PNG in parts, in order, each resolving as soon as it exists; joined, they are `png`. A caller
   * may write the first parts while the last are still being made. (One part now: the PNG is encoded whole.)
   */
  parts: Promise<Uint8Array>[];
  /**
   * The same pixels reduced by a whole factor (an alpha-weighted block average, band-cuts.mjs thumbnailFactor)
   * for the thumbnail: to its size where a whole factor gets near it, else to no less than its edge. Ready
   * before the PNG: the thumbnail may be made while it is encoded.
   */
  preview: Promise<RawRgba>;
  /**
   * Settles once the bands are with the threads (the mask on the grid and the cuts made): a caller about to
   * hold the event loop (the check) waits for it, so that the threads do not wait for the loop to hand them out.
   */
  started: Promise<void>;
  /** What stays see-through inside the subject once its inside is made opaque, in cut-out pixels (for the check). */
  seeThrough: Promise<SeeThrough>;
}

/** A photo handed to the writer ahead of its mask. */
export interface PreparedCutout {
  /** The writer's own copy of the photo is made (a few turns of the event loop): the caller's buffers are free again. */
  copied: Promise<void>;
  /**
   * @param low the photo reduced to edge-refine's refineGrid size (RGB), with the model's mask: reduced to that
   *   size too (`alpha`, one channel), or as the model made it (`mask`), for a writer thread to reduce
   */
  write(low: LowInputs): Cutout;
}

/** The photo on the refinement's grid, and the model's mask on it or as the model made it. */
export type LowInputs =
  { rgb: Buffer; alpha: Buffer } | { rgb: Buffer; mask: { data: Uint8Array; width: number; height: number } };

export interface CutoutWriter {
  /**
   * Takes the photo before its mask exists. Its buffers are read until `copied` resolves; the caller leaves
   * them as they are until then.
   * @param thumbEdge the long edge of the thumbnail to be made from the cut-out's `preview`
   */
  prepare(photo: CutoutPhoto, thumbEdge: number): PreparedCutout;
  close(): Promise<void>;
}

interface BandPreview {
  data: Uint8Array;
  width: number;
  height: number;
}

interface Task {
  message: Record<string, unknown>;
  /** Takes the thread's answer: resolves with what the task asked for, or rejects. */
  settle: (answer: WorkerMessage) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  task: (Task & { id: number }) | null;
}

interface Gridded {
  /** The mask on the refinement's grid, its inside made opaque (solid-interior.mjs), in memory every thread reads. */
  alpha: Uint8Array;
  /** bandCuts' answer. */
  cuts: number[];
  /** What stays see-through inside the subject (solidInterior's measure), its box on the grid. */
  seeThrough: SeeThrough;
}

/** How much of the subject's inside stays see-through in the cut-out, and where (in cut-out pixels). */
interface SeeThrough {
  share: number;
  box: { x: number; y: number; width: number; height: number } | null;
}

/** A touch-up's answer: the touched-up cut-out as PNG, its subject's box, and how many pixels changed. */
export interface TouchedUp {
  png: Buffer;
  bbox: { x: number; y: number; width: number; height: number } | null;
  changed: number;
}

type WorkerMessage = { id: number } & (
  | { type: 'band'; preview: BandPreview }
  | { type: 'touched-up'; data: Uint8Array; bbox: TouchedUp['bbox']; changed: number }
  | { type: 'png'; data: Uint8Array }
  | ({ type: 'grid' } & Gridded)
  | { type: 'failed'; message: string }
);

const bandOf = (a: WorkerMessage) => (a.type === 'band' ? a.preview : undefined);
const pngOf = (a: WorkerMessage) => (a.type === 'png' ? a.data : undefined);
const touchedUpOf = (a: WorkerMessage): TouchedUp | undefined =>
  a.type === 'touched-up'
    ? {
        png: Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength),
        bbox: a.bbox,
        changed: a.changed,
      }
    : undefined;
const gridOf = (a: WorkerMessage): Gridded | undefined =>
  a.type === 'grid' ? { alpha: a.alpha, cuts: a.cuts, seeThrough: a.seeThrough } : undefined;

/**
 * A mask already on the refinement's grid made ready for the bands as the writer's grid task makes the model's
 * (cutout-writer.worker.mjs gridMask): its inside made opaque, in memory every thread reads, and the band cuts.
 */
function solidGrid(mask: Uint8Array, width: number, height: number, reduce: number, bands: number): Gridded {
  const grid = refineGrid(width, height);
  const alpha = shared(mask);
  const { seeThrough } = solidInterior(alpha, grid.w, grid.h);
  return { alpha, cuts: bandCuts(width, height, reduce, bands, alpha), seeThrough };
}

/** A copy in memory every worker thread can read: the small grids of a photo. */
function shared(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(new SharedArrayBuffer(data.length));
  out.set(data);
  return out;
}

/** Settles after every promise has, with the first rejection if any (so that no band is left unobserved). */
async function allSettled<T>(promises: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
}

export class WorkerCutoutWriter implements CutoutWriter {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  /** Counts closes: a photo prepared before one is not written after it. */
  private generation = 0;

  /** The photos' copies the threads read. */
  private readonly memory: SharedMemoryPool;

  /**
   * @param threads worker threads, and bands a photo is cut into
   * @param idleReleaseMs the writer keeps its photos' shared copies for the next photos until idle this long
   */
  constructor(
    private readonly threads = 2,
    private readonly idleReleaseMs = 10_000,
  ) {
    // A photo's copy and its pixels, for each of the two photos a batch has in flight (one at the model
    // while the other is written).
    this.memory = new SharedMemoryPool({ maxFree: 4, idleReleaseMs });
  }

  /** Shared memory kept for the next photos' copies, in bytes. */
  sharedBytes(): number {
    return this.memory.heldBytes();
  }

  prepare(photo: CutoutPhoto, thumbEdge: number): PreparedCutout {
    const { width, height } = photo;
    const reduce = thumbnailFactor(Math.max(width, height), thumbEdge);
    // One copy in memory every thread reads, made now, a slice at a time (copyInSlices): after the model it
    // would be on the answer's path. Its memory goes back to the pool when the bands are done (a photo never
    // written leaves it to the garbage collector).
    const copies = Promise.all([
      this.memory.copyInSlices(photo.rgb),
      photo.alpha ? this.memory.copyInSlices(photo.alpha) : null,
    ]);
    copies.catch(() => undefined);
    const generation = this.generation;
    let used = false;
    return {
      copied: copies.then(() => undefined),
      write: (low) => {
        if (used) throw new Error('a prepared cut-out is written once');
        used = true;
        // The mask's reduction and the band cuts (8-11 ms for a 1024² mask) are a thread's, not the event loop's.
        const gridded: Promise<Gridded> =
          'alpha' in low
            ? Promise.resolve(solidGrid(low.alpha, width, height, reduce, this.threads))
            : this.run(gridOf, {
                type: 'grid',
                mask: low.mask.data,
                maskWidth: low.mask.width,
                maskHeight: low.mask.height,
                width,
                height,
                reduce,
                bands: this.threads,
              });
        const lowRgb = shared(low.rgb);
        const rgbaLease = this.memory.take(width * height * 4);
        const bands = Promise.all([copies, gridded]);
        const done = bands.then(([[rgbLease, alphaLease], { alpha, cuts }]) => {
          const lowShared = { rgb: lowRgb, alpha };
          // Closed while the copy was made: refused, as a photo still waiting for a thread is.
          if (this.generation !== generation) throw new Error('the cut-out writer was closed');
          const bands = cuts.slice(0, -1).map((y0, i) =>
            this.run(bandOf, {
              rgb: rgbLease.view,
              sourceAlpha: alphaLease?.view ?? null,
              rgba: rgbaLease.view,
              width,
              height,
              low: lowShared,
              y0,
              y1: cuts[i + 1],
              reduce,
            }),
          );
          const settled = allSettled(bands);
          // Every band has settled (read its rows) either way: the photo's copy may be handed out again.
          const returned = () => {
            rgbLease.release();
            alphaLease?.release();
          };
          settled.then(returned, returned);
          return settled;
        });
        // After the reaction above has handed the bands out (reactions run in the order they were added).
        const started = bands.then(() => undefined);
        started.catch(() => undefined);
        // Encoded in a writer thread (cutout-writer.worker.mjs encodePng): @napi-rs/image copies the pixels in
        // on the calling thread, 16 MB for a 2000x2000 photo, which held the event loop 30-50 ms a photo.
        const png = done.then(async () => {
          const data = await this.run(pngOf, { type: 'png', rgba: rgbaLease.view, width, height });
          return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
        });
        const encoded = () => rgbaLease.release();
        png.then(encoded, encoded);
        const preview = done.then((p) => {
          const data = Buffer.concat(p.map((b) => b.data));
          return { data, width: p[0].width, height: data.length / 4 / p[0].width };
        });
        // A caller that needs only one of the two still hears a failure through the one it awaits.
        png.catch(() => undefined);
        preview.catch(() => undefined);
        const grid = refineGrid(width, height);
        const seeThrough = gridded.then(({ seeThrough: s }) => ({
          share: s.share,
          box: s.box && scaleBox(s.box, width / grid.w, height / grid.h),
        }));
        seeThrough.catch(() => undefined);
        return { png, parts: [png], preview, started, seeThrough };
      },
    };
  }

  /** prepare and write at once, for a photo whose mask is already known. */
  write(photo: CutoutPhoto, low: LowInputs, thumbEdge: number): Cutout {
    return this.prepare(photo, thumbEdge).write(low);
  }

  /**
   * Paints a seller's strokes on a stored cut-out (its PNG, `width` x `height`) in one of the writer's threads
   * (imaging/touch-up.mjs), and encodes it as the writer encodes cut-outs. `photo`: the photo over the strokes'
   * window (strokesWindow, photoWindow).
   */
  touchUp(
    cutout: { png: Buffer; width: number; height: number },
    photo: PhotoWindow,
    strokes: Stroke[],
    snap: SnapOptions | null,
  ): Promise<TouchedUp> {
    return this.run(touchedUpOf, {
      type: 'touch-up',
      png: cutout.png,
      width: cutout.width,
      height: cutout.height,
      photo,
      strokes,
      snap,
    });
  }

  /**
   * Starts the threads and runs each through a few small photos: the refinement's loops are slow
   * until the JavaScript engine has optimised them, which would otherwise cost the first photos.
   */
  async warmUp(rounds = 3): Promise<void> {
    const width = 960;
    const height = 720;
    const photo = { rgb: Buffer.alloc(width * height * 3), alpha: null, width, height };
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) photo.rgb.set([x % 256, y % 256, 128], (y * width + x) * 3);
    }
    const grid = refineGrid(width, height);
    const low = { rgb: Buffer.alloc(grid.w * grid.h * 3, 100), alpha: Buffer.alloc(grid.w * grid.h) };
    // A soft-edged disc: subject, background and an edge band, so that every path runs.
    for (let y = 0; y < grid.h; y++) {
      for (let x = 0; x < grid.w; x++) {
        const d = Math.hypot(x - grid.w / 2, y - grid.h / 2) - grid.h / 3;
        low.alpha[y * grid.w + x] = Math.max(0, Math.min(255, Math.round(128 - d * 32)));
      }
    }
    // Every other round hands over the model's mask as it is, for a thread to reduce (its grid task): at the
    // model's size, which is larger than any refinement grid.
    const size = 1024;
    const mask = new Uint8Array(size * size);
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const d = Math.hypot(x - size / 2, y - size / 2) - size / 3;
        mask[y * size + x] = Math.max(0, Math.min(255, Math.round(128 - d * 2)));
      }
    }
    for (let i = 0; i < rounds + 1; i++) {
      const given = i % 2 ? { rgb: low.rgb, mask: { data: mask, width: size, height: size } } : low;
      const { png, preview } = this.write(photo, given, 128);
      await Promise.all([png, preview]);
    }
  }

  /** Queues a task for the next free thread; `take` reads the answer the task's kind gives. */
  private run<T>(take: (answer: WorkerMessage) => T | undefined, message: Record<string, unknown>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const settle = (answer: WorkerMessage) => {
        const result = take(answer);
        if (result !== undefined) resolve(result);
        else reject(new Error(answer.type === 'failed' ? answer.message : `unexpected ${answer.type} answer`));
      };
      this.queue.push({ message, settle, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length) {
      let slot = this.slots.find((s) => !s.task);
      if (!slot && this.slots.length < this.threads) slot = this.spawn();
      if (!slot) return;
      const task = this.queue.shift()!;
      const id = this.nextId++;
      slot.task = { ...task, id };
      slot.worker.postMessage({ ...task.message, id });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(new URL('./cutout-writer.worker.mjs', import.meta.url), { execArgv: [] });
    worker.unref();
    const slot: Slot = { worker, task: null };
    worker.on('message', (msg: WorkerMessage) => {
      const task = slot.task;
      if (!task || task.id !== msg.id) return;
      slot.task = null;
      task.settle(msg);
      this.dispatch();
    });
    const fail = (err: Error) => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      slot.task?.reject(err);
      slot.task = null;
      this.dispatch();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('a cut-out writer thread stopped')));
    this.slots.push(slot);
    return slot;
  }

  async close(): Promise<void> {
    this.generation++;
    this.memory.clear();
    const slots = this.slots.splice(0);
    for (const t of this.queue.splice(0)) t.reject(new Error('the cut-out writer was closed'));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}
