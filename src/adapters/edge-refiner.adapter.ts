// EdgeRefiner: refines the upsampled mask at the photo's own resolution and decontaminates edge
// colours (edge-refine.mjs), in one worker thread, one photo at a time. Started lazily, unref'd.
import { Worker } from 'node:worker_threads';

export interface RefinedEdges {
  alpha: Buffer;
  rgb: Buffer;
}

export interface EdgeRefiner {
  /** `low`: the photo and alpha at refineGrid's size (see edge-refine.mjs), when the caller has them. */
  refine(rgb: Buffer, alpha: Buffer | null, width: number, height: number, low?: { rgb: Buffer; alpha: Buffer }): Promise<RefinedEdges>;
  close(): Promise<void>;
}

type Pending = { resolve: (r: RefinedEdges) => void; reject: (e: Error) => void };

export class WorkerEdgeRefiner implements EdgeRefiner {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./edge-refine.worker.mjs', import.meta.url), { execArgv: [] });
    worker.unref();
    worker.on('message', (msg: { id: number; ok: boolean; alpha?: Uint8Array; rgb?: Uint8Array; message?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve({ alpha: Buffer.from(msg.alpha!.buffer, msg.alpha!.byteOffset, msg.alpha!.length), rgb: Buffer.from(msg.rgb!.buffer, msg.rgb!.byteOffset, msg.rgb!.length) });
      else p.reject(new Error(msg.message));
    });
    worker.on('error', (err) => this.failAll(err));
    worker.on('exit', () => {
      this.worker = undefined;
      this.failAll(new Error('the edge refinement worker stopped'));
    });
    this.worker = worker;
    return worker;
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  refine(rgb: Buffer, alpha: Buffer | null, width: number, height: number, low?: { rgb: Buffer; alpha: Buffer }): Promise<RefinedEdges> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Copies go to the worker (the caller keeps its buffers); the answers come back transferred.
      const rgbCopy = new Uint8Array(rgb);
      const alphaCopy = alpha ? new Uint8Array(alpha) : null;
      worker.postMessage({ id, rgb: rgbCopy, alpha: alphaCopy, width, height, low }, alphaCopy ? [rgbCopy.buffer, alphaCopy.buffer] : [rgbCopy.buffer]);
    });
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
