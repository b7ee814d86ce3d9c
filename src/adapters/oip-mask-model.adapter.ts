// The model on an inference server that speaks the Open Inference Protocol (KServe v2, NVIDIA Triton's HTTP
// API): MATTE_INFERENCE_URL=http://host:port/v2/models/NAME. Tensors travel with Triton's binary tensor
// extension (a JSON header, then raw little-endian bytes), so the 12 MB input is not written as JSON.
// Readiness and metadata are checked at start; each call has a timeout and retries with backoff and
// jitter; a circuit breaker stops calling a backend that keeps failing. Failures become the spec's photo
// error codes, and their messages never name the backend.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { PhotoError, type ItemErrorCode } from '../errors.ts';
import { fillModelInput, maskFromOutput } from '../imaging/model-io.mjs';
import {
  MODEL_INPUT_SIZE,
  SQUARE_INPUT,
  type MaskModel,
  type MaskPrediction,
  type ModelInput,
} from './mask-model.adapter.ts';

export interface OipOptions {
  /** `http://host:port/v2/models/NAME` (a version may follow: `/versions/1`). */
  url: string;
  timeoutMs?: number;
  /** Retries of a call that failed for the backend's reasons (connection, 5xx, timeout). */
  retries?: number;
  /** Consecutive failures that open the circuit, and how long it stays open. */
  breakerThreshold?: number;
  breakerCooldownMs?: number;
  fetch?: typeof fetch;
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const INPUT = 'input';
const OUTPUT = 'output';
const SIZE = MODEL_INPUT_SIZE;

/** What is said to sellers: never the backend's name or address. */
const MESSAGES = {
  REMOTE_UNAVAILABLE:
    'The segmentation service is not reachable just now; nothing was charged. Re-run the photo later.',
  REMOTE_RATE_LIMIT: 'The segmentation service asked us to slow down; nothing was charged. Re-run the photo later.',
  REMOTE_AUTH: 'The segmentation service refused our credentials; nothing was charged. The operator has been told.',
  REMOTE_CREDIT: 'The segmentation service has no credit left; nothing was charged. The operator has been told.',
  REMOTE_BAD_INPUT: 'The segmentation service refused this photo as input; nothing was charged.',
  REMOTE_NOT_CONFIGURED: 'No segmentation service is set up for this tier; nothing was charged.',
} satisfies Partial<Record<ItemErrorCode, string>>;

function remoteError(code: keyof typeof MESSAGES): PhotoError {
  return new PhotoError(code, MESSAGES[code], code === 'REMOTE_BAD_INPUT');
}

/** The photo error for an HTTP status of the backend. */
function errorForStatus(status: number): PhotoError {
  if (status === 429) return remoteError('REMOTE_RATE_LIMIT');
  if (status === 401 || status === 403) return remoteError('REMOTE_AUTH');
  if (status === 402) return remoteError('REMOTE_CREDIT');
  if (status === 400 || status === 413 || status === 422) return remoteError('REMOTE_BAD_INPUT');
  return remoteError('REMOTE_UNAVAILABLE');
}

/** Opens after `threshold` failures in a row; stays open `cooldownMs`, then lets one call try (half open). */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private trial = false;

  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
    private readonly clock: () => number,
  ) {}

  get state(): 'closed' | 'open' | 'half-open' {
    if (this.failures < this.threshold) return 'closed';
    return this.clock() < this.openUntil ? 'open' : 'half-open';
  }

  /** Whether a call may go now (in half-open, only one at a time). */
  allow(): boolean {
    const state = this.state;
    if (state === 'closed') return true;
    if (state === 'open' || this.trial) return false;
    this.trial = true;
    return true;
  }

  success(): void {
    this.failures = 0;
    this.trial = false;
  }

  failure(): void {
    this.trial = false;
    this.failures++;
    if (this.failures >= this.threshold) this.openUntil = this.clock() + this.cooldownMs;
  }
}

/** A tensor as the protocol's JSON describes it (model metadata, an infer request's or answer's header). */
const TensorMeta = Type.Object({
  name: Type.String(),
  datatype: Type.Optional(Type.String()),
  shape: Type.Optional(Type.Array(Type.Integer())),
  parameters: Type.Optional(
    Type.Object({
      binary_data_size: Type.Optional(Type.Integer({ minimum: 0 })),
      binary_data: Type.Optional(Type.Boolean()),
    }),
  ),
  data: Type.Optional(Type.Array(Type.Number())),
});
/** What the JSON of model metadata, an infer request and an infer answer have in common: their tensors. */
const Tensors = Type.Object({
  inputs: Type.Optional(Type.Array(TensorMeta)),
  outputs: Type.Optional(Type.Array(TensorMeta)),
});
export type Tensors = Static<typeof Tensors>;

/** The tensors of a protocol JSON document, or undefined when it is not one. */
export const tensorsOf = (json: unknown): Tensors | undefined => (Value.Check(Tensors, json) ? json : undefined);

/** Splits a binary-extension body: the JSON header (its length in Inference-Header-Content-Length), then the tensors' bytes. */
export function readInferBody(headerLength: number | null, body: Buffer): { header: unknown; binary: Buffer } {
  if (headerLength === null) return { header: JSON.parse(body.toString('utf8')), binary: Buffer.alloc(0) };
  return { header: JSON.parse(body.subarray(0, headerLength).toString('utf8')), binary: body.subarray(headerLength) };
}

