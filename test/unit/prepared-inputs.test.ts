// The decode head start of POST /v1/images: found by the bytes, taken once, bounded in number and time.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ImageDecoder } from '../../src/adapters/images/decoder.ts';
import { prepareInput, PreparedInputs } from '../../src/pipeline/prepared-inputs.ts';
import sharp from 'sharp';
import { cmykJpeg, exifRotated, png16, productPhoto, transparentPng, truncatedJpeg } from '../helpers/images.ts';
import { MODEL_INPUT_SIZE } from '../../src/adapters/mask-model.adapter.ts';

const decoder = new ImageDecoder(100_000_000);

describe('prepared inputs', () => {
  afterEach(() => vi.useRealTimers());

  it('gives what decoding would, to the first taker of the same bytes only', async () => {
    const photo = await productPhoto(320, 200);
    const cache = new PreparedInputs(decoder);
    const readable = cache.prepare(photo);
    // Already under way: not decoded twice, and the same answer to whether it decodes.
    expect(cache.prepare(photo)).toBe(readable);
    expect(cache.size).toBe(1);
    await expect(readable).resolves.toBeUndefined();
    expect(cache.take(await productPhoto(321, 200))).toBeUndefined();
    const taken = cache.take(Buffer.from(photo))!;
    const plain = prepareInput(decoder, photo);
    const [decoded, modelInput] = await Promise.all([taken.decoded, taken.modelInput]);
    expect(decoded.rgb.equals((await plain.decoded).rgb)).toBe(true);
    expect(modelInput.equals(await plain.modelInput)).toBe(true);
    expect([decoded.width, decoded.height]).toEqual([320, 200]);
    expect(cache.take(photo)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("makes the model's input straight from a plain file, the same bytes as from its decode, and leaves other files to the decode", async () => {
    const fromDecode = async (file: Buffer) => decoder.toModelInput(await decoder.decode(file), MODEL_INPUT_SIZE);
    // Larger and smaller than the model's input, JPEG, PNG, WebP and a palette PNG.
    for (const file of [
      await productPhoto(2000, 1500),
      await productPhoto(300, 200),
      await sharp(await productPhoto(1100, 900))
        .png()
        .toBuffer(),
      await productPhoto(700, 500, 'webp'),
      await sharp(await productPhoto(640, 480))
        .png({ palette: true })
        .toBuffer(),
    ]) {
      const direct = await decoder.modelInputFrom(file, MODEL_INPUT_SIZE);
      expect(direct).not.toBeNull();
      expect(direct!.equals(await fromDecode(file))).toBe(true);
    }
    // Where one pipeline would come out different (rotation, 16 bits) or the decode does more (alpha, CMYK, the working-size cap).
    const wide = await sharp({ create: { width: 4200, height: 300, channels: 3, background: '#808080' } })
      .jpeg()
      .toBuffer();
    for (const file of [await exifRotated(), await png16(), await transparentPng(), await cmykJpeg(), wide])
      expect(await decoder.modelInputFrom(file, MODEL_INPUT_SIZE)).toBeNull();
    await expect(decoder.modelInputFrom(await truncatedJpeg(), MODEL_INPUT_SIZE)).rejects.toMatchObject({
      code: 'INVALID_IMAGE',
    });
  });

  it("answers that a plain file decodes as soon as the model's input is made from it; any other file when its decode is done", async () => {
    // A codec whose full decode waits to be let go: what prepare answers, and when, can be seen.
    let finishDecode!: () => void;
    const decodeDone = new Promise<void>((resolve) => (finishDecode = resolve));
    const real = await decoder.decode(await productPhoto(64, 48));
    const fake = (direct: Buffer | null) =>
      ({
        modelInputFrom: async () => direct,
        decode: async () => {
          await decodeDone;
          return real;
        },
        toModelInput: async () => Buffer.from('from the decode'),
      }) as unknown as ImageDecoder;
    const settled = (p: Promise<unknown>) =>
      Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))]);

    const plain = new PreparedInputs(fake(Buffer.from('straight from the file')));
    const photo = await productPhoto(80, 60);
    expect(await settled(plain.prepare(photo)!)).toBe(true);
    const taken = plain.take(photo)!;
    expect((await taken.modelInput).toString()).toBe('straight from the file');
    expect(await settled(taken.decoded)).toBe(false);

    const other = new PreparedInputs(fake(null));
    const readable = other.prepare(photo)!;
    expect(await settled(readable)).toBe(false);
    finishDecode();
    expect(await settled(readable)).toBe(true);
    expect((await other.take(photo)!.modelInput).toString()).toBe('from the decode');
    expect(await settled(taken.decoded)).toBe(true);
  });

  it('holds at most maxEntries, forgets after ttlMs, and drops on request', async () => {
    vi.useFakeTimers();
    const cache = new PreparedInputs(decoder, { maxEntries: 2, ttlMs: 1000 });
    const photos = await Promise.all([productPhoto(64, 48), productPhoto(65, 48), productPhoto(66, 48)]);
    const answers = photos.map((p) => cache.prepare(p));
    expect(cache.size).toBe(2);
    // Not prepared for want of room: the caller checks the photo itself.
    expect(answers[2]).toBeUndefined();
    expect(cache.take(photos[2])).toBeUndefined();
    cache.drop(photos[1]);
    expect(cache.size).toBe(1);
    vi.advanceTimersByTime(1001);
    expect(cache.size).toBe(0);
    expect(cache.take(photos[0])).toBeUndefined();
  });

  it("a photo that cannot be decoded fails prepare's check and its taker as decoding would, and never unhandled", async () => {
    const bad = await truncatedJpeg();
    const cache = new PreparedInputs(decoder);
    // prepare's answer is intake's check that the file is whole: it fails as the decode does.
    await expect(cache.prepare(bad)).rejects.toMatchObject({ code: 'INVALID_IMAGE' });
    const taken = cache.take(bad)!;
    await expect(taken.modelInput).rejects.toMatchObject({ code: 'INVALID_IMAGE' });
    await expect(taken.decoded).rejects.toMatchObject({ code: 'INVALID_IMAGE' });
    // Prepared and never taken, its answer ignored: the rejection is observed inside, nothing is thrown at the process.
    void cache.prepare(bad);
    await new Promise((r) => setTimeout(r, 200));
    cache.drop(bad);
  });
});
