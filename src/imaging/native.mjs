// The cut-out writer's pixel passes in C (native/cutout.c, built by node-gyp at `npm install` from
// binding.gyp), or null where the addon was not built or does not load: the writer then runs the
// JavaScript they stand for (mask-reduce.mjs, edge-refine.mjs, rgba-bands.mjs), which gives the same bytes
// at about three times the CPU. Plain JavaScript: the writer's worker threads import it. The same addon
// enlarges a small photo to the model's input (native/enlarge.c; without it, sharp makes the same bytes) and
// reduces the check's mask and colours by blocks (mask-reduce.mjs reduceBlocks, the same bytes).
import { createRequire } from 'node:module';

/**
 * @typedef {{
 *   reduceArea(src: Uint8Array, sw: number, sh: number, dw: number, dh: number): Uint8Array,
 *   reduceBlocks(src: Uint8Array, size: number, channels: number, factor: number): Uint8Array,
 *   refineRows(rgb: Uint8Array, width: number, height: number, lowRgb: Uint8Array, lowAlpha: Uint8Array,
 *     y0: number, y1: number, grid: number, radius: number, eps: number, steepen: number, outAlpha: Uint8Array): Uint8Array,
 *   bandRgba(rgb: Uint8Array, alpha: Uint8Array, sourceAlpha: Uint8Array | null, width: number, rows: number,
 *     factor: number, out: Uint8Array): { data: Uint8Array, width: number, height: number },
 *   enlargeRgb(src: Uint8Array, w: number, h: number, W: number, H: number): Promise<Uint8Array>,
 * }} NativeCutout
 */

/** @returns {NativeCutout | null} */
function load() {
  try {
    return createRequire(import.meta.url)('../../build/Release/matte_native.node');
  } catch {
    return null;
  }
}

export const nativeCutout = load();
