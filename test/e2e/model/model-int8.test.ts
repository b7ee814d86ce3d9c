// The int8 pass (model-int8.mjs) on a small model built here: the quantized model computes what the float
// one does within the quantization's steps, onnxruntime fuses every quantized convolution into QLinearConv
// (the Relu taken out), and a calibration made for other weights is refused. And on the shipped ISNet: the
// committed calibration is for these weights, and a model it was not made for runs in float.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  AttributeProtoSchema,
  AttributeProto_AttributeType,
  GraphProtoSchema,
  ModelProtoSchema,
  NodeProtoSchema,
  OperatorSetIdProtoSchema,
  TensorProtoSchema,
  TensorProto_DataType as DT,
  TensorShapeProtoSchema,
  TensorShapeProto_DimensionSchema,
  TypeProtoSchema,
  TypeProto_TensorSchema,
  ValueInfoProtoSchema,
} from 'onnx-buf';
import ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { activationParams, quantizedValues, quantizeInt8, withOutputs } from '../../../src/adapters/model-int8.mjs';
import {
  INT8_CALIBRATION_FILE,
  modelPrecision,
  readModel,
  runnableModel,
} from '../../../src/adapters/model-session.mjs';
import { modelSource } from '../../../src/adapters/mask-model.adapter.ts';
import { withOnlyOutput } from '../../../src/adapters/model-outputs.mjs';
import { loadConfig, modelDescription } from '../../../src/config.ts';
import { ImageDecoder } from '../../../src/adapters/images/decoder.ts';
import { fillModelInput } from '../../../src/imaging/model-io.mjs';
import { evalEntries, evalFile } from '../../../tools/shared-data.ts';
import { letTheRunnerIn } from '../../helpers/runner.ts';

const SIZE = 16;

function valueInfo(name: string, dims: number[]) {
  const shape = create(TensorShapeProtoSchema, {
    dim: dims.map((d) => create(TensorShapeProto_DimensionSchema, { value: { case: 'dimValue', value: BigInt(d) } })),
  });
  return create(ValueInfoProtoSchema, {
    name,
    type: create(TypeProtoSchema, {
      value: { case: 'tensorType', value: create(TypeProto_TensorSchema, { elemType: DT.FLOAT, shape }) },
    }),
  });
}

/** A deterministic pseudo-random sequence. */
function* noise(seed: number) {
  let s = seed;
  for (;;) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    yield s / 2 ** 31 - 0.5;
  }
}

/** An attribute: a list of integers, or a string. */
const attr = (name: string, value: number[] | string) =>
  typeof value === 'string'
    ? create(AttributeProtoSchema, {
        name,
        type: AttributeProto_AttributeType.STRING,
        s: new TextEncoder().encode(value),
      })
    : create(AttributeProtoSchema, { name, type: AttributeProto_AttributeType.INTS, ints: value.map(BigInt) });
const node = (opType: string, input: string[], output: string, attribute: ReturnType<typeof attr>[] = []) =>
  create(NodeProtoSchema, { opType, input, output: [output], name: output, attribute });

/**
 * input [1,3,16,16] → Conv 8 → Relu → MaxPool 2 → Conv 8 → Relu → Concat with a Resize of it → Conv 1 → Sigmoid
 * → output: the kinds of value ISNet's convolutions read (a Relu's, a MaxPool's, a Concat's) and write.
 */
