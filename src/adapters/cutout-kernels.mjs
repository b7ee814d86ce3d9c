// The hot loops: the model's input and output (fillModelInput and maskFromOutput, model-session.mjs),
// and the cut-out's, reduceArea (mask-reduce.mjs), refineRows (edge-refine.mjs), bandLines and
// deflateBand (png-strips.mjs), in the native module that npm install builds (native/*.c,
// scripts/build-native.mjs) when it is there, and in JavaScript and zlib otherwise. The refinement and
// the rows are bit for bit the same either way (test/unit/cutout-kernels.test.ts); the native deflate
// makes the same parse as zlib's level 1 with run-length matches, its own Huffman blocks, and inflates
// to the same rows. MATTE_NATIVE_KERNELS=0 keeps the JavaScript ones.
// Plain JavaScript: the cut-out writer's worker threads import it.
import { createRequire } from 'node:module';
import { REFINE_DEFAULTS, refineGrid, refineRows as refineRowsJs } from './edge-refine.mjs';
import { bandLines as bandLinesJs, deflateBand, pngChunk } from './png-strips.mjs';
import { reduceArea as reduceAreaJs } from './mask-reduce.mjs';

/**
 * @typedef {{
 *   fillModelInput(rgb: Uint8Array, out: Float32Array): void,
 *   maskFromOutput(out: Float32Array, size: number, mask: Uint8Array, histogram: Uint32Array, box: Int32Array): void,
 *   reduceArea(src: Uint8Array, sw: number, sh: number, dst: Uint8Array, dw: number, dh: number): void,
 *   refineRows(rgb: Uint8Array, width: number, height: number, lowRgb: Uint8Array, lowAlpha: Uint8Array, y0: number, y1: number,
 *     grid: number, radius: number, eps: number, steepen: number, outAlpha: Uint8Array, outRgb: Uint8Array): void,
 *   bandLines(rgb: Uint8Array, alpha: Uint8Array, sourceAlpha: Uint8Array | null, width: number, rows: number, factor: number,
 *     lines: Uint8Array, preview: Uint8Array): void,
 *   deflateRows(lines: Uint8Array, last: boolean, out: Uint8Array): number,
 *   deflateBound(length: number): number,
 *   adler32(data: Uint8Array): number,
 *   releaseScratch(): void,
 *   scratchBytes(): number,
 * }} NativeKernels
 */

/** The interface version of native/kernels.c (KERNELS_VERSION) that this file calls. */
const VERSION = 4;

/**
 * The native module at `file` (the build's by default), or null and why not.
 * @param {string} [file]
 * @returns {{ module: NativeKernels | null, reason: string }}
 */
export function loadKernels(file = '../../build/cutout-kernels.node') {
  if (process.env.MATTE_NATIVE_KERNELS === '0') return { module: null, reason: 'MATTE_NATIVE_KERNELS=0' };
  /** @type {NativeKernels & { version?: number }} */
  let module;
  try {
    module = createRequire(import.meta.url)(file);
  } catch (err) {
    return { module: null, reason: `not built (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); npm run build:native builds it` };
  }
  // A build from older sources (pulled without npm install since) is not called with newer arguments.
  if (module.version !== VERSION) return { module: null, reason: `the build is version ${module.version ?? 0}, not ${VERSION}; npm run build:native builds it again` };
  return { module, reason: 'built' };
}

const loaded = loadKernels();
/** The native module, or null; `nativeReason` says why not. */
export const native = loaded.module;
export const nativeReason = loaded.reason;

/**
 * The kernels a call runs on: the ones the caller asked for (tests pass `native: null` for the
 * JavaScript), else the native module when it is built.
 * @param {{ native?: NativeKernels | null }} use
 * @returns {NativeKernels | null}
 */
export function kernelsFor(use) {
  return use.native === undefined ? native : use.native;
}

/**
 * Buffers a thread's bands reuse, one band after another: the refined rows, their PNG lines and the
 * deflate's output, which never leave the thread. New memory costs a page fault per 4 KiB page when it
 * is first written (measured in a band thread, 2000x2000 photo: about 3,000 faults and 27 ms of system
 * time a photo before this and the native scratch memory). `release` lets them go (an idle thread).
 */
export class BandWorkspace {
  /** @type {Map<string, Buffer>} */
  #buffers = new Map();

  /**
   * `bytes` bytes (contents undefined) that stay this name's until its next call: the memory of the
   * last call when it is large enough.
   * @param {string} name @param {number} bytes
   */
  take(name, bytes) {
    let buffer = this.#buffers.get(name);
    if (!buffer || buffer.length < bytes) {
      buffer = Buffer.allocUnsafeSlow(bytes);
      this.#buffers.set(name, buffer);
    }
    return buffer.subarray(0, bytes);
  }

