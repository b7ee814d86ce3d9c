// A model exported at one fixed size, made to run at any size: ISNet is convolutional, but its export traced
// every `_upsample_like(src, tar)` as a Resize to constant sizes ([32, 32] ... [1024, 1024]), and declares
// its input as [1, 3, 1024, 1024]. onnxruntime refuses another input size, and with the input made symbolic
// the first Resize still upsamples to the traced size and its Concat fails. Here each such Resize reads its
// sizes from the tensor it must match at run time (the other input of the Concat that reads it, or the
// model's input for the side outputs' heads), and the input and outputs get symbolic height and width.
// Nothing else changes: at 1024 x 1024 the model computes exactly what it did (tested). Parsed and written
// with onnx-buf, like model-float32.mjs. Plain JavaScript: the model's worker thread imports it.
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  AttributeProtoSchema,
  AttributeProto_AttributeType,
  ModelProtoSchema,
  NodeProtoSchema,
  TensorProtoSchema,
  TensorProto_DataType,
  TensorShapeProto_DimensionSchema,
} from 'onnx-buf';

/**
 * The model with free height and width; null when it has no fixed-size Resize to rewrite (nothing to do).
 * Throws when a fixed-size Resize's target cannot be found: such a model runs at its own size only.
 * @param {Uint8Array} bytes an ONNX model with one NCHW input
 * @returns {Uint8Array | null}
 */
export function withFreeSize(bytes) {
  const model = fromBinary(ModelProtoSchema, bytes);
  const graph = model.graph;
  if (!graph) return null;
  const initializers = new Set(graph.initializer.map((t) => t.name));
  const input = graph.input.find((i) => !initializers.has(i.name));
  if (!input) return null;
  /** @type {Map<string, import('onnx-buf').NodeProto>} */
  const producer = new Map();
  /** @type {Map<string, import('onnx-buf').NodeProto[]>} */
  const readers = new Map();
  for (const node of graph.node) {
    for (const name of node.output) producer.set(name, node);
    for (const name of node.input) readers.set(name, [...(readers.get(name) ?? []), node]);
  }
  /** The value a node's output is read as after any Casts and QuantizeLinear/DequantizeLinear pairs. */
  const through = (/** @type {string} */ name) => {
    const seen = new Set();
    let value = name;
    for (;;) {
      const next = readers.get(value) ?? [];
      const pass = next.length === 1 && PASS_THROUGH.has(next[0].opType) ? next[0] : null;
      if (!pass || seen.has(pass)) return value;
      seen.add(pass);
      value = pass.output[0];
    }
  };
  /** @type {import('onnx-buf').NodeProto[]} */
  const added = [];
  let rewritten = 0;
  /** The fixed sizes' Constant nodes, dropped once nothing reads them (onnxruntime warns of each at load). */
  const replaced = new Set();
  const constant = (/** @type {string} */ name, /** @type {bigint[]} */ values) =>
    create(NodeProtoSchema, {
      opType: 'Constant',
      name,
      output: [name],
      attribute: [
        create(AttributeProtoSchema, {
          name: 'value',
          type: AttributeProto_AttributeType.TENSOR,
          t: create(TensorProtoSchema, {
            dataType: TensorProto_DataType.INT64,
            dims: [BigInt(values.length)],
            int64Data: values,
          }),
        }),
      ],
    });
  const starts = '/free_size/starts';
  const ends = '/free_size/ends';
  for (const node of graph.node) {
    if (node.opType !== 'Resize' || node.input.length < 4 || !node.input[3]) continue;
    const sizes = producer.get(node.input[3]);
    if (sizes?.opType !== 'Concat' || sizes.input.length !== 2) continue;
    const fixed = producer.get(sizes.input[1]);
    if (fixed?.opType !== 'Constant') continue;
    // The tensor this one is resized to match: the other input of the Concat that reads it, else the model's input.
    const out = through(node.output[0]);
    const concat = (readers.get(out) ?? []).find((n) => n.opType === 'Concat');
    const target = concat ? concat.input.find((name) => name !== out) : input.name;
    if (!target) throw new Error(`Resize ${node.name}: the tensor it matches was not found`);
    const shape = `/free_size/${rewritten}/shape`;
    const hw = `/free_size/${rewritten}/hw`;
    added.push(
      create(NodeProtoSchema, { opType: 'Shape', name: shape, input: [target], output: [shape] }),
      create(NodeProtoSchema, { opType: 'Slice', name: hw, input: [shape, starts, ends], output: [hw] }),
    );
    sizes.input[1] = hw;
    replaced.add(fixed);
    rewritten++;
  }
  if (!rewritten) return null;
  // Constants first, then each Shape → Slice just before the Concat that reads it (the graph stays sorted).
  const order = [];
  order.push(constant(starts, [2n]), constant(ends, [4n]));
  const bySizes = new Map();
  for (let i = 0; i < added.length; i += 2) bySizes.set(added[i + 1].output[0], [added[i], added[i + 1]]);
  const stillRead = new Set(graph.node.flatMap((n) => n.input));
  for (const node of graph.node) {
    if (replaced.has(node) && !stillRead.has(node.output[0])) continue;
    if (node.opType === 'Concat')
      for (const name of node.input) if (bySizes.has(name)) order.push(...bySizes.get(name));
    order.push(node);
  }
  graph.node = order;
  // Height and width are free: the input's and the outputs' last two dimensions symbolic, and the traced
  // shapes of the values in between dropped (onnxruntime infers them at load).
  for (const value of [input, ...graph.output]) {
    const dims = value.type?.value.case === 'tensorType' ? value.type.value.value.shape?.dim : undefined;
    if (!dims || dims.length !== 4) continue;
    dims[2] = create(TensorShapeProto_DimensionSchema, { value: { case: 'dimParam', value: 'height' } });
    dims[3] = create(TensorShapeProto_DimensionSchema, { value: { case: 'dimParam', value: 'width' } });
  }
  for (const value of graph.valueInfo) {
    if (value.type?.value.case === 'tensorType') value.type.value.value.shape = undefined;
  }
  return toBinary(ModelProtoSchema, model);
}

/** Operators a value passes through unchanged in shape on its way from a Resize to the Concat that reads it. */
const PASS_THROUGH = new Set(['Cast', 'QuantizeLinear', 'DequantizeLinear']);