function smallModel(): Uint8Array {
  const rand = noise(7);
  const weights = (name: string, dims: number[], scale: number) =>
    create(TensorProtoSchema, {
      name,
      dataType: DT.FLOAT,
      dims: dims.map(BigInt),
      rawData: new Uint8Array(
        Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => rand.next().value! * scale).buffer,
      ),
    });
  const ints = (name: string, values: number[]) =>
    create(TensorProtoSchema, {
      name,
      dataType: DT.INT64,
      dims: [BigInt(values.length)],
      int64Data: values.map(BigInt),
    });
  const floats = (name: string, values: number[]) =>
    create(TensorProtoSchema, { name, dataType: DT.FLOAT, dims: [BigInt(values.length)], floatData: values });
  const conv = (input: string, w: string, b: string, output: string) =>
    node('Conv', [input, w, b], output, [attr('pads', [1, 1, 1, 1])]);
  const graph = create(GraphProtoSchema, {
    name: 'small',
    input: [valueInfo('input', [1, 3, SIZE, SIZE])],
    output: [valueInfo('output', [1, 1, SIZE / 2, SIZE / 2])],
    initializer: [
      weights('w1', [8, 3, 3, 3], 0.8),
      weights('b1', [8], 1),
      weights('w2', [8, 8, 3, 3], 0.4),
      weights('b2', [8], 1),
      weights('w3', [1, 16, 3, 3], 0.3),
      weights('b3', [1], 1),
      floats('scales', [1, 1, 1, 1]),
      ints('pool', [2, 2]),
    ],
    node: [
      conv('input', 'w1', 'b1', 'c1'),
      node('Relu', ['c1'], 'r1'),
      node('MaxPool', ['r1'], 'p1', [attr('kernel_shape', [2, 2]), attr('strides', [2, 2])]),
      conv('p1', 'w2', 'b2', 'c2'),
      node('Relu', ['c2'], 'r2'),
      node('Resize', ['r2', '', 'scales'], 'z2', [attr('mode', 'nearest')]),
      node('Concat', ['r2', 'z2'], 'cat', [
        create(AttributeProtoSchema, { name: 'axis', type: AttributeProto_AttributeType.INT, i: 1n }),
      ]),
      conv('cat', 'w3', 'b3', 'c3'),
      node('Sigmoid', ['c3'], 'output'),
    ],
  });
  return toBinary(
    ModelProtoSchema,
    create(ModelProtoSchema, {
      irVersion: 8n,
      opsetImport: [create(OperatorSetIdProtoSchema, { domain: '', version: 15n })],
      graph,
    }),
  );
}

const inputs = (seed: number, count: number) => {
  const rand = noise(seed);
  return Array.from({ length: count }, () => Float32Array.from({ length: 3 * SIZE * SIZE }, () => rand.next().value!));
};

async function run(model: Uint8Array, input: Float32Array, names = ['output'], level: 'disabled' | 'all' = 'all') {
  await letTheRunnerIn(); // a load and a run hold this thread (helpers/runner.ts)
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: level, intraOpNumThreads: 1 });
  const out = await session.run({ input: new ort.Tensor('float32', input, [1, 3, SIZE, SIZE]) }, names);
  await session.release();
  return out;
}

/** Ranges as tools/model-calibrate.ts takes them (here the extremes: a few inputs, no rare outliers). */
async function calibrate(model: Uint8Array) {
  const names = [...quantizedValues(fromBinary(ModelProtoSchema, model).graph!).values];
  const ranges: Record<string, [number, number]> = Object.fromEntries(names.map((n) => [n, [Infinity, -Infinity]]));
  for (const input of inputs(1, 8)) {
    const out = await run(withOutputs(model, names), input, names, 'disabled');
    for (const n of names) {
      const data = out[n].data as Float32Array;
      ranges[n] = [Math.min(ranges[n][0], ...data), Math.max(ranges[n][1], ...data)];
    }
  }
  return { model: 'test', quantizer: 1, ranges };
}