  /** The bytes held now: the buffers, and the native kernels' scratch memory of this thread. */
  heldBytes() {
    let bytes = native?.scratchBytes() ?? 0;
    for (const buffer of this.#buffers.values()) bytes += buffer.length;
    return bytes;
  }

  /** Drops the buffers, and the native kernels' scratch memory of this thread. */
  release() {
    this.#buffers.clear();
    native?.releaseScratch();
  }
}

/**
 * mask-reduce.mjs reduceArea (a one-channel image reduced by area averages), native when built: the
 * model's mask reduced to the refinement's grid.
 * @param {Uint8Array} src @param {number} sw @param {number} sh @param {number} dw @param {number} dh
 * @param {{ native?: NativeKernels | null }} [use]
 * @returns {Buffer}
 */
export function reduceMask(src, sw, sh, dw, dh, use = {}) {
  const kernels = kernelsFor(use);
  if (!kernels) {
    const out = reduceAreaJs(src, sw, sh, dw, dh);
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  }
  if (!(dw <= sw && dh <= sh)) throw new RangeError(`reduceArea: cannot reduce ${sw}x${sh} to ${dw}x${dh}`);
  const out = Buffer.allocUnsafe(dw * dh);
  kernels.reduceArea(src, sw, sh, out, dw, dh);
  return out;
}

/**
 * edge-refine.mjs refineRows for the service's case: the photo reduced beforehand (`low`), REFINE_DEFAULTS.
 * @param {{ rgb: Uint8Array, width: number, height: number }} img
 * @param {{ rgb: Uint8Array, alpha: Uint8Array }} low the photo and its alpha at refineGrid's size
 * @param {number} y0 @param {number} y1
 * @param {{ native?: NativeKernels | null, workspace?: BandWorkspace }} [use] which implementation (tests): the native one
 *   when built; where its results go (the native one): `workspace` memory, valid until the workspace's next refineBand
 * @returns {{ alpha: Uint8Array, rgb: Uint8Array }}
 */
export function refineBand(img, low, y0, y1, use = {}) {
  const kernels = kernelsFor(use);
  if (!kernels) return refineRowsJs({ rgb: img.rgb, alpha: null, width: img.width, height: img.height }, { low }, y0, y1);
  const { width, height } = img;
  const { grid: gridMax, radius, eps, steepen } = REFINE_DEFAULTS;
  const grid = refineGrid(width, height, gridMax);
  if (low.rgb.length !== grid.w * grid.h * 3 || low.alpha.length !== grid.w * grid.h) throw new Error('refineBand: the reduced photo is not at the refinement grid size');
  // Every byte of both is written by the kernel.
  const alpha = use.workspace ? use.workspace.take('refined alpha', (y1 - y0) * width) : new Uint8Array((y1 - y0) * width);
  const rgb = use.workspace ? use.workspace.take('refined rgb', (y1 - y0) * width * 3) : new Uint8Array((y1 - y0) * width * 3);
  kernels.refineRows(img.rgb, width, height, low.rgb, low.alpha, y0, y1, gridMax, radius, eps, steepen, alpha, rgb);
  return { alpha, rgb };
}

/**
 * png-strips.mjs bandLines, native when built.
 * @param {Uint8Array} rgb @param {Uint8Array} alpha @param {Uint8Array | null} sourceAlpha
 * @param {number} width @param {number} rows @param {number} factor
 * @param {{ native?: NativeKernels | null, workspace?: BandWorkspace }} [use] as refineBand: the lines in `workspace` memory
 */
export function bandRows(rgb, alpha, sourceAlpha, width, rows, factor, use = {}) {
  const kernels = kernelsFor(use);
  if (!kernels) return bandLinesJs(rgb, alpha, sourceAlpha, width, rows, factor);
  const size = (1 + width * 4) * rows;
  const lines = use.workspace ? use.workspace.take('lines', size) : Buffer.allocUnsafe(size);
  const pw = Math.ceil(width / factor);
  const ph = Math.ceil(rows / factor);
  const preview = new Uint8Array(pw * ph * 4);
  kernels.bandLines(rgb, alpha, sourceAlpha, width, rows, factor, lines, preview);
  return { lines, preview: { data: preview, width: pw, height: ph } };
}

/**
 * png-strips.mjs deflateBand (a band of rows as raw deflate data in an IDAT chunk, ending on a byte
 * boundary, or ending the stream when `last`), native when built.
 * @param {Buffer} lines @param {boolean} last
 * @param {{ native?: NativeKernels | null, workspace?: BandWorkspace }} [use] as refineBand: the deflate writes into
 *   `workspace` memory (the IDAT chunk is a copy of its own)
 * @returns {Promise<{ idat: Buffer, adler: number, length: number }>}
 */
export async function deflateRows(lines, last, use = {}) {
  const kernels = kernelsFor(use);
  if (!kernels) return deflateBand(lines, last);
  const bound = kernels.deflateBound(lines.length);
  const out = use.workspace ? use.workspace.take('deflated', bound) : Buffer.allocUnsafe(bound);
  const written = kernels.deflateRows(lines, last, out);
  return { idat: pngChunk('IDAT', out.subarray(0, written)), adler: kernels.adler32(lines), length: lines.length };
}
