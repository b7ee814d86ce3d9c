// CutoutWriter: a photo's cut-out, refined at full resolution and written as PNG, in bands of rows
// that worker threads make side by side (cutout-writer.worker.mjs). A photo is handed over in two
// steps: prepare, while the model makes its mask (each thread lays its band out as if fully opaque:
// the bulk of the PNG rows, which needs the photo alone), and write, once the mask is known (each
// thread refines its band's edges, makes the rows that differ final and deflates them); this side
// joins the bands into one PNG (png-strips.mjs). A band is written by the thread that prepared it.
import { Worker } from 'node:worker_threads';
import { joinBands } from './png-strips.mjs';
import { refineGrid } from './edge-refine.mjs';

export interface CutoutPhoto {
  /** RGB at working size, 3 bytes a pixel. */
  rgb: Buffer;
  /** The photo's own transparency (one byte a pixel), which caps the cut-out's alpha; null when opaque. */
  alpha: Buffer | null;
  width: number;
  height: number;
}

export interface RawRgba {
  data: Buffer;
  width: number;
  height: number;
}

export interface Cutout {
  /** Straight-alpha RGBA PNG at working size. */
  png: Promise<Buffer>;
  /**
   * The same pixels reduced by a whole factor (an alpha-weighted block average) to no less than the
   * thumbnail's edge, for the thumbnail. Ready before the PNG: the thumbnail is made while it is deflated.
   */
  preview: Promise<RawRgba>;
}

/** A photo handed to the writer ahead of its mask. */
export interface PreparedCutout {
  /** @param low the photo and the model's mask reduced to edge-refine's refineGrid size (RGB, and one channel) */
  write(low: { rgb: Buffer; alpha: Buffer }): Cutout;
  /** Frees what was prepared when the photo ends without a cut-out (the model failed). */
  discard(): void;
  /** Settles when the rows' layout is ready (true) or will not be used (false: none made, failed, or written without it). */
  laidOut: Promise<boolean>;
}

export interface CutoutWriter {
  /**
   * Starts on the photo before its mask exists.
   * @param thumbEdge the long edge of the thumbnail to be made from the cut-out's `preview`
   */
  prepare(photo: CutoutPhoto, thumbEdge: number): PreparedCutout;
  close(): Promise<void>;
}

interface BandResult {
  idat: Uint8Array;
  adler: number;
  length: number;
}

interface BandPreview {
  data: Uint8Array;
  width: number;
  height: number;
}

/** A band laid out as if fully opaque (cutout-band.mjs OpaqueBand). */
interface Layout {
  lines: Uint8Array;
  rowSums: Uint16Array;
}

interface Task {
  message: Record<string, unknown>;
  /** Checked when the task's turn comes: true drops it unrun (it settles with null). */
  stale?: () => boolean;
  transfer?: ArrayBuffer[];
  onPreview?: (p: BandPreview) => void;
  resolve: (r: unknown) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker | null;
  task: (Task & { id: number }) | null;
  queue: Task[];
}

type WorkerMessage = { id: number } & (
  | { type: 'preview'; preview: BandPreview }
  | ({ type: 'band' } & BandResult)
  | { type: 'laid'; layouts: Layout[] }
  | { type: 'failed'; message: string }
);

/** A copy in memory every worker thread can read: one copy for all the bands of a photo. */
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
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

export class WorkerCutoutWriter implements CutoutWriter {
  private readonly writers: Slot[];
  /** One thread at the lowest priority lays out photos while the model runs: it takes only what the model leaves idle. */
  private readonly layout: Slot = { worker: null, task: null, queue: [] };
  private nextId = 1;

  /** @param threads worker threads that write, and bands a photo is cut into */
  constructor(private readonly threads = 2) {
    this.writers = Array.from({ length: threads }, (): Slot => ({ worker: null, task: null, queue: [] }));
  }

