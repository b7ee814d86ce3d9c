// onnxruntime's graph optimisation levels as Matte sets them, in a module of their own: the configuration
// (config.ts) reads them, and every command that loads the configuration would otherwise load the model's
// code and its ONNX reader too (about 0.6 s of a `bin/matte` operator verb's start).

/** The levels, weakest first. */
export const GRAPH_OPTIMIZATIONS = /** @type {const} */ (['basic', 'extended', 'all']);
/** @typedef {(typeof GRAPH_OPTIMIZATIONS)[number]} GraphOptimization */

/**
 * onnxruntime's graph optimisation level (MATTE_MODEL_OPTIMIZATION). `all`, the default, adds the layout
 * transformations (NCHWc), as onnxruntime does bare: the model runs at its own speed. `extended`
 * (MATTE_LOW_MEMORY=1) keeps a worker under 1.5 GiB for more of the model's CPU (docs/performance.md, "Memory").
 * @type {GraphOptimization}
 */
export const DEFAULT_GRAPH_OPTIMIZATION = 'all';
/** @type {GraphOptimization} */
export const LOW_MEMORY_GRAPH_OPTIMIZATION = 'extended';