describe('withOnlyOutput', () => {
  /** smallModel with two more outputs: a value the mask is made from (r1), and a side branch nothing else reads. */
  function withSideOutputs(): Uint8Array {
    const model = fromBinary(ModelProtoSchema, smallModel());
    const graph = model.graph!;
    graph.node.push(create(NodeProtoSchema, { opType: 'Sigmoid', input: ['c2'], output: ['side'], name: 'side' }));
    graph.output.push(valueInfo('side', [1, 8, SIZE / 2, SIZE / 2]), valueInfo('r1', [1, 8, SIZE, SIZE]));
    return toBinary(ModelProtoSchema, model);
  }

  it('keeps the one output and every node it is made from, and takes out the rest', async () => {
    const model = withSideOutputs();
    const cut = withOnlyOutput(model, 'output')!;
    const graph = fromBinary(ModelProtoSchema, cut).graph!;
    expect(graph.output.map((o) => o.name)).toEqual(['output']);
    expect(graph.node.map((n) => n.name)).toEqual(
      fromBinary(ModelProtoSchema, smallModel()).graph!.node.map((n) => n.name),
    );
    for (const input of inputs(3, 2)) {
      const a = (await run(model, input, ['output', 'side', 'r1'])).output.data as Float32Array;
      const b = (await run(cut, input)).output.data as Float32Array;
      expect(b).toEqual(a);
    }
  });

  it('leaves a model alone that has that output alone, or not at all', () => {
    expect(withOnlyOutput(smallModel(), 'output')).toBeNull();
    expect(withOnlyOutput(withSideOutputs(), 'mask')).toBeNull();
  });
});

