// The float16 model run as float32 (model-float32.mjs): every half converts exactly, the converted ISNet
// has no float16 left and no casts, and its mask is the float16 model's within a fraction of a grey level.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fromBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema, TensorProto_DataType } from 'onnx-buf';
import ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { float16ToFloat32, halfToFloat } from '../../../src/adapters/model-float32.mjs';
import { createSession, readModel, sessionOptions } from '../../../src/adapters/model-session.mjs';
import { modelSource } from '../../../src/adapters/mask-model.adapter.ts';
import { loadConfig } from '../../../src/config.ts';
import { letTheRunnerIn } from '../../helpers/runner.ts';

describe('halfToFloat', () => {
  it('reads IEEE 754 half-precision bits exactly', () => {
    expect(halfToFloat(0x3c00)).toBe(1);
    expect(halfToFloat(0xc000)).toBe(-2);
    expect(halfToFloat(0x3555)).toBe(0.333251953125);
    expect(halfToFloat(0x7bff)).toBe(65504);
    expect(halfToFloat(0x0001)).toBe(2 ** -24);
    expect(halfToFloat(0x03ff)).toBe(1023 * 2 ** -24);
    expect(halfToFloat(0x7c00)).toBe(Infinity);
    expect(halfToFloat(0xfc00)).toBe(-Infinity);
    expect(Number.isNaN(halfToFloat(0x7e00))).toBe(true);
    expect(Object.is(halfToFloat(0x8000), -0)).toBe(true);
  });

  it('agrees with Math.fround on every finite half (each is a float32)', () => {
    const inexact: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const v = halfToFloat(h);
      if (Number.isFinite(v) && Math.fround(v) !== v) inexact.push(h);
    }
    expect(inexact).toEqual([]);
  });
});

describe('float16ToFloat32 on ISNet medium', () => {
  const bytes = readModel(modelSource());

  it('leaves no float16 value and no cast, and the mask moves by less than one grey level', async () => {
    const converted = float16ToFloat32(bytes)!;
    const graph = fromBinary(ModelProtoSchema, converted).graph!;
    const original = fromBinary(ModelProtoSchema, bytes).graph!;
    expect(original.node.filter((n) => n.opType === 'Cast').length).toBeGreaterThan(0);
    expect(graph.node.filter((n) => n.opType === 'Cast')).toEqual([]);
    expect(graph.initializer.filter((t) => t.dataType !== TensorProto_DataType.FLOAT)).toEqual([]);
    expect(graph.initializer).toHaveLength(original.initializer.length);
    expect(graph.output.map((o) => o.name)).toEqual(original.output.map((o) => o.name));

    // The same weights: the first convolution's, widened, equal the halves they came from.
    const half = original.initializer[0];
    const wide = graph.initializer.find((t) => t.name === half.name)!;
    const halves = new Uint16Array(new Uint8Array(half.rawData).buffer);
    const floats = new Float32Array(new Uint8Array(wide.rawData).buffer);
    expect(floats).toHaveLength(halves.length);
    for (let i = 0; i < halves.length; i++) expect(floats[i]).toBe(halfToFloat(halves[i]));

    const input = new Float32Array(3 * 1024 * 1024).map((_, i) => Math.sin(i / 997) * 0.5);
    const run = async (model: Uint8Array) => {
      await letTheRunnerIn(); // each load and run holds this thread for seconds (helpers/runner.ts)
      const session = await ort.InferenceSession.create(model, sessionOptions(2, true, 'extended'));
      await letTheRunnerIn();
      const out = await session.run({ input: new ort.Tensor('float32', input, [1, 3, 1024, 1024]) }, ['output']);
      await session.release();
      return out.output.data as Float32Array;
    };
    const [a, b] = [await run(bytes), await run(converted)];
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
    expect(worst).toBeGreaterThan(0); // float16 arithmetic rounds; float32 does less of it
    expect(worst).toBeLessThan(2 / 255);
  }, 120_000);

  it('answers null for a model with no float16 weights', () => {
    expect(float16ToFloat32(float16ToFloat32(bytes)!)).toBeNull();
  });
});

describe('the float32 setting', () => {
  it('is on by default, off for the low-memory setting, and MATTE_MODEL_FLOAT32 decides either way', () => {
    expect(loadConfig({}).modelFloat32).toBe(true);
    expect(loadConfig({ MATTE_LOW_MEMORY: '1' }).modelFloat32).toBe(false);
    expect(loadConfig({ MATTE_MODEL_FLOAT32: '0' }).modelFloat32).toBe(false);
    expect(loadConfig({ MATTE_LOW_MEMORY: '1', MATTE_MODEL_FLOAT32: '1' }).modelFloat32).toBe(true);
  });

  it('createSession caches the float32 copy by default, and the model as stored when asked', async () => {
    const bytes = readModel(modelSource());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-float32-'));
    try {
      const casts = async (float32: boolean) => {
        const before = new Set(fs.readdirSync(dir));
        await letTheRunnerIn(); // the load holds this thread for seconds (helpers/runner.ts)
        await (
          await createSession(ort, bytes, { threads: 1, optimization: 'basic', cacheDir: dir, float32 })
        ).release();
        const [made] = fs.readdirSync(dir).filter((f) => !before.has(f));
        const graph = fromBinary(ModelProtoSchema, fs.readFileSync(path.join(dir, made))).graph!;
        return graph.node.filter((n) => n.opType === 'Cast').length;
      };
      expect(await casts(true)).toBe(0);
      expect(await casts(false)).toBeGreaterThan(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
