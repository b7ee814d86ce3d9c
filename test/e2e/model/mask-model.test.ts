// The model adapter with the real ISNet weights (the package ships them; no eval data needed), in float, read
// from the test servers' model cache: a prediction's shape, a wrong-sized input refused as a rejection, a photo
// run at its own aspect ratio (MATTE_MODEL_ASPECT), and a closed model refusing work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MODEL_INPUT_SIZE,
  OnnxMaskModel,
  squareInput,
  type ModelInput,
} from '../../../src/adapters/mask-model.adapter.ts';
import { loadConfig, modelRunOptions } from '../../../src/config.ts';

/**
 * The float model, run as the server runs it (from the test servers' model cache). Not the int8 one: with free sizes it is optimised at `extended`
 * (model-session.mjs), which rounds a square photo's mask up to 38 grey levels apart from the fixed int8 model at
 * `all`; at the same level the two are the same to the grey level.
 */
const FLOAT = { modelPath: '', ...modelRunOptions(loadConfig({ ...process.env, MATTE_MODEL_INT8: '0' })) };

describe('ONNX mask model', () => {
  let model: OnnxMaskModel;
  beforeAll(async () => {
    model = new OnnxMaskModel(FLOAT);
    await model.ready();
  });
  afterAll(() => model?.close());

  it('answers a 1024x1024 one-channel mask with its statistics; a wrong-sized input is a rejection, not a throw', async () => {
    const rgb = Buffer.alloc(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE * 3, 200);
    const p = await model.predict(squareInput(rgb));
    expect(p.mask.length).toBe(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE);
    expect(p.histogram.reduce((a, b) => a + b, 0)).toBe(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE);
    expect(p.runMs).toBeGreaterThan(0);
    let refused: Promise<unknown> | undefined;
    expect(() => (refused = model.predict(squareInput(Buffer.alloc(10))))).not.toThrow();
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
    const alone = (await model.predict(squareInput(disc))).mask;
    const mine = Buffer.from(disc);
    const first = model.predict(squareInput(mine));
    mine.fill(0); // the caller's buffer is its own again at once
    const second = model.predict(squareInput(square)); // queued behind the first, in its own memory
    const [a, b] = await Promise.all([first, second]);
    expect(Buffer.compare(a.mask, alone)).toBe(0);
    expect(Buffer.compare(b.mask, alone)).not.toBe(0);
    // The first photo's memory serves the next one: the same answer again.
    expect(Buffer.compare((await model.predict(squareInput(disc))).mask, alone)).toBe(0);
  });

  it("runs a photo at its own aspect ratio where asked: a 3:2 photo at 1024 x 672, its mask stretched square; the same mask as the fixed model's for a square photo; closed, it refuses further photos", async () => {
    const aspect = new OnnxMaskModel({ ...FLOAT, freeSize: true });
    try {
      await aspect.ready();
      expect(aspect.inputSize(1500, 1000)).toEqual({ width: 1024, height: 672 });
      expect(aspect.inputSize(600, 2000)).toEqual({ width: 320, height: 1024 });
      expect(aspect.inputSize(800, 800)).toEqual({ width: 1024, height: 1024 });
      // The fixed model takes only its square.
      expect(model.inputSize(1500, 1000)).toEqual({ width: 1024, height: 1024 });
      const disc = (width: number, height: number): ModelInput => {
        const rgb = Buffer.alloc(width * height * 3, 250);
        for (let y = 0; y < height; y++)
          for (let x = 0; x < width; x++)
            if (Math.hypot((x - width / 2) / width, (y - height / 2) / height) < 0.3)
              rgb.fill(40, (y * width + x) * 3, (y * width + x) * 3 + 3);
        return { rgb, width, height };
      };
      const wide = await aspect.predict(disc(1024, 672));
      expect(wide.mask.length).toBe(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE);
      // The ellipse, stretched square, is the disc it was squeezed from: centred, about 0.6 of each side.
      expect(wide.bbox!.width / MODEL_INPUT_SIZE).toBeCloseTo(0.6, 1);
      expect(wide.bbox!.height / MODEL_INPUT_SIZE).toBeCloseTo(0.6, 1);
      expect(Math.abs(wide.bbox!.x + wide.bbox!.width / 2 - 512)).toBeLessThan(16);
      expect(Math.abs(wide.bbox!.y + wide.bbox!.height / 2 - 512)).toBeLessThan(16);
      const square = disc(1024, 1024);
      const [free, fixed] = await Promise.all([aspect.predict(square), model.predict(square)]);
      let most = 0;
      for (let i = 0; i < free.mask.length; i++) most = Math.max(most, Math.abs(free.mask[i] - fixed.mask[i]));
      expect(most).toBeLessThanOrEqual(1);
      // Larger than the square, or of the wrong length, is refused; so is any other size by the fixed model.
      await expect(aspect.predict({ rgb: Buffer.alloc(1056 * 672 * 3), width: 1056, height: 672 })).rejects.toThrow(
        /at most 1024x1024 RGB/,
      );
      await expect(aspect.predict({ rgb: Buffer.alloc(10), width: 1024, height: 672 })).rejects.toThrow(/RGB/);
      await expect(model.predict(disc(1024, 672))).rejects.toThrow(/1024x1024 RGB/);
    } finally {
      await aspect.close();
    }
    await expect(aspect.predict(squareInput(Buffer.alloc(MODEL_INPUT_SIZE * MODEL_INPUT_SIZE * 3)))).rejects.toThrow(
      /closed|exited/,
    );
    // Loads a second model (the freed one), then runs three photos: longer than one photo's limit.
  }, 180_000);
});