  prepare(photo: CutoutPhoto, thumbEdge: number): PreparedCutout {
    const { width, height } = photo;
    const reduce = Math.max(1, Math.floor(Math.max(width, height) / thumbEdge));
    // One copy in memory every thread reads, made now: after the model it would be on the answer's path.
    const rgb = shared(photo.rgb);
    const sourceAlpha = photo.alpha ? shared(photo.alpha) : null;
    // Bands of whole thumbnail blocks, as even as that allows; never an empty one.
    const blocks = Math.ceil(height / reduce);
    const count = Math.min(this.threads, blocks);
    const cuts = Array.from({ length: count + 1 }, (_, i) => Math.min(height, Math.round((blocks * i) / count) * reduce));
    const bands = cuts.slice(0, -1).map((y0, i) => ({ y0, y1: cuts[i + 1] }));
    // Only an opaque photo's rows can be laid out before its mask (cutout-band.mjs). The layouts are
    // used if they are ready when the mask is; a writer lays out a band itself otherwise.
    let layouts: Layout[] | null = null;
    let used = false;
    const laidOut = sourceAlpha
      ? Promise.resolve(false)
      : // Dropped unrun when the photo was written before the layout's turn came: under load the
        // queue holds only photos still waiting for their mask.
        this.run(this.layout, { type: 'layout', rgb, width, bands, reduce }, undefined, [], () => used).then(
          (laid) => {
            if (used || !laid) return false;
            layouts = laid as Layout[];
            return true;
          },
          () => false,
        );
    return {
      laidOut,
      write: (low) => {
        if (used) throw new Error('a prepared cut-out is written once');
        used = true;
        const lowShared = { rgb: shared(low.rgb), alpha: shared(low.alpha) };
        const previews: Promise<BandPreview>[] = [];
        const written = bands.map((band, i) => {
          let onPreview!: (p: BandPreview) => void;
          let previewFailed!: (e: Error) => void;
          previews.push(new Promise<BandPreview>((resolve, reject) => ((onPreview = resolve), (previewFailed = reject))));
          const layout = layouts?.[i];
          const message = { ...band, type: 'write', rgb, width, height, reduce, sourceAlpha, low: lowShared, last: i === count - 1, layout };
          const transfer = layout ? [layout.lines.buffer as ArrayBuffer, layout.rowSums.buffer as ArrayBuffer] : [];
          const result = this.run(this.writers[i % this.threads], message, onPreview, transfer) as Promise<BandResult>;
          result.catch(previewFailed);
          return result;
        });
        layouts = null;
        const png = allSettled(written).then((b) => joinBands(width, height, b));
        const preview = allSettled(previews).then((p) => {
          const data = Buffer.concat(p.map((b) => b.data));
          return { data, width: p[0].width, height: data.length / 4 / p[0].width };
        });
        // A caller that needs only one of the two still hears a failure through the one it awaits.
        png.catch(() => undefined);
        preview.catch(() => undefined);
        return { png, preview };
      },
      discard: () => {
        used = true;
        layouts = null;
      },
    };
  }

  /** prepare and write at once, for a photo whose mask is already known. */
  write(photo: CutoutPhoto, low: { rgb: Buffer; alpha: Buffer }, thumbEdge: number): Cutout {
    return this.prepare(photo, thumbEdge).write(low);
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
    for (let i = 0; i < rounds; i++) {
      const { png, preview } = this.write(photo, low, 128);
      await Promise.all([png, preview]);
    }
  }

  private run(slot: Slot, message: Record<string, unknown>, onPreview?: (p: BandPreview) => void, transfer: ArrayBuffer[] = [], stale?: () => boolean): Promise<unknown> {
    return new Promise((resolve, reject) => {
      slot.queue.push({ message, transfer, onPreview, resolve, reject, stale });
      this.dispatch(slot);
    });
  }

  private dispatch(slot: Slot): void {
    while (!slot.task && slot.queue[0]?.stale?.()) slot.queue.shift()!.resolve(null);
    if (slot.task || !slot.queue.length) return;
    const worker = slot.worker ?? this.spawn(slot);
    const task = slot.queue.shift()!;
    const id = this.nextId++;
    slot.task = { ...task, id };
    worker.postMessage({ ...task.message, id }, task.transfer ?? []);
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(new URL('./cutout-writer.worker.mjs', import.meta.url), { execArgv: [] });
    worker.unref();
    slot.worker = worker;
    worker.on('message', (msg: WorkerMessage) => {
      const task = slot.task;
      if (!task || task.id !== msg.id) return;
      if (msg.type === 'preview') {
        task.onPreview?.(msg.preview);
        return;
      }
      slot.task = null;
      if (msg.type === 'band') task.resolve(msg);
      else if (msg.type === 'laid') task.resolve(msg.layouts);
      else task.reject(new Error(msg.message));
      this.dispatch(slot);
    });
    const fail = (err: Error) => {
      if (slot.worker !== worker) return;
      // A new thread takes the slot's next task.
      slot.worker = null;
      slot.task?.reject(err);
      slot.task = null;
      this.dispatch(slot);
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('a cut-out writer thread stopped')));
    return worker;
  }

  async close(): Promise<void> {
    const workers: Worker[] = [];
    for (const slot of [...this.writers, this.layout]) {
      for (const t of slot.queue.splice(0)) t.reject(new Error('the cut-out writer was closed'));
      if (slot.worker) workers.push(slot.worker);
    }
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