describe('quantizeInt8', () => {
  it('quantizes every convolution that reads a Relu, a MaxPool or a Concat, and takes the Relus out', () => {
    const graph = fromBinary(ModelProtoSchema, smallModel()).graph!;
    const { convs, values } = quantizedValues(graph);
    expect(convs.map((c) => c.output[0])).toEqual(['c1', 'c2', 'c3']);
    expect([...values].sort()).toEqual(['c3', 'cat', 'input', 'p1', 'r1', 'r2'].sort());
  });

  it('computes what the float model does, within the steps of the quantization', async () => {
    const model = smallModel();
    const calibration = await calibrate(model);
    const quantized = quantizeInt8(model, calibration);
    const graph = fromBinary(ModelProtoSchema, quantized).graph!;
    expect(graph.node.filter((n) => n.opType === 'Relu')).toEqual([]);
    expect(
      graph.initializer
        .filter((t) => t.dataType === DT.INT8)
        .map((t) => t.name)
        .sort(),
    ).toEqual(['w1/int8', 'w1/int8_zero', 'w2/int8', 'w2/int8_zero', 'w3/int8', 'w3/int8_zero'].sort());
    for (const input of inputs(2, 4)) {
      const a = (await run(model, input)).output.data as Float32Array;
      const b = (await run(quantized, input)).output.data as Float32Array;
      let worst = 0;
      let sum = 0;
      for (let i = 0; i < a.length; i++) {
        worst = Math.max(worst, Math.abs(a[i] - b[i]));
        sum += Math.abs(a[i] - b[i]);
      }
      expect(worst).toBeGreaterThan(0); // it is quantized
      // Three layers of random weights at 7 bits and activations at 8: 0.0005-0.0009 on average, 0.025 at
      // worst, here; biases quantized 20% off made the average 0.006-0.008.
      expect(worst).toBeLessThan(0.04);
      expect(sum / a.length).toBeLessThan(0.002);
    }
  });

  it('is computed by the fused QLinearConv as the QDQ graph says, within a step of each layer', async () => {
    const model = smallModel();
    const calibration = await calibrate(model);
    const quantized = quantizeInt8(model, calibration);
    // The Sigmoid's slope is at most 1/4: a step of its input moves the output by a quarter step at most.
    const step = activationParams(calibration.ranges.c3).scale;
    for (const input of inputs(3, 4)) {
      const reference = (await run(quantized, input, ['output'], 'disabled')).output.data as Float32Array;
      const fused = (await run(quantized, input, ['output'], 'all')).output.data as Float32Array;
      let worst = 0;
      for (let i = 0; i < reference.length; i++) worst = Math.max(worst, Math.abs(reference[i] - fused[i]));
      expect(worst).toBeLessThanOrEqual(step);
    }
  });

  it('is fused by onnxruntime into QLinearConv, one for each quantized convolution', async () => {
    const model = smallModel();
    const quantized = quantizeInt8(model, await calibrate(model));
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'matte-int8-')), 'optimised.onnx');
    const session = await ort.InferenceSession.create(quantized, {
      graphOptimizationLevel: 'all',
      optimizedModelFilePath: file,
    });
    await session.release();
    const ops = fromBinary(ModelProtoSchema, fs.readFileSync(file)).graph!.node.map((n) => n.opType);
    expect(ops.filter((o) => o === 'QLinearConv')).toHaveLength(3);
    expect(ops).not.toContain('Conv');
    expect(ops).not.toContain('FusedConv');
    // The MaxPool's and the Resize's outputs are quantized as their inputs: both run on the uint8 values here
    // (ISNet's bilinear Resizes stay in float), and the Concat of a value with its Resize is fused too. The one
    // value dequantized is the last convolution's, for the Sigmoid.
    expect(ops).toContain('NhwcMaxPool');
    expect(ops).toContain('QLinearConcat');
    expect(ops).not.toContain('Concat');
    expect(ops.filter((o) => o === 'DequantizeLinear')).toHaveLength(1);
  });

  it('quantizes a residual Add of two quantized values, which onnxruntime fuses into QLinearAdd', async () => {
    // smallModel with the Concat reading r2 + p1 (both quantized: a convolution's and a MaxPool's) for the Resize.
    const residual = fromBinary(ModelProtoSchema, smallModel());
    const nodes = residual.graph!.node;
    nodes.splice(
      nodes.findIndex((n) => n.opType === 'Concat'),
      0,
      create(NodeProtoSchema, { opType: 'Add', input: ['r2', 'p1'], output: ['sum'], name: 'sum' }),
    );
    nodes.find((n) => n.opType === 'Concat')!.input[1] = 'sum';
    const model = toBinary(ModelProtoSchema, residual);
    expect(quantizedValues(residual.graph!).values).toContain('sum');
    const quantized = quantizeInt8(model, await calibrate(model));
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'matte-int8-')), 'optimised.onnx');
    await (
      await ort.InferenceSession.create(quantized, { graphOptimizationLevel: 'all', optimizedModelFilePath: file })
    ).release();
    const ops = fromBinary(ModelProtoSchema, fs.readFileSync(file)).graph!.node.map((n) => n.opType);
    expect(ops).toContain('QLinearAdd');
    expect(ops).not.toContain('Add');
  });

  it("rewrites the mask's head (a float 3x3 convolution to one channel) as taps, places and a sum: the same output", async () => {
    // input [1,16,8,8] → Conv to 1 channel → Resize x2 → Sigmoid, the Conv read by a Shape too, as ISNet's heads
    // are: quantizedValues leaves it in float. Without the rewrite the graph would be Conv, Shape, Resize, Sigmoid.
    const rand = noise(11);
    const w = Float32Array.from({ length: 16 * 9 }, () => rand.next().value! * 0.5);
    const t = (name: string, dataType: number, dims: number[], data: ArrayBufferView<ArrayBuffer>) =>
      create(TensorProtoSchema, {
        name,
        dataType,
        dims: dims.map(BigInt),
        rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      });
    const head = toBinary(
      ModelProtoSchema,
      create(ModelProtoSchema, {
        irVersion: 8n,
        opsetImport: [create(OperatorSetIdProtoSchema, { domain: '', version: 15n })],
        graph: create(GraphProtoSchema, {
          name: 'head',
          input: [valueInfo('input', [1, 16, 8, 8])],
          output: [valueInfo('output', [1, 1, 16, 16])],
          initializer: [
            t('w', DT.FLOAT, [1, 16, 3, 3], w),
            t('b', DT.FLOAT, [1], new Float32Array([0.3])),
            t('scales', DT.FLOAT, [4], new Float32Array([1, 1, 2, 2])),
          ],
          node: [
            node('Conv', ['input', 'w', 'b'], 'side', [attr('kernel_shape', [3, 3]), attr('pads', [1, 1, 1, 1])]),
            node('Shape', ['side'], 'shape'),
            node('Resize', ['side', '', 'scales'], 'up', [attr('mode', 'linear')]),
            node('Sigmoid', ['up'], 'output'),
          ],
        }),
      }),
    );
    expect(quantizedValues(fromBinary(ModelProtoSchema, head).graph!).convs).toEqual([]);
    const rewritten = quantizeInt8(head, { model: 'test', quantizer: 4, ranges: {} });
    const ops = fromBinary(ModelProtoSchema, rewritten).graph!.node.map((x) => x.opType);
    expect(ops).toEqual(['Conv', 'Conv', 'ReduceSum', 'Add', 'Shape', 'Resize', 'Sigmoid']);
    const rand2 = noise(12);
    for (let k = 0; k < 3; k++) {
      const input = Float32Array.from({ length: 16 * 64 }, () => rand2.next().value! * 4);
      const tensor = new ort.Tensor('float32', input, [1, 16, 8, 8]);
      const outputs = await Promise.all(
        [head, rewritten].map(async (m) => {
          const s = await ort.InferenceSession.create(m, { graphOptimizationLevel: 'all', intraOpNumThreads: 1 });
          const out = (await s.run({ input: tensor })).output.data as Float32Array;
          await s.release();
          return out;
        }),
      );
      const worst = outputs[0].reduce((m, v, i) => Math.max(m, Math.abs(v - outputs[1][i])), 0);
      expect(worst).toBeLessThan(1e-5);
      expect(outputs[0].some((v) => v > 0.6) && outputs[0].some((v) => v < 0.4)).toBe(true); // not flat
    }
  });

  it('reads weights from a Node Buffer that is a view of a larger one (a model read from a file)', async () => {
    const model = smallModel();
    const calibration = await calibrate(model);
    const pooled = Buffer.concat([Buffer.alloc(3, 1), Buffer.from(model)]).subarray(3);
    expect(quantizeInt8(pooled, calibration)).toEqual(quantizeInt8(model, calibration));
  });

  it('rounds the weights alone, or the activations alone, when asked (bench:int8-ablation measures each)', async () => {
    const model = smallModel();
    const calibration = await calibrate(model);
    const ops = (m: Uint8Array) => fromBinary(ModelProtoSchema, m).graph!.node.map((n) => n.opType);
    const initializers = (m: Uint8Array) => fromBinary(ModelProtoSchema, m).graph!.initializer;
    const largest = (m: Uint8Array) =>
      Math.max(
        ...initializers(m).flatMap((t) =>
          t.name.endsWith('/int8') ? [...new Int8Array(t.rawData.slice().buffer)].map(Math.abs) : [],
        ),
      );

    // The weights alone: read through DequantizeLinear, the activations not quantized, the Relus kept, the biases float.
    const weightsOnly = quantizeInt8(model, calibration, { activations: false });
    expect(ops(weightsOnly)).not.toContain('QuantizeLinear');
    expect(ops(weightsOnly).filter((o) => o === 'Relu')).toHaveLength(2);
    expect(ops(weightsOnly).filter((o) => o === 'DequantizeLinear')).toHaveLength(3);
    expect(initializers(weightsOnly).map((t) => t.name)).toEqual(expect.arrayContaining(['b1', 'b2', 'b3']));
    expect(largest(weightsOnly)).toBe(64);
    expect(largest(quantizeInt8(model, calibration, { activations: false, weightLevels: 127 }))).toBe(127);
    // The activations alone: the float weights and biases read as they are.
    const activationsOnly = quantizeInt8(model, calibration, { weights: false });
    expect(initializers(activationsOnly).filter((t) => t.dataType === DT.INT8 || t.dataType === DT.INT32)).toEqual([]);
    expect(ops(activationsOnly).filter((o) => o === 'QuantizeLinear')).toHaveLength(
      ops(quantizeInt8(model, calibration)).filter((o) => o === 'QuantizeLinear').length,
    );
    // Each still computes the float model, nearer than both roundings together. Compared as the graphs say, without
    // onnxruntime's rewrites: with them, the activations-only graph (quantize-dequantize pairs before float
    // convolutions) runs through kernels that differ by CPU, 12 times further off on an AVX2-only EPYC than as written.
    for (const input of inputs(4, 2)) {
      const a = (await run(model, input, ['output'], 'disabled')).output.data as Float32Array;
      const distance = async (m: Uint8Array) => {
        const b = (await run(m, input, ['output'], 'disabled')).output.data as Float32Array;
        return a.reduce((sum, v, i) => sum + Math.abs(v - b[i]), 0) / a.length;
      };
      const both = await distance(quantizeInt8(model, calibration));
      expect(await distance(weightsOnly)).toBeGreaterThan(0);
      expect(await distance(weightsOnly)).toBeLessThan(both);
      expect(await distance(activationsOnly)).toBeGreaterThan(0);
      expect(await distance(activationsOnly)).toBeLessThanOrEqual(both);
    }
  });

  it("stores wide convolutions' weights off zero for onnxruntime's matrix path: the same integers, the same outputs", async () => {
    const model = smallModel();
    const calibration = await calibrate(model);
    const symmetric = quantizeInt8(model, calibration);
    // c1 and c2 have 8 output channels, c3 one: only the first two are stored one step off.
    const matrix = quantizeInt8(model, calibration, { matrixPathFrom: 8 });
    const tensors = (m: Uint8Array) =>
      new Map(
        fromBinary(ModelProtoSchema, m).graph!.initializer.map((t) => [
          t.name,
          new Int8Array(t.rawData.slice().buffer),
        ]),
      );
    const [a, b] = [tensors(symmetric), tensors(matrix)];
    for (const w of ['w1', 'w2', 'w3']) {
      const zero = w === 'w3' ? 0 : 1;
      expect(
        [...b.get(`${w}/int8_zero`)!].every((z) => z === zero),
        w,
      ).toBe(true);
      expect([...b.get(`${w}/int8`)!].map((q) => q - zero)).toEqual([...a.get(`${w}/int8`)!]);
    }
    // At 127 levels a step up would overflow int8: the step is down.
    const wide = tensors(quantizeInt8(model, calibration, { weightLevels: 127, matrixPathFrom: 8 }));
    expect([...wide.get('w1/int8_zero')!].every((z) => z === -1)).toBe(true);
    expect(Math.min(...wide.get('w1/int8')!)).toBeGreaterThanOrEqual(-128);
    // onnxruntime fuses both into QLinearConv and computes the same outputs, bit for bit.
    for (const input of inputs(5, 3)) {
      const x = (await run(symmetric, input)).output.data as Float32Array;
      const y = (await run(matrix, input)).output.data as Float32Array;
      expect(Buffer.from(y.buffer).equals(Buffer.from(x.buffer))).toBe(true);
    }
  });

  it('refuses a calibration with no range for a value it quantizes (one made for other weights)', async () => {
    const model = smallModel();
    const calibration = await calibrate(model);
    delete (calibration.ranges as Record<string, unknown>).p1;
    expect(() => quantizeInt8(model, calibration)).toThrow(/no range for p1/);
  });
});

