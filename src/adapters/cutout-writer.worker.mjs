// Worker thread of the cut-out writer (cutout-writer.adapter.ts), in one of two roles:
//  - layout (one thread, at the lowest priority, while the model runs): an opaque photo's bands laid
//    out as PNG rows as if fully opaque (cutout-band.mjs opaqueBand), handed back to the writer.
//  - write (once the mask is known), a band at a time: its edges refined at full resolution and its
//    rows made final (cutoutBand, on the band's layout when there is one; photos with transparency of
//    their own take refineRows + bandLines), its thumbnail reduction sent at once, so that the
//    thumbnail is made while the rows are deflated.
// Plain JavaScript, like the model's worker: a worker thread starts without the TypeScript loader of its parent.
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { refineRows } from './edge-refine.mjs';
import { bandLines, deflateBand } from './png-strips.mjs';
import { cutoutBand, opaqueBand } from './cutout-band.mjs';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
/** Nice value of the layout thread: it may use only what the model's threads leave idle. */
const LAYOUT_NICE = 19;

/**
 * @typedef {{ id: number, type: 'layout', rgb: Uint8Array, width: number, bands: { y0: number, y1: number }[], reduce: number }} Layout
 * @typedef {{ id: number, type: 'write', rgb: Uint8Array, width: number, height: number, y0: number, y1: number, reduce: number,
 *   sourceAlpha: Uint8Array | null, low: { rgb: Uint8Array, alpha: Uint8Array }, last: boolean,
 *   layout?: import('./cutout-band.mjs').OpaqueBand }} Write
 */

/** @param {Layout} msg */
function layout(msg) {
  // Each time: the service's priority setting may have raised this thread with every other one.
  try {
    os.setPriority(0, LAYOUT_NICE);
  } catch {
    // Left as it is: the layout still comes, at the priority it has.
  }
  const layouts = msg.bands.map((b) => opaqueBand(msg.rgb, msg.width, b.y0, b.y1, msg.reduce));
  port.postMessage({ id: msg.id, type: 'laid', layouts }, layouts.flatMap((l) => [/** @type {ArrayBuffer} */ (l.lines.buffer), /** @type {ArrayBuffer} */ (l.rowSums.buffer)]));
}

/** @param {Write} msg */
async function write(msg) {
  const { id, width, height, y0, y1, reduce } = msg;
  let rows;
  if (msg.sourceAlpha) {
    const refined = refineRows({ rgb: msg.rgb, alpha: null, width, height }, { low: msg.low }, y0, y1);
    rows = bandLines(refined.rgb, refined.alpha, msg.sourceAlpha.subarray(y0 * width, y1 * width), width, y1 - y0, reduce);
  } else {
    rows = cutoutBand({ rgb: msg.rgb, width, height }, msg.low, y0, y1, reduce, msg.layout);
  }
  const { lines, preview } = rows;
  port.postMessage({ id, type: 'preview', preview }, [/** @type {ArrayBuffer} */ (preview.data.buffer)]);
  const { idat, adler, length } = await deflateBand(lines, msg.last);
  // The chunk's memory moves to the other side when it is its own (a large allocation always is).
  const transfer = idat.byteOffset === 0 && idat.byteLength === idat.buffer.byteLength ? [/** @type {ArrayBuffer} */ (idat.buffer)] : [];
  port.postMessage({ id, type: 'band', idat, adler, length }, transfer);
}

port.on('message', (/** @type {Layout | Write} */ msg) => {
  const run = msg.type === 'layout' ? async () => layout(msg) : () => write(msg);
  run().catch((err) => port.postMessage({ id: msg.id, type: 'failed', message: err instanceof Error ? err.message : String(err) }));
});
