// A float32 ONNX model's convolutions quantized statically to 8 bits, in the QDQ form onnxruntime fuses into
// QLinearConv: per output channel int8 weights, uint8 activations with ranges calibrated on photos
// (model-int8.calibration.json, written by `npm run model -- calibrate`). It is the default light model: against
// the drawn masks it cuts as well as float (`npm run bench -- int8-gate`, docs/performance.md, "int8").
//
// What the pass does, convolution by convolution (all but the side outputs' heads, which feed a Resize and a
// Sigmoid, one whose output is the model's, and any the calibration names as kept in float):
//  - its input is read through QuantizeLinear → DequantizeLinear, with the input's calibrated range;
//  - its weights become int8, one scale per output channel, in [-64, 64] (7 bits and a sign: on CPUs with
//    AVX2 but no VNNI the u8 x s8 products of two taps must not saturate 16 bits), read through a
//    DequantizeLinear (on CPUs with AMX-INT8, the widest convolutions' integers are stored one step up with
//    zero point 1, the same values: MATRIX_PATH_CHANNELS); its bias becomes int32 at the input's scale times
//    the weights';
//  - its output is quantized with the range of what follows it. A Relu that is its only reader is taken out:
//    a uint8 quantization whose zero is at 0 clamps at 0 already, and onnxruntime fuses Conv → Q only.
// Between the convolutions: a residual Add of two quantized values is quantized with its own calibrated range
// (QLinearAdd), and a MaxPool's or a Resize's output at its input's levels (quantizer 3; 2 had the latter
// alone). The mask's head, left in float, is rewritten so that it computes one channel, not sixteen (quantizer 4:
// splitHead). Every reader of a quantized value reads it through a DequantizeLinear of its own, so the float
// operators left (the Resizes, some Concats) see the values the convolutions see. Parsed and written with
// onnx-buf, like model-float32.mjs. Plain JavaScript: the model's worker thread imports it.
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  AttributeProtoSchema,
  AttributeProto_AttributeType,
  ModelProtoSchema,
  NodeProtoSchema,
  TensorProtoSchema,
  TensorProto_DataType,
  TypeProtoSchema,
  TypeProto_TensorSchema,
  ValueInfoProtoSchema,
} from 'onnx-buf';

const DT = TensorProto_DataType;
/** The int8 weights' largest magnitude (reduced range, see above). */
const WEIGHT_LEVELS = 64;
/** Changes whenever the pass makes a different model from the same inputs: part of the cached model's name. */
export const QUANTIZER_VERSION = 4;

/**
 * @typedef {{ model: string, quantizer: number, float?: string[], ranges: Record<string, [number, number]> }} Calibration
 *   `model`: sha256 of the model bytes as shipped (float16); `float`: convolutions (by output name) kept in
 *   float; `ranges`: each quantized value's range
 */

/**
 * The values the pass quantizes, and the convolutions it quantizes.
 * @param {import('onnx-buf').GraphProto} graph
 * @param {Iterable<string>} [keepFloat] convolutions (by their output's name) left in float
 */
