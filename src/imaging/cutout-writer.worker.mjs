// Worker thread of the cut-out writer (cutout-writer.ts): one band of a photo's rows at a time. It
// refines the band's edges at full resolution (edge-refine.mjs) and lays the band out as straight RGBA
// pixels, with its thumbnail reduction (rgba-bands.mjs), in the photo's shared pixel buffer, which the
// writer encodes as one PNG once every band is in. Plain JavaScript, like the model's worker: a worker
// thread starts without the TypeScript loader of its parent.
import { parentPort } from 'node:worker_threads';
import { CompressionType, FilterType, Transformer } from '@napi-rs/image';
import { bandCuts } from './band-cuts.mjs';
import { REFINE_DEFAULTS, refineGrid, refineRows } from './edge-refine.mjs';
import { reduceArea } from './mask-reduce.mjs';
import { nativeCutout } from './native.mjs';
import { bandRgba } from './rgba-bands.mjs';
import { applyStrokes } from './touch-up.mjs';
import { solidInterior } from './solid-interior.mjs';

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/**
 * @typedef {{ id: number, rgb: Uint8Array, sourceAlpha: Uint8Array | null, rgba: Uint8Array, width: number,
 *   height: number, low: { rgb: Uint8Array, alpha: Uint8Array }, y0: number, y1: number, reduce: number }} Band
 *   `rgba`: the whole photo's pixel buffer (shared), of which the band writes its rows
 */

/** This thread's room for a band's alpha, kept between bands (a fresh one faults in 2-4 MB of pages a band). */
let alphaRoom = new Uint8Array(0);
/** @param {number} length */
function keptAlpha(length) {
  if (alphaRoom.length < length) alphaRoom = new Uint8Array(length);
  return alphaRoom.subarray(0, length);
}

/**
 * The band's rows refined in place and laid out: by the C passes where they were built (native.mjs: about
 * a third of the CPU), else by the JavaScript they stand for. The same bytes either way.
 * @param {Band} msg
 */
function writeBand(msg) {
  const { id, width, height, y0, y1 } = msg;
  const sourceAlpha = msg.sourceAlpha ? msg.sourceAlpha.subarray(y0 * width, y1 * width) : null;
  const out = msg.rgba.subarray(y0 * width * 4, y1 * width * 4);
  let preview;
  if (nativeCutout) {
    const { grid, radius, eps, steepen } = REFINE_DEFAULTS;
    const { low } = msg;
    const alpha = keptAlpha((y1 - y0) * width);
    nativeCutout.refineRows(msg.rgb, width, height, low.rgb, low.alpha, y0, y1, grid, radius, eps, steepen, alpha);
    const rgb = msg.rgb.subarray(y0 * width * 3, y1 * width * 3);
    preview = nativeCutout.bandRgba(rgb, alpha, sourceAlpha, width, y1 - y0, msg.reduce, out);
  } else {
    const refined = refineRows({ rgb: msg.rgb, alpha: null, width, height }, { low: msg.low, inPlace: true }, y0, y1);
    preview = bandRgba(refined.rgb, refined.alpha, sourceAlpha, width, y1 - y0, msg.reduce, out);
  }
  port.postMessage({ id, type: 'band', preview }, [/** @type {ArrayBuffer} */ (preview.data.buffer)]);
}

/**
 * The model's mask reduced to the edge refinement's grid (an area average, mask-reduce.mjs), its inside made
 * opaque (solid-interior.mjs), in memory every thread reads, and where the photo's rows are cut into bands
 * (band-cuts.mjs): 8-11 ms for a 1024² mask in JavaScript, 3 in C, here and not on the event loop.
 * @param {{ id: number, mask: Uint8Array, maskWidth: number, maskHeight: number, width: number, height: number,
 *   reduce: number, bands: number }} msg
 */
function gridMask(msg) {
  const grid = refineGrid(msg.width, msg.height);
  const reduce = nativeCutout?.reduceArea ?? reduceArea;
  const reduced = reduce(msg.mask, msg.maskWidth, msg.maskHeight, grid.w, grid.h);
  const alpha = new Uint8Array(new SharedArrayBuffer(reduced.length));
  alpha.set(reduced);
  // The subject's inside made opaque before the refinement, and what stays see-through measured for the check.
  const { seeThrough } = solidInterior(alpha, grid.w, grid.h);
  const cuts = bandCuts(msg.width, msg.height, msg.reduce, msg.bands, alpha);
  port.postMessage({ id: msg.id, type: 'grid', alpha, cuts, seeThrough });
}

