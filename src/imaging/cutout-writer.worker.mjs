// Worker thread of the cut-out writer (cutout-writer.ts): one band of a photo's rows at a time. It
// refines the band's edges at full resolution (edge-refine.mjs), lays the band out as PNG scanlines
// with its thumbnail reduction, and deflates them with node:zlib (png-bands.mjs). The reduction is sent
// as soon as it exists, so that the thumbnail is made while the rows are deflated. Plain JavaScript,
// like the model's worker: a worker thread starts without the TypeScript loader of its parent.
import { parentPort } from 'node:worker_threads';
import { refineRows } from './edge-refine.mjs';
import { bandLines, deflateBand } from './png-bands.mjs';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/**
 * @typedef {{ id: number, rgb: Uint8Array, sourceAlpha: Uint8Array | null, width: number, height: number,
 *   low: { rgb: Uint8Array, alpha: Uint8Array }, y0: number, y1: number, last: boolean, reduce: number }} Band
 */

/** @param {Band} msg */
async function writeBand(msg) {
  const { id, width, height, y0, y1 } = msg;
  const refined = refineRows({ rgb: msg.rgb, alpha: null, width, height }, { low: msg.low }, y0, y1);
  const sourceAlpha = msg.sourceAlpha ? msg.sourceAlpha.subarray(y0 * width, y1 * width) : null;
  const { lines, preview } = bandLines(refined.rgb, refined.alpha, sourceAlpha, width, y1 - y0, msg.reduce);
  port.postMessage({ id, type: 'preview', preview }, [/** @type {ArrayBuffer} */ (preview.data.buffer)]);
  const { idat, adler, length } = await deflateBand(lines, msg.last);
  // The chunk's memory moves to the other side when it is its own (a large allocation always is).
  const transfer =
    idat.byteOffset === 0 && idat.byteLength === idat.buffer.byteLength
      ? [/** @type {ArrayBuffer} */ (idat.buffer)]
      : [];
  port.postMessage({ id, type: 'band', idat, adler, length }, transfer);
}

port.on('message', (/** @type {Band} */ msg) => {
  writeBand(msg).catch((err) =>
    port.postMessage({ id: msg.id, type: 'failed', message: err instanceof Error ? err.message : String(err) }),
  );
});
