// Worker thread running edge refinement (edge-refine.mjs), so a 12-megapixel photo's full-resolution
// pass never holds the event loop. Plain JavaScript, like the model's worker: a worker thread starts
// without the TypeScript loader of its parent.
import { parentPort } from 'node:worker_threads';
import { refineEdges } from './edge-refine.mjs';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

port.on('message', (/** @type {{ id: number, rgb: Uint8Array, alpha: Uint8Array | null, width: number, height: number, low?: { rgb: Uint8Array, alpha: Uint8Array } }} */ msg) => {
  try {
    const out = refineEdges({ rgb: msg.rgb, alpha: msg.alpha, width: msg.width, height: msg.height }, msg.low ? { low: msg.low } : {});
    const transfer = /** @type {ArrayBuffer[]} */ ([out.alpha.buffer, out.rgb.buffer]);
    port.postMessage({ id: msg.id, ok: true, alpha: out.alpha, rgb: out.rgb }, transfer);
  } catch (err) {
    port.postMessage({ id: msg.id, ok: false, message: err instanceof Error ? err.message : String(err) });
  }
});