/**
 * The cut-out's PNG: straight RGBA, rows Paeth-filtered (each byte less its prediction from the bytes left, above
 * and above-left of it), the png crate's fast deflate. Eight eval products at 2000 px: 45.1 ms of CPU and 1705 KiB a
 * photo, against 42.6 ms and 2016 KiB with Up rows (each byte less the one above it), the filter until 2026-12-05,
 * and 58.7 ms and 6079 KiB unfiltered (docs/research/performance-history.md). Before that, against node:zlib at
 * level 1 from rows laid out in JavaScript: 63 ms of CPU and 2.62 MB for layout and encode against 141 ms and
 * 2.44 MB; libvips' encoder at level 1 unfiltered: 79 ms and 5.9 MB (docs/performance.md).
 * Here and not on the event loop: the encoder copies the pixels in on the thread that calls it.
 * @param {{ id: number, rgba: Uint8Array, width: number, height: number }} msg
 */
async function encodePng(msg) {
  const png = await Transformer.fromRgbaPixels(msg.rgba, msg.width, msg.height).png({
    compressionType: CompressionType.Fast,
    filterType: FilterType.Paeth,
  });
  // Handed over, not copied again: the encoder's buffer is copied once into memory this thread can give away.
  const data = new Uint8Array(png.length);
  data.set(png);
  port.postMessage({ id: msg.id, type: 'png', data }, [data.buffer]);
}

/**
 * A seller's strokes painted on a stored cut-out (touch-up.mjs): its PNG decoded here, the strokes painted with
 * the photo over their window, and the result encoded as the writer encodes a cut-out, with the box of its pixels
 * at alpha >= 128 (the subject's box a render frames; null when none is left). Decoding the cut-out here rather
 * than handing its pixels over saves a 16 MB copy a 2000x2000 photo (and the decode runs beside the photo's).
 * @param {{ id: number, png: Uint8Array, width: number, height: number,
 *   photo: import('./touch-up.mjs').PhotoWindow, strokes: import('./touch-up.mjs').Stroke[],
 *   snap: import('./touch-up.mjs').SnapOptions | null }} msg
 */
async function touchUp(msg) {
  const { width, height } = msg;
  const rgba = await new Transformer(msg.png).rawPixels();
  if (rgba.length !== width * height * 4)
    throw new Error(`the stored cut-out is not ${width}x${height} RGBA (${rgba.length} bytes)`);
  const changed = applyStrokes({ rgba, width, height }, msg.photo, msg.strokes, msg.snap);
  let minX = width;
  let minY = height;
  let maxX = -1;
  let maxY = -1;
  for (let y = 0, i = 3; y < height; y++) {
    for (let x = 0; x < width; x++, i += 4) {
      if (rgba[i] < 128) continue;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
    }
  }
  const bbox = maxX < 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 };
  const png = await Transformer.fromRgbaPixels(rgba, width, height).png({
    compressionType: CompressionType.Fast,
    filterType: FilterType.Paeth,
  });
  const data = new Uint8Array(png.length);
  data.set(png);
  port.postMessage({ id: msg.id, type: 'touched-up', data, bbox, changed }, [data.buffer]);
}

/**
 * Runs the touch-up's code on a small synthetic cut-out a few times when the thread starts: until the JavaScript
 * engine has optimised its loops, a seller's first touch-ups took 2-3 times as long (154-160 ms of painting a
 * 2000x2000 photo against 62 once warm).
 */
function warmTouchUp() {
  const size = 160;
  const rgb = new Uint8Array(size * size * 3);
  const rgba = new Uint8Array(size * size * 4);
  for (let i = 0; i < size * size; i++) {
    const inside = Math.hypot((i % size) - size / 2, Math.floor(i / size) - size / 2) < size / 3;
    rgb.set(inside ? [200, 60, 40] : [40, 80, 200], i * 3);
    rgba.set(inside ? [200, 60, 40, 255] : [0, 0, 0, 0], i * 4);
  }
  const photo = { rgb, alpha: null, x0: 0, y0: 0, width: size, height: size };
  for (let round = 0; round < 4; round++) {
    const mode = round % 2 ? 'restore' : 'erase';
    const strokes = [
      {
        mode,
        size: 24,
        points: [
          [20, 80],
          [140, 86],
        ],
      },
    ];
    applyStrokes({ rgba, width: size, height: size }, photo, /** @type {any} */ (strokes), {});
  }
}
warmTouchUp();

/** @param {{ id: number }} msg @param {unknown} err */
function failed(msg, err) {
  port.postMessage({ id: msg.id, type: 'failed', message: err instanceof Error ? err.message : String(err) });
}

port.on(
  'message',
  (/** @type {Band | { type: 'png' | 'grid' | 'touch-up', id: number } & Record<string, any>} */ msg) => {
    if ('type' in msg && msg.type === 'png') {
      encodePng(/** @type {any} */ (msg)).catch((err) => failed(msg, err));
      return;
    }
    if ('type' in msg && msg.type === 'touch-up') {
      touchUp(/** @type {any} */ (msg)).catch((err) => failed(msg, err));
      return;
    }
    try {
      if ('type' in msg && msg.type === 'grid') gridMask(/** @type {any} */ (msg));
      else writeBand(/** @type {Band} */ (msg));
    } catch (err) {
      failed(msg, err);
    }
  },
);