export class OipMaskModel implements MaskModel {
  private readonly base: string;
  private readonly fetch: typeof fetch;
  private readonly breaker: CircuitBreaker;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly input = new Float32Array(3 * SIZE * SIZE);
  private checked: Promise<void> | null = null;

  constructor(private readonly options: OipOptions) {
    this.base = options.url.replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
    this.breaker = new CircuitBreaker(
      options.breakerThreshold ?? 5,
      options.breakerCooldownMs ?? 10_000,
      options.clock ?? Date.now,
    );
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  get circuit(): 'closed' | 'open' | 'half-open' {
    return this.breaker.state;
  }

  /** The model answers ready, with an `input` FP32 [1,3,1024,1024] and an `output` of 1024² values. */
  ready(): Promise<void> {
    this.checked ??= (async () => {
      const ready = await this.fetch(`${this.base}/ready`, { signal: AbortSignal.timeout(5000) });
      if (!ready.ok) throw new Error(`the inference server's model is not ready (HTTP ${ready.status})`);
      const meta = tensorsOf(await (await this.fetch(this.base, { signal: AbortSignal.timeout(5000) })).json());
      const input = meta?.inputs?.find((t) => t.name === INPUT);
      const output = meta?.outputs?.find((t) => t.name === OUTPUT);
      if (!input || input.datatype !== 'FP32' || input.shape?.slice(-3).join() !== `3,${SIZE},${SIZE}`)
        throw new Error(`the inference server's model has no FP32 input "${INPUT}" of [1,3,${SIZE},${SIZE}]`);
      if (!output || output.shape?.slice(-2).join() !== `${SIZE},${SIZE}`)
        throw new Error(`the inference server's model has no output "${OUTPUT}" of ${SIZE}x${SIZE}`);
    })();
    this.checked.catch(() => (this.checked = null));
    return this.checked;
  }

  /** The inference server's model is declared [1,3,1024,1024] (checked at start): photos go to it square. */
  inputSize(): { width: number; height: number } {
    return SQUARE_INPUT;
  }

  async predict({ rgb, width, height }: ModelInput): Promise<MaskPrediction> {
    if (width !== SIZE || height !== SIZE || rgb.length !== SIZE * SIZE * 3)
      throw new Error(`model input must be ${SIZE}x${SIZE} RGB`);
    fillModelInput(rgb, this.input);
    const bytes = Buffer.from(this.input.buffer, this.input.byteOffset, this.input.byteLength);
    const header = Buffer.from(
      JSON.stringify({
        inputs: [
          { name: INPUT, shape: [1, 3, SIZE, SIZE], datatype: 'FP32', parameters: { binary_data_size: bytes.length } },
        ],
        outputs: [{ name: OUTPUT, parameters: { binary_data: true } }],
      }),
    );
    const body = Buffer.concat([header, bytes]);
    const retries = this.options.retries ?? 2;
    for (let attempt = 0; ; attempt++) {
      if (!this.breaker.allow()) throw remoteError('REMOTE_UNAVAILABLE');
      const started = performance.now();
      let error: PhotoError;
      try {
        const res = await this.fetch(`${this.base}/infer`, {
          method: 'POST',
          headers: {
            'content-type': 'application/octet-stream',
            'inference-header-content-length': String(header.length),
          },
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
        });
        const answer = Buffer.from(await res.arrayBuffer());
        if (res.ok) {
          const prediction = this.parse(res, answer);
          this.breaker.success();
          return { ...prediction, runMs: performance.now() - started };
        }
        error = errorForStatus(res.status);
      } catch (err) {
        error = err instanceof PhotoError ? err : remoteError('REMOTE_UNAVAILABLE');
      }
      // The backend's own trouble counts against it; a refusal of this request (auth, credit, input) does not.
      const transient = error.code === 'REMOTE_UNAVAILABLE';
      if (transient) this.breaker.failure();
      else this.breaker.success();
      if (!transient || attempt >= retries) throw error;
      await this.sleep(Math.random() * 200 * 2 ** attempt);
    }
  }

  private parse(res: Response, answer: Buffer): Omit<MaskPrediction, 'runMs'> {
    const length = res.headers.get('inference-header-content-length');
    const { header, binary } = readInferBody(length === null ? null : Number(length), answer);
    const outputs = tensorsOf(header)?.outputs ?? [];
    let offset = 0;
    for (const out of outputs) {
      const size = out.parameters?.binary_data_size;
      if (out.name === OUTPUT) {
        if (out.datatype !== 'FP32') throw remoteError('REMOTE_BAD_INPUT');
        let values: Float32Array;
        if (size !== undefined) {
          const slice = binary.subarray(offset, offset + size);
          values = new Float32Array(slice.buffer.slice(slice.byteOffset, slice.byteOffset + slice.byteLength));
        } else values = Float32Array.from(out.data ?? []);
        if (values.length !== SIZE * SIZE) throw remoteError('REMOTE_UNAVAILABLE');
        const { mask, histogram, bbox } = maskFromOutput(values, SIZE);
        return { mask: Buffer.from(mask.buffer, mask.byteOffset, mask.byteLength), histogram, bbox };
      }
      offset += size ?? 0;
    }
    throw remoteError('REMOTE_UNAVAILABLE');
  }

  threadIds(): number[] {
    return [];
  }

  async close(): Promise<void> {}
}
