// The decode head start of POST /v1/images: found by the bytes, taken once, bounded in number and time.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ImageDecoder } from '../../src/adapters/images/decoder.ts';
import { prepareInput, PreparedInputs } from '../../src/pipeline/prepared-inputs.ts';
import { productPhoto, truncatedJpeg } from '../helpers/images.ts';

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
    expect(modelInput.rgb.equals((await plain.modelInput).rgb)).toBe(true);
    expect([decoded.width, decoded.height]).toEqual([320, 200]);
    expect(cache.take(photo)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('answers that a file decodes when its decode is done, and makes the model input from that decode', async () => {
    // A codec whose decode waits to be let go: what prepare answers, and when, can be seen.
    let finishDecode!: () => void;
    const decodeDone = new Promise<void>((resolve) => (finishDecode = resolve));
    const real = await decoder.decode(await productPhoto(64, 48));
    const fake = {
      decode: async () => {
        await decodeDone;
        return real;
      },
      toModelInput: async () => Buffer.from('from the decode'),
    } as unknown as ImageDecoder;
    const settled = (p: Promise<unknown>) =>
      Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))]);
    const cache = new PreparedInputs(fake);
    const photo = await productPhoto(80, 60);
    const readable = cache.prepare(photo)!;
    expect(await settled(readable)).toBe(false);
    finishDecode();
    expect(await settled(readable)).toBe(true);
    expect((await cache.take(photo)!.modelInput).toString()).toBe('from the decode');
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
