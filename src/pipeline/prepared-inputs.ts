// The first step of a photo (decode, and the model's input made from it), started early when the
// process that received the upload also runs the worker: POST /v1/images decodes while the batch is
// created, the photo stored and queued, instead of after the worker claims it. The same decode is the
// intake's check that the file is whole (prepare's answer), so the photo is not decoded a second time
// for it. A process-local head start and nothing more: entries are found by the bytes' SHA-256, so a
// worker that claims the photo in another process, or after the entry expired, decodes as it always
// does and gets the same result.
import { createHash } from 'node:crypto';
import type { DecodedImage, ImageCodec } from '../adapters/image-codec.adapter.ts';
import { MODEL_INPUT_SIZE } from '../adapters/mask-model.adapter.ts';

export interface PreparedInput {
  decoded: DecodedImage;
  /** The photo squeezed to the model's square input, RGB. */
  modelInput: Buffer;
}

/** Decode and model input, as every photo starts. */
export async function prepareInput(codec: ImageCodec, input: Buffer): Promise<PreparedInput> {
  const decoded = await codec.decode(input);
  return { decoded, modelInput: await codec.toModelInput(decoded, MODEL_INPUT_SIZE) };
}

interface Entry {
  result: Promise<PreparedInput>;
  readable: Promise<void>;
  timer: NodeJS.Timeout;
}

export class PreparedInputs {
  private readonly entries = new Map<string, Entry>();

  /**
   * @param maxEntries decoded photos held at once (a 4096 px photo is about 50 MB decoded); a new one beyond it is not prepared
   * @param ttlMs how long an entry waits to be taken
   */
  constructor(
    private readonly codec: ImageCodec,
    private readonly opts: { maxEntries: number; ttlMs: number } = { maxEntries: 2, ttlMs: 30_000 },
  ) {}

  /**
   * Starts decoding `input`, unless it is already being prepared or the room is full. Answers whether
   * the photo decodes (it rejects with the decode's PhotoError, as ImageCodec.decode would), settled
   * as soon as the decode is, before the model's input is made; undefined when it was not prepared.
   */
  prepare(input: Buffer): Promise<void> | undefined {
    const key = keyOf(input);
    const known = this.entries.get(key);
    if (known) return known.readable;
    if (this.entries.size >= this.opts.maxEntries) return undefined;
    const decoded = this.codec.decode(input);
    const result = decoded.then(async (d) => ({ decoded: d, modelInput: await this.codec.toModelInput(d, MODEL_INPUT_SIZE) }));
    const readable = decoded.then(() => undefined);
    // A failure is the taker's to hear (it would have failed the same way); nobody may be listening.
    result.catch(() => undefined);
    readable.catch(() => undefined);
    const timer = setTimeout(() => this.entries.delete(key), this.opts.ttlMs);
    timer.unref();
    this.entries.set(key, { result, readable, timer });
    return readable;
  }

  /** The prepared result for these bytes, once (the entry is removed), or undefined. */
  take(input: Buffer): Promise<PreparedInput> | undefined {
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