describe('the int8 model of the shipped weights', () => {
  const bytes = readModel(modelSource());

  it('is the default; MATTE_MODEL_INT8=0 runs the float model, and the start line says which runs', () => {
    expect(loadConfig({}).modelInt8).toBe(true);
    expect(loadConfig({ MATTE_MODEL_INT8: '1' }).modelInt8).toBe(true);
    expect(loadConfig({ MATTE_MODEL_INT8: '0' }).modelInt8).toBe(false);
    expect(modelDescription(loadConfig({}))).toMatch(/^the int8 model/);
    expect(modelDescription(loadConfig({ MATTE_MODEL_INT8: '0' }))).toMatch(/^the float model/);
    expect(modelDescription(loadConfig({ MATTE_MODEL_PATH: '/models/mine.onnx' }))).toContain('/models/mine.onnx');
    expect(modelPrecision(bytes, { int8: true })).toBe('int8');
    expect(modelPrecision(bytes, { int8: false })).toBe('float32');
    expect(modelPrecision(bytes, { int8: false, float32: false })).toBe('stored');
  });

  it('is made only for the weights its calibration was taken from: another model runs in float', () => {
    const other = smallModel();
    expect(modelPrecision(other, { int8: true })).toBe('float32');
    expect(runnableModel(other, { int8: true })).toBe(other);
  });

  it('quantizes 107 of the 114 convolutions that make the mask with the committed calibration: the mask head (split in two) and the six it names stay float', async () => {
    await letTheRunnerIn(); // the quantization holds this thread for seconds (helpers/runner.ts)
    const calibration = JSON.parse(fs.readFileSync(INT8_CALIBRATION_FILE, 'utf8')) as { float: string[] };
    expect(calibration.float).toHaveLength(6);
    const graph = fromBinary(ModelProtoSchema, runnableModel(bytes, { int8: true })).graph!;
    const ops = graph.node.map((n) => n.opType);
    // The five side masks are cut out (withOnlyOutput): their heads, Resizes and Sigmoids are gone.
    expect(graph.output.map((o) => o.name)).toEqual(['output']);
    expect(ops.filter((o) => o === 'Sigmoid')).toHaveLength(1);
    // The head's one convolution is two here (its taps, and their places), and its sum a ReduceSum.
    expect(ops.filter((o) => o === 'Conv')).toHaveLength(115);
    expect(ops.filter((o) => o === 'ReduceSum')).toHaveLength(1);
    // No tensor is left that nothing reads (onnxruntime would warn of each at every load).
    const read = new Set(graph.node.flatMap((n) => n.input));
    expect(graph.initializer.filter((t) => !read.has(t.name)).map((t) => t.name)).toEqual([]);
    expect(graph.initializer.filter((t) => t.dataType === DT.INT8 && t.name.endsWith('/int8'))).toHaveLength(107);
    // A convolution kept in float reads its float weights, and keeps its Relu; every other Relu was taken out.
    const floatWeights = new Set(graph.initializer.filter((t) => t.dataType === DT.FLOAT).map((t) => t.name));
    for (const name of calibration.float) {
      const conv = graph.node.find((n) => n.opType === 'Conv' && n.output[0] === name)!;
      expect(floatWeights.has(conv.input[1]), name).toBe(true);
      expect(graph.node.some((n) => n.opType === 'Relu' && n.input[0] === name)).toBe(true);
    }
    expect(ops.filter((o) => o === 'Relu')).toHaveLength(6);
  }, 60_000);

  it('stores its 28 widest convolutions for the matrix path where asked (CPUs with AMX-INT8): the same mask', async () => {
    await letTheRunnerIn(); // each quantization holds this thread for seconds (helpers/runner.ts)
    const symmetric = runnableModel(bytes, { int8: true, matrixPath: false });
    await letTheRunnerIn();
    const matrix = runnableModel(bytes, { int8: true, matrixPath: true });
    await letTheRunnerIn();
    const zeros = fromBinary(ModelProtoSchema, matrix).graph!.initializer.filter((t) => t.name.endsWith('/int8_zero'));
    expect(zeros.filter((t) => t.rawData.some((z) => z !== 0))).toHaveLength(28);
    expect(zeros.filter((t) => t.rawData.every((z) => z === 1) && t.dims[0] >= 256n)).toHaveLength(28);
    // An eval photo's input through both, as the service's session runs them.
    const decoder = new ImageDecoder(100_000_000);
    const entry = evalEntries().filter((e) => e.kind === 'product')[0];
    const rgb = (await decoder.toModelInput(await decoder.decode(evalFile(entry.image)), 1024)).rgb;
    const input = new Float32Array(3 * 1024 * 1024);
    fillModelInput(rgb, input);
    const outputs = [];
    for (const model of [symmetric, matrix]) {
      await letTheRunnerIn(); // ISNet's load and run hold this thread for seconds (helpers/runner.ts)
      const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all', intraOpNumThreads: 2 });
      await letTheRunnerIn();
      const out = await session.run({ input: new ort.Tensor('float32', input, [1, 3, 1024, 1024]) });
      outputs.push(Buffer.from((out.output.data as Float32Array).buffer));
      await session.release();
    }
    expect(outputs[1].equals(outputs[0])).toBe(true);
  }, 120_000);
});
