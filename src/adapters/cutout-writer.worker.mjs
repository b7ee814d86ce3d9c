// Worker thread of the cut-out writer (cutout-writer.adapter.ts): one band of a photo's rows at a
// time. It refines the band's edges at full resolution (edge-refine.mjs), lays the band out as PNG
// scanlines with its thumbnail reduction, and deflates them (png-strips.mjs); all three natively when
// built (cutout-kernels.mjs). The reduction is sent as soon as it exists, so that the thumbnail is made
// while the rows are deflated. Plain JavaScript, like the model's worker: a worker thread starts
// without the TypeScript loader of its parent.
import { parentPort, workerData } from 'node:worker_threads';
import { BandWorkspace, bandRows, deflateRows, refineBand } from './cutout-kernels.mjs';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** This thread's band memory, reused band after band; let go once the thread has been idle `idleReleaseMs`. */
const workspace = new BandWorkspace();
const { idleReleaseMs } = /** @type {{ idleReleaseMs: number }} */ (workerData);
/** @type {NodeJS.Timeout | undefined} */
let idle;

/**
 * @typedef {{ id: number, rgb: Uint8Array, sourceAlpha: Uint8Array | null, width: number, height: number,
 *   low: { rgb: Uint8Array, alpha: Uint8Array }, y0: number, y1: number, last: boolean, reduce: number }} Band
 */

/** @param {Band} msg */
async function writeBand(msg) {
  const { id, width, y0, y1 } = msg;
  const use = { workspace };
  const refined = refineBand({ rgb: msg.rgb, width, height: msg.height }, msg.low, y0, y1, use);
  const sourceAlpha = msg.sourceAlpha ? msg.sourceAlpha.subarray(y0 * width, y1 * width) : null;
  const { lines, preview } = bandRows(refined.rgb, refined.alpha, sourceAlpha, width, y1 - y0, msg.reduce, use);
  port.postMessage({ id, type: 'preview', preview }, [preview.data.buffer]);
  const { idat, adler, length } = await deflateRows(lines, msg.last, use);
  // The chunk's memory moves to the other side when it is its own (a large allocation always is).
  const transfer = idat.byteOffset === 0 && idat.byteLength === idat.buffer.byteLength ? [/** @type {ArrayBuffer} */ (idat.buffer)] : [];
  port.postMessage({ id, type: 'band', idat, adler, length }, transfer);
}

port.on('message', (/** @type {Band | { type: 'held' }} */ msg) => {
  if ('type' in msg) {
    port.postMessage({ type: 'held', bytes: workspace.heldBytes() });
    return;
  }
  clearTimeout(idle);
  writeBand(msg)
    .catch((err) => port.postMessage({ id: msg.id, type: 'failed', message: err instanceof Error ? err.message : String(err) }))
    .finally(() => {
      idle = setTimeout(() => workspace.release(), idleReleaseMs);
      idle.unref();
    });
});