export function quantizedValues(graph, keepFloat = []) {
  const kept = new Set(keepFloat);
  /** @type {Map<string, import('onnx-buf').NodeProto[]>} */
  const readers = new Map();
  for (const node of graph.node) for (const name of node.input) readers.set(name, [...(readers.get(name) ?? []), node]);
  /** @type {import('onnx-buf').NodeProto[]} */
  const convs = [];
  /** @type {Map<import('onnx-buf').NodeProto, import('onnx-buf').NodeProto>} a convolution → the Relu taken out after it */
  const reluAfter = new Map();
  const values = new Set();
  const outputs = new Set(graph.output.map((o) => o.name));
  for (const node of graph.node) {
    if (node.opType !== 'Conv' || kept.has(node.output[0])) continue;
    const after = readers.get(node.output[0]) ?? [];
    // A side output's head: read by Shape and Resize on its way to a Sigmoid; one channel, left in float.
    // So is a convolution whose output is the model's: onnxruntime fuses a convolution read by its Q alone.
    if (after.some((n) => n.opType === 'Shape') || outputs.has(node.output[0])) continue;
    convs.push(node);
    values.add(node.input[0]);
    if (after.length === 1 && after[0].opType === 'Relu') {
      reluAfter.set(node, after[0]);
      values.add(after[0].output[0]);
    } else values.add(node.output[0]);
  }
  // A residual Add of two quantized values is quantized too, with a range of its own: onnxruntime fuses it
  // into QLinearAdd, and the MaxPools and Resizes that read it then run on its levels.
  for (const node of graph.node) {
    if (node.opType === 'Add' && node.input.every((i) => values.has(i)) && !outputs.has(node.output[0]))
      values.add(node.output[0]);
  }
  return { convs, reluAfter, values };
}

/**
 * The model with `names` added to its outputs (as float tensors), to read their values on photos.
 * @param {Uint8Array} bytes @param {Iterable<string>} names
 */
export function withOutputs(bytes, names) {
  const model = fromBinary(ModelProtoSchema, bytes);
  const graph = /** @type {import('onnx-buf').GraphProto} */ (model.graph);
  const outputs = new Set(graph.output.map((o) => o.name));
  for (const name of names) {
    if (outputs.has(name)) continue;
    const tensorType = create(TypeProto_TensorSchema, { elemType: DT.FLOAT });
    graph.output.push(
      create(ValueInfoProtoSchema, {
        name,
        type: create(TypeProtoSchema, { value: { case: 'tensorType', value: tensorType } }),
      }),
    );
  }
  return toBinary(ModelProtoSchema, model);
}

/**
 * uint8 parameters for a calibrated range (widened to hold 0, as the quantized zero must be exact).
 * @param {[number, number]} range
 */
export function activationParams([min, max]) {
  const lo = Math.min(0, min);
  const hi = Math.max(0, max);
  const scale = (hi - lo) / 255 || 1;
  return { scale, zeroPoint: Math.max(0, Math.min(255, Math.round(-lo / scale))) };
}

/**
 * What quantizeInt8 rounds. The int8 model rounds both, at WEIGHT_LEVELS; the others are for measuring what each
 * rounding costs (bench/int8-ablation.ts): with one of them off the convolutions run in float, no faster, and
 * weights at more than WEIGHT_LEVELS would saturate these CPUs' int8 kernels. `matrixPathFrom`: how the weights
 * of convolutions with at least that many output channels are stored (0: none; MATRIX_PATH_CHANNELS on CPUs
 * with AMX-INT8), see quantizedConv.
 * @typedef {{ weights?: boolean, activations?: boolean, weightLevels?: number, matrixPathFrom?: number }} Rounding
 */

/**
 * The convolutions whose weights are stored for onnxruntime's matrix-product path where the CPU has AMX-INT8:
 * those with this many output channels or more (ISNet's deeper stages, 28 of its 108). On a Sapphire Rapids
 * they ran faster there and the others slower (docs/research/int8.md, 2026-12-05).
 */
export const MATRIX_PATH_CHANNELS = 256;

/**
 * @param {Uint8Array} bytes a float32 model (model-float32.mjs makes one of ISNet's float16)
 * @param {Calibration} calibration
 * @param {Rounding} [rounding]
 * @returns {Uint8Array}
 */
