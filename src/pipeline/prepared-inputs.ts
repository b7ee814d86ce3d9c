// The first step of a photo (decode, and the model's input), started early when the process that
// received the upload also runs the worker: POST /v1/images decodes while the batch is created, the
// photo stored and queued, instead of after the worker claims it. The same decoding is the intake's
// check that the file is whole (prepare's answer), so the photo is not decoded again for it. A
// process-local head start and nothing more: entries are found by the bytes' SHA-256, so a worker that
// claims the photo in another process, or after the entry expired, decodes as it always does and gets
// the same result.
import { createHash } from 'node:crypto';
import type { DecodedImage, ImageDecoder } from '../adapters/images/decoder.ts';
import { SQUARE_INPUT, type ModelInput } from '../adapters/mask-model.adapter.ts';

/** A photo's first step, under way: the model may start as soon as its input is there, before the decode is. */
export interface PreparedInput {
  /** The photo at the model's input size (MaskModel.inputSize), RGB. */
  modelInput: Promise<ModelInput>;
  decoded: Promise<DecodedImage>;
}

/** The size a model reads a photo of `width` x `height` at (MaskModel.inputSize). */
export type InputSize = (width: number, height: number) => { width: number; height: number };

/** Decode, and the model's input made from it, as every photo starts (nothing decoded twice). */
export function prepareInput(
  decoder: ImageDecoder,
  input: Buffer,
  inputSize: InputSize = () => SQUARE_INPUT,
): PreparedInput {
  const decoded = decoder.decode(input);
  return observed({
    decoded,
    modelInput: decoded.then((d) => decoder.toModelInput(d, inputSize(d.width, d.height))),
  });
}

/** Failures are the taker's to hear; nobody may be listening to one of the two. */
function observed(p: PreparedInput): PreparedInput {
  p.decoded.catch(() => undefined);
  p.modelInput.catch(() => undefined);
  return p;
}

interface Entry {
  result: PreparedInput;
  readable: Promise<void>;
  timer: NodeJS.Timeout;
}

export class PreparedInputs {
  private readonly entries = new Map<string, Entry>();

  /**
   * @param maxEntries decoded photos held at once (a 4096 px photo is about 50 MB decoded); a new one beyond it is not prepared
   * @param ttlMs how long an entry waits to be taken
   */
  /** @param inputSize the light model's (MaskModel.inputSize); a photo that runs on another model is sized again for it */
  constructor(
    private readonly decoder: ImageDecoder,
    private readonly opts: { maxEntries: number; ttlMs: number } = { maxEntries: 2, ttlMs: 30_000 },
    private readonly inputSize: InputSize = () => SQUARE_INPUT,
  ) {}

  /**
   * Starts decoding `input`, unless it is already being prepared or the room is full. Answers whether
   * the photo decodes (it rejects with the decode's PhotoError, as ImageDecoder.decode would);
   * undefined when it was not prepared.
   * The model's input is made from the decode, as in the worker: making it straight from the file beside
   * the decode, as until 2026-11-28, had it ready no sooner (a 2000x2000 JPEG: 51-53 ms either way) for
   * a second decode of the file, 28-33 ms of CPU (docs/performance.md).
   */
  prepare(input: Buffer): Promise<void> | undefined {
    const key = keyOf(input);
    const known = this.entries.get(key);
    if (known) return known.readable;
    if (this.entries.size >= this.opts.maxEntries) return undefined;
    const result = prepareInput(this.decoder, input, this.inputSize);
    const readable = result.decoded.then(() => undefined);
    readable.catch(() => undefined);
    const timer = setTimeout(() => this.entries.delete(key), this.opts.ttlMs);
    timer.unref();
    this.entries.set(key, { result, readable, timer });
    return readable;
  }

  /** The prepared result for these bytes, once (the entry is removed), or undefined. */
  take(input: Buffer): PreparedInput | undefined {
    const key = keyOf(input);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.forget(key, entry);
    return entry.result;
  }

  /** Drops what was prepared for these bytes (the upload was refused). */
  drop(input: Buffer): void {
    const key = keyOf(input);
    const entry = this.entries.get(key);
    if (entry) this.forget(key, entry);
  }

  get size(): number {
    return this.entries.size;
  }

  private forget(key: string, entry: Entry): void {
    clearTimeout(entry.timer);
    this.entries.delete(key);
  }
}

function keyOf(input: Buffer): string {
  return createHash('sha256').update(input).digest('base64');
}