export function quantizeInt8(bytes, calibration, rounding = {}) {
  const {
    weights: roundWeights = true,
    activations: roundActivations = true,
    weightLevels = WEIGHT_LEVELS,
    matrixPathFrom = 0,
  } = rounding;
  const model = fromBinary(ModelProtoSchema, bytes);
  const graph = /** @type {import('onnx-buf').GraphProto} */ (model.graph);
  const weights = new Map(graph.initializer.map((t) => [t.name, t]));
  const { convs, reluAfter, values } = quantizedValues(graph, calibration.float);
  // A Relu is taken out only where the uint8 quantization after its convolution clamps in its place.
  const relus = new Set(roundActivations ? reluAfter.values() : []);
  /** @type {import('onnx-buf').TensorProto[]} */
  const added = [];
  /** @type {import('onnx-buf').NodeProto[]} */
  const nodes = [];
  const tensor = (
    /** @type {string} */ name,
    /** @type {number} */ dataType,
    /** @type {number[]} */ dims,
    /** @type {ArrayBufferView<ArrayBuffer>} */ data,
  ) => {
    added.push(
      create(TensorProtoSchema, {
        name,
        dataType,
        dims: dims.map(BigInt),
        rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      }),
    );
    return name;
  };
  /** An integer attribute, or a list of them. */
  const attr = (/** @type {string} */ name, /** @type {number | number[]} */ v) =>
    Array.isArray(v)
      ? create(AttributeProtoSchema, { name, type: AttributeProto_AttributeType.INTS, ints: v.map(BigInt) })
      : create(AttributeProtoSchema, { name, type: AttributeProto_AttributeType.INT, i: BigInt(v) });
  const node = (
    /** @type {string} */ opType,
    /** @type {string[]} */ input,
    /** @type {string} */ output,
    /** @type {import('onnx-buf').AttributeProto[]} */ attribute = [],
  ) => nodes.push(create(NodeProtoSchema, { opType, input, output: [output], name: output, attribute }));

  /** @type {Map<string, { scale: number, scaleName: string, zeroName: string, quantized?: string }>} */
  const params = new Map();
  for (const name of roundActivations ? values : []) {
    const range = calibration.ranges[name];
    if (!range) throw new Error(`the calibration has no range for ${name}: it was made for another model`);
    const { scale, zeroPoint } = activationParams(range);
    params.set(name, {
      scale,
      scaleName: tensor(`${name}/q_scale`, DT.FLOAT, [], new Float32Array([scale])),
      zeroName: tensor(`${name}/q_zero`, DT.UINT8, [], new Uint8Array([zeroPoint])),
    });
  }
  // A MaxPool's or a Resize's output is quantized as its input is: a window's largest value, or a blend of
  // neighbours, stays within the input's range, so its levels are exactly enough. onnxruntime then runs the
  // MaxPools on the uint8 values (it drops the DequantizeLinear and QuantizeLinear of the same scale and zero
  // around them), and fuses a Concat whose inputs are all quantized into QLinearConcat (40 of ISNet's 50, not
  // 16): fewer float round trips and layout transposes between the convolutions (docs/performance.md, "int8").
  const graphOutputs = new Set(graph.output.map((o) => o.name));
  for (const n of roundActivations ? graph.node : []) {
    const p = params.get(n.input[0]);
    if ((n.opType === 'MaxPool' || n.opType === 'Resize') && p && !graphOutputs.has(n.output[0]))
      params.set(n.output[0], { scale: p.scale, scaleName: p.scaleName, zeroName: p.zeroName });
  }
  const quantize = (/** @type {string} */ from, /** @type {string} */ name) => {
    const p = /** @type {NonNullable<ReturnType<typeof params.get>>} */ (params.get(name));
    p.quantized = `${name}/q`;
    node('QuantizeLinear', [from, p.scaleName, p.zeroName], p.quantized);
  };
  let readerCount = 0;
  /** A quantized value as one reader reads it: through a DequantizeLinear of its own. */
  const dequantized = (/** @type {string} */ name) => {
    const p = params.get(name);
    if (!p?.quantized) return name;
    const out = `${name}/dq${readerCount++}`;
    node('DequantizeLinear', [p.quantized, p.scaleName, p.zeroName], out);
    return out;
  };

  for (const input of graph.input) if (params.has(input.name)) quantize(input.name, input.name);
  const quantizedConvs = new Set(convs);
  for (const n of graph.node) {
    if (relus.has(n)) continue;
    if (!quantizedConvs.has(n) && splitHead(n)) continue;
    if (quantizedConvs.has(n)) n.input = quantizedConv(n);
    n.input = n.input.map(dequantized);
    nodes.push(n);
    const relu = reluAfter.get(n);
    for (const out of n.output) {
      // A convolution whose Relu was taken out is quantized with the Relu's range, under the Relu's name.
      const name = relu ? relu.output[0] : out;
      if (!params.has(name)) continue;
      quantize(out, name);
      if (name !== out && graphOutputs.has(name)) {
        const p = /** @type {NonNullable<ReturnType<typeof params.get>>} */ (params.get(name));
        node('DequantizeLinear', [/** @type {string} */ (p.quantized), p.scaleName, p.zeroName], name);
      }
    }
  }

  /**
   * The mask's head, a float 3x3 convolution to one channel at 512x512, rewritten (quantizer 4): onnxruntime's
   * blocked layout computes 16 channels where there is one, in the convolution (24 ms of a 465 ms run) and in
   * the upsampling and Sigmoid after it (12 ms). As a 1x1 convolution to the nine taps' products, a depthwise
   * 3x3 convolution that moves each to its place (one-hot weights), their sum over channels and the bias, the
   * output is one plain channel from there on. The same sums in another order. False, and nothing added, for
   * any other convolution.
   */
  function splitHead(/** @type {import('onnx-buf').NodeProto} */ conv) {
    if (conv.opType !== 'Conv' || conv.input.length !== 3) return false;
    const [x, w, b] = conv.input;
    const W = weights.get(w);
    const dims = W?.dims.map(Number) ?? [];
    const given = new Map(conv.attribute.map((a) => [a.name, a.ints.length ? a.ints.map(Number) : [Number(a.i)]]));
    const all = (/** @type {string} */ name, /** @type {number} */ v) => (given.get(name) ?? [v]).every((a) => a === v);
    if (!W || W.dataType !== DT.FLOAT || dims.length !== 4 || dims[0] !== 1 || dims[2] !== 3 || dims[3] !== 3)
      return false;
    if (!all('group', 1) || !all('strides', 1) || !all('dilations', 1) || !all('pads', 1)) return false;
    const channels = dims[1];
    const values = floats(W);
    const taps = new Float32Array(9 * channels);
    for (let t = 0; t < 9; t++) for (let c = 0; c < channels; c++) taps[t * channels + c] = values[c * 9 + t];
    // Channel t's kernel reads the tap's product where the 3x3 kernel read tap t.
    const place = new Float32Array(81);
    for (let t = 0; t < 9; t++) place[t * 9 + t] = 1;
    const out = conv.output[0];
    node('Conv', [dequantized(x), tensor(`${w}/taps`, DT.FLOAT, [9, channels, 1, 1], taps)], `${out}/taps`, [
      attr('kernel_shape', [1, 1]),
    ]);
    node('Conv', [`${out}/taps`, tensor(`${w}/place`, DT.FLOAT, [9, 1, 3, 3], place)], `${out}/placed`, [
      attr('kernel_shape', [3, 3]),
      attr('pads', [1, 1, 1, 1]),
      attr('group', 9),
    ]);
    node('ReduceSum', [`${out}/placed`, tensor(`${out}/axes`, DT.INT64, [1], new BigInt64Array([1n]))], `${out}/sum`);
    node('Add', [`${out}/sum`, b], out);
    return true;
  }

  /** A convolution's inputs made int8 weights and int32 bias (its activation input is read dequantized). */
  function quantizedConv(/** @type {import('onnx-buf').NodeProto} */ conv) {
    const [x, w, b] = conv.input;
    if (!roundWeights) return conv.input;
    const W = weights.get(w);
    if (!W || W.dataType !== DT.FLOAT)
      throw new Error(`convolution ${conv.output[0]}: its weights are not float32 initializers`);
    const dims = W.dims.map(Number);
    const values = floats(W);
    const channels = dims[0];
    const per = values.length / channels;
    const q = new Int8Array(values.length);
    const scales = new Float32Array(channels);
    for (let c = 0; c < channels; c++) {
      let max = 0;
      for (let i = c * per; i < (c + 1) * per; i++) max = Math.max(max, Math.abs(values[i]));
      const s = max / weightLevels || 1;
      scales[c] = s;
      for (let i = c * per; i < (c + 1) * per; i++)
        q[i] = Math.max(-weightLevels, Math.min(weightLevels, Math.round(values[i] / s)));
    }
    // The same integers stored one step off with the zero point to match, so that they are not symmetric:
    // onnxruntime's QLinearConv then multiplies through im2col and its int8 matrix product, which uses AMX where
    // the CPU has it, instead of its symmetric convolution kernels (AVX-512 VNNI at best). Every product, and so
    // the mask, is the same; where AMX is missing the matrix path is slower (matrixPathFrom is 0 there).
    const zero = matrixPathFrom > 0 && channels >= matrixPathFrom ? (weightLevels < 127 ? 1 : -1) : 0;
    if (zero) for (let i = 0; i < q.length; i++) q[i] += zero;
    node(
      'DequantizeLinear',
      [
        tensor(`${w}/int8`, DT.INT8, dims, q),
        tensor(`${w}/int8_scale`, DT.FLOAT, [channels], scales),
        tensor(`${w}/int8_zero`, DT.INT8, [channels], new Int8Array(channels).fill(zero)),
      ],
      `${w}/dq`,
      [attr('axis', 0)],
    );
    const inputs = [x, `${w}/dq`];
    // Without the activations' rounding there is no input scale to make the bias int32 at: it stays float.
    if (b && !roundActivations) inputs.push(b);
    else if (b) {
      const inputScale = /** @type {NonNullable<ReturnType<typeof params.get>>} */ (params.get(x)).scale;
      const B = weights.get(b);
      if (!B || B.dataType !== DT.FLOAT)
        throw new Error(`convolution ${conv.output[0]}: its bias is not a float32 initializer`);
      const bias = floats(B);
      const bq = new Int32Array(channels);
      const bs = new Float32Array(channels);
      for (let c = 0; c < channels; c++) {
        bs[c] = inputScale * scales[c];
        bq[c] = Math.round(bias[c] / bs[c]);
      }
      node(
        'DequantizeLinear',
        [
          tensor(`${b}/int32`, DT.INT32, [channels], bq),
          tensor(`${b}/int32_scale`, DT.FLOAT, [channels], bs),
          tensor(`${b}/int32_zero`, DT.INT32, [channels], new Int32Array(channels)),
        ],
        `${b}/dq`,
        [attr('axis', 0)],
      );
      inputs.push(`${b}/dq`);
    }
    return inputs;
  }

  // Still in the order of the graph, which ONNX keeps topological: each node's weights and DequantizeLinear
  // readers are placed just before it, its QuantizeLinear just after.
  graph.node = nodes;
  const read = new Set(graph.node.flatMap((n) => n.input));
  graph.initializer = [...graph.initializer, ...added].filter((t) => read.has(t.name));
  // The float weights' declared inputs, if the exporter listed initializers as inputs too.
  graph.input = graph.input.filter((i) => !weights.has(i.name) || read.has(i.name));
  return toBinary(ModelProtoSchema, model);
}

/**
 * A float32 initializer's values.
 * @param {import('onnx-buf').TensorProto} t
 */
function floats(t) {
  // Copied: the bytes may be a view of the whole model (a Node Buffer's slice() does not copy).
  if (t.rawData.length > 0) return new Float32Array(Uint8Array.prototype.slice.call(t.rawData).buffer);
  return Float32Array.from(t.floatData);
}
